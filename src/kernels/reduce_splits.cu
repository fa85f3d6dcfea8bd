/* Split-K's second kernel (in two layouts), for every entry that splits K
 * into ranges whose sums go to planes of their own (13 tma_ws_splitk and
 * its tile forms, 40 wgmma_3xtf32):
 * C = alpha * (P_0 + P_1 + ... + P_{S-1}) + beta * C, each element's
 * partial sums added in a fixed order (split order, or split
 * order within contiguous slices and then slice order: RS_FILL_THREADS),
 * so a call gives the same bits on every run. C is not read when beta ==
 * 0. The planes are the rows from g.split_row0 down (all M where it is 0)
 * x N, g.ldp (PG_PLANES_LD) floats a row, from g.partials. Up to
 * RS_VEC_MAX_SPLITS ranges a thread takes 4 columns of a row and every
 * plane's 16 bytes there at once (pg_reduce_vec4_kernel); past that, rows
 * on y (striding past the grid's 65535) and an element a thread, or see
 * RS_FILL_THREADS for few elements. All wait for the kernel that writes
 * the planes (pg_grid_dependency_wait), so that they may be launched
 * programmatically behind it (pg_launch_step.programmatic). */
#include "internal.h"
#include "kernels/ptx.cuh"

#include <limits.h>
#include <string.h>

#define RS_THREADS 256
#define RS_MAX_ROWS 65535
/* pg_configure_split_tail: the most ranges of K for rows below whole ones. */
#define PG_SPLIT_TAIL_MAX_SPLITS 16

/* Where the planes hold few elements (rows x N) and many splits, one
 * thread an element would leave the memory system idle (each adds its
 * splits one after another): each element's splits are then dealt out to
 * S = 2, 4 or 8 threads of a block in contiguous slices, added in split
 * order within a slice and the slices' sums in slice order (every run the
 * same bits; S = 1 is plain split order), up to RS_FILL_THREADS threads in
 * all. A narrow N packs RS_THREADS / S / N rows into a block's threads. */
#define RS_FILL_THREADS (1 << 18)
#define RS_MAX_SLICES 8
/* Loads in flight a thread of pg_reduce_slices_kernel: its slice's planes
 * are read this many at a time before they are added (in order). */
#define RS_UNROLL 8
/* The most ranges pg_reduce_vec4_kernel adds up: a thread holds all their
 * 16-byte pieces at once (an instance for each of 4, 8 and 16 ranges, so
 * that few ranges keep few registers and many threads an SM). Under Nsight
 * Compute on an H200 (L2 warm, 2026-12-02) it adds 333x777x4444's five
 * planes in 3.5 us, where the kernels below, an element a thread (2331
 * blocks), took 8.3-8.8 (cuBLAS's own split-K reduction 4.8-5.2 there). */
#define RS_VEC_MAX_SPLITS 16
#define RS_VEC_MAX_BLOCKS (1 << 20) /* the grid's cap; its threads stride past it */

static __host__ __device__ __forceinline__ int rs_slices(long long elements, int splits) {
  int slices = 1;
  while (slices < RS_MAX_SLICES && 2 * slices <= splits && elements * slices < RS_FILL_THREADS)
    slices *= 2;
  return slices;
}

/* A block's layout: W = RS_THREADS / S threads an element slice, rows_per
 * rows of a narrow N in them (1 where N >= W, columns then on x). */
static __host__ __device__ __forceinline__ int rs_rows_per_block(int n, int slices) {
  const int width = RS_THREADS / slices;
  return n < width ? width / n : 1;
}

/* C[split_row0 + row][col] = alpha * sum + beta * C (C unread where beta
 * is 0), for both kernels. */
static __device__ __forceinline__ void rs_store(const pg_gemm_args &g, int row, int col, float sum) {
  float *c = g.c + (size_t)(g.split_row0 + row) * g.ldc + col;
  const float v = g.alpha * sum;
  *c = g.beta == 0.f ? v : fmaf(g.beta, *c, v);
}

__global__ void __launch_bounds__(RS_THREADS) pg_reduce_splits_kernel(const pg_gemm_args g) {
  pg_grid_dependency_wait(); /* the planes are complete (the step is programmatic) */
  const int col = blockIdx.x * RS_THREADS + threadIdx.x;
  if (col >= g.n) return;
  const int rows = g.m - g.split_row0; /* the planes' rows: those split */
  const size_t plane = (size_t)rows * g.ldp;
  for (int row = blockIdx.y; row < rows; row += gridDim.y) {
    const float *p = g.partials + (size_t)row * g.ldp + col;
    float sum = p[0];
    for (int s = 1; s < g.splits; ++s) sum += p[s * plane];
    rs_store(g, row, col, sum);
  }
}

/* Ranges up to RS_VEC_MAX_SPLITS: thread t takes columns 4c .. 4c+3 of row
 * r (t = r x groups + c, groups = N / 4 rounded up: a warp's loads are 512
 * contiguous bytes of a plane), loads that piece of every plane before it
 * adds any (all in flight at once), and adds them in split order, as
 * pg_reduce_splits_kernel and the split forms' clusters do: the same
 * bits. A row's last piece, where N is no multiple of 4, is read a float at
 * a time (the planes' padding columns are never written). */
template <int MAX_SPLITS>
__global__ void __launch_bounds__(RS_THREADS) pg_reduce_vec4_kernel(const pg_gemm_args g) {
  pg_grid_dependency_wait(); /* the planes are complete (the step is programmatic) */
  const int rows = g.m - g.split_row0; /* the planes' rows: those split */
  const long long groups = (g.n + 3) / 4, total = (long long)rows * groups;
  const size_t plane = (size_t)rows * g.ldp;
  const int splits = g.splits;
  const bool vec_c = ((uintptr_t)g.c % 16 == 0) && g.ldc % 4 == 0;
  for (long long t = (long long)blockIdx.x * RS_THREADS + threadIdx.x; t < total;
       t += (long long)gridDim.x * RS_THREADS) {
    const int row = (int)(t / groups), col = (int)(t % groups) * 4;
    const float *const p = g.partials + (size_t)row * g.ldp + col;
    float4 v[MAX_SPLITS];
    if (col + 3 < g.n) {
#pragma unroll
      for (int s = 0; s < MAX_SPLITS; ++s)
        if (s < splits) v[s] = *(const float4 *)(p + s * plane);
    } else {
#pragma unroll
      for (int s = 0; s < MAX_SPLITS; ++s)
        if (s < splits) {
          const float *const q = p + s * plane;
          v[s] = make_float4(q[0], col + 1 < g.n ? q[1] : 0.f, col + 2 < g.n ? q[2] : 0.f, 0.f);
        }
    }
    float4 sum = v[0];
#pragma unroll
    for (int s = 1; s < MAX_SPLITS; ++s)
      if (s < splits) {
        sum.x += v[s].x;
        sum.y += v[s].y;
        sum.z += v[s].z;
        sum.w += v[s].w;
      }
    if (vec_c && col + 3 < g.n) {
      float *const c = g.c + (size_t)(g.split_row0 + row) * g.ldc + col;
      float4 out = make_float4(g.alpha * sum.x, g.alpha * sum.y, g.alpha * sum.z, g.alpha * sum.w);
      if (g.beta != 0.f) {
        const float4 old = *(const float4 *)c;
        out.x = fmaf(g.beta, old.x, out.x);
        out.y = fmaf(g.beta, old.y, out.y);
        out.z = fmaf(g.beta, old.z, out.z);
        out.w = fmaf(g.beta, old.w, out.w);
      }
      *(float4 *)c = out;
    } else {
      const float s4[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (col + e < g.n) rs_store(g, row, col + e, s4[e]);
    }
  }
}

/* The same where few elements and many splits (or a narrow N) ask for
 * slices or packed rows (RS_FILL_THREADS); elsewhere the kernel above, one
 * thread an element (a thread of this one's layout ran 1024^3 split 4
 * ways 6 us slower, and loads padded to whole groups of 8 slower still). */
__global__ void __launch_bounds__(RS_THREADS) pg_reduce_slices_kernel(const pg_gemm_args g) {
  __shared__ float slice_sums[RS_THREADS];
  pg_grid_dependency_wait(); /* the planes are complete (the step is programmatic) */
  const int rows = g.m - g.split_row0; /* the planes' rows: those split */
  const int slices = rs_slices((long long)rows * g.n, g.splits);
  const int width = RS_THREADS / slices, rows_per = rs_rows_per_block(g.n, slices);
  const int t = threadIdx.x % width, q = threadIdx.x / width;
  const int col = rows_per > 1 ? t % g.n : blockIdx.x * width + t;
  const int row_in = rows_per > 1 ? t / g.n : 0;
  const bool active = rows_per > 1 ? row_in < rows_per : col < g.n;
  const int per = (g.splits + slices - 1) / slices;
  const int s0 = q * per, s1 = s0 + per < g.splits ? s0 + per : g.splits;
  const size_t plane = (size_t)rows * g.ldp;
  /* Every thread of the block takes the same turns (slices meet in shared
   * memory). */
  for (int base = blockIdx.y * rows_per; base < rows; base += gridDim.y * rows_per) {
    const int row = base + row_in;
    const bool mine = active && row < rows;
    float sum = 0.f;
    if (mine && s0 < s1) {
      const float *p = g.partials + (size_t)row * g.ldp + col + (size_t)s0 * plane;
      sum = p[0];
      int s = s0 + 1;
      for (; s + RS_UNROLL <= s1; s += RS_UNROLL) {
        float v[RS_UNROLL];
#pragma unroll
        for (int u = 0; u < RS_UNROLL; ++u) v[u] = p[(size_t)(s - s0 + u) * plane];
#pragma unroll
        for (int u = 0; u < RS_UNROLL; ++u) sum += v[u];
      }
      for (; s < s1; ++s) sum += p[(size_t)(s - s0) * plane];
    }
    if (slices > 1) {
      slice_sums[threadIdx.x] = sum;
      __syncthreads();
      if (q == 0)
        for (int u = 1; u < slices; ++u)
          if (u * per < g.splits) sum += slice_sums[u * width + t];
      __syncthreads(); /* the sums are read before the next turn's */
    }
    if (mine && q == 0) rs_store(g, row, col, sum);
  }
}

/* The planes of `splits` ranges over the rows from args->split_row0 down,
 * the entry's kernel's partial sums, and the reduction that adds them up. */
static void set_planes(pg_layout_args *args, pg_kernel_launch *launch, long long splits) {
  const long long rows = (long long)args->m - args->split_row0;
  /* After a first kernel, ldp is its own until the launch points the
   * kernel's partials (and ldp) at the planes. */
  if (launch->first.kernel == NULL) args->ldp = (int)PG_PLANES_LD(args->n);
  launch->views.partials =
      PG_IN_REGION(pg_workspace_add(&launch->workspace, splits * rows, PG_PLANES_LD(args->n)));
  /* Both kernels wait for the planes (pg_grid_dependency_wait): they may
   * be launched programmatically behind the kernel that writes them. */
  if (splits <= RS_VEC_MAX_SPLITS) {
    const long long threads = rows * ((args->n + 3) / 4);
    const long long blocks = (threads + RS_THREADS - 1) / RS_THREADS;
    const void *kernel = splits <= 4   ? (const void *)pg_reduce_vec4_kernel<4>
                         : splits <= 8 ? (const void *)pg_reduce_vec4_kernel<8>
                                       : (const void *)pg_reduce_vec4_kernel<RS_VEC_MAX_SPLITS>;
    pg_add_reduction(launch, kernel,
                     blocks < RS_VEC_MAX_BLOCKS ? (blocks > 0 ? blocks : 1) : RS_VEC_MAX_BLOCKS, 1,
                     RS_THREADS, 1);
    return;
  }
  const int slices = rs_slices(rows * args->n, (int)splits);
  const int width = RS_THREADS / slices, rows_per = rs_rows_per_block(args->n, slices);
  const long long row_blocks = (rows + rows_per - 1) / rows_per;
  pg_add_reduction(launch,
                   slices > 1 || rows_per > 1 ? (const void *)pg_reduce_slices_kernel
                                              : (const void *)pg_reduce_splits_kernel,
                   rows_per > 1 ? 1 : (args->n + width - 1) / width,
                   row_blocks < RS_MAX_ROWS ? row_blocks : RS_MAX_ROWS, RS_THREADS, 1);
}

extern "C" int pg_split_in_clusters(pg_layout_args *args, pg_kernel_launch *launch,
                                    const pg_device *device, long long per_sm, int spread,
                                    const void *cluster_kernel) {
  if (args->splits < 2 || args->splits > PG_CLUSTER_MAX || device->sm_count <= 0 || per_sm < 1)
    return 0;
  const long long even = (launch->grid_x + device->sm_count - 1) / device->sm_count;
  const long long blocks = spread || even == 1                 ? even
                           : per_sm < PG_CLUSTER_BLOCKS_PER_SM ? per_sm
                                                               : PG_CLUSTER_BLOCKS_PER_SM;
  if (blocks > per_sm || launch->grid_x > pg_device_cluster_blocks(device, (int)blocks, args->splits))
    return 0;
  /* The planes were the last region (set_planes). */
  pg_workspace_drop_last(&launch->workspace);
  launch->views.partials = PG_CALLER;
  memset(&launch->last, 0, sizeof launch->last);
  launch->kernel = cluster_kernel;
  launch->cluster_x = args->splits;
  launch->max_blocks_per_sm = spread && blocks < per_sm ? (int)blocks : 0;
  return 1;
}

extern "C" int pg_configure_split_k(pg_layout_args *args, pg_kernel_launch *launch,
                                    long long slots, long long k_tiles, int min_steps) {
  const long long tiles = launch->grid_x;
  if (min_steps < 1) min_steps = 1;
  if (tiles <= 0 || slots <= 0) return 1;
  long long splits = tiles < slots ? slots / tiles : 1;
  if (splits > k_tiles / min_steps) splits = k_tiles / min_steps;
  if (splits <= 1) return 1;
  /* Equal ranges, none empty: the last may be shorter. */
  const long long per_split = (k_tiles + splits - 1) / splits;
  splits = (k_tiles + per_split - 1) / per_split;
  if (splits <= 1) return 1;
  args->splits = (int)splits;
  args->k_tiles_per_split = (int)per_split;
  launch->grid_x = tiles * splits;
  set_planes(args, launch, splits);
  return (int)splits;
}

/* The model's time, in K steps, of `whole` blocks of d steps, then `units`
 * blocks of u <= d steps, handed in that order to `slots` slots each as it
 * frees: whole waves of the first, then the last partial wave's r blocks
 * beside the first units on the slots they leave free. */
static long long split_time(long long whole, long long d, long long units, long long u,
                            long long slots) {
  const long long waves = whole / slots, r = whole % slots;
  const long long t = waves * d;
  if (units == 0) return r > 0 ? t + d : t;
  if (r == 0) return t + (units + slots - 1) / slots * u;
  const long long free_slots = slots - r;
  const long long early = free_slots * (d / u); /* run while the r blocks finish */
  if (units <= early) {
    const long long beside = (units + free_slots - 1) / free_slots * u;
    return t + (beside > d ? beside : d);
  }
  return t + d + (units - early + slots - 1) / slots * u;
}

/* The reduction's time in K steps of a wave: it reads `splits` planes of
 * `rows` x N and reads and writes C (bytes x flops_per_byte), against one
 * K step of every slot's tile (tile_m x tile_n x 32 x 2 FLOPs each). */
static long long reduce_steps(long long splits, long long rows, long long n, long long slots,
                              int tile_m, int tile_n, int flops_per_byte) {
  const double bytes = (double)(splits + 2) * (double)rows * (double)n * sizeof(float);
  const double step = (double)slots * tile_m * tile_n * 2.0 * 32.0;
  const double q = bytes * flops_per_byte / step;
  const long long whole = (long long)q;
  return whole < q ? whole + 1 : whole; /* rounded up (no libm in the static library) */
}

extern "C" int pg_configure_split_tail(pg_layout_args *args, pg_kernel_launch *launch,
                                       long long slots, int tile_m, int tile_n,
                                       long long k_tiles, int min_steps, int unit_cost,
                                       int flops_per_byte) {
  const long long tiles = launch->grid_x;
  if (min_steps < 1) min_steps = 1;
  if (unit_cost < 0) unit_cost = 0;
  if (flops_per_byte < 0) flops_per_byte = 0;
  /* Past a grid CUDA launches, the plan is refused anyway: no model (its
   * step counts stay well inside 64 bits below). */
  if (tiles <= 0 || tiles > INT_MAX || k_tiles > INT_MAX || slots <= 0 || tile_m <= 0 ||
      tile_n <= 0 || args->m <= 0 || args->n <= 0 || k_tiles / min_steps < 2)
    return 1;
  const long long tiles_n = ((long long)args->n + tile_n - 1) / tile_n;
  const long long tiles_m = tiles / tiles_n;
  if (tiles_m <= 0) return 1;
  const long long d = k_tiles + unit_cost;
  const long long unsplit = split_time(tiles, d, 0, 0, slots);
  long long best = unsplit, best_rows = tiles_m, best_splits = 1;
  long long max_splits = k_tiles / min_steps;
  if (max_splits > slots) max_splits = slots;
  /* Whole rows on top: none (a plain split, any count), or so many that
   * the rows split are at most one wave of tiles and a row (a partial last
   * wave's), in at most PG_SPLIT_TAIL_MAX_SPLITS ranges. */
  const long long tail_rows_max = slots / tiles_n + 1;
  const long long fewest_whole = tiles_m - tail_rows_max > 1 ? tiles_m - tail_rows_max : 1;
  for (long long rows = tiles_m - 1; rows >= 0; --rows) { /* a tie: more rows whole */
    if (rows > 0 && rows < fewest_whole) rows = 0; /* past the last wave's rows: none whole */
    const long long top = rows * tiles_n, below = tiles - top;
    const long long most = rows > 0 && max_splits > PG_SPLIT_TAIL_MAX_SPLITS
                               ? PG_SPLIT_TAIL_MAX_SPLITS
                               : max_splits;
    for (long long s = 2; s <= most; ++s) {
      const long long per = (k_tiles + s - 1) / s;
      const long long splits = (k_tiles + per - 1) / per;
      if (splits != s) continue; /* the same ranges as a smaller count */
      const long long t =
          split_time(top, d, below * splits, per + unit_cost, slots) +
          reduce_steps(splits, args->m - rows * tile_m, args->n, slots, tile_m, tile_n,
                       flops_per_byte);
      if (t < best) best = t, best_rows = rows, best_splits = splits;
    }
  }
  if (best_splits <= 1 ||
      (double)best * 100.0 > (double)unsplit * (100 - PG_SPLIT_TAIL_MIN_GAIN_PERCENT))
    return 1;
  const long long per = (k_tiles + best_splits - 1) / best_splits;
  args->splits = (int)best_splits;
  args->k_tiles_per_split = (int)per;
  args->split_row0 = (int)(best_rows * tile_m);
  launch->grid_x = best_rows * tiles_n + (tiles - best_rows * tiles_n) * best_splits;
  launch->model.fill = (double)tiles * (double)k_tiles / ((double)slots * (double)best);
  set_planes(args, launch, best_splits);
  return (int)best_splits;
}
