/* The flagship's tile (12_tma_ws.cu). Plain C so the registry and the tuning
 * table (src/tuning.c) agree with the kernel on shared memory.
 *
 * A block is one consumer warpgroup (128 threads, 8x16 outputs each) and one
 * producer warpgroup: a 128x128 output tile, K in steps of TWS_TILE_K. Two
 * such blocks share an SM, so one block's epilogue and barrier waits hide
 * behind the other's FFMAs. Registers decide the shape: 16 warps per SM
 * launch with 128 registers each, too few for 128 accumulators; setmaxnreg
 * (sm_90a) moves the producers down to TWS_PRODUCER_REGS and the consumers up
 * to TWS_CONSUMER_REGS (4 x 24 + 4 x 232 = 8 x 128 per block). TWS_TILE_K is
 * a compile-time shape because the swizzle and the unrolled compute loop
 * depend on it. The register split and TWS_TILE_K are the measured choices
 * in bench/results/tma-ws/README.md. */
#ifndef PG_TMA_WS_H
#define PG_TMA_WS_H

#ifndef TWS_TILE_K
#define TWS_TILE_K 32
#endif
#define TWS_TILE_M 128
#define TWS_TILE_N 128
#define TWS_CONSUMERS 128 /* one warpgroup */
#define TWS_THREADS (TWS_CONSUMERS + 128) /* + the producer warpgroup */
#ifndef TWS_PRODUCER_REGS
#define TWS_PRODUCER_REGS 24
#define TWS_CONSUMER_REGS 232
#endif
#define TWS_THREAD_M 8
#define TWS_THREAD_N 16
/* A's rows are TWS_TILE_K floats; the copy engine swizzles them in 16-byte
 * pieces over that many bytes (32, 64 or 128), which spreads the 4 rows a
 * warp reads at once over distinct banks. */
#define TWS_A_ROW_BYTES (TWS_TILE_K * 4)
#define TWS_STAGE_A_BYTES (TWS_TILE_M * TWS_TILE_K * 4)
#define TWS_STAGE_B_BYTES (TWS_TILE_K * TWS_TILE_N * 4)
#define TWS_STAGE_BYTES (TWS_STAGE_A_BYTES + TWS_STAGE_B_BYTES)
#define TWS_STAGE_SYNC_BYTES 16 /* full[s] and empty[s] */
#define TWS_MIN_BLOCKS_PER_SM 2
/* The smaller tile, 128 x 64 (tma_ws_n64): 8x8 outputs per consumer thread,
 * three blocks per SM, whose launch gives 80 registers a thread; setmaxnreg
 * moves them to 4 x 24 + 4 x 136 = 8 x 80 per block. */
#define TWS_SMALL_TILE_N 64
#define TWS_SMALL_THREAD_N 8
#define TWS_SMALL_CONSUMER_REGS 136
#define TWS_SMALL_MIN_BLOCKS_PER_SM 3
#define TWS_SMALL_STAGE_BYTES (TWS_STAGE_A_BYTES + TWS_TILE_K * TWS_SMALL_TILE_N * 4)
/* The narrow tile, 128 x 32 (tma_ws_n32), for a short N: 8x4 outputs per
 * consumer thread (the warp's 8 column groups of 4 span the tile), three
 * blocks per SM with the small tile's register split. */
#define TWS_NARROW_TILE_N 32
#define TWS_NARROW_THREAD_N 4
#define TWS_NARROW_STAGE_BYTES (TWS_STAGE_A_BYTES + TWS_TILE_K * TWS_NARROW_TILE_N * 4)
/* The tall tile, 256 x 128 (tma_ws_m256): two consumer warpgroups (8x16
 * outputs a thread, as the 128 x 128 tile) share each stage's B, one block
 * per SM. The launch gives 384 threads 168 registers each; setmaxnreg moves
 * them to 4 x 24 + 8 x 232 warps' worth (62464 of the 64512). */
#define TWS_TALL_TILE_M 256
#define TWS_TALL_CONSUMERS 256
#define TWS_TALL_THREADS (TWS_TALL_CONSUMERS + 128)
#define TWS_TALL_MIN_BLOCKS_PER_SM 1
#define TWS_TALL_STAGE_A_BYTES (TWS_TALL_TILE_M * TWS_TILE_K * 4)
#define TWS_TALL_STAGE_BYTES (TWS_TALL_STAGE_A_BYTES + TWS_STAGE_B_BYTES)
/* The wide tile, 128 x 256 (tma_ws_n256), for a short M against a long N:
 * two consumer warpgroups (8x16 outputs a thread, as the 128 x 128 tile)
 * share each stage's A, each 128 of B's columns; the tall tile's launch
 * (384 threads, one block per SM) and register split. */
#define TWS_WIDE_TILE_N 256
#define TWS_WIDE_STAGE_B_BYTES (TWS_TILE_K * TWS_WIDE_TILE_N * 4)
#define TWS_WIDE_STAGE_BYTES (TWS_STAGE_A_BYTES + TWS_WIDE_STAGE_B_BYTES)
/* The short tile, 64 x 128 (tma_ws_m64), for a short M: one consumer
 * warpgroup, each warp pair 64 rows by 64 columns (8x8 outputs a thread, as
 * the small tile), three blocks per SM with the small tile's register split. */
#define TWS_SHORT_TILE_M 64
#define TWS_SHORT_STAGE_A_BYTES (TWS_SHORT_TILE_M * TWS_TILE_K * 4)
#define TWS_SHORT_STAGE_BYTES (TWS_SHORT_STAGE_A_BYTES + TWS_STAGE_B_BYTES)
/* The flat tile, 32 x 128 (tma_ws_m32), for an M of 17 to 32, where the
 * short tile pads half its rows: the short tile's warps and columns with
 * half its rows, 4x8 outputs a thread (rows 8 apart), three blocks per SM
 * with the small tile's register split. */
#define TWS_FLAT_TILE_M 32
#define TWS_FLAT_THREAD_M 4
#define TWS_FLAT_STAGE_A_BYTES (TWS_FLAT_TILE_M * TWS_TILE_K * 4)
#define TWS_FLAT_STAGE_BYTES (TWS_FLAT_STAGE_A_BYTES + TWS_STAGE_B_BYTES)
/* The thin tile, 128 x 16 (tma_ws_n16), for an N of 16 or less, where the
 * narrow tile pads at least half its columns: a warp's lanes take 8 rows
 * (lane / 4) by 4 column groups of 4 (lane % 4), 4x4 outputs a thread,
 * its rows 32 apart (the warps' 8-row bands between them), three blocks
 * per SM with the small tile's register split. */
#define TWS_THIN_TILE_N 16
#define TWS_THIN_THREAD_M 4
#define TWS_THIN_ROW_STEP 32
#define TWS_THIN_STAGE_BYTES (TWS_STAGE_A_BYTES + TWS_TILE_K * TWS_THIN_TILE_N * 4)

#endif
