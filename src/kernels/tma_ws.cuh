/* What the flagship's chapters share: 12_tma_ws.cu (its kernel, over whole
 * tiles), 13_tma_ws_splitk.cu (K split into ranges; the tile forms) and
 * 14_tma_ws_streamk.cu (stream-K after data-parallel waves). The kernel,
 * pg_tma_ws_kernel<TM, TN, MODE>, is one template on the tile (TM x TN: a
 * form of TWS_FORMS, tma_ws.h) and on how a block takes its work (MODE):
 * each chapter brings its schedule (tws_schedule<MODE>) and instantiates
 * the kernel of 12 with it. Here: each form's traits (tws_tile), the
 * geometry of a call in tiles, the swizzle, the split's units, the inner
 * product of a stage, and where a stretch of work's sums go; and on the
 * host's side a form's shape, its blocks an SM, and what the registry says
 * of it. sm_90 only. */
#ifndef PG_TMA_WS_CUH
#define PG_TMA_WS_CUH

#include <limits.h>
#include <stdint.h>

#include "kernels/tile128.cuh" /* t128_ring_next */
#include "kernels/tma_common.cuh"
#include "kernels/tma_ws.h"
#include "tuning.h"

static_assert(TWS_TILE_K % 4 == 0 && TWS_A_ROW_BYTES <= 128 && TWS_A_ROW_BYTES >= 32,
              "A rows must be one swizzle span: 32, 64 or 128 bytes");
static_assert(TWS_CONSUMERS * TWS_THREAD_M * TWS_THREAD_N == TWS_TILE_M * TWS_TILE_N,
              "the warpgroup covers the tile");

/* The tiles, TM x TN, one a form of TWS_FORMS (tma_ws.h): its layout (how
 * the consumer threads cover it), a consumer thread's rows and columns of
 * outputs and its rows' step, consumer threads (a warpgroup per 128 rows,
 * or per 128 columns of a WIDE tile) and the block's threads with the
 * producer warpgroup, blocks per SM the launch is built for, and where a
 * stage's B starts and it ends. */
template <int TM, int TN> struct tws_tile;
#define TWS_TILE_OF_FORM(name, tm, tn, layout, wg, thread_m, thread_n, blocks, max_stages, text) \
  template <> struct tws_tile<tm, tn> {                                                           \
    enum { LAYOUT = TWS_LAYOUT_##layout, THREAD_M = thread_m, THREAD_N = thread_n };              \
    enum { ROW_STEP = LAYOUT == TWS_LAYOUT_THIN ? TWS_THIN_ROW_STEP : TWS_ROW_STEP };            \
    enum { CONSUMERS = 128 * wg, THREADS = CONSUMERS + 128, MIN_BLOCKS = blocks };               \
    enum { STAGE_A_BYTES = tm * TWS_TILE_K * 4, STAGE_BYTES = STAGE_A_BYTES + TWS_TILE_K * tn * 4 }; \
  };
TWS_FORMS(TWS_TILE_OF_FORM)
#undef TWS_TILE_OF_FORM

/* What a form's line must hold for the kernel to cover its tile, and for
 * its launch to give what setmaxnreg asks (setmaxnreg.inc waits until the
 * registers are free: the block's warps after it must fit in what the
 * launch gives, 65536 / threads / blocks an SM, rounded down to 8: 168
 * each at 384 threads and one block). */
template <int TM, int TN> static constexpr bool tws_tile_is_whole(void) {
  typedef tws_tile<TM, TN> t;
  constexpr int consumer_regs = t::THREAD_N == TWS_THREAD_N ? TWS_CONSUMER_REGS : TWS_SMALL_CONSUMER_REGS;
  return t::CONSUMERS * t::THREAD_M * t::THREAD_N == TM * TN && t::THREAD_N % 4 == 0 &&
         (t::LAYOUT == TWS_LAYOUT_STACKED ? TM == t::CONSUMERS && TN == 8 * t::THREAD_N
          : t::LAYOUT == TWS_LAYOUT_SIDE  ? t::CONSUMERS == 128 && TN == 2 * 64 &&
                                                TM == t::THREAD_M * TWS_ROW_STEP &&
                                                t::THREAD_N == 8
          : t::LAYOUT == TWS_LAYOUT_WIDE ? TM == 128 && TN == t::CONSUMERS &&
                                               t::THREAD_N == TWS_THREAD_N
                                         : t::CONSUMERS == 128 && TN == 4 * 4 &&
                                               TM == t::THREAD_M * TWS_THIN_ROW_STEP &&
                                               TWS_THIN_ROW_STEP % 8 == 0) &&
         TM <= 256 && TN <= 256 && /* a TMA box has at most 256 rows and 256 columns */
         128 * TWS_PRODUCER_REGS + t::CONSUMERS * consumer_regs <=
             t::THREADS * (65536 / t::THREADS / t::MIN_BLOCKS / 8 * 8);
}
#define TWS_CHECK_FORM(name, tm, tn, layout, wg, thread_m, thread_n, blocks, max_stages, text) \
  static_assert(tws_tile_is_whole<tm, tn>(),                                                  \
                #name ": its consumers do not cover its tile, or its register split exceeds "  \
                      "its launch's registers (tma_ws.h, TWS_FORMS)");
TWS_FORMS(TWS_CHECK_FORM)
#undef TWS_CHECK_FORM
static_assert(tws_tile<TWS_TILE_M, TWS_TILE_N>::MIN_BLOCKS == TWS_MIN_BLOCKS_PER_SM &&
                  tws_tile<TWS_TILE_M, TWS_TILE_N>::THREADS == TWS_THREADS &&
                  tws_tile<TWS_TILE_M, TWS_TILE_N>::STAGE_BYTES == TWS_STAGE_BYTES,
              "the first form is the flagship's tile");

/* How a kernel instance takes its work: whole tiles (data-parallel, the
 * flagship's own loop, with nothing else live across the K loop), K split
 * into ranges (their sums to planes that a second kernel adds up, or, in
 * clusters, added up in the cluster's shared memory), or stream-K after
 * data-parallel waves. One instance per mode, so the plainest keeps the
 * plainest code. */
enum { TWS_WHOLE_TILES, TWS_SPLIT_K, TWS_STREAM_K, TWS_SPLIT_CLUSTER };

/* How a kernel instance reads the operands (its LAYOUT): 0, A as M x K and
 * B as K x N through maps of rank 2 (every mode); else TWS_BATCHED with
 * TWS_A_T and TWS_B_T as the call's op(A) and op(B), through maps of rank 3
 * of the operands as the call stores them (pg_tma_reads_layout; the
 * split-K mode only, its instances in tma_ws_layouts.cu). A read
 * transposed, K x M, arrives in a stage as TILE_K rows of TM floats (M
 * contiguous, no swizzle), and a consumer thread's rows are then runs of 4
 * (32 apart), read as float4 at each K; B read transposed, N x K, arrives
 * as TN rows of TILE_K floats in A's swizzle, and a thread's columns are
 * then single columns 8 apart (4 in the thin tile), read as float4 along
 * K, so that a warp's 8 columns at once are 8 rows of distinct swizzle. */
enum { TWS_A_T = 1, TWS_B_T = 2, TWS_BATCHED = 4 };

/* What a schedule gives a block: one stretch of work at a time, an output
 * tile and a range of its K steps, and where its sums go. */
enum { TWS_TO_C, TWS_TO_SPLIT, TWS_TO_SLOT };

typedef struct {
  int tm, tn, kt_begin, kt_end;
  int dest, index; /* index: the split's plane, or the stream-K slot */
} tws_work;

/* A block's place in its list of work. Small: the producer keeps it in the
 * few registers setmaxnreg leaves it. */
typedef struct {
  int next, end;
  int sk_next, sk_end; /* stream-K: its streamed part's K steps still to take */
} tws_cursor;

/* The device helpers exist where the kernel does: sm_90 code. */
#ifdef PG_HAVE_TMA
/* The shape in tiles and K steps (in 64 bits first: M, N or K near INT_MAX
 * must not wrap; the planners keep the counts below in int). */
typedef struct {
  int tiles_m, tiles_n, tiles, k_tiles;
  int sk_iterations; /* stream-K's part: the K steps of the tiles from sk_first_tile on */
  int whole_rows, whole_tiles; /* split-K: the tile rows above g.split_row0, whole */
} tws_geometry;

template <int TM, int TN>
static __device__ __forceinline__ tws_geometry tws_geometry_of(const pg_gemm_args &g) {
  tws_geometry geo;
  geo.tiles_m = (int)(((long long)g.m + TM - 1) / TM);
  geo.tiles_n = (int)(((long long)g.n + TN - 1) / TN);
  geo.tiles = geo.tiles_m * geo.tiles_n;
  geo.k_tiles = (int)(((long long)g.k + TWS_TILE_K - 1) / TWS_TILE_K);
  /* Stream-K's planner keeps this below INT_MAX; the other modes leave it unused. */
  geo.sk_iterations =
      (int)((long long)(geo.tiles - pg_own<tws_own>(g).sk_first_tile) * geo.k_tiles);
  geo.whole_rows = g.split_row0 / TM; /* a multiple of TM (pg_configure_split_tail) */
  geo.whole_tiles = geo.whole_rows * geo.tiles_n;
  return geo;
}

/* How a block of each MODE takes its work: start() gives its cursor, next()
 * its next stretch, false once there is none. Whole tiles in
 * 12_tma_ws.cu, split-K in 13_tma_ws_splitk.cu, stream-K in
 * 14_tma_ws_streamk.cu. */
template <int MODE> struct tws_schedule;

/* The next unit of work: first the whole tiles of the rows above
 * g.split_row0 (none where it is 0), then the rows below's tiles x splits,
 * split-major (blocks running together work on the same stretch of K), each
 * part in grouped order: split-K's schedule (13), and stream-K's
 * data-parallel part (14), which has one split and no whole rows. */
static __device__ __forceinline__ void tws_take_split(const pg_gemm_args &g,
                                                      const tws_geometry &geo, tws_cursor *c,
                                                      tws_work *w) {
  int unit = c->next;
  c->next += gridDim.x;
  if (unit < geo.whole_tiles) {
    pg_grouped_tile(unit, geo.whole_rows, geo.tiles_n, g.group_m, &w->tm, &w->tn);
    w->kt_begin = 0;
    w->kt_end = geo.k_tiles;
    w->dest = TWS_TO_C;
    w->index = 0;
    return;
  }
  unit -= geo.whole_tiles;
  const int below = geo.tiles - geo.whole_tiles;
  const int split = unit / below;
  pg_grouped_tile(unit - split * below, geo.tiles_m - geo.whole_rows, geo.tiles_n, g.group_m,
                  &w->tm, &w->tn);
  w->tm += geo.whole_rows;
  w->kt_begin = split * g.k_tiles_per_split;
  w->kt_end = min(geo.k_tiles, w->kt_begin + g.k_tiles_per_split);
  w->dest = g.splits == 1 ? TWS_TO_C : TWS_TO_SPLIT;
  w->index = split;
}

/* Split-K: units blockIdx.x, + gridDim.x, ... of tiles x splits (13, and
 * the kernel on a call's layout, whose K is split where its batch is one
 * GEMM). */
template <> struct tws_schedule<TWS_SPLIT_K> {
  static __device__ __forceinline__ tws_cursor start(const pg_gemm_args &g,
                                                     const tws_geometry &geo) {
    tws_cursor c;
    c.sk_next = c.sk_end = 0;
    c.next = blockIdx.x;
    c.end = geo.whole_tiles + (geo.tiles - geo.whole_tiles) * g.splits;
    return c;
  }
  static __device__ __forceinline__ bool next(const pg_gemm_args &g, const tws_geometry &geo,
                                              tws_cursor *c, tws_work *w) {
    if (c->next >= c->end) return false;
    tws_take_split(g, geo, c, w);
    return true;
  }
};

#endif

/* ---- a consumer thread's arithmetic ------------------------------------------
 * Where its rows and columns are, what it reads of a stage and how it
 * writes its sums: plain arithmetic on shared memory and C, compiled for
 * the host too, so that a host test (tests/test_tws_threads.cu) runs
 * every consumer thread of every form and layout over a stage laid out
 * as the copy engine lays it out. Its loops unroll in device code (the
 * host compiler knows no #pragma unroll). */
#ifdef __CUDA_ARCH__
#define TWS_PRAGMA(text) _Pragma(#text)
#define TWS_UNROLL _Pragma("unroll")
#define TWS_UNROLL_BY(n) TWS_PRAGMA(unroll n)
#else
#define TWS_UNROLL
#define TWS_UNROLL_BY(n)
#endif

/* The copy engine's swizzle: in a row of A (TWS_A_ROW_BYTES, 1024-byte
 * aligned stage) the 16-byte piece p is stored at piece p ^ x, where x is
 * bits [7, 7+b) of the row's byte offset, b = log2(row bytes / 16). A
 * thread's rows are 8 apart (ROW_STEP; 32 in the thin tile), which leaves
 * x the same for all of them: one value per thread, computed once. */
static __host__ __device__ __forceinline__ unsigned tws_swizzle_of_row(int row) {
  return (((unsigned)row * TWS_A_ROW_BYTES) >> 7) & (TWS_A_ROW_BYTES / 16 - 1);
}

/* A consumer thread's THREAD_N values of B's row kk (op(B) = N: groups of
 * 4 columns TWS_COL_STEP apart from bs, the stage's B at its first column). */
template <int TN, int THREAD_N>
static __host__ __device__ __forceinline__ void tws_load_b_row(const float *bs, int kk,
                                                      float b[THREAD_N]) {
TWS_UNROLL
  for (int j = 0; j < THREAD_N / 4; ++j) {
    const float4 v = *(const float4 *)(bs + kk * TN + TWS_COL_STEP * j);
    b[4 * j + 0] = v.x;
    b[4 * j + 1] = v.y;
    b[4 * j + 2] = v.z;
    b[4 * j + 3] = v.w;
  }
}

/* acc += the stage's A (TM x TILE_K) times B (TILE_K x TN), this thread's
 * THREAD_M x THREAD_N part. */
template <int TM, int TN>
static __host__ __device__ __forceinline__ void tws_compute(
    const char *stage, int row0, unsigned swz, int col0,
    float acc[tws_tile<TM, TN>::THREAD_M][tws_tile<TM, TN>::THREAD_N]) {
  enum { THREAD_M = tws_tile<TM, TN>::THREAD_M, THREAD_N = tws_tile<TM, TN>::THREAD_N };
  enum { ROW_STEP = tws_tile<TM, TN>::ROW_STEP };
  const char *as = stage + row0 * TWS_A_ROW_BYTES;
  const float *bs = (const float *)(stage + tws_tile<TM, TN>::STAGE_A_BYTES) + col0;
TWS_UNROLL
  for (int piece = 0; piece < TWS_TILE_K / 4; ++piece) {
    const char *ap = as + (((unsigned)piece ^ swz) << 4);
    float4 a[THREAD_M];
TWS_UNROLL
    for (int i = 0; i < THREAD_M; ++i)
      a[i] = *(const float4 *)(ap + ROW_STEP * i * TWS_A_ROW_BYTES);
TWS_UNROLL
    for (int q = 0; q < 4; ++q) {
      const int kk = piece * 4 + q;
      float b[THREAD_N];
      tws_load_b_row<TN, THREAD_N>(bs, kk, b);
TWS_UNROLL
      for (int i = 0; i < THREAD_M; ++i) {
        const float ai = q == 0 ? a[i].x : q == 1 ? a[i].y : q == 2 ? a[i].z : a[i].w;
TWS_UNROLL
        for (int j = 0; j < THREAD_N; ++j) acc[i][j] = fmaf(ai, b[j], acc[i][j]);
      }
    }
  }
}

/* A consumer thread's i-th row and j-th column in its tile (row0, col0:
 * its first), as the layout places them (TWS_A_T, TWS_B_T above). */
template <int ROW_STEP, bool A_T>
static __host__ __device__ __forceinline__ int tws_row(int row0, int i) {
  return A_T ? row0 + 32 * (i / 4) + i % 4 : row0 + ROW_STEP * i;
}
template <int COL_STEP_T, bool B_T>
static __host__ __device__ __forceinline__ int tws_col(int col0, int j) {
  return B_T ? col0 + COL_STEP_T * j : col0 + TWS_COL_STEP * (j / 4) + j % 4;
}

/* A consumer thread's first row and column of its tile and the swizzle of
 * its rows of A (op N), by its warp and lane among the block's consumers,
 * as the form's layout (tma_ws.h) and the call's ops place them.
 * STACKED: rows row0 + 8i, warps 2p and 2p+1 interleave in rows 64p ..
 * 64p+63 (a warpgroup per 128 rows); the 4 rows a warp reads at once
 * (lane / 8) fall in 4 distinct swizzle positions, so A reads are free of
 * bank conflicts. SIDE, the short tiles' 64 rows (or 32): warp pair p takes
 * them all, at columns 64p .. 64p+63. WIDE: warpgroup q (warps 4q ..
 * 4q+3) takes all 128 rows at columns 128q .. 128q+127. THIN: warp w's
 * lanes rows 8w + lane / 4 (+ 32i), columns 4 (lane % 4); the 8 rows a warp
 * reads at once fall in the 8 swizzle positions. A read transposed: the
 * same rows in runs of 4 (tws_row); THIN, warp w rows 32w .. 32w+31, 4 a
 * lane quad. B read transposed: single columns (tws_col), lane % 8 then
 * every 8th (THIN: lane % 4, every 4th). */
typedef struct {
  int row0, col0;
  unsigned swz;
} tws_origin;

template <int TM, int TN, int LAYOUT>
static __host__ __device__ __forceinline__ tws_origin tws_origin_of(int warp, int lane) {
  typedef tws_tile<TM, TN> tile;
  constexpr bool A_T = (LAYOUT & TWS_A_T) != 0, B_T = (LAYOUT & TWS_B_T) != 0;
  constexpr bool short_tile = tile::LAYOUT == TWS_LAYOUT_SIDE;
  constexpr bool wide_tile = tile::LAYOUT == TWS_LAYOUT_WIDE;
  constexpr bool thin_tile = tile::LAYOUT == TWS_LAYOUT_THIN;
  const int pair = wide_tile ? (warp & 3) >> 1 : warp >> 1;
  const int row0 = thin_tile ? warp * 8 + lane / 4
                             : (short_tile ? 0 : pair * 64) + (warp & 1) * 4 + (lane / 8);
  tws_origin o;
  o.swz = tws_swizzle_of_row(row0);
  const int col0 = thin_tile ? (lane % 4) * 4
                             : (lane % 8) * 4 + (short_tile ? pair * 64 : 0) +
                                   (wide_tile ? (warp >> 2) * 128 : 0);
  o.row0 = !A_T       ? row0
           : thin_tile ? warp * 32 + (lane / 4) * 4
                       : (short_tile ? 0 : pair * 64) + ((warp & 1) * 4 + lane / 8) * 4;
  o.col0 = !B_T       ? col0
           : thin_tile ? lane % 4
                       : lane % 8 + (short_tile ? pair * 64 : 0) +
                             (wide_tile ? (warp >> 2) * 128 : 0);
  return o;
}

/* tws_compute for a LAYOUT other than 0: per 4 K steps, A's values as
 * float4 along K (one per row) or, read transposed, along M (one per run of
 * 4 rows and K step), THREAD_M loads either way; then B's as float4 along N
 * per K step, or, read transposed, along K per column, in chunks of 4
 * columns (with 8 the 128 x 64 tile's 136 registers spill). */
template <int TM, int TN, int LAYOUT>
static __host__ __device__ __forceinline__ void tws_compute_layout(
    const char *stage, int row0, unsigned swz, int col0,
    float acc[tws_tile<TM, TN>::THREAD_M][tws_tile<TM, TN>::THREAD_N]) {
  typedef tws_tile<TM, TN> tile;
  enum { THREAD_M = tile::THREAD_M, THREAD_N = tile::THREAD_N, ROW_STEP = tile::ROW_STEP };
  enum { COL_STEP_T = tile::LAYOUT == TWS_LAYOUT_THIN ? 4 : 8 };
  constexpr bool A_T = (LAYOUT & TWS_A_T) != 0, B_T = (LAYOUT & TWS_B_T) != 0;
  /* B read transposed: a loop over the 4-step pieces, not unrolled (unrolled,
   * the next piece's loads come early and 9 to 14 sums spill). */
  enum { CHUNK = 4, UNROLL = B_T ? 1 : TWS_TILE_K / 4 };
  const char *as = stage + (A_T ? row0 * 4 : row0 * TWS_A_ROW_BYTES);
  const char *bs = stage + tile::STAGE_A_BYTES;
TWS_UNROLL_BY(UNROLL)
  for (int piece = 0; piece < TWS_TILE_K / 4; ++piece) {
    float a[4][THREAD_M];
    if constexpr (A_T) {
TWS_UNROLL
      for (int q = 0; q < 4; ++q)
TWS_UNROLL
        for (int h = 0; h < THREAD_M / 4; ++h) {
          const float4 v = *(const float4 *)(as + ((piece * 4 + q) * TM + 32 * h) * 4);
          a[q][4 * h + 0] = v.x;
          a[q][4 * h + 1] = v.y;
          a[q][4 * h + 2] = v.z;
          a[q][4 * h + 3] = v.w;
        }
    } else {
      const char *ap = as + (((unsigned)piece ^ swz) << 4);
TWS_UNROLL
      for (int i = 0; i < THREAD_M; ++i) {
        const float4 v = *(const float4 *)(ap + ROW_STEP * i * TWS_A_ROW_BYTES);
        a[0][i] = v.x;
        a[1][i] = v.y;
        a[2][i] = v.z;
        a[3][i] = v.w;
      }
    }
    if constexpr (B_T) {
TWS_UNROLL
      for (int jc = 0; jc < THREAD_N; jc += CHUNK) {
        float4 b[CHUNK];
TWS_UNROLL
        for (int t = 0; t < CHUNK; ++t) {
          const int col = tws_col<COL_STEP_T, true>(col0, jc + t);
          b[t] = *(const float4 *)(bs + col * TWS_A_ROW_BYTES +
                                   (((unsigned)piece ^ tws_swizzle_of_row(col)) << 4));
        }
TWS_UNROLL
        for (int q = 0; q < 4; ++q)
TWS_UNROLL
          for (int i = 0; i < THREAD_M; ++i)
TWS_UNROLL
            for (int t = 0; t < CHUNK; ++t) {
              const float bq = q == 0 ? b[t].x : q == 1 ? b[t].y : q == 2 ? b[t].z : b[t].w;
              acc[i][jc + t] = fmaf(a[q][i], bq, acc[i][jc + t]);
            }
      }
    } else {
      const float *bf = (const float *)bs + col0;
TWS_UNROLL
      for (int q = 0; q < 4; ++q) {
        const int kk = piece * 4 + q;
        float b[THREAD_N];
        tws_load_b_row<TN, THREAD_N>(bf, kk, b);
TWS_UNROLL
        for (int i = 0; i < THREAD_M; ++i)
TWS_UNROLL
          for (int j = 0; j < THREAD_N; ++j) acc[i][j] = fmaf(a[q][i], b[j], acc[i][j]);
      }
    }
  }
}

/* A row's groups of 4 columns, TWS_COL_STEP apart from col (op(B) = N):
 * 16-byte stores where `vec` allows. */
template <int THREAD_N>
static __host__ __device__ __forceinline__ void tws_store_groups(float *out_row, int vec, int n,
                                                        float alpha, float beta, int col,
                                                        const float acc[THREAD_N]) {
TWS_UNROLL
  for (int j = 0; j < THREAD_N / 4; ++j) {
    const int cj = col + TWS_COL_STEP * j;
    float *p = out_row + cj;
    if (vec && cj + 3 < n) {
      float4 v = make_float4(alpha * acc[4 * j], alpha * acc[4 * j + 1], alpha * acc[4 * j + 2],
                             alpha * acc[4 * j + 3]);
      if (beta != 0.f) {
        const float4 c = *(const float4 *)p;
        v.x = fmaf(beta, c.x, v.x);
        v.y = fmaf(beta, c.y, v.y);
        v.z = fmaf(beta, c.z, v.z);
        v.w = fmaf(beta, c.w, v.w);
      }
      *(float4 *)p = v;
    } else {
TWS_UNROLL
      for (int e = 0; e < 4; ++e)
        if (cj + e < n) {
          const float v = alpha * acc[4 * j + e];
          p[e] = beta == 0.f ? v : fmaf(beta, p[e], v);
        }
    }
  }
}

/* One row of a thread's outputs, out_row[col] = alpha*acc + beta*out_row[col]
 * (out_row not read when beta == 0), guarded by n: op(B) = N, groups of 4
 * columns TWS_COL_STEP apart from col, 16-byte stores where `vec` allows;
 * B read transposed (B_T), single columns COL_STEP_T apart (a warp's 8
 * lanes store 8 in a row). */
template <int THREAD_N, bool B_T, int COL_STEP_T>
static __host__ __device__ __forceinline__ void tws_store_row(float *out_row, int vec, int n, float alpha,
                                                     float beta, int col,
                                                     const float acc[THREAD_N]) {
  if constexpr (B_T) {
    (void)vec;
TWS_UNROLL
    for (int j = 0; j < THREAD_N; ++j) {
      const int cj = tws_col<COL_STEP_T, true>(col, j);
      if (cj < n) {
        const float v = alpha * acc[j];
        out_row[cj] = beta == 0.f ? v : fmaf(beta, out_row[cj], v);
      }
    }
  } else {
    tws_store_groups<THREAD_N>(out_row, vec, n, alpha, beta, col, acc);
  }
}

/* tws_epilogue's op N, N: the steps of tws_store_groups, written out here
 * so that the flagship's code stays as it was measured. */
template <int THREAD_M, int THREAD_N, int ROW_STEP>
static __host__ __device__ __forceinline__ void tws_epilogue_nn(float *out, int ld, int m, int n,
                                                       float alpha, float beta, int m0, int n0,
                                                       int row0, int col0, int vec,
                                                       float acc[THREAD_M][THREAD_N]) {
TWS_UNROLL
  for (int i = 0; i < THREAD_M; ++i) {
    const int row = m0 + row0 + ROW_STEP * i;
    if (row >= m) break;
    float *out_row = out + (size_t)row * ld;
TWS_UNROLL
    for (int j = 0; j < THREAD_N / 4; ++j) {
      const int col = n0 + col0 + TWS_COL_STEP * j;
      float *p = out_row + col;
      if (vec && col + 3 < n) {
        float4 v = make_float4(alpha * acc[i][4 * j], alpha * acc[i][4 * j + 1],
                               alpha * acc[i][4 * j + 2], alpha * acc[i][4 * j + 3]);
        if (beta != 0.f) {
          const float4 c = *(const float4 *)p;
          v.x = fmaf(beta, c.x, v.x);
          v.y = fmaf(beta, c.y, v.y);
          v.z = fmaf(beta, c.z, v.z);
          v.w = fmaf(beta, c.w, v.w);
        }
        *(float4 *)p = v;
      } else {
TWS_UNROLL
        for (int e = 0; e < 4; ++e)
          if (col + e < n) {
            const float v = alpha * acc[i][4 * j + e];
            p[e] = beta == 0.f ? v : fmaf(beta, p[e], v);
          }
      }
    }
  }
}

/* out = alpha*acc + beta*out for this thread's part of an m x n matrix
 * (C, or a split's partial sums with alpha 1 and beta 0), guarded; its rows
 * and columns as the LAYOUT places them (tws_row, tws_store_row). */
template <int THREAD_M, int THREAD_N, int ROW_STEP, int LAYOUT = 0, int COL_STEP_T = 8>
static __host__ __device__ __forceinline__ void tws_epilogue(float *out, int ld, int m, int n,
                                                    float alpha, float beta, int m0, int n0,
                                                    int row0, int col0,
                                                    float acc[THREAD_M][THREAD_N]) {
  constexpr bool A_T = (LAYOUT & TWS_A_T) != 0, B_T = (LAYOUT & TWS_B_T) != 0;
  const int vec = ((uintptr_t)out % 16 == 0) && ld % 4 == 0;
  if constexpr (A_T || B_T) {
TWS_UNROLL
    for (int i = 0; i < THREAD_M; ++i) {
      const int row = m0 + tws_row<ROW_STEP, A_T>(row0, i);
      if (row >= m) break;
      tws_store_row<THREAD_N, B_T, COL_STEP_T>(out + (size_t)row * ld, vec, n, alpha, beta,
                                               n0 + col0, acc[i]);
    }
  } else {
    tws_epilogue_nn<THREAD_M, THREAD_N, ROW_STEP>(out, ld, m, n, alpha, beta, m0, n0, row0,
                                                  col0, vec, acc);
  }
}

#ifdef PG_HAVE_TMA
/* Split in clusters (TWS_SPLIT_CLUSTER): the cluster's blocks are the K
 * ranges of one tile, block r range r. Each puts its sums in its own
 * shared memory (the stage ring, all read by now: the TM x TN tile, rows
 * TN floats apart), and after the cluster's barrier block r adds up rows
 * r, r + splits, ... of the tile over the cluster's blocks, in range order
 * (the reduction kernel's order: the same bits), and writes them to C; a
 * second barrier keeps every block's shared memory until all have read it. */
template <int TM, int TN>
static __device__ __forceinline__ void tws_cluster_store(
    const pg_gemm_args &g, const tws_work &w, char *smem, int row0, int col0,
    float acc[tws_tile<TM, TN>::THREAD_M][tws_tile<TM, TN>::THREAD_N]) {
  enum { THREAD_M = tws_tile<TM, TN>::THREAD_M, THREAD_N = tws_tile<TM, TN>::THREAD_N };
  enum { CONSUMERS = tws_tile<TM, TN>::CONSUMERS, ROW_STEP = tws_tile<TM, TN>::ROW_STEP };
  float *const tile = (float *)smem;
  pg_named_barrier_sync(1, CONSUMERS); /* every consumer is done with the ring */
#pragma unroll
  for (int i = 0; i < THREAD_M; ++i)
#pragma unroll
    for (int j = 0; j < THREAD_N / 4; ++j)
      *(float4 *)(tile + (row0 + ROW_STEP * i) * TN + col0 + TWS_COL_STEP * j) =
          make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]);
  pg_cluster_sync_any(); /* the cluster's sums are all in place */
  const int m0 = w.tm * TM, n0 = w.tn * TN, splits = g.splits;
  const int rows = min(TM, g.m - m0);
  const int vec = ((uintptr_t)g.c % 16 == 0) && g.ldc % 4 == 0;
  for (int e = threadIdx.x;; e += CONSUMERS) {
    const int r = w.index + splits * (e / (TN / 4)), col = 4 * (e % (TN / 4));
    if (r >= rows) break;
    const float *const mine = tile + r * TN + col;
    float4 sum = pg_ld_cluster_f4(mine, 0);
    for (int q = 1; q < splits; ++q) {
      const float4 v = pg_ld_cluster_f4(mine, q);
      sum.x += v.x;
      sum.y += v.y;
      sum.z += v.z;
      sum.w += v.w;
    }
    const float s[4] = {sum.x, sum.y, sum.z, sum.w};
    float *const p = g.c + (size_t)(m0 + r) * g.ldc + n0 + col;
    if (vec && n0 + col + 3 < g.n) {
      float4 v = make_float4(g.alpha * s[0], g.alpha * s[1], g.alpha * s[2], g.alpha * s[3]);
      if (g.beta != 0.f) {
        const float4 c = *(const float4 *)p;
        v.x = fmaf(g.beta, c.x, v.x);
        v.y = fmaf(g.beta, c.y, v.y);
        v.z = fmaf(g.beta, c.z, v.z);
        v.w = fmaf(g.beta, c.w, v.w);
      }
      *(float4 *)p = v;
    } else {
#pragma unroll
      for (int t = 0; t < 4; ++t)
        if (n0 + col + t < g.n) {
          const float v = g.alpha * s[t];
          p[t] = g.beta == 0.f ? v : fmaf(g.beta, p[t], v);
        }
    }
  }
  /* No block leaves while another reads its sums (those reads are done:
   * their values are stored; nothing to release). */
  pg_cluster_sync_relaxed();
}

/* A producer thread's part in tws_cluster_store's two barriers (it wrote
 * nothing the cluster reads: relaxed); nothing in the other modes. */
template <int MODE> static __device__ __forceinline__ void tws_producer_leaves(void) {
  if constexpr (MODE == TWS_SPLIT_CLUSTER) {
    pg_cluster_sync_relaxed();
    pg_cluster_sync_relaxed();
  }
}

/* The sums of a stretch of work where they belong (c: the batch's C). */
template <int TM, int TN, int MODE, int LAYOUT = 0>
static __device__ __forceinline__ void tws_store(const pg_gemm_args &g, const tws_work &w,
                                                 char *smem, int row0, int col0,
                                                 float acc[tws_tile<TM, TN>::THREAD_M]
                                                          [tws_tile<TM, TN>::THREAD_N],
                                                 float *c) {
  enum { THREAD_M = tws_tile<TM, TN>::THREAD_M, THREAD_N = tws_tile<TM, TN>::THREAD_N };
  enum { ROW_STEP = tws_tile<TM, TN>::ROW_STEP };
  enum { COL_STEP_T = tws_tile<TM, TN>::LAYOUT == TWS_LAYOUT_THIN ? 4 : 8 };
  static_assert(LAYOUT == 0 || MODE == TWS_SPLIT_K, "a layout is read in the split-K mode");
  const int m0 = w.tm * TM, n0 = w.tn * TN;
  if constexpr (MODE == TWS_SPLIT_CLUSTER) {
    (void)m0, (void)n0, (void)c;
    tws_cluster_store<TM, TN>(g, w, smem, row0, col0, acc);
  } else if (MODE == TWS_WHOLE_TILES || w.dest == TWS_TO_C)
    tws_epilogue<THREAD_M, THREAD_N, ROW_STEP, LAYOUT, COL_STEP_T>(
        c, g.ldc, g.m, g.n, g.alpha, g.beta, m0, n0, row0, col0, acc);
  else if (w.dest == TWS_TO_SPLIT) /* added up in split order by the reduction */
    tws_epilogue<THREAD_M, THREAD_N, ROW_STEP, LAYOUT, COL_STEP_T>(
        g.partials + (size_t)w.index * (g.m - g.split_row0) * g.ldp, g.ldp, g.m - g.split_row0,
        g.n, 1.0f, 0.0f, m0 - g.split_row0, n0, row0, col0, acc);
  else /* a dense tile of its own, added up in block order by the fixup */
    tws_epilogue<THREAD_M, THREAD_N, ROW_STEP, LAYOUT, COL_STEP_T>(
        g.partials + (size_t)w.index * TM * TN, TN, min(TM, g.m - m0), min(TN, g.n - n0), 1.0f,
        0.0f, 0, 0, row0, col0, acc);
}

#endif

/* Stream-K's fixup's blocks (14). */
#define TWS_REDUCE_THREADS 256

/* ---- the host's side ------------------------------------------------------------- */

/* A tile shape as the configure functions need it: height, width, blocks
 * per SM, a stage's bytes and the boxes of its copies. */
typedef struct {
  int tile_m, tile_n, blocks_per_sm;
  size_t stage_bytes;
  pg_tma_boxes boxes;
} tws_shape;

/* The shape of the TM x TN tile, all of it from its tws_tile. */
#define TWS_SHAPE(tm, tn)                                                       \
  {tm, tn, tws_tile<tm, tn>::MIN_BLOCKS, tws_tile<tm, tn>::STAGE_BYTES,        \
   {TWS_TILE_K, tm, TWS_A_ROW_BYTES, tn, TWS_TILE_K, 0, 0, 1, 0, TWS_A_ROW_BYTES}}

/* The kernel on a call's layout (TWS_BATCHED with the ops: 4 to 7) for the
 * form of tile TM x TN, from tma_ws_layouts.cu; NULL for no such form. */
extern "C" const void *pg_tws_layout_kernel(int tile_m, int tile_n, int layout);

/* A block's shared memory at `stages`: its ring of the tile's stages. */
static inline size_t tws_shape_smem(const tws_shape *shape, int stages) {
  return pg_tma_ring_smem(stages, shape->stage_bytes, TWS_STAGE_SYNC_BYTES);
}

/* The shape's blocks an SM at `stages`: its own count, fewer where its
 * stages' shared memory fits fewer (the 128 x 128 tile at 4 stages: one). */
static inline long long tws_blocks_per_sm(const tws_shape *shape, int stages,
                                          const pg_device *device) {
  long long per_sm = shape->blocks_per_sm;
  const size_t smem = tws_shape_smem(shape, stages);
  if (smem > 0 && (long long)(device->smem_optin / smem) < per_sm)
    per_sm = (long long)(device->smem_optin / smem);
  return per_sm < 1 ? 1 : per_sm;
}

static inline long long tws_k_tiles(const pg_layout_args *args) {
  return ((long long)args->k + TWS_TILE_K - 1) / TWS_TILE_K;
}

/* One block per tile, or, where the tuning table asks for it, a persistent
 * grid of that many blocks per SM (the core caps it at what fits). K is not
 * split. */
static inline void tws_configure_whole_tiles(const tws_shape *shape, const void *kernel,
                                             pg_layout_args *args, const pg_tuning *row,
                                             pg_kernel_launch *launch) {
  const pg_tuning env = pg_tuning_with_env(row);
  const pg_tuning *tuning = &env;
  const long long tiles = (((long long)args->m + shape->tile_m - 1) / shape->tile_m) *
                          (((long long)args->n + shape->tile_n - 1) / shape->tile_n);
  args->group_m = tuning->tma_ws_group_m;
  args->splits = 1;
  args->k_tiles_per_split = (int)tws_k_tiles(args);
  launch->kernel = kernel;
  launch->grid_x = tiles > 0 ? tiles : 1;
  launch->grid_y = 1;
  launch->tma = &shape->boxes;
  launch->persistent_blocks_per_sm = tuning->tma_ws_blocks_per_sm;
}

/* A call of another layout (pg_other_layout): the tile's kernel on it
 * (tma_ws_layouts.cu), which reads the operands where they are (the entry's
 * check has held them to TMA's rules), whole tiles, no persistent grid,
 * the batch's GEMMs on grid y (a loop past 65535). */
#define TWS_MAX_GRID_Y 65535
static inline void tws_configure_layout(const tws_shape *shape, pg_layout_args *args,
                                        const pg_tuning *row, pg_kernel_launch *launch) {
  const int layout = TWS_BATCHED | (args->op_a ? TWS_A_T : 0) | (args->op_b ? TWS_B_T : 0);
  tws_configure_whole_tiles(shape, pg_tws_layout_kernel(shape->tile_m, shape->tile_n, layout),
                            args, row, launch);
  launch->persistent_blocks_per_sm = 0;
  launch->grid_y = args->batch < TWS_MAX_GRID_Y ? args->batch : TWS_MAX_GRID_Y;
}

/* ---- what the registry says of the flagship's forms (src/kernels/entry.h) ---- */

/* The TM x TN tile's shared memory a block, by stages (an entry's smem_bytes). */
template <int TM, int TN> static inline size_t tws_smem(int stages) {
  return pg_tma_ring_smem(stages, tws_tile<TM, TN>::STAGE_BYTES, TWS_STAGE_SYNC_BYTES);
}

#define TWS_TILE_INFO(tm, tn) \
  .tile_m = tm, .tile_n = tn, .tile_k = TWS_TILE_K, .threads = tws_tile<tm, tn>::THREADS

/* The kernel's instance by tile and mode, as the SASS names it. */
#define TWS_INSTANCE(tile_m, tile_n, mode) \
  "pg_tma_ws_kernel<" PG_STRINGIFY(tile_m) ", " PG_STRINGIFY(tile_n) ", " #mode ">"

/* The TMA kernels' rules, and setmaxnreg moving registers from the producer
 * warpgroup to the consumers (USETMAXREG, sm_90a code). */
#define TWS_RULES \
  PG_RULES_TMA_COMMON, \
      {PG_SM90_UP, PG_MUST, "USETMAXREG", "setmaxnreg is gone: the consumers keep the launch's registers (128 or 168)"}

#endif
