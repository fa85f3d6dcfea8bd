/* The one list of variants. The CLI, the tests and the docs read it; nothing
 * else lists the variants (the tuning table and the studies name the entries
 * they use by their stable names). Order is study order: the reference, the
 * guide's 32x32 tiles, then the write-up's 128x128 family from no pipeline to
 * the deepest one, the Hopper kernels, and auto.
 *
 * Adding a variant touches: its kernel file in src/kernels/ (the kernel and
 * its planner), the planner's declaration in src/internal.h, an entry here
 * (with its shared-memory function and SASS rules), the file's line in
 * CMakeLists.txt, and the README's variant table (test_registry holds the
 * README to this list). README.md, "Adding a variant", says more. */
#include <stddef.h>
#include <string.h>

#include "internal.h"
#include "kernels/tile128.h"
#include "kernels/tiled32.h"
#include "kernels/tma_ws.h"
#include "tma.h"
#include "trace.h"

static size_t smem_tiled32(int stages) {
  return (size_t)stages * TILED32_STAGE_BYTES;
}

/* The 128x128 family holds `stages` copies of one A+B tile... */
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

/* A TMA ring: each stage's tiles and its two mbarriers, after the slack. */
static size_t tma_ring_smem(int stages, size_t stage_bytes, size_t sync_bytes) {
  return (size_t)stages * (stage_bytes + sync_bytes) + TMA_SMEM_SLACK;
}

static size_t smem_tma(int stages) {
  return tma_ring_smem(stages, T128_STAGE_BYTES, T128_STAGE_SYNC_BYTES);
}

static size_t smem_tma_ws(int stages) {
  return tma_ring_smem(stages, TWS_STAGE_BYTES, TWS_STAGE_SYNC_BYTES);
}

static size_t smem_tma_ws_n64(int stages) {
  return tma_ring_smem(stages, TWS_SMALL_STAGE_BYTES, TWS_STAGE_SYNC_BYTES);
}

static size_t smem_tma_ws_m256(int stages) {
  return tma_ring_smem(stages, TWS_TALL_STAGE_BYTES, TWS_STAGE_SYNC_BYTES);
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
#define RULES(array) .rules = array, .rule_count = (int)(sizeof array / sizeof array[0])

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
    {SM90_UP, MUST, "USETMAXREG", "setmaxnreg is gone: the consumers keep the launch's registers (128 or 168)"},
};

#define PG_STRINGIFY_(x) #x
#define PG_STRINGIFY(x) PG_STRINGIFY_(x)
#define PG_WARP_THREADS 32

/* The sources, by title (DESIGN.md, "Sources"). */
/* tma_ws's kernel is a template on the tile's height and width and on how
 * it takes its work (whole tiles 0, split K 1, stream-K 2). */
#define TWS_INSTANCE(tile_m, tile_n, mode) \
  "pg_tma_ws_kernel<" PG_STRINGIFY(tile_m) ", " PG_STRINGIFY(tile_n) ", " #mode ">"

#define FROM_STUDY "CUDA Kernel Study: Pipelining"
#define FROM_GUIDE "Software Pipelining and Double Buffering"
#define FROM_BLOG "A study on CUDA async memcpy"

#define TILE32                                                                       \
  .tile_m = TILED32_TILE, .tile_n = TILED32_TILE, .tile_k = TILED32_TILE,            \
  .threads = TILED32_THREADS
#define TILE128                                                                      \
  .tile_m = T128_TILE_M, .tile_n = T128_TILE_N, .tile_k = T128_TILE_K,               \
  .threads = T128_THREADS
#define KERNEL_FAMILY_T128 .kind = PG_KIND_KERNEL, .min_cc = 80

const pg_variant_entry pg_registry[] = {
    {
        .info = {.name = "cublas", .kind = PG_KIND_LIBRARY,
                 .technique = "cuBLAS SGEMM, strict FP32 (no TF32): the reference row",
                 .source = "", .min_cc = 50, .min_stages = 1, .max_stages = 1,
                 .default_stages = 1},
    },
    {
        .info = {.name = "tiled32", .kind = PG_KIND_KERNEL,
                 .technique = "32x32 tiles, one output per thread: load -> sync -> compute -> sync",
                 .source = FROM_GUIDE, .min_cc = 50, .min_stages = 1, .max_stages = 1,
                 .default_stages = 1, TILE32},
        .smem_bytes = smem_tiled32,
        .plan = pg_plan_tiled32,
        .kernel = {.symbol = "pg_tiled32_kernel", RULES(rules_tiled32)},
    },
    {
        .info = {.name = "tiled32_db", .kind = PG_KIND_KERNEL,
                 .technique = "tiled32 with two buffers: next tile loaded during compute, one sync per tile",
                 .source = FROM_GUIDE, .min_cc = 50, .min_stages = 2, .max_stages = 2,
                 .default_stages = 2, TILE32},
        .smem_bytes = smem_tiled32,
        .plan = pg_plan_tiled32_db,
        .kernel = {.symbol = "pg_tiled32_db_kernel", RULES(rules_tiled32)},
    },
    {
        .info = {.name = "baseline", KERNEL_FAMILY_T128,
                 .technique = "no pipeline: load -> sync -> compute -> sync, one shared buffer",
                 .source = FROM_STUDY, .min_stages = 1, .max_stages = 1, .default_stages = 1,
                 TILE128},
        .smem_bytes = smem_tile128,
        .plan = pg_plan_baseline,
        .traced_plan = pg_plan_baseline_traced,
        .kernel = {.symbol = "pg_baseline_kernel", RULES(rules_register_staged)},
    },
    {
        .info = {.name = "pingpong", KERNEL_FAMILY_T128,
                 .technique = "two shared buffers, next tile staged through registers (LDG -> STS)",
                 .source = FROM_STUDY, .min_stages = 2, .max_stages = 2, .default_stages = 2,
                 TILE128},
        .smem_bytes = smem_tile128,
        .plan = pg_plan_pingpong,
        .traced_plan = pg_plan_pingpong_traced,
        .kernel = {.symbol = "pg_pingpong_kernel", RULES(rules_register_staged)},
    },
    {
        .info = {.name = "cp_async", KERNEL_FAMILY_T128,
                 .technique = "cp.async global->shared, commit_group/wait_group, STAGES buffers",
                 .source = FROM_STUDY, .min_stages = 1, .max_stages = 8, .default_stages = 2,
                 TILE128},
        .smem_bytes = smem_tile128,
        .plan = pg_plan_cp_async,
        .traced_plan = pg_plan_cp_async_traced,
        .kernel = {.symbol = "pg_cp_async_kernel", .dynamic_smem = 1, RULES(rules_cp_async)},
    },
    {
        .info = {.name = "pipeline_thread", KERNEL_FAMILY_T128,
                 .technique = "cuda::pipeline, thread scope: memcpy_async + producer/consumer calls (async-group)",
                 .source = FROM_GUIDE "; " FROM_BLOG, .min_stages = 2, .max_stages = 8,
                 .default_stages = 2, TILE128},
        .smem_bytes = smem_tile128,
        .plan = pg_plan_pipeline_thread,
        .traced_plan = pg_plan_pipeline_thread_traced,
        .kernel = {.symbol = "pg_pipeline_thread_kernel", .dynamic_smem = 1,
                   RULES(rules_pipeline_thread)},
    },
    {
        .info = {.name = "pipeline_block", KERNEL_FAMILY_T128,
                 .technique = "cuda::pipeline, block scope: pipeline_shared_state in shared memory (mbarrier)",
                 .source = FROM_BLOG, .min_stages = 2, .max_stages = 8, .default_stages = 2,
                 TILE128},
        .smem_bytes = smem_tile128_barriers,
        .plan = pg_plan_pipeline_block,
        .traced_plan = pg_plan_pipeline_block_traced,
        /* One instance per stage count; the default launches <2>. */
        .kernel = {.symbol = "pg_pipeline_block_kernel", .launched = "pg_pipeline_block_kernel<2>",
                   .dynamic_smem = 1, RULES(rules_pipeline_block)},
    },
    {
        .info = {.name = "barrier", KERNEL_FAMILY_T128,
                 .technique = "cuda::memcpy_async bound to cuda::barrier, split arrive/wait per stage",
                 .source = FROM_BLOG, .min_stages = 2, .max_stages = 8, .default_stages = 2,
                 TILE128},
        .smem_bytes = smem_tile128_barriers,
        .plan = pg_plan_barrier,
        .traced_plan = pg_plan_barrier_traced,
        .kernel = {.symbol = "pg_barrier_kernel", .dynamic_smem = 1, RULES(rules_barrier)},
    },
    {
        .info = {.name = "mbarrier", KERNEL_FAMILY_T128,
                 .technique = "raw PTX: cp.async + cp.async.mbarrier.arrive.noinc + mbarrier.try_wait.parity",
                 .source = FROM_BLOG, .min_stages = 2, .max_stages = 8, .default_stages = 2,
                 TILE128},
        .smem_bytes = smem_tile128_barriers,
        .plan = pg_plan_mbarrier,
        .traced_plan = pg_plan_mbarrier_traced,
        .kernel = {.symbol = "pg_mbarrier_kernel", .dynamic_smem = 1, RULES(rules_mbarrier)},
    },
    {
        .info = {.name = "warp_specialized", KERNEL_FAMILY_T128,
                 .technique = "producer warp(s) fill STAGES buffers with cp.async, consumer warps compute",
                 .source = FROM_BLOG, .min_stages = 2, .max_stages = 8, .default_stages = 2,
                 .tile_m = T128_TILE_M, .tile_n = T128_TILE_N, .tile_k = T128_TILE_K,
                 /* the seed tile's 256 compute threads and the producer warps */
                 .threads = T128_THREADS + PG_WARP_THREADS * PG_WS_PRODUCER_WARPS},
        .smem_bytes = smem_tile128_barriers,
        .plan = pg_plan_warp_specialized,
        .traced_plan = pg_plan_warp_specialized_traced,
        .kernel = {.symbol = "pg_warp_specialized_kernel",
                   .launched = "pg_warp_specialized_kernel<" PG_STRINGIFY(PG_WS_PRODUCER_WARPS) ">",
                   .dynamic_smem = 1, RULES(rules_warp_specialized)},
    },
    {
        .info = {.name = "tma", .kind = PG_KIND_KERNEL,
                 .technique = "Hopper TMA: one thread issues cp.async.bulk.tensor per tile on an expect_tx mbarrier, STAGES buffers",
                 .source = FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 8,
                 .default_stages = 4, TILE128},
        .smem_bytes = smem_tma,
        .plan = pg_plan_tma,
        .traced_plan = pg_plan_tma_traced,
        .check = pg_tma_check,
        .kernel = {.symbol = "pg_tma_kernel", .dynamic_smem = 1, RULES(rules_tma)},
    },
    {
        .info = {.name = "tma_ws", .kind = PG_KIND_KERNEL,
                 .technique = "TMA producer warp + consumer warpgroup (8x16 each, setmaxnreg), full/empty mbarriers, grouped tile order",
                 .source = FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 8,
                 .default_stages = 3, .tile_m = TWS_TILE_M, .tile_n = TWS_TILE_N,
                 .tile_k = TWS_TILE_K, .threads = TWS_THREADS},
        .smem_bytes = smem_tma_ws,
        .plan = pg_plan_tma_ws,
        .traced_plan = pg_plan_tma_ws_traced,
        .check = pg_tma_check,
        .kernel = {.symbol = "pg_tma_ws_kernel", .launched = TWS_INSTANCE(TWS_TILE_M, TWS_TILE_N, 0), .dynamic_smem = 1,
                   RULES(rules_tma_ws)},
    },
    {
        .info = {.name = "tma_ws_splitk", .kind = PG_KIND_KERNEL,
                 .technique = "tma_ws with K split to fill the SMs a few tiles leave idle; partial sums added in split order by a second kernel",
                 .source = FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 8,
                 .default_stages = 3, .tile_m = TWS_TILE_M, .tile_n = TWS_TILE_N,
                 .tile_k = TWS_TILE_K, .threads = TWS_THREADS},
        .smem_bytes = smem_tma_ws,
        .plan = pg_plan_tma_ws_splitk,
        .check = pg_tma_check,
        /* tma_ws's kernel, judged by the same rules */
        .kernel = {.symbol = "pg_tma_ws_kernel", .launched = TWS_INSTANCE(TWS_TILE_M, TWS_TILE_N, 1), .dynamic_smem = 1,
                   RULES(rules_tma_ws)},
    },
    {
        .info = {.name = "tma_ws_n64", .kind = PG_KIND_KERNEL,
                 .technique = "tma_ws on a 128x64 tile (8x8 outputs per consumer thread), three blocks per SM; K split as tma_ws_splitk does where the tiles leave block slots idle",
                 .source = FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 8,
                 .default_stages = 3, .tile_m = TWS_TILE_M, .tile_n = TWS_SMALL_TILE_N,
                 .tile_k = TWS_TILE_K, .threads = TWS_THREADS},
        .smem_bytes = smem_tma_ws_n64,
        .plan = pg_plan_tma_ws_n64,
        .check = pg_tma_check,
        .kernel = {.symbol = "pg_tma_ws_kernel",
                   .launched = TWS_INSTANCE(TWS_TILE_M, TWS_SMALL_TILE_N, 1),
                   .dynamic_smem = 1, RULES(rules_tma_ws)},
    },
    {
        .info = {.name = "tma_ws_m256", .kind = PG_KIND_KERNEL,
                 .technique = "tma_ws on a 256x128 tile: two consumer warpgroups share each stage's B, one block per SM; K split as tma_ws_splitk does where the tiles leave SMs idle",
                 .source = FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 4,
                 .default_stages = 3, .tile_m = TWS_TALL_TILE_M, .tile_n = TWS_TILE_N,
                 .tile_k = TWS_TILE_K, .threads = TWS_TALL_THREADS},
        .smem_bytes = smem_tma_ws_m256,
        .plan = pg_plan_tma_ws_m256,
        .check = pg_tma_check,
        .kernel = {.symbol = "pg_tma_ws_kernel",
                   .launched = TWS_INSTANCE(TWS_TALL_TILE_M, TWS_TILE_N, 1),
                   .dynamic_smem = 1, RULES(rules_tma_ws)},
    },
    {
        .info = {.name = "tma_ws_streamk", .kind = PG_KIND_KERNEL,
                 .technique = "tma_ws over stream-K after data-parallel waves: the last wave's tiles shared out by K steps among one block per slot; tiles cut between blocks added up in block order by a second kernel",
                 .source = FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 8,
                 .default_stages = 3, .tile_m = TWS_TILE_M, .tile_n = TWS_TILE_N,
                 .tile_k = TWS_TILE_K, .threads = TWS_THREADS},
        .smem_bytes = smem_tma_ws,
        .plan = pg_plan_tma_ws_streamk,
        .check = pg_tma_check,
        .kernel = {.symbol = "pg_tma_ws_kernel", .launched = TWS_INSTANCE(TWS_TILE_M, TWS_TILE_N, 2), .dynamic_smem = 1,
                   RULES(rules_tma_ws)},
    },
    {
        .info = {.name = "auto", .kind = PG_KIND_SELECTOR,
                 .technique = "the best predicted variant for this GPU and shape (pg_auto_select, src/tuning.c)",
                 .source = "", .min_cc = 50},
    },
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

/* Only a pointer into the registry converts back; anything else is NULL. */
const pg_variant_entry *pg_entry_of(const pg_variant_info *info) {
  for (int i = 0; i < pg_registry_count; ++i)
    if (&pg_registry[i].info == info) return &pg_registry[i];
  return NULL;
}

const pg_variant_entry *pg_entry_find(const char *name) {
  return pg_entry_of(pg_variant_find(name));
}

const char *pg_kind_name(pg_variant_kind kind) {
  switch (kind) {
    case PG_KIND_KERNEL: return "kernel";
    case PG_KIND_LIBRARY: return "library reference";
    case PG_KIND_SELECTOR: return "selector";
  }
  return "unknown kind";
}

pg_status pg_variant_smem_bytes(const pg_variant_info *variant, int stages,
                                size_t *bytes) {
  const pg_variant_entry *entry = pg_entry_of(variant);
  if (entry == NULL || bytes == NULL) return PG_ERR_INVALID_ARG;
  if (stages == 0) stages = variant->default_stages;
  if (stages < variant->min_stages || stages > variant->max_stages)
    return PG_ERR_STAGES;
  *bytes = entry->smem_bytes != NULL ? entry->smem_bytes(stages) : 0;
  return PG_OK;
}
