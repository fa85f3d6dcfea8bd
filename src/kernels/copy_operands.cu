/* A first kernel for the TMA entries that take any layout (tma_ws_any):
 * an operand that is not where TMA reads it (a base address off 16 bytes,
 * or a leading dimension that is no multiple of 4 floats) is copied into
 * the call's workspace with 16-byte rows, as the plan's first-kernel fields
 * describe: where A's layout asks, A's M rows of ldp = K rounded up to 4
 * floats, then, where B's layout asks, B's K rows of N rounded up to 4
 * (zeros in the padding). The kernel then reads them there
 * (pg_kernel_launch.prepare_a_rows, prepare_b_rows); an operand TMA reads
 * is not copied. Memory-bound: a thread moves 4 consecutive floats of a row
 * (kernels/first_kernel.cuh); rows on y. */
#include "kernels/first_kernel.cuh"

#define CO_MAX_GRID_Y 65535

__global__ void __launch_bounds__(PG_FIRST_THREADS) pg_copy_operands_kernel(const pg_gemm_args g) {
  const long long c = ((long long)blockIdx.x * PG_FIRST_THREADS + threadIdx.x) * 4;
  const long long ldb_copy = PG_PLANES_LD(g.n), a_rows = g.vec_a ? 0 : g.m;
  const long long rows = a_rows + (g.vec_b ? 0 : g.k);
  for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
    if (r < a_rows) {
      if (c < g.ldp) pg_copy4(g.partials + r * g.ldp, g.a + r * g.lda, c, g.k);
    } else if (c < ldb_copy) {
      pg_copy4(g.partials + a_rows * g.ldp + (r - a_rows) * ldb_copy, g.b + (r - a_rows) * g.ldb,
               c, g.n);
    }
  }
}

extern "C" void pg_configure_first_kernel(pg_gemm_args *args, pg_kernel_launch *launch,
                                          const void *kernel, long long grid_rows,
                                          long long a_rows, long long a_ld, long long b_rows,
                                          long long b_ld) {
  args->ldp = (int)a_ld;
  launch->workspace_bytes +=
      ((size_t)a_rows * (size_t)a_ld + (size_t)b_rows * (size_t)b_ld) * sizeof(float);
  launch->prepare_kernel = kernel;
  const long long widest = a_ld > b_ld ? a_ld : b_ld;
  launch->prepare_grid_x = (widest / 4 + PG_FIRST_THREADS - 1) / PG_FIRST_THREADS;
  launch->prepare_grid_y = grid_rows < CO_MAX_GRID_Y ? grid_rows : CO_MAX_GRID_Y;
  launch->prepare_threads = PG_FIRST_THREADS;
  launch->prepare_a_rows = a_rows;
  launch->prepare_b_rows = b_rows;
  launch->prepare_b_ld = (int)b_ld;
}

extern "C" int pg_configure_operand_copies(pg_gemm_args *args, pg_kernel_launch *launch) {
  if (args->vec_a && args->vec_b) return 0;
  const long long a_rows = args->vec_a ? 0 : args->m, b_rows = args->vec_b ? 0 : args->k;
  pg_configure_first_kernel(args, launch, (const void *)pg_copy_operands_kernel, a_rows + b_rows,
                            a_rows, PG_PLANES_LD(args->k), b_rows,
                            args->vec_b ? 0 : PG_PLANES_LD(args->n));
  return 1;
}
