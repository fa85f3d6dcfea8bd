/* 05 cp_async — multi-stage cp.async pipeline (the "CUDA Kernel Study:
 * Pipelining" write-up, "cp.async Multi-Stage Pipeline"); STAGES = 1..8
 * chosen at run time.
 *
 * Tiles go global -> shared directly (LDGSTS), no registers in between.
 * Each tile's copies form one commit group; with STAGES buffers, STAGES-1
 * tiles are in flight while the block computes on the oldest, and
 * wait_group(STAGES-2) says "all but the newest STAGES-2 groups have landed".
 * STAGES = 2 is the write-up's measured configuration (same depth as
 * pingpong, different data path); STAGES = 1 issues, waits and computes with
 * no overlap.
 *
 *   pipegemm bench --variant cp_async --stages 1-8 --size 2048
 */
#include "kernels/tile128.cuh"

PG_KERNELS_BEGIN

__global__ void __launch_bounds__(T128_THREADS PG_TRACE_MIN_BLOCKS(2))
    pg_cp_async_kernel(const pg_gemm_args g) {
  extern __shared__ float4 smem_raw[]; /* float4: 16-byte aligned for cp.async */
  float *const smem = (float *)smem_raw;
  const int stages = g.stages;
  const int m0 = blockIdx.y * T128_TILE_M, n0 = blockIdx.x * T128_TILE_N;
  PG_TRACE_OPEN(g, PG_TRACE_ROLE_BLOCK, threadIdx.x == 0);
  float acc[T128_THREAD_M][T128_THREAD_N];
  t128_zero(acc);

  const int k_tiles = t128_k_tiles(g);
  if (stages == 1) {
    for (int kt = 0; kt < k_tiles; ++kt) {
      PG_TRACE_BEFORE(ISSUE, 0, kt) t128_cp_async_tile(g, smem, m0, n0, kt * T128_TILE_K);
      pg_cp_async_commit();
      PG_TRACE_SPAN(DATA, 0, kt) {
        pg_cp_async_wait(0);
        __syncthreads(); /* every thread's copies are visible */
      }
      PG_TRACE_SPAN(COMPUTE, 0, kt) t128_compute(smem, acc);
      PG_TRACE_AFTER(RELEASE, 0, kt) __syncthreads(); /* the single buffer is free again */
    }
  } else {
    /* Prologue: STAGES-1 tiles in flight. A group is committed even when it
     * is empty (fewer K tiles than stages), so group i is always tile i. */
    for (int s = 0; s < stages - 1; ++s) {
      if (s < k_tiles)
        PG_TRACE_BEFORE(ISSUE, s, s)
            t128_cp_async_tile(g, smem + s * T128_STAGE_FLOATS, m0, n0, s * T128_TILE_K);
      pg_cp_async_commit();
    }
    int read_slot = 0, write_slot = stages - 1;
    for (int kt = 0; kt < k_tiles; ++kt) {
      PG_TRACE_SPAN(DATA, read_slot, kt) {
        pg_cp_async_wait(stages - 2); /* tile kt has landed (this thread's part) */
        /* Publishes tile kt to the block and retires step kt-1's reads of the
         * slot the next copy overwrites. */
        __syncthreads();
      }
      PG_TRACE_MARK_IF(kt > 0, PG_TRACE_RELEASE, write_slot, kt - 1);
      const int next = kt + stages - 1;
      if (next < k_tiles)
        PG_TRACE_BEFORE(ISSUE, write_slot, next)
            t128_cp_async_tile(g, smem + write_slot * T128_STAGE_FLOATS, m0, n0,
                               next * T128_TILE_K);
      pg_cp_async_commit();
      PG_TRACE_SPAN(COMPUTE, read_slot, kt) t128_compute(smem + read_slot * T128_STAGE_FLOATS, acc);
      t128_ring_next(&read_slot, stages);
      t128_ring_next(&write_slot, stages);
    }
  }
  PG_TRACE_SPAN(EPILOGUE, 0, 0) t128_epilogue(g, m0, n0, acc);
  PG_TRACE_CLOSE(g, PG_TRACE_ROLE_BLOCK);
}

static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  t128_configure(launch, (const void *)pg_cp_async_kernel, args);
}

static const pg_sass_rule rules[] = {
    T128_RULES_CP_ASYNC,
    {PG_ANY_SM, PG_NEVER, "ARRIVES", "an mbarrier tracks the copies instead of commit/wait groups"},
};

PG_ENTRY(cp_async) = {
    .info = {.name = "cp_async", .kind = PG_KIND_KERNEL,
             .technique = "cp.async, commit_group/wait_group, STAGES buffers",
             .source = PG_FROM_STUDY, .min_cc = 80, .min_stages = 1, .max_stages = 8,
             .default_stages = 2, T128_TILE_INFO,
             .description = "cp.async global->shared, commit_group/wait_group, STAGES buffers"},
    .smem_bytes = t128_smem,
    .configure = configure,
    .kernel = {.symbol = "pg_cp_async_kernel", .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
