/* The one place a kernel of the library is launched or described. */
#include "internal.h"

/* Above this (static + dynamic) a block must opt in to more shared memory. */
#define PG_DEFAULT_SMEM_PER_BLOCK (48 * 1024)

extern "C" cudaError_t pg_launch_kernel_with(const void *kernel, dim3 grid, int threads,
                                             size_t dynamic_smem, const pg_gemm_args *args,
                                             const void *second) {
  cudaFuncAttributes attr;
  cudaError_t err = cudaFuncGetAttributes(&attr, kernel);
  if (err != cudaSuccess) return err;
  if (attr.sharedSizeBytes + dynamic_smem > PG_DEFAULT_SMEM_PER_BLOCK) {
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)dynamic_smem);
    if (err != cudaSuccess) return err;
  }
  if (args->query != NULL) {
    int blocks = 0;
    err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, dynamic_smem);
    if (err != cudaSuccess) return err;
    args->query->threads = threads;
    args->query->registers = attr.numRegs;
    args->query->smem_bytes = attr.sharedSizeBytes + dynamic_smem;
    args->query->blocks_per_sm = blocks;
    return cudaSuccess;
  }
  void *params[] = {(void *)args, (void *)second};
  return cudaLaunchKernel(kernel, grid, dim3((unsigned)threads), params, dynamic_smem, args->stream);
}

extern "C" cudaError_t pg_launch_kernel(const void *kernel, dim3 grid, int threads,
                                        size_t dynamic_smem, const pg_gemm_args *args) {
  return pg_launch_kernel_with(kernel, grid, threads, dynamic_smem, args, NULL);
}
