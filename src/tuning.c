/* The tuned configurations, one row per GPU it was tuned on, most specific
 * first; the last row matches anything. To tune a new GPU: run
 * scripts/tune-tma-ws.sh on it and add a row. */
#include "tuning.h"

#include <stdlib.h>

static const pg_tuning rows[] = {
    /* NVIDIA H200 (132 SMs), 2026-11-29, bench/results/h200-tma.md: one
     * block per tile beat the persistent grid (2 blocks/SM) at 4096^3,
     * 2.772 against 2.846 ms, and at 8192^3, and tied at 2048^3; the group size
     * moved nothing beyond noise (4, 8, 16: 2.772-2.773 ms). At 1024^3 (64
     * tiles) tma took 0.1275 ms, mbarrier 0.1374, tma_ws 0.2025; at 4096^3
     * mbarrier (3.52 ms) is the fastest kernel without TMA. */
    {90, 132, "NVIDIA H200, bench/results/h200-tma.md", 8, 0, 1, "tma", 4, "mbarrier", 2},
    /* Untuned Hopper and anything else: the H200's choices. */
    {0, 0, "untuned (the H200's choices)", 8, 0, 1, "tma", 4, "mbarrier", 2},
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

pg_tuning pg_tuning_for(int cc, int sm_count) {
  const int count = (int)(sizeof rows / sizeof rows[0]);
  pg_tuning t = rows[count - 1];
  for (int i = 0; i < count; ++i)
    if ((rows[i].cc == 0 || rows[i].cc == cc) &&
        (rows[i].sm_count == 0 || rows[i].sm_count == sm_count)) {
      t = rows[i];
      break;
    }
  t.tma_ws_group_m = env_int("PIPEGEMM_TMA_WS_GROUP_M", t.tma_ws_group_m);
  if (t.tma_ws_group_m < 1) t.tma_ws_group_m = 1;
  t.tma_ws_blocks_per_sm = env_int("PIPEGEMM_TMA_WS_BLOCKS_PER_SM", t.tma_ws_blocks_per_sm);
  return t;
}
