/* pg_sgemm: argument checks, device checks, dispatch through the registry. */
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "kernels/tma_ws.h"
#include "tma.h"
#include "tuning.h"

/* Largest grid extent in y; the seed-000 family puts M tiles on y. */
#define PG_MAX_GRID_Y 65535
/* Room for a variant's reason to reject a layout. */
#define PG_WHY_SIZE 200

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

/* The current device's compute capability (major*10 + minor), SM count and
 * opt-in shared memory per block. Any failure to reach a device means there
 * is none to use. */
static pg_status query_device(int *cc, int *sms, int *smem_optin) {
  int device = 0, major = 0, minor = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, device);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (err != cudaSuccess) {
    pg_status st = pg_status_from_cuda(err);
    return st == PG_ERR_CUDA ? PG_ERR_NO_DEVICE : st;
  }
  *cc = major * 10 + minor;
  return PG_OK;
}

/* pg_variant_supported, also telling the device's cc and SM count. */
static pg_status supported_on_device(const pg_variant_info *variant, int stages, int *cc,
                                     int *sms) {
  size_t smem = 0;
  pg_status st = pg_variant_smem_bytes(variant, stages, &smem);
  if (st != PG_OK) return st;
  int smem_optin = 0;
  st = query_device(cc, sms, &smem_optin);
  if (st != PG_OK) return st;
  if (*cc < variant->min_cc) return PG_ERR_ARCH;
  if (smem > (size_t)smem_optin) return PG_ERR_SMEM;
  return PG_OK;
}

pg_status pg_variant_supported(const pg_variant_info *variant, int stages) {
  int cc = 0, sms = 0;
  return supported_on_device(variant, stages, &cc, &sms);
}

static int is_auto(const pg_variant_info *variant) {
  return variant != NULL && strcmp(variant->name, "auto") == 0;
}

pg_status pg_auto_select(int m, int n, int k, const float *a, int lda,
                         const float *b, int ldb,
                         const pg_variant_info **variant, int *stages) {
  if (variant == NULL || stages == NULL) return PG_ERR_INVALID_ARG;
  int cc = 0, sms = 0, smem_optin = 0;
  pg_status st = query_device(&cc, &sms, &smem_optin);
  if (st != PG_OK) return st;

  pg_gemm_args probe;
  memset(&probe, 0, sizeof probe);
  probe.m = m;
  probe.n = n;
  probe.k = k;
  probe.a = a;
  probe.b = b;
  probe.lda = lda;
  probe.ldb = ldb;
  char why[8];
  const pg_tuning tuning = pg_tuning_for(cc, sms);
  const long long tiles = (((long long)m + TWS_TILE_M - 1) / TWS_TILE_M) *
                          (((long long)n + TWS_TILE_N - 1) / TWS_TILE_N);
  const pg_variant_info *flagship = pg_variant_find("tma_ws");
  const pg_variant_info *small = pg_variant_find(tuning.small_variant);
  /* A kernel image for this GPU, too: tma_ws is built for sm_90a only. */
  pg_kernel_facts facts;
  const int tma_ok = flagship != NULL && pg_variant_kernel_facts(flagship, 0, &facts) == PG_OK &&
                     pg_tma_check(&probe, why, sizeof why) == PG_OK;
  if (tma_ok && tiles >= (long long)tuning.auto_tma_min_tiles_per_sm * sms) {
    *variant = flagship;
    *stages = flagship->default_stages;
    return PG_OK;
  }
  if (tma_ok && small != NULL &&
      pg_variant_kernel_facts(small, tuning.small_stages, &facts) == PG_OK) {
    *variant = small;
    *stages = tuning.small_stages;
    return PG_OK;
  }
  const pg_variant_info *fallback = pg_variant_find(tuning.fallback_variant);
  if (fallback != NULL && pg_variant_supported(fallback, tuning.fallback_stages) == PG_OK) {
    *variant = fallback;
    *stages = tuning.fallback_stages;
    return PG_OK;
  }
  /* Below sm_80: the one kernel family that needs no cp.async. */
  *variant = pg_variant_find("tiled32_db");
  *stages = (*variant)->default_stages;
  return pg_variant_supported(*variant, *stages);
}

/* Everything pg_sgemm_variant decides before it launches: the arguments,
 * the device, `auto`'s choice, the variant's layout rules. On PG_OK with
 * *run_it set, *args is ready for (*entry_out)->launch; with it clear there
 * is nothing to do (M or N is 0). Sets pg_last_error_detail() when it can
 * say more than the status. */
static pg_status prepare(const pg_variant_info *variant, int stages, int m, int n, int k,
                         float alpha, const float *a, int lda, const float *b, int ldb,
                         float beta, float *c, int ldc, cudaStream_t stream,
                         const pg_variant_entry **entry_out, pg_gemm_args *args, int *run_it) {
  pg_set_error_detail("");
  *run_it = 0;
  const pg_variant_entry *entry = pg_entry_of(variant);
  if (variant != NULL && entry == NULL) return PG_ERR_INVALID_ARG;
  pg_status st =
      check_arguments(variant, &stages, m, n, k, a, lda, b, ldb, c, ldc);
  if (st != PG_OK || m == 0 || n == 0) return st;

  if (is_auto(variant)) {
    const pg_variant_info *chosen = NULL;
    int chosen_stages = 0;
    st = pg_auto_select(m, n, k, a, lda, b, ldb, &chosen, &chosen_stages);
    if (st != PG_OK) return st;
    return prepare(chosen, chosen_stages, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                   stream, entry_out, args, run_it);
  }

  int cc = 0, sms = 0;
  st = supported_on_device(variant, stages, &cc, &sms);
  if (st != PG_OK) return st;

  memset(args, 0, sizeof *args);
  args->cc = cc;
  args->sm_count = sms;
  args->producer_warps = PG_WS_PRODUCER_WARPS;
  args->m = m;
  args->n = n;
  args->k = k;
  args->alpha = alpha;
  args->beta = beta;
  args->a = a;
  args->b = b;
  args->c = c;
  args->lda = lda;
  args->ldb = ldb;
  args->ldc = ldc;
  args->vec_a = (lda % 4 == 0) && is_16_byte_aligned(a);
  args->vec_b = (ldb % 4 == 0) && is_16_byte_aligned(b);
  args->stages = stages;
  args->smem_bytes = entry->smem_bytes(stages);
  args->stream = stream;

  if (entry->launch != NULL && entry->grid_y_tiles &&
      (m + variant->tile_m - 1) / variant->tile_m > PG_MAX_GRID_Y) {
    pg_set_error_detail("M needs more than 65535 tile rows, the grid's y limit");
    return PG_ERR_UNSUPPORTED;
  }
  if (entry->check != NULL) {
    char why[PG_WHY_SIZE];
    why[0] = '\0';
    st = entry->check(args, why, sizeof why);
    if (st != PG_OK) {
      pg_set_error_detail(why);
      return st;
    }
  }
  *entry_out = entry;
  *run_it = 1;
  return PG_OK;
}

pg_status pg_sgemm_variant(const pg_variant_info *variant, int stages, int m,
                           int n, int k, float alpha, const float *a, int lda,
                           const float *b, int ldb, float beta, float *c,
                           int ldc, cudaStream_t stream) {
  const pg_variant_entry *entry = NULL;
  pg_gemm_args args;
  int run_it = 0;
  pg_status st = prepare(variant, stages, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                         stream, &entry, &args, &run_it);
  if (st != PG_OK || !run_it) return st;
  if (entry->launch == NULL) return pg_cublas_sgemm(&args);
  return pg_status_from_cuda(entry->launch(&args));
}

pg_status pg_variant_accepts(const pg_variant_info *variant, int stages, int m, int n,
                             int k, const float *a, int lda, const float *b, int ldb,
                             const float *c, int ldc) {
  const pg_variant_entry *entry = NULL;
  pg_gemm_args args;
  int run_it = 0;
  return prepare(variant, stages, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, (float *)c, ldc, NULL,
                 &entry, &args, &run_it);
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
  int cc = 0, sms = 0;
  pg_status st = supported_on_device(variant, stages, &cc, &sms);
  if (st != PG_OK) return st;
  if (stages == 0) stages = variant->default_stages;
  pg_gemm_args args;
  memset(&args, 0, sizeof args);
  args.cc = cc;
  args.sm_count = sms;
  args.producer_warps = PG_WS_PRODUCER_WARPS;
  args.stages = stages;
  args.smem_bytes = entry->smem_bytes(stages);
  args.query = facts;
  return pg_status_from_cuda(entry->launch(&args));
}
