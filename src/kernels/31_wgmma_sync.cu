/* 31 wgmma_sync — the wgmma family's member without a pipeline: the whole
 * block loads a stage (LDG, then STS into the swizzled layout), waits for
 * it, multiplies it on the tensor cores with wgmma, waits for the products,
 * and only then loads the next. Nothing overlaps: the tile's load latency,
 * the wgmma's and the barriers' add up at every K step. The member every
 * pipelined one is measured against (× member 1).
 *
 * Tile (wgmma_tile.h): 128x128 of C, 32 along K per stage; 256 threads as
 * 2 warpgroups, warpgroup w computing rows 64w..64w+63 with m64n128k8
 * (64 accumulators a thread). A stage is A [128][32] and B^T [128][32],
 * 16-byte piece p of a row at piece p ^ (row % 8); thread t moves pieces
 * t, t+256, t+512, t+768 of each (row p / 8, piece p % 8): a warp's loads
 * are 4 rows of 128 contiguous bytes, and each quarter-warp stores one row's
 * 8 pieces (Nsight Compute still counts 1.5 bank conflicts per STS.128 at
 * 4096^3, bench/results/tensor-cores/h200-tensorcore-profile.csv; not looked into: this
 * member is the slow reference).
 * B^T comes from the call's workspace (src/kernels/transpose_b.cu).
 *
 *   pipegemm bench --variant cublas_tf32,wgmma_sync --size 4096
 */
#include "kernels/wgmma.cuh"

PG_KERNELS_BEGIN

#define WG_SYNC_THREADS 256
#define WG_PIECES_PER_THREAD (WG_TILE_M * WG_TILE_K / 4 / WG_SYNC_THREADS) /* 4 */

static_assert(WG_TILE_M == WG_TILE_N, "one piece loop serves A and B^T");

#ifdef PG_HAVE_WGMMA /* the helpers exist where the kernel does */
/* This thread's pieces of one operand's tile: rows row0.. of a row-major
 * matrix (`rows` x `cols`, leading dimension ld), K columns k0.., into the
 * swizzled tile at `dst`; zeros outside the matrix. */
static __device__ __forceinline__ void wg_sync_load(float *dst, const float *src, int ld,
                                                    int row0, int k0, int rows, int cols,
                                                    int vec) {
  float4 v[WG_PIECES_PER_THREAD];
#pragma unroll
  for (int i = 0; i < WG_PIECES_PER_THREAD; ++i) {
    const int p = threadIdx.x + i * WG_SYNC_THREADS, r = p / 8;
    v[i] = t128_load_row4(src + (size_t)(row0 + r) * ld, k0 + (p % 8) * 4, cols,
                          row0 + r < rows, vec);
  }
#pragma unroll
  for (int i = 0; i < WG_PIECES_PER_THREAD; ++i) {
    const int p = threadIdx.x + i * WG_SYNC_THREADS;
    *(float4 *)(dst + wg_swizzled(p / 8, p % 8)) = v[i];
  }
}
#endif

__global__ void __launch_bounds__(WG_SYNC_THREADS, 2) pg_wgmma_sync_kernel(const pg_gemm_args g) {
#ifdef PG_HAVE_WGMMA
  extern __shared__ float4 smem_raw[];
  float *const stage = (float *)pg_tma_smem_base(smem_raw); /* 1024-byte aligned */
  const int m0 = blockIdx.y * WG_TILE_M, n0 = blockIdx.x * WG_TILE_N;
  const int wg = threadIdx.x / WG_WARPGROUP;
  float acc[WG_ACC];
#pragma unroll
  for (int i = 0; i < WG_ACC; ++i) acc[i] = 0.f;

  const int k_tiles = wg_k_tiles(g);
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int k0 = kt * WG_TILE_K;
    wg_sync_load(wg_stage_a(stage), g.a, g.lda, m0, k0, g.m, g.k, g.vec_a);
    wg_sync_load(wg_stage_bt(stage), g.b, g.ldb, n0, k0, g.n, g.k, g.vec_b);
    wg_fence_proxy_async(); /* the stores are visible to wgmma (the async proxy)... */
    __syncthreads();        /* ...once every thread's are in */
    wg_fence();
    wg_stage_mma(wg_stage_a(stage) + wg * 64 * WG_TILE_K, wg_stage_bt(stage), acc);
    wg_commit();
    wg_wait<0>();    /* the products are done: the stage may be overwritten... */
    __syncthreads(); /* ...once both warpgroups' are */
  }
  wg_fence_acc(acc);
  wg_epilogue(g, m0 + 64 * wg, n0, acc);
#else
  pg_tma_unavailable();
#endif
}

static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  wg_configure(launch, (const void *)pg_wgmma_sync_kernel, args);
}

static size_t smem_bytes(int stages) {
  (void)stages;
  return WG_STAGE_BYTES + WG_SMEM_ALIGN;
}

static const pg_sass_rule rules[] = {
    PG_RULES_WGMMA_COMMON,
    {PG_SM90_UP, PG_MUST, "STS.128", "the stage no longer goes through registers (LDG + STS)"},
    {PG_ANY_SM, PG_NEVER, "LDGSTS", "cp.async appeared: this member has no pipeline"},
    {PG_ANY_SM, PG_NEVER, "UTMALDG", "TMA appeared: this member has no pipeline"},
};

PG_ENTRY(wgmma_sync) = {
    .info = {.name = "wgmma_sync", .kind = PG_KIND_KERNEL, .precision = PG_PRECISION_TF32,
             .technique = "wgmma TF32, no pipeline: load, sync, multiply, wait",
             .source = PG_FROM_STUDY, .min_cc = 90, .min_stages = 1, .max_stages = 1,
             .default_stages = 1, WG_TILE_INFO, .threads = WG_SYNC_THREADS,
             .description = "wgmma m64n128k8 TF32, no pipeline: load, sync, multiply, wait (B^T "
                            "into a workspace first)"},
    .smem_bytes = smem_bytes,
    .configure = configure,
    .check = wg_check,
    .kernel = {.symbol = "pg_wgmma_sync_kernel", .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
