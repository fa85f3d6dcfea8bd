/* The commands of the pipegemm tool as argument parsing sees them
 * (src/cli/args.c, args_checks.c): study's experiments, the command words,
 * and the options of profile, inspect and trace with their rules. No GPU
 * needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli_args_common.h"

/* ---- commands and their own options ---------------------------------------- */

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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_study_experiment),
      cmocka_unit_test(test_commands),
      cmocka_unit_test(test_inspect_options),
      cmocka_unit_test(test_trace_options),
      cmocka_unit_test(test_profile_options),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
