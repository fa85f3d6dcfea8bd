/* The reference rows: cuBLAS SGEMM in strict FP32 and on TF32 tensor
 * cores, their registry entries and the handles (one per device, made on
 * first use).
 *
 * cuBLAS is column-major; a row-major C = A*B is the column-major
 * C^T = B^T * A^T, so the operands are swapped and nothing is transposed.
 * CUBLAS_COMPUTE_32F with the default math mode keeps FP32 arithmetic;
 * TF32 tensor cores are used only by cublas_tf32, which asks for them with
 * CUBLAS_COMPUTE_32F_FAST_TF32 on the call (the handle's math mode stays
 * the default). */
#include <pthread.h>
#include <string.h>

#include <cublas_v2.h>

#include "internal.h"

#define PG_MAX_DEVICES 64

const pg_variant_entry pg_entry_cublas = {
    .info = {.name = "cublas", .kind = PG_KIND_LIBRARY,
             .technique = "cuBLAS SGEMM, strict FP32 (no TF32): the reference row",
             .source = "", .min_cc = 50, .min_stages = 1, .max_stages = 1,
             .default_stages = 1},
};

const pg_variant_entry pg_entry_cublas_tf32 = {
    .info = {.name = "cublas_tf32", .kind = PG_KIND_LIBRARY, .precision = PG_PRECISION_TF32,
             .technique = "cuBLAS SGEMM on TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32): "
                          "the tensor-core reference row",
             .source = "", .min_cc = 80, .min_stages = 1, .max_stages = 1,
             .default_stages = 1},
};

/* A handle's stream is set per call, so handles are made and used under
 * this lock, and pg_cublas_release takes it before destroying them. */
static pthread_mutex_t gemm_lock = PTHREAD_MUTEX_INITIALIZER;
static cublasHandle_t handles[PG_MAX_DEVICES];

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

/* What the probing thread reports of a handle it made. */
typedef struct {
  int ordinal;
  cublasHandle_t handle;
  cudaError_t cuda_error;
  cublasStatus_t status;
} handle_probe;

/* Default math: CUBLAS_COMPUTE_32F stays strict FP32 (no TF32). */
static void create_handle(void *ctx) {
  handle_probe *p = ctx;
  p->cuda_error = cudaSetDevice(p->ordinal);
  if (p->cuda_error != cudaSuccess) return;
  p->status = cublasCreate(&p->handle);
  if (p->status == CUBLAS_STATUS_SUCCESS) {
    p->status = cublasSetMathMode(p->handle, CUBLAS_DEFAULT_MATH);
    if (p->status != CUBLAS_STATUS_SUCCESS) cublasDestroy(p->handle);
  }
}

/* The device's handle, made on the probing thread (a capture on the
 * caller's thread forbids the cudaMalloc that cublasCreate needs). Called
 * under gemm_lock; a failure is not remembered. */
static pg_status handle_of(const pg_device *device, cublasHandle_t *out) {
  if (handles[device->ordinal] == NULL) {
    handle_probe probe;
    memset(&probe, 0, sizeof probe);
    probe.ordinal = device->ordinal;
    pg_status st = pg_on_probe_thread(create_handle, &probe);
    if (st != PG_OK) return st;
    if (probe.cuda_error != cudaSuccess) {
      st = pg_status_from_cuda(probe.cuda_error);
      pg_set_error_detail("cuBLAS: %s", cudaGetErrorString(probe.cuda_error));
      return st;
    }
    st = status_from_cublas(probe.status, "cublasCreate");
    if (st != PG_OK) return st;
    handles[device->ordinal] = probe.handle;
  }
  *out = handles[device->ordinal];
  return PG_OK;
}

pg_status pg_cublas_sgemm(const pg_device *device, const pg_gemm_args *g, pg_precision precision,
                          cudaStream_t stream) {
  const cublasComputeType_t compute =
      precision == PG_PRECISION_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  cublasHandle_t h = NULL;
  pthread_mutex_lock(&gemm_lock);
  pg_status st = handle_of(device, &h);
  /* What the caller's CUDA error slot held: a cuBLAS call that fails (out
   * of memory for its workspace, say) may leave its runtime error there. */
  const cudaError_t pending = cudaPeekAtLastError();
  if (st == PG_OK) st = status_from_cublas(cublasSetStream(h, stream), "cublasSetStream");
  if (st == PG_OK)
    st = status_from_cublas(cublasGemmEx(
        h, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->m, g->k, &g->alpha, g->b,
        CUDA_R_32F, g->ldb, g->a, CUDA_R_32F, g->lda, &g->beta, g->c,
        CUDA_R_32F, g->ldc, compute, CUBLAS_GEMM_DEFAULT), "cublasGemmEx");
  if (st != PG_OK && pending == cudaSuccess) {
    /* Kept for pg_last_cuda_error(), taken out of the caller's slot. */
    const cudaError_t left = cudaGetLastError();
    if (left != cudaSuccess) pg_restore_last_cuda_error(left);
  }
  pthread_mutex_unlock(&gemm_lock);
  return st;
}

/* On the probing thread, each device current in turn. */
static void destroy_handles(void *ctx) {
  (void)ctx;
  for (int i = 0; i < PG_MAX_DEVICES; ++i) {
    if (handles[i] == NULL || cudaSetDevice(i) != cudaSuccess) continue;
    cublasDestroy(handles[i]);
    handles[i] = NULL;
  }
}

void pg_cublas_release(void) {
  pthread_mutex_lock(&gemm_lock); /* no call is using a handle while they go */
  (void)pg_on_probe_thread(destroy_handles, NULL);
  pthread_mutex_unlock(&gemm_lock);
}

int pg_cublas_version(void) {
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)
    return PG_ERR_CUBLAS;
  return major * 10000 + minor * 100 + patch;
}
