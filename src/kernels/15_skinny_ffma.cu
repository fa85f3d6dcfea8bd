/* 15 skinny_ffma — strict FP32 GEMM where one side of C is short (M or N
 * of a few): the problem is then a few matrix-vector products, bound by
 * reading the large operand, which tiles of 64 or 128 rows would mostly
 * spend on padding. The large operand is streamed once a chunk of the
 * short side, straight from global memory (16-byte loads where the layout
 * allows, many in flight a thread, evict-first where one chunk of the
 * short side reads it: read once, its lines leave L2 before others', which
 * took the GEMV at 1 x 4096 x 4096 from 25.4 to 22.4 us on the H200 behind
 * bench's L2 flush), the small one staged in shared memory,
 * FFMA in a fixed order; K is split into short ranges so that the blocks
 * fill SK_FILL_BLOCKS an SM (a block's loads in flight are what bounds the
 * speed), the ranges' sums added in split order by reduce_splits.cu
 * (deterministic), or, on sm_90 where at most PG_CLUSTER_MAX ranges' blocks
 * all fit at once in clusters, by the blocks of a tile's ranges through
 * their shared memory (sk_cluster_sum): one kernel, no planes.
 *
 * Two forms, by which side is short (any shape runs, a long side is only
 * slow: each chunk of the short side reads the large operand again), and
 * a third for one row (below):
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
 *   RING (M > N of 1 to 3, A's rows 16-byte aligned, K a multiple of 4, B
 *     dense and aligned, the blocks at least the SMs): a block takes 4 or 2
 *     rows of A (sk_ring_geometry) and all of K, its warps K's steps in
 *     turn; a lane copies 4 consecutive K of each row a step into a ring
 *     of 3 steps of its own in shared memory (cp.async: loads in flight
 *     while it computes; A's lines evict-first in L2, as the other forms'
 *     .cs loads: 4096 x 1 x 4096 22.2 us where its plain copies took
 *     25.1), B's step from global memory in 16-byte loads a step ahead;
 *     the lanes' sums in a butterfly, the warps' in warp order. One
 *     kernel, no split of K between blocks (on the H200 1000 x 1 x 16384
 *     24.9 us where the COLS form's 32 ranges and their reduction took
 *     28.7; bench/results/short-sides/README.md).
 *   BAND (M > N of 4 to 8, A's rows 16-byte aligned, K a multiple of 4, B
 *     any layout): a block takes 16 rows of A and all of K (K split into
 *     ranges where the blocks are at most half the SMs), its warps K's steps
 *     of 32 in turn; a lane copies 4 consecutive K of 4 rows a step into
 *     its warp's ring of 4 steps, and a share of the step's B beside them
 *     (sk_cols_band). On the H200 4096 x 8 x 4096 in 24.7 us where the
 *     RING form of those columns took 26.1, 4096 x 4 x 4096 23.2 against
 *     25.8 (bench/results/short-sides/README.md).
 *   RING ROWS (M of 1 to 8, B's and A's rows 16-byte aligned, N and K
 *     multiples of 4; 1 to 4 rows only where its blocks are no more than
 *     the SMs, else the GEMV below): the same ring turned to a short M. A
 *     block takes 32 columns of B and all of K (K split into ranges where
 *     the blocks are at most half the SMs), its warps the K steps of 16
 *     rows of B in turn; a lane copies 4 rows of its 4 columns a step into
 *     its warp's ring of 4 steps (6 at 2 and 4 rows), and A's values of
 *     the step beside them (sk_rows_ring); chunks of 1, 2, 4, 6 or 8
 *     rows. On the H200 8 x 4096 x 4096 in 23.5 us where the split ROWS
 *     form took 29.0, 4 x 4096 x 4096 23.0 where the GEMV took 24.7
 *     (bench/results/short-sides/README.md).
 * Block b of the grid: tile b % tiles (block of the long side fastest, then
 * the chunk), K range b / tiles; in clusters tile b / S, range b % S (a
 * tile's S ranges one cluster).
 * One to four rows (M of 1 to 4) against a long enough N, where RING ROWS
 * does not run, take a third form with no split of K between blocks, so
 * no second kernel:
 *   GEMV: a block takes 4L columns of B (L = 8, 16 or 32 lanes a row, the
 *     narrowest whose blocks fit SK_GEMV_BLOCKS an SM, so that all are
 *     resident at once, up to N of 33792 on 132 SMs; 4 where 8 would leave
 *     too few blocks) and all of K; its 256 / L groups of L threads take
 *     SK_GEMV_ROWS consecutive rows of B a step each (all of a step's loads
 *     in flight; 32 / R rows for R = 2 or 4 rows of A, A's values of the
 *     step in flight beside them), and their sums are added through shared
 *     memory at the end in a fixed order, a row at a time. The second
 *     kernel of a split K (its launch and its read of the planes) cost 5
 *     of 26 us at 1 x 4096 x 4096 on the H200 (Nsight Compute, clocks
 *     locked), where cuBLAS runs one kernel; 2 to 4 rows took 5-18 % less time
 *     than their split chunks at N x K of 4096^2 to 8192^2 (2 x 4096 x 4096
 *     23.6 us against 25.4; bench/results/short-sides/README.md). One row
 *     against a dense B whose rows are off 16 bytes reads them in aligned
 *     16-byte loads all the same, blocks of 4(L - 1) columns, a thread's
 *     sums kept apart by the rows' shift (sk_gemv_realigned): 1 x 3001 x
 *     8192 35.2 us where 4-byte loads took 41.0, used where its blocks are
 *     at most the SMs at 8 lanes, or at 16 and 32 lanes (configure).
 *
 * auto's model of it (the launch's speed_share): its form's rate at a full
 * chunk (the tuning's skinny_rate_percent, one a form), times the short
 * side over its chunks' width, a chunk after the first at a share of the
 * first's cost, the whole under a cap (src/tuning.h). The registry's tile is the two forms'
 * widest chunks (16 rows, 8 columns) and K's split unit.
 * Measured on the H200: bench/results/short-sides/README.md.
 *
 *   pipegemm bench --shapes bench/shapes/skinny.txt --variant cublas,auto,skinny_ffma
 */
#include <type_traits>

#include "internal.h"
#include "kernels/entry.h"
#include "kernels/ptx.cuh"

PG_KERNELS_BEGIN

#define SK_THREADS 256
/* ROWS: warps along K (a block's rows of B are dealt out to them a batch at
 * a time), rows of B a batch (a thread's 16-byte loads in flight
 * together), B's columns a block (4 a thread), K of A's tile in shared
 * memory, the widest chunk of the short side. */
#define SK_ROWS_WARPS (SK_THREADS / 32)
#define SK_ROWS_BATCH 8
#define SK_ROWS_WIDTH 128
#define SK_ROWS_TILE_K 512
#define SK_ROWS_MAX_CHUNK 16
/* COLS: rows of A a warp (a block SK_COLS_BLOCK_ROWS), K of B's tile in
 * shared memory (a lane's 16-byte loads of A over all of it are in flight
 * together), the widest chunk of B's columns. */
#define SK_COLS_WARP_ROWS 4
#define SK_COLS_BLOCK_ROWS (SK_THREADS / 32 * SK_COLS_WARP_ROWS)
#define SK_COLS_TILE_K 512
#define SK_COLS_MAX_CHUNK 8
/* RING (COLS where A's rows take 16-byte copies, K is whole vectors, B is
 * dense and N <= SK_RING_MAX_CHUNK): K a warp takes a step (4 a lane), the
 * widest N it takes. By N (sk_ring_geometry): rows of A a warp, the ring's
 * stages (a lane's 16-byte copies of a row in flight: stages - 1 steps),
 * blocks an SM its registers are held to. It runs where its blocks are at
 * least the SMs (fewer: the split COLS form). Measured on the H200
 * (bench/results/short-sides/README.md): 2 and 3 columns ran 4096 x N x 4096 in
 * 22.7 and 23.2 us in blocks of 2 rows (their ring 24 KB a block) where
 * blocks of 4 rows took 23.2 and 24.0. Wider N takes the BAND form
 * (below): the RING form of 4 to 8 columns (its B handed out through
 * shared memory past 4) took up to 1.24 x its time, at 23 of 27 shapes
 * longer. */
#define SK_RING_STEP 128
#define SK_RING_MAX_CHUNK 3
typedef struct {
  int rows, stages, blocks;
} sk_ring_shape;
static __host__ __device__ constexpr sk_ring_shape sk_ring_geometry(int cn) {
  return cn == 1 ? sk_ring_shape{4, 3, 4} : sk_ring_shape{2, 3, 4};
}
/* A RING form's shared memory: its warps' rings. */
static __host__ __device__ constexpr size_t sk_ring_smem(int cn) {
  return sizeof(float4) * (SK_THREADS / 32) * sk_ring_geometry(cn).stages *
         sk_ring_geometry(cn).rows * 32;
}
/* A RING form's blocks for M rows. */
static long long sk_ring_blocks(long long m, int cn) {
  return (m + sk_ring_geometry(cn).rows - 1) / sk_ring_geometry(cn).rows;
}
/* RING ROWS (M <= SK_RROW_MAX_ROWS, B's and A's rows in 16-byte copies):
 * columns of B a block (8 lanes a row, 128 bytes), rows of B a warp's step
 * (4 a lane), the ring's steps (sk_rrow_stages: 6 at 2 and 4 rows), blocks
 * an SM (the bound its registers are compiled to; its shared memory,
 * 66-108 KiB, fits 2 on the H200, 1 at 2 and 4 rows on an A100), the
 * widest chunk of rows, the shortest K range of a split (2 steps a warp).
 * Measured on the H200 (bench/results/short-sides/README.md): 8 x 4096 x 4096 in
 * 23.5 us where the split ROWS form took 29.0; K split only to fill the
 * SMs, a block an SM (at 4096 columns 128 blocks over all of K 23.4 us,
 * where 2 ranges a tile in clusters took 25.1 and 4 took 27.3, each warp
 * a slice of K);
 * 6 and 8 stages within 3 % of 4 either way (faster at 2-4 rows and
 * 64 MB, slower at 6-8 rows and 134 MB and more), so 2 and 4 rows take
 * 6 (4 x 2048 x 8192 23.0 us against 23.5). */
#define SK_RROW_WIDTH 32
#define SK_RROW_STEP 16
#define SK_RROW_STAGES 4
#define SK_RROW_BLOCKS 2
#define SK_RROW_MAX_ROWS 8
#define SK_RROW_MIN_RANGE (SK_THREADS / 32 * 2 * SK_RROW_STEP)
/* Its ring's steps for MR rows. */
static __host__ __device__ constexpr int sk_rrow_stages(int mr) {
  return mr == 2 || mr == 4 ? 6 : SK_RROW_STAGES;
}
/* Its shared memory: the warps' rings (B's step and A's values of it;
 * after the loop the warps' sums, and in clusters the block's). */
static __host__ __device__ constexpr size_t sk_rrow_smem(int mr) {
  return (size_t)(SK_THREADS / 32) * sk_rrow_stages(mr) * 16 *
         (SK_RROW_STEP * SK_RROW_WIDTH / 4 + mr * SK_RROW_STEP / 4);
}
static_assert(sk_rrow_smem(1) >= sizeof(float) * (SK_THREADS / 32 + 1) * 1 * SK_RROW_WIDTH &&
                  sk_rrow_smem(SK_RROW_MAX_ROWS) >=
                      sizeof(float) * (SK_THREADS / 32 + 1) * SK_RROW_MAX_ROWS * SK_RROW_WIDTH,
              "the sums fit in the rings");
/* Its column blocks for N. */
static __host__ __device__ constexpr long long sk_rrow_blocks(long long n) {
  return (n + SK_RROW_WIDTH - 1) / SK_RROW_WIDTH;
}
/* BAND (short N of SK_BAND_MIN_COLS to SK_BAND_MAX_COLS where A's rows
 * take 16-byte copies and K is whole vectors; B any layout): rows of A a
 * block (16: 4 a lane, the lanes of a warp 4 groups of rows by 8 of K),
 * K a warp's step (4 a lane), the ring's steps, blocks an SM (the bound
 * its registers, 85-128 a thread, are compiled to; its shared memory,
 * 84-100 KiB, fits 2 on the H200), the widest N, the shortest K range of
 * a split (2 steps a warp). A form's kernel is named by -(SK_BAND_CODE +
 * N).
 * Measured on the H200 (bench/results/short-sides/README.md), beside the RING
 * form that took 4-8 columns before (B in 4-byte copies): faster at 23 of
 * 27 shapes, 4096 x 8 x 4096 24.7 us against 26.1, 2048 x 4 x 16384 41.0
 * against 50.5; slower at 4, among them 3000 x 8 x 12288 (56.8 against
 * 53.7) and 6144 x 4 x 6144 (47.5 against 45.8), which a dense B's 16-byte
 * copies since took to 49.4 and 45.0 (sk_cols_band). Two blocks an SM on
 * the H200 (228 KiB an SM), one on an A100 (164) past 4 columns. */
#define SK_BAND_ROWS 16
#define SK_BAND_STEP 32
#define SK_BAND_STAGES 4
#define SK_BAND_BLOCKS 2
#define SK_BAND_MIN_COLS 4
#define SK_BAND_MAX_COLS 8
#define SK_BAND_CODE 1000
#define SK_BAND_MIN_RANGE (SK_THREADS / 32 * 2 * SK_BAND_STEP)
/* The floats a copy of a BAND step's B moves for these arguments, with
 * `blocks` blocks of which `slots` are resident at once: 4 (16-byte
 * copies) where B is dense and 16-byte aligned at 4 or 8 columns, 2 where
 * it is dense and 8-byte aligned at an even N, where the blocks fit one
 * wave, and the 16-byte copies past it too where K is at least
 * SK_BAND_VECTOR_MIN_K; else 1 (4-byte copies). Measured on the H200 over
 * 66 shapes of 4, 6 and 8 columns in four runs (bench/results/
 * short-sides/README.md, "How each form was chosen"; the rule fitted to all of
 * them): in one wave the vectors were faster at 23 of 28 (4.4 % as a
 * geometric mean, up to 15 %: 2500 x 8 x 4000 19.5 us against 22.9),
 * within 0.5 % at 4, 1.2 % slower at 4096 x 6 x 4096; past one wave with K
 * below 4096 slower at 17 of 25 (2.8 %, up to 13 %: 5200 x 6 x 2000),
 * faster at 5 (up to 3 %); with K of 4096 or more the 16-byte copies
 * faster at 8 of 10 (1.8 %, up to 6 %: 16384 x 8 x 4096 75.2 against
 * 79.7), the 8-byte ones at none of 3 (up to 6 % slower). Measured, not
 * explained. */
#define SK_BAND_VECTOR_MIN_K 4096
static int sk_band_b_vector(const pg_gemm_args *g, long long blocks, long long slots) {
  if (g->ldb != g->n) return 1;
  const bool one_wave = blocks <= slots;
  if (g->n % 4 == 0 && (uintptr_t)g->b % 16 == 0 && (one_wave || g->k >= SK_BAND_VECTOR_MIN_K))
    return 4;
  if (g->n % 2 == 0 && (uintptr_t)g->b % 8 == 0 && one_wave) return 2;
  return 1;
}

/* A BAND step's B: its SK_BAND_STEP rows, a row's N floats at the start of
 * 4 or 8 (pitch), 4 floats more every 4 rows (so that the lanes' 16-byte
 * reads, rows 4 apart, fall in different banks). */
static __host__ __device__ constexpr int sk_band_pitch(int cn) { return cn <= 4 ? 4 : 8; }
static __host__ __device__ constexpr int sk_band_b_at(int cn, int row) {
  return row * sk_band_pitch(cn) + row / 4 * 4;
}
static __host__ __device__ constexpr int sk_band_b_floats(int cn) {
  return sk_band_b_at(cn, SK_BAND_STEP);
}
/* Its shared memory: the warps' rings, a step A's 16 x SK_BAND_STEP and B's
 * step (after the loop the warps' sums, and in clusters the block's). */
static __host__ __device__ constexpr size_t sk_band_smem(int cn) {
  return sizeof(float) * (SK_THREADS / 32) * SK_BAND_STAGES *
         (SK_BAND_ROWS * SK_BAND_STEP + sk_band_b_floats(cn));
}
static_assert(sk_band_smem(SK_BAND_MIN_COLS) >=
                  sizeof(float) * (SK_THREADS / 32 + 1) * SK_BAND_ROWS * SK_BAND_MAX_COLS,
              "the sums fit in the rings");
/* Its row blocks for M. */
static __host__ __device__ constexpr long long sk_band_blocks(long long m) {
  return (m + SK_BAND_ROWS - 1) / SK_BAND_ROWS;
}
/* K is split in units of SK_SPLIT_K (a batch of every warp of the short-M
 * form), so that the blocks fill SK_FILL_BLOCKS an SM: measured on the
 * H200 (a kernel of these forms' design timed apart: 1024 blocks of short
 * ranges ran 1.44-1.55 x as fast as 256 blocks of long ones at
 * 1 x 4096 x 4096, 1.14 x at 4096 x 1 x 4096), the split adds only a read
 * of the planes, small beside the long operand. A range is at least
 * SK_MIN_ROWS_RANGE of K (short M; times half the chunk's rows from 4 on:
 * a wide chunk's block spends more on its sums, and 16 rows ran 1.07 x as
 * fast in ranges of 1024 as of 512) or SK_COLS_TILE_K (short N). */
#define SK_SPLIT_K (SK_ROWS_WARPS * SK_ROWS_BATCH)
#define SK_FILL_BLOCKS 8
#define SK_MIN_ROWS_RANGE 128
/* GEMV: rows of B a thread a step (their loads in flight together), blocks
 * an SM (registers for a step's loads: up to 128 a thread), and the fewest
 * blocks it runs, in percent of the SMs (fewer: the split short-M form).
 * Measured on the H200 with each width forced (23:58 UTC, x cuBLAS):
 * 128-byte rows (8 lanes) beat 64-byte ones (4) wherever they leave 94
 * blocks or more (1x3000x8192: 0.99 against 0.86, 1x4096x16384 1.00
 * against 0.86, 1x4096x4096 0.90 against 0.83 at 128 blocks), not at 64
 * (1x2048x16384: 0.82 against 0.94); wider rows than needed to fit the
 * blocks lose (16 lanes at 1x4096x4096 0.73, 32 lanes 0.52). Where the
 * GEMV gives way to the split form (fewer than 60 % of the SMs at 4 lanes,
 * N below about 1270 on 132 SMs) was not measured: the same figure is
 * taken for it. auto's model of skinny_ffma (its rule's blocks an SM and
 * call cost, src/tuning.c) was fitted on the split form and not refitted
 * for the GEMV; at M = 1 no other candidate comes near it. */
#define SK_GEMV_ROWS 16
#define SK_GEMV_BLOCKS 2
#define SK_GEMV_MIN_FILL_PERCENT 60
/* Blocks an SM a form is compiled for: registers enough for a batch's
 * loads to be issued before its first product (else ptxas interleaves
 * them, one or two in flight): 64 registers a thread at 4, 80 at 3, 128 at
 * 2 (the widest short-M chunks and every short-N form, rows 0). */
static constexpr int sk_blocks_per_sm(int rows) {
  return rows == 1 || rows == 2 ? 4 : rows == 4 ? 3 : 2;
}

/* Where block b works: its tile (block of the long side, chunk of the
 * short side) and K range. */
struct sk_work {
  long long first; /* ROWS: B's first column; COLS: A's first row */
  long long chunk; /* the short side's first index (row of A, column of B) */
  long long k0, k1;
  int split;
};

template <bool CLUSTER>
static __device__ __forceinline__ sk_work sk_where(const pg_gemm_args &g, long long blocks_x,
                                                   long long width, int chunk) {
  const long long chunks = (((g.m <= g.n) ? g.m : g.n) + chunk - 1) / chunk;
  const long long tiles = blocks_x * chunks;
  const long long b = blockIdx.x;
  sk_work w;
  /* In clusters a tile's ranges are consecutive blocks (its cluster). */
  w.split = (int)(CLUSTER ? b % g.splits : b / tiles);
  const long long tile = CLUSTER ? b / g.splits : b % tiles;
  w.first = (tile % blocks_x) * width;
  w.chunk = (tile / blocks_x) * chunk;
  const long long per = g.splits > 1 ? (long long)g.k_tiles_per_split * SK_SPLIT_K : g.k;
  w.k0 = w.split * per;
  w.k1 = w.k0 + per < g.k ? w.k0 + per : g.k;
  return w;
}

/* C[m][n] = alpha v, plus beta times C where beta != 0. */
static __device__ __forceinline__ void sk_store_c(const pg_gemm_args &g, long long m, long long n,
                                                  float v) {
  float *const c = g.c + (size_t)m * g.ldc + n;
  *c = g.beta == 0.f ? g.alpha * v : fmaf(g.beta, *c, g.alpha * v);
}

/* One sum of C[m][n] out: to the range's plane where K is split (alpha and
 * beta are the reduction's), else to C. */
static __device__ __forceinline__ void sk_store(const pg_gemm_args &g, int split, long long m,
                                                long long n, float v) {
  if (g.splits > 1) {
    g.partials[((size_t)split * g.m + m) * g.ldp + n] = v;
    return;
  }
  sk_store_c(g, m, n, v);
}

/* In clusters (a tile's ranges, one a block, sm_90): each block has put
 * its range's sums for the tile, `count` floats, at `mine` in its shared
 * memory; block r of the cluster adds up elements r, r + S, ... over the S
 * blocks in split order (the same bits on every run) and `out(e, sum)`
 * writes element e to C. A block leaves once the cluster's reads of its
 * shared memory are done. */
template <typename Out>
static __device__ __forceinline__ void sk_cluster_sum(const pg_gemm_args &g, const sk_work &w,
                                                      const float *mine, int count, Out out) {
#ifdef PG_HAVE_TMA
  pg_cluster_sync(); /* every block's sums are in place */
  for (int e = w.split + g.splits * threadIdx.x; e < count; e += g.splits * SK_THREADS) {
    float sum = pg_ld_cluster_f32(mine + e, 0);
    for (int q = 1; q < g.splits; ++q) sum += pg_ld_cluster_f32(mine + e, q);
    out(e, sum);
  }
  pg_cluster_sync_relaxed(); /* the others' reads of this block's sums are done */
#else
  /* No clusters before sm_90: one range alone is added up (the plan never
   * launches this instance there; a split would trap). */
  (void)w;
  if (g.splits > 1) __trap();
  __syncthreads();
  for (int e = threadIdx.x; e < count; e += SK_THREADS) out(e, mine[e]);
#endif
}

/* Four floats of a row from global memory, of which the first `len`
 * (1 to 4) are the operand's: one 16-byte load where VEC (the kernel's
 * layout allows one, and then len is 4), else four loads, those past len
 * of the last that is; STREAM: evict-first (ld.global.cs), for an operand
 * read once. No load is conditional, so that a thread's loads of
 * a batch are all issued before the first product waits on one; the
 * caller zeroes what lies outside the operand. */
template <bool STREAM, typename T> static __device__ __forceinline__ T sk_ld(const T *p) {
  return STREAM ? __ldcs(p) : __ldg(p);
}
template <bool VEC, bool STREAM = false>
static __device__ __forceinline__ float4 sk_load4(const float *src, int len) {
  if constexpr (VEC) return sk_ld<STREAM>((const float4 *)src);
  float4 v;
  v.x = sk_ld<STREAM>(src);
  v.y = sk_ld<STREAM>(src + (len > 1 ? 1 : 0));
  v.z = sk_ld<STREAM>(src + (len > 2 ? 2 : len - 1));
  v.w = sk_ld<STREAM>(src + (len > 3 ? 3 : len - 1));
  if (len < 2) v.y = 0.f;
  if (len < 3) v.z = 0.f;
  if (len < 4) v.w = 0.f;
  return v;
}

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

/* The sums of a GEMV's groups for the block's 4L positions, a thread's 4
 * in `acc`: added through shared memory in group order, four groups a
 * thread, then the slices of four; thread p < 4L gets position p's total
 * (the others 0). Calls one after another need no barrier between them. */
template <int L> static __device__ __forceinline__ float sk_gemv_groups(const float (&acc)[4]) {
  enum { G = SK_THREADS / L, W = 4 * L, SLICES = SK_THREADS / W };
  static_assert(G == 4 * SLICES, "a slice is four groups");
  __shared__ __align__(16) float sums[G][W];
  __shared__ float slices[SLICES][W];
  const int lane = threadIdx.x % L, group = threadIdx.x / L;
  *(float4 *)&sums[group][4 * lane] = make_float4(acc[0], acc[1], acc[2], acc[3]);
  __syncthreads();
  {
    const int c = threadIdx.x % W, slice = threadIdx.x / W;
    slices[slice][c] = ((sums[4 * slice][c] + sums[4 * slice + 1][c]) + sums[4 * slice + 2][c]) +
                       sums[4 * slice + 3][c];
  }
  __syncthreads();
  float v = 0.f;
  if (threadIdx.x < W) {
    v = slices[0][threadIdx.x];
#pragma unroll
    for (int u = 1; u < SLICES; ++u) v += slices[u][threadIdx.x];
  }
  return v;
}

/* The GEMV's sums of row m of C for the block's 4L columns, a thread's 4
 * in `acc` (sk_gemv_groups), stored. */
template <int L>
static __device__ __forceinline__ void sk_gemv_sum(const pg_gemm_args &g, long long m,
                                                   const float (&acc)[4]) {
  const float v = sk_gemv_groups<L>(acc);
  if (threadIdx.x < 4 * L) {
    const long long col = (long long)blockIdx.x * (4 * L) + threadIdx.x;
    if (col < g.n) sk_store(g, 0, m, col, v);
  }
}

/* GEMV: C[0][n] for the block's 4L columns, over all of K. Group q of L
 * threads (q = thread / L) takes rows k0 .. k0 + SK_GEMV_ROWS - 1 of B,
 * k0 = SK_GEMV_ROWS (q + j 256 / L) for j = 0, 1, ...; a row past K reads
 * the last and its product is zeroed (a and b both, so that an infinity
 * there adds no NaN). The groups' sums are added in group order
 * (sk_gemv_sum). */
template <int L, bool VEC>
static __device__ __forceinline__ void sk_gemv(const pg_gemm_args g) {
  enum { G = SK_THREADS / L, W = 4 * L, U = SK_GEMV_ROWS };
  const int lane = threadIdx.x % L, group = threadIdx.x / L;
  const long long n = (long long)blockIdx.x * W + 4 * lane;
  const int cols = g.n - n < 4 ? (int)(g.n - n) : 4; /* <= 0: past N, reads column 0 */
  const float *const b_col = g.b + (cols > 0 ? n : 0);
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (long long k0 = (long long)group * U; k0 < g.k; k0 += (long long)G * U) {
    float4 b[U];
    float a[U];
#pragma unroll
    for (int j = 0; j < U; ++j) {
      const long long kk = k0 + j < g.k ? k0 + j : g.k - 1;
      b[j] = sk_load4<VEC, true>(b_col + (size_t)kk * g.ldb, cols > 0 ? cols : 1);
      a[j] = __ldg(g.a + kk);
    }
#pragma unroll
    for (int j = 0; j < U; ++j)
      if (k0 + j >= g.k || cols <= 0) a[j] = 0.f, b[j] = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int j = 0; j < U; ++j) {
      acc[0] = fmaf(a[j], b[j].x, acc[0]);
      acc[1] = fmaf(a[j], b[j].y, acc[1]);
      acc[2] = fmaf(a[j], b[j].z, acc[2]);
      acc[3] = fmaf(a[j], b[j].w, acc[3]);
    }
  }
  sk_gemv_sum<L>(g, 0, acc);
}

/* The GEMV of one row where B is dense (ldb = N) but its rows are not
 * 16-byte aligned (N, or B's address, no multiple of 4 floats:
 * 1 x 3001 x 8192), read in aligned 16-byte loads all the same, each
 * miss in L2 fetching its whole 128-byte line (pg_ld_stream_line): lane l of
 * a group loads the 4 floats 4l on from the 16-byte boundary at or below
 * row k's column c0 (the block's first), columns c0 - s + 4l .. + 3 where
 * s = (B's address in floats + k N + c0) % 4, the row's shift. Rows k0 + j
 * of a step (k0 a multiple of 4) have the same shift for the same j % 4,
 * so a thread keeps four sets of sums, set t for rows j % 4 = t, of shift
 * s_t = (s_0 + t N) % 4; the block's W = 4(L - 1) columns are read off
 * the sets' totals at the end, column c0 + i from position i + s_t of set
 * t (i + s_t < 4L), the sets added in order. A load that would reach
 * outside B (the 16 bytes that hold B's first float, where B starts off a
 * boundary, and those that hold its last, where it ends off one) is not
 * made: its floats of B (up to 3 of row 0's first and of row K - 1's
 * last) are added to their columns at the end. Positions that fall outside
 * the block's columns hold other columns' products, and are not read. */
template <int L> static __device__ __forceinline__ void sk_gemv_realigned(const pg_gemm_args g) {
  enum { G = SK_THREADS / L, W = 4 * (L - 1), U = SK_GEMV_ROWS };
  static_assert(U % 4 == 0, "a step's first row is a multiple of 4: its rows' shifts repeat");
  const int lane = threadIdx.x % L, group = threadIdx.x / L;
  const long long c0 = (long long)blockIdx.x * W;
  const uintptr_t first = (uintptr_t)g.b, end = (uintptr_t)(g.b + (size_t)g.k * g.n);
  /* The first and last whole 16 bytes of B (K N >= 4L floats: configure). */
  const uintptr_t lo = (first + 15) & ~(uintptr_t)15, hi = (end - 16) & ~(uintptr_t)15;
  float acc[4][4] = {};
  /* A step of rows k0 .. k0 + U - 1. EDGE: it holds row 0 or K - 1, or
   * rows past K (read as row K - 1): each load checked against B's bounds,
   * those outside not made and their products zeroed (a and b both, so
   * that an infinity there adds no NaN); otherwise every load made as it
   * is, all of the step's in flight before the first product. */
  const auto step = [&](long long k0, auto edge) {
    float4 b[U];
    float a[U];
    bool in[U];
#pragma unroll
    for (int j = 0; j < U; ++j) {
      const long long kk = !decltype(edge)::value || k0 + j < g.k ? k0 + j : g.k - 1;
      const uintptr_t at =
          ((uintptr_t)(g.b + (size_t)kk * g.n + c0) & ~(uintptr_t)15) + 16 * (uintptr_t)lane;
      in[j] = !decltype(edge)::value || (k0 + j < g.k && at >= lo && at <= hi);
      b[j] = pg_ld_stream_line((const float4 *)(in[j] ? at : lo));
      a[j] = __ldg(g.a + kk);
    }
    if constexpr (decltype(edge)::value) {
#pragma unroll
      for (int j = 0; j < U; ++j)
        if (!in[j]) a[j] = 0.f, b[j] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int j = 0; j < U; ++j) {
      float(&s)[4] = acc[j % 4];
      s[0] = fmaf(a[j], b[j].x, s[0]);
      s[1] = fmaf(a[j], b[j].y, s[1]);
      s[2] = fmaf(a[j], b[j].z, s[2]);
      s[3] = fmaf(a[j], b[j].w, s[3]);
    }
  };
  for (long long k0 = (long long)group * U; k0 < g.k; k0 += (long long)G * U) {
    if (k0 > 0 && k0 + U < g.k)
      step(k0, std::false_type{});
    else
      step(k0, std::true_type{});
  }
  __shared__ float sets[4][4 * L];
#pragma unroll
  for (int t = 0; t < 4; ++t) {
    const float v = sk_gemv_groups<L>(acc[t]);
    if (threadIdx.x < 4 * L) sets[t][threadIdx.x] = v;
  }
  __syncthreads();
  const long long col = c0 + threadIdx.x;
  if (threadIdx.x < W && col < g.n) {
    const int s0 = (int)((first / sizeof(float)) % 4), n4 = (int)(g.n % 4);
    float v = sets[0][threadIdx.x + s0];
#pragma unroll
    for (int t = 1; t < 4; ++t) v += sets[t][threadIdx.x + (s0 + t * n4) % 4];
    const long long head = (long long)((lo - first) / sizeof(float));
    const long long tail = (long long)((end - (hi + 16)) / sizeof(float));
    if (col < head) v = fmaf(g.a[0], g.b[col], v);
    if (col >= g.n - tail) v = fmaf(g.a[g.k - 1], g.b[(size_t)(g.k - 1) * g.n + col], v);
    sk_store(g, 0, 0, col, v);
  }
}

/* The GEMV of MR rows (2 or 4; M of 2 to 4, the narrowest that holds M):
 * the same walk of B, U = 32 / MR rows of B a step, so that a step's loads
 * of B and of A's MR x U values are all in flight together in the
 * registers two blocks an SM leave; VEC: B and A both in 16-byte loads
 * (A's rows allow them and K is whole vectors, as U is and so each step's
 * k0: sk_gemv_vec), else both a float at a time; rows past M read row
 * M - 1 and are not stored. The rows' sums are added up one row after
 * another. One row stays sk_gemv, whose loads of A go beside B's in one
 * loop: as an instance of this function it was scheduled otherwise. */
template <int L, int MR, bool VEC>
static __device__ __forceinline__ void sk_gemv_rows(const pg_gemm_args g) {
  enum { G = SK_THREADS / L, W = 4 * L, U = 32 / MR };
  static_assert(U % 4 == 0, "a step's K is whole vectors of A");
  const int lane = threadIdx.x % L, group = threadIdx.x / L;
  const long long n = (long long)blockIdx.x * W + 4 * lane;
  const int cols = g.n - n < 4 ? (int)(g.n - n) : 4; /* <= 0: past N, reads column 0 */
  const float *const b_col = g.b + (cols > 0 ? n : 0);
  float acc[MR][4];
#pragma unroll
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = 0.f;
  for (long long k0 = (long long)group * U; k0 < g.k; k0 += (long long)G * U) {
    float4 b[U];
    float a[MR][U];
#pragma unroll
    for (int j = 0; j < U; ++j) {
      const long long kk = k0 + j < g.k ? k0 + j : g.k - 1;
      b[j] = sk_load4<VEC, true>(b_col + (size_t)kk * g.ldb, cols > 0 ? cols : 1);
    }
#pragma unroll
    for (int r = 0; r < MR; ++r) {
      const float *const a_row = g.a + (size_t)(r < g.m ? r : g.m - 1) * g.lda;
      if constexpr (VEC) {
#pragma unroll
        for (int q = 0; q < U / 4; ++q) {
          const long long kq = k0 + 4 * q < g.k ? k0 + 4 * q : g.k - 4;
          const float4 v = __ldg((const float4 *)(a_row + kq));
          a[r][4 * q] = v.x, a[r][4 * q + 1] = v.y, a[r][4 * q + 2] = v.z, a[r][4 * q + 3] = v.w;
        }
      } else {
#pragma unroll
        for (int j = 0; j < U; ++j) a[r][j] = __ldg(a_row + (k0 + j < g.k ? k0 + j : g.k - 1));
      }
    }
#pragma unroll
    for (int j = 0; j < U; ++j)
      if (k0 + j >= g.k || cols <= 0) {
        b[j] = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
        for (int r = 0; r < MR; ++r) a[r][j] = 0.f;
      }
#pragma unroll
    for (int j = 0; j < U; ++j)
#pragma unroll
      for (int r = 0; r < MR; ++r) {
        acc[r][0] = fmaf(a[r][j], b[j].x, acc[r][0]);
        acc[r][1] = fmaf(a[r][j], b[j].y, acc[r][1]);
        acc[r][2] = fmaf(a[r][j], b[j].z, acc[r][2]);
        acc[r][3] = fmaf(a[r][j], b[j].w, acc[r][3]);
      }
  }
#pragma unroll
  for (int r = 0; r < MR; ++r) {
    if (r >= g.m) break; /* the same in every thread */
    sk_gemv_sum<L>(g, r, acc[r]);
  }
}

/* The lanes' sums of a warp, each in every lane, added in the same
 * butterfly order on every run (COLS and RING). */
template <int WR, int CN>
static __device__ __forceinline__ void sk_warp_sums(float (&acc)[WR][CN]) {
#pragma unroll
  for (int r = 0; r < WR; ++r)
#pragma unroll
    for (int c = 0; c < CN; ++c)
#pragma unroll
      for (int off = 16; off > 0; off /= 2)
        acc[r][c] += __shfl_xor_sync(0xffffffffu, acc[r][c], off);
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

/* RING: a block takes WR rows of A and all of K, its warps K's steps in
 * turn (warp w steps w, w + 8, ...: the block reads 8 consecutive steps of
 * a row, 4 KiB, at a time; on the H200 0-4 % faster than a slice of K a
 * warp at all 17 shapes of 1-4 columns measured, 6000 x 3 x 3000 24.7 us
 * against 25.8: bench/results/short-sides/README.md); a lane copies 4
 * consecutive K of each row a step straight into its own places in a ring
 * of S steps in shared memory (cp.async, 16 bytes, no registers held: the
 * loads stay in flight while the lane computes), reads back only what it
 * copied itself (so no barrier but its own wait), and B's 4 x CN floats of
 * the step (small, L1 and L2 hold it) a step ahead, in registers, its own
 * CN 16-byte loads. No K split between blocks: no planes and no second
 * kernel. The lanes' sums are added in a fixed butterfly order, then the
 * warps' in warp order through shared memory. */
template <int CN>
static __device__ __forceinline__ void sk_cols_ring(const pg_gemm_args g) {
  enum {
    WARPS = SK_THREADS / 32,
    WR = sk_ring_geometry(CN).rows,
    S = sk_ring_geometry(CN).stages
  };
  static_assert(S >= 2 && S <= 8, "cp.async.wait_group takes 0 to 7");
  static_assert(sk_ring_smem(CN) <= 48 * 1024, "static shared memory");
  __shared__ __align__(16) float4 ring_all[WARPS][S][WR][32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float4 (*const ring)[WR][32] = ring_all[warp];
  const long long m0 = (long long)blockIdx.x * WR;
  const long long all = (g.k + SK_RING_STEP - 1) / SK_RING_STEP;
  const int steps = all > warp ? (int)((all - warp + WARPS - 1) / WARPS) : 0;
  /* Row r of the block is min(r, last) rows past its first: a row past M
   * copies the last one (its sums are dropped). */
  const float *const first = g.a + (size_t)m0 * g.lda;
  const long long last = g.m - 1 - m0;
  const unsigned long long policy = pg_l2_evict_first_policy();
  /* Step st of this warp: K from (st WARPS + warp) SK_RING_STEP, 4 a lane. */
  auto k_of = [&](int st) { return ((long long)st * WARPS + warp) * SK_RING_STEP + 4 * lane; };
  auto copy = [&](int st) {
    const long long k = k_of(st);
    const int bytes = k < g.k ? 16 : 0;
#pragma unroll
    for (int r = 0; r < WR; ++r)
      pg_cp_async_16_policy(&ring[st % S][r][lane],
                            first + (size_t)(r < last ? r : last) * g.lda + (bytes ? k : 0), bytes,
                            policy);
  };
  float acc[WR][CN];
#pragma unroll
  for (int r = 0; r < WR; ++r)
#pragma unroll
    for (int c = 0; c < CN; ++c) acc[r][c] = 0.f;
#pragma unroll
  for (int st = 0; st < S - 1; ++st) {
    if (st < steps) copy(st);
    pg_cp_async_commit();
  }
  /* B is dense (ldb = N = CN) and 16-byte aligned, and K whole vectors:
   * the step's 4 rows of a lane are 4 CN floats, CN 16-byte vectors. */
  auto load_b = [&](int st, float4 (&v)[CN]) {
    const long long k = k_of(st);
    if (st < steps && k < g.k) {
      const float4 *const pb = (const float4 *)(g.b + (size_t)k * CN);
#pragma unroll
      for (int q = 0; q < CN; ++q) v[q] = __ldg(pb + q);
    } else {
#pragma unroll
      for (int q = 0; q < CN; ++q) v[q] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
  };
  float4 next[CN];
  load_b(0, next);
  for (int st = 0; st < steps; ++st) {
    float f[4 * CN];
#pragma unroll
    for (int q = 0; q < CN; ++q) {
      f[4 * q] = next[q].x;
      f[4 * q + 1] = next[q].y;
      f[4 * q + 2] = next[q].z;
      f[4 * q + 3] = next[q].w;
    }
    load_b(st + 1, next);
    pg_cp_async_wait(S - 2); /* step st is in (at most S - 2 later groups pending) */
#pragma unroll
    for (int r = 0; r < WR; ++r) {
      const float4 a = ring[st % S][r][lane];
#pragma unroll
      for (int c = 0; c < CN; ++c) {
        acc[r][c] = fmaf(a.x, f[c], acc[r][c]);
        acc[r][c] = fmaf(a.y, f[CN + c], acc[r][c]);
        acc[r][c] = fmaf(a.z, f[2 * CN + c], acc[r][c]);
        acc[r][c] = fmaf(a.w, f[3 * CN + c], acc[r][c]);
      }
    }
    /* Into the place step st - 1 left, read in the iteration before. */
    if (st + S - 1 < steps) copy(st + S - 1);
    pg_cp_async_commit();
  }
  pg_cp_async_wait(0);
  sk_warp_sums<WR, CN>(acc);
  /* The warps' sums through shared memory (the ring, read by now). */
  __syncthreads();
  float *const sums = (float *)&ring_all[0][0][0][0];
  if (lane == 0)
#pragma unroll
    for (int r = 0; r < WR; ++r)
#pragma unroll
      for (int c = 0; c < CN; ++c) sums[(warp * WR + r) * CN + c] = acc[r][c];
  __syncthreads();
  if (threadIdx.x < WR * CN) {
    const int r = threadIdx.x / CN, c = threadIdx.x % CN;
    float v = sums[r * CN + c];
    for (int w = 1; w < WARPS; ++w) v += sums[(w * WR + r) * CN + c];
    if (m0 + r < g.m) sk_store_c(g, m0 + r, c, v);
  }
}

/* RING ROWS (M of 1 to 8 where B's rows and A's take 16-byte copies and
 * K is whole vectors): RING's ring turned to a short M. A block takes
 * SK_RROW_WIDTH columns of B (8 lanes a row, 4 columns a lane) and its K
 * range (all of K, or one of its tile's ranges where the column blocks
 * are fewer than the SMs); the range's steps of SK_RROW_STEP rows of B go
 * to the warps in turn (warp w steps w, w + 8, ...: the block reads 128
 * consecutive rows at a time; on the H200 up to 12 % faster than a slice
 * of K a warp, 1 x 3000 x 8192 32.0 us against 36.5, the same at 4096
 * columns). In a step lane l copies rows 4 (l / 8) + j (j < 4) of its 4
 * columns (an instruction: 4 rows of 128 contiguous bytes) into its places
 * in the warp's ring of sk_rrow_stages steps (cp.async, evict-first: B is
 * read once), and the step's MR x SK_RROW_STEP values of A beside them (MR
 * x 4 vectors, one a lane; L2 holds A, which every block reads). A lane
 * reads back its own B and the step's A, which other lanes copied: a
 * __syncwarp after its wait (the copies' writes seen by the warp), which
 * also orders every lane's reads of a step before the copies into its
 * place. Rows of A past M copy row M - 1 and are not stored. The sums of
 * the lanes of the same columns are added in a butterfly, the warps' in
 * warp order through shared memory, the ranges' in split order (in
 * clusters, or planes and the reduction). */
template <int MR, bool CLUSTER>
static __device__ __forceinline__ void sk_rows_ring(const pg_gemm_args g) {
  enum {
    WARPS = SK_THREADS / 32,
    S = sk_rrow_stages(MR),
    STEP = SK_RROW_STEP,
    W = SK_RROW_WIDTH,
    LANES_ROW = W / 4
  };
  static_assert(LANES_ROW == 8 && STEP == 16, "a lane's 4 rows of B a step, 4 of the warp's 8 x 4");
  static_assert(S >= 2 && S <= 8, "cp.async.wait_group takes 0 to 7");
  static_assert(4 * MR <= 32, "a lane copies at most one vector of A a step");
  static_assert(SK_SPLIT_K % STEP == 0, "a range starts a step, and a vector of A");
  /* A step in the ring: B's STEP rows of W columns, then A's MR x STEP. */
  struct step_t {
    float4 b[STEP][LANES_ROW];
    float4 a[MR][STEP / 4];
  };
  /* More than 48 KiB: dynamic (the launch's dynamic_smem, sk_rrow_smem). */
  extern __shared__ __align__(16) float4 sk_rrow_dynamic[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  step_t *const ring = (step_t *)sk_rrow_dynamic + warp * S;
  const sk_work w = sk_where<CLUSTER>(g, sk_rrow_blocks(g.n), W, MR);
  const long long range_steps = (w.k1 - w.k0 + STEP - 1) / STEP;
  const int steps = range_steps > warp ? (int)((range_steps - warp + WARPS - 1) / WARPS) : 0;
  /* This lane's columns of B (past N: zero-filled, reading column 0), its
   * rows of a step, and the vector of A it copies (row ar, K 4 aq on). */
  const long long n = w.first + 4 * (lane % LANES_ROW);
  const int b_bytes = n < g.n ? 16 : 0;
  const float *const b_col = g.b + (b_bytes ? n : 0);
  const int row0 = 4 * (lane / LANES_ROW);
  const int ar = lane / 4 < MR ? lane / 4 : MR - 1, aq = lane % 4;
  const bool copies_a = lane < 4 * MR;
  const float *const a_row = g.a + (size_t)(ar < g.m ? ar : g.m - 1) * g.lda;
  const unsigned long long policy = pg_l2_evict_first_policy();
  /* Step st of this warp: the range's step st WARPS + warp. */
  auto copy = [&](int st) {
    step_t &into = ring[st % S];
    const long long k0 = w.k0 + ((long long)st * WARPS + warp) * STEP;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const long long k = k0 + row0 + j;
      const int bytes = k < w.k1 ? b_bytes : 0;
      pg_cp_async_16_policy(&into.b[row0 + j][lane % LANES_ROW],
                            b_col + (size_t)(bytes ? k : 0) * g.ldb, bytes, policy);
    }
    if (copies_a) {
      const long long k = k0 + 4 * aq; /* K and the ranges are whole vectors */
      pg_cp_async_16(&into.a[ar][aq], a_row + (k < w.k1 ? k : 0), k < w.k1 ? 16 : 0);
    }
  };
  float acc[MR][4];
#pragma unroll
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = 0.f;
#pragma unroll
  for (int st = 0; st < S - 1; ++st) {
    if (st < steps) copy(st);
    pg_cp_async_commit();
  }
  for (int st = 0; st < steps; ++st) {
    pg_cp_async_wait(S - 2); /* step st is in (at most S - 2 later groups pending) */
    __syncwarp();            /* ... every lane's (A's values); the step before is read */
    if (st + S - 1 < steps) copy(st + S - 1);
    pg_cp_async_commit();
    const step_t &in = ring[st % S];
    float4 a[MR], b[4];
#pragma unroll
    for (int r = 0; r < MR; ++r) a[r] = in.a[r][lane / LANES_ROW];
#pragma unroll
    for (int j = 0; j < 4; ++j) b[j] = in.b[row0 + j][lane % LANES_ROW];
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int r = 0; r < MR; ++r) {
        const float av = j == 0 ? a[r].x : j == 1 ? a[r].y : j == 2 ? a[r].z : a[r].w;
        acc[r][0] = fmaf(av, b[j].x, acc[r][0]);
        acc[r][1] = fmaf(av, b[j].y, acc[r][1]);
        acc[r][2] = fmaf(av, b[j].z, acc[r][2]);
        acc[r][3] = fmaf(av, b[j].w, acc[r][3]);
      }
  }
  pg_cp_async_wait(0);
  /* The lanes of the same columns (lane % 8), then the warps. */
#pragma unroll
  for (int r = 0; r < MR; ++r)
#pragma unroll
    for (int c = 0; c < 4; ++c)
#pragma unroll
      for (int off = LANES_ROW; off < 32; off *= 2)
        acc[r][c] += __shfl_xor_sync(0xffffffffu, acc[r][c], off);
  __syncthreads(); /* every warp's ring is read */
  float *const sums = (float *)sk_rrow_dynamic, *const tile_out = sums + WARPS * MR * W;
  if (lane < LANES_ROW)
#pragma unroll
    for (int r = 0; r < MR; ++r)
      *(float4 *)&sums[(warp * MR + r) * W + 4 * lane] =
          make_float4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
  __syncthreads();
  for (int e = threadIdx.x; e < MR * W; e += SK_THREADS) {
    const int r = e / W, c = e % W;
    float v = sums[r * W + c];
    for (int u = 1; u < WARPS; ++u) v += sums[(u * MR + r) * W + c];
    if constexpr (CLUSTER)
      tile_out[e] = v;
    else if (r < g.m && w.first + c < g.n)
      sk_store(g, w.split, r, w.first + c, v);
  }
  if constexpr (CLUSTER)
    sk_cluster_sum(g, w, tile_out, MR * W, [&](int e, float sum) {
      const long long m = e / W, col = w.first + e % W;
      if (m < g.m && col < g.n) sk_store_c(g, m, col, sum);
    });
}

/* BAND: a block takes SK_BAND_ROWS rows of A and its K range (all of K,
 * or one of the row block's ranges where the blocks are at most half the
 * SMs); the range's steps of SK_BAND_STEP go to the warps in turn (warp w
 * steps w, w + 8, ...). In a step lane l copies 4 consecutive K (l % 8)
 * of rows l / 8 + 4 i (i < 4: an instruction 4 rows of 128 contiguous
 * bytes) into its own places in the warp's ring of SK_BAND_STAGES steps
 * (cp.async, evict-first: A is read once), and its share of the step's
 * 32 x CN values of B beside them, B's rows padded (sk_band_b_at): in
 * vectors of 4 or 2 floats where B is dense and aligned to them and the
 * blocks fit one wave or K is long (sk_band_b_vector), through L1 (.ca:
 * the blocks of an SM read the same B; 3000 x 8 x 12288 49.4 us against
 * 57.3 on the H200; .cg, past L1, had lost up to 13 %:
 * bench/results/short-sides/README.md), else CN 4-byte copies (any ldb). B is not held a step ahead in
 * registers nor handed out by a second store: each warp copies its step's
 * B with its A (under Nsight Compute at 4096 x 8 x 4096 L1 55 % busy at
 * 60 % of the DRAM's throughput, where the RING form's exchange kept it
 * 87 % busy at 47 %). A lane reads its own A and the B rows of its K,
 * which other lanes copied: a __syncwarp after its wait, which also orders
 * every lane's reads of a step before the copies into its place. The sums
 * of a row's 8 lanes are added in a butterfly, the warps' in warp order
 * through shared memory, the ranges' in split order (in clusters, or
 * planes and the reduction). Rows past M copy row M - 1 and are not
 * stored. */
template <int CN, bool CLUSTER>
static __device__ __forceinline__ void sk_cols_band(const pg_gemm_args g) {
  enum {
    WARPS = SK_THREADS / 32,
    S = SK_BAND_STAGES,
    STEP = SK_BAND_STEP,
    ROWS = SK_BAND_ROWS,
    LANES_K = STEP / 4,
    GROUPS = 32 / LANES_K,
    LROWS = ROWS / GROUPS,
    BF = sk_band_b_floats(CN)
  };
  static_assert(LANES_K == 8 && GROUPS * LROWS == ROWS, "a lane's 4 rows, 4 of the warp's 4 x 4");
  static_assert(S >= 2 && S <= 8, "cp.async.wait_group takes 0 to 7");
  static_assert(SK_SPLIT_K % STEP == 0, "a range starts a step");
  static_assert(BF % 4 == 0, "a step's A starts 16-byte aligned");
  struct step_t {
    float4 a[LROWS][32];
    float b[BF];
  };
  /* More than 48 KiB: dynamic (the launch's dynamic_smem, sk_band_smem). */
  extern __shared__ __align__(16) float4 sk_band_dynamic[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  step_t *const ring = (step_t *)sk_band_dynamic + warp * S;
  const sk_work w = sk_where<CLUSTER>(g, sk_band_blocks(g.m), ROWS, CN);
  const long long range_steps = (w.k1 - w.k0 + STEP - 1) / STEP;
  const int steps = range_steps > warp ? (int)((range_steps - warp + WARPS - 1) / WARPS) : 0;
  /* This lane's K in a step, its rows (past M: row M - 1). */
  const int kq = lane % LANES_K, group = lane / LANES_K;
  const float *a_row[LROWS];
#pragma unroll
  for (int i = 0; i < LROWS; ++i) {
    const long long m = w.first + group + GROUPS * i;
    a_row[i] = g.a + (size_t)(m < g.m ? m : g.m - 1) * g.lda;
  }
  const unsigned long long policy = pg_l2_evict_first_policy();
  /* Step st of this warp: the range's step st WARPS + warp. */
  auto copy = [&](int st) {
    step_t &into = ring[st % S];
    const long long k0 = w.k0 + ((long long)st * WARPS + warp) * STEP;
    const long long k = k0 + 4 * kq; /* K and the ranges are whole vectors */
    const int bytes = k < w.k1 ? 16 : 0;
#pragma unroll
    for (int i = 0; i < LROWS; ++i)
      pg_cp_async_16_policy(&into.a[i][lane], a_row[i] + (bytes ? k : 0), bytes, policy);
    /* The step's B in vectors of VW floats (none across a row): a lane
     * copies vectors lane, lane + 32, ... (CN / VW of them). */
    auto copy_b = [&](auto vw) {
      constexpr int VW = decltype(vw)::value;
#pragma unroll
      for (int q = 0; q < CN / VW; ++q) {
        const int v = q * 32 + lane, row = v * VW / CN, col = v * VW % CN;
        const long long kb = k0 + row;
        float *const to = &into.b[sk_band_b_at(CN, row) + col];
        const float *const from = g.b + (kb < w.k1 ? (size_t)kb * g.ldb + col : 0);
        const int got = kb < w.k1 ? 4 * VW : 0;
        if constexpr (VW == 4)
          pg_cp_async_16_ca(to, from, got);
        else if constexpr (VW == 2)
          pg_cp_async_8(to, from, got);
        else
          pg_cp_async_4(to, from, got);
      }
    };
    /* B dense and aligned: vectors of g.b_vector floats (a uniform
     * branch; sk_band_b_vector); else single floats, any ldb. */
    if constexpr (CN % 4 == 0)
      if (g.b_vector == 4) return copy_b(std::integral_constant<int, 4>{});
    if constexpr (CN % 2 == 0)
      if (g.b_vector == 2) return copy_b(std::integral_constant<int, 2>{});
    copy_b(std::integral_constant<int, 1>{});
  };
  float acc[LROWS][CN];
#pragma unroll
  for (int i = 0; i < LROWS; ++i)
#pragma unroll
    for (int c = 0; c < CN; ++c) acc[i][c] = 0.f;
#pragma unroll
  for (int st = 0; st < S - 1; ++st) {
    if (st < steps) copy(st);
    pg_cp_async_commit();
  }
  for (int st = 0; st < steps; ++st) {
    pg_cp_async_wait(S - 2); /* step st is in (at most S - 2 later groups pending) */
    __syncwarp();            /* ... every lane's (B's values); the step before is read */
    if (st + S - 1 < steps) copy(st + S - 1);
    pg_cp_async_commit();
    const step_t &in = ring[st % S];
    float4 a[LROWS];
#pragma unroll
    for (int i = 0; i < LROWS; ++i) a[i] = in.a[i][lane];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float *const brow = in.b + sk_band_b_at(CN, 4 * kq + j);
      float b[CN];
#pragma unroll
      for (int q = 0; q + 4 <= CN; q += 4) {
        const float4 v = *(const float4 *)(brow + q);
        b[q] = v.x;
        b[q + 1] = v.y;
        b[q + 2] = v.z;
        b[q + 3] = v.w;
      }
#pragma unroll
      for (int c = CN / 4 * 4; c < CN; ++c) b[c] = brow[c];
#pragma unroll
      for (int i = 0; i < LROWS; ++i) {
        const float av = j == 0 ? a[i].x : j == 1 ? a[i].y : j == 2 ? a[i].z : a[i].w;
#pragma unroll
        for (int c = 0; c < CN; ++c) acc[i][c] = fmaf(av, b[c], acc[i][c]);
      }
    }
  }
  pg_cp_async_wait(0);
  /* The lanes of the same rows (lane / 8), then the warps. */
#pragma unroll
  for (int i = 0; i < LROWS; ++i)
#pragma unroll
    for (int c = 0; c < CN; ++c)
#pragma unroll
      for (int off = 1; off < LANES_K; off *= 2)
        acc[i][c] += __shfl_xor_sync(0xffffffffu, acc[i][c], off);
  __syncthreads(); /* every warp's ring is read */
  float *const sums = (float *)sk_band_dynamic, *const tile_out = sums + WARPS * ROWS * CN;
  if (kq == 0)
#pragma unroll
    for (int i = 0; i < LROWS; ++i)
#pragma unroll
      for (int c = 0; c < CN; ++c) sums[(warp * ROWS + group + GROUPS * i) * CN + c] = acc[i][c];
  __syncthreads();
  for (int e = threadIdx.x; e < ROWS * CN; e += SK_THREADS) {
    float v = sums[e];
    for (int u = 1; u < WARPS; ++u) v += sums[u * ROWS * CN + e];
    const long long m = w.first + e / CN;
    if constexpr (CLUSTER)
      tile_out[e] = v;
    else if (m < g.m)
      sk_store(g, w.split, m, e % CN, v);
  }
  if constexpr (CLUSTER)
    sk_cluster_sum(g, w, tile_out, ROWS * CN, [&](int e, float sum) {
      const long long m = w.first + e / CN;
      if (m < g.m) sk_store_c(g, m, e % CN, sum);
    });
}

/* The entry's one kernel, every form under one name (inspect judges every
 * instance of it by the entry's SASS rules): R > 0 the short-M form, R rows
 * a chunk; R = 0 the short-N form, chunks of C columns (C = -CN: its
 * RING form of CN columns, 16-byte loads only; C = -(SK_BAND_CODE + CN):
 * the BAND form of CN columns, likewise); R > 0 and C = -1: the RING ROWS
 * form of R rows; R = -L the GEMV, L
 * lanes a row, of C rows (1, 2 or 4; C = -1: of one row, B dense and read
 * realigned, sk_gemv_realigned). VEC: the long operand is read in
 * 16-byte loads (its rows may be, and the side along them is a multiple of
 * 4: a thread's 4 floats are all in it or none); in the GEMV of 2 or 4
 * rows A too (sk_gemv_vec). */
template <int R, int C, bool VEC, bool CLUSTER = false>
__global__ void __launch_bounds__(SK_THREADS, R < 0            ? SK_GEMV_BLOCKS
                                              : R > 0 && C < 0 ? SK_RROW_BLOCKS
                                              : C <= -SK_BAND_CODE ? SK_BAND_BLOCKS
                                              : C < 0          ? sk_ring_geometry(-C).blocks
                                                      : sk_blocks_per_sm(R))
    pg_skinny_kernel(const pg_gemm_args g) {
  /* A split K's reduction, launched programmatically behind this kernel,
   * may start now; it waits for this kernel's end itself. (Unsplit, or
   * added up in clusters, this kernel is the call's last: nothing of the
   * caller's may start early.) */
  if (!CLUSTER && g.splits > 1) pg_grid_launch_dependents();
  if constexpr (R < 0 && C == 1)
    sk_gemv<-R, VEC>(g);
  else if constexpr (R < 0 && C == -1)
    sk_gemv_realigned<-R>(g);
  else if constexpr (R < 0)
    sk_gemv_rows<-R, C, VEC>(g);
  else if constexpr (C < 0 && R > 0)
    sk_rows_ring<R, CLUSTER>(g);
  else if constexpr (C <= -SK_BAND_CODE)
    sk_cols_band<-C - SK_BAND_CODE, CLUSTER>(g);
  else if constexpr (C < 0)
    sk_cols_ring<-C>(g);
  else if constexpr (R > 0)
    sk_rows<R, VEC, CLUSTER>(g);
  else
    sk_cols<C, VEC, CLUSTER>(g);
}

/* The forms, narrowest chunk first in each: the short side's chunk (rows
 * of A, then columns of B) and its kernel. The short side takes the
 * narrowest chunk that holds it; a longer one takes the widest, each chunk
 * reading the long operand again. Form f's rate is the tuning's
 * skinny_rate_percent[f]. */
typedef struct {
  int chunk;
  const void *kernel[2];  /* scalar loads, 16-byte loads */
  const void *cluster[2]; /* the same, a split K's ranges added up in clusters */
} sk_form;
#define SK_FORM(chunk, r, c)                                                                       \
  {                                                                                               \
    chunk, {(const void *)pg_skinny_kernel<r, c, false>, (const void *)pg_skinny_kernel<r, c, true>}, \
        {(const void *)pg_skinny_kernel<r, c, false, true>,                                        \
         (const void *)pg_skinny_kernel<r, c, true, true>}                                         \
  }
#define SK_GEMV_FORM(lanes, rows)                                                                  \
  {                                                                                               \
    lanes, {(const void *)pg_skinny_kernel<-lanes, rows, false>,                                   \
            (const void *)pg_skinny_kernel<-lanes, rows, true>},                                   \
        {NULL, NULL}                                                                               \
  }
static const sk_form sk_row_forms[] = {SK_FORM(1, 1, 0), SK_FORM(2, 2, 0), SK_FORM(4, 4, 0),
                                       SK_FORM(8, 8, 0),
                                       SK_FORM(SK_ROWS_MAX_CHUNK, SK_ROWS_MAX_CHUNK, 0)};
static const sk_form sk_col_forms[] = {SK_FORM(1, 0, 1), SK_FORM(2, 0, 2), SK_FORM(4, 0, 4),
                                       SK_FORM(SK_COLS_MAX_CHUNK, 0, SK_COLS_MAX_CHUNK)};
/* The RING forms: by N, 1 to SK_RING_MAX_CHUNK columns. 16-byte copies
 * only. */
#define SK_RING_FORM(cn) \
  { cn, {NULL, (const void *)pg_skinny_kernel<0, -cn, true>}, {NULL, NULL} }
static const sk_form sk_ring_forms[] = {SK_RING_FORM(1), SK_RING_FORM(2),
                                        SK_RING_FORM(SK_RING_MAX_CHUNK)};
static_assert(sizeof sk_ring_forms / sizeof sk_ring_forms[0] == SK_RING_MAX_CHUNK &&
                  SK_RING_MAX_CHUNK + 1 == SK_BAND_MIN_COLS,
              "a RING form for each N up to SK_RING_MAX_CHUNK, the BAND forms' from there on: "
              "configure indexes them by N");
/* The GEMV's forms by rows (1, 2, 4: the short-M chunks up to
 * SK_GEMV_MAX_ROWS, the same index as sk_row_forms) and lanes a row (4, 8,
 * 16, 32; chunk: the lanes). 8 rows (4 of B a step) ran slower than the
 * split chunk of 8 rows on the H200 (8 x 4096 x 4096 37.5 us against
 * 28.8: bench/results/short-sides/README.md). */
#define SK_GEMV_LANE_FORMS(rows) \
  {SK_GEMV_FORM(4, rows), SK_GEMV_FORM(8, rows), SK_GEMV_FORM(16, rows), SK_GEMV_FORM(32, rows)}
static const sk_form sk_gemv_forms[][4] = {SK_GEMV_LANE_FORMS(1), SK_GEMV_LANE_FORMS(2),
                                           SK_GEMV_LANE_FORMS(4)};
#define SK_GEMV_FORMS ((int)(sizeof sk_gemv_forms[0] / sizeof sk_gemv_forms[0][0]))
#define SK_GEMV_MAX_ROWS 4
/* Whether the GEMV of two rows or more reads in 16-byte loads: B may be
 * (`vec`), and A's rows may be with K whole vectors. */
static int sk_gemv_vec(const pg_gemm_args *args, bool vec) {
  return vec && args->vec_a && args->k % 4 == 0;
}
/* The GEMV's blocks across N in form l (any row count: the same lanes). */
static long long sk_gemv_blocks(long long n, int l) {
  const long long width = 4LL * sk_gemv_forms[0][l].chunk;
  return (n + width - 1) / width;
}
/* The realigned GEMV of one row (sk_gemv_realigned) by lanes a row: 8,
 * 16, 32 (4 would give 12 columns a block of 16 floats read). */
static const sk_form sk_gemv_realigned_forms[] = {
    {8, {NULL, (const void *)pg_skinny_kernel<-8, -1, true>}, {NULL, NULL}},
    {16, {NULL, (const void *)pg_skinny_kernel<-16, -1, true>}, {NULL, NULL}},
    {32, {NULL, (const void *)pg_skinny_kernel<-32, -1, true>}, {NULL, NULL}}};
#define SK_GEMV_REALIGNED_FORMS \
  ((int)(sizeof sk_gemv_realigned_forms / sizeof sk_gemv_realigned_forms[0]))
/* Its blocks across N in form r: 4 (L - 1) columns a block. */
static long long sk_gemv_realigned_blocks(long long n, int r) {
  const long long width = 4LL * (sk_gemv_realigned_forms[r].chunk - 1);
  return (n + width - 1) / width;
}
/* The RING ROWS forms, by rows: 1, 2, 4, 6, 8 (the chunks up to
 * SK_RROW_MAX_ROWS). 16-byte copies only. 5 and 6 rows took the form of 8
 * before: on the H200 the form of 6 (4 steps, as 8) ran 1-3 % faster at
 * each of eight shapes of 5 and 6 rows, 6 x 4096 x 4096 in 23.0-23.2 us
 * against 23.4-23.6, 6 x 12288 x 3000 46.6 against 48.2; 6 steps (one
 * block an SM) won nothing more (bench/results/short-sides/README.md). */
#define SK_RROW_FORM(rows)                                                                         \
  {                                                                                               \
    rows, {NULL, (const void *)pg_skinny_kernel<rows, -1, true>}, {                                \
      NULL, (const void *)pg_skinny_kernel<rows, -1, true, true>                                   \
    }                                                                                             \
  }
static const sk_form sk_rrow_forms[] = {SK_RROW_FORM(1), SK_RROW_FORM(2), SK_RROW_FORM(4),
                                        SK_RROW_FORM(6), SK_RROW_FORM(SK_RROW_MAX_ROWS)};
#define SK_RROW_FORMS ((int)(sizeof sk_rrow_forms / sizeof sk_rrow_forms[0]))
/* The BAND forms, by N: SK_BAND_MIN_COLS to SK_BAND_MAX_COLS columns.
 * 16-byte copies of A only. */
#define SK_BAND_FORM(cn)                                                                           \
  {                                                                                               \
    cn, {NULL, (const void *)pg_skinny_kernel<0, -(SK_BAND_CODE + cn), true>}, {                   \
      NULL, (const void *)pg_skinny_kernel<0, -(SK_BAND_CODE + cn), true, true>                    \
    }                                                                                             \
  }
static const sk_form sk_band_forms[] = {SK_BAND_FORM(4), SK_BAND_FORM(5), SK_BAND_FORM(6),
                                        SK_BAND_FORM(7), SK_BAND_FORM(SK_BAND_MAX_COLS)};
static_assert(sizeof sk_band_forms / sizeof sk_band_forms[0] ==
                  SK_BAND_MAX_COLS - SK_BAND_MIN_COLS + 1 && SK_BAND_MIN_COLS == 4,
              "a BAND form for each N from SK_BAND_MIN_COLS: configure indexes them by N");
#define SK_ROW_FORMS ((int)(sizeof sk_row_forms / sizeof sk_row_forms[0]))
#define SK_COL_FORMS ((int)(sizeof sk_col_forms / sizeof sk_col_forms[0]))
static_assert(SK_ROW_FORMS + SK_COL_FORMS == PG_SKINNY_FORMS, "a rate for each form in the tuning");

/* The form of a short side: the narrowest chunk that holds it, else the
 * widest. */
static int sk_pick(const sk_form *forms, int count, long long side) {
  int f = 0;
  while (f < count - 1 && side > forms[f].chunk) ++f;
  return f;
}

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
 * (bench/results/partial-waves/README.md, "Split K added up in
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
static void sk_configure_split(pg_gemm_args *args, const pg_device *device,
                               const pg_tuning *tuning, pg_kernel_launch *launch,
                               const void *kernel, int per_sm, long long slots,
                               long long k_tiles, int min_steps) {
  const long long most = launch->grid_x * PG_CLUSTER_MAX;
  pg_gemm_args split_args = *args;
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

static void configure(pg_gemm_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
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
  launch->speed_share = share < tuning->skinny_cap_percent / 100.0 ? share : tuning->skinny_cap_percent / 100.0;
  launch->grid_y = 1;
  args->splits = 1;
  if (!rows && vec && short_side <= SK_RING_MAX_CHUNK && args->ldb == args->n &&
      (uintptr_t)args->b % 16 == 0 &&
      sk_ring_blocks(args->m, (int)short_side) >= device->sm_count) {
    /* Short N of 1 to 3, A's rows in 16-byte copies, B dense and 16-byte
     * aligned: the RING form of N columns, all of K a block, where its
     * blocks are at least the SMs (auto's model: the COLS form's, no TMA
     * entry competes). */
    launch->kernel = sk_ring_forms[short_side - 1].kernel[1];
    launch->grid_x = sk_ring_blocks(args->m, (int)short_side);
    return;
  }
  if (!rows && vec && short_side >= SK_BAND_MIN_COLS && short_side <= SK_BAND_MAX_COLS &&
      sk_band_smem((int)short_side) <= device->smem_optin) {
    /* Short N of 4 to 8, A's rows in 16-byte copies, B any layout, where
     * the GPU allows a block its rings (not 5-8 columns on one of 99 KiB
     * a block, sm_86 and sm_89: the split COLS form there): the BAND form
     * of N columns, a block 16 rows over all of K, K split into ranges
     * only where the blocks are at most half the SMs (sk_configure_split,
     * at most SK_BAND_BLOCKS an SM in clusters). auto's model: the COLS
     * form's at 4 columns, past it the tuning's skinny_ring_percent (fitted
     * on the RING form those columns took before; the BAND form is
     * faster). */
    const sk_form *const band = &sk_band_forms[short_side - SK_BAND_MIN_COLS];
    launch->kernel = band->kernel[1];
    launch->grid_x = sk_band_blocks(args->m);
    launch->dynamic_smem = sk_band_smem((int)short_side);
    if (short_side > SK_BAND_MIN_COLS)
      launch->speed_share =
          (double)short_side / SK_BAND_MAX_COLS * tuning->skinny_ring_percent / 100.0;
    sk_configure_split(args, device, tuning, launch, band->cluster[1], SK_BAND_BLOCKS,
                       device->sm_count, ((long long)args->k + SK_SPLIT_K - 1) / SK_SPLIT_K,
                       SK_BAND_MIN_RANGE / SK_SPLIT_K);
    /* Bound by memory: blocks on every SM read at the GPU's rate whether
     * one or two share an SM, so a second wave of one an SM costs it
     * nothing (auto's model would count 188 blocks on 132 SMs 71 % full;
     * 3000 x 8 x 12288 ran 49.4 us where tma_ws_n16, the model's choice,
     * took 54.4). */
    if (launch->grid_x >= device->sm_count) launch->fill = 1.0;
    /* Its blocks an SM: SK_BAND_BLOCKS, fewer where their rings do not fit. */
    int per_sm = SK_BAND_BLOCKS;
    if (device->smem_per_sm > 0)
      while (per_sm > 1 && pg_smem_for_blocks_per_sm(device, per_sm) < launch->dynamic_smem)
        --per_sm;
    args->b_vector =
        sk_band_b_vector(args, launch->grid_x, (long long)per_sm * device->sm_count);
    return;
  }
  const int r = sk_pick(sk_rrow_forms, SK_RROW_FORMS, short_side);
  if (rows && short_side <= SK_RROW_MAX_ROWS && vec && args->vec_a && args->k % 4 == 0 &&
      sk_rrow_smem(sk_rrow_forms[r].chunk) <= device->smem_optin &&
      (short_side > SK_GEMV_MAX_ROWS || sk_rrow_blocks(args->n) <= device->sm_count)) {
    /* The RING ROWS form, where the GPU allows a block its rings: more
     * than the GEMV's rows, or its blocks no more than the SMs (a block
     * an SM, K split into ranges where they are at most half the SMs:
     * sk_configure_split, at most SK_RROW_BLOCKS an SM in clusters;
     * auto's model as the short-M form's above). */
    launch->kernel = sk_rrow_forms[r].kernel[1];
    launch->grid_x = sk_rrow_blocks(args->n);
    launch->dynamic_smem = sk_rrow_smem(sk_rrow_forms[r].chunk);
    sk_configure_split(args, device, tuning, launch, sk_rrow_forms[r].cluster[1], SK_RROW_BLOCKS,
                       device->sm_count, ((long long)args->k + SK_SPLIT_K - 1) / SK_SPLIT_K,
                       SK_RROW_MIN_RANGE / SK_SPLIT_K);
    return;
  }
  if (rows && short_side <= SK_GEMV_MAX_ROWS) {
    /* The GEMV (of its chunk's rows, f: 1, 2 or 4): 8 lanes a row or
     * more, the narrowest whose blocks all fit at once; 4 lanes where 8
     * would leave fewer blocks than SK_GEMV_MIN_FILL_PERCENT of the SMs;
     * the split form where 4 would. */
    static_assert(sizeof sk_gemv_forms / sizeof sk_gemv_forms[0] == 3 && SK_GEMV_MAX_ROWS == 4,
                  "the GEMV's rows: the chunks of 1, 2 and 4");
    const long long fit = (long long)SK_GEMV_BLOCKS * device->sm_count;
    const long long least = (long long)device->sm_count * SK_GEMV_MIN_FILL_PERCENT / 100;
    if (f == 0 && !vec && args->ldb == args->n && args->k >= 1) {
      /* One row, B dense but its rows not 16-byte aligned: the realigned
       * GEMV, its lanes a row chosen as the GEMV's below (from 8, blocks of
       * 4 (L - 1) columns), where its blocks are at least
       * SK_GEMV_MIN_FILL_PERCENT of the SMs and N at least a block's 4L
       * floats, and where they are no more than the SMs at 8 lanes or
       * need 16 or 32; else the GEMV of 4-byte loads below (or the split
       * form). Measured on the H200 beside that GEMV (one build, the two
       * alternating, the mean of two passes; bench/results/short-sides/README.md):
       * at 8 lanes a block an SM 1 x 3001 x 8192 in 35.2 us against 41.0,
       * 1 x 2999 x 12000 47.9 against 56.4; at 16 and 32 lanes
       * 1 x 8191 x 8192 86.5 against 97.5, 1 x 16383 x 4096 76.7 against
       * 83.6, 1 x 12001 x 3000 51.4 against 51.8; at 8 lanes past one
       * block an SM slower at 3 of 4 shapes (1 x 4095 x 4097 29.3 against
       * 26.4, 1 x 4097 x 16384 106 against 88), why not known. */
      int r = 0;
      while (r < SK_GEMV_REALIGNED_FORMS - 1 && sk_gemv_realigned_blocks(args->n, r) > fit) ++r;
      const long long blocks = sk_gemv_realigned_blocks(args->n, r);
      if (blocks >= least && (r > 0 || blocks <= device->sm_count) &&
          args->n >= 4LL * sk_gemv_realigned_forms[r].chunk) {
        launch->kernel = sk_gemv_realigned_forms[r].kernel[1];
        launch->grid_x = blocks;
        return;
      }
    }
    int l = 1;
    while (l < SK_GEMV_FORMS - 1 && sk_gemv_blocks(args->n, l) > fit) ++l;
    if (sk_gemv_blocks(args->n, l) < least) l = 0;
    const long long blocks = sk_gemv_blocks(args->n, l);
    if (blocks >= least) {
      /* Two rows or more: the 16-byte instance reads A so too. */
      launch->kernel = sk_gemv_forms[f][l].kernel[f == 0 ? vec : sk_gemv_vec(args, vec)];
      launch->grid_x = blocks;
      return;
    }
  }
  const long long min_range = rows ? SK_MIN_ROWS_RANGE * (chunk > 2 ? chunk / 2 : 1) : SK_COLS_TILE_K;
  const long long slots = (long long)SK_FILL_BLOCKS * device->sm_count;
  const long long k_tiles = ((long long)args->k + SK_SPLIT_K - 1) / SK_SPLIT_K;
  const int min_steps = (int)(min_range / SK_SPLIT_K);
  /* In clusters (sk_cluster_sum) where they pay, in planes otherwise. */
  sk_configure_split(args, device, tuning, launch, forms[f].cluster[vec],
                     sk_blocks_per_sm(rows ? chunk : 0), slots, k_tiles, min_steps);
}

/* Shared memory a block, the most of the forms every GPU of the entry
 * runs. The RING ROWS and BAND forms hold theirs as dynamic shared memory
 * (66-108 KiB) and run only where the GPU allows a block that much
 * (configure): on a GPU of 99 KiB a block (sm_86, sm_89) the other forms
 * take their shapes. */
static size_t smem_bytes(int stages) {
  (void)stages;
  const size_t tile = sizeof(float) * SK_ROWS_TILE_K * (SK_ROWS_MAX_CHUNK + 4);
  const size_t sums = sizeof(float) * SK_ROWS_WARPS * 4 * SK_ROWS_WIDTH;
  const size_t rows = tile > sums ? tile : sums;
  const size_t cols = sizeof(float) * SK_COLS_MAX_CHUNK * (SK_COLS_TILE_K + 4);
  size_t ring = 0;
  for (int cn = 1; cn <= SK_RING_MAX_CHUNK; ++cn)
    if (sk_ring_smem(cn) > ring) ring = sk_ring_smem(cn);
  const size_t most = rows > cols ? rows : cols;
  return most > ring ? most : ring;
}

static const pg_sass_rule rules[] = {
    {PG_ANY_SM, PG_MUST, "FFMA", "the products are no longer FP32 FMAs"},
    {PG_ANY_SM, PG_MUST, "LDS", "no operand comes from shared memory any more (the short one; the RING form's copies of the long one)"},
    {PG_ANY_SM, PG_NEVER, "HMMA", "tensor-core products in a strict FP32 entry"},
};

PG_ENTRY(skinny_ffma) = {
    .info = {.name = "skinny_ffma", .kind = PG_KIND_KERNEL,
             .technique = "a short side (M or N up to a few dozen): the long operand streamed once a chunk of the short side (1-16 rows, 1-8 columns), many 16-byte loads in flight a thread, the short one in shared memory, FFMA, K split into short ranges to fill the GPU, added up by a second kernel or, where it pays, in a cluster of their blocks; 1-4 rows against a long N a GEMV of one kernel, K not split between blocks (one row against B's rows off 16 bytes in aligned 16-byte loads, the rows' four shifts summed apart); 1-3 columns against many rows one kernel too, each lane's 16-byte copies in a cp.async ring of its own; 4-8 columns a block 16 rows of A over all of K, each warp's ring holding its step of B beside A's; 1-8 rows the ring turned round, a block 32 columns of B over all of K",
             .source = PG_FROM_GUIDE, .min_cc = 80, .min_stages = 1, .max_stages = 1,
             .default_stages = 1, .tile_m = SK_ROWS_MAX_CHUNK, .tile_n = SK_COLS_MAX_CHUNK,
             .tile_k = SK_SPLIT_K, .threads = SK_THREADS},
    .smem_bytes = smem_bytes,
    .configure = configure,
    .kernel = {.symbol = "pg_skinny_kernel", .launched = "pg_skinny_kernel<8, 0, 1, 0>",
               PG_RULES(rules)},
};

PG_KERNELS_END
