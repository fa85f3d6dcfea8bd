/* 12 tma_ws — the flagship: the TMA pipeline the "Software Pipelining and
 * Double Buffering" guide ends with (one thread issues the bulk tensor copy,
 * the rest wait on an mbarrier), as a TMA producer warp and a consumer
 * warpgroup, over output tiles in grouped order, one block per tile or a
 * persistent grid (the tuning table decides); sm_90 only.
 *
 * Block: 128 consumer threads (warps 0-3) and a producer warpgroup (warps
 * 4-7) of which one lane works; the warpgroup exists because setmaxnreg
 * moves registers a warpgroup at a time (tma_ws.h).
 *   Producer: one lane walks this block's tiles and their K steps; per step it
 *     waits until the slot is free (empty[s]), announces the stage's bytes on
 *     full[s] (arrive.expect_tx) and issues two bulk tensor copies, a
 *     128 x TWS_TILE_K box of A (swizzled) and a TWS_TILE_K x 128 box of B.
 *     It runs up to STAGES steps ahead, across tile boundaries: the next
 *     tile's first stages load while the consumers write the last one out.
 *   Consumers: wait on full[s], compute, arrive on empty[s]; no load
 *     instruction but shared-memory reads, no block-wide barrier.
 * Tiles: block b takes tiles b, b + gridDim.x, ...; tile t maps to
 * (row, column) in groups of `group_m` tile rows, column-major inside a
 * group, so blocks running together share A rows and B columns in L2.
 * The grid is blocks_per_sm x SMs from the tuning table (src/tuning.c), or
 * one block per tile where the table says 0; bench/results/h200-tma.md
 * measures both on an H200.
 *
 * Consumer thread (w = warp, ty = lane/8, tx = lane%8) owns rows
 * 64*(w/2) + 4*(w%2) + ty + 8i (i < 8) and columns tx*4 + 32j .. +3 (j < 4):
 * 8x16 outputs. Per 4 K steps it reads A as 8 float4 along K (one per row)
 * and B as 4 float4 per K step, 24 LDS.128 for 512 FFMA. A warp's A reads
 * hit 4 rows at the same K; their low bits differ, so the copy engine's
 * swizzle puts them in different banks; B reads are 128 contiguous bytes.
 *
 *   pipegemm bench --variant tma_ws,cublas --size 4096
 */
#include <stdint.h>

#include "kernels/tile128.cuh" /* t128_ring_next */
#include "kernels/tma_common.cuh"
#include "kernels/tma_ws.h"
#include "tuning.h"

static_assert(TWS_TILE_K % 4 == 0 && TWS_A_ROW_BYTES <= 128 && TWS_A_ROW_BYTES >= 32,
              "A rows must be one swizzle span: 32, 64 or 128 bytes");
static_assert(TWS_CONSUMERS * TWS_THREAD_M * TWS_THREAD_N == TWS_TILE_M * TWS_TILE_N,
              "the warpgroup covers the tile");

#define TWS_ROW_STEP 8  /* rows of one thread are 8 apart */
#define TWS_COL_STEP 32 /* its 4-column groups are 32 apart */

/* The device helpers exist where the kernel does: sm_90 code. */
#ifdef PG_HAVE_TMA
/* The copy engine's swizzle: in a row of A (TWS_A_ROW_BYTES, 1024-byte
 * aligned stage) the 16-byte piece p is stored at piece p ^ x, where x is
 * bits [7, 7+b) of the row's byte offset, b = log2(row bytes / 16). A
 * thread's rows are 8 apart (TWS_ROW_STEP), which leaves x the same for all
 * of them: one value per thread, computed once. */
static __device__ __forceinline__ unsigned tws_swizzle_of_row(int row) {
  return (((unsigned)row * TWS_A_ROW_BYTES) >> 7) & (TWS_A_ROW_BYTES / 16 - 1);
}

/* Tile t of a tiles_m x tiles_n grid in grouped order. */
static __device__ __forceinline__ void tws_tile_coords(int t, int tiles_m, int tiles_n,
                                                       int group_m, int *tm, int *tn) {
  const int per_group = group_m * tiles_n;
  const int group = t / per_group;
  const int first_m = group * group_m;
  const int rows = min(tiles_m - first_m, group_m);
  const int in_group = t - group * per_group;
  *tm = first_m + in_group % rows;
  *tn = in_group / rows;
}

/* acc += the stage's A (128 x TILE_K) times B (TILE_K x 128), this thread's
 * 8x16 part. */
static __device__ __forceinline__ void tws_compute(const char *stage, int row0, unsigned swz,
                                                   int col0,
                                                   float acc[TWS_THREAD_M][TWS_THREAD_N]) {
  const char *as = stage + row0 * TWS_A_ROW_BYTES;
  const float *bs = (const float *)(stage + TWS_STAGE_A_BYTES) + col0;
#pragma unroll
  for (int piece = 0; piece < TWS_TILE_K / 4; ++piece) {
    const char *ap = as + (((unsigned)piece ^ swz) << 4);
    float4 a[TWS_THREAD_M];
#pragma unroll
    for (int i = 0; i < TWS_THREAD_M; ++i)
      a[i] = *(const float4 *)(ap + TWS_ROW_STEP * i * TWS_A_ROW_BYTES);
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int kk = piece * 4 + q;
      float b[TWS_THREAD_N];
#pragma unroll
      for (int j = 0; j < TWS_THREAD_N / 4; ++j) {
        const float4 v = *(const float4 *)(bs + kk * TWS_TILE_N + TWS_COL_STEP * j);
        b[4 * j + 0] = v.x;
        b[4 * j + 1] = v.y;
        b[4 * j + 2] = v.z;
        b[4 * j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TWS_THREAD_M; ++i) {
        const float ai = q == 0 ? a[i].x : q == 1 ? a[i].y : q == 2 ? a[i].z : a[i].w;
#pragma unroll
        for (int j = 0; j < TWS_THREAD_N; ++j) acc[i][j] = fmaf(ai, b[j], acc[i][j]);
      }
    }
  }
}

/* C = alpha*acc + beta*C for this thread's outputs, guarded; 16-byte stores
 * where C's rows allow them. C is not read when beta == 0. */
static __device__ __forceinline__ void tws_epilogue(const pg_gemm_args &g, int m0, int n0,
                                                    int row0, int col0,
                                                    float acc[TWS_THREAD_M][TWS_THREAD_N]) {
  const int vec_c = ((uintptr_t)g.c % 16 == 0) && g.ldc % 4 == 0;
#pragma unroll
  for (int i = 0; i < TWS_THREAD_M; ++i) {
    const int row = m0 + row0 + TWS_ROW_STEP * i;
    if (row >= g.m) break;
    float *c_row = g.c + (size_t)row * g.ldc;
#pragma unroll
    for (int j = 0; j < TWS_THREAD_N / 4; ++j) {
      const int col = n0 + col0 + TWS_COL_STEP * j;
      float *p = c_row + col;
      if (vec_c && col + 3 < g.n) {
        float4 v = make_float4(g.alpha * acc[i][4 * j], g.alpha * acc[i][4 * j + 1],
                               g.alpha * acc[i][4 * j + 2], g.alpha * acc[i][4 * j + 3]);
        if (g.beta != 0.f) {
          const float4 c = *(const float4 *)p;
          v.x = fmaf(g.beta, c.x, v.x);
          v.y = fmaf(g.beta, c.y, v.y);
          v.z = fmaf(g.beta, c.z, v.z);
          v.w = fmaf(g.beta, c.w, v.w);
        }
        *(float4 *)p = v;
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e)
          if (col + e < g.n) {
            const float v = g.alpha * acc[i][4 * j + e];
            p[e] = g.beta == 0.f ? v : fmaf(g.beta, p[e], v);
          }
      }
    }
  }
}

#endif

__global__ void __launch_bounds__(TWS_THREADS, TWS_MIN_BLOCKS_PER_SM)
    pg_tma_ws_kernel(const pg_gemm_args g, const __grid_constant__ pg_tma_maps maps) {
#ifdef PG_HAVE_TMA
  extern __shared__ float4 smem_raw[];
  char *const smem = (char *)pg_tma_smem_base(smem_raw);
  const int stages = g.stages;
  unsigned long long *const full = (unsigned long long *)(smem + stages * TWS_STAGE_BYTES);
  unsigned long long *const empty = full + stages;
  /* In 64 bits first: M, N or K near INT_MAX must not wrap. */
  const int tiles_m = (int)(((long long)g.m + TWS_TILE_M - 1) / TWS_TILE_M);
  const int tiles_n = (int)(((long long)g.n + TWS_TILE_N - 1) / TWS_TILE_N);
  const int tiles = tiles_m * tiles_n;
  const int k_tiles = (int)(((long long)g.k + TWS_TILE_K - 1) / TWS_TILE_K);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      pg_mbar_init(&full[s], 1);
      pg_mbar_init(&empty[s], TWS_CONSUMERS);
    }
    pg_fence_barrier_init();
  }
  __syncthreads(); /* the only block-wide barrier: the mbarriers exist */

  int slot = 0, parity = 0;
  if (warp >= TWS_CONSUMERS / 32) {
    /* ---- producer: one lane; the others have nothing to do ---- */
    pg_setmaxnreg_dec(TWS_PRODUCER_REGS);
    if (warp != TWS_CONSUMERS / 32 || lane != 0 || k_tiles == 0) return;
    pg_tma_prefetch_map(&maps.a);
    pg_tma_prefetch_map(&maps.b);
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      int tm, tn;
      tws_tile_coords(t, tiles_m, tiles_n, g.group_m, &tm, &tn);
      for (int kt = 0; kt < k_tiles; ++kt) {
        /* Free once the consumers released its previous use; on a slot's
         * first use the wait for "parity 1" returns at once. */
        pg_mbar_wait_parity(&empty[slot], parity ^ 1);
        char *stage = smem + slot * TWS_STAGE_BYTES;
        pg_mbar_arrive_expect_tx(&full[slot], TWS_STAGE_BYTES);
        pg_tma_load_2d(stage, &maps.a, kt * TWS_TILE_K, tm * TWS_TILE_M, &full[slot]);
        pg_tma_load_2d(stage + TWS_STAGE_A_BYTES, &maps.b, tn * TWS_TILE_N, kt * TWS_TILE_K,
                       &full[slot]);
        parity ^= t128_ring_next(&slot, stages);
      }
    }
    return;
  }

  /* ---- consumers ---- */
  pg_setmaxnreg_inc(TWS_CONSUMER_REGS);
  /* Rows row0 + 8i: warps 0/1 interleave in the upper 64 rows, 2/3 in the
   * lower; the 4 rows a warp reads at once (lane / 8) fall in 4 distinct
   * swizzle positions, so A reads are free of bank conflicts. */
  const int row0 = (warp >> 1) * 64 + (warp & 1) * 4 + (lane / 8);
  const unsigned swz = tws_swizzle_of_row(row0);
  const int col0 = (lane % 8) * 4;
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    int tm, tn;
    tws_tile_coords(t, tiles_m, tiles_n, g.group_m, &tm, &tn);
    float acc[TWS_THREAD_M][TWS_THREAD_N];
#pragma unroll
    for (int i = 0; i < TWS_THREAD_M; ++i)
#pragma unroll
      for (int j = 0; j < TWS_THREAD_N; ++j) acc[i][j] = 0.f;
    for (int kt = 0; kt < k_tiles; ++kt) {
      pg_mbar_wait_parity(&full[slot], parity);
      tws_compute(smem + slot * TWS_STAGE_BYTES, row0, swz, col0, acc);
      pg_mbar_arrive(&empty[slot]);
      parity ^= t128_ring_next(&slot, stages);
    }
    tws_epilogue(g, tm * TWS_TILE_M, tn * TWS_TILE_N, row0, col0, acc);
  }
#else
  pg_tma_unavailable();
#endif
}

static const pg_tma_boxes tma_ws_boxes = {TWS_TILE_K, TWS_TILE_M, TWS_A_ROW_BYTES, TWS_TILE_N,
                                           TWS_TILE_K};

/* One block per tile, or, where the tuning table asks for it, a persistent
 * grid of that many blocks per SM (the core caps it at what fits). */
extern "C" void pg_plan_tma_ws(pg_gemm_args *args, const pg_tuning *row,
                               pg_kernel_plan *plan) {
  const pg_tuning env = pg_tuning_with_env(row);
  const pg_tuning *tuning = &env;
  const long long tiles = (((long long)args->m + TWS_TILE_M - 1) / TWS_TILE_M) *
                          (((long long)args->n + TWS_TILE_N - 1) / TWS_TILE_N);
  args->group_m = tuning->tma_ws_group_m;
  plan->kernel = (const void *)pg_tma_ws_kernel;
  plan->grid_x = (unsigned)(tiles > 0 ? tiles : 1);
  plan->grid_y = 1;
  plan->tma = &tma_ws_boxes;
  plan->persistent_blocks_per_sm = tuning->tma_ws_blocks_per_sm;
}
