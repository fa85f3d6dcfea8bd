/* 18 skinny_ffma's RING ROWS form — the ring of 17_skinny_ring.cu turned
 * to a short M (1 to 8 rows of A against a long N): a block takes 32
 * columns of B over all of K, its warps K's steps in turn, each lane
 * copying its 4 rows of 4 columns a step ahead into its warp's ring in
 * shared memory with cp.async (loads in flight while it computes, no
 * register holding them), A's values of the step beside them; no second
 * kernel where the column blocks fill the GPU.
 *   RING ROWS (M of 1 to 8, B's and A's rows 16-byte aligned, N and K
 *     multiples of 4; 1 to 4 rows only where its blocks are no more than
 *     the SMs, else the GEMV of 19): the same ring turned to a short M. A
 *     block takes 32 columns of B and all of K (K split into ranges where
 *     the blocks are at most half the SMs), its warps the K steps of 16
 *     rows of B in turn; a lane copies 4 rows of its 4 columns a step into
 *     its warp's ring of 4 steps (6 at 2 and 4 rows), and A's values of
 *     the step beside them (sk_rows_ring); chunks of 1, 2, 4, 6 or 8
 *     rows. On the H200 8 x 4096 x 4096 in 23.5 us where the split ROWS
 *     form took 29.0, 4 x 4096 x 4096 23.0 where the GEMV took 24.7
 *     (bench/results/short-sides).
 * Block b of the grid: column block b % blocks, K range b / blocks (all of
 * K where K is not split); in clusters column block b / S, range b % S.
 * The entry's source (by title): "Software Pipelining and Double
 * Buffering". Where it runs: sk_ring_rows_launch, below; the entry
 * (15_skinny_ffma.cu) asks it after the RING and BAND forms, before the
 * GEMV (19_skinny_gemv.cu).
 *
 *   pipegemm bench --variant skinny_ffma,cublas --m 8 --n 4096 --k 4096
 */
#include "kernels/skinny.cuh"

PG_KERNELS_BEGIN

/* RING ROWS (M <= SK_RROW_MAX_ROWS, B's and A's rows in 16-byte copies):
 * columns of B a block (8 lanes a row, 128 bytes), rows of B a warp's step
 * (4 a lane), the ring's steps (sk_rrow_stages: 6 at 2 and 4 rows), blocks
 * an SM (SK_RROW_BLOCKS, skinny.cuh: the bound its registers are compiled
 * to; its shared memory,
 * 66-108 KiB, fits 2 on the H200, 1 at 2 and 4 rows on an A100), the
 * widest chunk of rows, the shortest K range of a split (2 steps a warp).
 * Measured on the H200 (bench/results/short-sides): 8 x 4096 x 4096 in
 * 23.5 us where the split ROWS form took 29.0; K split only to fill the
 * SMs, a block an SM (at 4096 columns 128 blocks over all of K 23.4 us,
 * where 2 ranges a tile in clusters took 25.1 and 4 took 27.3, each warp
 * a slice of K);
 * 6 and 8 stages within 3 % of 4 either way (faster at 2-4 rows and
 * 64 MB, slower at 6-8 rows and 134 MB and more), so 2 and 4 rows take
 * 6 (4 x 2048 x 8192 23.0 us against 23.5). */
#define SK_RROW_WIDTH 32
#define SK_RROW_STEP 16
#define SK_RROW_STAGES 4
#define SK_RROW_MAX_ROWS 8
#define SK_RROW_MIN_RANGE (SK_THREADS / 32 * 2 * SK_RROW_STEP)
/* Its ring's steps for MR rows. */
static __host__ __device__ constexpr int sk_rrow_stages(int mr) {
  return mr == 2 || mr == 4 ? 6 : SK_RROW_STAGES;
}
/* Its shared memory: the warps' rings (B's step and A's values of it;
 * after the loop the warps' sums, and in clusters the block's). */
static __host__ __device__ constexpr size_t sk_rrow_smem(int mr) {
  return (size_t)(SK_THREADS / 32) * sk_rrow_stages(mr) * 16 *
         (SK_RROW_STEP * SK_RROW_WIDTH / 4 + mr * SK_RROW_STEP / 4);
}
static_assert(sk_rrow_smem(1) >= sizeof(float) * (SK_THREADS / 32 + 1) * 1 * SK_RROW_WIDTH &&
                  sk_rrow_smem(SK_RROW_MAX_ROWS) >=
                      sizeof(float) * (SK_THREADS / 32 + 1) * SK_RROW_MAX_ROWS * SK_RROW_WIDTH,
              "the sums fit in the rings");
/* Its column blocks for N. */
static __host__ __device__ constexpr long long sk_rrow_blocks(long long n) {
  return (n + SK_RROW_WIDTH - 1) / SK_RROW_WIDTH;
}

/* RING ROWS (M of 1 to 8 where B's rows and A's take 16-byte copies and
 * K is whole vectors): RING's ring turned to a short M. A block takes
 * SK_RROW_WIDTH columns of B (8 lanes a row, 4 columns a lane) and its K
 * range (all of K, or one of its tile's ranges where the column blocks
 * are fewer than the SMs); the range's steps of SK_RROW_STEP rows of B go
 * to the warps in turn (warp w steps w, w + 8, ...: the block reads 128
 * consecutive rows at a time; on the H200 up to 12 % faster than a slice
 * of K a warp, 1 x 3000 x 8192 32.0 us against 36.5, the same at 4096
 * columns). In a step lane l copies rows 4 (l / 8) + j (j < 4) of its 4
 * columns (an instruction: 4 rows of 128 contiguous bytes) into its places
 * in the warp's ring of sk_rrow_stages steps (cp.async, evict-first: B is
 * read once), and the step's MR x SK_RROW_STEP values of A beside them (MR
 * x 4 vectors, one a lane; L2 holds A, which every block reads). A lane
 * reads back its own B and the step's A, which other lanes copied: a
 * __syncwarp after its wait (the copies' writes seen by the warp), which
 * also orders every lane's reads of a step before the copies into its
 * place. Rows of A past M copy row M - 1 and are not stored. The sums of
 * the lanes of the same columns are added in a butterfly, the warps' in
 * warp order through shared memory, the ranges' in split order (in
 * clusters, or planes and the reduction). */
template <int MR, bool CLUSTER>
static __device__ __forceinline__ void sk_rows_ring(const pg_gemm_args g) {
  enum {
    WARPS = SK_THREADS / 32,
    S = sk_rrow_stages(MR),
    STEP = SK_RROW_STEP,
    W = SK_RROW_WIDTH,
    LANES_ROW = W / 4
  };
  static_assert(LANES_ROW == 8 && STEP == 16, "a lane's 4 rows of B a step, 4 of the warp's 8 x 4");
  static_assert(S >= 2 && S <= 8, "cp.async.wait_group takes 0 to 7");
  static_assert(4 * MR <= 32, "a lane copies at most one vector of A a step");
  static_assert(SK_SPLIT_K % STEP == 0, "a range starts a step, and a vector of A");
  /* A step in the ring: B's STEP rows of W columns, then A's MR x STEP. */
  struct step_t {
    float4 b[STEP][LANES_ROW];
    float4 a[MR][STEP / 4];
  };
  /* More than 48 KiB: dynamic (the launch's dynamic_smem, sk_rrow_smem). */
  extern __shared__ __align__(16) float4 sk_rrow_dynamic[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  step_t *const ring = (step_t *)sk_rrow_dynamic + warp * S;
  const sk_work w = sk_where<CLUSTER>(g, sk_rrow_blocks(g.n), W, MR);
  const long long range_steps = (w.k1 - w.k0 + STEP - 1) / STEP;
  const int steps = range_steps > warp ? (int)((range_steps - warp + WARPS - 1) / WARPS) : 0;
  /* This lane's columns of B (past N: zero-filled, reading column 0), its
   * rows of a step, and the vector of A it copies (row ar, K 4 aq on). */
  const long long n = w.first + 4 * (lane % LANES_ROW);
  const int b_bytes = n < g.n ? 16 : 0;
  const float *const b_col = g.b + (b_bytes ? n : 0);
  const int row0 = 4 * (lane / LANES_ROW);
  const int ar = lane / 4 < MR ? lane / 4 : MR - 1, aq = lane % 4;
  const bool copies_a = lane < 4 * MR;
  const float *const a_row = g.a + (size_t)(ar < g.m ? ar : g.m - 1) * g.lda;
  const unsigned long long policy = pg_l2_evict_first_policy();
  /* Step st of this warp: the range's step st WARPS + warp. */
  auto copy = [&](int st) {
    step_t &into = ring[st % S];
    const long long k0 = w.k0 + ((long long)st * WARPS + warp) * STEP;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const long long k = k0 + row0 + j;
      const int bytes = k < w.k1 ? b_bytes : 0;
      pg_cp_async_16_policy(&into.b[row0 + j][lane % LANES_ROW],
                            b_col + (size_t)(bytes ? k : 0) * g.ldb, bytes, policy);
    }
    if (copies_a) {
      const long long k = k0 + 4 * aq; /* K and the ranges are whole vectors */
      pg_cp_async_16(&into.a[ar][aq], a_row + (k < w.k1 ? k : 0), k < w.k1 ? 16 : 0);
    }
  };
  float acc[MR][4];
#pragma unroll
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = 0.f;
#pragma unroll
  for (int st = 0; st < S - 1; ++st) {
    if (st < steps) copy(st);
    pg_cp_async_commit();
  }
  for (int st = 0; st < steps; ++st) {
    pg_cp_async_wait(S - 2); /* step st is in (at most S - 2 later groups pending) */
    __syncwarp();            /* ... every lane's (A's values); the step before is read */
    if (st + S - 1 < steps) copy(st + S - 1);
    pg_cp_async_commit();
    const step_t &in = ring[st % S];
    float4 a[MR], b[4];
#pragma unroll
    for (int r = 0; r < MR; ++r) a[r] = in.a[r][lane / LANES_ROW];
#pragma unroll
    for (int j = 0; j < 4; ++j) b[j] = in.b[row0 + j][lane % LANES_ROW];
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int r = 0; r < MR; ++r) {
        const float av = j == 0 ? a[r].x : j == 1 ? a[r].y : j == 2 ? a[r].z : a[r].w;
        acc[r][0] = fmaf(av, b[j].x, acc[r][0]);
        acc[r][1] = fmaf(av, b[j].y, acc[r][1]);
        acc[r][2] = fmaf(av, b[j].z, acc[r][2]);
        acc[r][3] = fmaf(av, b[j].w, acc[r][3]);
      }
  }
  pg_cp_async_wait(0);
  /* The lanes of the same columns (lane % 8), then the warps. */
#pragma unroll
  for (int r = 0; r < MR; ++r)
#pragma unroll
    for (int c = 0; c < 4; ++c)
#pragma unroll
      for (int off = LANES_ROW; off < 32; off *= 2)
        acc[r][c] += __shfl_xor_sync(0xffffffffu, acc[r][c], off);
  __syncthreads(); /* every warp's ring is read */
  float *const sums = (float *)sk_rrow_dynamic, *const tile_out = sums + WARPS * MR * W;
  if (lane < LANES_ROW)
#pragma unroll
    for (int r = 0; r < MR; ++r)
      *(float4 *)&sums[(warp * MR + r) * W + 4 * lane] =
          make_float4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
  __syncthreads();
  for (int e = threadIdx.x; e < MR * W; e += SK_THREADS) {
    const int r = e / W, c = e % W;
    float v = sums[r * W + c];
    for (int u = 1; u < WARPS; ++u) v += sums[(u * MR + r) * W + c];
    if constexpr (CLUSTER)
      tile_out[e] = v;
    else if (r < g.m && w.first + c < g.n)
      sk_store(g, w.split, r, w.first + c, v);
  }
  if constexpr (CLUSTER)
    sk_cluster_sum(g, w, tile_out, MR * W, [&](int e, float sum) {
      const long long m = e / W, col = w.first + e % W;
      if (m < g.m && col < g.n) sk_store_c(g, m, col, sum);
    });
}

/* The RING ROWS forms, by rows: 1, 2, 4, 6, 8 (the chunks up to
 * SK_RROW_MAX_ROWS). 16-byte copies only. 5 and 6 rows took the form of 8
 * before: on the H200 the form of 6 (4 steps, as 8) ran 1-3 % faster at
 * each of eight shapes of 5 and 6 rows, 6 x 4096 x 4096 in 23.0-23.2 us
 * against 23.4-23.6, 6 x 12288 x 3000 46.6 against 48.2; 6 steps (one
 * block an SM) won nothing more (bench/results/short-sides). */
#define SK_RROW_FORM(rows)                                                                         \
  {                                                                                               \
    rows, {NULL, (const void *)pg_skinny_kernel<rows, -1, true>}, {                                \
      NULL, (const void *)pg_skinny_kernel<rows, -1, true, true>                                   \
    }                                                                                             \
  }
static const sk_form sk_rrow_forms[] = {SK_RROW_FORM(1), SK_RROW_FORM(2), SK_RROW_FORM(4),
                                        SK_RROW_FORM(6), SK_RROW_FORM(SK_RROW_MAX_ROWS)};
#define SK_RROW_FORMS ((int)(sizeof sk_rrow_forms / sizeof sk_rrow_forms[0]))

/* The RING ROWS form where it runs (RING ROWS, above), the GPU allowing a
 * block its rings: more than the GEMV's rows, or its blocks no more than
 * the SMs. */
bool sk_ring_rows_launch(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                         pg_kernel_launch *launch, const sk_shape *shape) {
  const bool rows = shape->rows, vec = shape->vec;
  const long long short_side = shape->short_side;
  const int r = sk_pick(sk_rrow_forms, SK_RROW_FORMS, short_side);
  if (rows && short_side <= SK_RROW_MAX_ROWS && vec && args->vec_a && args->k % 4 == 0 &&
      sk_rrow_smem(sk_rrow_forms[r].chunk) <= device->smem_optin &&
      (short_side > SK_GEMV_MAX_ROWS || sk_rrow_blocks(args->n) <= device->sm_count)) {
    /* The RING ROWS form, where the GPU allows a block its rings: more
     * than the GEMV's rows, or its blocks no more than the SMs (a block
     * an SM, K split into ranges where they are at most half the SMs:
     * sk_configure_split, at most SK_RROW_BLOCKS an SM in clusters;
     * auto's model as the short-M form's above). */
    launch->kernel = sk_rrow_forms[r].kernel[1];
    launch->grid_x = sk_rrow_blocks(args->n);
    launch->dynamic_smem = sk_rrow_smem(sk_rrow_forms[r].chunk);
    sk_configure_split(args, device, tuning, launch, sk_rrow_forms[r].cluster[1], SK_RROW_BLOCKS,
                       device->sm_count, ((long long)args->k + SK_SPLIT_K - 1) / SK_SPLIT_K,
                       SK_RROW_MIN_RANGE / SK_SPLIT_K);
    return true;
  }
  return false;
}

PG_KERNELS_END
