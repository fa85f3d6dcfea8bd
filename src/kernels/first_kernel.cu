/* The launch of a first kernel that writes operands into a call's
 * workspace before the entry's kernel reads them there (the emulated
 * entry's parts of A and copy of B, 40_wgmma_3xtf32.cu): its grid, a thread
 * 4 consecutive floats of a row (kernels/first_kernel.cuh), rows on y, and
 * the workspace it fills (internal.h). */
#include "kernels/first_kernel.cuh"

#define FK_MAX_GRID_Y 65535

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
  launch->prepare_grid_y = grid_rows < FK_MAX_GRID_Y ? grid_rows : FK_MAX_GRID_Y;
  launch->prepare_threads = PG_FIRST_THREADS;
  launch->prepare_a_rows = a_rows;
  launch->prepare_b_rows = b_rows;
  launch->prepare_b_ld = (int)b_ld;
}
