/* 21 cp_async_any — 05 cp_async's tile and pipeline (the "CUDA Kernel
 * Study: Pipelining" write-up's 128x128x8 tile, cp.async commit and wait
 * groups) over every layout a caller has: op(A) and op(B) of row-major
 * storage read where they are, and a strided batch in one launch. The
 * selectors' way for any layout and batch on every GPU from sm_80, beside
 * the faster entries that take fewer.
 *
 * Each operand lands in shared memory the way its storage lets a 16-byte
 * copy move 4 floats at once, and the inner product reads each layout as it
 * landed:
 *   A, op N (stored M x K): [m][k], 4 consecutive k of a row a copy; a
 *     thread reads its 8 rows as a float4 of k each (as 05 does);
 *   A, op T (stored K x M): [k][m], 4 consecutive m a copy; a thread reads
 *     its 8 rows at one k as two float4;
 *   B, op N (stored K x N): [k][n], as 05: a thread's columns tx*4..+3 and
 *     64+tx*4..+3, two float4 at one k;
 *   B, op T (stored N x K): [n][k] with rows of 12 floats (8 k and 4 of
 *     padding), a thread's columns tx, tx+16, ..., tx+112, one float4 of k
 *     each: a quarter-warp's 8 reads then start 12 words apart, every one
 *     in its own 4 banks.
 * Every product is summed in K order, one FMA at a time, as 05 sums it.
 * The batch is the grid's z (GEMMs past 65535 walked by each block), each
 * GEMM its own pipeline: its operands at a + z * stride_a, b + z *
 * stride_b, its C at c + z * stride_c.
 *
 *   pipegemm bench --variant cublas,cp_async_any --op TN --batch 8 --size 1024
 */
#include "kernels/tile128.cuh"

PG_KERNELS_BEGIN

#define ANY_BT_LD 12 /* floats a row of B^T in shared memory: 8 k, 4 of padding */
#define ANY_SMEM_A_FLOATS (T128_TILE_M * T128_TILE_K) /* [m][k] or [k][m] */
#define ANY_SMEM_B_FLOATS (T128_TILE_N * ANY_BT_LD)   /* [n][k] padded; [k][n] uses 1024 */
#define ANY_STAGE_FLOATS (ANY_SMEM_A_FLOATS + ANY_SMEM_B_FLOATS)
#define ANY_MAX_GRID_Z 65535

static_assert((ANY_BT_LD * 4) % 16 == 0, "B^T's rows start 16-byte aligned (16-byte cp.async)");
static_assert(ANY_SMEM_B_FLOATS >= T128_TILE_K * T128_TILE_N, "B [k][n] fits B^T's room");

/* One GEMM of the batch: its operands and C. */
typedef struct {
  const float *a, *b;
  float *c;
} any_member;

/* Thread t's 16-byte piece of A (piece t of 256) into the stage. op N: row
 * t/2, k (t%2)*4..+3 to [m][k]; op T: k t/32, m (t%32)*4..+3 to [k][m]. */
template <int OP_A>
static __device__ __forceinline__ void any_copy_a(const pg_gemm_args &g, const float *a,
                                                  float *stage, int m0, int k0) {
  const int t = threadIdx.x;
  if (OP_A == 0) {
    const int row = m0 + t / 2, col = k0 + (t % 2) * 4;
    t128_cp_async_piece(stage + t * 4, a, a + (size_t)row * g.lda, col, g.k, row < g.m, g.vec_a);
  } else {
    const int row = k0 + t / 32, col = m0 + (t % 32) * 4;
    t128_cp_async_piece(stage + (t / 32) * T128_TILE_M + (t % 32) * 4, a,
                        a + (size_t)row * g.lda, col, g.m, row < g.k, g.vec_a);
  }
}

/* Thread t's piece of B. op N: row t/32, columns (t%32)*4..+3 to [k][n];
 * op T: row (of B as stored) t/2, k (t%2)*4..+3 to [n][k]. */
template <int OP_B>
static __device__ __forceinline__ void any_copy_b(const pg_gemm_args &g, const float *b,
                                                  float *stage, int n0, int k0) {
  const int t = threadIdx.x;
  float *bs = stage + ANY_SMEM_A_FLOATS;
  if (OP_B == 0) {
    const int row = k0 + t / 32, col = n0 + (t % 32) * 4;
    t128_cp_async_piece(bs + t * 4, b, b + (size_t)row * g.ldb, col, g.n, row < g.k, g.vec_b);
  } else {
    const int row = n0 + t / 2, col = k0 + (t % 2) * 4;
    t128_cp_async_piece(bs + (t / 2) * ANY_BT_LD + (t % 2) * 4, b, b + (size_t)row * g.ldb, col,
                        g.k, row < g.n, g.vec_b);
  }
}

template <int OP_A, int OP_B>
static __device__ __forceinline__ void any_copy_stage(const pg_gemm_args &g,
                                                      const any_member &z, float *stage, int m0,
                                                      int n0, int k0) {
  any_copy_a<OP_A>(g, z.a, stage, m0, k0);
  any_copy_b<OP_B>(g, z.b, stage, n0, k0);
}

/* A thread's column j (of its 8) within the tile. */
template <int OP_B>
static __device__ __forceinline__ int any_column(int tx, int j) {
  return OP_B == 0 ? tx * 4 + (j < 4 ? j : T128_HALF_N + j - 4) : tx + 16 * j;
}

/* acc += A_stage * B_stage: per half of the stage's 8 k, the thread's 8
 * values of A and of B at each of 4 k, then 4 rank-1 updates in K order. */
template <int OP_A, int OP_B>
static __device__ __forceinline__ void any_compute(const float *stage,
                                                   float acc[T128_THREAD_M][T128_THREAD_N]) {
  const int tx = threadIdx.x % T128_THREADS_X, ty = threadIdx.x / T128_THREADS_X;
  const float *as = stage, *bs = stage + ANY_SMEM_A_FLOATS;
#pragma unroll
  for (int half = 0; half < T128_TILE_K / 4; ++half) {
    float a[T128_THREAD_M][4], b[T128_THREAD_N][4];
    if (OP_A == 0) {
#pragma unroll
      for (int i = 0; i < T128_THREAD_M; ++i) {
        const float4 v =
            *(const float4 *)(as + (ty * T128_THREAD_M + i) * T128_TILE_K + half * 4);
        a[i][0] = v.x, a[i][1] = v.y, a[i][2] = v.z, a[i][3] = v.w;
      }
    } else {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const float *row = as + (half * 4 + q) * T128_TILE_M + ty * T128_THREAD_M;
        const float4 lo = *(const float4 *)row, hi = *(const float4 *)(row + 4);
        a[0][q] = lo.x, a[1][q] = lo.y, a[2][q] = lo.z, a[3][q] = lo.w;
        a[4][q] = hi.x, a[5][q] = hi.y, a[6][q] = hi.z, a[7][q] = hi.w;
      }
    }
    if (OP_B == 0) {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const float *row = bs + (half * 4 + q) * T128_TILE_N + tx * 4;
        const float4 lo = *(const float4 *)row, hi = *(const float4 *)(row + T128_HALF_N);
        b[0][q] = lo.x, b[1][q] = lo.y, b[2][q] = lo.z, b[3][q] = lo.w;
        b[4][q] = hi.x, b[5][q] = hi.y, b[6][q] = hi.z, b[7][q] = hi.w;
      }
    } else {
#pragma unroll
      for (int j = 0; j < T128_THREAD_N; ++j) {
        const float4 v = *(const float4 *)(bs + (tx + 16 * j) * ANY_BT_LD + half * 4);
        b[j][0] = v.x, b[j][1] = v.y, b[j][2] = v.z, b[j][3] = v.w;
      }
    }
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
      for (int i = 0; i < T128_THREAD_M; ++i)
#pragma unroll
        for (int j = 0; j < T128_THREAD_N; ++j) acc[i][j] = fmaf(a[i][q], b[j][q], acc[i][j]);
  }
}

/* C = alpha*acc + beta*C for the thread's 8x8, guarded; C is not read where
 * beta == 0. */
template <int OP_B>
static __device__ __forceinline__ void any_epilogue(const pg_gemm_args &g, float *c, int m0,
                                                    int n0,
                                                    float acc[T128_THREAD_M][T128_THREAD_N]) {
  const int tx = threadIdx.x % T128_THREADS_X, ty = threadIdx.x / T128_THREADS_X;
#pragma unroll
  for (int i = 0; i < T128_THREAD_M; ++i) {
    const int row = m0 + ty * T128_THREAD_M + i;
    if (row >= g.m) break;
    float *c_row = c + (size_t)row * g.ldc;
#pragma unroll
    for (int j = 0; j < T128_THREAD_N; ++j) {
      const int col = n0 + any_column<OP_B>(tx, j);
      if (col < g.n) {
        const float v = g.alpha * acc[i][j];
        c_row[col] = g.beta == 0.f ? v : fmaf(g.beta, c_row[col], v);
      }
    }
  }
}

/* Two blocks an SM (128 registers a thread) where B is read as 05 reads
 * it; B^T's 8 float4 of k a half step need more, so one block there. */
template <int OP_A, int OP_B>
__global__ void __launch_bounds__(T128_THREADS, OP_B == 0 ? 2 : 1)
    pg_cp_async_any_kernel(const pg_layout_args g) {
  extern __shared__ float4 smem_raw[]; /* float4: 16-byte aligned for cp.async */
  float *const smem = (float *)smem_raw;
  const int stages = g.stages;
  const int m0 = blockIdx.y * T128_TILE_M, n0 = blockIdx.x * T128_TILE_N;
  const int k_tiles = t128_k_tiles(g);
  for (long long member = blockIdx.z; member < pg_batch(g); member += gridDim.z) {
    const any_member z = {g.a + member * pg_stride_a(g), g.b + member * pg_stride_b(g),
                          g.c + member * pg_stride_c(g)};
    float acc[T128_THREAD_M][T128_THREAD_N];
    t128_zero(acc);
    /* 05's pipeline: STAGES-1 tiles in flight, one commit group a tile
     * (empty ones too, so that group i is tile i), wait_group(STAGES-2) and
     * a block barrier before a tile is read; one stage waits at once. */
    for (int s = 0; s < stages - 1; ++s) {
      if (s < k_tiles)
        any_copy_stage<OP_A, OP_B>(g, z, smem + s * ANY_STAGE_FLOATS, m0, n0, s * T128_TILE_K);
      pg_cp_async_commit();
    }
    int read_slot = 0, write_slot = stages - 1;
    for (int kt = 0; kt < k_tiles; ++kt) {
      if (stages == 1) {
        any_copy_stage<OP_A, OP_B>(g, z, smem, m0, n0, kt * T128_TILE_K);
        pg_cp_async_commit();
        pg_cp_async_wait(0);
        __syncthreads();
      } else {
        pg_cp_async_wait(stages - 2); /* tile kt has landed (this thread's part) */
        /* Publishes tile kt to the block and retires step kt-1's reads of
         * the slot the next copy overwrites. */
        __syncthreads();
        const int next = kt + stages - 1;
        if (next < k_tiles)
          any_copy_stage<OP_A, OP_B>(g, z, smem + write_slot * ANY_STAGE_FLOATS, m0, n0,
                                     next * T128_TILE_K);
        pg_cp_async_commit();
      }
      any_compute<OP_A, OP_B>(smem + read_slot * ANY_STAGE_FLOATS, acc);
      if (stages == 1) __syncthreads(); /* the single buffer is free again */
      t128_ring_next(&read_slot, stages);
      t128_ring_next(&write_slot, stages);
    }
    any_epilogue<OP_B>(g, z.c, m0, n0, acc);
    /* The next GEMM's prologue overwrites every slot: no copy of this one's
     * may still be landing, no thread still reading. */
    pg_cp_async_wait(0);
    __syncthreads();
  }
}

static const void *const kernels[2][2] = {
    {(const void *)pg_cp_async_any_kernel<0, 0>, (const void *)pg_cp_async_any_kernel<0, 1>},
    {(const void *)pg_cp_async_any_kernel<1, 0>, (const void *)pg_cp_async_any_kernel<1, 1>},
};

/* One block per 128x128 tile of C: N's tiles on x, M's on y, the batch on z. */
static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  t128_configure(launch, kernels[args->op_a != 0][args->op_b != 0], args);
  const long long batch = args->batch > 0 ? args->batch : 1;
  launch->grid_z = batch < ANY_MAX_GRID_Z ? batch : ANY_MAX_GRID_Z;
}

static size_t smem_bytes(int stages) { return (size_t)stages * ANY_STAGE_FLOATS * sizeof(float); }

static const pg_sass_rule rules[] = {T128_RULES_CP_ASYNC};

PG_ENTRY(cp_async_any) = {
    .info = {.name = "cp_async_any", .kind = PG_KIND_KERNEL,
             .technique = "cp_async's tile over any op(A), op(B) and batch",
             .source = PG_FROM_STUDY, .min_cc = 80, .min_stages = 1, .max_stages = 6,
             .default_stages = 3, T128_TILE_INFO,
             .description = "05 cp_async's 128x128x8 tile and cp.async pipeline with each "
                            "operand read as it is stored: A [m][k] or, transposed, [k][m] in "
                            "shared memory, B [k][n] or [n][k] (rows padded to 12 floats), 16 "
                            "bytes a copy where the rows allow; a strided batch on the grid's "
                            "z, one launch. The selectors' way for any layout and batch",
             .layouts = PG_LAYOUT_ANY},
    .smem_bytes = smem_bytes,
    .configure = configure,
    .kernel = {.symbol = "pg_cp_async_any_kernel",
               .launched = "pg_cp_async_any_kernel<0, 0>",
               .dynamic_smem = 1,
               PG_RULES(rules)},
};

PG_KERNELS_END
