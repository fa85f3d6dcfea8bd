/* The reference row: cuBLAS SGEMM in strict FP32.
 *
 * cuBLAS is column-major; a row-major C = A*B is the column-major
 * C^T = B^T * A^T, so the operands are swapped and nothing is transposed.
 * CUBLAS_COMPUTE_32F with the default math mode keeps FP32 arithmetic;
 * TF32 tensor cores are used only when asked for, which we never do. */
#include <pthread.h>
#include <cublas_v2.h>

#include "internal.h"

#define PG_MAX_DEVICES 64

static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static cublasHandle_t handles[PG_MAX_DEVICES];

static pg_status status_from_cublas(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS:
      return PG_OK;
    case CUBLAS_STATUS_ALLOC_FAILED:
      return PG_ERR_NO_MEMORY;
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return PG_ERR_ARCH;
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return PG_ERR_NO_DEVICE;
    default:
      return PG_ERR_CUBLAS;
  }
}

/* Called with handles_lock held. */
static pg_status handle_for_current_device(cublasHandle_t *out) {
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return pg_status_from_cuda(err);
  if (device < 0 || device >= PG_MAX_DEVICES) return PG_ERR_UNSUPPORTED;
  if (handles[device] == NULL) {
    cublasHandle_t h = NULL;
    pg_status st = status_from_cublas(cublasCreate(&h));
    if (st != PG_OK) return st;
    st = status_from_cublas(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    if (st != PG_OK) {
      cublasDestroy(h);
      return st;
    }
    handles[device] = h;
  }
  *out = handles[device];
  return PG_OK;
}

pg_status pg_cublas_sgemm(const pg_gemm_args *g) {
  pthread_mutex_lock(&handles_lock);
  cublasHandle_t h = NULL;
  pg_status st = handle_for_current_device(&h);
  /* The stream is set per call, so the handle is used under the lock. */
  if (st == PG_OK) st = status_from_cublas(cublasSetStream(h, g->stream));
  if (st == PG_OK)
    st = status_from_cublas(cublasGemmEx(
        h, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->m, g->k, &g->alpha, g->b,
        CUDA_R_32F, g->ldb, g->a, CUDA_R_32F, g->lda, &g->beta, g->c,
        CUDA_R_32F, g->ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  pthread_mutex_unlock(&handles_lock);
  return st;
}

int pg_cublas_version(void) {
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)
    return PG_ERR_CUBLAS;
  return major * 10000 + minor * 100 + patch;
}

void pg_shutdown(void) {
  pthread_mutex_lock(&handles_lock);
  for (int i = 0; i < PG_MAX_DEVICES; ++i) {
    if (handles[i] != NULL) {
      cublasDestroy(handles[i]);
      handles[i] = NULL;
    }
  }
  pthread_mutex_unlock(&handles_lock);
}
