/* 35 wgmma_tma_coop — 34 with two consumer warpgroups cooperating on the
 * tile: each computes 64 of its 128 rows (one m64n128 product a K step, 64
 * accumulators), both read the same stage, and the stage is released when
 * both have arrived. One block of 384 threads per SM (the kernel:
 * src/kernels/wgmma_ws.cuh), one wgmma group in flight (wait_group 1).
 *
 *   pipegemm bench --variant wgmma_tma_ws,wgmma_tma_coop --stages 2-6 --size 4096
 */
#include "kernels/wgmma_ws.cuh"

PG_KERNELS_BEGIN

static void configure(pg_gemm_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  wg_configure(launch, (const void *)pg_wgmma_ws_kernel<2, 1>, args);
  launch->tma = &wg_ws_boxes;
}

static const pg_sass_rule rules[] = {WG_WS_RULES};

PG_ENTRY(wgmma_tma_coop) = {
    .info = {.name = "wgmma_tma_coop", .kind = PG_KIND_KERNEL, .precision = PG_PRECISION_TF32,
             .technique = "wgmma TF32, TMA producer warp + two consumer warpgroups sharing each "
                          "tile (cooperative), setmaxnreg, STAGES buffers",
             .source = PG_FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 6,
             .default_stages = 4, WG_TILE_INFO, .threads = wg_ws_shape<2>::THREADS},
    .smem_bytes = wg_ws_smem,
    .configure = configure,
    .check = wg_check_tma,
    .kernel = {.symbol = WG_WS_INSTANCE(2, 1), .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
