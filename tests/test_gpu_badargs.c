/* The refusals of every entry point that takes a problem (tests/bad_calls.h:
 * pg_sgemm, the plans, pg_gemm's layouts and batches, the selectors'
 * questions, the column-major BLAS forms) on a real GPU: every bad argument
 * gets its status and leaves a device C bit-identical; M, N or the batch 0
 * does nothing; K = 0 with no A or B computes C = beta*C; a variant the GPU
 * cannot run answers PG_ERR_ARCH or PG_ERR_SMEM (when such a case exists on
 * this device) without touching C. Exit 0 pass, 1 fail, 77 without a GPU. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bad_calls.h"
#include "gpu_util.h"
#include "measure/harness.h"

#define M 37
#define N 45
#define K 19
#define LDA (K + 1)
#define LDB (N + 3)
#define LDC (N + 2)
#define C_FLOATS ((size_t)M * LDC)

static float *d_a, *d_b, *d_c;
static float host_c0[C_FLOATS], host_c[C_FLOATS];
static int failures, checks;


static pgt_call valid_call(const char *variant) {
  pgt_call c = {.variant = variant, .m = M, .n = N, .k = K, .alpha = 1.0f, .a = d_a, .lda = LDA,
                .b = d_b, .ldb = LDB, .beta = 0.5f, .c = d_c, .ldc = LDC,
                .op_a = PG_OP_N, .op_b = PG_OP_N, .batch = 1};
  return c;
}

static void reset_c(void) {
  PGT_CUDA(cudaMemcpy(d_c, host_c0, sizeof host_c0, cudaMemcpyHostToDevice));
}

/* Runs the call; its status must be `want` and device C must be unchanged. */
static void expect(const pgt_call *cl, const pgt_entry_point *entry, pg_status want,
                   const char *what, void *ctx) {
  (void)ctx;
  checks++;
  pg_status got = entry->run(cl, NULL);
  cudaError_t sync = cudaDeviceSynchronize();
  if (sync != cudaSuccess) {
    printf("FATAL: %s (variant %s): CUDA error after the call: %s\n", what,
           cl->variant ? cl->variant : "(null)", cudaGetErrorString(sync));
    exit(1);
  }
  PGT_CUDA(cudaMemcpy(host_c, d_c, sizeof host_c, cudaMemcpyDeviceToHost));
  long long diff = pgt_first_diff(host_c, host_c0, C_FLOATS);
  const char *detail_problem =
      want == PG_ERR_INVALID_ARG || want == PG_ERR_STAGES || want == PG_OK
          ? pgt_detail_problem(pgt_detail_word_for(entry, want, what), pg_last_error_detail())
          : NULL;
  if (got == want && diff < 0 && detail_problem == NULL) return;
  failures++;
  printf("FAIL %s through %s: variant=%s stages=%d m=%d n=%d k=%d alpha=%g beta=%g lda=%d ldb=%d ldc=%d "
         "a=%s b=%s c=%s op %d %d batch %d strides %lld %lld %lld\n",
         what, entry->name, cl->variant ? cl->variant : "(null)", cl->stages, cl->m, cl->n, cl->k,
         (double)cl->alpha, (double)cl->beta, cl->lda, cl->ldb, cl->ldc, cl->a ? "set" : "NULL",
         cl->b ? "set" : "NULL", cl->c ? "set" : "NULL", cl->op_a, cl->op_b, cl->batch,
         cl->stride_a, cl->stride_b, cl->stride_c);
  if (got != want) printf("  returned %s, want %s\n", pg_status_name(got), pg_status_name(want));
  if (detail_problem)
    printf("  %s: \"%s\"\n", detail_problem, pg_last_error_detail());
  if (diff >= 0) {
    printf("  C changed: first at row %lld column %lld (%.9g, was %.9g)\n", diff / LDC,
           diff % LDC, (double)host_c[diff], (double)host_c0[diff]);
    reset_c();
  }
}

/* The shared case list (bad_calls.h) on device buffers. */
static void bad_arguments(const pg_variant_info *v) {
  const pgt_call valid = valid_call(v->name);
  pgt_for_each_bad_call(v, &valid, expect, NULL);
}

/* K = 0 with NULL A and B: C = beta*C, exact for beta 2 and for beta 0
 * (where C, here all NaN, is not read). Padding stays. LDC is odd, so a
 * variant other than `auto` may decline with PG_ERR_UNSUPPORTED, C untouched. */
static void k_zero(const pg_variant_info *v) {
  static float before[C_FLOATS], want[C_FLOATS], got[C_FLOATS];
  const float betas[] = {2.0f, 0.0f};
  for (int bi = 0; bi < 2; bi++) {
    const float beta = betas[bi];
    for (size_t i = 0; i < C_FLOATS; i++) {
      const int in_window = (int)(i % LDC) < N;
      before[i] = beta == 0.0f && in_window ? NAN : host_c0[i];
      want[i] = !in_window ? host_c0[i] : beta == 0.0f ? 0.0f : beta * host_c0[i];
    }
    PGT_CUDA(cudaMemcpy(d_c, before, sizeof before, cudaMemcpyHostToDevice));
    checks++;
    pg_status st = pg_sgemm(v->name, 0, M, N, 0, 1.0f, NULL, 1, NULL, LDB, beta, d_c, LDC, NULL);
    PGT_CUDA(cudaDeviceSynchronize());
    PGT_CUDA(cudaMemcpy(got, d_c, sizeof got, cudaMemcpyDeviceToHost));
    const char *why = NULL;
    long long diff = -1;
    if (st == PG_ERR_UNSUPPORTED && v->kind != PG_KIND_SELECTOR) {
      diff = pgt_first_diff(got, before, C_FLOATS);
      if (diff < 0) continue;
      why = "declined but changed C";
      want[diff] = before[diff];
    } else {
      /* In the window by value (0.0f == -0.0f), in the padding by bits. */
      for (size_t i = 0; i < C_FLOATS && diff < 0; i++) {
        const int same = (int)(i % LDC) < N ? got[i] == want[i]
                                            : memcmp(&got[i], &want[i], sizeof(float)) == 0;
        if (!same) diff = (long long)i;
      }
      if (st == PG_OK && diff < 0) continue;
      why = st == PG_OK ? "wrong result" : "call failed";
    }
    failures++;
    printf("FAIL k 0 with NULL A and B: variant=%s m=%d n=%d beta=%g lda=1 ldb=%d ldc=%d: %s, "
           "returned %s",
           v->name, M, N, (double)beta, LDB, LDC, why, pg_status_name(st));
    if (diff >= 0)
      printf(", C[%lld][%lld] = %.9g, want %.9g", diff / LDC, diff % LDC, (double)got[diff],
             (double)want[diff]);
    printf("\n");
  }
  reset_c();
}

int main(void) {
  if (!pgt_have_device()) return PG_TEST_SKIP;
  pgh_device_info dev;
  PGT_PG(pgh_device_query(0, &dev));
  const int cc = dev.cc_major * 10 + dev.cc_minor;
  int optin = 0;
  PGT_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  printf("device: %s, sm_%d, opt-in shared memory per block %d bytes\n", dev.name, cc, optin);

  d_a = pgt_malloc_device((size_t)M * LDA * sizeof(float));
  d_b = pgt_malloc_device((size_t)K * LDB * sizeof(float));
  d_c = pgt_malloc_device(C_FLOATS * sizeof(float));
  /* Every byte defined (NaN) before the fills, padding included. */
  PGT_CUDA(cudaMemset(d_a, 0xFF, (size_t)M * LDA * sizeof(float)));
  PGT_CUDA(cudaMemset(d_b, 0xFF, (size_t)K * LDB * sizeof(float)));
  PGT_CUDA(cudaMemset(d_c, 0xFF, C_FLOATS * sizeof(float)));
  PGT_PG(pgh_fill_uniform(d_a, M, K, LDA, 1, NULL));
  PGT_PG(pgh_fill_uniform(d_b, K, N, LDB, 2, NULL));
  PGT_PG(pgh_fill_uniform(d_c, M, N, LDC, 3, NULL));
  PGT_CUDA(cudaDeviceSynchronize());
  PGT_CUDA(cudaMemcpy(host_c0, d_c, sizeof host_c0, cudaMemcpyDeviceToHost));

  /* Names the registry does not know. */
  pgt_call c = valid_call("no_such_variant");
  expect(&c, &pgt_entry_points[0], PG_ERR_UNKNOWN_VARIANT, "unknown variant", NULL);
  c = valid_call("");
  expect(&c, &pgt_entry_points[0], PG_ERR_UNKNOWN_VARIANT, "empty variant name", NULL);
  checks++;
  pg_status st = pg_sgemm(NULL, 0, M, N, K, 1.0f, d_a, LDA, d_b, LDB, 0.5f, d_c, LDC, NULL);
  if (st != PG_ERR_UNKNOWN_VARIANT && st != PG_ERR_INVALID_ARG) {
    failures++;
    printf("FAIL NULL variant name: returned %s\n", pg_status_name(st));
  }

  int arch_cases = 0, smem_cases = 0;
  size_t largest_need = 0;
  const char *largest_name = "";
  int largest_stages = 0;
  for (int i = 0; i < pg_variant_count(); i++) {
    const pg_variant_info *v = pg_variant_at(i);
    pg_status sup = pg_variant_supported(v, 0);
    if (sup == PG_ERR_ARCH) {
      /* Never an empty kernel that "passes": a valid call must say ARCH. */
      /* On a new enough GPU only a build without a loadable image says so. */
      arch_cases++;
      c = valid_call(v->name);
      expect(&c, &pgt_entry_points[0], PG_ERR_ARCH, "variant the GPU cannot run", NULL);
      const cudaError_t behind = pg_last_cuda_error();
      if (v->min_cc <= cc && behind != cudaErrorNoKernelImageForDevice &&
          behind != cudaErrorInvalidDeviceFunction) {
        failures++;
        printf("FAIL %s: PG_ERR_ARCH on sm_%d (min_cc %d) without a missing kernel image "
               "behind it (CUDA: %s)\n",
               v->name, cc, v->min_cc, cudaGetErrorString(behind));
      }
      if (v->min_cc <= cc) printf("note: %s has no kernel image for sm_%d in this build\n", v->name, cc);
      continue;
    }
    if (v->min_cc > cc) {
      failures++;
      printf("FAIL %s: min_cc %d > sm_%d but pg_variant_supported returned %s\n", v->name,
             v->min_cc, cc, pg_status_name(sup));
      continue;
    }
    for (int s = v->min_stages; s <= v->max_stages; s++) {
      size_t bytes = 0;
      if (pg_variant_smem_bytes(v, s, &bytes) != PG_OK) {
        failures++;
        printf("FAIL %s: pg_variant_smem_bytes refused allowed stages %d\n", v->name, s);
        continue;
      }
      if (bytes > largest_need) {
        largest_need = bytes;
        largest_name = v->name;
        largest_stages = s;
      }
      pg_status want = bytes > (size_t)optin ? PG_ERR_SMEM : PG_OK;
      pg_status got = pg_variant_supported(v, s);
      if (got != want) {
        failures++;
        printf("FAIL %s stages %d: needs %zu bytes of %d, pg_variant_supported returned %s, want %s\n",
               v->name, s, bytes, optin, pg_status_name(got), pg_status_name(want));
      }
      if (want == PG_ERR_SMEM) {
        smem_cases++;
        c = valid_call(v->name);
        c.stages = s;
        expect(&c, &pgt_entry_points[0], PG_ERR_SMEM, "stages that do not fit shared memory", NULL);
      }
    }
    if (sup != PG_OK) continue; /* default stages do not fit: reported above */
    bad_arguments(v);
    k_zero(v);
    /* pg_sgemm_variant refuses the same way as pg_sgemm. */
    checks++;
    st = pg_sgemm_variant(v, 0, -1, N, K, 1.0f, d_a, LDA, d_b, LDB, 0.5f, d_c, LDC, NULL);
    if (st != PG_ERR_INVALID_ARG) {
      failures++;
      printf("FAIL pg_sgemm_variant(%s) negative m: returned %s\n", v->name, pg_status_name(st));
    }
  }
  checks++;
  st = pg_sgemm_variant(NULL, 0, M, N, K, 1.0f, d_a, LDA, d_b, LDB, 0.5f, d_c, LDC, NULL);
  if (st != PG_ERR_INVALID_ARG && st != PG_ERR_UNKNOWN_VARIANT) {
    failures++;
    printf("FAIL pg_sgemm_variant(NULL): returned %s\n", pg_status_name(st));
  }
  PGT_CUDA(cudaMemcpy(host_c, d_c, sizeof host_c, cudaMemcpyDeviceToHost));
  if (pgt_first_diff(host_c, host_c0, C_FLOATS) >= 0) {
    failures++;
    printf("FAIL: a rejected pg_sgemm_variant call changed C\n");
  }

  if (arch_cases == 0) printf("note: PG_ERR_ARCH does not arise: every variant runs on sm_%d\n", cc);
  if (smem_cases == 0)
    printf("note: PG_ERR_SMEM does not arise on this device: the largest need is %zu bytes "
           "(%s, %d stages), the opt-in limit %d bytes\n",
           largest_need, largest_name, largest_stages, optin);

  PGT_CUDA(cudaFree(d_a));
  PGT_CUDA(cudaFree(d_b));
  PGT_CUDA(cudaFree(d_c));
  pg_shutdown();
  printf("test_gpu_badargs: %d checks, %d failed (%d PG_ERR_ARCH cases, %d PG_ERR_SMEM cases)\n",
         checks, failures, arch_cases, smem_cases);
  return failures == 0 ? 0 : 1;
}
