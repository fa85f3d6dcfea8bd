/* The tile of the wgmma members (src/kernels/31_* .. 35_*): 128x128 of C per
 * block, 32 along K per stage, as 30 mma_cp_async. Plain C so the registry
 * (host C) and the kernels agree on shared memory.
 *
 * Shared layout of one stage: A [128][32] then B^T [128][32], each row 128
 * bytes (32 floats along K), both K-major as TF32 wgmma requires, in the
 * 128-byte swizzle of the copy engine and of the wgmma descriptors: the
 * 16-byte piece p of row r is stored at piece p ^ (r % 8). Each stage
 * starts at a 1024-byte boundary (the swizzle's period), so 8 rows of a
 * stage are one 1024-byte "core matrix" group.
 *
 * B reaches the kernels K-major through a workspace: a first kernel of the
 * same call (src/kernels/transpose_b.cu) writes B^T, N rows of ldt floats
 * (K rounded up to 4, so each row is 16-byte aligned), and the wgmma kernel
 * reads that instead of B (wgmma_layout.md in docs/ says why and what it
 * costs). */
#ifndef PG_WGMMA_TILE_H
#define PG_WGMMA_TILE_H

#define WG_TILE_M 128
#define WG_TILE_N 128
#define WG_TILE_K 32
#define WG_ROW_BYTES (WG_TILE_K * 4) /* 128: one swizzle span */
#define WG_STAGE_A_BYTES (WG_TILE_M * WG_ROW_BYTES)
#define WG_STAGE_B_BYTES (WG_TILE_N * WG_ROW_BYTES)
#define WG_STAGE_BYTES (WG_STAGE_A_BYTES + WG_STAGE_B_BYTES) /* 32768 */
#define WG_STAGE_SYNC_BYTES 16 /* full[s] and empty[s] where a member has them */
#define WG_SMEM_ALIGN 1024     /* the swizzle's period */

/* The leading dimension of B^T in the workspace: K rounded up to 4 floats. */
#define WG_LDT(k) ((((long long)(k)) + 3) / 4 * 4)

#endif
