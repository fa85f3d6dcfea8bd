/* The warp-specialized wgmma kernel, shared by 34 wgmma_tma_ws (one
 * consumer warpgroup) and 35 wgmma_tma_coop (two, cooperative on one
 * tile): a producer warpgroup of which one lane issues the TMA copies, and
 * consumer warpgroups that only wait, multiply and release. One template on
 * the consumer warpgroups (WGS) and on how many wgmma groups a consumer
 * keeps in flight across a K step (PENDING: 0 waits for each step's
 * products before releasing its slot; 1 waits for the step before's, so
 * the tensor cores always have the next step queued). sm_90a.
 *
 * Block: WGS consumer warpgroups (warps 0 .. 4 WGS - 1), the producer
 * warpgroup after them. setmaxnreg (sm_90a) gives the producer's registers
 * to the consumers: WGS = 1 launches 256 threads at 128 registers (two
 * blocks per SM) and moves them to 24 + 232; WGS = 2 launches 384 at 168 (one
 * block per SM) and moves them to 24 + 240.
 *   Producer: per K step it waits until the slot is free (empty[s]),
 *     announces 32 KB on full[s] (arrive.expect_tx), and issues a 32 x 128
 *     box of A and one of B^T (128-byte swizzle), up to STAGES steps ahead.
 *   Consumers: warpgroup w owns rows (128 / WGS) w .. of the tile as
 *     2 / WGS m64n128 products; they wait on full[s], fence, issue the four
 *     K steps of 8, commit, wait (PENDING), and arrive on empty[] of the
 *     slot whose products are done. No block-wide barrier after the start. */
#ifndef PG_WGMMA_WS_CUH
#define PG_WGMMA_WS_CUH

#include "kernels/wgmma.cuh"

#define WG_WS_PRODUCER_REGS 24
#define WG_WS1_CONSUMER_REGS 232
#define WG_WS2_CONSUMER_REGS 240

template <int WGS> struct wg_ws_shape;
template <> struct wg_ws_shape<1> {
  enum { THREADS = 256, MIN_BLOCKS = 2, CONSUMER_REGS = WG_WS1_CONSUMER_REGS };
};
template <> struct wg_ws_shape<2> {
  enum { THREADS = 384, MIN_BLOCKS = 1, CONSUMER_REGS = WG_WS2_CONSUMER_REGS };
};
/* setmaxnreg.inc waits until the registers are free: after it the block's
 * warps must fit in what the launch gave them. */
static_assert(128 * WG_WS_PRODUCER_REGS + 128 * wg_ws_shape<1>::CONSUMER_REGS <=
                  256 * (65536 / (256 * 2) / 8 * 8),
              "one consumer warpgroup's register split exceeds its launch's registers");
static_assert(128 * WG_WS_PRODUCER_REGS + 256 * wg_ws_shape<2>::CONSUMER_REGS <=
                  384 * (65536 / 384 / 8 * 8),
              "two consumer warpgroups' register split exceeds their launch's registers");

PG_KERNELS_BEGIN

/* A stage of the 128 x TN tile: A's 128 rows, then B^T's TN. */
#define WG_WS_STAGE_BYTES(tn) (WG_STAGE_A_BYTES + (tn) * WG_ROW_BYTES)

/* The kernel's body. ANY: the kernel that takes any layout and a batch
 * (pg_wgmma_ws_any_kernel): maps of rank 3 (pg_tma_reads_layout) of A (as
 * it is, or A^T that a first kernel wrote where op(A) = T) and of B^T (B as
 * it is where op(B) = T, else B^T that the first kernel wrote), a matrix of
 * the batch every stride_a or stride_b floats (the views set them); the
 * grid's x the tiles along N of every GEMM of the batch in turn, C at that
 * GEMM's stride_c. */
template <int WGS, int PENDING, int TN, int ANY, class G>
static __device__ __forceinline__ void wg_ws_body(const G &g, const pg_tma_maps &maps) {
  static_assert(!ANY || std::is_same<G, pg_layout_args>::value, "a layout is read from pg_layout_args");
#ifdef PG_HAVE_WGMMA
  enum { CONSUMERS = WGS * WG_WARPGROUP, PRODUCTS = 2 / WGS };
  enum { STAGE_FLOATS = WG_WS_STAGE_BYTES(TN) / 4, ACC = WG_ACC_OF(TN) };
  static_assert(PRODUCTS * ACC <= 128, "at most 128 accumulators a consumer thread");
  extern __shared__ float4 smem_raw[];
  float *const smem = (float *)pg_tma_smem_base(smem_raw);
  const int stages = g.stages;
  unsigned long long *const full = (unsigned long long *)(smem + stages * STAGE_FLOATS);
  unsigned long long *const empty = full + stages;
  const int m0 = blockIdx.y * WG_TILE_M;
  int n0, z = 0;
  if constexpr (ANY) {
    const int tiles_n = (int)(((long long)g.n + TN - 1) / TN);
    z = (int)blockIdx.x / tiles_n;
    n0 = ((int)blockIdx.x % tiles_n) * TN;
  } else {
    n0 = blockIdx.x * TN;
  }
  const int za = ANY && pg_stride_a(g) != 0 ? z : 0, zb = ANY && pg_stride_b(g) != 0 ? z : 0;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int k_tiles = wg_k_tiles(g);

  wg_ring_init(full, empty, stages, CONSUMERS); /* the only block-wide barrier */

  int slot = 0, parity = 0;
  if (warp >= CONSUMERS / 32) {
    /* ---- producer: one lane; the others have nothing to do ---- */
    pg_setmaxnreg_dec(WG_WS_PRODUCER_REGS);
    if (warp != CONSUMERS / 32 || lane != 0) return;
    PG_TRACE_OPEN(g, PG_TRACE_ROLE_PRODUCER, true); /* the one lane left */
    pg_tma_prefetch_map(&maps.a);
    pg_tma_prefetch_map(&maps.b);
    for (int kt = 0; kt < k_tiles; ++kt) {
      /* Free once the consumers released its previous use; on a slot's
       * first use the wait for "parity 1" returns at once. */
      PG_TRACE_SPAN(SLOT, slot, kt) pg_mbar_wait_parity(&empty[slot], parity ^ 1);
      float *stage = smem + slot * STAGE_FLOATS;
      pg_mbar_arrive_expect_tx(&full[slot], STAGE_FLOATS * 4);
      if constexpr (ANY) {
        pg_tma_load_3d(wg_stage_a(stage), &maps.a, kt * WG_TILE_K, m0, za, &full[slot]);
        pg_tma_load_3d(wg_stage_bt(stage), &maps.b, kt * WG_TILE_K, n0, zb, &full[slot]);
      } else {
        pg_tma_load_2d(wg_stage_a(stage), &maps.a, kt * WG_TILE_K, m0, &full[slot]);
        pg_tma_load_2d(wg_stage_bt(stage), &maps.b, kt * WG_TILE_K, n0, &full[slot]);
      }
      parity ^= t128_ring_next(&slot, stages);
    }
    PG_TRACE_TILE_DONE();
    PG_TRACE_CLOSE(g, PG_TRACE_ROLE_PRODUCER);
    return;
  }

  /* ---- consumers ---- */
  /* setmaxnreg takes a literal: one branch per shape. */
  if constexpr (WGS == 1)
    pg_setmaxnreg_inc(WG_WS1_CONSUMER_REGS);
  else
    pg_setmaxnreg_inc(WG_WS2_CONSUMER_REGS);
  const int wg = warp / 4;
  PG_TRACE_OPEN(g, PG_TRACE_ROLE_CONSUMER, threadIdx.x == 0);
  float acc[PRODUCTS][ACC];
#pragma unroll
  for (int p = 0; p < PRODUCTS; ++p)
#pragma unroll
    for (int i = 0; i < ACC; ++i) acc[p][i] = 0.f;
  int held = -1; /* PENDING = 1: the slot whose products may still run */
  for (int kt = 0; kt < k_tiles; ++kt) {
    PG_TRACE_SPAN(DATA, slot, kt) pg_mbar_wait_parity(&full[slot], parity);
    float *const stage = smem + slot * STAGE_FLOATS;
    /* PENDING = 1: the span ends when the step before's products are done. */
    PG_TRACE_SPAN(COMPUTE, slot, kt) {
      wg_fence();
#pragma unroll
      for (int p = 0; p < PRODUCTS; ++p)
        wg_stage_mma<TN>(wg_stage_a(stage) + (wg * PRODUCTS + p) * 64 * WG_TILE_K,
                         wg_stage_bt(stage), acc[p]);
      wg_commit();
      if (PENDING == 0)
        wg_wait<0>();
      else
        wg_wait<1>(); /* the step before's products are done: its slot is free */
    }
    if (PENDING == 0) {
      PG_TRACE_BEFORE(RELEASE, slot, kt) pg_mbar_arrive(&empty[slot]);
    } else {
      if (held >= 0) PG_TRACE_BEFORE(RELEASE, held, kt - 1) pg_mbar_arrive(&empty[held]);
      held = slot;
    }
    parity ^= t128_ring_next(&slot, stages);
  }
  if (PENDING != 0) {
    wg_wait<0>();
    /* The last step's slot: nobody waits for it, its products are done. */
    PG_TRACE_MARK_IF(held >= 0, PG_TRACE_RELEASE, held, k_tiles - 1);
  }
  PG_TRACE_SPAN(EPILOGUE, 0, 0) {
    pg_gemm_args own = g;
    if (ANY) own.c = g.c + (size_t)z * pg_stride_c(g);
#pragma unroll
    for (int p = 0; p < PRODUCTS; ++p) {
      wg_fence_acc<TN>(acc[p]);
      wg_epilogue<TN>(ANY ? own : static_cast<const pg_gemm_args &>(g), m0 + (wg * PRODUCTS + p) * 64, n0, acc[p]);
    }
  }
  PG_TRACE_TILE_DONE();
  PG_TRACE_CLOSE(g, PG_TRACE_ROLE_CONSUMER);
#else
  pg_tma_unavailable();
#endif
}

template <int WGS, int PENDING, int TN>
__global__ void __launch_bounds__(wg_ws_shape<WGS>::THREADS, wg_ws_shape<WGS>::MIN_BLOCKS)
    pg_wgmma_ws_kernel(const pg_gemm_args g, const __grid_constant__ pg_tma_maps maps) {
  wg_ws_body<WGS, PENDING, TN, 0>(g, maps);
}

template <int WGS, int PENDING, int TN>
__global__ void __launch_bounds__(wg_ws_shape<WGS>::THREADS, wg_ws_shape<WGS>::MIN_BLOCKS)
    pg_wgmma_ws_any_kernel(const pg_layout_args g, const __grid_constant__ pg_tma_maps maps) {
  wg_ws_body<WGS, PENDING, TN, 1>(g, maps);
}

PG_KERNELS_END

template <int TN> static inline size_t wg_ws_smem(int stages) {
  return pg_tma_ring_smem(stages, WG_WS_STAGE_BYTES(TN), WG_STAGE_SYNC_BYTES);
}

/* The kernel's instance, as the SASS names it. */
#define WG_WS_INSTANCE(wgs, pending, tn) \
  "pg_wgmma_ws_kernel<" PG_STRINGIFY(wgs) ", " PG_STRINGIFY(pending) ", " PG_STRINGIFY(tn) ">"

#define WG_WS_RULES                                                                            \
  PG_RULES_WGMMA, PG_RULES_TMA_COMMON,                                                         \
      {PG_SM90_UP, PG_MUST, "USETMAXREG", "setmaxnreg is gone: the consumers keep the launch's registers"}

#endif
