/* A first kernel for the TMA entries that take any layout (the split forms
 * of tma_ws, 13_tma_ws_splitk.cu): an operand that is not where TMA reads it
 * (a base address off 16 bytes, or a leading dimension that is no multiple
 * of 4 floats) is copied into the call's workspace with 16-byte rows, as the
 * plan's first-kernel fields describe: where A's layout asks, A's M rows of
 * ldp = K rounded up to 4 floats, then, where B's layout asks, B's K rows of
 * N rounded up to 4 (zeros in the padding). The kernel then reads them there
 * (pg_kernel_launch.prepare_a_rows, prepare_b_rows); an operand TMA reads
 * is not copied. The kernel behind it is launched programmatically: it
 * may start as this one's blocks start, and waits for its end before it
 * reads a copy.
 *
 * Memory-bound, and in the call's time: a block takes CO_ROWS rows of a
 * stretch of 4 x PG_FIRST_THREADS columns, its threads consecutive columns
 * (every load and store of a warp 128 contiguous bytes, whatever the row's
 * alignment), and each thread issues all its 4 x CO_ROWS loads before its
 * stores, so that many are in flight. (A thread moving 4 consecutive floats
 * of one row, as the emulated entry's first kernel does, took 35-37 us for
 * the copies of 333x777x4444 and 3001x5003x1001 on an H200 under Nsight
 * Compute, where this kernel takes 10 and 19: bench/results/h200-copy-kernel-ncu.txt.) */
#include "kernels/first_kernel.cuh"
#include "kernels/ptx.cuh"

#define CO_MAX_GRID_Y 65535
#define CO_ROWS 4 /* rows a block copies at a time */
#define CO_PER_THREAD 4 /* columns a thread copies in a row, PG_FIRST_THREADS apart */
#define CO_STRETCH (CO_PER_THREAD * PG_FIRST_THREADS) /* columns a block copies in a row */
#define CO_MAX_BLOCKS (1 << 20) /* the grid's cap; its blocks stride over the units past it */

/* A block's units of work: CO_ROWS rows by one stretch of CO_STRETCH
 * columns of one operand, A's (its row groups by its stretches) before B's,
 * so that no block is launched for columns past an operand's rows. (One
 * grid over the wider operand's stretches left most blocks idle where the
 * rows differ in width, or where A is not copied: 333x777x4444's copy of B
 * took 28 us with 5 blocks a row group, 10 us with 1.) */
typedef struct {
  long long a_rows, b_rows, a_ld, b_ld, a_stretches, b_stretches, a_units, units;
} co_units;

static __host__ __device__ inline co_units co_units_of(const pg_gemm_args &g) {
  co_units u;
  u.a_rows = g.vec_a ? 0 : g.m;
  u.b_rows = g.vec_b ? 0 : g.k;
  u.a_ld = PG_PLANES_LD(g.k);
  u.b_ld = PG_PLANES_LD(g.n);
  u.a_stretches = (u.a_ld + CO_STRETCH - 1) / CO_STRETCH;
  u.b_stretches = (u.b_ld + CO_STRETCH - 1) / CO_STRETCH;
  u.a_units = (u.a_rows + CO_ROWS - 1) / CO_ROWS * u.a_stretches;
  u.units = u.a_units + (u.b_rows + CO_ROWS - 1) / CO_ROWS * u.b_stretches;
  return u;
}

__global__ void __launch_bounds__(PG_FIRST_THREADS) pg_copy_operands_kernel(const pg_gemm_args g) {
  /* The GEMM kernel, launched programmatically behind this one, may start
   * now: its blocks set up beside the copy's last blocks, and its producer
   * waits for the copy's end before it reads a copy. */
  pg_grid_launch_dependents();
  const co_units u = co_units_of(g);
  for (long long unit = blockIdx.x; unit < u.units; unit += gridDim.x) {
    const bool is_a = unit < u.a_units;
    const long long local = is_a ? unit : unit - u.a_units;
    const long long stretches = is_a ? u.a_stretches : u.b_stretches;
    const long long r0 = local / stretches * CO_ROWS;
    const long long c0 = local % stretches * CO_STRETCH + threadIdx.x;
    const long long rows = is_a ? u.a_rows : u.b_rows, width = is_a ? g.k : g.n;
    const long long ld_out = is_a ? u.a_ld : u.b_ld, ld_in = is_a ? g.lda : g.ldb;
    const float *const in = is_a ? g.a : g.b;
    float *const out = is_a ? g.partials : g.partials + u.a_rows * u.a_ld;
    float v[CO_ROWS][CO_PER_THREAD];
#pragma unroll
    for (int j = 0; j < CO_ROWS; ++j) {
      const long long r = r0 + j;
#pragma unroll
      for (int i = 0; i < CO_PER_THREAD; ++i) {
        const long long c = c0 + (long long)i * PG_FIRST_THREADS;
        v[j][i] = r < rows && c < width ? __ldg(in + r * ld_in + c) : 0.f;
      }
    }
#pragma unroll
    for (int j = 0; j < CO_ROWS; ++j)
#pragma unroll
      for (int i = 0; i < CO_PER_THREAD; ++i) {
        const long long c = c0 + (long long)i * PG_FIRST_THREADS;
        if (r0 + j < rows && c < ld_out) out[(r0 + j) * ld_out + c] = v[j][i];
      }
  }
}

/* What every first kernel's launch says but its grid: the workspace it
 * fills (a_rows rows of a_ld floats, args->ldp, then b_rows of b_ld) and
 * the plan's first-kernel fields. */
static void set_first_kernel(pg_gemm_args *args, pg_kernel_launch *launch, const void *kernel,
                             long long a_rows, long long a_ld, long long b_rows, long long b_ld) {
  args->ldp = (int)a_ld;
  launch->workspace_bytes +=
      ((size_t)a_rows * (size_t)a_ld + (size_t)b_rows * (size_t)b_ld) * sizeof(float);
  launch->prepare_kernel = kernel;
  launch->prepare_threads = PG_FIRST_THREADS;
  launch->prepare_a_rows = a_rows;
  launch->prepare_b_rows = b_rows;
  launch->prepare_b_ld = (int)b_ld;
}

extern "C" void pg_configure_first_kernel(pg_gemm_args *args, pg_kernel_launch *launch,
                                          const void *kernel, long long grid_rows,
                                          long long a_rows, long long a_ld, long long b_rows,
                                          long long b_ld) {
  set_first_kernel(args, launch, kernel, a_rows, a_ld, b_rows, b_ld);
  const long long widest = a_ld > b_ld ? a_ld : b_ld;
  launch->prepare_grid_x = (widest / 4 + PG_FIRST_THREADS - 1) / PG_FIRST_THREADS;
  launch->prepare_grid_y = grid_rows < CO_MAX_GRID_Y ? grid_rows : CO_MAX_GRID_Y;
}

extern "C" int pg_configure_operand_copies(pg_gemm_args *args, pg_kernel_launch *launch) {
  if (args->vec_a && args->vec_b) return 0;
  const co_units u = co_units_of(*args);
  set_first_kernel(args, launch, (const void *)pg_copy_operands_kernel, u.a_rows, u.a_ld,
                   u.b_rows, u.b_rows > 0 ? u.b_ld : 0);
  /* Its grid: one block a unit, A's then B's (co_units). The kernel takes
   * A's rows to be ldp = PG_PLANES_LD(K) wide, as set_first_kernel has just
   * set it and the plan reads them (the split planner leaves ldp alone
   * after a first kernel: reduce_splits.cu). */
  launch->prepare_grid_x = u.units < CO_MAX_BLOCKS ? u.units : CO_MAX_BLOCKS;
  launch->prepare_grid_y = 1;
  launch->copied_floats = u.a_rows * u.a_ld + u.b_rows * u.b_ld;
  launch->prepare_programmatic = 1; /* the tma_ws kernels wait for it */
  return 1;
}
