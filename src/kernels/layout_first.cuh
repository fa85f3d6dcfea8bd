/* First kernels that put the tensor-core entries' operands into the call's
 * workspace K-major, over a batch, for the layouts those entries cannot read
 * where they are (TF32 wgmma reads its shared-memory operands K-major only):
 *
 *   LF_SPLIT_3X      wgmma_3xtf32's split of A into its two TF32 parts
 *                    (40_wgmma_3xtf32.cu gives the split; M rows each, the
 *                    small parts after the big), read as stored:
 *                    M x K, or K x M where op(A) = T (transposed on the
 *                    way, at no extra pass); and where TMA cannot read B
 *                    (vec_b 0), B copied as stored (K x N, or N x K where
 *                    op(B) = T) with rows of a multiple of 4 floats;
 *   LF_TRANSPOSE_A   A^T where op(A) = T (A stored K x M -> M rows of K);
 *   LF_TRANSPOSE_AB  that, and B^T where op(B) = N (B stored K x N -> N
 *                    rows of K), for the entries that read B K-major from
 *                    shared memory (B stored N x K, op(B) = T, they read
 *                    where it is).
 *
 * A job is one operand: `matrices` matrices (the batch's, or one where its
 * stride is 0), each out_rows rows of out_ld floats in the workspace (K
 * rounded up to 4, zeros in the padding and in rows past the operand's),
 * one after the other (LF_SPLIT_3X: a matrix's big parts, then its small
 * parts); A's job first, B's after it. The workspace's regions and the
 * kernels' views of them (src/launch.c: a view's batch stride is a
 * matrix's floats) are the host's half of the same jobs (lf_jobs).
 *
 * Memory-bound: tiles of 32 x 32 of the output, 256 threads as 32 x 8, a
 * transposed tile through shared memory (one padding column: the column
 * reads hit 32 banks), every load and store of a warp along a row (128
 * contiguous bytes); the tiles of both jobs as one list, strided over a
 * grid of at most LF_MAX_GRID blocks. */
#ifndef PG_LAYOUT_FIRST_CUH
#define PG_LAYOUT_FIRST_CUH

#include "internal.h"
#include "kernels/wgmma_tile.h"

#define LF_TILE 32
#define LF_ROWS 8 /* threads along a tile's rows */
#define LF_THREADS (LF_TILE * LF_ROWS)
#define LF_MAX_GRID (1ll << 20)

static_assert(LF_THREADS == PG_FIRST_THREADS, "the first kernels' block (pg_configure_first_kernel)");

enum { LF_SPLIT_3X = 0, LF_TRANSPOSE_A = 1, LF_TRANSPOSE_AB = 2 };

typedef struct {
  const float *src;
  long long ld, stride;     /* the source's rows and matrices, as stored */
  int transposed;           /* output (r, c) is src[c * ld + r]; else src[r * ld + c] */
  int split;                /* two parts a matrix, the small after the big */
  long long rows, cols;     /* the output's elements that come from the source */
  long long out_rows, out_ld, out_matrix; /* a matrix's floats in the workspace: out_matrix */
  long long matrices;       /* 0: no job */
  long long tiles_r, tiles_c;
} lf_job;

static __host__ __device__ inline lf_job lf_make(const float *src, long long ld, long long stride,
                                                 int batch, int transposed, int split,
                                                 long long rows, long long cols,
                                                 long long out_rows, long long out_ld) {
  lf_job j;
  j.src = src;
  j.ld = ld;
  j.stride = stride;
  j.transposed = transposed;
  j.split = split;
  j.rows = rows;
  j.cols = cols;
  j.out_rows = out_rows;
  j.out_ld = out_ld;
  j.out_matrix = (split ? 2 : 1) * out_rows * out_ld;
  j.matrices = stride != 0 && batch > 1 ? batch : 1;
  j.tiles_r = (out_rows + LF_TILE - 1) / LF_TILE;
  j.tiles_c = (out_ld + LF_TILE - 1) / LF_TILE;
  return j;
}

static __host__ __device__ inline lf_job lf_none(void) {
  lf_job j = lf_make(0, 0, 0, 1, 0, 0, 0, 0, 0, 0);
  j.matrices = 0;
  return j;
}

static __host__ __device__ inline long long lf_tiles(const lf_job &j) {
  return j.matrices * j.tiles_r * j.tiles_c;
}
/* The job's floats in the workspace, and its rows there (a region's). */
static __host__ __device__ inline long long lf_floats(const lf_job &j) {
  return j.matrices * j.out_matrix;
}
static __host__ __device__ inline long long lf_region_rows(const lf_job &j) {
  return j.matrices * (j.split ? 2 : 1) * j.out_rows;
}

/* The bytes a job reads and writes: each element read once, written once
 * (twice where it is split), for auto's model (pg_model_hints.first_bytes). */
static __host__ __device__ inline double lf_bytes(const lf_job &j) {
  return (double)j.matrices * j.rows * j.cols * sizeof(float) * (j.split ? 3 : 2);
}

/* MODE's jobs on the caller's operands: job[0] A's, job[1] B's. */
template <int MODE>
static __host__ __device__ inline void lf_jobs(const pg_layout_args &g, lf_job job[2]) {
  const long long ldt = WG_LDT(g.k);
  if (MODE == LF_SPLIT_3X) {
    job[0] = lf_make(g.a, g.lda, g.stride_a, g.batch, g.op_a, 1, g.m, g.k, g.m, ldt);
    const long long rows = g.op_b ? g.n : g.k, cols = g.op_b ? g.k : g.n;
    job[1] = g.vec_b ? lf_none()
                     : lf_make(g.b, g.ldb, g.stride_b, g.batch, 0, 0, rows, cols, rows,
                               WG_LDT(cols));
  } else {
    job[0] = g.op_a ? lf_make(g.a, g.lda, g.stride_a, g.batch, 1, 0, g.m, g.k, g.m, ldt)
                    : lf_none();
    job[1] = MODE == LF_TRANSPOSE_AB && !g.op_b
                 ? lf_make(g.b, g.ldb, g.stride_b, g.batch, 1, 0, g.n, g.k, g.n, ldt)
                 : lf_none();
  }
}

/* Split: Split::parts(x, big, small) (LF_SPLIT_3X); else never called. */
struct lf_no_split {
  static __device__ __forceinline__ void parts(float x, float &big, float &small) {
    big = x;
    small = 0.f;
  }
};

/* Tile t of job j into `out` (the job's first float in the workspace). */
template <class Split>
static __device__ __forceinline__ void lf_tile(const lf_job &j, long long t, float *out,
                                               float (*tile)[LF_TILE + 1]) {
  const long long per = j.tiles_r * j.tiles_c, mat = t / per, rest = t - mat * per;
  const long long r0 = rest / j.tiles_c * LF_TILE, c0 = rest % j.tiles_c * LF_TILE;
  const float *const src = j.src + mat * j.stride;
  float *const dst = out + mat * j.out_matrix;
  const int tx = threadIdx.x % LF_TILE, ty = threadIdx.x / LF_TILE;
  float v[LF_TILE / LF_ROWS];
  if (j.transposed) {
    /* The source's rows are the output's columns: read along them. */
#pragma unroll
    for (int i = 0; i < LF_TILE / LF_ROWS; ++i) {
      const long long c = c0 + ty + i * LF_ROWS, r = r0 + tx;
      tile[ty + i * LF_ROWS][tx] = r < j.rows && c < j.cols ? __ldg(src + c * j.ld + r) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < LF_TILE / LF_ROWS; ++i) v[i] = tile[tx][ty + i * LF_ROWS];
    __syncthreads(); /* read before the next tile lands */
  } else {
#pragma unroll
    for (int i = 0; i < LF_TILE / LF_ROWS; ++i) {
      const long long r = r0 + ty + i * LF_ROWS, c = c0 + tx;
      v[i] = r < j.rows && c < j.cols ? __ldg(src + r * j.ld + c) : 0.f;
    }
  }
#pragma unroll
  for (int i = 0; i < LF_TILE / LF_ROWS; ++i) {
    const long long r = r0 + ty + i * LF_ROWS, c = c0 + tx;
    if (r >= j.out_rows || c >= j.out_ld) continue;
    if (j.split) {
      float big, small;
      Split::parts(v[i], big, small);
      dst[r * j.out_ld + c] = big;
      dst[(j.out_rows + r) * j.out_ld + c] = small;
    } else {
      dst[r * j.out_ld + c] = v[i];
    }
  }
}

/* The first kernel of MODE: the caller's operands (g.a, g.b as the call
 * gives them) into the workspace at g.partials. */
template <int MODE, class Split>
__global__ void __launch_bounds__(LF_THREADS) pg_layout_first_kernel(const pg_layout_args g) {
  __shared__ float tile[LF_TILE][LF_TILE + 1];
  lf_job job[2];
  lf_jobs<MODE>(g, job);
  const long long a_tiles = lf_tiles(job[0]), tiles = a_tiles + lf_tiles(job[1]);
  float *const b_out = g.partials + lf_floats(job[0]);
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    if (t < a_tiles)
      lf_tile<Split>(job[0], t, g.partials, tile);
    else
      lf_tile<Split>(job[1], t - a_tiles, b_out, tile);
  }
}

/* The host's half: MODE's jobs as the launch's first kernel, its regions
 * (A's job, then B's) and the entry's kernel's views of them, a grid over
 * their tiles; launch->transposes the operands transposed. Returns 0 (nothing
 * set) where MODE has no job on the call. */
template <int MODE>
static inline int lf_configure(pg_layout_args *args, pg_kernel_launch *launch, const void *kernel) {
  lf_job job[2];
  lf_jobs<MODE>(*args, job);
  const long long tiles = lf_tiles(job[0]) + lf_tiles(job[1]);
  if (tiles == 0) return 0;
  pg_configure_first_kernel(args, launch, kernel, 1, lf_region_rows(job[0]),
                            job[0].matrices > 0 ? job[0].out_ld : WG_LDT(args->k),
                            lf_region_rows(job[1]), job[1].matrices > 0 ? job[1].out_ld : 0);
  launch->first.grid_x = tiles < LF_MAX_GRID ? tiles : LF_MAX_GRID;
  launch->first.grid_y = 1;
  launch->transposes = (job[0].matrices > 0 && job[0].transposed) +
                       (job[1].matrices > 0 && job[1].transposed);
  return 1;
}

#endif
