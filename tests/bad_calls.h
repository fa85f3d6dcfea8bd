/* The argument cases of pg_sgemm, written once and run twice: by test_args
 * (host buffers, which a rejected call must never touch, no GPU needed) and
 * by test_gpu_badargs (device buffers, copied back and compared). Each case
 * starts from a valid call and breaks one thing; cases with nothing to do
 * must return PG_OK and leave C as it was too. */
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
} pgt_call;

static inline pg_status pgt_run(const pgt_call *c, cudaStream_t stream) {
  return pg_sgemm(c->variant, c->stages, c->m, c->n, c->k, c->alpha, c->a, c->lda, c->b,
                  c->ldb, c->beta, c->c, c->ldc, stream);
}

/* check(call, wanted status, what the case is, ctx) runs and judges one case. */
typedef void (*pgt_check_fn)(const pgt_call *call, pg_status want, const char *what, void *ctx);

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
  static const char *const words[] = {"lda", "ldb", "ldc", "m", "n", "k"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; ++i) {
    const size_t len = strlen(words[i]);
    /* the case names its argument first: "lda < k", "negative m", "m = INT_MIN" */
    if (strncmp(what, words[i], len) == 0 && (what[len] == ' ' || what[len] == '\0'))
      return words[i];
    if (strncmp(what, "negative ", 9) == 0 && strcmp(what + 9, words[i]) == 0) return words[i];
  }
  return "?";
}

/* Every case for variant v, from `valid` (a dense call with m, n, k > 1). */
static inline void pgt_for_each_bad_call(const pg_variant_info *v, const pgt_call *valid,
                                         pgt_check_fn check, void *ctx) {
  pgt_call c;
#define PGT_CASE(mutation, want, what) \
  do {                                 \
    c = *valid;                        \
    mutation;                          \
    check(&c, want, what, ctx);        \
  } while (0)
  PGT_CASE(c.m = -1, PG_ERR_INVALID_ARG, "negative m");
  PGT_CASE(c.n = -1, PG_ERR_INVALID_ARG, "negative n");
  PGT_CASE(c.k = -1, PG_ERR_INVALID_ARG, "negative k");
  PGT_CASE(c.m = INT32_MIN, PG_ERR_INVALID_ARG, "m = INT_MIN");
  PGT_CASE(c.lda = c.k - 1, PG_ERR_INVALID_ARG, "lda < k");
  PGT_CASE(c.ldb = c.n - 1, PG_ERR_INVALID_ARG, "ldb < n");
  PGT_CASE(c.ldc = c.n - 1, PG_ERR_INVALID_ARG, "ldc < n");
  PGT_CASE(c.lda = -c.lda, PG_ERR_INVALID_ARG, "negative lda");
  /* BLAS rule: ld >= max(1, width), checked before the quick return. */
  PGT_CASE((c.k = 0, c.lda = 0), PG_ERR_INVALID_ARG, "lda 0 with k 0");
  PGT_CASE((c.n = 0, c.ldb = 0), PG_ERR_INVALID_ARG, "ldb 0 with n 0");
  PGT_CASE((c.n = 0, c.ldc = 0), PG_ERR_INVALID_ARG, "ldc 0 with n 0");
  PGT_CASE((c.m = 0, c.k = 0, c.lda = 0), PG_ERR_INVALID_ARG, "lda 0 with m 0, k 0");
  PGT_CASE(c.c = NULL, PG_ERR_INVALID_ARG, "NULL C");
  PGT_CASE((c.c = NULL, c.k = 0, c.lda = 1), PG_ERR_INVALID_ARG,
           "NULL C with k 0 (C = beta*C is work)");
  PGT_CASE(c.a = NULL, PG_ERR_INVALID_ARG, "NULL A with k > 0");
  PGT_CASE(c.b = NULL, PG_ERR_INVALID_ARG, "NULL B with k > 0");
  PGT_CASE((c.a = NULL, c.b = NULL), PG_ERR_INVALID_ARG, "NULL A and B");
  PGT_CASE(c.stages = v->max_stages + 1, PG_ERR_STAGES, "stages above max");
  PGT_CASE(c.stages = 1000, PG_ERR_STAGES, "stages 1000");
  PGT_CASE(c.stages = -1, PG_ERR_STAGES, "negative stages");
  if (v->min_stages > 1) PGT_CASE(c.stages = v->min_stages - 1, PG_ERR_STAGES, "stages below min");
  /* Nothing to do: PG_OK at once, pointers unused, C untouched. */
  PGT_CASE(c.m = 0, PG_OK, "m 0");
  PGT_CASE((c.n = 0, c.ldb = 1, c.ldc = 1), PG_OK, "n 0");
  PGT_CASE((c.m = 0, c.n = 0, c.k = 0, c.lda = 1, c.ldb = 1, c.ldc = 1), PG_OK, "m n k 0");
  PGT_CASE((c.m = 0, c.a = NULL, c.b = NULL, c.c = NULL), PG_OK, "m 0, NULL pointers");
  PGT_CASE((c.n = 0, c.ldb = 1, c.ldc = 1, c.a = NULL, c.b = NULL, c.c = NULL), PG_OK,
           "n 0, NULL pointers");
#undef PGT_CASE
}

#endif
