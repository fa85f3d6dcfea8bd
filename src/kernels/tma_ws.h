/* The flagship's tiles: the 128 x 128 tile of tma_ws (12_tma_ws.cu), and
 * TWS_FORMS, the tile forms of the family (13_tma_ws_splitk.cu), one line
 * each. Plain C, so that the registry (src/registry.c), the tests and the
 * plots (scripts/report.py reads the lines) take the forms from here.
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
/* A form of fewer than 16 columns a consumer thread runs three blocks an
 * SM, whose launch gives 80 registers a thread; setmaxnreg moves them to
 * 4 x 24 + 4 x 136 = 8 x 80 per block. One of two consumer warpgroups runs
 * one block an SM: the launch gives its 384 threads 168 registers each,
 * and setmaxnreg moves them to 4 x 24 + 8 x 232 warps' worth (62464 of the
 * 64512). */
#define TWS_SMALL_CONSUMER_REGS 136
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

/* How a form's consumer warpgroups cover its tile (the consumers of
 * 12_tma_ws.cu; w the warp, of its warpgroup where there are two):
 *   STACKED  a warpgroup per 128 rows; warps 2p and 2p+1 interleave in rows
 *            64p .. 64p+63, a thread 8 rows 8 apart (lane / 8, the 4 rows a
 *            warp reads at once in 4 distinct swizzle positions, so A's
 *            reads are free of bank conflicts) by TN / 8 columns, groups of
 *            4 32 apart (lane % 8). Two warpgroups one above the other
 *            share each stage's B.
 *   SIDE     one warpgroup for a short M (TM of 32 or 64), warp pair p all
 *            TM rows at columns 64p .. 64p+63: TM / 8 rows a thread (8
 *            apart) by 8 columns.
 *   WIDE     a warpgroup per 128 columns (q: columns 128q ..), each as
 *            STACKED on 128 rows: two share each stage's A.
 *   THIN     one warpgroup for an N of 16: warp w's lanes rows 8w + lane / 4
 *            (+ TWS_THIN_ROW_STEP i, its rows the warps' 8-row bands apart)
 *            by 4 column groups of 4 (lane % 4); the 8 rows a warp reads at
 *            once fall in the 8 swizzle positions. */
#define TWS_LAYOUT_STACKED 0
#define TWS_LAYOUT_SIDE 1
#define TWS_LAYOUT_WIDE 2
#define TWS_LAYOUT_THIN 3
#define TWS_ROW_STEP 8       /* a thread's rows 8 apart ... */
#define TWS_THIN_ROW_STEP 32 /* ... in THIN, 32 */
#define TWS_COL_STEP 32      /* its 4-column groups 32 apart */

/* The tile forms, in the registry's order (src/variants.h takes them with
 * one line, PG_VARIANT_FORMS): each an entry of 13_tma_ws_splitk.cu, the
 * flagship's kernel on its tile, K split where the tiles leave block slots
 * idle, any layout. A form is one line here, and a rule in src/tuning.c's
 * row of a GPU if auto is to pick it (docs/adding-a-variant.md):
 *   name        the entry's name
 *   TM, TN      the tile (numbers: the descriptions print them), one form a tile
 *   layout, WG  how its WG consumer warpgroups cover it (above)
 *   a thread    THREAD_M x THREAD_N outputs a consumer thread
 *   an SM       blocks an SM its launch is built for (registers: 2 or 1
 *               at 16 columns a thread, 3 below; fewer where a block's
 *               stages do not fit the SM)
 *   stages      the most stages it takes (2 up; 3 by default)
 *   technique   what it is for, one line of at most 60 characters
 * The kernel's code is one template for all (12); the tile's traits
 * (tws_tile), its shape for the launch and its entry come from the line.
 * The plots draw form i in the list's i-th look (scripts/looks.py): a form
 * added before others moves their looks, one added last keeps them. */
/*   name             TM   TN   layout   WG a thread an SM stages  technique */
#define TWS_FORMS(FORM)                                                                                  \
  FORM(tma_ws_splitk, 128, 128, STACKED, 1, 8, 16,   2,    8,     "tma_ws, K split where its tiles leave SMs idle")   \
  FORM(tma_ws_n64,    128,  64, STACKED, 1, 8,  8,   3,    8,     "tma_ws on a 128x64 tile, three blocks an SM")      \
  FORM(tma_ws_m256,   256, 128, STACKED, 2, 8, 16,   1,    4,     "tma_ws on a 256x128 tile, two consumer warpgroups") \
  FORM(tma_ws_n256,   128, 256, WIDE,    2, 8, 16,   1,    4,     "tma_ws on 128x256 for a short M against a long N") \
  FORM(tma_ws_m64,     64, 128, SIDE,    1, 8,  8,   3,    8,     "tma_ws on a 64x128 tile for a short M")            \
  FORM(tma_ws_m32,     32, 128, SIDE,    1, 4,  8,   3,    8,     "tma_ws on a 32x128 tile for an M of 17 to 32")     \
  FORM(tma_ws_n32,    128,  32, STACKED, 1, 8,  4,   3,    8,     "tma_ws on a 128x32 tile for a short N")            \
  FORM(tma_ws_n16,    128,  16, THIN,    1, 4,  4,   3,    8,     "tma_ws on a 128x16 tile for an N of 16 or less")  \
  /* the list's end: every line above ends in a backslash, a new one too */

/* tma_ws's own settings (pg_gemm_args.own; pg_own in the kernels):
 * stream-K after sk_first_tile whole tiles (data-parallel waves), sk_blocks
 * blocks sharing the remaining tiles' K steps evenly; a tile cut between
 * blocks goes to their slots in `partials`, and the fixup kernel adds them
 * up (14_tma_ws_streamk.cu). Zeros: no stream-K. */
typedef struct {
  int stream_k, sk_blocks, sk_first_tile;
} tws_own;

#endif
