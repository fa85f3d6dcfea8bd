/* 41 mma_cp_async_any — 30 mma_cp_async's tile, pipeline and mma.sync
 * (m16n8k8, TF32 products, FP32 sums) over every layout a caller has:
 * op(A) and op(B) of row-major storage read where they are, and a strided
 * batch in one launch. auto_tf32's way for any layout and batch, on every
 * GPU from sm_80.
 *
 * mma.sync takes its fragments from registers, so an operand may land in
 * shared memory as it is stored, and each layout's fragment reads still hit
 * 32 distinct banks (g = lane / 4 and t = lane % 4 of the fragment):
 *   A, op N: [m][k], 32 + 4 floats a row (30's): A(m, k) at m * 36 + k, a
 *     fragment's (g, t) at bank 4g + t;
 *   A, op T (stored K x M): [k][m], 128 + 8 floats a row: A(m, k) at
 *     k * 136 + m, bank 8t + g;
 *   B, op N: [k][n], 128 + 8 (30's): B(k, n) at k * 136 + n, bank 8t + g;
 *   B, op T (stored N x K): [n][k], 32 + 4: B(k, n) at n * 36 + k, bank
 *     4g + t.
 * Rows stay 16-byte multiples, so a thread's 4 + 4 pieces a stage are
 * single 16-byte cp.async where the rows allow. The batch is the grid's z
 * (GEMMs past 65535 walked by each block), each GEMM its own pipeline.
 *
 *   pipegemm bench --variant cublas_tf32,mma_cp_async_any --op NT --batch 32 --size 1024
 */
#include "kernels/mma_cp_async.cuh"

PG_KERNELS_BEGIN

#define MMA_ANY_SHORT (MMA_TILE_K + 4) /* floats a row of K: [m][k] or [n][k] */
#define MMA_ANY_LONG (MMA_TILE_N + 8)  /* floats a row of M or N: [k][m] or [k][n] */
#define MMA_ANY_OPERAND_FLOATS (MMA_TILE_M * MMA_ANY_SHORT) /* the larger of the two */
#define MMA_ANY_STAGE_FLOATS (2 * MMA_ANY_OPERAND_FLOATS)
#define MMA_ANY_MAX_GRID_Z 65535

static_assert(MMA_TILE_M == MMA_TILE_N, "one pitch serves [k][m] and [k][n]");
static_assert(MMA_TILE_K * MMA_ANY_LONG <= MMA_ANY_OPERAND_FLOATS, "[k][m] fits the room");
static_assert((MMA_ANY_SHORT * 4) % 16 == 0 && (MMA_ANY_LONG * 4) % 16 == 0,
              "rows of a stage start 16-byte aligned (cp.async of 16 bytes)");
static_assert(MMA_TILE_M * MMA_TILE_K == 4 * MMA_PIECES_PER_THREAD * MMA_THREADS,
              "4 pieces of each operand a thread");

/* The stage's A and B as each is stored. A: op N rows m (32 k each), op T
 * rows k (128 m each); B: op N rows k (128 n each), op T rows n (32 k). */
template <int OP_A, int OP_B>
static __device__ __forceinline__ void mma_any_stage(const pg_gemm_args &g, const float *a,
                                                     const float *b, float *stage, int m0,
                                                     int n0, int k0) {
  float *as = stage, *bs = stage + MMA_ANY_OPERAND_FLOATS;
  if (OP_A == 0)
    mma_cp_async_operand(as, MMA_ANY_SHORT, MMA_TILE_K / 4, a, g.lda, m0, k0, g.m, g.k, g.vec_a);
  else
    mma_cp_async_operand(as, MMA_ANY_LONG, MMA_TILE_M / 4, a, g.lda, k0, m0, g.k, g.m, g.vec_a);
  if (OP_B == 0)
    mma_cp_async_operand(bs, MMA_ANY_LONG, MMA_TILE_N / 4, b, g.ldb, k0, n0, g.k, g.n, g.vec_b);
  else
    mma_cp_async_operand(bs, MMA_ANY_SHORT, MMA_TILE_K / 4, b, g.ldb, n0, k0, g.n, g.k, g.vec_b);
}

template <int OP_A>
static __device__ __forceinline__ float mma_any_a(const float *as, int m, int k) {
  return OP_A == 0 ? as[m * MMA_ANY_SHORT + k] : as[k * MMA_ANY_LONG + m];
}

template <int OP_B>
static __device__ __forceinline__ float mma_any_b(const float *bs, int k, int n) {
  return OP_B == 0 ? bs[k * MMA_ANY_LONG + n] : bs[n * MMA_ANY_SHORT + k];
}

/* acc += this warp's 64x32 of A_stage * B_stage: 4 K steps of 8, each 16
 * mma.sync, the fragments read as 30 reads them, wherever the layout put
 * their elements. */
template <int OP_A, int OP_B>
static __device__ __forceinline__ void mma_any_compute(const float *stage, mma_acc acc) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4;
  const float *as = stage, *bs = stage + MMA_ANY_OPERAND_FLOATS;
  const int wm = (warp / MMA_WARPS_N) * MMA_WARP_M + g;
  const int wn = (warp % MMA_WARPS_N) * MMA_WARP_N + g;
#pragma unroll
  for (int kk = 0; kk < MMA_TILE_K; kk += 8) {
    float a[MMA_M_FRAGS][4], b[MMA_N_FRAGS][2];
#pragma unroll
    for (int mi = 0; mi < MMA_M_FRAGS; ++mi) {
      const int m = wm + mi * 16, k = kk + t;
      a[mi][0] = mma_any_a<OP_A>(as, m, k);
      a[mi][1] = mma_any_a<OP_A>(as, m + 8, k);
      a[mi][2] = mma_any_a<OP_A>(as, m, k + 4);
      a[mi][3] = mma_any_a<OP_A>(as, m + 8, k + 4);
    }
#pragma unroll
    for (int ni = 0; ni < MMA_N_FRAGS; ++ni) {
      const int n = wn + ni * 8, k = kk + t;
      b[ni][0] = mma_any_b<OP_B>(bs, k, n);
      b[ni][1] = mma_any_b<OP_B>(bs, k + 4, n);
    }
#pragma unroll
    for (int mi = 0; mi < MMA_M_FRAGS; ++mi)
#pragma unroll
      for (int ni = 0; ni < MMA_N_FRAGS; ++ni) pg_mma_tf32_m16n8k8(acc[mi][ni], a[mi], b[ni]);
  }
}

template <int OP_A, int OP_B>
__global__ void __launch_bounds__(MMA_THREADS, 2) pg_mma_cp_async_any_kernel(const pg_layout_args g) {
  extern __shared__ float4 smem_raw[]; /* float4: 16-byte aligned for cp.async */
  float *const smem = (float *)smem_raw;
  const int stages = g.stages;
  const int m0 = blockIdx.y * MMA_TILE_M, n0 = blockIdx.x * MMA_TILE_N;
  const int k_tiles = (int)(((long long)g.k + MMA_TILE_K - 1) / MMA_TILE_K);
  for (long long member = blockIdx.z; member < pg_batch(g); member += gridDim.z) {
    const float *a = g.a + member * pg_stride_a(g), *b = g.b + member * pg_stride_b(g);
    float *c = g.c + member * pg_stride_c(g);
    mma_acc acc;
    mma_zero(acc);
    /* 30's pipeline: STAGES-1 tiles in flight, a commit group a tile (empty
     * ones too, so that group i is tile i), wait_group(STAGES-2) then one
     * block barrier before a tile is read; one stage waits at once. */
    for (int s = 0; s < stages - 1; ++s) {
      if (s < k_tiles)
        mma_any_stage<OP_A, OP_B>(g, a, b, smem + s * MMA_ANY_STAGE_FLOATS, m0, n0,
                                  s * MMA_TILE_K);
      pg_cp_async_commit();
    }
    int read_slot = 0, write_slot = stages - 1;
    for (int kt = 0; kt < k_tiles; ++kt) {
      if (stages == 1) {
        mma_any_stage<OP_A, OP_B>(g, a, b, smem, m0, n0, kt * MMA_TILE_K);
        pg_cp_async_commit();
        pg_cp_async_wait(0);
        __syncthreads();
      } else {
        pg_cp_async_wait(stages - 2); /* tile kt has landed (this thread's part) */
        __syncthreads(); /* publishes it, and retires step kt-1's reads of the slot below */
        const int next = kt + stages - 1;
        if (next < k_tiles)
          mma_any_stage<OP_A, OP_B>(g, a, b, smem + write_slot * MMA_ANY_STAGE_FLOATS, m0, n0,
                                    next * MMA_TILE_K);
        pg_cp_async_commit();
      }
      mma_any_compute<OP_A, OP_B>(smem + read_slot * MMA_ANY_STAGE_FLOATS, acc);
      if (stages == 1) __syncthreads(); /* the single buffer is free again */
      t128_ring_next(&read_slot, stages);
      t128_ring_next(&write_slot, stages);
    }
    mma_epilogue(g, c, m0, n0, acc);
    /* The next GEMM's prologue overwrites every slot: no copy of this one's
     * may still be landing, no thread still reading. */
    pg_cp_async_wait(0);
    __syncthreads();
  }
}

static const void *const kernels[2][2] = {
    {(const void *)pg_mma_cp_async_any_kernel<0, 0>,
     (const void *)pg_mma_cp_async_any_kernel<0, 1>},
    {(const void *)pg_mma_cp_async_any_kernel<1, 0>,
     (const void *)pg_mma_cp_async_any_kernel<1, 1>},
};

static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  launch->kernel = kernels[args->op_a != 0][args->op_b != 0];
  launch->grid_x = ((long long)args->n + MMA_TILE_N - 1) / MMA_TILE_N;
  launch->grid_y = ((long long)args->m + MMA_TILE_M - 1) / MMA_TILE_M;
  const long long batch = args->batch > 0 ? args->batch : 1;
  launch->grid_z = batch < MMA_ANY_MAX_GRID_Z ? batch : MMA_ANY_MAX_GRID_Z;
}

static size_t smem_bytes(int stages) {
  return (size_t)stages * MMA_ANY_STAGE_FLOATS * sizeof(float);
}

static const pg_sass_rule rules[] = {MMA_CP_ASYNC_RULES};

PG_ENTRY(mma_cp_async_any) = {
    .info = {.name = "mma_cp_async_any", .kind = PG_KIND_KERNEL,
             .precision = PG_PRECISION_TF32,
             .technique = "mma_cp_async over any op(A), op(B) and batch",
             .source = PG_FROM_STUDY, .min_cc = 80, .min_stages = 1, .max_stages = 5,
             .default_stages = 3, .tile_m = MMA_TILE_M, .tile_n = MMA_TILE_N,
             .tile_k = MMA_TILE_K, .threads = MMA_THREADS,
             .description = "30 mma_cp_async's tile, cp.async pipeline and mma.sync m16n8k8 "
                            "TF32 products with each operand landing as it is stored ([m][k] "
                            "or [k][m], [k][n] or [n][k], rows padded so that every layout's "
                            "fragment reads hit 32 banks); a strided batch on the grid's z, "
                            "one launch. auto_tf32's way for any layout and batch",
             .layouts = PG_LAYOUT_ANY},
    .smem_bytes = smem_bytes,
    .configure = configure,
    .kernel = {.symbol = "pg_mma_cp_async_any_kernel",
               .launched = "pg_mma_cp_async_any_kernel<0, 0>",
               .dynamic_smem = 1,
               PG_RULES(rules)},
};

PG_KERNELS_END
