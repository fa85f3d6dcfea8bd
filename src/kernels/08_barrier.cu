/* 08 barrier — the pipeline built by hand from libcu++ cuda::barrier objects
 * instead of cuda::pipeline (the "A study on CUDA async memcpy" blog post's
 * split arrive/wait barrier with memcpy_async bound to it; the pipelining
 * itself is the "Software Pipelining and Double Buffering" guide's);
 * STAGES = 2..8 chosen at run time.
 *
 * One cuda::barrier<thread_scope_block> per stage, after the tiles in
 * dynamic shared memory, counts 256 arrivals; cuda::memcpy_async(dst, src,
 * size, bar) makes the barrier's phase also wait for that copy. Each thread
 * arrives right after issuing a tile's copies and waits (by parity) only when
 * it is about to compute that tile, STAGES-1 tiles later. On sm_90 libcu++
 * issues each 16-byte copy as a bulk copy completing on the barrier from the
 * async proxy, hence the proxy fence after init; what that lowering costs is
 * in bench/results/mechanisms/README.md.
 *
 * The barrier covers the read-after-write hazard for the whole block. The
 * write-after-read hazard (refilling the slot every thread read one step
 * earlier) is a __syncthreads, not a second "empty" barrier per stage: that
 * slot's wait would come right after its arrival and buy no slack, and a
 * BAR.SYNC is one instruction against an arrive plus a polling loop
 * (07_pipeline_block.cu is the all-mbarrier version). With the hazards split,
 * the next tile's copies are issued before waiting for the current one, which
 * 05 cannot do.
 *
 * Out-of-range elements are zero stores, published by the arrive (a release)
 * and the wait (an acquire). On sm_90 they share slots with the bulk copies,
 * but a thread's piece leaves the 16-byte path only in the last K tile, so
 * within a block a generic store never precedes a bulk write to the same
 * bytes (the case that would need fence.proxy.async).
 *
 *   pipegemm bench --variant barrier --stages 2-8 --size 2048
 */
#include "kernels/tile128_memcpy_async.cuh"

PG_KERNELS_BEGIN

typedef cuda::barrier<cuda::thread_scope_block> stage_barrier;

static_assert(sizeof(stage_barrier) <= T128_STAGE_SYNC_BYTES,
              "a stage's barrier fits in the shared memory reserved for it");

__global__ void __launch_bounds__(T128_THREADS PG_TRACE_MIN_BLOCKS(2))
    pg_barrier_kernel(const pg_gemm_args g) {
  extern __shared__ float4 smem_raw[]; /* float4: 16-byte aligned for cp.async */
  float *const smem = (float *)smem_raw;
  const int stages = g.stages;
  /* The barriers follow the tiles (T128_STAGE_BYTES keeps them 8-aligned). */
  stage_barrier *const full = (stage_barrier *)(smem + stages * T128_STAGE_FLOATS);
  const int m0 = blockIdx.y * T128_TILE_M, n0 = blockIdx.x * T128_TILE_N;
  PG_TRACE_OPEN(g, PG_TRACE_ROLE_BLOCK, threadIdx.x == 0);
  float acc[T128_THREAD_M][T128_THREAD_N];
  t128_zero(acc);

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) init(&full[s], T128_THREADS);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    /* The bulk copies complete on the barriers from the async proxy, which
     * must see them initialised. */
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
#endif
  }
  __syncthreads(); /* no thread uses a barrier before it is initialised */

  const int k_tiles = t128_k_tiles(g);
  /* Prologue: STAGES-1 tiles in flight, or all of them when K is short. The
   * arrival tokens are dropped: a thread waits for tile t STAGES-1 tiles
   * later, and a run-time-indexed array of tokens would live in local
   * memory, so it waits by phase parity instead (tile t is phase t/STAGES of
   * barrier t%STAGES). */
  for (int s = 0; s < stages - 1 && s < k_tiles; ++s) {
    PG_TRACE_BEFORE(ISSUE, s, s)
        t128_memcpy_async_tile(g, smem + s * T128_STAGE_FLOATS, m0, n0, s * T128_TILE_K, full[s]);
    (void)full[s].arrive();
  }
  int read_slot = 0, write_slot = stages - 1;
  int read_parity = 0; /* phase parity of full[read_slot] that holds tile kt */
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int next = kt + stages - 1;
    if (next < k_tiles) {
      /* Every thread has finished reading tile kt-1 from this slot, and has
       * waited on its barrier's previous phase, so no arrival below can run
       * a phase ahead of a thread still waiting by parity. */
      PG_TRACE_MARK_IF(next >= stages, PG_TRACE_SLOT_WAIT, write_slot, next);
      __syncthreads();
      PG_TRACE_MARK_IF(kt > 0, PG_TRACE_RELEASE, write_slot, kt - 1);
      PG_TRACE_BEFORE(ISSUE, write_slot, next)
          t128_memcpy_async_tile(g, smem + write_slot * T128_STAGE_FLOATS, m0, n0,
                                 next * T128_TILE_K, full[write_slot]);
      (void)full[write_slot].arrive();
    }
    /* Every thread has arrived and every copy of tile kt has landed. */
    PG_TRACE_SPAN(DATA, read_slot, kt) full[read_slot].wait_parity(read_parity);
    PG_TRACE_SPAN(COMPUTE, read_slot, kt) t128_compute(smem + read_slot * T128_STAGE_FLOATS, acc);
    read_parity ^= t128_ring_next(&read_slot, stages);
    t128_ring_next(&write_slot, stages);
  }
  PG_TRACE_SPAN(EPILOGUE, 0, 0) t128_epilogue(g, m0, n0, acc);
  PG_TRACE_CLOSE(g, PG_TRACE_ROLE_BLOCK);
}

static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  t128_configure(launch, (const void *)pg_barrier_kernel, args);
}

/* On sm_80 libcu++ issues cp.async and attaches it to the barrier; on sm_90
 * it issues the bulk copy (cp.async.bulk, UBLKCP) with a transaction count. */
static const pg_sass_rule rules[] = {
    {PG_SM8X, PG_MUST, "LDGSTS", "cuda::memcpy_async no longer lowers to cp.async"},
    {PG_SM8X, PG_MUST, "ARRIVES.LDGSTSBAR", "copies no longer complete on the cuda::barrier"},
    {PG_SM8X, PG_MUST, "ATOMS.ARRIVE", "no mbarrier arrive: cuda::barrier is not an mbarrier"},
    {PG_SM90_UP, PG_MUST, "UBLKCP", "cuda::memcpy_async no longer lowers to the bulk copy (cp.async.bulk)"},
    {PG_SM90_UP, PG_MUST, "SYNCS.ARRIVE", "no mbarrier arrive: cuda::barrier is not an mbarrier"},
    {PG_SM90_UP, PG_MUST, "SYNCS.PHASECHK", "no mbarrier wait (try_wait) on the cuda::barrier"},
    {PG_ANY_SM, PG_NEVER, "LDGDEPBAR", "the copies fell back to commit groups"},
};

PG_ENTRY(barrier) = {
    .info = {.name = "barrier", .kind = PG_KIND_KERNEL,
             .technique = "cuda::memcpy_async on cuda::barrier, arrive/wait a stage",
             .source = PG_FROM_BLOG, .min_cc = 80, .min_stages = 2, .max_stages = 8,
             .default_stages = 2, T128_TILE_INFO,
             .description = "cuda::memcpy_async bound to cuda::barrier, split arrive/wait per "
                            "stage"},
    .smem_bytes = t128_smem_barriers,
    .configure = configure,
    .kernel = {.symbol = "pg_barrier_kernel", .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
