/* The verification math on the host: the FP64 reference, the per-element
 * acceptance rule and the comparison. A GPU result is only as trustworthy as
 * these, so each is checked against values computed here independently, and
 * the comparison is shown to catch the bugs it exists for: NaN, an unwritten
 * element, a wrong index, TF32 inputs, and to accept any FP32 summation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "measure/harness.h"
#include "measure/verify_math.h"

/* ---- independent helpers (no code shared with the harness) --------------- */

static uint64_t rng_state;
static void rng_seed(uint64_t s) { rng_state = s * 0x9E3779B97F4A7C15ull + 1; }
static float rng_uniform(void) { /* [-1, 1) */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (float)((double)(rng_state >> 40) / (double)(1ull << 23) - 1.0);
}

/* rows x cols, leading dim ld; the padding holds NaN. */
static float *random_matrix(int rows, int cols, int ld, uint64_t seed) {
  size_t count = (size_t)rows * (size_t)ld;
  float *m = malloc((count ? count : 1) * sizeof *m);
  assert_non_null(m);
  rng_seed(seed);
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < ld; c++) m[(size_t)r * ld + c] = c < cols ? rng_uniform() : NAN;
  return m;
}

static double *alloc_doubles(size_t count) {
  double *d = malloc((count ? count : 1) * sizeof *d);
  assert_non_null(d);
  return d;
}

static float *nan_matrix(int rows, int ld) {
  size_t count = (size_t)rows * (size_t)ld;
  float *m = malloc((count ? count : 1) * sizeof *m);
  assert_non_null(m);
  for (size_t i = 0; i < count; i++) m[i] = NAN;
  return m;
}

typedef enum { SUM_FORWARD, SUM_REVERSED, SUM_PAIRWISE, SUM_FMA } sum_order;

static float pairwise(const float *v, int n) {
  if (n == 1) return v[0];
  int h = n / 2;
  return pairwise(v, h) + pairwise(v + h, n - h);
}

/* An FP32 GEMM written here, C = A*B (alpha 1, beta 0), in a chosen order. */
static void gemm_fp32(int m, int n, int k, const float *a, int lda, const float *b,
                      int ldb, float *c, int ldc, sum_order order) {
  float *prod = malloc((size_t)(k ? k : 1) * sizeof *prod);
  assert_non_null(prod);
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float acc = 0.0f;
      for (int p = 0; p < k; p++) prod[p] = a[(size_t)i * lda + p] * b[(size_t)p * ldb + j];
      switch (order) {
      case SUM_FORWARD:
        for (int p = 0; p < k; p++) acc += prod[p];
        break;
      case SUM_REVERSED:
        for (int p = k - 1; p >= 0; p--) acc += prod[p];
        break;
      case SUM_PAIRWISE:
        acc = k ? pairwise(prod, k) : 0.0f;
        break;
      case SUM_FMA:
        for (int p = 0; p < k; p++) acc = fmaf(a[(size_t)i * lda + p], b[(size_t)p * ldb + j], acc);
        break;
      }
      c[(size_t)i * ldc + j] = acc;
    }
  free(prod);
}

/* Round to TF32: 10 explicit mantissa bits, to nearest even. */
static float to_tf32(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  u += 0xFFFu + ((u >> 13) & 1u);
  u &= ~0x1FFFu;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* ---- the reference --------------------------------------------------------- */

static void test_reference_2x2(void **state) {
  (void)state;
  /* A = [1 -2; 3 4], B = [5 6; 7 8], C0 = [1 -1; 2 -2] with ldc 3 (padding NaN).
   * A*B = [-9 -10; 43 50]; |A|*|B| = [19 22; 43 50].
   * alpha 2, beta 0.5: ref = [-17.5 -20.5; 87 99], scale = [38.5 44.5; 87 101]. */
  const float a[] = {1, -2, 3, 4};
  const float b[] = {5, 6, 7, 8};
  const float c0[] = {1, -1, NAN, 2, -2, NAN};
  double ref[4], scale[4];
  pgh_reference_host(2, 2, 2, 2.0f, a, 2, b, 2, 0.5f, c0, 3, ref, scale);
  const double want_ref[] = {-17.5, -20.5, 87, 99};
  const double want_scale[] = {38.5, 44.5, 87, 101};
  for (int i = 0; i < 4; i++) {
    assert_true(ref[i] == want_ref[i]);
    assert_true(scale[i] == want_scale[i]);
  }
  /* beta 0: C0 is not read, even when it holds NaN (BLAS semantics). */
  pgh_reference_host(2, 2, 2, 2.0f, a, 2, b, 2, 0.0f, c0, 3, ref, scale);
  const double want_ref0[] = {-18, -20, 86, 100};
  const double want_scale0[] = {38, 44, 86, 100};
  for (int i = 0; i < 4; i++) {
    assert_true(ref[i] == want_ref0[i]);
    assert_true(scale[i] == want_scale0[i]);
  }
  /* beta 0 with no C0 at all. */
  pgh_reference_host(2, 2, 2, 2.0f, a, 2, b, 2, 0.0f, NULL, 2, ref, scale);
  for (int i = 0; i < 4; i++) assert_true(ref[i] == want_ref0[i]);
  /* K = 0: C = beta * C0. */
  pgh_reference_host(2, 2, 0, 2.0f, a, 1, b, 2, 0.5f, c0, 3, ref, scale);
  const double want_k0[] = {0.5, -0.5, 1, -1};
  for (int i = 0; i < 4; i++) {
    assert_true(ref[i] == want_k0[i]);
    assert_true(scale[i] == fabs(want_k0[i]));
  }
}

static void test_reference_random(void **state) {
  (void)state;
  const int m = 5, n = 7, k = 13, lda = k + 2, ldb = n + 3, ldc = n + 1;
  const float alpha = -0.75f, beta = 1.25f;
  float *a = random_matrix(m, k, lda, 1);
  float *b = random_matrix(k, n, ldb, 2);
  float *c0 = random_matrix(m, n, ldc, 3);
  double *ref = alloc_doubles((size_t)m * n), *scale = alloc_doubles((size_t)m * n);
  pgh_reference_host(m, n, k, alpha, a, lda, b, ldb, beta, c0, ldc, ref, scale);
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      long double sum = 0, abs_sum = 0;
      for (int p = 0; p < k; p++) {
        long double prod = (long double)a[i * lda + p] * (long double)b[p * ldb + j];
        sum += prod;
        abs_sum += fabsl(prod);
      }
      long double want = (long double)alpha * sum + (long double)beta * c0[i * ldc + j];
      long double want_scale =
          fabsl((long double)alpha) * abs_sum + fabsl((long double)beta * c0[i * ldc + j]);
      double got = ref[i * n + j], got_scale = scale[i * n + j];
      assert_true(isfinite(got) && isfinite(got_scale));
      assert_true(fabsl((long double)got - want) <= 1e-13L * want_scale);
      assert_true(fabsl((long double)got_scale - want_scale) <= 1e-13L * want_scale);
    }
  free(a); free(b); free(c0); free(ref); free(scale);
}

/* ---- every layout and batch ------------------------------------------------ */

/* A buffer of `count` floats, each a seeded value in [-1, 1). */
static float *random_floats(size_t count, uint64_t seed) {
  float *v = malloc((count ? count : 1) * sizeof *v);
  assert_non_null(v);
  rng_seed(seed);
  for (size_t i = 0; i < count; i++) v[i] = rng_uniform();
  return v;
}

/* op(X)[r][c] of a row-major X with leading dimension ld, written apart
 * from the harness: the transpose reads X[c][r]. */
static double op_at(const float *x, long long ld, pg_op op, int r, int c) {
  return op == PG_OP_T ? (double)x[(size_t)c * ld + r] : (double)x[(size_t)r * ld + c];
}

/* The reference of every member, each operand as stored: op(A) K x M where
 * op_a is T, B N x K where op_b is T, leading dimensions above the width,
 * A's members with gaps between them, B shared (stride 0), C0 with gaps. */
static void test_reference_layouts(void **state) {
  (void)state;
  const int m = 5, n = 7, k = 6, batch = 3;
  for (int op = 0; op < 4; op++) {
    pg_gemm_desc g = PG_GEMM_DESC_INIT;
    g.op_a = op & 2 ? PG_OP_T : PG_OP_N;
    g.op_b = op & 1 ? PG_OP_T : PG_OP_N;
    g.m = m, g.n = n, g.k = k, g.batch = batch;
    g.alpha = -0.75f;
    g.beta = 1.25f;
    const int a_rows = g.op_a == PG_OP_T ? k : m, a_cols = g.op_a == PG_OP_T ? m : k;
    const int b_rows = g.op_b == PG_OP_T ? n : k, b_cols = g.op_b == PG_OP_T ? k : n;
    g.lda = a_cols + 2;
    g.ldb = b_cols + 3;
    g.ldc = n + 1;
    g.stride_a = (long long)a_rows * g.lda + 5; /* a gap after each member */
    g.stride_b = 0;                             /* one B for the batch */
    g.stride_c = (long long)m * g.ldc + 4;
    float *a = random_floats((size_t)(batch * g.stride_a), 100 + op);
    float *b = random_floats((size_t)b_rows * g.ldb, 200 + op);
    /* What no member holds is NaN: A's row padding and the gaps after its
     * members, B's padding; the reference must not read them. */
    for (long long i = 0; i < batch * g.stride_a; i++) {
      const long long within = i % g.stride_a;
      if (within >= (long long)a_rows * g.lda || within % g.lda >= a_cols) a[i] = NAN;
    }
    for (long long i = 0; i < (long long)b_rows * g.ldb; i++)
      if (i % g.ldb >= b_cols) b[i] = NAN;
    float *c0 = random_floats((size_t)(batch * g.stride_c), 300 + op);
    g.a = a;
    g.b = b;
    double *ref = alloc_doubles((size_t)batch * m * n), *scale = alloc_doubles((size_t)batch * m * n);
    pgh_reference_gemm_host(&g, c0, ref, scale);
    for (int i = 0; i < batch; i++)
      for (int r = 0; r < m; r++)
        for (int c = 0; c < n; c++) {
          long double sum = 0, abs_sum = 0;
          for (int p = 0; p < k; p++) {
            const long double prod = (long double)op_at(a + i * g.stride_a, g.lda, g.op_a, r, p) *
                                     (long double)op_at(b, g.ldb, g.op_b, p, c);
            sum += prod;
            abs_sum += fabsl(prod);
          }
          const long double cc = (long double)g.beta * c0[i * g.stride_c + (size_t)r * g.ldc + c];
          const long double want = (long double)g.alpha * sum + cc;
          const long double want_scale = fabsl((long double)g.alpha) * abs_sum + fabsl(cc);
          const size_t at = ((size_t)i * m + r) * n + c;
          if (fabsl((long double)ref[at] - want) > 1e-13L * want_scale)
            fail_msg("op %d member %d [%d][%d]: %.17g, want %.17Lg", op, i, r, c, ref[at], want);
          assert_true(fabsl((long double)scale[at] - want_scale) <= 1e-13L * want_scale);
        }
    free(a); free(b); free(c0); free(ref); free(scale);
  }
}

/* alpha = 0 reads neither A nor B: NaN there does not reach the reference. */
static void test_reference_alpha_zero(void **state) {
  (void)state;
  const float a[4] = {NAN, NAN, NAN, NAN}, b[4] = {INFINITY, NAN, 1, 2}, c0[4] = {1, -2, 3, -4};
  pg_gemm_desc g = PG_GEMM_DESC_INIT;
  g.m = g.n = g.k = 2;
  g.alpha = 0.0f;
  g.beta = 2.0f;
  g.a = a, g.b = b, g.lda = 2, g.ldb = 2, g.ldc = 2;
  double ref[4], scale[4];
  pgh_reference_gemm_host(&g, c0, ref, scale);
  for (int i = 0; i < 4; i++) {
    assert_true(ref[i] == 2.0 * c0[i]);
    assert_true(scale[i] == fabs(2.0 * c0[i]));
  }
}

/* The stored shapes of a description, as the library reads them. */
static void test_stored_shapes(void **state) {
  (void)state;
  pg_gemm_desc g = PG_GEMM_DESC_INIT;
  g.m = 3, g.n = 4, g.k = 5;
  g.op_a = PG_OP_T, g.op_b = PG_OP_T;
  g.lda = 6, g.ldb = 7, g.ldc = 8;
  g.batch = 1, g.stride_a = 99; /* one GEMM: no stride */
  pgh_stored a = pgh_stored_a(&g), b = pgh_stored_b(&g), c = pgh_stored_c(&g);
  assert_int_equal(a.rows, 5); /* K x M */
  assert_int_equal(a.cols, 3);
  assert_int_equal(a.count, 1);
  assert_true(a.stride == 0);
  assert_int_equal(b.rows, 4); /* N x K */
  assert_int_equal(b.cols, 5);
  assert_int_equal(c.rows, 3);
  assert_int_equal(c.cols, 4);
  assert_true(c.ld == 8);
  assert_int_equal(pgh_stored_span(&c), 2 * 8 + 4);
  g.batch = 4, g.stride_c = 40, g.stride_b = 0;
  c = pgh_stored_c(&g);
  b = pgh_stored_b(&g);
  assert_int_equal(c.count, 4);
  assert_int_equal(pgh_stored_span(&c), 3 * 40 + 2 * 8 + 4);
  assert_int_equal(pgh_stored_span(&b), 3 * 7 + 5); /* shared: one member's span */
  g.batch = 0;
  c = pgh_stored_c(&g);
  assert_int_equal(pgh_stored_span(&c), 0);
}

/* Where a float of a batch lies: an element of which member, or a gap;
 * overlapping members give the lowest. */
static void test_stored_element(void **state) {
  (void)state;
  long long member = -1;
  int row = -1, col = -1;
  /* 2 x 3 members, ld 4, stride 10: offsets 0-2, 4-6 (member 0), 7-9 a gap
   * after its last element, 10-12, 14-16 (member 1). */
  assert_true(pgv_stored_element(5, 2, 3, 4, 2, 10, &member, &row, &col));
  assert_true(member == 0 && row == 1 && col == 1);
  assert_false(pgv_stored_element(3, 2, 3, 4, 2, 10, &member, &row, &col)); /* padding */
  assert_false(pgv_stored_element(8, 2, 3, 4, 2, 10, &member, &row, &col)); /* gap */
  assert_true(pgv_stored_element(16, 2, 3, 4, 2, 10, &member, &row, &col));
  assert_true(member == 1 && row == 1 && col == 2);
  assert_false(pgv_stored_element(17, 2, 3, 4, 2, 10, &member, &row, &col)); /* past the end */
  /* Stride 0: every member is the first. */
  assert_true(pgv_stored_element(6, 2, 3, 4, 5, 0, &member, &row, &col));
  assert_true(member == 0 && row == 1 && col == 2);
  /* Stride 1, overlapping: offset 3 is member 0's padding but member 1's
   * [0][2]. */
  assert_true(pgv_stored_element(3, 2, 3, 4, 3, 1, &member, &row, &col));
  assert_true(member == 1 && row == 0 && col == 2);
}

/* A batch's C compared member by member, and the floats between the
 * members checked unwritten. */
static void test_compare_stored(void **state) {
  (void)state;
  const int m = 3, n = 4, k = 8, batch = 3;
  const pgh_stored s = {m, n, n + 2, batch, (long long)m * (n + 2) + 3};
  const size_t span = pgh_stored_span(&s);
  float *c = malloc(span * sizeof *c);
  double *ref = alloc_doubles((size_t)batch * m * n), *scale = alloc_doubles((size_t)batch * m * n);
  assert_non_null(c);
  float guard;
  const uint32_t guard_bits = PGH_GUARD_BITS;
  memcpy(&guard, &guard_bits, sizeof guard);
  for (size_t i = 0; i < span; i++) c[i] = guard;
  for (int j = 0; j < batch; j++)
    for (int r = 0; r < m; r++)
      for (int q = 0; q < n; q++) {
        const size_t at = ((size_t)j * m + r) * n + q;
        ref[at] = 0.25 * (double)(at + 1);
        scale[at] = 1.0;
        c[j * s.stride + r * s.ld + q] = (float)ref[at];
      }
  pgh_check chk;
  memset(&chk, 0xA5, sizeof chk);
  pgh_compare_stored_host(c, &s, k, ref, scale, PG_PRECISION_STRICT, 1, &chk);
  assert_int_equal(chk.checked, (long long)batch * m * n);
  assert_int_equal(chk.failed, 0);
  assert_int_equal(chk.guard_written, 0);
  assert_true(chk.first_guard_written == -1);
  /* A wrong element of the last member: reported with its member. */
  c[2 * s.stride + 1 * s.ld + 3] += 1.0f;
  pgh_compare_stored_host(c, &s, k, ref, scale, PG_PRECISION_STRICT, 1, &chk);
  assert_int_equal(chk.failed, 1);
  assert_int_equal(chk.reported, 1);
  assert_true(chk.bad_member[0] == 2);
  assert_int_equal(chk.bad_row[0], 1);
  assert_int_equal(chk.bad_col[0], 3);
  c[2 * s.stride + 1 * s.ld + 3] -= 1.0f;
  /* A write past member 0's C, into the gap before member 1, and one into
   * a row's padding: both caught, the first by its offset. */
  const long long gap = (long long)(m - 1) * s.ld + n + 1, padding = s.stride + n;
  c[gap] = 0.0f;
  c[padding] = 1.0f;
  pgh_compare_stored_host(c, &s, k, ref, scale, PG_PRECISION_STRICT, 1, &chk);
  assert_int_equal(chk.guard_written, 2);
  assert_int_equal(chk.failed, 2);
  assert_true(chk.first_guard_written == gap);
  /* Without the guard check, the elements alone. */
  pgh_compare_stored_host(c, &s, k, ref, scale, PG_PRECISION_STRICT, 0, &chk);
  assert_int_equal(chk.failed, 0);
  free(c); free(ref); free(scale);
}

/* ---- the acceptance rule --------------------------------------------------- */

static void test_element_ok(void **state) {
  (void)state;
  const int k = 16;
  /* tolerance for scale 1, k 16: (8 + 4) * 2^-24, about 7.2e-7 */
  assert_true(pgv_element_ok(1.0f, 1.0, 1.0, k, 0));
  assert_true(pgv_element_ok(nextafterf(1.0f, 2.0f), 1.0, 1.0, k, 0)); /* one ulp */
  assert_true(pgv_element_ok(nextafterf(1.0f, 0.0f), 1.0, 1.0, k, 0));
  assert_true(pgv_element_ok(-0.5f, -0.5, 3.0, k, 0));
  assert_true(pgv_element_ok(0.0f, 0.0, 0.0, 0, 0));
  assert_false(pgv_element_ok(1.0f + 1e-5f, 1.0, 1.0, k, 0));
  assert_false(pgv_element_ok(1.0f, 1.0 + 1e-5, 1.0, k, 0));
  assert_false(pgv_element_ok(-1.0f, 1.0, 1.0, k, 0));
  assert_false(pgv_element_ok(1e-20f, 0.0, 0.0, 0, 0)); /* zero scale: exact zero */
  assert_false(pgv_element_ok(NAN, 1.0, 1.0, k, 0));
  assert_false(pgv_element_ok(-NAN, 1.0, 1.0, k, 0));
  assert_false(pgv_element_ok(INFINITY, 1.0, 1.0, k, 0));
  assert_false(pgv_element_ok(-INFINITY, -1.0, 1.0, k, 0));
  assert_false(pgv_element_ok(INFINITY, INFINITY, INFINITY, k, 0));
  assert_false(pgv_element_ok(INFINITY, 1.0, INFINITY, k, 0)); /* even an infinite tolerance */
  assert_false(pgv_element_ok(NAN, 0.0, 1e300, k, 0));
  /* The tolerance widens with k and scale. */
  assert_true(pgv_tolerance(1.0, 4096, 0) > pgv_tolerance(1.0, 16, 0));
  assert_true(pgv_tolerance(2.0, 16, 0) > pgv_tolerance(1.0, 16, 0));
}

/* A TF32 entry is allowed one TF32 rounding per product: 2^-9 + 2^-20 of the
 * scale more than strict FP32, and no more. */
static void test_element_ok_tf32(void **state) {
  (void)state;
  const int k = 16;
  const float tf32_off = 1.0f + 1.0f / 1024.0f; /* one TF32 ulp of 1 */
  assert_false(pgv_element_ok(tf32_off, 1.0, 1.0, k, PG_PRECISION_STRICT));
  assert_true(pgv_element_ok(tf32_off, 1.0, 1.0, k, PG_PRECISION_TF32));
  assert_true(pgv_element_ok(1.0f + 1.9e-3f, 1.0, 1.0, k, PG_PRECISION_TF32));
  assert_false(pgv_element_ok(1.0f + 2.1e-3f, 1.0, 1.0, k, PG_PRECISION_TF32));
  assert_false(pgv_element_ok(NAN, 1.0, 1.0, k, PG_PRECISION_TF32));
  assert_false(pgv_element_ok(1e-20f, 0.0, 0.0, 0, PG_PRECISION_TF32));
  assert_true(pgv_tolerance(1.0, k, PG_PRECISION_TF32) -
                  pgv_tolerance(1.0, k, PG_PRECISION_STRICT) ==
              0x1p-9 + 0x1p-20);
  /* Emulated entries answer to the strict bound. */
  assert_true(pgv_tolerance(1.0, k, PG_PRECISION_EMULATED) ==
              pgv_tolerance(1.0, k, PG_PRECISION_STRICT));
}

/* Tiny results (bench --inputs tiny: products near 2^-120) are held to the
 * relative bound too: the absolute floor sits at denormals, below them. A
 * zero where the reference is 2^-110 fails; so does 100 u of its scale; a
 * few denormal steps off a zero reference pass. */
static void test_element_ok_tiny(void **state) {
  (void)state;
  const int k = 64;
  const double ref = 0x1p-110, scale = 0x1p-104;
  assert_false(pgv_element_ok(0.0f, ref, scale, k, PG_PRECISION_STRICT));
  assert_false(pgv_element_ok((float)(ref + 100.0 * 0x1p-24 * scale), ref, scale, k,
                              PG_PRECISION_EMULATED));
  assert_true(pgv_element_ok((float)(ref + 2.0 * 0x1p-24 * scale), ref, scale, k,
                             PG_PRECISION_STRICT));
  assert_true(pgv_element_ok(0x1p-147f, 0.0, 0.0, k, PG_PRECISION_STRICT));
  assert_false(pgv_element_ok(0x1p-120f, 0.0, 0.0, k, PG_PRECISION_STRICT));
}

/* ---- the comparison -------------------------------------------------------- */

typedef struct {
  int m, n, k, lda, ldb, ldc;
  float *a, *b, *c;
  double *ref, *scale;
} problem;

/* A*B with alpha 1, beta 0; C starts NaN everywhere, padding included. */
static problem make_problem(int m, int n, int k, int lda, int ldb, int ldc, uint64_t seed) {
  problem p = {m, n, k, lda, ldb, ldc, NULL, NULL, NULL, NULL, NULL};
  p.a = random_matrix(m, k, lda, seed);
  p.b = random_matrix(k, n, ldb, seed + 1);
  p.c = nan_matrix(m, ldc);
  p.ref = alloc_doubles((size_t)m * n);
  p.scale = alloc_doubles((size_t)m * n);
  pgh_reference_host(m, n, k, 1.0f, p.a, lda, p.b, ldb, 0.0f, NULL, ldc, p.ref, p.scale);
  return p;
}

static void free_problem(problem *p) {
  free(p->a); free(p->b); free(p->c); free(p->ref); free(p->scale);
}

static pgh_check compare(const problem *p) {
  pgh_check chk;
  memset(&chk, 0xA5, sizeof chk); /* the comparison must fill every field it reports */
  pgh_compare_host(p->m, p->n, p->k, p->c, p->ldc, p->ref, p->scale, PG_PRECISION_STRICT, &chk);
  return chk;
}

static void expect_pass(const problem *p) {
  pgh_check chk = compare(p);
  if (chk.failed != 0)
    fail_msg("expected a pass: %lld of %lld failed, max tol ratio %g, first at (%d,%d) "
             "out %g ref %g",
             chk.failed, chk.checked, chk.max_tol_ratio, chk.reported ? chk.bad_row[0] : -1,
             chk.reported ? chk.bad_col[0] : -1, chk.reported ? (double)chk.bad_out[0] : 0.0,
             chk.reported ? chk.bad_ref[0] : 0.0);
  assert_int_equal(chk.checked, (long long)p->m * p->n);
  assert_int_equal(chk.nonfinite, 0);
  assert_int_equal(chk.reported, 0);
  assert_true(chk.max_tol_ratio <= 1.0);
  assert_true(chk.max_abs_err >= 0.0);
}

/* Exactly one failure, at (row, col). */
static void expect_one_failure(const problem *p, int row, int col, int nonfinite) {
  pgh_check chk = compare(p);
  assert_int_equal(chk.checked, (long long)p->m * p->n);
  assert_int_equal(chk.failed, 1);
  assert_int_equal(chk.nonfinite, nonfinite);
  assert_int_equal(chk.reported, 1);
  assert_int_equal(chk.bad_row[0], row);
  assert_int_equal(chk.bad_col[0], col);
  assert_true(chk.bad_ref[0] == p->ref[(size_t)row * p->n + col]);
  float got = chk.bad_out[0], want = p->c[(size_t)row * p->ldc + col];
  assert_memory_equal(&got, &want, sizeof got);
}

static void test_compare_correct(void **state) {
  (void)state;
  problem p = make_problem(33, 47, 129, 129, 47, 47, 10);
  gemm_fp32(p.m, p.n, p.k, p.a, p.lda, p.b, p.ldb, p.c, p.ldc, SUM_FORWARD);
  expect_pass(&p);
  free_problem(&p);
}

/* The mean error: one element off by exactly its scale's 2^-20 (16 u), the
 * rest exact, gives a mean of 16 u over the elements, the max 16 u. */
static void test_compare_mean_error(void **state) {
  (void)state;
  problem p = make_problem(8, 8, 16, 16, 8, 8, 40);
  for (int i = 0; i < p.m; ++i)
    for (int j = 0; j < p.n; ++j) p.c[(size_t)i * p.ldc + j] = (float)p.ref[(size_t)i * p.n + j];
  for (size_t i = 0; i < (size_t)p.m * p.n; ++i) p.ref[i] = (double)p.c[(i / p.n) * p.ldc + i % p.n];
  const size_t at = 3 * (size_t)p.n + 5;
  p.ref[at] -= ldexp(p.scale[at], -20);
  pgh_check chk = compare(&p);
  const double u = ldexp(1.0, -24);
  assert_true(fabs(chk.max_rel_err / u - 16.0) < 1e-9);
  assert_true(fabs(chk.mean_rel_err / u - 16.0 / (p.m * p.n)) < 1e-9);
  free_problem(&p);
}

static void test_compare_catches_nan(void **state) {
  (void)state;
  problem p = make_problem(33, 47, 129, 129, 47, 47, 20);
  gemm_fp32(p.m, p.n, p.k, p.a, p.lda, p.b, p.ldb, p.c, p.ldc, SUM_FORWARD);
  p.c[17 * p.ldc + 29] = NAN;
  expect_one_failure(&p, 17, 29, 1);
  p.c[17 * p.ldc + 29] = INFINITY;
  expect_one_failure(&p, 17, 29, 1);
  free_problem(&p);
}

/* A "buggy GEMM": element (row, col) reads B's row p+1 instead of p (the last
 * product stays right), the index slip that constant inputs never show. */
static void test_compare_catches_off_by_one(void **state) {
  (void)state;
  problem p = make_problem(24, 40, 64, 64, 40, 40, 30);
  gemm_fp32(p.m, p.n, p.k, p.a, p.lda, p.b, p.ldb, p.c, p.ldc, SUM_FORWARD);
  const int row = 5, col = 38;
  float acc = 0.0f;
  for (int q = 0; q < p.k; q++) {
    int brow = q + 1 < p.k ? q + 1 : q;
    acc += p.a[row * p.lda + q] * p.b[brow * p.ldb + col];
  }
  p.c[row * p.ldc + col] = acc;
  expect_one_failure(&p, row, col, 0);
  free_problem(&p);
}

static void test_compare_catches_unwritten(void **state) {
  (void)state;
  problem p = make_problem(19, 23, 31, 31, 23, 23, 40);
  /* C is NaN-poisoned; a kernel that skips the last element of the grid: */
  float *full = nan_matrix(p.m, p.ldc);
  gemm_fp32(p.m, p.n, p.k, p.a, p.lda, p.b, p.ldb, full, p.ldc, SUM_FORWARD);
  for (int i = 0; i < p.m; i++)
    for (int j = 0; j < p.n; j++)
      if (!(i == p.m - 1 && j == p.n - 1)) p.c[i * p.ldc + j] = full[i * p.ldc + j];
  free(full);
  expect_one_failure(&p, p.m - 1, p.n - 1, 1);
  free_problem(&p);
}

static void test_compare_rejects_tf32(void **state) {
  (void)state;
  problem p = make_problem(32, 32, 512, 512, 32, 32, 50);
  float *a32 = random_matrix(p.m, p.k, p.lda, 50);
  float *b32 = random_matrix(p.k, p.n, p.ldb, 51);
  for (size_t i = 0; i < (size_t)p.m * p.lda; i++) a32[i] = to_tf32(a32[i]);
  for (size_t i = 0; i < (size_t)p.k * p.ldb; i++) b32[i] = to_tf32(b32[i]);
  gemm_fp32(p.m, p.n, p.k, a32, p.lda, b32, p.ldb, p.c, p.ldc, SUM_FORWARD);
  pgh_check chk = compare(&p);
  assert_int_equal(chk.nonfinite, 0);
  /* Not a stray element: TF32 lands well outside the tolerance, so at least
   * three quarters fail (about 90 % with this tolerance). */
  if (chk.failed * 4 < chk.checked * 3)
    fail_msg("TF32 result passed too often: %lld of %lld failed", chk.failed, chk.checked);
  assert_true(chk.max_tol_ratio > 1.0);
  assert_int_equal(chk.reported, PGH_MAX_REPORTED);
  free(a32); free(b32);
  free_problem(&p);
}

static void test_compare_accepts_fp32_orders(void **state) {
  (void)state;
  const sum_order orders[] = {SUM_FORWARD, SUM_REVERSED, SUM_PAIRWISE, SUM_FMA};
  problem p = make_problem(12, 16, 4096, 4096, 16, 16, 60);
  for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
    gemm_fp32(p.m, p.n, p.k, p.a, p.lda, p.b, p.ldb, p.c, p.ldc, orders[o]);
    expect_pass(&p);
  }
  free_problem(&p);
}

/* ld > width: padding (NaN here) is never compared, and rows are found by ldc. */
static void test_compare_padding(void **state) {
  (void)state;
  problem p = make_problem(21, 37, 45, 45 + 3, 37 + 5, 37 + 7, 70);
  gemm_fp32(p.m, p.n, p.k, p.a, p.lda, p.b, p.ldb, p.c, p.ldc, SUM_REVERSED);
  for (int i = 0; i < p.m; i++)
    for (int j = p.n; j < p.ldc; j++) assert_true(isnan(p.c[i * p.ldc + j]));
  expect_pass(&p);
  p.c[(p.m - 1) * p.ldc + (p.n - 1)] += 0.5f; /* last element, last row */
  expect_one_failure(&p, p.m - 1, p.n - 1, 0);
  free_problem(&p);
}

/* Many failures: the first PGH_MAX_REPORTED in index order are reported. */
static void test_compare_reports_in_order(void **state) {
  (void)state;
  problem p = make_problem(8, 9, 10, 10, 9, 11, 80);
  gemm_fp32(p.m, p.n, p.k, p.a, p.lda, p.b, p.ldb, p.c, p.ldc, SUM_FORWARD);
  for (int i = 0; i < p.m; i++) p.c[i * p.ldc + 4] = NAN; /* column 4 unwritten */
  pgh_check chk = compare(&p);
  assert_int_equal(chk.failed, p.m);
  assert_int_equal(chk.nonfinite, p.m);
  int want_reported = p.m < PGH_MAX_REPORTED ? p.m : PGH_MAX_REPORTED;
  assert_int_equal(chk.reported, want_reported);
  for (int r = 0; r < chk.reported; r++) {
    assert_int_equal(chk.bad_row[r], r);
    assert_int_equal(chk.bad_col[r], 4);
  }
  free_problem(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reference_2x2),
      cmocka_unit_test(test_reference_random),
      cmocka_unit_test(test_reference_layouts),
      cmocka_unit_test(test_reference_alpha_zero),
      cmocka_unit_test(test_stored_shapes),
      cmocka_unit_test(test_stored_element),
      cmocka_unit_test(test_compare_stored),
      cmocka_unit_test(test_element_ok),
      cmocka_unit_test(test_element_ok_tf32),
      cmocka_unit_test(test_element_ok_tiny),
      cmocka_unit_test(test_compare_correct),
      cmocka_unit_test(test_compare_catches_nan),
      cmocka_unit_test(test_compare_mean_error),
      cmocka_unit_test(test_compare_catches_off_by_one),
      cmocka_unit_test(test_compare_catches_unwritten),
      cmocka_unit_test(test_compare_rejects_tf32),
      cmocka_unit_test(test_compare_accepts_fp32_orders),
      cmocka_unit_test(test_compare_padding),
      cmocka_unit_test(test_compare_reports_in_order),
  };
  return cmocka_run_group_tests_name("verify", tests, NULL, NULL);
}
