/* The Nsight Compute layer of `pipegemm profile` (src/adapters/ncu.c), without a
 * GPU or ncu: the raw-page parser on tests/ncu_raw_fixture.csv (ncu's
 * `--csv --page raw --print-units base` format: header, units row, quoted
 * values with thousands separators), units and numbers, how each shown
 * metric is derived and falls back, the metric table itself, and the shell
 * shell command line that runs ncu. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "adapters/ncu.h"
#include "adapters/proc.h"
#include "read_file.h"

#ifndef PG_NCU_FIXTURE_H200
#error "PG_NCU_FIXTURE_H200 must name tests/ncu_raw_fixture_h200.csv"
#endif
#ifndef PG_NCU_FIXTURE
#error "PG_NCU_FIXTURE must name tests/ncu_raw_fixture.csv"
#endif

#define TOLERANCE 1e-9

static double shown(const pgc_ncu_result *result, const char *key) {
  int index = pgc_ncu_metric_index(key);
  assert_true(index >= 0);
  return pgc_ncu_derive(&pgc_ncu_metrics[index], result, NULL);
}

static void assert_close(double actual, double expected) {
  if (!(fabs(actual - expected) <= TOLERANCE * (1.0 + fabs(expected))))
    print_error("got %.12g, expected %.12g\n", actual, expected);
  assert_true(fabs(actual - expected) <= TOLERANCE * (1.0 + fabs(expected)));
}

/* ---- the fixture -------------------------------------------------------------- */

static void test_fixture_values(void **state) {
  (void)state;
  char *text = pgt_read_file(PG_NCU_FIXTURE);
  pgc_ncu_result result;
  assert_int_equal(pgc_ncu_parse_raw(text, &result), 0);

  const pgc_ncu_field *kernel = pgc_ncu_find(&result, "Kernel Name");
  assert_non_null(kernel);
  assert_string_equal(kernel->text, "pg_baseline_kernel");
  /* A quoted cell with commas stays one cell. */
  const pgc_ncu_field *block = pgc_ncu_find(&result, "Block Size");
  assert_string_equal(block->text, "(256, 1, 1)");
  const pgc_ncu_field *gpu = pgc_ncu_find(&result, "device__attribute_display_name");
  assert_string_equal(gpu->text, "fixture GPU, not a measurement");
  assert_int_equal(gpu->has_value, 0);
  /* n/a is no value, not zero. */
  const pgc_ncu_field *na = pgc_ncu_find(
      &result, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active");
  assert_non_null(na);
  assert_int_equal(na->has_value, 0);
  assert_null(pgc_ncu_find(&result, "no__such_metric.sum"));

  /* Base units in, shown units out. */
  assert_close(shown(&result, "duration_ms"), 2.293728);           /* nsecond */
  assert_close(shown(&result, "sm_throughput_pct"), 28.71);
  assert_close(shown(&result, "memory_throughput_pct"), 37.30);
  assert_close(shown(&result, "dram_throughput_pct"), 6.28);
  assert_close(shown(&result, "dram_bandwidth_gbps"), 45.77);      /* byte/second */
  assert_close(shown(&result, "l1tex_throughput_pct"), 48.57);
  assert_close(shown(&result, "l2_throughput_pct"), 14.28);
  assert_close(shown(&result, "issued_warps_per_scheduler"), 0.37);
  assert_close(shown(&result, "eligible_warps_per_scheduler"), 0.42);
  assert_close(shown(&result, "warp_cycles_per_issued_inst"), 5.33);
  assert_close(shown(&result, "registers_per_thread"), 146);
  assert_close(shown(&result, "static_smem_kb"), 8.192);           /* byte/block */
  assert_close(shown(&result, "dynamic_smem_kb"), 0);
  assert_close(shown(&result, "achieved_occupancy_pct"), 16.54);
  assert_close(shown(&result, "l1tex_hit_rate_pct"), 16.46);
  assert_close(shown(&result, "stall_wait"), 1.64);
  assert_close(shown(&result, "stall_long_scoreboard"), 0.95);
  assert_close(shown(&result, "stall_barrier"), 0.21);
  assert_close(shown(&result, "shared_excessive_wavefronts"), 33554432);
  assert_close(shown(&result, "shared_excessive_pct"), 100.0 * 33554432 / 88301137);
  /* No total in the fixture: loads + stores. */
  int way = 0;
  double conflicts = pgc_ncu_derive(
      &pgc_ncu_metrics[pgc_ncu_metric_index("shared_bank_conflicts")], &result, &way);
  assert_close(conflicts, 20971520.0 + 4194304.0);
  assert_int_equal(way, 1);
  assert_close(shown(&result, "global_excessive_pct"), 100.0 * 1572864 / 8738133);

  pgc_ncu_result_free(&result);
  free(text);
}

/* A raw page from an H200 (tma_ws at 4096^3, 2026-11-30), cut to the
 * columns the table reads: every row has a value, and the issue-slot rows
 * come out as ncu printed them. */
static void test_h200_fixture(void **state) {
  (void)state;
  char *text = pgt_read_file(PG_NCU_FIXTURE_H200);
  pgc_ncu_result result;
  assert_int_equal(pgc_ncu_parse_raw(text, &result), 0);
  for (int i = 0; i < pgc_ncu_metric_count; ++i) {
    const double value = pgc_ncu_derive(&pgc_ncu_metrics[i], &result, NULL);
    if (!isfinite(value)) print_error("row %s has no value\n", pgc_ncu_metrics[i].key);
    assert_true(isfinite(value));
  }
  assert_close(shown(&result, "issued_ipc"), 3.26);
  assert_close(shown(&result, "ffma_share_pct"), 100.0 * 68719476736.0 / (32.0 * 2284460541.0));
  assert_close(shown(&result, "fma_pipe_pct"), 76.66);
  assert_close(shown(&result, "stall_dispatch"), 0.38);
  assert_close(shown(&result, "stall_not_selected"), 0.91);
  assert_close(shown(&result, "shared_wavefronts_per_request"), 335544320.0 / 100663296.0);
  pgc_ncu_result_free(&result);
  free(text);
}

/* Everything the ncu process prints: its own lines, the profiled program's
 * report, then the raw page. */
static void test_mixed_output(void **state) {
  (void)state;
  char *fixture = pgt_read_file(PG_NCU_FIXTURE);
  static const char before[] =
      "==PROF== Connected to process 7 (/opt/pipegemm)\r\n"
      "# report: pipegemm bench\n"
      "variant,stages,shape,verdict\n"
      "baseline,1,2048x2048x2048,UNCHECKED\n"
      "\"ID is not this\",\"x\"\n"
      "==PROF== Profiling \"pg_baseline_kernel\" - 0: 0%....50%....100% - 38 passes\n"
      "==PROF== Disconnected from process 7\n";
  char *text = malloc(sizeof before + strlen(fixture));
  assert_non_null(text);
  strcpy(text, before);
  strcat(text, fixture);
  pgc_ncu_result result;
  assert_int_equal(pgc_ncu_parse_raw(text, &result), 0);
  assert_close(shown(&result, "stall_long_scoreboard"), 0.95);
  pgc_ncu_result_free(&result);
  free(text);
  free(fixture);
}

static void test_no_kernel(void **state) {
  (void)state;
  pgc_ncu_result result;
  assert_int_equal(pgc_ncu_parse_raw("", &result), -1);
  assert_int_equal(pgc_ncu_parse_raw(NULL, &result), -1);
  assert_int_equal(
      pgc_ncu_parse_raw("==PROF== Connected\n==WARNING== No kernels were profiled.\n",
                        &result),
      -1);
  /* A header and units but no row. */
  assert_int_equal(pgc_ncu_parse_raw("\"ID\",\"gpu__time_duration.sum\"\n"
                                     "\"\",\"nsecond\"\n",
                                     &result),
                   -1);
  /* A row of another width is not this header's. */
  assert_int_equal(pgc_ncu_parse_raw("\"ID\",\"a\",\"b\"\n\"0\",\"1\"\n", &result),
                   -1);
  pgc_ncu_result_free(&result); /* safe on an empty result */
}

/* Without --print-units base, ncu scales each value to a fitting unit. */
static void test_scaled_units(void **state) {
  (void)state;
  static const char text[] =
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"dram__bytes.sum.per_second\","
      "\"launch__shared_mem_per_block_static\",\"derived__memory_l1_wavefronts_shared_excessive\"\n"
      "\"\",\"\",\"usecond\",\"Gbyte/second\",\"Kbyte/block\",\"Mbyte\"\n"
      "\"3\",\"k\",\"1,903.50\",\"48.28\",\"16.38\",\"39.85\"\n";
  pgc_ncu_result result;
  assert_int_equal(pgc_ncu_parse_raw(text, &result), 0);
  assert_close(shown(&result, "duration_ms"), 1.9035);
  assert_close(shown(&result, "dram_bandwidth_gbps"), 48.28);
  assert_close(shown(&result, "static_smem_kb"), 16.38);
  assert_close(shown(&result, "shared_excessive_wavefronts"), 39850000);
  pgc_ncu_result_free(&result);
}

/* No units row: values taken as they are. */
static void test_no_units_row(void **state) {
  (void)state;
  pgc_ncu_result result;
  assert_int_equal(pgc_ncu_parse_raw("ID,launch__registers_per_thread\n"
                                     "12,254\n",
                                     &result),
                   0);
  assert_close(shown(&result, "registers_per_thread"), 254);
  pgc_ncu_result_free(&result);
}

/* ---- derivation: the later ways ------------------------------------------- */

static void test_fallbacks(void **state) {
  (void)state;
  static const char text[] =
      "\"ID\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\","
      "\"smsp__warps_active.avg.per_cycle_active\",\"smsp__issue_active.avg.per_cycle_active\","
      "\"memory_l1_wavefronts_shared\",\"memory_l1_wavefronts_shared_ideal\","
      "\"memory_l2_theoretical_sectors_global\",\"memory_l2_theoretical_sectors_global_ideal\","
      "\"dram__bytes.sum\",\"gpu__time_duration.sum\","
      "\"derived__memory_l1_wavefronts_shared_excessive\","
      "\"l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum\","
      "\"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum\"\n"
      "\"\",\"%\",\"warp/cycle\",\"inst/cycle\",\"\",\"\",\"sector\",\"sector\","
      "\"byte\",\"nsecond\",\"\",\"\",\"\"\n"
      "\"1\",\"6.5\",\"2\",\"0.5\",\"1,000\",\"600\",\"0\",\"0\","
      "\"2,000,000\",\"1,000,000\",\"n/a\",\"7\",\"1\"\n";
  pgc_ncu_result result;
  assert_int_equal(pgc_ncu_parse_raw(text, &result), 0);
  int way = -2;
  const pgc_ncu_metric *dram =
      &pgc_ncu_metrics[pgc_ncu_metric_index("dram_throughput_pct")];
  assert_close(pgc_ncu_derive(dram, &result, &way), 6.5); /* the older name */
  assert_int_equal(way, 1);
  assert_close(shown(&result, "warp_cycles_per_issued_inst"), 4.0); /* 2 / 0.5 */
  /* The derived metric is n/a: total - ideal. */
  assert_close(shown(&result, "shared_excessive_wavefronts"), 400);
  assert_close(shown(&result, "shared_excessive_pct"), 40);
  /* Zero total sectors: no ratio, not a division by zero. */
  assert_true(isnan(shown(&result, "global_excessive_pct")));
  /* Bytes over seconds: 2e6 B / 1e-3 s = 2 GB/s. */
  assert_close(shown(&result, "dram_bandwidth_gbps"), 2.0);
  /* The total counts when present, not the loads alone. */
  assert_close(shown(&result, "shared_bank_conflicts"), 7);
  /* Missing inputs: NaN, way -1. */
  const pgc_ncu_metric *stall =
      &pgc_ncu_metrics[pgc_ncu_metric_index("stall_barrier")];
  assert_true(isnan(pgc_ncu_derive(stall, &result, &way)));
  assert_int_equal(way, -1);
  pgc_ncu_result_free(&result);
}

/* ---- numbers, units, CSV -------------------------------------------------- */

static void test_numbers(void **state) {
  (void)state;
  double value = 0;
  assert_int_equal(pgc_ncu_parse_number("33,554,432", &value), 0);
  assert_close(value, 33554432);
  assert_int_equal(pgc_ncu_parse_number(" 1,903.25 ", &value), 0);
  assert_close(value, 1903.25);
  assert_int_equal(pgc_ncu_parse_number("-0.5", &value), 0);
  assert_close(value, -0.5);
  assert_int_equal(pgc_ncu_parse_number("4.2e+10", &value), 0);
  assert_close(value, 4.2e10);
  static const char *const bad[] = {"", " ", "n/a", "nan", "inf", "12abc",
                                    "0x10", "(256, 1, 1)", "1.2.3"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i)
    assert_int_equal(pgc_ncu_parse_number(bad[i], &value), -1);
}

static void test_units(void **state) {
  (void)state;
  static const struct {
    const char *unit;
    double factor;
  } cases[] = {
      {"", 1},           {"%", 1},         {"nsecond", 1e-9},
      {"usecond", 1e-6}, {"msecond", 1e-3}, {"second", 1},
      {"byte", 1},       {"Kbyte", 1e3},   {"Mbyte", 1e6},
      {"Gbyte/second", 1e9}, {"Tbyte/second", 1e12}, {"byte/block", 1},
      {"Kbyte/block", 1e3},  {"cycle/nsecond", 1e9},  {"inst/cycle", 1},
      {"warp/cycle", 1},     {"Ksector", 1e3},        {"register/thread", 1},
      {"Minst", 1e6},        {"mystery", 1},          {"M", 1},
      /* ncu 2025's base units: durations come as "ns". */
      {"ns", 1e-9},          {"us", 1e-6},            {"ms", 1e-3},
      {"s", 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    double factor = pgc_ncu_unit_factor(cases[i].unit);
    if (fabs(factor - cases[i].factor) > TOLERANCE * cases[i].factor)
      print_error("unit '%s': %g, expected %g\n", cases[i].unit, factor,
                  cases[i].factor);
    assert_close(factor, cases[i].factor);
  }
  assert_close(pgc_ncu_unit_factor(NULL), 1);
}

static void test_split_csv(void **state) {
  (void)state;
  char buf[128];
  char *fields[8];
  static const char line[] = "\"a,b\",\"say \"\"hi\"\"\",,plain,\"\"";
  int count = pgc_ncu_split_csv(line, strlen(line), buf, sizeof buf, fields, 8);
  assert_int_equal(count, 5);
  assert_string_equal(fields[0], "a,b");
  assert_string_equal(fields[1], "say \"hi\"");
  assert_string_equal(fields[2], "");
  assert_string_equal(fields[3], "plain");
  assert_string_equal(fields[4], "");
  /* A trailing comma is one more, empty, field. */
  assert_int_equal(pgc_ncu_split_csv("x,", 2, buf, sizeof buf, fields, 8), 2);
  assert_string_equal(fields[1], "");
  /* More fields than room: counted, not written. */
  assert_int_equal(pgc_ncu_split_csv("1,2,3", 5, buf, sizeof buf, fields, 2), 3);
  /* A buffer too small. */
  assert_int_equal(pgc_ncu_split_csv("abcdef", 6, buf, 4, fields, 8), -1);
}

/* ---- the table ---------------------------------------------------------------- */

static void test_metric_table(void **state) {
  (void)state;
  assert_true(pgc_ncu_metric_count >= 20);
  for (int i = 0; i < pgc_ncu_metric_count; ++i) {
    const pgc_ncu_metric *metric = &pgc_ncu_metrics[i];
    for (const char *p = metric->key; *p; ++p)
      assert_true((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_');
    assert_int_equal(pgc_ncu_metric_index(metric->key), i); /* unique */
    assert_true(metric->label[0] && (metric->section == NULL || metric->section[0]));
    assert_non_null(metric->unit);
    assert_true(metric->ways[0].op != PGC_NCU_NONE);
    /* A row asked for by name has one way: a name ncu lacks fails the run. */
    if (metric->section == NULL) assert_int_equal(metric->ways[1].op, PGC_NCU_NONE);
    for (int w = 0; w < PGC_NCU_MAX_WAYS && metric->ways[w].op != PGC_NCU_NONE; ++w) {
      assert_non_null(metric->ways[w].a);
      assert_true(metric->ways[w].op == PGC_NCU_VALUE || metric->ways[w].b != NULL);
    }
  }
  assert_int_equal(pgc_ncu_metric_index("no_such_key"), -1);
  const char *sections[16];
  int count = pgc_ncu_sections(sections, 16);
  assert_int_equal(count, 8);
  for (int i = 0; i < count; ++i)
    for (int j = 0; j < i; ++j) assert_string_not_equal(sections[i], sections[j]);
  assert_int_equal(pgc_ncu_sections(sections, 2), count); /* counts past room */

  /* The named metrics: each once, and none of a row with a section. */
  char named[1024];
  assert_int_equal(pgc_ncu_named_metrics(named, sizeof named), 0);
  assert_non_null(strstr(named, "sm__inst_issued.avg.per_cycle_active"));
  assert_non_null(strstr(named, "smsp__inst_executed_op_shared_ld.sum"));
  assert_null(strstr(named, "gpu__time_duration.sum"));
  assert_null(strstr(named, ",,"));
  const char *dispatch = strstr(named, "dispatch_stall");
  assert_non_null(dispatch);
  assert_null(strstr(dispatch + 1, "dispatch_stall"));
  assert_int_equal(pgc_ncu_named_metrics(named, 16), -1);
}

/* ---- the command line ----------------------------------------------------------- */

static void test_shell_quoting(void **state) {
  (void)state;
  char buf[64] = "";
  assert_int_equal(pgc_shell_append(buf, sizeof buf, "it's"), 0);
  assert_int_equal(pgc_shell_append(buf, sizeof buf, ""), 0);
  assert_int_equal(pgc_shell_append(buf, sizeof buf, "$HOME;`x`"), 0);
  assert_string_equal(buf, "'it'\\''s' '' '$HOME;`x`'");
  char small[8] = "";
  assert_int_equal(pgc_shell_append(small, sizeof small, "toolong"), -1);
  assert_string_equal(small, "");
}

static void test_command(void **state) {
  (void)state;
  char buf[4096];
  pgc_ncu_job job = {"/usr/local/cuda/bin/ncu", "/tmp/it's here/pipegemm",
                     "cp_async", "pg_cp_async_kernel", 2, 2048, 1024, 512, 1, 0, 0};
  assert_int_equal(pgc_ncu_command(&job, buf, sizeof buf), 0);
  static const char *const parts[] = {
      "'/usr/local/cuda/bin/ncu' '--clock-control' 'none' '--csv' '--page' 'raw' "
      "'--print-units' 'base'",
      "'--section' 'SpeedOfLight'",
      "'--section' 'SourceCounters'",
      "'--metrics' 'sm__inst_issued.avg.per_cycle_active,",
      "'--kernel-name-base' 'function' '--kernel-name' 'regex:.*pg_cp_async_kernel.*' "
      "'--launch-count' '1' '/tmp/it'\\''s here/pipegemm' 'bench' '--variant' "
      "'cp_async' '--stages' '2' '--m' '2048' '--n' '1024' '--k' '512' "
      "'--device' '1' '--warmup' '0' '--iters' '1' '--check' 'off' "
      "'--flush-l2' 'off' '--format' 'csv' '--quiet' 2>&1",
  };
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i) {
    if (!strstr(buf, parts[i])) print_error("command lacks %s:\n%s\n", parts[i], buf);
    assert_non_null(strstr(buf, parts[i]));
  }
  /* The end of the string is the redirection. */
  assert_string_equal(buf + strlen(buf) - 5, " 2>&1");
  assert_int_equal(pgc_ncu_command(&job, buf, 64), -1);

  /* The fallback: ncu's full set, ncu's own units, no section list. */
  job.full_set = 1;
  assert_int_equal(pgc_ncu_command(&job, buf, sizeof buf), 0);
  assert_non_null(strstr(buf, "'--page' 'raw' '--set' 'full' '--metrics' "));
  assert_null(strstr(buf, "--section"));
  assert_null(strstr(buf, "--print-units"));
  job.full_set = 0;

  job.variant = "cublas";
  job.kernel = NULL;
  job.attempt = 0;
  assert_int_equal(pgc_ncu_command(&job, buf, sizeof buf), 0);
  assert_non_null(strstr(buf, "'--kernel-name-base' 'demangled' '--kernel-name' "
                              "'regex:.*([Gg][Ee][Mm][Mm]|nvjet).*'"));
  job.attempt = 1;
  assert_int_equal(pgc_ncu_command(&job, buf, sizeof buf), 0);
  assert_non_null(strstr(buf, "'regex:^(?!pgh?_).*'"));
  job.attempt = 2;
  assert_int_equal(pgc_ncu_command(&job, buf, sizeof buf), -1);
}

static void test_kernel_filters(void **state) {
  (void)state;
  const char *base = NULL;
  char regex[64];
  /* A variant of ours: its registry symbol, by function name. */
  assert_int_equal(pgc_ncu_kernel_filter("pg_baseline_kernel", 0, &base, regex, sizeof regex), 1);
  assert_string_equal(base, "function");
  assert_string_equal(regex, "regex:.*pg_baseline_kernel.*");
  assert_int_equal(pgc_ncu_kernel_filter("pg_baseline_kernel", 1, &base, regex, sizeof regex), 0);
  /* The forms of tma_ws share one kernel: the filter is the registry's
   * symbol, not the variant's name. */
  const pg_variant_entry *m256 = pg_entry_of(pg_variant_find("tma_ws_m256"));
  assert_non_null(m256);
  assert_int_equal(pgc_ncu_kernel_filter(m256->kernel.symbol, 0, &base, regex, sizeof regex), 1);
  assert_string_equal(regex, "regex:.*pg_tma_ws_kernel.*");
  /* cublas: two filters of its own. */
  assert_int_equal(pgc_ncu_kernel_filter(NULL, 1, &base, regex, sizeof regex), 2);
  assert_int_equal(pgc_ncu_kernel_filter(NULL, -1, &base, regex, sizeof regex), 0);
  assert_int_equal(pgc_ncu_kernel_filter("pg_baseline_kernel", 0, &base, regex, 8), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixture_values), cmocka_unit_test(test_mixed_output),
      cmocka_unit_test(test_no_kernel),      cmocka_unit_test(test_scaled_units),
      cmocka_unit_test(test_no_units_row),   cmocka_unit_test(test_fallbacks),
      cmocka_unit_test(test_numbers),        cmocka_unit_test(test_units),
      cmocka_unit_test(test_split_csv),      cmocka_unit_test(test_metric_table),
      cmocka_unit_test(test_shell_quoting),  cmocka_unit_test(test_command),
      cmocka_unit_test(test_kernel_filters), cmocka_unit_test(test_h200_fixture),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
