/* A first kernel for the TMA entries that take any layout (tma_ws_any):
 * where A or B is not where TMA reads it (a base address off 16 bytes, or
 * a leading dimension that is no multiple of 4 floats), A and B are copied
 * into the call's workspace with 16-byte rows, as the plan's first-kernel
 * fields describe: A's M rows of ldp = K rounded up to 4 floats, then, where
 * B's layout is not TMA's, B's K rows of N rounded up to 4 (zeros in the
 * padding). The kernel then reads them there (pg_kernel_launch.prepare_a_rows,
 * prepare_b_rows). A is copied whenever a copy is made at all, so that the
 * plan's one first-kernel layout serves (A's copy costs M x K floats read and
 * written; B's is what the layout asks for). Memory-bound: a thread moves 4
 * consecutive floats of a row; rows on y (strided past the grid's 65535). */
#include "internal.h"

#define CO_THREADS 256
#define CO_MAX_GRID_Y 65535

__global__ void __launch_bounds__(CO_THREADS) pg_copy_operands_kernel(const pg_gemm_args g) {
  const long long c = ((long long)blockIdx.x * CO_THREADS + threadIdx.x) * 4;
  const long long ldb_copy = PG_PLANES_LD(g.n), rows = (long long)g.m + (g.vec_b ? 0 : g.k);
  for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
    const bool is_a = r < g.m;
    const long long width = is_a ? g.k : g.n, pitch = is_a ? g.ldp : ldb_copy;
    if (c >= pitch) continue;
    const float *const src = is_a ? g.a + r * g.lda : g.b + (r - g.m) * g.ldb;
    float v[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) v[i] = c + i < width ? __ldg(src + c + i) : 0.f;
    float *const dst = is_a ? g.partials + r * pitch
                            : g.partials + (long long)g.m * g.ldp + (r - g.m) * pitch;
    *(float4 *)(dst + c) = make_float4(v[0], v[1], v[2], v[3]);
  }
}

extern "C" int pg_configure_operand_copies(pg_gemm_args *args, pg_kernel_launch *launch) {
  if (args->vec_a && args->vec_b) return 0;
  const long long lda_copy = PG_PLANES_LD(args->k);
  const long long ldb_copy = args->vec_b ? 0 : PG_PLANES_LD(args->n);
  const long long b_rows = args->vec_b ? 0 : args->k;
  args->ldp = (int)lda_copy;
  launch->workspace_bytes += ((size_t)args->m * (size_t)lda_copy +
                              (size_t)b_rows * (size_t)ldb_copy) * sizeof(float);
  launch->prepare_kernel = (const void *)pg_copy_operands_kernel;
  const long long widest = lda_copy > ldb_copy ? lda_copy : ldb_copy;
  const long long rows = (long long)args->m + b_rows;
  launch->prepare_grid_x = (widest / 4 + CO_THREADS - 1) / CO_THREADS;
  launch->prepare_grid_y = rows < CO_MAX_GRID_Y ? rows : CO_MAX_GRID_Y;
  launch->prepare_threads = CO_THREADS;
  launch->prepare_a_rows = args->m;
  launch->prepare_b_rows = b_rows;
  launch->prepare_b_ld = (int)ldb_copy;
  return 1;
}
