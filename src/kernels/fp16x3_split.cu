/* The scaled FP16 split on the GPU (kernels/fp16x3_split.cuh) in a launch
 * of its own, for test_gpu_fp16x3, which holds it to the host's arithmetic
 * (kernels/fp16x3.h) bit for bit: the first kernel of 42_wgmma_fp16x3.cu
 * runs the same body. */
#include <stdint.h>

#include "internal.h"
#include "kernels/entry.h"
#include "kernels/fp16x3_split.cuh"

PG_KERNELS_BEGIN

/* The split's test form: fp16x3_split_lines as its parameter. */
__global__ void __launch_bounds__(FP16X3_SPLIT_THREADS, FP16X3_SPLIT_MIN_BLOCKS) pg_fp16x3_split_kernel(const fp16x3_split g) {
  fp16x3_split_body(g);
}

PG_KERNELS_END

extern "C" pg_status pg_fp16x3_split_lines(const float *x, long long line_stride,
                                           long long elem_stride, int lines, int len,
                                           int lines_padded, int len_padded, int *scales,
                                           uint16_t *hi, uint16_t *lo, long long pitch,
                                           cudaStream_t stream) {
  if (lines < 0 || len < 0 || lines_padded < lines || len_padded < len || pitch < len_padded ||
      (lines > 0 && len > 0 && x == NULL) || (lines > 0 && scales == NULL) ||
      ((long long)lines_padded * len_padded > 0 && (hi == NULL || lo == NULL))) {
    pg_set_error_detail("pg_fp16x3_split_lines: a size below zero or past its padding (or "
                        "the pitch), or a NULL array with work to do");
    return PG_ERR_INVALID_ARG;
  }
  if ((long long)lines_padded * len_padded == 0 && lines == 0) return PG_OK;
  fp16x3_split g;
  memset(&g, 0, sizeof g);
  g.a = {x, line_stride, elem_stride, lines, lines_padded, scales, hi, lo, pitch, 1, 0};
  g.len = len;
  g.len_padded = len_padded;
  void *params[] = {&g};
  return pg_status_from_cuda(cudaLaunchKernel((const void *)pg_fp16x3_split_kernel,
                                              dim3(fp16x3_split_blocks(fp16x3_units(
                                                  lines_padded,
                                                  fp16x3_by_columns(line_stride, elem_stride)))),
                                              dim3(FP16X3_SPLIT_THREADS), params, 0, stream));
}
