/* `pipegemm profile`'s selectors (src/cli/profile.c): auto has no kernel of
 * its own and is profiled as what it runs, asked as pg_auto_select is. No
 * GPU: the question goes to stand-ins that answer as the library does, one
 * of them holding the arguments to what pg_auto_select checks (as pg_sgemm
 * does), so that the tool is held to that contract without a GPU to ask. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/profile.h"
#include "introspect.h"

#define MAX_ARGS 16

/* What the stand-ins were asked, and what they answer. */
static struct {
  int calls;
  const pg_variant_info *answer; /* NULL: nothing runs */
  int answer_stages;
  pg_status status; /* the answer's status */
} asked;

/* pg_auto_select's contract: the arguments checked as pg_sgemm checks them
 * (sizes at least 0, lda >= max(1, K), ldb >= max(1, N), A and B not NULL
 * where K > 0), and no variant where M or N is 0. The tool's stand-ins for
 * A and B must be 16-byte aligned, as bench's dense operands are: the
 * choice depends on it. */
static pg_status strict_query(const pg_variant_info *selector, int device, int m, int n, int k,
                              const float *a, int lda, const float *b, int ldb,
                              const pg_variant_info **variant, int *stages) {
  (void)device;
  ++asked.calls;
  assert_non_null(selector);
  assert_int_equal(selector->kind, PG_KIND_SELECTOR);
  if (m < 0 || n < 0 || k < 0 || lda < (k > 1 ? k : 1) || ldb < (n > 1 ? n : 1) ||
      (k > 0 && (a == NULL || b == NULL))) {
    pg_set_error_detail("pg_auto_select: bad arguments");
    return PG_ERR_INVALID_ARG;
  }
  assert_int_equal((uintptr_t)a % 16, 0);
  assert_int_equal((uintptr_t)b % 16, 0);
  if (m == 0 || n == 0) {
    *variant = NULL;
    *stages = 0;
    return PG_OK;
  }
  if (asked.status != PG_OK) {
    pg_set_error_detail("no candidate takes this layout");
    return asked.status;
  }
  *variant = asked.answer;
  *stages = asked.answer_stages;
  return PG_OK;
}

typedef struct {
  pgc_options opts;
  pgc_run_spec runs[PGC_MAX_VARIANTS];
  int count;
  pgc_selectors_left_out left_out;
  char *log;
} resolved;

/* Parses "pipegemm profile WORDS..." and resolves its selectors through
 * strict_query, answering `answer` at `stages` (or `status`). */
static resolved resolve(const char *answer, int stages, pg_status status,
                        const char *first, ...) {
  static char *argv[MAX_ARGS];
  int argc = 0;
  argv[argc++] = (char *)"pipegemm";
  argv[argc++] = (char *)"profile";
  va_list ap;
  va_start(ap, first);
  for (const char *word = first; word && argc < MAX_ARGS - 1; word = va_arg(ap, const char *))
    argv[argc++] = (char *)word;
  va_end(ap);
  argv[argc] = NULL;
  resolved r;
  memset(&r, 0, sizeof r);
  char err[PGC_ERROR_SIZE];
  if (pgc_parse_args(argc, argv, &r.opts, err, sizeof err) != PGC_EXIT_OK)
    fail_msg("usage error: %s", err);
  r.count = pgc_expand_runs(&r.opts, r.runs, PGC_MAX_VARIANTS);
  assert_true(r.count <= PGC_MAX_VARIANTS);
  asked.calls = 0;
  asked.answer = answer ? pg_variant_find(answer) : NULL;
  asked.answer_stages = stages;
  asked.status = status;
  size_t size = 0;
  FILE *log = open_memstream(&r.log, &size);
  assert_non_null(log);
  r.count = pgc_profile_resolve_selectors(&r.opts, r.runs, r.count, strict_query, log,
                                          &r.left_out);
  assert_int_equal(fclose(log), 0);
  return r;
}
#define RESOLVE(answer, stages, status, ...) \
  resolve(answer, stages, status, __VA_ARGS__, (const char *)NULL)

static void expect_run(const resolved *r, int index, const char *variant, int stages) {
  assert_true(index < r->count);
  assert_string_equal(r->runs[index].variant->name, variant);
  assert_int_equal(r->runs[index].stages, stages);
}

static void expect_log(const resolved *r, const char *line) {
  if (!strstr(r->log, line)) print_error("log:\n%s\nlacks: %s\n", r->log, line);
  assert_non_null(strstr(r->log, line));
}

/* auto becomes what it runs; K = 0 and K = 1 ask with lda 1. */
static void test_auto_profiled_as_its_choice(void **state) {
  (void)state;
  const char *const shapes[][2] = {{"--size", "64"}, {"--k", "0"}, {"--k", "1"}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    resolved r = RESOLVE("cp_async", 3, PG_OK, "--variant", "baseline,auto", shapes[s][0],
                         shapes[s][1]);
    assert_int_equal(asked.calls, 1);
    assert_int_equal(r.count, 2);
    expect_run(&r, 0, "baseline", 1);
    expect_run(&r, 1, "cp_async", 3);
    expect_log(&r, "pipegemm: auto runs cp_async at 3 stages here; profiled as that\n");
    assert_int_equal(r.left_out.no_gpu + r.left_out.nothing + r.left_out.failed, 0);
    free(r.log);
  }
  /* What is planned already is profiled once, whoever asked for it. */
  resolved r = RESOLVE("cp_async", 3, PG_OK, "--variant", "cp_async,auto,auto_emulated",
                       "--stages", "3");
  assert_int_equal(asked.calls, 2);
  assert_int_equal(r.count, 1);
  expect_run(&r, 0, "cp_async", 3);
  free(r.log);
}

/* M or N = 0: auto runs nothing, is left out and said so, unasked. */
static void test_nothing_runs_at_m_or_n_zero(void **state) {
  (void)state;
  const char *const dims[] = {"--m", "--n"};
  for (size_t d = 0; d < 2; ++d) {
    resolved r = RESOLVE("cp_async", 3, PG_OK, "--variant", "auto,baseline", dims[d], "0",
                         "--size", "64");
    assert_int_equal(asked.calls, 0);
    assert_int_equal(r.count, 1);
    expect_run(&r, 0, "baseline", 1);
    assert_int_equal(r.left_out.nothing, 1);
    expect_log(&r, d == 0 ? "pipegemm: auto: left out (it runs no kernel at 0x64x64: M or N is 0)\n"
                          : "pipegemm: auto: left out (it runs no kernel at 64x0x64: M or N is 0)\n");
    free(r.log);
  }
  /* Every selector of --size 0, none of them dereferenced. */
  resolved r = RESOLVE(NULL, 0, PG_OK, "--size", "0");
  assert_int_equal(r.left_out.nothing, 3); /* auto, auto_tf32, auto_emulated */
  for (int i = 0; i < r.count; ++i) assert_int_not_equal(r.runs[i].variant->kind, PG_KIND_SELECTOR);
  free(r.log);
  /* With --quiet, no word of it. */
  r = RESOLVE(NULL, 0, PG_OK, "--variant", "auto", "--m", "0", "--quiet");
  assert_int_equal(r.count, 0);
  assert_int_equal(r.left_out.nothing, 1);
  assert_string_equal(r.log, "");
  free(r.log);
}

/* The library naming no variant for any other reason is no crash either. */
static void test_no_variant_named(void **state) {
  (void)state;
  resolved r = RESOLVE(NULL, 0, PG_OK, "--variant", "auto", "--size", "64");
  assert_int_equal(asked.calls, 1);
  assert_int_equal(r.count, 0);
  assert_int_equal(r.left_out.nothing, 1);
  expect_log(&r, "pipegemm: auto: left out (it runs no kernel at 64x64x64)\n");
  free(r.log);
}

/* A question the library cannot answer: left out, with its reason, even
 * with --quiet; no GPU to ask: left out, said unless --quiet. */
static void test_failed_and_no_gpu(void **state) {
  (void)state;
  resolved r = RESOLVE(NULL, 0, PG_ERR_UNSUPPORTED, "--variant", "auto,baseline", "--size",
                       "64", "--quiet");
  assert_int_equal(r.count, 1);
  expect_run(&r, 0, "baseline", 1);
  assert_int_equal(r.left_out.failed, 1);
  expect_log(&r, "pipegemm: auto: left out (what it runs at 64x64x64 is not known: no "
                 "candidate takes this layout)\n");
  free(r.log);

  r = RESOLVE(NULL, 0, PG_ERR_NO_DEVICE, "--variant", "auto", "--size", "64");
  assert_int_equal(r.count, 0);
  assert_int_equal(r.left_out.no_gpu, 1);
  expect_log(&r, "pipegemm: auto: left out (no GPU to ask what it runs)\n");
  free(r.log);
  r = RESOLVE(NULL, 0, PG_ERR_NO_DEVICE, "--variant", "auto", "--size", "64", "--quiet");
  assert_string_equal(r.log, "");
  free(r.log);
}

/* The tool's own question without a GPU: no device, not a crash. */
static void test_real_query_without_gpu(void **state) {
  (void)state;
  const pg_variant_info *variant = pg_variant_find("cublas");
  int stages = -1;
  static _Alignas(16) float operand[4];
  pg_status st = pgc_selector_choice(pg_variant_find("auto"), 0, 64, 64, 64, operand, 64,
                                     operand, 64, &variant, &stages);
  assert_true(st == PG_ERR_NO_DEVICE || st == PG_OK); /* PG_OK: a GPU after all */
  if (st == PG_ERR_NO_DEVICE) {
    assert_null(variant);
    assert_int_equal(stages, 0);
  } else {
    assert_non_null(variant);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_auto_profiled_as_its_choice),
      cmocka_unit_test(test_nothing_runs_at_m_or_n_zero),
      cmocka_unit_test(test_no_variant_named),
      cmocka_unit_test(test_failed_and_no_gpu),
      cmocka_unit_test(test_real_query_without_gpu),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
