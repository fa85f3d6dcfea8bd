/* The scaled FP16 split of the FP16x3 emulated product, plain C for the
 * kernels (host and device) and the host tests: x in a row of A (a column
 * of B) whose largest magnitude is m becomes
 *
 *   x = 2^e (h + 2^-11 l),  h, l FP16,  e = floor(log2 m) - 14,
 *
 * so the row's largest lands in [2^14, 2^15) (FP16's largest is 65504, so
 * no h rounds to infinity), h = fp16(x / 2^e) and l = fp16(2^11 (x / 2^e -
 * h)), both rounded to nearest even. Where x / 2^e >= 2^-14 (FP16's
 * smallest normal) h and l hold 22 bits: |x / 2^e - h - 2^-11 l| <= 2^-22
 * |x / 2^e|, as 3xTF32's big and small parts. Below it, what is lost is
 * absolute (up to 2^-36 in the scaled units). pg_fp16x3_span_ok says where
 * the first holds for every element: the row's nonzeros within 2^28 of
 * each other's exponents (floor(log2) at most 28 apart), all finite
 * (bench/results/products: the bound and the rule). */
#ifndef PG_KERNELS_FP16X3_H
#define PG_KERNELS_FP16X3_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define PG16_HD __host__ __device__
#else
#define PG16_HD
#endif

/* The largest exponent gap (floor(log2)) between a row's largest and
 * smallest nonzero magnitude that keeps every element at 22 bits. */
#define PG_FP16X3_MAX_SPAN 28
/* The scale puts a row's largest magnitude at 2^PG_FP16X3_TOP .. 2^(TOP+1). */
#define PG_FP16X3_TOP 14
/* A line's scale where the span rule fails: the line is not split. */
#define PG_FP16X3_UNSPLIT (-2147483647 - 1)
/* l is scaled by 2^PG_FP16X3_LOW_SHIFT. */
#define PG_FP16X3_LOW_SHIFT 11

PG16_HD static inline uint32_t pg16_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

PG16_HD static inline float pg16_float(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* floor(log2 |x|) of a finite nonzero x, denormals included. */
PG16_HD static inline int pg16_exponent(float x) {
  const uint32_t u = pg16_bits(x) & 0x7fffffffu;
  const int biased = (int)(u >> 23);
  if (biased > 0) return biased - 127;
  int e = -127; /* a denormal: its leading bit's place */
  for (uint32_t m = u; m != 0; m >>= 1) ++e;
  return e - 23;
}

/* x times 2^n, in steps of at most 2^127: exact wherever the result is a
 * normal FP32 or zero; a denormal result may round twice (a step below
 * 2^-126, then the last). */
PG16_HD static inline float pg16_scale(float x, int n) {
  while (n > 127) { x *= 1.7014118346046923e38f; n -= 127; }   /* 2^127 */
  while (n < -126) { x *= 1.1754943508222875e-38f; n += 126; } /* 2^-126 */
  return x * pg16_float((uint32_t)(n + 127) << 23);
}

/* FP32 to FP16 bits, rounded to nearest even (overflow to infinity): on
 * the GPU the hardware's cvt.rn.f16.f32, on the host the same rounding
 * written out (test_gpu_fp16x3 holds the two to the same bits); a NaN
 * becomes a NaN (0x7e00 here; the span rule keeps non-finite lines from
 * the split). */
PG16_HD static inline uint16_t pg16_from_float(float x) {
#ifdef __CUDA_ARCH__
  uint16_t h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
  return h;
#else
  const uint32_t u = pg16_bits(x);
  const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return (uint16_t)(sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520: rounds past 65504 */
  const int e = (int)(a >> 23) - 127;
  if (e >= -14) { /* a normal FP16: drop 13 bits, to nearest even */
    const uint32_t m = (a & 0x7fffffu) | 0x800000u;
    uint32_t h = (uint32_t)(e + 15) << 10 | ((m >> 13) & 0x3ffu);
    const uint32_t rest = m & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h; /* may carry into the exponent */
    return (uint16_t)(sign | h);
  }
  if (e < -25) return sign; /* below half the smallest denormal: zero */
  /* A denormal FP16: units of 2^-24. */
  const uint32_t m = (a & 0x7fffffu) | 0x800000u; /* value = m 2^(e - 23) */
  const int shift = -e - 1;                        /* m >> shift is units of 2^-24 */
  uint32_t h = m >> shift;
  const uint32_t rest = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
  if (rest > half || (rest == half && (h & 1u))) ++h;
  return (uint16_t)(sign | h);
#endif
}

/* FP16 bits to FP32 (exact; on the GPU, cvt.f32.f16). */
PG16_HD static inline float pg16_to_float(uint16_t h) {
#ifdef __CUDA_ARCH__
  float x;
  asm("cvt.f32.f16 %0, %1;" : "=f"(x) : "h"(h));
  return x;
#else
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1fu) return pg16_float(sign | 0x7f800000u | (m << 13));
  if (e != 0) return pg16_float(sign | (e + 112u) << 23 | (m << 13));
  const float v = (float)m * 5.9604644775390625e-08f; /* m 2^-24, exact */
  return sign ? -v : v;
#endif
}

/* The scale exponent e of a row whose largest magnitude is m (finite, not
 * zero): 2^e puts m in [2^14, 2^15). 0 for a row of zeros. */
PG16_HD static inline int pg_fp16x3_scale(float largest) {
  return largest != 0.0f ? pg16_exponent(largest) - PG_FP16X3_TOP : 0;
}

/* 1 where the form keeps every element of a row at 22 bits: its largest
 * and smallest nonzero magnitudes finite and their exponents at most
 * PG_FP16X3_MAX_SPAN apart (a row of zeros too). */
PG16_HD static inline int pg_fp16x3_span_ok(float largest, float smallest_nonzero) {
  if (!(largest <= 3.4028234663852886e38f)) return 0; /* Inf or NaN */
  if (largest == 0.0f) return 1;
  return pg16_exponent(largest) - pg16_exponent(smallest_nonzero) <= PG_FP16X3_MAX_SPAN;
}

/* The tile by which a C tile's form is decided: 128 x 128 (both kernels
 * that share a call's tiles, 42 wgmma_fp16x3's and 40 wgmma_3xtf32's, have
 * it). A tile goes the 3xTF32 way where a row of op(A) or a column of
 * op(B) it meets was left unsplit. Thread t of a block asks about line t:
 * t < 128 row m0 + t (its scale at rows[m0 + t]), t < 256 column n0 + t -
 * 128 (at cols[n0 + t - 128]); past the matrix, or t >= 256, no line (0). */
#define PG_FP16X3_TILE 128
PG16_HD static inline int pg_fp16x3_line_unsplit(const int *rows, const int *cols, int m, int n,
                                                 int m0, int n0, int t) {
  if (t < PG_FP16X3_TILE) return m0 + t < m && rows[m0 + t] == PG_FP16X3_UNSPLIT;
  if (t < 2 * PG_FP16X3_TILE)
    return n0 + t - PG_FP16X3_TILE < n && cols[n0 + t - PG_FP16X3_TILE] == PG_FP16X3_UNSPLIT;
  return 0;
}

/* The split's lines over a batch of GEMMs: op(A)'s ml rows (M rounded up
 * to PG_FP16X3_LINE_PAD) for each A of the batch (one A for all where its
 * stride is 0), then op(B)'s nl columns for each B (likewise); line i's
 * scale is scales[i], after all of them. A tile's 128 lines may run past
 * its matrix's into the next one's (or past the map, where TMA reads
 * zeros): they meet only rows and columns of C past M and N, which are
 * not stored. The first line of GEMM z's op(A), of its op(B), and the
 * lines in all. */
#define PG_FP16X3_LINE_PAD 16
PG16_HD static inline long long pg_fp16x3_padded(int lines) {
  return ((long long)lines + PG_FP16X3_LINE_PAD - 1) / PG_FP16X3_LINE_PAD * PG_FP16X3_LINE_PAD;
}
PG16_HD static inline long long pg_fp16x3_a_first(long long ml, long long stride_a, int z) {
  return stride_a != 0 ? (long long)z * ml : 0;
}
PG16_HD static inline long long pg_fp16x3_b_first(long long ml, long long nl, int batch,
                                                  long long stride_a, long long stride_b, int z) {
  return (stride_a != 0 ? batch : 1) * ml + (stride_b != 0 ? (long long)z * nl : 0);
}
PG16_HD static inline long long pg_fp16x3_lines(long long ml, long long nl, int batch,
                                                long long stride_a, long long stride_b) {
  return (stride_a != 0 ? batch : 1) * ml + (stride_b != 0 ? batch : 1) * nl;
}

/* x (of a row whose scale exponent is e) as h + 2^-11 l, FP16 bits. */
PG16_HD static inline void pg_fp16x3_split(float x, int e, uint16_t *h, uint16_t *l) {
  const float scaled = pg16_scale(x, -e);
  *h = pg16_from_float(scaled);
  const float rest = scaled - pg16_to_float(*h); /* exact: both within 2^11 ulps */
  *l = pg16_from_float(pg16_scale(rest, PG_FP16X3_LOW_SHIFT));
}

#endif
