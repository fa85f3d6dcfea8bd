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
#define FP16X3_SPLIT_MIN_BLOCKS 3

/* One operand: `lines` lines of the call's `len` (padded to lines_padded
 * lines, the extra ones zero), the scales, and h and l of line i at hi + i
 * * pitch and lo + i * pitch (FP16 bits, len_padded of them); `batches`
 * such matrices, the b-th at x + b * batch_stride, its lines' scales and
 * parts lines_padded lines after the one before's. */
struct fp16x3_operand {
  const float *x;
  long long line_stride, elem_stride;
  int lines, lines_padded;
  int *scales;
  uint16_t *hi, *lo;
  long long pitch;
  int batches;
  long long batch_stride;
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
#define FP16X3_COLUMN_CHUNK 256 /* elements a pass through the shared tile */
#define FP16X3_LOADS 4          /* a lane's 16-byte loads in flight in a line's split */

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

/* Four elements 0 .. 3 of a run (x[j * stride], zero from `count` on):
 * one 16-byte load where vec says the run is contiguous and aligned and
 * all four are there. */
static __device__ __forceinline__ float4 fp16x3_quad(const float *x, long long stride,
                                                     long long count, bool vec) {
  if (vec && count >= 4) return __ldg(reinterpret_cast<const float4 *>(x));
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
  if (count > 0) v.x = __ldg(x);
  if (count > 1) v.y = __ldg(x + stride);
  if (count > 2) v.z = __ldg(x + 2 * stride);
  if (count > 3) v.w = __ldg(x + 3 * stride);
  return v;
}

/* h and l of x (of a line whose scale is e), zeros for a line not split. */
static __device__ __forceinline__ void fp16x3_parts(float x, int e, uint16_t *h, uint16_t *l) {
  *h = 0;
  *l = 0;
  if (e != PG_FP16X3_UNSPLIT) pg_fp16x3_split(x, e, h, l);
}

/* Warp `warp` of the block takes line i: the span along it, then h and l,
 * four elements a lane (a 16-byte load where the line is contiguous and
 * aligned, an 8-byte store of four halves where its parts are), the loads
 * of FP16X3_LOADS quads issued before any is split. */
static __device__ __forceinline__ void fp16x3_split_rows(const fp16x3_operand &o, int len,
                                                         int len_padded, long long i,
                                                         long long b) {
  const int lane = threadIdx.x % 32;
  const long long es = o.elem_stride, at = b * o.lines_padded + i; /* its scale, parts */
  const float *x = o.x + b * o.batch_stride + i * o.line_stride;
  const bool vec = es == 1 && ((uintptr_t)x & 15) == 0;
  int e = PG_FP16X3_UNSPLIT;
  if (i < o.lines) {
    fp16x3_span span;
#pragma unroll 4
    for (long long p = 4 * lane; p < len; p += 128) {
      const float4 v = fp16x3_quad(x + p * es, es, len - p, vec);
      span.add(v.x);
      span.add(v.y);
      span.add(v.z);
      span.add(v.w);
    }
#pragma unroll
    for (int d = 16; d > 0; d /= 2)
      span.merge(__shfl_xor_sync(0xffffffffu, span.largest, d),
                 __shfl_xor_sync(0xffffffffu, span.smallest, d),
                 __shfl_xor_sync(0xffffffffu, span.finite, d));
    e = span.scale();
    if (lane == 0) o.scales[at] = e;
  }
  uint16_t *const hi = o.hi + at * o.pitch, *const lo = o.lo + at * o.pitch;
  const bool vec_out = ((uintptr_t)hi & 7) == 0 && ((uintptr_t)lo & 7) == 0;
  for (long long p0 = 4 * lane; p0 < len_padded; p0 += 128 * FP16X3_LOADS) {
    float4 v[FP16X3_LOADS];
#pragma unroll
    for (int q = 0; q < FP16X3_LOADS; ++q) {
      const long long p = p0 + 128 * q;
      v[q] = e != PG_FP16X3_UNSPLIT && p < len ? fp16x3_quad(x + p * es, es, len - p, vec)
                                               : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int q = 0; q < FP16X3_LOADS; ++q) {
      const long long p = p0 + 128 * q;
      if (p >= len_padded) break;
      uint16_t h[4], l[4];
      fp16x3_parts(v[q].x, e, &h[0], &l[0]);
      fp16x3_parts(v[q].y, e, &h[1], &l[1]);
      fp16x3_parts(v[q].z, e, &h[2], &l[2]);
      fp16x3_parts(v[q].w, e, &h[3], &l[3]);
      if (vec_out && p + 4 <= len_padded) {
        *reinterpret_cast<uint2 *>(hi + p) =
            make_uint2(h[0] | (uint32_t)h[1] << 16, h[2] | (uint32_t)h[3] << 16);
        *reinterpret_cast<uint2 *>(lo + p) =
            make_uint2(l[0] | (uint32_t)l[1] << 16, l[2] | (uint32_t)l[3] << 16);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (p + j < len_padded) {
            hi[p + j] = h[j];
            lo[p + j] = l[j];
          }
      }
    }
  }
}

/* Lines first .. first + FP16X3_COLUMN_LINES - 1 of an operand whose lines
 * are contiguous (a row-major matrix's columns): thread t takes lines 4 (t
 * % 4) .. + 3, a 16-byte load across them where aligned, at elements t / 4
 * + 64 j, so that a warp reads eight 64-byte runs along the matrix's rows;
 * the span reduced over the warp, then the block in shared memory; then
 * FP16X3_COLUMN_CHUNK elements at a time (each thread's loads issued
 * before any is split) split into a shared tile and written out along
 * each line, a warp a line's h or l, 16 bytes a lane where aligned. */
static __device__ __forceinline__ void fp16x3_split_columns(const fp16x3_operand &o, int len,
                                                            int len_padded, long long first,
                                                            long long b) {
  enum { LINES = FP16X3_COLUMN_LINES, QUADS = LINES / 4, ROWS = FP16X3_SPLIT_THREADS / QUADS,
         CHUNK = FP16X3_COLUMN_CHUNK, PER = CHUNK / ROWS, WARPS = FP16X3_SPLIT_WARPS,
         PITCH = CHUNK + 8 /* halves: rows 16-byte aligned, two lines a bank apart */ };
  __shared__ float largest_s[WARPS][LINES], smallest_s[WARPS][LINES];
  __shared__ int finite_s[WARPS][LINES], scale_s[LINES];
  __shared__ __align__(16) uint16_t h_s[LINES][PITCH], l_s[LINES][PITCH];
  const int t = (int)threadIdx.x, quad = t % QUADS, row = t / QUADS;
  const int warp = t / 32, lane = t % 32;
  const long long es = o.elem_stride, line0 = first + 4 * quad;
  const float *const x0 = o.x + b * o.batch_stride, *const x = x0 + line0 * o.line_stride;
  const long long have = o.lines - line0; /* of the thread's four lines */
  const bool vec = ((uintptr_t)(x0 + first) & 15) == 0 && es % 4 == 0;
  const long long at = b * o.lines_padded; /* its scales' and parts' first line */
  fp16x3_span span[4];
#pragma unroll 4
  for (long long p = row; p < len; p += ROWS) {
    const float4 v = fp16x3_quad(x + p * es, 1, have, vec);
    span[0].add(v.x);
    span[1].add(v.y);
    span[2].add(v.z);
    span[3].add(v.w);
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    /* The lanes of a warp that share t % 4 hold the same lines. */
#pragma unroll
    for (int d = QUADS; d < 32; d *= 2)
      span[j].merge(__shfl_xor_sync(0xffffffffu, span[j].largest, d),
                    __shfl_xor_sync(0xffffffffu, span[j].smallest, d),
                    __shfl_xor_sync(0xffffffffu, span[j].finite, d));
    if (lane < QUADS) {
      largest_s[warp][4 * quad + j] = span[j].largest;
      smallest_s[warp][4 * quad + j] = span[j].smallest;
      finite_s[warp][4 * quad + j] = span[j].finite;
    }
  }
  __syncthreads();
  if (t < LINES) {
    fp16x3_span all;
    for (int w = 0; w < WARPS; ++w) all.merge(largest_s[w][t], smallest_s[w][t], finite_s[w][t]);
    int e = PG_FP16X3_UNSPLIT;
    if (first + t < o.lines) {
      e = all.scale();
      o.scales[at + first + t] = e;
    }
    scale_s[t] = e;
  }
  __syncthreads();
  int e[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) e[j] = scale_s[4 * quad + j];
  const bool vec_out = ((uintptr_t)o.hi & 15) == 0 && ((uintptr_t)o.lo & 15) == 0 &&
                       o.pitch % 8 == 0;
  for (long long k0 = 0; k0 < len_padded; k0 += CHUNK) {
    float4 v[PER];
#pragma unroll
    for (int q = 0; q < PER; ++q) {
      const long long k = k0 + row + q * ROWS;
      v[q] = k < len ? fp16x3_quad(x + k * es, 1, have, vec) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int q = 0; q < PER; ++q) {
      const int p = row + q * ROWS;
      fp16x3_parts(v[q].x, e[0], &h_s[4 * quad][p], &l_s[4 * quad][p]);
      fp16x3_parts(v[q].y, e[1], &h_s[4 * quad + 1][p], &l_s[4 * quad + 1][p]);
      fp16x3_parts(v[q].z, e[2], &h_s[4 * quad + 2][p], &l_s[4 * quad + 2][p]);
      fp16x3_parts(v[q].w, e[3], &h_s[4 * quad + 3][p], &l_s[4 * quad + 3][p]);
    }
    __syncthreads();
    /* Warp w writes h (then l) of lines w and w + 8. */
    for (int part = warp; part < 2 * LINES; part += WARPS) {
      const int j = part % LINES;
      const long long line = first + j;
      if (line >= o.lines_padded) continue; /* the block's last lines past the padding */
      const uint16_t *const from = part < LINES ? h_s[j] : l_s[j];
      uint16_t *const to = (part < LINES ? o.hi : o.lo) + (at + line) * o.pitch + k0;
      const long long left = len_padded - k0;
      if (vec_out && left >= CHUNK) {
        for (int p = 8 * lane; p < CHUNK; p += 256)
          *reinterpret_cast<uint4 *>(to + p) = *reinterpret_cast<const uint4 *>(from + p);
      } else {
        for (int p = lane; p < CHUNK && p < left; p += 32) to[p] = from[p];
      }
    }
    __syncthreads();
  }
}

/* One block's work of operand o: its unit `unit` of matrix `unit / per`
 * of the batch (per: the units a matrix takes). */
static __device__ __forceinline__ void fp16x3_split_unit(const fp16x3_operand &o, int by_columns,
                                                         int len, int len_padded, int unit,
                                                         int per) {
  const int b = unit / per; /* ints: a plan's lines, and so its units, are */
  unit -= b * per;
  if (by_columns) {
    fp16x3_split_columns(o, len, len_padded, unit * FP16X3_COLUMN_LINES, b);
  } else {
    const long long i = unit * FP16X3_SPLIT_WARPS + threadIdx.x / 32;
    if (i < o.lines_padded) fp16x3_split_rows(o, len, len_padded, i, b);
  }
}

/* Both operands' lines: those of `a`, then those of `b` (a GEMM's op(A)
 * rows and op(B) columns; a test's one operand, no b lines), each in the
 * form its strides call for, fp16x3_units blocks' work each. Launched
 * FP16X3_SPLIT_THREADS a block over fp16x3_split_blocks of their sum. */
static __device__ __forceinline__ void fp16x3_split_body(const fp16x3_split &g) {
  const int a_columns = fp16x3_by_columns(g.a.line_stride, g.a.elem_stride);
  const int b_columns = fp16x3_by_columns(g.b.line_stride, g.b.elem_stride);
  const int a_per = (int)fp16x3_units(g.a.lines_padded, a_columns);
  const int b_per = (int)fp16x3_units(g.b.lines_padded, b_columns);
  const int a_units = a_per * g.a.batches;
  const int units = a_units + b_per * g.b.batches;
  for (int u = blockIdx.x; u < units; u += gridDim.x) {
    /* Each operand in a branch of its own: a copy of one chosen at run
     * time would hold all its fields in registers, a reference put the job
     * in local memory. */
    if (u >= a_units)
      fp16x3_split_unit(g.b, b_columns, g.len, g.len_padded, u - a_units, b_per);
    else
      fp16x3_split_unit(g.a, a_columns, g.len, g.len_padded, u, a_per);
  }
}

#endif
