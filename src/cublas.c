/* The reference rows: cuBLAS SGEMM in strict FP32 and on TF32 tensor
 * cores, their registry entries and the handles (one per device and
 * stream, made on first use).
 *
 * cuBLAS is column-major; a row-major C = op(A) op(B) is the column-major
 * C^T = op(B)^T op(A)^T, so the operands are swapped and each keeps its op;
 * a batch is cublasGemmStridedBatchedEx.
 * CUBLAS_COMPUTE_32F with the default math mode keeps FP32 arithmetic;
 * TF32 tensor cores are used only by cublas_tf32, which asks for them with
 * CUBLAS_COMPUTE_32F_FAST_TF32 on the call (the handle's math mode stays
 * the default). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>

#include "internal.h"

const pg_variant_entry pg_entry_cublas = {
    .info = {.name = "cublas", .kind = PG_KIND_LIBRARY, .layouts = PG_LAYOUT_ANY,
             .technique = "cuBLAS SGEMM, strict FP32 (no TF32): the reference row",
             .source = "", .min_cc = 50, .min_stages = 1, .max_stages = 1,
             .default_stages = 1},
};

const pg_variant_entry pg_entry_cublas_tf32 = {
    .info = {.name = "cublas_tf32", .kind = PG_KIND_LIBRARY, .precision = PG_PRECISION_TF32,
             .layouts = PG_LAYOUT_ANY,
             .technique = "cuBLAS on TF32 tensor cores: the tensor-core reference row",
             .source = "", .min_cc = 80, .min_stages = 1, .max_stages = 1,
             .default_stages = 1,
             .description = "cuBLAS SGEMM on TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32): "
                            "the tensor-core reference row"},
};

/* cuBLAS advises one handle per stream with a workspace of its own: one
 * handle used on several streams with its default workspace may pick other
 * kernels where streams run at once (results not bitwise the same run to
 * run), and a handle's default workspace is allocated inside each stream
 * capture. So each (device, stream) the reference rows run on gets a
 * handle, bound to that stream and to a workspace of the library's own,
 * made on first use (on the probing thread: a capture under way on the
 * caller's thread forbids the cudaMalloc) and kept until pg_shutdown. Calls
 * look their handle up under a read lock and run under it, so that calls
 * on different streams and threads never wait for each other;
 * pg_shutdown's write lock waits for them. */
typedef struct {
  int ordinal;
  cudaStream_t stream;
  cublasHandle_t handle; /* NULL: an empty slot */
  void *workspace;
} stream_handle;
static pthread_rwlock_t handles_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER;
static stream_handle *handles;
static size_t handle_count, handle_room;

/* The workspace cuBLAS recommends: 32 MiB on Hopper, 4 MiB before it. */
static size_t workspace_bytes(const pg_device *device) {
  return (device->cc >= 90 ? (size_t)32 : (size_t)4) << 20;
}

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
  stream_handle made;
  size_t bytes;
  cudaError_t cuda_error;
  cublasStatus_t status;
  const char *call; /* what failed */
} handle_probe;

/* Default math: CUBLAS_COMPUTE_32F stays strict FP32 (no TF32). The stream
 * is set before the workspace: cublasSetStream puts the default one back. */
static void create_handle(void *ctx) {
  handle_probe *p = ctx;
  p->cuda_error = cudaSetDevice(p->made.ordinal);
  if (p->cuda_error == cudaSuccess) {
    p->call = "cudaMalloc of its workspace";
    p->cuda_error = cudaMalloc(&p->made.workspace, p->bytes);
  }
  if (p->cuda_error != cudaSuccess) return;
  p->call = "cublasCreate";
  p->status = cublasCreate(&p->made.handle);
  if (p->status == CUBLAS_STATUS_SUCCESS) {
    p->call = "cublasSetMathMode";
    p->status = cublasSetMathMode(p->made.handle, CUBLAS_DEFAULT_MATH);
  }
  if (p->status == CUBLAS_STATUS_SUCCESS) {
    p->call = "cublasSetStream";
    p->status = cublasSetStream(p->made.handle, p->made.stream);
  }
  if (p->status == CUBLAS_STATUS_SUCCESS) {
    p->call = "cublasSetWorkspace";
    p->status = cublasSetWorkspace(p->made.handle, p->made.workspace, p->bytes);
  }
  if (p->status != CUBLAS_STATUS_SUCCESS) {
    if (p->made.handle != NULL) cublasDestroy(p->made.handle);
    (void)cudaFree(p->made.workspace);
    p->made.handle = NULL;
  }
}

/* The handle of (device, stream), or NULL. Under handles_lock. */
static cublasHandle_t handle_found(int ordinal, cudaStream_t stream) {
  for (size_t i = 0; i < handle_count; ++i)
    if (handles[i].ordinal == ordinal && handles[i].stream == stream) return handles[i].handle;
  return NULL;
}

/* Makes the handle of (device, stream) where there is none yet; a failure
 * is not remembered. */
static pg_status make_handle(const pg_device *device, cudaStream_t stream) {
  pthread_mutex_lock(&create_lock);
  pthread_rwlock_rdlock(&handles_lock);
  const int known = handle_found(device->ordinal, stream) != NULL;
  pthread_rwlock_unlock(&handles_lock);
  pg_status st = PG_OK;
  if (!known) {
    handle_probe probe;
    memset(&probe, 0, sizeof probe);
    probe.made.ordinal = device->ordinal;
    probe.made.stream = stream;
    probe.bytes = workspace_bytes(device);
    st = pg_on_probe_thread(create_handle, &probe);
    if (st == PG_OK && probe.cuda_error != cudaSuccess) {
      st = pg_status_from_cuda(probe.cuda_error);
      pg_set_error_detail("cuBLAS's handle for this stream: %s (%zu bytes): %s", probe.call,
                          probe.bytes, cudaGetErrorString(probe.cuda_error));
    } else if (st == PG_OK) {
      st = status_from_cublas(probe.status, probe.call);
    }
    if (st == PG_OK) {
      pthread_rwlock_wrlock(&handles_lock);
      if (handle_count == handle_room) {
        const size_t room = handle_room == 0 ? 8 : 2 * handle_room;
        stream_handle *grown = realloc(handles, room * sizeof *grown);
        if (grown != NULL) handles = grown, handle_room = room;
      }
      if (handle_count < handle_room) {
        handles[handle_count++] = probe.made;
      } else {
        st = PG_ERR_NO_MEMORY;
        pg_set_error_detail("no host memory for cuBLAS's handle of another stream");
      }
      pthread_rwlock_unlock(&handles_lock);
      if (st != PG_OK) {
        cublasDestroy(probe.made.handle);
        (void)cudaFree(probe.made.workspace);
      }
    }
  }
  pthread_mutex_unlock(&create_lock);
  return st;
}

pg_status pg_cublas_sgemm(const pg_device *device, const pg_layout_args *g, pg_precision precision,
                          cudaStream_t stream) {
  const cublasComputeType_t compute =
      precision == PG_PRECISION_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  pthread_rwlock_rdlock(&handles_lock);
  cublasHandle_t h = handle_found(device->ordinal, stream);
  if (h == NULL) {
    pthread_rwlock_unlock(&handles_lock);
    pg_status st = make_handle(device, stream);
    if (st != PG_OK) return st;
    pthread_rwlock_rdlock(&handles_lock);
    h = handle_found(device->ordinal, stream);
  }
  pg_status st = PG_OK;
  if (h == NULL) { /* pg_shutdown ran between the two */
    st = PG_ERR_CUBLAS;
    pg_set_error_detail("cuBLAS's handles were released (pg_shutdown) during the call");
  }
  /* What the caller's CUDA error slot held: a cuBLAS call that fails may
   * leave its runtime error there. */
  const cudaError_t pending = cudaPeekAtLastError();
  /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: B's
   * storage read column-major is B^T, so B goes first with op(B)'s op, A
   * second with op(A)'s. */
  const cublasOperation_t op_b = g->op_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = g->op_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (st == PG_OK && g->batch <= 1)
    st = status_from_cublas(cublasGemmEx(h, op_b, op_a, g->n, g->m, g->k, &g->alpha, g->b,
                                         CUDA_R_32F, g->ldb, g->a, CUDA_R_32F, g->lda, &g->beta,
                                         g->c, CUDA_R_32F, g->ldc, compute, CUBLAS_GEMM_DEFAULT),
                            "cublasGemmEx");
  else if (st == PG_OK)
    st = status_from_cublas(
        cublasGemmStridedBatchedEx(h, op_b, op_a, g->n, g->m, g->k, &g->alpha, g->b, CUDA_R_32F,
                                   g->ldb, g->stride_b, g->a, CUDA_R_32F, g->lda, g->stride_a,
                                   &g->beta, g->c, CUDA_R_32F, g->ldc, g->stride_c, g->batch,
                                   compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx");
  pthread_rwlock_unlock(&handles_lock);
  if (st != PG_OK && pending == cudaSuccess) {
    /* Kept for pg_last_cuda_error(), taken out of the caller's slot. */
    const cudaError_t left = cudaGetLastError();
    if (left != cudaSuccess) pg_restore_last_cuda_error(left);
  }
  return st;
}

/* On the probing thread, each handle's device current in turn. */
static void destroy_handles(void *ctx) {
  (void)ctx;
  for (size_t i = 0; i < handle_count; ++i) {
    if (cudaSetDevice(handles[i].ordinal) != cudaSuccess) continue;
    cublasDestroy(handles[i].handle);
    (void)cudaFree(handles[i].workspace);
  }
  handle_count = 0;
}

void pg_cublas_release(void) {
  pthread_mutex_lock(&create_lock);
  pthread_rwlock_wrlock(&handles_lock); /* no call is using a handle while they go */
  (void)pg_on_probe_thread(destroy_handles, NULL);
  pthread_rwlock_unlock(&handles_lock);
  pthread_mutex_unlock(&create_lock);
}

int pg_cublas_version(void) {
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)
    return PG_ERR_CUBLAS;
  return major * 10000 + minor * 100 + patch;
}
