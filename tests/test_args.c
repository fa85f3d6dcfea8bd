/* The argument checks of every entry point that takes a problem (pg_sgemm,
 * the plans, pg_gemm and its layouts, the selectors' questions, the
 * column-major BLAS forms: tests/bad_calls.h), without a GPU. The buffers
 * are host memory: the library must reject (or, for M, N or the batch 0,
 * finish) before it touches them, so each rejected call must leave C
 * bit-identical. On a machine with no GPU a fully valid call returns
 * PG_ERR_NO_DEVICE; with a GPU that assertion is skipped
 * (tests/test_gpu_badargs.c covers the device side). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <cuda_runtime_api.h>

#include "bad_calls.h"
#include "pipegemm.h"

#define BUF_FLOATS 512


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

/* M=4, N=5, K=6, dense, op N, N, one GEMM: valid for every variant. */
static pgt_call valid_call(const char *variant) {
  pgt_call c = {.variant = variant, .m = 4, .n = 5, .k = 6, .alpha = 1.0f, .a = host_a, .lda = 6,
                .b = host_b, .ldb = 5, .beta = 0.5f, .c = host_c, .ldc = 5,
                .op_a = PG_OP_N, .op_b = PG_OP_N, .batch = 1};
  return c;
}


/* Runs the call, checks its status and that C kept every bit. */
#define EXPECT_STATUS(cl, expected, what)                                          \
  do {                                                                             \
    pg_status got_ = pgt_run(&(cl), NULL);                                                   \
    if (got_ != (expected))                                                        \
      fail_msg("%s (variant %s, stages %d, m=%d n=%d k=%d lda=%d ldb=%d ldc=%d): " \
               "got %s, want %s",                                                  \
               what, (cl).variant ? (cl).variant : "(null)", (cl).stages, (cl).m,  \
               (cl).n, (cl).k, (cl).lda, (cl).ldb, (cl).ldc, pg_status_name(got_), \
               pg_status_name(expected));                                          \
    assert_memory_equal(host_c, snapshot_c, sizeof host_c);                        \
  } while (0)

static void host_check(const pgt_call *c, const pgt_entry_point *entry, pg_status want,
                       const char *what, void *ctx) {
  (void)ctx;
  const pg_status got = entry->run(c, NULL);
  if (got != want)
    fail_msg("%s through %s (variant %s, stages %d, m=%d n=%d k=%d lda=%d ldb=%d ldc=%d, "
             "op %d %d, batch %d, strides %lld %lld %lld): got %s, want %s",
             what, entry->name, c->variant, c->stages, c->m, c->n, c->k, c->lda, c->ldb, c->ldc,
             c->op_a, c->op_b, c->batch, c->stride_a, c->stride_b, c->stride_c,
             pg_status_name(got), pg_status_name(want));
  assert_memory_equal(host_c, snapshot_c, sizeof host_c);
  /* Without a GPU a valid call stops at the device, whose absence the detail
   * explains; only refusals of the arguments are judged here. */
  if (want == PG_ERR_INVALID_ARG || want == PG_ERR_STAGES || c->m == 0 || c->n == 0 ||
      c->batch == 0) {
    const char *problem =
        pgt_detail_problem(pgt_detail_word_for(entry, want, what), pg_last_error_detail());
    if (problem)
      fail_msg("%s through %s (variant %s): %s: \"%s\"", what, entry->name, c->variant, problem,
               pg_last_error_detail());
  }
}

/* The shared case list (bad_calls.h) on host buffers, through every entry
 * point: without a GPU, every case must be decided before any device work. */
static void test_bad_calls(void **state) {
  (void)state;
  for (int i = 0; i < pg_variant_count(); i++) {
    const pg_variant_info *v = pg_variant_at(i);
    const pgt_call valid = valid_call(v->name);
    pgt_for_each_bad_call(v, &valid, host_check, NULL);
  }
}

static void test_bad_variant_and_stages(void **state) {
  (void)state;
  pgt_call c = valid_call("no_such_variant");
  EXPECT_STATUS(c, PG_ERR_UNKNOWN_VARIANT, "unknown variant");
  c = valid_call("");
  EXPECT_STATUS(c, PG_ERR_UNKNOWN_VARIANT, "empty variant name");

  c = valid_call(NULL);
  pg_status got = pgt_run(&c, NULL);
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
    /* Stage counts through the registry entry (by name: bad_calls.h). */
    got = pg_sgemm_variant(v, v->max_stages + 1, 4, 5, 6, 1.0f, host_a, 6, host_b, 5, 0.5f,
                           host_c, 5, NULL);
    assert_int_equal(got, PG_ERR_STAGES);
    got = pg_sgemm_variant(v, 0, -1, 5, 6, 1.0f, host_a, 6, host_b, 5, 0.5f, host_c, 5, NULL);
    assert_int_equal(got, PG_ERR_INVALID_ARG);
    assert_memory_equal(host_c, snapshot_c, sizeof host_c);
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
    for (int e = 0; e < PGT_ENTRY_POINTS; ++e) {
      const pgt_entry_point *entry = &pgt_entry_points[e];
      if (!pgt_entry_applies(entry, v)) continue;
      pgt_call c = valid_call(v->name);
      host_check(&c, entry, PG_ERR_NO_DEVICE, "valid call, no GPU", NULL);
      c.stages = v->max_stages;
      host_check(&c, entry, PG_ERR_NO_DEVICE, "valid call at max stages, no GPU", NULL);
      /* K = 0 needs no A or B, only C. */
      c = valid_call(v->name);
      c.k = 0;
      c.lda = 1;
      c.a = NULL;
      c.b = NULL;
      host_check(&c, entry, PG_ERR_NO_DEVICE, "k 0 with NULL A and B, no GPU", NULL);
      /* op T, T and a batch of 3 with a shared B: valid, so it stops at
       * the device too (a study kernel's refusal of the layout needs the
       * device: test_gpu_layouts). */
      if ((entry->takes & (PGT_TAKES_OPS | PGT_TAKES_BATCH)) ==
          (PGT_TAKES_OPS | PGT_TAKES_BATCH)) {
        c = valid_call(v->name);
        c.op_a = PG_OP_T;
        c.op_b = PG_OP_T;
        c.lda = c.m; /* A stored K x M */
        c.ldb = c.k; /* B stored N x K */
        c.batch = 3;
        c.stride_a = (long long)c.k * c.lda;
        c.stride_b = 0;
        c.stride_c = (long long)c.m * c.ldc;
        host_check(&c, entry, PG_ERR_NO_DEVICE, "op T, T, batch 3, no GPU", NULL);
      }
    }
  }
}

/* A stale detail: a refused call leaves one, and every call that returns
 * PG_OK after it must clear it (the header's promise), while the functions
 * that return no status leave it alone, so that pg_strerror(st) may be
 * called before pg_last_error_detail(). None of these needs a GPU. */
static void refuse_something(void) {
  assert_int_equal(pg_sgemm("cp_async", 0, -1, 4, 4, 1.0f, host_a, 4, host_b, 4, 0.0f, host_c, 4,
                            NULL),
                   PG_ERR_INVALID_ARG);
  assert_string_not_equal(pg_last_error_detail(), "");
}

#define EXPECT_CLEARED(call)                                                        \
  do {                                                                              \
    refuse_something();                                                             \
    const pg_status st_ = (call);                                                   \
    if (st_ != PG_OK) fail_msg("%s: %s", #call, pg_status_name(st_));                \
    if (pg_last_error_detail()[0] != '\0')                                           \
      fail_msg("%s returned PG_OK and left the detail \"%s\"", #call,                \
               pg_last_error_detail());                                             \
  } while (0)

static void test_detail_cleared_on_success(void **state) {
  (void)state;
  const pg_variant_info *v = pg_variant_find("cp_async");
  int stages = 0;
  size_t bytes = 0;
  EXPECT_CLEARED(pg_variant_stages(v, 0, &stages));
  EXPECT_CLEARED(pg_variant_smem_bytes(v, 0, &bytes));
  EXPECT_CLEARED(pg_sgemm("cp_async", 0, 0, 4, 4, 1.0f, NULL, 4, NULL, 4, 0.0f, NULL, 4, NULL));
  EXPECT_CLEARED(pg_sgemm_variant(v, 0, 4, 0, 4, 1.0f, NULL, 4, NULL, 1, 0.0f, NULL, 1, NULL));
  EXPECT_CLEARED(pg_variant_accepts(v, 0, 0, 4, 4, NULL, 4, NULL, 4, NULL, 4));
  const pg_variant_info *chosen = NULL;
  EXPECT_CLEARED(pg_auto_select(0, 4, 4, NULL, 4, NULL, 4, &chosen, &stages));
  pg_plan *plan = NULL;
  EXPECT_CLEARED(pg_plan_create(&plan, v, 0, 0, 4, 4, 1.0f, NULL, 4, NULL, 4, 0.0f, NULL, 4));
  EXPECT_CLEARED(pg_plan_launch(plan, NULL));
  pg_plan_info info = PG_PLAN_INFO_INIT;
  EXPECT_CLEARED(pg_plan_describe(plan, &info));
  pg_plan_destroy(plan);
  /* The layouts' entry points, with nothing to do (batch 0, or N = 0). */
  pg_gemm_desc empty = PG_GEMM_DESC_INIT;
  empty.m = empty.n = empty.k = 4;
  empty.lda = empty.ldb = empty.ldc = 4;
  empty.batch = 0;
  EXPECT_CLEARED(pg_gemm("cp_async", 0, &empty, NULL));
  EXPECT_CLEARED(pg_variant_accepts_gemm(v, 0, &empty));
  EXPECT_CLEARED(pg_selector_choice(pg_variant_find("auto"), &empty, &chosen, &stages));
  plan = NULL;
  EXPECT_CLEARED(pg_plan_create_gemm(&plan, v, 0, &empty));
  EXPECT_CLEARED(pg_plan_launch_with(plan, NULL, NULL, NULL, NULL));
  pg_plan_destroy(plan);
  const float one = 1.0f, zero = 0.0f;
  EXPECT_CLEARED(pg_blas_sgemm(NULL, 0, 0, 4, 0, 4, &one, NULL, 4, NULL, 4, &zero, NULL, 4));
  EXPECT_CLEARED(pg_blas_sgemm_strided_batched(NULL, 1, 1, 4, 4, 4, &one, NULL, 4, 16, NULL, 4,
                                               16, &zero, NULL, 4, 16, 0));

  /* No status, no change: the detail outlives them. */
  refuse_something();
  char before[256];
  snprintf(before, sizeof before, "%s", pg_last_error_detail());
  (void)pg_strerror(PG_ERR_INVALID_ARG);
  (void)pg_status_name(PG_ERR_INVALID_ARG);
  (void)pg_kind_name(PG_KIND_KERNEL);
  (void)pg_precision_name(PG_PRECISION_STRICT);
  (void)pg_version_string();
  (void)pg_variant_find("no such variant");
  (void)pg_variant_at(-1);
  (void)pg_last_cuda_error();
  pg_plan_destroy(NULL);
  assert_string_equal(pg_last_error_detail(), before);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_bad_calls, setup),
      cmocka_unit_test_setup(test_bad_variant_and_stages, setup),
      cmocka_unit_test_setup(test_valid_call_without_gpu, setup),
      cmocka_unit_test_setup(test_detail_cleared_on_success, setup),
  };
  return cmocka_run_group_tests_name("args", tests, NULL, NULL);
}
