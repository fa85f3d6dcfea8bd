/* 14 tma_ws_streamk — the flagship over stream-K, after data-parallel
 * waves: where the tiles leave the last wave partly empty, as many blocks as
 * fit at once share that wave's tiles out by K steps (the same blocks walk
 * the tiles before it first, data-parallel); a tile cut between blocks leaves its
 * parts in slots of a workspace, and a second kernel adds them up in block
 * order, so a call gives the same bits on every run. Where the tiles fill
 * whole waves, nothing is cut and the call is tma_ws's (12). sm_90 only.
 *
 *   pipegemm bench --variant tma_ws,tma_ws_streamk,cublas --size 2560
 */
/* The flagship's kernel (12), without tma_ws's entry. */
#define TWS_KERNEL_ONLY
#include "kernels/12_tma_ws.cu"

/* Where nothing is cut, tma_ws_streamk is tma_ws. */
extern "C" const pg_variant_entry pg_entry_tma_ws;

#ifdef PG_HAVE_TMA
/* Stream-K: block b's share of the stream-K part's K steps starts here
 * (counted from the part's first tile): b I / B for I steps over B blocks,
 * in 32 bits (a 64-bit division is a call into a runtime routine). With
 * I = q B + r it is b q + b r / B, and b r < B^2 (B at most
 * TWS_MAX_SK_BLOCKS) fits. */
static __device__ __forceinline__ int tws_sk_start(int b, const tws_geometry &geo, int blocks) {
  const unsigned steps = (unsigned)geo.sk_iterations, n = (unsigned)blocks;
  return (int)((unsigned)b * (steps / n) + (unsigned)b * (steps % n) / n);
}

/* Stream-K: first the whole tiles before sk_first_tile, data-parallel
 * (blocks running together share A and B in L2); then the block's
 * contiguous share of the remaining tiles' K steps, cut at tile boundaries,
 * its first stretch to slot 0 of the block's two, the others to slot 1.
 * Both parts end in one path (one tile lookup, one set of fields): with a
 * path each, ptxas numbered the FFMA block's registers with twice the bank
 * conflicts of tma_ws's (scripts/ffma-banks.py: 0.725 extra cycles a FFMA
 * against 0.335; this form 0.392) and the kernel ran 19-30 % longer. */
template <> struct tws_schedule<TWS_STREAM_K> {
  static __device__ __forceinline__ tws_cursor start(const pg_gemm_args &g,
                                                     const tws_geometry &geo) {
    tws_cursor c;
    c.next = blockIdx.x;
    c.end = pg_own<tws_own>(g).sk_first_tile;
    c.sk_next = tws_sk_start(blockIdx.x, geo, gridDim.x);
    c.sk_end = tws_sk_start(blockIdx.x + 1, geo, gridDim.x);
    return c;
  }
  static __device__ __forceinline__ bool next(const pg_gemm_args &g, const tws_geometry &geo,
                                              tws_cursor *c, tws_work *w) {
    int tile, first, last, slot = 0;
    if (c->next < c->end) {
      tile = c->next;
      first = 0;
      last = geo.k_tiles;
      c->next += gridDim.x;
    } else {
      const int it = c->sk_next;
      if (it >= c->sk_end) return false;
      slot = it == tws_sk_start(blockIdx.x, geo, gridDim.x) ? 0 : 1;
      const int part_tile = it / geo.k_tiles;
      const int tile_start = part_tile * geo.k_tiles;
      tile = pg_own<tws_own>(g).sk_first_tile + part_tile;
      first = it - tile_start;
      last = min(c->sk_end - tile_start, geo.k_tiles);
      c->sk_next = tile_start + last;
    }
    pg_grouped_tile(tile, geo.tiles_m, geo.tiles_n, g.group_m, &w->tm, &w->tn);
    w->kt_begin = first;
    w->kt_end = last;
    w->dest = first == 0 && last == geo.k_tiles ? TWS_TO_C : TWS_TO_SLOT;
    w->index = 2 * (int)blockIdx.x + slot;
    return true;
  }
};
#endif

PG_KERNELS_BEGIN

/* Stream-K's second kernel, TWS_FIXUP_CHUNKS blocks per tile of the
 * stream-K part, each adding up a band of the tile's rows: a tile whose K
 * steps begin in block b_lo's share and end in b_hi's > b_lo was left in
 * slots, one per block: slot 0 of a block whose share starts inside the
 * tile, else slot 1. They are added in block order: the same bits on every
 * run. A tile one block had whole is already in C. */
#define TWS_FIXUP_CHUNKS 8
#define TWS_MAX_SK_BLOCKS 1024 /* configure's cap on stream-K's blocks */

#ifdef PG_HAVE_TMA
static __device__ __forceinline__ int tws_sk_block_of(int it, const tws_geometry &geo,
                                                      int blocks) {
  int b = (int)((long long)it * blocks / geo.sk_iterations);
  while (b + 1 < blocks && tws_sk_start(b + 1, geo, blocks) <= it) ++b;
  while (b > 0 && tws_sk_start(b, geo, blocks) > it) --b;
  return b;
}
#endif

template <int TM, int TN>
__global__ void __launch_bounds__(TWS_REDUCE_THREADS)
    pg_tma_ws_fixup_kernel(const pg_gemm_args g) {
#ifdef PG_HAVE_TMA
  __shared__ unsigned slots[TWS_MAX_SK_BLOCKS]; /* the tile's slots, in block order */
  __shared__ int first_block, slot_count;
  const tws_geometry geo = tws_geometry_of<TM, TN>(g);
  const tws_own own = pg_own<tws_own>(g);
  const int t = own.sk_first_tile + blockIdx.x;
  const int begin = blockIdx.x * geo.k_tiles;
  if (threadIdx.x == 0) {
    first_block = tws_sk_block_of(begin, geo, own.sk_blocks);
    const int last = tws_sk_block_of(begin + geo.k_tiles - 1, geo, own.sk_blocks);
    slot_count = last > first_block ? last - first_block + 1 : 0;
  }
  __syncthreads();
  if (slot_count == 0) return;
  for (int i = threadIdx.x; i < slot_count; i += TWS_REDUCE_THREADS) {
    const int b = first_block + i;
    slots[i] = 2 * b + (tws_sk_start(b, geo, own.sk_blocks) >= begin ? 0 : 1);
  }
  __syncthreads();
  int tm, tn;
  pg_grouped_tile(t, geo.tiles_m, geo.tiles_n, g.group_m, &tm, &tn);
  const int rows = min(TM, g.m - tm * TM);
  const int cols = min(TN, g.n - tn * TN);
  const int band = TM / TWS_FIXUP_CHUNKS;
  for (int e = blockIdx.y * band * TN + threadIdx.x; e < (int)(blockIdx.y + 1) * band * TN;
       e += TWS_REDUCE_THREADS) {
    const int r = e / TN, col = e % TN;
    if (r >= rows || col >= cols) continue;
    float sum = 0.f;
    for (int i = 0; i < slot_count; ++i)
      sum += g.partials[(size_t)slots[i] * TM * TN + e];
    float *c = g.c + (size_t)(tm * TM + r) * g.ldc + (tn * TN + col);
    const float v = g.alpha * sum;
    *c = g.beta == 0.f ? v : fmaf(g.beta, *c, v);
  }
#else
  pg_tma_unavailable();
#endif
}

/* Stream-K, after data-parallel waves: as many blocks as fit at once. The
 * full waves of tiles go data-parallel, tile by tile (blocks running
 * together share A and B in L2); the tiles of the partial last wave are
 * shared out evenly by K steps, in tile order. Whole tiles go straight to C;
 * a tile cut between blocks is finished by the fixup kernel. Where the tiles
 * fill whole waves, nothing is cut and the plan is data-parallel. `launch`
 * comes planned for whole tiles (grid_x the tiles); `stream_kernel` and
 * `fixup` are the shape's instances. */
static void configure_stream(const tws_shape *shape, const void *stream_kernel,
                             const void *fixup, pg_layout_args *args, const pg_device *device,
                             pg_kernel_launch *launch) {
  const long long tiles = launch->grid_x;
  const long long k_tiles = tws_k_tiles(args);
  long long blocks = tws_blocks_per_sm(shape, args->stages, device) * device->sm_count;
  if (blocks > TWS_MAX_SK_BLOCKS) blocks = TWS_MAX_SK_BLOCKS;
  if (k_tiles == 0 || tiles % blocks == 0) return;
  /* Only the partial wave streamed: streamed blocks run at different K at
   * once, so the tiles sharing A's rows or B's columns no longer read them
   * from L2 together (at 4096^3, streaming the last full wave too, the
   * kernel read 4.5 x the DRAM bytes of tma_ws's and ran 1.37 x longer:
   * pipegemm profile, bench/results/partial-waves/README.md). */
  const long long whole_waves = tiles / blocks;
  long long first_streamed = whole_waves * blocks;
  /* Fewer K steps in the partial wave than blocks: the grid (which the
   * data-parallel part walks too) would shrink to them; stream the last
   * full wave as well. */
  if ((tiles - first_streamed) * k_tiles < blocks && whole_waves >= 1) first_streamed -= blocks;
  const long long iterations = (tiles - first_streamed) * k_tiles;
  if (iterations > INT_MAX) return; /* the kernel counts them in int */
  if (blocks > iterations) blocks = iterations;
  launch->kernel = stream_kernel;
  launch->persistent_blocks_per_sm = 0; /* its grid is its own */
  pg_set_own(args, tws_own{1, (int)blocks, (int)first_streamed});
  launch->stream_k_blocks = (int)blocks;
  launch->grid_x = blocks;
  /* Two tiles of partial sums a block: the slots of the tiles it cuts. */
  launch->views.partials = PG_IN_REGION(
      pg_workspace_add(&launch->workspace, blocks * 2 * shape->tile_m, shape->tile_n));
  pg_add_reduction(launch, fixup, tiles - first_streamed, TWS_FIXUP_CHUNKS, TWS_REDUCE_THREADS,
                   0);
}

/* tma_ws_streamk: tma_ws's tile (128 x 128, two blocks an SM), planned as
 * tma_ws plans it where nothing is cut. */
static const tws_shape large = TWS_SHAPE(TWS_TILE_M, TWS_TILE_N);
static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  pg_entry_tma_ws.configure(args, device, tuning, launch);
  configure_stream(&large, (const void *)pg_tma_ws_kernel<TWS_TILE_M, TWS_TILE_N, TWS_STREAM_K>,
                   (const void *)pg_tma_ws_fixup_kernel<TWS_TILE_M, TWS_TILE_N>, args, device,
                   launch);
}

/* tma_ws's kernel, judged by the same rules. */
static const pg_sass_rule rules[] = {TWS_RULES};

PG_ENTRY(tma_ws_streamk) = {
    .info = {.name = "tma_ws_streamk", .kind = PG_KIND_KERNEL,
             .technique = "tma_ws over stream-K after data-parallel waves",
             .source = PG_FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 8,
             .default_stages = 3, TWS_TILE_INFO(TWS_TILE_M, TWS_TILE_N),
             .description = "tma_ws over stream-K after data-parallel waves: the last wave's "
                            "tiles shared out by K steps among one block per slot; tiles cut "
                            "between blocks added up in block order by a second kernel"},
    .smem_bytes = tws_smem<TWS_TILE_M, TWS_TILE_N>,
    .configure = configure,
    .check = pg_tma_check,
    .kernel = {.symbol = "pg_tma_ws_kernel", .launched = TWS_INSTANCE(TWS_TILE_M, TWS_TILE_N, 2),
               .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
