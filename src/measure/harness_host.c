/* Host side of the measuring harness: device facts, L2 flushing, event
 * timing, statistics, and the host FP64 reference and comparison. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "introspect.h"
#include "verify_math.h"

pg_status pgh_device_query(int device, pgh_device_info *info) {
  if (info == NULL) return PG_ERR_INVALID_ARG;
  memset(info, 0, sizeof *info);
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) return pg_no_device(err);
  if (count == 0) return pg_no_device(cudaErrorNoDevice);
  if (device < 0 || device >= count) {
    pg_status_from_cuda(cudaErrorInvalidDevice);
    pg_set_error_detail("there is no device %d: this machine has %d (0..%d)", device, count,
                        count - 1);
    return PG_ERR_NO_DEVICE;
  }
  struct cudaDeviceProp prop;
  int clock_khz = 0;
  err = cudaGetDeviceProperties(&prop, device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device);
  if (err == cudaSuccess) err = cudaDriverGetVersion(&info->driver_version);
  if (err == cudaSuccess) err = cudaRuntimeGetVersion(&info->runtime_version);
  if (err != cudaSuccess) return pg_status_from_cuda(err);

  info->device = device;
  snprintf(info->name, sizeof info->name, "%s", prop.name);
  info->cc_major = prop.major;
  info->cc_minor = prop.minor;
  info->sm_count = prop.multiProcessorCount;
  info->max_sm_clock_mhz = clock_khz / 1000;
  info->l2_bytes = (size_t)prop.l2CacheSize;
  info->smem_optin_bytes = prop.sharedMemPerBlockOptin;
  int cublas = pg_cublas_version();
  info->cublas_version = cublas > 0 ? cublas : 0;
  return PG_OK;
}

/* Twice the L2, so clearing it leaves none of the previous run's lines. */
pg_status pgh_l2_flusher_init(pgh_l2_flusher *f, size_t l2_bytes) {
  if (f == NULL) return PG_ERR_INVALID_ARG;
  f->buf = NULL;
  f->bytes = 2 * (l2_bytes > 0 ? l2_bytes : (size_t)64 << 20);
  cudaError_t err = cudaMalloc(&f->buf, f->bytes);
  if (err != cudaSuccess) {
    f->buf = NULL;
    f->bytes = 0;
  }
  return pg_status_from_cuda(err);
}

pg_status pgh_l2_flush(pgh_l2_flusher *f, cudaStream_t stream) {
  if (f == NULL || f->buf == NULL) return PG_ERR_INVALID_ARG;
  return pg_status_from_cuda(cudaMemsetAsync(f->buf, 0, f->bytes, stream));
}

pg_status pgh_l2_flusher_free(pgh_l2_flusher *f) {
  if (f == NULL) return PG_OK;
  cudaError_t err = f->buf != NULL ? cudaFree(f->buf) : cudaSuccess;
  f->buf = NULL;
  f->bytes = 0;
  return pg_status_from_cuda(err);
}

pg_status pgh_time(pgh_run_fn fn, void *ctx, int warmup, int iters, pgh_l2_flusher *flusher,
                   cudaStream_t stream, float *ms) {
  if (fn == NULL || warmup < 0 || iters < 1 || ms == NULL) return PG_ERR_INVALID_ARG;
  cudaEvent_t start = NULL, stop = NULL;
  cudaError_t err = cudaEventCreate(&start);
  if (err == cudaSuccess) err = cudaEventCreate(&stop);
  pg_status st = pg_status_from_cuda(err);

  for (int i = 0; st == PG_OK && i < warmup; ++i) {
    if (flusher != NULL) st = pgh_l2_flush(flusher, stream);
    if (st == PG_OK) st = fn(ctx, stream);
  }
  for (int i = 0; st == PG_OK && i < iters; ++i) {
    if (flusher != NULL) st = pgh_l2_flush(flusher, stream);
    if (st == PG_OK) st = pg_status_from_cuda(cudaEventRecord(start, stream));
    if (st == PG_OK) st = fn(ctx, stream);
    if (st == PG_OK) st = pg_status_from_cuda(cudaEventRecord(stop, stream));
    if (st == PG_OK) st = pg_status_from_cuda(cudaEventSynchronize(stop));
    if (st == PG_OK) st = pg_status_from_cuda(cudaEventElapsedTime(&ms[i], start, stop));
  }
  /* A kernel fault shows up here at the latest. */
  if (st == PG_OK) st = pg_status_from_cuda(cudaStreamSynchronize(stream));
  /* Both are destroyed whatever happened; the first error is the one kept. */
  const cudaError_t start_err = start != NULL ? cudaEventDestroy(start) : cudaSuccess;
  const cudaError_t stop_err = stop != NULL ? cudaEventDestroy(stop) : cudaSuccess;
  if (st == PG_OK) st = pg_status_from_cuda(start_err != cudaSuccess ? start_err : stop_err);
  return st;
}

static int compare_floats(const void *x, const void *y) {
  const float a = *(const float *)x, b = *(const float *)y;
  return (a > b) - (a < b);
}

void pgh_stats(const float *v, int n, float *median, float *min, float *max) {
  float *sorted = n > 0 ? malloc((size_t)n * sizeof *sorted) : NULL;
  if (sorted == NULL) {
    *median = *min = *max = NAN;
    return;
  }
  memcpy(sorted, v, (size_t)n * sizeof *sorted);
  qsort(sorted, (size_t)n, sizeof *sorted, compare_floats);
  *min = sorted[0];
  *max = sorted[n - 1];
  *median = n % 2 ? sorted[n / 2] : 0.5f * (sorted[n / 2 - 1] + sorted[n / 2]);
  free(sorted);
}

void pgh_reference_host(int m, int n, int k, float alpha, const float *a, int lda, const float *b,
                        int ldb, float beta, const float *c0, int ldc, double *ref,
                        double *scale) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      pgv_reference_element(i, j, k, alpha, a, lda, b, ldb, beta, c0, ldc,
                            &ref[(size_t)i * n + j], &scale[(size_t)i * n + j]);
}

void pgh_compare_host(int m, int n, int k, const float *c, int ldc, const double *ref,
                      const double *scale, pg_precision precision, pgh_check *out) {
  memset(out, 0, sizeof *out);
  out->first_guard_written = -1;
  double sum_rel = 0.0;
  long long rel_count = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      const float o = c[(size_t)i * ldc + j];
      const double r = ref[(size_t)i * n + j], s = scale[(size_t)i * n + j];
      const double err = fabs((double)o - r);
      ++out->checked;
      if (isfinite(o)) {
        out->max_abs_err = fmax(out->max_abs_err, err);
        if (s > 0.0) {
          out->max_rel_err = fmax(out->max_rel_err, err / s);
          sum_rel += err / s;
          ++rel_count;
        }
        out->max_tol_ratio = fmax(out->max_tol_ratio, err / pgv_tolerance(s, k, (int)precision));
      }
      if (!pgv_element_ok(o, r, s, k, (int)precision)) {
        ++out->failed;
        if (!isfinite(o)) ++out->nonfinite;
        if (out->reported < PGH_MAX_REPORTED) {
          out->bad_row[out->reported] = i;
          out->bad_col[out->reported] = j;
          out->bad_out[out->reported] = o;
          out->bad_ref[out->reported] = r;
          ++out->reported;
        }
      }
    }
  out->mean_rel_err = rel_count > 0 ? sum_rel / (double)rel_count : 0.0;
}

void pgh_compare_stored_host(const float *c, const pgh_stored *c_stored, int k,
                             const double *ref, const double *scale, pg_precision precision,
                             int guarded, pgh_check *out) {
  memset(out, 0, sizeof *out);
  out->first_guard_written = -1;
  const pgh_stored *s = c_stored;
  const long long members = s->stride == 0 || s->count < 1 ? (s->count > 0 ? 1 : 0) : s->count;
  const size_t per_member = (size_t)s->rows * (size_t)s->cols;
  double sum_rel = 0.0;
  long long rel_count = 0;
  for (long long j = 0; j < members; ++j) {
    /* One member at a time, through the one-matrix comparison: the same
     * rule, its figures merged. */
    pgh_check one;
    const size_t at = (size_t)j * per_member;
    pgh_compare_host(s->rows, s->cols, k, c + (size_t)j * (size_t)s->stride, (int)s->ld,
                     ref + at, scale + at, precision, &one);
    out->checked += one.checked;
    out->failed += one.failed;
    out->nonfinite += one.nonfinite;
    out->max_abs_err = fmax(out->max_abs_err, one.max_abs_err);
    out->max_rel_err = fmax(out->max_rel_err, one.max_rel_err);
    out->max_tol_ratio = fmax(out->max_tol_ratio, one.max_tol_ratio);
    /* The mean over every member's elements: each member's mean weighed
     * by its count of elements with a scale. */
    long long counted = 0;
    for (size_t i = 0; i < per_member; ++i) {
      const float o = c[(size_t)j * (size_t)s->stride + i / (size_t)s->cols * (size_t)s->ld +
                        i % (size_t)s->cols];
      if (isfinite(o) && scale[at + i] > 0.0) ++counted;
    }
    sum_rel += one.mean_rel_err * (double)counted;
    rel_count += counted;
    for (int r = 0; r < one.reported && out->reported < PGH_MAX_REPORTED; ++r) {
      out->bad_member[out->reported] = j;
      out->bad_row[out->reported] = one.bad_row[r];
      out->bad_col[out->reported] = one.bad_col[r];
      out->bad_out[out->reported] = one.bad_out[r];
      out->bad_ref[out->reported] = one.bad_ref[r];
      ++out->reported;
    }
  }
  out->mean_rel_err = rel_count > 0 ? sum_rel / (double)rel_count : 0.0;
  if (!guarded) return;
  const size_t span = pgh_stored_span(s);
  for (size_t i = 0; i < span; ++i) {
    long long member;
    int row, col;
    if (pgv_stored_element((long long)i, s->rows, s->cols, s->ld, (int)members, s->stride,
                           &member, &row, &col))
      continue;
    uint32_t bits;
    memcpy(&bits, &c[i], sizeof bits);
    if (bits == PGH_GUARD_BITS) continue;
    if (out->guard_written++ == 0) out->first_guard_written = (long long)i;
    ++out->failed;
  }
}
