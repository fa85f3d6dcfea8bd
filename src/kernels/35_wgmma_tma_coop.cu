/* 35 wgmma_tma_coop — 34 with two consumer warpgroups cooperating on the
 * tile: each computes 64 of its 128 rows (one m64n128 product a K step, 64
 * accumulators), both read the same stage, and the stage is released when
 * both have arrived. One block of 384 threads per SM (the kernel:
 * src/kernels/wgmma_ws.cuh), one wgmma group in flight (wait_group 1).
 *
 * wgmma_tma_coop_n256 is the same kernel on the wider tile 128 x 256 (each
 * warpgroup one m64n256 product a K step, 128 accumulators; 48 KB a
 * stage): the tile beside the mechanism, as tma_ws_m256 is in the FFMA
 * family. Per K step it moves 48 KB for 128x256x32 products where the
 * 128 x 128 tile moves 32 KB for half as many.
 *
 *   pipegemm bench --variant wgmma_tma_ws,wgmma_tma_coop,wgmma_tma_coop_n256 --stages 2-4
 */
#include "kernels/wgmma_ws.cuh"

PG_KERNELS_BEGIN

template <int TN>
static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  wg_configure(launch, (const void *)pg_wgmma_ws_kernel<2, 1, TN>, args, TN);
  launch->tma = &wg_bt_boxes<TN>::boxes;
}

/* wgmma_tma_coop_n256 on any layout and a batch: one launch, the tiles
 * along N of each GEMM in turn on x; B read as it is where op(B) = T (B^T's
 * layout already), else B^T first; A^T first where op(A) = T, both by one
 * first kernel over the batch (pg_configure_layout_transposes). */
template <int TN>
static void configure_any(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                          pg_kernel_launch *launch) {
  if (!pg_other_layout(args)) {
    configure<TN>(args, device, tuning, launch);
    return;
  }
  launch->kernel = (const void *)pg_wgmma_ws_any_kernel<2, 1, TN>;
  launch->grid_x = ((long long)args->n + TN - 1) / TN * args->batch;
  launch->grid_y = ((long long)args->m + WG_TILE_M - 1) / WG_TILE_M;
  launch->tma = &wg_bt_any_boxes<TN>::boxes;
  (void)pg_configure_layout_transposes(args, launch, 1);
}

static pg_status check_any(const pg_layout_args *g, char *why, size_t why_size) {
  return pg_other_layout(g) ? wg_check_any(g, 1, why, why_size) : wg_check_tma(g, why, why_size);
}

static const pg_sass_rule rules[] = {WG_WS_RULES};

PG_ENTRY(wgmma_tma_coop) = {
    .info = {.name = "wgmma_tma_coop", .kind = PG_KIND_KERNEL, .precision = PG_PRECISION_TF32,
             .technique = "wgmma TF32, TMA producer + two consumer warpgroups",
             .source = PG_FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 6,
             .default_stages = 4, WG_TILE_INFO, .threads = wg_ws_shape<2>::THREADS,
             .description = "wgmma TF32, TMA producer warp + two consumer warpgroups sharing each "
                            "tile (cooperative), setmaxnreg, STAGES buffers"},
    .smem_bytes = wg_ws_smem<WG_TILE_N>,
    .configure = configure<WG_TILE_N>,
    .check = wg_check_tma,
    .kernel = {.symbol = "pg_wgmma_ws_kernel", .launched = WG_WS_INSTANCE(2, 1, 128),
               .dynamic_smem = 1, PG_RULES(rules)},
};

PG_ENTRY(wgmma_tma_coop_n256) = {
    .info = {.name = "wgmma_tma_coop_n256", .kind = PG_KIND_KERNEL,
             .precision = PG_PRECISION_TF32,
             .technique = "wgmma_tma_coop on a 128x256 tile",
             .source = PG_FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 4,
             .default_stages = 3, .tile_m = WG_TILE_M, .tile_n = 2 * WG_TILE_N,
             .tile_k = WG_TILE_K, .threads = wg_ws_shape<2>::THREADS,
             .description = "wgmma_tma_coop on a 128x256 tile (m64n256 products, 48 KB a "
                            "stage); any layout and batch in one launch over rank-3 maps: B "
                            "read in place where op(B) = T, B^T and (op(A) = T) A^T by a first "
                            "kernel",
             .layouts = PG_LAYOUT_ANY},
    .smem_bytes = wg_ws_smem<2 * WG_TILE_N>,
    .configure = configure_any<2 * WG_TILE_N>,
    .check = check_any,
    .kernel = {.symbol = "pg_wgmma_ws_kernel", .launched = WG_WS_INSTANCE(2, 1, 256),
               .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
