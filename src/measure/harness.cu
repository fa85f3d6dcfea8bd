/* Device side of the measuring harness. Nothing here shares code with the
 * GEMM kernels: the reference is a plain one-thread-per-output FP64 loop. */
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "introspect.h"
#include "verify_math.h"

#define PGH_BLOCK 256
#define PGH_MAX_BLOCKS 4096

static unsigned blocks_for(size_t count) {
  size_t blocks = (count + PGH_BLOCK - 1) / PGH_BLOCK;
  if (blocks > PGH_MAX_BLOCKS) blocks = PGH_MAX_BLOCKS;
  return blocks == 0 ? 1u : (unsigned)blocks;
}

static pg_status launched(void) { return pg_status_from_cuda(cudaGetLastError()); }

/* splitmix64: a counter-based hash, so element i's value depends only on
 * (seed, i), whatever the launch shape. */
static __device__ __forceinline__ uint64_t pgh_mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__global__ void pgh_fill_kernel(float *d, int cols, int ld, size_t total, uint64_t seed,
                                int inputs) {
  const uint64_t key = pgh_mix(seed);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
       i += (size_t)gridDim.x * blockDim.x) {
    const size_t row = i / (size_t)ld, col = i % (size_t)ld;
    float v;
    if ((int)col < cols) {
      /* 24 random bits -> a float in [-1, 1), exactly representable. */
      const uint64_t h = pgh_mix(key ^ (row * (uint64_t)cols + col));
      const uint32_t bits = (uint32_t)(h >> 40);
      v = (float)bits * (1.0f / 8388608.0f) - 1.0f;
      /* The scale from the hash's low bits, independent of the value's. */
      if (inputs == PGH_WIDE) v = ldexpf(v, (int)(h % 121) - 60);
      if (inputs == PGH_TINY) v = ldexpf(v, -120 - (int)(h % 16));
    } else {
      v = __int_as_float(0x7fc00000); /* NaN in the padding */
    }
    d[i] = v;
  }
}

/* Total elements of a rows x ld matrix whose last row is only `cols` wide. */
static size_t span_of(int rows, int cols, int ld) {
  return rows == 0 ? 0 : (size_t)(rows - 1) * (size_t)ld + (size_t)cols;
}

extern "C" pg_status pgh_fill_uniform(float *d, int rows, int cols, int ld, uint64_t seed,
                                      cudaStream_t stream) {
  return pgh_fill(d, rows, cols, ld, seed, PGH_UNIFORM, stream);
}

extern "C" pg_status pgh_fill(float *d, int rows, int cols, int ld, uint64_t seed,
                              pgh_inputs inputs, cudaStream_t stream) {
  if (rows < 0 || cols < 0 || ld < cols || (span_of(rows, cols, ld) > 0 && d == NULL))
    return PG_ERR_INVALID_ARG;
  const size_t total = span_of(rows, cols, ld);
  if (total == 0) return PG_OK;
  pgh_fill_kernel<<<blocks_for(total), PGH_BLOCK, 0, stream>>>(d, cols, ld > 0 ? ld : 1, total,
                                                                seed, (int)inputs);
  return launched();
}

__global__ void pgh_poison_kernel(float *d, int cols, int ld, size_t total) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
       i += (size_t)gridDim.x * blockDim.x)
    if ((int)(i % (size_t)ld) < cols) d[i] = __int_as_float(0x7fc00000);
}

extern "C" pg_status pgh_poison(float *d, int rows, int cols, int ld, cudaStream_t stream) {
  if (rows < 0 || cols < 0 || ld < cols || (span_of(rows, cols, ld) > 0 && d == NULL))
    return PG_ERR_INVALID_ARG;
  const size_t total = span_of(rows, cols, ld);
  if (total == 0) return PG_OK;
  pgh_poison_kernel<<<blocks_for(total), PGH_BLOCK, 0, stream>>>(d, cols, ld, total);
  return launched();
}

#define PGH_REF_TILE 16

__global__ void pgh_reference_kernel(int m, int n, int k, float alpha, const float *a, int lda,
                                     const float *b, int ldb, float beta, const float *c0, int ldc,
                                     double *ref, double *scale) {
  const int row = blockIdx.y * PGH_REF_TILE + threadIdx.y;
  const int col = blockIdx.x * PGH_REF_TILE + threadIdx.x;
  if (row >= m || col >= n) return;
  const size_t out = (size_t)row * n + col;
  pgv_reference_element(row, col, k, alpha, a, lda, b, ldb, beta, c0, ldc, &ref[out], &scale[out]);
}

extern "C" pg_status pgh_reference(int m, int n, int k, float alpha, const float *a, int lda,
                                   const float *b, int ldb, float beta, const float *c0, int ldc,
                                   double *ref, double *scale, cudaStream_t stream) {
  if (m < 0 || n < 0 || k < 0 || ref == NULL || scale == NULL) return PG_ERR_INVALID_ARG;
  if (k > 0 && (a == NULL || b == NULL)) return PG_ERR_INVALID_ARG;
  if (beta != 0.0f && c0 == NULL) return PG_ERR_INVALID_ARG;
  if (m == 0 || n == 0) return PG_OK;
  const dim3 block(PGH_REF_TILE, PGH_REF_TILE);
  const dim3 grid((unsigned)((n + PGH_REF_TILE - 1) / PGH_REF_TILE),
                  (unsigned)((m + PGH_REF_TILE - 1) / PGH_REF_TILE));
  if (grid.y > 65535) return PG_ERR_UNSUPPORTED;
  pgh_reference_kernel<<<grid, block, 0, stream>>>(m, n, k, alpha, a, lda, b, ldb, beta, c0, ldc,
                                                   ref, scale);
  return launched();
}

/* Accumulated on the device, copied back once. Doubles >= 0 order like their
 * bit patterns, so atomicMax on the bits is a max on the values. */
typedef struct {
  unsigned long long failed, nonfinite, reported;
  unsigned long long max_abs_bits, max_rel_bits, max_ratio_bits;
  double sum_rel; /* of |out - ref| / scale over the finite elements with scale > 0 */
  unsigned long long rel_count;
  unsigned long long bad_index[PGH_MAX_REPORTED];
  float bad_out[PGH_MAX_REPORTED];
  double bad_ref[PGH_MAX_REPORTED];
} pgh_check_acc;

static __device__ void atomic_max_nonneg(unsigned long long *slot, double v) {
  atomicMax(slot, (unsigned long long)__double_as_longlong(v));
}

__global__ void pgh_compare_kernel(int m, int n, int k, const float *c, int ldc, const double *ref,
                                   const double *scale, int precision, pgh_check_acc *acc) {
  const size_t total = (size_t)m * n;
  unsigned long long failed = 0, nonfinite = 0, rel_count = 0;
  double max_abs = 0.0, max_rel = 0.0, max_ratio = 0.0, sum_rel = 0.0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
       i += (size_t)gridDim.x * blockDim.x) {
    const size_t row = i / n, col = i % n;
    const float out = c[row * ldc + col];
    const double r = ref[i], s = scale[i];
    const double err = fabs((double)out - r);
    if (isfinite(out)) {
      max_abs = fmax(max_abs, err);
      if (s > 0.0) {
        max_rel = fmax(max_rel, err / s);
        sum_rel += err / s;
        ++rel_count;
      }
      max_ratio = fmax(max_ratio, err / pgv_tolerance(s, k, precision));
    }
    if (!pgv_element_ok(out, r, s, k, precision)) {
      ++failed;
      if (!isfinite(out)) ++nonfinite;
      const unsigned long long slot = atomicAdd(&acc->reported, 1ull);
      if (slot < PGH_MAX_REPORTED) {
        acc->bad_index[slot] = i;
        acc->bad_out[slot] = out;
        acc->bad_ref[slot] = r;
      }
    }
  }
  if (failed) atomicAdd(&acc->failed, failed);
  if (rel_count) {
    atomicAdd(&acc->sum_rel, sum_rel);
    atomicAdd(&acc->rel_count, rel_count);
  }
  if (nonfinite) atomicAdd(&acc->nonfinite, nonfinite);
  atomic_max_nonneg(&acc->max_abs_bits, max_abs);
  atomic_max_nonneg(&acc->max_rel_bits, max_rel);
  atomic_max_nonneg(&acc->max_ratio_bits, max_ratio);
}

static double bits_to_double(unsigned long long bits) {
  double v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

extern "C" pg_status pgh_compare(int m, int n, int k, const float *c, int ldc, const double *ref,
                                 const double *scale, pg_precision precision, pgh_check *out,
                                 cudaStream_t stream) {
  if (out == NULL || m < 0 || n < 0 || ldc < n) return PG_ERR_INVALID_ARG;
  memset(out, 0, sizeof *out);
  if (m == 0 || n == 0) return PG_OK;
  if (c == NULL || ref == NULL || scale == NULL) return PG_ERR_INVALID_ARG;

  pgh_check_acc *d_acc = NULL;
  pgh_check_acc h_acc;
  cudaError_t err = cudaMalloc((void **)&d_acc, sizeof *d_acc);
  if (err == cudaSuccess) err = cudaMemsetAsync(d_acc, 0, sizeof *d_acc, stream);
  if (err == cudaSuccess) {
    pgh_compare_kernel<<<blocks_for((size_t)m * n), PGH_BLOCK, 0, stream>>>(m, n, k, c, ldc, ref,
                                                                           scale, (int)precision,
                                                                           d_acc);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess)
    err = cudaMemcpyAsync(&h_acc, d_acc, sizeof h_acc, cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  if (d_acc != NULL) {
    cudaError_t free_err = cudaFree(d_acc);
    if (err == cudaSuccess) err = free_err;
  }
  if (err != cudaSuccess) return pg_status_from_cuda(err);

  out->checked = (long long)m * n;
  out->failed = (long long)h_acc.failed;
  out->nonfinite = (long long)h_acc.nonfinite;
  out->max_abs_err = bits_to_double(h_acc.max_abs_bits);
  out->max_rel_err = bits_to_double(h_acc.max_rel_bits);
  out->max_tol_ratio = bits_to_double(h_acc.max_ratio_bits);
  out->mean_rel_err = h_acc.rel_count > 0 ? h_acc.sum_rel / (double)h_acc.rel_count : 0.0;
  const int reported =
      h_acc.reported < PGH_MAX_REPORTED ? (int)h_acc.reported : PGH_MAX_REPORTED;
  /* Atomics filled the slots in no particular order: sort by position. */
  for (int i = 1; i < reported; ++i)
    for (int j = i; j > 0 && h_acc.bad_index[j - 1] > h_acc.bad_index[j]; --j) {
      unsigned long long ti = h_acc.bad_index[j];
      h_acc.bad_index[j] = h_acc.bad_index[j - 1];
      h_acc.bad_index[j - 1] = ti;
      float to = h_acc.bad_out[j];
      h_acc.bad_out[j] = h_acc.bad_out[j - 1];
      h_acc.bad_out[j - 1] = to;
      double tr = h_acc.bad_ref[j];
      h_acc.bad_ref[j] = h_acc.bad_ref[j - 1];
      h_acc.bad_ref[j - 1] = tr;
    }
  out->reported = reported;
  for (int i = 0; i < reported; ++i) {
    out->bad_row[i] = (int)(h_acc.bad_index[i] / (unsigned long long)n);
    out->bad_col[i] = (int)(h_acc.bad_index[i] % (unsigned long long)n);
    out->bad_out[i] = h_acc.bad_out[i];
    out->bad_ref[i] = h_acc.bad_ref[i];
  }
  return PG_OK;
}

/* Spins ~2 ms on one thread, counting SM cycles against the global timer. */
#define PGH_CLOCK_SPIN_NS 2000000ull

static __device__ __forceinline__ unsigned long long global_ns(void) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void pgh_clock_kernel(unsigned long long *out) {
  const unsigned long long t0 = global_ns();
  const long long c0 = clock64();
  unsigned long long t1 = t0;
  while (t1 - t0 < PGH_CLOCK_SPIN_NS) t1 = global_ns();
  const long long c1 = clock64();
  out[0] = (unsigned long long)(c1 - c0);
  out[1] = t1 - t0;
}

extern "C" pg_status pgh_sm_clock_mhz(cudaStream_t stream, double *mhz) {
  if (mhz == NULL) return PG_ERR_INVALID_ARG;
  unsigned long long *d = NULL, h[2] = {0, 0};
  cudaError_t err = cudaMalloc((void **)&d, sizeof h);
  if (err == cudaSuccess) {
    pgh_clock_kernel<<<1, 1, 0, stream>>>(d);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) err = cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  if (d != NULL) {
    cudaError_t free_err = cudaFree(d);
    if (err == cudaSuccess) err = free_err;
  }
  if (err != cudaSuccess) return pg_status_from_cuda(err);
  if (h[1] == 0) return PG_ERR_CUDA;
  *mhz = (double)h[0] * 1000.0 / (double)h[1];
  return PG_OK;
}
