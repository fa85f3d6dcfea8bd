/* Pieces every kernel of the 128x128 family (03-11) shares: who loads
 * what, the 8x8 per-thread inner product, the epilogue. Only the movement of
 * a tile from global to shared memory differs between kernels, so that
 * `diff 03_baseline.cu 05_cp_async.cu` is the mechanism.
 *
 * Loads: thread t moves A row t/2, k (t%2)*4..+3 and B row t/32, columns
 * (t%32)*4..+3 — one 16-byte piece of each per K step (layout: tile128.h).
 * Outputs: thread (tx, ty) = (t%16, t/16) owns rows ty*8..+7 and columns
 * tx*4..+3 and 64+tx*4..+3. Splitting the 8 columns in two halves 64 apart
 * makes each quarter-warp's 16-byte reads of a B row contiguous (no bank
 * conflicts); 8 contiguous columns per thread would read 2 ways conflicted. */
#ifndef PG_TILE128_CUH
#define PG_TILE128_CUH

#include "kernels/entry.h"
#include "kernels/ptx.cuh"
#include "kernels/tile128.h"
#include "kernels/trace.cuh" /* the marks of pipegemm trace: nothing in the timed build */

static_assert(T128_TILE_M * T128_TILE_K == 4 * T128_THREADS,
              "each thread loads exactly one float4 of the A tile");
static_assert(T128_TILE_N * T128_TILE_K == 4 * T128_THREADS,
              "each thread loads exactly one float4 of the B tile");
static_assert((T128_TILE_M / T128_THREAD_M) * (T128_TILE_N / T128_THREAD_N) == T128_THREADS,
              "16x16 threads cover the 128x128 tile with 8x8 each");
static_assert(T128_TILE_K == 8, "the compute loop reads each A row as two float4");

#define T128_THREADS_X (T128_TILE_N / T128_THREAD_N) /* 16 */
#define T128_HALF_N (T128_TILE_N / 2)                /* 64: offset of a thread's second 4 columns */

typedef struct {
  float4 a; /* A[row][k..k+3] */
  float4 b; /* B[k][col..col+3] */
} t128_regs;

static __device__ __forceinline__ float *t128_smem_a(float *stage) { return stage; }
static __device__ __forceinline__ float *t128_smem_b(float *stage) {
  return stage + T128_SMEM_A_FLOATS;
}

/* Reads 4 consecutive floats of one row, zeros past `width` or `row_ok`. */
static __device__ __forceinline__ float4 t128_load_row4(const float *row_ptr, int col,
                                                        int width, int row_ok, int vec) {
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
  if (!row_ok) return v;
  if (vec && col + 3 < width) return __ldg((const float4 *)(row_ptr + col));
  if (col + 0 < width) v.x = __ldg(row_ptr + col + 0);
  if (col + 1 < width) v.y = __ldg(row_ptr + col + 1);
  if (col + 2 < width) v.z = __ldg(row_ptr + col + 2);
  if (col + 3 < width) v.w = __ldg(row_ptr + col + 3);
  return v;
}

/* Global -> registers (LDG) for the tile at (m0, n0, k0). */
static __device__ __forceinline__ t128_regs t128_load_global(const pg_gemm_args &g, int m0,
                                                             int n0, int k0) {
  const int tid = threadIdx.x;
  const int a_row = m0 + tid / 2, a_col = k0 + (tid % 2) * 4;
  const int b_row = k0 + tid / 32, b_col = n0 + (tid % 32) * 4;
  t128_regs r;
  r.a = t128_load_row4(g.a + (size_t)a_row * g.lda, a_col, g.k, a_row < g.m, g.vec_a);
  r.b = t128_load_row4(g.b + (size_t)b_row * g.ldb, b_col, g.n, b_row < g.k, g.vec_b);
  return r;
}

/* Registers -> shared (STS.128): each piece lands where it was in global. */
static __device__ __forceinline__ void t128_store_shared(float *stage, t128_regs r) {
  const int tid = threadIdx.x;
  *(float4 *)(t128_smem_a(stage) + (tid / 2) * T128_TILE_K + (tid % 2) * 4) = r.a;
  *(float4 *)(t128_smem_b(stage) + (tid / 32) * T128_TILE_N + (tid % 32) * 4) = r.b;
}

/* One 16-byte piece global -> shared with cp.async: a single 16-byte copy
 * when the row allows it, else four 4-byte copies. Out-of-range elements are
 * zero-filled by the copy itself (src size 0), so edge tiles need no branch
 * around the copy; a zero-size copy reads nothing, but its address must still
 * be valid, hence `base`. */
static __device__ __forceinline__ void t128_cp_async_piece(float *dst, const float *base,
                                                           const float *row_ptr, int col,
                                                           int width, int row_ok, int vec) {
  if (vec && row_ok && col + 3 < width) {
    pg_cp_async_16(dst, row_ptr + col, 16);
    return;
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int ok = row_ok && col + i < width;
    pg_cp_async_4(dst + i, ok ? row_ptr + col + i : base, ok ? 4 : 0);
  }
}

#define T128_PIECES_A (T128_SMEM_A_FLOATS / 4) /* 16-byte pieces of the A tile: 256 */
#define T128_PIECES_B (T128_SMEM_B_FLOATS / 4) /* and of the B tile: 256 */

/* Global -> shared with cp.async (LDGSTS), no registers in between: piece p
 * of A is row p/2, k (p%2)*4..+3; piece q of B is row q/32, columns
 * (q%32)*4..+3. The caller commits or arrives. */
static __device__ __forceinline__ void t128_cp_async_a_piece(const pg_gemm_args &g, float *stage,
                                                             int m0, int k0, int p) {
  const int row = m0 + p / 2, col = k0 + (p % 2) * 4;
  t128_cp_async_piece(t128_smem_a(stage) + p * 4, g.a, g.a + (size_t)row * g.lda, col, g.k,
                      row < g.m, g.vec_a);
}

static __device__ __forceinline__ void t128_cp_async_b_piece(const pg_gemm_args &g, float *stage,
                                                             int n0, int k0, int q) {
  const int row = k0 + q / 32, col = n0 + (q % 32) * 4;
  t128_cp_async_piece(t128_smem_b(stage) + q * 4, g.b, g.b + (size_t)row * g.ldb, col, g.n,
                      row < g.k, g.vec_b);
}

/* The whole tile by the block's 256 threads: A piece tid and B piece tid,
 * straight-line, not a loop over pieces (measured in
 * bench/results/mechanisms/README.md). */
static __device__ __forceinline__ void t128_cp_async_tile(const pg_gemm_args &g, float *stage,
                                                          int m0, int n0, int k0) {
  t128_cp_async_a_piece(g, stage, m0, k0, threadIdx.x);
  t128_cp_async_b_piece(g, stage, n0, k0, threadIdx.x);
}

static __device__ __forceinline__ float t128_lane(float4 v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

/* acc += A_tile * B_tile for one stage: 8 rank-1 updates of the 8x8 block.
 * A comes in as 8 rows x 4 k per half step (8 LDS.128, broadcast across the
 * 16 threads of a row group); B as two LDS.128 per k. */
static __device__ __forceinline__ void t128_compute(const float *stage,
                                                    float acc[T128_THREAD_M][T128_THREAD_N]) {
  const int tx = threadIdx.x % T128_THREADS_X, ty = threadIdx.x / T128_THREADS_X;
  const float *as = t128_smem_a((float *)stage) + ty * T128_THREAD_M * T128_TILE_K;
  const float *bs = t128_smem_b((float *)stage) + tx * 4;
#pragma unroll
  for (int half = 0; half < T128_TILE_K / 4; ++half) {
    float4 a[T128_THREAD_M];
#pragma unroll
    for (int i = 0; i < T128_THREAD_M; ++i)
      a[i] = *(const float4 *)(as + i * T128_TILE_K + half * 4);
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int kk = half * 4 + q;
      const float4 b_lo = *(const float4 *)(bs + kk * T128_TILE_N);
      const float4 b_hi = *(const float4 *)(bs + kk * T128_TILE_N + T128_HALF_N);
      const float b[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
      for (int i = 0; i < T128_THREAD_M; ++i) {
        const float ai = t128_lane(a[i], q);
#pragma unroll
        for (int j = 0; j < T128_THREAD_N; ++j) acc[i][j] = fmaf(ai, b[j], acc[i][j]);
      }
    }
  }
}

/* Advances a slot of a `stages`-deep ring of buffers. Returns 1 when it
 * wraps to slot 0: the slot's next use is a new barrier phase, so a waiter's
 * parity flips then. */
static __device__ __forceinline__ int t128_ring_next(int *slot, int stages) {
  if (++*slot < stages) return 0;
  *slot = 0;
  return 1;
}

static __device__ __forceinline__ void t128_zero(float acc[T128_THREAD_M][T128_THREAD_N]) {
#pragma unroll
  for (int i = 0; i < T128_THREAD_M; ++i)
#pragma unroll
    for (int j = 0; j < T128_THREAD_N; ++j) acc[i][j] = 0.f;
}

/* C = alpha*acc + beta*C, guarded; C is not read when beta == 0 (BLAS rule),
 * so a NaN-poisoned C is fully overwritten. */
static __device__ __forceinline__ void t128_epilogue(const pg_gemm_args &g, int m0, int n0,
                                                     float acc[T128_THREAD_M][T128_THREAD_N]) {
  const int tx = threadIdx.x % T128_THREADS_X, ty = threadIdx.x / T128_THREADS_X;
#pragma unroll
  for (int i = 0; i < T128_THREAD_M; ++i) {
    const int row = m0 + ty * T128_THREAD_M + i;
    if (row >= g.m) break;
    float *c_row = g.c + (size_t)row * g.ldc;
#pragma unroll
    for (int j = 0; j < T128_THREAD_N; ++j) {
      const int col = n0 + tx * 4 + (j < 4 ? j : T128_HALF_N + j - 4);
      if (col < g.n) {
        const float v = g.alpha * acc[i][j];
        c_row[col] = g.beta == 0.f ? v : fmaf(g.beta, c_row[col], v);
      }
    }
  }
}

/* One block per 128x128 output tile: N's tiles on x, M's on y. */
static inline void t128_configure(pg_kernel_launch *launch, const void *kernel,
                                  const pg_layout_args *g) {
  launch->kernel = kernel;
  launch->grid_x = ((long long)g->n + T128_TILE_N - 1) / T128_TILE_N;
  launch->grid_y = ((long long)g->m + T128_TILE_M - 1) / T128_TILE_M;
}

static __device__ __forceinline__ int t128_k_tiles(const pg_gemm_args &g) {
  return (int)(((long long)g.k + T128_TILE_K - 1) / T128_TILE_K); /* no wrap near INT_MAX */
}

/* ---- what the registry says of the family (src/kernels/entry.h) ---- */

#define T128_TILE_INFO \
  .tile_m = T128_TILE_M, .tile_n = T128_TILE_N, .tile_k = T128_TILE_K, .threads = T128_THREADS

/* `stages` copies of one A+B tile... */
static inline size_t t128_smem(int stages) { return (size_t)stages * T128_STAGE_BYTES; }

/* ...and, where stages are handed over through barriers, those too. */
static inline size_t t128_smem_barriers(int stages) {
  return (size_t)stages * (T128_STAGE_BYTES + T128_STAGE_SYNC_BYTES);
}

/* cp.async's witnesses: LDGSTS per piece, LDGDEPBAR per commit_group,
 * DEPBAR per wait_group, a block barrier to publish the tile; no STS at all. */
#define T128_RULES_CP_ASYNC                                                                    \
  {PG_ANY_SM, PG_MUST, "LDGSTS", "the kernel no longer shows cp.async"},                       \
      {PG_ANY_SM, PG_MUST, "LDGDEPBAR", "cp.async.commit_group is gone"},                        \
      {PG_ANY_SM, PG_MUST, "DEPBAR", "cp.async.wait_group is gone"},                             \
      {PG_ANY_SM, PG_MUST, "BAR.SYNC", "the block no longer syncs before reading a landed tile"}, \
      {PG_ANY_SM, PG_NEVER, "STS", "tiles pass through registers again instead of going global -> shared"}

/* Every kernel's epilogue loads C with 32-bit LDG, so a plain "LDG" proves
 * nothing about its tiles: the register-staged kernels (baseline, pingpong)
 * are held to their 16-byte tile loads, then 16-byte STS. */
#define T128_RULES_REGISTER_STAGED                                                             \
  {PG_ANY_SM, PG_MUST, "LDG.128", "the 16-byte tile loads into registers are gone"},           \
      {PG_ANY_SM, PG_MUST, "STS.128", "the tiles no longer reach shared memory from registers"}, \
      {PG_ANY_SM, PG_MUST, "BAR.SYNC", "the block no longer syncs between loading and computing"}, \
      {PG_ANY_SM, PG_NEVER, "LDGSTS", "the tiles are copied with cp.async, not staged through registers"}, \
      {PG_ANY_SM, PG_NEVER, "ARRIVES", "copies now complete on an mbarrier: the tiles no longer go through registers"}

#endif
