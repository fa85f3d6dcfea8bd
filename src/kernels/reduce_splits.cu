/* Split-K's second kernel, for every entry that splits K into ranges whose
 * sums go to planes of their own (13 tma_ws_splitk and its tile forms, 40
 * wgmma_3xtf32): C = alpha * (P_0 + P_1 + ... + P_{S-1}) + beta * C, each
 * element's partial sums added in split order, so a call gives the same
 * bits on every run. C is not read when beta == 0. The planes are M x N,
 * g.ldp (PG_PLANES_LD) floats a row, from g.partials. Rows on y (striding
 * past the grid's 65535), columns on x. */
#include "internal.h"

#define RS_THREADS 256
#define RS_MAX_ROWS 65535

__global__ void __launch_bounds__(RS_THREADS) pg_reduce_splits_kernel(const pg_gemm_args g) {
  const int col = blockIdx.x * RS_THREADS + threadIdx.x;
  if (col >= g.n) return;
  const size_t plane = (size_t)g.m * g.ldp;
  for (int row = blockIdx.y; row < g.m; row += gridDim.y) {
    const float *p = g.partials + (size_t)row * g.ldp + col;
    float sum = p[0];
    for (int s = 1; s < g.splits; ++s) sum += p[s * plane];
    float *c = g.c + (size_t)row * g.ldc + col;
    const float v = g.alpha * sum;
    *c = g.beta == 0.f ? v : fmaf(g.beta, *c, v);
  }
}

extern "C" int pg_configure_split_k(pg_gemm_args *args, pg_kernel_launch *launch,
                                    long long slots, long long k_tiles, int min_steps) {
  const long long tiles = launch->grid_x;
  if (min_steps < 1) min_steps = 1;
  long long splits = tiles < slots ? slots / tiles : 1;
  if (splits > k_tiles / min_steps) splits = k_tiles / min_steps;
  if (splits <= 1) return 1;
  /* Equal ranges, none empty: the last may be shorter. */
  const long long per_split = (k_tiles + splits - 1) / splits;
  splits = (k_tiles + per_split - 1) / per_split;
  if (splits <= 1) return 1;
  args->splits = (int)splits;
  args->k_tiles_per_split = (int)per_split;
  /* The planes are the workspace: theirs is ldp. After a first kernel the
   * plan points partials and ldp at them at launch (ldp is the first
   * kernel's own until then). */
  if (launch->prepare_kernel == NULL) args->ldp = (int)PG_PLANES_LD(args->n);
  launch->grid_x = tiles * splits;
  launch->workspace_bytes +=
      (size_t)splits * (size_t)args->m * (size_t)PG_PLANES_LD(args->n) * sizeof(float);
  launch->reduce_kernel = (const void *)pg_reduce_splits_kernel;
  launch->reduce_threads = RS_THREADS;
  launch->reduce_grid_x = (args->n + RS_THREADS - 1) / RS_THREADS;
  launch->reduce_grid_y = args->m < RS_MAX_ROWS ? args->m : RS_MAX_ROWS;
  return (int)splits;
}
