/* 09 mbarrier — the cp.async pipeline with raw PTX mbarriers instead of
 * commit/wait groups and block-wide barriers (the PTX layer that the "A study
 * on CUDA async memcpy" blog post explains under cuda::pipeline and
 * cuda::barrier); STAGES = 2..8 at run time.
 *
 * Each slot of the ring has two mbarriers in shared memory:
 *   full[s]  counts the 256 threads' cp.async.mbarrier.arrive.noinc: the
 *            phase completes when every thread's copies of the tile landed,
 *            so consumers need no wait_group and no __syncthreads to see it;
 *   empty[s] counts the 256 threads that finished computing on the slot:
 *            the copy that refills it waits for that phase, not for a
 *            whole-block barrier.
 * A waiter names the phase by its parity: the n-th use of a slot is phase n,
 * parity n & 1, so one bit per role replaces a token. Compared with
 * 05_cp_async.cu, the per-step __syncthreads is gone; a warp that runs ahead
 * only waits where its data or its slot is not ready.
 *
 *   pipegemm bench --variant mbarrier --stages 2-8 --size 4096
 */
#include "kernels/tile128.cuh"

PG_KERNELS_BEGIN

__global__ void __launch_bounds__(T128_THREADS PG_TRACE_MIN_BLOCKS(2))
    pg_mbarrier_kernel(const pg_gemm_args g) {
  extern __shared__ float4 smem_raw[];
  float *const smem = (float *)smem_raw;
  const int stages = g.stages;
  /* The barriers follow the tiles (T128_STAGE_SYNC_BYTES per stage). */
  unsigned long long *const full = (unsigned long long *)(smem + stages * T128_STAGE_FLOATS);
  unsigned long long *const empty = full + stages;
  const int m0 = blockIdx.y * T128_TILE_M, n0 = blockIdx.x * T128_TILE_N;
  PG_TRACE_OPEN(g, PG_TRACE_ROLE_BLOCK, threadIdx.x == 0);

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      pg_mbar_init(&full[s], T128_THREADS);
      pg_mbar_init(&empty[s], T128_THREADS);
    }
  }
  __syncthreads(); /* the barriers exist before anyone arrives or waits */

  float acc[T128_THREAD_M][T128_THREAD_N];
  t128_zero(acc);
  const int k_tiles = t128_k_tiles(g);

  /* Prologue: STAGES-1 tiles in flight, each slot's first use (no wait). */
  for (int t = 0; t < stages - 1 && t < k_tiles; ++t) {
    PG_TRACE_BEFORE(ISSUE, t, t)
        t128_cp_async_tile(g, smem + t * T128_STAGE_FLOATS, m0, n0, t * T128_TILE_K);
    pg_cp_async_mbar_arrive_noinc(&full[t]);
  }

  int read_slot = 0, read_parity = 0;                   /* tile kt */
  int write_slot = stages - 1, write_parity = 0;        /* tile kt + STAGES-1 */
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int next = kt + stages - 1;
    if (next < k_tiles) {
      /* The slot held tile next-STAGES; all 8 warps must be done with it.
       * Its first use (next < STAGES) has nothing to wait for. */
      if (next >= stages)
        PG_TRACE_BEFORE(SLOT_WAIT, write_slot, next)
            pg_mbar_wait_parity(&empty[write_slot], write_parity ^ 1);
      PG_TRACE_BEFORE(ISSUE, write_slot, next)
          t128_cp_async_tile(g, smem + write_slot * T128_STAGE_FLOATS, m0, n0, next * T128_TILE_K);
      pg_cp_async_mbar_arrive_noinc(&full[write_slot]);
    }
    write_parity ^= t128_ring_next(&write_slot, stages);

    PG_TRACE_SPAN(DATA, read_slot, kt)
        pg_mbar_wait_parity(&full[read_slot], read_parity); /* tile kt has landed, all of it */
    PG_TRACE_SPAN(COMPUTE, read_slot, kt) t128_compute(smem + read_slot * T128_STAGE_FLOATS, acc);
    /* Every thread releases its own reads: its arrival orders them before
     * the refill that waits on this phase. (Why not one elected lane per
     * warp: bench/results/mechanisms/README.md, mbarrier.) */
    PG_TRACE_BEFORE(RELEASE, read_slot, kt) pg_mbar_arrive(&empty[read_slot]);
    read_parity ^= t128_ring_next(&read_slot, stages);
  }
  PG_TRACE_SPAN(EPILOGUE, 0, 0) t128_epilogue(g, m0, n0, acc);
  PG_TRACE_CLOSE(g, PG_TRACE_ROLE_BLOCK);
}

static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  t128_configure(launch, (const void *)pg_mbarrier_kernel, args);
}

/* Raw PTX cp.async + cp.async.mbarrier.arrive.noinc + mbarrier.arrive /
 * try_wait.parity; no commit or wait groups anywhere. */
static const pg_sass_rule rules[] = {
    {PG_ANY_SM, PG_MUST, "LDGSTS", "the kernel no longer shows cp.async"},
    {PG_ANY_SM, PG_MUST, "ARRIVES.LDGSTSBAR", "cp.async.mbarrier.arrive is gone"},
    {PG_ANY_SM, PG_NEVER, "LDGDEPBAR", "cp.async.commit_group is back"},
    {PG_ANY_SM, PG_NEVER, "DEPBAR", "cp.async.wait_group is back"},
    {PG_SM8X, PG_MUST, "ATOMS.ARRIVE", "mbarrier.arrive is gone"},
    {PG_SM90_UP, PG_MUST, "SYNCS.ARRIVE", "mbarrier.arrive is gone"},
    {PG_SM90_UP, PG_MUST, "SYNCS.PHASECHK", "mbarrier.try_wait.parity is gone"},
};

PG_ENTRY(mbarrier) = {
    .info = {.name = "mbarrier", .kind = PG_KIND_KERNEL,
             .technique = "raw PTX: cp.async.mbarrier.arrive, try_wait.parity",
             .source = PG_FROM_BLOG, .min_cc = 80, .min_stages = 2, .max_stages = 8,
             .default_stages = 2, T128_TILE_INFO,
             .description = "raw PTX: cp.async + cp.async.mbarrier.arrive.noinc + "
                            "mbarrier.try_wait.parity"},
    .smem_bytes = t128_smem_barriers,
    .configure = configure,
    .kernel = {.symbol = "pg_mbarrier_kernel", .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
