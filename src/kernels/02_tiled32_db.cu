/* 02 tiled32_db — double buffering in shared memory (the "Software
 * Pipelining and Double Buffering" guide's sgemmTiledDoubleBuffered).
 *
 * 01_tiled32.cu with two copies of each tile. Step t first loads tile t + 1
 * into the buffer nobody is reading, then computes on tile t: while one warp
 * waits for its global loads, the other warps of the block can already be
 * doing their FMAs, so loads and compute overlap across warps (how much
 * overlap there is inside one warp is up to the compiler's scheduling: each
 * load feeds a shared-memory store before the compute reads the other
 * buffer). One barrier per step instead of two: the buffer swap removes the
 * write-after-read hazard the second barrier guarded.
 *
 *   pipegemm bench --variant tiled32,tiled32_db --size 2048
 */
#include "kernels/tiled32.cuh"

PG_KERNELS_BEGIN

__global__ void __launch_bounds__(TILED32_THREADS)
    pg_tiled32_db_kernel(const pg_gemm_args g) {
  __shared__ float As[2][TILE][TILE + 1];
  __shared__ float Bs[2][TILE][TILE + 1];
  const int row = blockIdx.y * TILE + threadIdx.x / TILE;
  const int col = blockIdx.x * TILE + threadIdx.x % TILE;
  float acc = 0.f;

  const int k_tiles = (g.k + TILE - 1) / TILE;
  int cur = 0;
  if (k_tiles > 0) {
    tiled32_load(g, As[cur], Bs[cur], row, col, 0);
    __syncthreads(); /* the first tile is complete in shared memory */
  }
  for (int t = 0; t < k_tiles; ++t) {
    const int nxt = cur ^ 1;
    /* Safe without a barrier before it: buffer nxt was last read in step
     * t - 1, and the barrier that ended step t - 1 retired those reads. */
    if (t + 1 < k_tiles) tiled32_load(g, As[nxt], Bs[nxt], row, col, (t + 1) * TILE);
    acc = tiled32_dot(As[cur], Bs[cur], acc);
    /* One barrier: tile t + 1 is complete, and everyone is done with tile t,
     * whose buffer step t + 1 fills. */
    __syncthreads();
    cur = nxt;
  }
  tiled32_store(g, row, col, acc);
}

static_assert(sizeof(float) * 2 * TILE * (TILE + 1) == TILED32_STAGE_BYTES,
              "the registry's shared memory per stage is As + Bs");

static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  tiled32_configure(launch, (const void *)pg_tiled32_db_kernel, args);
}

static const pg_sass_rule rules[] = {TILED32_RULES};

PG_ENTRY(tiled32_db) = {
    .info = {.name = "tiled32_db", .kind = PG_KIND_KERNEL,
             .technique = "tiled32, two buffers: next tile loaded during compute",
             .source = PG_FROM_GUIDE, .min_cc = 50, .min_stages = 2, .max_stages = 2,
             .default_stages = 2, TILED32_TILE_INFO,
             .description = "tiled32 with two buffers: next tile loaded during compute, one sync "
                            "per tile"},
    .smem_bytes = tiled32_smem,
    .configure = configure,
    .kernel = {.symbol = "pg_tiled32_db_kernel", PG_RULES(rules)},
};

PG_KERNELS_END
