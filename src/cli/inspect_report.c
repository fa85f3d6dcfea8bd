/* `pipegemm inspect`'s rows and report: each kernel's figures (threads and
 * shared memory of the launched configuration, blocks per SM and what
 * limits it, the census by width) and whether its SASS holds to the rules
 * of the variant it is judged as; the table, CSV or JSON of them; and
 * --check's lines. */
#include "inspect_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/report.h"
#include "output.h"

/* ---- what is judged, and how ------------------------------------------------------ */

int inspect_compare_rows(const void *a, const void *b) {
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

void inspect_fill_row(inspect_row *row) {
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

/* ---- printing ---------------------------------------------------------------------- */

static void print_lines_to(FILE *out, const line_list *list) {
  for (int i = 0; i < list->count; ++i) fprintf(out, "%s\n", list->lines[i]);
}

/* The report on stdout: facts, one row per kernel, notes. */
int inspect_print_report(const inspect_state *state) {
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
  char tool_text[INSPECT_PATH_SIZE + 128];
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
int inspect_report_violations(const inspect_state *state) {
  int violations = state->problems.count;
  print_lines_to(stderr, &state->problems);
  for (int r = 0; r < state->row_count; ++r) {
    const inspect_row *row = &state->rows[r];
    int shown = row->violation_count < MAX_VIOLATIONS ? row->violation_count : MAX_VIOLATIONS;
    for (int v = 0; v < shown; ++v) {
      char line[INSPECT_MESSAGE_SIZE];
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
