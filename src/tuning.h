/* Per-GPU tuned configuration (src/tuning.c): data, not constants in the
 * kernels, and the rules by which `auto` chooses. */
#ifndef PG_TUNING_H
#define PG_TUNING_H

#ifdef __cplusplus
extern "C" {
#endif

/* One of auto's candidates: a registry entry by name, at a stage count,
 * taken for shapes with at least min_tiles_per_sm and fewer than
 * max_tiles_per_sm (0: no bound) of its output tiles (info.tile_m x
 * info.tile_n) per SM. */
typedef struct {
  const char *variant;
  int stages; /* 0: the entry's default */
  int min_tiles_per_sm;
  int max_tiles_per_sm;
} pg_auto_rule;

#define PG_AUTO_MAX_RULES 8

typedef struct {
  int cc;        /* compute capability major*10 + minor this row is for; 0: any */
  int sm_count;  /* SMs of the GPU it was measured on; 0: any */
  const char *measured_on; /* the GPU and the results file behind the numbers */
  /* tma_ws: tile rows per group of the rasterised order, and resident
   * blocks per SM of the persistent grid (0: one block per tile, no
   * persistence). */
  int tma_ws_group_m;
  int tma_ws_blocks_per_sm;
  /* tma_ws_splitk: the fewest K steps (of TWS_TILE_K) a split may have. */
  int tma_ws_split_min_k_tiles;
  /* auto's candidates, fastest first, ending at a NULL variant: it runs the
   * first that this GPU runs (architecture, shared memory, a loadable
   * kernel image), that accepts the layout, and whose size rule holds. */
  pg_auto_rule auto_rules[PG_AUTO_MAX_RULES];
} pg_tuning;

/* The row for a device: the first whose cc and SM count match. */
pg_tuning pg_tuning_row(int cc, int sm_count);

/* A row with the environment's overrides of its tma_ws fields (for tuning
 * runs): PIPEGEMM_TMA_WS_GROUP_M and PIPEGEMM_TMA_WS_BLOCKS_PER_SM, when set
 * to a number. The tma_ws planners read them when a call is planned. */
pg_tuning pg_tuning_with_env(const pg_tuning *row);

/* Both: the row for a device, overridden by the environment. */
pg_tuning pg_tuning_for(int cc, int sm_count);

#ifdef __cplusplus
}
#endif
#endif
