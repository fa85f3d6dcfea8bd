/* 32 wgmma_cp_async — 31 wgmma_sync with 05 cp_async's pipeline: each
 * thread's 16-byte pieces go global -> shared with cp.async (no registers
 * in between) into the same swizzled layout, one commit group per stage,
 * STAGES - 1 stages in flight; before a stage is read every thread waits
 * for its own groups (wait_group STAGES - 2), fences the copies into the
 * async proxy, and the block syncs. STAGES = 1..6 at run time (6 x 32 KB
 * is what one block's shared memory holds with room to spare; 1: 31's
 * order with cp.async for the copy).
 *
 * The products wait at every step (wgmma.wait_group 0): the slot the next
 * copy overwrites is the one read at the step before, which the barrier at
 * the top of the step retires.
 *
 *   pipegemm bench --variant wgmma_sync,wgmma_cp_async --stages 1-6 --size 4096
 */
#include "kernels/wgmma.cuh"

PG_KERNELS_BEGIN

#define WG_CPA_THREADS 256
#define WG_CPA_PIECES (WG_TILE_M * WG_TILE_K / 4 / WG_CPA_THREADS) /* 4 */

static_assert(WG_TILE_M == WG_TILE_N, "one piece loop serves A and B^T");

#ifdef PG_HAVE_WGMMA /* the helpers exist where the kernel does */
/* This thread's pieces of one operand's tile (31's wg_sync_load, by
 * cp.async; zero-filled outside the matrix). The caller commits. */
static __device__ __forceinline__ void wg_cp_async_operand(float *dst, const float *src, int ld,
                                                           int row0, int k0, int rows, int cols,
                                                           int vec) {
#pragma unroll
  for (int i = 0; i < WG_CPA_PIECES; ++i) {
    const int p = threadIdx.x + i * WG_CPA_THREADS, r = p / 8;
    t128_cp_async_piece(dst + wg_swizzled(r, p % 8), src, src + (size_t)(row0 + r) * ld,
                        k0 + (p % 8) * 4, cols, row0 + r < rows, vec);
  }
}

static __device__ __forceinline__ void wg_cp_async_stage(const pg_gemm_args &g, float *stage,
                                                         int m0, int n0, int k0) {
  wg_cp_async_operand(wg_stage_a(stage), g.a, g.lda, m0, k0, g.m, g.k, g.vec_a);
  wg_cp_async_operand(wg_stage_bt(stage), g.b, g.ldb, n0, k0, g.n, g.k, g.vec_b);
}
#endif

/* The kernel's body on the tile along N `tile_n` (and blockIdx.y along M)
 * of the GEMM that g describes. */
static __device__ __forceinline__ void wg_cpa_body(const pg_gemm_args &g, int tile_n) {
#ifdef PG_HAVE_WGMMA
  extern __shared__ float4 smem_raw[];
  float *const smem = (float *)pg_tma_smem_base(smem_raw);
  const int stages = g.stages;
  const int m0 = blockIdx.y * WG_TILE_M, n0 = tile_n * WG_TILE_N;
  const int wg = threadIdx.x / WG_WARPGROUP;
  float acc[WG_ACC];
#pragma unroll
  for (int i = 0; i < WG_ACC; ++i) acc[i] = 0.f;

  const int k_tiles = wg_k_tiles(g);
  PG_TRACE_OPEN(g, PG_TRACE_ROLE_BLOCK, threadIdx.x == 0);
  /* Prologue: STAGES-1 stages in flight; a group is committed even when
   * empty, so group i is always stage i. */
  for (int s = 0; s < stages - 1; ++s) {
    if (s < k_tiles)
      PG_TRACE_BEFORE(ISSUE, s, s)
          wg_cp_async_stage(g, smem + s * (WG_STAGE_BYTES / 4), m0, n0, s * WG_TILE_K);
    pg_cp_async_commit();
  }
  int read_slot = 0, write_slot = stages - 1;
  for (int kt = 0; kt < k_tiles; ++kt) {
    float *const stage = smem + read_slot * (WG_STAGE_BYTES / 4);
    if (stages == 1) {
      PG_TRACE_BEFORE(ISSUE, 0, kt) wg_cp_async_stage(g, stage, m0, n0, kt * WG_TILE_K);
      pg_cp_async_commit();
    }
    PG_TRACE_SPAN(DATA, read_slot, kt) {
      pg_cp_async_wait(stages > 1 ? stages - 2 : 0); /* stage kt (this thread's part) */
      wg_fence_proxy_async();
      /* Publishes stage kt and retires step kt-1's products on the slot the
       * next copy overwrites. */
      __syncthreads();
    }
    const int next = kt + stages - 1;
    if (stages > 1) {
      PG_TRACE_MARK_IF(kt > 0, PG_TRACE_RELEASE, write_slot, kt - 1);
      if (next < k_tiles)
        PG_TRACE_BEFORE(ISSUE, write_slot, next)
            wg_cp_async_stage(g, smem + write_slot * (WG_STAGE_BYTES / 4), m0, n0,
                              next * WG_TILE_K);
      pg_cp_async_commit();
    }
    PG_TRACE_SPAN(COMPUTE, read_slot, kt) {
      wg_fence();
      wg_stage_mma(wg_stage_a(stage) + wg * 64 * WG_TILE_K, wg_stage_bt(stage), acc);
      wg_commit();
      wg_wait<0>();
    }
    if (stages == 1) PG_TRACE_AFTER(RELEASE, 0, kt) __syncthreads(); /* the one slot is free */
    t128_ring_next(&read_slot, stages);
    t128_ring_next(&write_slot, stages);
  }
  PG_TRACE_SPAN(EPILOGUE, 0, 0) {
    wg_fence_acc(acc);
    wg_epilogue(g, m0 + 64 * wg, n0, acc);
  }
  PG_TRACE_CLOSE(g, PG_TRACE_ROLE_BLOCK);
#else
  pg_tma_unavailable();
#endif
}

__global__ void __launch_bounds__(WG_CPA_THREADS, 2)
    pg_wgmma_cp_async_kernel(const pg_gemm_args g) {
  wg_cpa_body(g, blockIdx.x);
}

/* Any layout and a batch: x holds the tiles along N of each GEMM in turn.
 * A is read M x K (as it is, or A^T that the first kernel wrote where
 * op(A) = T) and B N x K (as it is where op(B) = T, else B^T that the first
 * kernel wrote), each matrix of the batch at its stride (the views set a
 * workspace's). */
__global__ void __launch_bounds__(WG_CPA_THREADS, 2)
    pg_wgmma_cp_async_any_kernel(const pg_layout_args g) {
  const int tiles_n = (int)(((long long)g.n + WG_TILE_N - 1) / WG_TILE_N);
  const int z = (int)blockIdx.x / tiles_n;
  pg_gemm_args own = g;
  own.a = g.a + (size_t)z * pg_stride_a(g);
  own.b = g.b + (size_t)z * pg_stride_b(g);
  own.c = g.c + (size_t)z * pg_stride_c(g);
  wg_cpa_body(own, (int)blockIdx.x % tiles_n);
}

/* Op N, N on one GEMM: B^T first, as the study has it; else the kernel
 * that takes any layout, after a first kernel that writes what it cannot
 * read as it is (B^T where op(B) = N, A^T where op(A) = T) over the batch. */
static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  if (!pg_other_layout(args)) {
    wg_configure(launch, (const void *)pg_wgmma_cp_async_kernel, args);
    return;
  }
  launch->kernel = (const void *)pg_wgmma_cp_async_any_kernel;
  launch->grid_x = ((long long)args->n + WG_TILE_N - 1) / WG_TILE_N * args->batch;
  launch->grid_y = ((long long)args->m + WG_TILE_M - 1) / WG_TILE_M;
  (void)pg_configure_layout_transposes(args, launch, 1);
}

static size_t smem_bytes(int stages) { return (size_t)stages * WG_STAGE_BYTES + WG_SMEM_ALIGN; }

static const pg_sass_rule rules[] = {
    PG_RULES_WGMMA_COMMON,
    {PG_SM90_UP, PG_MUST, "LDGSTS", "the kernel no longer shows cp.async"},
    {PG_SM90_UP, PG_MUST, "LDGDEPBAR", "cp.async.commit_group is gone"},
    {PG_SM90_UP, PG_MUST, "DEPBAR", "cp.async.wait_group is gone"},
    {PG_ANY_SM, PG_NEVER, "STS", "tiles pass through registers instead of going global -> shared"},
    {PG_ANY_SM, PG_NEVER, "UTMALDG", "TMA appeared: this member copies with cp.async"},
};

PG_ENTRY(wgmma_cp_async) = {
    .info = {.name = "wgmma_cp_async", .kind = PG_KIND_KERNEL, .precision = PG_PRECISION_TF32,
             .technique = "wgmma TF32 fed by cp.async commit/wait groups",
             .source = PG_FROM_STUDY, .min_cc = 90, .min_stages = 1, .max_stages = 6,
             .default_stages = 3, WG_TILE_INFO, .threads = WG_CPA_THREADS,
             .description = "wgmma m64n128k8 TF32 fed by cp.async commit/wait groups, STAGES "
                            "buffers (B^T into a workspace first; op(B) = T read in place, op(A) "
                            "= T through A^T in the same first kernel; a batch in one launch)",
             .layouts = PG_LAYOUT_ANY},
    .smem_bytes = smem_bytes,
    .configure = configure,
    .check = wg_check,
    .kernel = {.symbol = "pg_wgmma_cp_async_kernel", .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
