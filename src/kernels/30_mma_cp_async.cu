/* 30 mma_cp_async — the tensor-core regime's first member, the Ampere way:
 * warp-level mma.sync (m16n8k8, TF32 products, FP32 sums) fed by the same
 * multi-stage cp.async pipeline as 05 cp_async; STAGES = 1..6 chosen at run
 * time. It runs on sm_80 and later: the bridge between the FFMA family and
 * the Hopper wgmma members, on their tile (128x128, K step 32).
 *
 * Tile: 128x128 of C per block, 32 along K per stage, 256 threads as 8 warps
 * in a 2 (M) x 4 (N) grid, each warp 64x32 of C as 4x4 m16n8 tiles (64
 * accumulators a thread). Shared layout of one stage, both operands as in
 * global memory (no transpose: mma.sync takes B from any layout through its
 * fragments):
 *   A [128][32 + 4]: the 4 padding floats make a warp's fragment reads
 *     (rows g, columns t: bank 4g + t) hit 32 distinct banks;
 *   B [32][128 + 8]: likewise (rows t, columns g: bank 8t + g).
 * Each row's pitch stays a multiple of 16 bytes, so each thread's 4 + 4
 * pieces per stage are single 16-byte cp.async where the row allows.
 *
 * The pipeline is 05's: STAGES-1 tiles in flight, one commit group per
 * tile, wait_group(STAGES-2) then one block barrier before a tile is read;
 * STAGES = 1 issues, waits and computes with no overlap.
 *
 *   pipegemm bench --variant cublas_tf32,mma_cp_async --stages 1-6 --size 4096
 */
#include "kernels/mma_cp_async.cuh"

PG_KERNELS_BEGIN

__global__ void __launch_bounds__(MMA_THREADS, 2) pg_mma_cp_async_kernel(const pg_gemm_args g) {
  extern __shared__ float4 smem_raw[]; /* float4: 16-byte aligned for cp.async */
  float *const smem = (float *)smem_raw;
  const int stages = g.stages;
  const int m0 = blockIdx.y * MMA_TILE_M, n0 = blockIdx.x * MMA_TILE_N;
  mma_acc acc;
  mma_zero(acc);

  const int k_tiles = (int)(((long long)g.k + MMA_TILE_K - 1) / MMA_TILE_K);
  if (stages == 1) {
    for (int kt = 0; kt < k_tiles; ++kt) {
      mma_cp_async_stage(g, smem, m0, n0, kt * MMA_TILE_K);
      pg_cp_async_commit();
      pg_cp_async_wait(0);
      __syncthreads(); /* every thread's copies are visible */
      mma_compute_stage<0>(smem, acc);
      __syncthreads(); /* the single buffer is free again */
    }
  } else {
    /* Prologue: STAGES-1 tiles in flight; a group is committed even when
     * empty, so group i is always tile i. */
    for (int s = 0; s < stages - 1; ++s) {
      if (s < k_tiles) mma_cp_async_stage(g, smem + s * MMA_STAGE_FLOATS, m0, n0, s * MMA_TILE_K);
      pg_cp_async_commit();
    }
    int read_slot = 0, write_slot = stages - 1;
    for (int kt = 0; kt < k_tiles; ++kt) {
      pg_cp_async_wait(stages - 2); /* tile kt has landed (this thread's part) */
      /* Publishes tile kt and retires step kt-1's reads of the slot the next
       * copy overwrites. */
      __syncthreads();
      const int next = kt + stages - 1;
      if (next < k_tiles)
        mma_cp_async_stage(g, smem + write_slot * MMA_STAGE_FLOATS, m0, n0, next * MMA_TILE_K);
      pg_cp_async_commit();
      mma_compute_stage<0>(smem + read_slot * MMA_STAGE_FLOATS, acc);
      t128_ring_next(&read_slot, stages);
      t128_ring_next(&write_slot, stages);
    }
  }
  mma_epilogue(g, g.c, m0, n0, acc);
}

static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  launch->kernel = (const void *)pg_mma_cp_async_kernel;
  launch->grid_x = ((long long)args->n + MMA_TILE_N - 1) / MMA_TILE_N;
  launch->grid_y = ((long long)args->m + MMA_TILE_M - 1) / MMA_TILE_M;
}

static size_t smem_bytes(int stages) { return (size_t)stages * MMA_STAGE_BYTES; }

static const pg_sass_rule rules[] = {
    MMA_CP_ASYNC_RULES,
    {PG_ANY_SM, PG_NEVER, "HGMMA", "the warpgroup MMA (wgmma) replaced mma.sync"},
};

PG_ENTRY(mma_cp_async) = {
    .info = {.name = "mma_cp_async", .kind = PG_KIND_KERNEL, .precision = PG_PRECISION_TF32,
             .technique = "mma.sync TF32 tensor cores fed by cp.async (Ampere)",
             .source = PG_FROM_STUDY, /* its pipeline: 05's, from the study */
             .min_cc = 80, .min_stages = 1, .max_stages = 6,
             .default_stages = 3, .tile_m = MMA_TILE_M, .tile_n = MMA_TILE_N,
             .tile_k = MMA_TILE_K, .threads = MMA_THREADS,
             .description = "mma.sync m16n8k8 TF32 tensor cores fed by cp.async, STAGES buffers "
                            "(the Ampere way)"},
    .smem_bytes = smem_bytes,
    .configure = configure,
    .kernel = {.symbol = "pg_mma_cp_async_kernel", .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
