/* Per-GPU tuned configuration (src/tuning.c): data, not constants in the
 * kernels. */
#ifndef PG_TUNING_H
#define PG_TUNING_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int cc;        /* compute capability major*10 + minor this row is for; 0: any */
  int sm_count;  /* SMs of the GPU it was measured on; 0: any */
  const char *measured_on; /* the GPU and the results file behind the numbers */
  /* tma_ws: tile rows per group of the rasterised order, and resident
   * blocks per SM of the persistent grid (0: one block per tile, no
   * persistence). */
  int tma_ws_group_m;
  int tma_ws_blocks_per_sm;
  /* auto takes tma_ws only with at least this many of its output tiles per
   * SM (fewer leave SMs idle); below that, where TMA accepts the layout,
   * small_variant at small_stages; and where TMA cannot run (older GPU, a
   * layout TMA rejects), fallback_variant at fallback_stages. */
  int auto_tma_min_tiles_per_sm;
  const char *small_variant;
  int small_stages;
  const char *fallback_variant;
  int fallback_stages;
} pg_tuning;

/* The row for the current device: the first whose cc and SM count match.
 * PIPEGEMM_TMA_WS_GROUP_M and PIPEGEMM_TMA_WS_BLOCKS_PER_SM, when set to a
 * number, override the tma_ws fields (for tuning runs). */
pg_tuning pg_tuning_for(int cc, int sm_count);

#ifdef __cplusplus
}
#endif
#endif
