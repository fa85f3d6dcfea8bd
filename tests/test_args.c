/* pg_sgemm's argument checks, without a GPU. The buffers are host memory:
 * the library must reject (or, for M or N = 0, finish) before it touches
 * them, so each rejected call must leave C bit-identical. On a machine with
 * no GPU a fully valid call returns PG_ERR_NO_DEVICE; with a GPU that
 * assertion is skipped (tests/test_gpu_badargs.c covers the device side). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <cuda_runtime_api.h>

#include "pipegemm.h"

#define BUF_FLOATS 512

/* One call's arguments; cases start from a valid call and break one thing. */
typedef struct {
  const char *variant;
  int stages, m, n, k;
  float alpha;
  const float *a;
  int lda;
  const float *b;
  int ldb;
  float beta;
  float *c;
  int ldc;
} call;

static float host_a[BUF_FLOATS], host_b[BUF_FLOATS], host_c[BUF_FLOATS];
static float snapshot_c[BUF_FLOATS];

static int have_gpu(void) {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

static int setup(void **state) {
  (void)state;
  for (int i = 0; i < BUF_FLOATS; i++) {
    host_a[i] = (float)(i % 17) - 8.0f;
    host_b[i] = (float)(i % 13) * 0.25f;
    host_c[i] = (float)i * 1.5f - 100.0f;
  }
  memcpy(snapshot_c, host_c, sizeof host_c);
  return 0;
}

/* M=4, N=5, K=6, dense: valid for every variant. */
static call valid_call(const char *variant) {
  call c = {variant, 0, 4, 5, 6, 1.0f, host_a, 6, host_b, 5, 0.5f, host_c, 5};
  return c;
}

static pg_status run(const call *c) {
  return pg_sgemm(c->variant, c->stages, c->m, c->n, c->k, c->alpha, c->a, c->lda,
                  c->b, c->ldb, c->beta, c->c, c->ldc, NULL);
}

/* Runs the call, checks its status and that C kept every bit. */
#define EXPECT_STATUS(cl, expected, what)                                          \
  do {                                                                             \
    pg_status got_ = run(&(cl));                                                   \
    if (got_ != (expected))                                                        \
      fail_msg("%s (variant %s, stages %d, m=%d n=%d k=%d lda=%d ldb=%d ldc=%d): " \
               "got %s, want %s",                                                  \
               what, (cl).variant ? (cl).variant : "(null)", (cl).stages, (cl).m,  \
               (cl).n, (cl).k, (cl).lda, (cl).ldb, (cl).ldc, pg_status_name(got_), \
               pg_status_name(expected));                                          \
    assert_memory_equal(host_c, snapshot_c, sizeof host_c);                        \
  } while (0)

static void test_bad_sizes_and_lds(void **state) {
  (void)state;
  for (int i = 0; i < pg_variant_count(); i++) {
    const char *name = pg_variant_at(i)->name;
    call c;
    c = valid_call(name); c.m = -1; EXPECT_STATUS(c, PG_ERR_INVALID_ARG, "negative m");
    c = valid_call(name); c.n = -1; EXPECT_STATUS(c, PG_ERR_INVALID_ARG, "negative n");
    c = valid_call(name); c.k = -1; EXPECT_STATUS(c, PG_ERR_INVALID_ARG, "negative k");
    c = valid_call(name); c.m = INT32_MIN; EXPECT_STATUS(c, PG_ERR_INVALID_ARG, "m = INT_MIN");
    c = valid_call(name); c.lda = c.k - 1; EXPECT_STATUS(c, PG_ERR_INVALID_ARG, "lda < k");
    c = valid_call(name); c.ldb = c.n - 1; EXPECT_STATUS(c, PG_ERR_INVALID_ARG, "ldb < n");
    c = valid_call(name); c.ldc = c.n - 1; EXPECT_STATUS(c, PG_ERR_INVALID_ARG, "ldc < n");
    c = valid_call(name); c.lda = -6; EXPECT_STATUS(c, PG_ERR_INVALID_ARG, "negative lda");
    /* BLAS rule: ld >= max(1, width), checked before the quick return. */
    c = valid_call(name); c.k = 0; c.lda = 0; EXPECT_STATUS(c, PG_ERR_INVALID_ARG, "lda 0 with k 0");
    c = valid_call(name); c.n = 0; c.ldb = 0; EXPECT_STATUS(c, PG_ERR_INVALID_ARG, "ldb 0 with n 0");
    c = valid_call(name); c.n = 0; c.ldc = 0; EXPECT_STATUS(c, PG_ERR_INVALID_ARG, "ldc 0 with n 0");
    c = valid_call(name); c.m = 0; c.k = 0; c.lda = 0; EXPECT_STATUS(c, PG_ERR_INVALID_ARG, "lda 0 with m 0, k 0");
  }
}

static void test_null_pointers(void **state) {
  (void)state;
  for (int i = 0; i < pg_variant_count(); i++) {
    const char *name = pg_variant_at(i)->name;
    call c;
    c = valid_call(name); c.c = NULL; EXPECT_STATUS(c, PG_ERR_INVALID_ARG, "NULL C");
    c = valid_call(name); c.c = NULL; c.k = 0; c.lda = 1;
    EXPECT_STATUS(c, PG_ERR_INVALID_ARG, "NULL C with k 0 (C = beta*C is work)");
    c = valid_call(name); c.a = NULL; EXPECT_STATUS(c, PG_ERR_INVALID_ARG, "NULL A with k > 0");
    c = valid_call(name); c.b = NULL; EXPECT_STATUS(c, PG_ERR_INVALID_ARG, "NULL B with k > 0");
    c = valid_call(name); c.a = NULL; c.b = NULL; EXPECT_STATUS(c, PG_ERR_INVALID_ARG, "NULL A and B");
  }
}

static void test_bad_variant_and_stages(void **state) {
  (void)state;
  call c = valid_call("no_such_variant");
  EXPECT_STATUS(c, PG_ERR_UNKNOWN_VARIANT, "unknown variant");
  c = valid_call("");
  EXPECT_STATUS(c, PG_ERR_UNKNOWN_VARIANT, "empty variant name");

  c = valid_call(NULL);
  pg_status got = run(&c);
  if (got != PG_ERR_UNKNOWN_VARIANT && got != PG_ERR_INVALID_ARG)
    fail_msg("NULL variant name: got %s, want PG_ERR_UNKNOWN_VARIANT or PG_ERR_INVALID_ARG",
             pg_status_name(got));
  assert_memory_equal(host_c, snapshot_c, sizeof host_c);

  got = pg_sgemm_variant(NULL, 0, 4, 5, 6, 1.0f, host_a, 6, host_b, 5, 0.5f, host_c, 5, NULL);
  if (got != PG_ERR_UNKNOWN_VARIANT && got != PG_ERR_INVALID_ARG)
    fail_msg("pg_sgemm_variant(NULL): got %s", pg_status_name(got));
  assert_memory_equal(host_c, snapshot_c, sizeof host_c);

  /* A look-alike that is not a registry entry is refused, not dereferenced
   * for a launcher. */
  pg_variant_info fake = *pg_variant_at(0);
  got = pg_sgemm_variant(&fake, 0, 4, 5, 6, 1.0f, host_a, 6, host_b, 5, 0.5f, host_c, 5, NULL);
  if (got != PG_ERR_UNKNOWN_VARIANT && got != PG_ERR_INVALID_ARG)
    fail_msg("pg_sgemm_variant(copy of an entry): got %s", pg_status_name(got));
  assert_memory_equal(host_c, snapshot_c, sizeof host_c);
  size_t bytes = 0;
  assert_int_equal(pg_variant_smem_bytes(&fake, 0, &bytes), PG_ERR_INVALID_ARG);

  for (int i = 0; i < pg_variant_count(); i++) {
    const pg_variant_info *v = pg_variant_at(i);
    c = valid_call(v->name);
    c.stages = v->max_stages + 1; EXPECT_STATUS(c, PG_ERR_STAGES, "stages above max");
    c.stages = 1000; EXPECT_STATUS(c, PG_ERR_STAGES, "stages 1000");
    c.stages = -1; EXPECT_STATUS(c, PG_ERR_STAGES, "negative stages");
    if (v->min_stages > 1) {
      c.stages = v->min_stages - 1; EXPECT_STATUS(c, PG_ERR_STAGES, "stages below min");
    }
    /* The same through the registry entry. */
    got = pg_sgemm_variant(v, v->max_stages + 1, 4, 5, 6, 1.0f, host_a, 6, host_b, 5, 0.5f,
                           host_c, 5, NULL);
    assert_int_equal(got, PG_ERR_STAGES);
    got = pg_sgemm_variant(v, 0, -1, 5, 6, 1.0f, host_a, 6, host_b, 5, 0.5f, host_c, 5, NULL);
    assert_int_equal(got, PG_ERR_INVALID_ARG);
    assert_memory_equal(host_c, snapshot_c, sizeof host_c);
  }
}

/* M or N = 0 is nothing to do: PG_OK at once, GPU or not, pointers unused. */
static void test_empty_problems(void **state) {
  (void)state;
  for (int i = 0; i < pg_variant_count(); i++) {
    const char *name = pg_variant_at(i)->name;
    call c;
    c = valid_call(name); c.m = 0; EXPECT_STATUS(c, PG_OK, "m 0");
    c = valid_call(name); c.n = 0; c.ldb = 1; c.ldc = 1; EXPECT_STATUS(c, PG_OK, "n 0");
    c = valid_call(name); c.m = 0; c.n = 0; c.k = 0; c.lda = 1; c.ldb = 1; c.ldc = 1;
    EXPECT_STATUS(c, PG_OK, "m n k 0");
    c = valid_call(name); c.m = 0; c.a = NULL; c.b = NULL; c.c = NULL;
    EXPECT_STATUS(c, PG_OK, "m 0, NULL pointers");
    c = valid_call(name); c.n = 0; c.ldb = 1; c.ldc = 1; c.a = NULL; c.b = NULL; c.c = NULL;
    EXPECT_STATUS(c, PG_OK, "n 0, NULL pointers");
  }
}

static void test_valid_call_without_gpu(void **state) {
  (void)state;
  if (have_gpu()) {
    printf("# a GPU is present: PG_ERR_NO_DEVICE is not checked here\n");
    skip();
  }
  for (int i = 0; i < pg_variant_count(); i++) {
    const pg_variant_info *v = pg_variant_at(i);
    call c = valid_call(v->name);
    EXPECT_STATUS(c, PG_ERR_NO_DEVICE, "valid call, no GPU");
    c.stages = v->max_stages;
    EXPECT_STATUS(c, PG_ERR_NO_DEVICE, "valid call at max stages, no GPU");
    /* K = 0 needs no A or B, only C. */
    c = valid_call(v->name); c.k = 0; c.lda = 1; c.a = NULL; c.b = NULL;
    EXPECT_STATUS(c, PG_ERR_NO_DEVICE, "k 0 with NULL A and B, no GPU");
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_bad_sizes_and_lds, setup),
      cmocka_unit_test_setup(test_null_pointers, setup),
      cmocka_unit_test_setup(test_bad_variant_and_stages, setup),
      cmocka_unit_test_setup(test_empty_problems, setup),
      cmocka_unit_test_setup(test_valid_call_without_gpu, setup),
  };
  return cmocka_run_group_tests_name("args", tests, NULL, NULL);
}
