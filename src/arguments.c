/* A GEMM's arguments: the caller's description read under its size, and
 * checked against the rules every entry point applies (pg_gemm_desc in
 * include/pipegemm.h), in BLAS's order: sizes, then leading dimensions and
 * strides (before the quick return where nothing is to be done), then the
 * pointers that will be read or written. A refusal names the argument and
 * the rule it broke, and nothing is touched. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

/* The first pg_gemm_desc (0.5.0's) ended with stride_c. */
#define PG_GEMM_DESC_MIN_SIZE (offsetof(pg_gemm_desc, stride_c) + sizeof(long long))

static long long max_ll(long long a, long long b) { return a > b ? a : b; }

pg_status pg_gemm_desc_read(const pg_gemm_desc *gemm, pg_gemm_desc *out) {
  const pg_gemm_desc defaults = PG_GEMM_DESC_INIT;
  *out = defaults;
  if (gemm == NULL) {
    pg_set_error_detail("no GEMM described (NULL)");
    return PG_ERR_INVALID_ARG;
  }
  if (gemm->size < PG_GEMM_DESC_MIN_SIZE) {
    pg_set_error_detail("gemm->size = %zu is below %zu: start from PG_GEMM_DESC_INIT", gemm->size,
                        (size_t)PG_GEMM_DESC_MIN_SIZE);
    return PG_ERR_INVALID_ARG;
  }
  /* A newer caller's struct is longer: its fields past ours are not ours
   * to read; an older one's shorter, and ours past it keep their defaults. */
  memcpy(out, gemm, gemm->size < sizeof *out ? gemm->size : sizeof *out);
  out->size = sizeof *out;
  return PG_OK;
}

pg_gemm_desc pg_gemm_desc_of(int m, int n, int k, float alpha, const float *a, int lda,
                             const float *b, int ldb, float beta, float *c, int ldc) {
  pg_gemm_desc gemm = PG_GEMM_DESC_INIT;
  gemm.m = m;
  gemm.n = n;
  gemm.k = k;
  gemm.alpha = alpha;
  gemm.beta = beta;
  gemm.a = a;
  gemm.b = b;
  gemm.c = c;
  gemm.lda = lda;
  gemm.ldb = ldb;
  gemm.ldc = ldc;
  return gemm;
}

/* A leading dimension against the BLAS rule ld >= max(1, row width), the
 * rows being those of the matrix as stored. */
static pg_status check_ld(const char *ld_name, long long ld, const char *width_name, int width,
                          const char *matrix) {
  if (ld >= max_ll(1, width)) return PG_OK;
  pg_set_error_detail("%s = %lld is below max(1, %s) = %lld: %s's rows are %s = %d floats "
                      "apart at least",
                      ld_name, ld, width_name, max_ll(1, width), matrix, width_name, width);
  return PG_ERR_INVALID_ARG;
}

static pg_status check_op(const char *name, pg_op op) {
  if (op == PG_OP_N || op == PG_OP_T) return PG_OK;
  pg_set_error_detail("%s = %d is neither PG_OP_N (0) nor PG_OP_T (1)", name, (int)op);
  return PG_ERR_INVALID_ARG;
}

/* Sizes, layouts, leading dimensions and strides: everything but the
 * pointers. */
static pg_status check_shape(const pg_gemm_desc *g, int with_c) {
  const struct {
    const char *name;
    int value;
  } sizes[] = {{"m", g->m}, {"n", g->n}, {"k", g->k}, {"batch", g->batch}};
  for (int i = 0; i < 4; ++i)
    if (sizes[i].value < 0) {
      pg_set_error_detail("%s = %d is negative", sizes[i].name, sizes[i].value);
      return PG_ERR_INVALID_ARG;
    }
  pg_status st = check_op("op_a", g->op_a);
  if (st == PG_OK) st = check_op("op_b", g->op_b);
  if (st != PG_OK) return st;
  /* A is stored M x K (rows of K) or, transposed, K x M (rows of M). */
  st = g->op_a == PG_OP_N ? check_ld("lda", g->lda, "k", g->k, "A")
                          : check_ld("lda", g->lda, "m", g->m, "A (stored K x M, op_a T)");
  if (st == PG_OK)
    st = g->op_b == PG_OP_N ? check_ld("ldb", g->ldb, "n", g->n, "B")
                            : check_ld("ldb", g->ldb, "k", g->k, "B (stored N x K, op_b T)");
  if (st == PG_OK && with_c) st = check_ld("ldc", g->ldc, "n", g->n, "C");
  if (st != PG_OK || g->batch <= 1) return st;
  const struct {
    const char *name;
    long long value;
  } strides[] = {{"stride_a", g->stride_a}, {"stride_b", g->stride_b}, {"stride_c", g->stride_c}};
  for (int i = 0; i < (with_c ? 3 : 2); ++i)
    if (strides[i].value < 0) {
      pg_set_error_detail("%s = %lld is negative (a batch's matrices follow each other)",
                          strides[i].name, strides[i].value);
      return PG_ERR_INVALID_ARG;
    }
  if (with_c && g->m > 0 && g->n > 0) {
    const long long extent = (long long)(g->m - 1) * g->ldc + g->n;
    if (g->stride_c < extent) {
      pg_set_error_detail("stride_c = %lld is below (m - 1) * ldc + n = %lld: the batch's Cs "
                          "would overlap",
                          g->stride_c, extent);
      return PG_ERR_INVALID_ARG;
    }
  }
  return PG_OK;
}

static pg_status check_operand_pointers(const pg_gemm_desc *g) {
  if (g->k > 0 && (g->a == NULL || g->b == NULL)) {
    pg_set_error_detail("%s is NULL with k = %d > 0", g->a == NULL ? "A" : "B", g->k);
    return PG_ERR_INVALID_ARG;
  }
  return PG_OK;
}

static int nothing_to_do(const pg_gemm_desc *g) { return g->m == 0 || g->n == 0 || g->batch == 0; }

pg_status pg_check_problem(const pg_gemm_desc *gemm) {
  const pg_status st = check_shape(gemm, 0);
  if (st != PG_OK || nothing_to_do(gemm)) return st;
  return check_operand_pointers(gemm);
}

pg_status pg_check_gemm(const pg_gemm_desc *gemm) {
  const pg_status st = check_shape(gemm, 1);
  if (st != PG_OK || nothing_to_do(gemm)) return st;
  if (gemm->c == NULL) {
    pg_set_error_detail("C is NULL with an m x n = %d x %d result to write", gemm->m, gemm->n);
    return PG_ERR_INVALID_ARG;
  }
  return check_operand_pointers(gemm);
}

int pg_gemm_is_empty(const pg_gemm_desc *gemm) { return nothing_to_do(gemm); }

/* A leading dimension the kernels hold in an int. */
pg_status pg_check_int_lds(const pg_gemm_desc *g) {
  const struct {
    const char *name;
    long long value;
  } lds[] = {{"lda", g->lda}, {"ldb", g->ldb}, {"ldc", g->ldc}};
  for (int i = 0; i < 3; ++i)
    if (lds[i].value > INT_MAX) {
      pg_set_error_detail("%s = %lld is past INT_MAX: no entry takes a row of more than %d "
                          "floats",
                          lds[i].name, lds[i].value, INT_MAX);
      return PG_ERR_UNSUPPORTED;
    }
  return PG_OK;
}

static int is_16_byte_aligned(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* Whether an operand's rows, as stored, may be read as 16-byte vectors: the
 * base 16-byte aligned, the rows 4 floats apart, and (in a batch) every
 * member's base too. */
static int vectors(const float *base, long long ld, long long stride, int batch) {
  return ld % 4 == 0 && is_16_byte_aligned(base) && (batch <= 1 || stride % 4 == 0);
}

void pg_set_problem(pg_layout_args *args, const pg_gemm_desc *g) {
  memset(args, 0, sizeof *args);
  args->m = g->m;
  args->n = g->n;
  args->k = g->k;
  args->alpha = g->alpha;
  args->beta = g->beta;
  args->a = g->a;
  args->b = g->b;
  args->c = g->c;
  args->lda = (int)g->lda;
  args->ldb = (int)g->ldb;
  args->ldc = (int)g->ldc;
  args->op_a = g->op_a == PG_OP_T;
  args->op_b = g->op_b == PG_OP_T;
  args->batch = g->batch > 0 ? g->batch : 1;
  if (args->batch > 1) {
    args->stride_a = g->stride_a;
    args->stride_b = g->stride_b;
    args->stride_c = g->stride_c;
  }
  args->vec_a = vectors(g->a, g->lda, args->stride_a, args->batch);
  args->vec_b = vectors(g->b, g->ldb, args->stride_b, args->batch);
}
