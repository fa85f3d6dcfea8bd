/* 42 wgmma_fp16x3 — FP32-accurate GEMM on the FP16 tensor cores (emulated,
 * not bitwise IEEE), the first build of the form that
 * bench/results/products measured as a prototype: each row of A and
 * column of B scaled by a power of two that puts its largest magnitude at
 * 2^14..2^15, then split x = 2^e (h + 2^-11 l) with h and l FP16
 * (kernels/fp16x3.h), and each term a b taken as three FP16 products,
 *   C = 2^(e_A + e_B) (hh + 2^-11 (hl + lh)),
 * l l dropped (<= 2^-22 |a b|, as 3xTF32's small small). Where a row's or
 * column's nonzeros span more than 2^28 (or hold Inf or NaN) its elements
 * would lose more than 2^-22 of themselves: the first kernel leaves it
 * unsplit, and a tile it meets is computed by 3xTF32 instead: where op(A)
 * = N and A's and B's rows are 16-byte aligned, by 40 wgmma_3xtf32's
 * kernel, launched after this one (the plan's last step, FUSED: it reads
 * A and B where they are) on the tiles this one leaves; else here, on
 * mma.sync (f16x3_tf32x3_tile: slower; it spills a few addresses, in that
 * path only). The rule and its bound: bench/results/products.
 *
 * The first kernel (kernels/fp16x3_split.cuh, test_gpu_fp16x3 holds it to
 * the host's arithmetic) writes into the workspace, for op(A)'s Mp rows
 * (M rounded up to the tile) then op(B)'s Np columns, h then l, Kp FP16
 * each (K rounded up to 64: one 128-byte swizzled row a stage), zeros in
 * the padding, then the lines' scale exponents. The kernel then reads
 * both operands K-major, as wgmma's f16 form takes them from shared
 * memory, without bounds checks.
 *
 * The pipeline is 34 wgmma_tma_ws's, with two consumer warpgroups: one
 * lane of a third warpgroup copies each stage (64 KB: A's h and l, B^T's h
 * and l, four TMA boxes of the workspace in the 128-byte swizzle) into a
 * ring of mbarriers; warpgroup w multiplies rows 64 w .. of the 128 x 128
 * tile, each term's three products a K step of 16 into two accumulator sets
 * (hh, and hl + lh), gives the slot back once they are done, and adds them
 * into FP32 registers (sum += hh + 2^-11 x) every sum_stages stages (the
 * tuning row's fp16x3_sum_stages, 1 by default): the tensor cores' sums
 * are of 64 sum_stages terms, and one warpgroup adds while the other's
 * products run (no block-wide barrier after the start). The tiles go in grouped order
 * (pg_grouped_tile, 8 rows of tiles a group): in row order a wave of
 * blocks at 8192^3 read 16 GB from DRAM, its stages seldom found in L2.
 *
 * In grouped order Nsight Compute still found the kernel bound by L2 (H100,
 * 8192^3: L2 throughput 91 %, 11.4 GB read from DRAM), so the blocks run in
 * clusters of two that read B's tile once (39 wgmma_tma_rs_multicast's
 * mechanism, here along M): blocks 2j and 2j + 1 are the tiles (tm, tn) and
 * (tm + 1, tn) wherever the group's tile rows are even in number. Such a
 * pair's block r copies its own A's h and l into itself and B^T's part r
 * (0: h, 1: l) into both blocks by one TMA multicast, at the same place in
 * each: every block's full[s] still counts 64 KB, of which it fetched 48
 * KB from L2. A slot is then written in both blocks by both producers, so
 * it is refilled only once the consumers of both have released it: empty[s]
 * counts 16 arrivals, lane 0 of each consumer warp of each block arriving
 * on its own block's barrier and, through mapa, on the other's. The
 * barriers are made before a cluster-wide barrier, and a paired producer
 * waits at the end until both blocks have released every slot, so that no
 * arrival reaches a block that has gone. A pair is made only where both
 * tiles exist (the grid is rounded up to even: a block past the last tile
 * only meets the cluster barrier), share tn, and neither goes the 3xTF32
 * way; both blocks decide it alike, before the barriers are made (the
 * copying warpgroup reads the scales of the other tile's rows). Any other
 * block runs alone, as before the clusters: four boxes a stage, empty[s]
 * counting its 256 consumer threads. A pair is paced by its slower block.
 *
 * Every op(A), op(B) and a batch in one launch: the first kernel reads
 * op(A)'s rows and op(B)'s columns where they are stored (f16x3_lines_of:
 * a line of contiguous elements, or contiguous lines), each A and B of the
 * batch once (one for all where its stride is 0), a matrix's lines
 * padded to 16 (a tile's box of 128 lines may read on into the next
 * matrix's, for rows and columns of C that are not stored), and the
 * products read only the workspace, the batch's tiles one GEMM after
 * another on the grid (two blocks of a cluster may be tiles of two GEMMs
 * that share B); the 3xTF32 tile copies a transposed operand by plain
 * loads written across (f16x3_tf32x3_stage).
 * auto_emulated runs it where its products outweigh its split
 * (src/tuning.c).
 *
 *   pipegemm bench --variant cublas,wgmma_3xtf32,wgmma_fp16x3 --size 4096
 */
#include "kernels/fp16x3_split.cuh"
#include "kernels/mma_cp_async.cuh"
#include "kernels/wgmma.cuh"

PG_KERNELS_BEGIN

#define F16X3_TILE PG_FP16X3_TILE                     /* M and N: 128 */
#define F16X3_TILE_K 64                               /* FP16 a stage: 128 bytes a row */
#define F16X3_PART_BYTES (F16X3_TILE * 128)           /* one part: 16 KB */
#define F16X3_STAGE_BYTES (4 * F16X3_PART_BYTES)      /* A's h, l, B^T's h, l: 64 KB */
#define F16X3_CONSUMERS 256                           /* two warpgroups multiply */
#define F16X3_THREADS (F16X3_CONSUMERS + WG_WARPGROUP) /* and one copies */
#define F16X3_MAX_STAGES 3
/* Three stages: 1.81 / 3.03 / 3.38 / 3.76x cuBLAS strict at 2048 / 4096 /
 * 8192 / 16384^3 against two's 1.75 / 2.82 / 3.31 / 3.54 (H100, tree
 * 84831d4; an earlier tree's H200 run preferred two by 3 %:
 * bench/results/products). */
#define F16X3_DEFAULT_STAGES 3
#define F16X3_GROUP_M 8 /* tile rows a group of the tile order */
/* Clusters of two blocks along the grid's x; a pair's empty[s] counts one
 * arrival from each consumer warp of either block. */
#define F16X3_CLUSTER 2
#define F16X3_CLUSTER_MASK ((1u << F16X3_CLUSTER) - 1) /* a multicast into both */
#define F16X3_PAIR_RELEASES (F16X3_CLUSTER * F16X3_CONSUMERS / 32)
/* setmaxnreg: the launch's 168 registers a thread become 24 for the copying
 * warpgroup and 240 for the two that hold three accumulator sets. */
#define F16X3_PRODUCER_REGS 24
#define F16X3_CONSUMER_REGS 240
static_assert(WG_WARPGROUP * F16X3_PRODUCER_REGS + F16X3_CONSUMERS * F16X3_CONSUMER_REGS <=
                  F16X3_THREADS * (65536 / F16X3_THREADS / 8 * 8),
              "the register split exceeds the launch's registers");

/* The entry's own settings (pg_gemm_args.own). leave_wide: 1 where 40
 * wgmma_3xtf32's kernel runs after this one (the plan's then step,
 * pg_kernel_launch.then) and computes the tiles past the span rule, which
 * this kernel then leaves; 0 (where that kernel cannot run): it computes
 * them itself, by 3xTF32 on mma.sync. sum_stages: the stages whose
 * products the tensor cores sum before the FP32 registers take the sum
 * (the tuning row's fp16x3_sum_stages). */
struct f16x3_own {
  int leave_wide;
  int sum_stages;
};

/* The workspace's geometry, from the problem alone (host and device): M
 * and N rounded up to the tile; a matrix's lines, M (N) rounded up to
 * PG_FP16X3_LINE_PAD; K rounded up to F16X3_TILE_K (at least one); the
 * split's lines over the batch (kernels/fp16x3.h: op(A)'s for each A, then
 * op(B)'s for each B, one for all where a stride is 0), Kp floats each
 * (Kp FP16 of h, Kp of l), then their scales. */
struct f16x3_shape {
  long long mp, np, ml, nl, kp, lines;
};
static __host__ __device__ __forceinline__ f16x3_shape f16x3_shape_of(const pg_layout_args &g) {
  f16x3_shape s;
  s.mp = ((long long)g.m + F16X3_TILE - 1) / F16X3_TILE * F16X3_TILE;
  s.np = ((long long)g.n + F16X3_TILE - 1) / F16X3_TILE * F16X3_TILE;
  s.ml = pg_fp16x3_padded(g.m);
  s.nl = pg_fp16x3_padded(g.n);
  s.kp = ((long long)(g.k > 0 ? g.k : 1) + F16X3_TILE_K - 1) / F16X3_TILE_K * F16X3_TILE_K;
  s.lines = pg_fp16x3_lines(s.ml, s.nl, g.batch, g.stride_a, g.stride_b);
  return s;
}

/* Where the split finds op(A)'s rows and op(B)'s columns as the caller
 * stores them (host and device): element p of line i at x[i * line + p *
 * elem]. op(A) = N: A's rows; T (A stored K x M): its columns. op(B) = N:
 * B's columns; T (B stored N x K): its rows. */
struct f16x3_lines {
  long long a_line, a_elem, b_line, b_elem;
};
static __host__ __device__ __forceinline__ f16x3_lines f16x3_lines_of(const pg_layout_args &g) {
  f16x3_lines l;
  l.a_line = g.op_a ? 1 : g.lda;
  l.a_elem = g.op_a ? g.lda : 1;
  l.b_line = g.op_b ? g.ldb : 1;
  l.b_elem = g.op_b ? 1 : g.ldb;
  return l;
}

/* The first kernel: the split of op(A)'s rows and op(B)'s columns, of each
 * matrix of the batch, into the workspace (g.partials, g.ldp = Kp floats a
 * line). */
__global__ void __launch_bounds__(FP16X3_SPLIT_THREADS, FP16X3_SPLIT_MIN_BLOCKS) pg_fp16x3_first_kernel(const pg_layout_args g) {
  const f16x3_shape s = f16x3_shape_of(g);
  const f16x3_lines l = f16x3_lines_of(g);
  uint16_t *const parts = (uint16_t *)g.partials;
  int *const scales = (int *)(g.partials + s.lines * s.kp);
  const long long b0 = pg_fp16x3_b_first(s.ml, s.nl, g.batch, g.stride_a, g.stride_b, 0);
  fp16x3_split job;
  job.a = {g.a, l.a_line, l.a_elem, g.m, (int)s.ml, scales, parts, parts + s.kp, 2 * s.kp,
           g.stride_a != 0 ? g.batch : 1, g.stride_a};
  job.b = {g.b, l.b_line, l.b_elem, g.n, (int)s.nl, scales + b0, parts + b0 * 2 * s.kp,
           parts + b0 * 2 * s.kp + s.kp, 2 * s.kp, g.stride_b != 0 ? g.batch : 1, g.stride_b};
  job.len = g.k;
  job.len_padded = (int)s.kp;
  fp16x3_split_body(job);
}

#ifdef PG_HAVE_WGMMA
#define F16X3_D8(i)                                                                       \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
      "+f"(d[i + 6]), "+f"(d[i + 7])
#define F16X3_D64 F16X3_D8(0), F16X3_D8(8), F16X3_D8(16), F16X3_D8(24), F16X3_D8(32), \
                  F16X3_D8(40), F16X3_D8(48), F16X3_D8(56)

/* d = A (64 x 16 FP16, descriptor da, K-major) * B (16 x 128, descriptor db
 * of B^T, K-major) + (accumulate ? d : 0), FP32 accumulators laid out as
 * wg_mma's. The f16 form's transpose flags 0: both K-major. */
static __device__ __forceinline__ void f16x3_mma(float d[64], uint64_t da, uint64_t db,
                                                 int accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
      "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "
      "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : F16X3_D64
      : "l"(da), "l"(db), "r"(accumulate)
      : "memory");
}
#undef F16X3_D64
#undef F16X3_D8

static_assert(MMA_TILE_M == F16X3_TILE && MMA_TILE_N == F16X3_TILE &&
                  MMA_THREADS == F16X3_CONSUMERS && MMA_STAGE_BYTES <= F16X3_STAGE_BYTES,
              "the 3xTF32 tile is the FP16 form's, by its consumers, in its stages' memory");

/* An output of the FP16 form: its sum times 2^(e_A + e_B), the scales of its
 * row and column (a column past N has none written: its value is not
 * stored). */
struct f16x3_scaled {
  const int *row_scale, *col_scale;
  int n;
  __device__ float operator()(int row, int col, float v) const {
    return col < n ? pg16_scale(v, row_scale[row] + col_scale[col]) : v;
  }
};

/* An output of the 3xTF32 tile that came out NaN, again in FP32 FFMA over
 * all of K: the split's edges (a value past TF32's largest, whose big part
 * is Inf; one too small for TF32, whose big part is 0, against an Inf) give
 * NaN where IEEE's products do not. As 40 wgmma_3xtf32's; K FMAs for each
 * NaN output, nothing where there is none. */
struct f16x3_strict_if_nan {
  const pg_layout_args &g;
  __device__ float operator()(int m, int n, float v) const {
    if (!isnan(v)) return v;
    const f16x3_lines l = f16x3_lines_of(g);
    float s = 0.f;
    for (int k = 0; k < g.k; ++k)
      s = fmaf(g.a[m * l.a_line + k * l.a_elem], g.b[n * l.b_line + k * l.b_elem], s);
    return s;
  }
};

/* A transposed operand's part of a stage, written across: rows r0 .. r0 +
 * J - 1 of the stored matrix, elements c0 .. c0 + I - 1 of each (read
 * along the row, coalesced), element i of row j to dst[i * pitch + j];
 * zeros past its rows and columns. */
static __device__ __forceinline__ void f16x3_across(float *dst, int pitch, int I, int J,
                                                   const float *src, int ld, int r0, int c0,
                                                   int rows, int cols) {
  const int i = threadIdx.x % I;
  for (int j = threadIdx.x / I; j < J; j += MMA_THREADS / I)
    dst[i * pitch + j] =
        r0 + j < rows && c0 + i < cols ? src[(size_t)(r0 + j) * ld + c0 + i] : 0.f;
}

/* A stage of the 3xTF32 tile in 30's layout (A as [m][k], B as [k][n]): an
 * operand stored so by cp.async (mma_cp_async_operand), a transposed one
 * (A stored K x M, B stored N x K) by plain loads written across. */
static __device__ __forceinline__ void f16x3_tf32x3_stage(const pg_layout_args &g, float *stage,
                                                         int m0, int n0, int k0) {
  if (!g.op_a)
    mma_cp_async_operand(stage, MMA_LDA, MMA_A_PIECES_PER_ROW, g.a, g.lda, m0, k0, g.m, g.k,
                         g.vec_a);
  else
    f16x3_across(stage, MMA_LDA, MMA_TILE_M, MMA_TILE_K, g.a, g.lda, k0, m0, g.k, g.m);
  float *const bs = stage + MMA_SMEM_A_FLOATS;
  if (!g.op_b)
    mma_cp_async_operand(bs, MMA_LDB, MMA_B_PIECES_PER_ROW, g.b, g.ldb, k0, n0, g.k, g.n,
                         g.vec_b);
  else
    f16x3_across(bs, MMA_LDB, MMA_TILE_K, MMA_TILE_N, g.b, g.ldb, n0, k0, g.n, g.k);
}

/* A tile past the form's rule, by 3xTF32 on mma.sync from the caller's A
 * and B (30 mma_cp_async's pipeline and warp tiles, its fragments split in
 * registers: kernels/mma_cp_async.cuh), by the two warpgroups that would
 * have multiplied, their own barrier between stages (the third has left);
 * g.stages stages of MMA_STAGE_BYTES in the ring's memory. Inf and NaN
 * reach C through big big alone; a NaN output is computed again in FP32
 * (f16x3_strict_if_nan). */
static __device__ __forceinline__ void f16x3_tf32x3_tile(const pg_layout_args &g, float *smem,
                                                        int m0, int n0) {
  const int stages = g.stages;
  mma_acc acc;
  mma_zero(acc);
  const int k_tiles = (int)(((long long)g.k + MMA_TILE_K - 1) / MMA_TILE_K);
  for (int st = 0; st < stages - 1; ++st) {
    if (st < k_tiles) f16x3_tf32x3_stage(g, smem + st * MMA_STAGE_FLOATS, m0, n0, st * MMA_TILE_K);
    pg_cp_async_commit();
  }
  int read_slot = 0, write_slot = stages - 1;
  for (int kt = 0; kt < k_tiles; ++kt) {
    pg_cp_async_wait(stages - 2);
    /* Publishes tile kt; retires step kt - 1's reads of the next copy's slot. */
    pg_named_barrier_sync(1, F16X3_CONSUMERS);
    const int next = kt + stages - 1;
    if (next < k_tiles)
      f16x3_tf32x3_stage(g, smem + write_slot * MMA_STAGE_FLOATS, m0, n0, next * MMA_TILE_K);
    pg_cp_async_commit();
    /* A stage's products summed apart, then added into FP32 registers (the
     * tensor cores' sums of 32 terms, as the FP16 form's of 64 a stage). */
    mma_acc part;
    mma_zero(part);
    mma_compute_stage<1>(smem + read_slot * MMA_STAGE_FLOATS, part);
#pragma unroll
    for (int mi = 0; mi < MMA_M_FRAGS; ++mi)
#pragma unroll
      for (int ni = 0; ni < MMA_N_FRAGS; ++ni)
#pragma unroll
        for (int r = 0; r < 4; ++r) acc[mi][ni][r] += part[mi][ni][r];
    t128_ring_next(&read_slot, stages);
    t128_ring_next(&write_slot, stages);
  }
  mma_epilogue(g, g.c, m0, n0, acc, f16x3_strict_if_nan{g});
}
#endif

__global__ void __launch_bounds__(F16X3_THREADS, 1)
    pg_wgmma_fp16x3_kernel(const pg_layout_args g, const __grid_constant__ pg_tma_maps maps) {
#ifdef PG_HAVE_WGMMA
  extern __shared__ float4 smem_raw[];
  float *const smem = (float *)pg_tma_smem_base(smem_raw);
  const f16x3_shape s = f16x3_shape_of(g);
  const int *const scales = (const int *)(g.partials + s.lines * s.kp);
  /* Block i: GEMM z = i / tiles of the batch, its tile i % tiles in
   * grouped order (a wave's blocks share F16X3_GROUP_M rows of tiles and a
   * few columns, whose stages L2 then serves more than once), its lines
   * (and their scales) from a_first and b_first on, C at z stride_c. The
   * cluster's other block is i ^ 1 (the grid rounded up to even: the last
   * may have none); the two share B's tile where they read the same lines
   * of B (same_b: the same GEMM's tile column, or another GEMM's where B is
   * shared), the other's rows then at its a_first. */
  const int tiles_m = (int)(s.mp / F16X3_TILE), tiles_n = (int)(s.np / F16X3_TILE);
  const int tiles = tiles_m * tiles_n, all = tiles * g.batch;
  const int i = (int)blockIdx.x, other = i ^ 1, here = i < all;
  const int z = i / tiles, pz = other / tiles;
  int tm = 0, tn = 0, ptm = 0, ptn = 0;
  pg_grouped_tile(i % tiles, tiles_m, tiles_n, F16X3_GROUP_M, &tm, &tn);
  pg_grouped_tile(other % tiles, tiles_m, tiles_n, F16X3_GROUP_M, &ptm, &ptn);
  const int m0 = tm * F16X3_TILE, n0 = tn * F16X3_TILE, pm0 = ptm * F16X3_TILE;
  const long long a_first = pg_fp16x3_a_first(s.ml, g.stride_a, z);
  const long long b_first = pg_fp16x3_b_first(s.ml, s.nl, g.batch, g.stride_a, g.stride_b, z);
  const long long pb_first = pg_fp16x3_b_first(s.ml, s.nl, g.batch, g.stride_a, g.stride_b, pz);
  const int same_b = here && other < all && pb_first + ptn * F16X3_TILE == b_first + n0;
  const int *const rows = scales + a_first, *const cols = scales + b_first;
  const int *const prows = scales + pg_fp16x3_a_first(s.ml, g.stride_a, pz);
  const int stages = g.stages, warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  /* A row or column of the tile the split left alone: the whole tile by
   * 3xTF32, in 40 wgmma_3xtf32's kernel after this one where the plan has
   * it (leave_wide: this block only meets the cluster's barrier), else
   * here on mma.sync (f16x3_tf32x3_tile), once the two warpgroups that
   * would have multiplied have their registers. The copying warpgroup
   * looks at the other tile's rows where the two share B's lines (then the
   * columns are the same): both blocks then OR the same lines, the pair's
   * two tiles', and make the pair or not alike. */
  const int line = (int)(threadIdx.x % F16X3_TILE);
  const int unsplit =
      !here ? 0
      : threadIdx.x < F16X3_CONSUMERS
          ? pg_fp16x3_line_unsplit(rows, cols, g.m, g.n, m0, n0, (int)threadIdx.x)
          : same_b && pg_fp16x3_line_unsplit(prows, cols, g.m, g.n, pm0, n0, line);
  const int fallback = __syncthreads_or(threadIdx.x < F16X3_CONSUMERS && unsplit);
  const int pair_unsplit = __syncthreads_or(unsplit);
  const int paired = same_b && !pair_unsplit;

  /* The ring's barriers, made before the cluster's one barrier, which every
   * thread of both blocks meets whatever their mode: the other block's
   * copies and arrivals find them made. */
  unsigned long long *const full =
      (unsigned long long *)(smem + stages * (F16X3_STAGE_BYTES / 4));
  unsigned long long *const empty = full + stages;
  if (threadIdx.x == 0) {
    for (int st = 0; st < stages; ++st) {
      pg_mbar_init(&full[st], 1);
      pg_mbar_init(&empty[st], paired ? F16X3_PAIR_RELEASES : F16X3_CONSUMERS);
    }
    pg_fence_barrier_init();
    pg_fence_barrier_init_cluster();
  }
  pg_cluster_sync();
  if (!here || (fallback && pg_own<f16x3_own>(g).leave_wide)) return;
  const int k_tiles = (int)(s.kp / F16X3_TILE_K);
  int slot = 0, parity = 0;

  if (warp >= F16X3_CONSUMERS / 32) {
    /* ---- the copies: one lane of the last warpgroup. maps.a is the
     * workspace as rows of Kp floats, h in the first Kp / 2 of a line and
     * l in the rest: a box of 32 floats x 128 lines is one part of a stage
     * (64 FP16 of 128 lines), in the 128-byte swizzle. Paired: B^T's part
     * `rank` into both blocks, the other part coming from the other's
     * producer (its bytes count on this block's full[slot] as they land). ---- */
    pg_setmaxnreg_dec(F16X3_PRODUCER_REGS);
    if (fallback || warp != F16X3_CONSUMERS / 32 || lane != 0) return;
    pg_tma_prefetch_map(&maps.a);
    const unsigned rank = pg_cluster_rank();
    const int low = (int)(s.kp / 2), a_line = (int)a_first + m0, b_line = (int)b_first + n0;
    for (int kt = 0; kt < k_tiles; ++kt) {
      pg_mbar_wait_parity(&empty[slot], parity ^ 1);
      float *const part = smem + slot * (F16X3_STAGE_BYTES / 4);
      const int x = kt * (F16X3_TILE_K / 2);
      pg_mbar_arrive_expect_tx(&full[slot], F16X3_STAGE_BYTES);
      pg_tma_load_2d(part, &maps.a, x, a_line, &full[slot]);
      pg_tma_load_2d(part + F16X3_PART_BYTES / 4, &maps.a, low + x, a_line, &full[slot]);
      if (paired) {
        pg_tma_load_2d_multicast(part + (2 + rank) * (F16X3_PART_BYTES / 4), &maps.a,
                                 (int)rank * low + x, b_line, &full[slot], F16X3_CLUSTER_MASK);
      } else {
        pg_tma_load_2d(part + 2 * F16X3_PART_BYTES / 4, &maps.a, x, b_line, &full[slot]);
        pg_tma_load_2d(part + 3 * F16X3_PART_BYTES / 4, &maps.a, low + x, b_line, &full[slot]);
      }
      parity ^= t128_ring_next(&slot, stages);
    }
    /* Paired: the block stays until both blocks' consumers have released
     * every slot (the waits go on round the ring: one more a slot), so that
     * no arrival from the other block reaches its shared memory after it
     * has gone. The copies into it are all in by then: its own consumers
     * waited for them. */
    if (paired)
      for (int st = 0; st < stages; ++st) {
        pg_mbar_wait_parity(&empty[slot], parity ^ 1);
        parity ^= t128_ring_next(&slot, stages);
      }
    return;
  }

  /* ---- the products: warpgroup wg its 64 rows of the tile. A stage's
   * slot goes back as soon as its products are done, before the sums, so
   * one warpgroup adds while the other's products run. The tensor cores
   * sum sum_stages stages (a period) before the FP32 registers take their
   * sum: within a period, a stage's products are issued behind the one
   * before's, whose slot goes back once they are done (wgmma's wait for
   * all groups but the newest); the period's last waits for all. ---- */
  pg_setmaxnreg_inc(F16X3_CONSUMER_REGS);
  if (fallback) {
    pg_layout_args gz = g; /* GEMM z's operands and C */
    gz.a += (size_t)(g.stride_a != 0 ? z : 0) * g.stride_a;
    gz.b += (size_t)(g.stride_b != 0 ? z : 0) * g.stride_b;
    gz.c += (size_t)z * g.stride_c;
    f16x3_tf32x3_tile(gz, smem, m0, n0);
    return;
  }
  const int wg = warp / 4;
  const unsigned rank = pg_cluster_rank();
  const int period = max(1, pg_own<f16x3_own>(g).sum_stages);
  float hh[64], x[64], sum[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) hh[i] = x[i] = sum[i] = 0.f;
  /* Both waits are on every path (a wait on one branch only would have
   * ptxas serialize every wgmma); the last stage's slot goes back after the
   * period's wait for all. */
  for (int kt0 = 0; kt0 < k_tiles; kt0 += period) {
    const int n = min(period, k_tiles - kt0);
    int held = 0; /* the slot of the stage before, its products maybe running */
    for (int j = 0; j < n; ++j) {
      pg_mbar_wait_parity(&full[slot], parity);
      const float *const stage = smem + slot * (F16X3_STAGE_BYTES / 4);
      /* This warpgroup's 64 rows of A's parts, all 128 rows of B^T's. */
      const uint64_t ah = wg_desc(stage + wg * 64 * 32), al = ah + F16X3_PART_BYTES / 16;
      const uint64_t bh = wg_desc(stage + 2 * F16X3_PART_BYTES / 4), bl = bh + F16X3_PART_BYTES / 16;
      wg_fence();
#pragma unroll
      for (int kk = 0; kk < F16X3_TILE_K / 16; ++kk) { /* 32 bytes a K step: +2 */
        const int more = kk > 0 || j > 0; /* a period's first products start afresh */
        f16x3_mma(hh, ah + 2 * kk, bh + 2 * kk, more);
        f16x3_mma(x, ah + 2 * kk, bl + 2 * kk, more);
        f16x3_mma(x, al + 2 * kk, bh + 2 * kk, 1);
      }
      wg_commit();
      wg_wait<1>(); /* the stage before's products are done */
      /* Paired: one arrival a warp on the slot's barrier in each block (both
       * producers write the slot); a CTA-scope release is enough, the
       * products that read it waited for (pg_mbar_arrive_cluster). */
      if (j > 0) pg_mbar_release_slot(&empty[held], paired, rank);
      held = slot;
      parity ^= t128_ring_next(&slot, stages);
    }
    wg_wait<0>();
    pg_mbar_release_slot(&empty[held], paired, rank);
    wg_fence_acc(hh);
    wg_fence_acc(x);
#pragma unroll
    for (int i = 0; i < 64; ++i) sum[i] += fmaf(0x1p-11f, x[i], hh[i]);
  }

  /* C = alpha 2^(e_A + e_B) sum + beta C (C unread where beta = 0). */
  pg_layout_args gz = g; /* GEMM z's C */
  gz.c += (size_t)z * g.stride_c;
  wg_epilogue<F16X3_TILE>(gz, m0 + 64 * wg, n0, sum, f16x3_scaled{rows, cols, g.n});
#else
  pg_tma_unavailable();
#endif
}

/* The copies' boxes: 32 floats (64 FP16) of 128 lines of the workspace. */
static const pg_tma_boxes f16x3_boxes = {.a_box_k = F16X3_TILE_K / 2, .a_box_m = F16X3_TILE,
                                         .a_swizzle_bytes = 128, .workspace_lines = 1};

/* The split first, into the workspace: its lines of Kp floats (each
 * line's h and l; f16x3_shape), then their scales (ints, in lines of Kp). */
static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  const f16x3_shape s = f16x3_shape_of(*args);
  const pg_tuning own = pg_tuning_with_env(tuning);
  launch->kernel = (const void *)pg_wgmma_fp16x3_kernel;
  /* Each GEMM's tiles in grouped order, the batch's GEMMs one after the
   * other, rounded up to whole clusters of two. */
  const long long tiles = s.np / F16X3_TILE * (s.mp / F16X3_TILE) * args->batch;
  launch->grid_x = (tiles + F16X3_CLUSTER - 1) / F16X3_CLUSTER * F16X3_CLUSTER;
  launch->grid_y = 1;
  launch->cluster_x = F16X3_CLUSTER;
  const long long scale_lines = (s.lines + s.kp - 1) / s.kp;
  const int region = pg_workspace_add(&launch->workspace, s.lines + scale_lines, s.kp);
  launch->views.partials = PG_IN_REGION(region);
  /* Its first kernel as set_first_kernel sets one (copy_operands.cu),
   * with the split's own grid (op(A)'s rows and op(B)'s columns each in the
   * form their strides call for: fp16x3_split_body). */
  launch->first.kernel = (const void *)pg_fp16x3_first_kernel;
  const f16x3_lines l = f16x3_lines_of(*args);
  const long long units = fp16x3_units(s.ml, fp16x3_by_columns(l.a_line, l.a_elem)) *
                              (args->stride_a != 0 ? args->batch : 1) +
                          fp16x3_units(s.nl, fp16x3_by_columns(l.b_line, l.b_elem)) *
                              (args->stride_b != 0 ? args->batch : 1);
  /* A block a unit, or the tuning row's blocks an SM walking them. */
  const long long walkers = (long long)device->sm_count * own.fp16x3_split_blocks_per_sm;
  launch->first.grid_x = fp16x3_split_blocks(walkers > 0 && walkers < units ? walkers : units);
  launch->first.grid_y = 1;
  launch->first.threads = FP16X3_SPLIT_THREADS;
  launch->first.views.partials = PG_IN_REGION(region);
  launch->first.what = "split";
  /* For auto's model: every element of the lines read twice (its line's
   * span, then its parts) and written as two FP16. */
  launch->model.first_bytes =
      (2.0 * sizeof(float) + 2.0 * sizeof(uint16_t)) * args->k *
      (double)pg_fp16x3_lines(args->m, args->n, args->batch, args->stride_a, args->stride_b);
  launch->tma = &f16x3_boxes;
  /* The tiles past the span rule by wgmma_3xtf32 after it, at full speed,
   * where that entry runs alone (pg_then_alone: op(A) = N and both
   * operands' rows of 16 bytes, its split inside); else here, on mma.sync,
   * at a tenth of the speed or less on inputs of wide rows (0.39x cuBLAS
   * at 4095^3, bench/results/products), and a selector leaves the plan
   * out. */
  const int sum_stages = own.fp16x3_sum_stages;
  pg_set_own(args, f16x3_own{0, sum_stages});
  launch->then.entry = "wgmma_3xtf32";
  launch->then.lines_region = region;
  launch->then.lines_offset = (size_t)(s.lines * s.kp) * sizeof(float);
  const f16x3_own leave = {1, sum_stages};
  static_assert(sizeof leave <= sizeof launch->then.own, "the own settings fit");
  memcpy(launch->then.own, &leave, sizeof leave);
}

static size_t smem_bytes(int stages) {
  return pg_tma_ring_smem(stages, F16X3_STAGE_BYTES, WG_STAGE_SYNC_BYTES);
}

/* sm_90a code; the batch's tiles, each GEMM's rounded up to even, fit an
 * int (the grid's x); the workspace's lines are ints (TMA's coordinates,
 * and the first kernel counts them so). */
static pg_status check(const pg_layout_args *g, char *why, size_t why_size) {
  const pg_status arch = wg_check_sm90a(why, why_size);
  if (arch != PG_OK) return arch;
  const f16x3_shape s = f16x3_shape_of(*g);
  const long long tiles = (s.mp / F16X3_TILE) * (s.np / F16X3_TILE) * g->batch;
  if ((tiles + 1) / 2 * 2 > INT_MAX || s.lines + s.lines / s.kp + 1 > INT_MAX / 2) {
    snprintf(why, why_size, "M = %d, N = %d, a batch of %d: past an int of 128 x 128 tiles or "
                            "of the split's lines", g->m, g->n, g->batch);
    return PG_ERR_UNSUPPORTED;
  }
  return PG_OK;
}

/* The TMA members' rules but two: a tile past the span rule runs on
 * mma.sync (HMMA) fed by cp.async (LDGSTS), so those may appear. */
static const pg_sass_rule rules[] = {
    {PG_SM90_UP, PG_MUST, "HGMMA", "the products no longer run on wgmma (the warpgroup MMA)"},
    {PG_SM90_UP, PG_MUST, "WARPGROUP.ARRIVE", "no wgmma.fence before the products"},
    {PG_SM90_UP, PG_MUST, "UTMALDG", "the stages no longer arrive by bulk tensor copy (TMA)"},
    {PG_SM90_UP, PG_MUST, "SYNCS.ARRIVE", "nobody arrives on an mbarrier (expect_tx or release)"},
    {PG_SM90_UP, PG_MUST, "SYNCS.PHASECHK", "nobody waits on an mbarrier (try_wait) any more"},
    {PG_SM90_UP, PG_MUST, "USETMAXREG", "setmaxnreg is gone: the products keep 168 registers"},
    {PG_SM90_UP, PG_MUST, "HMMA", "the fallback tile's 3xTF32 no longer runs on mma.sync"},
    {PG_SM90_UP, PG_MUST, "UTMALDG.2D.MULTICAST", "B's parts no longer go to both blocks (TMA multicast)"},
    {PG_SM90_UP, PG_MUST, "UCGABAR_ARV", "no cluster-wide barrier before the blocks use each other's barriers"},
    {PG_SM8X, PG_MUST, "BPT.TRAP", "the sm_80 build no longer traps: it would silently do nothing"},
};

PG_ENTRY(wgmma_fp16x3) = {
    .info = {.name = "wgmma_fp16x3", .kind = PG_KIND_KERNEL, .precision = PG_PRECISION_EMULATED,
             .technique = "FP32-accurate: three scaled FP16 wgmma products a term",
             .source = PG_FROM_GUIDE, .min_cc = 90, .min_stages = 2,
             .max_stages = F16X3_MAX_STAGES, .default_stages = F16X3_DEFAULT_STAGES,
             .tile_m = F16X3_TILE, .tile_n = F16X3_TILE, .tile_k = F16X3_TILE_K,
             .threads = F16X3_THREADS,
             .description = "FP32-accurate: each row of op(A) and column of op(B) scaled by a power of "
                            "two and split into two FP16 parts (a first kernel), 3 FP16 wgmma "
                            "products a term summed in FP32 registers every stage (or "
                            "fp16x3_sum_stages); a tile whose "
                            "rows or columns span past 2^28 (or hold Inf or NaN) by 3xTF32: "
                            "wgmma_3xtf32's kernel after it where op(A) = N and A's and B's rows "
                            "are 16-byte aligned, else mma.sync in this one; "
                            "TMA producer warp, two consumer warpgroups, clusters of 2 along M "
                            "with B by TMA multicast; every op(A), op(B) (the split reads them as "
                            "stored) and a batch in one launch",
             .layouts = PG_LAYOUT_ANY},
    .smem_bytes = smem_bytes,
    .configure = configure,
    .check = check,
    .kernel = {.symbol = "pg_wgmma_fp16x3_kernel", .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
