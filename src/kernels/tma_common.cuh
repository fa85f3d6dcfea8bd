/* What the TMA kernels share: the aligned shared-memory base, the launch
 * with tensor maps, and the loud failure of an sm_90 kernel built for an
 * older GPU. */
#ifndef PG_TMA_COMMON_CUH
#define PG_TMA_COMMON_CUH

#include "internal.h"
#include "kernels/ptx.cuh"
#include "tma.h"

/* Bulk tensor copies land at 128-byte-aligned addresses, and a 128-byte
 * swizzle repeats every 1024 bytes, so the stage ring starts at the next
 * 1024-byte boundary of the dynamic shared window (the launch asks for
 * PG_TMA_SMEM_ALIGN bytes more than the ring needs). */
#define PG_TMA_SMEM_ALIGN 1024

static __device__ __forceinline__ void *pg_tma_smem_base(void *raw) {
  const unsigned addr = pg_smem_addr(raw);
  const unsigned pad = (PG_TMA_SMEM_ALIGN - addr % PG_TMA_SMEM_ALIGN) % PG_TMA_SMEM_ALIGN;
  return (char *)raw + pad;
}

/* The host returns PG_ERR_ARCH below sm_90 before launching; reaching a TMA
 * kernel compiled for an older architecture anyway is a bug, and it traps
 * rather than leave C unwritten. */
static __device__ __forceinline__ void pg_tma_unavailable(void) { __trap(); }

/* Encodes the maps (skipped when only the kernel's facts are asked for) and
 * launches kernel(args, maps). */
static inline cudaError_t pg_tma_launch(const void *kernel, dim3 grid, int threads,
                                        const pg_gemm_args *g, const pg_tma_boxes *boxes) {
  pg_tma_maps maps;
  if (g->query == NULL) {
    cudaError_t err = pg_tma_encode(g, boxes, &maps);
    if (err != cudaSuccess) return err;
  }
  return pg_launch_kernel_with(kernel, grid, threads, g->smem_bytes, g, &maps);
}

#endif
