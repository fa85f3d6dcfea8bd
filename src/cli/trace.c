/* `pipegemm trace`: one variant's traced kernel on one problem.
 *
 * The traced plan is the timed plan with its kernel swapped for the traced
 * twin (pg_plan_trace), so grid, shared memory and tensor maps are the ones
 * bench times. In order: check C (poisoned with NaN, as bench does); launch
 * the timed and the traced kernel in turn, L2 flushed before each, and take
 * the medians (the cost of tracing); read back the last traced launch's
 * records; check them against what any pipeline must obey; write the JSON;
 * print the summary. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/session.h"
#include "commands.h"
#include "measure/report.h"
#include "output.h"
#include "introspect.h"
#include "adapters/trace_format.h"

/* C = 1 * A * B + 0 * C, as bench runs it. */
#define GEMM_ALPHA 1.0f
#define GEMM_BETA 0.0f
#define MHZ_PER_GHZ 1000.0
#define PERCENT 100.0
#define TEXT_SIZE 160

/* Everything a traced run holds, released by trace_run_close. */
typedef struct {
  const pg_variant_info *variant;
  int stages;
  pg_plan *timed, *traced;
  pg_trace_layout layout;
  pg_trace_header *buffer; /* device */
  void *records;           /* the host's copy of the buffer */
  pg_plan_info timed_info, traced_info;
  pgc_result_row row;      /* the check's verdict and errors */
  double traced_ms, timed_ms;
} trace_run;

static int cuda_failed(const char *what, cudaError_t err) {
  pgc_print_cuda_error(what, err);
  return PGC_EXIT_FAILED;
}

static void trace_run_close(trace_run *run) {
  pg_plan_destroy(run->timed);
  pg_plan_destroy(run->traced);
  if (run->buffer != NULL) {
    const cudaError_t err = cudaFree(run->buffer);
    if (err != cudaSuccess) cuda_failed("cudaFree of the trace buffer", err);
  }
  free(run->records);
  memset(run, 0, sizeof *run);
}

/* ---- setting up --------------------------------------------------------------- */

static int make_plan(const trace_run *run, const pgc_problem *p, pg_plan **plan,
                     pg_plan_info *info) {
  pg_status st = pg_plan_create(plan, run->variant, run->stages, p->m, p->n, p->k, GEMM_ALPHA,
                                p->a, p->lda, p->b, p->ldb, GEMM_BETA, p->c, p->ldc);
  info->size = sizeof *info;
  if (st == PG_OK) st = pg_plan_describe(*plan, info);
  if (st == PG_OK) return PGC_EXIT_OK;
  pgc_print_status_error(run->variant->name, st);
  return PGC_EXIT_FAILED;
}

/* The buffer on the device, zeroed (no role: nothing recorded yet), with
 * the header that tells the kernel which blocks record; written in the
 * session's stream, which does not wait for the legacy default stream, so
 * that the kernels that follow in it find the buffer ready. */
static int make_buffer(pgc_session *session, trace_run *run) {
  cudaError_t err = cudaMalloc((void **)&run->buffer, run->layout.bytes);
  if (err != cudaSuccess) {
    run->buffer = NULL;
    return cuda_failed("cudaMalloc of the trace buffer", err);
  }
  err = cudaMemsetAsync(run->buffer, 0, run->layout.bytes, session->stream);
  if (err == cudaSuccess)
    err = cudaMemcpyAsync(run->buffer, &run->layout.header, sizeof run->layout.header,
                          cudaMemcpyHostToDevice, session->stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(session->stream);
  if (err != cudaSuccess) return cuda_failed("preparing the trace buffer", err);
  run->records = malloc(run->layout.bytes);
  if (run->records == NULL) {
    fprintf(stderr, "pipegemm: out of host memory for the trace (%zu bytes)\n",
            run->layout.bytes);
    return PGC_EXIT_FAILED;
  }
  return PGC_EXIT_OK;
}

static int open_run(const pgc_options *opts, pgc_session *session, const pgc_problem *problem,
                    trace_run *run) {
  memset(run, 0, sizeof *run);
  run->variant = opts->variants[0];
  run->stages = opts->stage_count > 0 ? opts->stages[0] : 0;
  run->traced_ms = run->timed_ms = NAN;
  if (make_plan(run, problem, &run->timed, &run->timed_info) != PGC_EXIT_OK ||
      make_plan(run, problem, &run->traced, &run->traced_info) != PGC_EXIT_OK)
    return PGC_EXIT_FAILED;
  run->stages = run->timed_info.stages;
  pg_status st = pg_trace_layout_of(run->traced, opts->trace_blocks, &run->layout);
  if (st != PG_OK) {
    pgc_print_status_error(run->variant->name, st);
    return PGC_EXIT_FAILED;
  }
  if (make_buffer(session, run) != PGC_EXIT_OK) return PGC_EXIT_FAILED;
  st = pg_plan_trace(run->traced, run->buffer);
  run->traced_info.size = sizeof run->traced_info;
  if (st == PG_OK) st = pg_plan_describe(run->traced, &run->traced_info);
  if (st != PG_OK) {
    pgc_print_status_error(run->variant->name, st);
    return PGC_EXIT_FAILED;
  }
  /* PG_TRACE_MIN_BLOCKS should prevent it; a GPU of another register file
   * might not. */
  if (run->traced_info.kernel.blocks_per_sm != run->timed_info.kernel.blocks_per_sm)
    fprintf(stderr,
            "pipegemm: warning: %s: the traced kernel fits %d blocks per SM, the timed one %d: "
            "the trace shows another occupancy than bench times\n",
            run->variant->name, run->traced_info.kernel.blocks_per_sm,
            run->timed_info.kernel.blocks_per_sm);
  return PGC_EXIT_OK;
}

/* ---- running ------------------------------------------------------------------ */

static pg_status launch(void *plan, cudaStream_t stream) {
  return pg_plan_launch((const pg_plan *)plan, stream);
}

/* One timed launch of `plan` between two events, L2 flushed before. */
static int timed_launch(pgc_session *session, const pg_plan *plan, cudaEvent_t start,
                        cudaEvent_t stop) {
  if (session->has_flusher) {
    const pg_status st = pgh_l2_flush(&session->flusher, session->stream);
    if (st != PG_OK) {
      pgc_print_status_error("flushing L2", st);
      return PGC_EXIT_FAILED;
    }
  }
  cudaError_t err = cudaEventRecord(start, session->stream);
  if (err != cudaSuccess) return cuda_failed("cudaEventRecord", err);
  const pg_status st = pg_plan_launch(plan, session->stream);
  if (st != PG_OK) {
    pgc_print_status_error("launching the kernel", st);
    return PGC_EXIT_FAILED;
  }
  err = cudaEventRecord(stop, session->stream);
  return err == cudaSuccess ? PGC_EXIT_OK : cuda_failed("cudaEventRecord", err);
}

/* The milliseconds between each of `count` event pairs (events[2i], events[2i+1]). */
static int elapsed(const cudaEvent_t *events, int count, float *ms) {
  for (int i = 0; i < count; ++i) {
    const cudaError_t err = cudaEventElapsedTime(&ms[i], events[2 * i], events[2 * i + 1]);
    if (err != cudaSuccess) return cuda_failed("cudaEventElapsedTime", err);
  }
  return PGC_EXIT_OK;
}

/* The timed (ms[2i]) and the traced (ms[2i+1]) kernel's medians. */
static int medians(const float *ms, int iters, trace_run *run) {
  float *timed = malloc((size_t)iters * sizeof *timed);
  float *traced = malloc((size_t)iters * sizeof *traced);
  int exit_code = timed && traced ? PGC_EXIT_OK : PGC_EXIT_FAILED;
  if (exit_code == PGC_EXIT_OK) {
    for (int i = 0; i < iters; ++i) {
      timed[i] = ms[2 * i];
      traced[i] = ms[2 * i + 1];
    }
    float median, low, high;
    pgh_stats(timed, iters, &median, &low, &high);
    run->timed_ms = median;
    pgh_stats(traced, iters, &median, &low, &high);
    run->traced_ms = median;
  } else {
    fprintf(stderr, "pipegemm: out of host memory\n");
  }
  free(timed);
  free(traced);
  return exit_code;
}

/* The timed and the traced kernel in turn, so that drifting clocks or a
 * warming GPU touch both alike; the traced one goes last, and its records
 * stay in the buffer. Events of the warm-up launches are not read. */
static int time_in_turn(pgc_session *session, trace_run *run) {
  const int warmup = session->config.warmup, iters = session->config.iters;
  const int pairs = 2 * iters; /* timed, traced, per iteration */
  cudaEvent_t *events = calloc((size_t)pairs * 2, sizeof *events);
  float *ms = calloc((size_t)pairs, sizeof *ms);
  int made = 0, exit_code = events && ms ? PGC_EXIT_OK : PGC_EXIT_FAILED;
  if (exit_code != PGC_EXIT_OK) fprintf(stderr, "pipegemm: out of host memory\n");
  for (; exit_code == PGC_EXIT_OK && made < pairs * 2; ++made) {
    const cudaError_t err = cudaEventCreate(&events[made]);
    if (err != cudaSuccess) exit_code = cuda_failed("cudaEventCreate", err);
  }
  for (int i = 0; exit_code == PGC_EXIT_OK && i < warmup + iters; ++i) {
    const int slot = i < warmup ? 0 : 2 * (i - warmup); /* warm-up reuses the first pairs */
    exit_code = timed_launch(session, run->timed, events[2 * slot], events[2 * slot + 1]);
    if (exit_code == PGC_EXIT_OK)
      exit_code = timed_launch(session, run->traced, events[2 * slot + 2], events[2 * slot + 3]);
  }
  if (exit_code == PGC_EXIT_OK) {
    const cudaError_t err = cudaStreamSynchronize(session->stream);
    exit_code = err == cudaSuccess ? elapsed(events, pairs, ms)
                                   : cuda_failed("the timed launches", err);
  }
  if (exit_code == PGC_EXIT_OK) exit_code = medians(ms, iters, run);
  for (int e = 0; e < made; ++e) {
    const cudaError_t err = cudaEventDestroy(events[e]);
    if (err != cudaSuccess && exit_code == PGC_EXIT_OK) exit_code = cuda_failed("cudaEventDestroy", err);
  }
  free(events);
  free(ms);
  return exit_code;
}

static int download(pgc_session *session, trace_run *run) {
  const cudaError_t err =
      cudaMemcpyAsync(run->records, run->buffer, run->layout.bytes, cudaMemcpyDeviceToHost,
                      session->stream);
  const cudaError_t done = err == cudaSuccess ? cudaStreamSynchronize(session->stream) : err;
  return done == cudaSuccess ? PGC_EXIT_OK : cuda_failed("reading the trace back", done);
}

/* The rate to fall back on when the tracks are too short to give one: the
 * SM clock sampled now, else the device's maximum. */
static double fallback_ghz(pgc_session *session) {
  double mhz = NAN;
  if (pgh_sm_clock_mhz(session->stream, &mhz) != PG_OK || !(mhz > 0))
    mhz = session->info.max_sm_clock_mhz > 0 ? session->info.max_sm_clock_mhz : 1000.0;
  return mhz / MHZ_PER_GHZ;
}

/* ---- the JSON file ---------------------------------------------------------------- */

static int write_json(const pgc_options *opts, const pgc_session *session,
                      const trace_run *run, const pgc_trace *trace) {
  char command[PGC_COMMAND_LINE_SIZE], date[TEXT_SIZE];
  pgc_command_line_text(opts, command, sizeof command);
  pgc_date_text(date, sizeof date);
  const pgc_trace_meta meta = {run->variant->name, run->stages, opts->m, opts->n, opts->k,
                               session->info.name, command, date,
                               run->layout.grid_blocks, run->layout.header.stride,
                               run->traced_ms, run->timed_ms};
  FILE *file = pgc_output_open(opts->out_path);
  if (file == NULL) {
    fprintf(stderr, "pipegemm: cannot write %s: %s\n", opts->out_path, strerror(errno));
    return PGC_EXIT_FAILED;
  }
  if (pgc_trace_write_json(file, trace, &meta) != 0) {
    fclose(file);
    fprintf(stderr, "pipegemm: out of host memory for the trace's events\n");
    return PGC_EXIT_FAILED;
  }
  return pgc_output_close(file, opts->out_path) == 0 ? PGC_EXIT_OK : PGC_EXIT_FAILED;
}

/* ---- the summary ------------------------------------------------------------------ */

static const pgc_column block_columns[] = {
    {"block", "block", PGC_ALIGN_RIGHT, 0, PGC_SHOW_ALL},
    {"sm", "SM", PGC_ALIGN_RIGHT, 0, PGC_SHOW_ALL},
    {"start_us", "start µs", PGC_ALIGN_RIGHT, 1, PGC_SHOW_ALL},
    {"span_us", "span µs", PGC_ALIGN_RIGHT, 1, PGC_SHOW_ALL},
    {"k_steps", "K tiles", PGC_ALIGN_RIGHT, 0, PGC_SHOW_ALL},
    {"in_flight_mean", "in flight", PGC_ALIGN_RIGHT, 2, PGC_SHOW_ALL},
    {"in_flight_max", "max", PGC_ALIGN_RIGHT, 0, PGC_SHOW_ALL},
    {"bubble_pct", "bubble %", PGC_ALIGN_RIGHT, 1, PGC_SHOW_ALL},
    {"k_tile_ns", "ns/K tile", PGC_ALIGN_RIGHT, 1, PGC_SHOW_ALL},
    {"compute_ns", "compute ns", PGC_ALIGN_RIGHT, 1, PGC_SHOW_ALL},
    {"wait_ns", "wait ns", PGC_ALIGN_RIGHT, 1, PGC_SHOW_ALL},
};
#define BLOCK_COLUMNS ((int)(sizeof block_columns / sizeof block_columns[0]))

static void block_cells(const pgc_trace_block_summary *b, pgc_cell *cells) {
  cells[0] = pgc_cell_int(b->block);
  cells[1] = pgc_cell_int(b->smid);
  cells[2] = pgc_cell_real(b->start_us);
  cells[3] = pgc_cell_real(b->span_us);
  cells[4] = pgc_cell_int(b->steps);
  cells[5] = pgc_cell_real(b->in_flight_mean);
  cells[6] = pgc_cell_int(b->in_flight_max);
  cells[7] = pgc_cell_real(b->bubble * PERCENT);
  cells[8] = pgc_cell_real(b->k_tile_ns);
  cells[9] = pgc_cell_real(b->compute_ns);
  cells[10] = pgc_cell_real(b->wait_ns);
}

/* The table's header lines beyond bench's, with the texts they show. */
#define TRACE_FACTS 16
typedef struct {
  pgc_fact facts[PGC_HEADER_MAX_FACTS + TRACE_FACTS];
  int count;
  char run[TEXT_SIZE], sample[TEXT_SIZE], records[TEXT_SIZE];
  char check[PGC_VERDICT_TEXT_SIZE + TEXT_SIZE]; /* the row's verdict and its error */
  char clock[TEXT_SIZE], kernels[TEXT_SIZE], overhead[TEXT_SIZE], flight[TEXT_SIZE];
  char bubble[TEXT_SIZE], k_tile[TEXT_SIZE], invariants[TEXT_SIZE];
} trace_facts;

static void fact(trace_facts *f, const char *key, const char *label, pgc_cell value, int show) {
  if (f->count >= (int)(sizeof f->facts / sizeof f->facts[0])) return;
  f->facts[f->count++] = (pgc_fact){key, label, value, 4, NULL, show};
}

static void text_fact(trace_facts *f, const char *key, const char *label, const char *text) {
  fact(f, key, label, pgc_cell_text(text), PGC_SHOW_ALL);
}

static void describe_run(trace_facts *f, const pgc_options *opts, const trace_run *run,
                         const pgc_trace_summary *s) {
  snprintf(f->run, sizeof f->run, "%s, %d stage%s, %dx%dx%d", run->variant->name, run->stages,
           run->stages == 1 ? "" : "s", opts->m, opts->n, opts->k);
  snprintf(f->sample, sizeof f->sample, "%d of %d, every %d%s, on %d SMs", s->blocks,
           run->layout.grid_blocks, run->layout.header.stride,
           run->layout.header.stride == 1 ? "" : "th", s->sms);
  snprintf(f->check, sizeof f->check, "%s (max error / tolerance %.2e)", run->row.verdict_text,
           run->row.err_tol_ratio);
  snprintf(f->kernels, sizeof f->kernels,
           "%d registers, %d blocks/SM (timed: %d registers, %d blocks/SM)",
           run->traced_info.kernel.registers, run->traced_info.kernel.blocks_per_sm,
           run->timed_info.kernel.registers, run->timed_info.kernel.blocks_per_sm);
  snprintf(f->records, sizeof f->records, "%lld events, %lld dropped for want of room",
           s->records, s->dropped);
  text_fact(f, "run", "traced", f->run);
  text_fact(f, "sampled_blocks", "sampled blocks", f->sample);
  text_fact(f, "verdict", "C checked", f->check);
  text_fact(f, "kernels", "traced kernel", f->kernels);
  text_fact(f, "trace_file", "trace", opts->out_path);
  text_fact(f, "records", "records", f->records);
}

static void describe_timing(trace_facts *f, const trace_run *run, const pgc_trace *trace,
                            int iters) {
  snprintf(f->clock, sizeof f->clock, "%.3f GHz, %s", trace->ghz,
           trace->ghz_measured ? "from the tracks' globaltimer and clock64"
                               : "sampled (the tracks are too short to tell)");
  snprintf(f->overhead, sizeof f->overhead,
           "%.3fx: traced %.4f ms, timed %.4f ms (medians of %d launches each, in turn)",
           run->traced_ms / run->timed_ms, run->traced_ms, run->timed_ms, iters);
  fact(f, "clock_ghz", "", pgc_cell_real(trace->ghz), PGC_SHOW_DATA);
  fact(f, "clock", "SM clock", pgc_cell_text(f->clock), PGC_SHOW_TABLE);
  fact(f, "overhead", "tracing costs", pgc_cell_text(f->overhead), PGC_SHOW_TABLE);
  fact(f, "overhead_ratio", "", pgc_cell_real(run->traced_ms / run->timed_ms), PGC_SHOW_DATA);
  fact(f, "traced_ms", "", pgc_cell_real(run->traced_ms), PGC_SHOW_DATA);
  fact(f, "untraced_ms", "", pgc_cell_real(run->timed_ms), PGC_SHOW_DATA);
}

static void describe_pipeline(trace_facts *f, const pgc_trace_summary *s, int problems) {
  snprintf(f->flight, sizeof f->flight, "mean %.2f, max %d (issued, not yet ready)",
           s->in_flight_mean, s->in_flight_max);
  snprintf(f->bubble, sizeof f->bubble, "%.1f %% of the main loop waiting for data",
           s->bubble * PERCENT);
  snprintf(f->k_tile, sizeof f->k_tile, "%.1f ns (compute %.1f ns, data wait %.1f ns)",
           s->k_tile_ns, s->compute_ns, s->wait_ns);
  if (problems == 0)
    snprintf(f->invariants, sizeof f->invariants, "ok");
  else
    snprintf(f->invariants, sizeof f->invariants, "%d violation%s (below)", problems,
             problems == 1 ? "" : "s");
  fact(f, "copies_in_flight", "copies in flight", pgc_cell_text(f->flight), PGC_SHOW_TABLE);
  fact(f, "in_flight_mean", "", pgc_cell_real(s->in_flight_mean), PGC_SHOW_DATA);
  fact(f, "in_flight_max", "", pgc_cell_int(s->in_flight_max), PGC_SHOW_DATA);
  fact(f, "bubble", "bubble", pgc_cell_text(f->bubble), PGC_SHOW_TABLE);
  fact(f, "bubble_pct", "", pgc_cell_real(s->bubble * PERCENT), PGC_SHOW_DATA);
  fact(f, "k_tile", "time per K tile", pgc_cell_text(f->k_tile), PGC_SHOW_TABLE);
  fact(f, "k_tile_ns", "", pgc_cell_real(s->k_tile_ns), PGC_SHOW_DATA);
  fact(f, "compute_ns", "", pgc_cell_real(s->compute_ns), PGC_SHOW_DATA);
  fact(f, "wait_ns", "", pgc_cell_real(s->wait_ns), PGC_SHOW_DATA);
  text_fact(f, "invariants", "invariants", f->invariants);
}

static const char *const trace_notes[] = {
    "A block's events are what one thread saw (thread 0, or the first producer thread), on its "
    "SM's clock; start is on the timeline of the JSON file.",
    "in flight: copies issued and not yet ready, averaged over the time from the block's first "
    "issue to its last ready. bubble: the share of the main loop (first data wait to last "
    "compute end) spent waiting for data.",
    "ns/K tile: mean time from one compute start to the next; compute and wait: mean spans of "
    "a K tile.",
};
#define TRACE_NOTE_COUNT ((int)(sizeof trace_notes / sizeof trace_notes[0]))

static void print_summary(const pgc_options *opts, const pgc_session *session,
                          const trace_run *run, const pgc_trace *trace,
                          const pgc_trace_summary *s, const pgc_trace_problems *problems) {
  pgc_header header;
  pgc_header_for(&header, session, opts);
  trace_facts f;
  memset(&f, 0, sizeof f);
  for (int i = 0; i < header.count; ++i) f.facts[f.count++] = header.facts[i];
  describe_run(&f, opts, run, s);
  describe_timing(&f, run, trace, session->config.iters);
  describe_pipeline(&f, s, problems->count);
  pgc_cell *cells = calloc((size_t)(s->blocks > 0 ? s->blocks : 1) * BLOCK_COLUMNS, sizeof *cells);
  if (cells == NULL) {
    fprintf(stderr, "pipegemm: out of host memory\n");
    return;
  }
  for (int b = 0; b < s->blocks; ++b) block_cells(&s->per_block[b], &cells[b * BLOCK_COLUMNS]);
  const char *notes[TRACE_NOTE_COUNT + PGC_TRACE_MAX_PROBLEMS];
  int note_count = 0;
  for (int i = 0; i < TRACE_NOTE_COUNT; ++i) notes[note_count++] = trace_notes[i];
  for (int i = 0; i < problems->count && i < PGC_TRACE_MAX_PROBLEMS; ++i)
    notes[note_count++] = problems->text[i];
  const pgc_report report = {.command = "trace",
                             .facts = f.facts,
                             .fact_count = f.count,
                             .columns = block_columns,
                             .column_count = BLOCK_COLUMNS,
                             .cells = cells,
                             .row_count = s->blocks,
                             .notes = notes,
                             .note_count = note_count};
  pgc_print_report(pgc_stdout(), opts->format, &report);
  free(cells);
}

/* ---- the command ------------------------------------------------------------------ */

/* Parses, checks and reports the records of the last traced launch. */
static int report_trace(const pgc_options *opts, pgc_session *session, const trace_run *run) {
  const pg_variant_info *info = run->variant;
  const int k_tiles = (int)(((long long)opts->k + info->tile_k - 1) / info->tile_k);
  char err[TEXT_SIZE];
  pgc_trace trace;
  if (pgc_trace_parse(run->records, run->layout.bytes, run->stages, k_tiles,
                      fallback_ghz(session), &trace, err, sizeof err) != 0) {
    fprintf(stderr, "pipegemm: %s: %s\n", info->name, err);
    return PGC_EXIT_FAILED;
  }
  pgc_trace_problems problems;
  pgc_trace_summary summary;
  int exit_code = PGC_EXIT_OK;
  if (pgc_trace_check(&trace, &problems) < 0 || pgc_trace_summarise(&trace, &summary) != 0) {
    fprintf(stderr, "pipegemm: out of host memory for the trace\n");
    pgc_trace_free(&trace);
    return PGC_EXIT_FAILED;
  }
  for (int i = 0; i < problems.count && i < PGC_TRACE_MAX_PROBLEMS; ++i)
    fprintf(stderr, "pipegemm: %s: trace: %s\n", info->name, problems.text[i]);
  if (problems.count > 0) exit_code = PGC_EXIT_FAILED;
  if (write_json(opts, session, run, &trace) != PGC_EXIT_OK) exit_code = PGC_EXIT_FAILED;
  print_summary(opts, session, run, &trace, &summary, &problems);
  pgc_trace_summary_free(&summary);
  pgc_trace_free(&trace);
  return exit_code;
}

static int trace_problem(const pgc_options *opts, pgc_session *session,
                         const pgc_problem *problem) {
  trace_run run;
  int exit_code = open_run(opts, session, problem, &run);
  char label[TEXT_SIZE];
  snprintf(label, sizeof label, "%s stages=%d (traced)", run.variant->name, run.stages);
  if (exit_code == PGC_EXIT_OK) {
    pgc_result_row_init(&run.row, run.variant->name, run.stages, opts->m, opts->n, opts->k);
    pgc_run_begin(session, label, &run.row);
    exit_code = pgc_run_verify(session, problem, launch, run.traced, run.variant->precision,
                               label, &run.row);
  }
  if (exit_code == PGC_EXIT_OK) exit_code = time_in_turn(session, &run);
  if (exit_code == PGC_EXIT_OK) exit_code = download(session, &run);
  if (exit_code == PGC_EXIT_OK) exit_code = report_trace(opts, session, &run);
  if (run.row.verdict == PGC_VERDICT_FAIL) exit_code = PGC_EXIT_FAILED;
  trace_run_close(&run);
  return exit_code;
}

int pgc_cmd_trace(const pgc_options *opts) {
  /* The check is not optional: a trace of a wrong result explains nothing. */
  const pgc_measure_config config = {opts->device, opts->warmup, opts->iters, 1,
                                     opts->flush_l2, opts->quiet, opts->seed, 1,
                                     PGH_UNIFORM};
  pgc_session session;
  int exit_code = pgc_session_open(&session, &config);
  if (exit_code != PGC_EXIT_OK) return exit_code;
  session.run_total = 1;
  pgc_problem problem;
  exit_code = pgc_problem_open(&session, &problem, opts->m, opts->n, opts->k);
  if (exit_code == PGC_EXIT_OK) {
    exit_code = trace_problem(opts, &session, &problem);
    pgc_problem_close(&problem);
  }
  pgc_session_close(&session);
  pg_shutdown();
  return exit_code;
}
