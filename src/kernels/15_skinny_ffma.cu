/* 15 skinny_ffma — strict FP32 GEMM where one side of C is short (M or N
 * of a few): the problem is then a few matrix-vector products, bound by
 * reading the large operand, which tiles of 64 or 128 rows would mostly
 * spend on padding. The large operand is streamed once a chunk of the
 * short side, straight from global memory (16-byte loads where the layout
 * allows), the small one staged in shared memory, FFMA in a fixed order; K
 * is split into ranges where the blocks alone would leave the GPU's memory
 * system idle, the ranges' sums added in split order by reduce_splits.cu
 * (deterministic).
 *
 * Two forms, by which side is short (any shape runs, a long side is only
 * slow: each chunk of the short side reads the large operand again):
 *   ROWS (M <= N): a block takes a chunk of R = 8, 16 or 32 rows of A (the
 *     narrowest that holds M; in shared memory a K tile at a time, K-major)
 *     and 256 x C columns of B, each thread C (4, or 2 at R = 32) columns
 *     of B's rows, R x C sums a thread;
 *   COLS (M > N): a warp takes SK_WARP_ROWS rows of A, a block
 *     SK_BLOCK_ROWS rows and a chunk of 8 columns of B (in shared memory, a
 *     K tile at a time, column by column), each lane 4 consecutive K of its
 *     rows at a time; the lanes' sums are added in a fixed butterfly order
 *     at the end.
 * Block b of the grid: tile b % tiles (block of the long side fastest, then
 * the chunk), K range b / tiles.
 *
 * auto's model of it (the launch's speed_share): its form's rate at a full
 * chunk (the tuning's skinny_rate_percent: chunks of 8, 16, 32 rows, the
 * short-N form), times the short side over its chunks' width. The
 * registry's tile is
 * the two forms' widest chunks (32 rows, 8 columns) and K's split unit.
 * Measured on the H200: bench/results/h200-skinny.md.
 *
 *   pipegemm bench --shapes bench/shapes/skinny.txt --variant cublas,auto,skinny_ffma
 */
#include "internal.h"
#include "kernels/entry.h"

PG_KERNELS_BEGIN

#define SK_THREADS 256
#define SK_WARP_ROWS 2           /* COLS: rows of A a warp */
#define SK_BLOCK_ROWS (SK_THREADS / 32 * SK_WARP_ROWS) /* COLS: rows of A a block */
#define SK_ROWS_TILE_K 128       /* ROWS: K of A's tile in shared memory */
#define SK_ROWS_MAX_CHUNK 32     /* ROWS: the widest chunk of the short side */
#define SK_COLS_CHUNK 8          /* COLS: the chunk of B's columns */
/* K is split in units of SK_SPLIT_K (a range need not be whole tiles: a
 * narrow grid, a row of 4 blocks at N = 4096, splits finely enough to fill
 * the GPU), each range at least SK_MIN_RANGE units. */
#define SK_SPLIT_K 32
/* The K split fills this many blocks an SM: what fits with no spill
 * (128 registers a thread at most; at 3 blocks an SM, 80, COLS spills). */
#define SK_BLOCKS_PER_SM 2
#define SK_MIN_RANGE 2           /* 64 K */

/* Where block b works: its tile (block of the long side, chunk of the
 * short side) and K range. */
struct sk_work {
  long long first; /* ROWS: B's first column; COLS: A's first row */
  long long chunk; /* the short side's first index (row of A, column of B) */
  long long k0, k1;
  int split;
};

static __device__ __forceinline__ sk_work sk_where(const pg_gemm_args &g, long long blocks_x,
                                                   long long width, int chunk) {
  const long long chunks = (((g.m <= g.n) ? g.m : g.n) + chunk - 1) / chunk;
  const long long tiles = blocks_x * chunks;
  const long long b = blockIdx.x;
  sk_work w;
  w.split = (int)(b / tiles);
  const long long tile = b % tiles;
  w.first = (tile % blocks_x) * width;
  w.chunk = (tile / blocks_x) * chunk;
  const long long per = g.splits > 1 ? (long long)g.k_tiles_per_split * SK_SPLIT_K : g.k;
  w.k0 = w.split * per;
  w.k1 = w.k0 + per < g.k ? w.k0 + per : g.k;
  return w;
}

/* One sum of C[m][n] out: to the range's plane where K is split (alpha and
 * beta are the reduction's), else alpha, and beta times C where beta != 0. */
static __device__ __forceinline__ void sk_store(const pg_gemm_args &g, int split, long long m,
                                                long long n, float v) {
  if (g.splits > 1) {
    g.partials[((size_t)split * g.m + m) * g.ldp + n] = v;
    return;
  }
  float *const c = g.c + (size_t)m * g.ldc + n;
  *c = g.beta == 0.f ? g.alpha * v : fmaf(g.beta, *c, g.alpha * v);
}

/* ROWS: R rows of A (a chunk) x C columns of B a thread, SK_THREADS * C
 * columns a block. A's tile is stored K-major (a_tile[k][row], rows 4
 * floats past R apart so that the transposing stores spread over 8 banks),
 * so that a thread reads 4 rows at one K with one broadcast LDS.128: R / 4
 * reads for R x C FFMA a K. */
template <int R, int C>
static __device__ __forceinline__ void sk_rows(const pg_gemm_args g) {
  static_assert(R % 4 == 0 && (C == 2 || C == 4), "4 rows a read, 8 or 16 bytes of B a load");
  enum { PITCH = R + 4, WIDTH = SK_THREADS * C, UNROLL = R >= 32 ? 2 : 4 };
  __shared__ __align__(16) float a_tile[SK_ROWS_TILE_K][PITCH];
  const long long blocks_x = ((long long)g.n + WIDTH - 1) / WIDTH;
  const sk_work w = sk_where(g, blocks_x, WIDTH, R);
  const long long n = w.first + C * threadIdx.x, m0 = w.chunk;
  const bool vec = g.vec_b && n + C - 1 < g.n;
  float acc[R][C];
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int j = 0; j < C; ++j) acc[i][j] = 0.f;
  for (long long k = w.k0; k < w.k1; k += SK_ROWS_TILE_K) {
    const int len = (int)(w.k1 - k < SK_ROWS_TILE_K ? w.k1 - k : SK_ROWS_TILE_K);
    __syncthreads(); /* the tile before is read */
    for (int e = threadIdx.x; e < R * SK_ROWS_TILE_K; e += SK_THREADS) {
      const int i = e / SK_ROWS_TILE_K, kk = e % SK_ROWS_TILE_K;
      a_tile[kk][i] = m0 + i < g.m && kk < len ? g.a[(size_t)(m0 + i) * g.lda + k + kk] : 0.f;
    }
    __syncthreads();
#pragma unroll UNROLL
    for (int kk = 0; kk < len; ++kk) {
      const float *const row = g.b + (size_t)(k + kk) * g.ldb + n;
      float b[C];
      if (vec) {
        if constexpr (C == 4) {
          const float4 v = __ldg((const float4 *)row);
          b[0] = v.x, b[1] = v.y, b[2] = v.z, b[3] = v.w;
        } else {
          const float2 v = __ldg((const float2 *)row);
          b[0] = v.x, b[1] = v.y;
        }
      } else {
#pragma unroll
        for (int j = 0; j < C; ++j) b[j] = n + j < g.n ? __ldg(row + j) : 0.f;
      }
#pragma unroll
      for (int q = 0; q < R / 4; ++q) {
        const float4 a = *(const float4 *)&a_tile[kk][4 * q];
#pragma unroll
        for (int j = 0; j < C; ++j) {
          acc[4 * q + 0][j] = fmaf(a.x, b[j], acc[4 * q + 0][j]);
          acc[4 * q + 1][j] = fmaf(a.y, b[j], acc[4 * q + 1][j]);
          acc[4 * q + 2][j] = fmaf(a.z, b[j], acc[4 * q + 2][j]);
          acc[4 * q + 3][j] = fmaf(a.w, b[j], acc[4 * q + 3][j]);
        }
      }
    }
  }
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int j = 0; j < C; ++j)
      if (m0 + i < g.m && n + j < g.n) sk_store(g, w.split, m0 + i, n + j, acc[i][j]);
}

/* COLS: C[m][n0 + c] for c < CN (a chunk of B's columns), m this warp's
 * SK_WARP_ROWS rows. B's tile is stored column by column (b_tile[c][k]),
 * so that a warp's float4 reads of one column, 4 consecutive K a lane, are
 * 512 contiguous bytes (no bank conflict); a warp's rows share each read.
 * The columns are 4 floats more than the tile apart, so that the
 * transposing stores spread over 8 banks. A tile's steps (128 K a warp) are
 * unrolled, so that a lane's loads of all of them are in flight together. */
template <int CN>
static __device__ __forceinline__ void sk_cols(const pg_gemm_args g) {
  enum { TILE_K = 512, PITCH = TILE_K + 4, STEPS = TILE_K / 128 };
  static_assert(CN <= 32, "a lane writes one column out");
  __shared__ __align__(16) float b_tile[CN][PITCH];
  const long long blocks_x = ((long long)g.m + SK_BLOCK_ROWS - 1) / SK_BLOCK_ROWS;
  const sk_work w = sk_where(g, blocks_x, SK_BLOCK_ROWS, CN);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long m0 = w.first + (long long)warp * SK_WARP_ROWS, n0 = w.chunk;
  float acc[SK_WARP_ROWS][CN];
#pragma unroll
  for (int r = 0; r < SK_WARP_ROWS; ++r)
#pragma unroll
    for (int c = 0; c < CN; ++c) acc[r][c] = 0.f;
  for (long long k = w.k0; k < w.k1; k += TILE_K) {
    const int len = (int)(w.k1 - k < TILE_K ? w.k1 - k : TILE_K);
    __syncthreads(); /* the tile before is read */
    for (int e = threadIdx.x; e < TILE_K * CN; e += SK_THREADS) {
      const int kk = e / CN, c = e % CN;
      b_tile[c][kk] = kk < len && n0 + c < g.n ? g.b[(size_t)(k + kk) * g.ldb + n0 + c] : 0.f;
    }
    __syncthreads();
    if (m0 >= g.m) continue; /* past the last row: it still takes part in the syncs */
#pragma unroll
    for (int step = 0; step < STEPS; ++step) {
      const int kk = 128 * step + 4 * lane;
      if (kk >= len) break;
      float a[SK_WARP_ROWS][4];
#pragma unroll
      for (int r = 0; r < SK_WARP_ROWS; ++r) {
        const long long m = m0 + r < g.m ? m0 + r : m0; /* a row past M reads row m0 */
        const float *const src = g.a + (size_t)m * g.lda + k + kk;
        if (g.vec_a && kk + 3 < len) {
          const float4 v = __ldg((const float4 *)src);
          a[r][0] = v.x, a[r][1] = v.y, a[r][2] = v.z, a[r][3] = v.w;
        } else {
#pragma unroll
          for (int q = 0; q < 4; ++q) a[r][q] = kk + q < len ? __ldg(src + q) : 0.f;
        }
      }
#pragma unroll
      for (int c = 0; c < CN; ++c) {
        const float4 b = *(const float4 *)&b_tile[c][kk];
#pragma unroll
        for (int r = 0; r < SK_WARP_ROWS; ++r) {
          acc[r][c] = fmaf(a[r][0], b.x, acc[r][c]);
          acc[r][c] = fmaf(a[r][1], b.y, acc[r][c]);
          acc[r][c] = fmaf(a[r][2], b.z, acc[r][c]);
          acc[r][c] = fmaf(a[r][3], b.w, acc[r][c]);
        }
      }
    }
  }
  /* The lanes' sums, in the same butterfly order on every run. */
#pragma unroll
  for (int r = 0; r < SK_WARP_ROWS; ++r)
#pragma unroll
    for (int c = 0; c < CN; ++c)
#pragma unroll
      for (int off = 16; off > 0; off /= 2)
        acc[r][c] += __shfl_xor_sync(0xffffffffu, acc[r][c], off);
  if (lane < CN && n0 + lane < g.n)
#pragma unroll
    for (int r = 0; r < SK_WARP_ROWS; ++r) {
      float v = acc[r][0];
#pragma unroll
      for (int c = 1; c < CN; ++c)
        if (lane == c) v = acc[r][c];
      if (m0 + r < g.m) sk_store(g, w.split, m0 + r, n0 + lane, v);
    }
}

/* The entry's one kernel, both forms under one name (inspect judges every
 * instance of it by the entry's SASS rules): R > 0 the short-M form, R rows
 * a chunk and C columns a thread; R = 0 the short-N form, chunks of C
 * columns. */
template <int R, int C>
__global__ void __launch_bounds__(SK_THREADS, SK_BLOCKS_PER_SM) pg_skinny_kernel(const pg_gemm_args g) {
  if constexpr (R > 0)
    sk_rows<R, C>(g);
  else
    sk_cols<C>(g);
}

/* The short side picks the form and its chunk (the narrowest of 8, 16, 32
 * rows that holds it: a short M past 32 takes chunks of 32, each reading B
 * again; 8 columns: a chunk of 32 columns, measured, ran at half the speed
 * of four of 8, bench/results/h200-skinny.md); K split so that the blocks
 * fill SK_BLOCKS_PER_SM an SM, each range at least SK_MIN_RANGE units. */
/* The short-M form's chunks, narrowest first: rows of A a chunk, columns of
 * B a thread, and its kernel; the last one's rows are SK_ROWS_MAX_CHUNK.
 * Form f's rate is the tuning's skinny_rate_percent[f]; the short-N form's
 * is the one after them. */
static const struct {
  int rows, cols;
  const void *kernel;
} sk_row_forms[] = {{8, 4, (const void *)pg_skinny_kernel<8, 4>},
                    {16, 4, (const void *)pg_skinny_kernel<16, 4>},
                    {SK_ROWS_MAX_CHUNK, 2, (const void *)pg_skinny_kernel<SK_ROWS_MAX_CHUNK, 2>}};
#define SK_ROW_FORMS ((int)(sizeof sk_row_forms / sizeof sk_row_forms[0]))
static_assert(SK_ROW_FORMS + 1 == PG_SKINNY_FORMS, "a rate for each form in the tuning");

static void configure(pg_gemm_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  int chunk, form;
  long long blocks_x;
  if (args->m <= args->n) {
    form = 0;
    while (form < SK_ROW_FORMS - 1 && args->m > sk_row_forms[form].rows) ++form;
    const long long width = (long long)sk_row_forms[form].cols * SK_THREADS;
    chunk = sk_row_forms[form].rows;
    launch->kernel = sk_row_forms[form].kernel;
    blocks_x = ((long long)args->n + width - 1) / width;
  } else {
    form = SK_ROW_FORMS;
    chunk = SK_COLS_CHUNK;
    launch->kernel = (const void *)pg_skinny_kernel<0, SK_COLS_CHUNK>;
    blocks_x = ((long long)args->m + SK_BLOCK_ROWS - 1) / SK_BLOCK_ROWS;
  }
  const long long short_side = args->m <= args->n ? args->m : args->n;
  const long long chunks = (short_side + chunk - 1) / chunk;
  launch->grid_x = blocks_x * chunks;
  /* auto's model: bound by reading the long operand once a chunk, the
   * speed grows with the rows (columns) a read serves, up to a full chunk
   * at the form's measured rate. */
  launch->speed_share = (double)short_side / ((double)chunks * chunk) *
                        tuning->skinny_rate_percent[form] / 100.0;
  launch->grid_y = 1;
  args->splits = 1;
  (void)pg_configure_split_k(args, launch, (long long)SK_BLOCKS_PER_SM * device->sm_count,
                             ((long long)args->k + SK_SPLIT_K - 1) / SK_SPLIT_K, SK_MIN_RANGE);
}

/* Static shared memory, the larger of the forms' widest tiles. */
static size_t smem_bytes(int stages) {
  (void)stages;
  const size_t rows = sizeof(float) * SK_ROWS_TILE_K * (SK_ROWS_MAX_CHUNK + 4);
  const size_t cols = sizeof(float) * SK_COLS_CHUNK * (512 + 4);
  return rows > cols ? rows : cols;
}

static const pg_sass_rule rules[] = {
    {PG_ANY_SM, PG_MUST, "FFMA", "the products are no longer FP32 FMAs"},
    {PG_ANY_SM, PG_MUST, "LDS", "the short operand no longer comes from shared memory"},
    {PG_ANY_SM, PG_NEVER, "HMMA", "tensor-core products in a strict FP32 entry"},
};

PG_ENTRY(skinny_ffma) = {
    .info = {.name = "skinny_ffma", .kind = PG_KIND_KERNEL,
             .technique = "a short side (M or N up to a few dozen): the long operand streamed once a chunk of the short side (8-32 rows, 8 columns), the short one in shared memory, FFMA, K split to fill the GPU",
             .source = PG_FROM_GUIDE, .min_cc = 80, .min_stages = 1, .max_stages = 1,
             .default_stages = 1, .tile_m = SK_ROWS_MAX_CHUNK, .tile_n = SK_COLS_CHUNK,
             .tile_k = SK_SPLIT_K, .threads = SK_THREADS},
    .smem_bytes = smem_bytes,
    .configure = configure,
    .kernel = {.symbol = "pg_skinny_kernel", .launched = "pg_skinny_kernel<8, 4>",
               PG_RULES(rules)},
};

PG_KERNELS_END
