/* What the TMA kernels share: the aligned shared-memory base and the loud
 * failure of an sm_90 kernel built for an older GPU. (The host encodes their
 * tensor maps, src/tma.c, from the boxes their planners name.) */
#ifndef PG_TMA_COMMON_CUH
#define PG_TMA_COMMON_CUH

#include "kernels/entry.h"
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

/* Tile t of a tiles_m x tiles_n grid in grouped order: tiles go down
 * group_m rows of tiles, then to the next column, so that the blocks that
 * run at once share the rows of A and the columns of B they read (L2). */
static __device__ __forceinline__ void pg_grouped_tile(int t, int tiles_m, int tiles_n,
                                                       int group_m, int *tm, int *tn) {
  const int per_group = group_m * tiles_n;
  const int group = t / per_group;
  const int first_m = group * group_m;
  const int rows = min(tiles_m - first_m, group_m);
  const int in_group = t - group * per_group;
  *tm = first_m + in_group % rows;
  *tn = in_group / rows;
}

/* A TMA ring's shared memory: each stage's tiles and its two mbarriers,
 * after the slack that PG_TMA_SMEM_ALIGN asks for. */
static inline size_t pg_tma_ring_smem(int stages, size_t stage_bytes, size_t sync_bytes) {
  return (size_t)stages * (stage_bytes + sync_bytes) + PG_TMA_SMEM_ALIGN;
}

/* On sm_90 the tiles arrive by bulk tensor copy (UTMALDG) on mbarriers with
 * a transaction count; no thread copies a piece itself. On sm_80 the kernel
 * must trap (the host refuses to launch it there). */
#define PG_RULES_TMA_COMMON                                                                   \
  {PG_SM90_UP, PG_MUST, "UTMALDG", "the tiles no longer arrive by bulk tensor copy (TMA)"},    \
      {PG_SM90_UP, PG_MUST, "SYNCS.ARRIVE", "nobody arrives on an mbarrier (expect_tx or release)"}, \
      {PG_SM90_UP, PG_MUST, "SYNCS.PHASECHK", "nobody waits on an mbarrier (try_wait) any more"}, \
      {PG_ANY_SM, PG_NEVER, "LDGSTS", "threads copy pieces with cp.async instead of the copy engine"}, \
      {PG_ANY_SM, PG_NEVER, "LDGDEPBAR", "cp.async commit groups are back"},                     \
      {PG_SM8X, PG_MUST, "BPT.TRAP", "the sm_80 build no longer traps: it would silently do nothing"}

#endif
