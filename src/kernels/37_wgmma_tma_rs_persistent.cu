/* 37 wgmma_tma_rs_persistent — 36 wgmma_tma_rs as a persistent kernel: one
 * block per SM (the plan caps the grid at what fits), each taking every
 * gridDim.x-th tile of the grouped order (pg_grouped_tile, the tile
 * scheduler: static, round robin), with the stage ring running on across
 * its tiles. While the consumer warpgroups write one tile out, the producer
 * already loads the next tile's first stages, so a tile's start no longer
 * waits for its pipeline to fill, and no block is launched or retired per
 * tile. The epilogue's staging gets shared memory of its own (67.6 KB after
 * the stages), since the stages are being refilled meanwhile: 2 or 3 stages
 * fit beside it. The kernel is src/kernels/wgmma_rs.cuh's with PERSISTENT.
 *
 *   pipegemm bench --variant cublas_tf32,wgmma_tma_rs,wgmma_tma_rs_persistent --stages 2-3
 */
#include "kernels/wgmma_rs.cuh"

PG_KERNELS_BEGIN

static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  wg_rs_configure<1, 0>(args, launch);
}

static const pg_sass_rule rules[] = {WG_RS_RULES};

PG_ENTRY(wgmma_tma_rs_persistent) = {
    .info = {.name = "wgmma_tma_rs_persistent", .kind = PG_KIND_KERNEL,
             .precision = PG_PRECISION_TF32,
             .technique = "wgmma_tma_rs persistent: one block per SM",
             .source = PG_FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 3,
             .default_stages = 3, .tile_m = WG_RS_TILE_M, .tile_n = WG_RS_TILE_N,
             .tile_k = WG_TILE_K, .threads = WG_RS_THREADS,
             .description = "wgmma_tma_rs persistent: one block per SM over the tiles in grouped "
                            "order, the stage ring running on across tiles under the epilogue"},
    .smem_bytes = wg_rs_smem<1>,
    .configure = configure,
    .check = wg_rs_check,
    .kernel = {.symbol = "pg_wgmma_tma_rs_kernel", .launched = "pg_wgmma_tma_rs_kernel<1>",
               .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
