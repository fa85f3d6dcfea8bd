/* BLAS's promises, for every entry of the registry (kernels, cuBLAS, auto):
 *
 *   alpha = 0  reads neither A nor B. A and B hold NaN and Inf in every row
 *              and column, so a kernel that read them and multiplied by zero
 *              would write NaN; C must be exactly beta * C0: zeros for
 *              beta = 0 (C held NaN before the call and is not read), 2 * C0
 *              bit for bit for beta = 2.
 *   K = 0      the same, with A and B never touched (NULL-free but NaN).
 *   Inf, NaN   with alpha = 1, a NaN in A and an Inf and a -Inf in B reach
 *              the same elements of C as cuBLAS's do, each as NaN where
 *              cuBLAS's is NaN and as an Inf of the same sign where it is.
 *
 * Shapes: 256x256x512, 1024^3, 333x257x129 (ld not a multiple of 4: the TMA
 * entries may refuse it, and must then leave C alone) and 256x256x65536,
 * where the split-K forms and auto split K. PG_TEST_QUICK=1 (the sanitizer
 * runs) replaces the two large ones with 128x128x8192, which splits too.
 * PG_TEST_VARIANTS / PG_TEST_SKIP_VARIANTS choose entries (gpu_util.h).
 * Exit 0 pass, 1 fail, 77 without a GPU. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpu_util.h"
#include "measure/harness.h"

typedef struct {
  int m, n, k;
} shape;

static const shape full_shapes[] = {{256, 256, 512}, {1024, 1024, 1024}, {333, 257, 129},
                                    {256, 256, 65536}};
static const shape quick_shapes[] = {{256, 256, 512}, {333, 257, 129}, {128, 128, 8192}};

#define MAX_REPORTS 30

static cudaStream_t stream;
static int failures, checks, refusals;

/* One problem's buffers: A, B, C0 (device) and their host images. */
typedef struct {
  shape s;
  float *a, *b, *c, *c0; /* device */
  float *host_c0, *host_c, *host_ref;
} problem;

static void fail(const char *variant, const shape *s, const char *what, const char *detail) {
  failures++;
  if (failures <= MAX_REPORTS)
    printf("FAIL %s at %dx%dx%d: %s%s%s\n", variant, s->m, s->n, s->k, what,
           detail[0] ? ": " : "", detail);
}

static void set_float(float *device, size_t index, float value) {
  PGT_CUDA(cudaMemcpy(device + index, &value, sizeof value, cudaMemcpyHostToDevice));
}

/* Random A and B with a NaN or an Inf in every row of A and every column of
 * B (alpha = 0 must not read them), and a random C0. */
static void prepare(problem *p, const shape *s, int poison_everywhere) {
  memset(p, 0, sizeof *p);
  p->s = *s;
  const size_t a_count = (size_t)s->m * s->k, b_count = (size_t)s->k * s->n;
  const size_t c_count = (size_t)s->m * s->n;
  p->a = pgt_malloc_device(a_count * sizeof(float));
  p->b = pgt_malloc_device(b_count * sizeof(float));
  p->c = pgt_malloc_device(c_count * sizeof(float));
  p->c0 = pgt_malloc_device(c_count * sizeof(float));
  p->host_c0 = pgt_malloc_host(c_count * sizeof(float));
  p->host_c = pgt_malloc_host(c_count * sizeof(float));
  p->host_ref = pgt_malloc_host(c_count * sizeof(float));
  PGT_PG(pgh_fill_uniform(p->a, s->m, s->k, s->k, 11u + (uint64_t)s->k, stream));
  PGT_PG(pgh_fill_uniform(p->b, s->k, s->n, s->n, 12u + (uint64_t)s->k, stream));
  PGT_PG(pgh_fill_uniform(p->c0, s->m, s->n, s->n, 13u + (uint64_t)s->k, stream));
  PGT_CUDA(cudaStreamSynchronize(stream));
  if (poison_everywhere) {
    float *host_a = pgt_malloc_host(a_count * sizeof(float));
    float *host_b = pgt_malloc_host(b_count * sizeof(float));
    PGT_CUDA(cudaMemcpy(host_a, p->a, a_count * sizeof(float), cudaMemcpyDeviceToHost));
    PGT_CUDA(cudaMemcpy(host_b, p->b, b_count * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < s->m; ++i)
      host_a[(size_t)i * s->k + (size_t)(i * 7) % (size_t)s->k] = i % 2 ? NAN : INFINITY;
    for (int j = 0; j < s->n; ++j)
      host_b[(size_t)((j * 5) % s->k) * s->n + (size_t)j] = j % 2 ? -INFINITY : NAN;
    PGT_CUDA(cudaMemcpy(p->a, host_a, a_count * sizeof(float), cudaMemcpyHostToDevice));
    PGT_CUDA(cudaMemcpy(p->b, host_b, b_count * sizeof(float), cudaMemcpyHostToDevice));
    free(host_a);
    free(host_b);
  } else {
    /* One NaN in A (row m/3), an Inf and a -Inf in B (columns n/4 and n/2). */
    set_float(p->a, (size_t)(s->m / 3) * s->k + (size_t)s->k / 2, NAN);
    set_float(p->b, (size_t)(s->k / 3) * s->n + (size_t)s->n / 4, INFINITY);
    set_float(p->b, (size_t)(2 * s->k / 3) * s->n + (size_t)s->n / 2, -INFINITY);
  }
  PGT_CUDA(cudaMemcpy(p->host_c0, p->c0, c_count * sizeof(float), cudaMemcpyDeviceToHost));
}

static void release(problem *p) {
  PGT_CUDA(cudaFree(p->a));
  PGT_CUDA(cudaFree(p->b));
  PGT_CUDA(cudaFree(p->c));
  PGT_CUDA(cudaFree(p->c0));
  free(p->host_c0);
  free(p->host_c);
  free(p->host_ref);
}

/* C := C0 (or NaN everywhere with `poison`), the call, C read back. Returns
 * the call's status; a CUDA error after it stops the test. */
static pg_status run(const problem *p, const pg_variant_info *v, int k, float alpha, float beta,
                     int poison) {
  const shape *s = &p->s;
  const size_t c_bytes = (size_t)s->m * s->n * sizeof(float);
  if (poison)
    PGT_PG(pgh_poison(p->c, s->m, s->n, s->n, stream));
  else
    PGT_CUDA(cudaMemcpyAsync(p->c, p->c0, c_bytes, cudaMemcpyDeviceToDevice, stream));
  const pg_status st =
      pg_sgemm_variant(v, 0, s->m, s->n, k, alpha, p->a, s->k, p->b, s->n, beta, p->c, s->n,
                       stream);
  PGT_CUDA(cudaStreamSynchronize(stream));
  PGT_CUDA(cudaGetLastError());
  PGT_CUDA(cudaMemcpy(p->host_c, p->c, c_bytes, cudaMemcpyDeviceToHost));
  return st;
}

/* A refusal this test accepts: a layout rule of the entry (the TMA entries
 * and ld = 257), which must leave C as it was. */
static int refused(const problem *p, const pg_variant_info *v, pg_status st, int poison) {
  if (st != PG_ERR_UNSUPPORTED || v->kind == PG_KIND_SELECTOR) return 0;
  refusals++;
  const size_t count = (size_t)p->s.m * p->s.n;
  for (size_t i = 0; i < count; ++i) {
    const float before = p->host_c0[i], after = p->host_c[i];
    if (poison ? !isnan(after) : memcmp(&before, &after, sizeof after) != 0) {
      fail(v->name, &p->s, "PG_ERR_UNSUPPORTED but C changed", pg_last_error_detail());
      return 1;
    }
  }
  return 1;
}

/* alpha = 0 (and K = 0): C = beta * C0 exactly. */
static void check_vanishing_product(const problem *p, const pg_variant_info *v) {
  const struct {
    int k;
    float alpha, beta;
    const char *what;
  } cases[] = {{p->s.k, 0.0f, 0.0f, "alpha = 0, beta = 0"},
               {p->s.k, 0.0f, 2.0f, "alpha = 0, beta = 2"},
               {p->s.k, -0.0f, 2.0f, "alpha = -0, beta = 2"},
               {0, 1.0f, 0.0f, "K = 0, beta = 0"},
               {0, 1.0f, 2.0f, "K = 0, beta = 2"}};
  const size_t count = (size_t)p->s.m * p->s.n;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const int poison = cases[c].beta == 0.0f; /* C must not be read */
    const pg_status st = run(p, v, cases[c].k, cases[c].alpha, cases[c].beta, poison);
    if (refused(p, v, st, poison)) continue;
    if (st != PG_OK) {
      char why[320];
      snprintf(why, sizeof why, "%s returned %s (%s)", cases[c].what, pg_status_name(st),
               pg_last_error_detail());
      fail(v->name, &p->s, why, "");
      continue;
    }
    checks++;
    size_t wrong = 0, first = 0;
    for (size_t i = 0; i < count; ++i) {
      const float want = cases[c].beta * p->host_c0[i];
      const int right = poison ? p->host_c[i] == 0.0f
                               : memcmp(&p->host_c[i], &want, sizeof want) == 0;
      if (!right && wrong++ == 0) first = i;
    }
    if (wrong > 0) {
      char why[320];
      snprintf(why, sizeof why, "%s: %zu of %zu elements are not beta * C0, first C[%zu][%zu] = %g",
               cases[c].what, wrong, count, first / (size_t)p->s.n, first % (size_t)p->s.n,
               (double)p->host_c[first]);
      fail(v->name, &p->s, why, "");
    }
  }
}

/* 0 finite, 1 NaN, 2 +Inf, 3 -Inf. */
static int float_class(float x) {
  if (isnan(x)) return 1;
  if (isinf(x)) return x > 0 ? 2 : 3;
  return 0;
}

/* A NaN in A and Infs in B reach the elements cuBLAS's reach, as cuBLAS's. */
static void check_propagation(const problem *p, const pg_variant_info *v,
                              const pg_variant_info *cublas) {
  const size_t count = (size_t)p->s.m * p->s.n;
  pg_status st = run(p, cublas, p->s.k, 1.0f, 0.0f, 1);
  if (st != PG_OK) {
    fail(v->name, &p->s, "cuBLAS, the reference, failed", pg_last_error_detail());
    return;
  }
  memcpy(p->host_ref, p->host_c, count * sizeof(float));
  st = run(p, v, p->s.k, 1.0f, 0.0f, 1);
  if (refused(p, v, st, 1)) return;
  if (st != PG_OK) {
    fail(v->name, &p->s, pg_status_name(st), pg_last_error_detail());
    return;
  }
  checks++;
  size_t differ = 0, first = 0, special = 0;
  for (size_t i = 0; i < count; ++i) {
    const int want = float_class(p->host_ref[i]);
    special += want != 0;
    if (float_class(p->host_c[i]) != want && differ++ == 0) first = i;
  }
  if (special == 0) {
    fail(v->name, &p->s, "cuBLAS wrote no NaN or Inf: the test's inputs lost their specials", "");
  } else if (differ > 0) {
    char why[320];
    snprintf(why, sizeof why,
             "%zu elements differ from cuBLAS's in being NaN, Inf or finite; first C[%zu][%zu] "
             "= %g where cuBLAS has %g",
             differ, first / (size_t)p->s.n, first % (size_t)p->s.n, (double)p->host_c[first],
             (double)p->host_ref[first]);
    fail(v->name, &p->s, why, "");
  }
}

int main(void) {
  if (!pgt_have_device()) return PG_TEST_SKIP;
  const char *q = getenv("PG_TEST_QUICK");
  const int quick = q != NULL && strcmp(q, "") != 0 && strcmp(q, "0") != 0;
  const shape *shapes = quick ? quick_shapes : full_shapes;
  const int shape_count = quick ? (int)(sizeof quick_shapes / sizeof quick_shapes[0])
                                : (int)(sizeof full_shapes / sizeof full_shapes[0]);
  PGT_CUDA(cudaStreamCreate(&stream));
  const pg_variant_info *cublas = pg_variant_find("cublas");
  if (cublas == NULL || pg_variant_supported(cublas, 0) != PG_OK) {
    printf("FAIL: cuBLAS, the reference of the Inf/NaN check, does not run here\n");
    return 1;
  }
  int tested = 0;
  for (int si = 0; si < shape_count; ++si) {
    problem poisoned, sparse;
    prepare(&poisoned, &shapes[si], 1);
    prepare(&sparse, &shapes[si], 0);
    for (int i = 0; i < pg_variant_count(); ++i) {
      const pg_variant_info *v = pg_variant_at(i);
      if (!pgt_selected(v->name)) continue;
      const pg_status supported = pg_variant_supported(v, 0);
      if (supported == PG_ERR_ARCH || supported == PG_ERR_SMEM) continue;
      if (si == 0) tested++;
      check_vanishing_product(&poisoned, v);
      check_propagation(&sparse, v, cublas);
    }
    release(&poisoned);
    release(&sparse);
  }
  PGT_CUDA(cudaStreamDestroy(stream));
  if (tested == 0) {
    printf("FAIL: no variant ran\n");
    return 1;
  }
  printf("%d entries, %d shapes: %d checks, %d refusals of a layout (C left alone), %d failures\n",
         tested, shape_count, checks, refusals, failures);
  return failures == 0 ? 0 : 1;
}
