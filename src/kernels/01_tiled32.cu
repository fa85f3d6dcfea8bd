/* 01 tiled32 — shared-memory tiling, no pipeline (the "Software Pipelining
 * and Double Buffering" guide's sgemmTiled).
 *
 * A 32x32 block of C per block of 1024 threads, one output per thread,
 * stepping 32 along K. Each step: every thread loads one element of the A
 * tile and one of the B tile into shared memory, the block syncs, each thread
 * does its 32 FMAs out of shared memory, and the block syncs again before the
 * next step may overwrite the tiles. Between the two barriers the block
 * either loads or computes, never both: the bubble the guide sets out to
 * remove. 02_tiled32_db.cu is this file plus a second buffer;
 * `diff 01_tiled32.cu 02_tiled32_db.cu` is the technique.
 *
 *   pipegemm bench --variant tiled32,tiled32_db --size 2048
 */
#include "kernels/tiled32.cuh"

PG_KERNELS_BEGIN

__global__ void __launch_bounds__(TILED32_THREADS)
    pg_tiled32_kernel(const pg_gemm_args g) {
  __shared__ float As[TILE][TILE + 1];
  __shared__ float Bs[TILE][TILE + 1];
  const int row = blockIdx.y * TILE + threadIdx.x / TILE;
  const int col = blockIdx.x * TILE + threadIdx.x % TILE;
  float acc = 0.f;

  const int k_tiles = (g.k + TILE - 1) / TILE;
  for (int t = 0; t < k_tiles; ++t) {
    tiled32_load(g, As, Bs, row, col, t * TILE);
    __syncthreads(); /* the tile is complete in shared memory */
    acc = tiled32_dot(As, Bs, acc);
    __syncthreads(); /* everyone has read it before the next step overwrites it */
  }
  tiled32_store(g, row, col, acc);
}

static_assert(sizeof(float) * 2 * TILE * (TILE + 1) == TILED32_STAGE_BYTES,
              "the registry's shared memory per stage is As + Bs");

static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  tiled32_configure(launch, (const void *)pg_tiled32_kernel, args);
}

static const pg_sass_rule rules[] = {TILED32_RULES};

PG_ENTRY(tiled32) = {
    .info = {.name = "tiled32", .kind = PG_KIND_KERNEL,
             .technique = "32x32 tiles: load -> sync -> compute -> sync",
             .source = PG_FROM_GUIDE, .min_cc = 50, .min_stages = 1, .max_stages = 1,
             .default_stages = 1, TILED32_TILE_INFO,
             .description = "32x32 tiles, one output per thread: load -> sync -> compute -> sync"},
    .smem_bytes = tiled32_smem,
    .configure = configure,
    .kernel = {.symbol = "pg_tiled32_kernel", PG_RULES(rules)},
};

PG_KERNELS_END
