/* The measurement session, shared by `pipegemm bench`, `study`, `trace` and
 * `profile`: a session (device, stream, L2 flusher, clock samples), a
 * problem (A, B, C and the FP64 reference for one shape) and pgc_run_one,
 * which verifies and times one (variant, stage count) on a problem and
 * fills a result row (report.h). Errors are printed here, one line each on
 * stderr, as the tool's own. It uses the library's public face
 * (pipegemm.h) and the harness (harness.h), nothing of the command line. */
#ifndef PGC_SESSION_H
#define PGC_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include "harness.h"
#include "report.h"

/* One (variant, stage count) a command runs. */
typedef struct {
  const pg_variant_info *variant;
  int stages;
} pgc_run_spec;

/* The variants whose rows the others are compared with (× baseline,
 * × cuBLAS columns): roles, not a list of variants. */
#define PGC_BASELINE_VARIANT "baseline"
#define PGC_CUBLAS_VARIANT "cublas"
#define PGC_CUBLAS_TF32_VARIANT "cublas_tf32"

/* An SM clock under this fraction of the maximum during a run means the GPU
 * throttled (power, heat) or sat in a low power state: a warning. */
#define PGC_CLOCK_SAG_FRACTION 0.75

typedef struct {
  int device;
  int warmup, iters;
  int check, flush_l2, quiet;
  uint64_t seed;
  /* Timed rounds of a set of runs (pgc_run_set): 0 or 1, one; each round
   * times every run in turn (--warmup and --iters each). */
  int rounds;
  /* The inputs' distribution (pgh_inputs): A's, and B's but for PGH_TINY,
   * where B stays uniform so that the products are tiny, not zero. */
  int inputs;
} pgc_measure_config;

typedef struct {
  pgc_measure_config config;
  pgh_device_info info;
  cudaStream_t stream;
  int has_stream;
  pgh_l2_flusher flusher;
  int has_flusher;
  float *times_ms; /* config.iters entries, reused by every run */
  /* SM clock over all samples so far; NaN until the first. */
  double clock_min_mhz, clock_max_mhz;
  /* Progress lines: "[run_index/run_total] ...". */
  int run_index, run_total;
} pgc_session;

/* Queries the device, makes it current, creates the stream, the L2 flusher
 * and the timing buffer. Returns PGC_EXIT_OK; PGC_EXIT_NO_GPU after printing
 * "pipegemm: no usable CUDA GPU (reason)"; or PGC_EXIT_FAILED after printing
 * the error. On failure everything it made is released already. */
int pgc_session_open(pgc_session *session, const pgc_measure_config *config);
/* Releases what pgc_session_open made; safe on a zeroed session. */
void pgc_session_close(pgc_session *session);

/* A GEMM's layout beyond its shape (bench --op, --batch, --stride-a/b/c):
 * op(A), op(B), the batch, and its members' strides in floats, where
 * PGC_STRIDE_DENSE puts each member right after the one before. */
#define PGC_STRIDE_DENSE (-1LL)
typedef struct {
  pg_op op_a, op_b;
  int batch;
  long long stride_a, stride_b, stride_c;
} pgc_layout;
#define PGC_LAYOUT_NN {PG_OP_N, PG_OP_N, 1, PGC_STRIDE_DENSE, PGC_STRIDE_DENSE, PGC_STRIDE_DENSE}

/* One GEMM shape and layout: row-major device matrices, each operand as it
 * is stored (A K x M where op_a is T, B N x K where op_b is T) with rows
 * of its width, a batch's members at their strides, inputs seeded from the
 * session's seed, and the FP64 reference and scale of every member when
 * the session checks. */
typedef struct {
  int m, n, k;
  /* The BLAS rule ld >= max(1, width): an empty dimension still gets ld 1. */
  int lda, ldb, ldc;
  float *a, *b, *c;
  double *ref, *scale; /* batch x M x N; NULL with --check off */
  pg_op op_a, op_b;
  int batch;
  /* The strides the library gets (0 where batch is 1), and those that lay
   * the members one after another, for the report to tell them apart. */
  long long stride_a, stride_b, stride_c;
  long long dense_a, dense_b, dense_c;
} pgc_problem;

/* The problem as the library's description of it: C = 1 * op(A) op(B) +
 * 0 * C over its batch. */
pg_gemm_desc pgc_problem_desc(const pgc_problem *problem);

/* "pipegemm: <what>: <pg_strerror> (<detail>)" on stderr: the library's
 * detail text, else for a CUDA, memory or device error the last CUDA
 * error; no parentheses when there is neither. */
void pgc_print_status_error(const char *what, pg_status status);
/* "pipegemm: <what>: <pg_strerror(PG_ERR_CUDA)> (<CUDA's text for err>)". */
void pgc_print_cuda_error(const char *what, cudaError_t err);

/* Allocates and fills a problem: op N, N and one GEMM, or `layout`'s.
 * PGC_EXIT_OK, or PGC_EXIT_FAILED after printing the error (nothing left
 * allocated). */
int pgc_problem_open(pgc_session *session, pgc_problem *problem, int m, int n,
                     int k);
int pgc_problem_open_layout(pgc_session *session, pgc_problem *problem, int m, int n, int k,
                            const pgc_layout *layout);
/* The problem's shape, leading dimensions and strides as pgc_problem_open_layout
 * sets them, nothing allocated (for the rows of a problem that could not be
 * set up). */
void pgc_problem_shape(pgc_problem *problem, int m, int n, int k, const pgc_layout *layout);
/* A result row (pgc_result_row_init) of the problem's shape and layout:
 * its ops, batch and strides, naming those that are not dense. */
void pgc_problem_row_init(pgc_result_row *row, const char *variant, int stages,
                          const pgc_problem *problem);
/* Frees the problem's device memory; safe on a zeroed problem. */
void pgc_problem_close(pgc_problem *problem);

/* Verifies (with --check on) and times one variant at `stages` on the
 * problem, and writes the row, with the kernel's shared memory and blocks
 * per SM: a variant the GPU cannot run gets a SKIP row.
 * Returns PGC_EXIT_OK for PASS, UNCHECKED and SKIP, PGC_EXIT_FAILED for FAIL
 * and ERROR (the error already printed as "pipegemm: <variant>: ..."). */
int pgc_run_one(pgc_session *session, const pgc_problem *problem,
                const pg_variant_info *variant, int stages, pgc_result_row *row);

/* The runs of `runs` on the problem, each as pgc_run_one does one, but in
 * config.rounds timed rounds: round 0 plans, checks and times each run in
 * turn, and every later round times again, in the same order, each run that
 * planned and timed so far (a FAIL row is timed too, as pgc_run_one always
 * timed it). A GPU whose clock drifts during the set (power,
 * heat) so weighs on every run alike, not on the runs that came last. Each
 * row's median, min and max are over all its rounds' timed launches. Returns
 * as pgc_run_one, PGC_EXIT_FAILED when any row failed. */
int pgc_run_set(pgc_session *session, const pgc_problem *problem, const pgc_run_spec *runs,
                int count, pgc_result_row *rows);

/* The two halves of pgc_run_one, for a study that runs something other than
 * a registry variant (`study single-warp`):
 * pgc_run_begin counts the run and prints its progress line
 * ("[i/n] label shape") unless --quiet;
 * pgc_run_measure verifies (with --check on) and times `fn`, which must
 * compute C = A * B (alpha 1, beta 0) on the problem, and fills the timing,
 * error and verdict fields of a row made by pgc_result_row_init. It returns
 * as pgc_run_one; `label` names the run in error lines, and `precision` is
 * the error bound C is held to (pg_variant_info.precision). */
void pgc_run_begin(pgc_session *session, const char *label,
                   const pgc_result_row *row);
/* The check alone: poisons C with NaN, runs `fn` once, compares C with the
 * reference (the session must check). Returns PGC_EXIT_FAILED with an
 * ERROR row if a step returned an error (printed); otherwise PGC_EXIT_OK,
 * the row's verdict PASS or FAIL (the mismatches printed) and its errors
 * filled in. */
int pgc_run_verify(pgc_session *session, const pgc_problem *problem,
                   pgh_run_fn fn, void *ctx, pg_precision precision,
                   const char *label, pgc_result_row *row);
int pgc_run_measure(pgc_session *session, const pgc_problem *problem,
                    const char *label, pgh_run_fn fn, void *ctx,
                    pg_precision precision, pgc_result_row *row);

/* The facts above a bench or study report: GPU, clocks, versions, the
 * measuring parameters, the command line and the date. Strings are kept
 * inside the struct, so it must outlive the printing of the report. */
#define PGC_HEADER_MAX_FACTS 24
#define PGC_HEADER_TEXT_SIZE 64
#define PGC_COMMAND_LINE_SIZE 1024
typedef struct {
  pgc_fact facts[PGC_HEADER_MAX_FACTS];
  int count;
  char cc[PGC_HEADER_TEXT_SIZE];
  char clock_seen[PGC_HEADER_TEXT_SIZE];
  char driver[PGC_HEADER_TEXT_SIZE];
  char runtime[PGC_HEADER_TEXT_SIZE];
  char cublas[PGC_HEADER_TEXT_SIZE];
  char date[PGC_HEADER_TEXT_SIZE];
  char command_line[PGC_COMMAND_LINE_SIZE];
} pgc_header;
/* `command_line`: the command as a shell would need it typed ("pipegemm
 * bench --size 2048", pgc_command_line_text). */
void pgc_header_build(pgc_header *header, const pgc_session *session,
                      const char *command_line);
/* The date and time in UTC, a fact of every header. */
void pgc_date_text(char *buf, size_t size);

/* ---- the summary of a shape set (bench --shapes) ----
 * The rows of a set are shape_count blocks of run_count rows, one block per
 * shape in the set's order, the runs in the same order in every block (as
 * pgc_cmd_bench lays them out), x_cublas filled by pgc_result_rows_relate. */
typedef struct {
  double geomean; /* of x_cublas (or x_cublas_tf32) over `shapes` shapes; NaN when none */
  int shapes;
} pgc_geomean;

/* For each run r, means[r]: the geometric mean of its × cuBLAS over the
 * shapes where it and cuBLAS were both timed, leaving out shapes where it
 * was skipped or failed (a failed check times a wrong answer), and how many
 * shapes that is. Returns the number of shapes where the run named
 * cublas_name was timed: the count the means are measured against. With
 * cublas_name "cublas_tf32", the means are of × cuBLAS TF32. */
int pgc_geomeans(const pgc_result_row *rows, int run_count, int shape_count,
                 const char *cublas_name, pgc_geomean *means);

/* The note that ends a set's report, as snprintf would write it into buf
 * (size 0 and buf NULL to measure it): "geometric mean of × cuBLAS over 21
 * shapes: auto 0.87, tma_ws 0.71 (20 shapes), tma - (0 shapes)", a run's
 * own count after it where it differs, its stage count ("cp_async at 3
 * stages 0.75") where its variant ran at several. The cuBLAS run itself is
 * left out; "" (0) when no other run was asked for. Returns the length of
 * the whole note. */
size_t pgc_geomean_note(char *buf, size_t size, const pgc_run_spec *runs,
                        const pgc_geomean *means, int run_count,
                        int cublas_shapes, const char *cublas_name);

/* How a plan divides the work, for the row's `work` column: "split-K 8",
 * "split-K 4 in clusters" (each tile's ranges added up in their cluster)
 * (K in 8 ranges), "split-K 5 from row 1664" (only the rows from 1664
 * down split, those above over all of K), "stream-K 264" (264 blocks share the tiles' K steps), or
 * "" when it runs one block per tile (cublas too). */
void pgc_work_text(const pg_plan_info *info, char *buf, size_t size);

/* FP32 lanes (FFMA per clock) per SM for a compute capability; 0 if unknown. */
int pgc_fp32_lanes_per_sm(int cc_major, int cc_minor);
/* 2 x lanes x SMs x clock, in TFLOP/s; NaN when a factor is unknown. */
double pgc_ffma_peak_tflops(int cc_major, int cc_minor, int sm_count,
                            double clock_mhz);
/* 2MNK / time, in TFLOP/s; NaN for a time that is not positive. */
double pgc_gemm_tflops(int m, int n, int k, double ms);
/* The same for a batch of `batch` such GEMMs in that time: 2MNK x batch. */
double pgc_batch_tflops(int m, int n, int k, int batch, double ms);
/* "13.0" from a CUDA version number such as 13000. */
void pgc_cuda_version_text(int version, char *buf, size_t size);

#endif
