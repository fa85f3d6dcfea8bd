/* The scaled FP16 split's device side (kernels/fp16x3.h has the
 * arithmetic): a warp a line of an operand, its largest and smallest
 * nonzero magnitude first (the line's scale exponent, or
 * PG_FP16X3_UNSPLIT where the span rule fails: an element non-finite, or
 * nonzeros more than 2^28 apart), then h and l of each element, K
 * contiguous (what wgmma reads K-major), zeros in the padding and in a
 * line not split. Element p of line i is x[i * line_stride + p *
 * elem_stride]: op(A)'s rows and op(B)'s columns in any layout.
 * fp16x3_split.cu launches it for test_gpu_fp16x3, 42_wgmma_fp16x3.cu as
 * its first kernel. */
#ifndef PG_KERNELS_FP16X3_SPLIT_CUH
#define PG_KERNELS_FP16X3_SPLIT_CUH

#include <stdint.h>

#include "internal.h"
#include "kernels/fp16x3.h"

#define FP16X3_SPLIT_WARPS 8
#define FP16X3_SPLIT_THREADS (FP16X3_SPLIT_WARPS * 32)

/* One operand: `lines` lines of the call's `len` (padded to lines_padded
 * lines, the extra ones zero), the scales, and h and l of line i at hi + i
 * * pitch and lo + i * pitch (FP16 bits, len_padded of them). */
struct fp16x3_operand {
  const float *x;
  long long line_stride, elem_stride;
  int lines, lines_padded;
  int *scales;
  uint16_t *hi, *lo;
  long long pitch;
};

struct fp16x3_split {
  fp16x3_operand a, b;
  int len, len_padded;
};

/* Blocks for `lines` lines (strided past 2^20). */
static inline unsigned fp16x3_split_blocks(long long lines) {
  const long long blocks = (lines + FP16X3_SPLIT_WARPS - 1) / FP16X3_SPLIT_WARPS;
  return (unsigned)(blocks < 1 ? 1 : blocks < (1 << 20) ? blocks : (1 << 20));
}

/* Both operands' lines, a warp a line: those of `a`, then those of `b` (a
 * GEMM's op(A) rows and op(B) columns; a test's one operand, no b lines).
 * Launched FP16X3_SPLIT_THREADS a block over fp16x3_split_blocks(lines). */
static __device__ __forceinline__ void fp16x3_split_body(const fp16x3_split &g) {
  const int lane = threadIdx.x % 32;
  const long long total = (long long)g.a.lines_padded + g.b.lines_padded;
  for (long long line = (long long)blockIdx.x * FP16X3_SPLIT_WARPS + threadIdx.x / 32; line < total;
       line += (long long)gridDim.x * FP16X3_SPLIT_WARPS) {
    const int in_b = line >= g.a.lines_padded;
    const fp16x3_operand &o = in_b ? g.b : g.a;
    const long long i = in_b ? line - g.a.lines_padded : line;
    const float *x = o.x + i * o.line_stride;
    int e = PG_FP16X3_UNSPLIT;
    if (i < o.lines) {
      float largest = 0.f, smallest = INFINITY;
      int finite = 1;
      for (long long p = lane; p < g.len; p += 32) {
        const float v = fabsf(__ldg(x + p * o.elem_stride));
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
      if (finite && pg_fp16x3_span_ok(largest, smallest)) e = pg_fp16x3_scale(largest);
      if (lane == 0) o.scales[i] = e;
    }
    uint16_t *const hi = o.hi + i * o.pitch, *const lo = o.lo + i * o.pitch;
    for (long long p = lane; p < g.len_padded; p += 32) {
      uint16_t h = 0, l = 0;
      if (e != PG_FP16X3_UNSPLIT && p < g.len) pg_fp16x3_split(__ldg(x + p * o.elem_stride), e, &h, &l);
      hi[p] = h;
      lo[p] = l;
    }
  }
}


#endif
