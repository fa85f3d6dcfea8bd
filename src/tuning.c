/* The tuned configurations, one row per GPU it was tuned on, most specific
 * first; the last row matches anything. To tune a new GPU: run
 * scripts/tune-tma-ws.sh on it and add a row. Rows name registry entries by
 * their stable names: a name the registry lacks is skipped. */
#include "tuning.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

/* auto's candidates on the H200, with their speed where they fill whole
 * waves, as measured there on 2026-11-30 (0b6d046:bench/results/h200-shapes.md;
 * tma_ws_m256: bench/results/tma-ws/README.md, row 12, 1.00-1.06 x tma_ws over five
 * shapes, 1.013 on average, the 1.06 at 2048^3 and the others within
 * 0.001 of 1, so where both fill their waves alike it wins the tie):
 * tma_ws 0.980 x cuBLAS at 8192^3, whose last wave is 97 % full, and
 * tma_ws_n64 0.914 with 98.5 % (0b6d046:bench/results/h200-shapes-sizes.csv); the split forms fill
 * the SMs where the tiles alone do not, at tma_ws's speed; tma 0.80 and
 * mbarrier 0.76 at 4096^3 (bench/results/plans/h200-plan-before-after.txt), for where TMA's
 * layout rules or tma_ws's image rule the others out; tiled32_db, the way
 * out below sm_80. The split forms take any layout, an operand TMA cannot
 * read copied first (charged by its bytes at flops_per_byte, src/plan.c):
 * there their rivals are each other and the entries without TMA (mbarrier,
 * skinny_ffma, tiled32_db); tma_ws_any, the same as tma_ws_splitk, is no
 * candidate.
 * skinny_ffma is bound by reading the long operand: its launch's speed
 * share is its form's rate (PG_H200_SKINNY) times the short side over its
 * chunks' width, later chunks at a share of the first's cost, under a cap.
 * tma_ws_m64 (64 x 128) at 4 stages, two blocks an SM (its 4 stages'
 * 96 KB fit two), since the run of 2026-12-02 00:14 UTC (tree 6b6a108,
 * bench/results/short-sides/README.md): at 64x4096x4096, 48x6144x6144 and
 * 64x8192x8192 it ran 0.96, 0.98 and 0.95 x cuBLAS where 3 stages (three
 * blocks an SM) ran 0.81, 0.89 and 0.86. Its figure at 4 stages, 93, from
 * tma_ws_m64 at 4 stages measured beside cuBLAS at the 95 shapes of
 * set.txt, held-out.txt, any-layout.txt and held-out-2.txt (tree 13a9d40,
 * 2026-12-02 02:05 UTC; bench/results/shape-set/README.md, "How
 * auto chooses"), with the other candidates' run of 23:38 UTC: a replay at
 * 90-100 found 93 and 94 best (4 choices losing more than 2 % to the
 * fastest, against 6 at 90); 93 moves 768^3 (tma_ws_n32 0.94 x cuBLAS,
 * tma_ws_m64 1.01) and 40x8192x4096 (skinny_ffma 0.83, tma_ws_m64 1.00),
 * and nothing else of those files or the short-M and short-N grids; 95
 * sends 1408^3 to it (0.98 against tma_ws_n32's 1.00). auto_emulated has
 * it at 93 too, and wgmma_3xtf32 at 233 for it (below).
 * At 3 stages, three blocks an SM, at 90: as
 * fast as tma_ws_n64 where both fill their waves (1536^3 0.81, 2560^3 0.84,
 * 3584^3 0.86 / 0.87 x cuBLAS), and for a short M it pads half what the
 * 128-row tiles pad. On a grid of short M on the H200 (M of 4 to 128 at
 * N x K of 4096^2, 8192^2 and 16384 x 4096; tree 9087454,
 * 0b6d046:bench/results/h200-skinny.md, 2026-12-01) tma_ws_m64 beat tma_ws_splitk
 * up to M = 64 (0.81-0.85 x cuBLAS against 0.47-0.54) and lost to it from
 * 80 (0.76-0.78 against 0.85-0.86 at N x K of 4096^2 and 8192^2).
 * skinny_ffma's call costs 512 of K: its speed falls where K is short, and
 * without it auto ran its earlier forms at 512^3 (0.39 x cuBLAS against
 * tma_ws_n64's 0.90; tree 03517a2; a replay over that run, the held-out
 * shapes and the short-M grid found
 * 256-1024 alike). skinny_ffma's blocks an SM are given as 1: bound by
 * memory, a last wave's idle slots cost it little (its earlier forms at
 * 6144x4x6144: 384 blocks, 0.74 x cuBLAS against tma_ws_n64's 0.64). tma_ws_n32 (128 x
 * 32, three blocks an SM) first at 93 (95 since, below), for a short N and for filling waves: on a
 * grid of N of 4 to 64 at M x K of 4096^2, 8192^2 and 16384 x 4096 (tree
 * 0271eda, 18:14 UTC; 0b6d046:bench/results/h200-skinny.md) it ran 1.08-1.53 x
 * cuBLAS at N of 4 to 32, where skinny_ffma ran 0.21-1.32 and tma_ws_n64
 * 0.63-0.86, and 0.92-0.98 at N of 40 to 64 (tma_ws_n64 0.82-0.89); over
 * the committed set (95d2951, 18:19 UTC) it ran at least tma_ws_n64's speed
 * but at 8192^3 (0.88 against 0.91) and 8192^2 x 128 (0.97 against 0.99),
 * and 0.88-0.92 x cuBLAS at the large squares, where tma_ws runs 0.97-0.98:
 * so above tma_ws_n64's 92, under tma_ws's 100. At 90, under tma_ws_n64, a
 * replay of the model over those runs left it unchosen at N of 40-64 and at
 * 1792^3 (0.85-0.95 where it ran 0.92-1.07). Raised to 95 after every
 * candidate was measured at all 70 shapes of set.txt, held-out.txt and
 * any-layout.txt (tree 96bc27f, 23:21 UTC; bench/results/shape-set/README.md,
 * "How auto chooses"): at 93 the replay (scripts/auto-replay.py) found 7 choices
 * losing more than 2 % to the fastest, 5 of them to tma_ws_n32 at shapes of
 * 1000-5000 a side (3001x5003x1001: 0.88 x cuBLAS against its 0.98) or of
 * few tiles and long K (128x128x131072: 0.86 against 0.98); at 94 3 of
 * those stay, at 95 and 96 none, and 97 changes nothing more; no large
 * square's choice moves (tma_ws_n32 0.90-0.95 there, tma_ws_m256 0.97-0.99).
 * tma_ws_n256 (128 x 256, one block an SM) at 101 as tma_ws_m256, after it
 * so that a tie goes to the tall tile: beside every other candidate at the
 * 95 shapes of those files and held-out-2.txt (run of 23:38
 * UTC; bench/results/short-sides/README.md) it ran within 1 % of tma_ws_m256 at
 * the large squares (8192^3 0.984 x cuBLAS against 0.982) and 0.91 where M
 * of 80-128 meets a long N (128x8192x8192: 0.914 against tma_ws_splitk's
 * 0.855; tma_ws_m256 pads half its rows there); a replay at 99-103 found
 * 101 best (the choices' geometric mean 1.030 x cuBLAS over the 95 shapes
 * against the fastest candidates' 1.034).
 * tma_ws_m32 (32 x 128, three blocks an SM) at 88, measured beside cuBLAS
 * at 3 and 4 stages over the 95 shapes, the short-M grid and the grid of M
 * of 17 to 128 (tree 2187628, 2026-12-03 04:41 UTC;
 * 0b6d046:bench/results/h200-m32-*-2187628-sizes.csv): 1.22-1.68 x cuBLAS at M of
 * 17 to 32 (skinny_ffma 0.82-1.17, tma_ws_m64 0.64-0.97), 1.08-1.23 at M
 * of 80 and 96 (three and four tiles of rows, none padded: tma_ws_n256
 * 0.91-0.93), 0.89-0.95 at M of 33 to 64 where tma_ws_m64 at 4 stages ran
 * 0.93-1.01; 4 stages no better (within 3 % either way). A replay of the
 * model (scripts/auto-replay.py) over those runs beside the other
 * candidates' (the 9d033fd runs, tma_ws_m64's 4-stage runs) found 88 best:
 * the choices' geometric mean 1.051 x cuBLAS over the 95 shapes (1.038
 * without it) and 1.264 over the two grids (1.141); at 92-98 it takes
 * shapes of 33-64 rows from tma_ws_m64 and large squares from the others
 * (at 96, 18 choices losing more than 2 % over the 95 against 11). It runs
 * faster than the model says at some shapes of 300-1300 a side (512^3
 * 1.10 x cuBLAS against tma_ws_n32's 0.97, 777x333x2223 0.94 against
 * 0.84), which no single figure gives it without losing the large ones.
 * tma_ws_n16 (128 x 16, three blocks an SM) at 56, set before it ran: a
 * figure that makes it the choice at N of 5 to 16 over tma_ws_n32 (95 at a
 * quarter or half its columns) and skinny_ffma's columns, and leaves N of
 * 1 to 4 to skinny_ffma (its 4-column chunk 16 against 56 x 4 / 16 = 14).
 * Measured after (tree c431862, 05:56 UTC; bench/results/short-sides/README.md,
 * "tma_ws_n16"): 1.36-2.18 x cuBLAS at N of 6 to 16 (tma_ws_n32
 * 1.18-1.63), 0.70-0.76 at the large squares; over the short-N grid auto
 * ran within 1 % of the fastest of tma_ws_n16, tma_ws_n32 and skinny_ffma
 * at every shape, so 56 stays; no replay refitted it. */
/* skinny_ffma's rates, in percent of its rule's 40, at a full chunk:
 * chunks of 1, 2, 4, 8 and 16 rows, then of 1, 2, 4 and 8 columns; a later
 * chunk's cost in percent of the first's; the cap. Fitted to its speed
 * against tma_ws_m64's and tma_ws_n32's on grids of M (N) of 1 to 32 at
 * N x K (M x K) of 4096^2, 8192^2 and 16384 x 4096 (tree 92e9644's forms,
 * 19:24 UTC; 0b6d046:bench/results/h200-skinny.md): the model's ratio of the two
 * set to the measured one averaged over the three sizes (M = 1: 2.45 x
 * tma_ws_m64's speed; 2: 2.41; 3-4: 2.35; 6-8: 2.22-2.26; 12-16:
 * 1.82-1.88; N = 4: 1.26 x tma_ws_n32's; 8: 0.83). Two chunks of 16 rows
 * ran 1.31-1.44 x one's time, not 2 x (both chunks' blocks run together,
 * the second finds B in L2): a later chunk 40 %. The cap, 150 % (60 in
 * tma_ws's 100), keeps many chunks, bound by FFMA, below the tiles (2048^3:
 * 0.59 x cuBLAS); at 64 x 4096 x 4096 it leaves tma_ws_m64 chosen (0.81
 * against 0.63). The columns' 1 and 2 (no TMA entry reads those N) are
 * 40's quarter and half. On 16d78cc auto ran the faster of the two at every
 * shape of both grids. Refitted beside tma_ws_m32 (above; its runs of tree
 * 2187628; skinny_ffma's short-M grid of 04:06 UTC, c764c79 with its
 * chunk order tried, which changed nothing): a row's rate 11 (at
 * M = 1 skinny_ffma ran 1.53-1.64 x tma_ws_m32's speed where 9 gave
 * 1.23-1.42, and 1 x 6144 x 5000 went to tma_ws_m32 at 0.67 x cuBLAS
 * against its 0.93), 16 rows' 120 (114 sent 12 and 16 x 16384 x 4096 to
 * tma_ws_m32, 1.00 and 1.08 against its 1.13 and 1.20), a later chunk
 * 60 % (three chunks of 16 rows ran 0.64-0.85 x what 40 % predicts, and
 * at 40 % 33 and 40 x 4096 x 4096 went to it at 0.70 x cuBLAS against
 * tma_ws_m64's 1.01 and 0.98). The RING form of 5-8 columns
 * (2026-12-03 12:31 UTC; 0b6d046:bench/results/h200-skinny.md): 88, tma_ws_n16's
 * time over its own at 4096 x 8 x 4096 (32.5 against 26.0 us) times the
 * 70 at which the two predict alike at N = 8 (56 x 8 / 16 against 40 x
 * 70 %): past 4 columns it runs wherever its blocks are at
 * least the SMs, and there it ran ahead of tma_ws_n16 at 18 of the 20
 * shapes measured, 1.4 % behind at 16384 x 8 x 4096 (85.1 against 83.9
 * us, the means of two runs) and 0.3 % at 8192 x 8 x 8192. The BAND form
 * took those columns since (2026-12-03 16:15 UTC), 6 % faster at 4096 x 8
 * x 4096 and 7 % at 8192 x 8 x 8192, where its blocks are at least the
 * SMs and where they are not: the figure stays (not refitted). */
#define PG_H200_SKINNY {11, 19, 36, 69, 120, 10, 20, 40, 53}, 60, 150, 88
#define PG_H200_AUTO_RULES                                                              \
  {{"tma_ws", 3, 100, 2, 0, 0},     {"tma_ws_splitk", 3, 100, 2, 0, 0},                          \
   {"tma_ws_m256", 3, 101, 1, 0, 0}, {"tma_ws_n256", 3, 101, 1, 0, 0},                           \
   {"tma_ws_n64", 3, 92, 3, 0, 0},  {"tma_ws_m64", 4, 93, 2, 0, 0},                              \
   {"tma_ws_m32", 3, 88, 3, 0, 0},  {"tma_ws_n16", 3, 56, 3, 0, 0},                              \
   {"tma_ws_n32", 3, 95, 3, 0, 0},  {"skinny_ffma", 1, 40, 1, 512, 0},                           \
   {"tma", 4, 82, 2, 0, 0},         {"mbarrier", 2, 78, 2, 0, 0},                                \
   {"tiled32_db", 2, 13, 2, 0, 0}}

/* auto_tf32's candidates on the H200, measured there on 2026-12-01 in one
 * process with cublas_tf32 (bench/results/tensor-cores/README.md):
 * wgmma_tma_rs 0.94-0.95 x cuBLAS TF32 at 4096^3-8192^3 (TMA's layout rules
 * for A and B); wgmma_tma_coop_n256 0.85-0.88 (A's only: B goes through
 * its workspace); wgmma_cp_async 0.52 at 4096^3 and mma_cp_async 0.34, for
 * any layout (the second below sm_90). */
#define PG_H200_AUTO_TF32_RULES                                                      \
  {{"wgmma_tma_rs", 3, 95, 1, 0, 0},   {"wgmma_tma_coop_n256", 3, 86, 1, 0, 0},                  \
   {"wgmma_cp_async", 3, 52, 2, 0, 0}, {"mma_cp_async", 2, 34, 2, 0, 0}}

/* auto_emulated's candidates on the H200: the emulated entry, then auto's
 * own, so that it never predicts slower than auto. wgmma_3xtf32 at 4
 * stages measured there on 2026-12-01 in one process with cuBLAS
 * (bench/results/emulated/README.md): 2.12-2.39 x cuBLAS strict at
 * 4096^3-8192^3 and the large rectangles, so 230 in tma_ws's unit (0.98 x
 * cuBLAS); its fixed cost a call (the first kernel, launches) 130 of K,
 * and a block's (the pipeline's fill of a range of a split K) 64, fitted
 * by replaying the selector's model over the shapes measured beside auto
 * (the 42 of the committed set with both sides >= 64, the split shapes, the
 * K sweep at M = N = 1024; bench/results/emulated/h200-emulated-*.csv, trees
 * 40f3cd1 and b235858): 130 leaves one choice short of the faster entry
 * (8192x8192x128: auto's 1.02 x cuBLAS where the emulated kernel ran
 * 1.13); the 390 fitted before on the K sweep alone also sent 8192^2x256
 * (1.07 against 1.60), 1024^2x256 (0.66 against 0.74) and 640^3 (0.95
 * against 1.00) to auto's entry; 100 or less runs it at 512^3 (0.72 against
 * 0.91), as a block cost of 0 did. 233 since tma_ws_m64 went to 93 (above):
 * at 230 that would send 48x6144x6144 to tma_ws_m64, which ran 0.122 ms
 * there against wgmma_3xtf32's 0.112 (run of 2026-12-02 02:05 UTC, tree
 * 13a9d40); at 233 the replay's choices over every shape file of
 * bench/shapes are what they were before both changes. */
#define PG_H200_AUTO_EMULATED_RULES                                                     \
  {{"wgmma_3xtf32", 4, 233, 1, 130, 64}, {"tma_ws", 3, 100, 2, 0, 0},                          \
   {"tma_ws_splitk", 3, 100, 2, 0, 0},                                                           \
   {"tma_ws_m256", 3, 101, 1, 0, 0},      {"tma_ws_n256", 3, 101, 1, 0, 0},                      \
   {"tma_ws_n64", 3, 92, 3, 0, 0},        {"tma_ws_m64", 4, 93, 2, 0, 0},                        \
   {"tma_ws_m32", 3, 88, 3, 0, 0},        {"tma_ws_n32", 3, 95, 3, 0, 0},                        \
   {"tma_ws_n16", 3, 56, 3, 0, 0},                                                               \
   {"skinny_ffma", 1, 40, 1, 512, 0},     {"tma", 4, 82, 2, 0, 0},                               \
   {"mbarrier", 2, 78, 2, 0, 0},          {"tiled32_db", 2, 13, 2, 0, 0}}

static const pg_tuning rows[] = {
    /* NVIDIA H200 (132 SMs), bench/results/tma-ws/README.md: one block per tile
     * beat the persistent grid, but where a tile has at most four K steps
     * (K <= 128) the persistent grid of two blocks an SM ran 2-10 % faster
     * at each of five shapes (even at K = 256, 2-3 % slower at K = 200,
     * 512 and 1024: bench/results/partial-waves/h200-small-k-blocks-per-sm-*.csv), so
     * tma_ws runs it there, counted at 102 %, the least of those gains;
     * the group size moved nothing beyond noise.
     * The split model's constants are estimates, not fits: a split block's
     * extra cost one K step (its pipeline's fill and its 64 KB of partial
     * sums, against the ~5 us a K step of a whole wave takes), 16 FLOPs a
     * byte (~60 TFLOP/s of FFMA over ~4 TB/s); what they choose is measured
     * in bench/results/partial-waves/README.md. */
    {90, 132, "NVIDIA H200, bench/results/tma-ws/, shape-set/ and tensor-cores/",
     8, 0, 4, 102, 2, 1, 16, 4, 4096, 4, 512, 1, 1, PG_H200_SKINNY, PG_H200_AUTO_RULES, PG_H200_AUTO_TF32_RULES,
     PG_H200_AUTO_EMULATED_RULES},
    /* Untuned Hopper and anything else: the H200's choices. */
    {0, 0, "untuned (the H200's choices)", 8, 0, 4, 102, 2, 1, 16, 4, 4096, 4, 512, 1, 1, PG_H200_SKINNY, PG_H200_AUTO_RULES,
     PG_H200_AUTO_TF32_RULES, PG_H200_AUTO_EMULATED_RULES},
};

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
      fused_split;
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
  return t;
}
