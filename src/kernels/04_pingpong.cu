/* 04 pingpong — double buffering through registers (the "CUDA Kernel Study:
 * Pipelining" write-up, "Ping-Pong (Double Buffering)").
 *
 * Two shared buffers. While the block computes on one, each thread has
 * already issued the global loads (LDG) of the next tile into registers and
 * stores them (STS) into the other buffer after its FFMAs, so the load
 * latency can hide behind the compute. One barrier per step: it both
 * publishes the next tile and retires the current one. How much overlap
 * there is depends on where the compiler schedules the LDGs.
 *
 *   pipegemm bench --variant pingpong --size 2048
 */
#include "kernels/tile128.cuh"

PG_KERNELS_BEGIN

__global__ void __launch_bounds__(T128_THREADS)
    pg_pingpong_kernel(const pg_gemm_args g) {
  __shared__ __align__(16) float stages[2][T128_STAGE_FLOATS];
  const int m0 = blockIdx.y * T128_TILE_M, n0 = blockIdx.x * T128_TILE_N;
  PG_TRACE_OPEN(g, PG_TRACE_ROLE_BLOCK, threadIdx.x == 0);
  float acc[T128_THREAD_M][T128_THREAD_N];
  t128_zero(acc);

  const int k_tiles = t128_k_tiles(g);
  if (k_tiles > 0) {
    PG_TRACE_BEFORE(ISSUE, 0, 0) PG_TRACE_SPAN(DATA, 0, 0) {
      t128_store_shared(stages[0], t128_load_global(g, m0, n0, 0));
      __syncthreads();
    }
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int current = kt & 1;
    const int has_next = kt + 1 < k_tiles;
    t128_regs next;
    if (has_next)
      PG_TRACE_BEFORE(ISSUE, current ^ 1, kt + 1)
          next = t128_load_global(g, m0, n0, (kt + 1) * T128_TILE_K);
    PG_TRACE_SPAN(COMPUTE, current, kt) t128_compute(stages[current], acc);
    /* The store waits for the loads, and the barrier for every warp's store. */
    /* Safe without a barrier before it: the other buffer was last read in
     * step kt-1, and the barrier that ended kt-1 retired those reads. */
    if (has_next)
      PG_TRACE_BEFORE(DATA_WAIT, current ^ 1, kt + 1)
          t128_store_shared(stages[current ^ 1], next);
    PG_TRACE_AFTER(RELEASE, current, kt) __syncthreads();
    PG_TRACE_MARK_IF(has_next, PG_TRACE_READY, current ^ 1, kt + 1);
  }
  PG_TRACE_SPAN(EPILOGUE, 0, 0) t128_epilogue(g, m0, n0, acc);
  PG_TRACE_CLOSE(g, PG_TRACE_ROLE_BLOCK);
}

static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  t128_configure(launch, (const void *)pg_pingpong_kernel, args);
}

static const pg_sass_rule rules[] = {T128_RULES_REGISTER_STAGED};

PG_ENTRY(pingpong) = {
    .info = {.name = "pingpong", .kind = PG_KIND_KERNEL,
             .technique = "two buffers, next tile staged through registers",
             .source = PG_FROM_STUDY, .min_cc = 80, .min_stages = 2, .max_stages = 2,
             .default_stages = 2, T128_TILE_INFO,
             .description = "two shared buffers, next tile staged through registers (LDG -> STS)"},
    .smem_bytes = t128_smem,
    .configure = configure,
    .kernel = {.symbol = "pg_pingpong_kernel", PG_RULES(rules)},
};

PG_KERNELS_END
