/* Argument parsing of the pipegemm tool (src/cli/args.c): defaults, every
 * option in both spellings, stage lists, variant names, bad values, and the
 * usage texts against the option table. No GPU needed: parsing reads only
 * argv and the variant registry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>

#include "cli/args.h"

/* Room for any argv a test builds. */
#define MAX_ARGS 32

typedef struct {
  pgc_options opts;
  char err[PGC_ERROR_SIZE];
  int rc;
} parse_result;

/* Parses a NULL-terminated list of words after "pipegemm". */
static parse_result parse_words(const char *first, ...) {
  static char *argv[MAX_ARGS];
  int argc = 0;
  argv[argc++] = (char *)"pipegemm";
  va_list ap;
  va_start(ap, first);
  for (const char *word = first; word && argc < MAX_ARGS - 1;
       word = va_arg(ap, const char *))
    argv[argc++] = (char *)word;
  va_end(ap);
  argv[argc] = NULL;
  parse_result result;
  memset(&result, 0, sizeof result);
  result.rc = pgc_parse_args(argc, argv, &result.opts, result.err,
                             sizeof result.err);
  return result;
}
#define PARSE(...) parse_words(__VA_ARGS__, (const char *)NULL)

/* The parse succeeds. */
#define EXPECT_OK(r)                                                           \
  do {                                                                         \
    if ((r).rc != PGC_EXIT_OK) print_error("unexpected error: %s\n", (r).err); \
    assert_int_equal((r).rc, PGC_EXIT_OK);                                     \
  } while (0)

/* The parse fails as a usage error whose message contains `part`. */
static void expect_usage_error(parse_result r, const char *part) {
  if (r.rc != PGC_EXIT_USAGE) print_error("expected an error with '%s'\n", part);
  assert_int_equal(r.rc, PGC_EXIT_USAGE);
  if (!strstr(r.err, part))
    print_error("message '%s' lacks '%s'\n", r.err, part);
  assert_non_null(strstr(r.err, part));
  assert_null(strchr(r.err, '\n')); /* one line */
}

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

/* ---- argument text in messages -------------------------------------------- */

/* Whether the message is one line of well-formed UTF-8 without a control
 * character (C0, DEL or C1): what a terminal shows as it is. */
static int is_printable_utf8(const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p;) {
    unsigned c = *p, need = 0, code = 0, least = 0;
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) return 0;
      ++p;
      continue;
    }
    if (c >= 0xc2 && c <= 0xdf) need = 1, code = c & 0x1f, least = 0x80;
    else if (c >= 0xe0 && c <= 0xef) need = 2, code = c & 0x0f, least = 0x800;
    else if (c >= 0xf0 && c <= 0xf4) need = 3, code = c & 0x07, least = 0x10000;
    else return 0;
    ++p;
    for (unsigned i = 0; i < need; ++i, ++p) {
      if ((*p & 0xc0) != 0x80) return 0;
      code = code << 6 | (*p & 0x3f);
    }
    if (code < least || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff) ||
        (code >= 0x80 && code < 0xa0))
      return 0;
  }
  return 1;
}

/* A usage error that repeats argument text: `part` in it, escaped, and the
 * whole message printable. */
static void expect_escaped(parse_result r, const char *part) {
  expect_usage_error(r, part);
  if (!is_printable_utf8(r.err)) print_error("message '%s' holds raw bytes\n", r.err);
  assert_true(is_printable_utf8(r.err));
}

/* Control bytes and what is not UTF-8 come out as escapes wherever a
 * message repeats what was typed; well-formed UTF-8 as it is. */
static void test_argument_text_escaped(void **state) {
  (void)state;
  expect_escaped(PARSE("bench", "--variant", "a\nb\x1b[31mred\xff"),
                 "unknown variant 'a\\nb\\x1b[31mred\\xff'");
  expect_escaped(PARSE("bench", "--variant", "cp_async,\r"), "unknown variant '\\r'");
  expect_escaped(PARSE("bench", "--variant", "back\\slash"), "'back\\\\slash'");
  expect_escaped(PARSE("bench", "--variant", "caf\xc3\xa9"), "unknown variant 'caf\xc3\xa9'");
  /* C1 controls, overlong forms, surrogates, cut and stray sequences. */
  expect_escaped(PARSE("bench", "--variant", "\xc2\x9b" "2J"), "'\\xc2\\x9b2J'");
  expect_escaped(PARSE("bench", "--variant", "\xc0\xaf"), "'\\xc0\\xaf'");
  expect_escaped(PARSE("bench", "--variant", "\xed\xa0\x80"), "'\\xed\\xa0\\x80'");
  expect_escaped(PARSE("bench", "--variant", "\xe2\x82"), "'\\xe2\\x82'");
  expect_escaped(PARSE("bench", "--variant", "\x80x\xf4\x90\x80\x80"),
                 "'\\x80x\\xf4\\x90\\x80\\x80'");
  expect_escaped(PARSE("bench", "--variant", "baseline,,\x07"),
                 "empty name in 'baseline,,\\x07'");
  expect_escaped(PARSE("bench", "--size", "1\n2"),
                 "--size expects a non-negative integer, got '1\\n2'");
  expect_escaped(PARSE("bench", "--iters", "\t3"), "got '\\t3'");
  expect_escaped(PARSE("bench", "--seed", "\x80"), "--seed expects a non-negative integer, got '\\x80'");
  expect_escaped(PARSE("bench", "--format", "csv\x7f"), "got 'csv\\x7f'");
  expect_escaped(PARSE("bench", "--flush-l2", "o\x1bn"), "got 'o\\x1bn'");
  expect_escaped(PARSE("bench", "--inputs", "\xfe"), "got '\\xfe'");
  expect_escaped(PARSE("bench", "--stages", "2\n3"), "--stages: '2\\n3' is not");
  expect_escaped(PARSE("bench", "--stages", "2,,\x1b"), "empty entry in '2,,\\x1b'");
  expect_escaped(PARSE("bench", "--frob\x1b"), "unknown option '--frob\\x1b'");
  expect_escaped(PARSE("bench", "--frob\n=3"), "unknown option '--frob\\n'");
  expect_escaped(PARSE("bench", "-\x1b"), "unknown option '-\\x1b'");
  expect_escaped(PARSE("bench", "extra\n"), "unexpected argument 'extra\\n'");
  expect_escaped(PARSE("--version", "x\ny"), "unexpected argument 'x\\ny'");
  expect_escaped(PARSE("study", "pipe\x7flining"), "unknown experiment 'pipe\\x7flining'");
  expect_escaped(PARSE("bench\xff"), "unknown command 'bench\\xff'");
  expect_escaped(PARSE("inspect", "--swap", "a\nb"), "got 'a\\nb'");
  expect_escaped(PARSE("inspect", "--swap", "cp_async=\x1b"), "unknown variant '\\x1b'");
  expect_escaped(PARSE("inspect", "--swap", "\x1b=cp_async"), "unknown variant '\\x1b'");

  /* A long argument is repeated in part, whole escapes only, and the rest
   * of the message still fits. */
  static char escapes[4000];
  memset(escapes, '\x1b', sizeof escapes - 1);
  parse_result r = PARSE("bench", "--variant", escapes);
  expect_escaped(r, "unknown variant '\\x1b\\x1b");
  assert_non_null(strstr(r.err, "\\x1b...' (valid: "));
  assert_non_null(strstr(r.err, "; or all)"));
}

/* The escaping itself: as snprintf, but a text that does not fit is cut
 * after a whole character or escape and ends in "...". */
static void test_escape_text(void **state) {
  (void)state;
  char buf[16];
  pgc_escape_text(buf, sizeof buf, "plain", 5);
  assert_string_equal(buf, "plain");
  pgc_escape_text(buf, sizeof buf, "a\0b", 3);
  assert_string_equal(buf, "a\\x00b");
  pgc_escape_text(buf, sizeof buf, "\x1b\x1b\x1b\x1b", 4);
  assert_string_equal(buf, "\\x1b\\x1b\\x1b..."); /* 16 bytes would not hold all four */
  pgc_escape_text(buf, sizeof buf, "0123456789abcdef", 16);
  assert_string_equal(buf, "0123456789ab...");
  pgc_escape_text(buf, sizeof buf, "0123456789abcde", 15);
  assert_string_equal(buf, "0123456789abcde");
  pgc_escape_text(buf, sizeof buf, "0123456789ab\xc3\xa9\xc3\xa9", 16);
  assert_string_equal(buf, "0123456789ab..."); /* no half of an é */
  pgc_escape_text(buf, 3, "abcdef", 6);
  assert_string_equal(buf, "ab");
  pgc_escape_text(buf, 1, "abc", 3);
  assert_string_equal(buf, "");
}

/* ---- commands, help, version ---------------------------------------------- */

static void test_study_experiment(void **state) {
  (void)state;
  expect_usage_error(PARSE("study"), "pipelining");
  expect_usage_error(PARSE("study", "--size", "64"), "needs an experiment");
  expect_usage_error(PARSE("study", "pipelinning"), "unknown experiment 'pipelinning'");
  expect_usage_error(PARSE("study", "pipelining", "again"), "'again'");
  expect_usage_error(PARSE("study", "single-warp", "pipelining"),
                     "'pipelining'");
  expect_usage_error(PARSE("study", "single_warp"),
                     "unknown experiment 'single_warp' (known: pipelining, "
                     "single-warp)");
  assert_string_equal(pgc_study_name(PGC_STUDY_PIPELINING), "pipelining");
  assert_string_equal(pgc_study_name(PGC_STUDY_SINGLE_WARP), "single-warp");
  assert_null(pgc_study_name(PGC_STUDY_NONE));
  parse_result r = PARSE("study", "--quiet", "pipelining");
  EXPECT_OK(r);
  assert_int_equal(r.opts.study, PGC_STUDY_PIPELINING);
}

static void test_commands(void **state) {
  (void)state;
  expect_usage_error(PARSE(NULL), "no command");
  expect_usage_error(PARSE("benchmark"), "unknown command 'benchmark'");
  expect_usage_error(PARSE(""), "unknown command");
}

/* `profile` takes bench's selection and shape options, --ncu and --raw;
 * `study pipelining` takes --profile, and --ncu and --raw only with it. */
static void test_profile_options(void **state) {
  (void)state;
  parse_result r = PARSE("profile");
  EXPECT_OK(r);
  assert_int_equal(r.opts.command, PGC_CMD_PROFILE);
  assert_int_equal(r.opts.m, PGC_PROFILE_DEFAULT_SIZE);
  assert_int_equal(r.opts.k, PGC_PROFILE_DEFAULT_SIZE);
  assert_true(r.opts.all_variants);
  assert_null(r.opts.ncu_path);
  assert_null(r.opts.raw_path);

  r = PARSE("profile", "--variant", "baseline,cp_async", "--stages", "2,3",
            "--m", "64", "--size", "128", "--ncu=/opt/ncu", "--raw", "out.txt",
            "--format", "csv", "--device", "1", "--quiet");
  EXPECT_OK(r);
  assert_int_equal(r.opts.variant_count, 2);
  assert_int_equal(r.opts.stage_count, 2);
  assert_int_equal(r.opts.m, 64);
  assert_int_equal(r.opts.n, 128);
  assert_string_equal(r.opts.ncu_path, "/opt/ncu");
  assert_string_equal(r.opts.raw_path, "out.txt");
  assert_int_equal(r.opts.format, PGC_FORMAT_CSV);
  assert_int_equal(r.opts.device, 1);
  assert_true(r.opts.quiet);

  expect_usage_error(PARSE("profile", "--ncu", ""), "--ncu needs a path");
  expect_usage_error(PARSE("profile", "--raw="), "--raw needs a path");
  expect_usage_error(PARSE("profile", "--profile"), "--profile");
  expect_usage_error(PARSE("profile", "--iters", "3"), "--iters");
  expect_usage_error(PARSE("profile", "--variant", "mma_cp_async", "--stages", "7"),
                     "mma_cp_async allows stage counts 1-6");
  expect_usage_error(PARSE("profile", "--variant", "cp_async", "--stages", "9"),
                     "--stages: '9' is too large (at most 8)");
  expect_usage_error(PARSE("bench", "--ncu", "/opt/ncu"), "--ncu");

  r = PARSE("study", "pipelining", "--profile", "--ncu", "/opt/ncu", "--raw",
            "raw.txt");
  EXPECT_OK(r);
  assert_true(r.opts.profile);
  assert_string_equal(r.opts.ncu_path, "/opt/ncu");
  assert_int_equal(r.opts.m, PGC_STUDY_DEFAULT_SIZE);
  r = PARSE("study", "pipelining");
  EXPECT_OK(r);
  assert_false(r.opts.profile);
  expect_usage_error(PARSE("study", "pipelining", "--ncu", "/opt/ncu"),
                     "--ncu needs --profile");
  expect_usage_error(PARSE("study", "pipelining", "--raw", "x"),
                     "--raw needs --profile");
  expect_usage_error(PARSE("study", "single-warp", "--profile"), "--profile");
}

/* `inspect`: --binary, the --check flag (bench's --check takes on|off),
 * --swap CLAIM=KERNELS, --variant and --format. */
static void test_inspect_options(void **state) {
  (void)state;
  parse_result r = PARSE("inspect");
  EXPECT_OK(r);
  assert_int_equal(r.opts.command, PGC_CMD_INSPECT);
  assert_true(r.opts.all_variants);
  assert_null(r.opts.inspect_binary);
  assert_false(r.opts.inspect_check);
  assert_null(r.opts.swap_claim);
  assert_null(r.opts.swap_kernels);
  assert_int_equal(r.opts.format, PGC_FORMAT_TABLE);

  r = PARSE("inspect", "--binary", "build/libpipegemm.a", "--check", "--swap",
            "cp_async=baseline", "--variant", "cp_async", "--format=json");
  EXPECT_OK(r);
  assert_string_equal(r.opts.inspect_binary, "build/libpipegemm.a");
  assert_true(r.opts.inspect_check);
  assert_string_equal(r.opts.swap_claim->name, "cp_async");
  assert_string_equal(r.opts.swap_kernels->name, "baseline");
  assert_int_equal(r.opts.variant_count, 1);
  assert_int_equal(r.opts.format, PGC_FORMAT_JSON);
  r = PARSE("inspect", "--binary=x.o");
  EXPECT_OK(r);
  assert_string_equal(r.opts.inspect_binary, "x.o");

  expect_usage_error(PARSE("inspect", "--check=on"), "--check takes no value");
  expect_usage_error(PARSE("bench", "--check"), "--check needs a value");
  EXPECT_OK(PARSE("bench", "--check", "off"));
  expect_usage_error(PARSE("inspect", "--binary", ""), "--binary needs a path");
  expect_usage_error(PARSE("inspect", "--swap", "cp_async"), "--swap takes CLAIM=KERNELS");
  expect_usage_error(PARSE("inspect", "--swap", "=baseline"), "--swap takes");
  expect_usage_error(PARSE("inspect", "--swap", "cp_async="), "--swap takes");
  expect_usage_error(PARSE("inspect", "--swap", "cp_asinc=baseline"),
                     "unknown variant 'cp_asinc'");
  expect_usage_error(PARSE("inspect", "--swap", "cp_async=basline"),
                     "unknown variant 'basline'");
  /* --swap takes two names: 'all' is not offered. */
  parse_result swap_all = PARSE("inspect", "--swap", "all=baseline");
  expect_usage_error(swap_all, "unknown variant 'all' (valid: cublas, ");
  assert_null(strstr(swap_all.err, "or all"));
  /* --variant of the commands that take all offers it. */
  expect_usage_error(PARSE("inspect", "--variant", "x"), "; or all)");
  expect_usage_error(PARSE("profile", "--variant", "x"), "; or all)");
  expect_usage_error(PARSE("inspect", "--size", "64"), "--size is not an option of 'inspect'");
  expect_usage_error(PARSE("bench", "--binary", "x"), "--binary is not an option of 'bench'");
  expect_usage_error(PARSE("inspect", "extra"), "unexpected argument 'extra'");
}

/* `trace`: one variant with a traced kernel, one stage count, --out, and
 * its own defaults for --blocks, --warmup and --iters. */
static void test_trace_options(void **state) {
  (void)state;
  parse_result r = PARSE("trace", "--variant", "cp_async", "--out", "t.json");
  EXPECT_OK(r);
  assert_int_equal(r.opts.command, PGC_CMD_TRACE);
  assert_int_equal(r.opts.variant_count, 1);
  assert_string_equal(r.opts.variants[0]->name, "cp_async");
  assert_int_equal(r.opts.stage_count, 0);
  assert_string_equal(r.opts.out_path, "t.json");
  assert_int_equal(r.opts.trace_blocks, PGC_TRACE_DEFAULT_BLOCKS);
  assert_int_equal(r.opts.warmup, PGC_TRACE_DEFAULT_WARMUP);
  assert_int_equal(r.opts.iters, PGC_TRACE_DEFAULT_ITERS);
  assert_int_equal(r.opts.m, PGC_BENCH_DEFAULT_SIZE);

  r = PARSE("trace", "--variant=tma_ws", "--stages", "4", "--m", "512", "--size", "1024",
            "--blocks=16", "--out=x.json", "--warmup", "0", "--iters", "2", "--flush-l2",
            "off", "--seed", "7", "--format", "csv", "--device", "1", "--quiet");
  EXPECT_OK(r);
  assert_int_equal(r.opts.stages[0], 4);
  assert_int_equal(r.opts.m, 512);
  assert_int_equal(r.opts.n, 1024);
  assert_int_equal(r.opts.trace_blocks, 16);
  assert_int_equal(r.opts.warmup, 0);
  assert_int_equal(r.opts.iters, 2);
  assert_false(r.opts.flush_l2);
  assert_int_equal(r.opts.format, PGC_FORMAT_CSV);
  assert_true(r.opts.quiet);
  EXPECT_OK(PARSE("trace", "--variant", "baseline", "--stages", "1", "--k", "0", "--out", "x"));

  expect_usage_error(PARSE("trace", "--out", "x"), "trace takes one variant");
  expect_usage_error(PARSE("trace", "--variant", "all", "--out", "x"), "trace takes one variant");
  expect_usage_error(PARSE("trace", "--variant", "cp_async,mbarrier", "--out", "x"),
                     "trace takes one variant");
  expect_usage_error(PARSE("trace", "--variant", "tiled32", "--out", "x"),
                     "tiled32 has no traced kernel (trace takes: baseline, pingpong, cp_async, "
                     "pipeline_thread, pipeline_block, barrier, mbarrier, warp_specialized, tma, "
                     "tma_ws, wgmma_cp_async, wgmma_tma, wgmma_tma_ws, wgmma_tma_ws_wait0, "
                     "wgmma_tma_coop, wgmma_tma_coop_n256)");
  expect_usage_error(PARSE("trace", "--variant", "auto", "--out", "x"), "auto has no traced kernel");
  /* A name it does not know: the message offers what trace takes, which
   * 'all' is not. */
  parse_result unknown = PARSE("trace", "--variant", "cp_asink", "--out", "x");
  expect_usage_error(unknown, "unknown variant 'cp_asink' (trace takes: baseline, pingpong, "
                              "cp_async, pipeline_thread,");
  assert_null(strstr(unknown.err, "or all"));
  assert_null(strstr(unknown.err, "tiled32"));
  /* 'all' is refused where it is typed, alone or among names. */
  expect_usage_error(PARSE("trace", "--variant", "all", "--out", "x"),
                     "trace takes one variant, not all (trace takes: baseline, ");
  expect_usage_error(PARSE("trace", "--variant", "cp_async,all", "--out", "x"),
                     "trace takes one variant, not all (trace takes: baseline, ");
  expect_usage_error(PARSE("trace", "--variant", "cp_async", "--stages", "2,3", "--out", "x"),
                     "one stage count");
  expect_usage_error(PARSE("trace", "--variant", "wgmma_tma", "--stages", "7", "--out", "x"),
                     "wgmma_tma allows stage counts 2-6");
  expect_usage_error(PARSE("trace", "--variant", "cp_async", "--stages", "9", "--out", "x"),
                     "--stages: '9' is too large (at most 8)");
  expect_usage_error(PARSE("trace", "--variant", "baseline", "--stages", "2", "--out", "x"),
                     "baseline allows stage counts 1-1");
  expect_usage_error(PARSE("trace", "--variant", "cp_async"), "trace needs --out FILE");
  expect_usage_error(PARSE("trace", "--variant", "cp_async", "--out", ""), "--out needs a path");
  expect_usage_error(PARSE("trace", "--variant", "cp_async", "--m", "0", "--out", "x"),
                     "M and N of at least 1");
  expect_usage_error(PARSE("trace", "--variant", "cp_async", "--blocks", "0", "--out", "x"),
                     "--blocks");
  expect_usage_error(PARSE("trace", "--variant", "cp_async", "--blocks", "1025", "--out", "x"),
                     "too large");
  expect_usage_error(PARSE("trace", "--variant", "cp_async", "--blocks"), "needs a value");
  expect_usage_error(PARSE("trace", "--variant", "cp_async", "--out", "x", "--check", "on"),
                     "--check is not an option of 'trace'");
  expect_usage_error(PARSE("bench", "--blocks", "4"), "--blocks is not an option of 'bench'");
  expect_usage_error(PARSE("bench", "--out", "x"), "--out is not an option of 'bench'");
}

static void test_help_and_version(void **state) {
  (void)state;
  static const struct {
    const char *words[3];
    pgc_command topic;
  } cases[] = {
      {{"--help", NULL, NULL}, PGC_CMD_NONE},
      {{"-h", NULL, NULL}, PGC_CMD_NONE},
      {{"list", "--help", NULL}, PGC_CMD_LIST},
      {{"bench", "-h", NULL}, PGC_CMD_BENCH},
      {{"bench", "--size=8", "--help"}, PGC_CMD_BENCH},
      {{"study", "--help", NULL}, PGC_CMD_STUDY},
      {{"study", "pipelining", "-h"}, PGC_CMD_STUDY},
      {{"study", "single-warp", "--help"}, PGC_CMD_STUDY},
      {{"profile", "--help", NULL}, PGC_CMD_PROFILE},
      {{"inspect", "--check", "-h"}, PGC_CMD_INSPECT},
      {{"trace", "--help", NULL}, PGC_CMD_TRACE},
      {{"trace", "--variant=cp_async", "-h"}, PGC_CMD_TRACE},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    parse_result r = PARSE(cases[i].words[0], cases[i].words[1], cases[i].words[2]);
    EXPECT_OK(r);
    assert_int_equal(r.opts.command, PGC_CMD_HELP);
    assert_int_equal(r.opts.help_topic, cases[i].topic);
  }
  expect_usage_error(PARSE("--help=bench"), "takes no value");

  parse_result r = PARSE("--version");
  EXPECT_OK(r);
  assert_int_equal(r.opts.command, PGC_CMD_VERSION);
  expect_usage_error(PARSE("--version", "list"), "'list'");
}

/* Every "--word" in a usage text: the options it documents. */
static int documents(const char *text, const char *option) {
  size_t len = strlen(option);
  for (const char *p = strstr(text, option); p; p = strstr(p + 1, option)) {
    char after = p[len];
    int starts = p == text || !(p[-1] == '-' || (p[-1] >= 'a' && p[-1] <= 'z'));
    int ends = !(after == '-' || (after >= 'a' && after <= 'z') ||
                 (after >= '0' && after <= '9'));
    if (starts && ends) return 1;
  }
  return 0;
}

/* One name may be two options for different commands (--check: on|off for
 * bench and study, a flag for inspect); the command accepts the name if it
 * takes either. */
static int is_option_of(const char *word, size_t len, pgc_command command) {
  for (int i = 0; i < pgc_option_count(); ++i) {
    const char *name = pgc_option_name(i);
    if (strlen(name) == len && strncmp(name, word, len) == 0 &&
        pgc_option_applies(i, command))
      return 1;
  }
  return 0;
}

/* Whether experiment `study` accepts an option of this name. */
static int study_accepts(const char *option, pgc_study study) {
  for (int i = 0; i < pgc_option_count(); ++i)
    if (strcmp(pgc_option_name(i), option) == 0 &&
        pgc_option_applies_to_study(i, study))
      return 1;
  return 0;
}

/* The usage texts document exactly the options each command accepts. */
static void test_usage_matches_option_table(void **state) {
  (void)state;
  static const pgc_command commands[] = {PGC_CMD_NONE,    PGC_CMD_LIST,
                                         PGC_CMD_BENCH,   PGC_CMD_STUDY,
                                         PGC_CMD_PROFILE, PGC_CMD_INSPECT,
                                         PGC_CMD_TRACE};
  for (size_t c = 0; c < sizeof commands / sizeof commands[0]; ++c) {
    const char *text = pgc_usage_text(commands[c]);
    assert_non_null(text);
    assert_int_equal(text[strlen(text) - 1], '\n');
    for (int i = 0; i < pgc_option_count(); ++i) {
      if (!pgc_option_applies(i, commands[c])) continue;
      if (!documents(text, pgc_option_name(i)))
        print_error("usage of command %d lacks %s\n", (int)commands[c],
                    pgc_option_name(i));
      assert_true(documents(text, pgc_option_name(i)));
    }
    for (const char *p = strstr(text, "--"); p; p = strstr(p + 2, "--")) {
      size_t len = 2;
      while (p[len] == '-' || (p[len] >= 'a' && p[len] <= 'z') ||
             (p[len] >= '0' && p[len] <= '9'))
        ++len;
      if (!is_option_of(p, len, commands[c]))
        print_error("usage of command %d documents %.*s, not accepted\n",
                    (int)commands[c], (int)len, p);
      assert_true(is_option_of(p, len, commands[c]));
      p += len - 2;
    }
  }
}

/* The part of `text` from the line `heading` to the next blank line, copied
 * into buf (empty if there is no such heading). */
static const char *section(const char *text, const char *heading, char *buf,
                           size_t size) {
  buf[0] = '\0';
  const char *start = strstr(text, heading);
  if (!start) return buf;
  const char *end = strstr(start, "\n\n");
  size_t len = end ? (size_t)(end - start) : strlen(start);
  if (len >= size) len = size - 1;
  memcpy(buf, start, len);
  buf[len] = '\0';
  return buf;
}

/* The study's usage text has a section of options for every experiment and
 * one per experiment; together they document exactly what it accepts. */
static void test_study_usage_sections(void **state) {
  (void)state;
  static const pgc_study studies[] = {PGC_STUDY_PIPELINING,
                                      PGC_STUDY_SINGLE_WARP};
  enum { SECTION_SIZE = 4096 };
  static char common[SECTION_SIZE], own[SECTION_SIZE];
  const char *text = pgc_usage_text(PGC_CMD_STUDY);
  section(text, "options of every experiment:", common, sizeof common);
  assert_true(strlen(common) > 0);
  assert_non_null(strstr(text, "pipegemm study <experiment>"));
  for (size_t s = 0; s < sizeof studies / sizeof studies[0]; ++s) {
    const char *name = pgc_study_name(studies[s]);
    assert_non_null(name);
    char heading[64];
    snprintf(heading, sizeof heading, "options of %s:", name);
    section(text, heading, own, sizeof own);
    if (strlen(own) == 0) print_error("no '%s' in the study usage\n", heading);
    assert_true(strlen(own) > 0);
    for (int i = 0; i < pgc_option_count(); ++i) {
      const char *option = pgc_option_name(i);
      int documented = documents(common, option) || documents(own, option);
      int applies = study_accepts(option, studies[s]);
      if (documented != applies)
        print_error("study %s: %s is %s but %s\n", name, option,
                    documented ? "documented" : "not documented",
                    applies ? "accepted" : "not accepted");
      assert_int_equal(documented, applies);
    }
  }
  /* Options of every experiment apply to each of them. */
  for (int i = 0; i < pgc_option_count(); ++i) {
    if (!documents(common, pgc_option_name(i))) continue;
    for (size_t s = 0; s < sizeof studies / sizeof studies[0]; ++s)
      assert_true(study_accepts(pgc_option_name(i), studies[s]));
  }
  assert_false(pgc_option_applies_to_study(0, PGC_STUDY_NONE));
}


/* ---- the command lines the documentation shows ---------------------------- */

/* A code line "pipegemm ..." (or "build/pipegemm ..."), cut into words as
 * /bin/sh would for the simple lines the docs hold ('...' and "..."
 * quoting), up to a redirection, a pipe, a && or a comment. Returns the
 * word count, 0 for a line that runs no pipegemm. */
static int doc_words(char *line, char **words, int max) {
  char *p = line;
  while (*p == ' ') ++p;
  if (strncmp(p, "pipegemm ", 9) != 0 && strncmp(p, "build/pipegemm ", 15) != 0) return 0;
  int count = 0;
  char *out = p;
  while (*p && count < max) {
    while (*p == ' ') ++p;
    if (!*p || *p == '#' || *p == '>' || *p == '|' || *p == '&' || *p == ';' ||
        strncmp(p, "2>", 2) == 0)
      break;
    words[count++] = out;
    char quote = 0;
    while (*p && (quote || *p != ' ')) {
      if (!quote && (*p == '\'' || *p == '"')) {
        quote = *p++;
      } else if (quote && *p == quote) {
        quote = 0;
        ++p;
      } else {
        *out++ = *p++;
      }
    }
    if (*p) ++p;
    *out++ = '\0';
  }
  return count;
}

/* Checks every pipegemm line of the code blocks of one Markdown file;
 * returns how many it checked. */
static int check_doc_commands(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) fail_msg("cannot open %s", path);
  char line[1024];
  int in_code = 0, checked = 0, number = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    ++number;
    line[strcspn(line, "\n")] = '\0';
    if (strncmp(line, "```", 3) == 0) {
      in_code = !in_code;
      continue;
    }
    if (!in_code) continue;
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", line);
    char *words[MAX_ARGS];
    const int count = doc_words(copy, words, MAX_ARGS - 1);
    if (count == 0) continue;
    words[0] = (char *)"pipegemm";
    words[count] = NULL;
    pgc_options opts;
    char err[PGC_ERROR_SIZE];
    if (pgc_parse_args(count, words, &opts, err, sizeof err) != PGC_EXIT_OK)
      fail_msg("%s:%d: `%s` is a usage error: %s", path, number, line, err);
    ++checked;
  }
  fclose(f);
  return checked;
}

/* README.md and every page of docs/: each command line they show parses. */
static void test_documented_command_lines(void **state) {
  (void)state;
  int checked = check_doc_commands(PG_SOURCE_DIR "/README.md");
  DIR *docs = opendir(PG_SOURCE_DIR "/docs");
  if (docs == NULL) fail_msg("cannot open %s/docs", PG_SOURCE_DIR);
  for (struct dirent *e = readdir(docs); e != NULL; e = readdir(docs)) {
    const size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 3, ".md") != 0) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/docs/%s", PG_SOURCE_DIR, e->d_name);
    checked += check_doc_commands(path);
  }
  closedir(docs);
  assert_true(checked >= 7); /* the README's Commands block alone has 7 */
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
      cmocka_unit_test(test_argument_text_escaped),
      cmocka_unit_test(test_escape_text),
      cmocka_unit_test(test_study_experiment),
      cmocka_unit_test(test_commands),
      cmocka_unit_test(test_inspect_options),
      cmocka_unit_test(test_trace_options),
      cmocka_unit_test(test_help_and_version),
      cmocka_unit_test(test_usage_matches_option_table),
      cmocka_unit_test(test_study_usage_sections),
      cmocka_unit_test(test_profile_options),
      cmocka_unit_test(test_documented_command_lines),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
