/* The single-warp experiment of the "A study on CUDA async memcpy" blog
 * post: C = A * B with M, N <= 32 and a long K, computed by ONE block
 * of ONE warp, so that nothing but the kernel's own pipelining can hide the
 * global-memory latency of each K step. Two kernels (20_single_warp.cu):
 *
 *   reference: per K step, load a column of A and a row of B into shared
 *              memory, __syncthreads, accumulate, __syncthreads;
 *   pipeline:  the same, through a 2-stage block-scoped cuda::pipeline
 *              (pipeline_shared_state in shared memory, cuda::memcpy_async),
 *              so step k + 1's copy is in flight while step k is computed.
 *
 * Not registry variants: they exist for `pipegemm study single-warp`.
 * Row-major, dense or padded (lda >= K, ldb >= N, ldc >= N), device
 * pointers; C = A * B (alpha 1, beta 0: C is only written). M or N = 0 does
 * nothing; K = 0 writes zeros. Plain C. */
#ifndef PG_SINGLE_WARP_H
#define PG_SINGLE_WARP_H

#include "pipegemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One warp: thread i owns row i of C, so M and N are at most this. */
#define PG_SINGLE_WARP_DIM 32

/* Both launch asynchronously on `stream` and return PG_OK, PG_ERR_INVALID_ARG
 * (m or n outside 0..32, k < 0, an ld below its row width, a NULL pointer
 * with work to do; nothing launched) or PG_ERR_CUDA (pg_last_cuda_error). */
pg_status pg_single_warp_reference(int m, int n, int k, const float *a, int lda,
                                   const float *b, int ldb, float *c, int ldc,
                                   cudaStream_t stream);
pg_status pg_single_warp_pipeline(int m, int n, int k, const float *a, int lda,
                                  const float *b, int ldb, float *c, int ldc,
                                  cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
