/* 38 wgmma_tma_pingpong — member 5's other form: 35 wgmma_tma_coop's block
 * (a TMA producer warp, two consumer warpgroups, setmaxnreg 24 / 240, one
 * block per SM, the 128 x 128 x 32 tile and its 32 KB stages), but the two
 * consumer warpgroups no longer share a tile: each computes whole tiles of
 * its own, in turn. The block is persistent (one per SM, the plan caps the
 * grid) and takes every gridDim.x-th tile in launch order (row by row of
 * tiles, as 35's grid runs); its j-th tile goes to warpgroup j % 2.
 *
 * The producer, one lane, loads the block's tiles one after the other
 * through one ring of STAGES slots (the ring's positions run on across the
 * tiles, k_tiles a tile: the block's j-th tile starts at position
 * j k_tiles). The warpgroups' main loops take turns: warpgroup w starts
 * tile j's once the other has issued tile j - 1's last products (an
 * mbarrier each, order[w], one arrival a turn), and then lets the other
 * start while it waits for its products and writes its 128 x 128 of C
 * out. So one warpgroup's epilogue runs under the other's products, and
 * the tensor cores are not left idle for a tile's epilogue, which in 35
 * stops both warpgroups at once (hidden there only behind another block's
 * products; with one block per SM, not at all).
 *
 * The turns are also what makes one ring right: a waiter names a phase by
 * its parity, so a warpgroup may wait for a slot only once the slot's
 * phase before is complete. When warpgroup w starts tile j, the other has
 * waited for every position of tile j - 1, so the earlier uses of its
 * tile's slots have landed; waiting earlier, it could take a phase of the
 * same parity two uses before its own for its data.
 *
 * A warpgroup does the whole tile as two m64n128 products a K step (128
 * accumulators a thread, as 34's one consumer warpgroup), keeps one wgmma
 * group in flight (wait_group 1), and releases a slot alone: each stage has
 * one reader, so empty[] counts one warpgroup.
 *
 * The call runs B^T first (src/kernels/transpose_b.cu), as 31-35 do.
 *
 *   pipegemm bench --variant wgmma_tma_coop,wgmma_tma_pingpong --stages 2-6
 */
#include "kernels/wgmma_ws.cuh"

PG_KERNELS_BEGIN

__global__ void __launch_bounds__(wg_ws_shape<2>::THREADS, 1)
    pg_wgmma_pingpong_kernel(const pg_gemm_args g, const __grid_constant__ pg_tma_maps maps) {
#ifdef PG_HAVE_WGMMA
  enum { CONSUMERS = 2 * WG_WARPGROUP, STAGE_FLOATS = WG_WS_STAGE_BYTES(WG_TILE_N) / 4 };
  extern __shared__ float4 smem_raw[];
  float *const smem = (float *)pg_tma_smem_base(smem_raw);
  const int stages = g.stages;
  unsigned long long *const full = (unsigned long long *)(smem + stages * STAGE_FLOATS);
  unsigned long long *const empty = full + stages;
  unsigned long long *const order = empty + stages; /* [w]: warpgroup w's turn */
  const int tiles_n = (int)(((long long)g.n + WG_TILE_N - 1) / WG_TILE_N);
  const int tiles = tiles_n * (int)(((long long)g.m + WG_TILE_M - 1) / WG_TILE_M);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int k_tiles = wg_k_tiles(g);

  if (threadIdx.x == 0)
    for (int w = 0; w < 2; ++w) pg_mbar_init(&order[w], 1); /* before the ring's sync */
  wg_ring_init(full, empty, stages, WG_WARPGROUP); /* one warpgroup reads a stage */

  if (warp >= CONSUMERS / 32) {
    /* ---- producer: one lane, the block's tiles one after the other ---- */
    pg_setmaxnreg_dec(WG_WS_PRODUCER_REGS);
    if (warp != CONSUMERS / 32 || lane != 0) return;
    pg_tma_prefetch_map(&maps.a);
    pg_tma_prefetch_map(&maps.b);
    int slot = 0, parity = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      const int m0 = tile / tiles_n * WG_TILE_M, n0 = tile % tiles_n * WG_TILE_N;
      for (int kt = 0; kt < k_tiles; ++kt) {
        pg_mbar_wait_parity(&empty[slot], parity ^ 1);
        float *stage = smem + slot * STAGE_FLOATS;
        pg_mbar_arrive_expect_tx(&full[slot], STAGE_FLOATS * 4);
        pg_tma_load_2d(wg_stage_a(stage), &maps.a, kt * WG_TILE_K, m0, &full[slot]);
        pg_tma_load_2d(wg_stage_bt(stage), &maps.b, kt * WG_TILE_K, n0, &full[slot]);
        parity ^= t128_ring_next(&slot, stages);
      }
    }
    return;
  }

  /* ---- consumers: warpgroup wg takes the block's tiles wg, wg + 2, ... ---- */
  pg_setmaxnreg_inc(WG_WS2_CONSUMER_REGS);
  const int wg = warp / 4;
  int turns = 0; /* of this warpgroup's turns so far: order[wg]'s phase */
  for (int j = wg; blockIdx.x + (long long)j * gridDim.x < tiles; j += 2) {
    const int tile = blockIdx.x + j * gridDim.x; /* the block's j-th */
    const int m0 = tile / tiles_n * WG_TILE_M, n0 = tile % tiles_n * WG_TILE_N;
    if (j > 0) pg_mbar_wait_parity(&order[wg], turns++ & 1); /* tile j - 1's loop is issued */
    const long long position = (long long)j * k_tiles;
    int slot = (int)(position % stages), parity = (int)((position / stages) & 1);
    float acc[2][WG_ACC];
#pragma unroll
    for (int p = 0; p < 2; ++p)
#pragma unroll
      for (int i = 0; i < WG_ACC; ++i) acc[p][i] = 0.f;
    int held = -1; /* the slot whose products may still run */
    for (int kt = 0; kt < k_tiles; ++kt) {
      pg_mbar_wait_parity(&full[slot], parity);
      float *const stage = smem + slot * STAGE_FLOATS;
      wg_fence();
#pragma unroll
      for (int p = 0; p < 2; ++p)
        wg_stage_mma(wg_stage_a(stage) + p * 64 * WG_TILE_K, wg_stage_bt(stage), acc[p]);
      wg_commit();
      wg_wait<1>(); /* the step before's products are done: its slot is free */
      if (held >= 0) pg_mbar_arrive(&empty[held]);
      held = slot;
      parity ^= t128_ring_next(&slot, stages);
    }
    /* The other warpgroup's turn: its tile's data may be waited for. */
    if (threadIdx.x % WG_WARPGROUP == 0) pg_mbar_arrive(&order[wg ^ 1]);
    wg_wait<0>();
    /* The last slot goes back too, for the next tile. */
    if (held >= 0) pg_mbar_arrive(&empty[held]);
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      wg_fence_acc(acc[p]);
      wg_epilogue(g, m0 + p * 64, n0, acc[p]);
    }
  }
#else
  pg_tma_unavailable();
#endif
}

/* The ring and the two turns' barriers. */
static size_t smem_bytes(int stages) {
  return wg_ws_smem<WG_TILE_N>(stages) + 2 * sizeof(unsigned long long);
}

static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  wg_configure(launch, (const void *)pg_wgmma_pingpong_kernel, args);
  /* One block per SM over every tile, in launch order. */
  launch->grid_x *= launch->grid_y;
  launch->grid_y = 1;
  launch->persistent_blocks_per_sm = 1;
  launch->tma = &wg_bt_boxes<WG_TILE_N>::boxes;
}

static const pg_sass_rule rules[] = {WG_WS_RULES};

PG_ENTRY(wgmma_tma_pingpong) = {
    .info = {.name = "wgmma_tma_pingpong", .kind = PG_KIND_KERNEL,
             .precision = PG_PRECISION_TF32,
             .technique = "wgmma TF32, two consumer warpgroups on alternate tiles",
             .source = PG_FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 6,
             .default_stages = 4, WG_TILE_INFO, .threads = wg_ws_shape<2>::THREADS,
             .description = "wgmma TF32, TMA producer warp + two consumer warpgroups on alternate "
                            "tiles (ping-pong: one's epilogue under the other's products), "
                            "persistent, STAGES buffers"},
    .smem_bytes = smem_bytes,
    .configure = configure,
    .check = wg_check_tma,
    .kernel = {.symbol = "pg_wgmma_pingpong_kernel", .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
