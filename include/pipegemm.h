/*
 * pipegemm — software pipelining in FP32 GEMM, one variant per technique.
 *
 * Row-major C = alpha * A * B + beta * C on device pointers:
 *   A is M x K (lda >= K), B is K x N (ldb >= N), C is M x N (ldc >= N).
 * Every variant accepts any M, N, K >= 0. M or N = 0 does nothing; K = 0
 * computes C = beta * C. As in BLAS, C is not read when beta == 0.
 *
 * Errors are negative pg_status codes. The library never prints and never
 * exits; a rejected call leaves C untouched. Launches are asynchronous on the
 * given stream: an error raised while a kernel runs surfaces at the next
 * synchronising call, as with any CUDA library.
 */
#ifndef PIPEGEMM_H
#define PIPEGEMM_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One table of status codes: X(name, value, message). */
#define PG_STATUS_TABLE(X)                                                     \
  X(PG_OK, 0, "success")                                                       \
  X(PG_ERR_INVALID_ARG, -1, "invalid argument")                                \
  X(PG_ERR_UNKNOWN_VARIANT, -2, "unknown variant name")                        \
  X(PG_ERR_STAGES, -3, "stage count not allowed for this variant")             \
  X(PG_ERR_SMEM, -4, "shared memory needed exceeds what this GPU allows per block") \
  X(PG_ERR_ARCH, -5, "variant needs a newer GPU architecture")                 \
  X(PG_ERR_UNSUPPORTED, -6, "layout not supported by this variant")            \
  X(PG_ERR_NO_DEVICE, -7, "no usable CUDA device")                             \
  X(PG_ERR_CUDA, -8, "CUDA runtime error")                                     \
  X(PG_ERR_CUBLAS, -9, "cuBLAS error")                                         \
  X(PG_ERR_NO_MEMORY, -10, "out of memory")

typedef enum {
#define PG_STATUS_ENUM_(name, value, message) name = value,
  PG_STATUS_TABLE(PG_STATUS_ENUM_)
#undef PG_STATUS_ENUM_
} pg_status;

/* Static strings; never NULL ("unknown status" for a value not in the table). */
const char *pg_strerror(pg_status status);
const char *pg_status_name(pg_status status);

/* The CUDA error behind the last PG_ERR_CUDA / PG_ERR_NO_DEVICE /
 * PG_ERR_NO_MEMORY returned on this thread (cudaSuccess if none). */
cudaError_t pg_last_cuda_error(void);

/* Why the last call on this thread failed, in one line, where the status
 * alone does not say (e.g. which TMA layout rule a PG_ERR_UNSUPPORTED broke);
 * "" otherwise. Cleared by every pg_sgemm and pg_variant_accepts call. */
const char *pg_last_error_detail(void);

/* Description of one variant. Strings are static; the registry owns them. */
typedef struct {
  const char *name;      /* stable name, e.g. "cp_async" */
  const char *technique; /* one line: how global->shared latency is hidden */
  const char *seed;      /* where it comes from, e.g. "seed 000" */
  int min_cc;            /* minimum compute capability, major*10+minor */
  int min_stages;        /* allowed stage counts: min_stages..max_stages */
  int max_stages;
  int default_stages;
  int tile_m, tile_n, tile_k; /* block tile (0 for library-chosen tiles) */
  int threads;                /* threads per block (0 if not fixed) */
} pg_variant_info;

/* Registry: indexes 0..pg_variant_count()-1, in study order. */
int pg_variant_count(void);
const pg_variant_info *pg_variant_at(int index);           /* NULL if out of range */
const pg_variant_info *pg_variant_find(const char *name);  /* NULL if unknown */

/* Shared memory per block for `stages` (0 = default). PG_ERR_STAGES if the
 * stage count is not allowed. Does not touch the GPU. */
pg_status pg_variant_smem_bytes(const pg_variant_info *variant, int stages,
                                size_t *bytes);

/* Whether the current CUDA device can run the variant with `stages`
 * (0 = default): PG_OK, PG_ERR_ARCH, PG_ERR_SMEM, PG_ERR_STAGES or
 * PG_ERR_NO_DEVICE. */
pg_status pg_variant_supported(const pg_variant_info *variant, int stages);

/* What the kernel a variant launches at `stages` needs and gets on the
 * current device: threads per block, registers per thread, shared memory per
 * block (static + dynamic), and resident blocks per SM from the occupancy
 * calculator. PG_ERR_UNSUPPORTED for `cublas`, whose kernels are its own. */
typedef struct {
  int threads;
  int registers;
  size_t smem_bytes;
  int blocks_per_sm;
} pg_kernel_facts;
pg_status pg_variant_kernel_facts(const pg_variant_info *variant, int stages,
                                  pg_kernel_facts *facts);

/* C = alpha * A * B + beta * C with the named variant on the current device.
 * stages = 0 picks the variant's default. Arguments are checked before any
 * device work: negative sizes, ld smaller than the row width, NULL pointers
 * with work to do, and a bad stage count are rejected and C is left as it was. */
pg_status pg_sgemm(const char *variant, int stages, int m, int n, int k,
                   float alpha, const float *a, int lda, const float *b, int ldb,
                   float beta, float *c, int ldc, cudaStream_t stream);

/* Same, with a registry entry instead of a name. */
pg_status pg_sgemm_variant(const pg_variant_info *variant, int stages, int m,
                           int n, int k, float alpha, const float *a, int lda,
                           const float *b, int ldb, float beta, float *c,
                           int ldc, cudaStream_t stream);

/* Whether pg_sgemm_variant would run this call, without running it: PG_OK,
 * or the status it would return before any device work (PG_ERR_UNSUPPORTED
 * with pg_last_error_detail() saying which layout rule fails, PG_ERR_ARCH,
 * PG_ERR_STAGES, ...). Needs the device for everything past the arguments. */
pg_status pg_variant_accepts(const pg_variant_info *variant, int stages, int m, int n,
                             int k, const float *a, int lda, const float *b, int ldb,
                             const float *c, int ldc);

/* What the `auto` variant runs for this shape and layout on the current
 * device: the fastest of our variants that can run it, by the tuning table
 * (src/tuning.c): tma_ws on sm_90 when TMA accepts the layout and there is
 * at least one of its tiles per SM, tma for smaller problems, else the
 * tuned cp.async-family configuration.
 * Writes the variant and its stage count; PG_ERR_NO_DEVICE without a GPU. */
pg_status pg_auto_select(int m, int n, int k, const float *a, int lda,
                         const float *b, int ldb,
                         const pg_variant_info **variant, int *stages);

/* Releases the cuBLAS handles the `cublas` variant created (one per device).
 * Optional; safe to call more than once. */
void pg_shutdown(void);

#ifdef __cplusplus
}
#endif
#endif /* PIPEGEMM_H */
