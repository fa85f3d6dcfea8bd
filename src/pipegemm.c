/* pg_sgemm: argument checks, device checks, dispatch through the registry. */
#include <stdint.h>
#include <string.h>

#include "internal.h"

/* Largest grid extent in y; the seed-000 family puts M tiles on y. */
#define PG_MAX_GRID_Y 65535

static int max_int(int a, int b) { return a > b ? a : b; }

static int is_16_byte_aligned(const void *p) {
  return ((uintptr_t)p & 15u) == 0;
}

/* Everything that can be decided without the GPU. Order matters only for
 * which error a call with several faults reports; all are caught. */
static pg_status check_arguments(const pg_variant_info *variant, int *stages,
                                 int m, int n, int k, const float *a, int lda,
                                 const float *b, int ldb, const float *c,
                                 int ldc) {
  if (variant == NULL) return PG_ERR_UNKNOWN_VARIANT;
  if (*stages == 0) *stages = variant->default_stages;
  if (*stages < variant->min_stages || *stages > variant->max_stages)
    return PG_ERR_STAGES;
  if (m < 0 || n < 0 || k < 0) return PG_ERR_INVALID_ARG;
  /* The BLAS rule for a row-major matrix: ld >= max(1, row width). */
  if (lda < max_int(1, k) || ldb < max_int(1, n) || ldc < max_int(1, n))
    return PG_ERR_INVALID_ARG;
  if (m == 0 || n == 0) return PG_OK;
  if (c == NULL) return PG_ERR_INVALID_ARG;
  if (k > 0 && (a == NULL || b == NULL)) return PG_ERR_INVALID_ARG;
  return PG_OK;
}

pg_status pg_variant_supported(const pg_variant_info *variant, int stages) {
  size_t smem = 0;
  pg_status st = pg_variant_smem_bytes(variant, stages, &smem);
  if (st != PG_OK) return st;

  int device = 0, major = 0, minor = 0, smem_optin = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&smem_optin,
                                 cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (err != cudaSuccess) {
    st = pg_status_from_cuda(err);
    /* Any failure to reach a device here means there is none to use. */
    return st == PG_ERR_CUDA ? PG_ERR_NO_DEVICE : st;
  }
  if (major * 10 + minor < variant->min_cc) return PG_ERR_ARCH;
  if (smem > (size_t)smem_optin) return PG_ERR_SMEM;
  return PG_OK;
}

pg_status pg_sgemm_variant(const pg_variant_info *variant, int stages, int m,
                           int n, int k, float alpha, const float *a, int lda,
                           const float *b, int ldb, float beta, float *c,
                           int ldc, cudaStream_t stream) {
  const pg_variant_entry *entry = pg_entry_of(variant);
  if (variant != NULL && entry == NULL) return PG_ERR_INVALID_ARG;
  pg_status st =
      check_arguments(variant, &stages, m, n, k, a, lda, b, ldb, c, ldc);
  if (st != PG_OK || m == 0 || n == 0) return st;

  st = pg_variant_supported(variant, stages);
  if (st != PG_OK) return st;

  pg_gemm_args args;
  memset(&args, 0, sizeof args);
  args.producer_warps = PG_WS_PRODUCER_WARPS;
  args.m = m;
  args.n = n;
  args.k = k;
  args.alpha = alpha;
  args.beta = beta;
  args.a = a;
  args.b = b;
  args.c = c;
  args.lda = lda;
  args.ldb = ldb;
  args.ldc = ldc;
  args.vec_a = (lda % 4 == 0) && is_16_byte_aligned(a);
  args.vec_b = (ldb % 4 == 0) && is_16_byte_aligned(b);
  args.stages = stages;
  args.smem_bytes = entry->smem_bytes(stages);
  args.stream = stream;

  if (entry->launch == NULL) return pg_cublas_sgemm(&args);
  if (variant->tile_m > 0 && (m + variant->tile_m - 1) / variant->tile_m > PG_MAX_GRID_Y)
    return PG_ERR_UNSUPPORTED;
  return pg_status_from_cuda(entry->launch(&args));
}

pg_status pg_sgemm(const char *variant, int stages, int m, int n, int k,
                   float alpha, const float *a, int lda, const float *b,
                   int ldb, float beta, float *c, int ldc,
                   cudaStream_t stream) {
  return pg_sgemm_variant(pg_variant_find(variant), stages, m, n, k, alpha, a,
                          lda, b, ldb, beta, c, ldc, stream);
}

pg_status pg_variant_kernel_facts(const pg_variant_info *variant, int stages,
                                  pg_kernel_facts *facts) {
  const pg_variant_entry *entry = pg_entry_of(variant);
  if (entry == NULL || facts == NULL) return PG_ERR_INVALID_ARG;
  if (entry->launch == NULL) return PG_ERR_UNSUPPORTED;
  pg_status st = pg_variant_supported(variant, stages);
  if (st != PG_OK) return st;
  if (stages == 0) stages = variant->default_stages;
  pg_gemm_args args;
  memset(&args, 0, sizeof args);
  args.producer_warps = PG_WS_PRODUCER_WARPS;
  args.stages = stages;
  args.smem_bytes = entry->smem_bytes(stages);
  args.query = facts;
  return pg_status_from_cuda(entry->launch(&args));
}
