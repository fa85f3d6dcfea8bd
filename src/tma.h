/* Tensor maps for the TMA variants (src/tma.c): the host half of Hopper's
 * bulk tensor copy. Plain C so the library's C code and the .cu launchers
 * share it. */
#ifndef PG_TMA_H
#define PG_TMA_H

#include <cuda.h> /* CUtensorMap only: the driver is reached at run time */
#include <stddef.h>

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Both operands' maps, passed to a kernel as one __grid_constant__
 * parameter (each CUtensorMap is 128 bytes, 64-byte aligned). */
typedef struct {
  CUtensorMap a;
  CUtensorMap b;
} pg_tma_maps;

/* The box one copy moves: A as box_k (contiguous) x box_m rows, B as box_n
 * (contiguous) x box_k rows. a_swizzle_bytes is 0 (none), 32, 64 or 128:
 * the shared-memory swizzle of A's rows (B is stored dense). */
typedef struct {
  int a_box_k, a_box_m, a_swizzle_bytes;
  int b_box_n, b_box_k;
} pg_tma_boxes;

/* The layout rules of cp.async.bulk.tensor, checked before anything runs:
 * PG_OK, or PG_ERR_UNSUPPORTED with the reason written to `why`. */
pg_status pg_tma_check(const pg_gemm_args *args, char *why, size_t why_size);

/* Encodes A's and B's maps with cuTensorMapEncodeTiled (found through
 * cudaGetDriverEntryPointByVersion, so nothing links libcuda). With K = 0
 * there is nothing to copy and the maps are left zeroed. */
cudaError_t pg_tma_encode(const pg_gemm_args *args, const pg_tma_boxes *boxes,
                          pg_tma_maps *maps);

#ifdef __cplusplus
}
#endif
#endif
