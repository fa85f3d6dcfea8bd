/* The library's part of `pipegemm trace`: how big a trace buffer a plan
 * needs and which blocks record, and the switch of a decided plan to its
 * kernel's traced twin (src/introspect.h). Everything else about a traced launch
 * (the grid, shared memory, tensor maps) is the timed plan's, decided by
 * src/plan.c, so that the trace shows the pipeline that bench times. */
#include <limits.h>
#include <string.h>

#include "internal.h"

/* Records a K tile can leave (slot wait, issue, data wait, ready, compute
 * begin and end, release) and an output tile's epilogue (begin, end). */
#define PG_TRACE_EVENTS_PER_K_TILE 7
#define PG_TRACE_EVENTS_PER_TILE 2

static long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

int pg_variant_traced(const pg_variant_info *variant) {
  const pg_variant_entry *entry = pg_entry_of(variant);
  return entry != NULL && pg_entry_traced(entry) != NULL;
}

/* Which blocks record: `wanted` of them, `stride` apart, so that they spread
 * over the grid (over SMs and over waves) instead of all sitting in the
 * first few SMs. */
static void choose_sample(long long grid_blocks, int wanted, pg_trace_header *header) {
  const long long stride = grid_blocks / wanted > 1 ? grid_blocks / wanted : 1;
  const long long fit = ceil_div(grid_blocks, stride);
  header->stride = (int)stride;
  header->blocks = (int)(fit < wanted ? fit : wanted);
  header->reserved = 0;
}

pg_status pg_trace_layout_of(const pg_plan *plan, int wanted, pg_trace_layout *layout) {
  if (plan == NULL || layout == NULL) {
    pg_set_error_detail("no %s given (NULL)", plan == NULL ? "plan" : "place for the answer");
    return PG_ERR_INVALID_ARG;
  }
  if (wanted < 1 || wanted > PG_TRACE_MAX_BLOCKS) {
    pg_set_error_detail("%d blocks to trace: 1 to %d", wanted, PG_TRACE_MAX_BLOCKS);
    return PG_ERR_INVALID_ARG;
  }
  if (plan->entry == NULL || plan->entry->info.kind != PG_KIND_KERNEL) {
    pg_set_error_detail("the plan launches none of pipegemm's kernels (M or N is 0, or cuBLAS)");
    return PG_ERR_INVALID_ARG;
  }
  memset(layout, 0, sizeof *layout);
  const pg_variant_info *info = &plan->entry->info;
  const pg_layout_args *g = &plan->args;
  const pg_plan_step *main = &plan->step[plan->main_step];
  const long long grid_blocks = (long long)main->grid_x * (main->grid_y > 0 ? main->grid_y : 1);
  if (grid_blocks > INT_MAX) {
    pg_set_error_detail("a grid of %lld blocks is past what a trace numbers (%d)", grid_blocks,
                        INT_MAX);
    return PG_ERR_UNSUPPORTED;
  }
  choose_sample(grid_blocks, wanted, &layout->header);
  /* A persistent grid's block takes several output tiles. */
  const long long tiles = ceil_div(g->m, info->tile_m) * ceil_div(g->n, info->tile_n);
  const long long tiles_per_block = ceil_div(tiles, grid_blocks);
  const long long steps = tiles_per_block * ceil_div(g->k, info->tile_k);
  long long capacity =
      steps * PG_TRACE_EVENTS_PER_K_TILE + tiles_per_block * PG_TRACE_EVENTS_PER_TILE;
  /* Past the memory cap a track keeps its first records and counts the rest. */
  const long long tracks = (long long)layout->header.blocks * PG_TRACE_TRACKS_PER_BLOCK;
  const long long most = ((long long)(PG_TRACE_MAX_BYTES - sizeof(pg_trace_header)) / tracks -
                          (long long)sizeof(pg_trace_track)) /
                         (long long)sizeof(pg_trace_record);
  if (capacity > most) capacity = most;
  layout->header.capacity = (int)capacity;
  layout->grid_blocks = (int)grid_blocks;
  layout->steps_per_block = steps > INT_MAX ? INT_MAX : (int)steps;
  layout->bytes = pg_trace_bytes(layout->header.blocks, layout->header.capacity);
  return PG_OK;
}

/* The traced twin's launch must be the timed one's: same grid, the same
 * workspace and first kernel (B^T) if any, no second kernel (their configure
 * functions are the same code, so a difference is a bug, not a choice). */
static pg_status check_same_launch(const pg_plan *plan, const pg_kernel_launch *traced) {
  const pg_plan_step *main = &plan->step[plan->main_step];
  const void *first = plan->main_step > 0 ? plan->step[0].kernel : NULL;
  const long long grid_y = traced->grid_y > 0 ? traced->grid_y : 1;
  const int same_grid = traced->persistent_blocks_per_sm > 0 || traced->grid_x == main->grid_x;
  if (traced->kernel != NULL && same_grid && grid_y == main->grid_y &&
      traced->workspace.bytes == plan->workspace.bytes && traced->last.kernel == NULL &&
      traced->first.kernel == first)
    return PG_OK;
  pg_set_error_detail("%s: the traced kernel's launch differs from the timed one's",
                      plan->entry->info.name);
  return PG_ERR_UNSUPPORTED;
}

pg_status pg_plan_trace(pg_plan *plan, pg_trace_header *buffer) {
  if (plan == NULL || buffer == NULL) {
    pg_set_error_detail("no %s given (NULL)", plan == NULL ? "plan" : "trace buffer");
    return PG_ERR_INVALID_ARG;
  }
  const pg_variant_entry *entry = plan->entry;
  const pg_variant_entry *twin = entry != NULL ? pg_entry_traced(entry) : NULL;
  if (twin == NULL) {
    pg_set_error_detail("%s has no traced kernel", entry ? entry->info.name : "a plan with no kernel");
    return PG_ERR_UNSUPPORTED;
  }
  if (plan->scales_c_only) {
    pg_set_error_detail("%s: with alpha = 0 or K = 0 the call computes C = beta * C only; its "
                        "pipeline does not run",
                        entry->info.name);
    return PG_ERR_UNSUPPORTED;
  }
  /* A workspace for B^T (the wgmma members' first kernel) leaves the
   * traced kernel's parameter free for its buffer; partial sums do not. */
  if (plan->main_step + 1 < plan->steps) {
    pg_set_error_detail("%s: this plan splits its work between two kernels; only a plan of "
                        "whole tiles is traced",
                        entry->info.name);
    return PG_ERR_UNSUPPORTED;
  }
  pg_layout_args args = plan->args; /* configure may write its own fields: a copy */
  pg_kernel_launch traced;
  memset(&traced, 0, sizeof traced);
  twin->configure(&args, plan->device, &plan->device->tuning, &traced);
  pg_status st = check_same_launch(plan, &traced);
  if (st != PG_OK) return st;
  /* Loads the traced image and opts it in to the dynamic shared memory. */
  pg_kernel_image image;
  st = pg_kernel_image_of(plan->device, traced.kernel, &image);
  if (st != PG_OK) return st;
  if (image.load_error != cudaSuccess) {
    st = pg_status_from_cuda(image.load_error);
    pg_set_error_detail("%s: no traced kernel image that this GPU loads (%s)", entry->info.name,
                        cudaGetErrorString(image.load_error));
    return st;
  }
  plan->step[plan->main_step].kernel = traced.kernel;
  plan->args.trace = buffer;
  return PG_OK;
}
