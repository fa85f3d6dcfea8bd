/* The host's cost of one call: how long pg_sgemm takes to return, and how
 * long a prepared plan takes to launch, on a problem so small that the GPU
 * never makes the host wait (64^3, no L2 flush, the launch queue far from
 * full). Prints one row per variant: the median over rounds of the mean of
 * CALLS back-to-back calls, in microseconds.
 *
 *   build/pg_host_cost [variant ...]        (default: cp_async tma_ws auto cublas)
 *
 * It uses nothing but pg_sgemm (and the plan API where the header has it),
 * so the same file builds against older versions of the library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "pipegemm.h"

#define SIZE 64
#define CALLS 100
#define ROUNDS 31
#define WARMUP 50

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int compare_doubles(const void *x, const void *y) {
  const double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, compare_doubles);
  return v[n / 2];
}

static float *d_a, *d_b, *d_c;

static pg_status one_sgemm(const char *variant, void *unused, cudaStream_t stream) {
  (void)unused;
  return pg_sgemm(variant, 0, SIZE, SIZE, SIZE, 1.0f, d_a, SIZE, d_b, SIZE, 0.0f, d_c, SIZE,
                  stream);
}

#ifdef PIPEGEMM_VERSION_MAJOR
static pg_status one_plan_launch(const char *variant, void *plan, cudaStream_t stream) {
  (void)variant;
  return pg_plan_launch((const pg_plan *)plan, stream);
}
#endif

typedef pg_status (*call_fn)(const char *variant, void *ctx, cudaStream_t stream);

/* Median microseconds per call, or a negative number after printing why. */
static double time_calls(call_fn fn, const char *variant, void *ctx, cudaStream_t stream) {
  double per_call[ROUNDS];
  for (int i = 0; i < WARMUP; ++i)
    if (fn(variant, ctx, stream) != PG_OK) {
      printf("%-18s failed: %s\n", variant, pg_strerror(fn(variant, ctx, stream)));
      return -1.0;
    }
  for (int r = 0; r < ROUNDS; ++r) {
    if (cudaStreamSynchronize(stream) != cudaSuccess) return -1.0;
    const double t0 = now_us();
    for (int i = 0; i < CALLS; ++i) (void)fn(variant, ctx, stream);
    per_call[r] = (now_us() - t0) / CALLS;
  }
  if (cudaStreamSynchronize(stream) != cudaSuccess) return -1.0;
  return median(per_call, ROUNDS);
}

int main(int argc, char **argv) {
  static const char *const defaults[] = {"cp_async", "tma_ws", "auto", "cublas"};
  const char *const *variants = argc > 1 ? (const char *const *)argv + 1 : defaults;
  const int count = argc > 1 ? argc - 1 : (int)(sizeof defaults / sizeof defaults[0]);
  const size_t bytes = (size_t)SIZE * SIZE * sizeof(float);
  static float host[SIZE * SIZE];
  srand(1);
  for (int i = 0; i < SIZE * SIZE; ++i) host[i] = (float)rand() / (float)RAND_MAX - 0.5f;
  cudaStream_t stream;
  if (cudaMalloc((void **)&d_a, bytes) != cudaSuccess ||
      cudaMalloc((void **)&d_b, bytes) != cudaSuccess ||
      cudaMalloc((void **)&d_c, bytes) != cudaSuccess ||
      cudaMemcpy(d_a, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaMemcpy(d_b, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    printf("no usable GPU\n");
    return 3;
  }
  printf("host time per call, %dx%dx%d, median of %d rounds of %d calls\n", SIZE, SIZE, SIZE,
         ROUNDS, CALLS);
  printf("%-18s %14s %16s\n", "variant", "pg_sgemm us", "plan launch us");
  for (int v = 0; v < count; ++v) {
    const double sgemm_us = time_calls(one_sgemm, variants[v], NULL, stream);
    if (sgemm_us < 0) continue;
    double plan_us = -1.0;
#ifdef PIPEGEMM_VERSION_MAJOR
    pg_plan *plan = NULL;
    if (pg_plan_create(&plan, pg_variant_find(variants[v]), 0, SIZE, SIZE, SIZE, 1.0f, d_a, SIZE,
                       d_b, SIZE, 0.0f, d_c, SIZE) == PG_OK) {
      plan_us = time_calls(one_plan_launch, variants[v], plan, stream);
      pg_plan_destroy(plan);
    }
#endif
    if (plan_us >= 0)
      printf("%-18s %14.2f %16.2f\n", variants[v], sgemm_us, plan_us);
    else
      printf("%-18s %14.2f %16s\n", variants[v], sgemm_us, "-");
  }
  cudaFree(d_a);
  cudaFree(d_b);
  cudaFree(d_c);
  cudaStreamDestroy(stream);
  return 0;
}
