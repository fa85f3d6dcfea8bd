/* pgh_: what the CLI and the GPU tests need around the library — device
 * facts, seeded inputs, an independent FP64 reference and its comparison,
 * L2 flushing, clock sampling and event timing. Not part of the public API.
 * Every function returns pg_status and never prints or exits. */
#ifndef PG_HARNESS_H
#define PG_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include "pipegemm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int device;
  char name[256];
  int cc_major, cc_minor;
  int sm_count;
  int max_sm_clock_mhz;      /* from the device attribute, 0 if unknown */
  size_t l2_bytes;
  size_t smem_optin_bytes;   /* max dynamic shared memory per block */
  int driver_version;        /* e.g. 13000 */
  int runtime_version;       /* e.g. 13000 */
  int cublas_version;        /* major*10000 + minor*100 + patch, 0 if unknown */
} pgh_device_info;

/* PG_ERR_NO_DEVICE (with a reason in pg_last_cuda_error) when no GPU. */
pg_status pgh_device_query(int device, pgh_device_info *info);

/* Uniform floats in [-1, 1) from a counter-based hash of (seed, index):
 * the same seed gives the same matrix on any GPU. Fills rows x cols of a
 * row-major matrix with leading dimension ld; the padding between rows gets
 * NaN, so a kernel that reads past its row width is caught. */
pg_status pgh_fill_uniform(float *d, int rows, int cols, int ld, uint64_t seed,
                           cudaStream_t stream);

/* The inputs' distributions (bench --inputs): PGH_UNIFORM as above;
 * PGH_WIDE, such a value times 2^e with e uniform in -60 .. 60 (a row's
 * magnitudes spanning 2^+-60, products within FP32's range); PGH_TINY, such a
 * value times 2^-120 / 2^j, j uniform in 0 .. 15: magnitudes from FP32's
 * denormals (below 2^-126) to a little above its smallest normal. */
typedef enum { PGH_UNIFORM = 0, PGH_WIDE = 1, PGH_TINY = 2 } pgh_inputs;
/* Fills as pgh_fill_uniform does, from `inputs`' distribution. */
pg_status pgh_fill(float *d, int rows, int cols, int ld, uint64_t seed, pgh_inputs inputs,
                   cudaStream_t stream);

/* ---- strided batches of matrices as they are stored ----
 * `count` matrices of rows x cols (row-major, leading dimension ld), the
 * i-th `stride` floats after the first; with stride 0 every member is the
 * first (count 1 in effect). An operand of a pg_gemm_desc is one: A is
 * stored M x K, or K x M where op_a is T. */
typedef struct {
  int rows, cols;
  long long ld;
  int count;
  long long stride;
} pgh_stored;

/* The stored shapes of a GEMM's operands and result, as the library reads
 * them: A (M x K, or K x M with op_a T, lda), B (K x N, or N x K with op_b
 * T, ldb), C (M x N, ldc); the batch's members at the strides where batch
 * > 1, else one. */
pgh_stored pgh_stored_a(const pg_gemm_desc *gemm);
pgh_stored pgh_stored_b(const pg_gemm_desc *gemm);
pgh_stored pgh_stored_c(const pg_gemm_desc *gemm);

/* The floats from the first member's first element to the last member's
 * last: what an allocation of the batch holds at least (0 for none). */
size_t pgh_stored_span(const pgh_stored *stored);

/* The bits of a float the poison leaves outside every member's elements
 * (row padding, gaps between members): a NaN no arithmetic makes, so that
 * a kernel that writes there is caught (pgh_compare_stored). */
#define PGH_GUARD_BITS 0x7FB0AD5Eu

/* Fills every element of every member from `inputs`' distribution, each
 * from a hash of (seed, member, row, column): member 0 gets the values
 * pgh_fill gives one matrix. The rest of the span (padding, gaps) gets NaN.
 * Where members overlap, a float is the lowest member's that holds it. */
pg_status pgh_fill_stored(float *d, const pgh_stored *stored, uint64_t seed, pgh_inputs inputs,
                          cudaStream_t stream);

/* The poison before a checked run: every member's elements NaN, the rest
 * of the span PGH_GUARD_BITS. pgh_guard_stored writes the guard alone,
 * leaving the elements (a C0 that beta reads) as they are. */
pg_status pgh_poison_stored(float *d, const pgh_stored *stored, cudaStream_t stream);
pg_status pgh_guard_stored(float *d, const pgh_stored *stored, cudaStream_t stream);

/* Sets rows x cols (leading dim ld) to NaN, the poison before a checked run. */
pg_status pgh_poison(float *d, int rows, int cols, int ld, cudaStream_t stream);

/* FP64 reference, a plain one-thread-per-output loop that shares no code with
 * the kernels. c0 may be NULL when beta == 0. ref and scale are m x n,
 * row-major, dense (leading dimension n), device memory. */
pg_status pgh_reference(int m, int n, int k, float alpha, const float *a,
                        int lda, const float *b, int ldb, float beta,
                        const float *c0, int ldc, double *ref, double *scale,
                        cudaStream_t stream);

/* The FP64 reference of every GEMM of `gemm`'s batch, C_i = alpha op(A_i)
 * op(B_i) + beta C0_i, as the library defines the description: its ops,
 * leading dimensions, batch and strides (stride 0 broadcasting), gemm->a
 * and gemm->b read as stored. C0 is laid out as gemm's C (ldc, stride_c)
 * and read only when beta != 0 (NULL allowed otherwise); gemm->c is not
 * used. ref and scale are batch x M x N, dense, member-major, device
 * memory. As in BLAS, alpha = 0 reads neither A nor B. */
pg_status pgh_reference_gemm(const pg_gemm_desc *gemm, const float *c0, double *ref,
                             double *scale, cudaStream_t stream);
/* The same on host arrays. */
void pgh_reference_gemm_host(const pg_gemm_desc *gemm, const float *c0, double *ref,
                             double *scale);

#define PGH_MAX_REPORTED 10
typedef struct {
  long long checked;
  long long failed;       /* elements outside tolerance, NaN/Inf included */
  long long nonfinite;    /* NaN or Inf among the failures */
  double max_abs_err;     /* over finite elements */
  double max_rel_err;     /* max |out-ref| / scale over finite elements: error relative
                             to the magnitudes summed */
  double max_tol_ratio;   /* max |out-ref| / tolerance; <= 1 passes */
  double mean_rel_err;    /* the mean of |out-ref| / scale over the finite elements whose
                             scale is not 0 (0 where there are none) */
  int reported;           /* up to PGH_MAX_REPORTED failures, sorted by position (not always the first ones) */
  int bad_row[PGH_MAX_REPORTED], bad_col[PGH_MAX_REPORTED];
  long long bad_member[PGH_MAX_REPORTED]; /* the batch member of each (0 for one GEMM) */
  float bad_out[PGH_MAX_REPORTED];
  double bad_ref[PGH_MAX_REPORTED];
  /* pgh_compare_stored with `guarded`: floats of C's span outside every
   * member's elements that no longer hold PGH_GUARD_BITS (a write past a
   * member's C), counted among the failures, and the offset of the first
   * from C's start (-1: none). */
  long long guard_written;
  long long first_guard_written;
} pgh_check;

/* Compares C (m x n, leading dim ldc, device) against ref/scale (device),
 * held to the error bound of `precision` (verify_math.h): the entry's own,
 * pg_variant_info.precision. */
pg_status pgh_compare(int m, int n, int k, const float *c, int ldc,
                      const double *ref, const double *scale, pg_precision precision,
                      pgh_check *out, cudaStream_t stream);

/* Compares every member of a strided batch C (layout `c_stored`, device)
 * with ref/scale (batch x M x N, as pgh_reference_gemm writes them), held
 * to `precision`'s bound at `k`: the error figures are over all members'
 * elements. With `guarded` (C poisoned by pgh_poison_stored or guarded by
 * pgh_guard_stored before the run), every float of C's span outside the
 * members' elements must still hold PGH_GUARD_BITS. */
pg_status pgh_compare_stored(const float *c, const pgh_stored *c_stored, int k,
                             const double *ref, const double *scale, pg_precision precision,
                             int guarded, pgh_check *out, cudaStream_t stream);
/* The same on host arrays. */
void pgh_compare_stored_host(const float *c, const pgh_stored *c_stored, int k,
                             const double *ref, const double *scale, pg_precision precision,
                             int guarded, pgh_check *out);

/* The same comparison on host arrays (for tests and small problems). */
void pgh_compare_host(int m, int n, int k, const float *c, int ldc,
                      const double *ref, const double *scale, pg_precision precision,
                      pgh_check *out);

/* FP64 reference on the host, same contract as pgh_reference on host arrays. */
void pgh_reference_host(int m, int n, int k, float alpha, const float *a,
                        int lda, const float *b, int ldb, float beta,
                        const float *c0, int ldc, double *ref, double *scale);

/* A buffer big enough to evict the L2 when cleared. */
typedef struct {
  void *buf;
  size_t bytes;
} pgh_l2_flusher;
pg_status pgh_l2_flusher_init(pgh_l2_flusher *f, size_t l2_bytes);
pg_status pgh_l2_flush(pgh_l2_flusher *f, cudaStream_t stream);
pg_status pgh_l2_flusher_free(pgh_l2_flusher *f);

/* SM clock seen by a short busy kernel: clock64 cycles over %globaltimer ns.
 * Blocks until done. */
pg_status pgh_sm_clock_mhz(cudaStream_t stream, double *mhz);

/* Times `iters` calls of fn (after `warmup` untimed ones) with CUDA events
 * around each call, flushing L2 before each when flusher != NULL.
 * ms must hold `iters` values. fn returns pg_status; the first error stops. */
typedef pg_status (*pgh_run_fn)(void *ctx, cudaStream_t stream);
pg_status pgh_time(pgh_run_fn fn, void *ctx, int warmup, int iters,
                   pgh_l2_flusher *flusher, cudaStream_t stream, float *ms);

/* Median/min/max of n values (n >= 1); does not reorder `v`. */
void pgh_stats(const float *v, int n, float *median, float *min, float *max);

#ifdef __cplusplus
}
#endif
#endif
