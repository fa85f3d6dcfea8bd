/* What the forms of skinny_ffma share (15_skinny_ffma.cu, the entry and
 * the order its selector asks the forms in; 16 to 19, a form or two each):
 * one kernel for all of them, the work of a block, the split of K and the
 * cluster sum of its ranges, C's stores, and the loads of the long operand.
 *
 * The kernel, pg_skinny_kernel<R, C, VEC, CLUSTER>, is one template whose
 * instances are every form (so that `pipegemm inspect` judges every
 * instance by the entry's SASS rules); its arguments name the form, and the
 * form's file instantiates it:
 *   R > 0, C = 0       ROWS, chunks of R rows of A              16_skinny_split.cu
 *   R = 0, C > 0       COLS, chunks of C columns of B           16_skinny_split.cu
 *   R = 0, C = -CN     RING of CN columns                       17_skinny_ring.cu
 *   R = 0, C = -(SK_BAND_CODE + CN)  BAND of CN columns         17_skinny_ring.cu
 *   R > 0, C = -1      RING ROWS of R rows                      18_skinny_ring_rows.cu
 *   R = -L, C = 1, 2, 4  the GEMV of C rows, L lanes a row      19_skinny_gemv.cu
 *   R = -L, C = -1     the GEMV of one row read realigned       19_skinny_gemv.cu
 * VEC: the long operand is read in 16-byte loads (its rows may be, and the
 * side along them is a multiple of 4: a thread's 4 floats are all in it or
 * none; the RING, BAND, RING ROWS and realigned GEMV forms have only its
 * 16-byte instances, B dense and read realigned in the last); in the GEMV
 * of 2 or 4 rows A too (sk_gemv_vec). CLUSTER: a split K's ranges are
 * added up in a cluster of their blocks (sk_cluster_sum), not in planes.
 * A form's device function is declared here and defined in its file, which
 * alone instantiates its kernels: each instance is compiled once. */
#ifndef PG_KERNELS_SKINNY_CUH
#define PG_KERNELS_SKINNY_CUH

#include "internal.h"
#include "kernels/entry.h"
#include "kernels/skinny.h"
#include "kernels/ptx.cuh"

PG_KERNELS_BEGIN

#define SK_THREADS 256
/* The split forms' widest chunks (16_skinny_split.cu): the registry's
 * tile. */
#define SK_ROWS_MAX_CHUNK 16
#define SK_COLS_MAX_CHUNK 8
/* K is split in units of SK_SPLIT_K (a batch of every warp of the ROWS
 * form, 16_skinny_split.cu), so that the blocks fill SK_FILL_BLOCKS an SM: measured on the
 * H200 (a kernel of these forms' design timed apart: 1024 blocks of short
 * ranges ran 1.44-1.55 x as fast as 256 blocks of long ones at
 * 1 x 4096 x 4096, 1.14 x at 4096 x 1 x 4096), the split adds only a read
 * of the planes, small beside the long operand. A range is at least
 * SK_MIN_ROWS_RANGE of K (short M; times half the chunk's rows from 4 on:
 * a wide chunk's block spends more on its sums, and 16 rows ran 1.07 x as
 * fast in ranges of 1024 as of 512) or SK_COLS_TILE_K (short N). */
#define SK_SPLIT_K 64
#define SK_FILL_BLOCKS 8
#define SK_MIN_ROWS_RANGE 128
/* The GEMV's rows at most (19_skinny_gemv.cu): up to them RING ROWS gives
 * way to it where its blocks would be more than the SMs. */
#define SK_GEMV_MAX_ROWS 4
/* A BAND form's kernel is named by C = -(SK_BAND_CODE + N). */
#define SK_BAND_CODE 1000

/* Blocks an SM each form's kernel is compiled for (its __launch_bounds__;
 * the form's file tells why). The split forms (16): registers enough for a
 * batch's loads to be issued before its first product (else ptxas
 * interleaves them, one or two in flight): 64 registers a thread at 4, 80
 * at 3, 128 at 2 (the widest short-M chunks and every short-N form, rows
 * 0). */
static constexpr int sk_blocks_per_sm(int rows) {
  return rows == 1 || rows == 2 ? 4 : rows == 4 ? 3 : 2;
}
#define SK_RING_BLOCKS 4 /* 17_skinny_ring.cu, every N */
#define SK_BAND_BLOCKS 2 /* 17_skinny_ring.cu */
#define SK_RROW_BLOCKS 2 /* 18_skinny_ring_rows.cu */
#define SK_GEMV_BLOCKS 2 /* 19_skinny_gemv.cu */

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

/* The forms, each defined in its file. */
template <int R, bool VEC, bool CLUSTER>
static __device__ __forceinline__ void sk_rows(const pg_gemm_args g);
template <int CN, bool VEC, bool CLUSTER>
static __device__ __forceinline__ void sk_cols(const pg_gemm_args g);
template <int CN> static __device__ __forceinline__ void sk_cols_ring(const pg_gemm_args g);
template <int CN, bool CLUSTER>
static __device__ __forceinline__ void sk_cols_band(const pg_gemm_args g);
template <int MR, bool CLUSTER>
static __device__ __forceinline__ void sk_rows_ring(const pg_gemm_args g);
template <int L, bool VEC> static __device__ __forceinline__ void sk_gemv(const pg_gemm_args g);
template <int L> static __device__ __forceinline__ void sk_gemv_realigned(const pg_gemm_args g);
template <int L, int MR, bool VEC>
static __device__ __forceinline__ void sk_gemv_rows(const pg_gemm_args g);

/* The entry's one kernel, every form under one name (the codes above). */
template <int R, int C, bool VEC, bool CLUSTER = false>
__global__ void __launch_bounds__(SK_THREADS, R < 0            ? SK_GEMV_BLOCKS
                                              : R > 0 && C < 0 ? SK_RROW_BLOCKS
                                              : C <= -SK_BAND_CODE ? SK_BAND_BLOCKS
                                              : C < 0          ? SK_RING_BLOCKS
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

/* ---- the host's side ---------------------------------------------------- */

/* A form's kernels by the width of its chunk of the short side (rows of A,
 * columns of B; the GEMV's: its lanes a row): with scalar and with 16-byte
 * loads, and the same with a split K's ranges added up in clusters (NULL
 * where the form has none). */
typedef struct {
  int chunk;
  const void *kernel[2];  /* scalar loads, 16-byte loads */
  const void *cluster[2]; /* the same, a split K's ranges added up in clusters */
} sk_form;

/* The form of a short side: the narrowest chunk that holds it, else the
 * widest. */
static inline int sk_pick(const sk_form *forms, int count, long long side) {
  int f = 0;
  while (f < count - 1 && side > forms[f].chunk) ++f;
  return f;
}

/* The call as the forms' rules see it (sk_split_launch sets it). */
typedef struct {
  bool rows;            /* M <= N: the short side is M */
  long long short_side; /* M, or N */
  bool vec;             /* the long operand in 16-byte loads (VEC) */
  int split;            /* the split form's index in its side's list */
} sk_shape;

/* Each form's launch, in its file: the split forms' (16; the one that
 * always runs, its K split last), then those that take the call where it
 * meets their rules (true: the launch is set; false: nothing changed). */
void sk_split_launch(pg_layout_args *args, const pg_tuning *tuning, pg_kernel_launch *launch,
                     sk_shape *shape);
void sk_split_k(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                pg_kernel_launch *launch, const sk_shape *shape);
bool sk_ring_launch(pg_layout_args *args, const pg_device *device, pg_kernel_launch *launch,
                    const sk_shape *shape);
bool sk_band_launch(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                    pg_kernel_launch *launch, const sk_shape *shape);
bool sk_ring_rows_launch(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                         pg_kernel_launch *launch, const sk_shape *shape);
bool sk_gemv_launch(pg_layout_args *args, const pg_device *device, pg_kernel_launch *launch,
                    const sk_shape *shape);
/* The DOT form (22): a short side of at most SKD_MAX_SHORT whose long
 * operand's rows run along K, at any layout and batch. sk_dot_side: 1 where
 * B is that operand (a short M, op(B) = T), 2 where A is (a short N,
 * op(A) = N), 0 where the form does not take the call. */
#define SKD_MAX_SHORT 8
int sk_dot_side(const pg_layout_args *args);
bool sk_dot_launch(pg_layout_args *args, pg_kernel_launch *launch);
/* K split into ranges, added up in planes or in clusters (16). */
void sk_configure_split(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                        pg_kernel_launch *launch, const void *kernel, int per_sm,
                        long long slots, long long k_tiles, int min_steps);
/* The static shared memory a block of the split forms (16) and of the RING
 * forms (17) takes at most. */
size_t sk_split_smem(void);
size_t sk_ring_smem_most(void);

PG_KERNELS_END

#endif
