/* What the TMA kernels share: the aligned shared-memory base and the loud
 * failure of an sm_90 kernel built for an older GPU. (The host encodes their
 * tensor maps, src/tma.c, from the boxes their planners name.) */
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

#endif
