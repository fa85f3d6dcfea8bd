/* The one list of variants. The CLI, the tests and the docs read it; nothing
 * else names the variants. Order is study order: reference, then the seed-000
 * family from no pipeline to the deepest one. */
#include <stddef.h>
#include <string.h>

#include "internal.h"
#include "kernels/tile128.h"
#include "kernels/tiled32.h"
#include "kernels/tma_ws.h"
#include "tma.h"

static size_t smem_none(int stages) {
  (void)stages;
  return 0;
}

static size_t smem_tiled32(int stages) {
  return (size_t)stages * TILED32_STAGE_BYTES;
}

/* The seed-000 family holds `stages` copies of one A+B tile... */
static size_t smem_tile128(int stages) {
  return (size_t)stages * T128_STAGE_BYTES;
}

/* ...and, where stages are handed over through barriers, those too. */
static size_t smem_tile128_barriers(int stages) {
  return (size_t)stages * (T128_STAGE_BYTES + T128_STAGE_SYNC_BYTES);
}

/* The TMA kernels: their stage ring starts at a 1024-byte boundary of the
 * dynamic shared window (kernels/tma_common.cuh), hence the slack. */
#define TMA_SMEM_SLACK 1024

static size_t smem_tma(int stages) {
  return (size_t)stages * (T128_STAGE_BYTES + T128_STAGE_SYNC_BYTES) + TMA_SMEM_SLACK;
}

static size_t smem_tma_ws(int stages) {
  return (size_t)stages * (TWS_STAGE_BYTES + TWS_STAGE_SYNC_BYTES) + TMA_SMEM_SLACK;
}

/* ---- what each kernel's SASS must show (`pipegemm inspect --check`) ------
 * Written from the SASS that nvcc 13.0 emits for sm_80 and sm_90 (the counts
 * are in README.md, "What the SASS shows"). Every T128 kernel's epilogue
 * loads C with 32-bit LDG, so a plain "LDG" proves nothing about its tiles:
 * the register-staged kernels are held to their 16-byte tile loads. sm_80 has
 * no mbarrier wait instruction (test_wait is a plain LDS of the barrier), so
 * there the arrive (ATOMS.ARRIVE) is the mbarrier's witness; sm_90 shows
 * SYNCS.* for both. */
#define ANY_SM 0, 0
#define SM8X 80, 89
#define SM90_UP 90, 0
#define MUST 1
#define NEVER 0
#define RULES(array) array, (int)(sizeof array / sizeof array[0])

/* tiled32, tiled32_db: each thread loads one float of A and one of B into a
 * register and stores it to shared memory. */
static const pg_sass_rule rules_tiled32[] = {
    {ANY_SM, MUST, "LDG", "the tiles are no longer loaded into registers"},
    {ANY_SM, MUST, "STS", "the tiles no longer reach shared memory from registers"},
    {ANY_SM, MUST, "BAR.SYNC", "the block no longer syncs around each tile"},
    {ANY_SM, NEVER, "LDGSTS", "the tiles are copied with cp.async, not staged through registers"},
};

/* baseline, pingpong: 16-byte LDG into registers, then 16-byte STS. */
static const pg_sass_rule rules_register_staged[] = {
    {ANY_SM, MUST, "LDG.128", "the 16-byte tile loads into registers are gone"},
    {ANY_SM, MUST, "STS.128", "the tiles no longer reach shared memory from registers"},
    {ANY_SM, MUST, "BAR.SYNC", "the block no longer syncs between loading and computing"},
    {ANY_SM, NEVER, "LDGSTS", "the tiles are copied with cp.async, not staged through registers"},
    {ANY_SM, NEVER, "ARRIVES", "copies now complete on an mbarrier: the tiles no longer go through registers"},
};

/* cp_async: LDGSTS per piece, LDGDEPBAR per commit_group, DEPBAR per
 * wait_group, a block barrier to publish the tile; no STS at all. */
static const pg_sass_rule rules_cp_async[] = {
    {ANY_SM, MUST, "LDGSTS", "the kernel no longer shows cp.async"},
    {ANY_SM, MUST, "LDGDEPBAR", "cp.async.commit_group is gone"},
    {ANY_SM, MUST, "DEPBAR", "cp.async.wait_group is gone"},
    {ANY_SM, MUST, "BAR.SYNC", "the block no longer syncs before reading a landed tile"},
    {ANY_SM, NEVER, "STS", "tiles pass through registers again instead of going global -> shared"},
    {ANY_SM, NEVER, "ARRIVES", "an mbarrier tracks the copies instead of commit/wait groups"},
};

/* pipeline_thread: cuda::pipeline at thread scope is the async-group
 * mechanism underneath (commit -> LDGDEPBAR, wait -> DEPBAR), no mbarrier. */
static const pg_sass_rule rules_pipeline_thread[] = {
    {ANY_SM, MUST, "LDGSTS", "cuda::memcpy_async no longer lowers to cp.async"},
    {ANY_SM, MUST, "LDGDEPBAR", "producer_commit no longer lowers to cp.async.commit_group"},
    {ANY_SM, MUST, "DEPBAR", "consumer_wait no longer lowers to cp.async.wait_group"},
    {ANY_SM, NEVER, "ARRIVES", "the thread-scope pipeline now completes copies on an mbarrier"},
    {SM90_UP, NEVER, "SYNCS", "the thread-scope pipeline now waits on an mbarrier"},
};

/* pipeline_block: the shared pipeline state is a ring of mbarriers; copies
 * complete on them (cp.async.mbarrier.arrive), not in commit groups. */
static const pg_sass_rule rules_pipeline_block[] = {
    {ANY_SM, MUST, "LDGSTS", "cuda::memcpy_async no longer lowers to cp.async"},
    {ANY_SM, MUST, "ARRIVES.LDGSTSBAR", "copies no longer complete on the pipeline's mbarrier"},
    {ANY_SM, NEVER, "LDGDEPBAR", "the block-scope pipeline fell back to commit groups"},
    {SM8X, MUST, "ATOMS.ARRIVE", "no mbarrier arrive: the pipeline state is not an mbarrier"},
    {SM90_UP, MUST, "SYNCS.ARRIVE", "no mbarrier arrive: the pipeline state is not an mbarrier"},
    {SM90_UP, MUST, "SYNCS.PHASECHK", "no mbarrier wait (try_wait) in consumer_wait"},
};

/* barrier: cuda::memcpy_async on a cuda::barrier. On sm_80 libcu++ issues
 * cp.async and attaches it to the barrier; on sm_90 it issues the bulk copy
 * (cp.async.bulk, UBLKCP) with a transaction count. */
static const pg_sass_rule rules_barrier[] = {
    {SM8X, MUST, "LDGSTS", "cuda::memcpy_async no longer lowers to cp.async"},
    {SM8X, MUST, "ARRIVES.LDGSTSBAR", "copies no longer complete on the cuda::barrier"},
    {SM8X, MUST, "ATOMS.ARRIVE", "no mbarrier arrive: cuda::barrier is not an mbarrier"},
    {SM90_UP, MUST, "UBLKCP", "cuda::memcpy_async no longer lowers to the bulk copy (cp.async.bulk)"},
    {SM90_UP, MUST, "SYNCS.ARRIVE", "no mbarrier arrive: cuda::barrier is not an mbarrier"},
    {SM90_UP, MUST, "SYNCS.PHASECHK", "no mbarrier wait (try_wait) on the cuda::barrier"},
    {ANY_SM, NEVER, "LDGDEPBAR", "the copies fell back to commit groups"},
};

/* mbarrier: raw PTX cp.async + cp.async.mbarrier.arrive.noinc +
 * mbarrier.arrive / try_wait.parity; no commit or wait groups anywhere. */
static const pg_sass_rule rules_mbarrier[] = {
    {ANY_SM, MUST, "LDGSTS", "the kernel no longer shows cp.async"},
    {ANY_SM, MUST, "ARRIVES.LDGSTSBAR", "cp.async.mbarrier.arrive is gone"},
    {ANY_SM, NEVER, "LDGDEPBAR", "cp.async.commit_group is back"},
    {ANY_SM, NEVER, "DEPBAR", "cp.async.wait_group is back"},
    {SM8X, MUST, "ATOMS.ARRIVE", "mbarrier.arrive is gone"},
    {SM90_UP, MUST, "SYNCS.ARRIVE", "mbarrier.arrive is gone"},
    {SM90_UP, MUST, "SYNCS.PHASECHK", "mbarrier.try_wait.parity is gone"},
};

/* warp_specialized: producers copy with cp.async onto full[s] mbarriers,
 * consumers release slots with mbarrier.arrive. (A producer's final
 * cp.async.wait_all shows one LDGDEPBAR and one DEPBAR: allowed.) */
static const pg_sass_rule rules_warp_specialized[] = {
    {ANY_SM, MUST, "LDGSTS", "the producers no longer copy with cp.async"},
    {ANY_SM, MUST, "ARRIVES.LDGSTSBAR", "copies no longer complete on the full[] mbarriers"},
    {SM8X, MUST, "ATOMS.ARRIVE", "consumers no longer release slots with mbarrier.arrive"},
    {SM90_UP, MUST, "SYNCS.ARRIVE", "consumers no longer release slots with mbarrier.arrive"},
    {SM90_UP, MUST, "SYNCS.PHASECHK", "nobody waits on an mbarrier (try_wait) any more"},
};

/* tma, tma_ws: on sm_90 the tiles arrive by bulk tensor copy (UTMALDG) on
 * mbarriers with a transaction count; no thread copies a piece itself. On
 * sm_80 the kernel must trap (the host refuses to launch it there). */
#define RULES_TMA_COMMON                                                                      \
  {SM90_UP, MUST, "UTMALDG", "the tiles no longer arrive by bulk tensor copy (TMA)"},          \
      {SM90_UP, MUST, "SYNCS.ARRIVE", "nobody arrives on an mbarrier (expect_tx or release)"}, \
      {SM90_UP, MUST, "SYNCS.PHASECHK", "nobody waits on an mbarrier (try_wait) any more"},    \
      {ANY_SM, NEVER, "LDGSTS", "threads copy pieces with cp.async instead of the copy engine"}, \
      {ANY_SM, NEVER, "LDGDEPBAR", "cp.async commit groups are back"},                          \
      {SM8X, MUST, "BPT.TRAP", "the sm_80 build no longer traps: it would silently do nothing"}

static const pg_sass_rule rules_tma[] = {RULES_TMA_COMMON};

/* tma_ws: the same, and setmaxnreg moving registers from the producer
 * warpgroup to the consumers (USETMAXREG, sm_90a code). */
static const pg_sass_rule rules_tma_ws[] = {
    RULES_TMA_COMMON,
    {SM90_UP, MUST, "USETMAXREG", "setmaxnreg is gone: the consumers keep the launch's 128 registers"},
};

#define PG_STRINGIFY_(x) #x
#define PG_STRINGIFY(x) PG_STRINGIFY_(x)
#define PG_WARP_THREADS 32

#define SEED000 "seed 000"
#define SEED001 "seed 001"
#define SEED003 "seed 003"
#define TILE32 TILED32_TILE, TILED32_TILE, TILED32_TILE, TILED32_THREADS
#define TILE128 T128_TILE_M, T128_TILE_N, T128_TILE_K, T128_THREADS

const pg_variant_entry pg_registry[] = {
    {{"cublas", "cuBLAS SGEMM, strict FP32 (no TF32): the reference row",
      "anchor", 50, 1, 1, 1, 0, 0, 0, 0},
     smem_none, NULL, {NULL, NULL, 0, 0, NULL, 0}, NULL, 0},
    {{"tiled32",
      "32x32 tiles, one output per thread: load -> sync -> compute -> sync",
      SEED001, 50, 1, 1, 1, TILE32},
     smem_tiled32, pg_launch_tiled32,
     {"pg_tiled32_kernel", NULL, TILED32_THREADS, 0, RULES(rules_tiled32)}, NULL, 1},
    {{"tiled32_db",
      "tiled32 with two buffers: next tile loaded during compute, one sync per tile",
      SEED001, 50, 2, 2, 2, TILE32},
     smem_tiled32, pg_launch_tiled32_db,
     {"pg_tiled32_db_kernel", NULL, TILED32_THREADS, 0, RULES(rules_tiled32)}, NULL, 1},
    {{"baseline",
      "no pipeline: load -> sync -> compute -> sync, one shared buffer",
      SEED000, 80, 1, 1, 1, TILE128},
     smem_tile128, pg_launch_baseline,
     {"pg_baseline_kernel", NULL, T128_THREADS, 0, RULES(rules_register_staged)}, NULL, 1},
    {{"pingpong",
      "two shared buffers, next tile staged through registers (LDG -> STS)",
      SEED000, 80, 2, 2, 2, TILE128},
     smem_tile128, pg_launch_pingpong,
     {"pg_pingpong_kernel", NULL, T128_THREADS, 0, RULES(rules_register_staged)}, NULL, 1},
    {{"cp_async",
      "cp.async global->shared, commit_group/wait_group, STAGES buffers",
      SEED000, 80, 1, 8, 2, TILE128},
     smem_tile128, pg_launch_cp_async,
     {"pg_cp_async_kernel", NULL, T128_THREADS, 1, RULES(rules_cp_async)}, NULL, 1},
    {{"pipeline_thread",
      "cuda::pipeline, thread scope: memcpy_async + producer/consumer calls (async-group)",
      "seeds 001, 003", 80, 2, 8, 2, TILE128},
     smem_tile128, pg_launch_pipeline_thread,
     {"pg_pipeline_thread_kernel", NULL, T128_THREADS, 1, RULES(rules_pipeline_thread)}, NULL, 1},
    {{"pipeline_block",
      "cuda::pipeline, block scope: pipeline_shared_state in shared memory (mbarrier)",
      SEED003, 80, 2, 8, 2, TILE128},
     smem_tile128_barriers, pg_launch_pipeline_block,
     /* One instance per stage count; the default launches <2>. */
     {"pg_pipeline_block_kernel", "pg_pipeline_block_kernel<2>", T128_THREADS, 1,
      RULES(rules_pipeline_block)}, NULL, 1},
    {{"barrier",
      "cuda::memcpy_async bound to cuda::barrier, split arrive/wait per stage",
      SEED003, 80, 2, 8, 2, TILE128},
     smem_tile128_barriers, pg_launch_barrier,
     {"pg_barrier_kernel", NULL, T128_THREADS, 1, RULES(rules_barrier)}, NULL, 1},
    {{"mbarrier",
      "raw PTX: cp.async + cp.async.mbarrier.arrive.noinc + mbarrier.try_wait.parity",
      SEED003, 80, 2, 8, 2, TILE128},
     smem_tile128_barriers, pg_launch_mbarrier,
     {"pg_mbarrier_kernel", NULL, T128_THREADS, 1, RULES(rules_mbarrier)}, NULL, 1},
    {{"warp_specialized",
      "producer warp(s) fill STAGES buffers with cp.async, consumer warps compute",
      SEED003, 80, 2, 8, 2, TILE128},
     smem_tile128_barriers, pg_launch_warp_specialized,
     /* One instance per producer-warp count; the default launches
      * PG_WS_PRODUCER_WARPS of them beside the 256 compute threads. */
     {"pg_warp_specialized_kernel",
      "pg_warp_specialized_kernel<" PG_STRINGIFY(PG_WS_PRODUCER_WARPS) ">",
      T128_THREADS + PG_WARP_THREADS * PG_WS_PRODUCER_WARPS, 1, RULES(rules_warp_specialized)}, NULL, 1},
    {{"tma",
      "Hopper TMA: one thread issues cp.async.bulk.tensor per tile on an expect_tx mbarrier, STAGES buffers",
      SEED001, 90, 2, 8, 4, TILE128},
     smem_tma, pg_launch_tma,
     {"pg_tma_kernel", NULL, T128_THREADS, 1, RULES(rules_tma)}, pg_tma_check, 1},
    {{"tma_ws",
      "TMA producer warp + consumer warpgroup (8x16 each, setmaxnreg), full/empty mbarriers, grouped tile order",
      SEED001, 90, 2, 8, 3, TWS_TILE_M, TWS_TILE_N, TWS_TILE_K, TWS_THREADS},
     smem_tma_ws, pg_launch_tma_ws,
     {"pg_tma_ws_kernel", NULL, TWS_THREADS, 1, RULES(rules_tma_ws)}, pg_tma_check, 0},
    {{"auto", "the fastest correct variant for this GPU and shape (pg_auto_select, src/tuning.c)",
      "-", 50, 0, 0, 0, 0, 0, 0, 0},
     smem_none, NULL, {NULL, NULL, 0, 0, NULL, 0}, NULL, 0},
};

const int pg_registry_count = (int)(sizeof pg_registry / sizeof pg_registry[0]);

int pg_variant_count(void) { return pg_registry_count; }

const pg_variant_info *pg_variant_at(int index) {
  if (index < 0 || index >= pg_registry_count) return NULL;
  return &pg_registry[index].info;
}

const pg_variant_info *pg_variant_find(const char *name) {
  if (name == NULL) return NULL;
  for (int i = 0; i < pg_registry_count; ++i)
    if (strcmp(pg_registry[i].info.name, name) == 0) return &pg_registry[i].info;
  return NULL;
}

/* info is the first member of an entry, so an info pointer from the registry
 * converts back; anything else is rejected. */
const pg_variant_entry *pg_entry_of(const pg_variant_info *info) {
  for (int i = 0; i < pg_registry_count; ++i)
    if (&pg_registry[i].info == info) return &pg_registry[i];
  return NULL;
}

pg_status pg_variant_smem_bytes(const pg_variant_info *variant, int stages,
                                size_t *bytes) {
  const pg_variant_entry *entry = pg_entry_of(variant);
  if (entry == NULL || bytes == NULL) return PG_ERR_INVALID_ARG;
  if (stages == 0) stages = variant->default_stages;
  if (stages < variant->min_stages || stages > variant->max_stages)
    return PG_ERR_STAGES;
  *bytes = entry->smem_bytes(stages);
  return PG_OK;
}
