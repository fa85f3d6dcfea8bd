/* 17 skinny_ffma's RING and BAND forms — a short N (1 to 8 columns of B)
 * against many rows of A, with no split of K between blocks where the
 * blocks fill the GPU: a block takes rows of A over all of K and its warps
 * take K's steps in turn, each lane copying its share of A a step ahead
 * into a ring in shared memory with cp.async, so that its loads stay in
 * flight while it computes and no register holds them (the split COLS form
 * of 16_skinny_split.cu keeps its loads in registers, and needs a second
 * kernel, or a cluster, to add its ranges up):
 *   RING (M > N of 1 to 3, A's rows 16-byte aligned, K a multiple of 4, B
 *     dense and aligned, the blocks at least the SMs): a block takes 4 or 2
 *     rows of A (sk_ring_geometry) and all of K, its warps K's steps in
 *     turn; a lane copies 4 consecutive K of each row a step into a ring
 *     of 3 steps of its own in shared memory (cp.async: loads in flight
 *     while it computes; A's lines evict-first in L2, as the other forms'
 *     .cs loads: 4096 x 1 x 4096 22.2 us where its plain copies took
 *     25.1), B's step from global memory in 16-byte loads a step ahead;
 *     the lanes' sums in a butterfly, the warps' in warp order. One
 *     kernel, no split of K between blocks (on the H200 1000 x 1 x 16384
 *     24.9 us where the COLS form's 32 ranges and their reduction took
 *     28.7; bench/results/short-sides).
 *   BAND (M > N of 4 to 8, A's rows 16-byte aligned, K a multiple of 4, B
 *     any layout): a block takes 16 rows of A and all of K (K split into
 *     ranges where the blocks are at most half the SMs), its warps K's steps
 *     of 32 in turn; a lane copies 4 consecutive K of 4 rows a step into
 *     its warp's ring of 4 steps, and a share of the step's B beside them
 *     (sk_cols_band). On the H200 4096 x 8 x 4096 in 24.7 us where the
 *     RING form of those columns took 26.1, 4096 x 4 x 4096 23.2 against
 *     25.8 (bench/results/short-sides).
 * The entry's source (by title): "Software Pipelining and Double
 * Buffering". Where each form runs: sk_ring_launch and sk_band_launch,
 * below; the entry (15_skinny_ffma.cu) asks them before the other forms.
 *
 *   pipegemm bench --variant skinny_ffma,cublas --m 4096 --n 2 --k 4096    (RING)
 *   pipegemm bench --variant skinny_ffma,cublas --m 4096 --n 8 --k 4096    (BAND)
 */
#include <type_traits>

#include "kernels/skinny.cuh"

PG_KERNELS_BEGIN

/* RING (COLS where A's rows take 16-byte copies, K is whole vectors, B is
 * dense and N <= SK_RING_MAX_CHUNK): K a warp takes a step (4 a lane), the
 * widest N it takes. By N (sk_ring_geometry): rows of A a warp, the ring's
 * stages (a lane's 16-byte copies of a row in flight: stages - 1 steps),
 * blocks an SM its registers are held to (SK_RING_BLOCKS, skinny.cuh).
 * It runs where its blocks are at least the SMs (fewer: the split COLS
 * form). Measured on the H200
 * (bench/results/short-sides): 2 and 3 columns ran 4096 x N x 4096 in
 * 22.7 and 23.2 us in blocks of 2 rows (their ring 24 KB a block) where
 * blocks of 4 rows took 23.2 and 24.0. Wider N takes the BAND form
 * (below): the RING form of 4 to 8 columns (its B handed out through
 * shared memory past 4) took up to 1.24 x its time, at 23 of 27 shapes
 * longer. */
#define SK_RING_STEP 128
#define SK_RING_MAX_CHUNK 3
typedef struct {
  int rows, stages, blocks;
} sk_ring_shape;
static __host__ __device__ constexpr sk_ring_shape sk_ring_geometry(int cn) {
  return cn == 1 ? sk_ring_shape{4, 3, SK_RING_BLOCKS} : sk_ring_shape{2, 3, SK_RING_BLOCKS};
}
/* A RING form's shared memory: its warps' rings. */
static __host__ __device__ constexpr size_t sk_ring_smem(int cn) {
  return sizeof(float4) * (SK_THREADS / 32) * sk_ring_geometry(cn).stages *
         sk_ring_geometry(cn).rows * 32;
}
/* A RING form's blocks for M rows. */
static long long sk_ring_blocks(long long m, int cn) {
  return (m + sk_ring_geometry(cn).rows - 1) / sk_ring_geometry(cn).rows;
}
/* BAND (short N of SK_BAND_MIN_COLS to SK_BAND_MAX_COLS where A's rows
 * take 16-byte copies and K is whole vectors; B any layout): rows of A a
 * block (16: 4 a lane, the lanes of a warp 4 groups of rows by 8 of K),
 * K a warp's step (4 a lane), the ring's steps, blocks an SM (the bound
 * its registers, 85-128 a thread, are compiled to, SK_BAND_BLOCKS in
 * skinny.cuh; its shared memory,
 * 84-100 KiB, fits 2 on the H200), the widest N, the shortest K range of
 * a split (2 steps a warp). A form's kernel is named by -(SK_BAND_CODE +
 * N).
 * Measured on the H200 (bench/results/short-sides), beside the RING
 * form that took 4-8 columns before (B in 4-byte copies): faster at 23 of
 * 27 shapes, 4096 x 8 x 4096 24.7 us against 26.1, 2048 x 4 x 16384 41.0
 * against 50.5; slower at 4, among them 3000 x 8 x 12288 (56.8 against
 * 53.7) and 6144 x 4 x 6144 (47.5 against 45.8), which a dense B's 16-byte
 * copies since took to 49.4 and 45.0 (sk_cols_band). Two blocks an SM on
 * the H200 (228 KiB an SM), one on an A100 (164) past 4 columns. */
#define SK_BAND_ROWS 16
#define SK_BAND_STEP 32
#define SK_BAND_STAGES 4
#define SK_BAND_MIN_COLS 4
#define SK_BAND_MAX_COLS 8
#define SK_BAND_MIN_RANGE (SK_THREADS / 32 * 2 * SK_BAND_STEP)
/* The floats a copy of a BAND step's B moves for these arguments, with
 * `blocks` blocks of which `slots` are resident at once: 4 (16-byte
 * copies) where B is dense and 16-byte aligned at 4 or 8 columns, 2 where
 * it is dense and 8-byte aligned at an even N, where the blocks fit one
 * wave, and the 16-byte copies past it too where K is at least
 * SK_BAND_VECTOR_MIN_K; else 1 (4-byte copies). Measured on the H200 over
 * 66 shapes of 4, 6 and 8 columns in four runs (bench/results/
 * h200-skinny.md, "B's copies and the waves"; the rule fitted to all of
 * them): in one wave the vectors were faster at 23 of 28 (4.4 % as a
 * geometric mean, up to 15 %: 2500 x 8 x 4000 19.5 us against 22.9),
 * within 0.5 % at 4, 1.2 % slower at 4096 x 6 x 4096; past one wave with K
 * below 4096 slower at 17 of 25 (2.8 %, up to 13 %: 5200 x 6 x 2000),
 * faster at 5 (up to 3 %); with K of 4096 or more the 16-byte copies
 * faster at 8 of 10 (1.8 %, up to 6 %: 16384 x 8 x 4096 75.2 against
 * 79.7), the 8-byte ones at none of 3 (up to 6 % slower). Measured, not
 * explained. */
#define SK_BAND_VECTOR_MIN_K 4096
static int sk_band_b_vector(const pg_layout_args *g, long long blocks, long long slots) {
  if (g->ldb != g->n) return 1;
  const bool one_wave = blocks <= slots;
  if (g->n % 4 == 0 && (uintptr_t)g->b % 16 == 0 && (one_wave || g->k >= SK_BAND_VECTOR_MIN_K))
    return 4;
  if (g->n % 2 == 0 && (uintptr_t)g->b % 8 == 0 && one_wave) return 2;
  return 1;
}

/* A BAND step's B: its SK_BAND_STEP rows, a row's N floats at the start of
 * 4 or 8 (pitch), 4 floats more every 4 rows (so that the lanes' 16-byte
 * reads, rows 4 apart, fall in different banks). */
static __host__ __device__ constexpr int sk_band_pitch(int cn) { return cn <= 4 ? 4 : 8; }
static __host__ __device__ constexpr int sk_band_b_at(int cn, int row) {
  return row * sk_band_pitch(cn) + row / 4 * 4;
}
static __host__ __device__ constexpr int sk_band_b_floats(int cn) {
  return sk_band_b_at(cn, SK_BAND_STEP);
}
/* Its shared memory: the warps' rings, a step A's 16 x SK_BAND_STEP and B's
 * step (after the loop the warps' sums, and in clusters the block's). */
static __host__ __device__ constexpr size_t sk_band_smem(int cn) {
  return sizeof(float) * (SK_THREADS / 32) * SK_BAND_STAGES *
         (SK_BAND_ROWS * SK_BAND_STEP + sk_band_b_floats(cn));
}
static_assert(sk_band_smem(SK_BAND_MIN_COLS) >=
                  sizeof(float) * (SK_THREADS / 32 + 1) * SK_BAND_ROWS * SK_BAND_MAX_COLS,
              "the sums fit in the rings");
/* Its row blocks for M. */
static __host__ __device__ constexpr long long sk_band_blocks(long long m) {
  return (m + SK_BAND_ROWS - 1) / SK_BAND_ROWS;
}

/* RING: a block takes WR rows of A and all of K, its warps K's steps in
 * turn (warp w steps w, w + 8, ...: the block reads 8 consecutive steps of
 * a row, 4 KiB, at a time; on the H200 0-4 % faster than a slice of K a
 * warp at all 17 shapes of 1-4 columns measured, 6000 x 3 x 3000 24.7 us
 * against 25.8: bench/results/short-sides); a lane copies 4
 * consecutive K of each row a step straight into its own places in a ring
 * of S steps in shared memory (cp.async, 16 bytes, no registers held: the
 * loads stay in flight while the lane computes), reads back only what it
 * copied itself (so no barrier but its own wait), and B's 4 x CN floats of
 * the step (small, L1 and L2 hold it) a step ahead, in registers, its own
 * CN 16-byte loads. No K split between blocks: no planes and no second
 * kernel. The lanes' sums are added in a fixed butterfly order, then the
 * warps' in warp order through shared memory. */
template <int CN>
static __device__ __forceinline__ void sk_cols_ring(const pg_gemm_args g) {
  enum {
    WARPS = SK_THREADS / 32,
    WR = sk_ring_geometry(CN).rows,
    S = sk_ring_geometry(CN).stages
  };
  static_assert(S >= 2 && S <= 8, "cp.async.wait_group takes 0 to 7");
  static_assert(sk_ring_smem(CN) <= 48 * 1024, "static shared memory");
  __shared__ __align__(16) float4 ring_all[WARPS][S][WR][32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float4 (*const ring)[WR][32] = ring_all[warp];
  const long long m0 = (long long)blockIdx.x * WR;
  const long long all = (g.k + SK_RING_STEP - 1) / SK_RING_STEP;
  const int steps = all > warp ? (int)((all - warp + WARPS - 1) / WARPS) : 0;
  /* Row r of the block is min(r, last) rows past its first: a row past M
   * copies the last one (its sums are dropped). */
  const float *const first = g.a + (size_t)m0 * g.lda;
  const long long last = g.m - 1 - m0;
  const unsigned long long policy = pg_l2_evict_first_policy();
  /* Step st of this warp: K from (st WARPS + warp) SK_RING_STEP, 4 a lane. */
  auto k_of = [&](int st) { return ((long long)st * WARPS + warp) * SK_RING_STEP + 4 * lane; };
  auto copy = [&](int st) {
    const long long k = k_of(st);
    const int bytes = k < g.k ? 16 : 0;
#pragma unroll
    for (int r = 0; r < WR; ++r)
      pg_cp_async_16_policy(&ring[st % S][r][lane],
                            first + (size_t)(r < last ? r : last) * g.lda + (bytes ? k : 0), bytes,
                            policy);
  };
  float acc[WR][CN];
#pragma unroll
  for (int r = 0; r < WR; ++r)
#pragma unroll
    for (int c = 0; c < CN; ++c) acc[r][c] = 0.f;
#pragma unroll
  for (int st = 0; st < S - 1; ++st) {
    if (st < steps) copy(st);
    pg_cp_async_commit();
  }
  /* B is dense (ldb = N = CN) and 16-byte aligned, and K whole vectors:
   * the step's 4 rows of a lane are 4 CN floats, CN 16-byte vectors. */
  auto load_b = [&](int st, float4 (&v)[CN]) {
    const long long k = k_of(st);
    if (st < steps && k < g.k) {
      const float4 *const pb = (const float4 *)(g.b + (size_t)k * CN);
#pragma unroll
      for (int q = 0; q < CN; ++q) v[q] = __ldg(pb + q);
    } else {
#pragma unroll
      for (int q = 0; q < CN; ++q) v[q] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
  };
  float4 next[CN];
  load_b(0, next);
  for (int st = 0; st < steps; ++st) {
    float f[4 * CN];
#pragma unroll
    for (int q = 0; q < CN; ++q) {
      f[4 * q] = next[q].x;
      f[4 * q + 1] = next[q].y;
      f[4 * q + 2] = next[q].z;
      f[4 * q + 3] = next[q].w;
    }
    load_b(st + 1, next);
    pg_cp_async_wait(S - 2); /* step st is in (at most S - 2 later groups pending) */
#pragma unroll
    for (int r = 0; r < WR; ++r) {
      const float4 a = ring[st % S][r][lane];
#pragma unroll
      for (int c = 0; c < CN; ++c) {
        acc[r][c] = fmaf(a.x, f[c], acc[r][c]);
        acc[r][c] = fmaf(a.y, f[CN + c], acc[r][c]);
        acc[r][c] = fmaf(a.z, f[2 * CN + c], acc[r][c]);
        acc[r][c] = fmaf(a.w, f[3 * CN + c], acc[r][c]);
      }
    }
    /* Into the place step st - 1 left, read in the iteration before. */
    if (st + S - 1 < steps) copy(st + S - 1);
    pg_cp_async_commit();
  }
  pg_cp_async_wait(0);
  sk_warp_sums<WR, CN>(acc);
  /* The warps' sums through shared memory (the ring, read by now). */
  __syncthreads();
  float *const sums = (float *)&ring_all[0][0][0][0];
  if (lane == 0)
#pragma unroll
    for (int r = 0; r < WR; ++r)
#pragma unroll
      for (int c = 0; c < CN; ++c) sums[(warp * WR + r) * CN + c] = acc[r][c];
  __syncthreads();
  if (threadIdx.x < WR * CN) {
    const int r = threadIdx.x / CN, c = threadIdx.x % CN;
    float v = sums[r * CN + c];
    for (int w = 1; w < WARPS; ++w) v += sums[(w * WR + r) * CN + c];
    if (m0 + r < g.m) sk_store_c(g, m0 + r, c, v);
  }
}

/* BAND: a block takes SK_BAND_ROWS rows of A and its K range (all of K,
 * or one of the row block's ranges where the blocks are at most half the
 * SMs); the range's steps of SK_BAND_STEP go to the warps in turn (warp w
 * steps w, w + 8, ...). In a step lane l copies 4 consecutive K (l % 8)
 * of rows l / 8 + 4 i (i < 4: an instruction 4 rows of 128 contiguous
 * bytes) into its own places in the warp's ring of SK_BAND_STAGES steps
 * (cp.async, evict-first: A is read once), and its share of the step's
 * 32 x CN values of B beside them, B's rows padded (sk_band_b_at): in
 * vectors of 4 or 2 floats where B is dense and aligned to them and the
 * blocks fit one wave or K is long (sk_band_b_vector), through L1 (.ca:
 * the blocks of an SM read the same B; 3000 x 8 x 12288 49.4 us against
 * 57.3 on the H200; .cg, past L1, had lost up to 13 %:
 * bench/results/short-sides), else CN 4-byte copies (any ldb). B is not held a step ahead in
 * registers nor handed out by a second store: each warp copies its step's
 * B with its A (under Nsight Compute at 4096 x 8 x 4096 L1 55 % busy at
 * 60 % of the DRAM's throughput, where the RING form's exchange kept it
 * 87 % busy at 47 %). A lane reads its own A and the B rows of its K,
 * which other lanes copied: a __syncwarp after its wait, which also orders
 * every lane's reads of a step before the copies into its place. The sums
 * of a row's 8 lanes are added in a butterfly, the warps' in warp order
 * through shared memory, the ranges' in split order (in clusters, or
 * planes and the reduction). Rows past M copy row M - 1 and are not
 * stored. */
template <int CN, bool CLUSTER>
static __device__ __forceinline__ void sk_cols_band(const pg_gemm_args g) {
  enum {
    WARPS = SK_THREADS / 32,
    S = SK_BAND_STAGES,
    STEP = SK_BAND_STEP,
    ROWS = SK_BAND_ROWS,
    LANES_K = STEP / 4,
    GROUPS = 32 / LANES_K,
    LROWS = ROWS / GROUPS,
    BF = sk_band_b_floats(CN)
  };
  static_assert(LANES_K == 8 && GROUPS * LROWS == ROWS, "a lane's 4 rows, 4 of the warp's 4 x 4");
  static_assert(S >= 2 && S <= 8, "cp.async.wait_group takes 0 to 7");
  static_assert(SK_SPLIT_K % STEP == 0, "a range starts a step");
  static_assert(BF % 4 == 0, "a step's A starts 16-byte aligned");
  struct step_t {
    float4 a[LROWS][32];
    float b[BF];
  };
  /* More than 48 KiB: dynamic (the launch's dynamic_smem, sk_band_smem). */
  extern __shared__ __align__(16) float4 sk_band_dynamic[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  step_t *const ring = (step_t *)sk_band_dynamic + warp * S;
  const sk_work w = sk_where<CLUSTER>(g, sk_band_blocks(g.m), ROWS, CN);
  const long long range_steps = (w.k1 - w.k0 + STEP - 1) / STEP;
  const int steps = range_steps > warp ? (int)((range_steps - warp + WARPS - 1) / WARPS) : 0;
  /* This lane's K in a step, its rows (past M: row M - 1). */
  const int kq = lane % LANES_K, group = lane / LANES_K;
  const float *a_row[LROWS];
#pragma unroll
  for (int i = 0; i < LROWS; ++i) {
    const long long m = w.first + group + GROUPS * i;
    a_row[i] = g.a + (size_t)(m < g.m ? m : g.m - 1) * g.lda;
  }
  const unsigned long long policy = pg_l2_evict_first_policy();
  /* Step st of this warp: the range's step st WARPS + warp. */
  auto copy = [&](int st) {
    step_t &into = ring[st % S];
    const long long k0 = w.k0 + ((long long)st * WARPS + warp) * STEP;
    const long long k = k0 + 4 * kq; /* K and the ranges are whole vectors */
    const int bytes = k < w.k1 ? 16 : 0;
#pragma unroll
    for (int i = 0; i < LROWS; ++i)
      pg_cp_async_16_policy(&into.a[i][lane], a_row[i] + (bytes ? k : 0), bytes, policy);
    /* The step's B in vectors of VW floats (none across a row): a lane
     * copies vectors lane, lane + 32, ... (CN / VW of them). */
    auto copy_b = [&](auto vw) {
      constexpr int VW = decltype(vw)::value;
#pragma unroll
      for (int q = 0; q < CN / VW; ++q) {
        const int v = q * 32 + lane, row = v * VW / CN, col = v * VW % CN;
        const long long kb = k0 + row;
        float *const to = &into.b[sk_band_b_at(CN, row) + col];
        const float *const from = g.b + (kb < w.k1 ? (size_t)kb * g.ldb + col : 0);
        const int got = kb < w.k1 ? 4 * VW : 0;
        if constexpr (VW == 4)
          pg_cp_async_16_ca(to, from, got);
        else if constexpr (VW == 2)
          pg_cp_async_8(to, from, got);
        else
          pg_cp_async_4(to, from, got);
      }
    };
    /* B dense and aligned: vectors of b_vector floats (a uniform branch;
     * sk_band_b_vector); else single floats, any ldb. */
    const int b_vector = pg_own<sk_band_own>(g).b_vector;
    if constexpr (CN % 4 == 0)
      if (b_vector == 4) return copy_b(std::integral_constant<int, 4>{});
    if constexpr (CN % 2 == 0)
      if (b_vector == 2) return copy_b(std::integral_constant<int, 2>{});
    copy_b(std::integral_constant<int, 1>{});
  };
  float acc[LROWS][CN];
#pragma unroll
  for (int i = 0; i < LROWS; ++i)
#pragma unroll
    for (int c = 0; c < CN; ++c) acc[i][c] = 0.f;
#pragma unroll
  for (int st = 0; st < S - 1; ++st) {
    if (st < steps) copy(st);
    pg_cp_async_commit();
  }
  for (int st = 0; st < steps; ++st) {
    pg_cp_async_wait(S - 2); /* step st is in (at most S - 2 later groups pending) */
    __syncwarp();            /* ... every lane's (B's values); the step before is read */
    if (st + S - 1 < steps) copy(st + S - 1);
    pg_cp_async_commit();
    const step_t &in = ring[st % S];
    float4 a[LROWS];
#pragma unroll
    for (int i = 0; i < LROWS; ++i) a[i] = in.a[i][lane];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float *const brow = in.b + sk_band_b_at(CN, 4 * kq + j);
      float b[CN];
#pragma unroll
      for (int q = 0; q + 4 <= CN; q += 4) {
        const float4 v = *(const float4 *)(brow + q);
        b[q] = v.x;
        b[q + 1] = v.y;
        b[q + 2] = v.z;
        b[q + 3] = v.w;
      }
#pragma unroll
      for (int c = CN / 4 * 4; c < CN; ++c) b[c] = brow[c];
#pragma unroll
      for (int i = 0; i < LROWS; ++i) {
        const float av = j == 0 ? a[i].x : j == 1 ? a[i].y : j == 2 ? a[i].z : a[i].w;
#pragma unroll
        for (int c = 0; c < CN; ++c) acc[i][c] = fmaf(av, b[c], acc[i][c]);
      }
    }
  }
  pg_cp_async_wait(0);
  /* The lanes of the same rows (lane / 8), then the warps. */
#pragma unroll
  for (int i = 0; i < LROWS; ++i)
#pragma unroll
    for (int c = 0; c < CN; ++c)
#pragma unroll
      for (int off = 1; off < LANES_K; off *= 2)
        acc[i][c] += __shfl_xor_sync(0xffffffffu, acc[i][c], off);
  __syncthreads(); /* every warp's ring is read */
  float *const sums = (float *)sk_band_dynamic, *const tile_out = sums + WARPS * ROWS * CN;
  if (kq == 0)
#pragma unroll
    for (int i = 0; i < LROWS; ++i)
#pragma unroll
      for (int c = 0; c < CN; ++c) sums[(warp * ROWS + group + GROUPS * i) * CN + c] = acc[i][c];
  __syncthreads();
  for (int e = threadIdx.x; e < ROWS * CN; e += SK_THREADS) {
    float v = sums[e];
    for (int u = 1; u < WARPS; ++u) v += sums[u * ROWS * CN + e];
    const long long m = w.first + e / CN;
    if constexpr (CLUSTER)
      tile_out[e] = v;
    else if (m < g.m)
      sk_store(g, w.split, m, e % CN, v);
  }
  if constexpr (CLUSTER)
    sk_cluster_sum(g, w, tile_out, ROWS * CN, [&](int e, float sum) {
      const long long m = w.first + e / CN;
      if (m < g.m) sk_store_c(g, m, e % CN, sum);
    });
}

/* The RING forms: by N, 1 to SK_RING_MAX_CHUNK columns. 16-byte copies
 * only. */
#define SK_RING_FORM(cn) \
  { cn, {NULL, (const void *)pg_skinny_kernel<0, -cn, true>}, {NULL, NULL} }
static const sk_form sk_ring_forms[] = {SK_RING_FORM(1), SK_RING_FORM(2),
                                        SK_RING_FORM(SK_RING_MAX_CHUNK)};
static_assert(sizeof sk_ring_forms / sizeof sk_ring_forms[0] == SK_RING_MAX_CHUNK &&
                  SK_RING_MAX_CHUNK + 1 == SK_BAND_MIN_COLS,
              "a RING form for each N up to SK_RING_MAX_CHUNK, the BAND forms' from there on: "
              "configure indexes them by N");
/* The BAND forms, by N: SK_BAND_MIN_COLS to SK_BAND_MAX_COLS columns.
 * 16-byte copies of A only. */
#define SK_BAND_FORM(cn)                                                                           \
  {                                                                                               \
    cn, {NULL, (const void *)pg_skinny_kernel<0, -(SK_BAND_CODE + cn), true>}, {                   \
      NULL, (const void *)pg_skinny_kernel<0, -(SK_BAND_CODE + cn), true, true>                    \
    }                                                                                             \
  }
static const sk_form sk_band_forms[] = {SK_BAND_FORM(4), SK_BAND_FORM(5), SK_BAND_FORM(6),
                                        SK_BAND_FORM(7), SK_BAND_FORM(SK_BAND_MAX_COLS)};
static_assert(sizeof sk_band_forms / sizeof sk_band_forms[0] ==
                  SK_BAND_MAX_COLS - SK_BAND_MIN_COLS + 1 && SK_BAND_MIN_COLS == 4,
              "a BAND form for each N from SK_BAND_MIN_COLS: configure indexes them by N");

/* The RING form where it runs (RING, above): N of 1 to 3, A's rows in
 * 16-byte copies, B dense and 16-byte aligned, its blocks at least the
 * SMs. */
bool sk_ring_launch(pg_layout_args *args, const pg_device *device, pg_kernel_launch *launch,
                    const sk_shape *shape) {
  const bool rows = shape->rows, vec = shape->vec;
  const long long short_side = shape->short_side;
  if (!rows && vec && short_side <= SK_RING_MAX_CHUNK && args->ldb == args->n &&
      (uintptr_t)args->b % 16 == 0 &&
      sk_ring_blocks(args->m, (int)short_side) >= device->sm_count) {
    /* Short N of 1 to 3, A's rows in 16-byte copies, B dense and 16-byte
     * aligned: the RING form of N columns, all of K a block, where its
     * blocks are at least the SMs (auto's model: the COLS form's, no TMA
     * entry competes). */
    launch->kernel = sk_ring_forms[short_side - 1].kernel[1];
    launch->grid_x = sk_ring_blocks(args->m, (int)short_side);
    return true;
  }
  return false;
}

/* The BAND form where it runs (BAND, above): N of 4 to 8, A's rows in
 * 16-byte copies, the GPU allowing a block its rings. */
bool sk_band_launch(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                    pg_kernel_launch *launch, const sk_shape *shape) {
  const bool rows = shape->rows, vec = shape->vec;
  const long long short_side = shape->short_side;
  if (!rows && vec && short_side >= SK_BAND_MIN_COLS && short_side <= SK_BAND_MAX_COLS &&
      sk_band_smem((int)short_side) <= device->smem_optin) {
    /* Short N of 4 to 8, A's rows in 16-byte copies, B any layout, where
     * the GPU allows a block its rings (not 5-8 columns on one of 99 KiB
     * a block, sm_86 and sm_89: the split COLS form there): the BAND form
     * of N columns, a block 16 rows over all of K, K split into ranges
     * only where the blocks are at most half the SMs (sk_configure_split,
     * at most SK_BAND_BLOCKS an SM in clusters). auto's model: the COLS
     * form's at 4 columns, past it the tuning's skinny_ring_percent (fitted
     * on the RING form those columns took before; the BAND form is
     * faster). */
    const sk_form *const band = &sk_band_forms[short_side - SK_BAND_MIN_COLS];
    launch->kernel = band->kernel[1];
    launch->grid_x = sk_band_blocks(args->m);
    launch->dynamic_smem = sk_band_smem((int)short_side);
    if (short_side > SK_BAND_MIN_COLS)
      launch->model.speed_share =
          (double)short_side / SK_BAND_MAX_COLS * tuning->skinny_ring_percent / 100.0;
    sk_configure_split(args, device, tuning, launch, band->cluster[1], SK_BAND_BLOCKS,
                       device->sm_count, ((long long)args->k + SK_SPLIT_K - 1) / SK_SPLIT_K,
                       SK_BAND_MIN_RANGE / SK_SPLIT_K);
    /* Bound by memory: blocks on every SM read at the GPU's rate whether
     * one or two share an SM, so a second wave of one an SM costs it
     * nothing (auto's model would count 188 blocks on 132 SMs 71 % full;
     * 3000 x 8 x 12288 ran 49.4 us where tma_ws_n16, the model's choice,
     * took 54.4). */
    if (launch->grid_x >= device->sm_count) launch->model.fill = 1.0;
    /* Its blocks an SM: SK_BAND_BLOCKS, fewer where their rings do not fit. */
    int per_sm = SK_BAND_BLOCKS;
    if (device->smem_per_sm > 0)
      while (per_sm > 1 && pg_smem_for_blocks_per_sm(device, per_sm) < launch->dynamic_smem)
        --per_sm;
    pg_set_own(args, sk_band_own{
                         sk_band_b_vector(args, launch->grid_x, (long long)per_sm * device->sm_count)});
    return true;
  }
  return false;
}

/* The most static shared memory a RING form's block takes. */
size_t sk_ring_smem_most(void) {
  size_t ring = 0;
  for (int cn = 1; cn <= SK_RING_MAX_CHUNK; ++cn)
    if (sk_ring_smem(cn) > ring) ring = sk_ring_smem(cn);
  return ring;
}

PG_KERNELS_END
