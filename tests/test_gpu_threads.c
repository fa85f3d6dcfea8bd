/* Many host threads at once, each on its own stream and buffers: the device
 * cache and the split-K workspace pool are shared (cuBLAS's handles are one
 * a stream), and nothing may mix one thread's work with another's. Each thread runs every
 * variant below once, checks C against the FP64 reference, then launches it
 * again RUNS times back to back with no synchronisation between (beta 0, so
 * every launch writes the same C) and checks the bits did not move.
 * PG_TEST_VARIANTS / PG_TEST_SKIP_VARIANTS choose variants (gpu_util.h);
 * PG_TEST_ROUNDS=R runs each thread's sequence R times (default 1: a soak
 * for a failure seen once in many runs) and PG_TEST_THREADS=T runs T
 * threads (1 to 8, default 8). PG_TEST_SAME_INPUTS=1 (0 by default) gives
 * every thread the same A and B (in buffers of its own): a failure that then
 * goes away is one thread's launch reading another's operands.
 * Exit 0 pass, 1 fail, 77 without a GPU. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"
#include "kernels/tma_ws.h" /* TWS_FORMS */
#include "measure/harness.h"

#define THREADS 8
#define RUNS 10
/* Four 128x128 tiles and a long K: the split forms split it, stream-K cuts
 * tiles between blocks. */
#define M 256
#define N 256
#define K 4096
#define C_FLOATS ((size_t)M * N)

/* Every tile form of tma_ws (TWS_FORMS: their races show only beside other
 * streams' kernels), stream-K's, the entries whose shared state the
 * threads race: the device cache, the workspace pool, cuBLAS's handles;
 * and wgmma_fp16x3, whose plan launches another entry's kernel after its
 * own, reading the workspace its split wrote. */
#define FORM_NAME(form, ...) #form,
static const char *const variants[] = {TWS_FORMS(FORM_NAME) "tma_ws_streamk", "tma", "auto",
                                       "cp_async", "cublas", "cublas_tf32", "wgmma_fp16x3"};
#define VARIANT_COUNT ((int)(sizeof variants / sizeof variants[0]))

typedef struct {
  int index;
  int rounds;
  int same_inputs;
  int round; /* the one running */
  int failures;
} thread_result;

/* Each failure told as it happens (a thread's first 20), with its round. */
static void fail(thread_result *r, const char *variant, const char *what) {
  if (r->failures++ < 20)
    printf("FAIL thread %d, round %d, %s: %s\n", r->index, r->round, variant, what);
}

/* A CUDA or pipegemm step of a thread; 0 when it failed (recorded). */
static int ok_cuda(thread_result *r, const char *variant, cudaError_t err) {
  if (err == cudaSuccess) return 1;
  fail(r, variant, cudaGetErrorString(err));
  return 0;
}

static int ok_pg(thread_result *r, const char *variant, pg_status st) {
  if (st == PG_OK) return 1;
  char what[160];
  snprintf(what, sizeof what, "%s (%s)", pg_status_name(st), pg_last_error_detail());
  fail(r, variant, what);
  return 0;
}

/* Where a wrong C is wrong, whatever the kernel's tiles: the elements off
 * the reference by more than 1e-4 of their magnitudes' sum (corruption,
 * not rounding), their rows' and columns' ranges and how many distinct
 * rows and columns they touch (a warp's share, a tile, a stage of one
 * operand each leave a shape of their own). */
static void describe_wrong(char *out, size_t size, const float *c_dev, const double *ref_dev,
                           const double *scale_dev, cudaStream_t stream) {
  float *c = malloc(C_FLOATS * sizeof(float));
  double *ref = malloc(C_FLOATS * sizeof(double)), *scale = malloc(C_FLOATS * sizeof(double));
  unsigned char rows[M], cols[N];
  memset(rows, 0, sizeof rows);
  memset(cols, 0, sizeof cols);
  int bad = 0, r0 = M, r1 = -1, c0 = N, c1 = -1;
  if (c != NULL && ref != NULL && scale != NULL &&
      cudaMemcpyAsync(c, c_dev, C_FLOATS * sizeof(float), cudaMemcpyDeviceToHost, stream) ==
          cudaSuccess &&
      cudaMemcpyAsync(ref, ref_dev, C_FLOATS * sizeof(double), cudaMemcpyDeviceToHost,
                      stream) == cudaSuccess &&
      cudaMemcpyAsync(scale, scale_dev, C_FLOATS * sizeof(double), cudaMemcpyDeviceToHost,
                      stream) == cudaSuccess &&
      cudaStreamSynchronize(stream) == cudaSuccess) {
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        const size_t e = (size_t)i * N + j;
        const double err = (double)c[e] - ref[e];
        if (!(err <= 1e-4 * scale[e] && -err <= 1e-4 * scale[e])) {
          ++bad;
          rows[i] = cols[j] = 1;
          r0 = i < r0 ? i : r0, r1 = i > r1 ? i : r1;
          c0 = j < c0 ? j : c0, c1 = j > c1 ? j : c1;
        }
      }
    int distinct_rows = 0, distinct_cols = 0;
    for (int i = 0; i < M; ++i) distinct_rows += rows[i];
    for (int j = 0; j < N; ++j) distinct_cols += cols[j];
    snprintf(out, size, "; %d far off, rows %d-%d (%d of them), columns %d-%d (%d of them)", bad,
             r0, r1, distinct_rows, c0, c1, distinct_cols);
  } else {
    snprintf(out, size, "; C could not be read back");
  }
  free(c);
  free(ref);
  free(scale);
}

static void run_variant(thread_result *r, const char *variant, cudaStream_t stream,
                        const float *a, const float *b, float *c, const double *ref,
                        const double *scale, float *first, float *again) {
  const pg_variant_info *v = pg_variant_find(variant);
  if (v == NULL || !pgt_selected(variant) || pg_variant_supported(v, 0) != PG_OK) return;
  if (!ok_pg(r, variant, pgh_poison(c, M, N, N, stream)) ||
      !ok_pg(r, variant, pg_sgemm(variant, 0, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N, stream)) ||
      !ok_cuda(r, variant, cudaStreamSynchronize(stream)))
    return;
  pgh_check check;
  if (!ok_pg(r, variant, pgh_compare(M, N, K, c, N, ref, scale, v->precision, &check,
                                    stream))) return;
  if (check.failed != 0) {
    /* How many and where: a failure seen once in tens of runs must say
     * enough to be read from its log alone. */
    char what[320], where[120];
    describe_wrong(where, sizeof where, c, ref, scale, stream);
    if (check.reported > 0)
      snprintf(what, sizeof what,
               "wrong C: %lld of %d elements (%lld not finite), e.g. C[%d][%d] = %g against "
               "%g%s",
               check.failed, M * N, check.nonfinite, check.bad_row[0], check.bad_col[0],
               (double)check.bad_out[0], check.bad_ref[0], where);
    else
      snprintf(what, sizeof what, "wrong C: %lld of %d elements%s", check.failed, M * N, where);
    fail(r, variant, what);
    return;
  }
  if (!ok_cuda(r, variant, cudaMemcpyAsync(first, c, C_FLOATS * sizeof(float),
                                           cudaMemcpyDeviceToHost, stream)))
    return;
  for (int run = 0; run < RUNS; ++run)
    if (!ok_pg(r, variant, pg_sgemm(variant, 0, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N, stream)))
      return;
  if (!ok_cuda(r, variant, cudaMemcpyAsync(again, c, C_FLOATS * sizeof(float),
                                           cudaMemcpyDeviceToHost, stream)) ||
      !ok_cuda(r, variant, cudaStreamSynchronize(stream)))
    return;
  /* The same bits every launch, cuBLAS's rows included (a handle and a
   * workspace per stream keep its choice of kernel from depending on what
   * the other threads' streams run at the same time). */
  const long long diff = pgt_first_diff(first, again, C_FLOATS);
  if (diff >= 0) {
    long long changed = 0;
    for (size_t e = 0; e < C_FLOATS; ++e)
      changed += memcmp(first + e, again + e, sizeof(float)) != 0;
    char what[160];
    snprintf(what, sizeof what,
             "C changed between launches of the same call: %lld elements, the first C[%lld][%lld]",
             changed, diff / N, diff % N);
    fail(r, variant, what);
  }
}

static void *thread_main(void *arg) {
  thread_result *r = arg;
  const uint64_t seed = r->same_inputs ? 0 : (uint64_t)r->index;
  cudaStream_t stream = NULL;
  float *a = NULL, *b = NULL, *c = NULL;
  double *ref = NULL, *scale = NULL;
  float *first = pgt_malloc_host(C_FLOATS * sizeof(float));
  float *again = pgt_malloc_host(C_FLOATS * sizeof(float));
  if (ok_cuda(r, "-", cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) &&
      ok_cuda(r, "-", cudaMalloc((void **)&a, (size_t)M * K * sizeof(float))) &&
      ok_cuda(r, "-", cudaMalloc((void **)&b, (size_t)K * N * sizeof(float))) &&
      ok_cuda(r, "-", cudaMalloc((void **)&c, C_FLOATS * sizeof(float))) &&
      ok_cuda(r, "-", cudaMalloc((void **)&ref, C_FLOATS * sizeof(double))) &&
      ok_cuda(r, "-", cudaMalloc((void **)&scale, C_FLOATS * sizeof(double))) &&
      ok_pg(r, "-", pgh_fill_uniform(a, M, K, K, 100 + seed, stream)) &&
      ok_pg(r, "-", pgh_fill_uniform(b, K, N, N, 200 + seed, stream)) &&
      ok_pg(r, "-", pgh_reference(M, N, K, 1.0f, a, K, b, N, 0.0f, NULL, N, ref, scale, stream)))
    for (r->round = 0; r->round < r->rounds; ++r->round)
      for (int i = 0; i < VARIANT_COUNT; ++i)
        run_variant(r, variants[(i + r->index) % VARIANT_COUNT], stream, a, b, c, ref, scale,
                    first, again);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cudaFree(ref);
  cudaFree(scale);
  if (stream != NULL) cudaStreamDestroy(stream);
  free(first);
  free(again);
  return NULL;
}

/* A positive count from the environment variable `name`, at most `most`;
 * `fallback` where it is unset. -1 where it is set to anything else. */
static int count_from_env(const char *name, int fallback, int most) {
  const char *text = getenv(name);
  if (text == NULL || *text == '\0') return fallback;
  char *end = NULL;
  const long value = strtol(text, &end, 10);
  if (*end != '\0' || value < 1 || value > most) {
    printf("FATAL: %s=%s: want a whole number from 1 to %d\n", name, text, most);
    return -1;
  }
  return (int)value;
}

int main(void) {
  const int rounds = count_from_env("PG_TEST_ROUNDS", 1, 1000000);
  const int thread_count = count_from_env("PG_TEST_THREADS", THREADS, THREADS);
  const char *same = getenv("PG_TEST_SAME_INPUTS");
  const int same_inputs =
      same == NULL || *same == '\0' || strcmp(same, "0") == 0 ? 0 : strcmp(same, "1") == 0 ? 1 : -1;
  if (same_inputs < 0) printf("FATAL: PG_TEST_SAME_INPUTS=%s: want 0 or 1\n", same);
  if (rounds < 0 || thread_count < 0 || same_inputs < 0) return 1;
  if (!pgt_have_device()) return PG_TEST_SKIP;
  pthread_t threads[THREADS];
  thread_result results[THREADS];
  memset(results, 0, sizeof results);
  for (int t = 0; t < thread_count; ++t) {
    results[t].index = t;
    results[t].rounds = rounds;
    results[t].same_inputs = same_inputs;
    if (pthread_create(&threads[t], NULL, thread_main, &results[t]) != 0) {
      printf("FATAL: cannot start thread %d\n", t);
      return 1;
    }
  }
  int failures = 0;
  for (int t = 0; t < thread_count; ++t) {
    pthread_join(threads[t], NULL);
    failures += results[t].failures;
  }
  pg_shutdown();
  int chosen = 0;
  for (int i = 0; i < VARIANT_COUNT; ++i) chosen += pgt_selected(variants[i]);
  printf("test_gpu_threads: %d threads x %d variants x %d rounds, %d failed\n", thread_count,
         chosen, rounds, failures);
  return failures == 0 ? 0 : 1;
}
