/* Shared by the GPU tests (plain C, no cmocka: CTest reads the exit code,
 * 0 pass, 1 fail, 77 skipped). */
#ifndef PG_TEST_GPU_UTIL_H
#define PG_TEST_GPU_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "pipegemm.h"

#define PG_TEST_SKIP 77

/* 1 when there is a device to test on; otherwise prints why not, in the
 * library's words (the tool's too): no driver, a driver too old, no GPU. */
static inline int pgt_have_device(void) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaSuccess && count > 0) return 1;
  const pg_status st = pg_variant_supported(pg_variant_at(0), 0);
  const char *why = pg_last_error_detail();
  if (st == PG_OK || why[0] == '\0')
    why = err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDeviceCount found 0";
  printf("skipped: no CUDA device (%s)\n", why);
  return 0;
}

/* A CUDA or harness call that must succeed for the test to go on. */
#define PGT_CUDA(call)                                                          \
  do {                                                                          \
    cudaError_t err_ = (call);                                                  \
    if (err_ != cudaSuccess) {                                                  \
      printf("FATAL %s:%d: %s: %s\n", __FILE__, __LINE__, #call,                \
             cudaGetErrorString(err_));                                         \
      exit(1);                                                                  \
    }                                                                           \
  } while (0)

#define PGT_PG(call)                                                            \
  do {                                                                          \
    pg_status st_ = (call);                                                     \
    if (st_ != PG_OK) {                                                         \
      printf("FATAL %s:%d: %s: %s (CUDA: %s)\n", __FILE__, __LINE__, #call,     \
             pg_status_name(st_), cudaGetErrorString(pg_last_cuda_error()));    \
      exit(1);                                                                  \
    }                                                                           \
  } while (0)

static inline void *pgt_malloc_device(size_t bytes) {
  void *p = NULL;
  PGT_CUDA(cudaMalloc(&p, bytes ? bytes : 4));
  return p;
}

static inline void *pgt_malloc_host(size_t bytes) {
  void *p = malloc(bytes ? bytes : 4);
  if (p == NULL) {
    printf("FATAL: out of host memory (%zu bytes)\n", bytes);
    exit(1);
  }
  return p;
}

/* 1 if `name` is an item of the comma-separated `list`. */
static inline int pgt_listed(const char *list, const char *name) {
  size_t len = strlen(name);
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    size_t item = end ? (size_t)(end - p) : strlen(p);
    if (item == len && strncmp(p, name, len) == 0) return 1;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}

/* Whether a test runs this variant: PG_TEST_VARIANTS=a,b runs only those,
 * PG_TEST_SKIP_VARIANTS=a,b all but those (the sanitizer runs leave cuBLAS's
 * own kernels out of racecheck). */
static inline int pgt_selected(const char *name) {
  const char *only = getenv("PG_TEST_VARIANTS"), *skip = getenv("PG_TEST_SKIP_VARIANTS");
  if (skip != NULL && pgt_listed(skip, name)) return 0;
  return only == NULL || *only == '\0' || pgt_listed(only, name);
}

/* Index of the first float whose bits differ, or -1. */
static inline long long pgt_first_diff(const float *x, const float *y, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (memcmp(&x[i], &y[i], sizeof(float)) != 0) return (long long)i;
  return -1;
}

#endif
