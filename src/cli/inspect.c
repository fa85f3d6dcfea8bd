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
#include <unistd.h>

#include "commands.h"
#include "measure/report.h"
#include "output.h"
#include "introspect.h"
#include "adapters/proc.h"
#include "adapters/sass.h"

/* Set by CMake to the cuobjdump found at configure time (the CUDA toolkit's,
 * or the one of the nvidia-cuda-cuobjdump wheel). */
#ifndef PG_CUOBJDUMP_PATH
#define PG_CUOBJDUMP_PATH ""
#endif
/* The nvdisasm found at configure time, which `cuobjdump -sass` runs. */
#ifndef PG_NVDISASM_PATH
#define PG_NVDISASM_PATH ""
#endif
/* The installed tool's disassemblers, from its bin directory. */
#ifndef PG_LIBEXEC_FROM_BIN
#define PG_LIBEXEC_FROM_BIN "../libexec/pipegemm"
#endif

/* Exit code 3 (docs/design.md, "The command line"): what the command needs
 * is not on this machine. */
#define EXIT_NO_DISASSEMBLER PGC_EXIT_NO_GPU
#define PATH_SIZE 4096
/* Room for a message naming two paths. */
#define MESSAGE_SIZE (2 * PATH_SIZE + 1024)
/* Violations kept per kernel; more are counted, not listed. */
#define MAX_VIOLATIONS 32
/* Directories put in front of cuobjdump's PATH: $PG_NVDISASM's,
 * cuobjdump's own, PG_NVDISASM_PATH's. */
#define HELPER_DIRS 3

/* ---- a growing string -------------------------------------------------------- */

typedef struct {
  char *text;
  size_t len, capacity;
  int failed; /* out of memory: the text is incomplete */
} strbuf;

/* Room for `len` more bytes and a NUL; 0, or -1 (and failed) without it. */
static int sb_reserve(strbuf *sb, size_t len) {
  if (sb->failed) return -1;
  if (sb->len + len + 1 <= sb->capacity) return 0;
  size_t capacity = sb->capacity ? sb->capacity : 256;
  while (capacity < sb->len + len + 1) capacity *= 2;
  char *grown = realloc(sb->text, capacity);
  if (!grown) {
    sb->failed = 1;
    return -1;
  }
  sb->text = grown;
  sb->capacity = capacity;
  return 0;
}

static void sb_puts(strbuf *sb, const char *text) {
  size_t len = strlen(text);
  if (sb_reserve(sb, len) != 0) return;
  memcpy(sb->text + sb->len, text, len + 1);
  sb->len += len;
}

/* One word for /bin/sh, after a space unless it is the first. */
static void sb_word(strbuf *sb, const char *word) {
  size_t gap = sb->len ? 1 : 0;
  size_t len = pgc_shell_quote(NULL, 0, word, PGC_QUOTE_ALWAYS);
  if (sb_reserve(sb, gap + len) != 0) return;
  if (gap) sb->text[sb->len++] = ' ';
  pgc_shell_quote(sb->text + sb->len, len + 1, word, PGC_QUOTE_ALWAYS);
  sb->len += len;
}

/* ---- finding cuobjdump --------------------------------------------------------- */

/* cuobjdump, and where it runs nvdisasm from. */
typedef struct {
  char path[PATH_SIZE];
  const char *source; /* as the report says it */
  char version[64];   /* "V13.5.37", or "" */
  char helper_dirs[HELPER_DIRS][PATH_SIZE];
  const char *path_prepend[HELPER_DIRS];
  int helper_count;
} disassembler;

/* Where an installed tool keeps its own copy of a disassembler that the
 * build fetched into .deps/ (cmake --install copies it, so that the installed
 * tool outlives the build tree): <bindir>/PG_LIBEXEC_FROM_BIN/<name>, found
 * from this executable's own place. "" when that place is unknown. */
static void installed_copy(const char *name, char *buf, size_t size) {
  buf[0] = '\0';
  char self[PATH_SIZE], dir[PATH_SIZE];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return;
  self[len] = '\0';
  pgc_dirname(self, dir, sizeof dir);
  if (snprintf(buf, size, "%s/%s/%s", dir, PG_LIBEXEC_FROM_BIN, name) >= (int)size) buf[0] = '\0';
}

void pgc_inspect_no_cuobjdump_text(char *buf, size_t size, const char *configured) {
  snprintf(buf, size,
           "no cuobjdump: $PG_CUOBJDUMP is not set, %s%s, none on the PATH (in a "
           "checkout, make deps fetches cuobjdump and nvdisasm into .deps/, where the "
           "next make finds them; elsewhere, set PG_CUOBJDUMP to one: the CUDA "
           "toolkit's, or the nvidia-cuda-cuobjdump pip wheel's)",
           configured[0] ? "no longer there: " : "none found when pipegemm was configured",
           configured);
}

/* $PG_CUOBJDUMP, else the installed copy, else the configure-time path,
 * else the PATH. 0, or -1 with a one-line reason. */
static int find_cuobjdump(disassembler *tool, char *err, size_t err_size) {
  char installed[PATH_SIZE];
  installed_copy("cuobjdump", installed, sizeof installed);
  const char *const baked[] = {installed, PG_CUOBJDUMP_PATH, NULL};
  pgc_tool_search search = {"cuobjdump", NULL, NULL, "PG_CUOBJDUMP", baked, 0};
  pgc_tool_origin origin = PGC_TOOL_FROM_PATH;
  int rc = pgc_find_tool(&search, tool->path, sizeof tool->path, &origin);
  if (rc == PGC_TOOL_FOUND) {
    tool->source = origin == PGC_TOOL_FROM_ENV ? "$PG_CUOBJDUMP"
                   : origin == PGC_TOOL_FROM_PATH ? "PATH"
                   : strcmp(tool->path, installed) == 0
                       ? "installed with pipegemm"
                       : "found when pipegemm was configured";
    return 0;
  }
  if (rc == PGC_TOOL_UNUSABLE)
    snprintf(err, err_size, "%s", tool->path);
  else
    pgc_inspect_no_cuobjdump_text(err, err_size, PG_CUOBJDUMP_PATH);
  return -1;
}

static void add_helper_dir(disassembler *tool, const char *executable) {
  if (tool->helper_count == HELPER_DIRS) return;
  char *dir = tool->helper_dirs[tool->helper_count];
  pgc_dirname(executable, dir, PATH_SIZE);
  tool->path_prepend[tool->helper_count++] = dir;
}

/* cuobjdump -sass runs nvdisasm, found on its PATH: the child's PATH starts
 * with $PG_NVDISASM's directory, then cuobjdump's own (the toolkit and the
 * wheels keep the two side by side), then that of the nvdisasm found at
 * configure time. 0, or -1 with a reason. */
static int find_nvdisasm_dirs(disassembler *tool, char *err, size_t err_size) {
  const char *env = getenv("PG_NVDISASM");
  if (env && env[0]) {
    if (!pgc_is_executable(env)) {
      snprintf(err, err_size, "PG_NVDISASM=%s is not an executable file", env);
      return -1;
    }
    add_helper_dir(tool, env);
  }
  add_helper_dir(tool, tool->path);
  if (pgc_is_executable(PG_NVDISASM_PATH)) add_helper_dir(tool, PG_NVDISASM_PATH);
  return 0;
}

/* ---- running it ------------------------------------------------------------------ */

typedef enum {
  RUN_OK = 0,
  RUN_FAILED,        /* err says why: exit code 1 */
  RUN_NO_TOOL,       /* cuobjdump, or the nvdisasm it runs, cannot run: 3 */
  RUN_NO_DEVICE_CODE /* the binary holds no CUDA code */
} run_result;

typedef int (*line_fn)(void *ctx, const char *line);

/* Hands each line of `text` (its line break taken off) to `feed`; reads on
 * to the end after a failure. 0, or -1 when a line failed. */
static int feed_lines(char *text, line_fn feed, void *ctx) {
  int failed = 0;
  for (char *line = text; *line;) {
    char *end = strchr(line, '\n');
    if (end) *end = '\0';
    if (!failed && feed(ctx, line) != 0) failed = 1;
    if (!end) break;
    line = end + 1;
  }
  return failed ? -1 : 0;
}

/* How a run of cuobjdump that failed, or printed an error, is told: with
 * its own first error line, since "exit status 1" alone hides which of its
 * helpers is missing. */
static run_result judge_failure(const char *what, const pgc_proc_result *output, char *err,
                                size_t err_size) {
  char line[MESSAGE_SIZE / 2];
  int said_error = pgc_error_line(output->err, line, sizeof line);
  int code = output->exit_code;
  if (code == 0 && !said_error) return RUN_OK;
  if (code != 0 && strstr(output->err, "does not contain device code"))
    return RUN_NO_DEVICE_CODE;
  if (output->signal)
    snprintf(err, err_size, "cuobjdump %s was killed by signal %d", what, output->signal);
  else if (code != 0)
    snprintf(err, err_size, "cuobjdump %s exited with status %d%s%s", what, code,
             line[0] ? ": " : "", line);
  else
    snprintf(err, err_size, "cuobjdump %s reported an error: %s", what, line);
  if (strstr(line, "nvdisasm")) {
    size_t len = strlen(err);
    snprintf(err + len, err_size - len,
             " (in a checkout, make deps fetches nvdisasm with cuobjdump into .deps/; "
             "elsewhere, set PG_NVDISASM to one: the CUDA toolkit's, or the "
             "nvidia-cuda-nvdisasm pip wheel's)");
  }
  /* The shell could not run it, or it could not run its helper. */
  if (code == 126 || code == 127 || strstr(line, "Could not find executable"))
    return RUN_NO_TOOL;
  return RUN_FAILED;
}

/* Runs cuobjdump with `args` (quoted words) and hands each line of its
 * stdout to `feed`. On failure, a one-line reason in err. */
static run_result run_cuobjdump(const disassembler *tool, const char *what, const char *args,
                                line_fn feed, void *ctx, char *err, size_t err_size) {
  strbuf command = {0};
  sb_word(&command, tool->path);
  sb_puts(&command, " ");
  sb_puts(&command, args);
  if (command.failed) {
    free(command.text);
    snprintf(err, err_size, "out of host memory");
    return RUN_FAILED;
  }
  pgc_proc_options options = {tool->path_prepend, tool->helper_count, 0};
  pgc_proc_result output;
  char why[MESSAGE_SIZE / 2];
  int rc = pgc_proc_run(command.text, &options, &output, why, sizeof why);
  free(command.text);
  if (rc != 0) {
    snprintf(err, err_size, "cannot run cuobjdump %s: %s", what, why);
    return RUN_FAILED;
  }
  run_result result = judge_failure(what, &output, err, err_size);
  if (result == RUN_OK && feed_lines(output.out, feed, ctx) != 0) {
    snprintf(err, err_size, "out of host memory");
    result = RUN_FAILED;
  }
  pgc_proc_result_free(&output);
  return result;
}

static int feed_res_usage(void *ctx, const char *line) {
  return pgc_dump_res_usage_line(ctx, line);
}

static int feed_sass(void *ctx, const char *line) {
  return pgc_dump_sass_line(ctx, line);
}

/* The release in the output of `cuobjdump --version` ("V13.5.37"). */
static int feed_version(void *ctx, const char *line) {
  disassembler *tool = ctx;
  const char *release = strstr(line, ", V");
  if (release && tool->version[0] == '\0') {
    release += 2;
    snprintf(tool->version, sizeof tool->version, "%.*s", (int)strcspn(release, " \r\n"),
             release);
  }
  return 0;
}

/* ---- what is judged, and how ------------------------------------------------------ */

typedef struct {
  const pg_variant_info *claim;  /* whose rules, whose name in the report */
  const pg_variant_info *source; /* whose kernels (the claim's, unless --swap) */
  const pg_kernel_spec *claim_kernel, *source_kernel;
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
  const pg_kernel_spec *spec = row->judged->claim_kernel;
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
  const pg_variant_info *source = row->judged->source;
  const pg_kernel_spec *spec = row->judged->source_kernel;
  const pgc_arch_limits *limits = pgc_arch_limits_of(kernel->sm);
  const char *launched = spec->launched ? spec->launched : spec->symbol;

  row->launched = strcmp(row->display, launched) == 0;
  row->threads = row->launched ? source->threads : -1;
  row->static_smem = kernel->has_resources
                         ? pgc_static_smem_bytes(limits, kernel->shared_bytes)
                         : -1;
  row->dynamic_smem = -1;
  if (row->launched) {
    size_t bytes = 0;
    row->dynamic_smem =
        spec->dynamic_smem &&
                pg_variant_smem_bytes(source, 0, &bytes) == PG_OK
            ? (long)bytes
            : 0;
  }
  row->blocks = -1;
  row->limited_by[0] = '\0';
  if (row->launched && kernel->has_resources && row->static_smem >= 0) {
    if (!limits) {
      snprintf(row->limited_by, sizeof row->limited_by, "no limits for %s",
               kernel->arch);
    } else if (kernel->sm < source->min_cc) {
      snprintf(row->limited_by, sizeof row->limited_by, "needs sm_%d",
               source->min_cc);
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
  const pg_kernel_spec *claim = row->judged->claim_kernel;
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
  cells[i++] = pgc_cell_text(row->judged->claim->name);
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
    "beside its kernel, in src/kernels/) and no Hopper-only instruction is in pre-sm_90 code; "
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
    const pg_kernel_spec *claim_kernel = pg_variant_kernel(info);
    if (!claim_kernel) continue; /* cublas, auto */
    const pg_variant_info *source = opts->swap_claim == info ? opts->swap_kernels : info;
    const pg_kernel_spec *source_kernel = pg_variant_kernel(source);
    if (!source_kernel) continue;
    judged[count++] = (judged_variant){info, source, claim_kernel, source_kernel};
  }
  return count;
}

static void print_lines_to(FILE *out, const line_list *list) {
  for (int i = 0; i < list->count; ++i) fprintf(out, "%s\n", list->lines[i]);
}


/* ---- the phases of the command ---------------------------------------------------- */

/* What the phases share: each fills its part and returns an exit code; the
 * next runs only after PGC_EXIT_OK. inspect_free releases it all. */
typedef struct {
  const pgc_options *opts;
  char binary[PATH_SIZE];
  disassembler tool;
  pgc_dump dump;
  judged_variant judged[PGC_MAX_VARIANTS];
  int judged_count;
  inspect_row *rows; /* one per judged kernel, sorted once judged */
  int row_count;
  line_list problems; /* kernels missing altogether, SASS missing */
  char archs_text[PGC_MAX_ARCHS * (PGC_ARCH_NAME_SIZE + 2)];
} inspect_state;

static void inspect_free(inspect_state *state) {
  free(state->rows);
  free_lines(&state->problems);
  pgc_dump_free(&state->dump);
}

/* The binary to read: --binary, else this executable. */
static int locate_binary(inspect_state *state) {
  const char *given = state->opts->inspect_binary;
  if (given) {
    snprintf(state->binary, sizeof state->binary, "%s", given);
    struct stat facts;
    if (access(state->binary, R_OK) != 0 || stat(state->binary, &facts) != 0) {
      fprintf(stderr, "pipegemm inspect: cannot read %s: %s\n", state->binary,
              strerror(errno));
      return PGC_EXIT_USAGE;
    }
    if (!S_ISREG(facts.st_mode)) {
      fprintf(stderr, "pipegemm inspect: %s is %s (--binary takes an executable, a "
                      "library or an object file)\n",
              state->binary, S_ISDIR(facts.st_mode) ? "a directory" : "not a regular file");
      return PGC_EXIT_USAGE;
    }
    return PGC_EXIT_OK;
  }
  /* By its real path: cuobjdump reading /proc/self/exe would read itself. */
  ssize_t len = readlink("/proc/self/exe", state->binary, sizeof state->binary - 1);
  if (len < 0) {
    fprintf(stderr, "pipegemm inspect: cannot find this executable (/proc/self/exe): %s\n",
            strerror(errno));
    return PGC_EXIT_FAILED;
  }
  state->binary[len] = '\0';
  return PGC_EXIT_OK;
}

static int check_swap(const pgc_options *opts) {
  if (!opts->swap_claim) return PGC_EXIT_OK;
  if (!pg_variant_kernel(opts->swap_claim) || !pg_variant_kernel(opts->swap_kernels)) {
    fprintf(stderr, "pipegemm inspect: --swap needs two variants with kernels of "
                    "pipegemm's own (not cublas)\n");
    return PGC_EXIT_USAGE;
  }
  return PGC_EXIT_OK;
}

/* cuobjdump and nvdisasm's directories, and a first run: --version. */
static int prepare_disassembler(inspect_state *state) {
  disassembler *tool = &state->tool;
  char err[MESSAGE_SIZE];
  if (find_cuobjdump(tool, err, sizeof err) != 0 ||
      find_nvdisasm_dirs(tool, err, sizeof err) != 0) {
    fprintf(stderr, "pipegemm inspect: %s\n", err);
    return EXIT_NO_DISASSEMBLER;
  }
  if (run_cuobjdump(tool, "--version", "--version", feed_version, tool, err, sizeof err) !=
      RUN_OK) {
    fprintf(stderr, "pipegemm inspect: %s does not run: %s\n", tool->path, err);
    return EXIT_NO_DISASSEMBLER;
  }
  return PGC_EXIT_OK;
}

/* A failed run's exit code, after its line. */
static int run_failed(run_result run, const char *err) {
  fprintf(stderr, "pipegemm inspect: %s\n", err);
  return run == RUN_NO_TOOL ? EXIT_NO_DISASSEMBLER : PGC_EXIT_FAILED;
}

/* Resources of every kernel: fast, and it names them. */
static int read_resources(inspect_state *state) {
  char err[MESSAGE_SIZE];
  strbuf args = {0};
  sb_word(&args, "-res-usage");
  sb_word(&args, state->binary);
  run_result run = args.failed ? RUN_FAILED
                               : run_cuobjdump(&state->tool, "-res-usage", args.text,
                                               feed_res_usage, &state->dump, err, sizeof err);
  if (args.failed) snprintf(err, sizeof err, "out of host memory");
  free(args.text);
  if (run == RUN_NO_DEVICE_CODE || (run == RUN_OK && state->dump.count == 0)) {
    fprintf(stderr, "pipegemm inspect: %s holds no CUDA kernels\n", state->binary);
    return PGC_EXIT_USAGE;
  }
  return run == RUN_OK ? PGC_EXIT_OK : run_failed(run, err);
}

/* A row for each kernel of each judged variant (template instances
 * included). */
static int select_rows(inspect_state *state) {
  pgc_dump *dump = &state->dump;
  state->judged_count = select_judged(state->opts, state->judged, PGC_MAX_VARIANTS);
  size_t capacity = (size_t)(dump->count > 0 ? dump->count : 1) *
                    (size_t)(state->judged_count > 0 ? state->judged_count : 1);
  state->rows = calloc(capacity, sizeof *state->rows);
  if (!state->rows) {
    fprintf(stderr, "pipegemm: out of host memory\n");
    return PGC_EXIT_FAILED;
  }
  for (int j = 0; j < state->judged_count; ++j) {
    for (int k = 0; k < dump->count; ++k) {
      inspect_row *row = &state->rows[state->row_count];
      pgc_kernel_display_name(dump->kernels[k].name, row->display, sizeof row->display);
      if (!pgc_kernel_has_stem(row->display, state->judged[j].source_kernel->symbol))
        continue;
      row->judged = &state->judged[j];
      row->kernel = &dump->kernels[k];
      row->template_arg = pgc_kernel_template_arg(row->display);
      ++state->row_count;
    }
  }
  return PGC_EXIT_OK;
}

/* The SASS of those kernels only (-fun): the rest of the binary (the
 * measuring harness) would double the time cuobjdump takes. */
static int read_sass(inspect_state *state) {
  if (state->row_count == 0) return PGC_EXIT_OK;
  strbuf names = {0};
  for (int r = 0; r < state->row_count; ++r) {
    int seen = 0;
    for (int s = 0; s < r && !seen; ++s)
      seen = strcmp(state->rows[s].kernel->name, state->rows[r].kernel->name) == 0;
    if (seen) continue;
    if (names.len) sb_puts(&names, ",");
    sb_puts(&names, state->rows[r].kernel->name);
  }
  strbuf args = {0};
  sb_word(&args, "-sass");
  sb_word(&args, "-fun");
  sb_word(&args, names.failed ? "" : names.text);
  sb_word(&args, state->binary);
  int failed = args.failed || names.failed;
  free(names.text);
  char err[MESSAGE_SIZE];
  run_result run = failed ? RUN_FAILED
                          : run_cuobjdump(&state->tool, "-sass", args.text, feed_sass,
                                          &state->dump, err, sizeof err);
  if (failed) snprintf(err, sizeof err, "out of host memory");
  free(args.text);
  return run == RUN_OK ? PGC_EXIT_OK : run_failed(run, err);
}

/* What is missing altogether: a variant's kernel on an architecture the
 * binary has code for, or the instance the default configuration launches;
 * and a kernel without SASS. */
static void note_missing(inspect_state *state) {
  const pgc_dump *dump = &state->dump;
  char line[MESSAGE_SIZE];
  for (int j = 0; j < state->judged_count; ++j) {
    const judged_variant *judged = &state->judged[j];
    const pg_kernel_spec *spec = judged->source_kernel;
    for (int a = 0; a < dump->arch_count; ++a) {
      if (!arch_has_row(state->rows, state->row_count, judged, dump->archs[a], NULL)) {
        snprintf(line, sizeof line, "inspect: %s (%s): no kernel %s in %s",
                 judged->claim->name, dump->archs[a], spec->symbol, state->binary);
        add_line(&state->problems, line);
      } else if (spec->launched && !arch_has_row(state->rows, state->row_count, judged,
                                                 dump->archs[a], spec->launched)) {
        snprintf(line, sizeof line,
                 "inspect: %s (%s): no kernel %s, which the default configuration "
                 "launches, in %s",
                 judged->claim->name, dump->archs[a], spec->launched, state->binary);
        add_line(&state->problems, line);
      }
    }
  }
  for (int r = 0; r < state->row_count; ++r) {
    const inspect_row *row = &state->rows[r];
    if (row->kernel->has_sass) continue;
    snprintf(line, sizeof line, "inspect: %s (%s, %s): cuobjdump -sass showed no code",
             row->judged->claim->name, row->kernel->arch, row->display);
    add_line(&state->problems, line);
  }
}

/* Each row's figures and its verdict, in report order. */
static int judge_rows(inspect_state *state) {
  qsort(state->rows, (size_t)state->row_count, sizeof *state->rows, compare_rows);
  for (int r = 0; r < state->row_count; ++r) fill_row(&state->rows[r]);
  note_missing(state);
  if (state->problems.failed) {
    fprintf(stderr, "pipegemm: out of host memory\n");
    return PGC_EXIT_FAILED;
  }
  size_t archs_len = 0;
  state->archs_text[0] = '\0';
  for (int a = 0; a < state->dump.arch_count; ++a) {
    size_t room = sizeof state->archs_text - archs_len;
    int n = snprintf(state->archs_text + archs_len, room, "%s%s", a ? ", " : "",
                     state->dump.archs[a]);
    if (n > 0 && (size_t)n < room) archs_len += (size_t)n;
  }
  return PGC_EXIT_OK;
}

/* The report on stdout: facts, one row per kernel, notes. */
static int print_inspect_report(const inspect_state *state) {
  const pgc_options *opts = state->opts;
  pgc_cell *cells = calloc((size_t)(state->row_count > 0 ? state->row_count : 1) *
                               INSPECT_COLUMNS,
                           sizeof *cells);
  if (!cells) {
    fprintf(stderr, "pipegemm: out of host memory\n");
    return PGC_EXIT_FAILED;
  }
  for (int r = 0; r < state->row_count; ++r) {
    if (row_cells(&state->rows[r], &cells[(size_t)r * INSPECT_COLUMNS]) != INSPECT_COLUMNS) {
      fprintf(stderr, "pipegemm inspect: internal error: row and columns disagree\n");
      free(cells);
      return PGC_EXIT_FAILED;
    }
  }
  const disassembler *tool = &state->tool;
  char tool_text[PATH_SIZE + 128];
  snprintf(tool_text, sizeof tool_text, "%s%s%s, %s", tool->path,
           tool->version[0] ? ", " : "", tool->version, tool->source);
  char swap_text[2 * 64 + 2] = "";
  if (opts->swap_claim)
    snprintf(swap_text, sizeof swap_text, "%s=%s", opts->swap_claim->name,
             opts->swap_kernels->name);
  pgc_fact facts[] = {
      {"binary", "binary", pgc_cell_text(state->binary), 0, NULL, PGC_SHOW_ALL},
      {"disassembler", "disassembler", pgc_cell_text(tool_text), 0, NULL, PGC_SHOW_ALL},
      {"architectures", "architectures", pgc_cell_text(state->archs_text), 0, NULL,
       PGC_SHOW_ALL},
      {"kernels", "kernels", pgc_cell_int(state->row_count), 0, NULL, PGC_SHOW_ALL},
      {"swap", "--swap (self-test)", pgc_cell_text(swap_text), 0, NULL, PGC_SHOW_ALL},
  };
  pgc_report report = {
      .command = "inspect",
      .facts = facts,
      .fact_count = (int)(sizeof facts / sizeof facts[0]) - (opts->swap_claim ? 0 : 1),
      .columns = inspect_columns,
      .column_count = INSPECT_COLUMNS,
      .cells = cells,
      .row_count = state->row_count,
      .notes = report_notes,
      .note_count = REPORT_NOTES,
  };
  pgc_print_report(pgc_stdout(), opts->format, &report);
  free(cells);
  /* Out before --check's lines on stderr follow it; and none of them
   * after a report that was lost. */
  return pgc_output_check(pgc_stdout(), "the report") == 0 ? PGC_EXIT_OK : PGC_EXIT_FAILED;
}

/* --check: one line on stderr per problem and per broken rule, then the
 * count; exit code 1 when there is any. */
static int report_violations(const inspect_state *state) {
  int violations = state->problems.count;
  print_lines_to(stderr, &state->problems);
  for (int r = 0; r < state->row_count; ++r) {
    const inspect_row *row = &state->rows[r];
    int shown = row->violation_count < MAX_VIOLATIONS ? row->violation_count : MAX_VIOLATIONS;
    for (int v = 0; v < shown; ++v) {
      char line[MESSAGE_SIZE];
      pgc_violation_line(row->judged->claim->name, row->kernel, &row->violations[v],
                         line, sizeof line);
      fprintf(stderr, "%s\n", line);
    }
    violations += row->violation_count;
  }
  if (violations > 0) {
    fprintf(stderr, "inspect: %d violation%s in %s\n", violations, violations == 1 ? "" : "s",
            state->binary);
    return PGC_EXIT_FAILED;
  }
  fprintf(stderr, "inspect: every kernel shows its mechanism (%d kernels; %s)\n",
          state->row_count, state->archs_text);
  return PGC_EXIT_OK;
}

int pgc_cmd_inspect(const pgc_options *opts) {
  inspect_state state;
  memset(&state, 0, sizeof state);
  state.opts = opts;
  pgc_dump_init(&state.dump);
  int rc = locate_binary(&state);
  if (rc == PGC_EXIT_OK) rc = check_swap(opts);
  if (rc == PGC_EXIT_OK) rc = prepare_disassembler(&state);
  if (rc == PGC_EXIT_OK) rc = read_resources(&state);
  if (rc == PGC_EXIT_OK) rc = select_rows(&state);
  if (rc == PGC_EXIT_OK) rc = read_sass(&state);
  if (rc == PGC_EXIT_OK) rc = judge_rows(&state);
  if (rc == PGC_EXIT_OK) rc = print_inspect_report(&state);
  if (rc == PGC_EXIT_OK && opts->inspect_check) rc = report_violations(&state);
  inspect_free(&state);
  return rc;
}
