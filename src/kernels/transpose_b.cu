/* B^T for the wgmma members: TF32 wgmma reads both operands K-major from
 * shared memory, and a row-major B (K x N) is N-major. The copy engine
 * cannot transpose 4-byte elements, so each call of a wgmma member starts
 * with this kernel: B (K x N, ldb) -> B^T (N x ldt, ldt = K rounded up to 4)
 * in the call's workspace (args.partials, ldt = args.ldp), zeros in the
 * padding columns. The wgmma kernel then reads B^T as it reads A. Its time
 * is part of the call's (docs/wgmma.md measures it).
 *
 * Memory-bound: a 32 x 32 tile through shared memory (one padding column:
 * the column reads hit 32 banks), 256 threads as 32 x 8, each reading and
 * writing 4 elements, both coalesced along a row. K tiles along y, strided
 * over a grid capped at CUDA's limit. */
#include "internal.h"
#include "kernels/wgmma_tile.h"

#define TB_TILE 32
#define TB_ROWS 8 /* threads along the tile's rows */
#define TB_THREADS (TB_TILE * TB_ROWS)
#define TB_MAX_GRID_Y 65535

__global__ void __launch_bounds__(TB_THREADS) pg_transpose_b_kernel(const pg_gemm_args g) {
  __shared__ float tile[TB_TILE][TB_TILE + 1];
  const int tx = threadIdx.x % TB_TILE, ty = threadIdx.x / TB_TILE;
  const long long n0 = (long long)blockIdx.x * TB_TILE;
  for (long long k0 = (long long)blockIdx.y * TB_TILE; k0 < g.ldp;
       k0 += (long long)gridDim.y * TB_TILE) {
#pragma unroll
    for (int i = 0; i < TB_TILE; i += TB_ROWS) {
      const long long k = k0 + ty + i, n = n0 + tx;
      tile[ty + i][tx] = k < g.k && n < g.n ? __ldg(g.b + k * g.ldb + n) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TB_TILE; i += TB_ROWS) {
      const long long n = n0 + ty + i, k = k0 + tx;
      if (n < g.n && k < g.ldp) g.partials[n * g.ldp + k] = tile[tx][ty + i];
    }
    __syncthreads(); /* the tile is read before the next one lands */
  }
}

extern "C" void pg_configure_transpose_b(pg_layout_args *args, pg_kernel_launch *launch) {
  const long long ldt = WG_LDT(args->k);
  const long long tiles_k = (ldt + TB_TILE - 1) / TB_TILE;
  args->ldp = (int)ldt;
  const int bt = PG_IN_REGION(pg_workspace_add(&launch->workspace, args->n, ldt));
  launch->first.kernel = (const void *)pg_transpose_b_kernel;
  launch->first.grid_x = ((long long)args->n + TB_TILE - 1) / TB_TILE;
  launch->first.grid_y = tiles_k < TB_MAX_GRID_Y ? tiles_k : TB_MAX_GRID_Y;
  launch->first.threads = TB_THREADS;
  launch->first.views.partials = bt; /* it writes B^T there */
  launch->first.what = "B^T kernel";
  launch->views.b = bt; /* the kernel reads B^T where B was */
  launch->transposes = 1;
}

/* ---- any layout (kernels/layout_first.cuh) ---- */

#include "kernels/layout_first.cuh"

extern "C" int pg_configure_layout_transposes(pg_layout_args *args, pg_kernel_launch *launch,
                                              int transpose_b) {
  const void *kernel = transpose_b
                           ? (const void *)pg_layout_first_kernel<LF_TRANSPOSE_AB, lf_no_split>
                           : (const void *)pg_layout_first_kernel<LF_TRANSPOSE_A, lf_no_split>;
  const int set = transpose_b ? lf_configure<LF_TRANSPOSE_AB>(args, launch, kernel)
                              : lf_configure<LF_TRANSPOSE_A>(args, launch, kernel);
  if (!set) return 0;
  launch->first.what = "transposes (operands K-major into the workspace)";
  /* A^T is what op(A) = T costs over op N (B^T is the NN call's as well):
   * charged as the copy it is. */
  if (args->op_a)
    launch->model.first_bytes = 2.0 * sizeof(float) *
                                (args->stride_a != 0 && args->batch > 1 ? args->batch : 1) *
                                (double)args->m * args->k;
  return 1;
}
