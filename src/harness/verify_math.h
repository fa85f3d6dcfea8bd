/* The acceptance rule for one output element, shared by the GPU comparison
 * kernel and the host-side comparison used by the host tests. It never
 * touches a GEMM kernel's code.
 *
 * ref   = alpha * sum_k a_ik b_kj + beta * c0_ij, accumulated in double.
 * scale = |alpha| * sum_k |a_ik| |b_kj| + |beta * c0_ij|, also in double.
 * An FP32 result passes when |out - ref| <= (8 + sqrt(k)) * 2^-24 * scale.
 * That admits the rounding of any FP32 summation order seen in practice
 * (the error of a random-sign sum grows like sqrt(k)) and rejects TF32,
 * whose 2^-11 input rounding lands well outside it. NaN and Inf never pass. */
#ifndef PG_VERIFY_MATH_H
#define PG_VERIFY_MATH_H

#include <math.h>

#ifdef __CUDACC__
#define PGV_HD __host__ __device__
#else
#define PGV_HD
#endif

#define PGV_UNIT_ROUNDOFF 5.9604644775390625e-08 /* 2^-24 */
/* Absolute floor: results whose scale is zero (alpha = beta = 0, or K = 0
 * with beta = 0) must come out exactly zero, up to denormals. */
#define PGV_ABS_FLOOR 1e-30

PGV_HD static inline double pgv_tolerance(double scale, int k) {
  double kk = k > 0 ? (double)k : 0.0;
  return (8.0 + sqrt(kk)) * PGV_UNIT_ROUNDOFF * scale + PGV_ABS_FLOOR;
}

/* 1 if `out` is an acceptable FP32 result for (ref, scale); 0 otherwise. */
PGV_HD static inline int pgv_element_ok(float out, double ref, double scale, int k) {
  double o = (double)out;
  if (!(o == o) || isinf(o)) return 0; /* NaN or Inf */
  return fabs(o - ref) <= pgv_tolerance(scale, k);
}

#endif
