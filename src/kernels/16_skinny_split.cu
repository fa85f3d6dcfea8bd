/* 16 skinny_ffma's split forms, ROWS and COLS — a short side of C (M or N
 * of a few) makes the call a few matrix-vector products, bound by reading
 * the large operand, which tiles of 64 or 128 rows would mostly spend on
 * padding. A block streams the large operand once a chunk of the short
 * side, straight from global memory (16-byte loads where the layout
 * allows, many in flight a thread, evict-first where one chunk of the
 * short side reads it), the small one staged in shared memory a K tile at
 * a time, FFMA in a fixed order. K is split into short ranges so that the
 * blocks fill SK_FILL_BLOCKS an SM (a block's loads in flight are what
 * bounds the speed), the ranges' sums added in split order by
 * reduce_splits.cu (deterministic), or, on sm_90 where at most
 * PG_CLUSTER_MAX ranges' blocks all fit at once in clusters, by the blocks
 * of a tile's ranges through their shared memory (sk_cluster_sum in
 * skinny.cuh): one kernel, no planes. These are the forms that take any
 * shape and layout (a long side is only slow: each chunk of the short side
 * reads the large operand again), by which side is short:
 *   ROWS (M <= N): a block takes a chunk of R = 1, 2, 4, 8 or 16 rows of A
 *     (the narrowest that holds M; in shared memory a K tile at a time,
 *     K-major) and 128 columns of B, a thread 4 columns; its 8 warps take
 *     the range's rows of B in turn, 8 at a time (eight 16-byte loads in
 *     flight a thread), and their R x 4 sums a thread are added through
 *     shared memory at the end, in warp order;
 *   COLS (M > N): a warp takes SK_COLS_WARP_ROWS rows of A, a block
 *     SK_COLS_BLOCK_ROWS rows and a chunk of C = 1, 2, 4 or 8 columns of B
 *     (in shared memory, a K tile at a time, column by column); a lane
 *     reads 4 consecutive K of its rows a step, all of a tile's steps in
 *     flight before B's tile is staged; the lanes' sums are added in a
 *     fixed butterfly order at the end.
 * Block b of the grid: tile b % tiles (block of the long side fastest, then
 * the chunk), K range b / tiles; in clusters tile b / S, range b % S (a
 * tile's S ranges one cluster). The other forms (17 to 19) take the shapes
 * their rules fit first (15_skinny_ffma.cu); these take the rest, and on a
 * GPU of 99 KiB of shared memory a block (sm_86, sm_89) those of the forms
 * whose rings do not fit. auto's model of them (the launch's speed_share):
 * sk_split_launch. The entry's source (by title): "Software Pipelining and
 * Double Buffering". Measured on the H200: bench/results/short-sides.
 *
 *   pipegemm bench --variant skinny_ffma,cublas --m 16 --n 4096 --k 4096    (ROWS)
 *   pipegemm bench --variant skinny_ffma,cublas --m 4096 --n 12 --k 4096    (COLS)
 */
#include "kernels/skinny.cuh"

PG_KERNELS_BEGIN

/* ROWS: warps along K (a block's rows of B are dealt out to them a batch at
 * a time), rows of B a batch (a thread's 16-byte loads in flight
 * together), B's columns a block (4 a thread), K of A's tile in shared
 * memory; the widest chunk of the short side is SK_ROWS_MAX_CHUNK
 * (skinny.cuh). */
#define SK_ROWS_WARPS (SK_THREADS / 32)
#define SK_ROWS_BATCH 8
#define SK_ROWS_WIDTH 128
#define SK_ROWS_TILE_K 512
/* COLS: rows of A a warp (a block SK_COLS_BLOCK_ROWS), K of B's tile in
 * shared memory (a lane's 16-byte loads of A over all of it are in flight
 * together); the widest chunk of B's columns is SK_COLS_MAX_CHUNK. */
#define SK_COLS_WARP_ROWS 4
#define SK_COLS_BLOCK_ROWS (SK_THREADS / 32 * SK_COLS_WARP_ROWS)
#define SK_COLS_TILE_K 512
static_assert(SK_SPLIT_K == SK_ROWS_WARPS * SK_ROWS_BATCH,
              "K's split unit is a batch of every warp of the ROWS form");

/* ROWS: R rows of A (a chunk) x SK_ROWS_WIDTH columns of B a block: a
 * thread 4 columns, its warp's batches of SK_ROWS_BATCH rows of B (every
 * SK_ROWS_WARPS-th batch of the range), R x 4 sums a thread, added over the
 * warps through shared memory at the end in warp order. A's tile is stored
 * K-major (rows 4 floats past R apart where R >= 4, so that the
 * transposing stores spread over the banks): one broadcast LDS.128 gives
 * 4 rows at one K. */
template <int R, bool VEC, bool CLUSTER>
static __device__ __forceinline__ void sk_rows(const pg_gemm_args g) {
  enum { PITCH = R >= 4 ? R + 4 : R, LANES = SK_ROWS_WIDTH / 4 };
  static_assert(LANES == 32, "a warp's lanes are a block's columns");
  static_assert(SK_ROWS_TILE_K % SK_SPLIT_K == 0, "a tile is whole batches of every warp");
  /* A's tile, then (after the loop) the warps' sums, 4 rows at a time, and
   * in clusters the block's sums for the tile after them. */
  enum {
    TILE_FLOATS = SK_ROWS_TILE_K * PITCH,
    SUM_FLOATS = SK_ROWS_WARPS * 4 * SK_ROWS_WIDTH,
    OUT_FLOATS = CLUSTER ? R * SK_ROWS_WIDTH : 0,
    END_FLOATS = SUM_FLOATS + OUT_FLOATS
  };
  __shared__ __align__(16) float smem[TILE_FLOATS > END_FLOATS ? TILE_FLOATS : END_FLOATS];
  const long long blocks_x = ((long long)g.n + SK_ROWS_WIDTH - 1) / SK_ROWS_WIDTH;
  const sk_work w = sk_where<CLUSTER>(g, blocks_x, SK_ROWS_WIDTH, R);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long n = w.first + 4 * lane, m0 = w.chunk;
  /* This thread's columns in N; one past N reads B's first column and
   * zeroes it. */
  const int cols = g.n - n < 4 ? (int)(g.n - n) : 4;
  const float *const b_col = g.b + (cols > 0 ? n : 0);
  float acc[R][4];
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.f;
  for (long long k = w.k0; k < w.k1; k += SK_ROWS_TILE_K) {
    const int len = (int)(w.k1 - k < SK_ROWS_TILE_K ? w.k1 - k : SK_ROWS_TILE_K);
    __syncthreads(); /* the tile before is read */
    for (int e = threadIdx.x; e < R * SK_ROWS_TILE_K; e += SK_THREADS) {
      const int i = e / SK_ROWS_TILE_K, kk = e % SK_ROWS_TILE_K;
      smem[kk * PITCH + i] = m0 + i < g.m && kk < len ? __ldg(g.a + (size_t)(m0 + i) * g.lda + k + kk) : 0.f;
    }
    __syncthreads();
    for (int kb = warp * SK_ROWS_BATCH; kb < len; kb += SK_ROWS_WARPS * SK_ROWS_BATCH) {
      /* A row past the range reads the range's last and is zeroed. */
      float4 b[SK_ROWS_BATCH];
#pragma unroll
      for (int j = 0; j < SK_ROWS_BATCH; ++j) {
        const int kk = kb + j < len ? kb + j : len - 1;
        b[j] = sk_load4<VEC, (R < SK_ROWS_MAX_CHUNK)>(b_col + (size_t)(k + kk) * g.ldb,
                                                       cols > 0 ? cols : 1);
      }
#pragma unroll
      for (int j = 0; j < SK_ROWS_BATCH; ++j)
        if (kb + j >= len || cols <= 0) b[j] = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
      for (int j = 0; j < SK_ROWS_BATCH; ++j) {
        const float *const a_k = smem + (kb + j) * PITCH;
#pragma unroll
        for (int q = 0; q < (R + 3) / 4; ++q) {
          float a[4];
          if constexpr (R >= 4) {
            const float4 v = *(const float4 *)(a_k + 4 * q);
            a[0] = v.x, a[1] = v.y, a[2] = v.z, a[3] = v.w;
          } else {
#pragma unroll
            for (int t = 0; t < 4; ++t) a[t] = t < R ? a_k[t] : 0.f;
          }
#pragma unroll
          for (int t = 0; t < 4 && 4 * q + t < R; ++t) {
            acc[4 * q + t][0] = fmaf(a[t], b[j].x, acc[4 * q + t][0]);
            acc[4 * q + t][1] = fmaf(a[t], b[j].y, acc[4 * q + t][1]);
            acc[4 * q + t][2] = fmaf(a[t], b[j].z, acc[4 * q + t][2]);
            acc[4 * q + t][3] = fmaf(a[t], b[j].w, acc[4 * q + t][3]);
          }
        }
      }
    }
  }
  /* The warps' sums, 4 rows at a time, added in warp order. */
  float *const sums = smem, *const tile_out = smem + SUM_FLOATS;
#pragma unroll
  for (int r0 = 0; r0 < R; r0 += 4) {
    __syncthreads(); /* A's tile, or the rows before, are read */
#pragma unroll
    for (int t = 0; t < 4 && r0 + t < R; ++t)
#pragma unroll
      for (int j = 0; j < 4; ++j)
        sums[(warp * 4 + t) * SK_ROWS_WIDTH + 4 * lane + j] = acc[r0 + t][j];
    __syncthreads();
    for (int e = threadIdx.x; e < 4 * SK_ROWS_WIDTH; e += SK_THREADS) {
      const int t = e / SK_ROWS_WIDTH, c = e % SK_ROWS_WIDTH;
      const long long m = m0 + r0 + t, col = w.first + c;
      if (r0 + t >= R || (CLUSTER ? false : m >= g.m || col >= g.n)) continue;
      float v = sums[t * SK_ROWS_WIDTH + c];
      for (int u = 1; u < SK_ROWS_WARPS; ++u) v += sums[(u * 4 + t) * SK_ROWS_WIDTH + c];
      if constexpr (CLUSTER)
        tile_out[(r0 + t) * SK_ROWS_WIDTH + c] = v;
      else
        sk_store(g, w.split, m, col, v);
    }
  }
  if constexpr (CLUSTER)
    sk_cluster_sum(g, w, tile_out, R * SK_ROWS_WIDTH, [&](int e, float sum) {
      const long long m = m0 + e / SK_ROWS_WIDTH, col = w.first + e % SK_ROWS_WIDTH;
      if (m < g.m && col < g.n) sk_store_c(g, m, col, sum);
    });
}

/* COLS: C[m][n0 + c] for c < CN (a chunk of B's columns), m this warp's
 * SK_COLS_WARP_ROWS rows. Each tile of K: a lane's loads of A (4
 * consecutive K a step, a warp's step 512 contiguous bytes of a row) are
 * issued before B's tile is staged, all in flight together; B's tile is
 * stored column by column (b_tile[c][k], columns 4 floats more than the
 * tile apart, so that the transposing stores spread over 8 banks), read
 * with one conflict-free LDS.128 a column and step, shared by the warp's
 * rows. The lanes' sums are added in a fixed butterfly order at the end. */
template <int CN, bool VEC, bool CLUSTER>
static __device__ __forceinline__ void sk_cols(const pg_gemm_args g) {
  enum { TILE_K = SK_COLS_TILE_K, PITCH = TILE_K + 4, STEPS = TILE_K / 128, WR = SK_COLS_WARP_ROWS };
  static_assert(CN <= 32, "a lane writes one column out");
  __shared__ __align__(16) float b_tile[CN][PITCH];
  /* In clusters: the block's sums for the tile, row by row. */
  __shared__ float tile_out[CLUSTER ? SK_COLS_BLOCK_ROWS * CN : 1];
  const long long blocks_x = ((long long)g.m + SK_COLS_BLOCK_ROWS - 1) / SK_COLS_BLOCK_ROWS;
  const sk_work w = sk_where<CLUSTER>(g, blocks_x, SK_COLS_BLOCK_ROWS, CN);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long m0 = w.first + (long long)warp * WR, n0 = w.chunk;
  float acc[WR][CN];
#pragma unroll
  for (int r = 0; r < WR; ++r)
#pragma unroll
    for (int c = 0; c < CN; ++c) acc[r][c] = 0.f;
  for (long long k = w.k0; k < w.k1; k += TILE_K) {
    const int len = (int)(w.k1 - k < TILE_K ? w.k1 - k : TILE_K);
    float4 a[WR][STEPS];
#pragma unroll
    for (int r = 0; r < WR; ++r) {
      const long long m = m0 + r < g.m ? m0 + r : g.m - 1; /* a row past M reads the last */
#pragma unroll
      for (int st = 0; st < STEPS; ++st) {
        /* A step past the tile reads its last 4 K (or those there are) and
         * is zeroed. */
        const int kk = 128 * st + 4 * lane, at = kk < len ? kk : (len >= 4 ? len - 4 : 0);
        a[r][st] = sk_load4<VEC, (CN < SK_COLS_MAX_CHUNK)>(g.a + (size_t)m * g.lda + k + at,
                                                           len - at < 4 ? len - at : 4);
        if (kk >= len) a[r][st] = make_float4(0.f, 0.f, 0.f, 0.f);
      }
    }
    __syncthreads(); /* the tile before is read */
    for (int e = threadIdx.x; e < TILE_K * CN; e += SK_THREADS) {
      const int kk = e / CN, c = e % CN;
      b_tile[c][kk] = kk < len && n0 + c < g.n ? __ldg(g.b + (size_t)(k + kk) * g.ldb + n0 + c) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int st = 0; st < STEPS; ++st)
#pragma unroll
      for (int c = 0; c < CN; ++c) {
        const float4 b = *(const float4 *)&b_tile[c][128 * st + 4 * lane];
#pragma unroll
        for (int r = 0; r < WR; ++r) {
          acc[r][c] = fmaf(a[r][st].x, b.x, acc[r][c]);
          acc[r][c] = fmaf(a[r][st].y, b.y, acc[r][c]);
          acc[r][c] = fmaf(a[r][st].z, b.z, acc[r][c]);
          acc[r][c] = fmaf(a[r][st].w, b.w, acc[r][c]);
        }
      }
  }
  sk_warp_sums<WR, CN>(acc);
  if (lane < CN && (CLUSTER || n0 + lane < g.n))
#pragma unroll
    for (int r = 0; r < WR; ++r) {
      float v = acc[r][0];
#pragma unroll
      for (int c = 1; c < CN; ++c)
        if (lane == c) v = acc[r][c];
      if constexpr (CLUSTER)
        tile_out[(warp * WR + r) * CN + lane] = v;
      else if (m0 + r < g.m)
        sk_store(g, w.split, m0 + r, n0 + lane, v);
    }
  if constexpr (CLUSTER)
    sk_cluster_sum(g, w, tile_out, SK_COLS_BLOCK_ROWS * CN, [&](int e, float sum) {
      const long long m = w.first + e / CN, col = n0 + e % CN;
      if (m < g.m && col < g.n) sk_store_c(g, m, col, sum);
    });
}

/* The forms, narrowest chunk first in each: the short side's chunk (rows
 * of A, then columns of B) and its kernel. The short side takes the
 * narrowest chunk that holds it; a longer one takes the widest, each chunk
 * reading the long operand again. Form f's rate is the tuning's
 * skinny_rate_percent[f]. */
#define SK_FORM(chunk, r, c)                                                                       \
  {                                                                                               \
    chunk, {(const void *)pg_skinny_kernel<r, c, false>, (const void *)pg_skinny_kernel<r, c, true>}, \
        {(const void *)pg_skinny_kernel<r, c, false, true>,                                        \
         (const void *)pg_skinny_kernel<r, c, true, true>}                                         \
  }
static const sk_form sk_row_forms[] = {SK_FORM(1, 1, 0), SK_FORM(2, 2, 0), SK_FORM(4, 4, 0),
                                       SK_FORM(8, 8, 0),
                                       SK_FORM(SK_ROWS_MAX_CHUNK, SK_ROWS_MAX_CHUNK, 0)};
static const sk_form sk_col_forms[] = {SK_FORM(1, 0, 1), SK_FORM(2, 0, 2), SK_FORM(4, 0, 4),
                                       SK_FORM(SK_COLS_MAX_CHUNK, 0, SK_COLS_MAX_CHUNK)};
#define SK_ROW_FORMS ((int)(sizeof sk_row_forms / sizeof sk_row_forms[0]))
#define SK_COL_FORMS ((int)(sizeof sk_col_forms / sizeof sk_col_forms[0]))
static_assert(SK_ROW_FORMS + SK_COL_FORMS == PG_SKINNY_FORMS, "a rate for each form in the tuning");

/* Whether a split K's ranges are added up in clusters of their blocks
 * (sk_cluster_sum), at most PG_CLUSTER_MAX ranges, rather than in planes by
 * a second kernel: where the tuning asks for it (split_in_clusters), the
 * GPU launches clusters, and the build's code for the kernel is sm_90's (an
 * image of compute_80 PTX holds only the trap). Not asked of a model of a
 * device (no image to look at): it has no cluster capacities anyway. */
static bool sk_clusters(const pg_device *device, const pg_tuning *tuning, const void *kernel) {
  if (!pg_tuning_with_env(tuning).split_in_clusters || device->model_only ||
      pg_device_cluster_blocks(device, 1, 2) <= 0)
    return false;
  pg_kernel_image image;
  return pg_kernel_image_of(device, kernel, &image) == PG_OK &&
         image.load_error == cudaSuccess && image.ptx_version >= 90;
}

/* A split K, its ranges added up in clusters: the planes' split (SK_FILL_BLOCKS
 * an SM) capped at PG_CLUSTER_MAX ranges, where the cap keeps at least
 * 1 / SK_CLUSTER_MIN_SHARE of the planes' ranges (fewer blocks keep fewer
 * loads in flight) and all the clusters fit at once, at one block an SM
 * where the grid has no more blocks than SMs, else at the form's blocks an
 * SM (pg_split_in_clusters, not spread: no padding). Measured on the H200
 * (bench/results/short-sides, "Short sides' ranges added up in
 * clusters"), clusters against planes: 2-4 rows at 4096 x 4096, 256 blocks
 * in clusters of 8 where the planes had 512-1024, 25.4-27.2 us against
 * 28.0-31.6; 3 columns at 600 x 7777, 152 blocks, 16.4 against 20.1 us;
 * but 1 row at 1000 x 8192, 64 blocks where the planes had 512, 25.3
 * against 18.1 us; 128 blocks, more than one an SM fits in clusters (8
 * rows at 2000 x 8192, 12 and 16 rows at 4096 x 4096 and 2048 x 8192),
 * 1.01-1.15 x the planes' time; and padded to two blocks an SM, 2 rows at
 * 3000 x 3000 19.7 us where unpadded ran 18.2 and the planes 18.8.
 * Sets the split in planes, or in clusters where these pay. */
#define SK_CLUSTER_MIN_SHARE 4
void sk_configure_split(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                        pg_kernel_launch *launch, const void *kernel, int per_sm,
                        long long slots, long long k_tiles, int min_steps) {
  const long long most = launch->grid_x * PG_CLUSTER_MAX;
  pg_layout_args split_args = *args;
  pg_kernel_launch split = *launch;
  const int planes_splits = pg_configure_split_k(args, launch, slots, k_tiles, min_steps);
  if (planes_splits < 2 || !sk_clusters(device, tuning, kernel)) return;
  const int splits =
      pg_configure_split_k(&split_args, &split, slots < most ? slots : most, k_tiles, min_steps);
  if (splits < 2 || (long long)splits * SK_CLUSTER_MIN_SHARE < planes_splits ||
      !pg_split_in_clusters(&split_args, &split, device, per_sm, 0, kernel))
    return;
  *args = split_args;
  *launch = split;
}

/* The split form of the short side (the narrowest chunk that holds it),
 * K not split yet (sk_split_k does that where no other form takes the
 * call): its kernel, its grid, and auto's model of the call, which the
 * RING form keeps. */
void sk_split_launch(pg_layout_args *args, const pg_tuning *tuning, pg_kernel_launch *launch,
                     sk_shape *shape) {
  const bool rows = args->m <= args->n;
  const long long short_side = rows ? args->m : args->n;
  const sk_form *const forms = rows ? sk_row_forms : sk_col_forms;
  const int f = sk_pick(forms, rows ? SK_ROW_FORMS : SK_COL_FORMS, short_side);
  const int chunk = forms[f].chunk;
  /* 16-byte loads of the long operand: its rows may be read so, and the
   * side along them is whole vectors. */
  const bool vec = rows ? args->vec_b && args->n % 4 == 0 : args->vec_a && args->k % 4 == 0;
  launch->kernel = forms[f].kernel[vec];
  const long long blocks_x =
      rows ? ((long long)args->n + SK_ROWS_WIDTH - 1) / SK_ROWS_WIDTH
           : ((long long)args->m + SK_COLS_BLOCK_ROWS - 1) / SK_COLS_BLOCK_ROWS;
  const long long chunks = (short_side + chunk - 1) / chunk;
  launch->grid_x = blocks_x * chunks;
  /* auto's model: bound by reading the long operand, the speed grows with
   * the rows (columns) a read serves, up to a full chunk at the form's
   * measured rate; a chunk after the first costs skinny_chunk_percent of
   * one, and the whole at most skinny_cap_percent (src/tuning.h). */
  const double chunk_cost = 1.0 + (double)(chunks - 1) * tuning->skinny_chunk_percent / 100.0;
  const double share = (double)short_side / (chunk * chunk_cost) *
                       tuning->skinny_rate_percent[rows ? f : SK_ROW_FORMS + f] / 100.0;
  launch->model.speed_share = share < tuning->skinny_cap_percent / 100.0 ? share : tuning->skinny_cap_percent / 100.0;
  launch->grid_y = 1;
  args->splits = 1;
  shape->rows = rows;
  shape->short_side = short_side;
  shape->vec = vec;
  shape->split = f;
}

/* K split into ranges to fill SK_FILL_BLOCKS an SM, each at least
 * SK_MIN_ROWS_RANGE of K (times half the chunk's rows from 4 on) or
 * SK_COLS_TILE_K. */
void sk_split_k(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                pg_kernel_launch *launch, const sk_shape *shape) {
  const bool rows = shape->rows, vec = shape->vec;
  const int f = shape->split;
  const sk_form *const forms = rows ? sk_row_forms : sk_col_forms;
  const int chunk = forms[f].chunk;
  const long long min_range = rows ? SK_MIN_ROWS_RANGE * (chunk > 2 ? chunk / 2 : 1) : SK_COLS_TILE_K;
  const long long slots = (long long)SK_FILL_BLOCKS * device->sm_count;
  const long long k_tiles = ((long long)args->k + SK_SPLIT_K - 1) / SK_SPLIT_K;
  const int min_steps = (int)(min_range / SK_SPLIT_K);
  /* In clusters (sk_cluster_sum) where they pay, in planes otherwise. */
  sk_configure_split(args, device, tuning, launch, forms[f].cluster[vec],
                     sk_blocks_per_sm(rows ? chunk : 0), slots, k_tiles, min_steps);
}

/* The static shared memory a block of these forms takes at most: the ROWS
 * form's tile of A at the widest chunk, or its warps' sums, or the COLS
 * form's tile of B at the widest chunk. */
size_t sk_split_smem(void) {
  const size_t tile = sizeof(float) * SK_ROWS_TILE_K * (SK_ROWS_MAX_CHUNK + 4);
  const size_t sums = sizeof(float) * SK_ROWS_WARPS * 4 * SK_ROWS_WIDTH;
  const size_t rows = tile > sums ? tile : sums;
  const size_t cols = sizeof(float) * SK_COLS_MAX_CHUNK * (SK_COLS_TILE_K + 4);
  return rows > cols ? rows : cols;
}

PG_KERNELS_END
