/* Every layout a caller has, on a GPU: each registry entry that takes every
 * layout (pg_variant_info.layouts == PG_LAYOUT_ANY: the selectors, the
 * cuBLAS rows, cp_async_any; read from the registry, not listed here)
 * against the FP64 reference of src/measure/harness.cu, every member of the
 * batch, with a guard between the members' Cs and after the last:
 *
 *   every op(A), op(B) x batch 1, 2 and 7 at two shapes (odd, and 16-byte
 *   rows), and batch 65537 (one past 65535, CUDA's grid y and z) at 3x5x7
 *   and at 4x8x8 (16-byte rows); A shared by the batch (stride 0), B shared, strides that leave gaps, ld
 *   above the width, alpha = 0 with NaN in A and B (neither may be read),
 *   beta != 0 (C read) and beta = 0 with NaN in C (C not read), K = 0, M = 0
 *   and N = 0 (nothing written); the shared operands, gaps, alpha and beta
 *   and several tiles again with 16-byte rows and strides.
 *
 * The entries that read an operand with TMA where it is (tma_readers, and
 * the tile forms of tma_ws at any layout but op N, N on one GEMM) may
 * refuse a case whose rows, strides or base TMA cannot read, with
 * PG_ERR_UNSUPPORTED, a reason and C untouched (a selector then takes its
 * next candidate); every case TMA reads they must run.
 *
 * wgmma_fp16x3 takes every layout too; beside the cases above, each op at
 * larger shapes (several tiles, pairs of them in clusters).
 *
 * Then: bad strides and batches refused with C untouched; every study
 * kernel (PG_LAYOUT_NN) refusing op T or a batch with PG_ERR_UNSUPPORTED and
 * a reason, C untouched, while it takes op N, N and one GEMM of the same
 * shape; pg_plan_launch_with on other matrices giving their C, and refusing
 * a pointer of another alignment; pg_blas_sgemm and its batched form (every
 * transa, transb, CUBLAS_OP_C among them) against a column-major FP64
 * reference computed here; a capture into a CUDA graph replayed twice, each
 * replay right and both of the same bits, and two launches of the same bits.
 *
 *   PG_TEST_VARIANTS=a,b / PG_TEST_SKIP_VARIANTS=a,b choose entries;
 *   PG_TEST_MAX_BATCH=N leaves out the cases of larger batches (the 65537
 *   GEMMs, which racecheck takes minutes over: a race is a block's, and
 *   the smaller batches run the same blocks), counted in the summary.
 * Exit 0 pass, 1 fail, 77 without a GPU. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"
#include "measure/harness.h"
#include "measure/verify_math.h"

/* Guard floats after each allocation's span: a write past the last
 * member's C lands there. */
#define TAIL 64
/* Failures printed in full; later ones are only counted. */
#define MAX_REPORTS 60
/* A stride of 0: one matrix for the whole batch. */
#define SHARED (-1)

static cudaStream_t stream;
static int failures, checks, reports, tma_refusals, left_out;
static long long max_batch = -1; /* PG_TEST_MAX_BATCH; -1: every batch */

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
  ++failures;
  if (reports++ >= MAX_REPORTS) return;
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}

static float guard_value(void) {
  const uint32_t bits = PGH_GUARD_BITS;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* ---- entries that read with TMA ------------------------------------------------ */

/* The PG_LAYOUT_ANY entries that read an operand where it is with TMA:
 * A where op(A) = N (A^T from a first kernel where op(A) = T), and B
 * always (b_always) or where op(B) = T (else B^T from a first kernel). */
static const struct {
  const char *name;
  int b_always;
} tma_readers[] = {{"wgmma_tma_rs", 1}, {"wgmma_tma_coop_n256", 0}};

/* The tile forms of tma_ws (their names begin so) read both operands where
 * they are at any layout but op N, N on one GEMM (there an operand TMA
 * cannot read is copied first): b_always, and A at either op. */
static int tws_form(const pg_variant_info *v) {
  return strncmp(v->name, "tma_ws", 6) == 0;
}

static int tma_reader(const pg_variant_info *v, int *b_always) {
  if (tws_form(v)) {
    if (b_always != NULL) *b_always = 1;
    return 1;
  }
  for (size_t i = 0; i < sizeof tma_readers / sizeof tma_readers[0]; ++i)
    if (strcmp(v->name, tma_readers[i].name) == 0) {
      if (b_always != NULL) *b_always = tma_readers[i].b_always;
      return 1;
    }
  return 0;
}

/* TMA's rules for one operand: a 16-byte aligned base, rows and (in a
 * batch) its stride a multiple of 4 floats. */
static int tma_reads(const float *p, long long ld, long long stride, int batch) {
  return (uintptr_t)p % 16 == 0 && ld % 4 == 0 && (batch <= 1 || stride % 4 == 0);
}

/* Whether v may refuse g: it reads with TMA an operand TMA cannot read. */
static int tma_refusal_allowed(const pg_variant_info *v, const pg_gemm_desc *g) {
  int b_always = 0;
  if (!tma_reader(v, &b_always)) return 0;
  /* op N, N on one GEMM: the tile forms copy what TMA cannot read;
   * tma_ws itself refuses it, as it always has. */
  if (tws_form(v) && strcmp(v->name, "tma_ws") != 0 && g->op_a == PG_OP_N &&
      g->op_b == PG_OP_N && g->batch <= 1)
    return 0;
  const int a_read = g->op_a == PG_OP_N || tws_form(v), b_read = b_always || g->op_b == PG_OP_T;
  return (a_read && !tma_reads(g->a, g->lda, g->stride_a, g->batch)) ||
         (b_read && !tma_reads(g->b, g->ldb, g->stride_b, g->batch));
}

/* ---- one problem ----------------------------------------------------------- */

/* A GEMM as the cases below describe it: shape, ops (2 * (op_a T) + (op_b
 * T)), batch, each leading dimension's padding past the stored width, each
 * stride's gap past one member's rows (SHARED: stride 0), alpha and beta,
 * and A and B all NaN where alpha is 0 (no call may read them). */
typedef struct {
  const char *what;
  int m, n, k, batch, op;
  int pad_a, pad_b, pad_c;
  long long gap_a, gap_b, gap_c;
  float alpha, beta;
  int nan_ab;
} layout_case;

typedef struct {
  pg_gemm_desc g;
  pgh_stored a_st, b_st, c_st;
  float *a, *b, *c, *c0; /* device; c0: C's first image */
  size_t a_floats, b_floats, c_floats; /* spans + TAIL */
  float *c_before;                     /* host: C's first image, all of it */
  double *ref, *scale;                 /* device, batch x M x N */
  char name[160];
} problem;

static int max_int(int x, int y) { return x > y ? x : y; }

static long long stride_of(long long gap, int rows, long long ld) {
  return gap == SHARED ? 0 : (long long)rows * ld + gap;
}

static pg_gemm_desc desc_of(const layout_case *lc) {
  pg_gemm_desc g = PG_GEMM_DESC_INIT;
  g.op_a = lc->op & 2 ? PG_OP_T : PG_OP_N;
  g.op_b = lc->op & 1 ? PG_OP_T : PG_OP_N;
  g.m = lc->m;
  g.n = lc->n;
  g.k = lc->k;
  g.alpha = lc->alpha;
  g.beta = lc->beta;
  g.batch = lc->batch;
  /* Each operand's rows as stored: A's are K wide (op N) or M (T), B's N
   * (op N) or K (T). */
  const int a_rows = g.op_a == PG_OP_T ? lc->k : lc->m, a_cols = g.op_a == PG_OP_T ? lc->m : lc->k;
  const int b_rows = g.op_b == PG_OP_T ? lc->n : lc->k, b_cols = g.op_b == PG_OP_T ? lc->k : lc->n;
  g.lda = max_int(1, a_cols) + lc->pad_a;
  g.ldb = max_int(1, b_cols) + lc->pad_b;
  g.ldc = max_int(1, lc->n) + lc->pad_c;
  if (lc->batch > 1) {
    g.stride_a = stride_of(lc->gap_a, a_rows, g.lda);
    g.stride_b = stride_of(lc->gap_b, b_rows, g.ldb);
    g.stride_c = stride_of(lc->gap_c, lc->m, g.ldc);
  }
  return g;
}

static const char *op_name(int op) {
  static const char *const names[] = {"NN", "NT", "TN", "TT"};
  return names[op & 3];
}

/* An operand: its span (NaN past it, TAIL floats), filled as stored, NaN
 * in the padding and gaps; all NaN where `nan` is set. */
static float *operand(const pgh_stored *st, uint64_t seed, int nan, size_t *floats) {
  *floats = pgh_stored_span(st) + TAIL;
  float *d = pgt_malloc_device(*floats * sizeof(float));
  PGT_CUDA(cudaMemsetAsync(d, 0xFF, *floats * sizeof(float), stream));
  if (!nan) PGT_PG(pgh_fill_stored(d, st, seed, PGH_UNIFORM, stream));
  return d;
}

/* Inputs, C's first image (random where beta reads it, else NaN; the guard
 * between the members and after the last) and the reference. */
static void setup(problem *p, const layout_case *lc, const char *entry, uint64_t seed) {
  memset(p, 0, sizeof *p);
  p->g = desc_of(lc);
  snprintf(p->name, sizeof p->name, "%s %s %dx%dx%d batch %d (%s)", entry, op_name(lc->op), lc->m,
           lc->n, lc->k, lc->batch, lc->what);
  p->a_st = pgh_stored_a(&p->g);
  p->b_st = pgh_stored_b(&p->g);
  p->c_st = pgh_stored_c(&p->g);
  p->a = operand(&p->a_st, seed, lc->nan_ab, &p->a_floats);
  p->b = operand(&p->b_st, seed + 1, lc->nan_ab, &p->b_floats);
  p->c_floats = pgh_stored_span(&p->c_st) + TAIL;
  p->c = pgt_malloc_device(p->c_floats * sizeof(float));
  p->c0 = pgt_malloc_device(p->c_floats * sizeof(float));
  p->c_before = pgt_malloc_host(p->c_floats * sizeof(float));
  const float guard = guard_value();
  for (size_t i = 0; i < p->c_floats; ++i) p->c_before[i] = guard;
  PGT_CUDA(cudaMemcpyAsync(p->c0, p->c_before, p->c_floats * sizeof(float),
                           cudaMemcpyHostToDevice, stream));
  if (lc->beta != 0.0f) {
    PGT_PG(pgh_fill_stored(p->c0, &p->c_st, seed + 2, PGH_UNIFORM, stream));
    PGT_PG(pgh_guard_stored(p->c0, &p->c_st, stream));
  } else {
    PGT_PG(pgh_poison_stored(p->c0, &p->c_st, stream));
  }
  PGT_CUDA(cudaMemcpyAsync(p->c, p->c0, p->c_floats * sizeof(float), cudaMemcpyDeviceToDevice,
                           stream));
  PGT_CUDA(cudaMemcpyAsync(p->c_before, p->c0, p->c_floats * sizeof(float),
                           cudaMemcpyDeviceToHost, stream));
  const size_t results = (size_t)lc->m * (size_t)lc->n * (size_t)lc->batch;
  p->ref = pgt_malloc_device(results * sizeof(double));
  p->scale = pgt_malloc_device(results * sizeof(double));
  p->g.a = p->a;
  p->g.b = p->b;
  PGT_PG(pgh_reference_gemm(&p->g, p->c0, p->ref, p->scale, stream));
  p->g.c = p->c;
  PGT_CUDA(cudaStreamSynchronize(stream));
}

static void release(problem *p) {
  PGT_CUDA(cudaFree(p->a));
  PGT_CUDA(cudaFree(p->b));
  PGT_CUDA(cudaFree(p->c));
  PGT_CUDA(cudaFree(p->c0));
  PGT_CUDA(cudaFree(p->ref));
  PGT_CUDA(cudaFree(p->scale));
  free(p->c_before);
}

/* C back to its first image. */
static void reset_c(problem *p) {
  PGT_CUDA(cudaMemcpyAsync(p->c, p->c0, p->c_floats * sizeof(float), cudaMemcpyDeviceToDevice,
                           stream));
}

/* Whether every float of C's allocation kept its bits. */
static int c_untouched(const problem *p, const char *how) {
  float *now = pgt_malloc_host(p->c_floats * sizeof(float));
  PGT_CUDA(cudaStreamSynchronize(stream));
  PGT_CUDA(cudaMemcpy(now, p->c, p->c_floats * sizeof(float), cudaMemcpyDeviceToHost));
  const long long diff = pgt_first_diff(now, p->c_before, p->c_floats);
  if (diff >= 0)
    fail("%s: %s, yet C changed at float %lld of its allocation (%.9g, was %.9g)", p->name, how,
         diff, (double)now[diff], (double)p->c_before[diff]);
  free(now);
  return diff < 0;
}

/* C against the reference, member by member, the guard between them and
 * the tail after the last unwritten. */
static int c_right(const problem *p, pg_precision precision, const char *how) {
  ++checks;
  PGT_CUDA(cudaStreamSynchronize(stream));
  if (pgh_stored_span(&p->c_st) == 0) return c_untouched(p, how);
  pgh_check chk;
  PGT_PG(pgh_compare_stored(p->c, &p->c_st, p->g.k, p->ref, p->scale, precision, 1, &chk,
                            stream));
  float tail[TAIL];
  PGT_CUDA(cudaMemcpy(tail, p->c + (p->c_floats - TAIL), sizeof tail, cudaMemcpyDeviceToHost));
  const long long tail_diff = pgt_first_diff(tail, p->c_before + (p->c_floats - TAIL), TAIL);
  if (chk.failed == 0 && tail_diff < 0) return 1;
  if (chk.failed > chk.guard_written)
    fail("%s: %s: %lld of %lld elements wrong (%lld NaN); first C_%lld[%d][%d] = %.9g, want "
         "%.9g",
         p->name, how, chk.failed - chk.guard_written, chk.checked, chk.nonfinite,
         chk.reported ? chk.bad_member[0] : -1, chk.reported ? chk.bad_row[0] : -1,
         chk.reported ? chk.bad_col[0] : -1, chk.reported ? (double)chk.bad_out[0] : 0.0,
         chk.reported ? chk.bad_ref[0] : 0.0);
  if (chk.guard_written > 0)
    fail("%s: %s: %lld floats written between the members' Cs or their rows (the first %lld "
         "floats past C)",
         p->name, how, chk.guard_written, chk.first_guard_written);
  if (tail_diff >= 0)
    fail("%s: %s: a write past the last member's C, %lld floats after its span", p->name, how,
         tail_diff);
  return 0;
}

/* One case through pg_gemm: PG_OK and the reference. */
static void run_case(const pg_variant_info *v, const layout_case *lc, uint64_t seed) {
  if (max_batch >= 0 && lc->batch > max_batch) {
    ++left_out;
    return;
  }
  problem p;
  setup(&p, lc, v->name, seed);
  const pg_status st = pg_gemm(v->name, 0, &p.g, stream);
  if (st == PG_ERR_UNSUPPORTED && tma_refusal_allowed(v, &p.g) &&
      pg_last_error_detail()[0] != '\0') {
    ++checks;
    ++tma_refusals;
    c_untouched(&p, "refused (TMA cannot read the layout)");
  } else if (st != PG_OK) {
    ++checks;
    fail("%s: pg_gemm returned %s (%s)", p.name, pg_status_name(st), pg_last_error_detail());
    c_untouched(&p, "refused");
  } else {
    c_right(&p, v->precision, "pg_gemm");
  }
  release(&p);
}

/* ---- every layout, every entry that takes them ------------------------------ */

static void every_layout(const pg_variant_info *v) {
  static const int shapes[][3] = {{67, 45, 37}, {128, 96, 64}};
  static const int batches[] = {1, 2, 7};
  uint64_t seed = 1000;
  for (int op = 0; op < 4; ++op) {
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
      for (size_t b = 0; b < sizeof batches / sizeof batches[0]; ++b) {
        const layout_case lc = {"dense", shapes[s][0], shapes[s][1], shapes[s][2], batches[b],
                                op, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 0};
        run_case(v, &lc, seed += 10);
      }
    const layout_case cases[] = {
        /* One past what a grid's y or z holds. */
        {"65537 GEMMs", 3, 5, 7, 65537, op, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 0},
        {"65537 GEMMs, B shared, beta", 3, 5, 7, 65537, op, 0, 0, 0, 0, SHARED, 2, -0.5f, 1.5f, 0},
        {"A shared", 35, 29, 41, 3, op, 0, 0, 0, SHARED, 0, 0, 1.0f, 0.0f, 0},
        {"B shared", 35, 29, 41, 3, op, 0, 0, 0, 0, SHARED, 0, 1.0f, 0.0f, 0},
        {"A and B shared", 35, 29, 41, 4, op, 0, 0, 0, SHARED, SHARED, 0, 1.0f, 0.0f, 0},
        {"gaps", 35, 29, 41, 3, op, 0, 0, 0, 5, 3, 7, 1.0f, 0.0f, 0},
        {"ld above the width", 35, 29, 41, 1, op, 3, 5, 2, 0, 0, 0, 1.0f, 0.0f, 0},
        {"ld above the width, gaps", 64, 32, 48, 3, op, 4, 4, 4, 8, 4, 12, 1.0f, 0.0f, 0},
        {"alpha 0, NaN A and B", 35, 29, 41, 3, op, 1, 2, 3, 5, 3, 7, 0.0f, 1.5f, 1},
        {"alpha 0, beta 0, NaN A and B", 35, 29, 41, 3, op, 0, 0, 0, 0, 0, 0, 0.0f, 0.0f, 1},
        {"alpha and beta", 35, 29, 41, 3, op, 0, 1, 0, 4, 0, 9, 0.75f, -1.25f, 0},
        {"K 0, beta 2", 35, 29, 0, 3, op, 0, 0, 0, 0, 0, 3, 1.0f, 2.0f, 0},
        {"K 0, beta 0", 35, 29, 0, 3, op, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 0},
        {"M 0", 0, 29, 41, 3, op, 0, 0, 0, 0, 0, 0, 1.0f, 0.5f, 0},
        {"N 0", 35, 0, 41, 3, op, 0, 0, 0, 0, 0, 0, 1.0f, 0.5f, 0},
        /* The same with 16-byte rows and strides: what the TMA readers run. */
        {"65537 GEMMs, 16-byte rows", 4, 8, 8, 65537, op, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 0},
        {"65537 GEMMs, B shared, beta, 16-byte rows", 4, 8, 8, 65537, op, 0, 0, 0, 0, SHARED,
         4, -0.5f, 1.5f, 0},
        {"A shared, 16-byte rows", 36, 28, 40, 3, op, 0, 0, 0, SHARED, 0, 0, 1.0f, 0.0f, 0},
        {"B shared, 16-byte rows", 36, 28, 40, 3, op, 0, 0, 0, 0, SHARED, 0, 1.0f, 0.0f, 0},
        {"gaps, 16-byte rows", 36, 28, 40, 3, op, 4, 8, 1, 8, 4, 7, 1.0f, 0.0f, 0},
        {"alpha and beta, 16-byte rows", 36, 28, 40, 2, op, 0, 4, 0, 4, 0, 9, 0.75f, -1.25f, 0},
        {"several tiles, 16-byte rows", 300, 272, 100, 2, op, 0, 0, 0, 0, 0, 0, 1.0f, 0.5f, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) run_case(v, &cases[c], seed += 10);
  }
}

/* Strides and batches no call may take: refused, C untouched, through
 * pg_gemm and pg_plan_create_gemm (which leaves no plan). */
static void bad_strides(const pg_variant_info *v) {
  const layout_case lc = {"bad strides", 35, 29, 41, 3, 1, 0, 0, 0, 5, 3, 7, 1.0f, 0.5f, 0};
  problem p;
  setup(&p, &lc, v->name, 77);
  const pg_gemm_desc valid = p.g;
  const long long extent = (long long)(p.g.m - 1) * p.g.ldc + p.g.n;
  const struct {
    const char *what;
    long long stride_a, stride_c;
    int batch;
  } bad[] = {
      {"negative stride_c", valid.stride_a, -1, 3},
      {"stride_c one below a member's C: the Cs overlap", valid.stride_a, extent - 1, 3},
      {"stride_c 0 with 3 GEMMs", valid.stride_a, 0, 3},
      {"negative stride_a", -valid.stride_a, valid.stride_c, 3},
      {"batch -1", valid.stride_a, valid.stride_c, -1},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    p.g = valid;
    p.g.stride_a = bad[i].stride_a;
    p.g.stride_c = bad[i].stride_c;
    p.g.batch = bad[i].batch;
    ++checks;
    pg_status st = pg_gemm(v->name, 0, &p.g, stream);
    if (st != PG_ERR_INVALID_ARG || pg_last_error_detail()[0] == '\0')
      fail("%s: %s: pg_gemm returned %s (\"%s\"), want PG_ERR_INVALID_ARG with a reason", p.name,
           bad[i].what, pg_status_name(st), pg_last_error_detail());
    pg_plan *plan = (pg_plan *)&plan;
    st = pg_plan_create_gemm(&plan, v, 0, &p.g);
    if (st != PG_ERR_INVALID_ARG || plan != NULL)
      fail("%s: %s: pg_plan_create_gemm returned %s, plan %s", p.name, bad[i].what,
           pg_status_name(st), plan == NULL ? "NULL" : "left behind");
    c_untouched(&p, bad[i].what);
  }
  release(&p);
}

/* ---- study kernels: op N, N and one GEMM ---------------------------------- */

static void study_kernel_refuses(const pg_variant_info *v) {
  /* 16-byte rows and pointers everywhere, so that no rule but the layout's
   * stands in the way. */
  const layout_case refused[] = {
      {"op T: a study kernel's refusal", 128, 64, 96, 1, 1, 0, 0, 0, 0, 0, 0, 1.0f, 0.5f, 0},
      {"op T: a study kernel's refusal", 128, 64, 96, 1, 2, 0, 0, 0, 0, 0, 0, 1.0f, 0.5f, 0},
      {"op T: a study kernel's refusal", 128, 64, 96, 1, 3, 0, 0, 0, 0, 0, 0, 1.0f, 0.5f, 0},
      {"a batch: a study kernel's refusal", 128, 64, 96, 2, 0, 0, 0, 0, 0, 0, 0, 1.0f, 0.5f, 0},
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
    problem p;
    setup(&p, &refused[i], v->name, 300 + i);
    ++checks;
    pg_status st = pg_gemm(v->name, 0, &p.g, stream);
    if (st != PG_ERR_UNSUPPORTED || pg_last_error_detail()[0] == '\0')
      fail("%s: pg_gemm returned %s (\"%s\"), want PG_ERR_UNSUPPORTED with a reason", p.name,
           pg_status_name(st), pg_last_error_detail());
    st = pg_variant_accepts_gemm(v, 0, &p.g);
    if (st != PG_ERR_UNSUPPORTED)
      fail("%s: pg_variant_accepts_gemm returned %s", p.name, pg_status_name(st));
    pg_plan *plan = (pg_plan *)&plan;
    st = pg_plan_create_gemm(&plan, v, 0, &p.g);
    if (st != PG_ERR_UNSUPPORTED || plan != NULL)
      fail("%s: pg_plan_create_gemm returned %s, plan %s", p.name, pg_status_name(st),
           plan == NULL ? "NULL" : "left behind");
    c_untouched(&p, "refused");
    release(&p);
  }
  /* Its own layout at that shape: taken, and right. */
  const layout_case own = {"op N, N, one GEMM", 128, 64, 96, 1, 0, 0, 0, 0, 0, 0, 0, 1.0f, 0.5f,
                           0};
  run_case(v, &own, 400);
}

/* ---- plans on other matrices ------------------------------------------------ */

static void plan_on_other_matrices(const pg_variant_info *v) {
  /* A TMA reader: A's rows and stride of 16 bytes (op(B) = T: B's too). */
  const layout_case lc =
      tma_reader(v, NULL)
          ? (layout_case){"a plan launched with", 67, 45, 40, 3, 1, 4, 0, 2, 8, 0, 3, 1.0f, 0.0f, 0}
          : (layout_case){"a plan launched with", 67, 45, 37, 3, 1, 1, 0, 2, 5, 0, 3, 1.0f, 0.0f,
                          0};
  problem first, other;
  setup(&first, &lc, v->name, 500);
  setup(&other, &lc, v->name, 600); /* the same layout, other values */
  pg_plan *plan = NULL;
  pg_status st = pg_plan_create_gemm(&plan, v, 0, &first.g);
  ++checks;
  if (st != PG_OK) {
    fail("%s: pg_plan_create_gemm returned %s (%s)", first.name, pg_status_name(st),
         pg_last_error_detail());
    release(&first);
    release(&other);
    return;
  }
  st = pg_plan_launch_with(plan, other.a, other.b, other.c, stream);
  if (st != PG_OK)
    fail("%s: pg_plan_launch_with returned %s (%s)", other.name, pg_status_name(st),
         pg_last_error_detail());
  else
    c_right(&other, v->precision, "pg_plan_launch_with on other matrices");
  c_untouched(&first, "the plan launched on other matrices");
  st = pg_plan_launch(plan, stream);
  if (st != PG_OK)
    fail("%s: pg_plan_launch returned %s", first.name, pg_status_name(st));
  else
    c_right(&first, v->precision, "pg_plan_launch after pg_plan_launch_with");
  /* A pointer aligned to 4 bytes where the planned one was to 16: the
   * plan's decision rests on it. */
  reset_c(&other);
  const struct {
    const char *what;
    const float *a, *b;
    float *c;
  } moved[] = {{"A one float off", other.a + 1, other.b, other.c},
               {"B one float off", other.a, other.b + 1, other.c},
               {"C one float off", other.a, other.b, other.c + 1}};
  for (size_t i = 0; i < sizeof moved / sizeof moved[0]; ++i) {
    ++checks;
    st = pg_plan_launch_with(plan, moved[i].a, moved[i].b, moved[i].c, stream);
    if (st != PG_ERR_UNSUPPORTED || pg_last_error_detail()[0] == '\0')
      fail("%s: pg_plan_launch_with, %s: returned %s, want PG_ERR_UNSUPPORTED with a reason",
           other.name, moved[i].what, pg_status_name(st));
    c_untouched(&other, moved[i].what);
  }
  pg_plan_destroy(plan);
  release(&first);
  release(&other);
}

/* ---- graphs and the same bits ----------------------------------------------- */

static float *c_bits(const problem *p) {
  float *h = pgt_malloc_host(p->c_floats * sizeof(float));
  PGT_CUDA(cudaStreamSynchronize(stream));
  PGT_CUDA(cudaMemcpy(h, p->c, p->c_floats * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

static void graph_and_bits(const pg_variant_info *v) {
  /* A TMA reader: A's rows (K x M stored) and stride of 16 bytes. */
  const int pad_a = tma_reader(v, NULL) ? 1 : 0;
  const layout_case lc = {"captured", 67, 45, 37, 7, 2, pad_a, 3, 0, 4, 0, 6, 1.0f, 0.0f, 0};
  problem p;
  setup(&p, &lc, v->name, 700);
  /* Two launches, the same bits. */
  ++checks;
  pg_status st = pg_gemm(v->name, 0, &p.g, stream);
  float *first = NULL;
  if (st == PG_OK && c_right(&p, v->precision, "first launch")) {
    first = c_bits(&p);
    reset_c(&p);
    st = pg_gemm(v->name, 0, &p.g, stream);
    float *second = st == PG_OK ? c_bits(&p) : NULL;
    if (second != NULL && pgt_first_diff(first, second, p.c_floats) >= 0)
      fail("%s: two launches gave other bits (first at float %lld)", p.name,
           pgt_first_diff(first, second, p.c_floats));
    free(second);
  }
  if (st != PG_OK) fail("%s: pg_gemm returned %s (%s)", p.name, pg_status_name(st),
                        pg_last_error_detail());
  /* Captured, and the graph replayed twice: right, the same bits each time. */
  cudaGraph_t graph = NULL;
  PGT_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  st = pg_gemm(v->name, 0, &p.g, stream);
  const cudaError_t end = cudaStreamEndCapture(stream, &graph);
  ++checks;
  if (st != PG_OK || end != cudaSuccess) {
    fail("%s: captured, pg_gemm returned %s (%s), cudaStreamEndCapture %s", p.name,
         pg_status_name(st), pg_last_error_detail(), cudaGetErrorString(end));
    if (graph != NULL) cudaGraphDestroy(graph);
    (void)cudaGetLastError();
  } else {
    cudaGraphExec_t exec = NULL;
    PGT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    float *replayed = NULL;
    for (int replay = 0; replay < 2; ++replay) {
      reset_c(&p);
      PGT_CUDA(cudaGraphLaunch(exec, stream));
      if (!c_right(&p, v->precision, replay ? "second replay" : "first replay")) continue;
      float *bits = c_bits(&p);
      if (replayed == NULL) {
        replayed = bits;
        continue;
      }
      if (pgt_first_diff(replayed, bits, p.c_floats) >= 0)
        fail("%s: two replays of the graph gave other bits", p.name);
      free(bits);
    }
    free(replayed);
    PGT_CUDA(cudaGraphExecDestroy(exec));
    PGT_CUDA(cudaGraphDestroy(graph));
  }
  free(first);
  release(&p);
}

/* ---- the column-major forms --------------------------------------------------- */

static uint64_t lcg;
static float host_random(void) {
  lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((double)(lcg >> 40) / (double)(1ull << 23) - 1.0);
}

/* pg_blas_sgemm (batch 1) or pg_blas_sgemm_strided_batched: column-major
 * C_i = alpha op(A_i) op(B_i) + beta C_i, C m x n, against a reference of
 * double sums written here in BLAS's own indexing; what lies between the
 * columns and the members stays as it was. */
static void blas_case(int transa, int transb, int batch) {
  const int m = 33, n = 20, k = 17;
  const float alpha = 1.25f, beta = -0.5f;
  const int a_rows = transa == 0 ? m : k, a_cols = transa == 0 ? k : m;
  const int b_rows = transb == 0 ? k : n, b_cols = transb == 0 ? n : k;
  const int lda = a_rows + 2, ldb = b_rows + 1, ldc = m + 3;
  const long long stride_a = (long long)lda * a_cols + 4, stride_b = 0, /* B shared */
      stride_c = (long long)ldc * n + 5;
  const size_t a_floats = (size_t)(batch - 1) * stride_a + (size_t)lda * a_cols;
  const size_t b_floats = (size_t)ldb * b_cols;
  const size_t c_floats = (size_t)(batch - 1) * stride_c + (size_t)ldc * n;
  float *a = pgt_malloc_host(a_floats * sizeof(float)), *b = pgt_malloc_host(b_floats * sizeof(float));
  float *c0 = pgt_malloc_host(c_floats * sizeof(float)), *c = pgt_malloc_host(c_floats * sizeof(float));
  lcg = 99u + (uint64_t)(transa * 9 + transb * 3 + batch);
  for (size_t i = 0; i < a_floats; ++i) a[i] = host_random();
  for (size_t i = 0; i < b_floats; ++i) b[i] = host_random();
  for (size_t i = 0; i < c_floats; ++i) c0[i] = host_random();
  float *d_a = pgt_malloc_device(a_floats * sizeof(float));
  float *d_b = pgt_malloc_device(b_floats * sizeof(float));
  float *d_c = pgt_malloc_device(c_floats * sizeof(float));
  PGT_CUDA(cudaMemcpy(d_a, a, a_floats * sizeof(float), cudaMemcpyHostToDevice));
  PGT_CUDA(cudaMemcpy(d_b, b, b_floats * sizeof(float), cudaMemcpyHostToDevice));
  PGT_CUDA(cudaMemcpy(d_c, c0, c_floats * sizeof(float), cudaMemcpyHostToDevice));
  char name[96];
  snprintf(name, sizeof name, "%s transa %d transb %d, batch %d",
           batch == 1 ? "pg_blas_sgemm" : "pg_blas_sgemm_strided_batched", transa, transb, batch);
  ++checks;
  const pg_status st =
      batch == 1 ? pg_blas_sgemm(stream, transa, transb, m, n, k, &alpha, d_a, lda, d_b, ldb,
                                 &beta, d_c, ldc)
                 : pg_blas_sgemm_strided_batched(stream, transa, transb, m, n, k, &alpha, d_a,
                                                 lda, stride_a, d_b, ldb, stride_b, &beta, d_c,
                                                 ldc, stride_c, batch);
  PGT_CUDA(cudaStreamSynchronize(stream));
  PGT_CUDA(cudaMemcpy(c, d_c, c_floats * sizeof(float), cudaMemcpyDeviceToHost));
  if (st != PG_OK) {
    fail("%s: returned %s (%s)", name, pg_status_name(st), pg_last_error_detail());
  } else {
    long long wrong = 0, outside = 0;
    for (int i = 0; i < batch; ++i) {
      const float *ai = a + (size_t)i * stride_a, *ci0 = c0 + (size_t)i * stride_c;
      const float *ci = c + (size_t)i * stride_c;
      for (int col = 0; col < n; ++col)
        for (int row = 0; row < m; ++row) {
          double sum = 0.0, abs_sum = 0.0;
          for (int p = 0; p < k; ++p) {
            /* op(A)(row, p) and op(B)(p, col), column-major: X(r, c) = X[r + c ld]. */
            const double x = transa == 0 ? ai[row + (size_t)p * lda] : ai[p + (size_t)row * lda];
            const double y = transb == 0 ? b[p + (size_t)col * ldb] : b[col + (size_t)p * ldb];
            sum += x * y;
            abs_sum += fabs(x * y);
          }
          const double bc = (double)beta * ci0[row + (size_t)col * ldc];
          const double ref = alpha * sum + bc, scale = fabs((double)alpha) * abs_sum + fabs(bc);
          const float got = ci[row + (size_t)col * ldc];
          if (!pgv_element_ok(got, ref, scale, k, PG_PRECISION_STRICT) && wrong++ == 0)
            fail("%s: C_%d(%d, %d) = %.9g, want %.9g", name, i, row, col, (double)got, ref);
        }
    }
    /* Between the columns (ldc > m) and the members: as it was. */
    for (size_t at = 0; at < c_floats; ++at) {
      const size_t within = at % (size_t)stride_c;
      const int element = within < (size_t)ldc * n && within % (size_t)ldc < (size_t)m;
      if (!element && memcmp(&c[at], &c0[at], sizeof(float)) != 0 && outside++ == 0)
        fail("%s: wrote float %zu, outside every C", name, at);
    }
    if (wrong > 1) fail("%s: %lld elements wrong in all", name, wrong);
  }
  PGT_CUDA(cudaFree(d_a));
  PGT_CUDA(cudaFree(d_b));
  PGT_CUDA(cudaFree(d_c));
  free(a);
  free(b);
  free(c0);
  free(c);
}

/* One case an entry of some layouts refuses: PG_ERR_UNSUPPORTED with a
 * reason, C untouched. */
static void refused_case(const pg_variant_info *v, const layout_case *lc, uint64_t seed) {
  problem p;
  setup(&p, lc, v->name, seed);
  ++checks;
  const pg_status st = pg_gemm(v->name, 0, &p.g, stream);
  if (st != PG_ERR_UNSUPPORTED || pg_last_error_detail()[0] == '\0')
    fail("%s: pg_gemm returned %s (\"%s\"), want PG_ERR_UNSUPPORTED with a reason", p.name,
         pg_status_name(st), pg_last_error_detail());
  c_untouched(&p, "refused");
  release(&p);
}

/* ---- an entry of some layouts: skinny_ffma's DOT form --------------------------
 * A short side (1 to 8) whose long operand runs along K: op(B) = T for a
 * short M, op(A) = N for a short N, either op of the short operand, one
 * GEMM or a batch. Each such case against the reference (long rows of an
 * odd count and K past a chunk of 512 with a tail, rows that 16-byte loads
 * cannot read, gaps, alpha and beta); the layouts it does not take refused
 * with a reason and C untouched. */
static void some_layouts(const pg_variant_info *v) {
  uint64_t seed = 5000;
  const layout_case take[] = {
      {"short M, op(B) T", 1, 1000, 1100, 1, 1, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 0},
      {"short M, op(A) T, op(B) T", 3, 333, 777, 1, 3, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 0},
      {"short M of 8, 16-byte rows", 8, 256, 1024, 1, 1, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 0},
      {"short M of 5, a batch, gaps", 5, 200, 600, 7, 1, 1, 3, 2, 5, 3, 7, 0.75f, -1.25f, 0},
      {"short M, B shared", 2, 130, 515, 3, 3, 0, 0, 0, 0, SHARED, 0, 1.0f, 0.5f, 0},
      {"short N, op N, N over a batch", 1000, 1, 1100, 2, 0, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 0},
      {"short N, op(B) T", 777, 6, 900, 1, 1, 4, 0, 1, 0, 0, 0, 1.0f, 0.5f, 0},
      {"short N of 8, a batch, A shared", 300, 8, 513, 3, 1, 0, 0, 0, SHARED, 0, 0, 1.0f, 0.0f, 0},
      {"short M, 65537 GEMMs", 2, 8, 8, 65537, 1, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 0},
      {"short M above a shorter N, op T, T", 8, 4, 700, 1, 3, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 0},
      {"both short, op N, N over a batch", 4, 4, 300, 2, 0, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 0},
      {"short N above a shorter M, op N, N batch", 2, 6, 300, 2, 0, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 0},
  };
  for (size_t i = 0; i < sizeof take / sizeof take[0]; ++i) run_case(v, &take[i], seed += 10);
  const layout_case refused[] = {
      {"short M, op(A) T, op(B) N: refused", 3, 200, 300, 1, 2, 0, 0, 0, 0, 0, 0, 1.0f, 0.5f, 0},
      {"short N, op(A) T: refused", 200, 3, 300, 1, 2, 0, 0, 0, 0, 0, 0, 1.0f, 0.5f, 0},
      {"no short side, op(B) T: refused", 64, 64, 64, 1, 1, 0, 0, 0, 0, 0, 0, 1.0f, 0.5f, 0},
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i)
    refused_case(v, &refused[i], seed += 10);
}

/* wgmma_fp16x3 beyond every_layout's cases, held to the emulated bound:
 * each op at partial tiles, at padded leading dimensions with alpha and
 * beta and K past a stage, several tiles over a batch (a GEMM's tiles in
 * pairs of a cluster, the batch's GEMMs one after the other on the grid),
 * B shared, with 16-byte rows (wgmma_3xtf32's kernel after it) and not.
 * Its 3xTF32 tiles at each op: test_gpu_fp16x3. */
static void fp16x3_layouts(const pg_variant_info *v) {
  uint64_t seed = 7000;
  for (int op = 0; op < 4; ++op) {
    const layout_case take[] = {
        {"partial tiles", 300, 257, 200, 1, op, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 0},
        {"padded rows, beta", 256, 384, 1000, 1, op, 3, 5, 1, 0, 0, 0, 0.75f, -1.25f, 0},
        {"several tiles, a batch, gaps", 300, 257, 200, 3, op, 0, 0, 0, 5, 3, 7, 1.0f, 0.5f, 0},
        {"several tiles, a batch, B shared, 16-byte rows", 256, 384, 136, 3, op, 0, 0, 0, 0,
         SHARED, 0, 1.0f, 0.0f, 0},
    };
    for (size_t i = 0; i < sizeof take / sizeof take[0]; ++i) run_case(v, &take[i], seed += 10);
  }
}

int main(void) {
  if (!pgt_have_device()) return PG_TEST_SKIP;
  PGT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const char *max_text = getenv("PG_TEST_MAX_BATCH");
  if (max_text != NULL && *max_text != '\0') max_batch = strtoll(max_text, NULL, 10);
  int any = 0, some = 0, study = 0, not_here = 0;
  for (int i = 0; i < pg_variant_count(); ++i) {
    const pg_variant_info *v = pg_variant_at(i);
    if (!pgt_selected(v->name)) continue;
    const pg_status supported = pg_variant_supported(v, 0);
    if (supported != PG_OK) {
      /* The GPU does not run it (test_gpu_badargs holds the reason to
       * PG_ERR_ARCH or PG_ERR_SMEM). */
      printf("note: %s: %s, not run here\n", v->name, pg_status_name(supported));
      ++not_here;
      continue;
    }
    if (v->layouts == PG_LAYOUT_ANY) {
      ++any;
      every_layout(v);
      if (strcmp(v->name, "wgmma_fp16x3") == 0) fp16x3_layouts(v);
      bad_strides(v);
      plan_on_other_matrices(v);
      graph_and_bits(v);
    } else if (v->layouts == PG_LAYOUT_SOME) {
      ++some;
      some_layouts(v);
      study_kernel_refuses(v); /* its cases have no short side */
    } else {
      ++study;
      study_kernel_refuses(v);
    }
  }
  if (pgt_selected("auto")) {
    /* CUBLAS_OP_C (2) is the transpose of a real matrix. */
    for (int transa = 0; transa < 3; ++transa)
      for (int transb = 0; transb < 3; ++transb) {
        blas_case(transa, transb, 1);
        blas_case(transa, transb, 3);
      }
  }
  PGT_CUDA(cudaStreamDestroy(stream));
  pg_shutdown();
  printf("test_gpu_layouts: %d entries of every layout, %d of some, %d study kernels, %d not "
         "run here; %d checks (%d of them a TMA reader's refusal of a layout TMA cannot read), "
         "%d failed\n",
         any, some, study, not_here, checks, tma_refusals, failures);
  if (left_out > 0)
    printf("test_gpu_layouts: %d cases of more than %lld GEMMs left out (PG_TEST_MAX_BATCH)\n",
           left_out, max_batch);
  if (any == 0 && pgt_selected("auto")) {
    printf("FAIL: no entry of the registry takes every layout (pg_variant_info.layouts)\n");
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
