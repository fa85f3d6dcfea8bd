/* Many host threads at once, each on its own stream and buffers: the device
 * cache, the split-K workspace pool and cuBLAS's handle are shared, and
 * nothing may mix one thread's work with another's. Each thread runs every
 * variant below once, checks C against the FP64 reference, then launches it
 * again RUNS times back to back with no synchronisation between (beta 0, so
 * every launch writes the same C) and checks the bits did not move.
 * PG_TEST_VARIANTS / PG_TEST_SKIP_VARIANTS choose variants (gpu_util.h).
 * Exit 0 pass, 1 fail, 77 without a GPU. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "gpu_util.h"
#include "measure/harness.h"

#define THREADS 8
#define RUNS 10
/* Four 128x128 tiles and a long K: the split forms split it, stream-K cuts
 * tiles between blocks. */
#define M 256
#define N 256
#define K 4096
#define C_FLOATS ((size_t)M * N)

static const char *const variants[] = {"tma_ws_splitk", "tma_ws_streamk", "tma_ws_n64",
                                       "tma_ws_m256",   "auto",           "cp_async",
                                       "cublas"};
#define VARIANT_COUNT ((int)(sizeof variants / sizeof variants[0]))

typedef struct {
  int index;
  int failures;
  char first_failure[320];
} thread_result;

static void fail(thread_result *r, const char *variant, const char *what) {
  if (r->failures++ == 0)
    snprintf(r->first_failure, sizeof r->first_failure, "thread %d, %s: %s", r->index, variant,
             what);
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
    char what[200];
    if (check.reported > 0)
      snprintf(what, sizeof what,
               "wrong C: %lld of %d elements (%lld not finite), first reported C[%d][%d] = %g "
               "against %g",
               check.failed, M * N, check.nonfinite, check.bad_row[0], check.bad_col[0],
               (double)check.bad_out[0], check.bad_ref[0]);
    else
      snprintf(what, sizeof what, "wrong C: %lld of %d elements", check.failed, M * N);
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
  /* cuBLAS need not sum in one order every time; ours must. */
  if (strcmp(variant, "cublas") != 0 && pgt_first_diff(first, again, C_FLOATS) >= 0)
    fail(r, variant, "C changed between launches of the same call");
}

static void *thread_main(void *arg) {
  thread_result *r = arg;
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
      ok_pg(r, "-", pgh_fill_uniform(a, M, K, K, 100 + (uint64_t)r->index, stream)) &&
      ok_pg(r, "-", pgh_fill_uniform(b, K, N, N, 200 + (uint64_t)r->index, stream)) &&
      ok_pg(r, "-", pgh_reference(M, N, K, 1.0f, a, K, b, N, 0.0f, NULL, N, ref, scale, stream)))
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

int main(void) {
  if (!pgt_have_device()) return PG_TEST_SKIP;
  pthread_t threads[THREADS];
  thread_result results[THREADS];
  memset(results, 0, sizeof results);
  for (int t = 0; t < THREADS; ++t) {
    results[t].index = t;
    if (pthread_create(&threads[t], NULL, thread_main, &results[t]) != 0) {
      printf("FATAL: cannot start thread %d\n", t);
      return 1;
    }
  }
  int failures = 0;
  for (int t = 0; t < THREADS; ++t) {
    pthread_join(threads[t], NULL);
    if (results[t].failures != 0) printf("FAIL %s\n", results[t].first_failure);
    failures += results[t].failures;
  }
  pg_shutdown();
  printf("test_gpu_threads: %d threads x %d variants, %d failed\n", THREADS, VARIANT_COUNT,
         failures);
  return failures == 0 ? 0 : 1;
}
