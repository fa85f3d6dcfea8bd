/* 13 tma_ws_splitk — the flagship with K split into ranges, where its tiles
 * alone would leave SMs idle (few tiles, a long K): each (tile, range) unit
 * is a block's work, its sums go to a plane of partial sums of its own, and
 * a second kernel (reduce_splits.cu) adds the planes up in split order, so
 * a call gives the same bits on every run; or, on a GPU that keeps them
 * resident, a tile's ranges are one cluster of blocks that add their sums
 * up in split order through their shared memory (configure_in_clusters,
 * tws_cluster_store in tma_ws.cuh): the same bits, no planes, no second
 * kernel. Where the tiles fill the GPU, nothing is split and the call is
 * tma_ws's (12), or the form's own kernel over whole tiles.
 *
 * The tile forms: every line of TWS_FORMS (tma_ws.h) is an entry of this
 * file, the flagship's kernel on its tile, split the same way; tma_ws_splitk
 * is the flagship's 128 x 128 tile. The others: tma_ws_n64 (128 x 64, three
 * blocks per SM), tma_ws_m256 (256 x 128, two consumer warpgroups sharing
 * each stage's B, one block per SM), tma_ws_n256 (128 x 256 for a short M
 * against a long N, where tma_ws_m256 pads half its rows, two consumer
 * warpgroups sharing each stage's A, one block per SM), tma_ws_m64 (64 x
 * 128 for a short M, three blocks per SM (two at 4 stages): 0.64-0.87
 * x cuBLAS at M of 20 to 64 where the 128-row tiles run 0.35-0.55;
 * bench/results/short-sides/README.md), tma_ws_m32 (32 x 128 for an M of 17 to
 * 32, where the 64-row tile pads half its rows: the short tile's warps with
 * 4x8 outputs a thread, three blocks per SM), tma_ws_n32 (128 x 32 for a
 * short N, three blocks per SM: 1.08-1.53 x at N of 4 to 32) and
 * tma_ws_n16 (128 x 16 for an N of 16 or less, where the 32-column tile
 * pads at least half its columns: 4x4 outputs a thread, its rows 32 apart,
 * three blocks per SM). A new form is a line of TWS_FORMS (and a rule in
 * src/tuning.c for auto to pick it: docs/adding-a-variant.md).
 * Every form takes any layout: an operand TMA cannot read (a base off 16
 * bytes, a leading dimension no multiple of 4 floats) is copied first into
 * the call's workspace with 16-byte rows (copy_operands.cu), in the call's
 * stream and time; tma_ws_any is tma_ws_splitk under the name it had when
 * it alone did this. sm_90 only.
 *
 *   pipegemm bench --variant tma_ws,tma_ws_splitk,cublas --m 256 --n 256 --k 65536
 */
/* The flagship's kernel (12), without tma_ws's entry. */
#define TWS_KERNEL_ONLY
#include "kernels/12_tma_ws.cu"

#include <stdio.h>

/* Where K is not split, tma_ws_splitk is tma_ws. */
extern "C" const pg_variant_entry pg_entry_tma_ws;

#ifdef PG_HAVE_TMA
/* Split in clusters: block b is range b % splits of tile b / splits (its
 * cluster the tile's ranges), one unit a block. */
template <> struct tws_schedule<TWS_SPLIT_CLUSTER> {
  static __device__ __forceinline__ tws_cursor start(const pg_gemm_args &g,
                                                     const tws_geometry &geo) {
    (void)g, (void)geo;
    tws_cursor c;
    c.sk_next = c.sk_end = 0;
    c.next = blockIdx.x;
    c.end = blockIdx.x + 1;
    return c;
  }
  static __device__ __forceinline__ bool next(const pg_gemm_args &g, const tws_geometry &geo,
                                              tws_cursor *c, tws_work *w) {
    if (c->next >= c->end) return false;
    const int tile = c->next / g.splits, split = c->next - tile * g.splits;
    ++c->next;
    pg_grouped_tile(tile, geo.tiles_m, geo.tiles_n, g.group_m, &w->tm, &w->tn);
    w->kt_begin = split * g.k_tiles_per_split;
    w->kt_end = min(geo.k_tiles, w->kt_begin + g.k_tiles_per_split);
    w->dest = TWS_TO_SPLIT;
    w->index = split;
    return true;
  }
};
#endif

PG_KERNELS_BEGIN

/* A form that splits K: its tile, its kernel for whole tiles where K is not
 * split (NULL: tma_ws's, through tma_ws's configure, its kernel in 12), its
 * split kernel (planes and the reduction kernel) and its kernel that adds
 * the ranges up in clusters. */
typedef struct {
  const tws_shape *shape;
  const void *whole_kernel, *split_kernel, *cluster_kernel;
} split_form;

/* The ranges of each tile added up in a cluster of their blocks, through
 * their shared memory, with no planes and no second kernel
 * (pg_split_in_clusters): where the tuning asks for it, every tile is split
 * (no whole rows on top) and the tile's sums fit in its stages. */
static void configure_in_clusters(const split_form *form, pg_layout_args *args,
                                  const pg_device *device, const pg_tuning *tuning,
                                  long long per_sm, pg_kernel_launch *launch) {
  const tws_shape *shape = form->shape;
  if (!pg_tuning_with_env(tuning).split_in_clusters || args->split_row0 != 0 ||
      (size_t)shape->tile_m * shape->tile_n * sizeof(float) >
          (size_t)args->stages * shape->stage_bytes)
    return;
  (void)pg_split_in_clusters(args, launch, device, per_sm, 1, form->cluster_kernel);
}

/* K split below the last full wave where the form's tiles leave block
 * slots idle (pg_configure_split_tail, its model of the block scheduler):
 * the splits. */
static int split_tail(const tws_shape *shape, pg_layout_args *args, const pg_device *device,
                      const pg_tuning *tuning, pg_kernel_launch *launch) {
  const long long slots = tws_blocks_per_sm(shape, args->stages, device) * device->sm_count;
  return pg_configure_split_tail(args, launch, slots, shape->tile_m, shape->tile_n,
                                 tws_k_tiles(args), tuning->tma_ws_split_min_k_tiles,
                                 tuning->tma_ws_split_unit_cost, tuning->flops_per_byte);
}

/* A call of other than op N, N on one GEMM: the kernel on its layout
 * (tma_ws_layouts.cu), which reads the operands where they are (check_any
 * has held them to TMA's rules); the batch's GEMMs grid y, K split below
 * the last full wave as for op N, N where there is one GEMM, never in
 * clusters. */
static void configure_layout(const split_form *form, pg_layout_args *args, const pg_device *device,
                             const pg_tuning *tuning, pg_kernel_launch *launch) {
  tws_configure_layout(form->shape, args, tuning, launch);
  if (args->batch == 1) (void)split_tail(form->shape, args, device, tuning, launch);
}

/* K split where the tiles leave block slots idle: all tiles split where
 * they are few, only the bottom tile rows where the last wave is partial
 * (the rows above whole, straight to C), as pg_configure_split_tail's
 * model of the block scheduler finds fastest, each range at least
 * tuning->tma_ws_split_min_k_tiles steps long, a block a unit. Where the
 * tiles fill their waves it does not split at all. */
static void configure_split(const split_form *form, pg_layout_args *args, const pg_device *device,
                            const pg_tuning *tuning, pg_kernel_launch *launch) {
  if (pg_other_layout(args)) {
    configure_layout(form, args, device, tuning, launch);
    return;
  }
  if (form->whole_kernel == NULL)
    pg_entry_tma_ws.configure(args, device, tuning, launch);
  else
    tws_configure_whole_tiles(form->shape, form->whole_kernel, args, tuning, launch);
  launch->persistent_blocks_per_sm = 0;
  /* Any layout: an operand TMA cannot read is copied first, the planes of
   * a split K after the copies. */
  (void)pg_configure_operand_copies(args, device, launch);
  if (split_tail(form->shape, args, device, tuning, launch) > 1) {
    launch->kernel = form->split_kernel;
    configure_in_clusters(form, args, device, tuning,
                          tws_blocks_per_sm(form->shape, args->stages, device), launch);
  }
}

/* A form's configure (its entry's): its tile's shape and kernels, the
 * flagship's tile's whole tiles through tma_ws's configure (its kernel in
 * 12), any other's through its own whole-tile instance. */
template <int TM, int TN>
static void configure_form(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                           pg_kernel_launch *launch) {
  static const tws_shape shape = TWS_SHAPE(TM, TN);
  split_form form = {&shape, NULL, (const void *)pg_tma_ws_kernel<TM, TN, TWS_SPLIT_K>,
                     (const void *)pg_tma_ws_kernel<TM, TN, TWS_SPLIT_CLUSTER>};
  if constexpr (TM != TWS_TILE_M || TN != TWS_TILE_N)
    form.whole_kernel = (const void *)pg_tma_ws_kernel<TM, TN, TWS_WHOLE_TILES>;
  configure_split(&form, args, device, tuning, launch);
}

/* Any layout: where a copy is made (an operand TMA cannot read, copied
 * first: pg_configure_operand_copies), its rows (K and N rounded up to 4)
 * must stay ints. */
static pg_status check_any(const pg_layout_args *g, char *why, size_t why_size) {
  /* Another layout is read where it is: TMA's rules for both operands
   * (their bases, leading dimensions and batch strides). */
  if (pg_other_layout(g)) {
    char tma_why[200];
    if (pg_tma_check(g, tma_why, sizeof tma_why) != PG_OK) {
      snprintf(why, why_size, "op(A) = %s, op(B) = %s, %d GEMMs are read where they are, and %s",
               g->op_a ? "T" : "N", g->op_b ? "T" : "N", g->batch, tma_why);
      return PG_ERR_UNSUPPORTED;
    }
  }
  if (PG_PLANES_LD(g->k) > INT_MAX || PG_PLANES_LD(g->n) > INT_MAX) {
    snprintf(why, why_size, "K = %d, N = %d: a copy's rows (rounded up to 4 floats) would pass "
                            "INT_MAX", g->k, g->n);
    return PG_ERR_UNSUPPORTED;
  }
  return PG_OK;
}

/* tma_ws's kernel in each form, judged by the same rules. */
static const pg_sass_rule rules[] = {TWS_RULES};

/* What a form's entry says of it at length, from its line of TWS_FORMS:
 * its tile, how its consumers cover it (tma_ws.h), its blocks an SM, and
 * the split. */
#define TWS_WORDS_STACKED_1(tm) "one consumer warpgroup, its warp pairs 64 rows each"
#define TWS_WORDS_STACKED_2(tm) "two consumer warpgroups, one above the other, share each stage's B"
#define TWS_WORDS_WIDE_2(tm) "two consumer warpgroups, side by side, share each stage's A"
#define TWS_WORDS_SIDE_1(tm) "one consumer warpgroup, each warp pair all " #tm " rows by 64 columns"
#define TWS_WORDS_THIN_1(tm)                                                                  \
  "one consumer warpgroup, a warp's lanes 8 rows by 4 column groups of 4, a thread's rows 32 " \
  "apart"
#define TWS_BLOCKS_1 "one block per SM"
#define TWS_BLOCKS_2 "two blocks per SM"
#define TWS_BLOCKS_3 "three blocks per SM"
#define TWS_BLOCKS_4 "four blocks per SM"
#define TWS_FORM_DESCRIPTION(tm, tn, layout, wg, thread_m, thread_n, blocks)                     \
  "tma_ws on a " #tm "x" #tn " tile: " TWS_WORDS_##layout##_##wg(tm) " (" #thread_m "x" #thread_n \
  " outputs a consumer thread), " TWS_BLOCKS_##blocks " (fewer where its stages do not fit); K "  \
  "split where the tiles leave SMs idle, the partial sums added in split order by a second "     \
  "kernel, or by the ranges' blocks in a cluster through distributed shared memory where the "   \
  "GPU keeps the clusters resident; any leading dimension (an operand TMA cannot read is "     \
  "copied first); op(A), op(B) in {N, T} and strided batches read in place through maps of "  \
  "rank 3 where TMA can read the operands"

/* A form's entry: its TM x TN tile's kernel (the split instance named, as
 * the SASS names it), any layout (check_any), tma_ws's rules; stages 2 to
 * its most, 3 by default. */
#define TWS_FORM_ENTRY(form, tm, tn, layout, wg, thread_m, thread_n, blocks, max, text)            \
  PG_ENTRY(form) = {                                                                                \
      .info = {.name = #form, .kind = PG_KIND_KERNEL, .technique = text,                            \
               .source = PG_FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = max,           \
               .default_stages = 3, TWS_TILE_INFO(tm, tn),                                          \
               .description = TWS_FORM_DESCRIPTION(tm, tn, layout, wg, thread_m, thread_n, blocks), \
               .layouts = PG_LAYOUT_ANY},                                                           \
      .smem_bytes = tws_smem<tm, tn>,                                                               \
      .configure = configure_form<tm, tn>,                                                          \
      .check = check_any,                                                                           \
      .kernel = {.symbol = "pg_tma_ws_kernel", .launched = TWS_INSTANCE(tm, tn, 1),                 \
                 .dynamic_smem = 1, PG_RULES(rules)},                                               \
  };
TWS_FORMS(TWS_FORM_ENTRY)

PG_ENTRY(tma_ws_any) = {
    .info = {.name = "tma_ws_any", .kind = PG_KIND_KERNEL,
             .technique = "tma_ws_splitk under its earlier name (any layout)",
             .source = PG_FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 8,
             .default_stages = 3, TWS_TILE_INFO(TWS_TILE_M, TWS_TILE_N),
             .description = "tma_ws_splitk under the name it had when it alone took any layout: "
                            "an operand TMA cannot read (off 16 bytes, or a leading dimension no "
                            "multiple of 4) is copied with 16-byte rows into the workspace by a "
                            "first kernel",
             .layouts = PG_LAYOUT_ANY},
    .smem_bytes = tws_smem<TWS_TILE_M, TWS_TILE_N>,
    .configure = configure_form<TWS_TILE_M, TWS_TILE_N>,
    .check = check_any,
    .kernel = {.symbol = "pg_tma_ws_kernel", .launched = TWS_INSTANCE(TWS_TILE_M, TWS_TILE_N, 1),
               .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
