/* `pipegemm inspect`: what the compiler made of each kernel, read from a
 * binary without a GPU. Runs cuobjdump twice (-res-usage, then -sass on our
 * kernels only), hands its lines to sass.c, and prints one row per kernel of
 * each variant and architecture: resources, blocks per SM at the default
 * configuration, the SASS census, and whether the SASS shows the mechanism
 * the variant's registry entry claims. --check turns that last column into
 * one line per violated rule and exit code 1. Here: the phases of the
 * command; cuobjdump is inspect_tool.c's, the rows and the report
 * inspect_report.c's. */
#include "inspect_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"

/* ---- the command ------------------------------------------------------------------ */

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

/* ---- the phases of the command ---------------------------------------------------- */

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

/* What is missing altogether: a variant's kernel on an architecture the
 * binary has code for, or the instance the default configuration launches;
 * and a kernel without SASS. */
static void note_missing(inspect_state *state) {
  const pgc_dump *dump = &state->dump;
  char line[INSPECT_MESSAGE_SIZE];
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
  qsort(state->rows, (size_t)state->row_count, sizeof *state->rows, inspect_compare_rows);
  for (int r = 0; r < state->row_count; ++r) inspect_fill_row(&state->rows[r]);
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

int pgc_cmd_inspect(const pgc_options *opts) {
  inspect_state state;
  memset(&state, 0, sizeof state);
  state.opts = opts;
  pgc_dump_init(&state.dump);
  int rc = locate_binary(&state);
  if (rc == PGC_EXIT_OK) rc = check_swap(opts);
  if (rc == PGC_EXIT_OK) rc = inspect_prepare_disassembler(&state);
  if (rc == PGC_EXIT_OK) rc = inspect_read_resources(&state);
  if (rc == PGC_EXIT_OK) rc = select_rows(&state);
  if (rc == PGC_EXIT_OK) rc = inspect_read_sass(&state);
  if (rc == PGC_EXIT_OK) rc = judge_rows(&state);
  if (rc == PGC_EXIT_OK) rc = inspect_print_report(&state);
  if (rc == PGC_EXIT_OK && opts->inspect_check) rc = inspect_report_violations(&state);
  inspect_free(&state);
  return rc;
}
