/* `pipegemm profile`'s report: the text table, one row per metric and one
 * column per run and published reference (in tables of at most TABLE_RUNS
 * columns), and CSV and JSON, one row per run and reference and one column
 * per metric; with the facts of the GPU and ncu, and the notes on units,
 * method and each run not profiled. */
#include "profile_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/report.h"
#include "output.h"

/* Runs per text table: more columns would not fit a terminal. */
#define TABLE_RUNS 8
#define CELL_TEXT_SIZE 48
/* Counts from this size up are printed with thousands separators. */
#define GROUP_FROM 10000.0

/* One value column of the text table: a run or a reference. */
typedef struct {
  const char *title;
  const double *values;
} value_column;

/* A value as the text table shows it: the metric's decimals, counts with
 * thousands separators, "-" when absent. */
static void format_value(double value, int decimals, char *buf, size_t size) {
  if (!isfinite(value)) {
    snprintf(buf, size, "-");
    return;
  }
  if (decimals > 0 || fabs(value) < GROUP_FROM) {
    snprintf(buf, size, "%.*f", decimals, value);
    return;
  }
  char digits[CELL_TEXT_SIZE];
  snprintf(digits, sizeof digits, "%.0f", value);
  const char *p = digits;
  size_t out = 0;
  if (*p == '-') {
    if (out + 1 < size) buf[out++] = '-';
    ++p;
  }
  size_t len = strlen(p);
  for (size_t i = 0; i < len && out + 2 < size; ++i) {
    if (i > 0 && (len - i) % 3 == 0) buf[out++] = ',';
    buf[out++] = p[i];
  }
  buf[out] = '\0';
}

static const char *const unit_notes[] = {
    "KB are 1000 bytes, as ncu and the write-up print them. cycles/inst: warp "
    "cycles per issued instruction spent in that state; the stall rows are "
    "parts of Warp Cycles / Issued Instruction.",
    "Excessive wavefronts and sectors: ncu's count minus its ideal count for "
    "the same accesses; the ratios divide them by the count (ncu's "
    "UncoalescedSharedAccess and UncoalescedGlobalAccess rules).",
};
#define UNIT_NOTES ((int)(sizeof unit_notes / sizeof unit_notes[0]))

static int build_facts(const report_context *ctx, pgc_fact *facts) {
  const pgc_profile_config *config = ctx->config;
  int i = 0;
  facts[i++] = (pgc_fact){"gpu", "GPU (from ncu)",
                          pgc_cell_text(ctx->gpu.gpu[0] ? ctx->gpu.gpu : NULL),
                          0, NULL, PGC_SHOW_ALL};
  facts[i++] = (pgc_fact){"device", "device", pgc_cell_int(config->device), 0,
                          NULL, PGC_SHOW_ALL};
  facts[i++] = (pgc_fact){"cc", "compute capability",
                          pgc_cell_text(ctx->gpu.cc[0] ? ctx->gpu.cc : NULL), 0,
                          NULL, PGC_SHOW_ALL};
  facts[i++] = (pgc_fact){"shape", "shape", pgc_cell_text(ctx->shape), 0, NULL,
                          PGC_SHOW_TABLE};
  facts[i++] = (pgc_fact){"m", "", pgc_cell_int(config->m), 0, NULL, PGC_SHOW_DATA};
  facts[i++] = (pgc_fact){"n", "", pgc_cell_int(config->n), 0, NULL, PGC_SHOW_DATA};
  facts[i++] = (pgc_fact){"k", "", pgc_cell_int(config->k), 0, NULL, PGC_SHOW_DATA};
  facts[i++] = (pgc_fact){"ncu", "ncu", pgc_cell_text(ctx->ncu), 0, NULL,
                          PGC_SHOW_ALL};
  facts[i++] = (pgc_fact){"ncu_version", "ncu version",
                          pgc_cell_text(ctx->ncu_version), 0, NULL, PGC_SHOW_ALL};
  facts[i++] = (pgc_fact){"command_line", "command",
                          pgc_cell_text(ctx->command_line), 0, NULL, PGC_SHOW_ALL};
  facts[i++] = (pgc_fact){"date", "date", pgc_cell_text(ctx->date), 0, NULL,
                          PGC_SHOW_ALL};
  return i;
}
#define MAX_FACTS 16

/* All notes in order: method, units, runs, the caller's. */
static int build_notes(const report_context *ctx, const char **notes,
                       int capacity) {
  int count = 0;
  if (count < capacity) notes[count++] = ctx->method_note;
  for (int i = 0; i < UNIT_NOTES && count < capacity; ++i)
    notes[count++] = unit_notes[i];
  if (ctx->fallback_note[0] && count < capacity) notes[count++] = ctx->fallback_note;
  for (int i = 0; i < ctx->run_note_count && count < capacity; ++i)
    notes[count++] = ctx->run_notes[i];
  for (int i = 0; ctx->extras && i < ctx->extras->note_count && count < capacity; ++i)
    notes[count++] = ctx->extras->notes[i];
  return count;
}

/* The text table: one row per metric, one column per run and reference, in
 * tables of at most TABLE_RUNS columns. */
static int print_text(const report_context *ctx, const value_column *columns,
                      int column_count, const char **notes, int note_count) {
  const pgc_fact *no_facts = NULL;
  pgc_fact facts[MAX_FACTS];
  int fact_count = build_facts(ctx, facts);
  int chunks = column_count == 0 ? 1 : (column_count + TABLE_RUNS - 1) / TABLE_RUNS;
  for (int chunk = 0; chunk < chunks; ++chunk) {
    int first = chunk * TABLE_RUNS;
    int shown = column_count - first < TABLE_RUNS ? column_count - first : TABLE_RUNS;
    if (shown < 0) shown = 0;
    int width = 2 + shown;
    pgc_column table_columns[2 + TABLE_RUNS];
    table_columns[0] = (pgc_column){"metric", "metric", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL};
    table_columns[1] = (pgc_column){"unit", "unit", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL};
    for (int c = 0; c < shown; ++c)
      table_columns[2 + c] = (pgc_column){"value", columns[first + c].title,
                                          PGC_ALIGN_RIGHT, 0, PGC_SHOW_ALL};
    size_t cell_count = (size_t)pgc_ncu_metric_count * (size_t)width;
    pgc_cell *cells = calloc(cell_count, sizeof *cells);
    char (*texts)[CELL_TEXT_SIZE] = calloc(cell_count, sizeof *texts);
    if (!cells || !texts) {
      free(cells);
      free(texts);
      fprintf(stderr, "pipegemm: out of host memory\n");
      return PGC_EXIT_FAILED;
    }
    for (int r = 0; r < pgc_ncu_metric_count; ++r) {
      const pgc_ncu_metric *metric = &pgc_ncu_metrics[r];
      pgc_cell *row = &cells[(size_t)r * width];
      row[0] = pgc_cell_text(metric->label);
      row[1] = pgc_cell_text(metric->unit);
      for (int c = 0; c < shown; ++c) {
        char *text = texts[(size_t)r * width + 2 + c];
        format_value(columns[first + c].values[r], metric->decimals, text,
                     CELL_TEXT_SIZE);
        row[2 + c] = pgc_cell_text(text);
      }
    }
    pgc_report report = {
        .command = ctx->extras->command,
        .facts = chunk == 0 ? facts : no_facts,
        .fact_count = chunk == 0 ? fact_count : 0,
        .columns = table_columns,
        .column_count = width,
        .cells = cells,
        .row_count = pgc_ncu_metric_count,
        .notes = notes,
        .note_count = chunk == chunks - 1 ? note_count : 0,
    };
    if (chunk > 0) fputc('\n', pgc_stdout());
    pgc_print_table(pgc_stdout(), &report);
    free(cells);
    free(texts);
  }
  return PGC_EXIT_OK;
}

/* CSV and JSON: one row per run and reference, one column per metric. */
#define DATA_FIXED_COLUMNS 8
static const pgc_column data_fixed_columns[DATA_FIXED_COLUMNS] = {
    {"source", "source", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    {"variant", "variant", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    {"stages", "stages", PGC_ALIGN_RIGHT, 0, PGC_SHOW_ALL},
    {"m", "M", PGC_ALIGN_RIGHT, 0, PGC_SHOW_ALL},
    {"n", "N", PGC_ALIGN_RIGHT, 0, PGC_SHOW_ALL},
    {"k", "K", PGC_ALIGN_RIGHT, 0, PGC_SHOW_ALL},
    {"status", "status", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    {"kernel", "kernel", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
};

/* The fixed cells and the metrics of a measured run. */
static void measured_cells(const report_context *ctx, const profile_row *run,
                           pgc_cell *row) {
  int i = 0;
  int profiled = run->status == RUN_PROFILED;
  row[i++] = pgc_cell_text("measured");
  row[i++] = pgc_cell_text(run->variant->name);
  row[i++] = pgc_cell_int(run->stages);
  row[i++] = pgc_cell_int(ctx->config->m);
  row[i++] = pgc_cell_int(ctx->config->n);
  row[i++] = pgc_cell_int(ctx->config->k);
  row[i++] = pgc_cell_text(profiled ? "profiled" : run->note);
  row[i++] = profiled ? pgc_cell_text(run->kernel) : pgc_cell_absent();
  for (int m = 0; m < pgc_ncu_metric_count; ++m) row[i++] = pgc_cell_real(run->values[m]);
}

/* The same for published figures. */
static void reference_cells(const pgc_profile_reference *ref, pgc_cell *row) {
  int i = 0;
  row[i++] = pgc_cell_text(ref->source);
  row[i++] = pgc_cell_text(ref->variant);
  row[i++] = pgc_cell_int(ref->stages);
  row[i++] = pgc_cell_int(ref->m);
  row[i++] = pgc_cell_int(ref->n);
  row[i++] = pgc_cell_int(ref->k);
  row[i++] = pgc_cell_text("published");
  row[i++] = pgc_cell_absent();
  for (int m = 0; m < pgc_ncu_metric_count; ++m) row[i++] = pgc_cell_real(ref->values[m]);
}

static int print_data(const report_context *ctx, const profile_row *rows,
                      int row_count, const char **notes, int note_count) {
  const pgc_profile_extras *extras = ctx->extras;
  int width = DATA_FIXED_COLUMNS + pgc_ncu_metric_count;
  int total = row_count + extras->reference_count;
  pgc_column *columns = calloc((size_t)width, sizeof *columns);
  pgc_cell *cells = calloc((size_t)(total > 0 ? total : 1) * (size_t)width,
                           sizeof *cells);
  if (!columns || !cells) {
    free(columns);
    free(cells);
    fprintf(stderr, "pipegemm: out of host memory\n");
    return PGC_EXIT_FAILED;
  }
  for (int c = 0; c < DATA_FIXED_COLUMNS; ++c) columns[c] = data_fixed_columns[c];
  for (int i = 0; i < pgc_ncu_metric_count; ++i)
    columns[DATA_FIXED_COLUMNS + i] =
        (pgc_column){pgc_ncu_metrics[i].key, pgc_ncu_metrics[i].label,
                     PGC_ALIGN_RIGHT, pgc_ncu_metrics[i].decimals, PGC_SHOW_ALL};
  for (int r = 0; r < row_count; ++r) measured_cells(ctx, &rows[r], &cells[(size_t)r * width]);
  for (int r = row_count; r < total; ++r)
    reference_cells(&extras->references[r - row_count], &cells[(size_t)r * width]);
  pgc_fact facts[MAX_FACTS];
  pgc_report report = {
      .command = extras->command,
      .facts = facts,
      .fact_count = build_facts(ctx, facts),
      .columns = columns,
      .column_count = width,
      .cells = cells,
      .row_count = total,
      .notes = notes,
      .note_count = note_count,
  };
  pgc_print_report(pgc_stdout(), ctx->opts->format, &report);
  free(columns);
  free(cells);
  return PGC_EXIT_OK;
}

int pgc_profile_print_report(report_context *ctx, const profile_row *rows,
                             int row_count) {
  const pgc_profile_extras *extras = ctx->extras;
  int column_count = row_count + extras->reference_count;
  value_column *columns =
      calloc((size_t)(column_count > 0 ? column_count : 1), sizeof *columns);
  int note_capacity = 2 + UNIT_NOTES + ctx->run_note_count + extras->note_count;
  const char **notes = calloc((size_t)note_capacity, sizeof *notes);
  if (!columns || !notes) {
    free(columns);
    free(notes);
    fprintf(stderr, "pipegemm: out of host memory\n");
    return PGC_EXIT_FAILED;
  }
  for (int r = 0; r < row_count; ++r)
    columns[r] = (value_column){rows[r].title, rows[r].values};
  for (int r = 0; r < extras->reference_count; ++r)
    columns[row_count + r] = (value_column){extras->references[r].title,
                                            extras->references[r].values};
  int note_count = build_notes(ctx, notes, note_capacity);
  int rc = ctx->opts->format == PGC_FORMAT_TABLE
               ? print_text(ctx, columns, column_count, notes, note_count)
               : print_data(ctx, rows, row_count, notes, note_count);
  free(columns);
  free(notes);
  return rc;
}
