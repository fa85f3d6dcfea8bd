/* 12 tma_ws — the flagship: the TMA pipeline the "Software Pipelining and
 * Double Buffering" guide ends with (one thread issues the bulk tensor copy,
 * the rest wait on an mbarrier), as a TMA producer warp and a consumer
 * warpgroup (kernels/tma_ws.cuh), over output tiles in grouped order, one
 * block per tile or a persistent grid (the tuning table decides); sm_90
 * only.
 *
 * Tiles: block b takes tiles b, b + gridDim.x, ... whole (tws_schedule's
 * whole-tiles form). The grid is blocks_per_sm x SMs from the tuning table
 * (src/tuning.c), or one block per tile where the table says 0 but a
 * persistent grid of two blocks an SM where a tile has few K steps (the
 * table's tma_ws_persistent_max_k_tiles): there the producers load the
 * next tile while the consumers store the last, which pays where the
 * store is a large share of a tile's time; bench/results/tma-ws/README.md and
 * partial-waves/README.md measure both on an H200. Where the tiles leave
 * SMs idle, the next chapters split K (13) or share the last wave's K steps
 * out (14).
 *
 *   pipegemm bench --variant tma_ws,cublas --size 4096
 */
#include "kernels/tma_ws.cuh"

PG_KERNELS_BEGIN

static const tws_shape large = TWS_SHAPE(TWS_TILE_M, TWS_TILE_N);

static void configure(pg_gemm_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  tws_configure_whole_tiles(
      &large, (const void *)pg_tma_ws_kernel<TWS_TILE_M, TWS_TILE_N, TWS_WHOLE_TILES>, args,
      tuning, launch);
  const pg_tuning env = pg_tuning_with_env(tuning);
  if (launch->persistent_blocks_per_sm == 0 &&
      tws_k_tiles(args) <= env.tma_ws_persistent_max_k_tiles &&
      tws_blocks_per_sm(&large, args->stages, device) >= TWS_MIN_BLOCKS_PER_SM) {
    launch->persistent_blocks_per_sm = TWS_MIN_BLOCKS_PER_SM;
    launch->speed_factor = env.tma_ws_persistent_speed_percent / 100.0;
  }
}

static const pg_sass_rule rules[] = {TWS_RULES};

PG_ENTRY(tma_ws) = {
    .info = {.name = "tma_ws", .kind = PG_KIND_KERNEL,
             .technique = "TMA producer warp + consumer warpgroup (8x16 each, setmaxnreg), full/empty mbarriers, grouped tile order; a persistent grid of two blocks an SM where a tile has few K steps (the tuning row's, K <= 128 on the H200)",
             .source = PG_FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 8,
             .default_stages = 3, TWS_TILE_INFO(TWS_TILE_M, TWS_TILE_N)},
    .smem_bytes = tws_smem<TWS_TILE_M, TWS_TILE_N>,
    .configure = configure,
    .check = pg_tma_check,
    .kernel = {.symbol = "pg_tma_ws_kernel", .launched = TWS_INSTANCE(TWS_TILE_M, TWS_TILE_N, 0),
               .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
