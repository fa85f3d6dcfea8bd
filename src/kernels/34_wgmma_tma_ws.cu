/* 34 wgmma_tma_ws — 33 wgmma_tma split by role: a TMA producer warp (in a
 * warpgroup of its own, for setmaxnreg) and one consumer warpgroup that
 * computes the whole 128 x 128 tile (two m64n128 products a K step, 128
 * accumulators a thread); two blocks per SM up to 3 stages, so one
 * block's epilogue runs under the other's products (src/kernels/wgmma_ws.cuh
 * has the kernel). Two entries, differing only in the MMA's own
 * asynchrony:
 *   wgmma_tma_ws        keeps one wgmma group in flight across a K step
 *                       (wgmma.wait_group 1, the slot released a step late);
 *   wgmma_tma_ws_wait0  waits for each step's products (wait_group 0).
 *
 *   pipegemm bench --variant wgmma_tma,wgmma_tma_ws,wgmma_tma_ws_wait0 --stages 2-6
 */
#include "kernels/wgmma_ws.cuh"

PG_KERNELS_BEGIN

template <int PENDING>
static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  wg_configure(launch, (const void *)pg_wgmma_ws_kernel<1, PENDING, WG_TILE_N>, args);
  launch->tma = &wg_bt_boxes<WG_TILE_N>::boxes;
}

static const pg_sass_rule rules[] = {WG_WS_RULES};

PG_ENTRY(wgmma_tma_ws) = {
    .info = {.name = "wgmma_tma_ws", .kind = PG_KIND_KERNEL, .precision = PG_PRECISION_TF32,
             .technique = "wgmma TF32, TMA producer warp + one consumer warpgroup",
             .source = PG_FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 6,
             .default_stages = 3, WG_TILE_INFO, .threads = wg_ws_shape<1>::THREADS,
             .description = "wgmma TF32, TMA producer warp + one consumer warpgroup (setmaxnreg), "
                            "one wgmma group in flight (wait_group 1), STAGES buffers"},
    .smem_bytes = wg_ws_smem<WG_TILE_N>,
    .configure = configure<1>,
    .check = wg_check_tma,
    .kernel = {.symbol = "pg_wgmma_ws_kernel", .launched = WG_WS_INSTANCE(1, 1, 128),
               .dynamic_smem = 1, PG_RULES(rules)},
};

PG_ENTRY(wgmma_tma_ws_wait0) = {
    .info = {.name = "wgmma_tma_ws_wait0", .kind = PG_KIND_KERNEL,
             .precision = PG_PRECISION_TF32,
             .technique = "wgmma_tma_ws waiting for each K step's products",
             .source = PG_FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 6,
             .default_stages = 3, WG_TILE_INFO, .threads = wg_ws_shape<1>::THREADS,
             .description = "wgmma_tma_ws waiting for each K step's products (wait_group 0) "
                            "before releasing its slot"},
    .smem_bytes = wg_ws_smem<WG_TILE_N>,
    .configure = configure<0>,
    .check = wg_check_tma,
    .kernel = {.symbol = "pg_wgmma_ws_kernel", .launched = WG_WS_INSTANCE(1, 0, 128),
               .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
