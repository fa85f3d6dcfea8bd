/* Argument parsing of the pipegemm tool (src/cli/args.c, args_values.c,
 * args_checks.c): defaults, every option in both spellings, stage lists,
 * variant names, the plan of runs, and bad, missing and unknown values. No
 * GPU needed: parsing reads only argv and the variant registry. The
 * commands' own options are test_cli_commands.c's, the texts the tool
 * writes test_cli_usage.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli_args_common.h"

/* ---- defaults ------------------------------------------------------------- */

static void test_bench_defaults(void **state) {
  (void)state;
  parse_result r = PARSE("bench");
  EXPECT_OK(r);
  assert_int_equal(r.opts.command, PGC_CMD_BENCH);
  assert_true(r.opts.all_variants);
  assert_int_equal(r.opts.variant_count, 0);
  assert_int_equal(r.opts.m, 4096);
  assert_int_equal(r.opts.n, 4096);
  assert_int_equal(r.opts.k, 4096);
  assert_int_equal(r.opts.stage_count, 0);
  assert_int_equal(r.opts.warmup, 10);
  assert_int_equal(r.opts.iters, 20);
  assert_int_equal(r.opts.rounds, 1);
  assert_int_equal(r.opts.flush_l2, 1);
  assert_true(r.opts.seed == 1);
  assert_int_equal(r.opts.format, PGC_FORMAT_TABLE);
  assert_int_equal(r.opts.check, 1);
  assert_int_equal(r.opts.device, 0);
  assert_int_equal(r.opts.quiet, 0);
  /* The study's layout: op N, N, one GEMM, dense members. */
  assert_int_equal(r.opts.layout.op_count, 1);
  assert_int_equal(r.opts.layout.ops[0], 0);
  assert_int_equal(r.opts.layout.batch, 1);
  assert_true(r.opts.layout.stride_a == PGC_STRIDE_DENSE);
  assert_true(r.opts.layout.stride_b == PGC_STRIDE_DENSE);
  assert_true(r.opts.layout.stride_c == PGC_STRIDE_DENSE);
}

static void test_study_defaults(void **state) {
  (void)state;
  parse_result r = PARSE("study", "pipelining");
  EXPECT_OK(r);
  assert_int_equal(r.opts.command, PGC_CMD_STUDY);
  assert_int_equal(r.opts.study, PGC_STUDY_PIPELINING);
  assert_int_equal(r.opts.m, 2048);
  assert_int_equal(r.opts.n, 2048);
  assert_int_equal(r.opts.k, 2048);
  assert_int_equal(r.opts.flush_l2, 1);
  assert_int_equal(r.opts.check, 1);
  assert_int_equal(r.opts.format, PGC_FORMAT_TABLE);
}

static void test_single_warp_defaults(void **state) {
  (void)state;
  parse_result r = PARSE("study", "single-warp");
  EXPECT_OK(r);
  assert_int_equal(r.opts.command, PGC_CMD_STUDY);
  assert_int_equal(r.opts.study, PGC_STUDY_SINGLE_WARP);
  /* The blog post's shape: one warp's width, K = 65536. */
  assert_int_equal(r.opts.m, 32);
  assert_int_equal(r.opts.n, 32);
  assert_int_equal(r.opts.k, 65536);
  assert_int_equal(r.opts.warmup, 10);
  assert_int_equal(r.opts.iters, 20);
  assert_int_equal(r.opts.flush_l2, 1);
  assert_int_equal(r.opts.check, 1);
  assert_true(r.opts.seed == 1);
  assert_int_equal(r.opts.format, PGC_FORMAT_TABLE);
  assert_int_equal(r.opts.quiet, 0);
}

static void test_list_defaults(void **state) {
  (void)state;
  parse_result r = PARSE("list");
  EXPECT_OK(r);
  assert_int_equal(r.opts.command, PGC_CMD_LIST);
  assert_int_equal(r.opts.format, PGC_FORMAT_TABLE);
  assert_int_equal(r.opts.device, 0);
  assert_int_equal(r.opts.long_listing, 0);
}

/* ---- every option, both spellings ---------------------------------------- */

static void test_options_separate_and_joined(void **state) {
  (void)state;
  parse_result sep = PARSE("bench", "--variant", "cp_async,baseline", "--size",
                           "64", "--stages", "2,3", "--warmup", "3", "--iters",
                           "7", "--flush-l2", "off", "--seed",
                           "18446744073709551615", "--format", "csv", "--check",
                           "off", "--device", "2", "--quiet");
  parse_result joined =
      PARSE("bench", "--variant=cp_async,baseline", "--size=64",
            "--stages=2,3", "--warmup=3", "--iters=7", "--flush-l2=off",
            "--seed=18446744073709551615", "--format=csv", "--check=off",
            "--device=2", "--quiet");
  const parse_result *both[] = {&sep, &joined};
  for (int i = 0; i < 2; ++i) {
    const parse_result *r = both[i];
    EXPECT_OK(*r);
    assert_false(r->opts.all_variants);
    assert_int_equal(r->opts.variant_count, 2);
    assert_string_equal(r->opts.variants[0]->name, "cp_async");
    assert_string_equal(r->opts.variants[1]->name, "baseline");
    assert_int_equal(r->opts.m, 64);
    assert_int_equal(r->opts.n, 64);
    assert_int_equal(r->opts.k, 64);
    assert_int_equal(r->opts.stage_count, 2);
    assert_int_equal(r->opts.stages[0], 2);
    assert_int_equal(r->opts.stages[1], 3);
    assert_int_equal(r->opts.warmup, 3);
    assert_int_equal(r->opts.iters, 7);
    assert_int_equal(r->opts.flush_l2, 0);
    assert_true(r->opts.seed == UINT64_MAX);
    assert_int_equal(r->opts.format, PGC_FORMAT_CSV);
    assert_int_equal(r->opts.check, 0);
    assert_int_equal(r->opts.device, 2);
    assert_int_equal(r->opts.quiet, 1);
  }
}

static void test_dimensions_override_size(void **state) {
  (void)state;
  /* --m/--n/--k win over --size wherever they appear. */
  parse_result r = PARSE("bench", "--m", "5", "--size", "100", "--k=7");
  EXPECT_OK(r);
  assert_int_equal(r.opts.m, 5);
  assert_int_equal(r.opts.n, 100);
  assert_int_equal(r.opts.k, 7);
  r = PARSE("bench", "--m=1", "--n", "2", "--k", "3");
  EXPECT_OK(r);
  assert_int_equal(r.opts.m, 1);
  assert_int_equal(r.opts.n, 2);
  assert_int_equal(r.opts.k, 3);
  r = PARSE("bench", "--size", "0");
  EXPECT_OK(r);
  assert_int_equal(r.opts.m, 0);
  r = PARSE("bench", "--size", "2147483647");
  EXPECT_OK(r);
  assert_int_equal(r.opts.k, 2147483647);
}

/* --shapes FILE: a path kept for bench to read (parsing reads no file), and
 * no dimension beside it, whichever comes first. */
static void test_shapes_option(void **state) {
  (void)state;
  parse_result r = PARSE("bench");
  EXPECT_OK(r);
  assert_null(r.opts.shapes_path);
  r = PARSE("bench", "--shapes", "bench/shapes/set.txt", "--variant", "cublas");
  EXPECT_OK(r);
  assert_string_equal(r.opts.shapes_path, "bench/shapes/set.txt");
  r = PARSE("bench", "--shapes=/no/such/file", "--quiet");
  EXPECT_OK(r); /* told when bench reads it */
  assert_string_equal(r.opts.shapes_path, "/no/such/file");
  r = PARSE("bench", "--shapes", "a.txt", "--shapes", "b.txt");
  EXPECT_OK(r);
  assert_string_equal(r.opts.shapes_path, "b.txt");

  expect_usage_error(PARSE("bench", "--shapes", "set.txt", "--size", "64"),
                     "--shapes and --size exclude each other");
  expect_usage_error(PARSE("bench", "--size=64", "--shapes=set.txt"),
                     "--shapes and --size exclude each other");
  expect_usage_error(PARSE("bench", "--shapes", "set.txt", "--size", "4096"),
                     "--size"); /* even at the default */
  expect_usage_error(PARSE("bench", "--m", "64", "--shapes", "set.txt"),
                     "--shapes and --m exclude each other");
  expect_usage_error(PARSE("bench", "--shapes", "set.txt", "--n=64"),
                     "--shapes and --n exclude each other");
  expect_usage_error(PARSE("bench", "--k", "64", "--shapes", "set.txt"),
                     "--shapes and --k exclude each other");
  expect_usage_error(PARSE("bench", "--shapes="), "--shapes needs a path");
  expect_usage_error(PARSE("bench", "--shapes", ""), "--shapes needs a path");
  expect_usage_error(PARSE("profile", "--shapes", "set.txt"), "--shapes");
  expect_usage_error(PARSE("study", "pipelining", "--shapes", "set.txt"),
                     "--shapes");
  expect_usage_error(PARSE("list", "--shapes", "set.txt"), "--shapes");
}

/* --op LIST, --batch N, --stride-a/b/c S: bench's layouts, in the order
 * given without repeats; the ops by index 2 * (op_a T) + (op_b T). */
static void test_layout_options(void **state) {
  (void)state;
  parse_result r = PARSE("bench", "--op", "NT");
  EXPECT_OK(r);
  assert_int_equal(r.opts.layout.op_count, 1);
  assert_int_equal(r.opts.layout.ops[0], 1);
  r = PARSE("bench", "--op=TT,NN,TN,NN,TT", "--size", "64");
  EXPECT_OK(r);
  assert_int_equal(r.opts.layout.op_count, 3);
  assert_int_equal(r.opts.layout.ops[0], 3);
  assert_int_equal(r.opts.layout.ops[1], 0);
  assert_int_equal(r.opts.layout.ops[2], 2);
  r = PARSE("bench", "--op", "NN,NT,TN,TT");
  EXPECT_OK(r);
  assert_int_equal(r.opts.layout.op_count, 4);
  for (int i = 0; i < 4; ++i) assert_int_equal(r.opts.layout.ops[i], i);

  r = PARSE("bench", "--batch", "1024", "--size", "64");
  EXPECT_OK(r);
  assert_int_equal(r.opts.layout.batch, 1024);
  assert_true(r.opts.layout.stride_b == PGC_STRIDE_DENSE);
  r = PARSE("bench", "--m", "2048", "--n", "4096", "--k", "4096", "--op", "NN", "--batch=16",
            "--stride-b", "0");
  EXPECT_OK(r);
  assert_int_equal(r.opts.layout.batch, 16);
  assert_true(r.opts.layout.stride_b == 0);
  assert_true(r.opts.layout.stride_a == PGC_STRIDE_DENSE);
  r = PARSE("bench", "--batch", "3", "--size", "8", "--stride-a=100", "--stride-c", "64",
            "--stride-b", "9223372036854775807");
  EXPECT_OK(r);
  assert_true(r.opts.layout.stride_a == 100);
  assert_true(r.opts.layout.stride_c == 64); /* 8 x 8: the Cs just apart */
  assert_true(r.opts.layout.stride_b == 9223372036854775807LL);
  /* With --shapes, the defaults of the lines that name none: a stride is
   * judged line by line, where the batch is known. */
  r = PARSE("bench", "--shapes", "set.txt", "--stride-b", "0", "--op", "TN");
  EXPECT_OK(r);
  assert_true(r.opts.layout.stride_b == 0);

  expect_usage_error(PARSE("bench", "--op", "nt"), "--op expects NN, NT, TN or TT");
  expect_usage_error(PARSE("bench", "--op", "NX"), "got 'NX'");
  expect_usage_error(PARSE("bench", "--op", "NN,"), "got 'NN,'");
  expect_usage_error(PARSE("bench", "--op", "NN,,NT"), "got 'NN,,NT'");
  expect_usage_error(PARSE("bench", "--op", "NNT"), "got 'NNT'");
  expect_usage_error(PARSE("bench", "--op", ""), "--op expects");
  expect_usage_error(PARSE("bench", "--batch", "0"), "--batch must be at least 1, got 0");
  expect_usage_error(PARSE("bench", "--batch", "-2"), "--batch expects a non-negative integer");
  expect_usage_error(PARSE("bench", "--batch", "2147483648"), "--batch 2147483648 is too large");
  expect_usage_error(PARSE("bench", "--batch", "2", "--stride-a", "-1"),
                     "--stride-a expects a non-negative integer (floats), got '-1'");
  expect_usage_error(PARSE("bench", "--batch", "2", "--stride-c", "9223372036854775808"),
                     "--stride-c 9223372036854775808 is too large");
  /* A stride without a batch, and Cs that would overlap. */
  expect_usage_error(PARSE("bench", "--stride-b", "0"),
                     "--stride-b applies to a batch: give --batch above 1");
  expect_usage_error(PARSE("bench", "--batch", "1", "--stride-a", "5"), "--stride-a applies");
  expect_usage_error(PARSE("bench", "--batch", "2", "--size", "8", "--stride-c", "63"),
                     "--stride-c 63 is below M x N = 64: the batch's Cs would overlap");
  expect_usage_error(PARSE("bench", "--batch", "2", "--m", "3", "--n", "5", "--stride-c", "0"),
                     "--stride-c 0 is below M x N = 15");
  /* M or N 0: nothing to overlap. */
  EXPECT_OK(PARSE("bench", "--batch", "2", "--m", "0", "--stride-c", "0"));
  /* bench's alone. */
  expect_usage_error(PARSE("profile", "--op", "NT"), "--op is not an option of 'profile'");
  expect_usage_error(PARSE("trace", "--variant", "cp_async", "--out", "x.json", "--batch", "2"),
                     "--batch is not an option of 'trace'");
  expect_usage_error(PARSE("study", "pipelining", "--stride-a", "0"), "--stride-a");
}

static void test_study_and_list_options(void **state) {
  (void)state;
  parse_result r = PARSE("study", "--size=512", "pipelining", "--flush-l2",
                         "off", "--seed", "9", "--format", "json", "--check=off",
                         "--device", "1", "--quiet");
  EXPECT_OK(r);
  assert_int_equal(r.opts.study, PGC_STUDY_PIPELINING);
  assert_int_equal(r.opts.m, 512);
  assert_int_equal(r.opts.flush_l2, 0);
  assert_true(r.opts.seed == 9);
  assert_int_equal(r.opts.format, PGC_FORMAT_JSON);
  assert_int_equal(r.opts.check, 0);
  assert_int_equal(r.opts.device, 1);
  assert_int_equal(r.opts.quiet, 1);

  r = PARSE("list", "--format", "json", "--device=3");
  EXPECT_OK(r);
  assert_int_equal(r.opts.format, PGC_FORMAT_JSON);
  assert_int_equal(r.opts.device, 3);
  r = PARSE("list", "--format=table");
  EXPECT_OK(r);
  assert_int_equal(r.opts.format, PGC_FORMAT_TABLE);
  /* --long, a flag of list's alone. */
  r = PARSE("list", "--long", "--device", "2");
  EXPECT_OK(r);
  assert_int_equal(r.opts.long_listing, 1);
  assert_int_equal(r.opts.device, 2);
  expect_usage_error(PARSE("list", "--long=yes"), "--long takes no value");
  expect_usage_error(PARSE("bench", "--long"), "--long is not an option of 'bench'");
}

static void test_single_warp_options(void **state) {
  (void)state;
  parse_result sep = PARSE("study", "single-warp", "--k", "4096", "--warmup",
                           "2", "--iters", "3", "--format", "csv", "--seed",
                           "7", "--check", "off", "--flush-l2", "off",
                           "--device", "1", "--quiet");
  /* The experiment may come after its options. */
  parse_result joined =
      PARSE("study", "--k=4096", "--warmup=2", "--iters=3", "--format=csv",
            "--seed=7", "--check=off", "--flush-l2=off", "--device=1",
            "--quiet", "single-warp");
  const parse_result *both[] = {&sep, &joined};
  for (int i = 0; i < 2; ++i) {
    const parse_result *r = both[i];
    EXPECT_OK(*r);
    assert_int_equal(r->opts.study, PGC_STUDY_SINGLE_WARP);
    assert_int_equal(r->opts.m, 32);
    assert_int_equal(r->opts.n, 32);
    assert_int_equal(r->opts.k, 4096);
    assert_int_equal(r->opts.warmup, 2);
    assert_int_equal(r->opts.iters, 3);
    assert_int_equal(r->opts.format, PGC_FORMAT_CSV);
    assert_true(r->opts.seed == 7);
    assert_int_equal(r->opts.check, 0);
    assert_int_equal(r->opts.flush_l2, 0);
    assert_int_equal(r->opts.device, 1);
    assert_int_equal(r->opts.quiet, 1);
  }
  parse_result r = PARSE("study", "single-warp", "--k", "0");
  EXPECT_OK(r);
  assert_int_equal(r.opts.k, 0);
  r = PARSE("study", "single-warp", "--k", "16777216");
  EXPECT_OK(r);
  assert_int_equal(r.opts.k, 16777216);

  expect_usage_error(PARSE("study", "single-warp", "--k", "16777217"),
                     "too large");
  expect_usage_error(PARSE("study", "single-warp", "--k", "-1"), "--k");
  expect_usage_error(PARSE("study", "single-warp", "--iters", "0"),
                     "at least 1");
  expect_usage_error(PARSE("study", "single-warp", "--k"), "needs a value");
  /* Each experiment takes its own options, wherever the name comes. */
  expect_usage_error(PARSE("study", "single-warp", "--size", "64"),
                     "--size is not an option of 'study single-warp'");
  expect_usage_error(PARSE("study", "--size", "64", "single-warp"),
                     "--size is not an option of 'study single-warp'");
  expect_usage_error(PARSE("study", "pipelining", "--k", "64"),
                     "--k is not an option of 'study pipelining'");
  expect_usage_error(PARSE("study", "--warmup", "1", "pipelining"),
                     "--warmup is not an option of 'study pipelining'");
  expect_usage_error(PARSE("study", "single-warp", "--m", "8"), "--m");
  expect_usage_error(PARSE("study", "single-warp", "--stages", "2"),
                     "--stages");
  expect_usage_error(PARSE("study", "single-warp", "--variant", "cp_async"),
                     "--variant");
}

static void test_last_value_wins(void **state) {
  (void)state;
  parse_result r = PARSE("bench", "--format", "csv", "--format", "json",
                         "--variant", "baseline", "--variant", "all");
  EXPECT_OK(r);
  assert_int_equal(r.opts.format, PGC_FORMAT_JSON);
  assert_true(r.opts.all_variants);
}

/* ---- stage lists ---------------------------------------------------------- */

static void expect_stages(parse_result r, const int *want, int count) {
  EXPECT_OK(r);
  assert_int_equal(r.opts.stage_count, count);
  for (int i = 0; i < count; ++i) assert_int_equal(r.opts.stages[i], want[i]);
}

/* The largest stage count any variant allows. */
static int largest_stage_count(void) {
  int most = 0;
  for (int i = 0; i < pg_variant_count(); ++i)
    if (pg_variant_at(i)->max_stages > most) most = pg_variant_at(i)->max_stages;
  return most;
}

static void test_stage_lists(void **state) {
  (void)state;
  expect_stages(PARSE("bench", "--stages", "2,3,4"), (const int[]){2, 3, 4}, 3);
  expect_stages(PARSE("bench", "--stages", "1-8"),
                (const int[]){1, 2, 3, 4, 5, 6, 7, 8}, 8);
  expect_stages(PARSE("bench", "--stages=1-3,6"), (const int[]){1, 2, 3, 6}, 4);
  expect_stages(PARSE("bench", "--stages", "4"), (const int[]){4}, 1);
  expect_stages(PARSE("bench", "--stages", "5-5"), (const int[]){5}, 1);
  /* Repeats collapse, keeping the first position. */
  expect_stages(PARSE("bench", "--stages", "3,1-4,3"), (const int[]){3, 1, 2, 4},
                4);
  /* Up to the largest count any variant allows. */
  const int most = largest_stage_count();
  assert_true(most >= 2 && most <= PGC_MAX_STAGE_COUNTS);
  char range[32];
  snprintf(range, sizeof range, "1-%d", most);
  parse_result r = PARSE("bench", "--stages", range);
  EXPECT_OK(r);
  assert_int_equal(r.opts.stage_count, most);
}

static void test_stage_list_errors(void **state) {
  (void)state;
  expect_usage_error(PARSE("bench", "--stages="), "--stages");
  expect_usage_error(PARSE("bench", "--stages", "2,,3"), "empty entry");
  expect_usage_error(PARSE("bench", "--stages", "3,"), "empty entry");
  expect_usage_error(PARSE("bench", "--stages", ",3"), "empty entry");
  expect_usage_error(PARSE("bench", "--stages", "4-2"), "reversed");
  expect_usage_error(PARSE("bench", "--stages", "0"), "start at 1");
  expect_usage_error(PARSE("bench", "--stages", "0-3"), "start at 1");
  expect_usage_error(PARSE("bench", "--stages", "two"), "'two'");
  expect_usage_error(PARSE("bench", "--stages", "2-"), "'2-'");
  expect_usage_error(PARSE("bench", "--stages", "1-2-3"), "'1-2-3'");
  expect_usage_error(PARSE("bench", "--stages", "+2"), "'+2'");
  expect_usage_error(PARSE("bench", "--stages", "2 3"), "'2 3'");
  expect_usage_error(PARSE("bench", "--stages", "2x"), "'2x' is not a stage count");
  expect_usage_error(PARSE("bench", "--stages", "99999999999x"), "is not a stage count");
}

/* A count above what any variant allows is too large, whether it would fit
 * an int or not, alone or in a range; it is said which and up to what. */
static void test_stage_counts_too_large(void **state) {
  (void)state;
  const int most = largest_stage_count();
  char at_most[64], above[32], range[64], message[128];
  snprintf(at_most, sizeof at_most, "is too large (at most %d)", most);
  snprintf(above, sizeof above, "%d", most + 1);

  expect_usage_error(PARSE("bench", "--stages", "99999999999"), at_most);
  snprintf(message, sizeof message, "--stages: '99999999999' %s", at_most);
  expect_usage_error(PARSE("bench", "--stages", "99999999999"), message);
  expect_usage_error(PARSE("bench", "--stages", "99999999999999999999999999"), at_most);
  expect_usage_error(PARSE("bench", "--stages", "2147483648"), at_most);
  expect_usage_error(PARSE("bench", "--stages", "2147483647"), at_most);
  snprintf(message, sizeof message, "--stages: '%s' %s", above, at_most);
  expect_usage_error(PARSE("bench", "--stages", above), message);
  expect_usage_error(PARSE("bench", "--variant", "all", "--stages", above), message);
  snprintf(range, sizeof range, "1-%s", above);
  expect_usage_error(PARSE("bench", "--stages", range), message);
  expect_usage_error(PARSE("bench", "--stages", "2-99999999999"),
                     "--stages: '99999999999' is too large");
  expect_usage_error(PARSE("bench", "--stages", "1-2000000000"), at_most);
  expect_usage_error(PARSE("profile", "--stages", "99999999999"), at_most);
  expect_usage_error(PARSE("trace", "--variant", "cp_async", "--out", "x", "--stages",
                           "99999999999"),
                     at_most);
  /* At the limit it parses. */
  snprintf(range, sizeof range, "%d", most);
  EXPECT_OK(PARSE("bench", "--stages", range));
}

/* Every other integer option: a number out of range is too large, whatever
 * its length; what is no number says so. */
static void test_integer_options_too_large(void **state) {
  (void)state;
  static const struct {
    const char *command, *option;
  } options[] = {
      {"bench", "--size"},   {"bench", "--m"},      {"bench", "--n"},
      {"bench", "--k"},      {"bench", "--warmup"}, {"bench", "--iters"},
      {"bench", "--rounds"}, {"bench", "--device"}, {"bench", "--seed"},
      {"trace", "--blocks"}, {"study", "--k"},      {"list", "--device"},
  };
  static const char *const huge[] = {"99999999999", "99999999999999999999999999",
                                     "18446744073709551616"};
  for (size_t i = 0; i < sizeof options / sizeof options[0]; ++i) {
    const char *experiment = strcmp(options[i].command, "study") == 0 ? "single-warp" : NULL;
    /* 99999999999 is a seed like any other. */
    const size_t first = strcmp(options[i].option, "--seed") == 0 ? 1 : 0;
    for (size_t h = first; h < sizeof huge / sizeof huge[0]; ++h) {
      parse_result r = experiment ? PARSE(options[i].command, experiment, options[i].option, huge[h])
                                  : PARSE(options[i].command, options[i].option, huge[h]);
      if (r.rc != PGC_EXIT_USAGE || !strstr(r.err, "too large"))
        print_error("%s %s %s: '%s'\n", options[i].command, options[i].option, huge[h], r.err);
      expect_usage_error(r, "too large");
      expect_usage_error(r, options[i].option);
      assert_null(strstr(r.err, "expects"));
    }
    parse_result r = experiment ? PARSE(options[i].command, experiment, options[i].option, "99999999999x")
                                : PARSE(options[i].command, options[i].option, "99999999999x");
    expect_usage_error(r, "expects a non-negative integer, got '99999999999x'");
  }
}

/* ---- variants ------------------------------------------------------------- */

static void test_variant_names(void **state) {
  (void)state;
  parse_result r = PARSE("bench", "--variant", "all");
  EXPECT_OK(r);
  assert_true(r.opts.all_variants);

  r = PARSE("bench", "--variant", "cp_async,cp_async,baseline");
  EXPECT_OK(r);
  assert_int_equal(r.opts.variant_count, 2); /* repeats collapse */

  /* The error names the culprit and lists every registry name. */
  r = PARSE("bench", "--variant", "cp_async,warp_speed");
  expect_usage_error(r, "unknown variant 'warp_speed'");
  for (int i = 0; i < pg_variant_count(); ++i)
    assert_non_null(strstr(r.err, pg_variant_at(i)->name));

  expect_usage_error(PARSE("bench", "--variant", "CP_ASYNC"), "'CP_ASYNC'");
  expect_usage_error(PARSE("bench", "--variant", ""), "--variant");
  expect_usage_error(PARSE("bench", "--variant", "baseline,,cp_async"),
                     "empty name");
  expect_usage_error(PARSE("bench", "--variant", "all,cp_async"), "'all'");
  char long_name[200];
  memset(long_name, 'x', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  expect_usage_error(PARSE("bench", "--variant", long_name), "unknown variant");
}

/* A variant named explicitly must allow every requested stage count; with
 * --variant all, counts outside a variant's range are skipped for it. */
static void test_explicit_stage_range(void **state) {
  (void)state;
  /* A ranged variant that allows less than another does, so that a count
   * above its range is still a stage count. */
  const pg_variant_info *ranged = NULL, *fixed = NULL;
  for (int i = 0; i < pg_variant_count(); ++i) {
    const pg_variant_info *v = pg_variant_at(i);
    if (!ranged && v->min_stages < v->max_stages && v->max_stages < largest_stage_count())
      ranged = v;
    if (!fixed && v->min_stages == v->max_stages) fixed = v;
  }
  assert_non_null(ranged);
  assert_non_null(fixed);
  char too_many[32];
  snprintf(too_many, sizeof too_many, "%d", ranged->max_stages + 1);

  expect_usage_error(PARSE("bench", "--variant", ranged->name, "--stages",
                           too_many),
                     ranged->name);
  /* Order of the options does not matter. */
  expect_usage_error(PARSE("bench", "--stages", too_many, "--variant",
                           ranged->name),
                     too_many);
  EXPECT_OK(PARSE("bench", "--variant", "all", "--stages", too_many));
  EXPECT_OK(PARSE("bench", "--stages", too_many));
  /* A fixed-stage variant runs at its count whatever --stages says. */
  EXPECT_OK(PARSE("bench", "--variant", fixed->name, "--stages", too_many));
}

static int runs_of(const pgc_run_spec *runs, int count, const char *name) {
  int found = 0;
  for (int i = 0; i < count; ++i)
    if (strcmp(runs[i].variant->name, name) == 0) ++found;
  return found;
}

static void test_plan(void **state) {
  (void)state;
  pgc_run_spec runs[PGC_MAX_VARIANTS * PGC_MAX_STAGE_COUNTS];

  /* No --stages: every variant once, at its default. */
  parse_result r = PARSE("bench");
  EXPECT_OK(r);
  int count = pgc_expand_runs(&r.opts, runs, (int)(sizeof runs / sizeof runs[0]));
  assert_int_equal(count, pg_variant_count());
  for (int i = 0; i < count; ++i) {
    assert_ptr_equal(runs[i].variant, pg_variant_at(i));
    assert_int_equal(runs[i].stages, runs[i].variant->default_stages);
  }

  /* --stages 1-N (the largest count any variant allows) with all: ranged
   * variants once per allowed count, fixed ones once. */
  char every_count[32];
  snprintf(every_count, sizeof every_count, "1-%d", largest_stage_count());
  r = PARSE("bench", "--stages", every_count);
  EXPECT_OK(r);
  count = pgc_expand_runs(&r.opts, runs, (int)(sizeof runs / sizeof runs[0]));
  int expected = 0;
  for (int i = 0; i < pg_variant_count(); ++i) {
    const pg_variant_info *v = pg_variant_at(i);
    int lo = v->min_stages < 1 ? 1 : v->min_stages;
    int hi = v->max_stages > PGC_MAX_STAGE_COUNTS ? PGC_MAX_STAGE_COUNTS
                                                  : v->max_stages;
    int per = v->min_stages == v->max_stages ? 1 : (hi >= lo ? hi - lo + 1 : 0);
    expected += per;
    assert_int_equal(runs_of(runs, count, v->name), per);
  }
  assert_int_equal(count, expected);

  /* The capacity bounds what is written, not the count returned. */
  assert_int_equal(pgc_expand_runs(&r.opts, runs, 1), expected);
  assert_int_equal(pgc_expand_runs(&r.opts, NULL, 0), expected);

  /* Explicit variants keep the order given. */
  r = PARSE("bench", "--variant", "cp_async,baseline", "--stages", "3,2");
  EXPECT_OK(r);
  count = pgc_expand_runs(&r.opts, runs, (int)(sizeof runs / sizeof runs[0]));
  assert_int_equal(count, 3);
  assert_string_equal(runs[0].variant->name, "cp_async");
  assert_int_equal(runs[0].stages, 3);
  assert_int_equal(runs[1].stages, 2);
  assert_string_equal(runs[2].variant->name, "baseline");
  assert_int_equal(runs[2].stages, runs[2].variant->min_stages);
}

/* ---- bad values ----------------------------------------------------------- */

static void test_bad_sizes(void **state) {
  (void)state;
  expect_usage_error(PARSE("bench", "--size", "12x"), "'12x'");
  expect_usage_error(PARSE("bench", "--size", "-5"), "'-5'");
  expect_usage_error(PARSE("bench", "--size", "+5"), "'+5'");
  expect_usage_error(PARSE("bench", "--size", " 5"), "' 5'");
  expect_usage_error(PARSE("bench", "--size", "0x10"), "'0x10'");
  expect_usage_error(PARSE("bench", "--size", "1e3"), "'1e3'");
  expect_usage_error(PARSE("bench", "--size="), "--size");
  expect_usage_error(PARSE("bench", "--size", "2147483648"), "too large");
  expect_usage_error(PARSE("bench", "--size", "99999999999999999999999"),
                     "too large");
  expect_usage_error(PARSE("bench", "--m", "-1"), "--m");
  expect_usage_error(PARSE("bench", "--n", "x"), "--n");
  expect_usage_error(PARSE("bench", "--k=1.5"), "--k");
  expect_usage_error(PARSE("study", "pipelining", "--size", "big"), "'big'");
}

static void test_bad_values(void **state) {
  (void)state;
  expect_usage_error(PARSE("bench", "--format", "xml"), "'xml'");
  expect_usage_error(PARSE("list", "--format=CSV"), "'CSV'");
  expect_usage_error(PARSE("bench", "--flush-l2", "yes"), "'yes'");
  expect_usage_error(PARSE("bench", "--check", "1"), "'1'");
  expect_usage_error(PARSE("bench", "--iters", "0"), "at least 1");
  expect_usage_error(PARSE("bench", "--iters", "1000001"), "too large");
  expect_usage_error(PARSE("bench", "--rounds", "0"), "at least 1");
  expect_usage_error(PARSE("bench", "--rounds", "101"), "too large");
  expect_usage_error(PARSE("study", "pipelining", "--rounds", "2"), "--rounds");
  {
    parse_result r = PARSE("bench", "--rounds=3");
    EXPECT_OK(r);
    assert_int_equal(r.opts.rounds, 3);
  }
  expect_usage_error(PARSE("bench", "--inputs", "normal"),
                     "--inputs expects uniform, wide or tiny, got 'normal'");
  expect_usage_error(PARSE("profile", "--inputs", "wide"), "--inputs");
  {
    parse_result r = PARSE("bench", "--inputs", "tiny");
    EXPECT_OK(r);
    assert_int_equal(r.opts.inputs, 2);
    assert_int_equal(PARSE("bench").opts.inputs, 0);
    assert_int_equal(PARSE("bench", "--inputs=wide").opts.inputs, 1);
  }
  EXPECT_OK(PARSE("bench", "--warmup", "0"));
  expect_usage_error(PARSE("bench", "--warmup", "-1"), "--warmup");
  expect_usage_error(PARSE("bench", "--seed", "18446744073709551616"),
                     "too large");
  expect_usage_error(PARSE("bench", "--seed", "-1"), "--seed");
  expect_usage_error(PARSE("bench", "--device", "-1"), "--device");
  expect_usage_error(PARSE("bench", "--quiet=yes"), "takes no value");
}

static void test_missing_values(void **state) {
  (void)state;
  static const char *const valued[] = {"--variant", "--size",  "--m",
                                       "--n",       "--k",     "--stages",
                                       "--warmup",  "--iters", "--flush-l2",
                                       "--seed",    "--format", "--check",
                                       "--device",  "--shapes"};
  for (size_t i = 0; i < sizeof valued / sizeof valued[0]; ++i) {
    expect_usage_error(PARSE("bench", valued[i]), "needs a value");
    /* The next word is another option, not this one's value. */
    expect_usage_error(PARSE("bench", valued[i], "--quiet"), "needs a value");
  }
  expect_usage_error(PARSE("list", "--format"), "needs a value");
}

static void test_unknown_options(void **state) {
  (void)state;
  expect_usage_error(PARSE("bench", "--frobnicate"), "unknown option '--frobnicate'");
  expect_usage_error(PARSE("bench", "--frobnicate=3"), "'--frobnicate'");
  expect_usage_error(PARSE("bench", "-x"), "unknown option '-x'");
  expect_usage_error(PARSE("bench", "--SIZE", "4"), "'--SIZE'");
  expect_usage_error(PARSE("bench", "extra"), "unexpected argument 'extra'");
  /* Options that exist, on a command that does not take them. */
  expect_usage_error(PARSE("study", "pipelining", "--iters", "3"), "--iters");
  expect_usage_error(PARSE("study", "pipelining", "--m", "3"), "--m");
  expect_usage_error(PARSE("study", "pipelining", "--stages", "2"), "--stages");
  expect_usage_error(PARSE("list", "--size", "3"), "--size");
  expect_usage_error(PARSE("list", "--quiet"), "--quiet");
  expect_usage_error(PARSE("bench", "--version"), "--version");
  expect_usage_error(PARSE("--size", "4"), "--size");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bench_defaults),
      cmocka_unit_test(test_study_defaults),
      cmocka_unit_test(test_single_warp_defaults),
      cmocka_unit_test(test_list_defaults),
      cmocka_unit_test(test_options_separate_and_joined),
      cmocka_unit_test(test_dimensions_override_size),
      cmocka_unit_test(test_shapes_option),
      cmocka_unit_test(test_layout_options),
      cmocka_unit_test(test_study_and_list_options),
      cmocka_unit_test(test_single_warp_options),
      cmocka_unit_test(test_last_value_wins),
      cmocka_unit_test(test_stage_lists),
      cmocka_unit_test(test_stage_list_errors),
      cmocka_unit_test(test_stage_counts_too_large),
      cmocka_unit_test(test_integer_options_too_large),
      cmocka_unit_test(test_variant_names),
      cmocka_unit_test(test_explicit_stage_range),
      cmocka_unit_test(test_plan),
      cmocka_unit_test(test_bad_sizes),
      cmocka_unit_test(test_bad_values),
      cmocka_unit_test(test_missing_values),
      cmocka_unit_test(test_unknown_options),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
