/* 06 pipeline_thread — the cp_async pipeline written with libcu++
 * cuda::pipeline<cuda::thread_scope_thread> (the "Software Pipelining and
 * Double Buffering" guide's memcpy_async + producer/consumer protocol, and
 * the "A study on CUDA async memcpy" blog post on what it lowers to);
 * STAGES = 2..8 chosen at run time.
 *
 * cuda::make_pipeline() with no shared state is a per-thread FIFO of stages
 * and lowers to the same async-group PTX as 05: memcpy_async issues cp.async
 * (16 bytes .cg, or 4 bytes .ca at edges), producer_commit is
 * cp.async.commit_group, consumer_wait is cp.async.wait_group N, where the
 * pipeline works N out from its own head/tail count (a uniform switch over
 * N, like pg_cp_async_wait), and producer_acquire / consumer_release do
 * nothing. Because the pipeline counts stages, the tail commits no empty
 * groups: consumer_wait simply waits for fewer.
 *
 * "Thread scope" means each thread waits for its own copies only, so the
 * __syncthreads of 05 stays: it publishes the tile to the block and retires
 * the reads of the slot the next copy overwrites. libcu++ has no zero-fill
 * copy, so out-of-range elements are plain zero stores into shared memory,
 * published by the same __syncthreads.
 *
 *   pipegemm bench --variant pipeline_thread --stages 2-8 --size 2048
 */
#include "kernels/tile128_memcpy_async.cuh"

PG_KERNELS_BEGIN

typedef cuda::pipeline<cuda::thread_scope_thread> pipe_thread;

__global__ void __launch_bounds__(T128_THREADS PG_TRACE_MIN_BLOCKS(2))
    pg_pipeline_thread_kernel(const pg_gemm_args g) {
  extern __shared__ float4 smem_raw[]; /* float4: 16-byte aligned for cp.async */
  float *const smem = (float *)smem_raw;
  const int stages = g.stages;
  const int m0 = blockIdx.y * T128_TILE_M, n0 = blockIdx.x * T128_TILE_N;
  PG_TRACE_OPEN(g, PG_TRACE_ROLE_BLOCK, threadIdx.x == 0);
  float acc[T128_THREAD_M][T128_THREAD_N];
  t128_zero(acc);

  pipe_thread pipe = cuda::make_pipeline();
  const int k_tiles = t128_k_tiles(g);
  /* Prologue: STAGES-1 tiles in flight, or all of them when K is short. */
  for (int s = 0; s < stages - 1 && s < k_tiles; ++s) {
    PG_TRACE_BEFORE(ISSUE, s, s) pipe.producer_acquire();
    t128_memcpy_async_tile(g, smem + s * T128_STAGE_FLOATS, m0, n0, s * T128_TILE_K, pipe);
    pipe.producer_commit();
  }
  int read_slot = 0, write_slot = stages - 1;
  for (int kt = 0; kt < k_tiles; ++kt) {
    PG_TRACE_SPAN(DATA, read_slot, kt) {
      pipe.consumer_wait(); /* the oldest stage, tile kt, has landed (this thread's part) */
      /* Publishes tile kt to the block and retires step kt-1's reads of the
       * slot the next copy overwrites. */
      __syncthreads();
    }
    PG_TRACE_MARK_IF(kt > 0, PG_TRACE_RELEASE, write_slot, kt - 1);
    const int next = kt + stages - 1;
    if (next < k_tiles) {
      PG_TRACE_BEFORE(ISSUE, write_slot, next) pipe.producer_acquire();
      t128_memcpy_async_tile(g, smem + write_slot * T128_STAGE_FLOATS, m0, n0, next * T128_TILE_K, pipe);
      pipe.producer_commit();
    }
    PG_TRACE_SPAN(COMPUTE, read_slot, kt) t128_compute(smem + read_slot * T128_STAGE_FLOATS, acc);
    pipe.consumer_release();
    t128_ring_next(&read_slot, stages);
    t128_ring_next(&write_slot, stages);
  }
  PG_TRACE_SPAN(EPILOGUE, 0, 0) t128_epilogue(g, m0, n0, acc);
  PG_TRACE_CLOSE(g, PG_TRACE_ROLE_BLOCK);
}

static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  t128_configure(launch, (const void *)pg_pipeline_thread_kernel, args);
}

/* cuda::pipeline at thread scope is the async-group mechanism underneath
 * (commit -> LDGDEPBAR, wait -> DEPBAR), no mbarrier. */
static const pg_sass_rule rules[] = {
    {PG_ANY_SM, PG_MUST, "LDGSTS", "cuda::memcpy_async no longer lowers to cp.async"},
    {PG_ANY_SM, PG_MUST, "LDGDEPBAR", "producer_commit no longer lowers to cp.async.commit_group"},
    {PG_ANY_SM, PG_MUST, "DEPBAR", "consumer_wait no longer lowers to cp.async.wait_group"},
    {PG_ANY_SM, PG_NEVER, "ARRIVES", "the thread-scope pipeline now completes copies on an mbarrier"},
    {PG_SM90_UP, PG_NEVER, "SYNCS", "the thread-scope pipeline now waits on an mbarrier"},
};

PG_ENTRY(pipeline_thread) = {
    .info = {.name = "pipeline_thread", .kind = PG_KIND_KERNEL,
             .technique = "cuda::pipeline, thread scope (async-group)",
             .source = PG_FROM_GUIDE "; " PG_FROM_BLOG, .min_cc = 80, .min_stages = 2,
             .max_stages = 8, .default_stages = 2, T128_TILE_INFO,
             .description = "cuda::pipeline, thread scope: memcpy_async + producer/consumer calls "
                            "(async-group)"},
    .smem_bytes = t128_smem,
    .configure = configure,
    .kernel = {.symbol = "pg_pipeline_thread_kernel", .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
