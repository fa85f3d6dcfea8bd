/* The tuned configurations, one row per GPU it was tuned on, most specific
 * first; the last row matches anything. To tune a new GPU: run
 * scripts/tune-tma-ws.sh on it and add a row. Rows name registry entries by
 * their stable names: a name the registry lacks is skipped. */
#include "tuning.h"

#include <stdlib.h>

/* What auto runs where nothing faster applies: the tuned cp.async-family
 * kernel without TMA, and below sm_80 the one family without cp.async. */
#define PG_AUTO_FALLBACKS {"mbarrier", 2, 0, 0}, {"tiled32_db", 2, 0, 0}

static const pg_tuning rows[] = {
    /* NVIDIA H200 (132 SMs), bench/results/h200-tma.md: one block per tile
     * beat the persistent grid; the group size moved nothing beyond noise;
     * tma_ws needs a tile per SM; below that, K split to fill the SMs. */
    {90, 132, "NVIDIA H200, bench/results/h200-tma.md", 8, 0, 2,
     {{"tma_ws_splitk", 3, 0, 1}, {"tma_ws", 3, 1, 0}, {"tma", 4, 0, 0}, PG_AUTO_FALLBACKS}},
    /* Untuned Hopper and anything else: the H200's choices. */
    {0, 0, "untuned (the H200's choices)", 8, 0, 2,
     {{"tma_ws_splitk", 3, 0, 1}, {"tma_ws", 3, 1, 0}, {"tma", 4, 0, 0}, PG_AUTO_FALLBACKS}},
};

/* A non-negative integer from the environment, or `fallback`. */
static int env_int(const char *name, int fallback) {
  const char *text = getenv(name);
  if (text == NULL || *text == '\0') return fallback;
  char *end = NULL;
  long v = strtol(text, &end, 10);
  if (*end != '\0' || v < 0 || v > 1024) return fallback;
  return (int)v;
}

pg_tuning pg_tuning_row(int cc, int sm_count) {
  const int count = (int)(sizeof rows / sizeof rows[0]);
  for (int i = 0; i < count; ++i)
    if ((rows[i].cc == 0 || rows[i].cc == cc) &&
        (rows[i].sm_count == 0 || rows[i].sm_count == sm_count))
      return rows[i];
  return rows[count - 1];
}

pg_tuning pg_tuning_for(int cc, int sm_count) {
  const pg_tuning row = pg_tuning_row(cc, sm_count);
  return pg_tuning_with_env(&row);
}

pg_tuning pg_tuning_with_env(const pg_tuning *row) {
  pg_tuning t = *row;
  t.tma_ws_group_m = env_int("PIPEGEMM_TMA_WS_GROUP_M", t.tma_ws_group_m);
  if (t.tma_ws_group_m < 1) t.tma_ws_group_m = 1;
  t.tma_ws_blocks_per_sm = env_int("PIPEGEMM_TMA_WS_BLOCKS_PER_SM", t.tma_ws_blocks_per_sm);
  return t;
}
