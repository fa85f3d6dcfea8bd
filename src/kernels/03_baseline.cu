/* 03 baseline — no pipeline (the "CUDA Kernel Study: Pipelining" write-up,
 * "Baseline (No Pipeline)").
 *
 * Each K step: every thread loads its share of the A and B tiles through
 * registers into the single shared buffer (LDG -> STS), the block syncs,
 * computes, and syncs again before the buffer may be overwritten. Loads and
 * FFMAs take turns; the warps stall on the global loads every step.
 *
 *   pipegemm bench --variant baseline --size 2048
 */
#include "kernels/tile128.cuh"

PG_KERNELS_BEGIN

__global__ void __launch_bounds__(T128_THREADS PG_TRACE_MIN_BLOCKS(2))
    pg_baseline_kernel(const pg_gemm_args g) {
  __shared__ __align__(16) float stage[T128_STAGE_FLOATS];
  const int m0 = blockIdx.y * T128_TILE_M, n0 = blockIdx.x * T128_TILE_N;
  PG_TRACE_OPEN(g, PG_TRACE_ROLE_BLOCK, threadIdx.x == 0);
  float acc[T128_THREAD_M][T128_THREAD_N];
  t128_zero(acc);

  const int k_tiles = t128_k_tiles(g);
  for (int kt = 0; kt < k_tiles; ++kt) {
    PG_TRACE_BEFORE(ISSUE, 0, kt) PG_TRACE_SPAN(DATA, 0, kt) { /* nothing to do until it lands */
      t128_store_shared(stage, t128_load_global(g, m0, n0, kt * T128_TILE_K));
      __syncthreads(); /* the tile is complete in shared memory */
    }
    PG_TRACE_SPAN(COMPUTE, 0, kt) t128_compute(stage, acc);
    /* everyone has read it before the next step overwrites it */
    PG_TRACE_AFTER(RELEASE, 0, kt) __syncthreads();
  }
  PG_TRACE_SPAN(EPILOGUE, 0, 0) t128_epilogue(g, m0, n0, acc);
  PG_TRACE_CLOSE(g, PG_TRACE_ROLE_BLOCK);
}

static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  t128_configure(launch, (const void *)pg_baseline_kernel, args);
}

static const pg_sass_rule rules[] = {T128_RULES_REGISTER_STAGED};

PG_ENTRY(baseline) = {
    .info = {.name = "baseline", .kind = PG_KIND_KERNEL,
             .technique = "no pipeline: load -> sync -> compute -> sync",
             .source = PG_FROM_STUDY, .min_cc = 80, .min_stages = 1, .max_stages = 1,
             .default_stages = 1, T128_TILE_INFO,
             .description = "no pipeline: load -> sync -> compute -> sync, one shared buffer"},
    .smem_bytes = t128_smem,
    .configure = configure,
    .kernel = {.symbol = "pg_baseline_kernel", PG_RULES(rules)},
};

PG_KERNELS_END
