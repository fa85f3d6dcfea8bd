/* 12 tma_ws — the flagship: the TMA pipeline the "Software Pipelining and
 * Double Buffering" guide ends with (one thread issues the bulk tensor copy,
 * the rest wait on an mbarrier), as a TMA producer warp and a consumer
 * warpgroup, over output tiles in grouped order, one block per tile or a
 * persistent grid (the tuning table decides); sm_90 only.
 *
 * Block: 128 consumer threads (warps 0-3) and a producer warpgroup (warps
 * 4-7) of which one lane works; the warpgroup exists because setmaxnreg
 * moves registers a warpgroup at a time (tma_ws.h). The tall tile
 * (tma_ws_m256) has two consumer warpgroups (warps 0-7, 256 rows) over one
 * B per stage and its producer in warps 8-11; the wide tile (tma_ws_n256)
 * likewise, its warpgroups 128 columns each over one A per stage.
 *   Producer: one lane (behind a first kernel that copies an operand, once
 *     that kernel has ended: pg_grid_dependency_wait) walks this block's
 *     work and its K steps; per step it
 *     waits until the slot is free (empty[s]), announces the stage's bytes on
 *     full[s] (arrive.expect_tx) and issues two bulk tensor copies, a
 *     TM x TWS_TILE_K box of A (swizzled) and a TWS_TILE_K x TN box of B.
 *     It runs up to STAGES steps ahead, across tile boundaries: the next
 *     tile's first stages load while the consumers write the last one out.
 *   Consumers: wait on full[s], compute, arrive on empty[s]; no load
 *     instruction but shared-memory reads, no block-wide barrier.
 *
 * Consumer thread (w = warp, ty = lane/8, tx = lane%8) owns rows
 * 64*(w/2) + 4*(w%2) + ty + 8i (i < 8) and columns tx*4 + 32j .. +3 (j < 4):
 * 8x16 outputs (in the wide tile w counts within its warpgroup, whose
 * columns start at 128 (w/4)). Per 4 K steps it reads A as 8 float4 along K (one per row)
 * and B as 4 float4 per K step, 24 LDS.128 for 512 FFMA. A warp's A reads
 * hit 4 rows at the same K; their low bits differ, so the copy engine's
 * swizzle puts them in different banks; B reads are 128 contiguous bytes.
 * The other tiles' threads: the layouts of tma_ws.h.
 *
 * Tiles: block b takes tiles b, b + gridDim.x, ... whole (the whole-tiles
 * schedule, below). The grid is blocks_per_sm x SMs from the tuning table
 * (src/tuning.c), or one block per tile where the table says 0 but a
 * persistent grid of two blocks an SM where a tile has few K steps (the
 * table's tma_ws_persistent_max_k_tiles): there the producers load the
 * next tile while the consumers store the last, which pays where the
 * store is a large share of a tile's time; bench/results/tma-ws/README.md and
 * partial-waves/README.md measure both on an H200. Where the tiles leave
 * SMs idle, the next chapters split K (13) or share the last wave's K steps
 * out (14).
 *
 * The kernel is one template on the tile (TM x TN, a form of TWS_FORMS in
 * tma_ws.h) and on how a block takes its work (MODE): this file holds it
 * and the whole-tiles schedule; 13_tma_ws_splitk.cu and
 * 14_tma_ws_streamk.cu include it with TWS_KERNEL_ONLY defined (the kernel
 * without tma_ws's entry), bring their schedules and instantiate it. What
 * the three share beside the kernel is in tma_ws.cuh.
 *
 *   pipegemm bench --variant tma_ws,cublas --size 4096
 */
#ifndef PG_KERNELS_12_TMA_WS_CU
#define PG_KERNELS_12_TMA_WS_CU

#include "kernels/tma_ws.cuh"

#ifdef PG_HAVE_TMA
/* Whole tiles: tiles blockIdx.x, + gridDim.x, ... (tile t maps to a (row,
 * column) in groups of `group_m` tile rows, column-major inside a group, so
 * blocks running together share A rows and B columns in L2), each over all
 * of K, straight to C. */
template <> struct tws_schedule<TWS_WHOLE_TILES> {
  static __device__ __forceinline__ tws_cursor start(const pg_gemm_args &g,
                                                     const tws_geometry &geo) {
    (void)g;
    tws_cursor c;
    c.sk_next = c.sk_end = 0;
    c.next = blockIdx.x;
    c.end = geo.tiles;
    return c;
  }
  static __device__ __forceinline__ bool next(const pg_gemm_args &g, const tws_geometry &geo,
                                              tws_cursor *c, tws_work *w) {
    if (c->next >= c->end) return false;
    pg_grouped_tile(c->next, geo.tiles_m, geo.tiles_n, g.group_m, &w->tm, &w->tn);
    w->kt_begin = 0;
    w->kt_end = geo.k_tiles;
    w->dest = TWS_TO_C;
    w->index = 0;
    c->next += gridDim.x;
    return true;
  }
};
#endif

PG_KERNELS_BEGIN

/* The kernel's body, on the tile, the mode and the layout (LAYOUT, tma_ws.cuh:
 * 0, or the call's ops over its batch). */
#ifdef PG_HAVE_TMA
template <int TM, int TN, int MODE, int LAYOUT, class G>
static __device__ __forceinline__ void tws_run(const G &g, const pg_tma_maps &maps) {
  static_assert(LAYOUT == 0 || std::is_same<G, pg_layout_args>::value,
                "a layout is read from pg_layout_args");
  typedef tws_tile<TM, TN> tile;
  constexpr bool A_T = (LAYOUT & TWS_A_T) != 0, B_T = (LAYOUT & TWS_B_T) != 0;
  constexpr bool BATCHED = (LAYOUT & TWS_BATCHED) != 0;
  static_assert(LAYOUT == 0 || (BATCHED && MODE == TWS_SPLIT_K),
                "a layout other than 0 is read through maps of rank 3, in the split-K mode");
  /* The batch's matrices: blockIdx.y, + gridDim.y, ... (one where LAYOUT
   * is 0). */
  const int batches = BATCHED ? pg_batch(g) : 1;
  const int batch_first = BATCHED ? (int)blockIdx.y : 0;
  const int batch_step = BATCHED ? (int)gridDim.y : 1;
  enum { THREAD_M = tile::THREAD_M, THREAD_N = tile::THREAD_N, STAGE_BYTES = tile::STAGE_BYTES };
  enum { CONSUMERS = tile::CONSUMERS, STAGE_A_BYTES = tile::STAGE_A_BYTES };
  extern __shared__ float4 smem_raw[];
  char *const smem = (char *)pg_tma_smem_base(smem_raw);
  const int stages = g.stages;
  unsigned long long *const full = (unsigned long long *)(smem + stages * STAGE_BYTES);
  unsigned long long *const empty = full + stages;
  const tws_geometry geo = tws_geometry_of<TM, TN>(g);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      pg_mbar_init(&full[s], 1);
      pg_mbar_init(&empty[s], CONSUMERS);
    }
    pg_fence_barrier_init();
  }
  __syncthreads(); /* the only block-wide barrier: the mbarriers exist */
  /* Split K: the reduction, launched programmatically behind this kernel,
   * may start now; it waits for this kernel's end itself. */
  if constexpr (MODE == TWS_SPLIT_K) pg_grid_launch_dependents();

  int slot = 0, parity = 0;
  if (warp >= CONSUMERS / 32) {
    /* ---- producer: one lane; the others have nothing to do ---- */
    pg_setmaxnreg_dec(TWS_PRODUCER_REGS);
    /* Split in clusters: every thread stays for the cluster's two barriers
     * (tws_cluster_store). */
    if (warp != CONSUMERS / 32 || lane != 0 || geo.k_tiles == 0) {
      tws_producer_leaves<MODE>();
      return;
    }
    PG_TRACE_OPEN(g, PG_TRACE_ROLE_PRODUCER, true); /* the one lane left */
    pg_tma_prefetch_map(&maps.a);
    pg_tma_prefetch_map(&maps.b);
    /* Behind a first kernel that copies an operand (launched
     * programmatically behind it): its copies are complete before the
     * first read, and the copy engine's reads are ordered after its
     * stores (another proxy: without the fence the H200 served a block a
     * stale row of A's copy about one run in five of tma_ws_n32 at
     * 2100x2100x256 with A unaligned in test_gpu_variants). Elsewhere the
     * wait returns at once. */
    pg_grid_dependency_wait();
    pg_fence_proxy_async_global();
    for (int batch = batch_first; batch < batches; batch += batch_step) {
      /* a matrix of the batch: the third coordinate (0 for an operand
       * whose stride is 0: one matrix for all) */
      const int za = pg_stride_a(g) != 0 ? batch : 0, zb = pg_stride_b(g) != 0 ? batch : 0;
      tws_cursor cursor = tws_schedule<MODE>::start(g, geo);
      tws_work w;
      while (tws_schedule<MODE>::next(g, geo, &cursor, &w)) {
        for (int kt = w.kt_begin; kt < w.kt_end; ++kt) {
          /* Free once the consumers released its previous use; on a slot's
           * first use the wait for "parity 1" returns at once. */
          PG_TRACE_SPAN(SLOT, slot, kt) pg_mbar_wait_parity(&empty[slot], parity ^ 1);
          char *stage = smem + slot * STAGE_BYTES;
          pg_mbar_arrive_expect_tx(&full[slot], STAGE_BYTES);
          const int k0 = kt * TWS_TILE_K, m0 = w.tm * TM, n0 = w.tn * TN;
          if constexpr (!BATCHED) {
            (void)za, (void)zb;
            pg_tma_load_2d(stage, &maps.a, k0, m0, &full[slot]);
            pg_tma_load_2d(stage + STAGE_A_BYTES, &maps.b, n0, k0, &full[slot]);
          } else {
            /* the operands as stored: A K x M where read transposed, B N x K */
            pg_tma_load_3d(stage, &maps.a, A_T ? m0 : k0, A_T ? k0 : m0, za, &full[slot]);
            pg_tma_load_3d(stage + STAGE_A_BYTES, &maps.b, B_T ? k0 : n0, B_T ? n0 : k0, zb,
                           &full[slot]);
          }
          parity ^= t128_ring_next(&slot, stages);
        }
        PG_TRACE_TILE_DONE();
      }
    }
    PG_TRACE_CLOSE(g, PG_TRACE_ROLE_PRODUCER);
    tws_producer_leaves<MODE>();
    return;
  }

  /* ---- consumers ---- */
  /* setmaxnreg takes a literal: one branch per register split (16 columns
   * a thread, two blocks an SM; or fewer, three). */
  if constexpr (THREAD_N == TWS_THREAD_N)
    pg_setmaxnreg_inc(TWS_CONSUMER_REGS);
  else
    pg_setmaxnreg_inc(TWS_SMALL_CONSUMER_REGS);
  /* This thread's rows and columns of the tile (tws_origin_of). */
  const tws_origin origin = tws_origin_of<TM, TN, LAYOUT>(warp, lane);
  PG_TRACE_OPEN(g, PG_TRACE_ROLE_CONSUMER, threadIdx.x == 0);
  for (int batch = batch_first; batch < batches; batch += batch_step) {
    float *const c = BATCHED ? g.c + batch * pg_stride_c(g) : g.c;
    tws_cursor cursor = tws_schedule<MODE>::start(g, geo);
    tws_work w;
    while (tws_schedule<MODE>::next(g, geo, &cursor, &w)) {
      float acc[THREAD_M][THREAD_N];
#pragma unroll
      for (int i = 0; i < THREAD_M; ++i)
#pragma unroll
        for (int j = 0; j < THREAD_N; ++j) acc[i][j] = 0.f;
      for (int kt = w.kt_begin; kt < w.kt_end; ++kt) {
        PG_TRACE_SPAN(DATA, slot, kt) pg_mbar_wait_parity(&full[slot], parity);
        if constexpr ((LAYOUT & (TWS_A_T | TWS_B_T)) == 0) {
          PG_TRACE_SPAN(COMPUTE, slot, kt)
              tws_compute<TM, TN>(smem + slot * STAGE_BYTES, origin.row0, origin.swz,
                                  origin.col0, acc);
        } else {
          tws_compute_layout<TM, TN, LAYOUT>(smem + slot * STAGE_BYTES, origin.row0,
                                             origin.swz, origin.col0, acc);
        }
        PG_TRACE_BEFORE(RELEASE, slot, kt) pg_mbar_release_to_copy_engine(&empty[slot]);
        parity ^= t128_ring_next(&slot, stages);
      }
      PG_TRACE_SPAN(EPILOGUE, 0, 0)
          tws_store<TM, TN, MODE, LAYOUT>(g, w, smem, origin.row0, origin.col0, acc, c);
      PG_TRACE_TILE_DONE();
    }
  }
  PG_TRACE_CLOSE(g, PG_TRACE_ROLE_CONSUMER);
}
#endif

template <int TM, int TN, int MODE>
__global__ void __launch_bounds__(tws_tile<TM, TN>::THREADS, tws_tile<TM, TN>::MIN_BLOCKS)
    pg_tma_ws_kernel(const pg_gemm_args g, const __grid_constant__ pg_tma_maps maps) {
#ifdef PG_HAVE_TMA
  tws_run<TM, TN, MODE, 0>(g, maps);
#else
  pg_tma_unavailable();
#endif
}

/* The kernel on a call's layout (tma_ws.cuh: TWS_BATCHED and the ops),
 * split-K's schedule; its instances in tma_ws_layouts.cu. */
template <int TM, int TN, int LAYOUT>
__global__ void __launch_bounds__(tws_tile<TM, TN>::THREADS, tws_tile<TM, TN>::MIN_BLOCKS)
    pg_tma_ws_layout_kernel(const pg_layout_args g, const __grid_constant__ pg_tma_maps maps) {
#ifdef PG_HAVE_TMA
  tws_run<TM, TN, TWS_SPLIT_K, LAYOUT>(g, maps);
#else
  pg_tma_unavailable();
#endif
}

PG_KERNELS_END

#ifndef TWS_KERNEL_ONLY
PG_KERNELS_BEGIN

static const tws_shape large = TWS_SHAPE(TWS_TILE_M, TWS_TILE_N);

static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  if (pg_other_layout(args)) {
    /* K is split at another layout by tma_ws_splitk, not here. */
    tws_configure_layout(&large, args, tuning, launch);
    return;
  }
  tws_configure_whole_tiles(
      &large, (const void *)pg_tma_ws_kernel<TWS_TILE_M, TWS_TILE_N, TWS_WHOLE_TILES>, args,
      tuning, launch);
  const pg_tuning env = pg_tuning_with_env(tuning);
  if (launch->persistent_blocks_per_sm == 0 &&
      tws_k_tiles(args) <= env.tma_ws_persistent_max_k_tiles &&
      tws_blocks_per_sm(&large, args->stages, device) >= TWS_MIN_BLOCKS_PER_SM) {
    launch->persistent_blocks_per_sm = TWS_MIN_BLOCKS_PER_SM;
    launch->model.speed_factor = env.tma_ws_persistent_speed_percent / 100.0;
  }
}

static const pg_sass_rule rules[] = {TWS_RULES};

PG_ENTRY(tma_ws) = {
    .info = {.name = "tma_ws", .kind = PG_KIND_KERNEL,
             .technique = "TMA producer warp + consumer warpgroup, setmaxnreg",
             .source = PG_FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 8,
             .default_stages = 3, TWS_TILE_INFO(TWS_TILE_M, TWS_TILE_N),
             .description = "TMA producer warp + consumer warpgroup (8x16 each, setmaxnreg), "
                            "full/empty mbarriers, grouped tile order; a persistent grid of two "
                            "blocks an SM where a tile has few K steps (the tuning row's, K <= "
                            "128 on the H200); op(A), op(B) in {N, T} and strided batches read "
                            "in place through maps of rank 3, where TMA can read the operands",
             .layouts = PG_LAYOUT_ANY},
    .smem_bytes = tws_smem<TWS_TILE_M, TWS_TILE_N>,
    .configure = configure,
    .check = pg_tma_check,
    .kernel = {.symbol = "pg_tma_ws_kernel", .launched = TWS_INSTANCE(TWS_TILE_M, TWS_TILE_N, 0),
               .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
#endif

#endif
