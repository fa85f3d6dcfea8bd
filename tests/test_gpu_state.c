/* CUDA's per-thread error state around pipegemm calls, and plans.
 *
 * Error state: a call that returns PG_OK leaves cudaPeekAtLastError() as it
 * found it, whether it was clear or held an error the caller had pending
 * (each entry's first call, when the library probes the device, included);
 * a call the GPU cannot run (PG_ERR_ARCH) names the CUDA error behind it.
 * Plans: pg_plan_create / describe / launch give the same C as pg_sgemm, bit
 * for bit for our kernels, and refuse what pg_sgemm refuses.
 * PG_TEST_VARIANTS / PG_TEST_SKIP_VARIANTS choose variants (gpu_util.h).
 * Exit 0 pass, 1 fail, 77 without a GPU. */
#include <stdio.h>
#include <string.h>

#include "gpu_util.h"
#include "introspect.h"
#include "kernels/tma_ws.h" /* TWS_FORMS */
#include "measure/harness.h"

/* A tile form's name, from its line of TWS_FORMS. */
#define FORM_NAME(form, ...) #form,

#define M 300
#define N 200
#define K 40
#define C_FLOATS ((size_t)M * N)

static float *d_a, *d_b, *d_c;
static double *d_ref, *d_scale;
static float host_sgemm[C_FLOATS], host_plan[C_FLOATS];
static int failures, checks;
static int device_cc; /* major*10 + minor */

/* A pending error the caller made: any failed runtime call leaves one. */
static cudaError_t make_pending_error(void) {
  struct cudaDeviceProp prop;
  cudaError_t err = cudaGetDeviceProperties(&prop, -1);
  if (err == cudaSuccess || cudaPeekAtLastError() != err) {
    printf("FATAL: could not leave a pending CUDA error (got %s)\n", cudaGetErrorString(err));
    exit(1);
  }
  return err;
}

static void fail(const char *variant, const char *what) {
  failures++;
  printf("FAIL %s: %s\n", variant, what);
}

static pg_status call(const pg_variant_info *v, int stages) {
  return pg_sgemm_variant(v, stages, M, N, K, 1.0f, d_a, K, d_b, N, 0.0f, d_c, N, NULL);
}

/* C right against the reference. */
static int c_is_right(pg_precision precision) {
  pgh_check check;
  PGT_PG(pgh_compare(M, N, K, d_c, N, d_ref, d_scale, precision, &check, NULL));
  return check.failed == 0;
}

static void error_state(const pg_variant_info *v) {
  char what[256];
  /* First call of this entry, with an error pending: still pending after. */
  const cudaError_t pending = make_pending_error();
  checks++;
  pg_status st = call(v, 0);
  cudaError_t after = cudaPeekAtLastError();
  if (st == PG_ERR_ARCH || st == PG_ERR_SMEM) {
    /* Not for this GPU: the refusal says why, the caller's error stays. */
    /* A new enough GPU without a loadable image: the CUDA error says so. */
    const cudaError_t behind = pg_last_cuda_error();
    if (st == PG_ERR_ARCH && v->min_cc <= device_cc && behind != cudaErrorNoKernelImageForDevice &&
        behind != cudaErrorInvalidDeviceFunction)
      fail(v->name, "PG_ERR_ARCH on a new enough GPU without the CUDA error behind it");
    if (pg_last_error_detail()[0] == '\0') fail(v->name, "refused without a detail");
    if (after != pending) {
      snprintf(what, sizeof what, "a refused call replaced the pending error with %s",
               cudaGetErrorString(after));
      fail(v->name, what);
    }
    printf("%-18s not on this GPU: %s (%s)\n", v->name, pg_status_name(st), pg_last_error_detail());
    (void)cudaGetLastError();
    return;
  }
  if (st != PG_OK) {
    snprintf(what, sizeof what, "returned %s (%s)", pg_status_name(st), pg_last_error_detail());
    fail(v->name, what);
    (void)cudaGetLastError();
    return;
  }
  if (after != pending) {
    snprintf(what, sizeof what, "PG_OK, but the caller's pending error became %s",
             cudaGetErrorString(after));
    fail(v->name, what);
  }
  (void)cudaGetLastError();
  PGT_CUDA(cudaDeviceSynchronize());
  if (!c_is_right(v->precision)) fail(v->name, "wrong C after the first call");

  /* Then every stage count it takes, with nothing pending: nothing after. */
  const int low = v->min_stages > 0 ? v->min_stages : 0, high = v->max_stages;
  for (int s = low; s <= high; ++s) {
    checks++;
    st = call(v, s);
    after = cudaPeekAtLastError();
    if (st == PG_ERR_SMEM) continue;
    if (st != PG_OK) {
      snprintf(what, sizeof what, "stages %d: returned %s (%s)", s, pg_status_name(st),
               pg_last_error_detail());
      fail(v->name, what);
    } else if (after != cudaSuccess) {
      snprintf(what, sizeof what, "stages %d: PG_OK, but left a CUDA error behind: %s", s,
               cudaGetErrorString(after));
      fail(v->name, what);
    } else if (pg_last_error_detail()[0] != '\0') {
      snprintf(what, sizeof what, "stages %d: PG_OK, but a detail \"%s\"", s,
               pg_last_error_detail());
      fail(v->name, what);
    }
    (void)cudaGetLastError();
  }
  PGT_CUDA(cudaDeviceSynchronize());
}

/* A plan gives what pg_sgemm gives. */
static void plans(const pg_variant_info *v) {
  char what[256];
  if (pg_variant_supported(v, 0) != PG_OK) return;
  checks++;
  PGT_PG(pgh_poison(d_c, M, N, N, NULL));
  PGT_PG(call(v, 0));
  PGT_CUDA(cudaMemcpy(host_sgemm, d_c, sizeof host_sgemm, cudaMemcpyDeviceToHost));

  pg_plan *plan = NULL;
  pg_status st = pg_plan_create(&plan, v, 0, M, N, K, 1.0f, d_a, K, d_b, N, 0.0f, d_c, N);
  if (st != PG_OK || plan == NULL) {
    snprintf(what, sizeof what, "pg_plan_create returned %s (%s)", pg_status_name(st),
             pg_last_error_detail());
    fail(v->name, what);
    return;
  }
  pg_plan_info info = PG_PLAN_INFO_INIT;
  PGT_PG(pg_plan_describe(plan, &info));
  /* One kernel, or two to four with a workspace between them (split-K,
   * stream-K; a first kernel; wgmma_fp16x3's split, its kernel and one for
   * its wide tiles). */
  if (info.variant == NULL ||
      (info.workspace_bytes > 0 ? info.launches < 2 || info.launches > 4
                                : info.launches != 1) ||
      (v->kind == PG_KIND_SELECTOR) != (info.variant != v) ||
      info.variant->kind == PG_KIND_SELECTOR) {
    fail(v->name, "pg_plan_describe: wrong entry or launch count");
  } else if (info.variant->kind == PG_KIND_KERNEL &&
             (info.grid_x == 0 || info.grid_y == 0 || info.kernel.threads != info.variant->threads ||
              info.kernel.registers <= 0 || info.kernel.blocks_per_sm <= 0 ||
              info.stages < info.variant->min_stages || info.stages > info.variant->max_stages)) {
    snprintf(what, sizeof what,
             "pg_plan_describe: grid %ux%u, %d threads (registry %d), %d registers, %d blocks/SM, "
             "stages %d",
             info.grid_x, info.grid_y, info.kernel.threads, info.variant->threads,
             info.kernel.registers, info.kernel.blocks_per_sm, info.stages);
    fail(v->name, what);
  }
  for (int launch = 0; launch < 2; ++launch) {
    PGT_PG(pgh_poison(d_c, M, N, N, NULL));
    PGT_PG(pg_plan_launch(plan, NULL));
    PGT_CUDA(cudaDeviceSynchronize());
    if (!c_is_right(v->precision)) fail(v->name, "wrong C from a plan");
    PGT_CUDA(cudaMemcpy(host_plan, d_c, sizeof host_plan, cudaMemcpyDeviceToHost));
    /* Our kernels sum in a fixed order: the same bits as pg_sgemm's. */
    if (info.variant != NULL && info.variant->kind == PG_KIND_KERNEL &&
        pgt_first_diff(host_plan, host_sgemm, C_FLOATS) >= 0)
      fail(v->name, "a plan's C differs in bits from pg_sgemm's");
  }
  pg_plan_destroy(plan);

  /* Nothing to do: a plan that launches nothing. */
  plan = NULL;
  PGT_PG(pg_plan_create(&plan, v, 0, 0, N, K, 1.0f, NULL, K, NULL, N, 0.0f, NULL, N));
  PGT_PG(pg_plan_describe(plan, &info));
  if (info.launches != 0 || info.variant != NULL) fail(v->name, "an M = 0 plan launches");
  PGT_PG(pg_plan_launch(plan, NULL));
  pg_plan_destroy(plan);

  /* Refused like pg_sgemm, and no plan. */
  plan = (pg_plan *)&plan;
  st = pg_plan_create(&plan, v, 0, M, N, K, 1.0f, d_a, K - 1, d_b, N, 0.0f, d_c, N);
  if (st != PG_ERR_INVALID_ARG || plan != NULL || strstr(pg_last_error_detail(), "lda") == NULL)
    fail(v->name, "pg_plan_create with lda < k: wanted PG_ERR_INVALID_ARG, no plan, a detail");
}

/* A shape that splits K: five runs, the same bits, and the plan says it split. */
#define SPLIT_M 256
#define SPLIT_N 256
#define SPLIT_K 8192
#define SPLIT_RUNS 5

static void split_is_deterministic(const char *name) {
  const pg_variant_info *v = pg_variant_find(name);
  if (v == NULL || pg_variant_supported(v, 0) != PG_OK) return;
  const size_t c_floats = (size_t)SPLIT_M * SPLIT_N;
  float *a = pgt_malloc_device((size_t)SPLIT_M * SPLIT_K * sizeof(float));
  float *b = pgt_malloc_device((size_t)SPLIT_K * SPLIT_N * sizeof(float));
  float *c = pgt_malloc_device(c_floats * sizeof(float));
  float *first = pgt_malloc_host(c_floats * sizeof(float));
  float *again = pgt_malloc_host(c_floats * sizeof(float));
  PGT_PG(pgh_fill_uniform(a, SPLIT_M, SPLIT_K, SPLIT_K, 31, NULL));
  PGT_PG(pgh_fill_uniform(b, SPLIT_K, SPLIT_N, SPLIT_N, 32, NULL));
  checks++;
  pg_plan *plan = NULL;
  PGT_PG(pg_plan_create(&plan, v, 0, SPLIT_M, SPLIT_N, SPLIT_K, 1.0f, a, SPLIT_K, b, SPLIT_N,
                        0.0f, c, SPLIT_N));
  pg_plan_info info = PG_PLAN_INFO_INIT;
  PGT_PG(pg_plan_describe(plan, &info));
  printf("%s at %dx%dx%d: %s, %d splits, %zu bytes of workspace\n", name, SPLIT_M, SPLIT_N,
         SPLIT_K, info.variant->name, info.splits, info.workspace_bytes);
  /* The forms that split K where the tiles leave SMs idle must split here
   * (at most 32 tiles of the tma_ws forms, 8 of the large ones), whether
   * called by name or chosen by auto; whatever auto runs, its runs must
   * agree in bits all the same. */
  static const char *const splitting[] = {TWS_FORMS(FORM_NAME) "wgmma_3xtf32"};
  int must_split = 0;
  for (size_t i = 0; i < sizeof splitting / sizeof splitting[0]; ++i)
    if (info.variant == pg_variant_find(splitting[i])) must_split = 1;
  if (must_split && (info.splits < 2 || info.workspace_bytes == 0 || info.launches < 2))
    fail(name, "a shape with 4 tiles and K = 8192 did not split");
  pg_plan_destroy(plan);
  for (int run = 0; run < SPLIT_RUNS; ++run) {
    PGT_PG(pgh_poison(c, SPLIT_M, SPLIT_N, SPLIT_N, NULL));
    PGT_PG(pg_sgemm_variant(v, 0, SPLIT_M, SPLIT_N, SPLIT_K, 1.0f, a, SPLIT_K, b, SPLIT_N, 0.0f,
                            c, SPLIT_N, NULL));
    PGT_CUDA(cudaDeviceSynchronize());
    PGT_CUDA(cudaMemcpy(run == 0 ? first : again, c, c_floats * sizeof(float),
                        cudaMemcpyDeviceToHost));
    if (run > 0 && pgt_first_diff(first, again, c_floats) >= 0) {
      fail(name, "two runs of the same split call differ in bits");
      break;
    }
  }
  PGT_CUDA(cudaFree(a));
  PGT_CUDA(cudaFree(b));
  PGT_CUDA(cudaFree(c));
  free(first);
  free(again);
}

/* A plan launched from a thread whose current device is another: the
 * library makes the plan's device current for the launch and puts the
 * thread's back (a second GPU is needed; with one, said and passed). */
static void plan_on_another_device(void) {
  int count = 0;
  PGT_CUDA(cudaGetDeviceCount(&count));
  if (count < 2) {
    printf("plan on another device: one GPU here, not checked\n");
    return;
  }
  PGT_CUDA(cudaSetDevice(0));
  pg_plan *plan = NULL;
  PGT_PG(pg_plan_create(&plan, pg_variant_find("cp_async"), 0, M, N, K, 1.0f, d_a, K, d_b, N,
                        0.0f, d_c, N));
  PGT_PG(pgh_poison(d_c, M, N, N, NULL));
  PGT_CUDA(cudaDeviceSynchronize());
  PGT_CUDA(cudaSetDevice(1));
  checks++;
  const pg_status st = pg_plan_launch(plan, NULL);
  int current = -1;
  PGT_CUDA(cudaGetDevice(&current));
  if (st != PG_OK) fail("cp_async", "a plan launched with another device current failed");
  if (current != 1) fail("cp_async", "the launch left another device current");
  PGT_CUDA(cudaSetDevice(0));
  PGT_CUDA(cudaDeviceSynchronize());
  if (st == PG_OK && !c_is_right(PG_PRECISION_STRICT))
    fail("cp_async", "a plan launched with another device current computed a wrong C");
  pg_plan_destroy(plan);
}

/* Plans every entry at every stage count it takes over shapes that reach
 * each of its forms (skinny, split, copied operands, C = beta C), twice:
 * the second round must ask the GPU nothing new, however many kernels the
 * first one met (the library keeps an answer per (device, kernel) for any
 * number of them). */
static void kernel_cache(void) {
  static const struct {
    int m, n, k, offset;
    float alpha;
  } shapes[] = {{1, 1, 1, 0, 1.0f},           {7, 13, 5, 0, 1.0f},       {M, N, K, 0, 1.0f},
                {M, N, K, 1, 1.0f},           {M, N, K, 0, 0.0f},        {1, 4096, 4096, 0, 1.0f},
                {6, 4096, 4096, 0, 1.0f},     {8, 2000, 8192, 0, 1.0f},  {128, 4096, 4096, 0, 1.0f},
                {4096, 1, 4096, 0, 1.0f},     {4096, 8, 4096, 0, 1.0f},  {4096, 96, 4096, 0, 1.0f},
                {64, 64, 8192, 0, 1.0f},      {512, 512, 8192, 0, 1.0f}, {1000, 1001, 1003, 0, 1.0f},
                {2048, 2048, 2048, 0, 1.0f},  {4096, 4096, 128, 0, 1.0f}, {8192, 8192, 8192, 0, 1.0f}};
  long long after[2] = {0, 0};
  int plans_made = 0;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < pg_variant_count(); ++i) {
      const pg_variant_info *v = pg_variant_at(i);
      if (!pgt_selected(v->name)) continue;
      const int low = v->min_stages > 0 ? v->min_stages : 0;
      const int high = v->max_stages > 0 ? v->max_stages : 0;
      for (int stages = low; stages <= high; ++stages)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
          /* Plans read addresses, never memory: the buffers stand in for
           * any size; an offset of one float makes TMA refuse them. */
          pg_plan *plan = NULL;
          const int o = shapes[s].offset;
          if (pg_plan_create(&plan, v, stages, shapes[s].m, shapes[s].n, shapes[s].k,
                             shapes[s].alpha, d_a + o, shapes[s].k + o, d_b + o, shapes[s].n + o,
                             0.0f, d_c, shapes[s].n) == PG_OK)
            plans_made += round == 0;
          pg_plan_destroy(plan);
        }
    }
    after[round] = pg_kernel_image_probes();
  }
  checks++;
  printf("kernel cache: %d plans, %lld kernels asked of the GPU, %lld more the second time\n",
         plans_made, after[0], after[1] - after[0]);
  if (after[1] != after[0]) fail("-", "planning the same calls again asked the GPU again");
  if (plans_made == 0) fail("-", "no plan was made");
}

int main(void) {
  if (!pgt_have_device()) return PG_TEST_SKIP;
  int major = 0, minor = 0;
  PGT_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  PGT_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  device_cc = major * 10 + minor;
  d_a = pgt_malloc_device((size_t)M * K * sizeof(float));
  d_b = pgt_malloc_device((size_t)K * N * sizeof(float));
  d_c = pgt_malloc_device(C_FLOATS * sizeof(float));
  d_ref = pgt_malloc_device(C_FLOATS * sizeof(double));
  d_scale = pgt_malloc_device(C_FLOATS * sizeof(double));
  PGT_PG(pgh_fill_uniform(d_a, M, K, K, 21, NULL));
  PGT_PG(pgh_fill_uniform(d_b, K, N, N, 22, NULL));
  PGT_PG(pgh_reference(M, N, K, 1.0f, d_a, K, d_b, N, 0.0f, NULL, N, d_ref, d_scale, NULL));
  PGT_CUDA(cudaDeviceSynchronize());

  for (int i = 0; i < pg_variant_count(); ++i)
    if (pgt_selected(pg_variant_at(i)->name)) error_state(pg_variant_at(i));
  for (int i = 0; i < pg_variant_count(); ++i)
    if (pgt_selected(pg_variant_at(i)->name)) plans(pg_variant_at(i));
  static const char *const forms[] = {TWS_FORMS(FORM_NAME)}; /* tma_ws.h */
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; ++i)
    if (pgt_selected(forms[i])) split_is_deterministic(forms[i]);
  if (pgt_selected("auto")) split_is_deterministic("auto");
  if (pgt_selected("wgmma_3xtf32")) split_is_deterministic("wgmma_3xtf32");
  if (pgt_selected("auto_emulated")) split_is_deterministic("auto_emulated");
  kernel_cache();
  plan_on_another_device();
  checks++;
  if (pg_plan_launch(NULL, NULL) != PG_ERR_INVALID_ARG) fail("-", "pg_plan_launch(NULL)");
  pg_plan_destroy(NULL);

  PGT_CUDA(cudaFree(d_a));
  PGT_CUDA(cudaFree(d_b));
  PGT_CUDA(cudaFree(d_c));
  PGT_CUDA(cudaFree(d_ref));
  PGT_CUDA(cudaFree(d_scale));
  pg_shutdown();
  printf("test_gpu_state: %d checks, %d failed\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
