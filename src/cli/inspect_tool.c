/* `pipegemm inspect`, cuobjdump: where it is ($PG_CUOBJDUMP, the copy
 * installed with pipegemm, the one found at configure time, the PATH) and
 * where it finds nvdisasm, running it with a PATH that holds nvdisasm, its
 * failures told with its own error line, and its two readings of the
 * binary (-res-usage, then -sass of our kernels only) fed line by line to
 * sass.c. */
#include "inspect_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adapters/proc.h"

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

/* Where an installed tool keeps its own copy of a disassembler that the
 * build fetched into .deps/ (cmake --install copies it, so that the installed
 * tool outlives the build tree): <bindir>/PG_LIBEXEC_FROM_BIN/<name>, found
 * from this executable's own place. "" when that place is unknown. */
static void installed_copy(const char *name, char *buf, size_t size) {
  buf[0] = '\0';
  char self[INSPECT_PATH_SIZE], dir[INSPECT_PATH_SIZE];
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
  char installed[INSPECT_PATH_SIZE];
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
  pgc_dirname(executable, dir, INSPECT_PATH_SIZE);
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
  char line[INSPECT_MESSAGE_SIZE / 2];
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
  char why[INSPECT_MESSAGE_SIZE / 2];
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

/* ---- the readings ------------------------------------------------------------------ */

/* cuobjdump and nvdisasm's directories, and a first run: --version. */
int inspect_prepare_disassembler(inspect_state *state) {
  disassembler *tool = &state->tool;
  char err[INSPECT_MESSAGE_SIZE];
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
int inspect_read_resources(inspect_state *state) {
  char err[INSPECT_MESSAGE_SIZE];
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

/* The SASS of those kernels only (-fun): the rest of the binary (the
 * measuring harness) would double the time cuobjdump takes. */
int inspect_read_sass(inspect_state *state) {
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
  char err[INSPECT_MESSAGE_SIZE];
  run_result run = failed ? RUN_FAILED
                          : run_cuobjdump(&state->tool, "-sass", args.text, feed_sass,
                                          &state->dump, err, sizeof err);
  if (failed) snprintf(err, sizeof err, "out of host memory");
  free(args.text);
  return run == RUN_OK ? PGC_EXIT_OK : run_failed(run, err);
}
