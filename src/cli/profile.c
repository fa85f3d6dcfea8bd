/* `pipegemm profile` and the profiler table of `study pipelining --profile`.
 *
 * For each (variant, stage count): build the ncu command line (ncu.c), run
 * it (proc.c), keep everything it printed (--raw), and read the first
 * profiled kernel out of it. ncu profiles this very executable running
 * `bench` for one launch, so the counters belong to the kernel bench times.
 * The parent process touches the GPU only to ask what a selector (auto)
 * runs. Here: the runs in turn and the command; running ncu and reading
 * its output is profile_ncu.c's, the report profile_table.c's. */
#include "profile_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "measure/report.h"
#include "output.h"
#include "introspect.h"

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
    int exit_code = pgc_profile_run_one(config, ctx->ncu, self, raw, row, &ctx->gpu,
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
  char ncu[PROFILE_PATH_SIZE], self[PROFILE_PATH_SIZE];
  if (pgc_profile_find_ncu(config->ncu_option, ncu, sizeof ncu) != 0) {
    fprintf(stderr, "pipegemm: Nsight Compute not found: %s\n", ncu);
    return PGC_EXIT_NO_GPU;
  }
  if (pgc_profile_find_self(opts, self, sizeof self) != 0) {
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
  pgc_profile_ncu_version(ncu, ctx.ncu_version, sizeof ctx.ncu_version);
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
    exit_code = pgc_profile_print_report(&ctx, rows, count);
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
