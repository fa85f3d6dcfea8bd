/* The FP64 reference of one element and the acceptance rule for it, shared
 * by the GPU kernels of src/measure/harness.cu and their host twins used by the host
 * tests. None of it touches a GEMM kernel's code.
 *
 * ref   = alpha * sum_k a_ik b_kj + beta * c0_ij, accumulated in double.
 * scale = |alpha| * sum_k |a_ik| |b_kj| + |beta * c0_ij|, also in double.
 * A strict FP32 result passes when |out - ref| <= (8 + sqrt(k)) * 2^-24 *
 * scale. That admits the rounding of any FP32 summation order seen in
 * practice (the error of a random-sign sum grows like sqrt(k)) and rejects
 * TF32, whose 2^-11 input rounding lands well outside it. A TF32 result
 * (one TF32 product per term) is allowed (2^-9 + 2^-20) * scale more: an operand
 * rounded or truncated to TF32's 10-bit mantissa is off by at most 2^-10 of
 * itself, so each product by at most 2^-9 + 2^-20 of |a b|, whatever the
 * signs. Strict and emulated entries are held to the strict bound. NaN and
 * Inf never pass. Below all of it, an absolute floor of (K + 1) times FP32's
 * smallest denormal: the rounding of K denormal products, and an exact
 * zero where the scale is zero; it must stay below any result that tiny
 * inputs (bench --inputs tiny: |a| < 2^-120) give, or a check of them could
 * not fail. */
#ifndef PG_VERIFY_MATH_H
#define PG_VERIFY_MATH_H

#include <math.h>
#include <stddef.h>

#include "pipegemm.h" /* pg_precision */

#ifdef __CUDACC__
#define PGV_HD __host__ __device__
#else
#define PGV_HD
#endif

#define PGV_UNIT_ROUNDOFF 5.9604644775390625e-08 /* 2^-24 */
/* FP32's smallest denormal, 2^-149: the absolute floor's unit. Results
 * whose scale is zero (alpha = beta = 0, or K = 0 with beta = 0) must come
 * out zero up to it. (The floor was 1e-30 until 2026-12-01, above every
 * result of tiny inputs.) */
#define PGV_DENORMAL_MIN 1.40129846432481707092e-45

/* The input rounding a TF32 product adds, relative to |a b|: at most
 * (1 + 2^-10)^2 - 1 = 2^-9 + 2^-20, exactly this double. */
#define PGV_TF32_PRODUCT 1.95407867431640625e-03 /* 2^-9 + 2^-20 */

/* `precision`: a pg_precision. */
PGV_HD static inline double pgv_tolerance(double scale, int k, int precision) {
  double kk = k > 0 ? (double)k : 0.0;
  double relative = (8.0 + sqrt(kk)) * PGV_UNIT_ROUNDOFF;
  if (precision == PG_PRECISION_TF32) relative += PGV_TF32_PRODUCT;
  return relative * scale + (kk + 1.0) * PGV_DENORMAL_MIN;
}

/* 1 if `out` is an acceptable result of that precision for (ref, scale). */
PGV_HD static inline int pgv_element_ok(float out, double ref, double scale, int k,
                                        int precision) {
  double o = (double)out;
  if (!(o == o) || isinf(o)) return 0; /* NaN or Inf */
  return fabs(o - ref) <= pgv_tolerance(scale, k, precision);
}

/* One element of the reference, the same code on the GPU and the host:
 * ref = alpha * sum_p a[row][p] b[p][col] + beta * c0[row][col] and its
 * scale, accumulated in double in plain index order. c0 is read only when
 * beta != 0. */
PGV_HD static inline void pgv_reference_element(int row, int col, int k, float alpha,
                                                const float *a, int lda, const float *b,
                                                int ldb, float beta, const float *c0, int ldc,
                                                double *ref, double *scale) {
  double dot = 0.0, dot_abs = 0.0;
  for (int p = 0; p < k; ++p) {
    const double prod = (double)a[(size_t)row * lda + p] * (double)b[(size_t)p * ldb + col];
    dot += prod;
    dot_abs += fabs(prod);
  }
  double r = (double)alpha * dot, s = fabs((double)alpha) * dot_abs;
  if (beta != 0.0f) {
    const double bc = (double)beta * (double)c0[(size_t)row * ldc + col];
    r += bc;
    s += fabs(bc);
  }
  *ref = r;
  *scale = s;
}

#endif
