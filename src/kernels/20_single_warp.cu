/* 20 single_warp — the "A study on CUDA async memcpy" blog post's "real
 * world" example: M = N = 32, a long K, one block of one warp.
 *
 * Thread i owns row i of C (32 accumulators in registers). Each K step the
 * warp stages one column of A and one row of B in shared memory and every
 * thread adds sA[i] * sB[j] into its 32 outputs. With one warp there is no
 * other warp to run while a load is in flight, so the reference kernel pays
 * the full global-memory latency every step, and the pipeline kernel shows
 * what a 2-stage cuda::pipeline alone can hide: step k + 1's copy
 * (cp.async, completed through the pipeline's mbarriers) is issued before
 * step k is computed. Both follow the post's code; the changes are bounds
 * (M, N <= 32 rather than exactly 32, K = 0, leading dimensions) and the
 * zero-fill they need. (The post's prose calls its pipeline "2-stage
 * thread-scoped"; its code, which we follow, is block-scoped, with
 * pipeline_shared_state: mbarriers, not commit/wait groups.)
 *
 *   pipegemm study single-warp [--k 65536]
 */
#include <cooperative_groups.h>
#include <cuda/pipeline>

#include "internal.h"
/* PG_SINGLE_WARP_DIM and the two launchers: src/introspect.h */

#define WARP_SIZE PG_SINGLE_WARP_DIM

typedef struct {
  int m, n, k;
  const float *a;
  const float *b;
  float *c;
  int lda, ldb, ldc;
} single_warp_args;

/* Row threadIdx.x of C; rows past M and columns past N are never written. */
static __device__ __forceinline__ void single_warp_store(const single_warp_args &g,
                                                         const float acc[WARP_SIZE]) {
  const int row = threadIdx.x;
  if (row >= g.m) return;
  float *c_row = g.c + (size_t)row * g.ldc;
#pragma unroll
  for (int i = 0; i < WARP_SIZE; ++i)
    if (i < g.n) c_row[i] = acc[i];
}

/* The post's ref_kernel: load, sync, accumulate, sync; K times. */
__global__ void __launch_bounds__(WARP_SIZE)
    pg_single_warp_reference_kernel(const single_warp_args g) {
  __shared__ float sA[WARP_SIZE], sB[WARP_SIZE];
  const int tx = threadIdx.x;
  float acc[WARP_SIZE];
#pragma unroll
  for (int i = 0; i < WARP_SIZE; ++i) acc[i] = 0.f;

  for (int phase = 0; phase < g.k; ++phase) {
    /* collectively load one column of A and one row of B from gmem to smem */
    sA[tx] = tx < g.m ? g.a[(size_t)tx * g.lda + phase] : 0.f;
    sB[tx] = tx < g.n ? g.b[(size_t)phase * g.ldb + tx] : 0.f;
    __syncthreads(); /* the column and the row are complete */
#pragma unroll
    for (int i = 0; i < WARP_SIZE; ++i) acc[i] += sA[tx] * sB[i];
    __syncthreads(); /* everyone has read them before the next step overwrites them */
  }
  single_warp_store(g, acc);
}

typedef cuda::pipeline<cuda::thread_scope_block> block_pipeline;

/* Step `phase`'s column of A and row of B into one stage, as 4-byte
 * cp.async copies bound to the pipeline's current stage. Threads past M or N
 * copy nothing: their shared slots hold the zeros written at the start. */
static __device__ __forceinline__ void single_warp_copy(const single_warp_args &g,
                                                        float *stage_a, float *stage_b,
                                                        int phase, block_pipeline &pipe) {
  const int tx = threadIdx.x;
  if (tx < g.m)
    cuda::memcpy_async(&stage_a[tx], &g.a[(size_t)tx * g.lda + phase], sizeof(float), pipe);
  if (tx < g.n)
    cuda::memcpy_async(&stage_b[tx], &g.b[(size_t)phase * g.ldb + tx], sizeof(float), pipe);
}

/* The post's pipeline_kernel ("pingpong pipeline"): a block-scoped
 * cuda::pipeline with 2 stages in shared memory. Every thread is both
 * producer and consumer: acquire a stage, copy, commit; then wait for the
 * oldest stage, compute on it, release it for reuse. */
__global__ void __launch_bounds__(WARP_SIZE)
    pg_single_warp_pipeline_kernel(const single_warp_args g) {
  constexpr auto scope = cuda::thread_scope_block;
  /* The shared state has a constructor nvcc will not run for __shared__
   * (warning 20054, an error under -Werror); make_pipeline initialises it
   * instead, as the CUDA programming guide's examples rely on. */
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::pipeline_shared_state<scope, 2> shared_state;
#pragma nv_diag_default static_var_with_dynamic_init
  __shared__ float sA[2][WARP_SIZE], sB[2][WARP_SIZE];
  const int tx = threadIdx.x;
  if (tx >= g.m) sA[0][tx] = sA[1][tx] = 0.f;
  if (tx >= g.n) sB[0][tx] = sB[1][tx] = 0.f;
  auto group = cooperative_groups::this_thread_block();
  /* Initialises the stage barriers and syncs the block, which also
   * publishes the zeros above. */
  block_pipeline pipe = cuda::make_pipeline(group, &shared_state);
  float acc[WARP_SIZE];
#pragma unroll
  for (int i = 0; i < WARP_SIZE; ++i) acc[i] = 0.f;

  if (g.k > 0) { /* prologue: step 0 in flight */
    pipe.producer_acquire();
    single_warp_copy(g, sA[0], sB[0], 0, pipe);
    pipe.producer_commit();
  }
  for (int produce_phase = 1; produce_phase < g.k; ++produce_phase) {
    /* Issue step produce_phase's copy first... */
    pipe.producer_acquire();
    single_warp_copy(g, sA[produce_phase % 2], sB[produce_phase % 2], produce_phase, pipe);
    pipe.producer_commit();
    /* ...then compute the step before it while that copy is in flight. */
    pipe.consumer_wait();
    const int cur = (produce_phase - 1) % 2;
#pragma unroll
    for (int i = 0; i < WARP_SIZE; ++i) acc[i] += sA[cur][tx] * sB[cur][i];
    pipe.consumer_release();
  }
  if (g.k > 0) { /* epilogue: the last step */
    pipe.consumer_wait();
    const int last = (g.k - 1) % 2;
#pragma unroll
    for (int i = 0; i < WARP_SIZE; ++i) acc[i] += sA[last][tx] * sB[last][i];
    pipe.consumer_release();
  }
  single_warp_store(g, acc);
}

/* The library's argument rules, with M and N capped at one warp. */
static pg_status single_warp_launch(const void *kernel, int m, int n, int k, const float *a,
                                    int lda, const float *b, int ldb, float *c, int ldc,
                                    cudaStream_t stream) {
  if (m < 0 || n < 0 || k < 0 || m > WARP_SIZE || n > WARP_SIZE) return PG_ERR_INVALID_ARG;
  if (lda < (k > 1 ? k : 1) || ldb < (n > 1 ? n : 1) || ldc < (n > 1 ? n : 1))
    return PG_ERR_INVALID_ARG;
  if (m == 0 || n == 0) return PG_OK;
  if (c == NULL || (k > 0 && (a == NULL || b == NULL))) return PG_ERR_INVALID_ARG;
  single_warp_args g = {m, n, k, a, b, c, lda, ldb, ldc};
  void *params[] = {&g};
  return pg_status_from_cuda(
      cudaLaunchKernel(kernel, dim3(1), dim3(WARP_SIZE), params, 0, stream));
}

extern "C" pg_status pg_single_warp_reference(int m, int n, int k, const float *a, int lda,
                                              const float *b, int ldb, float *c, int ldc,
                                              cudaStream_t stream) {
  return single_warp_launch((const void *)pg_single_warp_reference_kernel, m, n, k, a, lda, b,
                            ldb, c, ldc, stream);
}

extern "C" pg_status pg_single_warp_pipeline(int m, int n, int k, const float *a, int lda,
                                             const float *b, int ldb, float *c, int ldc,
                                             cudaStream_t stream) {
  return single_warp_launch((const void *)pg_single_warp_pipeline_kernel, m, n, k, a, lda, b,
                            ldb, c, ldc, stream);
}
