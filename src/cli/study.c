/* `pipegemm study <experiment>`: the experiment of one source, rerun here and
 * printed beside the source's own figures.
 *
 * pipelining: the "CUDA Kernel Study: Pipelining" write-up (RTX A6000). Same
 * kernels (128x128x8 block tile, 16x16 threads, 8x8 per thread), same size
 * (2048^3 unless --size says otherwise), same protocol (5 + 10 warm-up runs,
 * 20 timed), cp.async at STAGES=2; plus cuBLAS, so the numbers have a
 * reference on this GPU.
 *
 * single-warp: the "A study on CUDA async memcpy" blog post (RTX 4070). Its
 * 32x32xK GEMM (K = 65536 unless --k says otherwise) on one block of one
 * warp, with its two kernels (src/kernels/20_single_warp.cu): the reference
 * and the 2-stage block-scoped cuda::pipeline. Both go through the measuring
 * core of bench (bench.h), as a variant does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "measure/session.h"
#include "commands.h"
#include "introspect.h"
#include "output.h"
#include "profile.h"

/* The write-up's protocol: "5 warm-up runs + 10 extra warm-up runs + 20
 * measured runs". It reports the average; we report the median. */
#define SEED_WARMUP_RUNS 5
#define SEED_EXTRA_WARMUP_RUNS 10
#define SEED_TIMED_RUNS 20
/* The write-up's problem size and cp.async depth. */
#define SEED_SIZE 2048
#define SEED_CP_ASYNC_STAGES 2

/* The write-up's "Benchmark Results" table, as published: NVIDIA RTX A6000
 * (CC 8.6), M = N = K = 2048, block tile 128x128x8, thread tile 8x8,
 * cp.async STAGES = 2, all three reported correct. Source: the "CUDA Kernel
 * Study: Pipelining" write-up (RTX A6000). */
typedef struct {
  const char *variant;     /* our registry name for the write-up's kernel */
  int stages;              /* 0: the variant's default */
  const char *source_kernel; /* the write-up's own name for it */
  double avg_ms;
  double gflops;
  double speedup; /* over the write-up's baseline */
} source_figure;

static const source_figure source_a6000_table[] = {
    {"baseline", 0, "Baseline (No Pipeline)", 2.296, 7484.0, 1.00},
    {"pingpong", 0, "Ping-Pong (Double Buffering)", 2.189, 7846.8, 1.049},
    {"cp_async", SEED_CP_ASYNC_STAGES, "cp.async 2-Stage", 1.908, 9003.3, 1.203},
};
#define SOURCE_ROWS ((int)(sizeof source_a6000_table / sizeof source_a6000_table[0]))
/* The write-up's rows, then cuBLAS. */
#define STUDY_RUNS (SOURCE_ROWS + 1)

#define MS_DECIMALS 4
#define SOURCE_MS_DECIMALS 3 /* as published */
#define TFLOPS_DECIMALS 2
#define GFLOPS_DECIMALS 1
#define SPEEDUP_DECIMALS 3

static const pgc_column study_columns[] = {
    {"variant", "variant", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    {"stages", "stages", PGC_ALIGN_RIGHT, 0, PGC_SHOW_ALL},
    {"m", "M", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"n", "N", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"k", "K", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"median_ms", "median ms", PGC_ALIGN_RIGHT, MS_DECIMALS, PGC_SHOW_ALL},
    {"tflops", "TFLOP/s", PGC_ALIGN_RIGHT, TFLOPS_DECIMALS, PGC_SHOW_ALL},
    {"x_baseline", "× baseline", PGC_ALIGN_RIGHT, SPEEDUP_DECIMALS, PGC_SHOW_ALL},
    {"verdict", "verdict", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    {"source_kernel", "A6000 kernel", PGC_ALIGN_LEFT, 0, PGC_SHOW_DATA},
    {"source_avg_ms", "A6000 ms", PGC_ALIGN_RIGHT, SOURCE_MS_DECIMALS, PGC_SHOW_ALL},
    {"source_gflops", "A6000 GFLOPS", PGC_ALIGN_RIGHT, GFLOPS_DECIMALS,
     PGC_SHOW_ALL},
    {"source_x_baseline", "A6000 × baseline", PGC_ALIGN_RIGHT, SPEEDUP_DECIMALS,
     PGC_SHOW_ALL},
};
#define STUDY_COLUMNS ((int)(sizeof study_columns / sizeof study_columns[0]))

static void study_row_cells(const pgc_result_row *row, const source_figure *source,
                            pgc_cell *cells) {
  int i = 0;
  cells[i++] = pgc_cell_text(row->variant);
  cells[i++] = row->stages > 0 ? pgc_cell_int(row->stages) : pgc_cell_absent();
  cells[i++] = pgc_cell_int(row->m);
  cells[i++] = pgc_cell_int(row->n);
  cells[i++] = pgc_cell_int(row->k);
  cells[i++] = pgc_cell_real(row->median_ms);
  cells[i++] = pgc_cell_real(row->tflops);
  cells[i++] = pgc_cell_real(row->x_baseline);
  cells[i++] = pgc_cell_text(row->verdict_text);
  cells[i++] = source ? pgc_cell_text(source->source_kernel) : pgc_cell_absent();
  cells[i++] = source ? pgc_cell_real(source->avg_ms) : pgc_cell_absent();
  cells[i++] = source ? pgc_cell_real(source->gflops) : pgc_cell_absent();
  cells[i++] = source ? pgc_cell_real(source->speedup) : pgc_cell_absent();
}

/* Looks up the study's variants; a missing one is a broken build. */
static int resolve_runs(const pg_variant_info **variants, int *stages) {
  for (int i = 0; i < STUDY_RUNS; ++i) {
    const char *name =
        i < SOURCE_ROWS ? source_a6000_table[i].variant : PGC_CUBLAS_VARIANT;
    const pg_variant_info *variant = pg_variant_find(name);
    if (!variant) {
      fprintf(stderr, "pipegemm: variant '%s' is missing from the registry\n",
              name);
      return PGC_EXIT_FAILED;
    }
    int wanted = i < SOURCE_ROWS ? source_a6000_table[i].stages : 0;
    if (wanted == 0) wanted = variant->default_stages;
    if (wanted < variant->min_stages || wanted > variant->max_stages) {
      fprintf(stderr,
              "pipegemm: variant '%s' does not allow %d stages, which the "
              "study needs\n",
              name, wanted);
      return PGC_EXIT_FAILED;
    }
    variants[i] = variant;
    stages[i] = wanted;
  }
  return PGC_EXIT_OK;
}

static void print_study_report(const pgc_options *opts,
                               const pgc_session *session,
                               const pgc_result_row *rows) {
  pgc_header header;
  pgc_header_for(&header, session, opts);
  pgc_cell cells[STUDY_RUNS * STUDY_COLUMNS];
  for (int r = 0; r < STUDY_RUNS; ++r)
    study_row_cells(&rows[r], r < SOURCE_ROWS ? &source_a6000_table[r] : NULL,
                    &cells[r * STUDY_COLUMNS]);

  static const char source_note[] =
      "A6000 columns: the \"CUDA Kernel Study: Pipelining\" write-up's table "
      "(RTX A6000, CC 8.6, 2048^3, average of 20 runs after 5 + 10 warm-up). "
      "Ours: median of 20 runs on the GPU above.";
  char size_note[PGC_COMMAND_LINE_SIZE];
  snprintf(size_note, sizeof size_note,
           "This run is %dx%dx%d; the A6000 figures are for %dx%dx%d, so only "
           "the × baseline columns compare.",
           opts->m, opts->n, opts->k, SEED_SIZE, SEED_SIZE, SEED_SIZE);
  const char *notes[2] = {source_note, size_note};
  int note_count = opts->m == SEED_SIZE && opts->n == SEED_SIZE &&
                           opts->k == SEED_SIZE
                       ? 1
                       : 2;
  pgc_report report = {
      .command = "study pipelining",
      .facts = header.facts,
      .fact_count = header.count,
      .columns = study_columns,
      .column_count = STUDY_COLUMNS,
      .cells = cells,
      .row_count = STUDY_RUNS,
      .notes = notes,
      .note_count = note_count,
  };
  pgc_print_report(pgc_stdout(), opts->format, &report);
}

/* The write-up's "Key Metric Comparison" tables, as published: Nsight
 * Compute on the RTX A6000 (CC 8.6), 2048^3, STAGES = 2. Keys are the rows
 * of the profiler's metric table (src/adapters/ncu.c); rows the write-up has no
 * figure for print "-". Source: the "CUDA Kernel Study: Pipelining"
 * write-up (RTX A6000), "NCU Profiling
 * Comparison". */
typedef struct {
  const char *key;
  double baseline, pingpong, cp_async; /* in the order of source_a6000_table */
} source_metric;

static const source_metric source_a6000_metrics[] = {
    {"duration_ms", 2.29, 2.19, 1.90},
    {"sm_throughput_pct", 28.71, 30.85, 35.60},
    {"memory_throughput_pct", 37.30, 38.64, 43.87},
    {"dram_throughput_pct", 6.28, 6.69, 6.62},
    {"dram_bandwidth_gbps", 45.77, 48.73, 48.28},
    {"l1tex_throughput_pct", 48.57, 50.61, 57.12},
    {"l2_throughput_pct", 14.28, 14.58, 17.19},
    {"issued_warps_per_scheduler", 0.37, 0.40, 0.46},
    {"eligible_warps_per_scheduler", 0.42, 0.46, 0.53},
    {"warp_cycles_per_issued_inst", 5.33, 4.94, 4.30},
    {"registers_per_thread", 146, 162, 254},
    {"static_smem_kb", 8.19, 16.38, 16.38},
    {"achieved_occupancy_pct", 16.54, 16.66, 16.62},
    {"l1tex_hit_rate_pct", 16.46, 14.02, 14.63},
    {"stall_wait", 1.64, 1.47, 1.28},
    {"stall_long_scoreboard", 0.95, 0.93, 0.19},
    {"stall_barrier", 0.21, 0.29, 0.16},
    {"shared_excessive_wavefronts", 33554432, 33554432, 39845888},
    {"shared_excessive_pct", 38, 38, 42},
    {"global_excessive_pct", 18, 18, 18},
};
#define SEED_METRICS \
  ((int)(sizeof source_a6000_metrics / sizeof source_a6000_metrics[0]))

/* The profiler table under the timings: our three kernels beside the
 * write-up's. Runs after the timing session is closed, so that ncu's
 * process has the GPU to itself. */
static int profile_pipelining(const pgc_options *opts,
                              const pg_variant_info *const *variants,
                              const int *stages) {
  static double values[SOURCE_ROWS][PGC_PROFILE_MAX_METRICS];
  for (int r = 0; r < SOURCE_ROWS; ++r)
    for (int m = 0; m < PGC_PROFILE_MAX_METRICS; ++m) values[r][m] = NAN;
  for (int i = 0; i < SEED_METRICS; ++i) {
    int index = pgc_ncu_metric_index(source_a6000_metrics[i].key);
    if (index < 0 || index >= PGC_PROFILE_MAX_METRICS) {
      fprintf(stderr, "pipegemm: internal error: no profiler metric '%s'\n",
              source_a6000_metrics[i].key);
      return PGC_EXIT_FAILED;
    }
    values[0][index] = source_a6000_metrics[i].baseline;
    values[1][index] = source_a6000_metrics[i].pingpong;
    values[2][index] = source_a6000_metrics[i].cp_async;
  }
  static const char *const titles[SOURCE_ROWS] = {"A6000 baseline", "A6000 pingpong",
                                                "A6000 cp_async"};
  pgc_profile_reference references[SOURCE_ROWS];
  pgc_run_spec runs[SOURCE_ROWS];
  for (int r = 0; r < SOURCE_ROWS; ++r) {
    references[r] = (pgc_profile_reference){
        titles[r], "RTX A6000, the write-up", variants[r]->name, stages[r],
        SEED_SIZE, SEED_SIZE, SEED_SIZE, values[r]};
    runs[r] = (pgc_run_spec){variants[r], stages[r]};
  }
  static const char source_note[] =
      "A6000 columns: the \"CUDA Kernel Study: Pipelining\" write-up's Nsight "
      "Compute tables (RTX A6000, CC 8.6, 2048^3, cp.async at 2 stages); "
      "'-' where it gives no figure. Its shared memory is all static; ours is "
      "dynamic for cp_async.";
  const char *notes[] = {source_note};
  pgc_profile_extras extras = {"study pipelining --profile", references,
                               SOURCE_ROWS, notes, 1};
  pgc_profile_config config = {opts->ncu_path, opts->raw_path, opts->device,
                               opts->m,        opts->n,        opts->k,
                               opts->quiet};
  if (opts->format == PGC_FORMAT_TABLE) fputc('\n', pgc_stdout());
  return pgc_profile_runs(opts, &config, runs, SOURCE_ROWS, &extras);
}

static int study_pipelining(const pgc_options *opts) {
  const pg_variant_info *variants[STUDY_RUNS];
  int stages[STUDY_RUNS];
  if (resolve_runs(variants, stages) != PGC_EXIT_OK) return PGC_EXIT_FAILED;

  pgc_measure_config config = {opts->device,
                               SEED_WARMUP_RUNS + SEED_EXTRA_WARMUP_RUNS,
                               SEED_TIMED_RUNS,
                               opts->check,
                               opts->flush_l2,
                               opts->quiet,
                               opts->seed,
                               1,
                               PGH_UNIFORM};
  pgc_session session;
  int exit_code = pgc_session_open(&session, &config);
  if (exit_code != PGC_EXIT_OK) return exit_code;
  pgc_problem problem;
  exit_code = pgc_problem_open(&session, &problem, opts->m, opts->n, opts->k);
  if (exit_code == PGC_EXIT_OK) {
    pgc_result_row rows[STUDY_RUNS];
    session.run_total = STUDY_RUNS;
    for (int i = 0; i < STUDY_RUNS; ++i)
      if (pgc_run_one(&session, &problem, variants[i], stages[i], &rows[i]) !=
          PGC_EXIT_OK)
        exit_code = PGC_EXIT_FAILED;
    pgc_result_rows_relate(rows, STUDY_RUNS, PGC_BASELINE_VARIANT,
                           PGC_CUBLAS_VARIANT, PGC_CUBLAS_TF32_VARIANT);
    print_study_report(opts, &session, rows);
    pgc_problem_close(&problem);
  }
  pgc_session_close(&session);
  pg_shutdown();
  if (opts->profile) {
    /* The timings out before minutes of profiling, and no profiling after
     * they could not be written. */
    if (pgc_output_check(pgc_stdout(), "the report") != 0) return PGC_EXIT_FAILED;
    /* A failed timing run stays a failure; otherwise the profiler's code
     * (3 when ncu is missing or may not read the counters). */
    int profile_code = profile_pipelining(opts, variants, stages);
    if (exit_code == PGC_EXIT_OK) exit_code = profile_code;
  }
  return exit_code;
}

/* ---- study single-warp ---------------------------------------------------- */

/* The post's figures, as published: "When running on my RTX 4070, the
 * running time is 12040 ms (baseline) vs 9875 ms (pingpong pipeline)", for
 * ref_kernel and pipeline_kernel at M = N = 32, K = 65536, <<<1, 32>>>.
 * Source: the "A study on CUDA async memcpy" blog post
 * (RTX 4070). */
#define POST_K 65536
typedef struct {
  const char *kernel;      /* our name for it, the row's first cell */
  const char *post_kernel; /* the post's name and label */
  double post_time;        /* in the post's unit, "ms" */
  pg_status (*run)(int m, int n, int k, const float *a, int lda,
                   const float *b, int ldb, float *c, int ldc,
                   cudaStream_t stream);
} single_warp_kernel;

static const single_warp_kernel single_warp_kernels[] = {
    {"reference", "ref_kernel (baseline)", 12040.0, pg_single_warp_reference},
    {"pipeline", "pipeline_kernel (pingpong pipeline)", 9875.0,
     pg_single_warp_pipeline},
};
#define SINGLE_WARP_RUNS \
  ((int)(sizeof single_warp_kernels / sizeof single_warp_kernels[0]))
#define NS_PER_MS 1e6

static const pgc_column single_warp_columns[] = {
    {"kernel", "kernel", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    {"m", "M", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"n", "N", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"k", "K", PGC_ALIGN_RIGHT, 0, PGC_SHOW_ALL},
    {"median_ms", "median ms", PGC_ALIGN_RIGHT, MS_DECIMALS, PGC_SHOW_ALL},
    {"min_ms", "min ms", PGC_ALIGN_RIGHT, MS_DECIMALS, PGC_SHOW_ALL},
    {"max_ms", "max ms", PGC_ALIGN_RIGHT, MS_DECIMALS, PGC_SHOW_ALL},
    {"ns_per_k_step", "ns/K step", PGC_ALIGN_RIGHT, 1, PGC_SHOW_ALL},
    {"x_reference", "× reference", PGC_ALIGN_RIGHT, SPEEDUP_DECIMALS,
     PGC_SHOW_ALL},
    {"verdict", "verdict", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    {"source_kernel", "RTX 4070 kernel", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    {"seed_time", "RTX 4070 time", PGC_ALIGN_RIGHT, 0,
     PGC_SHOW_ALL},
    {"seed_x_reference", "RTX 4070 × reference", PGC_ALIGN_RIGHT,
     SPEEDUP_DECIMALS, PGC_SHOW_ALL},
};
#define SINGLE_WARP_COLUMNS \
  ((int)(sizeof single_warp_columns / sizeof single_warp_columns[0]))

/* What pgh_time calls: one kernel of the experiment on the problem. */
typedef struct {
  const single_warp_kernel *kernel;
  const pgc_problem *problem;
} single_warp_call;

static pg_status run_single_warp(void *ctx, cudaStream_t stream) {
  const single_warp_call *call = ctx;
  const pgc_problem *p = call->problem;
  return call->kernel->run(p->m, p->n, p->k, p->a, p->lda, p->b, p->ldb, p->c,
                           p->ldc, stream);
}

static void single_warp_row_cells(const pgc_result_row *row,
                                  const single_warp_kernel *kernel,
                                  double x_reference, double post_x_reference,
                                  pgc_cell *cells) {
  int i = 0;
  cells[i++] = pgc_cell_text(kernel->kernel);
  cells[i++] = pgc_cell_int(row->m);
  cells[i++] = pgc_cell_int(row->n);
  cells[i++] = pgc_cell_int(row->k);
  cells[i++] = pgc_cell_real(row->median_ms);
  cells[i++] = pgc_cell_real(row->min_ms);
  cells[i++] = pgc_cell_real(row->max_ms);
  cells[i++] = pgc_cell_real(row->k > 0 ? row->median_ms * NS_PER_MS / row->k
                                        : NAN);
  cells[i++] = pgc_cell_real(x_reference);
  cells[i++] = pgc_cell_text(row->verdict_text);
  cells[i++] = pgc_cell_text(kernel->post_kernel);
  cells[i++] = pgc_cell_real(kernel->post_time);
  cells[i++] = pgc_cell_real(post_x_reference);
}

static void print_single_warp_report(const pgc_options *opts,
                                     const pgc_session *session,
                                     const pgc_result_row *rows) {
  pgc_header header;
  pgc_header_for(&header, session, opts);
  pgc_cell cells[SINGLE_WARP_RUNS * SINGLE_WARP_COLUMNS];
  const double reference_ms = rows[0].median_ms;
  const double post_reference = single_warp_kernels[0].post_time;
  for (int r = 0; r < SINGLE_WARP_RUNS; ++r)
    single_warp_row_cells(&rows[r], &single_warp_kernels[r],
                          reference_ms / rows[r].median_ms, /* NaN if either is */
                          post_reference / single_warp_kernels[r].post_time,
                          &cells[r * SINGLE_WARP_COLUMNS]);

  static const char source_note[] =
      "RTX 4070 columns: the \"A study on CUDA async memcpy\" blog post, as "
      "published: \"the running time is 12040 ms (baseline) vs 9875 ms "
      "(pingpong pipeline)\" (M = N = 32, K = 65536, one block of 32 threads; "
      "its protocol is not given). Ours: median of the timed runs on the GPU "
      "above.";
  static const char unit_note[] =
      "The post's unit reads ms; 12040 ms over 65536 K steps would be 184 us a "
      "step, far above any global-memory latency, so compare the × reference "
      "columns, not the times.";
  static const char latency_note[] =
      "Every K step waits for its loads, so the times follow memory latency: "
      "with the L2 flushed (the default) A and B start in DRAM; with "
      "--flush-l2 off they may still sit in L2 from the run before, which "
      "shortens every step and leaves the pipeline less latency to hide.";
  char size_note[PGC_COMMAND_LINE_SIZE];
  snprintf(size_note, sizeof size_note,
           "This run has K = %d; the RTX 4070 figures are for K = %d.", opts->k,
           POST_K);
  const char *notes[4] = {source_note, unit_note, latency_note, size_note};
  pgc_report report = {
      .command = "study single-warp",
      .facts = header.facts,
      .fact_count = header.count,
      .columns = single_warp_columns,
      .column_count = SINGLE_WARP_COLUMNS,
      .cells = cells,
      .row_count = SINGLE_WARP_RUNS,
      .notes = notes,
      .note_count = opts->k == POST_K ? 3 : 4,
  };
  pgc_print_report(pgc_stdout(), opts->format, &report);
}

static int study_single_warp(const pgc_options *opts) {
  pgc_measure_config config = {opts->device, opts->warmup, opts->iters,
                               opts->check,  opts->flush_l2, opts->quiet,
                               opts->seed,   1,            PGH_UNIFORM};
  pgc_session session;
  int exit_code = pgc_session_open(&session, &config);
  if (exit_code != PGC_EXIT_OK) return exit_code;
  pgc_problem problem;
  exit_code = pgc_problem_open(&session, &problem, opts->m, opts->n, opts->k);
  if (exit_code == PGC_EXIT_OK) {
    pgc_result_row rows[SINGLE_WARP_RUNS];
    session.run_total = SINGLE_WARP_RUNS;
    for (int i = 0; i < SINGLE_WARP_RUNS; ++i) {
      const single_warp_kernel *kernel = &single_warp_kernels[i];
      pgc_result_row_init(&rows[i], kernel->kernel, 0, problem.m, problem.n,
                          problem.k);
      pgc_run_begin(&session, kernel->kernel, &rows[i]);
      single_warp_call call = {kernel, &problem};
      if (pgc_run_measure(&session, &problem, kernel->kernel, run_single_warp,
                          &call, PG_PRECISION_STRICT, &rows[i]) != PGC_EXIT_OK)
        exit_code = PGC_EXIT_FAILED;
    }
    print_single_warp_report(opts, &session, rows);
    pgc_problem_close(&problem);
  }
  pgc_session_close(&session);
  return exit_code;
}

int pgc_cmd_study(const pgc_options *opts) {
  switch (opts->study) {
    case PGC_STUDY_PIPELINING: return study_pipelining(opts);
    case PGC_STUDY_SINGLE_WARP: return study_single_warp(opts);
    case PGC_STUDY_NONE: break;
  }
  fprintf(stderr, "pipegemm: study needs an experiment (see pipegemm study --help)\n");
  return PGC_EXIT_USAGE;
}
