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

/* One element of the reference, the same code on the GPU and the host, for
 * operands read through element steps, so that a transposed operand is the
 * same loop: op(A)[row][p] = a[row * a_row + p * a_k], op(B)[p][col] =
 * b[p * b_k + col * b_col]. ref = alpha * sum_p op(A)[row][p] op(B)[p][col]
 * + beta * c0 and its scale, accumulated in double in plain index order.
 * As in BLAS, alpha = 0 reads neither A nor B (a NaN there does not reach
 * the reference), and c0, C0's element, is read only when beta != 0. */
PGV_HD static inline void pgv_reference_element_steps(int row, int col, int k, float alpha,
                                                      const float *a, long long a_row,
                                                      long long a_k, const float *b,
                                                      long long b_k, long long b_col,
                                                      float beta, const float *c0,
                                                      double *ref, double *scale) {
  double dot = 0.0, dot_abs = 0.0;
  if (alpha != 0.0f)
    for (int p = 0; p < k; ++p) {
      const double prod = (double)a[(size_t)row * (size_t)a_row + (size_t)p * (size_t)a_k] *
                          (double)b[(size_t)p * (size_t)b_k + (size_t)col * (size_t)b_col];
      dot += prod;
      dot_abs += fabs(prod);
    }
  double r = (double)alpha * dot, s = fabs((double)alpha) * dot_abs;
  if (beta != 0.0f) {
    const double bc = (double)beta * (double)*c0;
    r += bc;
    s += fabs(bc);
  }
  *ref = r;
  *scale = s;
}

/* The same for row-major A (lda) and B (ldb), op N both: ref = alpha *
 * sum_p a[row][p] b[p][col] + beta * c0[row][col]. */
PGV_HD static inline void pgv_reference_element(int row, int col, int k, float alpha,
                                                const float *a, int lda, const float *b,
                                                int ldb, float beta, const float *c0, int ldc,
                                                double *ref, double *scale) {
  pgv_reference_element_steps(row, col, k, alpha, a, lda, 1, b, ldb, 1, beta,
                              beta != 0.0f ? &c0[(size_t)row * ldc + col] : NULL, ref, scale);
}

/* Where a float of a strided batch lies (pgh_stored, src/measure/harness.h):
 * `offset` floats from the first member's start, members `stride` apart
 * (count 1 where stride is 0), each rows x cols with leading dimension ld.
 * Returns 1 with the member, row and column of the lowest member it is an
 * element of, or 0 for a float that is no member's element: row padding,
 * or a gap between members. Members may overlap (a stride below a member's
 * extent): then the float is that of the lowest member that holds it. */
PGV_HD static inline int pgv_stored_element(long long offset, int rows, int cols, long long ld,
                                            int count, long long stride, long long *member,
                                            int *row, int *col) {
  if (rows <= 0 || cols <= 0 || offset < 0) return 0;
  const long long extent = (long long)(rows - 1) * ld + cols;
  long long first = 0, last = 0;
  if (stride > 0 && count > 1) {
    last = offset / stride;
    if (last > count - 1) last = count - 1;
    first = offset >= extent ? (offset - extent) / stride + 1 : 0;
  }
  /* The position within a member's rows repeats every ld members at most:
   * past that, none is found. */
  if (last - first > ld) last = first + ld;
  for (long long j = first; j <= last; ++j) {
    const long long within = offset - j * stride;
    if (within < 0 || within >= extent) continue;
    if (within % ld < cols) {
      *member = j;
      *row = (int)(within / ld);
      *col = (int)(within % ld);
      return 1;
    }
  }
  return 0;
}

#endif
