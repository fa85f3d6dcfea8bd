/* `pipegemm inspect`: what the compiler made of each kernel, read from a
 * binary without a GPU. Runs cuobjdump twice (-res-usage, then -sass on our
 * kernels only), hands its lines to sass.c, and prints one row per kernel of
 * each variant and architecture: resources, blocks per SM at the default
 * configuration, the SASS census, and whether the SASS shows the mechanism
 * the variant's registry entry claims. --check turns that last column into
 * one line per violated rule and exit code 1. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "format.h"
#include "internal.h"
#include "sass.h"

/* Set by CMake to the cuobjdump found at configure time (the CUDA toolkit's,
 * or the one of the nvidia-cuda-cuobjdump wheel). */
#ifndef PG_CUOBJDUMP_PATH
#define PG_CUOBJDUMP_PATH ""
#endif
/* The nvdisasm found at configure time, which `cuobjdump -sass` runs. */
#ifndef PG_NVDISASM_PATH
#define PG_NVDISASM_PATH ""
#endif

/* DESIGN.md's code 3: what the command needs is not on this machine. */
#define EXIT_NO_DISASSEMBLER PGC_EXIT_NO_GPU
#define PATH_SIZE 4096
/* Room for a message naming two paths. */
#define MESSAGE_SIZE (2 * PATH_SIZE + 1024)
/* Violations kept per kernel; more are counted, not listed. */
#define MAX_VIOLATIONS 32

/* ---- a growing string -------------------------------------------------------- */

typedef struct {
  char *text;
  size_t len, capacity;
  int failed; /* out of memory: the text is incomplete */
} strbuf;

static void sb_append(strbuf *sb, const char *text, size_t len) {
  if (sb->failed) return;
  if (sb->len + len + 1 > sb->capacity) {
    size_t capacity = sb->capacity ? sb->capacity : 256;
    while (capacity < sb->len + len + 1) capacity *= 2;
    char *grown = realloc(sb->text, capacity);
    if (!grown) {
      sb->failed = 1;
      return;
    }
    sb->text = grown;
    sb->capacity = capacity;
  }
  memcpy(sb->text + sb->len, text, len);
  sb->len += len;
  sb->text[sb->len] = '\0';
}

static void sb_puts(strbuf *sb, const char *text) { sb_append(sb, text, strlen(text)); }

/* One word for /bin/sh: in single quotes, each ' written as '\''. */
static void sb_quoted(strbuf *sb, const char *word) {
  sb_puts(sb, "'");
  for (const char *p = word; *p; ++p) {
    if (*p == '\'')
      sb_puts(sb, "'\\''");
    else
      sb_append(sb, p, 1);
  }
  sb_puts(sb, "'");
}

/* ---- finding cuobjdump --------------------------------------------------------- */

static int is_executable_file(const char *path) {
  struct stat st;
  return path[0] != '\0' && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
         access(path, X_OK) == 0;
}

static int find_in_path(const char *name, char *out, size_t size) {
  const char *path = getenv("PATH");
  if (!path) return 0;
  while (*path) {
    size_t len = strcspn(path, ":");
    /* An empty entry is the current directory. */
    int n = len == 0 ? snprintf(out, size, "./%s", name)
                     : snprintf(out, size, "%.*s/%s", (int)len, path, name);
    if (n > 0 && (size_t)n < size && is_executable_file(out)) return 1;
    path += len;
    if (*path == ':') ++path;
  }
  return 0;
}

/* $PG_CUOBJDUMP, else the configure-time path, else the PATH. 0 with the
 * path and where it came from; -1 with a one-line reason. */
static int find_cuobjdump(char *path, size_t size, const char **source, char *err,
                          size_t err_size) {
  const char *env = getenv("PG_CUOBJDUMP");
  if (env && env[0] != '\0') {
    if (!is_executable_file(env)) {
      snprintf(err, err_size, "PG_CUOBJDUMP=%s is not an executable file", env);
      return -1;
    }
    snprintf(path, size, "%s", env);
    *source = "$PG_CUOBJDUMP";
    return 0;
  }
  if (is_executable_file(PG_CUOBJDUMP_PATH)) {
    snprintf(path, size, "%s", PG_CUOBJDUMP_PATH);
    *source = "found when pipegemm was configured";
    return 0;
  }
  if (find_in_path("cuobjdump", path, size)) {
    *source = "PATH";
    return 0;
  }
  snprintf(err, err_size,
           "no cuobjdump: $PG_CUOBJDUMP is not set, %s%s, none on the PATH "
           "(pip install nvidia-cuda-cuobjdump provides one: set PG_CUOBJDUMP "
           "to its nvidia/cu13/bin/cuobjdump, or reconfigure)",
           PG_CUOBJDUMP_PATH[0] ? "no longer there: " : "none found when pipegemm was configured",
           PG_CUOBJDUMP_PATH);
  return -1;
}

/* cuobjdump -sass runs nvdisasm, which it looks for on the PATH only. Puts
 * first on our PATH (which cuobjdump inherits) the directory of cuobjdump
 * when it holds an nvdisasm (the same release), else that of the nvdisasm
 * found at configure time; else leaves the PATH as it is. */
static void put_nvdisasm_on_path(const char *cuobjdump) {
  char dir[PATH_SIZE], candidate[PATH_SIZE + 16];
  snprintf(dir, sizeof dir, "%s", cuobjdump);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  snprintf(candidate, sizeof candidate, "%s/nvdisasm", dir);
  if (!slash || !is_executable_file(candidate)) {
    if (!is_executable_file(PG_NVDISASM_PATH)) return;
    snprintf(dir, sizeof dir, "%s", PG_NVDISASM_PATH);
    slash = strrchr(dir, '/');
    if (!slash) return;
    *slash = '\0';
  }
  const char *path = getenv("PATH");
  size_t size = strlen(dir) + (path ? strlen(path) : 0) + 2;
  char *value = malloc(size);
  if (!value) return; /* cuobjdump then says what it misses */
  snprintf(value, size, "%s%s%s", dir, path && path[0] ? ":" : "", path ? path : "");
  if (setenv("PATH", value, 1) != 0) { /* the same: cuobjdump says so */ }
  free(value);
}

/* ---- running it ------------------------------------------------------------------ */

typedef enum { RUN_OK = 0, RUN_FAILED, RUN_NO_DEVICE_CODE } run_result;

typedef int (*line_fn)(void *ctx, const char *line);

/* The first line of a file that says something (cuobjdump's message). */
static void first_message(const char *file, char *buf, size_t size) {
  buf[0] = '\0';
  FILE *in = fopen(file, "r");
  if (!in) return;
  char line[MESSAGE_SIZE];
  while (fgets(line, sizeof line, in)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0] != '\0') {
      snprintf(buf, size, "%s", line);
      break;
    }
  }
  if (fclose(in) != 0 && buf[0] == '\0') snprintf(buf, size, "%s", strerror(errno));
}

/* Runs `command` through /bin/sh with stderr in a temporary file (mixed into
 * the pipe it could split a line of stdout) and hands each line of stdout to
 * `feed`. On failure, a one-line reason in err. */
static run_result run_lines(const char *command, line_fn feed, void *ctx,
                            char *err, size_t err_size) {
  const char *tmpdir = getenv("TMPDIR");
  char errfile[PATH_SIZE];
  int n = snprintf(errfile, sizeof errfile, "%s/pipegemm-inspect-XXXXXX",
                   tmpdir && tmpdir[0] ? tmpdir : "/tmp");
  if (n < 0 || (size_t)n >= sizeof errfile) {
    snprintf(err, err_size, "temporary file name too long (TMPDIR)");
    return RUN_FAILED;
  }
  int fd = mkstemp(errfile);
  if (fd < 0) {
    snprintf(err, err_size, "cannot create %s: %s", errfile, strerror(errno));
    return RUN_FAILED;
  }
  if (close(fd) != 0) {
    snprintf(err, err_size, "cannot close %s: %s", errfile, strerror(errno));
    if (unlink(errfile) != 0) { /* nothing more to report than the close */ }
    return RUN_FAILED;
  }

  strbuf full = {0};
  sb_puts(&full, command);
  sb_puts(&full, " 2>");
  sb_quoted(&full, errfile);
  run_result result = RUN_OK;
  if (full.failed) {
    snprintf(err, err_size, "out of host memory");
    result = RUN_FAILED;
  }
  FILE *pipe = result == RUN_OK ? popen(full.text, "r") : NULL;
  if (result == RUN_OK && !pipe) {
    snprintf(err, err_size, "cannot run cuobjdump: %s", strerror(errno));
    result = RUN_FAILED;
  }
  if (pipe) {
    char *line = NULL;
    size_t capacity = 0;
    int fed_ok = 1;
    while (getline(&line, &capacity, pipe) >= 0) {
      if (fed_ok && feed(ctx, line) != 0) fed_ok = 0; /* read on to the end */
    }
    int read_error = ferror(pipe);
    free(line);
    int status = pclose(pipe);
    char message[MESSAGE_SIZE];
    first_message(errfile, message, sizeof message);
    if (status == -1) {
      snprintf(err, err_size, "cannot wait for cuobjdump: %s", strerror(errno));
      result = RUN_FAILED;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      if (strstr(message, "does not contain device code")) {
        result = RUN_NO_DEVICE_CODE;
      } else {
        result = RUN_FAILED;
        if (WIFEXITED(status))
          snprintf(err, err_size, "cuobjdump exited with status %d%s%s",
                   WEXITSTATUS(status), message[0] ? ": " : "", message);
        else
          snprintf(err, err_size, "cuobjdump was killed by signal %d",
                   WIFSIGNALED(status) ? WTERMSIG(status) : 0);
      }
    } else if (read_error) {
      snprintf(err, err_size, "cannot read cuobjdump's output");
      result = RUN_FAILED;
    } else if (!fed_ok) {
      snprintf(err, err_size, "out of host memory");
      result = RUN_FAILED;
    }
  }
  free(full.text);
  if (unlink(errfile) != 0 && result == RUN_OK) {
    snprintf(err, err_size, "cannot remove %s: %s", errfile, strerror(errno));
    result = RUN_FAILED;
  }
  return result;
}

static int feed_res_usage(void *ctx, const char *line) {
  return pgc_dump_res_usage_line(ctx, line);
}

static int feed_sass(void *ctx, const char *line) {
  return pgc_dump_sass_line(ctx, line);
}

/* The line of `cuobjdump --version` with the release ("V13.5.37"). */
typedef struct {
  char version[64];
} version_ctx;

static int feed_version(void *ctx, const char *line) {
  version_ctx *v = ctx;
  const char *release = strstr(line, ", V");
  if (release && v->version[0] == '\0') {
    release += 2;
    snprintf(v->version, sizeof v->version, "%.*s", (int)strcspn(release, " \r\n"),
             release);
  }
  return 0;
}

/* ---- what is judged, and how ------------------------------------------------------ */

typedef struct {
  const pg_variant_entry *claim;  /* whose rules, whose name in the report */
  const pg_variant_entry *source; /* whose kernels (the claim's, unless --swap) */
} judged_variant;

#define COMPOSED_SIZE 96
#define MECHANISM_SIZE 256

typedef struct {
  const judged_variant *judged;
  const pgc_kernel_record *kernel;
  char display[PGC_KERNEL_NAME_SIZE];
  long template_arg;
  int launched; /* the kernel of the default configuration */
  int threads;  /* -1: not the launched kernel */
  long static_smem, dynamic_smem;
  int blocks; /* -1: not computed */
  char limited_by[64];
  char composed[PGC_OP_WIDE_FAMILIES][COMPOSED_SIZE];
  int violation_count;
  pgc_violation violations[MAX_VIOLATIONS];
  char mechanism[MECHANISM_SIZE];
} inspect_row;

static int compare_rows(const void *a, const void *b) {
  const inspect_row *x = a, *y = b;
  if (x->judged != y->judged) return x->judged < y->judged ? -1 : 1;
  if (x->kernel->sm != y->kernel->sm) return x->kernel->sm < y->kernel->sm ? -1 : 1;
  if (x->template_arg != y->template_arg) return x->template_arg < y->template_arg ? -1 : 1;
  return strcmp(x->display, y->display);
}

/* "4×128 80×32": count × bits of each width, widest first. */
static void compose_widths(const pgc_kernel_record *kernel, int family, char *buf,
                           size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  for (int w = PGC_WIDTH_COUNT - 1; w >= 0; --w) {
    unsigned long count = kernel->width[family][w];
    if (count == 0) continue;
    int n = snprintf(buf + len, size - len, "%s%lu\xc3\x97%d", len ? " " : "", count,
                     pgc_width_bits((pgc_width)w));
    if (n < 0 || (size_t)n >= size - len) break;
    len += (size_t)n;
  }
  if (len == 0) snprintf(buf, size, "0");
}

/* "ok", or "FAIL -LDGSTS -DEPBAR +STS" (- missing, + present but forbidden). */
static void describe_mechanism(inspect_row *row) {
  const pg_kernel_spec *spec = &row->judged->claim->kernel;
  if (!row->kernel->has_sass) {
    snprintf(row->mechanism, sizeof row->mechanism, "no SASS");
    return;
  }
  if (spec->rule_count == 0 && row->violation_count == 0) {
    snprintf(row->mechanism, sizeof row->mechanism, "-");
    return;
  }
  if (row->violation_count == 0) {
    snprintf(row->mechanism, sizeof row->mechanism, "ok");
    return;
  }
  size_t len = (size_t)snprintf(row->mechanism, sizeof row->mechanism, "FAIL");
  int shown = row->violation_count < MAX_VIOLATIONS ? row->violation_count : MAX_VIOLATIONS;
  for (int i = 0; i < shown && len < sizeof row->mechanism; ++i) {
    int n = snprintf(row->mechanism + len, sizeof row->mechanism - len, " %c%s",
                     row->violations[i].must_appear ? '-' : '+',
                     row->violations[i].opcode);
    if (n < 0) break;
    len += (size_t)n;
  }
}

static void fill_row(inspect_row *row) {
  const pgc_kernel_record *kernel = row->kernel;
  const pg_variant_entry *source = row->judged->source;
  const pg_kernel_spec *spec = &source->kernel;
  const pgc_arch_limits *limits = pgc_arch_limits_of(kernel->sm);
  const char *launched = spec->launched ? spec->launched : spec->symbol;

  row->launched = strcmp(row->display, launched) == 0;
  row->threads = row->launched ? source->info.threads : -1;
  row->static_smem = kernel->has_resources
                         ? pgc_static_smem_bytes(limits, kernel->shared_bytes)
                         : -1;
  row->dynamic_smem = -1;
  if (row->launched) {
    size_t bytes = 0;
    row->dynamic_smem =
        spec->dynamic_smem &&
                pg_variant_smem_bytes(&source->info, 0, &bytes) == PG_OK
            ? (long)bytes
            : 0;
  }
  row->blocks = -1;
  row->limited_by[0] = '\0';
  if (row->launched && kernel->has_resources && row->static_smem >= 0) {
    if (!limits) {
      snprintf(row->limited_by, sizeof row->limited_by, "no limits for %s",
               kernel->arch);
    } else if (kernel->sm < source->info.min_cc) {
      snprintf(row->limited_by, sizeof row->limited_by, "needs sm_%d",
               source->info.min_cc);
    } else {
      unsigned limiters = 0;
      row->blocks = pgc_blocks_per_sm(limits, row->threads, kernel->registers,
                                      row->static_smem + row->dynamic_smem,
                                      &limiters);
      pgc_limiters_text(limiters, row->limited_by, sizeof row->limited_by);
    }
  }
  for (int f = 0; f < PGC_OP_WIDE_FAMILIES; ++f)
    compose_widths(kernel, f, row->composed[f], sizeof row->composed[f]);
  const pg_kernel_spec *claim = &row->judged->claim->kernel;
  row->violation_count =
      kernel->has_sass ? pgc_check_kernel(kernel, claim->rules, claim->rule_count,
                                          row->violations, MAX_VIOLATIONS)
                       : 0;
  describe_mechanism(row);
}

/* ---- the report ------------------------------------------------------------------- */

#define L PGC_ALIGN_LEFT
#define R PGC_ALIGN_RIGHT
static const pgc_column inspect_columns[] = {
    {"variant", "variant", L, 0, PGC_SHOW_ALL},
    {"arch", "arch", L, 0, PGC_SHOW_ALL},
    {"kernel", "kernel", L, 0, PGC_SHOW_ALL},
    {"symbol", "", L, 0, PGC_SHOW_DATA},
    {"threads", "threads", R, 0, PGC_SHOW_ALL},
    {"registers", "regs", R, 0, PGC_SHOW_ALL},
    {"static_smem_bytes", "smem static", R, 0, PGC_SHOW_ALL},
    {"dynamic_smem_bytes", "smem dyn", R, 0, PGC_SHOW_ALL},
    {"stack_bytes", "stack", R, 0, PGC_SHOW_ALL},
    {"local_bytes", "local", R, 0, PGC_SHOW_ALL},
    {"spill_stores", "STL", R, 0, PGC_SHOW_ALL},
    {"spill_loads", "LDL", R, 0, PGC_SHOW_ALL},
    {"blocks_per_sm", "blocks/SM", R, 0, PGC_SHOW_ALL},
    {"limited_by", "limited by", L, 0, PGC_SHOW_ALL},
    /* LDG, STS, LDS, LDGSTS: composed in the table, by width in data. */
    {"ldg_widths", "LDG", L, 0, PGC_SHOW_TABLE},
    {"sts_widths", "STS", L, 0, PGC_SHOW_TABLE},
    {"lds_widths", "LDS", L, 0, PGC_SHOW_TABLE},
    {"ldgsts_widths", "LDGSTS", L, 0, PGC_SHOW_TABLE},
    {"ldg", "", R, 0, PGC_SHOW_DATA},
    {"ldg_8_16", "", R, 0, PGC_SHOW_DATA},
    {"ldg_32", "", R, 0, PGC_SHOW_DATA},
    {"ldg_64", "", R, 0, PGC_SHOW_DATA},
    {"ldg_128", "", R, 0, PGC_SHOW_DATA},
    {"sts", "", R, 0, PGC_SHOW_DATA},
    {"sts_8_16", "", R, 0, PGC_SHOW_DATA},
    {"sts_32", "", R, 0, PGC_SHOW_DATA},
    {"sts_64", "", R, 0, PGC_SHOW_DATA},
    {"sts_128", "", R, 0, PGC_SHOW_DATA},
    {"lds", "", R, 0, PGC_SHOW_DATA},
    {"lds_8_16", "", R, 0, PGC_SHOW_DATA},
    {"lds_32", "", R, 0, PGC_SHOW_DATA},
    {"lds_64", "", R, 0, PGC_SHOW_DATA},
    {"lds_128", "", R, 0, PGC_SHOW_DATA},
    {"ldgsts", "", R, 0, PGC_SHOW_DATA},
    {"ldgsts_8_16", "", R, 0, PGC_SHOW_DATA},
    {"ldgsts_32", "", R, 0, PGC_SHOW_DATA},
    {"ldgsts_64", "", R, 0, PGC_SHOW_DATA},
    {"ldgsts_128", "", R, 0, PGC_SHOW_DATA},
    {"ldgdepbar", "LDGDEPBAR", R, 0, PGC_SHOW_ALL},
    {"depbar", "DEPBAR", R, 0, PGC_SHOW_ALL},
    {"bar_sync", "BAR.SYNC", R, 0, PGC_SHOW_ALL},
    {"bar_other", "BAR other", R, 0, PGC_SHOW_ALL},
    {"syncs", "SYNCS", R, 0, PGC_SHOW_ALL},
    {"arrives", "ARRIVES", R, 0, PGC_SHOW_ALL},
    {"tma", "TMA", R, 0, PGC_SHOW_ALL},
    {"bulk", "bulk", R, 0, PGC_SHOW_ALL},
    {"ffma", "FFMA", R, 0, PGC_SHOW_ALL},
    {"other", "other", R, 0, PGC_SHOW_ALL},
    {"instructions", "instr", R, 0, PGC_SHOW_ALL},
    {"mechanism", "mechanism", L, 0, PGC_SHOW_ALL},
    {"violations", "", R, 0, PGC_SHOW_DATA},
};
#undef L
#undef R
#define INSPECT_COLUMNS ((int)(sizeof inspect_columns / sizeof inspect_columns[0]))

/* The census families that get a column of their own, in column order. */
static const pgc_op_family single_families[] = {
    PGC_OP_LDGDEPBAR, PGC_OP_DEPBAR, PGC_OP_BAR_SYNC, PGC_OP_BAR_OTHER,
    PGC_OP_SYNCS,     PGC_OP_ARRIVES, PGC_OP_TMA,     PGC_OP_BULK,
    PGC_OP_FFMA,      PGC_OP_OTHER,
};

static pgc_cell count_cell(const pgc_kernel_record *kernel, unsigned long value) {
  return kernel->has_sass ? pgc_cell_uint(value) : pgc_cell_absent();
}

/* One row's cells, in column order; returns how many were written. */
static int row_cells(const inspect_row *row, pgc_cell *cells) {
  const pgc_kernel_record *kernel = row->kernel;
  int res = kernel->has_resources;
  int i = 0;
  cells[i++] = pgc_cell_text(row->judged->claim->info.name);
  cells[i++] = pgc_cell_text(kernel->arch);
  cells[i++] = pgc_cell_text(row->display);
  cells[i++] = pgc_cell_text(kernel->name);
  cells[i++] = row->threads > 0 ? pgc_cell_int(row->threads) : pgc_cell_absent();
  cells[i++] = res ? pgc_cell_int(kernel->registers) : pgc_cell_absent();
  cells[i++] = row->static_smem >= 0 ? pgc_cell_int(row->static_smem) : pgc_cell_absent();
  cells[i++] = row->dynamic_smem >= 0 ? pgc_cell_int(row->dynamic_smem) : pgc_cell_absent();
  cells[i++] = res && kernel->stack_bytes >= 0 ? pgc_cell_int(kernel->stack_bytes)
                                               : pgc_cell_absent();
  cells[i++] = res && kernel->local_bytes >= 0 ? pgc_cell_int(kernel->local_bytes)
                                               : pgc_cell_absent();
  cells[i++] = count_cell(kernel, kernel->family[PGC_OP_STL]);
  cells[i++] = count_cell(kernel, kernel->family[PGC_OP_LDL]);
  cells[i++] = row->blocks >= 0 ? pgc_cell_int(row->blocks) : pgc_cell_absent();
  cells[i++] = row->limited_by[0] ? pgc_cell_text(row->limited_by) : pgc_cell_absent();
  for (int f = 0; f < PGC_OP_WIDE_FAMILIES; ++f)
    cells[i++] = kernel->has_sass ? pgc_cell_text(row->composed[f]) : pgc_cell_absent();
  for (int f = 0; f < PGC_OP_WIDE_FAMILIES; ++f) {
    cells[i++] = count_cell(kernel, kernel->family[f]);
    for (int w = 0; w < PGC_WIDTH_COUNT; ++w)
      cells[i++] = count_cell(kernel, kernel->width[f][w]);
  }
  for (size_t f = 0; f < sizeof single_families / sizeof single_families[0]; ++f)
    cells[i++] = count_cell(kernel, kernel->family[single_families[f]]);
  cells[i++] = count_cell(kernel, kernel->instructions);
  cells[i++] = pgc_cell_text(row->mechanism);
  cells[i++] = kernel->has_sass ? pgc_cell_int(row->violation_count) : pgc_cell_absent();
  return i;
}

static const char *const report_notes[] = {
    "regs, smem static (the kernel's own, as the runtime reports it), stack "
    "and local: cuobjdump -res-usage. STL/LDL (spill stores/loads) and the "
    "opcode columns count SASS instructions (cuobjdump -sass), leaving out "
    "@!PT ones, which never execute.",
    "threads, smem dyn, blocks/SM: the kernel the default configuration "
    "launches ('pipegemm list' gives the stages), blocks/SM from per-SM "
    "limits: 64K registers in 4 partitions of 16K, 2048 threads, 32 blocks, "
    "164 KiB (sm_80) or 228 KiB (sm_90) of shared memory, 1 KiB of it "
    "reserved per block. Other template instances: -.",
    "LDG, STS, LDS, LDGSTS: count\xc3\x97" "bits per access. TMA: UTMA* "
    "(cp.async.bulk.tensor); bulk: UBLK* (cp.async.bulk); SYNCS: sm_90 "
    "mbarrier; ARRIVES: cp.async.mbarrier.arrive.",
    "mechanism: ok when the SASS shows what the variant claims (its rules "
    "in src/registry.c) and no Hopper-only instruction is in pre-sm_90 code; "
    "FAIL lists -missing and +forbidden opcodes; --check says why.",
    "cublas: cuBLAS's own kernels, not in this binary: nothing to inspect.",
};
#define REPORT_NOTES ((int)(sizeof report_notes / sizeof report_notes[0]))

/* ---- the command ------------------------------------------------------------------ */

/* Problems that are not a rule of one kernel: a kernel missing for an
 * architecture, or missing SASS. One line each. */
typedef struct {
  char **lines;
  int count, capacity;
  int failed;
} line_list;

static void add_line(line_list *list, const char *line) {
  if (list->failed) return;
  if (list->count == list->capacity) {
    int capacity = list->capacity ? 2 * list->capacity : 16;
    char **grown = realloc(list->lines, (size_t)capacity * sizeof *grown);
    if (!grown) {
      list->failed = 1;
      return;
    }
    list->lines = grown;
    list->capacity = capacity;
  }
  size_t len = strlen(line);
  char *copy = malloc(len + 1);
  if (!copy) {
    list->failed = 1;
    return;
  }
  memcpy(copy, line, len + 1);
  list->lines[list->count++] = copy;
}

static void free_lines(line_list *list) {
  for (int i = 0; i < list->count; ++i) free(list->lines[i]);
  free(list->lines);
}

/* Whether the variant has a kernel for the GPU generation of `arch`: sm_90
 * and sm_90a code both run on an sm_90 GPU, so either answers for the other
 * (the flagship is built for sm_90a only, the rest for sm_90). */
static int arch_has_row(const inspect_row *rows, int count, const judged_variant *judged,
                        const char *arch, const char *display) {
  const int sm = atoi(arch + strcspn(arch, "0123456789"));
  for (int i = 0; i < count; ++i)
    if (rows[i].judged == judged && rows[i].kernel->sm == sm &&
        (!display || strcmp(rows[i].display, display) == 0))
      return 1;
  return 0;
}

/* What the selection judges: each variant named (or all) with kernels of its
 * own, and with --swap the claim judged on the other one's kernels. */
static int select_judged(const pgc_options *opts, judged_variant *judged,
                         int capacity) {
  int count = 0;
  int total = opts->all_variants ? pg_variant_count() : opts->variant_count;
  for (int i = 0; i < total && count < capacity; ++i) {
    const pg_variant_info *info = opts->all_variants ? pg_variant_at(i) : opts->variants[i];
    const pg_variant_entry *entry = pg_entry_of(info);
    if (!entry) continue;
    const pg_variant_entry *source = entry;
    if (opts->swap_claim == info) source = pg_entry_of(opts->swap_kernels);
    if (!source || !source->kernel.symbol) continue; /* cublas */
    judged[count++] = (judged_variant){entry, source};
  }
  return count;
}

static void print_lines_to(FILE *out, const line_list *list) {
  for (int i = 0; i < list->count; ++i) fprintf(out, "%s\n", list->lines[i]);
}

int pgc_cmd_inspect(const pgc_options *opts) {
  char err[MESSAGE_SIZE];
  char binary[PATH_SIZE];
  if (opts->inspect_binary) {
    snprintf(binary, sizeof binary, "%s", opts->inspect_binary);
    if (access(binary, R_OK) != 0) {
      fprintf(stderr, "pipegemm inspect: cannot read %s: %s\n", binary, strerror(errno));
      return PGC_EXIT_USAGE;
    }
  } else {
    /* This executable, by its real path: cuobjdump reading /proc/self/exe
     * would read itself. */
    ssize_t len = readlink("/proc/self/exe", binary, sizeof binary - 1);
    if (len < 0) {
      fprintf(stderr, "pipegemm inspect: cannot find this executable (/proc/self/exe): %s\n",
              strerror(errno));
      return PGC_EXIT_FAILED;
    }
    binary[len] = '\0';
  }

  if (opts->swap_claim) {
    const pg_variant_entry *claim = pg_entry_of(opts->swap_claim);
    const pg_variant_entry *kernels = pg_entry_of(opts->swap_kernels);
    if (!claim || !kernels || !claim->kernel.symbol || !kernels->kernel.symbol) {
      fprintf(stderr, "pipegemm inspect: --swap needs two variants with kernels of "
                      "pipegemm's own (not cublas)\n");
      return PGC_EXIT_USAGE;
    }
  }

  char tool[PATH_SIZE];
  const char *tool_source = NULL;
  if (find_cuobjdump(tool, sizeof tool, &tool_source, err, sizeof err) != 0) {
    fprintf(stderr, "pipegemm inspect: %s\n", err);
    return EXIT_NO_DISASSEMBLER;
  }
  put_nvdisasm_on_path(tool);

  strbuf command = {0};
  version_ctx version = {{0}};
  sb_quoted(&command, tool);
  sb_puts(&command, " --version");
  if (command.failed || run_lines(command.text, feed_version, &version, err, sizeof err) != RUN_OK) {
    fprintf(stderr, "pipegemm inspect: %s does not run: %s\n", tool,
            command.failed ? "out of host memory" : err);
    free(command.text);
    return EXIT_NO_DISASSEMBLER;
  }
  free(command.text);

  int rc = PGC_EXIT_OK;
  pgc_dump dump;
  pgc_dump_init(&dump);
  judged_variant judged[PGC_MAX_VARIANTS];
  inspect_row *rows = NULL;
  pgc_cell *cells = NULL;
  line_list problems = {0};
  int row_count = 0;

  /* Resources of every kernel: fast, and it names them. */
  command = (strbuf){0};
  sb_quoted(&command, tool);
  sb_puts(&command, " -res-usage ");
  sb_quoted(&command, binary);
  run_result run = command.failed ? RUN_FAILED
                                  : run_lines(command.text, feed_res_usage, &dump, err,
                                              sizeof err);
  if (command.failed) snprintf(err, sizeof err, "out of host memory");
  free(command.text);
  if (run == RUN_NO_DEVICE_CODE || (run == RUN_OK && dump.count == 0)) {
    fprintf(stderr, "pipegemm inspect: %s holds no CUDA kernels\n", binary);
    rc = PGC_EXIT_USAGE;
    goto done;
  }
  if (run != RUN_OK) {
    fprintf(stderr, "pipegemm inspect: %s\n", err);
    rc = PGC_EXIT_FAILED;
    goto done;
  }

  int judged_count = select_judged(opts, judged, PGC_MAX_VARIANTS);
  rows = calloc((size_t)(dump.count > 0 ? dump.count : 1) * (size_t)(judged_count > 0 ? judged_count : 1),
                sizeof *rows);
  if (!rows) {
    fprintf(stderr, "pipegemm: out of host memory\n");
    rc = PGC_EXIT_FAILED;
    goto done;
  }
  for (int j = 0; j < judged_count; ++j) {
    for (int k = 0; k < dump.count; ++k) {
      inspect_row *row = &rows[row_count];
      pgc_kernel_display_name(dump.kernels[k].name, row->display, sizeof row->display);
      if (!pgc_kernel_has_stem(row->display, judged[j].source->kernel.symbol)) continue;
      row->judged = &judged[j];
      row->kernel = &dump.kernels[k];
      row->template_arg = pgc_kernel_template_arg(row->display);
      ++row_count;
    }
  }

  /* The SASS of those kernels only (-fun): the rest of the binary (the
   * measuring harness) would double the time cuobjdump takes. */
  if (row_count > 0) {
    command = (strbuf){0};
    sb_quoted(&command, tool);
    sb_puts(&command, " -sass -fun ");
    strbuf names = {0};
    for (int r = 0; r < row_count; ++r) {
      int seen = 0;
      for (int s = 0; s < r && !seen; ++s)
        seen = strcmp(rows[s].kernel->name, rows[r].kernel->name) == 0;
      if (seen) continue;
      if (names.len) sb_puts(&names, ",");
      sb_puts(&names, rows[r].kernel->name);
    }
    sb_quoted(&command, names.failed ? "" : names.text);
    sb_puts(&command, " ");
    sb_quoted(&command, binary);
    int failed = command.failed || names.failed;
    free(names.text);
    run = failed ? RUN_FAILED
                 : run_lines(command.text, feed_sass, &dump, err, sizeof err);
    if (failed) snprintf(err, sizeof err, "out of host memory");
    free(command.text);
    if (run != RUN_OK) {
      fprintf(stderr, "pipegemm inspect: %s\n", err);
      rc = PGC_EXIT_FAILED;
      goto done;
    }
  }

  qsort(rows, (size_t)row_count, sizeof *rows, compare_rows);
  for (int r = 0; r < row_count; ++r) fill_row(&rows[r]);

  /* What is missing altogether: a variant's kernel on an architecture the
   * binary has code for, or the instance the default configuration launches. */
  for (int j = 0; j < judged_count; ++j) {
    const pg_kernel_spec *spec = &judged[j].source->kernel;
    for (int a = 0; a < dump.arch_count; ++a) {
      char line[MESSAGE_SIZE];
      if (!arch_has_row(rows, row_count, &judged[j], dump.archs[a], NULL)) {
        snprintf(line, sizeof line, "inspect: %s (%s): no kernel %s in %s",
                 judged[j].claim->info.name, dump.archs[a], spec->symbol, binary);
        add_line(&problems, line);
      } else if (spec->launched &&
                 !arch_has_row(rows, row_count, &judged[j], dump.archs[a], spec->launched)) {
        snprintf(line, sizeof line,
                 "inspect: %s (%s): no kernel %s, which the default configuration "
                 "launches, in %s",
                 judged[j].claim->info.name, dump.archs[a], spec->launched, binary);
        add_line(&problems, line);
      }
    }
  }
  for (int r = 0; r < row_count; ++r) {
    char line[MESSAGE_SIZE];
    if (!rows[r].kernel->has_sass) {
      snprintf(line, sizeof line, "inspect: %s (%s, %s): cuobjdump -sass showed no code",
               rows[r].judged->claim->info.name, rows[r].kernel->arch, rows[r].display);
      add_line(&problems, line);
    }
  }

  cells = calloc((size_t)(row_count > 0 ? row_count : 1) * INSPECT_COLUMNS, sizeof *cells);
  if (!cells || problems.failed) {
    fprintf(stderr, "pipegemm: out of host memory\n");
    rc = PGC_EXIT_FAILED;
    goto done;
  }
  for (int r = 0; r < row_count; ++r) {
    if (row_cells(&rows[r], &cells[(size_t)r * INSPECT_COLUMNS]) != INSPECT_COLUMNS) {
      fprintf(stderr, "pipegemm inspect: internal error: row and columns disagree\n");
      rc = PGC_EXIT_FAILED;
      goto done;
    }
  }

  char tool_text[PATH_SIZE + 128];
  snprintf(tool_text, sizeof tool_text, "%s%s%s, %s", tool, version.version[0] ? ", " : "",
           version.version, tool_source);
  char archs_text[PGC_MAX_ARCHS * (PGC_ARCH_NAME_SIZE + 2)];
  size_t archs_len = 0;
  archs_text[0] = '\0';
  for (int a = 0; a < dump.arch_count; ++a) {
    int n = snprintf(archs_text + archs_len, sizeof archs_text - archs_len, "%s%s",
                     a ? ", " : "", dump.archs[a]);
    if (n > 0 && (size_t)n < sizeof archs_text - archs_len) archs_len += (size_t)n;
  }
  char swap_text[2 * 64 + 2] = "";
  if (opts->swap_claim)
    snprintf(swap_text, sizeof swap_text, "%s=%s", opts->swap_claim->name,
             opts->swap_kernels->name);
  pgc_fact facts[] = {
      {"binary", "binary", pgc_cell_text(binary), 0, NULL, PGC_SHOW_ALL},
      {"disassembler", "disassembler", pgc_cell_text(tool_text), 0, NULL, PGC_SHOW_ALL},
      {"architectures", "architectures", pgc_cell_text(archs_text), 0, NULL, PGC_SHOW_ALL},
      {"kernels", "kernels", pgc_cell_int(row_count), 0, NULL, PGC_SHOW_ALL},
      {"swap", "--swap (self-test)", pgc_cell_text(swap_text), 0, NULL, PGC_SHOW_ALL},
  };
  int fact_count = (int)(sizeof facts / sizeof facts[0]) - (opts->swap_claim ? 0 : 1);
  pgc_report report = {
      .command = "inspect",
      .facts = facts,
      .fact_count = fact_count,
      .columns = inspect_columns,
      .column_count = INSPECT_COLUMNS,
      .cells = cells,
      .row_count = row_count,
      .notes = report_notes,
      .note_count = REPORT_NOTES,
  };
  pgc_print_report(stdout, opts->format, &report);
  if (fflush(stdout) != 0) {
    fprintf(stderr, "pipegemm inspect: cannot write the report: %s\n", strerror(errno));
    rc = PGC_EXIT_FAILED;
    goto done;
  }

  if (opts->inspect_check) {
    int violations = problems.count;
    print_lines_to(stderr, &problems);
    for (int r = 0; r < row_count; ++r) {
      int shown = rows[r].violation_count < MAX_VIOLATIONS ? rows[r].violation_count
                                                           : MAX_VIOLATIONS;
      for (int v = 0; v < shown; ++v) {
        char line[MESSAGE_SIZE];
        pgc_violation_line(rows[r].judged->claim->info.name, rows[r].kernel,
                           &rows[r].violations[v], line, sizeof line);
        fprintf(stderr, "%s\n", line);
      }
      violations += rows[r].violation_count;
    }
    if (violations > 0) {
      fprintf(stderr, "inspect: %d violation%s in %s\n", violations,
              violations == 1 ? "" : "s", binary);
      rc = PGC_EXIT_FAILED;
    } else {
      fprintf(stderr, "inspect: every kernel shows its mechanism (%d kernels; %s)\n",
              row_count, archs_text);
    }
  }

done:
  free(cells);
  free(rows);
  free_lines(&problems);
  pgc_dump_free(&dump);
  return rc;
}
