/* 22 skinny_ffma's DOT form — a short side (1 to 8) at a layout where the
 * long operand's rows run along K: op(B) = T against a short M (B stored
 * N x K: nn.Linear's x @ W.T for a few rows of x), or op(A) = N against a
 * short N (A's M x K rows), any op of the short operand, one GEMM or a
 * strided batch. Every output is then a dot product of a long row with a
 * short one, both along K:
 *   C(s, r) = sum_k S(s, k) L(r, k)   (short M: s a row of A, r a column of C)
 *   C(r, s) = sum_k L(r, k) S(s, k)   (short N)
 * A block's 8 warps take SKD_ROWS long rows each; a K chunk of the short
 * side's rows (at most 8 x SKD_CHUNK floats) is staged in shared memory by
 * the whole block, and each lane reads its long rows' 16-byte pieces of
 * the chunk (SKD_CHUNK / 128 a row, all of a step's loads issued before
 * its first product), evict-first as the other forms read the long
 * operand once. A warp's 32 lanes then add their sums in a fixed
 * butterfly, so that a call gives the same bits on every run. K is not
 * split: each block walks all of it, and the long rows' blocks fill the
 * GPU (N or M of a few thousand). The batch is the grid's y.
 *
 * The other forms of skinny_ffma read op N, N on one GEMM; this one takes
 * the layouts where a short side meets a long operand along K, and the
 * entry refuses the rest (skinny_check, 15_skinny_ffma.cu). Its kernel
 * takes pg_layout_args, so it is an instance of its own, not of
 * pg_skinny_kernel (whose 128-byte parameter the other forms keep).
 *
 *   pipegemm bench --variant cublas,skinny_ffma,auto --op NT --m 4 --n 4096 --k 4096
 */
#include "kernels/skinny.cuh"

PG_KERNELS_BEGIN

#define SKD_ROWS 4     /* long rows a warp */
#define SKD_CHUNK 512  /* K floats of the short rows staged a step */
#define SKD_WARPS (SK_THREADS / 32)
static_assert(SKD_CHUNK % 128 == 0, "a chunk is whole 16-byte pieces of every lane");

/* The kernel: F the short side's rows staged (its size, rounded up to 1, 2,
 * 4 or 8), LONG_B the long operand (B: short M; else A: short N), VEC the
 * long rows in 16-byte loads (16-byte aligned rows, ld and batch stride
 * multiples of 4). */
template <int F, bool LONG_B, bool VEC>
__global__ void __launch_bounds__(SK_THREADS, 1) pg_skinny_dot_kernel(const pg_layout_args g) {
  __shared__ __align__(16) float staged[F][SKD_CHUNK];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long count = LONG_B ? g.n : g.m; /* long rows */
  const int shorts = LONG_B ? g.m : g.n;      /* short rows, at most F */
  const long long ld_long = LONG_B ? g.ldb : g.lda;
  /* S(s, k) at s * s_step + k * k_step of the short operand */
  const long long s_step = LONG_B ? (g.op_a ? 1 : g.lda) : (g.op_b ? g.ldb : 1);
  const long long k_step = LONG_B ? (g.op_a ? g.lda : 1) : (g.op_b ? 1 : g.ldb);
  const long long row0 = ((long long)blockIdx.x * SKD_WARPS + warp) * SKD_ROWS;
  for (long long z = blockIdx.y; z < g.batch; z += gridDim.y) {
    const float *const lng = LONG_B ? g.b + z * g.stride_b : g.a + z * g.stride_a;
    const float *const shrt = LONG_B ? g.a + z * g.stride_a : g.b + z * g.stride_b;
    float *const c = g.c + z * g.stride_c;
    float acc[SKD_ROWS][F];
#pragma unroll
    for (int r = 0; r < SKD_ROWS; ++r)
#pragma unroll
      for (int s = 0; s < F; ++s) acc[r][s] = 0.f;
    for (long long k0 = 0; k0 < g.k; k0 += SKD_CHUNK) {
      const int kc = (int)(g.k - k0 < SKD_CHUNK ? g.k - k0 : SKD_CHUNK);
      __syncthreads(); /* the chunk before is read */
      for (int e = threadIdx.x; e < F * SKD_CHUNK; e += SK_THREADS) {
        const int s = e / SKD_CHUNK, kk = e % SKD_CHUNK;
        staged[s][kk] = s < shorts && kk < kc ? __ldg(shrt + s * s_step + (k0 + kk) * k_step) : 0.f;
      }
      __syncthreads(); /* the chunk is staged */
      float4 piece[SKD_ROWS][SKD_CHUNK / 128];
#pragma unroll
      for (int r = 0; r < SKD_ROWS; ++r)
#pragma unroll
        for (int j = 0; j < SKD_CHUNK / 128; ++j) {
          const long long row = row0 + r;
          const int kk = j * 128 + lane * 4;
          const int len = kc - kk;
          piece[r][j] = make_float4(0.f, 0.f, 0.f, 0.f);
          if (row < count && len > 0) {
            const float *src = lng + row * ld_long + k0 + kk;
            piece[r][j] = len >= 4 ? sk_load4<VEC, true>(src, 4) : sk_load4<false, true>(src, len);
          }
        }
#pragma unroll
      for (int j = 0; j < SKD_CHUNK / 128; ++j) {
        const int kk = j * 128 + lane * 4;
#pragma unroll
        for (int s = 0; s < F; ++s) {
          const float4 v = *(const float4 *)&staged[s][kk];
#pragma unroll
          for (int r = 0; r < SKD_ROWS; ++r) {
            acc[r][s] = fmaf(piece[r][j].x, v.x, acc[r][s]);
            acc[r][s] = fmaf(piece[r][j].y, v.y, acc[r][s]);
            acc[r][s] = fmaf(piece[r][j].z, v.z, acc[r][s]);
            acc[r][s] = fmaf(piece[r][j].w, v.w, acc[r][s]);
          }
        }
      }
    }
    sk_warp_sums<SKD_ROWS, F>(acc);
    /* Lane r * F + s stores row r's sum s (F * SKD_ROWS <= 32). */
#pragma unroll
    for (int r = 0; r < SKD_ROWS; ++r)
#pragma unroll
      for (int s = 0; s < F; ++s) {
        const long long row = row0 + r;
        if (lane == r * F + s && row < count && s < shorts) {
          float *const out = LONG_B ? c + s * g.ldc + row : c + row * g.ldc + s;
          *out = g.beta == 0.f ? g.alpha * acc[r][s] : fmaf(g.beta, *out, g.alpha * acc[r][s]);
        }
      }
  }
}

/* The instances: short sides of 1, 2, 4 and 8, each operand long, scalar
 * and 16-byte loads of it. */
template <int F, bool LONG_B>
static const void *skd_kernel(bool vec) {
  return vec ? (const void *)pg_skinny_dot_kernel<F, LONG_B, true>
             : (const void *)pg_skinny_dot_kernel<F, LONG_B, false>;
}
template <bool LONG_B> static const void *skd_pick(int shorts, bool vec) {
  return shorts <= 1   ? skd_kernel<1, LONG_B>(vec)
         : shorts <= 2 ? skd_kernel<2, LONG_B>(vec)
         : shorts <= 4 ? skd_kernel<4, LONG_B>(vec)
                       : skd_kernel<8, LONG_B>(vec);
}

/* Which operand is long where the DOT form takes the call: 1 B (a short M,
 * op(B) = T), 2 A (a short N, op(A) = N), 0 where it does not. */
int sk_dot_side(const pg_layout_args *args) {
  const bool short_m = args->m <= SKD_MAX_SHORT && args->op_b;
  const bool short_n = args->n <= SKD_MAX_SHORT && !args->op_a;
  if (short_m && short_n) return args->m <= args->n ? 1 : 2; /* the longer side is read once */
  return short_m ? 1 : short_n ? 2 : 0;
}

bool sk_dot_launch(pg_layout_args *args, pg_kernel_launch *launch) {
  const int side = sk_dot_side(args);
  if (side == 0) return false;
  const bool long_b = side == 1;
  /* 16-byte loads of the long rows: their base, ld and batch stride allow
   * them (vec_a and vec_b speak of the rows as stored). */
  const long long stride = long_b ? args->stride_b : args->stride_a;
  const bool vec = (long_b ? args->vec_b : args->vec_a) && (args->batch <= 1 || stride % 4 == 0);
  const int shorts = long_b ? args->m : args->n;
  launch->kernel = long_b ? skd_pick<true>(shorts, vec) : skd_pick<false>(shorts, vec);
  const long long count = long_b ? args->n : args->m;
  launch->grid_x = (count + SKD_WARPS * SKD_ROWS - 1) / (SKD_WARPS * SKD_ROWS);
  launch->grid_y = args->batch < 65535 ? args->batch : 65535; /* CUDA's most; the kernel walks on */
  args->splits = 1;
  return true;
}

PG_KERNELS_END
