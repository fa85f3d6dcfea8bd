/* A first kernel for the TMA entries that take any layout (the split forms
 * of tma_ws, 13_tma_ws_splitk.cu): an operand that is not where TMA reads it
 * (a base address off 16 bytes, or a leading dimension that is no multiple
 * of 4 floats) is copied into the call's workspace with 16-byte rows, as the
 * plan's first-kernel fields describe: where A's layout asks, A's M rows of
 * ldp = K rounded up to 4 floats, then, where B's layout asks, B's K rows of
 * N rounded up to 4 (zeros in the padding). The kernel then reads them there
 * (the launch's views of the workspace); an operand TMA reads is not
 * copied. The kernel behind it is launched programmatically: it
 * may start as this one's blocks start, and waits for its end before it
 * reads a copy.
 *
 * Memory-bound, and in the call's time: the copies are one list of output
 * floats, cut into equal spans, one a block, over a grid of one wave; a
 * block's threads take consecutive floats (every store of a warp 128
 * contiguous bytes, every load at most 5 sectors, whatever the row's
 * alignment), each issuing CO_BATCH loads before their stores. (A thread
 * moving 4 consecutive floats of one row, as the emulated entry's first
 * kernel does, took 35-37 us for the copies of 333x777x4444 and
 * 3001x5003x1001 on an H200 under Nsight Compute, blocks of 4 rows by 1024
 * columns 10 and 19: bench/results/any-layout/h200-copy-kernel-ncu.txt.) */
#include "kernels/first_kernel.cuh"
#include "kernels/ptx.cuh"

#define CO_MAX_GRID_Y 65535
#define CO_BATCH 16 /* loads a thread issues before its stores */
#define CO_BLOCKS_PER_SM 4 /* the launch bounds give 64 registers: 16 loads in flight, no spills */
#define CO_MIN_PER_THREAD 4 /* no block for fewer floats a thread than this */

/* The copies as one list of output floats: A's a_rows rows of a_ld (its
 * padding columns included), then B's b_rows rows of b_ld. */
typedef struct {
  long long a_rows, b_rows, a_ld, b_ld, a_floats, floats;
} co_sizes;

static __host__ __device__ inline co_sizes co_sizes_of(const pg_gemm_args &g) {
  co_sizes s;
  s.a_rows = g.vec_a ? 0 : g.m;
  s.b_rows = g.vec_b ? 0 : g.k;
  s.a_ld = PG_PLANES_LD(g.k);
  s.b_ld = PG_PLANES_LD(g.n);
  s.a_floats = s.a_rows * s.a_ld;
  s.floats = s.a_floats + s.b_rows * s.b_ld;
  return s;
}

/* Output floats [lo, hi) of one operand (`width` columns of `ld_in` read,
 * rows of ld_out written, zeros past width): a thread takes every
 * PG_FIRST_THREADS-th from lo + threadIdx.x, CO_BATCH loads before their
 * stores. The store's index is the output float's own; the load's address
 * and column follow it by a step of PG_FIRST_THREADS floats, one division
 * a thread in all. (hi - lo, a block's span, is below 2^31: the span is the
 * copies over a wave of blocks.) */
static __device__ __forceinline__ void co_copy_range(const float *__restrict__ in,
                                                     float *__restrict__ out, int width,
                                                     long long ld_in, int ld_out, long long lo,
                                                     long long hi) {
  const long long first = lo + threadIdx.x;
  if (first >= hi) return;
  const long long r = first / ld_out;
  int c = (int)(first - r * ld_out);
  const float *src = in + r * ld_in + c;
  const int step_rows = PG_FIRST_THREADS / ld_out;
  const int step_cols = PG_FIRST_THREADS - step_rows * ld_out;
  const long long step = (long long)step_rows * ld_in + step_cols, wrap = ld_in - ld_out;
  float *dst = out + first;
  for (int left = (int)(hi - first); left > 0; left -= CO_BATCH * PG_FIRST_THREADS) {
    float v[CO_BATCH];
#pragma unroll
    for (int j = 0; j < CO_BATCH; ++j) {
      v[j] = j * PG_FIRST_THREADS < left && c < width ? __ldg(src) : 0.f;
      src += step;
      c += step_cols;
      if (c >= ld_out) {
        c -= ld_out;
        src += wrap;
      }
    }
#pragma unroll
    for (int j = 0; j < CO_BATCH; ++j)
      if (j * PG_FIRST_THREADS < left) dst[j * PG_FIRST_THREADS] = v[j];
    dst += CO_BATCH * PG_FIRST_THREADS;
  }
}

/* Each block an equal span of the list (a multiple of 32 floats, so that a
 * warp's stores fill whole 128-byte lines), on a grid of one wave
 * (pg_configure_operand_copies): every block ends at about the same time,
 * with no second wave of a few blocks behind the first. It is no faster
 * than blocks of 4 rows by 1024 columns, one a unit (1111 units over 1056
 * block slots at 333x777x4444, a quarter of the threads idle on rows of
 * 780): the 14 MB of B there took 9.15 us under Nsight Compute on the
 * H200, against 8.6-9.9, and `auto` at the shape 82.8 us against 82.5.
 * On the H200 a copy that realigns rows takes what a contiguous copy of
 * its bytes takes (bench/copy_ceiling.cu, 11.5 us each for those 14 MB
 * behind an L2 flush, launch included): what the copy costs is its bytes
 * and its launch. */
__global__ void __launch_bounds__(PG_FIRST_THREADS, CO_BLOCKS_PER_SM)
    pg_copy_operands_kernel(const pg_gemm_args g) {
  /* The GEMM kernel, launched programmatically behind this one, may start
   * now: its blocks set up as the copy's blocks end, and its producer
   * waits for the copy's end before it reads a copy. */
  pg_grid_launch_dependents();
  const co_sizes s = co_sizes_of(g);
  const long long span = ((s.floats + gridDim.x - 1) / gridDim.x + 31) & ~31ll;
  const long long lo = blockIdx.x * span;
  const long long hi = lo + span < s.floats ? lo + span : s.floats;
  if (lo < s.a_floats)
    co_copy_range(g.a, g.partials, g.k, g.lda, (int)s.a_ld, lo, hi < s.a_floats ? hi : s.a_floats);
  if (hi > s.a_floats)
    co_copy_range(g.b, g.partials + s.a_floats, g.n, g.ldb, (int)s.b_ld,
                  (lo > s.a_floats ? lo : s.a_floats) - s.a_floats, hi - s.a_floats);
}

/* What every first kernel's launch says but its grid: the workspace it
 * fills (a_rows rows of a_ld floats, args->ldp, then b_rows of b_ld), that
 * it writes there, and that the entry's kernel reads what it wrote. */
static void set_first_kernel(pg_layout_args *args, pg_kernel_launch *launch, const void *kernel,
                             long long a_rows, long long a_ld, long long b_rows, long long b_ld) {
  args->ldp = (int)a_ld;
  const int a = PG_IN_REGION(pg_workspace_add(&launch->workspace, a_rows, a_ld));
  const int b = PG_IN_REGION(pg_workspace_add(&launch->workspace, b_rows, b_ld));
  launch->first.kernel = kernel;
  launch->first.threads = PG_FIRST_THREADS;
  launch->first.views.partials = a; /* it writes from the workspace's start */
  launch->first.what = "first kernel (operands into the workspace)";
  if (a_rows > 0) launch->views.a = a;
  if (b_rows > 0) launch->views.b = b;
}

extern "C" void pg_configure_first_kernel(pg_layout_args *args, pg_kernel_launch *launch,
                                          const void *kernel, long long grid_rows,
                                          long long a_rows, long long a_ld, long long b_rows,
                                          long long b_ld) {
  set_first_kernel(args, launch, kernel, a_rows, a_ld, b_rows, b_ld);
  const long long widest = a_ld > b_ld ? a_ld : b_ld;
  launch->first.grid_x = (widest / 4 + PG_FIRST_THREADS - 1) / PG_FIRST_THREADS;
  launch->first.grid_y = grid_rows < CO_MAX_GRID_Y ? grid_rows : CO_MAX_GRID_Y;
}

extern "C" int pg_configure_operand_copies(pg_layout_args *args, const pg_device *device,
                                           pg_kernel_launch *launch) {
  if (args->vec_a && args->vec_b) return 0;
  const co_sizes s = co_sizes_of(*args);
  set_first_kernel(args, launch, (const void *)pg_copy_operands_kernel, s.a_rows, s.a_ld,
                   s.b_rows, s.b_rows > 0 ? s.b_ld : 0);
  /* Its grid: one wave of blocks (CO_BLOCKS_PER_SM an SM), fewer where
   * their threads would copy fewer than CO_MIN_PER_THREAD floats each. The
   * kernel takes A's rows to be ldp = PG_PLANES_LD(K) wide, as
   * set_first_kernel has just set it and the plan reads them (the split
   * planner leaves ldp alone after a first kernel: reduce_splits.cu). */
  const long long wave = (long long)CO_BLOCKS_PER_SM * (device->sm_count > 0 ? device->sm_count : 1);
  const long long needed =
      (s.floats + CO_MIN_PER_THREAD * PG_FIRST_THREADS - 1) / (CO_MIN_PER_THREAD * PG_FIRST_THREADS);
  const long long grid = needed < wave ? needed : wave;
  const long long least = (s.floats >> 30) + 1; /* a span below 2^31 floats (co_copy_range) */
  launch->first.grid_x = grid > least ? grid : least;
  launch->first.grid_y = 1;
  launch->model.first_bytes = 2.0 * sizeof(float) * (double)s.floats; /* read and written */
  launch->programmatic = 1; /* the kernel waits for it */
  return 1;
}
