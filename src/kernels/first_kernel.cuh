/* The first kernel of the emulated entry (40_wgmma_3xtf32.cu's split of A
 * and copy of B): a thread moves 4 consecutive floats of a row, a block
 * PG_FIRST_THREADS threads along a row (pg_configure_first_kernel,
 * internal.h, sets their grid). The split forms' copies
 * (copy_operands.cu) share only PG_FIRST_THREADS and the workspace's
 * layout, with a grid of their own. */
#ifndef PG_FIRST_KERNEL_CUH
#define PG_FIRST_KERNEL_CUH

#include "internal.h"

/* Floats c .. c + 3 of the row at src, those at or past `width` as zeros,
 * to dst + c (16-byte aligned). */
static __device__ __forceinline__ void pg_copy4(float *dst, const float *src, long long c,
                                                long long width) {
  float v[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) v[i] = c + i < width ? __ldg(src + c + i) : 0.f;
  *(float4 *)(dst + c) = make_float4(v[0], v[1], v[2], v[3]);
}

#endif
