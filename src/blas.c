/* The column-major entries in cuBLAS's argument order (pg_blas_sgemm,
 * pg_blas_sgemm_strided_batched): checked in BLAS's own terms, so that a
 * refusal names the caller's argument ("lda = 3 is below max(1, m) = 4"),
 * then mapped onto the row-major core: a column-major X (r x c, ld) is the
 * row-major X^T (c x r, ld), so column-major C = op(A) op(B) is row-major
 * C^T = op(B)^T op(A)^T, with B first, A second, each keeping its op. */
#include <stddef.h>

#include "internal.h"

/* cuBLAS's operation values: N 0, T 1, C 2 (the transpose, for a real
 * matrix). */
static pg_status op_of(const char *name, int value, pg_op *op) {
  if (value == 0 || value == 1 || value == 2) {
    *op = value == 0 ? PG_OP_N : PG_OP_T;
    return PG_OK;
  }
  pg_set_error_detail("%s = %d is none of CUBLAS_OP_N (0), CUBLAS_OP_T (1), CUBLAS_OP_C (2)",
                      name, value);
  return PG_ERR_INVALID_ARG;
}

/* ld >= max(1, rows): a column-major matrix's columns are ld floats apart. */
static pg_status check_ld(const char *ld_name, long long ld, const char *rows_name, int rows,
                          const char *matrix) {
  const long long least = rows > 1 ? rows : 1;
  if (ld >= least) return PG_OK;
  pg_set_error_detail("%s = %lld is below max(1, %s) = %lld: %s's columns are %s = %d floats "
                      "apart at least (column-major)",
                      ld_name, ld, rows_name, least, matrix, rows_name, rows);
  return PG_ERR_INVALID_ARG;
}

static pg_status blas_call(cudaStream_t stream, int transa, int transb, int m, int n, int k,
                           const float *alpha, const float *a, int lda, long long stride_a,
                           const float *b, int ldb, long long stride_b, const float *beta,
                           float *c, int ldc, long long stride_c, int batch) {
  pg_clear_error_detail();
  pg_op op_a = PG_OP_N, op_b = PG_OP_N;
  pg_status st = op_of("transa", transa, &op_a);
  if (st == PG_OK) st = op_of("transb", transb, &op_b);
  if (st != PG_OK) return st;
  if (alpha == NULL || beta == NULL) {
    pg_set_error_detail("%s is NULL (a host pointer to the scalar, as cuBLAS takes it)",
                        alpha == NULL ? "alpha" : "beta");
    return PG_ERR_INVALID_ARG;
  }
  /* Sizes first, then BLAS's leading-dimension rules in its terms: A is
   * m x k (transa N) or k x m, B k x n or n x k, C m x n, column-major. */
  const struct {
    const char *name;
    int value;
  } sizes[] = {{"m", m}, {"n", n}, {"k", k}, {"batch_count", batch}};
  for (int i = 0; i < 4; ++i)
    if (sizes[i].value < 0) {
      pg_set_error_detail("%s = %d is negative", sizes[i].name, sizes[i].value);
      return PG_ERR_INVALID_ARG;
    }
  st = op_a == PG_OP_N ? check_ld("lda", lda, "m", m, "A") : check_ld("lda", lda, "k", k, "A");
  if (st == PG_OK)
    st = op_b == PG_OP_N ? check_ld("ldb", ldb, "k", k, "B") : check_ld("ldb", ldb, "n", n, "B");
  if (st == PG_OK) st = check_ld("ldc", ldc, "m", m, "C");
  if (st != PG_OK) return st;
  /* Strides and pointers in the caller's names too (the core would name
   * them after the swap). */
  if (batch > 1) {
    const struct {
      const char *name;
      long long value;
    } strides[] = {{"stride_a", stride_a}, {"stride_b", stride_b}, {"stride_c", stride_c}};
    for (int i = 0; i < 3; ++i)
      if (strides[i].value < 0) {
        pg_set_error_detail("%s = %lld is negative (a batch's matrices follow each other)",
                            strides[i].name, strides[i].value);
        return PG_ERR_INVALID_ARG;
      }
    const long long extent = m > 0 && n > 0 ? (long long)(n - 1) * ldc + m : 0;
    if (stride_c < extent) {
      pg_set_error_detail("stride_c = %lld is below (n - 1) * ldc + m = %lld: the batch's Cs "
                          "would overlap",
                          stride_c, extent);
      return PG_ERR_INVALID_ARG;
    }
  }
  if (m > 0 && n > 0 && batch > 0) {
    if (c == NULL) {
      pg_set_error_detail("C is NULL with an m x n = %d x %d result to write", m, n);
      return PG_ERR_INVALID_ARG;
    }
    if (k > 0 && (a == NULL || b == NULL)) {
      pg_set_error_detail("%s is NULL with k = %d > 0", a == NULL ? "A" : "B", k);
      return PG_ERR_INVALID_ARG;
    }
  }
  /* The row-major core: C^T (n x m) = op(B)^T (n x k) op(A)^T (k x m). */
  pg_gemm_desc gemm = PG_GEMM_DESC_INIT;
  gemm.op_a = op_b;
  gemm.op_b = op_a;
  gemm.m = n;
  gemm.n = m;
  gemm.k = k;
  gemm.alpha = *alpha;
  gemm.beta = *beta;
  gemm.a = b;
  gemm.lda = ldb;
  gemm.b = a;
  gemm.ldb = lda;
  gemm.c = c;
  gemm.ldc = ldc;
  gemm.batch = batch;
  gemm.stride_a = stride_b;
  gemm.stride_b = stride_a;
  gemm.stride_c = stride_c;
  return pg_gemm("auto", 0, &gemm, stream);
}

pg_status pg_blas_sgemm(cudaStream_t stream, int transa, int transb, int m, int n, int k,
                        const float *alpha, const float *a, int lda, const float *b, int ldb,
                        const float *beta, float *c, int ldc) {
  return blas_call(stream, transa, transb, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc, 0,
                   1);
}

pg_status pg_blas_sgemm_strided_batched(cudaStream_t stream, int transa, int transb, int m,
                                        int n, int k, const float *alpha, const float *a,
                                        int lda, long long stride_a, const float *b, int ldb,
                                        long long stride_b, const float *beta, float *c, int ldc,
                                        long long stride_c, int batch_count) {
  return blas_call(stream, transa, transb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b,
                   beta, c, ldc, stride_c, batch_count);
}
