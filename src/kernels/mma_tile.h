/* The tile of the tensor-core family (src/kernels/30_*): 128x128 of C per
 * block, 32 along K per stage, 256 threads. Plain C so the registry (host C)
 * and the kernels agree on shared memory.
 *
 * Shared layout of one stage (30 mma_cp_async): A [128][32 + 4] then
 * B [32][128 + 8], each as in global memory, the padding spreading a warp's
 * fragment reads over all 32 banks. */
#ifndef PG_MMA_TILE_H
#define PG_MMA_TILE_H

#define MMA_TILE_M 128
#define MMA_TILE_N 128
#define MMA_TILE_K 32
#define MMA_THREADS 256
#define MMA_LDA (MMA_TILE_K + 4) /* floats per A row in shared memory */
#define MMA_LDB (MMA_TILE_N + 8) /* floats per B row */
#define MMA_SMEM_A_FLOATS (MMA_TILE_M * MMA_LDA)
#define MMA_SMEM_B_FLOATS (MMA_TILE_K * MMA_LDB)
#define MMA_STAGE_FLOATS (MMA_SMEM_A_FLOATS + MMA_SMEM_B_FLOATS)
#define MMA_STAGE_BYTES (MMA_STAGE_FLOATS * 4) /* 35840 */

#endif
