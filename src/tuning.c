/* The tuned configurations: one row per GPU tuned, most specific first,
 * then the untuned row, which matches any GPU. Rows name registry entries
 * by their stable names: a name the registry lacks is skipped.
 * src/tuning.h says what each field means; docs/tuning.md why each value
 * is what it is, and how to tune a new GPU. */
#include "tuning.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

/* auto's candidates on the H200, in the order that breaks a tie (the first
 * of equal predictions runs). Written once: auto_emulated's list repeats
 * it whole. */
#define H200_STRICT_RULES                                                                      \
  /* bench/results/shape-set */                                                                \
  {.variant = "tma_ws", .stages = 3, .speed_percent = 100, .blocks_per_sm = 2},                \
  {.variant = "tma_ws_splitk", .stages = 3, .speed_percent = 100, .blocks_per_sm = 2},         \
  /* bench/results/tma-ws; the tall tile first on a tie */                                     \
  {.variant = "tma_ws_m256", .stages = 3, .speed_percent = 101, .blocks_per_sm = 1},           \
  /* bench/results/short-sides ("How each form was chosen") */                                 \
  {.variant = "tma_ws_n256", .stages = 3, .speed_percent = 101, .blocks_per_sm = 1},           \
  /* bench/results/shape-set */                                                                \
  {.variant = "tma_ws_n64", .stages = 3, .speed_percent = 92, .blocks_per_sm = 3},             \
  /* bench/results/short-sides ("How each form was chosen") */                                 \
  {.variant = "tma_ws_m64", .stages = 4, .speed_percent = 93, .blocks_per_sm = 2},             \
  /* bench/results/short-sides ("How each form was chosen") */                                 \
  {.variant = "tma_ws_m32", .stages = 3, .speed_percent = 88, .blocks_per_sm = 3},             \
  /* bench/results/short-sides ("How each form was chosen"); set before it ran */              \
  {.variant = "tma_ws_n16", .stages = 3, .speed_percent = 56, .blocks_per_sm = 3},             \
  /* bench/results/short-sides ("How each form was chosen") */                                 \
  {.variant = "tma_ws_n32", .stages = 3, .speed_percent = 95, .blocks_per_sm = 3},             \
  /* bench/results/short-sides ("How each form was chosen") */                                 \
  {.variant = "skinny_ffma",                                                                   \
   .stages = 1,                                                                                \
   .speed_percent = 40,                                                                        \
   .blocks_per_sm = 1,                                                                         \
   .k_overhead = 512},                                                                         \
  /* bench/results/plans/h200-plan-before-after.txt */                                         \
  {.variant = "tma", .stages = 4, .speed_percent = 82, .blocks_per_sm = 2},                    \
  {.variant = "mbarrier", .stages = 2, .speed_percent = 78, .blocks_per_sm = 2},               \
  /* the way out below sm_80 */                                                                \
  {.variant = "tiled32_db", .stages = 2, .speed_percent = 13, .blocks_per_sm = 2},             \
  /* Any op(A), op(B) and batch, which the entries above do not take; not measured yet, so  \
   * below all of them: it runs where none of them does. */                                    \
  {.variant = "cp_async_any", .stages = 3, .speed_percent = 10, .blocks_per_sm = 2}

/* auto_emulated's own candidates, ahead of the strict ones (the first on a
 * tie), fitted to the H100's run of the committed set at tree 251e513
 * (bench/results/products): the model's times within 9 % (FP16, at 2
 * stages; 3 are 2-7 % faster, tree 84831d4, and the figure is left at 2's,
 * which at 2048^3 still runs 3xTF32 where it is faster) and 12 % (3xTF32)
 * rms of the measured at the shapes where M and N >= 512 (31 and 32 % for
 * the rules before). The split's pass is its first kernel's bytes
 * (pg_model_hints.first_bytes);
 * call_us is a call's fixed time beyond the strict rules', which carry
 * none: the FP16 form's three launches, 3xTF32's fill and its split K's
 * reduction. So the FP16 form runs where M N K is large enough that its
 * products outweigh the split (about 3000^3 at squares, from 2048 rows
 * and columns at long K); 3xTF32 from about 768^3, strict below. */
#define H200_EMULATED_RULES                                                                    \
  {.variant = "wgmma_fp16x3",                                                                  \
   .stages = 3,                                                                                \
   .speed_percent = 390,                                                                       \
   .blocks_per_sm = 1,                                                                         \
   .k_overhead = 600,                                                                          \
   .call_us = 32},                                                                             \
  {.variant = "wgmma_3xtf32",                                                                  \
   .stages = 4,                                                                                \
   .speed_percent = 250,                                                                       \
   .blocks_per_sm = 1,                                                                         \
   .k_block_overhead = 192,                                                                    \
   .call_us = 7}

/* auto_tf32's candidates on the H200, in units of cuBLAS TF32's speed.
 * bench/results/tensor-cores */
#define H200_TF32_RULES                                                                        \
  {.variant = "wgmma_tma_rs", .stages = 3, .speed_percent = 95, .blocks_per_sm = 1},           \
  {.variant = "wgmma_tma_coop_n256", .stages = 3, .speed_percent = 86, .blocks_per_sm = 1},    \
  {.variant = "wgmma_cp_async", .stages = 3, .speed_percent = 52, .blocks_per_sm = 2},         \
  {.variant = "mma_cp_async", .stages = 2, .speed_percent = 34, .blocks_per_sm = 2},           \
  /* Any op(A), op(B) and batch, which the entries above do not take; not measured yet, so  \
   * below all of them: it runs where none of them does. */                                    \
  {.variant = "mma_cp_async_any", .stages = 3, .speed_percent = 10, .blocks_per_sm = 2},       \
  /* A short side (M or N <= 8), where memory sets the pace: strict FFMA, auto's rule at     \
   * cuBLAS TF32's scale (tma_ws ~ 0.125 x it at 4096^3). bench/results/layouts */              \
  {.variant = "skinny_ffma",                                                                   \
   .stages = 1,                                                                                \
   .speed_percent = 5,                                                                         \
   .blocks_per_sm = 1,                                                                         \
   .k_overhead = 512}

static const pg_tuning h200 = {
    .cc = 90,
    .sm_count = 132,
    .measured_on = "NVIDIA H200, bench/results/tma-ws/, shape-set/ and tensor-cores/; the "
                   "emulated rules on an H100, products/",

    /* bench/results/tma-ws and partial-waves ("tma_ws on a
     * persistent grid where K <= 128") */
    .tma_ws_group_m = 8,
    .tma_ws_blocks_per_sm = 0,
    .tma_ws_persistent_max_k_tiles = 4,
    .tma_ws_persistent_speed_percent = 102,
    /* bench/results/short-sides ("How each form was chosen") */
    .tma_ws_split_min_k_tiles = 2,
    /* Estimates, not fits; what they choose: bench/results/short-sides */
    .tma_ws_split_unit_cost = 1,
    .flops_per_byte = 16,
    /* tma_ws at 0.98 x cuBLAS strict's 51.0 TFLOP/s, cuBLAS TF32 at
     * 360-400 (8192^3: bench/results/shape-set, tensor-cores) */
    .unit_tflops = 50,
    .tf32_unit_tflops = 375,
    /* bench/results/partial-waves ("Split K added up in clusters") */
    .split_in_clusters = 1,

    /* bench/results/emulated ("The design") */
    .emulated_sum_steps = 4,
    .emulated_sum_min_k = 4096,
    .emulated_split_min_k_tiles = 4,
    .emulated_fused_max_n = 512,
    /* bench/results/products: every stage (2 and 4 bought nothing); a
     * block a unit of the split's lines (1 to 3 blocks an SM walking them
     * bought nothing) */
    .fp16x3_sum_stages = 1,
    .fp16x3_split_blocks_per_sm = 0,

    /* bench/results/partial-waves ("Launches that overlap") */
    .programmatic_launch = 1,

    /* bench/results/short-sides ("How each form was chosen") */
    .skinny_rate_percent = {[PG_SKINNY_ROWS_1] = 11,
                            [PG_SKINNY_ROWS_2] = 19,
                            [PG_SKINNY_ROWS_4] = 36,
                            [PG_SKINNY_ROWS_8] = 69,
                            [PG_SKINNY_ROWS_16] = 120,
                            [PG_SKINNY_COLS_1] = 10,
                            [PG_SKINNY_COLS_2] = 20,
                            [PG_SKINNY_COLS_4] = 40,
                            [PG_SKINNY_COLS_8] = 53},
    .skinny_chunk_percent = 60,
    .skinny_cap_percent = 150,
    .skinny_ring_percent = 88,

    .auto_rules = {H200_STRICT_RULES},
    .auto_tf32_rules = {H200_TF32_RULES},
    .auto_emulated_rules = {H200_EMULATED_RULES, H200_STRICT_RULES},
};

/* The tuned rows, most specific first. */
static const pg_tuning *const rows[] = {&h200};

/* Any other GPU: the H200's values, untuned. */
static pg_tuning untuned_row(void) {
  pg_tuning t = h200;
  t.cc = 0;
  t.sm_count = 0;
  t.measured_on = "untuned (the H200's choices)";
  return t;
}

/* A non-negative integer from the environment, or -1. */
static int env_int(const char *name) {
  const char *text = getenv(name);
  if (text == NULL || *text == '\0') return -1;
  char *end = NULL;
  long v = strtol(text, &end, 10);
  if (*end != '\0' || v < 0 || v > 1024) return -1;
  return (int)v;
}

/* The PIPEGEMM_* overrides, read once, at the library's first plan: getenv
 * beside another thread's setenv is undefined, and a plan should not change
 * with the environment halfway through a process. -1: not set. */
static struct {
  int group_m, blocks_per_sm, sum_steps, split_min_k_tiles, programmatic, split_in_clusters,
      fused_split, fp16x3_sum_stages, fp16x3_split_blocks_per_sm;
} overrides;
static pthread_once_t overrides_once = PTHREAD_ONCE_INIT;

static void read_overrides(void) {
  overrides.group_m = env_int("PIPEGEMM_TMA_WS_GROUP_M");
  overrides.blocks_per_sm = env_int("PIPEGEMM_TMA_WS_BLOCKS_PER_SM");
  overrides.sum_steps = env_int("PIPEGEMM_EMULATED_SUM_STEPS");
  overrides.split_min_k_tiles = env_int("PIPEGEMM_EMULATED_SPLIT_MIN_K_TILES");
  overrides.programmatic = env_int("PIPEGEMM_PROGRAMMATIC_LAUNCH");
  overrides.split_in_clusters = env_int("PIPEGEMM_SPLIT_IN_CLUSTERS");
  overrides.fused_split = env_int("PIPEGEMM_EMULATED_FUSED_SPLIT");
  overrides.fp16x3_sum_stages = env_int("PIPEGEMM_FP16X3_SUM_STAGES");
  overrides.fp16x3_split_blocks_per_sm = env_int("PIPEGEMM_FP16X3_SPLIT_BLOCKS_PER_SM");
}

pg_tuning pg_tuning_row(int cc, int sm_count) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i)
    if ((rows[i]->cc == 0 || rows[i]->cc == cc) &&
        (rows[i]->sm_count == 0 || rows[i]->sm_count == sm_count))
      return *rows[i];
  return untuned_row();
}

pg_tuning pg_tuning_for(int cc, int sm_count) {
  const pg_tuning row = pg_tuning_row(cc, sm_count);
  return pg_tuning_with_env(&row);
}

void pg_tuning_reread_environment(void) {
  (void)pthread_once(&overrides_once, read_overrides);
  read_overrides();
}

pg_tuning pg_tuning_with_env(const pg_tuning *row) {
  (void)pthread_once(&overrides_once, read_overrides);
  pg_tuning t = *row;
  if (overrides.group_m >= 0) t.tma_ws_group_m = overrides.group_m;
  if (t.tma_ws_group_m < 1) t.tma_ws_group_m = 1;
  if (overrides.blocks_per_sm >= 0) {
    t.tma_ws_blocks_per_sm = overrides.blocks_per_sm;
    t.tma_ws_persistent_max_k_tiles = 0;
  }
  if (overrides.sum_steps >= 0) {
    t.emulated_sum_steps = overrides.sum_steps;
    t.emulated_sum_min_k = 0;
  }
  if (overrides.split_min_k_tiles >= 0) t.emulated_split_min_k_tiles = overrides.split_min_k_tiles;
  if (overrides.programmatic >= 0) t.programmatic_launch = overrides.programmatic != 0;
  if (overrides.split_in_clusters >= 0) t.split_in_clusters = overrides.split_in_clusters != 0;
  if (overrides.fused_split >= 0) t.emulated_fused_max_n = overrides.fused_split ? INT_MAX : 0;
  if (overrides.fp16x3_sum_stages >= 1) t.fp16x3_sum_stages = overrides.fp16x3_sum_stages;
  if (overrides.fp16x3_split_blocks_per_sm >= 0)
    t.fp16x3_split_blocks_per_sm = overrides.fp16x3_split_blocks_per_sm;
  return t;
}
