/* Per-GPU tuned configuration (src/tuning.c): data, not constants in the
 * kernels, and the rules by which the selectors (auto, auto_tf32,
 * auto_emulated) choose. Each field is documented here once;
 * docs/tuning.md says how auto's model uses them, how they were measured
 * on the H200 and how to tune a new GPU. */
#ifndef PG_TUNING_H
#define PG_TUNING_H

#ifdef __cplusplus
extern "C" {
#endif

/* One of a selector's candidates. For a call the selector plans each
 * candidate and runs the best predicted: its time is the work at
 * speed_percent x wave fill x useful share x K share x block K share,
 * plus a first kernel's bytes at the memory's rate, plus call_us
 * (docs/tuning.md). */
typedef struct {
  /* The registry entry's stable name; a name the registry lacks, or one
   * outside the selector's precision, is skipped. */
  const char *variant;
  /* Its pipeline's stage count; 0: the entry's default. */
  int stages;
  /* Its measured speed where its blocks fill whole waves, in percent of
   * the selector's unit: tma_ws's for auto and auto_emulated (100: 0.98 x
   * cuBLAS on an H200), cuBLAS TF32's for auto_tf32. */
  int speed_percent;
  /* Its blocks resident on an SM at once: the size of a wave (x SMs) whose
   * fill the model counts. */
  int blocks_per_sm;
  /* A cost that grows with the tiles' area, not with K (each tile's start
   * and end), in elements of K: the speed is scaled by K / (K +
   * k_overhead); 0: none. */
  int k_overhead;
  /* A block's fixed cost (its pipeline's fill, paid again by each range of
   * a split K), in elements of K: scaled by Kb / (Kb + k_block_overhead),
   * Kb a block's K; 0: none. */
  int k_block_overhead;
  /* A call's fixed time, microseconds: its launches, its pipeline's fill
   * and drain where one wave holds every block. */
  int call_us;
} pg_auto_rule;

/* skinny_ffma's forms, the indices of skinny_rate_percent: its short-M
 * chunks of 1, 2, 4, 8 and 16 rows of A, then its short-N chunks of 1, 2,
 * 4 and 8 columns of B. */
enum {
  PG_SKINNY_ROWS_1,
  PG_SKINNY_ROWS_2,
  PG_SKINNY_ROWS_4,
  PG_SKINNY_ROWS_8,
  PG_SKINNY_ROWS_16,
  PG_SKINNY_COLS_1,
  PG_SKINNY_COLS_2,
  PG_SKINNY_COLS_4,
  PG_SKINNY_COLS_8,
  PG_SKINNY_FORMS
};

#define PG_AUTO_MAX_RULES 20 /* a list holds at most 19 and its NULL end */

typedef struct {
  /* ---- Which GPU the row is for ---- */
  /* Compute capability, major x 10 + minor; 0: any. */
  int cc;
  /* The GPU's SM count; 0: any. */
  int sm_count;
  /* The GPU and the results pages behind the numbers (printed by tools). */
  const char *measured_on;

  /* ---- tma_ws and its forms ---- */
  /* Tile rows per group of the rasterised tile order. */
  int tma_ws_group_m;
  /* Resident blocks per SM of a persistent grid; 0: one block per tile. */
  int tma_ws_blocks_per_sm;
  /* At or below this many K steps (of TWS_TILE_K), tma_ws (the 128 x 128
   * tile) runs a persistent grid of two blocks an SM all the same; 0:
   * never. */
  int tma_ws_persistent_max_k_tiles;
  /* That persistent grid's speed, in percent of one block a tile, for
   * auto's model. */
  int tma_ws_persistent_speed_percent;
  /* The fewest K steps (of TWS_TILE_K) a range of a split K may have. */
  int tma_ws_split_min_k_tiles;
  /* What a block of a split K costs beyond its K steps (its pipeline's
   * fill, its partial sums' stores), in K steps, for the model that
   * chooses the split (pg_configure_split_tail). */
  int tma_ws_split_unit_cost;
  /* The GPU's FP32 FMA rate (unit_tflops) over the bandwidth its memory
   * keeps for plain loads and stores (bytes a second): prices a split's
   * reduction and a first kernel's bytes in the models. */
  int flops_per_byte;
  /* TFLOP/s that speed_percent 100 stands for: tma_ws's (auto,
   * auto_emulated) and cuBLAS TF32's (auto_tf32), at 8192^3; they turn a
   * rule's call_us and a first kernel's bytes into the model's units. */
  int unit_tflops, tf32_unit_tflops;
  /* 1: a split K's ranges of a tile are added up in a cluster of their
   * blocks, through shared memory, where the clusters fit (the tma_ws
   * forms, skinny_ffma); 0: always in planes and a second kernel. */
  int split_in_clusters;

  /* ---- The emulated entries (wgmma_3xtf32) ---- */
  /* K steps (of 32) summed on the tensor cores before their sum is added
   * into FP32 registers, where a block's K >= emulated_sum_min_k; 0: all
   * of K on the tensor cores (for measuring the error that makes). */
  int emulated_sum_steps;
  /* The block K (elements; its range where K is split) from which
   * emulated_sum_steps applies; below it, every step is added. */
  int emulated_sum_min_k;
  /* The fewest K steps (of 32) a range may have where they split K. */
  int emulated_split_min_k_tiles;
  /* The largest N at which A is split into its parts in shared memory (by
   * the producer warpgroup, where TMA reads A and B in place); above it, a
   * first kernel writes A's parts into the workspace. */
  int emulated_fused_max_n;
  /* wgmma_fp16x3: stages (of 64 of K) whose three products the tensor
   * cores sum before the sum is added into FP32 registers (1: every
   * stage). */
  int fp16x3_sum_stages;
  /* wgmma_fp16x3's split: 0, a block a unit of lines, all of them in the
   * grid; n > 0, n blocks an SM walk the units, so that fewer lines are in
   * flight at once and the second read of each (the split, after its span)
   * may find it still in L2. More than an SM holds (3, its launch bounds)
   * leaves the rest for a second wave. */
  int fp16x3_split_blocks_per_sm;

  /* ---- Launches ---- */
  /* 1: a kernel that waits for the one before it in a call (a tma_ws form
   * behind its operand copies, a reduction behind the split kernel) is
   * launched programmatically, overlapping its launch with that one's end;
   * 0: plain stream order. */
  int programmatic_launch;

  /* ---- skinny_ffma ---- */
  /* Each form's speed at a full chunk, in percent of skinny_ffma's rule's
   * speed_percent, indexed by PG_SKINNY_*. */
  int skinny_rate_percent[PG_SKINNY_FORMS];
  /* A chunk after the first, in percent of the first's cost (its blocks run
   * beside the first's and find the long operand in L2). */
  int skinny_chunk_percent;
  /* The most a call's speed share may reach, in percent (many chunks are
   * bound by FFMA). */
  int skinny_cap_percent;
  /* The form of 5 to 8 columns (the BAND form; the figure was fitted on
   * the RING form it replaced): its speed at 8 columns, in percent of the
   * rule's speed_percent, scaled by N / 8. */
  int skinny_ring_percent;

  /* ---- The selectors' candidates, each list ending at a NULL variant ----
   * Of those this GPU runs (architecture, shared memory, a loadable image)
   * and that accept the layout: the best predicted, the first on a tie. */
  /* auto's: strict FP32 entries. */
  pg_auto_rule auto_rules[PG_AUTO_MAX_RULES];
  /* auto_tf32's: TF32 entries, and strict ones where memory sets the pace
   * (cublas_tf32 is the unit, no candidate). */
  pg_auto_rule auto_tf32_rules[PG_AUTO_MAX_RULES];
  /* auto_emulated's: the emulated entries' own rules, then auto_rules
   * unchanged (so it never predicts slower than auto; tests/test_tma.c
   * holds it to that). */
  pg_auto_rule auto_emulated_rules[PG_AUTO_MAX_RULES];
} pg_tuning;

/* The row for a device: the first whose cc and SM count match, else the
 * untuned row (the H200's values). */
pg_tuning pg_tuning_row(int cc, int sm_count);

/* A row with the environment's overrides (for tuning runs), each a number:
 * PIPEGEMM_TMA_WS_GROUP_M (tma_ws_group_m), PIPEGEMM_TMA_WS_BLOCKS_PER_SM
 * (tma_ws_blocks_per_sm at every K: tma_ws_persistent_max_k_tiles 0),
 * PIPEGEMM_EMULATED_SUM_STEPS (emulated_sum_steps at every K:
 * emulated_sum_min_k 0), PIPEGEMM_EMULATED_SPLIT_MIN_K_TILES,
 * PIPEGEMM_EMULATED_FUSED_SPLIT (1 fuses at every N, 0 at none),
 * PIPEGEMM_FP16X3_SUM_STAGES (fp16x3_sum_stages, 1 or more),
 * PIPEGEMM_FP16X3_SPLIT_BLOCKS_PER_SM (fp16x3_split_blocks_per_sm),
 * PIPEGEMM_PROGRAMMATIC_LAUNCH and PIPEGEMM_SPLIT_IN_CLUSTERS (0: off, any
 * other number: on).
 * The environment is read once, at the process's first plan. */
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
