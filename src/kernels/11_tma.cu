/* 11 tma — the shared 128x128x8 tile (tile128.h) fed by Hopper's tensor
 * memory accelerator (the TMA pipeline the "Software Pipelining and Double
 * Buffering" guide ends with); STAGES = 2..8 at run time, sm_90 only.
 *
 * Same 128x128x8 tile, same shared layout and compute as 05_cp_async.cu and
 * 09_mbarrier.cu; only the copy differs. Instead of 256 threads each issuing
 * one 16-byte cp.async per operand, thread 0 issues two bulk tensor copies
 * per tile (one box of A, one of B) after `mbarrier.arrive.expect_tx` on the
 * slot's full barrier; the copy engine moves the 8 KB, zero-fills what lies
 * outside the matrix, and completes the barrier's phase when the bytes have
 * landed. The other 255 threads issue no copy instruction at all.
 *
 *   full[s]  init count 1: thread 0's arrive.expect_tx(8 KB); the phase
 *            completes when that arrival and 8192 bytes are in;
 *   empty[s] init count 256: every thread arrives when done reading the
 *            slot; every thread waits on it before the slot is refilled,
 *            and thread 0 then refills it.
 *
 * The tile needs no swizzle: its dense layout is already free of bank
 * conflicts for this compute loop (tile128.h), and a swizzle would change
 * the layout the family shares.
 *
 *   pipegemm bench --variant tma,cp_async --stages 2-8 --size 4096
 */
#include "kernels/tile128.cuh"
#include "kernels/tma_common.cuh"

PG_KERNELS_BEGIN

__global__ void __launch_bounds__(T128_THREADS PG_TRACE_MIN_BLOCKS(2))
    pg_tma_kernel(const pg_gemm_args g, const __grid_constant__ pg_tma_maps maps) {
#ifdef PG_HAVE_TMA
  extern __shared__ float4 smem_raw[];
  float *const smem = (float *)pg_tma_smem_base(smem_raw);
  const int stages = g.stages;
  unsigned long long *const full = (unsigned long long *)(smem + stages * T128_STAGE_FLOATS);
  unsigned long long *const empty = full + stages;
  const int m0 = blockIdx.y * T128_TILE_M, n0 = blockIdx.x * T128_TILE_N;
  const int k_tiles = t128_k_tiles(g);
  const int producer = threadIdx.x == 0;
  PG_TRACE_OPEN(g, PG_TRACE_ROLE_BLOCK, producer); /* thread 0: the producer and a consumer */

  if (producer) {
    pg_tma_prefetch_map(&maps.a);
    pg_tma_prefetch_map(&maps.b);
    for (int s = 0; s < stages; ++s) {
      pg_mbar_init(&full[s], 1);
      pg_mbar_init(&empty[s], T128_THREADS);
    }
    pg_fence_barrier_init();
  }
  __syncthreads(); /* the barriers exist before anyone arrives or waits */

  float acc[T128_THREAD_M][T128_THREAD_N];
  t128_zero(acc);

  /* Prologue: STAGES-1 tiles requested, each slot's first use. */
  if (producer)
    for (int t = 0; t < stages - 1 && t < k_tiles; ++t) {
      float *stage = smem + t * T128_STAGE_FLOATS;
      PG_TRACE_BEFORE(ISSUE, t, t) pg_mbar_arrive_expect_tx(&full[t], T128_STAGE_BYTES);
      pg_tma_load_2d(t128_smem_a(stage), &maps.a, t * T128_TILE_K, m0, &full[t]);
      pg_tma_load_2d(t128_smem_b(stage), &maps.b, n0, t * T128_TILE_K, &full[t]);
    }

  int read_slot = 0, read_parity = 0;            /* tile kt */
  int write_slot = stages - 1, write_parity = 0; /* tile kt + STAGES-1 */
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int next = kt + stages - 1;
    if (next < k_tiles) {
      /* The slot held tile next-STAGES: all 256 threads must have released
       * it. Every thread waits here, not only the one that copies, which
       * keeps the warps within a tile of each other; letting them drift is
       * the slower choice measured in bench/results/tma-ws/README.md. */
      if (next >= stages)
        PG_TRACE_BEFORE(SLOT_WAIT, write_slot, next)
            pg_mbar_wait_parity(&empty[write_slot], write_parity ^ 1);
      if (producer) {
        float *stage = smem + write_slot * T128_STAGE_FLOATS;
        PG_TRACE_BEFORE(ISSUE, write_slot, next)
            pg_mbar_arrive_expect_tx(&full[write_slot], T128_STAGE_BYTES);
        pg_tma_load_2d(t128_smem_a(stage), &maps.a, next * T128_TILE_K, m0, &full[write_slot]);
        pg_tma_load_2d(t128_smem_b(stage), &maps.b, n0, next * T128_TILE_K, &full[write_slot]);
      }
    }
    write_parity ^= t128_ring_next(&write_slot, stages);

    PG_TRACE_SPAN(DATA, read_slot, kt)
        pg_mbar_wait_parity(&full[read_slot], read_parity); /* the copy engine is done */
    PG_TRACE_SPAN(COMPUTE, read_slot, kt) t128_compute(smem + read_slot * T128_STAGE_FLOATS, acc);
    PG_TRACE_BEFORE(RELEASE, read_slot, kt) pg_mbar_release_to_copy_engine(&empty[read_slot]);
    read_parity ^= t128_ring_next(&read_slot, stages);
  }
  PG_TRACE_SPAN(EPILOGUE, 0, 0) t128_epilogue(g, m0, n0, acc);
  PG_TRACE_CLOSE(g, PG_TRACE_ROLE_BLOCK);
#else
  pg_tma_unavailable();
#endif
}

static const pg_tma_boxes tma_boxes = {T128_TILE_K, T128_TILE_M, 0, T128_TILE_N, T128_TILE_K};

static size_t smem_tma(int stages) {
  return pg_tma_ring_smem(stages, T128_STAGE_BYTES, T128_STAGE_SYNC_BYTES);
}

static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  t128_configure(launch, (const void *)pg_tma_kernel, args);
  launch->tma = &tma_boxes;
}

static const pg_sass_rule rules[] = {PG_RULES_TMA_COMMON};

PG_ENTRY(tma) = {
    .info = {.name = "tma", .kind = PG_KIND_KERNEL,
             .technique = "TMA: cp.async.bulk.tensor on expect_tx mbarriers",
             .source = PG_FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 8,
             .default_stages = 4, T128_TILE_INFO,
             .description = "Hopper TMA: one thread issues cp.async.bulk.tensor per tile on an "
                            "expect_tx mbarrier, STAGES buffers"},
    .smem_bytes = smem_tma,
    .configure = configure,
    .check = pg_tma_check,
    .kernel = {.symbol = "pg_tma_kernel", .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
