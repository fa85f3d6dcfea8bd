/* 33 wgmma_tma — the wgmma tile fed by Hopper's tensor memory accelerator,
 * as 11 tma feeds the FFMA tile: thread 0 announces a stage's 32 KB on the
 * slot's full barrier (arrive.expect_tx) and issues two bulk tensor copies,
 * a 32 x 128 box of A and one of B^T, each in the 128-byte swizzle that the
 * wgmma descriptors read; the copy engine zero-fills what lies outside the
 * matrices. Every thread of both warpgroups waits on full[s], multiplies,
 * waits for its products (wgmma.wait_group 0) and arrives on empty[s];
 * every thread waits on empty[s] before the slot is refilled (thread 0 then
 * refills it). STAGES = 2..6 at run time, sm_90a.
 *
 *   full[s]  count 1: thread 0's arrive.expect_tx(32 KB) and the bytes;
 *   empty[s] count 256: each thread, once its warpgroup's products on the
 *            slot are done.
 *
 *   pipegemm bench --variant wgmma_cp_async,wgmma_tma --stages 2-6 --size 4096
 */
#include "kernels/wgmma.cuh"

PG_KERNELS_BEGIN

#define WG_TMA_THREADS 256

__global__ void __launch_bounds__(WG_TMA_THREADS, 2)
    pg_wgmma_tma_kernel(const pg_gemm_args g, const __grid_constant__ pg_tma_maps maps) {
#ifdef PG_HAVE_WGMMA
  extern __shared__ float4 smem_raw[];
  float *const smem = (float *)pg_tma_smem_base(smem_raw);
  const int stages = g.stages;
  unsigned long long *const full = (unsigned long long *)(smem + stages * (WG_STAGE_BYTES / 4));
  unsigned long long *const empty = full + stages;
  const int m0 = blockIdx.y * WG_TILE_M, n0 = blockIdx.x * WG_TILE_N;
  const int wg = threadIdx.x / WG_WARPGROUP;
  const int k_tiles = wg_k_tiles(g);
  const int producer = threadIdx.x == 0;
  PG_TRACE_OPEN(g, PG_TRACE_ROLE_BLOCK, producer); /* thread 0: the producer and a consumer */

  if (producer) {
    pg_tma_prefetch_map(&maps.a);
    pg_tma_prefetch_map(&maps.b);
  }
  wg_ring_init(full, empty, stages, WG_TMA_THREADS);

  float acc[WG_ACC];
#pragma unroll
  for (int i = 0; i < WG_ACC; ++i) acc[i] = 0.f;

  if (producer)
    for (int t = 0; t < stages - 1 && t < k_tiles; ++t) {
      float *stage = smem + t * (WG_STAGE_BYTES / 4);
      PG_TRACE_BEFORE(ISSUE, t, t) pg_mbar_arrive_expect_tx(&full[t], WG_STAGE_BYTES);
      pg_tma_load_2d(wg_stage_a(stage), &maps.a, t * WG_TILE_K, m0, &full[t]);
      pg_tma_load_2d(wg_stage_bt(stage), &maps.b, t * WG_TILE_K, n0, &full[t]);
    }

  int read_slot = 0, read_parity = 0;            /* stage kt */
  int write_slot = stages - 1, write_parity = 0; /* stage kt + STAGES-1 */
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int next = kt + stages - 1;
    if (next < k_tiles) {
      /* The slot held stage next-STAGES: every thread has released it. */
      if (next >= stages)
        PG_TRACE_BEFORE(SLOT_WAIT, write_slot, next)
            pg_mbar_wait_parity(&empty[write_slot], write_parity ^ 1);
      if (producer) {
        float *stage = smem + write_slot * (WG_STAGE_BYTES / 4);
        PG_TRACE_BEFORE(ISSUE, write_slot, next)
            pg_mbar_arrive_expect_tx(&full[write_slot], WG_STAGE_BYTES);
        pg_tma_load_2d(wg_stage_a(stage), &maps.a, next * WG_TILE_K, m0, &full[write_slot]);
        pg_tma_load_2d(wg_stage_bt(stage), &maps.b, next * WG_TILE_K, n0, &full[write_slot]);
      }
    }
    write_parity ^= t128_ring_next(&write_slot, stages);

    PG_TRACE_SPAN(DATA, read_slot, kt)
        pg_mbar_wait_parity(&full[read_slot], read_parity); /* the copy engine is done */
    float *const stage = smem + read_slot * (WG_STAGE_BYTES / 4);
    PG_TRACE_SPAN(COMPUTE, read_slot, kt) {
      wg_fence();
      wg_stage_mma(wg_stage_a(stage) + wg * 64 * WG_TILE_K, wg_stage_bt(stage), acc);
      wg_commit();
      wg_wait<0>();
    }
    PG_TRACE_BEFORE(RELEASE, read_slot, kt) pg_mbar_arrive(&empty[read_slot]);
    read_parity ^= t128_ring_next(&read_slot, stages);
  }
  PG_TRACE_SPAN(EPILOGUE, 0, 0) {
    wg_fence_acc(acc);
    wg_epilogue(g, m0 + 64 * wg, n0, acc);
  }
  PG_TRACE_CLOSE(g, PG_TRACE_ROLE_BLOCK);
#else
  pg_tma_unavailable();
#endif
}

static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  wg_configure(launch, (const void *)pg_wgmma_tma_kernel, args);
  launch->tma = &wg_bt_boxes<WG_TILE_N>::boxes;
}

static size_t smem_bytes(int stages) {
  return pg_tma_ring_smem(stages, WG_STAGE_BYTES, WG_STAGE_SYNC_BYTES);
}

static const pg_sass_rule rules[] = {PG_RULES_WGMMA, PG_RULES_TMA_COMMON};

PG_ENTRY(wgmma_tma) = {
    .info = {.name = "wgmma_tma", .kind = PG_KIND_KERNEL, .precision = PG_PRECISION_TF32,
             .technique = "wgmma TF32 fed by TMA, every warp waiting",
             .source = PG_FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 6,
             .default_stages = 2, WG_TILE_INFO, .threads = WG_TMA_THREADS,
             .description = "wgmma m64n128k8 TF32 fed by TMA on expect_tx mbarriers, every warp "
                            "waiting, STAGES buffers (B^T into a workspace first)"},
    .smem_bytes = smem_bytes,
    .configure = configure,
    .check = wg_check_tma,
    .kernel = {.symbol = "pg_wgmma_tma_kernel", .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
