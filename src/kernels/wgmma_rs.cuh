/* The wgmma kernel with B^T from registers (C^T = B^T A^T), shared by
 * 36 wgmma_tma_rs (one block per tile), 37 wgmma_tma_rs_persistent (one
 * block per SM looping over the tiles) and 39 wgmma_tma_rs_multicast
 * (clusters of two blocks sharing A's rows): 36_wgmma_tma_rs.cu says how it
 * works; the template's PERSISTENT and MULTICAST are the differences, and
 * 37 and 39 say what each changes. sm_90a. */
#ifndef PG_WGMMA_RS_CUH
#define PG_WGMMA_RS_CUH

#include "kernels/wgmma_ws.cuh" /* wg_ws_shape, WG_WS_PRODUCER_REGS, WG_WS_RULES */

PG_KERNELS_BEGIN


#define WG_RS_TILE_M 256
#define WG_RS_TILE_N 128
#define WG_RS_B_BOX 32 /* columns of one B box: one 128-byte swizzle span */
#define WG_RS_STAGE_A_BYTES (WG_RS_TILE_M * WG_ROW_BYTES)          /* 32 KB */
#define WG_RS_STAGE_B_BYTES (WG_TILE_K * WG_RS_TILE_N * 4)         /* 16 KB */
#define WG_RS_STAGE_BYTES (WG_RS_STAGE_A_BYTES + WG_RS_STAGE_B_BYTES) /* 48 KB */
#define WG_RS_THREADS 384
/* The tile order: blocks go down 8 rows of tiles (2048 rows of C) before
 * the next column of tiles, so that a wave of 132 blocks reads 8 tiles' rows
 * of A and 17 tiles' columns of B (in launch order, 2.75 and 48 at 6144^2). */
#define WG_RS_GROUP_M 8
#define WG_RS_CONSUMERS 256
/* MULTICAST: a cluster of 2 blocks on the tiles (tm, 2j) and (tm, 2j + 1);
 * block r loads A's rows 128 r .. 128 r + 127 of the pair's 256 into both. */
#define WG_RS_CLUSTER 2
#define WG_RS_MC_A_ROWS (WG_RS_TILE_M / WG_RS_CLUSTER)

static_assert(WG_RS_THREADS == wg_ws_shape<2>::THREADS, "35's block and register split");

/* The epilogue's staging: a warpgroup's 64 columns of 128 rows of C at a
 * time, rows 66 floats apart (the stores of one instruction, 4 rows 2t + e
 * by 8 columns, then hit 32 banks; rows stay 8-byte aligned for the float2
 * reads). Where B is read N x K (wg_rs_layout_t: a group's 8 lanes on 8
 * consecutive columns) the same stores hit 20 banks, a 2-way conflict: at
 * this pitch the fragment reads' banks and the stores' cannot both be
 * whole, and the reads, in the K loop, keep theirs. Two warpgroups' halves: 67.6 KB, inside two stages' 96 KB. */
#define WG_RS_OUT_HALF 128
#define WG_RS_OUT_PITCH 66
static_assert(2 * WG_RS_OUT_HALF * WG_RS_OUT_PITCH * 4 <= 2 * WG_RS_STAGE_BYTES,
              "the staged output fits in the fewest stages");

#ifdef PG_HAVE_WGMMA /* the helpers exist where the kernel does */
/* This thread's fragments of one K step of 8 (kk) from the stage's B:
 * base[h][q] is where its element for fragment row 16w + 8h + g, k = t + 4q
 * of step 0 lies (floats from the stage's B); step kk is 8 rows further. */
static __device__ __forceinline__ void wg_rs_fragments(const float *b, const int base[2][2],
                                                       int kk, unsigned a[4]) {
  const float *step = b + kk * 8 * WG_RS_B_BOX;
  a[0] = __float_as_uint(step[base[0][0]]);
  a[1] = __float_as_uint(step[base[1][0]]);
  a[2] = __float_as_uint(step[base[0][1]]);
  a[3] = __float_as_uint(step[base[1][1]]);
}

/* Where this consumer thread's fragments lie in a stage's B, and which
 * column of the block's 128 each of its fragment rows is: base[h][q] for
 * fragment row 16w + 8h + g, k = t + 4q (wg_rs_fragments), col[h] that
 * row's column (36_wgmma_tma_rs.cu says why this order). */
static __device__ __forceinline__ void wg_rs_layout(int base[2][2], int col[2]) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wg = warp / 4, w = warp % 4, gr = lane / 4, t = lane % 4;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int box = 2 * wg + w / 2, p = 4 * (gr / 4) + 2 * (w % 2) + h;
    col[h] = box * WG_RS_B_BOX + 4 * p + gr % 4;
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const int k = t + 4 * q;
      base[h][q] = box * WG_TILE_K * WG_RS_B_BOX + k * WG_RS_B_BOX + ((p ^ k) % 8) * 4 + gr % 4;
    }
  }
}

/* The same where B is stored N x K (op(B) = T, the kernels that take any
 * layout): a stage's B is then 128 rows (N) of 32 floats (K) in the
 * 128-byte swizzle, element (n, k) at n * 32 + (((k / 4) ^ (n % 8)) * 4 +
 * k % 4. Fragment row 16w + 8h + g is column 64 wg + 32 (w / 2) + 8 (2 (w %
 * 2) + h) + g of the block's 128 (col[h]), so that n % 8 = g: a warp's
 * reads of one fragment register, pieces (k / 4) ^ g at element t, hit 32
 * banks. base[h][0] is row col[h]'s element t; base[0][1] is 4 g, the
 * swizzle's term (base[1][1] unused). */
static __device__ __forceinline__ void wg_rs_layout_t(int base[2][2], int col[2]) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wg = warp / 4, w = warp % 4, gr = lane / 4, t = lane % 4;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    col[h] = 64 * wg + 32 * (w / 2) + 8 * (2 * (w % 2) + h) + gr;
    base[h][0] = col[h] * WG_TILE_K + t;
    base[h][1] = 4 * gr;
  }
}

/* wg_rs_fragments on wg_rs_layout_t's layout: k = t + 8 kk is piece 2 kk,
 * k + 4 piece 2 kk + 1, each XORed with g. */
static __device__ __forceinline__ void wg_rs_fragments_t(const float *b, const int base[2][2],
                                                         int kk, unsigned a[4]) {
  const int lo = (8 * kk) ^ base[0][1], hi = lo ^ 4;
  a[0] = __float_as_uint(b[base[0][0] + lo]);
  a[1] = __float_as_uint(b[base[1][0] + lo]);
  a[2] = __float_as_uint(b[base[0][0] + hi]);
  a[3] = __float_as_uint(b[base[1][0] + hi]);
}

/* The epilogue through shared memory, for a warpgroup's HALVES x 128 rows
 * of C (its accumulators: C^T's 64 fragment rows by HALVES x 128 columns,
 * acc[i] at fragment row 16w + g + 8 ((i / 2) % 2), column 8 (i / 4) + 2t
 * + i % 2; that is C's row m0 + the column, column n0 + col[h] of the row).
 * A half at a time goes to `out` (the warpgroup's 128 x WG_RS_OUT_PITCH
 * floats) as C's rows, then out to C, each warp storing 256 contiguous
 * bytes of a row. The caller makes sure nobody else uses `out` meanwhile.
 * fix(m, n, v) may replace the value v of C[m][n] (inside C) before alpha
 * and beta apply (wg_rs_as_is: it does not). */
struct wg_rs_as_is {
  __device__ float operator()(int, int, float v) const { return v; }
};
template <int HALVES, typename Fix = wg_rs_as_is>
static __device__ __forceinline__ void wg_rs_epilogue(const pg_gemm_args &g, float *out,
                                                      const float acc[HALVES * 64],
                                                      const int col[2], int m0, int n0,
                                                      Fix fix = Fix()) {
  const int wg = threadIdx.x / WG_WARPGROUP, t = threadIdx.x % 4;
  const int tid = threadIdx.x % WG_WARPGROUP;
#pragma unroll
  for (int half = 0; half < HALVES; ++half) {
#pragma unroll
    for (int j = 16 * half; j < 16 * half + 16; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int e = 0; e < 2; ++e)
          out[(8 * (j - 16 * half) + 2 * t + e) * WG_RS_OUT_PITCH + col[h] - 64 * wg] =
              acc[4 * j + 2 * h + e];
    pg_named_barrier_sync(2 + wg, WG_WARPGROUP);
    /* Row r of the half, columns 2c, 2c + 1 of the warpgroup's 64. */
#pragma unroll 4
    for (int idx = tid; idx < WG_RS_OUT_HALF * 32; idx += WG_WARPGROUP) {
      const int r = idx / 32, c = 2 * (idx % 32);
      const int m = m0 + 128 * half + r, n = n0 + 64 * wg + c;
      if (m >= g.m || n >= g.n) continue;
      float2 v = *(const float2 *)(out + r * WG_RS_OUT_PITCH + c);
      v.x = fix(m, n, v.x);
      if (n + 1 < g.n) v.y = fix(m, n + 1, v.y);
      float *const dst = g.c + (size_t)m * g.ldc + n;
      float v0 = g.alpha * v.x, v1 = g.alpha * v.y;
      if (n + 1 < g.n && ((uintptr_t)dst % 8) == 0) {
        if (g.beta != 0.f) {
          const float2 old = *(const float2 *)dst;
          v0 = fmaf(g.beta, old.x, v0);
          v1 = fmaf(g.beta, old.y, v1);
        }
        *(float2 *)dst = make_float2(v0, v1);
        continue;
      }
      dst[0] = g.beta == 0.f ? v0 : fmaf(g.beta, dst[0], v0);
      if (n + 1 < g.n) dst[1] = g.beta == 0.f ? v1 : fmaf(g.beta, dst[1], v1);
    }
    pg_named_barrier_sync(2 + wg, WG_WARPGROUP); /* read before the next half overwrites it */
  }
}

/* A stage's B: the 4 boxes [32 (K)][32 (N)] of the block's 128 columns from
 * n0, K step kt, after the stage's A_BYTES of A. */
template <int A_BYTES>
static __device__ __forceinline__ void wg_rs_load_b(float *stage, const pg_tma_maps &maps, int n0,
                                                    int kt, unsigned long long *bar) {
#pragma unroll
  for (int j = 0; j < WG_RS_TILE_N / WG_RS_B_BOX; ++j)
    pg_tma_load_2d(stage + A_BYTES / 4 + j * WG_TILE_K * WG_RS_B_BOX, &maps.b,
                   n0 + j * WG_RS_B_BOX, kt * WG_TILE_K, bar);
}

/* The same from a map of rank 3 (pg_tma_reads_layout), matrix zb of the
 * batch: B stored K x N as above, or (op_b) N x K, then 4 boxes [32 (N)][32
 * (K)], one under the other: 128 rows of K (wg_rs_layout_t). */
template <int A_BYTES>
static __device__ __forceinline__ void wg_rs_load_b_any(float *stage, const pg_tma_maps &maps,
                                                        int n0, int kt, int zb, int op_b,
                                                        unsigned long long *bar) {
#pragma unroll
  for (int j = 0; j < WG_RS_TILE_N / WG_RS_B_BOX; ++j) {
    float *const dst = stage + A_BYTES / 4 + j * WG_TILE_K * WG_RS_B_BOX;
    if (op_b)
      pg_tma_load_3d(dst, &maps.b, kt * WG_TILE_K, n0 + j * WG_RS_B_BOX, zb, bar);
    else
      pg_tma_load_3d(dst, &maps.b, n0 + j * WG_RS_B_BOX, kt * WG_TILE_K, zb, bar);
  }
}

/* One stage's fragments into `frag` (LDS). */
static __device__ __forceinline__ void wg_rs_load(const float *stage, const int base[2][2],
                                                  unsigned frag[4][4]) {
  const float *b = stage + WG_RS_STAGE_A_BYTES / 4;
#pragma unroll
  for (int kk = 0; kk < WG_TILE_K / 8; ++kk) wg_rs_fragments(b, base, kk, frag[kk]);
}

/* The same on wg_rs_layout_t's layout (B stored N x K). */
static __device__ __forceinline__ void wg_rs_load_t(const float *stage, const int base[2][2],
                                                    unsigned frag[4][4]) {
  const float *b = stage + WG_RS_STAGE_A_BYTES / 4;
#pragma unroll
  for (int kk = 0; kk < WG_TILE_K / 8; ++kk) wg_rs_fragments_t(b, base, kk, frag[kk]);
}

/* The stage's 4 products, issued after the fence that orders the fragment
 * registers' writes before them. */
static __device__ __forceinline__ void wg_rs_mma(const float *stage, unsigned frag[4][4],
                                                 float acc[128]) {
  wg_fence();
  const uint64_t da = wg_desc(stage);
#pragma unroll
  for (int kk = 0; kk < WG_TILE_K / 8; ++kk) wg_mma_rs_m64n256k8(acc, frag[kk], da + 2 * kk);
  wg_commit();
}
#endif

/* The kernel's body; its __global__ faces follow (a multicast kernel
 * has rules of its own, so a symbol of its own). ANY: the kernel that takes
 * any layout and a batch (pg_wgmma_tma_rs_any_kernel, one block a tile):
 * maps of rank 3 (pg_tma_reads_layout: A as it is, or A^T that a first
 * kernel wrote where op(A) = T, a matrix of the batch every stride_a
 * floats as the view sets it; B as it is, N x K where op(B) = T, read by
 * wg_rs_layout_t's fragments), block b the tile b % tiles of GEMM b /
 * tiles, C at that GEMM's stride_c. */
template <int PERSISTENT, int MULTICAST, int ANY = 0, class G>
static __device__ __forceinline__ void wg_rs_kernel_body(const G &g,
                                                         const pg_tma_maps &maps) {
#ifdef PG_HAVE_WGMMA
  static_assert(!(PERSISTENT && MULTICAST), "a persistent cluster is not built");
  static_assert(!(ANY && (PERSISTENT || MULTICAST)), "any layout: one block a tile");
  static_assert(!ANY || std::is_same<G, pg_layout_args>::value, "a layout is read from pg_layout_args");
  extern __shared__ float4 smem_raw[];
  float *const smem = (float *)pg_tma_smem_base(smem_raw);
  const int stages = g.stages;
  unsigned long long *const full =
      (unsigned long long *)(smem + stages * (WG_RS_STAGE_BYTES / 4));
  unsigned long long *const empty = full + stages;
  /* The block's tiles, in grouped order (pg_grouped_tile): one, its own,
   * or (PERSISTENT) every gridDim.x-th from its index on. MULTICAST: the
   * order is over pairs of tiles along N, one pair a cluster, and the
   * block's rank picks the pair's tile (the second past N when tiles_n is
   * odd: it loads and multiplies, for the pair's A, and stores nothing). */
  const int tiles_m = (int)(((long long)g.m + WG_RS_TILE_M - 1) / WG_RS_TILE_M);
  const int tiles_n = (int)(((long long)g.n + WG_RS_TILE_N - 1) / WG_RS_TILE_N);
  const int order_n = MULTICAST ? (tiles_n + 1) / 2 : tiles_n;
  const int tiles = tiles_m * order_n, step = PERSISTENT ? (int)gridDim.x : tiles;
  const int first = MULTICAST ? (int)blockIdx.x / WG_RS_CLUSTER
                    : ANY     ? (int)blockIdx.x % tiles
                              : (int)blockIdx.x;
  const int z = ANY ? (int)blockIdx.x / tiles : 0;
  const int za = pg_stride_a(g) != 0 ? z : 0, zb = pg_stride_b(g) != 0 ? z : 0;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int k_tiles = wg_k_tiles(g);
  unsigned rank = 0;

  if (MULTICAST) {
    /* empty[s] counts both blocks' consumer warps: the slot is written in
     * both by both producers. The cluster's one barrier: every block's
     * barriers exist before anyone arrives on them or copies into them. */
    rank = pg_cluster_rank();
    if (threadIdx.x == 0) {
      for (int s = 0; s < stages; ++s) {
        pg_mbar_init(&full[s], 1);
        pg_mbar_init(&empty[s], WG_RS_CLUSTER * WG_RS_CONSUMERS / 32);
      }
      pg_fence_barrier_init();
      pg_fence_barrier_init_cluster();
    }
    pg_cluster_sync();
  } else {
    wg_ring_init(full, empty, stages, WG_RS_CONSUMERS); /* the only block-wide barrier */
  }

  int slot = 0, parity = 0;
  if (warp >= WG_RS_CONSUMERS / 32) {
    /* ---- producer: one lane ---- */
    pg_setmaxnreg_dec(WG_WS_PRODUCER_REGS);
    if (warp != WG_RS_CONSUMERS / 32 || lane != 0) return;
    pg_tma_prefetch_map(&maps.a);
    pg_tma_prefetch_map(&maps.b);
    /* Persistent: the ring runs on across tiles, so the next tile's first
     * stages load while the consumers write this one out. */
    for (int tile = first; tile < tiles; tile += step) {
      int tm, tn;
      pg_grouped_tile(tile, tiles_m, order_n, g.group_m, &tm, &tn);
      if (MULTICAST) tn = WG_RS_CLUSTER * tn + (int)rank;
      const int m0 = tm * WG_RS_TILE_M, n0 = tn * WG_RS_TILE_N;
      for (int kt = 0; kt < k_tiles; ++kt) {
        pg_mbar_wait_parity(&empty[slot], parity ^ 1);
        float *stage = smem + slot * (WG_RS_STAGE_BYTES / 4);
        /* MULTICAST: the stage's bytes are the same, half of A's from the
         * other block. */
        pg_mbar_arrive_expect_tx(&full[slot], WG_RS_STAGE_BYTES);
        if (ANY) {
          pg_tma_load_3d(stage, &maps.a, kt * WG_TILE_K, m0, za, &full[slot]);
          wg_rs_load_b_any<WG_RS_STAGE_A_BYTES>(stage, maps, n0, kt, zb, pg_op_b(g), &full[slot]);
          parity ^= t128_ring_next(&slot, stages);
          continue;
        }
        if (MULTICAST)
          pg_tma_load_2d_multicast(stage + rank * WG_RS_MC_A_ROWS * WG_TILE_K, &maps.a,
                                   kt * WG_TILE_K, m0 + (int)rank * WG_RS_MC_A_ROWS, &full[slot],
                                   (1u << WG_RS_CLUSTER) - 1);
        else
          pg_tma_load_2d(stage, &maps.a, kt * WG_TILE_K, m0, &full[slot]);
        wg_rs_load_b<WG_RS_STAGE_A_BYTES>(stage, maps, n0, kt, &full[slot]);
        parity ^= t128_ring_next(&slot, stages);
      }
    }
    /* MULTICAST: the block stays until both blocks' consumers have released
     * every slot, so that no arrival reaches its shared memory after it
     * has gone (the other block's last releases come late). */
    if (MULTICAST)
      for (int s = 0; s < stages; ++s) {
        pg_mbar_wait_parity(&empty[slot], parity ^ 1);
        parity ^= t128_ring_next(&slot, stages);
      }
    return;
  }

  /* ---- consumers ---- */
  pg_setmaxnreg_inc(WG_WS2_CONSUMER_REGS);
  const int wg = warp / 4;
  int base[2][2], col[2];
  if (ANY && pg_op_b(g))
    wg_rs_layout_t(base, col);
  else
    wg_rs_layout(base, col);
  /* The epilogue's staging: over the stages, or (PERSISTENT) a region of
   * its own after the barriers, since the producer is loading the next
   * tile's stages meanwhile. */
  float *const staging = PERSISTENT ? (float *)(empty + stages) : smem;
  float *const out = staging + wg * WG_RS_OUT_HALF * WG_RS_OUT_PITCH;
  unsigned frag[4][4];
  /* A slot's release: MULTICAST, one arrival a warp on the slot's barrier
   * in each block of the cluster (both producers write the slot). */
  auto release = [&](int s) { pg_mbar_release_slot(&empty[s], MULTICAST, rank); };
  for (int tile = first; tile < tiles; tile += step) {
    int tm, tn;
    pg_grouped_tile(tile, tiles_m, order_n, g.group_m, &tm, &tn);
    if (MULTICAST) tn = WG_RS_CLUSTER * tn + (int)rank;
    const int m0 = tm * WG_RS_TILE_M, n0 = tn * WG_RS_TILE_N;
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.f;
    int held = -1; /* the slot whose products may still run */
    for (int kt = 0; kt < k_tiles; ++kt) {
      float *const stage = smem + slot * (WG_RS_STAGE_BYTES / 4);
      pg_mbar_wait_parity(&full[slot], parity);
      /* The step before's products are done: their fragments may be
       * overwritten and their slot is free. */
      wg_wait<0>();
      if (held >= 0) release(held);
      if (ANY && pg_op_b(g))
        wg_rs_load_t(stage, base, frag);
      else
        wg_rs_load(stage, base, frag);
      wg_rs_mma(stage, frag, acc);
      held = slot;
      parity ^= t128_ring_next(&slot, stages);
    }
    wg_wait<0>();
    /* Persistent: the last slot goes back too, for the next tile's loads;
     * MULTICAST: for the producers' last waits. */
    if ((PERSISTENT || MULTICAST) && held >= 0) release(held);
    wg_fence_acc<256>(acc);
    /* The epilogue through shared memory: the products' layout puts a warp's
     * 32 values of one store in 4 rows of C (16-byte runs); staged as C's
     * rows, each warp stores 256 contiguous bytes. Over the stages, both
     * warpgroups are done with them first (and the producers are: every
     * copy into this block was waited for). */
    if (!PERSISTENT) pg_named_barrier_sync(1, WG_RS_CONSUMERS);
    if constexpr (ANY) {
      pg_gemm_args own = g;
      own.c = g.c + (size_t)z * pg_stride_c(g);
      wg_rs_epilogue<2>(own, out, acc, col, m0, n0);
    } else {
      wg_rs_epilogue<2>(g, out, acc, col, m0, n0);
    }
  }
#else
  pg_tma_unavailable();
#endif
}

template <int PERSISTENT>
__global__ void __launch_bounds__(WG_RS_THREADS, 1)
    pg_wgmma_tma_rs_kernel(const pg_gemm_args g, const __grid_constant__ pg_tma_maps maps) {
  wg_rs_kernel_body<PERSISTENT, 0>(g, maps);
}

/* Any layout and a batch (36's entry where the call is not op N, N on one
 * GEMM); a template, so that only 36's file holds it. */
template <int ONE>
__global__ void __launch_bounds__(WG_RS_THREADS, 1)
    pg_wgmma_tma_rs_any_kernel(const pg_layout_args g, const __grid_constant__ pg_tma_maps maps) {
  static_assert(ONE == 1, "one instance");
  wg_rs_kernel_body<0, 0, 1>(g, maps);
}

/* CLUSTER: WG_RS_CLUSTER (a template, so that only 39's file holds it). */
template <int CLUSTER>
__global__ void __launch_bounds__(WG_RS_THREADS, 1)
    pg_wgmma_tma_rs_multicast_kernel(const pg_gemm_args g,
                                     const __grid_constant__ pg_tma_maps maps) {
  static_assert(CLUSTER == WG_RS_CLUSTER, "the kernel is written for pairs");
  wg_rs_kernel_body<0, 1>(g, maps);
}

PG_KERNELS_END

/* The host's side. */
static constexpr pg_tma_boxes wg_rs_boxes = {.a_box_k = WG_TILE_K, .a_box_m = WG_RS_TILE_M,
                                         .a_swizzle_bytes = WG_ROW_BYTES,
                                         .b_box_n = WG_RS_B_BOX, .b_box_k = WG_TILE_K,
                                         .b_k_major = 0, .b_swizzle_bytes = WG_ROW_BYTES};

/* MULTICAST: A's box is the half of the tile's rows that a block loads. */
static const pg_tma_boxes wg_rs_mc_boxes = {.a_box_k = WG_TILE_K, .a_box_m = WG_RS_MC_A_ROWS,
                                            .a_swizzle_bytes = WG_ROW_BYTES,
                                            .b_box_n = WG_RS_B_BOX, .b_box_k = WG_TILE_K,
                                            .b_k_major = 0, .b_swizzle_bytes = WG_ROW_BYTES};

/* The any-layout kernel's (wgmma.cuh): B N x K where op(B) = T in boxes of
 * 32 rows of N by 32 floats of K. */
static constexpr pg_tma_boxes wg_rs_any_boxes = wg_any_layout_boxes(wg_rs_boxes);

/* Over the tiles in grouped order; PERSISTENT: a grid of one block per SM
 * at most (the plan caps it), each looping over its tiles; MULTICAST: two
 * blocks a pair of tiles along N, launched as clusters of two. */
template <int PERSISTENT, int MULTICAST>
static inline void wg_rs_configure(pg_layout_args *args, pg_kernel_launch *launch) {
  const long long tiles_n = ((long long)args->n + WG_RS_TILE_N - 1) / WG_RS_TILE_N;
  const long long order_n = MULTICAST ? (tiles_n + 1) / 2 : tiles_n;
  if constexpr (MULTICAST)
    launch->kernel = (const void *)pg_wgmma_tma_rs_multicast_kernel<WG_RS_CLUSTER>;
  else
    launch->kernel = (const void *)pg_wgmma_tma_rs_kernel<PERSISTENT>;
  launch->grid_x = (MULTICAST ? WG_RS_CLUSTER : 1) * order_n *
                   (((long long)args->m + WG_RS_TILE_M - 1) / WG_RS_TILE_M);
  launch->grid_y = 1;
  launch->cluster_x = MULTICAST ? WG_RS_CLUSTER : 0;
  launch->persistent_blocks_per_sm = PERSISTENT ? 1 : 0;
  args->group_m = WG_RS_GROUP_M;
  launch->tma = MULTICAST ? &wg_rs_mc_boxes : &wg_rs_boxes;
}

/* Any layout and a batch (36): one block a tile of a GEMM of the batch, B
 * read as it is (either op), A^T first into the workspace where op(A) = T
 * (pg_configure_layout_transposes). A template, so that only the file
 * that calls it holds the kernel. */
template <int ONE = 1>
static inline void wg_rs_configure_any(pg_layout_args *args, pg_kernel_launch *launch) {
  wg_rs_configure<0, 0>(args, launch);
  launch->kernel = (const void *)pg_wgmma_tma_rs_any_kernel<ONE>;
  launch->grid_x *= args->batch;
  launch->tma = &wg_rs_any_boxes;
  (void)pg_configure_layout_transposes(args, launch, 0);
}

/* The stages and their barriers; PERSISTENT: the epilogue's staging too. */
#define WG_RS_STAGING_BYTES (2 * WG_RS_OUT_HALF * WG_RS_OUT_PITCH * 4)
template <int PERSISTENT> static inline size_t wg_rs_smem(int stages) {
  return pg_tma_ring_smem(stages, WG_RS_STAGE_BYTES, WG_STAGE_SYNC_BYTES) +
         (PERSISTENT ? WG_RS_STAGING_BYTES : 0);
}

/* The RS kernels' layout rules: sm_90a code, and TMA's rules for A and B. */
static inline pg_status wg_rs_check(const pg_layout_args *g, char *why, size_t why_size) {
  const pg_status arch = wg_check_sm90a(why, why_size);
  return arch != PG_OK ? arch : pg_tma_check(g, why, why_size);
}

/* The same for any layout: A's rules where TMA reads A (op(A) = N; A^T in
 * the workspace keeps them), B's always; a batch's strides with them. */
static inline pg_status wg_rs_check_any(const pg_layout_args *g, char *why, size_t why_size) {
  pg_status st = wg_check(g, why, why_size);
  if (st == PG_OK && !g->op_a) st = pg_tma_check_a(g, why, why_size);
  return st != PG_OK ? st : pg_tma_check_b(g, why, why_size);
}

#define WG_RS_RULES                                                                           \
  WG_WS_RULES, {PG_SM90_UP, PG_MUST, "LDS", "the B^T fragments no longer come from shared memory"}

#endif
