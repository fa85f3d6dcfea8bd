/* `pipegemm profile` and the profiler table of `study pipelining --profile`.
 *
 * For each (variant, stage count): build the ncu command line (ncu.c), run
 * it (proc.c), keep everything it printed (--raw), and read the first
 * profiled kernel out of it. ncu profiles this very executable running
 * `bench` for one launch, so the counters belong to the kernel bench times.
 * The parent process touches the GPU only to ask what a selector (auto)
 * runs: a GPU it cannot use, counters it may not read and kernels it did
 * not see are all reported by ncu or by the profiled program, and told
 * apart here from what they printed. */
#include "profile.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/session.h"
#include "commands.h"
#include "measure/report.h"
#include "output.h"
#include "introspect.h"
#include "adapters/proc.h"

#define DEFAULT_NCU "/usr/local/cuda/bin/ncu"
/* After $PATH: the toolkit's ncu, then where Nsight Compute installs itself
 * when the toolkit's bin/ has no link to it; of a pattern, the last match
 * (the newest version) wins. */
static const char *const ncu_install_paths[] = {
    DEFAULT_NCU,
    "/opt/nvidia/nsight-compute/*/ncu",
    "/usr/local/cuda/nsight-compute*/ncu",
    "/usr/local/cuda-*/nsight-compute*/ncu",
    NULL,
};
#define NCU_ENV "PG_NCU"
#define PATH_SIZE 4096
#define COMMAND_SIZE 8192
/* Runs per text table: more columns would not fit a terminal. */
#define TABLE_RUNS 8
#define CELL_TEXT_SIZE 48
#define TITLE_SIZE 64
/* A note on a run: its title, ": " and why it was not profiled, each whole. */
#define RUN_NOTE_SIZE (TITLE_SIZE + sizeof ": " - 1 + PGC_PROFILE_TEXT_SIZE)
/* Counts from this size up are printed with thousands separators. */
#define GROUP_FROM 10000.0
/* Exit status of a shell that could not find or run a command. */
#define SHELL_NOT_EXECUTABLE 126
#define SHELL_NOT_FOUND 127

/* ---- text helpers ----------------------------------------------------------- */

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

/* Where `needle` first occurs in `text`, ignoring ASCII case; NULL if not. */
static const char *find_ci(const char *text, const char *needle) {
  size_t len = strlen(needle);
  for (const char *p = text; *p; ++p) {
    size_t i = 0;
    while (i < len && p[i] && lower((unsigned char)p[i]) == lower((unsigned char)needle[i]))
      ++i;
    if (i == len) return p;
  }
  return NULL;
}

/* Copies the line of `text` around `at` into buf, trimmed. */
static void copy_line_at(const char *text, const char *at, char *buf,
                         size_t size) {
  const char *start = at;
  while (start > text && start[-1] != '\n') --start;
  const char *end = strchr(at, '\n');
  size_t len = end ? (size_t)(end - start) : strlen(start);
  while (len > 0 && (*start == ' ' || *start == '\t')) {
    ++start;
    --len;
  }
  while (len > 0 && (start[len - 1] == '\r' || start[len - 1] == ' ')) --len;
  if (len >= size) len = size - 1;
  memcpy(buf, start, len);
  buf[len] = '\0';
}

/* The first line holding `needle` (any case), into buf; 0 if none. */
static int line_with(const char *text, const char *needle, char *buf,
                     size_t size) {
  const char *at = find_ci(text, needle);
  if (!at) return 0;
  copy_line_at(text, at, buf, size);
  return 1;
}

/* The last line that is not blank; "" if none. */
static void last_line(const char *text, char *buf, size_t size) {
  const char *end = text + strlen(text);
  while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
    --end;
  buf[0] = '\0';
  if (end == text) return;
  copy_line_at(text, end - 1, buf, size);
}

/* ---- finding ncu and ourselves ----------------------------------------------- */

int pgc_profile_find_ncu(const char *option, char *buf, size_t size) {
  pgc_tool_search search = {"ncu", option, "--ncu", NCU_ENV, ncu_install_paths, 1};
  int rc = pgc_find_tool(&search, buf, size, NULL);
  if (rc == PGC_TOOL_NOT_FOUND)
    snprintf(buf, size,
             "no ncu on PATH, at " DEFAULT_NCU " or under /opt/nvidia/nsight-compute; "
             "give --ncu PATH or set " NCU_ENV);
  return rc == PGC_TOOL_FOUND ? 0 : -1;
}

/* This executable, for ncu to run: /proc/self/exe, else argv[0]. */
static int find_self(const pgc_options *opts, char *buf, size_t size) {
  ssize_t len = readlink("/proc/self/exe", buf, size - 1);
  if (len > 0 && (size_t)len < size - 1) {
    buf[len] = '\0';
    return 0;
  }
  const char *argv0 = opts->argc > 0 && opts->argv ? opts->argv[0] : NULL;
  if (!argv0) return -1;
  if (strchr(argv0, '/')) {
    /* Relative to our working directory, which the shell ncu runs in
     * shares. */
    if (!pgc_is_executable(argv0) || strlen(argv0) >= size) return -1;
    snprintf(buf, size, "%s", argv0);
    return 0;
  }
  return pgc_find_in_path(argv0, buf, size);
}

/* ---- running ncu ------------------------------------------------------------- */

/* Everything `command` prints, stdout and stderr in one text (ncu writes its
 * ==PROF== and ==ERROR== lines to either, depending on the version), and
 * its exit code. Returns 0, or -1 after printing why it could not run. */
static int capture(const char *command, pgc_proc_result *result) {
  char err[PGC_PROFILE_TEXT_SIZE];
  pgc_proc_options merged = {NULL, 0, 1};
  if (pgc_proc_run(command, &merged, result, err, sizeof err) != 0) {
    fprintf(stderr, "pipegemm: running ncu failed: %s\n", err);
    return -1;
  }
  return 0;
}

/* "Version 2025.3.0.0 (build ...)" from `ncu --version`; "unknown" if not. */
static void ncu_version(const char *ncu, char *buf, size_t size) {
  char command[PATH_SIZE + 32] = "";
  snprintf(buf, size, "unknown");
  if (pgc_shell_append(command, sizeof command, ncu) != 0 ||
      pgc_shell_append(command, sizeof command, "--version") != 0)
    return;
  pgc_proc_result result;
  if (capture(command, &result) != 0) return;
  if (result.exit_code == 0 && !line_with(result.out, "version", buf, size))
    last_line(result.out, buf, size);
  if (!buf[0]) snprintf(buf, size, "unknown");
  pgc_proc_result_free(&result);
}

/* ---- one run ------------------------------------------------------------------ */

typedef enum {
  RUN_PROFILED = 0,
  RUN_SKIPPED, /* the profiled program says this GPU cannot run it */
  RUN_MISSING  /* ncu profiled no kernel */
} run_status;

typedef struct {
  const pg_variant_info *variant;
  int stages;
  run_status status;
  char note[PGC_PROFILE_TEXT_SIZE];   /* why not profiled */
  char kernel[PGC_PROFILE_TEXT_SIZE]; /* the kernel ncu profiled */
  char title[TITLE_SIZE];             /* column heading */
  double values[PGC_PROFILE_MAX_METRICS];
} profile_row;

/* The verdict cell of the bench CSV the profiled program printed, if any. */
static int bench_verdict(const char *text, char *buf, size_t size) {
  enum { MAX_FIELDS = 64 };
  const char *line = text;
  int verdict_column = -1;
  while (*line) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    if (len > 0 && line[len - 1] == '\r') --len;
    char *fields[MAX_FIELDS];
    char *cells = malloc(len + 2);
    if (!cells) return 0;
    int count = pgc_ncu_split_csv(line, len, cells, len + 2, fields, MAX_FIELDS);
    if (count > MAX_FIELDS) count = MAX_FIELDS;
    if (count > 1 && strcmp(fields[0], "variant") == 0) {
      verdict_column = -1;
      for (int i = 0; i < count; ++i)
        if (strcmp(fields[i], "verdict") == 0) verdict_column = i;
    } else if (verdict_column >= 0 && count > verdict_column &&
               line[0] != '#') {
      snprintf(buf, size, "%s", fields[verdict_column]);
      free(cells);
      return 1;
    }
    free(cells);
    if (!end) break;
    line = end + 1;
  }
  return 0;
}

/* Appends one run's command and output to the --raw file. */
static void write_raw(FILE *raw, const profile_row *row, int attempt,
                      const char *command, const char *text) {
  if (!raw) return;
  fprintf(raw, "# pipegemm profile: variant %s, stages %d, filter %d\n",
          row->variant->name, row->stages, attempt);
  fprintf(raw, "# command: %s\n", command);
  fputs(text, raw);
  size_t len = strlen(text);
  if (len == 0 || text[len - 1] != '\n') fputc('\n', raw);
}

/* Facts ncu reports about the GPU, from the first profiled kernel. */
typedef struct {
  char gpu[PGC_PROFILE_TEXT_SIZE];
  char cc[16];
  int known;
} gpu_facts;

static void read_gpu_facts(const pgc_ncu_result *result, gpu_facts *facts) {
  if (facts->known) return;
  const pgc_ncu_field *name = pgc_ncu_find(result, "device__attribute_display_name");
  const pgc_ncu_field *major =
      pgc_ncu_find(result, "device__attribute_compute_capability_major");
  const pgc_ncu_field *minor =
      pgc_ncu_find(result, "device__attribute_compute_capability_minor");
  if (name && name->text[0]) snprintf(facts->gpu, sizeof facts->gpu, "%s", name->text);
  if (major && minor && major->has_value && minor->has_value)
    snprintf(facts->cc, sizeof facts->cc, "%d.%d", (int)major->value,
             (int)minor->value);
  facts->known = 1;
}

/* What one ncu process gave. */
typedef enum {
  ONCE_PROFILED = 0, /* the row is filled */
  ONCE_SKIPPED,      /* the program skipped the variant; row->note says why */
  ONCE_NO_KERNEL,    /* nothing profiled; row->note says what ncu said */
  ONCE_REFUSED       /* as ONCE_NO_KERNEL, with an ==ERROR== from ncu */
} once_result;

/* When ncu cannot profile here at all (no access to the counters, no GPU it
 * can profile, ncu not runnable): prints one line and returns the exit
 * code; otherwise 0. */
static int profiler_unusable(const char *ncu, const pgc_proc_result *output) {
  char line[PGC_PROFILE_TEXT_SIZE];
  if (line_with(output->out, "ERR_NVGPUCTRPERM", line, sizeof line)) {
    fprintf(stderr,
            "pipegemm: ncu may not read this GPU's performance counters "
            "(ERR_NVGPUCTRPERM): run as root or set the driver option "
            "NVreg_RestrictProfilingToAdminUsers=0\n");
    return PGC_EXIT_NO_GPU;
  }
  if (line_with(output->out, "profiling is not supported", line, sizeof line) ||
      line_with(output->out, "no usable CUDA GPU", line, sizeof line)) {
    fprintf(stderr, "pipegemm: ncu cannot profile here: %s\n", line);
    return PGC_EXIT_NO_GPU;
  }
  int code = output->exit_code;
  if (code == SHELL_NOT_FOUND || code == SHELL_NOT_EXECUTABLE) {
    last_line(output->out, line, sizeof line);
    fprintf(stderr, "pipegemm: could not run ncu (%s, exit %d: %s)\n", ncu, code,
            line[0] ? line : "no output");
    return PGC_EXIT_NO_GPU;
  }
  return 0;
}

/* The row of the kernel ncu profiled. */
static void fill_profiled_row(const pgc_ncu_result *parsed, int code, profile_row *row,
                              gpu_facts *facts) {
  const pgc_ncu_field *kernel = pgc_ncu_find(parsed, "Kernel Name");
  snprintf(row->kernel, sizeof row->kernel, "%s",
           kernel && kernel->text[0] ? kernel->text : "?");
  for (int i = 0; i < pgc_ncu_metric_count; ++i)
    row->values[i] = pgc_ncu_derive(&pgc_ncu_metrics[i], parsed, NULL);
  read_gpu_facts(parsed, facts);
  if (code != 0)
    fprintf(stderr,
            "pipegemm: warning: %s: ncu exited with %d after profiling the "
            "kernel\n",
            row->variant->name, code);
}

/* "ncu profiled no kernel: <what ncu or the program said>", cut to fit. */
static void no_kernel_note(profile_row *row, const char *said) {
  static const char prefix[] = "ncu profiled no kernel: ";
  snprintf(row->note, sizeof row->note, "%s%.*s", prefix,
           (int)(sizeof row->note - sizeof prefix), said);
}

/* No kernel profiled: the program, or ncu, may have said why (row->note). */
static once_result explain_no_kernel(const pgc_proc_result *output, profile_row *row) {
  char line[PGC_PROFILE_TEXT_SIZE];
  char verdict[PGC_PROFILE_TEXT_SIZE];
  const char *text = output->out;
  if (bench_verdict(text, verdict, sizeof verdict) && strncmp(verdict, "SKIP", 4) == 0) {
    snprintf(row->note, sizeof row->note, "%s", verdict);
    return ONCE_SKIPPED;
  }
  if (line_with(text, "==ERROR==", line, sizeof line)) {
    no_kernel_note(row, line);
    return ONCE_REFUSED;
  }
  if (line_with(text, "no kernels were profiled", line, sizeof line) ||
      bench_verdict(text, line, sizeof line))
    no_kernel_note(row, line);
  else
    snprintf(row->note, sizeof row->note, "ncu profiled no kernel (exit %d)",
             output->exit_code);
  return ONCE_NO_KERNEL;
}

/* Runs ncu once for `job`. Returns 0 with *result, or the exit code to stop
 * with after printing one line (the profiler cannot work here at all, or a
 * system error). */
static int run_ncu_once(const pgc_ncu_job *job, FILE *raw, profile_row *row,
                        gpu_facts *facts, once_result *result) {
  char command[COMMAND_SIZE];
  if (pgc_ncu_command(job, command, sizeof command) != 0) {
    fprintf(stderr, "pipegemm: the ncu command line is too long (paths?)\n");
    return PGC_EXIT_FAILED;
  }
  pgc_proc_result output;
  if (capture(command, &output) != 0) return PGC_EXIT_FAILED;
  write_raw(raw, row, job->attempt, command, output.out);
  int rc = profiler_unusable(job->ncu, &output);
  if (rc != 0) {
    pgc_proc_result_free(&output);
    return rc;
  }
  pgc_ncu_result parsed;
  rc = pgc_ncu_parse_raw(output.out, &parsed);
  if (rc == -2) {
    fprintf(stderr, "pipegemm: out of host memory parsing ncu's output\n");
    pgc_proc_result_free(&output);
    return PGC_EXIT_FAILED;
  }
  if (rc == 0) {
    fill_profiled_row(&parsed, output.exit_code, row, facts);
    pgc_ncu_result_free(&parsed);
    *result = ONCE_PROFILED;
  } else {
    *result = explain_no_kernel(&output, row);
  }
  pgc_proc_result_free(&output);
  return PGC_EXIT_OK;
}

/* Profiles one run: each kernel filter of the variant in turn, each first
 * with the table's sections and, when ncu refuses that with an error, with
 * its full set, which the runs after it then use from the start (the
 * fallback note says so). Returns 0 (row->status says how it went), or the
 * exit code to stop with (the line already printed). */
static int run_one(const pgc_profile_config *config, const char *ncu,
                   const char *self, FILE *raw, profile_row *row,
                   gpu_facts *facts, char *fallback_note, size_t note_size) {
  int first_set = fallback_note[0] ? 1 : 0;
  const pg_kernel_spec *spec = pg_variant_kernel(row->variant);
  const char *kernel = spec ? spec->symbol : NULL; /* NULL: cublas */
  row->status = RUN_MISSING;
  snprintf(row->note, sizeof row->note, "ncu profiled no kernel");
  for (int attempt = 0;; ++attempt) {
    const char *name_base = NULL;
    char regex[PGC_PROFILE_TEXT_SIZE];
    if (pgc_ncu_kernel_filter(kernel, attempt, &name_base, regex,
                              sizeof regex) == 0)
      return PGC_EXIT_OK; /* every filter tried: RUN_MISSING stands */
    char refused[PGC_PROFILE_TEXT_SIZE] = ""; /* why the sections failed */
    for (int full_set = first_set; full_set <= PGC_NCU_FULL_SET_UNNAMED; ++full_set) {
      pgc_ncu_job job = {ncu,       self,      row->variant->name, kernel,
                         row->stages, config->m, config->n,
                         config->k, config->device, attempt, full_set};
      once_result result = ONCE_NO_KERNEL;
      int rc = run_ncu_once(&job, raw, row, facts, &result);
      if (rc != PGC_EXIT_OK) return rc;
      if (result == ONCE_PROFILED) {
        row->status = RUN_PROFILED;
        row->note[0] = '\0';
        if (full_set && fallback_note[0] == '\0')
          snprintf(fallback_note, note_size,
                   "%s and later: counters from ncu's full set%s, since ncu "
                   "refused the table's sections (%.160s)",
                   row->title,
                   full_set == PGC_NCU_FULL_SET_UNNAMED
                       ? " without the rows asked for by name (shown as -)"
                       : "",
                   refused);
        return PGC_EXIT_OK;
      }
      if (result == ONCE_SKIPPED) {
        row->status = RUN_SKIPPED;
        return PGC_EXIT_OK;
      }
      if (result != ONCE_REFUSED) break; /* no error: try the next filter */
      snprintf(refused, sizeof refused, "%s", row->note);
    }
  }
}

/* ---- printing ------------------------------------------------------------------ */

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

/* One value column of the text table: a run or a reference. */
typedef struct {
  const char *title;
  const double *values;
} value_column;

static const char *const unit_notes[] = {
    "KB are 1000 bytes, as ncu and the write-up print them. cycles/inst: warp "
    "cycles per issued instruction spent in that state; the stall rows are "
    "parts of Warp Cycles / Issued Instruction.",
    "Excessive wavefronts and sectors: ncu's count minus its ideal count for "
    "the same accesses; the ratios divide them by the count (ncu's "
    "UncoalescedSharedAccess and UncoalescedGlobalAccess rules).",
};
#define UNIT_NOTES ((int)(sizeof unit_notes / sizeof unit_notes[0]))

typedef struct {
  const pgc_options *opts;
  const pgc_profile_config *config;
  const pgc_profile_extras *extras;
  const char *ncu;
  char ncu_version[PGC_PROFILE_TEXT_SIZE];
  gpu_facts gpu;
  char shape[PGC_SHAPE_TEXT_SIZE];
  char command_line[PGC_COMMAND_LINE_SIZE];
  char date[PGC_HEADER_TEXT_SIZE];
  char method_note[PGC_COMMAND_LINE_SIZE];
  char fallback_note[PGC_COMMAND_LINE_SIZE / 2]; /* "" unless the full set was used */
  /* Notes on runs: one per run not profiled, and cublas's kernel. */
  char (*run_notes)[RUN_NOTE_SIZE];
  int run_note_count;
} report_context;

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

static int print_report(report_context *ctx, const profile_row *rows,
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

/* ---- the runs ------------------------------------------------------------------- */

static void run_title(const profile_row *row, char *buf, size_t size) {
  if (row->variant->min_stages == row->variant->max_stages)
    snprintf(buf, size, "%s", row->variant->name);
  else
    snprintf(buf, size, "%s (%d)", row->variant->name, row->stages);
}

static void method_note(report_context *ctx) {
  char sections[PGC_COMMAND_LINE_SIZE / 2] = "";
  const char *names[PGC_PROFILE_MAX_METRICS];
  int count = pgc_ncu_sections(names, PGC_PROFILE_MAX_METRICS);
  for (int i = 0; i < count && i < PGC_PROFILE_MAX_METRICS; ++i) {
    size_t used = strlen(sections);
    snprintf(sections + used, sizeof sections - used, "%s%s", i ? ", " : "",
             names[i]);
  }
  snprintf(ctx->method_note, sizeof ctx->method_note,
           "Each column: the first launch of its kernel in 'pipegemm bench' "
           "(one launch, no check), profiled by Nsight Compute at the GPU's "
           "own clocks (clock control none; kernel replay, caches flushed "
           "before each pass), sections %s. (N): stage count.",
           sections);
}

/* Runs ncu for each run in turn, filling its row and the run notes, until
 * one returns an exit code to stop with. Returns that code (0 when all ran);
 * *profiled and *missing count the runs profiled and those ncu found no
 * kernel for. */
static int profile_each(report_context *ctx, const pgc_run_spec *runs, int count,
                        const char *self, FILE *raw, profile_row *rows, int *profiled,
                        int *missing) {
  const pgc_profile_config *config = ctx->config;
  for (int i = 0; i < count; ++i) {
    profile_row *row = &rows[i];
    row->variant = runs[i].variant;
    row->stages = runs[i].stages;
    for (int m = 0; m < PGC_PROFILE_MAX_METRICS; ++m) row->values[m] = NAN;
    run_title(row, row->title, sizeof row->title);
    if (!config->quiet)
      fprintf(stderr, "[%d/%d] ncu: %s, %d stage%s, %s\n", i + 1, count,
              row->variant->name, row->stages, row->stages == 1 ? "" : "s",
              ctx->shape);
    int exit_code = run_one(config, ctx->ncu, self, raw, row, &ctx->gpu,
                            ctx->fallback_note, sizeof ctx->fallback_note);
    if (exit_code != PGC_EXIT_OK) return exit_code;
    if (row->status == RUN_PROFILED) {
      ++*profiled;
      if (strcmp(row->variant->name, PGC_CUBLAS_VARIANT) == 0)
        snprintf(ctx->run_notes[ctx->run_note_count++],
                 sizeof ctx->run_notes[0], "%s: ncu profiled %.200s",
                 row->title, row->kernel);
    } else {
      *missing += row->status == RUN_MISSING;
      snprintf(ctx->run_notes[ctx->run_note_count++], sizeof ctx->run_notes[0],
               "%s: %s", row->title, row->note);
    }
  }
  return PGC_EXIT_OK;
}

int pgc_profile_runs(const pgc_options *opts, const pgc_profile_config *config,
                     const pgc_run_spec *runs, int count,
                     const pgc_profile_extras *extras) {
  char ncu[PATH_SIZE], self[PATH_SIZE];
  if (pgc_profile_find_ncu(config->ncu_option, ncu, sizeof ncu) != 0) {
    fprintf(stderr, "pipegemm: Nsight Compute not found: %s\n", ncu);
    return PGC_EXIT_NO_GPU;
  }
  if (find_self(opts, self, sizeof self) != 0) {
    fprintf(stderr,
            "pipegemm: cannot find the pipegemm executable for ncu to run "
            "(/proc/self/exe and argv[0] failed)\n");
    return PGC_EXIT_FAILED;
  }
  report_context ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.opts = opts;
  ctx.config = config;
  ctx.extras = extras;
  ctx.ncu = ncu;
  snprintf(ctx.shape, sizeof ctx.shape, "%dx%dx%d", config->m, config->n,
           config->k);
  pgc_command_line_text(opts, ctx.command_line, sizeof ctx.command_line);
  pgc_date_text(ctx.date, sizeof ctx.date);
  method_note(&ctx);

  FILE *raw = NULL;
  if (config->raw_path) {
    raw = pgc_output_open(config->raw_path);
    if (!raw) {
      fprintf(stderr, "pipegemm: cannot write %s: %s\n", config->raw_path,
              strerror(errno));
      return PGC_EXIT_FAILED;
    }
  }
  ncu_version(ncu, ctx.ncu_version, sizeof ctx.ncu_version);
  if (raw) fprintf(raw, "# ncu: %s (%s)\n", ncu, ctx.ncu_version);

  int exit_code = PGC_EXIT_OK, profiled = 0, missing = 0;
  profile_row *rows = calloc((size_t)(count > 0 ? count : 1), sizeof *rows);
  ctx.run_notes = calloc((size_t)(count > 0 ? count : 1), sizeof *ctx.run_notes);
  if (!rows || !ctx.run_notes) {
    fprintf(stderr, "pipegemm: out of host memory\n");
    exit_code = PGC_EXIT_FAILED;
  }
  if (exit_code == PGC_EXIT_OK)
    exit_code = profile_each(&ctx, runs, count, self, raw, rows, &profiled, &missing);
  /* What ncu printed is kept whole or the command fails: a truncated file
   * would read as a run that printed less. */
  if (raw && pgc_output_close(raw, config->raw_path) != 0 && exit_code == PGC_EXIT_OK)
    exit_code = PGC_EXIT_FAILED;
  if (exit_code == PGC_EXIT_OK && profiled == 0 && missing > 0) {
    fprintf(stderr, "pipegemm: ncu profiled no kernel (%s: %s)\n",
            rows[0].title, rows[0].note);
    exit_code = PGC_EXIT_NO_GPU;
  }
  if (exit_code == PGC_EXIT_OK) {
    exit_code = print_report(&ctx, rows, count);
    if (exit_code == PGC_EXIT_OK && missing > 0) exit_code = PGC_EXIT_FAILED;
  }
  free(rows);
  free(ctx.run_notes);
  return exit_code;
}

/* ---- pipegemm profile --------------------------------------------------------- */

/* Stand-ins for A, B and C where a selector is asked what it runs: the
 * library looks at their addresses for the alignment alone, which dense
 * operands as bench allocates them have. */
static _Alignas(16) float stand_in[4];

pg_status pgc_selector_choice(const pg_variant_info *selector, int device, int m, int n, int k,
                              const float *a, int lda, const float *b, int ldb,
                              const pg_variant_info **variant, int *stages) {
  *variant = NULL;
  *stages = 0;
  const cudaError_t err = cudaSetDevice(device);
  if (err != cudaSuccess) {
    pg_clear_error_detail();
    return PG_ERR_NO_DEVICE;
  }
  if (strcmp(selector->name, "auto") == 0)
    return pg_auto_select(m, n, k, a, lda, b, ldb, variant, stages);
  /* pg_auto_select answers for auto alone; the others' choice is what
   * their plan runs, as bench's row names it. */
  pg_plan *plan = NULL;
  pg_status st = pg_plan_create(&plan, selector, 0, m, n, k, 1.0f, a, lda, b, ldb, 0.0f,
                                stand_in, ldb);
  if (st != PG_OK) return st;
  pg_plan_info info = PG_PLAN_INFO_INIT;
  st = pg_plan_describe(plan, &info);
  if (st == PG_OK) {
    *variant = info.variant; /* NULL: nothing to run */
    *stages = info.stages;
  }
  pg_plan_destroy(plan);
  return st;
}

/* The library's reason for a status, or the status's own words. */
static const char *status_reason(pg_status status) {
  const char *detail = pg_last_error_detail();
  return detail[0] != '\0' ? detail : pg_strerror(status);
}

int pgc_profile_resolve_selectors(const pgc_options *opts, pgc_run_spec *runs, int count,
                                  pgc_selector_query query, FILE *log,
                                  pgc_selectors_left_out *left_out) {
  memset(left_out, 0, sizeof *left_out);
  const int lda = opts->k > 1 ? opts->k : 1, ldb = opts->n > 1 ? opts->n : 1;
  int kept = 0;
  for (int i = 0; i < count; ++i) {
    pgc_run_spec run = runs[i];
    if (run.variant->kind == PG_KIND_SELECTOR) {
      const pg_variant_info *selector = run.variant, *chosen = NULL;
      int stages = 0;
      /* Where M or N is 0 a selector runs nothing, as pg_sgemm does; the
       * library says so too (PG_OK, no variant), but one older than that
       * named a candidate there, or failed, and it needs no GPU to know. */
      const pg_status status =
          opts->m == 0 || opts->n == 0
              ? PG_OK
              : query(selector, opts->device, opts->m, opts->n, opts->k, stand_in, lda,
                      stand_in, ldb, &chosen, &stages);
      if (status == PG_ERR_NO_DEVICE) {
        ++left_out->no_gpu;
        if (!opts->quiet)
          fprintf(log, "pipegemm: %s: left out (no GPU to ask what it runs)\n", selector->name);
        continue;
      }
      if (status != PG_OK) {
        ++left_out->failed;
        fprintf(log, "pipegemm: %s: left out (what it runs at %dx%dx%d is not known: %s)\n",
                selector->name, opts->m, opts->n, opts->k, status_reason(status));
        continue;
      }
      /* No kernel runs, so there is nothing of it to profile. */
      if (chosen == NULL) {
        ++left_out->nothing;
        if (!opts->quiet)
          fprintf(log, "pipegemm: %s: left out (it runs no kernel at %dx%dx%d%s)\n",
                  selector->name, opts->m, opts->n, opts->k,
                  opts->m == 0 || opts->n == 0 ? ": M or N is 0" : "");
        continue;
      }
      if (!opts->quiet)
        fprintf(log, "pipegemm: %s runs %s at %d stages here; profiled as that\n",
                selector->name, chosen->name, stages);
      run.variant = chosen;
      run.stages = stages;
      /* Planned already: asked for, or chosen by a selector before (the
       * runs kept so far are at the front). */
      int planned = 0;
      for (int j = 0; j < count; ++j)
        planned |= runs[j].variant == chosen && runs[j].stages == stages;
      if (planned) continue;
    }
    runs[kept++] = run;
  }
  return kept;
}

int pgc_cmd_profile(const pgc_options *opts) {
  int count = pgc_expand_runs(opts, NULL, 0);
  if (count == 0) {
    fprintf(stderr,
            "pipegemm: no selected variant allows the requested stage counts "
            "(see pipegemm profile --help)\n");
    return PGC_EXIT_USAGE;
  }
  pgc_run_spec *runs = calloc((size_t)count, sizeof *runs);
  if (!runs) {
    fprintf(stderr, "pipegemm: out of host memory\n");
    return PGC_EXIT_FAILED;
  }
  pgc_expand_runs(opts, runs, count);
  pgc_selectors_left_out left_out;
  count = pgc_profile_resolve_selectors(opts, runs, count, pgc_selector_choice, stderr,
                                        &left_out);
  if (count == 0) {
    free(runs);
    /* Only selectors were asked for, and none of them is left. */
    if (left_out.failed > 0) {
      fprintf(stderr, "pipegemm: nothing to profile: what the selectors run is not known\n");
      return PGC_EXIT_FAILED;
    }
    if (left_out.no_gpu > 0) {
      fprintf(stderr, "pipegemm: nothing to profile: no GPU to tell which variant %s runs\n",
              left_out.no_gpu > 1 ? "each selector" : "the selector");
      return PGC_EXIT_NO_GPU;
    }
    fprintf(stderr, "pipegemm: nothing to profile: no kernel runs at %dx%dx%d (M or N = 0)\n",
            opts->m, opts->n, opts->k);
    return PGC_EXIT_NO_GPU;
  }
  pgc_profile_config config = {opts->ncu_path, opts->raw_path, opts->device,
                               opts->m,        opts->n,        opts->k,
                               opts->quiet};
  pgc_profile_extras extras = {"profile", NULL, 0, NULL, 0};
  int exit_code = pgc_profile_runs(opts, &config, runs, count, &extras);
  free(runs);
  /* A selector left out on a failure is a run that was not profiled. */
  if (exit_code == PGC_EXIT_OK && left_out.failed > 0) exit_code = PGC_EXIT_FAILED;
  return exit_code;
}
