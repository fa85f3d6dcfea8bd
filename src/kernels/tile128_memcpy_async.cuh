/* t128_cp_async_tile written with libcu++'s cuda::memcpy_async, for the
 * kernels whose subject is a libcu++ completion object: `sync` is a
 * cuda::pipeline (06, 07) or a cuda::barrier (08). Same pieces, same places.
 * memcpy_async has no zero-fill, so past the edges of A and B the missing
 * elements are plain stores of zero, published by the same wait that
 * publishes the copies. */
#ifndef PG_TILE128_MEMCPY_ASYNC_CUH
#define PG_TILE128_MEMCPY_ASYNC_CUH

#include <cuda/barrier>
#include <cuda/pipeline>

#include "kernels/tile128.cuh"

/* One 16-byte piece: a single 16-byte copy when the row allows it, else
 * 4-byte copies of the in-range elements and zero stores for the rest. */
template <typename Sync>
static __device__ __forceinline__ void t128_memcpy_async_piece(float *dst, const float *row_ptr,
                                                               int col, int width, int row_ok,
                                                               int vec, Sync &sync) {
  if (vec && row_ok && col + 3 < width) {
    cuda::memcpy_async(dst, row_ptr + col, cuda::aligned_size_t<16>(16), sync);
    return;
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if (row_ok && col + i < width)
      cuda::memcpy_async(dst + i, row_ptr + col + i, cuda::aligned_size_t<4>(4), sync);
    else
      dst[i] = 0.f;
  }
}

template <typename Sync>
static __device__ __forceinline__ void t128_memcpy_async_tile(const pg_gemm_args &g, float *stage,
                                                              int m0, int n0, int k0, Sync &sync) {
  const int tid = threadIdx.x;
  const int a_row = m0 + tid / 2, a_col = k0 + (tid % 2) * 4;
  const int b_row = k0 + tid / 32, b_col = n0 + (tid % 32) * 4;
  t128_memcpy_async_piece(t128_smem_a(stage) + (tid / 2) * T128_TILE_K + (tid % 2) * 4,
                          g.a + (size_t)a_row * g.lda, a_col, g.k, a_row < g.m, g.vec_a, sync);
  t128_memcpy_async_piece(t128_smem_b(stage) + (tid / 32) * T128_TILE_N + (tid % 32) * 4,
                          g.b + (size_t)b_row * g.ldb, b_col, g.n, b_row < g.k, g.vec_b, sync);
}

#endif
