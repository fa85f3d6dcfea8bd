/* 07 pipeline_block — the pipeline of 06 at block scope: one libcu++
 * cuda::pipeline<cuda::thread_scope_block> shared by all 256 threads, each
 * both producer and consumer (the "A study on CUDA async memcpy" blog post's
 * block-scoped pipeline; the protocol is the "Software Pipelining and Double
 * Buffering" guide's); STAGES = 2..8, one instantiation per count.
 *
 * The pipeline's state, cuda::pipeline_shared_state<thread_scope_block,
 * STAGES>, is a "produced" and a "consumed" mbarrier per stage (plus a
 * reference count) in static shared memory, so the stage count is a template
 * argument and the planner picks the instance. It lowers to the mbarrier
 * mechanism: memcpy_async issues cp.async; producer_commit is
 * cp.async.mbarrier.arrive (the stage's produced barrier cannot complete
 * before this thread's copies land) plus mbarrier.arrive; consumer_wait is
 * an mbarrier parity wait on it; consumer_release arrives on the consumed
 * barrier, and producer_acquire waits for that slot's consumed phase.
 *
 * So the pipeline itself is block-wide and the loop has no __syncthreads:
 * consumer_wait sees every thread's copies (RAW), producer_acquire waits
 * until every thread has released the slot it refills (WAR). With the two
 * hazards on separate barriers the next tile's copies are issued before
 * waiting for the current one, which 05's single __syncthreads cannot do.
 * Out-of-range elements are zero stores, published by the same barriers
 * (producer_commit's arrive is a release, consumer_wait an acquire).
 *
 *   pipegemm bench --variant pipeline_block --stages 2-8 --size 2048
 */
#include <cooperative_groups.h>
#include "kernels/tile128_memcpy_async.cuh"

PG_KERNELS_BEGIN

typedef cuda::pipeline<cuda::thread_scope_block> pipe_block;

/* STAGES is a template argument because pipeline_shared_state's is: one
 * kernel per count, chosen by the planner (pipeline_block_kernels). */
template <int STAGES>
__global__ void __launch_bounds__(T128_THREADS PG_TRACE_MIN_BLOCKS(2))
    pg_pipeline_block_kernel(const pg_gemm_args g) {
  extern __shared__ float4 smem_raw[]; /* float4: 16-byte aligned for cp.async */
  float *const smem = (float *)smem_raw;
  /* 2*STAGES mbarriers and a reference count (16*STAGES + 8 bytes): one more
   * word than the tiles' T128_STAGE_SYNC_BYTES, so it lives here, static.
   * Its reference count is a cuda::atomic, whose constructor a __shared__
   * variable never runs (nvcc warns); make_pipeline initialises every field. */
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> pipe_state;
#pragma nv_diag_default static_var_with_dynamic_init
  const int stages = STAGES;
  const int m0 = blockIdx.y * T128_TILE_M, n0 = blockIdx.x * T128_TILE_N;
  PG_TRACE_OPEN(g, PG_TRACE_ROLE_BLOCK, threadIdx.x == 0);
  float acc[T128_THREAD_M][T128_THREAD_N];
  t128_zero(acc);

  /* Thread 0 initialises the barriers (256 expected arrivals each), then the
   * group syncs: no thread touches a barrier before it exists. */
  pipe_block pipe = cuda::make_pipeline(cooperative_groups::this_thread_block(), &pipe_state);
  const int k_tiles = t128_k_tiles(g);
  /* Prologue: STAGES-1 tiles in flight, or all of them when K is short. */
  for (int s = 0; s < stages - 1 && s < k_tiles; ++s) {
    pipe.producer_acquire();
    PG_TRACE_BEFORE(ISSUE, s, s)
        t128_memcpy_async_tile(g, smem + s * T128_STAGE_FLOATS, m0, n0, s * T128_TILE_K, pipe);
    pipe.producer_commit();
  }
  int read_slot = 0, write_slot = stages - 1;
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int next = kt + stages - 1;
    if (next < k_tiles) {
      /* The slot's first use (next < STAGES) has nothing to wait for. */
      PG_TRACE_MARK_IF(next >= stages, PG_TRACE_SLOT_WAIT, write_slot, next);
      pipe.producer_acquire(); /* every thread has released tile kt-1's slot */
      PG_TRACE_BEFORE(ISSUE, write_slot, next)
          t128_memcpy_async_tile(g, smem + write_slot * T128_STAGE_FLOATS, m0, n0,
                                 next * T128_TILE_K, pipe);
      pipe.producer_commit();
    }
    PG_TRACE_SPAN(DATA, read_slot, kt)
        pipe.consumer_wait(); /* every thread's copies of tile kt have landed */
    PG_TRACE_SPAN(COMPUTE, read_slot, kt) t128_compute(smem + read_slot * T128_STAGE_FLOATS, acc);
    /* This thread is done reading the slot (the mark goes before the arrive). */
    PG_TRACE_BEFORE(RELEASE, read_slot, kt) pipe.consumer_release();
    t128_ring_next(&read_slot, stages);
    t128_ring_next(&write_slot, stages);
  }
  PG_TRACE_SPAN(EPILOGUE, 0, 0) t128_epilogue(g, m0, n0, acc);
  PG_TRACE_CLOSE(g, PG_TRACE_ROLE_BLOCK);
  /* ~pipeline: the last thread to quit invalidates the barriers. Every stage
   * committed was also waited for, so no copy is still arriving on them. */
}

/* One instance per stage count: the pipeline's shared state is sized at
 * compile time. */
static const void *const pipeline_block_kernels[] = {
    NULL,
    NULL,
    (const void *)pg_pipeline_block_kernel<2>,
    (const void *)pg_pipeline_block_kernel<3>,
    (const void *)pg_pipeline_block_kernel<4>,
    (const void *)pg_pipeline_block_kernel<5>,
    (const void *)pg_pipeline_block_kernel<6>,
    (const void *)pg_pipeline_block_kernel<7>,
    (const void *)pg_pipeline_block_kernel<8>,
};

/* The dynamic shared memory (the registry's smem_bytes) reserves
 * T128_STAGE_SYNC_BYTES per stage that the static pipe_state leaves unused;
 * asking for it keeps static + dynamic within what the launch opts in to (at
 * 6 stages the tiles alone are exactly 48 KiB). */
static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  const int count = (int)(sizeof pipeline_block_kernels / sizeof pipeline_block_kernels[0]);
  t128_configure(launch, args->stages < count ? pipeline_block_kernels[args->stages] : NULL, args);
}

/* The shared pipeline state is a ring of mbarriers; copies complete on them
 * (cp.async.mbarrier.arrive), not in commit groups. */
static const pg_sass_rule rules[] = {
    {PG_ANY_SM, PG_MUST, "LDGSTS", "cuda::memcpy_async no longer lowers to cp.async"},
    {PG_ANY_SM, PG_MUST, "ARRIVES.LDGSTSBAR", "copies no longer complete on the pipeline's mbarrier"},
    {PG_ANY_SM, PG_NEVER, "LDGDEPBAR", "the block-scope pipeline fell back to commit groups"},
    {PG_SM8X, PG_MUST, "ATOMS.ARRIVE", "no mbarrier arrive: the pipeline state is not an mbarrier"},
    {PG_SM90_UP, PG_MUST, "SYNCS.ARRIVE", "no mbarrier arrive: the pipeline state is not an mbarrier"},
    {PG_SM90_UP, PG_MUST, "SYNCS.PHASECHK", "no mbarrier wait (try_wait) in consumer_wait"},
};

PG_ENTRY(pipeline_block) = {
    .info = {.name = "pipeline_block", .kind = PG_KIND_KERNEL,
             .technique = "cuda::pipeline, block scope (mbarrier)",
             .source = PG_FROM_BLOG, .min_cc = 80, .min_stages = 2, .max_stages = 8,
             .default_stages = 2, T128_TILE_INFO,
             .description = "cuda::pipeline, block scope: pipeline_shared_state in shared memory "
                            "(mbarrier)"},
    .smem_bytes = t128_smem_barriers,
    .configure = configure,
    .kernel = {/* One instance per stage count; the default launches <2>. */
    .symbol = "pg_pipeline_block_kernel", .launched = "pg_pipeline_block_kernel<2>",
               .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
