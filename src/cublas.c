/* The reference row: cuBLAS SGEMM in strict FP32.
 *
 * cuBLAS is column-major; a row-major C = A*B is the column-major
 * C^T = B^T * A^T, so the operands are swapped and nothing is transposed.
 * CUBLAS_COMPUTE_32F with the default math mode keeps FP32 arithmetic;
 * TF32 tensor cores are used only when asked for, which we never do. The
 * handles live with the device cache (src/device.c). */
#include <pthread.h>
#include <cublas_v2.h>

#include "internal.h"

/* The handle's stream is set per call, so a handle is used under this lock. */
static pthread_mutex_t gemm_lock = PTHREAD_MUTEX_INITIALIZER;

/* A cuBLAS failure as a status, with cuBLAS's reason and the call's name. */
static pg_status status_from_cublas(cublasStatus_t s, const char *call) {
  if (s == CUBLAS_STATUS_SUCCESS) return PG_OK;
  pg_set_error_detail("cuBLAS (%s): %s", call, cublasGetStatusString(s));
  switch (s) {
    case CUBLAS_STATUS_ALLOC_FAILED:
      return PG_ERR_NO_MEMORY;
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return PG_ERR_ARCH;
    default:
      return PG_ERR_CUBLAS;
  }
}

void pg_cublas_lock(void) { pthread_mutex_lock(&gemm_lock); }
void pg_cublas_unlock(void) { pthread_mutex_unlock(&gemm_lock); }

pg_status pg_cublas_sgemm(const pg_device *device, const pg_gemm_args *g, cudaStream_t stream) {
  pg_cublas_handle h = NULL;
  /* The handle is fetched under the lock too: pg_shutdown may release it. */
  pthread_mutex_lock(&gemm_lock);
  pg_status st = pg_cublas_handle_of(device, &h);
  /* What the caller's CUDA error slot held: a cuBLAS call that fails (out
   * of memory for its workspace, say) may leave its runtime error there. */
  const cudaError_t pending = cudaPeekAtLastError();
  if (st == PG_OK) st = status_from_cublas(cublasSetStream(h, stream), "cublasSetStream");
  if (st == PG_OK)
    st = status_from_cublas(cublasGemmEx(
        h, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->m, g->k, &g->alpha, g->b,
        CUDA_R_32F, g->ldb, g->a, CUDA_R_32F, g->lda, &g->beta, g->c,
        CUDA_R_32F, g->ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT), "cublasGemmEx");
  if (st != PG_OK && pending == cudaSuccess) {
    /* Kept for pg_last_cuda_error(), taken out of the caller's slot. */
    const cudaError_t left = cudaGetLastError();
    if (left != cudaSuccess) pg_restore_last_cuda_error(left);
  }
  pthread_mutex_unlock(&gemm_lock);
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
