/* 40 wgmma_3xtf32 — FP32-accurate GEMM on the tensor cores (emulated, not
 * bitwise IEEE): each FP32 operand is split into a TF32 big part and a
 * TF32 small part, x = big + small + (what neither holds, |.| <= 2^-22 |x|),
 * and each term a b is taken as three TF32 products,
 *   a_small b_big + a_big b_small + a_big b_big,
 * dropping a_small b_small (<= 2^-22 |a b|). Built on 36 wgmma_tma_rs:
 * C^T = B^T A^T, B^T's fragments from registers, A from shared memory by
 * TMA, a producer warp and two consumer warpgroups.
 *
 * The split. B is split in registers: a consumer loads its fragments (LDS,
 * as 36) and rounds each to TF32 (cvt.rna.tf32.f32), the rest rounded
 * again to TF32. A, which wgmma reads from shared memory, is split in one
 * of two places (configure decides: the tuning row's emulated_fused_max_n):
 *   FUSED (N <= 512, A and B where TMA reads them): in shared memory, each
 *     stage as it lands, by the producer warpgroup's three idle warps
 *     (wg_3x_split_stage; a ready barrier a stage). Where N is small a
 *     pass over A costs more than the products it feeds;
 *   else: by a first kernel of the same call into the workspace (the
 *     library's pool): its big parts, rounded to TF32, in rows 0 .. Mp - 1,
 *     its small parts in rows Mp .. 2 Mp - 1 (Mp = M rounded up to the
 *     tile), K rounded up to 4 a row, zeros in the padding; where B's
 *     layout is not TMA's (misaligned, or ldb not a multiple of 4) the
 *     same kernel copies B after them, so any layout runs. Its time is
 *     the call's.
 * Inf and NaN have no small part (0), so they reach C as in FP32
 * arithmetic; a finite |x| at or past 2^128 (1 - 2^-12) rounds to an
 * infinite big part (the entry's stated limit).
 *
 * The accumulation. A K step of 32 is 12 products per warpgroup
 * (m64n128k8: 4 steps of 8 for each of the three), the small ones first,
 * into a tensor-core accumulator that the step's first product starts
 * afresh (scale-d = 0). wgmma's FP32 accumulation does not round to
 * nearest at each addition: left to sum all of K, its error grows past
 * strict FP32's (bench/results/emulated/accuracy.md measures it). So every few
 * K steps their partial sum is added into FP32 registers of the thread's
 * own (FADD, round to nearest): the tensor cores' error is that of a few
 * hundred terms, and the sum over K is an FP32 sum of the partial sums.
 * (wg_3x_own.sum_steps K steps at a time, from the tuning row: on the H200 4 where
 * a block's K is 4096 or more, every step below, where the sums' own error
 * weighs more; 0
 * leaves all of K to the tensor cores, which PIPEGEMM_EMULATED_SUM_STEPS=0
 * asks for, to measure what that costs.) The consumers' fragments come in
 * two sets, the steps alternating, so that a step loads and splits its own
 * while the step before's products run; it waits for all of them only
 * where the partial sum goes into FP32.
 *
 * Split K. Where the tiles leave SMs idle (fewer than one an SM), K is cut
 * into ranges (pg_configure_split_k): block b takes tile b % tiles and
 * range b / tiles, writes its sums as they are to the range's plane, and
 * the reduction (reduce_splits.cu) adds the planes in split order and
 * applies alpha and beta.
 *
 * After wgmma_fp16x3 (pg_gemm_args.wide_lines, that entry's plan's last
 * step): the same kernel, FUSED and never split, computes only the tiles
 * the FP16 form left, those that meet a row or column its split could not
 * scale (kernels/fp16x3.h, pg_fp16x3_line_unsplit); a block of any other
 * tile exits before its ring's barriers are made.
 *
 * Tile: 128 x 128 of C (warpgroup w: its 64 columns at 64 w, all 128
 * rows, 64 accumulators and 64 FP32 sums a thread), 32 along K. A stage is
 * 48 KB: A's big [128][32] and small [128][32] parts in the 128-byte
 * swizzle, then B as in 36 (4 boxes [32][32]); 4 stages by default. Per K
 * step a block moves the same 48 KB as 36 for 1.5x 36's products (three of
 * each term on half the tile). One block per SM, grouped tile order, the
 * epilogue staged through shared memory (36's).
 *
 *   pipegemm bench --variant cublas,cublas_tf32,wgmma_3xtf32 --stages 2-4
 */
#include "kernels/first_kernel.cuh"
#include "kernels/fp16x3.h"
#include "kernels/layout_first.cuh"
#include "kernels/wgmma_rs.cuh"

#include <type_traits>

PG_KERNELS_BEGIN

#define WG_3X_TILE 128 /* M and N */
#define WG_3X_PART_BYTES (WG_3X_TILE * WG_ROW_BYTES) /* one part of A: 16 KB */
#define WG_3X_STAGE_BYTES (2 * WG_3X_PART_BYTES + WG_RS_STAGE_B_BYTES) /* 48 KB */
#define WG_3X_GROUP_M 8
/* B's fragments sit where 36 has them: after 32 KB of A. */
static_assert(2 * WG_3X_PART_BYTES == WG_RS_STAGE_A_BYTES, "B's place in the stage");
static_assert(WG_3X_TILE == WG_RS_TILE_N, "B's 4 boxes (wg_rs_load_b) are the tile's columns");
static_assert(WG_3X_TILE == PG_FP16X3_TILE, "the wide tiles are wgmma_fp16x3's");

/* The entry's own setting (pg_gemm_args.own, pg_own): K steps whose
 * tensor-core sum goes into FP32 registers at once (0: all of a block's K). */
struct wg_3x_own {
  int sum_steps;
};

/* pg_tf32_big and pg_tf32_small (ptx.cuh) as FP32 bit patterns. */
static __device__ __forceinline__ unsigned wg_3x_tf32(float x) {
  return __float_as_uint(pg_tf32_big(x));
}
static __device__ __forceinline__ unsigned wg_3x_small(float x, unsigned big) {
  return __float_as_uint(pg_tf32_small(x, __uint_as_float(big)));
}

/* The split of A (the call's first kernel): rows r < Mp of A -> big part
 * at row r, small part at row Mp + r of the workspace (ldp floats a row).
 * Where B's layout is not TMA's (g.vec_b = 0: the plan's test of the same
 * rules), its K rows are copied after them, N rounded up to 4 a row (zeros
 * in the padding). A thread writes 4 consecutive floats of a row; grid: x
 * along a row's groups of 4, y over the rows (strided; first_kernel.cuh). */
__global__ void __launch_bounds__(PG_FIRST_THREADS) pg_split_a_kernel(const pg_gemm_args g) {
  const long long mp = ((long long)g.m + WG_3X_TILE - 1) / WG_3X_TILE * WG_3X_TILE;
  const long long c = ((long long)blockIdx.x * PG_FIRST_THREADS + threadIdx.x) * 4;
  const long long rows = mp + (g.vec_b ? 0 : g.k), ldb_copy = WG_LDT(g.n);
  for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
    if (r >= mp) { /* B's row r - mp */
      if (c < ldb_copy)
        pg_copy4(g.partials + 2 * mp * g.ldp + (r - mp) * ldb_copy, g.b + (r - mp) * g.ldb, c,
                 g.n);
      continue;
    }
    if (c >= g.ldp) continue;
    float big[4], small[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float x = r < g.m && c + i < g.k ? __ldg(g.a + r * g.lda + c + i) : 0.f;
      const unsigned b = wg_3x_tf32(x);
      big[i] = __uint_as_float(b);
      small[i] = __uint_as_float(wg_3x_small(x, b));
    }
    *(float4 *)(g.partials + r * g.ldp + c) = make_float4(big[0], big[1], big[2], big[3]);
    *(float4 *)(g.partials + (mp + r) * g.ldp + c) =
        make_float4(small[0], small[1], small[2], small[3]);
  }
}

/* Infinities. The big parts keep every zero, infinity, NaN and sign of
 * their operands, so the big products alone meet the IEEE special cases as
 * FP32 arithmetic does; but an infinite big part times the other operand's
 * small part of 0 (any value TF32 holds exactly) is 0 x Inf = NaN, where
 * FP32 has +-Inf. A NaN output therefore means a non-finite input on its
 * row of A or column of B, and FP32 tells which: the epilogue computes such
 * an output again, one FFMA a term over A's parts (their sum: the special
 * values as they are; FUSED: A as it is) and B, over the block's range of
 * K. The result then has FP32's NaN or Inf; the cost is K FMAs for each
 * NaN output, nothing where there is none. */
template <int FUSED> struct wg_3x_strict_if_nan {
  const pg_gemm_args &g;
  int mp, k0, k1; /* the block's range of K */
  __device__ float operator()(int m, int n, float v) const {
    if (!isnan(v)) return v;
    const float *const big = g.a + (size_t)m * g.lda, *const small = g.a + (size_t)(mp + m) * g.lda;
    float s = 0.f;
    for (int k = k0; k < k1; ++k)
      s = fmaf(FUSED ? big[k] : big[k] + small[k], g.b[(size_t)k * g.ldb + n], s);
    return s;
  }
};

/* The same for the kernel that takes any layout: A's parts (or, FUSED, A
 * as it is, op(A) = N) of this matrix of the batch at `a`, the small parts
 * `small` floats after the big; B as stored (op_b: N x K) at `b`. */
template <int FUSED> struct wg_3x_strict_if_nan_any {
  const float *a, *b;
  int lda, ldb, op_b;
  long long small;
  int k0, k1;
  __device__ float operator()(int m, int n, float v) const {
    if (!isnan(v)) return v;
    const float *const big = a + (size_t)m * lda;
    float s = 0.f;
    for (int k = k0; k < k1; ++k)
      s = fmaf(FUSED ? big[k] : big[k] + big[small + k],
               op_b ? b[(size_t)n * ldb + k] : b[(size_t)k * ldb + n], s);
    return s;
  }
};

/* FUSED: the producer warpgroup's three idle warps (96 threads) split each
 * stage's A: TMA's copy of A as it is, in the big part's place, becomes its
 * big part, in place, and its small part, at the same offset of the small
 * part's place (an element's swizzled position is the same in both), a
 * float4 a thread at a time, a warp's 512 contiguous bytes an instruction.
 * The writes are then made visible to wgmma's (async-proxy) reads and each
 * thread arrives on the stage's `ready` barrier, which the consumers wait
 * for instead of TMA's. They run a stage or more ahead of the consumers,
 * off their path. Registers: the producer warpgroup keeps 40 (the split's
 * float4s), the consumers take 232, within the launch's 168 a thread.
 * (Four loads in flight a thread, with 56 and 224, ran 3-8 % slower on
 * the H200.) */
#define WG_3X_SPLITTERS 96
#define WG_3X_FUSED_PRODUCER_REGS 40
#define WG_3X_FUSED_CONSUMER_REGS 232
#define WG_3X_SYNC_BYTES 24 /* full[s], empty[s] and (FUSED) ready[s] */
static_assert(128 * WG_3X_FUSED_PRODUCER_REGS + WG_RS_CONSUMERS * WG_3X_FUSED_CONSUMER_REGS <=
                  128 * WG_WS_PRODUCER_REGS + WG_RS_CONSUMERS * WG_WS2_CONSUMER_REGS,
              "the fused split's register split exceeds the launch's registers");

#ifdef PG_HAVE_WGMMA
static __device__ __forceinline__ void wg_3x_split_stage(float *stage, int t) {
  float4 *const big = (float4 *)stage, *const small = big + WG_3X_PART_BYTES / 16;
  for (int i = t; i < WG_3X_PART_BYTES / 16; i += WG_3X_SPLITTERS) {
    const float4 x = big[i];
    float4 b, r;
    unsigned u;
    u = wg_3x_tf32(x.x), b.x = __uint_as_float(u), r.x = __uint_as_float(wg_3x_small(x.x, u));
    u = wg_3x_tf32(x.y), b.y = __uint_as_float(u), r.y = __uint_as_float(wg_3x_small(x.y, u));
    u = wg_3x_tf32(x.z), b.z = __uint_as_float(u), r.z = __uint_as_float(wg_3x_small(x.z, u));
    u = wg_3x_tf32(x.w), b.w = __uint_as_float(u), r.w = __uint_as_float(wg_3x_small(x.w, u));
    big[i] = b;
    small[i] = r;
  }
  wg_fence_proxy_async();
}
#endif

/* The kernel's body. ANY: the kernel that takes any layout and a batch
 * (pg_wgmma_3xtf32_any_kernel): maps of rank 3 (pg_tma_reads_layout; A's
 * parts and B's copy in the workspace too, a matrix of the batch every
 * stride_a or stride_b floats, as the views set them), B read N x K where
 * op(B) = T (wg_rs_layout_t), the batch's GEMM z the block's index over the
 * tiles (K is not split then), C at z stride_c. A's parts (not FUSED) are
 * M rows each there, the small after the big: a box past a part's M rows
 * reads the next part's or, past the matrix, the map's zeros, which only
 * products of C's rows past M see. */
template <int FUSED, int ANY, class G>
static __device__ __forceinline__ void wg_3x_body(const G &g, const pg_tma_maps &maps) {
  static_assert(!ANY || std::is_same<G, pg_layout_args>::value, "a layout is read from pg_layout_args");
#ifdef PG_HAVE_WGMMA
  extern __shared__ float4 smem_raw[];
  float *const smem = (float *)pg_tma_smem_base(smem_raw);
  const int stages = g.stages;
  unsigned long long *const full =
      (unsigned long long *)(smem + stages * (WG_3X_STAGE_BYTES / 4));
  unsigned long long *const empty = full + stages, *const ready = empty + stages;
  const int tiles_m = (int)(((long long)g.m + WG_3X_TILE - 1) / WG_3X_TILE);
  const int tiles_n = (int)(((long long)g.n + WG_3X_TILE - 1) / WG_3X_TILE);
  const int mp = tiles_m * WG_3X_TILE; /* the small parts' first row in A's map */
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  /* The block's tile and range of K: split s of K's ranges is blocks
   * s tiles .. (s + 1) tiles - 1 (one range of all of K where K is not
   * split). */
  const int tiles = tiles_m * tiles_n, q = (int)blockIdx.x / tiles;
  const int split = ANY && g.splits <= 1 ? 0 : q, z = ANY && g.splits <= 1 ? q : 0;
  const int za = pg_stride_a(g) != 0 ? z : 0, zb = pg_stride_b(g) != 0 ? z : 0;
  const int k_tiles = wg_k_tiles(g);
  const int per_split = g.splits > 1 ? g.k_tiles_per_split : k_tiles;
  const int kt_begin = split * per_split, kt_end = min(k_tiles, kt_begin + per_split);
  int tm, tn;
  pg_grouped_tile((int)blockIdx.x % tiles, tiles_m, tiles_n, g.group_m, &tm, &tn);
  const int m0 = tm * WG_3X_TILE, n0 = tn * WG_3X_TILE;
  /* After wgmma_fp16x3 (wide_lines): only the tiles it left, those with a
   * line its split could not scale (GEMM z's lines); the others are its. */
  if (g.wide_lines != nullptr) {
    const long long ml = pg_fp16x3_padded(g.m), nl = pg_fp16x3_padded(g.n);
    const int *const rows = g.wide_lines + pg_fp16x3_a_first(ml, pg_stride_a(g), z);
    const int *const cols =
        g.wide_lines + pg_fp16x3_b_first(ml, nl, pg_batch(g), pg_stride_a(g), pg_stride_b(g), z);
    if (!__syncthreads_or(pg_fp16x3_line_unsplit(rows, cols, g.m, g.n, m0, n0, (int)threadIdx.x)))
      return;
  }

  if (FUSED && threadIdx.x == 0)
    for (int s = 0; s < stages; ++s) pg_mbar_init(&ready[s], WG_3X_SPLITTERS);
  wg_ring_init(full, empty, stages, WG_RS_CONSUMERS); /* the only block-wide barrier */

  int slot = 0, parity = 0;
  if (warp >= WG_RS_CONSUMERS / 32) {
    /* ---- producer: one lane; FUSED: the split, three warps ---- */
    if constexpr (FUSED) {
      pg_setmaxnreg_dec(WG_3X_FUSED_PRODUCER_REGS);
      if (warp > WG_RS_CONSUMERS / 32) {
        const int t = threadIdx.x - WG_RS_CONSUMERS - 32;
        for (int kt = kt_begin; kt < kt_end; ++kt) {
          pg_mbar_wait_parity(&full[slot], parity);
          wg_3x_split_stage(smem + slot * (WG_3X_STAGE_BYTES / 4), t);
          pg_mbar_arrive(&ready[slot]);
          parity ^= t128_ring_next(&slot, stages);
        }
        return;
      }
    } else {
      pg_setmaxnreg_dec(WG_WS_PRODUCER_REGS);
    }
    if (warp != WG_RS_CONSUMERS / 32 || lane != 0) return;
    pg_tma_prefetch_map(&maps.a);
    pg_tma_prefetch_map(&maps.b);
    for (int kt = kt_begin; kt < kt_end; ++kt) {
      pg_mbar_wait_parity(&empty[slot], parity ^ 1);
      float *stage = smem + slot * (WG_3X_STAGE_BYTES / 4);
      /* FUSED: A as it is, where its big part goes; else both parts. */
      pg_mbar_arrive_expect_tx(&full[slot], WG_3X_STAGE_BYTES - (FUSED ? WG_3X_PART_BYTES : 0));
      if constexpr (ANY) {
        pg_tma_load_3d(stage, &maps.a, kt * WG_TILE_K, m0, za, &full[slot]);
        if (!FUSED)
          pg_tma_load_3d(stage + WG_3X_PART_BYTES / 4, &maps.a, kt * WG_TILE_K, g.m + m0, za,
                         &full[slot]);
        wg_rs_load_b_any<2 * WG_3X_PART_BYTES>(stage, maps, n0, kt, zb, pg_op_b(g), &full[slot]);
      } else {
        pg_tma_load_2d(stage, &maps.a, kt * WG_TILE_K, m0, &full[slot]);
        if (!FUSED)
          pg_tma_load_2d(stage + WG_3X_PART_BYTES / 4, &maps.a, kt * WG_TILE_K, mp + m0,
                         &full[slot]);
        wg_rs_load_b<2 * WG_3X_PART_BYTES>(stage, maps, n0, kt, &full[slot]);
      }
      parity ^= t128_ring_next(&slot, stages);
    }
    return;
  }

  /* ---- consumers ---- */
  if constexpr (FUSED)
    pg_setmaxnreg_inc(WG_3X_FUSED_CONSUMER_REGS);
  else
    pg_setmaxnreg_inc(WG_WS2_CONSUMER_REGS);
  const int wg = warp / 4;
  int base[2][2], col[2];
  if (ANY && pg_op_b(g))
    wg_rs_layout_t(base, col);
  else
    wg_rs_layout(base, col);
  float sum[64], part[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) sum[i] = part[i] = 0.f;
  /* Two sets of fragments, the steps alternating between them, so that a
   * step's fragments load and split while the step before's products run
   * (wgmma reads its register operands until it completes): a step waits
   * for the products of the step before last, whose set and slot it then
   * reuses; where the partial sum goes into FP32 (every sum_steps steps)
   * it waits for the rest once its fragments are ready. */
  unsigned big[2][4][4], small[2][4][4];
  const int own_steps = pg_own<wg_3x_own>(g).sum_steps;
  const int sum_steps = own_steps > 0 ? own_steps : INT_MAX;
  int held[2] = {-1, -1}; /* the slot each set's products may still read */
  auto step = [&](auto set_constant, int kt) {
    constexpr int set = decltype(set_constant)::value;
    float *const stage = smem + slot * (WG_3X_STAGE_BYTES / 4);
    /* The step before last's products are done: its set of fragments and
     * its slot are free, the slot going back before this step waits for
     * its own (with two stages, that is the slot). FUSED: B as TMA wrote
     * it (its barrier), A as the split warps left it (theirs). */
    wg_wait<1>();
    if (held[set] >= 0) pg_mbar_arrive(&empty[held[set]]);
    if (FUSED) pg_mbar_wait_parity(&full[slot], parity);
    pg_mbar_wait_parity(FUSED ? &ready[slot] : &full[slot], parity);
    if (ANY && pg_op_b(g))
      wg_rs_load_t(stage, base, big[set]);
    else
      wg_rs_load(stage, base, big[set]);
#pragma unroll
    for (int kk = 0; kk < WG_TILE_K / 8; ++kk)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float x = __uint_as_float(big[set][kk][i]);
        big[set][kk][i] = wg_3x_tf32(x);
        small[set][kk][i] = wg_3x_small(x, big[set][kk][i]);
      }
    /* fresh: the step's products start the tensor cores' sum afresh, the
     * sum so far into FP32 once the step before's products are done (the
     * fragments above loaded and split meanwhile). */
    const int fresh = (kt - kt_begin) % sum_steps == 0;
    if (fresh && kt != kt_begin) {
      wg_wait<0>();
      wg_fence_acc<128>(part);
#pragma unroll
      for (int i = 0; i < 64; ++i) sum[i] += part[i];
    }
    wg_fence();
    const uint64_t a_big = wg_desc(stage), a_small = wg_desc(stage + WG_3X_PART_BYTES / 4);
    /* The small products first, the step's first starting the sum afresh. */
#pragma unroll
    for (int kk = 0; kk < WG_TILE_K / 8; ++kk)
      wg_mma_rs_m64n128k8(part, small[set][kk], a_big + 2 * kk, kk != 0 || !fresh);
#pragma unroll
    for (int kk = 0; kk < WG_TILE_K / 8; ++kk)
      wg_mma_rs_m64n128k8(part, big[set][kk], a_small + 2 * kk, 1);
#pragma unroll
    for (int kk = 0; kk < WG_TILE_K / 8; ++kk)
      wg_mma_rs_m64n128k8(part, big[set][kk], a_big + 2 * kk, 1);
    wg_commit();
    held[set] = slot;
    parity ^= t128_ring_next(&slot, stages);
  };
  for (int kt = kt_begin; kt < kt_end; kt += 2) {
    step(std::integral_constant<int, 0>{}, kt);
    if (kt + 1 < kt_end) step(std::integral_constant<int, 1>{}, kt + 1);
  }
  wg_wait<0>();
  wg_fence_acc<128>(part);
  if (kt_end > kt_begin)
#pragma unroll
    for (int i = 0; i < 64; ++i) sum[i] += part[i];
  /* The staged epilogue over the stages: both warpgroups are done with
   * them (and the producer is: every copy it issued was waited for). An
   * output that came out NaN is computed again in FP32 over the block's
   * range of K (wg_3x_strict_if_nan). Where K is split, the sums go to the
   * range's plane as they are; the reduction applies alpha and beta. */
  pg_gemm_args out = g;
  if (ANY) out.c = g.c + (size_t)z * pg_stride_c(g);
  if (g.splits > 1) {
    out.c = g.partials + (size_t)split * g.m * g.ldp;
    out.ldc = g.ldp;
    out.alpha = 1.f;
    out.beta = 0.f;
  }
  pg_named_barrier_sync(1, WG_RS_CONSUMERS);
  if constexpr (ANY)
    wg_rs_epilogue<1>(out, smem + wg * WG_RS_OUT_HALF * WG_RS_OUT_PITCH, sum, col, m0, n0,
                      wg_3x_strict_if_nan_any<FUSED>{
                          g.a + (size_t)za * pg_stride_a(g), g.b + (size_t)zb * pg_stride_b(g), g.lda,
                          g.ldb, pg_op_b(g), (long long)g.m * g.lda, kt_begin * WG_TILE_K,
                          min(g.k, kt_end * WG_TILE_K)});
  else
    wg_rs_epilogue<1>(out, smem + wg * WG_RS_OUT_HALF * WG_RS_OUT_PITCH, sum, col, m0, n0,
                      wg_3x_strict_if_nan<FUSED>{g, mp, kt_begin * WG_TILE_K,
                                                 min(g.k, kt_end * WG_TILE_K)});
#else
  pg_tma_unavailable();
#endif
}

template <int FUSED>
__global__ void __launch_bounds__(WG_RS_THREADS, 1)
    pg_wgmma_3xtf32_kernel(const pg_gemm_args g, const __grid_constant__ pg_tma_maps maps) {
  wg_3x_body<FUSED, 0>(g, maps);
}

template <int FUSED>
__global__ void __launch_bounds__(WG_RS_THREADS, 1)
    pg_wgmma_3xtf32_any_kernel(const pg_layout_args g, const __grid_constant__ pg_tma_maps maps) {
  wg_3x_body<FUSED, 1>(g, maps);
}

/* The split of A (and B's copy) over the batch, for the kernel that takes
 * any layout: kernels/layout_first.cuh's LF_SPLIT_3X with this split. */
struct wg_3x_parts {
  static __device__ __forceinline__ void parts(float x, float &big, float &small) {
    const unsigned b = wg_3x_tf32(x);
    big = __uint_as_float(b);
    small = __uint_as_float(wg_3x_small(x, b));
  }
};

/* ---- the host's side ---- */

/* A's parts' boxes, and B's, where it is or from its copy (the plan encodes
 * the maps of what the split kernel writes at launch). */
static constexpr pg_tma_boxes boxes = {.a_box_k = WG_TILE_K, .a_box_m = WG_3X_TILE,
                                   .a_swizzle_bytes = WG_ROW_BYTES, .b_box_n = WG_RS_B_BOX,
                                   .b_box_k = WG_TILE_K, .b_k_major = 0,
                                   .b_swizzle_bytes = WG_ROW_BYTES};

/* The same for the kernel that takes any layout (wgmma.cuh): A is never
 * read K x M by TMA, the split reads it. */
static constexpr pg_tma_boxes any_boxes = wg_any_layout_boxes(boxes);

static long long padded_rows(const pg_layout_args *args) {
  return ((long long)args->m + WG_3X_TILE - 1) / WG_3X_TILE * WG_3X_TILE;
}

/* The K steps summed on the tensor cores before FP32: the tuning row's
 * where a block's K (a range of it, where K is split) reaches
 * emulated_sum_min_k, every step below, where the tensor cores' partial
 * sums weigh most in the error (a short sum is short however long K is). */
static void set_sum_steps(pg_layout_args *args, const pg_tuning *own) {
  pg_set_own(args, wg_3x_own{pg_block_k(args, WG_TILE_K) >= own->emulated_sum_min_k
                                 ? own->emulated_sum_steps
                                 : 1});
}

/* Any other layout, or a batch: one launch over the batch's tiles (block
 * b: GEMM b / tiles), K split only for one GEMM. FUSED where op(A) = N and
 * TMA reads A and B where they are (a batch's strides included: vec_a,
 * vec_b), N as above; else the split first, over the batch, reading A as
 * stored (op(A) = T: transposed on the way), B copied as stored where TMA
 * cannot read it. */
static void configure_any(pg_layout_args *args, const pg_device *device, const pg_tuning *own,
                          pg_kernel_launch *launch) {
  const long long rows = padded_rows(args);
  const long long k_tiles = ((long long)args->k + WG_TILE_K - 1) / WG_TILE_K;
  launch->grid_x = (((long long)args->n + WG_3X_TILE - 1) / WG_3X_TILE) * (rows / WG_3X_TILE) *
                   args->batch;
  launch->grid_y = 1;
  args->group_m = WG_3X_GROUP_M;
  launch->tma = &any_boxes;
  if (!args->op_a && args->vec_a && args->vec_b &&
      (args->n <= own->emulated_fused_max_n || args->wide_lines != NULL)) {
    launch->kernel = (const void *)pg_wgmma_3xtf32_any_kernel<1>;
  } else {
    launch->kernel = (const void *)pg_wgmma_3xtf32_any_kernel<0>;
    (void)lf_configure<LF_SPLIT_3X>(args, launch,
                                    (const void *)pg_layout_first_kernel<LF_SPLIT_3X, wg_3x_parts>);
    launch->first.what = "split of A into its TF32 parts";
    lf_job job[2];
    lf_jobs<LF_SPLIT_3X>(*args, job);
    launch->model.first_bytes = lf_bytes(job[0]) + lf_bytes(job[1]);
  }
  if (args->batch == 1 && args->wide_lines == NULL)
    (void)pg_configure_split_k(args, launch, device->sm_count, k_tiles,
                               own->emulated_split_min_k_tiles);
  set_sum_steps(args, own);
}

static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  if (pg_other_layout(args)) {
    const pg_tuning own = pg_tuning_with_env(tuning);
    configure_any(args, device, &own, launch);
    return;
  }
  const long long ldp = WG_LDT(args->k), rows = 2 * padded_rows(args);
  const pg_tuning own = pg_tuning_with_env(tuning);
  const long long k_tiles = ((long long)args->k + WG_TILE_K - 1) / WG_TILE_K;
  launch->grid_x = (((long long)args->n + WG_3X_TILE - 1) / WG_3X_TILE) * (rows / 2 / WG_3X_TILE);
  launch->grid_y = 1;
  args->group_m = WG_3X_GROUP_M;
  launch->tma = &boxes;
  /* Where TMA reads A and B where they are and N is at most the tuning
   * row's emulated_fused_max_n, the producer warpgroup splits A (a first
   * kernel's pass over A costs more than it saves where N is small); K
   * split where the tiles leave SMs idle (one block an SM), its planes the
   * workspace. After wgmma_fp16x3, FUSED at any N and never split: its
   * plan takes one kernel without a workspace of its own. */
  if (args->vec_a && args->vec_b &&
      (args->n <= own.emulated_fused_max_n || args->wide_lines != NULL)) {
    launch->kernel = (const void *)pg_wgmma_3xtf32_kernel<1>;
    if (args->wide_lines == NULL)
      (void)pg_configure_split_k(args, launch, device->sm_count, k_tiles,
                                 own.emulated_split_min_k_tiles);
    set_sum_steps(args, &own);
    return;
  }
  /* Else A's parts first, into the workspace, and a copy of B where TMA
   * cannot read it where it is (the split kernel tells by vec_b, as here). */
  launch->kernel = (const void *)pg_wgmma_3xtf32_kernel<0>;
  const int copy_b = !args->vec_b;
  const long long ldb_copy = copy_b ? WG_LDT(args->n) : 0, b_rows = copy_b ? args->k : 0;
  /* A thread row splits one row of A into both parts. */
  pg_configure_first_kernel(args, launch, (const void *)pg_split_a_kernel, rows / 2 + b_rows,
                            rows, ldp, b_rows, ldb_copy);
  /* A read once and written twice, B's copy read and written once. */
  launch->model.first_bytes = sizeof(float) * (3.0 * args->m * args->k + 2.0 * b_rows * args->n);
  /* The planes of a split K after A's parts and B's copy. */
  (void)pg_configure_split_k(args, launch, device->sm_count, k_tiles,
                             own.emulated_split_min_k_tiles);
  set_sum_steps(args, &own);
}

static size_t smem_bytes(int stages) {
  return pg_tma_ring_smem(stages, WG_3X_STAGE_BYTES, WG_3X_SYNC_BYTES);
}

/* sm_90a code, any layout (A goes through the split, B where TMA cannot
 * read it through a copy); the parts' rows and the rows' padding must stay
 * ints. */
static pg_status check(const pg_layout_args *g, char *why, size_t why_size) {
  pg_status st = wg_check(g, why, why_size);
  if (st != PG_OK) return st;
  if (2 * padded_rows(g) > INT_MAX) {
    snprintf(why, why_size, "M = %d: A's two parts (2 x M rounded up to %d rows) would pass "
                            "INT_MAX rows", g->m, WG_3X_TILE);
    return PG_ERR_UNSUPPORTED;
  }
  if (WG_LDT(g->n) > INT_MAX) {
    snprintf(why, why_size, "N = %d: B's copy (N rounded up to 4 floats a row) would pass "
                            "INT_MAX", g->n);
    return PG_ERR_UNSUPPORTED;
  }
  return PG_OK;
}

static const pg_sass_rule rules[] = {
    WG_RS_RULES,
    {PG_SM90_UP, PG_MUST, "FADD", "the K steps' partial sums are no longer added in FP32 registers"},
};

PG_ENTRY(wgmma_3xtf32) = {
    .info = {.name = "wgmma_3xtf32", .kind = PG_KIND_KERNEL, .precision = PG_PRECISION_EMULATED,
             .technique = "FP32-accurate: three TF32 wgmma products a term",
             .source = PG_FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 4,
             .default_stages = 4, .tile_m = WG_3X_TILE, .tile_n = WG_3X_TILE,
             .tile_k = WG_TILE_K, .threads = WG_RS_THREADS,
             .description = "FP32-accurate: 3 TF32 wgmma products a term (big/small split: A's in "
                            "shared memory by the producer warps where N <= 512 (any N for "
                            "wgmma_fp16x3's wide tiles) and op(A) = N, "
                            "else in a first kernel that reads A as stored; B's in registers, two "
                            "fragment sets, B read in place for either op), K steps summed in "
                            "FP32 registers, K split where the tiles leave SMs idle (one GEMM); "
                            "a batch in one launch; wgmma_tma_rs's pipeline",
             .layouts = PG_LAYOUT_ANY},
    .smem_bytes = smem_bytes,
    .configure = configure,
    .check = check,
    .kernel = {.symbol = "pg_wgmma_3xtf32_kernel", .launched = "pg_wgmma_3xtf32_kernel<0>",
               .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
