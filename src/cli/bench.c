/* `pipegemm bench`: every (variant, stage count) at every shape, through
 * the measurement session (src/measure/session.h), and the table of what it
 * measured; with --shapes, the geometric means of the set. */
#include "measure/session.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "output.h"
#include "adapters/proc.h"
#include "shapes.h"


/* ---- pipegemm bench ------------------------------------------------------- */

static const char *const bench_notes[] = {
    "TFLOP/s counts 2*M*N*K per GEMM, every GEMM of a batch, over the median time. "
    "× baseline, × cuBLAS and × cuBLAS TF32: that variant's (baseline, cublas, "
    "cublas_tf32) median at the same shape and layout over this row's.",
    "% FFMA peak: of 2 x FP32 lanes per SM x SMs x the SM clock sampled right "
    "after the run. error/tol: max |C - reference| over the tolerance of the "
    "row's precision (TF32 entries are allowed one TF32 rounding per product); "
    "at most 1 passes.",
    "smem/block: shared memory per block (static + dynamic) at that stage "
    "count; blocks/SM: blocks resident per SM by the occupancy calculator. A "
    "stage that lowers blocks/SM trades latency hiding across warps for depth "
    "within one.",
};
#define BENCH_NOTE_COUNT ((int)(sizeof bench_notes / sizeof bench_notes[0]))

/* What one bench command runs: every run at every shape. rows and cells
 * are shape-major (pgc_geomeans' layout). */
typedef struct {
  pgc_shape_set shapes;
  pgc_run_spec *runs;
  int run_count;
  pgc_result_row *rows;
  pgc_cell *cells;
  char *summary; /* the set's geometric means; NULL for one shape */
} bench_runs;

static void bench_runs_free(bench_runs *work) {
  pgc_shape_set_free(&work->shapes);
  free(work->runs);
  free(work->rows);
  free(work->cells);
  free(work->summary);
  memset(work, 0, sizeof *work);
}

/* The shapes (--shapes FILE, else the one of --size/--m/--n/--k) and the
 * runs, with room for their rows. A file that cannot be read or a bad line
 * is a usage error, told before any GPU work. */
static int bench_runs_make(const pgc_options *opts, bench_runs *work) {
  memset(work, 0, sizeof *work);
  char err[PGC_SHAPES_ERROR_SIZE];
  /* Each line's layout, or the command line's (--op, --batch, --stride-*):
   * every op of a line or of --op is a shape of the set. */
  int rc = opts->shapes_path
               ? pgc_shapes_read_with(opts->shapes_path, &opts->layout, &work->shapes, err,
                                      sizeof err)
               : pgc_shapes_of_request(opts->m, opts->n, opts->k, &opts->layout, &work->shapes,
                                       err, sizeof err);
  if (rc != PGC_EXIT_OK) {
    fprintf(stderr, "pipegemm: %s\n", err);
    return rc;
  }
  work->run_count = pgc_expand_runs(opts, NULL, 0);
  if (work->run_count == 0) {
    fprintf(stderr,
            "pipegemm: no selected variant allows the requested stage counts "
            "(see pipegemm bench --help)\n");
    bench_runs_free(work);
    return PGC_EXIT_USAGE;
  }
  size_t rows = (size_t)work->run_count * (size_t)work->shapes.count;
  work->runs = calloc((size_t)work->run_count, sizeof *work->runs);
  work->rows = calloc(rows, sizeof *work->rows);
  work->cells = calloc(rows * (size_t)pgc_result_column_count, sizeof *work->cells);
  if (!work->shapes.shapes || !work->runs || !work->rows || !work->cells) {
    fprintf(stderr, "pipegemm: out of host memory\n");
    bench_runs_free(work);
    return PGC_EXIT_FAILED;
  }
  pgc_expand_runs(opts, work->runs, work->run_count);
  return PGC_EXIT_OK;
}

/* Every run at one shape, whose matrices live only meanwhile: a set needs
 * the device memory of its largest shape, not of all of them. A shape whose
 * matrices cannot be set up (the error is printed) gets ERROR rows, and
 * the set goes on with the next. */
static int bench_shape(pgc_session *session, const pgc_shape *shape,
                       const pgc_run_spec *runs, int run_count,
                       pgc_result_row *rows) {
  pgc_problem problem;
  int exit_code =
      pgc_problem_open_layout(session, &problem, shape->m, shape->n, shape->k, &shape->layout);
  if (exit_code != PGC_EXIT_OK) {
    pgc_problem_shape(&problem, shape->m, shape->n, shape->k, &shape->layout);
    for (int r = 0; r < run_count; ++r) {
      pgc_problem_row_init(&rows[r], runs[r].variant->name, runs[r].stages, &problem);
      pgc_result_row_set_verdict(&rows[r], PGC_VERDICT_ERROR,
                                 "the shape's matrices could not be set up");
    }
    session->run_index += run_count; /* the progress count goes on */
    return exit_code;
  }
  if (pgc_run_set(session, &problem, runs, run_count, rows) != PGC_EXIT_OK)
    exit_code = PGC_EXIT_FAILED;
  pgc_problem_close(&problem);
  return exit_code;
}

/* The set's geometric means as one more note; none for a single shape, so
 * that a --size run reports as it always has. */
static int bench_summary(bench_runs *work) {
  if (work->shapes.count < 2) return PGC_EXIT_OK;
  pgc_geomean *means = calloc((size_t)work->run_count, sizeof *means);
  if (!means) return PGC_EXIT_FAILED;
  /* × cuBLAS; × cuBLAS TF32 where only cublas_tf32 ran (a TF32 set). */
  const char *unit = PGC_CUBLAS_VARIANT;
  int cublas_shapes = pgc_geomeans(work->rows, work->run_count, work->shapes.count, unit, means);
  if (cublas_shapes == 0) {
    /* The note reads no mean where no cuBLAS run was timed, so the TF32
     * means may stand in means either way. */
    const int tf32_shapes = pgc_geomeans(work->rows, work->run_count, work->shapes.count,
                                         PGC_CUBLAS_TF32_VARIANT, means);
    if (tf32_shapes > 0) {
      unit = PGC_CUBLAS_TF32_VARIANT;
      cublas_shapes = tf32_shapes;
    }
  }
  size_t len = pgc_geomean_note(NULL, 0, work->runs, means, work->run_count, cublas_shapes, unit);
  if (len > 0) work->summary = malloc(len + 1);
  if (work->summary)
    pgc_geomean_note(work->summary, len + 1, work->runs, means, work->run_count, cublas_shapes,
                     unit);
  free(means);
  return len > 0 && !work->summary ? PGC_EXIT_FAILED : PGC_EXIT_OK;
}

static void print_bench_report(const pgc_options *opts, const pgc_session *session,
                               const bench_runs *work) {
  pgc_header header;
  pgc_header_for(&header, session, opts);
  int count = work->run_count * work->shapes.count;
  for (int r = 0; r < count; ++r)
    pgc_result_row_cells(&work->rows[r],
                         &work->cells[(size_t)r * pgc_result_column_count]);
  const char *notes[BENCH_NOTE_COUNT + 1];
  int note_count = 0;
  for (int i = 0; i < BENCH_NOTE_COUNT; ++i) notes[note_count++] = bench_notes[i];
  if (work->summary) notes[note_count++] = work->summary; /* the table ends with it */
  pgc_report report = {
      .command = "bench",
      .facts = header.facts,
      .fact_count = header.count,
      .columns = pgc_result_columns,
      .column_count = pgc_result_column_count,
      .cells = work->cells,
      .row_count = count,
      .notes = notes,
      .note_count = note_count,
  };
  pgc_print_report(pgc_stdout(), opts->format, &report);
}

int pgc_cmd_bench(const pgc_options *opts) {
  bench_runs work;
  int exit_code = bench_runs_make(opts, &work);
  if (exit_code != PGC_EXIT_OK) return exit_code;
  pgc_measure_config config = {opts->device,   opts->warmup, opts->iters,
                               opts->check,    opts->flush_l2, opts->quiet,
                               opts->seed,     opts->rounds, opts->inputs};
  /* One session for the whole set: the device, stream and L2 flusher are
   * set up once, and every shape is measured under the same conditions. */
  pgc_session session;
  exit_code = pgc_session_open(&session, &config);
  if (exit_code == PGC_EXIT_OK) {
    session.run_total = work.run_count * work.shapes.count;
    for (int s = 0; s < work.shapes.count; ++s)
      if (bench_shape(&session, &work.shapes.shapes[s], work.runs, work.run_count,
                      &work.rows[(size_t)s * (size_t)work.run_count]) != PGC_EXIT_OK)
        exit_code = PGC_EXIT_FAILED;
    pgc_result_rows_relate(work.rows, work.run_count * work.shapes.count,
                           PGC_BASELINE_VARIANT, PGC_CUBLAS_VARIANT,
                           PGC_CUBLAS_TF32_VARIANT);
    if (bench_summary(&work) != PGC_EXIT_OK) {
      fprintf(stderr, "pipegemm: out of host memory for the geometric means\n");
      exit_code = PGC_EXIT_FAILED;
    }
    print_bench_report(opts, &session, &work);
    pgc_session_close(&session);
    pg_shutdown();
  }
  bench_runs_free(&work);
  return exit_code;
}
