/* What the mma.sync members fed by cp.async share (30 mma_cp_async, 41
 * mma_cp_async_any): a thread's 16-byte pieces of one operand into a stage,
 * the epilogue of a warp's 64x32 of C, and their SASS witnesses. */
#ifndef PG_MMA_CP_ASYNC_CUH
#define PG_MMA_CP_ASYNC_CUH

#include "kernels/mma_tile.h"
#include "kernels/tile128.cuh" /* t128_cp_async_piece, t128_ring_next */

#define MMA_PIECES_PER_THREAD 4
#define MMA_WARP_M 64
#define MMA_WARP_N 32
#define MMA_WARPS_N (MMA_TILE_N / MMA_WARP_N) /* 4 */
#define MMA_M_FRAGS (MMA_WARP_M / 16)         /* 4 */
#define MMA_N_FRAGS (MMA_WARP_N / 8)          /* 4 */

typedef float mma_acc[MMA_M_FRAGS][MMA_N_FRAGS][4];

/* One operand's share of a stage by this thread: pieces t, t+256, t+512 and
 * t+768 of a tile whose rows hold `per_row` 16-byte pieces, piece p at row
 * p / per_row, columns (p % per_row) * 4..+3 of the tile (global row
 * row0 + that, column col0 + those), landing at `pitch` floats a row. Past
 * the matrix's `rows` x `cols` the copy zero-fills. */
static __device__ __forceinline__ void mma_cp_async_operand(float *dst, int pitch, int per_row,
                                                            const float *src, int ld, int row0,
                                                            int col0, int rows, int cols,
                                                            int vec) {
#pragma unroll
  for (int i = 0; i < MMA_PIECES_PER_THREAD; ++i) {
    const int p = threadIdx.x + i * MMA_THREADS;
    const int r = p / per_row, c = (p % per_row) * 4;
    t128_cp_async_piece(dst + r * pitch + c, src, src + (size_t)(row0 + r) * ld, col0 + c, cols,
                        row0 + r < rows, vec);
  }
}

static __device__ __forceinline__ void mma_zero(mma_acc acc) {
#pragma unroll
  for (int mi = 0; mi < MMA_M_FRAGS; ++mi)
#pragma unroll
    for (int ni = 0; ni < MMA_N_FRAGS; ++ni)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[mi][ni][r] = 0.f;
}

/* C = alpha*acc + beta*C for this warp's 64x32 of the tile at (m0, n0) of
 * `c` (ldc floats a row), guarded; C is not read when beta == 0. Each
 * accumulator goes through fix(row, col, value) first. */
template <class Fix = pg_keep>
static __device__ __forceinline__ void mma_epilogue(const pg_gemm_args &g, float *c, int m0,
                                                    int n0, const mma_acc acc, Fix fix = {}) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int row0 = m0 + (warp / MMA_WARPS_N) * MMA_WARP_M + lane / 4;
  const int col0 = n0 + (warp % MMA_WARPS_N) * MMA_WARP_N + (lane % 4) * 2;
#pragma unroll
  for (int mi = 0; mi < MMA_M_FRAGS; ++mi)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = row0 + mi * 16 + half * 8;
      if (row >= g.m) continue;
      float *c_row = c + (size_t)row * g.ldc;
#pragma unroll
      for (int ni = 0; ni < MMA_N_FRAGS; ++ni)
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const int col = col0 + ni * 8 + j;
          if (col >= g.n) continue;
          const float v = g.alpha * fix(row, col, acc[mi][ni][half * 2 + j]);
          c_row[col] = g.beta == 0.f ? v : fmaf(g.beta, c_row[col], v);
        }
    }
}

static_assert(MMA_TILE_M * MMA_TILE_K == 4 * 4 * MMA_THREADS, "4 A pieces per thread");
static_assert(MMA_TILE_K * MMA_TILE_N == 4 * 4 * MMA_THREADS, "4 B pieces per thread");
static_assert((MMA_LDA * 4) % 16 == 0 && (MMA_LDB * 4) % 16 == 0,
              "rows of a stage start 16-byte aligned (cp.async of 16 bytes)");

#define MMA_A_PIECES_PER_ROW (MMA_TILE_K / 4) /* 8 */
#define MMA_B_PIECES_PER_ROW (MMA_TILE_N / 4) /* 32 */

/* The stage's A (128 rows of 8 pieces) and B (32 rows of 32 pieces) by the
 * block's 256 threads with cp.async. The caller commits. */
static __device__ __forceinline__ void mma_cp_async_stage(const pg_gemm_args &g, float *stage,
                                                          int m0, int n0, int k0) {
  mma_cp_async_operand(stage, MMA_LDA, MMA_A_PIECES_PER_ROW, g.a, g.lda, m0, k0, g.m, g.k,
                       g.vec_a);
  mma_cp_async_operand(stage + MMA_SMEM_A_FLOATS, MMA_LDB, MMA_B_PIECES_PER_ROW, g.b, g.ldb, k0,
                       n0, g.k, g.n, g.vec_b);
}

/* acc += this warp's 64x32 of A_stage * B_stage: 4 K steps of 8, each 16
 * mma.sync from 16 A and 8 B fragment registers (conflict-free LDS.32).
 * X3 = 1: three products a term, FP32-accurate (3xTF32): each fragment
 * value x split into big = x rounded to TF32 and small = x - big rounded
 * again (pg_tf32_big, pg_tf32_small), and acc += small big + big small +
 * big big, the small products first; Inf and NaN as IEEE's products give
 * them. */
template <int X3>
static __device__ __forceinline__ void mma_compute_stage(const float *stage, mma_acc acc) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4;
  const float *as = stage + ((warp / MMA_WARPS_N) * MMA_WARP_M + g) * MMA_LDA + t;
  const float *bs = stage + MMA_SMEM_A_FLOATS + t * MMA_LDB + (warp % MMA_WARPS_N) * MMA_WARP_N + g;
#pragma unroll
  for (int kk = 0; kk < MMA_TILE_K; kk += 8) {
    float a[MMA_M_FRAGS][4], b[MMA_N_FRAGS][2];
#pragma unroll
    for (int mi = 0; mi < MMA_M_FRAGS; ++mi) {
      const float *row = as + mi * 16 * MMA_LDA + kk;
      a[mi][0] = row[0];
      a[mi][1] = row[8 * MMA_LDA];
      a[mi][2] = row[4];
      a[mi][3] = row[8 * MMA_LDA + 4];
    }
#pragma unroll
    for (int ni = 0; ni < MMA_N_FRAGS; ++ni) {
      const float *col = bs + kk * MMA_LDB + ni * 8;
      b[ni][0] = col[0];
      b[ni][1] = col[4 * MMA_LDB];
    }
    if constexpr (X3) {
      /* The small products take a big part that is not finite as 0: an Inf
       * or NaN reaches C through big big alone, as IEEE's product would
       * (else 0 Inf = NaN where a small part is 0). */
      float b_small[MMA_N_FRAGS][2], b_finite[MMA_N_FRAGS][2];
#pragma unroll
      for (int ni = 0; ni < MMA_N_FRAGS; ++ni)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const float big = pg_tf32_big(b[ni][r]);
          b_small[ni][r] = pg_tf32_small(b[ni][r], big);
          b_finite[ni][r] = fabsf(big) < INFINITY ? big : 0.f;
          b[ni][r] = big;
        }
#pragma unroll
      for (int mi = 0; mi < MMA_M_FRAGS; ++mi) {
        float a_small[4], a_finite[4];
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const float big = pg_tf32_big(a[mi][r]);
          a_small[r] = pg_tf32_small(a[mi][r], big);
          a_finite[r] = fabsf(big) < INFINITY ? big : 0.f;
          a[mi][r] = big;
        }
#pragma unroll
        for (int ni = 0; ni < MMA_N_FRAGS; ++ni) {
          pg_mma_tf32_m16n8k8(acc[mi][ni], a_small, b_finite[ni]);
          pg_mma_tf32_m16n8k8(acc[mi][ni], a_finite, b_small[ni]);
          pg_mma_tf32_m16n8k8(acc[mi][ni], a[mi], b[ni]);
        }
      }
    } else {
#pragma unroll
      for (int mi = 0; mi < MMA_M_FRAGS; ++mi)
#pragma unroll
        for (int ni = 0; ni < MMA_N_FRAGS; ++ni) pg_mma_tf32_m16n8k8(acc[mi][ni], a[mi], b[ni]);
    }
  }
}

/* HMMA for the tensor-core products (no FFMA in the main loop: the only
 * FFMA left are the epilogue's alpha/beta), and 05's cp.async witnesses. */
#define MMA_CP_ASYNC_RULES                                                                     \
  {PG_ANY_SM, PG_MUST, "HMMA", "the products no longer run on the tensor cores (mma.sync)"},   \
      {PG_ANY_SM, PG_MUST, "LDGSTS", "the kernel no longer shows cp.async"},                     \
      {PG_ANY_SM, PG_MUST, "LDGDEPBAR", "cp.async.commit_group is gone"},                        \
      {PG_ANY_SM, PG_MUST, "DEPBAR", "cp.async.wait_group is gone"},                             \
      {PG_ANY_SM, PG_MUST, "BAR.SYNC", "the block no longer syncs before reading a landed tile"}, \
      {PG_ANY_SM, PG_NEVER, "STS", "tiles pass through registers instead of going global -> shared"}

#endif
