/* The scaled FP16 split of the FP16x3 emulated product on the GPU
 * (kernels/fp16x3.h has the arithmetic, bench/results/products the bound):
 * the first kernels of that entry, which is not built yet. An operand is
 * taken as `lines` lines of `len` elements, element p of line i at
 * x[i * line_stride + p * elem_stride] (op(A)'s rows: line_stride lda,
 * elem_stride 1, or 1 and lda where A is stored transposed; op(B)'s
 * columns the other way round), so one pair of kernels serves both
 * operands in any layout:
 *
 *   stats: a warp per line, its largest and smallest nonzero magnitude:
 *          the line's scale exponent (pg_fp16x3_scale), or
 *          PG_FP16X3_UNSPLIT where the span rule fails (an element
 *          non-finite, or nonzeros more than 2^28 apart);
 *   split: h and l of each element, row-major [lines_padded][len_padded]
 *          FP16 bits (K contiguous: what wgmma reads K-major), zeros in
 *          the padding and in a line that is not split (the product then
 *          takes another path for the tiles that line meets).
 *
 * pg_fp16x3_split_lines launches both; test_gpu_fp16x3 holds their output
 * to the host's arithmetic bit for bit. */
#include <limits.h>
#include <stdint.h>

#include "internal.h"
#include "kernels/entry.h"
#include "kernels/fp16x3.h"

PG_KERNELS_BEGIN

#define FP16X3_WARPS 8 /* a stats block: one line a warp */
#define FP16X3_SPLIT_THREADS 256

struct fp16x3_lines {
  const float *x;
  long long line_stride, elem_stride;
  int lines, len, lines_padded, len_padded;
  int *scales;
  uint16_t *hi, *lo;
};

__global__ void __launch_bounds__(FP16X3_WARPS * 32) pg_fp16x3_stats_kernel(const fp16x3_lines g) {
  const int lane = threadIdx.x % 32;
  for (long long i = (long long)blockIdx.x * FP16X3_WARPS + threadIdx.x / 32; i < g.lines;
       i += (long long)gridDim.x * FP16X3_WARPS) {
    const float *line = g.x + i * g.line_stride;
    float largest = 0.f, smallest = INFINITY;
    int finite = 1;
    for (long long p = lane; p < g.len; p += 32) {
      const float v = fabsf(__ldg(line + p * g.elem_stride));
      finite &= v <= 3.4028234663852886e38f; /* not Inf, not NaN */
      largest = fmaxf(largest, v);
      if (v != 0.f) smallest = fminf(smallest, v);
    }
#pragma unroll
    for (int d = 16; d > 0; d /= 2) {
      largest = fmaxf(largest, __shfl_xor_sync(0xffffffffu, largest, d));
      smallest = fminf(smallest, __shfl_xor_sync(0xffffffffu, smallest, d));
      finite &= __shfl_xor_sync(0xffffffffu, finite, d);
    }
    if (lane == 0)
      g.scales[i] = finite && pg_fp16x3_span_ok(largest, smallest) ? pg_fp16x3_scale(largest)
                                                                    : PG_FP16X3_UNSPLIT;
  }
}

/* Grid: x along a padded line (FP16X3_SPLIT_THREADS elements a block), y
 * over the padded lines (strided). */
__global__ void __launch_bounds__(FP16X3_SPLIT_THREADS) pg_fp16x3_split_kernel(const fp16x3_lines g) {
  const long long p = (long long)blockIdx.x * FP16X3_SPLIT_THREADS + threadIdx.x;
  if (p >= g.len_padded) return;
  for (long long i = blockIdx.y; i < g.lines_padded; i += gridDim.y) {
    uint16_t h = 0, l = 0;
    const int e = i < g.lines ? g.scales[i] : PG_FP16X3_UNSPLIT;
    if (e != PG_FP16X3_UNSPLIT && p < g.len)
      pg_fp16x3_split(__ldg(g.x + i * g.line_stride + p * g.elem_stride), e, &h, &l);
    g.hi[i * g.len_padded + p] = h;
    g.lo[i * g.len_padded + p] = l;
  }
}

PG_KERNELS_END

extern "C" pg_status pg_fp16x3_split_lines(const float *x, long long line_stride,
                                           long long elem_stride, int lines, int len,
                                           int lines_padded, int len_padded, int *scales,
                                           uint16_t *hi, uint16_t *lo, cudaStream_t stream) {
  if (lines < 0 || len < 0 || lines_padded < lines || len_padded < len ||
      (lines > 0 && len > 0 && x == NULL) || (lines > 0 && scales == NULL) ||
      ((long long)lines_padded * len_padded > 0 && (hi == NULL || lo == NULL))) {
    pg_set_error_detail("pg_fp16x3_split_lines: a size below zero or past its padding, or a "
                        "NULL array with work to do");
    return PG_ERR_INVALID_ARG;
  }
  fp16x3_lines g = {x, line_stride, elem_stride, lines, len, lines_padded, len_padded,
                    scales, hi, lo};
  void *params[] = {&g};
  if (lines > 0) {
    const long long blocks = ((long long)lines + FP16X3_WARPS - 1) / FP16X3_WARPS;
    const unsigned grid = (unsigned)(blocks < (1 << 20) ? blocks : (1 << 20)); /* strided */
    const pg_status st = pg_status_from_cuda(cudaLaunchKernel(
        (const void *)pg_fp16x3_stats_kernel, dim3(grid), dim3(FP16X3_WARPS * 32), params, 0,
        stream));
    if (st != PG_OK) return st;
  }
  if ((long long)lines_padded * len_padded == 0) return PG_OK;
  const long long x_blocks = ((long long)len_padded + FP16X3_SPLIT_THREADS - 1) /
                             FP16X3_SPLIT_THREADS;
  const dim3 grid((unsigned)x_blocks, lines_padded < 65535 ? (unsigned)lines_padded : 65535u);
  return pg_status_from_cuda(cudaLaunchKernel((const void *)pg_fp16x3_split_kernel, grid,
                                              dim3(FP16X3_SPLIT_THREADS), params, 0, stream));
}
