/* What the two tiled32 kernels share: the thread-to-element mapping, the
 * guarded load of one K step, the 32-term dot product and the epilogue.
 * Only the buffering differs between 01_tiled32.cu and 02_tiled32_db.cu. */
#ifndef PG_TILED32_CUH
#define PG_TILED32_CUH

#include "kernels/entry.h"
#include "kernels/tiled32.h"

#define TILE TILED32_TILE

/* Thread t owns C[row][col] with (ty, tx) = (t / 32, t % 32): a warp is one
 * row of the tile, so its A reads are broadcasts and its B reads and C
 * writes are 32 consecutive floats. */

/* The elements this thread moves for the K step at k0, zero past the edges
 * of A and B so that edge tiles need no special compute loop. */
static __device__ __forceinline__ void tiled32_load(const pg_gemm_args &g,
                                                    float (*smem_a)[TILE + 1],
                                                    float (*smem_b)[TILE + 1],
                                                    int row, int col, int k0) {
  const int tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
  const int a_col = k0 + tx, b_row = k0 + ty;
  smem_a[ty][tx] = row < g.m && a_col < g.k ? g.a[(size_t)row * g.lda + a_col] : 0.f;
  smem_b[ty][tx] = b_row < g.k && col < g.n ? g.b[(size_t)b_row * g.ldb + col] : 0.f;
}

static __device__ __forceinline__ float tiled32_dot(const float (*smem_a)[TILE + 1],
                                                    const float (*smem_b)[TILE + 1],
                                                    float acc) {
  const int tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
#pragma unroll
  for (int k = 0; k < TILE; ++k) acc = fmaf(smem_a[ty][k], smem_b[k][tx], acc);
  return acc;
}

/* C = alpha*acc + beta*C, guarded; C is not read when beta == 0 (BLAS rule). */
static __device__ __forceinline__ void tiled32_store(const pg_gemm_args &g, int row,
                                                     int col, float acc) {
  if (row >= g.m || col >= g.n) return;
  float *c = g.c + (size_t)row * g.ldc + col;
  const float v = g.alpha * acc;
  *c = g.beta == 0.f ? v : fmaf(g.beta, *c, v);
}

/* One block per 32x32 output tile: N's tiles on x, M's on y. */
static inline void tiled32_configure(pg_kernel_launch *launch, const void *kernel,
                                     const pg_layout_args *g) {
  launch->kernel = kernel;
  launch->grid_x = ((long long)g->n + TILE - 1) / TILE;
  launch->grid_y = ((long long)g->m + TILE - 1) / TILE;
}

/* ---- what the registry says of both (src/kernels/entry.h) ---- */

static inline size_t tiled32_smem(int stages) { return (size_t)stages * TILED32_STAGE_BYTES; }

#define TILED32_TILE_INFO \
  .tile_m = TILED32_TILE, .tile_n = TILED32_TILE, .tile_k = TILED32_TILE, .threads = TILED32_THREADS

/* Each thread loads one float of A and one of B into a register and stores
 * it to shared memory. */
#define TILED32_RULES                                                                          \
  {PG_ANY_SM, PG_MUST, "LDG", "the tiles are no longer loaded into registers"},                \
      {PG_ANY_SM, PG_MUST, "STS", "the tiles no longer reach shared memory from registers"},   \
      {PG_ANY_SM, PG_MUST, "BAR.SYNC", "the block no longer syncs around each tile"},          \
      {PG_ANY_SM, PG_NEVER, "LDGSTS", "the tiles are copied with cp.async, not staged through registers"}

#endif
