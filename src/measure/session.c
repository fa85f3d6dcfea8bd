/* The measurement session of pipegemm's tool (src/measure/session.h): its
 * device, stream and L2 flusher, one problem's inputs and FP64 reference,
 * and the verified, timed run of one (variant, stage count).
 *
 * Per run: poison C with NaN, run once, compare with the FP64 reference (so
 * a kernel that skips an element fails); time warm-up + timed runs with CUDA
 * events, flushing L2 before each; then sample the SM clock, since a
 * throttled GPU makes every number that follows slower for a reason that is
 * not the kernel's. */
#include "session.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "verify_math.h" /* PGV_UNIT_ROUNDOFF */

/* C = 1 * A * B + 0 * C: beta = 0 so that C need not be reset between runs
 * (a kernel that read C anyway would be caught: C starts as NaN). */
#define GEMM_ALPHA 1.0f
#define GEMM_BETA 0.0f

#define BYTES_PER_KIB 1024.0
#define MHZ_TO_HZ 1e6
#define FLOPS_PER_TFLOP 1e12
#define MS_PER_SECOND 1e3
#define FLOPS_PER_FMA 2.0
#define PERCENT 100.0

/* ---- numbers -------------------------------------------------------------- */

int pgc_fp32_lanes_per_sm(int cc_major, int cc_minor) {
  /* Volta/Turing SMs and the A100 (8.0) issue 64 FP32 FFMA per clock;
   * GA10x (8.6, 8.7), Ada (8.9), Hopper (9.0) and later issue 128. */
  enum { LANES_HALF = 64, LANES_FULL = 128 };
  if (cc_major < 7) return 0;
  if (cc_major == 7) return LANES_HALF;
  if (cc_major == 8 && cc_minor == 0) return LANES_HALF;
  return LANES_FULL;
}

double pgc_ffma_peak_tflops(int cc_major, int cc_minor, int sm_count,
                            double clock_mhz) {
  int lanes = pgc_fp32_lanes_per_sm(cc_major, cc_minor);
  if (lanes <= 0 || sm_count <= 0 || !(clock_mhz > 0)) return NAN;
  return FLOPS_PER_FMA * lanes * sm_count * clock_mhz * MHZ_TO_HZ /
         FLOPS_PER_TFLOP;
}

double pgc_gemm_tflops(int m, int n, int k, double ms) {
  return pgc_batch_tflops(m, n, k, 1, ms);
}

double pgc_batch_tflops(int m, int n, int k, int batch, double ms) {
  if (!(ms > 0) || !isfinite(ms)) return NAN;
  double flops = FLOPS_PER_FMA * (double)m * (double)n * (double)k * (double)batch;
  return flops / (ms / MS_PER_SECOND) / FLOPS_PER_TFLOP;
}

void pgc_cuda_version_text(int version, char *buf, size_t size) {
  /* CUDA encodes major * 1000 + minor * 10. */
  enum { MAJOR_UNIT = 1000, MINOR_UNIT = 10 };
  if (version <= 0)
    snprintf(buf, size, "unknown");
  else
    snprintf(buf, size, "%d.%d", version / MAJOR_UNIT,
             (version % MAJOR_UNIT) / MINOR_UNIT);
}

/* A and B from one --seed: the first and second outputs of a SplitMix64
 * generator seeded with it, so that no two seeds share an operand. */
static uint64_t operand_seed(uint64_t seed, unsigned operand) {
  const uint64_t golden_gamma = 0x9e3779b97f4a7c15ULL;
  uint64_t z = seed + golden_gamma * (uint64_t)(operand + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
enum { OPERAND_A = 0, OPERAND_B = 1 };

/* ---- error lines ---------------------------------------------------------- */

/* The CUDA error behind a status, when there is one to tell. */
static const char *cuda_detail(pg_status status) {
  if (pg_last_error_detail()[0] != '\0') return pg_last_error_detail();
  if (status != PG_ERR_CUDA && status != PG_ERR_NO_MEMORY &&
      status != PG_ERR_NO_DEVICE)
    return NULL;
  cudaError_t err = pg_last_cuda_error();
  return err == cudaSuccess ? NULL : cudaGetErrorString(err);
}

void pgc_print_status_error(const char *what, pg_status status) {
  const char *detail = cuda_detail(status);
  if (detail)
    fprintf(stderr, "pipegemm: %s: %s (%s)\n", what, pg_strerror(status), detail);
  else
    fprintf(stderr, "pipegemm: %s: %s\n", what, pg_strerror(status));
}

/* A step of one row's run failed: "pipegemm: <label>[: <step>]: ..." on
 * stderr, the row's verdict ERROR. Returns the exit code to stop with. */
static int row_failed(pgc_result_row *row, const char *label, const char *step,
                      pg_status status) {
  char what[PGC_VERDICT_TEXT_SIZE * 2];
  if (step)
    snprintf(what, sizeof what, "%s: %s", label, step);
  else
    snprintf(what, sizeof what, "%s", label);
  const char *detail = cuda_detail(status);
  pgc_print_status_error(what, status);
  pgc_result_row_set_verdict(row, PGC_VERDICT_ERROR, detail ? detail : pg_strerror(status));
  return PGC_EXIT_FAILED;
}

void pgc_print_cuda_error(const char *what, cudaError_t err) {
  fprintf(stderr, "pipegemm: %s: %s (%s)\n", what, pg_strerror(PG_ERR_CUDA),
          cudaGetErrorString(err));
}

/* ---- session -------------------------------------------------------------- */

void pgc_session_close(pgc_session *session) {
  if (session->has_flusher) {
    pg_status status = pgh_l2_flusher_free(&session->flusher);
    if (status != PG_OK) pgc_print_status_error("freeing the L2 flush buffer", status);
  }
  session->has_flusher = 0;
  if (session->has_stream) {
    cudaError_t err = cudaStreamDestroy(session->stream);
    if (err != cudaSuccess) pgc_print_cuda_error("cudaStreamDestroy", err);
  }
  session->has_stream = 0;
  free(session->times_ms);
  session->times_ms = NULL;
}

int pgc_session_open(pgc_session *session, const pgc_measure_config *config) {
  memset(session, 0, sizeof *session);
  session->config = *config;
  session->clock_min_mhz = session->clock_max_mhz = NAN;

  pg_status status = pgh_device_query(config->device, &session->info);
  if (status != PG_OK) {
    const char *detail = cuda_detail(status);
    fprintf(stderr, "pipegemm: no usable CUDA GPU (%s)\n",
            detail ? detail : pg_strerror(status));
    return PGC_EXIT_NO_GPU;
  }
  cudaError_t err = cudaSetDevice(config->device);
  if (err != cudaSuccess) {
    fprintf(stderr, "pipegemm: no usable CUDA GPU (%s)\n",
            cudaGetErrorString(err));
    return PGC_EXIT_NO_GPU;
  }
  err = cudaStreamCreateWithFlags(&session->stream, cudaStreamNonBlocking);
  if (err != cudaSuccess) {
    pgc_print_cuda_error("cudaStreamCreateWithFlags", err);
    return PGC_EXIT_FAILED;
  }
  session->has_stream = 1;
  if (config->flush_l2) {
    status = pgh_l2_flusher_init(&session->flusher, session->info.l2_bytes);
    if (status != PG_OK) {
      pgc_print_status_error("L2 flush buffer", status);
      pgc_session_close(session);
      return PGC_EXIT_FAILED;
    }
    session->has_flusher = 1;
  }
  session->times_ms = malloc((size_t)config->iters * sizeof *session->times_ms);
  if (!session->times_ms) {
    fprintf(stderr, "pipegemm: out of host memory for %d timings\n",
            config->iters);
    pgc_session_close(session);
    return PGC_EXIT_FAILED;
  }
  return PGC_EXIT_OK;
}

/* ---- problem -------------------------------------------------------------- */

/* count x rows x cols elements of elem_size bytes (count the members a
 * batch lays out, `span` floats from the first to the last element where
 * that is not rows x cols each), or -1 if that overflows size_t. */
static int batch_bytes(long long members, long long stride, int rows, int cols,
                       size_t elem_size, size_t *bytes) {
  size_t r = (size_t)rows, c = (size_t)cols, total = 0;
  if (rows <= 0 || cols <= 0 || members <= 0) {
    *bytes = 0;
    return 0;
  }
  if (r > SIZE_MAX / c) return -1;
  total = r * c; /* one member, dense rows */
  if (members > 1) {
    size_t gaps = 0;
    /* (members - 1) strides, then the last member */
    if (__builtin_mul_overflow((size_t)(members - 1), (size_t)stride, &gaps) ||
        __builtin_add_overflow(gaps, total, &total))
      return -1;
  }
  if (total > SIZE_MAX / elem_size) return -1;
  *bytes = total * elem_size;
  return 0;
}

/* cudaMalloc of a batch's span (`members` members `stride` floats apart,
 * each rows x cols, dense rows); an empty one stays NULL. `batch` is what
 * the message tells: the GEMMs, where more than one. */
static int device_alloc(void **ptr, long long members, long long stride, int rows, int cols,
                        size_t elem_size, int batch, const char *name) {
  size_t bytes = 0;
  *ptr = NULL;
  char what[96];
  if (batch > 1)
    snprintf(what, sizeof what, "%d x %d, a batch of %d", rows, cols, batch);
  else
    snprintf(what, sizeof what, "%d x %d", rows, cols);
  if (batch_bytes(members, stride, rows, cols, elem_size, &bytes) != 0) {
    fprintf(stderr, "pipegemm: %s (%s) is too large to address\n", name, what);
    return -1;
  }
  if (bytes == 0) return 0;
  cudaError_t err = cudaMalloc(ptr, bytes);
  if (err != cudaSuccess) {
    *ptr = NULL;
    fprintf(stderr, "pipegemm: cannot allocate %s (%s, %.1f MiB): %s\n", name, what,
            (double)bytes / (BYTES_PER_KIB * BYTES_PER_KIB), cudaGetErrorString(err));
    return -1;
  }
  return 0;
}

static void device_free(void *ptr) {
  if (!ptr) return;
  cudaError_t err = cudaFree(ptr);
  if (err != cudaSuccess) pgc_print_cuda_error("cudaFree", err);
}

void pgc_problem_close(pgc_problem *problem) {
  device_free(problem->a);
  device_free(problem->b);
  device_free(problem->c);
  device_free(problem->ref);
  device_free(problem->scale);
  problem->a = problem->b = problem->c = NULL;
  problem->ref = problem->scale = NULL;
}

pg_gemm_desc pgc_problem_desc(const pgc_problem *problem) {
  pg_gemm_desc gemm = PG_GEMM_DESC_INIT;
  gemm.op_a = problem->op_a;
  gemm.op_b = problem->op_b;
  gemm.m = problem->m;
  gemm.n = problem->n;
  gemm.k = problem->k;
  gemm.alpha = GEMM_ALPHA;
  gemm.beta = GEMM_BETA;
  gemm.a = problem->a;
  gemm.b = problem->b;
  gemm.c = problem->c;
  gemm.lda = problem->lda;
  gemm.ldb = problem->ldb;
  gemm.ldc = problem->ldc;
  gemm.batch = problem->batch;
  gemm.stride_a = problem->stride_a;
  gemm.stride_b = problem->stride_b;
  gemm.stride_c = problem->stride_c;
  return gemm;
}

/* A stride as given, or the dense one where none was. */
static long long stride_or(long long given, long long dense) {
  return given == PGC_STRIDE_DENSE ? dense : given;
}

/* An operand's allocation: its stored rows x cols at its stride, the
 * members the stride lays out (one where it is 0). */
static int operand_alloc(float **ptr, const pgh_stored *stored, int batch, const char *name) {
  const long long members = stored->stride == 0 ? 1 : stored->count;
  /* Rows of ld floats (the problem's are dense: ld is the width); an empty
   * operand, as an empty matrix, stays NULL. */
  return device_alloc((void **)ptr, members, stored->stride, stored->rows,
                      stored->cols > 0 ? (int)stored->ld : 0, sizeof(float), batch, name);
}

int pgc_problem_open(pgc_session *session, pgc_problem *problem, int m, int n,
                     int k) {
  const pgc_layout nn = PGC_LAYOUT_NN;
  return pgc_problem_open_layout(session, problem, m, n, k, &nn);
}

void pgc_problem_shape(pgc_problem *problem, int m, int n, int k, const pgc_layout *layout) {
  memset(problem, 0, sizeof *problem);
  problem->m = m;
  problem->n = n;
  problem->k = k;
  problem->op_a = layout->op_a;
  problem->op_b = layout->op_b;
  problem->batch = layout->batch;
  /* Each operand's rows as stored, dense: A's are K wide (op N) or M (T),
   * B's N (op N) or K (T). */
  const int a_rows = layout->op_a == PG_OP_T ? k : m, a_cols = layout->op_a == PG_OP_T ? m : k;
  const int b_rows = layout->op_b == PG_OP_T ? n : k, b_cols = layout->op_b == PG_OP_T ? k : n;
  problem->lda = a_cols > 1 ? a_cols : 1;
  problem->ldb = b_cols > 1 ? b_cols : 1;
  problem->ldc = n > 1 ? n : 1;
  problem->dense_a = (long long)a_rows * problem->lda;
  problem->dense_b = (long long)b_rows * problem->ldb;
  problem->dense_c = (long long)m * problem->ldc;
  if (layout->batch > 1) {
    problem->stride_a = stride_or(layout->stride_a, problem->dense_a);
    problem->stride_b = stride_or(layout->stride_b, problem->dense_b);
    problem->stride_c = stride_or(layout->stride_c, problem->dense_c);
  }
}

int pgc_problem_open_layout(pgc_session *session, pgc_problem *problem, int m, int n, int k,
                            const pgc_layout *layout) {
  pgc_problem_shape(problem, m, n, k, layout);
  const pg_gemm_desc gemm = pgc_problem_desc(problem);
  const pgh_stored a = pgh_stored_a(&gemm), b = pgh_stored_b(&gemm), c = pgh_stored_c(&gemm);
  const int batch = layout->batch;
  int check = session->config.check;
  if (operand_alloc(&problem->a, &a, batch, "A") != 0 ||
      operand_alloc(&problem->b, &b, batch, "B") != 0 ||
      operand_alloc(&problem->c, &c, batch, "C") != 0 ||
      (check && device_alloc((void **)&problem->ref, batch, (long long)m * n, m, n,
                             sizeof(double), batch, "the FP64 reference") != 0) ||
      (check && device_alloc((void **)&problem->scale, batch, (long long)m * n, m, n,
                             sizeof(double), batch, "the reference's error scale") != 0)) {
    pgc_problem_close(problem);
    return PGC_EXIT_FAILED;
  }
  pg_status status = PG_OK;
  const char *step = NULL;
  if (problem->a) {
    step = "filling A";
    status = pgh_fill_stored(problem->a, &a, operand_seed(session->config.seed, OPERAND_A),
                             (pgh_inputs)session->config.inputs, session->stream);
  }
  if (status == PG_OK && problem->b) {
    step = "filling B";
    status = pgh_fill_stored(problem->b, &b, operand_seed(session->config.seed, OPERAND_B),
                             session->config.inputs == PGH_TINY
                                 ? PGH_UNIFORM
                                 : (pgh_inputs)session->config.inputs,
                             session->stream);
  }
  if (status == PG_OK && problem->ref) {
    step = "FP64 reference";
    pg_gemm_desc filled = pgc_problem_desc(problem);
    status = pgh_reference_gemm(&filled, NULL, problem->ref, problem->scale, session->stream);
  }
  if (status != PG_OK) {
    pgc_print_status_error(step, status);
    pgc_problem_close(problem);
    return PGC_EXIT_FAILED;
  }
  /* Surface an asynchronous failure here, not in the first variant's row. */
  cudaError_t err = cudaStreamSynchronize(session->stream);
  if (err != cudaSuccess) {
    pgc_print_cuda_error("preparing the inputs", err);
    pgc_problem_close(problem);
    return PGC_EXIT_FAILED;
  }
  return PGC_EXIT_OK;
}

void pgc_problem_row_init(pgc_result_row *row, const char *variant, int stages,
                          const pgc_problem *problem) {
  pgc_result_row_init(row, variant, stages, problem->m, problem->n, problem->k);
  const long long strides[3] = {problem->stride_a, problem->stride_b, problem->stride_c};
  const long long dense[3] = {problem->dense_a, problem->dense_b, problem->dense_c};
  unsigned named = 0;
  for (int i = 0; i < 3; ++i)
    if (strides[i] != dense[i]) named |= 1u << i;
  pgc_result_row_set_layout(row, problem->op_a == PG_OP_T, problem->op_b == PG_OP_T,
                            problem->batch, strides, named);
}

/* ---- one run -------------------------------------------------------------- */

/* What pgh_time calls: the planned GEMM, nothing else. */
static pg_status run_plan(void *ctx, cudaStream_t stream) {
  return pg_plan_launch((const pg_plan *)ctx, stream);
}

/* "cp_async stages=2", or the bare name for a variant without stages. */
static void run_label(const pg_variant_info *variant, int stages, char *buf,
                      size_t size) {
  if (stages > 0)
    snprintf(buf, size, "%s stages=%d", variant->name, stages);
  else
    snprintf(buf, size, "%s", variant->name);
}

/* The mismatches of a check: elements outside tolerance ("C[row][col]",
 * or "C_i[row][col]" for member i of a batch), and floats written outside
 * every member's elements. */
static void print_mismatches(const char *label, const pgh_check *check, int batch) {
  const long long elements = check->failed - check->guard_written;
  if (elements > 0)
    fprintf(stderr,
            "pipegemm: %s: %lld of %lld elements outside tolerance "
            "(%lld NaN or Inf)%s\n",
            label, elements, check->checked, check->nonfinite,
            check->reported > 0 ? "; first ones:" : "");
  for (int i = 0; i < check->reported && i < PGH_MAX_REPORTED; ++i) {
    char member[32] = "";
    if (batch > 1) snprintf(member, sizeof member, "_%lld", check->bad_member[i]);
    fprintf(stderr, "pipegemm: %s:   C%s[%d][%d] = %.9g, expected %.9g\n", label, member,
            check->bad_row[i], check->bad_col[i], (double)check->bad_out[i],
            check->bad_ref[i]);
  }
  if (check->guard_written > 0)
    fprintf(stderr,
            "pipegemm: %s: %lld floats written outside the members' elements, between or "
            "after rows of C (the first %lld floats past C's start)\n",
            label, check->guard_written, check->first_guard_written);
}

int pgc_run_verify(pgc_session *session, const pgc_problem *problem,
                   pgh_run_fn fn, void *ctx, pg_precision precision, const char *label,
                   pgc_result_row *row) {
  cudaStream_t stream = session->stream;
  pgh_check check;
  memset(&check, 0, sizeof check);
  const pg_gemm_desc gemm = pgc_problem_desc(problem);
  /* Every member's C NaN, and what lies between them or their rows the
   * guard, which must still be there after the run. */
  const pgh_stored c_stored = pgh_stored_c(&gemm);
  if ((size_t)problem->m * (size_t)problem->n > 0) {
    pg_status status = pgh_poison_stored(problem->c, &c_stored, stream);
    if (status != PG_OK) {
      return row_failed(row, label, "poisoning C", status);
    }
  }
  pg_status status = fn(ctx, stream);
  if (status != PG_OK) return row_failed(row, label, NULL, status);
  cudaError_t err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) {
    pgc_print_cuda_error(label, err);
    pgc_result_row_set_verdict(row, PGC_VERDICT_ERROR, cudaGetErrorString(err));
    return PGC_EXIT_FAILED;
  }
  if ((size_t)problem->m * (size_t)problem->n > 0) {
    status = pgh_compare_stored(problem->c, &c_stored, problem->k, problem->ref,
                                problem->scale, precision, 1, &check, stream);
    if (status != PG_OK) {
      return row_failed(row, label, "comparing with the reference", status);
    }
  }
  row->max_abs_err = check.max_abs_err;
  row->err_tol_ratio = check.max_tol_ratio;
  row->err_u_max = check.max_rel_err / PGV_UNIT_ROUNDOFF;
  row->err_u_mean = check.mean_rel_err / PGV_UNIT_ROUNDOFF;
  if (check.failed > 0) {
    print_mismatches(label, &check, problem->batch);
    pgc_result_row_set_verdict(row, PGC_VERDICT_FAIL, NULL);
  } else {
    pgc_result_row_set_verdict(row, PGC_VERDICT_PASS, NULL);
  }
  return PGC_EXIT_OK;
}

/* Samples the SM clock after a run, keeps the range seen, warns on a sag.
 * Returns the sample, or NaN when it could not be taken. */
static double sample_clock(pgc_session *session, const char *label) {
  double mhz = NAN;
  pg_status status = pgh_sm_clock_mhz(session->stream, &mhz);
  if (status != PG_OK) {
    char what[PGC_VERDICT_TEXT_SIZE * 2];
    snprintf(what, sizeof what, "warning: %s: could not sample the SM clock",
             label);
    pgc_print_status_error(what, status);
    return NAN;
  }
  if (!(mhz > 0)) {
    fprintf(stderr, "pipegemm: warning: %s: SM clock sample %g MHz ignored\n",
            label, mhz);
    return NAN;
  }
  if (!(session->clock_min_mhz <= mhz)) session->clock_min_mhz = mhz;
  if (!(session->clock_max_mhz >= mhz)) session->clock_max_mhz = mhz;
  int max_mhz = session->info.max_sm_clock_mhz;
  if (max_mhz > 0 && mhz < PGC_CLOCK_SAG_FRACTION * max_mhz)
    fprintf(stderr,
            "pipegemm: warning: SM clock %.0f MHz is below %.0f%% of max %d MHz "
            "during %s\n",
            mhz, PGC_CLOCK_SAG_FRACTION * PERCENT, max_mhz, label);
  return mhz;
}

void pgc_run_begin(pgc_session *session, const char *label,
                   const pgc_result_row *row) {
  ++session->run_index;
  if (session->config.quiet) return;
  /* The layout where it is not the study's: "... 64x64x64 NT batch 1024". */
  if (strcmp(row->op, "NN") != 0 || row->batch != 1)
    fprintf(stderr, "[%d/%d] %s %s %s batch %s\n", session->run_index, session->run_total,
            label, row->shape, row->op, row->batch_text);
  else
    fprintf(stderr, "[%d/%d] %s %s\n", session->run_index, session->run_total, label,
            row->shape);
}

/* One round of timed launches of `fn` into `times` (config.iters of them).
 * PGC_EXIT_OK, or PGC_EXIT_FAILED with an ERROR row (printed). */
static int run_time(pgc_session *session, const char *label, pgh_run_fn fn, void *ctx,
                    float *times, pgc_result_row *row) {
  pg_status status = pgh_time(fn, ctx, session->config.warmup, session->config.iters,
                              session->has_flusher ? &session->flusher : NULL,
                              session->stream, times);
  return status == PG_OK ? PGC_EXIT_OK : row_failed(row, label, "timing", status);
}

/* The row's timing fields from its `count` timed launches, and its share of
 * the FFMA peak at `clock_mhz` (the clock sampled after its last round). */
static void run_stats(pgc_session *session, const pgc_problem *problem, const float *times,
                      int count, double clock_mhz, pgc_result_row *row) {
  float median = 0, min = 0, max = 0;
  pgh_stats(times, count, &median, &min, &max);
  row->median_ms = median;
  row->min_ms = min;
  row->max_ms = max;
  row->tflops = pgc_batch_tflops(problem->m, problem->n, problem->k, problem->batch, median);
  if (!(clock_mhz > 0)) clock_mhz = session->info.max_sm_clock_mhz;
  double peak = pgc_ffma_peak_tflops(session->info.cc_major,
                                     session->info.cc_minor,
                                     session->info.sm_count, clock_mhz);
  row->pct_ffma_peak = row->tflops / peak * PERCENT; /* NaN if either is */
}

/* The check (with --check on), or the row marked UNCHECKED. */
static int run_check(pgc_session *session, const pgc_problem *problem, const char *label,
                     pgh_run_fn fn, void *ctx, pg_precision precision, pgc_result_row *row) {
  if (!session->config.check) {
    pgc_result_row_set_verdict(row, PGC_VERDICT_UNCHECKED, NULL);
    return PGC_EXIT_OK;
  }
  return pgc_run_verify(session, problem, fn, ctx, precision, label, row);
}

int pgc_run_measure(pgc_session *session, const pgc_problem *problem,
                    const char *label, pgh_run_fn fn, void *ctx, pg_precision precision,
                    pgc_result_row *row) {
  if (run_check(session, problem, label, fn, ctx, precision, row) != PGC_EXIT_OK)
    return PGC_EXIT_FAILED;
  if (run_time(session, label, fn, ctx, session->times_ms, row) != PGC_EXIT_OK)
    return PGC_EXIT_FAILED;
  run_stats(session, problem, session->times_ms, session->config.iters,
            sample_clock(session, label), row);
  return row->verdict == PGC_VERDICT_FAIL ? PGC_EXIT_FAILED : PGC_EXIT_OK;
}

/* A status that makes the row a SKIP: the GPU cannot run the variant
 * (architecture, shared memory, stages), or it refuses the layout. */
static int is_skip(pg_status status) {
  return status == PG_ERR_ARCH || status == PG_ERR_SMEM || status == PG_ERR_STAGES ||
         status == PG_ERR_UNSUPPORTED;
}

void pgc_work_text(const pg_plan_info *info, char *buf, size_t size) {
  if (size == 0) return;
  buf[0] = '\0';
  if (info->stream_k_blocks > 0)
    snprintf(buf, size, "stream-K %d", info->stream_k_blocks);
  else if (info->splits > 1 && info->split_from_row > 0)
    snprintf(buf, size, "split-K %d from row %d", info->splits, info->split_from_row);
  else if (info->splits > 1)
    snprintf(buf, size, info->split_in_clusters ? "split-K %d in clusters" : "split-K %d",
             info->splits);
}

/* The plan's entry, stages, division of work and kernel facts into the row;
 * `auto`'s row names what it runs, whose kernel the facts describe. */
static void describe_plan(const pg_plan *plan, const pg_variant_info *variant,
                          const char *label, pgc_result_row *row) {
  pg_plan_info info = PG_PLAN_INFO_INIT;
  pg_status status = pg_plan_describe(plan, &info);
  if (status != PG_OK) {
    char what[PGC_VERDICT_TEXT_SIZE * 2];
    snprintf(what, sizeof what, "warning: %s: no shared memory or occupancy figures", label);
    pgc_print_status_error(what, status);
    return;
  }
  if (info.variant == NULL) return; /* nothing to run (M or N is 0) */
  if (variant->kind == PG_KIND_SELECTOR) {
    row->runs = info.variant->name;
    row->stages = info.stages;
  }
  pgc_work_text(&info, row->work, sizeof row->work);
  if (info.variant->kind == PG_KIND_KERNEL) {
    row->smem_kib = (double)info.kernel.smem_bytes / BYTES_PER_KIB;
    row->blocks_per_sm = info.kernel.blocks_per_sm;
    row->registers = info.kernel.registers;
  }
}

/* One run of a set while its rounds go on: its plan (NULL once its row is
 * settled: SKIP or ERROR), its label, its timed launches so far and the
 * clock after the last. */
typedef struct {
  pg_plan *plan;
  char label[PGC_VERDICT_TEXT_SIZE];
  float *times;
  int timed;
  double clock_mhz;
} set_run;

/* A run's plan and check (the first half of its first round). run->plan
 * is set when it is to be timed: PASS, UNCHECKED, and FAIL, which is timed
 * as pgc_run_measure times it (PGC_EXIT_FAILED); NULL for SKIP (PGC_EXIT_OK)
 * and ERROR (PGC_EXIT_FAILED). */
static int set_run_prepare(pgc_session *session, const pgc_problem *problem,
                           const pgc_run_spec *spec, set_run *run, pgc_result_row *row) {
  run_label(spec->variant, spec->stages, run->label, sizeof run->label);
  pgc_problem_row_init(row, spec->variant->name, spec->stages, problem);
  pgc_run_begin(session, run->label, row);
  /* Decided once: the timed runs launch the plan and do nothing else. The
   * cuBLAS rows get the same description: the library maps it onto
   * cuBLAS's own ops and strided batch. */
  const pg_gemm_desc gemm = pgc_problem_desc(problem);
  pg_status status = pg_plan_create_gemm(&run->plan, spec->variant, spec->stages, &gemm);
  if (is_skip(status)) {
    /* The library's own reason: which rule of the GPU or the layout. */
    const char *reason = pg_last_error_detail();
    pgc_result_row_set_verdict(row, PGC_VERDICT_SKIP, reason[0] ? reason : pg_strerror(status));
    return PGC_EXIT_OK;
  }
  if (status != PG_OK) return row_failed(row, run->label, "planning", status);
  describe_plan(run->plan, spec->variant, run->label, row);
  if (run_check(session, problem, run->label, run_plan, run->plan, spec->variant->precision,
                row) != PGC_EXIT_OK) {
    pg_plan_destroy(run->plan);
    run->plan = NULL;
    return PGC_EXIT_FAILED;
  }
  return row->verdict == PGC_VERDICT_FAIL ? PGC_EXIT_FAILED : PGC_EXIT_OK;
}

/* One more round of a run that is being timed; on an error its row says so
 * and it stops. */
static int set_run_round(pgc_session *session, set_run *run, pgc_result_row *row) {
  if (run_time(session, run->label, run_plan, run->plan, run->times + run->timed, row) !=
      PGC_EXIT_OK) {
    pg_plan_destroy(run->plan);
    run->plan = NULL;
    return PGC_EXIT_FAILED;
  }
  run->timed += session->config.iters;
  run->clock_mhz = sample_clock(session, run->label);
  return PGC_EXIT_OK;
}

int pgc_run_set(pgc_session *session, const pgc_problem *problem, const pgc_run_spec *runs,
                int count, pgc_result_row *rows) {
  const int rounds = session->config.rounds > 1 ? session->config.rounds : 1;
  const size_t per_run = (size_t)rounds * (size_t)session->config.iters;
  set_run *state = calloc((size_t)count, sizeof *state);
  float *times = calloc((size_t)count * per_run, sizeof *times);
  if (state == NULL || times == NULL) {
    free(state);
    free(times);
    fprintf(stderr, "pipegemm: no host memory for the timings of %d runs x %d rounds\n",
            count, rounds);
    for (int r = 0; r < count; ++r) {
      pgc_problem_row_init(&rows[r], runs[r].variant->name, runs[r].stages, problem);
      pgc_result_row_set_verdict(&rows[r], PGC_VERDICT_ERROR, "no host memory");
    }
    return PGC_EXIT_FAILED;
  }
  int exit_code = PGC_EXIT_OK;
  /* Round 0 checks each run, then times it; later rounds time every run
   * still standing, in the same order. */
  for (int round = 0; round < rounds; ++round)
    for (int r = 0; r < count; ++r) {
      set_run *run = &state[r];
      if (round == 0) {
        run->times = times + (size_t)r * per_run;
        if (set_run_prepare(session, problem, &runs[r], run, &rows[r]) != PGC_EXIT_OK)
          exit_code = PGC_EXIT_FAILED;
      }
      if (run->plan != NULL && set_run_round(session, run, &rows[r]) != PGC_EXIT_OK)
        exit_code = PGC_EXIT_FAILED;
    }
  for (int r = 0; r < count; ++r) {
    if (state[r].plan == NULL) continue;
    run_stats(session, problem, state[r].times, state[r].timed, state[r].clock_mhz, &rows[r]);
    pg_plan_destroy(state[r].plan);
  }
  free(state);
  free(times);
  return exit_code;
}

int pgc_run_one(pgc_session *session, const pgc_problem *problem,
                const pg_variant_info *variant, int stages, pgc_result_row *row) {
  const pgc_run_spec spec = {variant, stages};
  return pgc_run_set(session, problem, &spec, 1, row);
}

/* ---- report header -------------------------------------------------------- */

void pgc_date_text(char *buf, size_t size) {
  time_t now = time(NULL);
  struct tm utc;
  if (now == (time_t)-1 || !gmtime_r(&now, &utc) ||
      strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &utc) == 0)
    snprintf(buf, size, "unknown");
}

static void add_fact(pgc_header *header, const char *key, const char *label,
                     pgc_cell value, int decimals, const char *unit, int show) {
  if (header->count >= PGC_HEADER_MAX_FACTS) return;
  pgc_fact *fact = &header->facts[header->count++];
  fact->key = key;
  fact->label = label;
  fact->value = value;
  fact->decimals = decimals;
  fact->unit = unit;
  fact->show = show;
}

void pgc_header_build(pgc_header *header, const pgc_session *session,
                      const char *command_line) {
  enum { CUBLAS_MAJOR = 10000, CUBLAS_MINOR = 100 }; /* pgh_device_info */
  const pgh_device_info *info = &session->info;
  const pgc_measure_config *config = &session->config;
  memset(header, 0, sizeof *header);

  snprintf(header->cc, sizeof header->cc, "%d.%d", info->cc_major,
           info->cc_minor);
  if (isfinite(session->clock_min_mhz))
    snprintf(header->clock_seen, sizeof header->clock_seen,
             "%.0f..%.0f MHz (max %d MHz)", session->clock_min_mhz,
             session->clock_max_mhz, info->max_sm_clock_mhz);
  else
    snprintf(header->clock_seen, sizeof header->clock_seen,
             "not sampled (max %d MHz)", info->max_sm_clock_mhz);
  pgc_cuda_version_text(info->driver_version, header->driver,
                        sizeof header->driver);
  pgc_cuda_version_text(info->runtime_version, header->runtime,
                        sizeof header->runtime);
  if (info->cublas_version > 0)
    snprintf(header->cublas, sizeof header->cublas, "%d.%d.%d",
             info->cublas_version / CUBLAS_MAJOR,
             info->cublas_version % CUBLAS_MAJOR / CUBLAS_MINOR,
             info->cublas_version % CUBLAS_MINOR);
  else
    snprintf(header->cublas, sizeof header->cublas, "unknown");
  pgc_date_text(header->date, sizeof header->date);
  snprintf(header->command_line, sizeof header->command_line, "%s", command_line);

  add_fact(header, "gpu", "GPU", pgc_cell_text(info->name), 0, NULL, PGC_SHOW_ALL);
  add_fact(header, "device", "device", pgc_cell_int(info->device), 0, NULL,
           PGC_SHOW_ALL);
  add_fact(header, "cc", "compute capability", pgc_cell_text(header->cc), 0,
           NULL, PGC_SHOW_ALL);
  add_fact(header, "sm_count", "SMs", pgc_cell_int(info->sm_count), 0, NULL,
           PGC_SHOW_ALL);
  add_fact(header, "sm_clock_seen", "SM clock seen",
           pgc_cell_text(header->clock_seen), 0, NULL, PGC_SHOW_TABLE);
  add_fact(header, "sm_clock_seen_min_mhz", "", pgc_cell_real(session->clock_min_mhz),
           0, NULL, PGC_SHOW_DATA);
  add_fact(header, "sm_clock_seen_max_mhz", "", pgc_cell_real(session->clock_max_mhz),
           0, NULL, PGC_SHOW_DATA);
  add_fact(header, "sm_clock_max_mhz", "",
           info->max_sm_clock_mhz > 0 ? pgc_cell_int(info->max_sm_clock_mhz)
                                      : pgc_cell_absent(),
           0, NULL, PGC_SHOW_DATA);
  add_fact(header, "driver", "CUDA driver", pgc_cell_text(header->driver), 0,
           NULL, PGC_SHOW_ALL);
  add_fact(header, "runtime", "CUDA runtime", pgc_cell_text(header->runtime), 0,
           NULL, PGC_SHOW_ALL);
  add_fact(header, "cublas", "cuBLAS", pgc_cell_text(header->cublas), 0, NULL,
           PGC_SHOW_ALL);
  add_fact(header, "warmup", "warm-up runs", pgc_cell_int(config->warmup), 0,
           NULL, PGC_SHOW_ALL);
  add_fact(header, "iters", "timed runs", pgc_cell_int(config->iters), 0, NULL,
           PGC_SHOW_ALL);
  if (config->rounds > 1) /* a one-round report reads as it always has */
    add_fact(header, "rounds", "timed rounds", pgc_cell_int(config->rounds), 0, NULL,
             PGC_SHOW_ALL);
  add_fact(header, "flush_l2", "L2 flush", pgc_cell_text(pgc_on_off(config->flush_l2)),
           0, NULL, PGC_SHOW_ALL);
  add_fact(header, "check", "check", pgc_cell_text(pgc_on_off(config->check)), 0,
           NULL, PGC_SHOW_ALL);
  add_fact(header, "seed", "seed", pgc_cell_uint(config->seed), 0, NULL,
           PGC_SHOW_ALL);
  if (config->inputs != PGH_UNIFORM) /* the default reads as it always has */
    add_fact(header, "inputs", "inputs", pgc_cell_text(pgc_inputs_name(config->inputs)), 0,
             NULL, PGC_SHOW_ALL);
  add_fact(header, "command_line", "command", pgc_cell_text(header->command_line),
           0, NULL, PGC_SHOW_ALL);
  add_fact(header, "date", "date", pgc_cell_text(header->date), 0, NULL,
           PGC_SHOW_ALL);
}

/* ---- the summary of a shape set ------------------------------------------- */

static int is_timed(const pgc_result_row *row) {
  return isfinite(row->median_ms) && row->median_ms > 0;
}

int pgc_geomeans(const pgc_result_row *rows, int run_count, int shape_count,
                 const char *cublas_name, pgc_geomean *means) {
  int cublas_shapes = 0;
  for (int s = 0; s < shape_count; ++s) {
    const pgc_result_row *block = &rows[(size_t)s * (size_t)run_count];
    for (int r = 0; r < run_count; ++r) {
      if (block[r].variant && strcmp(block[r].variant, cublas_name) == 0 &&
          is_timed(&block[r])) {
        ++cublas_shapes;
        break;
      }
    }
  }
  /* A mean of ratios is a geometric one: 2x faster at one shape and 2x
   * slower at another is even, as it is not in an arithmetic mean. */
  const int tf32 = strcmp(cublas_name, PGC_CUBLAS_TF32_VARIANT) == 0;
  for (int r = 0; r < run_count; ++r) {
    double log_sum = 0.0;
    int shapes = 0;
    for (int s = 0; s < shape_count; ++s) {
      const pgc_result_row *row = &rows[(size_t)s * (size_t)run_count + (size_t)r];
      const double x = tf32 ? row->x_cublas_tf32 : row->x_cublas;
      if (!isfinite(x) || !(x > 0) || row->verdict == PGC_VERDICT_FAIL) continue;
      log_sum += log(x);
      ++shapes;
    }
    means[r].shapes = shapes;
    means[r].geomean = shapes > 0 ? exp(log_sum / shapes) : NAN;
  }
  return cublas_shapes;
}

/* Text appended as snprintf would, counting on past the end of the buffer
 * so that the caller learns the size it needs. */
typedef struct {
  char *buf;
  size_t size, used;
} text_builder;

static void text_add(text_builder *text, const char *fmt, ...) {
  size_t room = text->used < text->size ? text->size - text->used : 0;
  va_list ap;
  va_start(ap, fmt);
  int written = vsnprintf(room ? text->buf + text->used : NULL, room, fmt, ap);
  va_end(ap);
  if (written > 0) text->used += (size_t)written;
}

/* Whether the variant of run r is in more than one run: then its runs are
 * told apart by their stage counts. */
static int ran_at_several(const pgc_run_spec *runs, int run_count, int r) {
  for (int i = 0; i < run_count; ++i)
    if (i != r && runs[i].variant == runs[r].variant) return 1;
  return 0;
}

size_t pgc_geomean_note(char *buf, size_t size, const pgc_run_spec *runs,
                        const pgc_geomean *means, int run_count,
                        int cublas_shapes, const char *cublas_name) {
  text_builder text = {buf, size, 0};
  if (size > 0) buf[0] = '\0';
  const char *unit = strcmp(cublas_name, PGC_CUBLAS_TF32_VARIANT) == 0 ? "cuBLAS TF32" : "cuBLAS";
  int listed = 0;
  for (int r = 0; r < run_count; ++r) {
    if (strcmp(runs[r].variant->name, cublas_name) == 0) continue;
    if (listed++ == 0) {
      if (cublas_shapes == 0) {
        text_add(&text, "geometric mean of × %s: none, %s was timed at no shape", unit,
                 cublas_name);
        return text.used;
      }
      text_add(&text, "geometric mean of × %s over %d shape%s: ", unit, cublas_shapes,
               cublas_shapes == 1 ? "" : "s");
    } else {
      text_add(&text, ", ");
    }
    text_add(&text, "%s", runs[r].variant->name);
    if (ran_at_several(runs, run_count, r))
      text_add(&text, " at %d stage%s", runs[r].stages, runs[r].stages == 1 ? "" : "s");
    if (means[r].shapes > 0)
      text_add(&text, " %.2f", means[r].geomean);
    else
      text_add(&text, " -");
    if (means[r].shapes != cublas_shapes)
      text_add(&text, " (%d shape%s)", means[r].shapes, means[r].shapes == 1 ? "" : "s");
  }
  return text.used;
}

