/* The one list of variants. The CLI, the tests and the docs read it; nothing
 * else names the variants. Order is study order: reference, then the seed-000
 * family from no pipeline to the deepest one. */
#include <stddef.h>
#include <string.h>

#include "internal.h"
#include "kernels/tile128.h"
#include "kernels/tiled32.h"

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

#define SEED000 "seed 000"
#define SEED001 "seed 001"
#define SEED003 "seed 003"
#define TILE32 TILED32_TILE, TILED32_TILE, TILED32_TILE, TILED32_THREADS
#define TILE128 T128_TILE_M, T128_TILE_N, T128_TILE_K, T128_THREADS

const pg_variant_entry pg_registry[] = {
    {{"cublas", "cuBLAS SGEMM, strict FP32 (no TF32): the reference row",
      "anchor", 50, 1, 1, 1, 0, 0, 0, 0},
     smem_none, NULL},
    {{"tiled32",
      "32x32 tiles, one output per thread: load -> sync -> compute -> sync",
      SEED001, 50, 1, 1, 1, TILE32},
     smem_tiled32, pg_launch_tiled32},
    {{"tiled32_db",
      "tiled32 with two buffers: next tile loaded during compute, one sync per tile",
      SEED001, 50, 2, 2, 2, TILE32},
     smem_tiled32, pg_launch_tiled32_db},
    {{"baseline",
      "no pipeline: load -> sync -> compute -> sync, one shared buffer",
      SEED000, 80, 1, 1, 1, TILE128},
     smem_tile128, pg_launch_baseline},
    {{"pingpong",
      "two shared buffers, next tile staged through registers (LDG -> STS)",
      SEED000, 80, 2, 2, 2, TILE128},
     smem_tile128, pg_launch_pingpong},
    {{"cp_async",
      "cp.async global->shared, commit_group/wait_group, STAGES buffers",
      SEED000, 80, 1, 8, 2, TILE128},
     smem_tile128, pg_launch_cp_async},
    {{"pipeline_thread",
      "cuda::pipeline, thread scope: memcpy_async + producer/consumer calls (async-group)",
      "seeds 001, 003", 80, 2, 8, 2, TILE128},
     smem_tile128, pg_launch_pipeline_thread},
    {{"pipeline_block",
      "cuda::pipeline, block scope: pipeline_shared_state in shared memory (mbarrier)",
      SEED003, 80, 2, 8, 2, TILE128},
     smem_tile128_barriers, pg_launch_pipeline_block},
    {{"barrier",
      "cuda::memcpy_async bound to cuda::barrier, split arrive/wait per stage",
      SEED003, 80, 2, 8, 2, TILE128},
     smem_tile128_barriers, pg_launch_barrier},
    {{"mbarrier",
      "raw PTX: cp.async + cp.async.mbarrier.arrive.noinc + mbarrier.try_wait.parity",
      SEED003, 80, 2, 8, 2, TILE128},
     smem_tile128_barriers, pg_launch_mbarrier},
    {{"warp_specialized",
      "producer warp(s) fill STAGES buffers with cp.async, consumer warps compute",
      SEED003, 80, 2, 8, 2, TILE128},
     smem_tile128_barriers, pg_launch_warp_specialized},
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
