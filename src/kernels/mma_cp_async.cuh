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
 * `c` (ldc floats a row), guarded; C is not read when beta == 0. */
static __device__ __forceinline__ void mma_epilogue(const pg_gemm_args &g, float *c, int m0,
                                                    int n0, const mma_acc acc) {
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
          const float v = g.alpha * acc[mi][ni][half * 2 + j];
          c_row[col] = g.beta == 0.f ? v : fmaf(g.beta, c_row[col], v);
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
