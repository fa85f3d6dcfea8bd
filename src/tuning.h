/* Per-GPU tuned configuration (src/tuning.c): data, not constants in the
 * kernels, and the rules by which `auto` chooses. */
#ifndef PG_TUNING_H
#define PG_TUNING_H

#ifdef __cplusplus
extern "C" {
#endif

/* One of auto's candidates: a registry entry by name, at a stage count,
 * with what was measured of it: its speed where its blocks fill whole waves
 * of the GPU (relative to tma_ws's there), and the blocks of it an SM holds. For a
 * call, auto runs the candidate with the best predicted speed:
 *   speed x wave fill x useful share x K share x block K share,
 * where wave fill is the plan's blocks over the block slots of the waves
 * they take (blocks_per_sm x SMs each), useful share is M x N over the
 * tiles' area (a 128-wide tile on N = 64 computes half zeros; or the
 * launch's speed_share where its configure sets one), and the K
 * shares charge the fixed costs below (1 where they are 0). */
typedef struct {
  const char *variant;
  int stages;        /* 0: the entry's default */
  int speed_percent; /* at full waves, relative to tma_ws's (100: 0.98 x cuBLAS on an H200) */
  int blocks_per_sm;
  /* Fixed costs in units of K: a call's (a first kernel, launches), and a
   * block's (its pipeline's fill, paid again by each range of a split K):
   * the predicted speed is speed_percent x K / (K + k_overhead) x
   * Kb / (Kb + k_block_overhead), Kb a block's K; 0: none. */
  int k_overhead, k_block_overhead;
} pg_auto_rule;

#define PG_SKINNY_FORMS 9 /* skinny_ffma: five short-M chunks, four short-N chunks */

#define PG_AUTO_MAX_RULES 16 /* a list holds at most 15 and its NULL end */

typedef struct {
  int cc;        /* compute capability major*10 + minor this row is for; 0: any */
  int sm_count;  /* SMs of the GPU it was measured on; 0: any */
  const char *measured_on; /* the GPU and the results file behind the numbers */
  /* tma_ws: tile rows per group of the rasterised order, and resident
   * blocks per SM of the persistent grid (0: one block per tile, no
   * persistence). */
  int tma_ws_group_m;
  int tma_ws_blocks_per_sm;
  /* tma_ws (the 128 x 128 tile, two blocks an SM): at or below this many K
   * steps (of TWS_TILE_K) a persistent grid of two blocks an SM, whose
   * producers load the next tile while the consumers store the last (0:
   * never); and its speed there, in percent of one block a tile, for
   * auto's model. */
  int tma_ws_persistent_max_k_tiles, tma_ws_persistent_speed_percent;
  /* tma_ws_splitk: the fewest K steps (of TWS_TILE_K) a split may have. */
  int tma_ws_split_min_k_tiles;
  /* tma_ws_splitk and its forms: what a block of a split K costs beyond
   * its K steps (its pipeline's fill, its partial sums' stores), in K steps,
   * for the model that chooses the split (pg_configure_split_tail). */
  int tma_ws_split_unit_cost;
  /* The GPU's FP32 FMA rate (FLOPs a second) over the bandwidth its memory
   * keeps for a reduction's plain loads and stores (bytes a second), for
   * the same model's cost of adding partial sums up. */
  int flops_per_byte;
  /* The emulated entries: K steps (of 32) summed on the tensor cores before
   * their sum is added into FP32 registers, where a block's K (its range,
   * where K is split) >= emulated_sum_min_k (below it, every step: there
   * the tensor cores' sums weigh more in the error); 0: all of K on the
   * tensor cores (for measuring what that does to the error). */
  int emulated_sum_steps, emulated_sum_min_k;
  /* The emulated entries' split K (where their tiles leave SMs idle): the
   * fewest K steps (of 32) a split may have. */
  int emulated_split_min_k_tiles;
  /* Where TMA reads A and B where they are and N <= emulated_fused_max_n,
   * the emulated kernel splits A's stages in shared memory (its producer
   * warpgroup); elsewhere a first kernel of the call writes A's parts into
   * the workspace. */
  int emulated_fused_max_n;
  /* 1: a kernel of a call that waits for the kernel before it itself (the
   * tma_ws forms behind their operand copies, the split reduction behind
   * the split kernel) is launched programmatically behind it, so that its
   * launch and set-up overlap that one's end; 0: in plain stream order. */
  int programmatic_launch;
  /* 1: a tma_ws form whose K is split adds each tile's ranges up in a
   * cluster of their blocks, through their shared memory, where it can
   * (13_tma_ws_splitk.cu: configure_in_clusters), instead of in planes and
   * a second kernel; 0: always the planes. */
  int split_in_clusters;
  /* skinny_ffma: each form's speed at a full chunk, in percent of the
   * skinny rule's speed_percent: its short-M chunks of 1, 2, 4, 8 and 16
   * rows of A, then its short-N chunks of 1, 2, 4 and 8 columns of B.
   * auto's model of a call (src/kernels/15_skinny_ffma.cu) is the form's
   * rate times the short side over its chunks' width, where a chunk after
   * the first costs skinny_chunk_percent of one (its blocks run beside the
   * first's and find the long operand in L2), and at most
   * skinny_cap_percent (where many chunks make it bound by its FFMA). */
  int skinny_rate_percent[PG_SKINNY_FORMS];
  int skinny_chunk_percent, skinny_cap_percent;
  /* skinny_ffma's BAND form of 5 to 8 columns (it took the RING form's
   * place there, and its figure, fitted on the RING form, which it runs
   * faster than at most shapes): its speed at 8 columns, in percent of
   * the skinny rule's speed_percent, scaled by N / 8. */
  int skinny_ring_percent;
  /* auto's candidates, ending at a NULL variant: of those this GPU runs
   * (architecture, shared memory, a loadable kernel image) and that accept
   * the layout, the best predicted; the first on a tie. */
  pg_auto_rule auto_rules[PG_AUTO_MAX_RULES];
  /* auto_tf32's: the TF32 entries (speed_percent relative to cuBLAS TF32's
   * at full waves, 100: cublas_tf32 itself, which is no candidate). */
  pg_auto_rule auto_tf32_rules[PG_AUTO_MAX_RULES];
  /* auto_emulated's: the FP32-accurate entries, emulated and strict (in
   * auto's unit: 100 is tma_ws's speed). */
  pg_auto_rule auto_emulated_rules[PG_AUTO_MAX_RULES];
} pg_tuning;

/* The row for a device: the first whose cc and SM count match. */
pg_tuning pg_tuning_row(int cc, int sm_count);

/* A row with the environment's overrides of its tma_ws fields (for tuning
 * runs): PIPEGEMM_TMA_WS_GROUP_M and PIPEGEMM_TMA_WS_BLOCKS_PER_SM, when set
 * to a number (the second then at every K: tma_ws_persistent_max_k_tiles
 * 0), of emulated_sum_steps (PIPEGEMM_EMULATED_SUM_STEPS, then at
 * every K: emulated_sum_min_k 0), of emulated_split_min_k_tiles
 * (PIPEGEMM_EMULATED_SPLIT_MIN_K_TILES) and of emulated_fused_max_n
 * (PIPEGEMM_EMULATED_FUSED_SPLIT: 1 fuses at every N, 0 at none) and of
 * programmatic_launch (PIPEGEMM_PROGRAMMATIC_LAUNCH=0 or 1) and of
 * split_in_clusters (PIPEGEMM_SPLIT_IN_CLUSTERS=0 or 1). The environment
 * is read once, at the process's first plan. */
pg_tuning pg_tuning_with_env(const pg_tuning *row);
/* Reads the PIPEGEMM_* overrides again (the library reads them once, at
 * its first plan): for tests that set them halfway through a process,
 * while no other thread plans. */
void pg_tuning_reread_environment(void);

/* Both: the row for a device, overridden by the environment. */
pg_tuning pg_tuning_for(int cc, int sm_count);

#ifdef __cplusplus
}
#endif
#endif
