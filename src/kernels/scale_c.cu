/* C = beta * C: the whole call when its product term vanishes (alpha = 0,
 * or K = 0). BLAS reads neither A nor B then, so a NaN or Inf in them never
 * reaches C, and it reads C only when beta != 0 (beta = 0 writes zeros,
 * whatever C held). Every kernel entry's plan launches this instead of its
 * own kernel for such a call (src/plan.c). Memory-bound: one thread per
 * element, rows of C along y, columns along x, strided over grids capped at
 * CUDA's limits. */
#include "internal.h"

#define SCALE_THREADS PG_SCALE_C_THREADS
#define SCALE_MAX_GRID_X 4096
#define SCALE_MAX_GRID_Y 65535

__global__ void __launch_bounds__(SCALE_THREADS) pg_scale_c_kernel(const pg_layout_args g) {
  /* The rows of every C of the batch, one after another. */
  const long long rows = (long long)g.m * g.batch;
  for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
    const long long member = r / g.m, row = r - member * g.m;
    float *c_row = g.c + member * g.stride_c + row * g.ldc;
    for (long long col = (long long)blockIdx.x * SCALE_THREADS + threadIdx.x; col < g.n;
         col += (long long)gridDim.x * SCALE_THREADS)
      c_row[col] = g.beta == 0.0f ? 0.0f : g.beta * c_row[col];
  }
}

extern "C" void pg_configure_scale_c(const pg_layout_args *args, pg_kernel_launch *launch) {
  const long long blocks_x = ((long long)args->n + SCALE_THREADS - 1) / SCALE_THREADS;
  launch->kernel = (const void *)pg_scale_c_kernel;
  launch->grid_x = blocks_x < SCALE_MAX_GRID_X ? blocks_x : SCALE_MAX_GRID_X;
  const long long rows = (long long)args->m * (args->batch > 0 ? args->batch : 1);
  launch->grid_y = rows < SCALE_MAX_GRID_Y ? rows : SCALE_MAX_GRID_Y;
}
