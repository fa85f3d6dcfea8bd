/* The tile of the "CUDA Kernel Study: Pipelining" write-up: a 128x128
 * block tile stepping 8 along K, 256 threads as 16x16, 8x8 outputs per thread.
 * Plain C so the registry (host C) and the kernels agree on shared memory.
 *
 * Shared layout of one stage, identical for every kernel of the family:
 *   A as in global memory, [TILE_M][TILE_K]: each thread's 4 consecutive k of
 *     one row move as one 16-byte piece (LDG.128 + STS.128, or one 16-byte
 *     cp.async), so no mechanism pays for a transpose the others do not;
 *   B as in global memory, [TILE_K][TILE_N].
 * Both are dense: a warp's 16-byte stores cover 512 contiguous bytes, and the
 * compute loop's reads are broadcasts (A) or contiguous quarter-warps (B). */
#ifndef PG_TILE128_H
#define PG_TILE128_H

#define T128_TILE_M 128
#define T128_TILE_N 128
#define T128_TILE_K 8
#define T128_THREADS 256
#define T128_THREAD_M 8
#define T128_THREAD_N 8
#define T128_SMEM_A_FLOATS (T128_TILE_M * T128_TILE_K)
#define T128_SMEM_B_FLOATS (T128_TILE_K * T128_TILE_N)
#define T128_STAGE_FLOATS (T128_SMEM_A_FLOATS + T128_SMEM_B_FLOATS)
#define T128_STAGE_BYTES (T128_STAGE_FLOATS * 4)
/* Kernels that synchronise stages with barriers keep them after the tiles in
 * dynamic shared memory: room for two 8-byte mbarriers (full, empty) per
 * stage. */
#define T128_STAGE_SYNC_BYTES 16

#endif
