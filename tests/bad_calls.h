/* The argument cases of every entry point that takes a problem, written
 * once and run twice: by test_args (host buffers, which a rejected call must
 * never touch, no GPU needed) and by test_gpu_badargs (device buffers,
 * copied back and compared). Each case starts from a valid call and breaks
 * one thing; cases with nothing to do must return PG_OK and leave C as it
 * was too. A call is row-major, as pg_gemm_desc; the column-major entry
 * points (pg_blas_sgemm and its batched form) get it as C^T = op(B)^T
 * op(A)^T, so that one table holds all of them to the same rules. */
#ifndef PGT_BAD_CALLS_H
#define PGT_BAD_CALLS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pipegemm.h"

typedef struct {
  const char *variant;
  int stages, m, n, k;
  float alpha;
  const float *a;
  int lda;
  const float *b;
  int ldb;
  float beta;
  float *c;
  int ldc;
  /* The layout (pg_gemm_desc): op values as ints, so that a case may hold
   * one that is neither N nor T; batch 1 in a valid call. */
  int op_a, op_b;
  int batch;
  long long stride_a, stride_b, stride_c;
} pgt_call;

static inline pg_status pgt_run(const pgt_call *c, cudaStream_t stream) {
  return pg_sgemm(c->variant, c->stages, c->m, c->n, c->k, c->alpha, c->a, c->lda, c->b,
                  c->ldb, c->beta, c->c, c->ldc, stream);
}

/* ---- every public entry point that takes a problem ------------------------
 * Each case below runs through each of them, so that a function added to
 * the header is held to the same rules by adding one row here. `takes`:
 * which of the call's arguments the entry point has beyond the problem (M,
 * N, K, A, lda, B, ldb); a case that breaks one it lacks is not run
 * through it. */
enum { PGT_TAKES_VARIANT = 1, PGT_TAKES_OUTPUT = 2, PGT_TAKES_OPS = 4, PGT_TAKES_BATCH = 8 };

static inline pg_status pgt_run_variant(const pgt_call *c, cudaStream_t stream) {
  const pg_variant_info *v = pg_variant_find(c->variant);
  return pg_sgemm_variant(v, c->stages, c->m, c->n, c->k, c->alpha, c->a, c->lda, c->b, c->ldb,
                          c->beta, c->c, c->ldc, stream);
}

static inline pg_status pgt_run_plan(const pgt_call *c, cudaStream_t stream) {
  pg_plan *plan = (pg_plan *)&plan; /* must come back NULL on failure */
  pg_status st = pg_plan_create(&plan, pg_variant_find(c->variant), c->stages, c->m, c->n, c->k,
                                c->alpha, c->a, c->lda, c->b, c->ldb, c->beta, c->c, c->ldc);
  /* A plan left behind by a failure is a broken promise: a status no case
   * wants (here and below), so the check fails. */
  if (st != PG_OK) return plan == NULL ? st : PG_ERR_CUDA;
  st = pg_plan_launch(plan, stream);
  pg_plan_destroy(plan);
  return st;
}

static inline pg_status pgt_run_accepts(const pgt_call *c, cudaStream_t stream) {
  (void)stream;
  return pg_variant_accepts(pg_variant_find(c->variant), c->stages, c->m, c->n, c->k, c->a,
                            c->lda, c->b, c->ldb, c->c, c->ldc);
}

/* pg_auto_select answers for `auto` alone: where M or N is 0 it must say
 * that nothing runs (NULL, 0 stages), else name an entry. */
static inline pg_status pgt_run_auto_select(const pgt_call *c, cudaStream_t stream) {
  (void)stream;
  const pg_variant_info *chosen = (const pg_variant_info *)&chosen;
  int stages = -1;
  pg_status st = pg_auto_select(c->m, c->n, c->k, c->a, c->lda, c->b, c->ldb, &chosen, &stages);
  if (st != PG_OK) return st;
  if (c->m == 0 || c->n == 0) return chosen == NULL && stages == 0 ? PG_OK : PG_ERR_CUDA;
  const int named = chosen != NULL && pg_variant_find(chosen->name) == chosen &&
                    stages >= chosen->min_stages && stages <= chosen->max_stages;
  return named ? PG_OK : PG_ERR_CUDA;
}

/* The call as the library's description of it. */
static inline pg_gemm_desc pgt_desc(const pgt_call *c) {
  pg_gemm_desc g = PG_GEMM_DESC_INIT;
  g.op_a = (pg_op)c->op_a;
  g.op_b = (pg_op)c->op_b;
  g.m = c->m;
  g.n = c->n;
  g.k = c->k;
  g.alpha = c->alpha;
  g.beta = c->beta;
  g.a = c->a;
  g.b = c->b;
  g.c = c->c;
  g.lda = c->lda;
  g.ldb = c->ldb;
  g.ldc = c->ldc;
  g.batch = c->batch;
  g.stride_a = c->stride_a;
  g.stride_b = c->stride_b;
  g.stride_c = c->stride_c;
  return g;
}

static inline pg_status pgt_run_gemm(const pgt_call *c, cudaStream_t stream) {
  const pg_gemm_desc g = pgt_desc(c);
  return pg_gemm(c->variant, c->stages, &g, stream);
}

static inline pg_status pgt_run_plan_gemm(const pgt_call *c, cudaStream_t stream) {
  const pg_gemm_desc g = pgt_desc(c);
  pg_plan *plan = (pg_plan *)&plan; /* must come back NULL on failure */
  pg_status st = pg_plan_create_gemm(&plan, pg_variant_find(c->variant), c->stages, &g);
  if (st != PG_OK) return plan == NULL ? st : PG_ERR_CUDA;
  st = pg_plan_launch(plan, stream);
  pg_plan_destroy(plan);
  return st;
}

static inline pg_status pgt_run_accepts_gemm(const pgt_call *c, cudaStream_t stream) {
  (void)stream;
  const pg_gemm_desc g = pgt_desc(c);
  return pg_variant_accepts_gemm(pg_variant_find(c->variant), c->stages, &g);
}

/* A selector's choice: where M, N or the batch is 0, that nothing runs
 * (NULL, 0 stages), else a registry entry at a stage count it takes. */
static inline pg_status pgt_run_selector_choice(const pgt_call *c, cudaStream_t stream) {
  (void)stream;
  const pg_gemm_desc g = pgt_desc(c);
  const pg_variant_info *chosen = (const pg_variant_info *)&chosen;
  int stages = -1;
  pg_status st = pg_selector_choice(pg_variant_find(c->variant), &g, &chosen, &stages);
  if (st != PG_OK) return st;
  if (c->m == 0 || c->n == 0 || c->batch == 0)
    return chosen == NULL && stages == 0 ? PG_OK : PG_ERR_CUDA;
  const int named = chosen != NULL && pg_variant_find(chosen->name) == chosen &&
                    stages >= chosen->min_stages && stages <= chosen->max_stages;
  return named ? PG_OK : PG_ERR_CUDA;
}

/* The row-major call in cuBLAS's column-major terms: C^T (n x m) = op(B)^T
 * op(A)^T, B first with its op and ld, then A. */
static inline pg_status pgt_run_blas(const pgt_call *c, cudaStream_t stream) {
  return pg_blas_sgemm(stream, c->op_b, c->op_a, c->n, c->m, c->k, &c->alpha, c->b, c->ldb, c->a,
                       c->lda, &c->beta, c->c, c->ldc);
}

static inline pg_status pgt_run_blas_batched(const pgt_call *c, cudaStream_t stream) {
  return pg_blas_sgemm_strided_batched(stream, c->op_b, c->op_a, c->n, c->m, c->k, &c->alpha,
                                       c->b, c->ldb, c->stride_b, c->a, c->lda, c->stride_a,
                                       &c->beta, c->c, c->ldc, c->stride_c, c->batch);
}

typedef struct {
  const char *name;
  pg_status (*run)(const pgt_call *c, cudaStream_t stream);
  unsigned takes;
  const char *only_for; /* NULL: every variant; else that variant's cases only */
  /* 1: the selectors' cases alone (pg_selector_choice). */
  int only_selectors;
  /* 1: the column-major order (A and B, M and N swapped), whose refusals
   * name the caller's own arguments (pgt_detail_word_for). */
  int column_major;
} pgt_entry_point;

static const pgt_entry_point pgt_entry_points[] = {
    {"pg_sgemm", pgt_run, PGT_TAKES_VARIANT | PGT_TAKES_OUTPUT, NULL, 0, 0},
    {"pg_sgemm_variant", pgt_run_variant, PGT_TAKES_VARIANT | PGT_TAKES_OUTPUT, NULL, 0, 0},
    {"pg_plan_create", pgt_run_plan, PGT_TAKES_VARIANT | PGT_TAKES_OUTPUT, NULL, 0, 0},
    {"pg_variant_accepts", pgt_run_accepts, PGT_TAKES_VARIANT | PGT_TAKES_OUTPUT, NULL, 0, 0},
    {"pg_auto_select", pgt_run_auto_select, 0, "auto", 0, 0},
    {"pg_gemm", pgt_run_gemm,
     PGT_TAKES_VARIANT | PGT_TAKES_OUTPUT | PGT_TAKES_OPS | PGT_TAKES_BATCH, NULL, 0, 0},
    {"pg_plan_create_gemm", pgt_run_plan_gemm,
     PGT_TAKES_VARIANT | PGT_TAKES_OUTPUT | PGT_TAKES_OPS | PGT_TAKES_BATCH, NULL, 0, 0},
    {"pg_variant_accepts_gemm", pgt_run_accepts_gemm,
     PGT_TAKES_VARIANT | PGT_TAKES_OUTPUT | PGT_TAKES_OPS | PGT_TAKES_BATCH, NULL, 0, 0},
    /* What a selector would run: C is not its business. */
    {"pg_selector_choice", pgt_run_selector_choice, PGT_TAKES_OPS | PGT_TAKES_BATCH, NULL, 1, 0},
    /* They run auto. */
    {"pg_blas_sgemm", pgt_run_blas, PGT_TAKES_OUTPUT | PGT_TAKES_OPS, "auto", 0, 1},
    {"pg_blas_sgemm_strided_batched", pgt_run_blas_batched,
     PGT_TAKES_OUTPUT | PGT_TAKES_OPS | PGT_TAKES_BATCH, "auto", 0, 1},
};
#define PGT_ENTRY_POINTS ((int)(sizeof pgt_entry_points / sizeof pgt_entry_points[0]))

/* Whether the entry point answers for variant v at all. */
static inline int pgt_entry_applies(const pgt_entry_point *entry, const pg_variant_info *v) {
  if (entry->only_for != NULL && strcmp(entry->only_for, v->name) != 0) return 0;
  return !entry->only_selectors || v->kind == PG_KIND_SELECTOR;
}

/* check(call, entry point, wanted status, what the case is, ctx) runs and
 * judges one case through one entry point. */
typedef void (*pgt_check_fn)(const pgt_call *call, const pgt_entry_point *entry, pg_status want,
                             const char *what, void *ctx);

/* A refused call must say in pg_last_error_detail() which argument broke
 * which rule: the detail names `word` (the argument) and, for a leading
 * dimension, its rule "max(1, ...)". NULL: a call that succeeds, whose
 * detail must be empty. Returns a message for a wrong detail, or NULL. */
static inline const char *pgt_detail_problem(const char *word, const char *detail) {
  if (word == NULL) return detail[0] == '\0' ? NULL : "a call that succeeded left a detail";
  if (detail[0] == '\0') return "no detail (pg_last_error_detail() is empty)";
  /* "lda = -6 ...", "stages = 9: ...", "C is NULL ..." */
  char named[32];
  snprintf(named, sizeof named, strlen(word) == 1 && word[0] <= 'Z' ? "%s is NULL" : "%s = ",
           word);
  if (strstr(detail, named) == NULL) return "the detail does not name the argument";
  if (word[0] == 'l' && word[1] == 'd' && strstr(detail, "max(1, ") == NULL)
    return "the detail does not state the rule ld >= max(1, width)";
  return NULL;
}

/* The argument a case breaks, as its detail must name it. */
static inline const char *pgt_detail_word(pg_status want, const char *what) {
  if (want == PG_OK) return NULL;
  if (want == PG_ERR_STAGES) return "stages";
  if (strstr(what, "NULL A") != NULL) return "A";
  if (strstr(what, "NULL B") != NULL) return "B";
  if (strstr(what, "NULL C") != NULL) return "C";
  static const char *const words[] = {"lda",      "ldb",      "ldc",      "m",    "n",
                                      "k",        "op_a",     "op_b",     "batch", "stride_a",
                                      "stride_b", "stride_c"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; ++i) {
    const size_t len = strlen(words[i]);
    /* the case names its argument first: "lda < k", "negative m", "m = INT_MIN" */
    if (strncmp(what, words[i], len) == 0 && (what[len] == ' ' || what[len] == '\0'))
      return words[i];
    if (strncmp(what, "negative ", 9) == 0 && strncmp(what + 9, words[i], len) == 0 &&
        (what[9 + len] == ' ' || what[9 + len] == '\0'))
      return words[i];
  }
  return "?";
}

/* The argument as `entry` names it: a column-major entry point's A is the
 * row-major call's B, its m the call's n, its transa op_b (and A and B both
 * NULL is its A first too). */
static inline const char *pgt_detail_word_for(const pgt_entry_point *entry, pg_status want,
                                              const char *what) {
  const char *word = pgt_detail_word(want, what);
  if (word == NULL || !entry->column_major || strstr(what, "NULL A and B") != NULL) return word;
  static const char *const swaps[][2] = {
      {"lda", "ldb"}, {"ldb", "lda"}, {"m", "n"},         {"n", "m"},
      {"A", "B"},     {"B", "A"},     {"op_a", "transb"}, {"op_b", "transa"},
      {"stride_a", "stride_b"},       {"stride_b", "stride_a"},
      {"batch", "batch_count"}};
  for (size_t i = 0; i < sizeof swaps / sizeof swaps[0]; ++i)
    if (strcmp(word, swaps[i][0]) == 0) return swaps[i][1];
  return word;
}

/* Every case for variant v, from `valid` (a dense call with m, n, k > 1,
 * op N, N and batch 1), through every entry point that takes what the case
 * breaks. */
static inline void pgt_for_each_bad_call(const pg_variant_info *v, const pgt_call *valid,
                                         pgt_check_fn check, void *ctx) {
  pgt_call c;
#define PGT_CASE(needs, mutation, want, what)                                           \
  for (int e_ = 0; e_ < PGT_ENTRY_POINTS; ++e_) {                                       \
    const pgt_entry_point *entry_ = &pgt_entry_points[e_];                              \
    if ((entry_->takes & (needs)) != (needs) || !pgt_entry_applies(entry_, v))          \
      continue;                                                                         \
    c = *valid;                                                                         \
    mutation;                                                                           \
    check(&c, entry_, want, what, ctx);                                                 \
  }
  PGT_CASE(0, c.m = -1, PG_ERR_INVALID_ARG, "negative m");
  PGT_CASE(0, c.n = -1, PG_ERR_INVALID_ARG, "negative n");
  PGT_CASE(0, c.k = -1, PG_ERR_INVALID_ARG, "negative k");
  PGT_CASE(0, c.m = INT32_MIN, PG_ERR_INVALID_ARG, "m = INT_MIN");
  PGT_CASE(0, c.n = INT32_MIN, PG_ERR_INVALID_ARG, "n = INT_MIN");
  PGT_CASE(0, c.n = -(1 << 20), PG_ERR_INVALID_ARG, "n = -2^20");
  PGT_CASE(0, c.k = INT32_MIN, PG_ERR_INVALID_ARG, "k = INT_MIN");
  PGT_CASE(0, c.lda = c.k - 1, PG_ERR_INVALID_ARG, "lda < k");
  PGT_CASE(0, c.ldb = c.n - 1, PG_ERR_INVALID_ARG, "ldb < n");
  PGT_CASE(PGT_TAKES_OUTPUT, c.ldc = c.n - 1, PG_ERR_INVALID_ARG, "ldc < n");
  PGT_CASE(0, c.lda = -c.lda, PG_ERR_INVALID_ARG, "negative lda");
  PGT_CASE(0, c.ldb = INT32_MIN, PG_ERR_INVALID_ARG, "ldb = INT_MIN");
  /* BLAS rule: ld >= max(1, width), checked before the quick return. */
  PGT_CASE(0, (c.k = 0, c.lda = 0), PG_ERR_INVALID_ARG, "lda 0 with k 0");
  PGT_CASE(0, (c.n = 0, c.ldb = 0), PG_ERR_INVALID_ARG, "ldb 0 with n 0");
  PGT_CASE(PGT_TAKES_OUTPUT, (c.n = 0, c.ldc = 0), PG_ERR_INVALID_ARG, "ldc 0 with n 0");
  PGT_CASE(0, (c.m = 0, c.k = 0, c.lda = 0), PG_ERR_INVALID_ARG, "lda 0 with m 0, k 0");
  PGT_CASE(0, (c.m = -1, c.lda = 0), PG_ERR_INVALID_ARG, "negative m with lda 0");
  PGT_CASE(PGT_TAKES_OUTPUT, c.c = NULL, PG_ERR_INVALID_ARG, "NULL C");
  PGT_CASE(PGT_TAKES_OUTPUT, (c.c = NULL, c.k = 0, c.lda = 1), PG_ERR_INVALID_ARG,
           "NULL C with k 0 (C = beta*C is work)");
  PGT_CASE(0, c.a = NULL, PG_ERR_INVALID_ARG, "NULL A with k > 0");
  PGT_CASE(0, c.b = NULL, PG_ERR_INVALID_ARG, "NULL B with k > 0");
  PGT_CASE(0, (c.a = NULL, c.b = NULL), PG_ERR_INVALID_ARG, "NULL A and B");
  PGT_CASE(PGT_TAKES_VARIANT, c.stages = v->max_stages + 1, PG_ERR_STAGES, "stages above max");
  PGT_CASE(PGT_TAKES_VARIANT, c.stages = 1000, PG_ERR_STAGES, "stages 1000");
  PGT_CASE(PGT_TAKES_VARIANT, c.stages = -1, PG_ERR_STAGES, "negative stages");
  if (v->min_stages > 1)
    PGT_CASE(PGT_TAKES_VARIANT, c.stages = v->min_stages - 1, PG_ERR_STAGES, "stages below min");
  /* Nothing to do: PG_OK at once, pointers unused, C untouched. */
  PGT_CASE(0, c.m = 0, PG_OK, "m 0");
  PGT_CASE(0, (c.n = 0, c.ldb = 1, c.ldc = 1), PG_OK, "n 0");
  PGT_CASE(0, (c.m = 0, c.n = 0, c.k = 0, c.lda = 1, c.ldb = 1, c.ldc = 1), PG_OK, "m n k 0");
  PGT_CASE(0, (c.m = 0, c.a = NULL, c.b = NULL, c.c = NULL), PG_OK, "m 0, NULL pointers");
  PGT_CASE(0, (c.n = 0, c.ldb = 1, c.ldc = 1, c.a = NULL, c.b = NULL, c.c = NULL), PG_OK,
           "n 0, NULL pointers");

  /* ---- layouts and batches (pg_gemm_desc's rules) ----
   * An op that is neither N nor T (nor cuBLAS's C, which the column-major
   * entry points take as T). */
  PGT_CASE(PGT_TAKES_OPS, c.op_a = 7, PG_ERR_INVALID_ARG, "op_a 7");
  PGT_CASE(PGT_TAKES_OPS, c.op_b = -1, PG_ERR_INVALID_ARG, "op_b -1");
  PGT_CASE(PGT_TAKES_OPS, (c.op_a = PG_OP_T, c.op_b = 1000), PG_ERR_INVALID_ARG, "op_b 1000");
  /* A stored K x M (op_a T) has rows of M: an lda that would do for op N
   * (at least K) is refused below M; likewise B stored N x K (op_b T) and
   * an ldb at least N but below K. */
  PGT_CASE(PGT_TAKES_OPS, (c.op_a = PG_OP_T, c.m = c.k + 2, c.lda = c.k + 1), PG_ERR_INVALID_ARG,
           "lda < m with op_a T");
  PGT_CASE(PGT_TAKES_OPS, (c.op_b = PG_OP_T, c.k = c.n + 2, c.lda = c.k, c.ldb = c.n),
           PG_ERR_INVALID_ARG, "ldb < k with op_b T");
  PGT_CASE(PGT_TAKES_OPS, (c.op_a = PG_OP_T, c.m = 0, c.lda = 0), PG_ERR_INVALID_ARG,
           "lda 0 with op_a T and m 0");
  PGT_CASE(PGT_TAKES_OPS, (c.op_b = PG_OP_T, c.k = 0, c.lda = 1, c.ldb = 0), PG_ERR_INVALID_ARG,
           "ldb 0 with op_b T and k 0");
  /* The batch: a count, strides that are not negative, Cs apart. */
  PGT_CASE(PGT_TAKES_BATCH, c.batch = -1, PG_ERR_INVALID_ARG, "negative batch");
  PGT_CASE(PGT_TAKES_BATCH, c.batch = INT32_MIN, PG_ERR_INVALID_ARG, "batch = INT_MIN");
  PGT_CASE(PGT_TAKES_BATCH,
           (c.batch = 2, c.stride_c = (long long)c.m * c.ldc, c.stride_a = -1),
           PG_ERR_INVALID_ARG, "negative stride_a with batch 2");
  PGT_CASE(PGT_TAKES_BATCH,
           (c.batch = 3, c.stride_c = (long long)c.m * c.ldc, c.stride_b = INT64_MIN),
           PG_ERR_INVALID_ARG, "negative stride_b with batch 3");
  PGT_CASE(PGT_TAKES_BATCH | PGT_TAKES_OUTPUT, (c.batch = 2, c.stride_c = -1),
           PG_ERR_INVALID_ARG, "negative stride_c with batch 2");
  PGT_CASE(PGT_TAKES_BATCH | PGT_TAKES_OUTPUT,
           (c.batch = 2, c.stride_c = (long long)(c.m - 1) * c.ldc + c.n - 1),
           PG_ERR_INVALID_ARG, "stride_c below (m - 1) * ldc + n: the Cs overlap");
  PGT_CASE(PGT_TAKES_BATCH | PGT_TAKES_OUTPUT, (c.batch = 2, c.stride_c = 0), PG_ERR_INVALID_ARG,
           "stride_c 0 with batch 2");
  PGT_CASE(PGT_TAKES_BATCH | PGT_TAKES_OUTPUT | PGT_TAKES_OPS,
           (c.batch = 2, c.op_a = PG_OP_T, c.op_b = PG_OP_T, c.lda = c.m, c.ldb = c.k,
            c.stride_c = (long long)(c.m - 1) * c.ldc + c.n - 1),
           PG_ERR_INVALID_ARG, "stride_c below (m - 1) * ldc + n with op T, T");
  PGT_CASE(PGT_TAKES_BATCH, (c.batch = 0, c.lda = 0), PG_ERR_INVALID_ARG, "lda 0 with batch 0");
  /* Batch 0: nothing to do, whatever the strides and pointers; one GEMM
   * has no strides to judge. */
  PGT_CASE(PGT_TAKES_BATCH, c.batch = 0, PG_OK, "batch 0");
  PGT_CASE(PGT_TAKES_BATCH, (c.batch = 0, c.a = NULL, c.b = NULL, c.c = NULL), PG_OK,
           "batch 0, NULL pointers");
  PGT_CASE(PGT_TAKES_BATCH, (c.batch = 0, c.stride_a = -1, c.stride_c = -5), PG_OK,
           "batch 0 with negative strides");
  PGT_CASE(PGT_TAKES_BATCH, (c.batch = 5, c.m = 0, c.stride_c = 0), PG_OK,
           "batch 5 with m 0 (no C to overlap)");
#undef PGT_CASE
}

#endif
