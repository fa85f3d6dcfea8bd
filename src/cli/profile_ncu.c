/* `pipegemm profile`, running ncu and reading what it printed: where ncu
 * and this executable are, the ncu command of one run and its kernel
 * filters, the --raw file, and what the output says: the profiled kernel's
 * counters, a variant the profiled program skipped, ncu refusing the
 * table's sections, or a profiler that cannot work here at all. The parent
 * process never touches the GPU for this: a GPU it cannot use, counters it
 * may not read and kernels it did not see are all reported by ncu or by the
 * profiled program, and told apart here from what they printed. */
#include "profile_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
#define COMMAND_SIZE 8192
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
int pgc_profile_find_self(const pgc_options *opts, char *buf, size_t size) {
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
void pgc_profile_ncu_version(const char *ncu, char *buf, size_t size) {
  char command[PROFILE_PATH_SIZE + 32] = "";
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
int pgc_profile_run_one(const pgc_profile_config *config, const char *ncu,
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
