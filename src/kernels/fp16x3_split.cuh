/* The scaled FP16 split's device side (kernels/fp16x3.h has the
 * arithmetic): for each line of an operand (a warp a line, or a block 16
 * contiguous lines where its elements are strided), its largest and
 * smallest nonzero magnitude first (the line's scale exponent, or
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
/* Blocks an SM the registers must allow: a pass over memory wants many
 * loads in flight. */
#define FP16X3_SPLIT_MIN_BLOCKS 6

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

/* A block's lines: an operand whose lines are contiguous and its elements
 * strided (a row-major matrix's columns) goes FP16X3_COLUMN_LINES lines a
 * block, read across the lines (fp16x3_split_columns); any other
 * FP16X3_SPLIT_WARPS, a warp a line (fp16x3_split_rows). */
#define FP16X3_COLUMN_LINES 16
#define FP16X3_COLUMN_CHUNK 64 /* elements a pass through the shared tile */
#define FP16X3_LOADS 4         /* a lane's loads in flight in a line's split */

static __host__ __device__ inline int fp16x3_by_columns(long long line_stride,
                                                        long long elem_stride) {
  return line_stride == 1 && elem_stride != 1;
}
/* Blocks an operand takes. */
static __host__ __device__ inline long long fp16x3_units(long long lines_padded, int by_columns) {
  const int per = by_columns ? FP16X3_COLUMN_LINES : FP16X3_SPLIT_WARPS;
  return (lines_padded + per - 1) / per;
}
/* The grid for `units` blocks' work (strided past 2^20). */
static inline unsigned fp16x3_split_blocks(long long units) {
  return (unsigned)(units < 1 ? 1 : units < (1 << 20) ? units : (1 << 20));
}

/* What a line's scale needs of its elements: the largest and smallest
 * nonzero magnitude, and whether all were finite; gathered a thread's
 * elements at a time (add), then over the threads of the line (merge). */
struct fp16x3_span {
  float largest = 0.f, smallest = INFINITY;
  int finite = 1;
  __device__ void add(float x) {
    const float v = fabsf(x);
    finite &= v <= 3.4028234663852886e38f; /* not Inf, not NaN */
    largest = fmaxf(largest, v);
    if (v != 0.f) smallest = fminf(smallest, v);
  }
  __device__ void merge(float other_largest, float other_smallest, int other_finite) {
    largest = fmaxf(largest, other_largest);
    smallest = fminf(smallest, other_smallest);
    finite &= other_finite;
  }
  /* The line's scale exponent; PG_FP16X3_UNSPLIT where the rule fails. */
  __device__ int scale() const {
    return finite && pg_fp16x3_span_ok(largest, smallest) ? pg_fp16x3_scale(largest)
                                                           : PG_FP16X3_UNSPLIT;
  }
};

/* Warp `warp` of the block takes line i: the span along it, then h and l. */
static __device__ __forceinline__ void fp16x3_split_rows(const fp16x3_operand &o, int len,
                                                         int len_padded, long long i) {
  const int lane = threadIdx.x % 32;
  const float *x = o.x + i * o.line_stride;
  int e = PG_FP16X3_UNSPLIT;
  if (i < o.lines) {
    fp16x3_span span;
#pragma unroll 4
    for (long long p = lane; p < len; p += 32) span.add(__ldg(x + p * o.elem_stride));
#pragma unroll
    for (int d = 16; d > 0; d /= 2)
      span.merge(__shfl_xor_sync(0xffffffffu, span.largest, d),
                 __shfl_xor_sync(0xffffffffu, span.smallest, d),
                 __shfl_xor_sync(0xffffffffu, span.finite, d));
    e = span.scale();
    if (lane == 0) o.scales[i] = e;
  }
  uint16_t *const hi = o.hi + i * o.pitch, *const lo = o.lo + i * o.pitch;
  /* FP16X3_LOADS elements a lane at a time, loaded before any is split
   * (the loads in flight together). */
  for (long long p0 = lane; p0 < len_padded; p0 += 32 * FP16X3_LOADS) {
    float v[FP16X3_LOADS];
#pragma unroll
    for (int q = 0; q < FP16X3_LOADS; ++q) {
      const long long p = p0 + 32 * q;
      v[q] = e != PG_FP16X3_UNSPLIT && p < len ? __ldg(x + p * o.elem_stride) : 0.f;
    }
#pragma unroll
    for (int q = 0; q < FP16X3_LOADS; ++q) {
      const long long p = p0 + 32 * q;
      if (p >= len_padded) break;
      uint16_t h = 0, l = 0;
      if (e != PG_FP16X3_UNSPLIT && p < len) pg_fp16x3_split(v[q], e, &h, &l);
      hi[p] = h;
      lo[p] = l;
    }
  }
}

/* Lines first .. first + FP16X3_COLUMN_LINES - 1 of an operand whose lines
 * are contiguous (a row-major matrix's columns): thread t takes line t %
 * 16 and elements t / 16 + 16 j, so that a warp reads two 64-byte runs
 * along the matrix's rows; the span reduced over the block in shared
 * memory; then FP16X3_COLUMN_CHUNK elements at a time split into a shared
 * tile and written out along each line, a warp two lines. */
static __device__ __forceinline__ void fp16x3_split_columns(const fp16x3_operand &o, int len,
                                                            int len_padded, long long first) {
  enum { LINES = FP16X3_COLUMN_LINES, ROWS = FP16X3_SPLIT_THREADS / LINES,
         CHUNK = FP16X3_COLUMN_CHUNK, WARPS = FP16X3_SPLIT_WARPS };
  __shared__ float largest_s[ROWS][LINES], smallest_s[ROWS][LINES];
  __shared__ int finite_s[ROWS][LINES], scale_s[LINES];
  /* h and l of the chunk, a line a row; 2 more halves a row keep the
   * writes of 16 lines in distinct banks. */
  __shared__ uint16_t h_s[LINES][CHUNK + 2], l_s[LINES][CHUNK + 2];
  const int t = (int)threadIdx.x, own = t % LINES, row = t / LINES;
  const long long i = first + own;
  const float *const x = o.x + i * o.line_stride;
  fp16x3_span span;
  if (i < o.lines) {
#pragma unroll 4
    for (long long p = row; p < len; p += ROWS) span.add(__ldg(x + p * o.elem_stride));
  }
  largest_s[row][own] = span.largest;
  smallest_s[row][own] = span.smallest;
  finite_s[row][own] = span.finite;
  __syncthreads();
  if (t < LINES) {
    for (int r = 1; r < ROWS; ++r) span.merge(largest_s[r][t], smallest_s[r][t], finite_s[r][t]);
    int e = PG_FP16X3_UNSPLIT;
    if (i < o.lines) {
      e = span.scale();
      o.scales[i] = e;
    }
    scale_s[t] = e;
  }
  __syncthreads();
  const int e = scale_s[own];
  const int warp = t / 32, lane = t % 32;
  for (long long k0 = 0; k0 < len_padded; k0 += CHUNK) {
    /* The thread's CHUNK / ROWS elements, loaded before any is split. */
    float v[CHUNK / ROWS];
#pragma unroll
    for (int q = 0; q < CHUNK / ROWS; ++q) {
      const long long k = k0 + row + q * ROWS;
      v[q] = e != PG_FP16X3_UNSPLIT && k < len ? __ldg(x + k * o.elem_stride) : 0.f;
    }
#pragma unroll
    for (int q = 0; q < CHUNK / ROWS; ++q) {
      const int p = row + q * ROWS;
      uint16_t h = 0, l = 0;
      if (e != PG_FP16X3_UNSPLIT && k0 + p < len) pg_fp16x3_split(v[q], e, &h, &l);
      h_s[own][p] = h;
      l_s[own][p] = l;
    }
    __syncthreads();
    for (int j = warp; j < LINES; j += WARPS) {
      const long long line = first + j;
      if (line >= o.lines_padded) break; /* the block's last lines past the padding */
      uint16_t *const hi = o.hi + line * o.pitch + k0, *const lo = o.lo + line * o.pitch + k0;
#pragma unroll
      for (int p = lane; p < CHUNK; p += 32) {
        if (k0 + p >= len_padded) break;
        hi[p] = h_s[j][p];
        lo[p] = l_s[j][p];
      }
    }
    __syncthreads();
  }
}

/* One block's work of operand o: its unit `unit`. */
static __device__ __forceinline__ void fp16x3_split_unit(const fp16x3_operand &o, int by_columns,
                                                         int len, int len_padded, long long unit) {
  if (by_columns) {
    fp16x3_split_columns(o, len, len_padded, unit * FP16X3_COLUMN_LINES);
  } else {
    const long long i = unit * FP16X3_SPLIT_WARPS + threadIdx.x / 32;
    if (i < o.lines_padded) fp16x3_split_rows(o, len, len_padded, i);
  }
}

/* Both operands' lines: those of `a`, then those of `b` (a GEMM's op(A)
 * rows and op(B) columns; a test's one operand, no b lines), each in the
 * form its strides call for, fp16x3_units blocks' work each. Launched
 * FP16X3_SPLIT_THREADS a block over fp16x3_split_blocks of their sum. */
static __device__ __forceinline__ void fp16x3_split_body(const fp16x3_split &g) {
  const int a_columns = fp16x3_by_columns(g.a.line_stride, g.a.elem_stride);
  const int b_columns = fp16x3_by_columns(g.b.line_stride, g.b.elem_stride);
  const long long a_units = fp16x3_units(g.a.lines_padded, a_columns);
  const long long units = a_units + fp16x3_units(g.b.lines_padded, b_columns);
  for (long long u = blockIdx.x; u < units; u += gridDim.x) {
    /* Each operand in a branch of its own: a copy of one chosen at run
     * time would hold all its fields in registers, a reference put the job
     * in local memory. */
    if (u >= a_units)
      fp16x3_split_unit(g.b, b_columns, g.len, g.len_padded, u - a_units);
    else
      fp16x3_split_unit(g.a, a_columns, g.len, g.len_padded, u);
  }
}

#endif
