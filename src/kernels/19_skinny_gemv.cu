/* 19 skinny_ffma's GEMV — one to four rows of A (M of 1 to 4) against a
 * long enough N, where RING ROWS (18_skinny_ring_rows.cu) does not run,
 * with no split of K between blocks, so no second kernel: each block walks
 * all of K over its columns of B, every thread's loads of a step in flight
 * together before its first product.
 *   GEMV: a block takes 4L columns of B (L = 8, 16 or 32 lanes a row, the
 *     narrowest whose blocks fit SK_GEMV_BLOCKS an SM, so that all are
 *     resident at once, up to N of 33792 on 132 SMs; 4 where 8 would leave
 *     too few blocks) and all of K; its 256 / L groups of L threads take
 *     SK_GEMV_ROWS consecutive rows of B a step each (all of a step's loads
 *     in flight; 32 / R rows for R = 2 or 4 rows of A, A's values of the
 *     step in flight beside them), and their sums are added through shared
 *     memory at the end in a fixed order, a row at a time. The second
 *     kernel of a split K (its launch and its read of the planes) cost 5
 *     of 26 us at 1 x 4096 x 4096 on the H200 (Nsight Compute, clocks
 *     locked), where cuBLAS runs one kernel; 2 to 4 rows took 5-18 % less time
 *     than their split chunks at N x K of 4096^2 to 8192^2 (2 x 4096 x 4096
 *     23.6 us against 25.4; bench/results/short-sides). One row
 *     against a dense B whose rows are off 16 bytes reads them in aligned
 *     16-byte loads all the same, blocks of 4(L - 1) columns, a thread's
 *     sums kept apart by the rows' shift (sk_gemv_realigned): 1 x 3001 x
 *     8192 35.2 us where 4-byte loads took 41.0, used where its blocks are
 *     at most the SMs at 8 lanes, or at 16 and 32 lanes (sk_gemv_launch).
 * The entry's source (by title): "Software Pipelining and Double
 * Buffering". Where it runs: sk_gemv_launch, below; the entry
 * (15_skinny_ffma.cu) asks it after the ring forms, and where it declines
 * the split ROWS form (16_skinny_split.cu) takes the call.
 *
 *   pipegemm bench --shapes bench/shapes/gemv.txt --variant cublas,skinny_ffma
 *   pipegemm bench --variant skinny_ffma,cublas --m 1 --n 4096 --k 4096
 */
#include <type_traits>

#include "kernels/skinny.cuh"

PG_KERNELS_BEGIN

/* GEMV: rows of B a thread a step (their loads in flight together), blocks
 * an SM (SK_GEMV_BLOCKS in skinny.cuh: registers for a step's loads, up to
 * 128 a thread), and the fewest blocks it runs, in percent of the SMs (fewer: the split short-M form).
 * Measured on the H200 with each width forced (23:58 UTC, x cuBLAS):
 * 128-byte rows (8 lanes) beat 64-byte ones (4) wherever they leave 94
 * blocks or more (1x3000x8192: 0.99 against 0.86, 1x4096x16384 1.00
 * against 0.86, 1x4096x4096 0.90 against 0.83 at 128 blocks), not at 64
 * (1x2048x16384: 0.82 against 0.94); wider rows than needed to fit the
 * blocks lose (16 lanes at 1x4096x4096 0.73, 32 lanes 0.52). Where the
 * GEMV gives way to the split form (fewer than 60 % of the SMs at 4 lanes,
 * N below about 1270 on 132 SMs) was not measured: the same figure is
 * taken for it. auto's model of skinny_ffma (its rule's blocks an SM and
 * call cost, src/tuning.c) was fitted on the split form and not refitted
 * for the GEMV; at M = 1 no other candidate comes near it. */
#define SK_GEMV_ROWS 16
#define SK_GEMV_MIN_FILL_PERCENT 60

/* The sums of a GEMV's groups for the block's 4L positions, a thread's 4
 * in `acc`: added through shared memory in group order, four groups a
 * thread, then the slices of four; thread p < 4L gets position p's total
 * (the others 0). Calls one after another need no barrier between them. */
template <int L> static __device__ __forceinline__ float sk_gemv_groups(const float (&acc)[4]) {
  enum { G = SK_THREADS / L, W = 4 * L, SLICES = SK_THREADS / W };
  static_assert(G == 4 * SLICES, "a slice is four groups");
  __shared__ __align__(16) float sums[G][W];
  __shared__ float slices[SLICES][W];
  const int lane = threadIdx.x % L, group = threadIdx.x / L;
  *(float4 *)&sums[group][4 * lane] = make_float4(acc[0], acc[1], acc[2], acc[3]);
  __syncthreads();
  {
    const int c = threadIdx.x % W, slice = threadIdx.x / W;
    slices[slice][c] = ((sums[4 * slice][c] + sums[4 * slice + 1][c]) + sums[4 * slice + 2][c]) +
                       sums[4 * slice + 3][c];
  }
  __syncthreads();
  float v = 0.f;
  if (threadIdx.x < W) {
    v = slices[0][threadIdx.x];
#pragma unroll
    for (int u = 1; u < SLICES; ++u) v += slices[u][threadIdx.x];
  }
  return v;
}

/* The GEMV's sums of row m of C for the block's 4L columns, a thread's 4
 * in `acc` (sk_gemv_groups), stored. */
template <int L>
static __device__ __forceinline__ void sk_gemv_sum(const pg_gemm_args &g, long long m,
                                                   const float (&acc)[4]) {
  const float v = sk_gemv_groups<L>(acc);
  if (threadIdx.x < 4 * L) {
    const long long col = (long long)blockIdx.x * (4 * L) + threadIdx.x;
    if (col < g.n) sk_store(g, 0, m, col, v);
  }
}

/* GEMV: C[0][n] for the block's 4L columns, over all of K. Group q of L
 * threads (q = thread / L) takes rows k0 .. k0 + SK_GEMV_ROWS - 1 of B,
 * k0 = SK_GEMV_ROWS (q + j 256 / L) for j = 0, 1, ...; a row past K reads
 * the last and its product is zeroed (a and b both, so that an infinity
 * there adds no NaN). The groups' sums are added in group order
 * (sk_gemv_sum). */
template <int L, bool VEC>
static __device__ __forceinline__ void sk_gemv(const pg_gemm_args g) {
  enum { G = SK_THREADS / L, W = 4 * L, U = SK_GEMV_ROWS };
  const int lane = threadIdx.x % L, group = threadIdx.x / L;
  const long long n = (long long)blockIdx.x * W + 4 * lane;
  const int cols = g.n - n < 4 ? (int)(g.n - n) : 4; /* <= 0: past N, reads column 0 */
  const float *const b_col = g.b + (cols > 0 ? n : 0);
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (long long k0 = (long long)group * U; k0 < g.k; k0 += (long long)G * U) {
    float4 b[U];
    float a[U];
#pragma unroll
    for (int j = 0; j < U; ++j) {
      const long long kk = k0 + j < g.k ? k0 + j : g.k - 1;
      b[j] = sk_load4<VEC, true>(b_col + (size_t)kk * g.ldb, cols > 0 ? cols : 1);
      a[j] = __ldg(g.a + kk);
    }
#pragma unroll
    for (int j = 0; j < U; ++j)
      if (k0 + j >= g.k || cols <= 0) a[j] = 0.f, b[j] = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int j = 0; j < U; ++j) {
      acc[0] = fmaf(a[j], b[j].x, acc[0]);
      acc[1] = fmaf(a[j], b[j].y, acc[1]);
      acc[2] = fmaf(a[j], b[j].z, acc[2]);
      acc[3] = fmaf(a[j], b[j].w, acc[3]);
    }
  }
  sk_gemv_sum<L>(g, 0, acc);
}

/* The GEMV of one row where B is dense (ldb = N) but its rows are not
 * 16-byte aligned (N, or B's address, no multiple of 4 floats:
 * 1 x 3001 x 8192), read in aligned 16-byte loads all the same, each
 * miss in L2 fetching its whole 128-byte line (pg_ld_stream_line): lane l of
 * a group loads the 4 floats 4l on from the 16-byte boundary at or below
 * row k's column c0 (the block's first), columns c0 - s + 4l .. + 3 where
 * s = (B's address in floats + k N + c0) % 4, the row's shift. Rows k0 + j
 * of a step (k0 a multiple of 4) have the same shift for the same j % 4,
 * so a thread keeps four sets of sums, set t for rows j % 4 = t, of shift
 * s_t = (s_0 + t N) % 4; the block's W = 4(L - 1) columns are read off
 * the sets' totals at the end, column c0 + i from position i + s_t of set
 * t (i + s_t < 4L), the sets added in order. A load that would reach
 * outside B (the 16 bytes that hold B's first float, where B starts off a
 * boundary, and those that hold its last, where it ends off one) is not
 * made: its floats of B (up to 3 of row 0's first and of row K - 1's
 * last) are added to their columns at the end. Positions that fall outside
 * the block's columns hold other columns' products, and are not read. */
template <int L> static __device__ __forceinline__ void sk_gemv_realigned(const pg_gemm_args g) {
  enum { G = SK_THREADS / L, W = 4 * (L - 1), U = SK_GEMV_ROWS };
  static_assert(U % 4 == 0, "a step's first row is a multiple of 4: its rows' shifts repeat");
  const int lane = threadIdx.x % L, group = threadIdx.x / L;
  const long long c0 = (long long)blockIdx.x * W;
  const uintptr_t first = (uintptr_t)g.b, end = (uintptr_t)(g.b + (size_t)g.k * g.n);
  /* The first and last whole 16 bytes of B (K N >= 4L floats: configure). */
  const uintptr_t lo = (first + 15) & ~(uintptr_t)15, hi = (end - 16) & ~(uintptr_t)15;
  float acc[4][4] = {};
  /* A step of rows k0 .. k0 + U - 1. EDGE: it holds row 0 or K - 1, or
   * rows past K (read as row K - 1): each load checked against B's bounds,
   * those outside not made and their products zeroed (a and b both, so
   * that an infinity there adds no NaN); otherwise every load made as it
   * is, all of the step's in flight before the first product. */
  const auto step = [&](long long k0, auto edge) {
    float4 b[U];
    float a[U];
    bool in[U];
#pragma unroll
    for (int j = 0; j < U; ++j) {
      const long long kk = !decltype(edge)::value || k0 + j < g.k ? k0 + j : g.k - 1;
      const uintptr_t at =
          ((uintptr_t)(g.b + (size_t)kk * g.n + c0) & ~(uintptr_t)15) + 16 * (uintptr_t)lane;
      in[j] = !decltype(edge)::value || (k0 + j < g.k && at >= lo && at <= hi);
      b[j] = pg_ld_stream_line((const float4 *)(in[j] ? at : lo));
      a[j] = __ldg(g.a + kk);
    }
    if constexpr (decltype(edge)::value) {
#pragma unroll
      for (int j = 0; j < U; ++j)
        if (!in[j]) a[j] = 0.f, b[j] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int j = 0; j < U; ++j) {
      float(&s)[4] = acc[j % 4];
      s[0] = fmaf(a[j], b[j].x, s[0]);
      s[1] = fmaf(a[j], b[j].y, s[1]);
      s[2] = fmaf(a[j], b[j].z, s[2]);
      s[3] = fmaf(a[j], b[j].w, s[3]);
    }
  };
  for (long long k0 = (long long)group * U; k0 < g.k; k0 += (long long)G * U) {
    if (k0 > 0 && k0 + U < g.k)
      step(k0, std::false_type{});
    else
      step(k0, std::true_type{});
  }
  __shared__ float sets[4][4 * L];
#pragma unroll
  for (int t = 0; t < 4; ++t) {
    const float v = sk_gemv_groups<L>(acc[t]);
    if (threadIdx.x < 4 * L) sets[t][threadIdx.x] = v;
  }
  __syncthreads();
  const long long col = c0 + threadIdx.x;
  if (threadIdx.x < W && col < g.n) {
    const int s0 = (int)((first / sizeof(float)) % 4), n4 = (int)(g.n % 4);
    float v = sets[0][threadIdx.x + s0];
#pragma unroll
    for (int t = 1; t < 4; ++t) v += sets[t][threadIdx.x + (s0 + t * n4) % 4];
    const long long head = (long long)((lo - first) / sizeof(float));
    const long long tail = (long long)((end - (hi + 16)) / sizeof(float));
    if (col < head) v = fmaf(g.a[0], g.b[col], v);
    if (col >= g.n - tail) v = fmaf(g.a[g.k - 1], g.b[(size_t)(g.k - 1) * g.n + col], v);
    sk_store(g, 0, 0, col, v);
  }
}

/* The GEMV of MR rows (2 or 4; M of 2 to 4, the narrowest that holds M):
 * the same walk of B, U = 32 / MR rows of B a step, so that a step's loads
 * of B and of A's MR x U values are all in flight together in the
 * registers two blocks an SM leave; VEC: B and A both in 16-byte loads
 * (A's rows allow them and K is whole vectors, as U is and so each step's
 * k0: sk_gemv_vec), else both a float at a time; rows past M read row
 * M - 1 and are not stored. The rows' sums are added up one row after
 * another. One row stays sk_gemv, whose loads of A go beside B's in one
 * loop: as an instance of this function it was scheduled otherwise. */
template <int L, int MR, bool VEC>
static __device__ __forceinline__ void sk_gemv_rows(const pg_gemm_args g) {
  enum { G = SK_THREADS / L, W = 4 * L, U = 32 / MR };
  static_assert(U % 4 == 0, "a step's K is whole vectors of A");
  const int lane = threadIdx.x % L, group = threadIdx.x / L;
  const long long n = (long long)blockIdx.x * W + 4 * lane;
  const int cols = g.n - n < 4 ? (int)(g.n - n) : 4; /* <= 0: past N, reads column 0 */
  const float *const b_col = g.b + (cols > 0 ? n : 0);
  float acc[MR][4];
#pragma unroll
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = 0.f;
  for (long long k0 = (long long)group * U; k0 < g.k; k0 += (long long)G * U) {
    float4 b[U];
    float a[MR][U];
#pragma unroll
    for (int j = 0; j < U; ++j) {
      const long long kk = k0 + j < g.k ? k0 + j : g.k - 1;
      b[j] = sk_load4<VEC, true>(b_col + (size_t)kk * g.ldb, cols > 0 ? cols : 1);
    }
#pragma unroll
    for (int r = 0; r < MR; ++r) {
      const float *const a_row = g.a + (size_t)(r < g.m ? r : g.m - 1) * g.lda;
      if constexpr (VEC) {
#pragma unroll
        for (int q = 0; q < U / 4; ++q) {
          const long long kq = k0 + 4 * q < g.k ? k0 + 4 * q : g.k - 4;
          const float4 v = __ldg((const float4 *)(a_row + kq));
          a[r][4 * q] = v.x, a[r][4 * q + 1] = v.y, a[r][4 * q + 2] = v.z, a[r][4 * q + 3] = v.w;
        }
      } else {
#pragma unroll
        for (int j = 0; j < U; ++j) a[r][j] = __ldg(a_row + (k0 + j < g.k ? k0 + j : g.k - 1));
      }
    }
#pragma unroll
    for (int j = 0; j < U; ++j)
      if (k0 + j >= g.k || cols <= 0) {
        b[j] = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
        for (int r = 0; r < MR; ++r) a[r][j] = 0.f;
      }
#pragma unroll
    for (int j = 0; j < U; ++j)
#pragma unroll
      for (int r = 0; r < MR; ++r) {
        acc[r][0] = fmaf(a[r][j], b[j].x, acc[r][0]);
        acc[r][1] = fmaf(a[r][j], b[j].y, acc[r][1]);
        acc[r][2] = fmaf(a[r][j], b[j].z, acc[r][2]);
        acc[r][3] = fmaf(a[r][j], b[j].w, acc[r][3]);
      }
  }
#pragma unroll
  for (int r = 0; r < MR; ++r) {
    if (r >= g.m) break; /* the same in every thread */
    sk_gemv_sum<L>(g, r, acc[r]);
  }
}

#define SK_GEMV_FORM(lanes, rows)                                                                  \
  {                                                                                               \
    lanes, {(const void *)pg_skinny_kernel<-lanes, rows, false>,                                   \
            (const void *)pg_skinny_kernel<-lanes, rows, true>},                                   \
        {NULL, NULL}                                                                               \
  }
/* The GEMV's forms by rows (1, 2, 4: the short-M chunks up to
 * SK_GEMV_MAX_ROWS, the same index as sk_row_forms) and lanes a row (4, 8,
 * 16, 32; chunk: the lanes). 8 rows (4 of B a step) ran slower than the
 * split chunk of 8 rows on the H200 (8 x 4096 x 4096 37.5 us against
 * 28.8: bench/results/short-sides). */
#define SK_GEMV_LANE_FORMS(rows) \
  {SK_GEMV_FORM(4, rows), SK_GEMV_FORM(8, rows), SK_GEMV_FORM(16, rows), SK_GEMV_FORM(32, rows)}
static const sk_form sk_gemv_forms[][4] = {SK_GEMV_LANE_FORMS(1), SK_GEMV_LANE_FORMS(2),
                                           SK_GEMV_LANE_FORMS(4)};
#define SK_GEMV_FORMS ((int)(sizeof sk_gemv_forms[0] / sizeof sk_gemv_forms[0][0]))
/* Whether the GEMV of two rows or more reads in 16-byte loads: B may be
 * (`vec`), and A's rows may be with K whole vectors. */
static int sk_gemv_vec(const pg_layout_args *args, bool vec) {
  return vec && args->vec_a && args->k % 4 == 0;
}
/* The GEMV's blocks across N in form l (any row count: the same lanes). */
static long long sk_gemv_blocks(long long n, int l) {
  const long long width = 4LL * sk_gemv_forms[0][l].chunk;
  return (n + width - 1) / width;
}
/* The realigned GEMV of one row (sk_gemv_realigned) by lanes a row: 8,
 * 16, 32 (4 would give 12 columns a block of 16 floats read). */
static const sk_form sk_gemv_realigned_forms[] = {
    {8, {NULL, (const void *)pg_skinny_kernel<-8, -1, true>}, {NULL, NULL}},
    {16, {NULL, (const void *)pg_skinny_kernel<-16, -1, true>}, {NULL, NULL}},
    {32, {NULL, (const void *)pg_skinny_kernel<-32, -1, true>}, {NULL, NULL}}};
#define SK_GEMV_REALIGNED_FORMS \
  ((int)(sizeof sk_gemv_realigned_forms / sizeof sk_gemv_realigned_forms[0]))
/* Its blocks across N in form r: 4 (L - 1) columns a block. */
static long long sk_gemv_realigned_blocks(long long n, int r) {
  const long long width = 4LL * (sk_gemv_realigned_forms[r].chunk - 1);
  return (n + width - 1) / width;
}

/* The GEMV where it runs: M of 1 to SK_GEMV_MAX_ROWS (f: 1, 2 or 4 rows,
 * the split form's chunk). */
bool sk_gemv_launch(pg_layout_args *args, const pg_device *device, pg_kernel_launch *launch,
                    const sk_shape *shape) {
  const bool rows = shape->rows, vec = shape->vec;
  const long long short_side = shape->short_side;
  const int f = shape->split;
  if (rows && short_side <= SK_GEMV_MAX_ROWS) {
    /* The GEMV (of its chunk's rows, f: 1, 2 or 4): 8 lanes a row or
     * more, the narrowest whose blocks all fit at once; 4 lanes where 8
     * would leave fewer blocks than SK_GEMV_MIN_FILL_PERCENT of the SMs;
     * the split form where 4 would. */
    static_assert(sizeof sk_gemv_forms / sizeof sk_gemv_forms[0] == 3 && SK_GEMV_MAX_ROWS == 4,
                  "the GEMV's rows: the chunks of 1, 2 and 4");
    const long long fit = (long long)SK_GEMV_BLOCKS * device->sm_count;
    const long long least = (long long)device->sm_count * SK_GEMV_MIN_FILL_PERCENT / 100;
    if (f == 0 && !vec && args->ldb == args->n && args->k >= 1) {
      /* One row, B dense but its rows not 16-byte aligned: the realigned
       * GEMV, its lanes a row chosen as the GEMV's below (from 8, blocks of
       * 4 (L - 1) columns), where its blocks are at least
       * SK_GEMV_MIN_FILL_PERCENT of the SMs and N at least a block's 4L
       * floats, and where they are no more than the SMs at 8 lanes or
       * need 16 or 32; else the GEMV of 4-byte loads below (or the split
       * form). Measured on the H200 beside that GEMV (one build, the two
       * alternating, the mean of two passes; bench/results/short-sides):
       * at 8 lanes a block an SM 1 x 3001 x 8192 in 35.2 us against 41.0,
       * 1 x 2999 x 12000 47.9 against 56.4; at 16 and 32 lanes
       * 1 x 8191 x 8192 86.5 against 97.5, 1 x 16383 x 4096 76.7 against
       * 83.6, 1 x 12001 x 3000 51.4 against 51.8; at 8 lanes past one
       * block an SM slower at 3 of 4 shapes (1 x 4095 x 4097 29.3 against
       * 26.4, 1 x 4097 x 16384 106 against 88), why not known. */
      int r = 0;
      while (r < SK_GEMV_REALIGNED_FORMS - 1 && sk_gemv_realigned_blocks(args->n, r) > fit) ++r;
      const long long blocks = sk_gemv_realigned_blocks(args->n, r);
      if (blocks >= least && (r > 0 || blocks <= device->sm_count) &&
          args->n >= 4LL * sk_gemv_realigned_forms[r].chunk) {
        launch->kernel = sk_gemv_realigned_forms[r].kernel[1];
        launch->grid_x = blocks;
        return true;
      }
    }
    int l = 1;
    while (l < SK_GEMV_FORMS - 1 && sk_gemv_blocks(args->n, l) > fit) ++l;
    if (sk_gemv_blocks(args->n, l) < least) l = 0;
    const long long blocks = sk_gemv_blocks(args->n, l);
    if (blocks >= least) {
      /* Two rows or more: the 16-byte instance reads A so too. */
      launch->kernel = sk_gemv_forms[f][l].kernel[f == 0 ? vec : sk_gemv_vec(args, vec)];
      launch->grid_x = blocks;
      return true;
    }
  }
  return false;
}

PG_KERNELS_END
