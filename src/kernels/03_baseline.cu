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

__global__ void __launch_bounds__(T128_THREADS)
    pg_baseline_kernel(const pg_gemm_args g) {
  __shared__ __align__(16) float stage[T128_STAGE_FLOATS];
  const int m0 = blockIdx.y * T128_TILE_M, n0 = blockIdx.x * T128_TILE_N;
  float acc[T128_THREAD_M][T128_THREAD_N];
  t128_zero(acc);

  const int k_tiles = t128_k_tiles(g);
  for (int kt = 0; kt < k_tiles; ++kt) {
    t128_store_shared(stage, t128_load_global(g, m0, n0, kt * T128_TILE_K));
    __syncthreads(); /* the tile is complete in shared memory */
    t128_compute(stage, acc);
    __syncthreads(); /* everyone has read it before the next step overwrites it */
  }
  t128_epilogue(g, m0, n0, acc);
}

extern "C" void pg_plan_baseline(pg_gemm_args *args, const pg_device *device,
                                 const pg_tuning *tuning, pg_kernel_plan *plan) {
  (void)device;
  (void)tuning;
  t128_plan(plan, (const void *)pg_baseline_kernel, args);
}
