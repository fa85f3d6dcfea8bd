/* The rows of bench's report (src/measure/report.c): a result row's cells
 * and verdict, the work column, each row related to cuBLAS and the
 * baseline, the geometric means of a shape set, and the FLOP arithmetic
 * behind TFLOP/s and % of peak. No GPU. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "measure/session.h"
#include "measure/report.h"
#include "cli/output.h"

#include "report_readers.h"

/* ---- the bench result row ----------------------------------------------------- */

static void test_result_row(void **state) {
  (void)state;
  pgc_result_row row;
  pgc_result_row_init(&row, "cp_async", 2, 64, 32, 16);
  assert_string_equal(row.shape, "64x32x16");
  assert_true(isnan(row.median_ms) && isnan(row.tflops) && isnan(row.x_cublas));
  assert_true(isnan(row.max_abs_err) && isnan(row.pct_ffma_peak));
  assert_string_equal(row.verdict_text, "PASS");
  pgc_result_row_set_verdict(&row, PGC_VERDICT_SKIP, "needs CC 9.0");
  assert_int_equal(row.verdict, PGC_VERDICT_SKIP);
  assert_string_equal(row.verdict_text, "SKIP (needs CC 9.0)");
  pgc_result_row_set_verdict(&row, PGC_VERDICT_FAIL, NULL);
  assert_string_equal(row.verdict_text, "FAIL");
  pgc_result_row_set_verdict(&row, PGC_VERDICT_UNCHECKED, NULL);
  assert_string_equal(row.verdict_text, "UNCHECKED");

  /* One cell per column, no more; stages 0 is absent. */
  pgc_cell cells[PGC_MAX_COLUMNS + 1];
  for (int i = 0; i <= PGC_MAX_COLUMNS; ++i) cells[i] = pgc_cell_text("sentinel");
  pgc_result_row_init(&row, "cublas", 0, 8, 8, 8);
  pgc_result_row_cells(&row, cells);
  assert_true(pgc_result_column_count <= PGC_MAX_COLUMNS);
  assert_string_equal(cells[pgc_result_column_count].text, "sentinel");
  assert_int_equal(cells[0].kind, PGC_CELL_TEXT);
  assert_string_equal(cells[0].text, "cublas");
  assert_int_equal(cells[1].kind, PGC_CELL_ABSENT);
  assert_string_equal(pgc_result_columns[0].key, "variant");
  assert_string_equal(pgc_result_columns[pgc_result_column_count - 1].key,
                      "verdict");

  /* Shared memory and blocks per SM: absent until the kernel's facts are
   * known (cublas never has them), numbers in every format once they are. */
  int smem = -1, blocks = -1, regs = -1;
  for (int c = 0; c < pgc_result_column_count; ++c) {
    if (strcmp(pgc_result_columns[c].key, "smem_kib") == 0) smem = c;
    if (strcmp(pgc_result_columns[c].key, "blocks_per_sm") == 0) blocks = c;
    if (strcmp(pgc_result_columns[c].key, "registers") == 0) regs = c;
  }
  assert_true(smem >= 0 && blocks >= 0 && regs >= 0);
  assert_int_equal(row.registers, -1);
  assert_int_equal(cells[regs].kind, PGC_CELL_ABSENT);
  assert_int_equal(pgc_result_columns[smem].show, PGC_SHOW_ALL);
  assert_int_equal(pgc_result_columns[blocks].show, PGC_SHOW_ALL);
  assert_true(isnan(row.smem_kib));
  assert_int_equal(row.blocks_per_sm, -1);
  assert_true(cells[smem].kind == PGC_CELL_ABSENT ||
              (cells[smem].kind == PGC_CELL_REAL && isnan(cells[smem].real)));
  assert_int_equal(cells[blocks].kind, PGC_CELL_ABSENT);
  pgc_result_row_init(&row, "cp_async", 4, 8, 8, 8);
  row.smem_kib = 32.0625;
  row.blocks_per_sm = 0; /* does not fit: a number, not absent */
  row.registers = 112;
  pgc_result_row_cells(&row, cells);
  assert_int_equal(cells[smem].kind, PGC_CELL_REAL);
  assert_float_equal(cells[smem].real, 32.0625, 0);
  assert_int_equal(cells[blocks].kind, PGC_CELL_INTEGER);
  assert_int_equal(cells[blocks].integer, 0);
  assert_int_equal(cells[regs].kind, PGC_CELL_INTEGER);
  assert_int_equal(cells[regs].integer, 112);
}

/* The `work` column: right after `runs`, absent for a plain grid, the
 * plan's division of the work when it has one. */
static void test_work_column(void **state) {
  (void)state;
  int runs = -1, work = -1;
  for (int c = 0; c < pgc_result_column_count; ++c) {
    if (strcmp(pgc_result_columns[c].key, "runs") == 0) runs = c;
    if (strcmp(pgc_result_columns[c].key, "work") == 0) work = c;
  }
  assert_true(runs >= 0 && work == runs + 1);
  assert_int_equal(pgc_result_columns[work].show, PGC_SHOW_ALL);

  pgc_result_row row;
  pgc_cell cells[PGC_MAX_COLUMNS];
  pgc_result_row_init(&row, "cublas", 0, 8, 8, 8);
  assert_string_equal(row.work, "");
  pgc_result_row_cells(&row, cells);
  assert_int_equal(cells[work].kind, PGC_CELL_ABSENT);

  /* What pg_plan_describe tells, as the column shows it. */
  pg_plan_info info;
  memset(&info, 0, sizeof info);
  info.splits = 1;
  pgc_work_text(&info, row.work, sizeof row.work);
  assert_string_equal(row.work, ""); /* one block per tile */
  info.splits = 8;
  pgc_work_text(&info, row.work, sizeof row.work);
  assert_string_equal(row.work, "split-K 8");
  info.split_from_row = 1664; /* only the rows below split */
  pgc_work_text(&info, row.work, sizeof row.work);
  assert_string_equal(row.work, "split-K 8 from row 1664");
  info.split_from_row = 0;
  info.split_in_clusters = 1; /* the ranges added up in their clusters */
  pgc_work_text(&info, row.work, sizeof row.work);
  assert_string_equal(row.work, "split-K 8 in clusters");
  info.split_in_clusters = 0;
  info.splits = 1;
  info.stream_k_blocks = 264;
  pgc_work_text(&info, row.work, sizeof row.work);
  assert_string_equal(row.work, "stream-K 264");
  info.splits = 0; /* a plan with nothing to run */
  info.stream_k_blocks = 0;
  pgc_work_text(&info, row.work, sizeof row.work);
  assert_string_equal(row.work, "");
  /* The widest values fit the row's buffer whole. */
  info.splits = 2147483647;
  pgc_work_text(&info, row.work, sizeof row.work);
  assert_string_equal(row.work, "split-K 2147483647");
  info.split_from_row = 2147483647;
  pgc_work_text(&info, row.work, sizeof row.work);
  assert_string_equal(row.work, "split-K 2147483647 from row 2147483647");
  info.split_from_row = 0;
  info.stream_k_blocks = 2147483647;
  pgc_work_text(&info, row.work, sizeof row.work);
  assert_string_equal(row.work, "stream-K 2147483647");

  pgc_result_row_cells(&row, cells);
  assert_int_equal(cells[work].kind, PGC_CELL_TEXT);
  assert_string_equal(cells[work].text, "stream-K 2147483647");
}

static void test_result_rows_relate(void **state) {
  (void)state;
  enum { ROWS = 6 };
  pgc_result_row rows[ROWS];
  pgc_result_row_init(&rows[0], "baseline", 1, 64, 64, 64);
  pgc_result_row_init(&rows[1], "cp_async", 2, 64, 64, 64);
  pgc_result_row_init(&rows[2], "cublas", 1, 64, 64, 64);
  pgc_result_row_init(&rows[3], "cp_async", 2, 128, 128, 128); /* no baseline */
  pgc_result_row_init(&rows[4], "tma", 4, 64, 64, 64);         /* skipped */
  pgc_result_row_init(&rows[5], "cublas_tf32", 1, 64, 64, 64);
  rows[0].median_ms = 2.0;
  rows[1].median_ms = 1.0;
  rows[2].median_ms = 0.5;
  rows[3].median_ms = 3.0;
  rows[5].median_ms = 0.25;
  rows[1].smem_kib = 16.5;
  rows[1].blocks_per_sm = 3;
  pgc_result_rows_relate(rows, ROWS, "baseline", "cublas", "cublas_tf32");
  assert_float_equal(rows[0].x_baseline, 1.0, 1e-12);
  assert_float_equal(rows[1].x_baseline, 2.0, 1e-12);
  assert_float_equal(rows[2].x_baseline, 4.0, 1e-12);
  assert_float_equal(rows[0].x_cublas, 0.25, 1e-12);
  assert_float_equal(rows[1].x_cublas, 0.5, 1e-12);
  assert_float_equal(rows[2].x_cublas, 1.0, 1e-12);
  assert_true(isnan(rows[3].x_baseline) && isnan(rows[3].x_cublas));
  assert_true(isnan(rows[4].x_baseline) && isnan(rows[4].x_cublas));
  /* Against the TF32 tensor-core reference, the same way. */
  assert_float_equal(rows[0].x_cublas_tf32, 0.125, 1e-12);
  assert_float_equal(rows[2].x_cublas_tf32, 0.5, 1e-12);
  assert_float_equal(rows[5].x_cublas_tf32, 1.0, 1e-12);
  assert_float_equal(rows[5].x_cublas, 2.0, 1e-12);
  assert_true(isnan(rows[3].x_cublas_tf32) && isnan(rows[4].x_cublas_tf32));

  /* A bench report of these rows is valid JSON and CSV. */
  pgc_cell cells[ROWS * PGC_MAX_COLUMNS];
  for (int r = 0; r < ROWS; ++r)
    pgc_result_row_cells(&rows[r], &cells[r * pgc_result_column_count]);
  pgc_report report = {"bench", NULL, 0, pgc_result_columns,
                       pgc_result_column_count, cells, ROWS, NULL, 0, 0, NULL, NULL};
  capture c;
  pgc_print_json(capture_begin(&c), &report);
  char *text = capture_end(&c);
  assert_int_equal(json_check(text), 0);
  assert_non_null(strstr(text, "\"x_baseline\": 2,"));
  assert_non_null(strstr(text, "\"smem_kib\": 16.5, \"blocks_per_sm\": 3,"));
  assert_non_null(strstr(text, "\"smem_kib\": null, \"blocks_per_sm\": null,"));
  free(text);
  pgc_print_csv(capture_begin(&c), &report);
  text = capture_end(&c);
  csv_table t;
  assert_int_equal(csv_read(text, &t), 0);
  assert_int_equal(t.records, 1 + ROWS);
  assert_int_equal(t.fields[0], t.fields[1]);
  int smem = -1, blocks = -1;
  for (int f = 0; f < t.fields[0]; ++f) {
    if (strcmp(t.field[0][f], "smem_kib") == 0) smem = f;
    if (strcmp(t.field[0][f], "blocks_per_sm") == 0) blocks = f;
  }
  assert_true(smem >= 0 && blocks == smem + 1);
  assert_string_equal(t.field[2][smem], "16.5"); /* cp_async, row 1 */
  assert_string_equal(t.field[2][blocks], "3");
  assert_string_equal(t.field[3][smem], ""); /* cublas, row 2 */
  assert_string_equal(t.field[3][blocks], "");
  /* `work`: empty where the plan has one block per tile. */
  int work = -1;
  for (int f = 0; f < t.fields[0]; ++f)
    if (strcmp(t.field[0][f], "work") == 0) work = f;
  assert_true(work >= 0);
  assert_string_equal(t.field[0][work - 1], "runs");
  assert_string_equal(t.field[2][work], "");
  free(text);
}

/* A row's layout: op and batch in every format, the strides in CSV and
 * JSON where there is a batch (absent for one GEMM), and the table's batch
 * cell naming the strides that are not dense. */
static void test_result_row_layout(void **state) {
  (void)state;
  int op = -1, batch_text = -1, batch = -1, stride_b = -1;
  for (int c = 0; c < pgc_result_column_count; ++c) {
    if (strcmp(pgc_result_columns[c].key, "op") == 0) op = c;
    if (strcmp(pgc_result_columns[c].key, "batch_text") == 0) batch_text = c;
    if (strcmp(pgc_result_columns[c].key, "batch") == 0) batch = c;
    if (strcmp(pgc_result_columns[c].key, "stride_b") == 0) stride_b = c;
  }
  assert_true(op >= 0 && batch_text >= 0 && batch >= 0 && stride_b >= 0);
  assert_int_equal(pgc_result_columns[op].show, PGC_SHOW_ALL);
  assert_int_equal(pgc_result_columns[batch_text].show, PGC_SHOW_TABLE);
  assert_int_equal(pgc_result_columns[batch].show, PGC_SHOW_DATA);
  assert_int_equal(pgc_result_columns[stride_b].show, PGC_SHOW_DATA);

  pgc_result_row row;
  pgc_cell cells[PGC_MAX_COLUMNS];
  pgc_result_row_init(&row, "cp_async", 2, 64, 32, 16);
  pgc_result_row_cells(&row, cells);
  assert_string_equal(cells[op].text, "NN");
  assert_string_equal(cells[batch_text].text, "1");
  assert_int_equal(cells[batch].kind, PGC_CELL_INTEGER);
  assert_int_equal(cells[batch].integer, 1);
  assert_int_equal(cells[stride_b].kind, PGC_CELL_ABSENT);

  const long long strides[3] = {512, 0, 2048};
  pgc_result_row_set_layout(&row, 1, 0, 16, strides, 2u /* stride_b alone */);
  pgc_result_row_cells(&row, cells);
  assert_string_equal(cells[op].text, "TN");
  assert_string_equal(cells[batch_text].text, "16 stride_b=0");
  assert_int_equal(cells[batch].integer, 16);
  assert_int_equal(cells[stride_b].kind, PGC_CELL_INTEGER);
  assert_int_equal(cells[stride_b].integer, 0);
  assert_int_equal(cells[stride_b - 1].integer, 512);
  pgc_result_row_set_layout(&row, 0, 1, 3, strides, 7u);
  assert_string_equal(row.batch_text, "3 stride_a=512 stride_b=0 stride_c=2048");
  assert_string_equal(row.op, "NT");
}

/* Ratios relate rows of one shape and layout: cuBLAS at NT is no measure of
 * an NN row, nor a batch of 4 of one GEMM, nor a shared B of a dense one. */
static void test_result_rows_relate_layouts(void **state) {
  (void)state;
  enum { ROWS = 6 };
  pgc_result_row rows[ROWS];
  const long long dense[3] = {4096, 4096, 4096}, shared_b[3] = {4096, 0, 4096};
  for (int r = 0; r < ROWS; ++r)
    pgc_result_row_init(&rows[r], r % 2 ? "cp_async_any" : "cublas", 3, 64, 64, 64);
  pgc_result_row_set_layout(&rows[0], 0, 1, 1, dense, 0);        /* cublas NT */
  pgc_result_row_set_layout(&rows[1], 0, 0, 1, dense, 0);        /* cp_async_any NN */
  pgc_result_row_set_layout(&rows[2], 0, 0, 4, dense, 0);        /* cublas NN x4 */
  pgc_result_row_set_layout(&rows[3], 0, 0, 4, shared_b, 2u);    /* cp_async_any NN x4, B shared */
  pgc_result_row_set_layout(&rows[4], 0, 0, 4, shared_b, 2u);    /* cublas, the same */
  pgc_result_row_set_layout(&rows[5], 0, 1, 1, dense, 0);        /* cp_async_any NT */
  for (int r = 0; r < ROWS; ++r) rows[r].median_ms = 1.0 + r;
  pgc_result_rows_relate(rows, ROWS, "baseline", "cublas", "cublas_tf32");
  assert_true(isnan(rows[1].x_cublas)); /* no cublas NN of one GEMM */
  assert_float_equal(rows[3].x_cublas, 5.0 / 4.0, 1e-12);
  assert_float_equal(rows[5].x_cublas, 1.0 / 6.0, 1e-12);
  assert_float_equal(rows[2].x_cublas, 1.0, 1e-12);
}

/* ---- the summary of a shape set ----------------------------------------------- */

/* A run's row at one shape, timed at `ms` (NaN: not timed), else as given. */
static void set_row(pgc_result_row *row, const pgc_run_spec *run, int size,
                    double ms, pgc_verdict verdict) {
  pgc_result_row_init(row, run->variant->name, run->stages, size, size, size);
  row->median_ms = ms;
  pgc_result_row_set_verdict(row, verdict, verdict == PGC_VERDICT_SKIP ? "needs CC 9.0" : NULL);
}

static void test_geomeans(void **state) {
  (void)state;
  enum { RUNS = 6, SHAPES = 3 };
  const pgc_run_spec runs[RUNS] = {
      {pg_variant_find("cublas"), 1},   {pg_variant_find("tma_ws"), 3},
      {pg_variant_find("cp_async"), 2}, {pg_variant_find("cp_async"), 3},
      {pg_variant_find("auto"), 0},     {pg_variant_find("tma"), 4},
  };
  for (int r = 0; r < RUNS; ++r) assert_non_null(runs[r].variant);
  pgc_result_row rows[SHAPES * RUNS];
  pgc_result_row *at[SHAPES] = {&rows[0], &rows[RUNS], &rows[2 * RUNS]};
  /* 64: everything but tma ran. */
  set_row(&at[0][0], &runs[0], 64, 1.0, PGC_VERDICT_PASS);
  set_row(&at[0][1], &runs[1], 64, 2.0, PGC_VERDICT_PASS);  /* × 0.5 */
  set_row(&at[0][2], &runs[2], 64, 4.0, PGC_VERDICT_PASS);  /* × 0.25 */
  set_row(&at[0][3], &runs[3], 64, 1.0, PGC_VERDICT_PASS);  /* × 1 */
  set_row(&at[0][4], &runs[4], 64, 0.5, PGC_VERDICT_PASS);  /* × 2 */
  at[0][4].runs = "tma_ws";
  at[0][4].stages = 3; /* what auto chose: not what tells its runs apart */
  set_row(&at[0][5], &runs[5], 64, NAN, PGC_VERDICT_SKIP);
  /* 128: tma_ws skipped, cp_async at 3 failed its check (timed all the same). */
  set_row(&at[1][0], &runs[0], 128, 2.0, PGC_VERDICT_PASS);
  set_row(&at[1][1], &runs[1], 128, NAN, PGC_VERDICT_SKIP);
  set_row(&at[1][2], &runs[2], 128, 4.0, PGC_VERDICT_PASS); /* × 0.5 */
  set_row(&at[1][3], &runs[3], 128, 1.0, PGC_VERDICT_FAIL); /* × 2, left out */
  set_row(&at[1][4], &runs[4], 128, 1.0, PGC_VERDICT_PASS); /* × 2 */
  at[1][4].runs = "tma";
  at[1][4].stages = 4;
  set_row(&at[1][5], &runs[5], 128, NAN, PGC_VERDICT_SKIP);
  /* 256: cuBLAS failed to run, so nothing is measured against it here. */
  for (int r = 0; r < RUNS; ++r)
    set_row(&at[2][r], &runs[r], 256, r == 0 ? NAN : 1.0, r == 0 ? PGC_VERDICT_ERROR : PGC_VERDICT_PASS);
  pgc_result_rows_relate(rows, SHAPES * RUNS, "baseline", "cublas", "cublas_tf32");

  pgc_geomean means[RUNS];
  assert_int_equal(pgc_geomeans(rows, RUNS, SHAPES, "cublas", means), 2);
  assert_int_equal(means[0].shapes, 2);
  assert_float_equal(means[0].geomean, 1.0, 1e-12);
  assert_int_equal(means[1].shapes, 1);
  assert_float_equal(means[1].geomean, 0.5, 1e-12);
  assert_int_equal(means[2].shapes, 2);
  assert_float_equal(means[2].geomean, sqrt(0.25 * 0.5), 1e-12);
  assert_int_equal(means[3].shapes, 1);
  assert_float_equal(means[3].geomean, 1.0, 1e-12);
  assert_int_equal(means[4].shapes, 2);
  assert_float_equal(means[4].geomean, 2.0, 1e-12);
  assert_int_equal(means[5].shapes, 0);
  assert_true(isnan(means[5].geomean));

  static const char expected[] =
      "geometric mean of × cuBLAS over 2 shapes: tma_ws 0.50 (1 shape), "
      "cp_async at 2 stages 0.35, cp_async at 3 stages 1.00 (1 shape), auto 2.00, "
      "tma - (0 shapes)";
  char note[512];
  size_t len = pgc_geomean_note(note, sizeof note, runs, means, RUNS, 2, "cublas");
  assert_string_equal(note, expected);
  assert_int_equal(len, strlen(expected));
  /* Measured without a buffer; cut short, but terminated, in a small one. */
  assert_int_equal(pgc_geomean_note(NULL, 0, runs, means, RUNS, 2, "cublas"), len);
  char small[16];
  assert_int_equal(pgc_geomean_note(small, sizeof small, runs, means, RUNS, 2, "cublas"),
                   len);
  assert_int_equal(strlen(small), sizeof small - 1);
  assert_memory_equal(small, expected, sizeof small - 1);

  /* cuBLAS timed nowhere (or not asked for): the note says there is no mean. */
  pgc_geomean_note(note, sizeof note, runs, means, RUNS, 0, "cublas");
  assert_string_equal(note, "geometric mean of × cuBLAS: none, cublas was timed at no shape");
  /* Every run at every shape: no counts after the means; one shape. */
  pgc_geomean all[2] = {{1.0, 1}, {0.871, 1}};
  pgc_geomean_note(note, sizeof note, &runs[3], all, 2, 1, "cublas");
  assert_string_equal(note, "geometric mean of × cuBLAS over 1 shape: cp_async 1.00, auto 0.87");
  /* Nothing beside cuBLAS: no note. */
  assert_int_equal(pgc_geomean_note(note, sizeof note, runs, means, 1, 2, "cublas"), 0);
  assert_string_equal(note, "");

  /* A TF32 set: cublas_tf32 the unit, its rows' x_cublas_tf32 the ratios. */
  const pgc_run_spec tf32_runs[2] = {{pg_variant_find("cublas_tf32"), 1},
                                     {pg_variant_find("auto_tf32"), 0}};
  pgc_result_row tf32_rows[4];
  set_row(&tf32_rows[0], &tf32_runs[0], 64, 1.0, PGC_VERDICT_PASS);
  set_row(&tf32_rows[1], &tf32_runs[1], 64, 2.0, PGC_VERDICT_PASS); /* × 0.5 */
  set_row(&tf32_rows[2], &tf32_runs[0], 128, 1.0, PGC_VERDICT_PASS);
  set_row(&tf32_rows[3], &tf32_runs[1], 128, 0.5, PGC_VERDICT_PASS); /* × 2 */
  pgc_result_rows_relate(tf32_rows, 4, "baseline", "cublas", "cublas_tf32");
  pgc_geomean tf32_means[2];
  assert_int_equal(pgc_geomeans(tf32_rows, 2, 2, "cublas", tf32_means), 0);
  assert_int_equal(pgc_geomeans(tf32_rows, 2, 2, "cublas_tf32", tf32_means), 2);
  assert_float_equal(tf32_means[1].geomean, 1.0, 1e-12);
  pgc_geomean_note(note, sizeof note, tf32_runs, tf32_means, 2, 2, "cublas_tf32");
  assert_string_equal(note, "geometric mean of × cuBLAS TF32 over 2 shapes: auto_tf32 1.00");
}

/* ---- the arithmetic behind TFLOP/s and % of peak ------------------------------ */

static void test_flop_arithmetic(void **state) {
  (void)state;
  assert_int_equal(pgc_fp32_lanes_per_sm(7, 0), 64);
  assert_int_equal(pgc_fp32_lanes_per_sm(7, 5), 64);
  assert_int_equal(pgc_fp32_lanes_per_sm(8, 0), 64);
  assert_int_equal(pgc_fp32_lanes_per_sm(8, 6), 128);
  assert_int_equal(pgc_fp32_lanes_per_sm(8, 9), 128);
  assert_int_equal(pgc_fp32_lanes_per_sm(9, 0), 128);
  assert_int_equal(pgc_fp32_lanes_per_sm(10, 0), 128);
  assert_int_equal(pgc_fp32_lanes_per_sm(6, 1), 0);
  /* H200: 132 SMs x 128 lanes x 2 x 1980 MHz. */
  assert_float_equal(pgc_ffma_peak_tflops(9, 0, 132, 1980.0), 66.90816, 1e-9);
  assert_true(isnan(pgc_ffma_peak_tflops(9, 0, 132, 0.0)));
  assert_true(isnan(pgc_ffma_peak_tflops(6, 1, 20, 1500.0)));
  /* The write-up's baseline: 2048^3 in 2.296 ms is 7484 GFLOPS. */
  assert_float_equal(pgc_gemm_tflops(2048, 2048, 2048, 2.296), 7.4825, 1e-3);
  assert_true(isnan(pgc_gemm_tflops(64, 64, 64, 0.0)));
  /* A batch counts every GEMM: 1024 of 64^3 in 0.1 ms. */
  assert_float_equal(pgc_batch_tflops(64, 64, 64, 1024, 0.1), 2.0 * 64 * 64 * 64 * 1024 / 1e8,
                     1e-12);
  assert_true(pgc_batch_tflops(2048, 2048, 2048, 1, 2.296) ==
              pgc_gemm_tflops(2048, 2048, 2048, 2.296));
  char buf[16];
  pgc_cuda_version_text(12080, buf, sizeof buf);
  assert_string_equal(buf, "12.8");
  pgc_cuda_version_text(13000, buf, sizeof buf);
  assert_string_equal(buf, "13.0");
  pgc_cuda_version_text(0, buf, sizeof buf);
  assert_string_equal(buf, "unknown");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_result_row),
      cmocka_unit_test(test_work_column),
      cmocka_unit_test(test_result_rows_relate),
      cmocka_unit_test(test_result_row_layout),
      cmocka_unit_test(test_result_rows_relate_layouts),
      cmocka_unit_test(test_geomeans),
      cmocka_unit_test(test_flop_arithmetic),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
