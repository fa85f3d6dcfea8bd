/* The scaled FP16 split of the FP16x3 form (src/kernels/fp16x3.h), on the
 * host: the FP16 rounding against every FP16 value and every midpoint
 * between two, the split keeping 22 bits of each element of a row whose
 * nonzeros span at most 2^28 (at the top of FP32's range, at its smallest
 * normals and among its denormals too), the span rule's edge, and an
 * element past the span losing more: what the rule is for; then where a
 * batch's lines lie in the workspace, and the tile rule two kernels
 * share. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kernels/fp16x3.h"

/* Every finite FP16 value converts back to itself; every midpoint between
 * two neighbours goes to the even one, and a hair off it to the nearer. */
static void test_fp16_rounding(void **state) {
  (void)state;
  for (uint32_t h = 0; h < 0x7c00u; ++h) {
    const float v = pg16_to_float((uint16_t)h);
    assert_int_equal(pg16_from_float(v), h);
    assert_int_equal(pg16_from_float(-v), h | 0x8000u);
    if (h + 1 == 0x7c00u) break;
    const float w = pg16_to_float((uint16_t)(h + 1));
    const float mid = (v + w) / 2; /* exact: FP16 has 11 bits, FP32 24 */
    const uint32_t even = (h & 1u) ? h + 1 : h;
    assert_int_equal(pg16_from_float(mid), even);
    assert_int_equal(pg16_from_float(-mid), even | 0x8000u);
    assert_int_equal(pg16_from_float(nextafterf(mid, 0.0f)), h);
    assert_int_equal(pg16_from_float(nextafterf(mid, INFINITY)), h + 1);
    assert_int_equal(pg16_from_float(-nextafterf(mid, INFINITY)), (h + 1) | 0x8000u);
  }
  /* Past the largest finite FP16, every magnitude is infinite, with its sign. */
  const float past[] = {65536.0f, 70000.0f, 1e6f, 0x1p30f, 3.4028234663852886e38f};
  for (size_t i = 0; i < sizeof past / sizeof past[0]; ++i) {
    assert_int_equal(pg16_from_float(past[i]), 0x7c00u);
    assert_int_equal(pg16_from_float(-past[i]), 0xfc00u);
  }
  /* Below half the smallest denormal (2^-25), zero: every binade from there
   * down to FP32's smallest normal, each with its sign. */
  for (int e = -26; e >= -126; --e) {
    assert_int_equal(pg16_from_float(pg16_scale(1.75f, e)), 0u);
    assert_int_equal(pg16_from_float(-pg16_scale(1.75f, e)), 0x8000u);
  }
  assert_int_equal(pg16_from_float(65504.0f), 0x7bffu);
  assert_int_equal(pg16_from_float(65519.99f), 0x7bffu);
  assert_int_equal(pg16_from_float(65520.0f), 0x7c00u); /* the tie past the largest */
  assert_int_equal(pg16_from_float(INFINITY), 0x7c00u);
  assert_int_equal(pg16_from_float(-INFINITY), 0xfc00u);
  assert_true((pg16_from_float(NAN) & 0x7fffu) > 0x7c00u);
  assert_int_equal(pg16_from_float(0x1p-25f), 0u);     /* half the smallest denormal: even */
  assert_int_equal(pg16_from_float(0x1.8p-25f), 1u);   /* past it */
  assert_int_equal(pg16_from_float(0x1p-149f), 0u);    /* FP32's denormals */
  assert_int_equal(pg16_from_float(1.0f), 0x3c00u);
  assert_true(isinf(pg16_to_float(0x7c00u)) && isnan(pg16_to_float(0x7e00u)));
}

static void test_exponent_and_scale(void **state) {
  (void)state;
  assert_int_equal(pg16_exponent(1.0f), 0);
  assert_int_equal(pg16_exponent(-3.0f), 1);
  assert_int_equal(pg16_exponent(0x1p-126f), -126);
  assert_int_equal(pg16_exponent(0x1.8p-127f), -127); /* a denormal */
  assert_int_equal(pg16_exponent(0x1p-149f), -149);
  assert_int_equal(pg16_exponent(0x1.fffffep127f), 127);
  assert_true(pg16_scale(0x1p-149f, 200) == 0x1p51f);
  assert_true(pg16_scale(0x1.5p100f, -220) == 0x1.5p-120f);
  assert_true(pg16_scale(3.0f, 0) == 3.0f);
  assert_int_equal(pg_fp16x3_scale(0x1.fffp14f), 0);
  assert_int_equal(pg_fp16x3_scale(0x1p15f), 1);
  assert_int_equal(pg_fp16x3_scale(0x1p-140f), -154);
  assert_int_equal(pg_fp16x3_scale(0.0f), 0);
}

static uint64_t lcg = 7;
static uint32_t next_random(void) {
  lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(lcg >> 32);
}

/* |x - 2^e (h + 2^-11 l)| over |x|, in double. */
static double split_error(float x, int e) {
  uint16_t h, l;
  pg_fp16x3_split(x, e, &h, &l);
  assert_true(fabsf(pg16_to_float(h)) <= 65504.0f);
  assert_false(isinf(pg16_to_float(l)) || isnan(pg16_to_float(l)));
  const double back =
      ldexp((double)pg16_to_float(h) + ldexp((double)pg16_to_float(l), -PG_FP16X3_LOW_SHIFT), e);
  return x != 0.0f ? fabs((double)x - back) / fabs((double)x) : fabs(back);
}

/* Rows of 64 random values whose exponents span PG_FP16X3_MAX_SPAN below
 * the row's top exponent, at tops across FP32's range (denormals at the
 * bottom of the lowest): every element within 2^-22 of itself. */
static void test_split_keeps_22_bits(void **state) {
  (void)state;
  const int tops[] = {127, 100, 15, 14, 0, -20, -99, -110, -121};
  double worst = 0.0;
  for (size_t t = 0; t < sizeof tops / sizeof tops[0]; ++t)
    for (int row = 0; row < 200; ++row) {
      float x[64], largest = 0.0f, smallest = INFINITY;
      for (int i = 0; i < 64; ++i) {
        const int e = i == 0 ? tops[t] : tops[t] - (int)(next_random() % (PG_FP16X3_MAX_SPAN + 1));
        const float significand = 1.0f + (float)(next_random() >> 8) * 0x1p-24f;
        x[i] = pg16_scale(significand, e) * ((next_random() & 1u) ? -1.0f : 1.0f);
        if (i % 9 == 5) x[i] = 0.0f; /* zeros are exact */
        if (fabsf(x[i]) > largest) largest = fabsf(x[i]);
        if (x[i] != 0.0f && fabsf(x[i]) < smallest) smallest = fabsf(x[i]);
      }
      assert_true(pg_fp16x3_span_ok(largest, smallest));
      const int e = pg_fp16x3_scale(largest);
      for (int i = 0; i < 64; ++i) {
        const double err = split_error(x[i], e);
        if (err > worst) worst = err;
        if (err > 0x1p-22) print_message("top 2^%d: %a lost %g of itself\n", tops[t], x[i], err);
        assert_true(err <= 0x1p-22);
      }
    }
  print_message("worst relative loss %g (2^%.2f)\n", worst, log2(worst));
}

/* The rule's edge, and what it guards against: past the span an element
 * loses more than 2^-22 of itself. */
static void test_span_rule(void **state) {
  (void)state;
  assert_true(pg_fp16x3_span_ok(0x1.fp10f, 0x1p-18f));  /* 10 - (-18) = 28 */
  assert_false(pg_fp16x3_span_ok(0x1.fp10f, 0x1p-19f)); /* 29 */
  assert_true(pg_fp16x3_span_ok(0.0f, 0.0f));           /* a row of zeros */
  assert_false(pg_fp16x3_span_ok(INFINITY, 1.0f));
  assert_false(pg_fp16x3_span_ok(NAN, 1.0f));
  assert_true(pg_fp16x3_span_ok(0x1p-120f, 0x1p-148f)); /* denormals, 28 apart */
  /* One element of 2^40 in a row of values near 1: 40 apart. */
  const int e = pg_fp16x3_scale(0x1p40f);
  double worst = 0.0;
  for (int i = 0; i < 100; ++i) {
    const float x = 1.0f + (float)(next_random() >> 8) * 0x1p-24f;
    const double err = split_error(x, e);
    if (err > worst) worst = err;
  }
  assert_true(worst > 0x1p-22);
  assert_true(split_error(0x1p40f, e) == 0.0);
}

/* A batch's lines (pg_fp16x3_a_first, _b_first, _lines): each GEMM's
 * op(A) lines and op(B) lines inside the whole, A's before B's, a shared
 * operand's the same for every GEMM, anyone else's apart from every other
 * GEMM's; the split writes matrix b of an operand at its first line plus
 * b times its padded count, which is the same place. */
static void test_batch_lines(void **state) {
  (void)state;
  const int dims[][2] = {{3, 5}, {16, 17}, {300, 260}, {1, 1}};
  for (size_t d = 0; d < sizeof dims / sizeof dims[0]; ++d)
    for (int batch = 1; batch <= 5; batch += 2)
      for (int shared = 0; shared < 4; ++shared) {
        const long long ml = pg_fp16x3_padded(dims[d][0]), nl = pg_fp16x3_padded(dims[d][1]);
        assert_int_equal(ml % PG_FP16X3_LINE_PAD, 0);
        assert_true(ml >= dims[d][0] && ml < dims[d][0] + PG_FP16X3_LINE_PAD);
        const long long sa = shared & 1 ? 0 : 1000, sb = shared & 2 ? 0 : 1000;
        const long long lines = pg_fp16x3_lines(ml, nl, batch, sa, sb);
        const long long b0 = pg_fp16x3_b_first(ml, nl, batch, sa, sb, 0);
        for (int z = 0; z < batch; ++z) {
          const long long a = pg_fp16x3_a_first(ml, sa, z);
          const long long b = pg_fp16x3_b_first(ml, nl, batch, sa, sb, z);
          assert_int_equal(a, sa ? z * ml : 0);       /* the split's matrix z of A */
          assert_int_equal(b, b0 + (sb ? z * nl : 0)); /* and of B */
          assert_true(a >= 0 && a + ml <= b0);
          assert_true(b >= b0 && b + nl <= lines);
        }
        assert_int_equal(lines, b0 + (sb ? batch : 1) * nl);
      }
}

/* The tile rule (pg_fp16x3_line_unsplit): thread t < 128 asks about row
 * m0 + t, t < 256 about column n0 + t - 128, each only inside the matrix;
 * the others about nothing. */
static void test_tile_rule(void **state) {
  (void)state;
  int rows[300], cols[300];
  for (int i = 0; i < 300; ++i) rows[i] = cols[i] = 0;
  rows[130] = PG_FP16X3_UNSPLIT;
  cols[5] = PG_FP16X3_UNSPLIT;
  rows[299] = PG_FP16X3_UNSPLIT; /* past m = 290: never asked */
  int row_hits = 0, col_hits = 0;
  for (int t = 0; t < 384; ++t) {
    row_hits += pg_fp16x3_line_unsplit(rows, cols, 290, 200, 128, 0, t) && t < 128;
    col_hits += pg_fp16x3_line_unsplit(rows, cols, 290, 200, 128, 0, t) && t >= 128;
  }
  assert_int_equal(row_hits, 1); /* row 130 */
  assert_int_equal(col_hits, 1); /* column 5 */
  for (int t = 0; t < 384; ++t) /* the last tile row: rows 256 .. 289 only */
    assert_false(pg_fp16x3_line_unsplit(rows, cols, 290, 200, 256, 128, t));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fp16_rounding),
      cmocka_unit_test(test_exponent_and_scale),
      cmocka_unit_test(test_split_keeps_22_bits),
      cmocka_unit_test(test_span_rule),
      cmocka_unit_test(test_batch_lines),
      cmocka_unit_test(test_tile_rule),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
