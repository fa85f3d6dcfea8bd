/* 36 wgmma_tma_rs — the warp-specialized TMA pipeline of 35 without the
 * transpose: B stays as it is in memory (N-major) and reaches the tensor
 * cores through registers. TF32 wgmma takes its A operand from registers
 * in any layout, and only its B operand must be K-major in shared memory;
 * so the kernel computes C^T = B^T A^T: wgmma's "A" is B^T (64 columns of
 * C a warpgroup, loaded from shared memory into the fragment registers with
 * LDS), its "B" is A's rows, K-major as they are (the descriptor of 31-35).
 * No workspace and no first kernel: the call is one launch, and B's layout
 * rules are TMA's (16-byte aligned, ldb a multiple of 4), as A's.
 *
 * Tile: 256 (M) x 128 (N) of C, 32 along K, 384 threads: two consumer
 * warpgroups, warpgroup w computing the 256 x 64 of C at columns 64w.. as
 * m64n256k8 products (its D is that block of C^T: 128 accumulators a
 * thread), and the producer warpgroup (one lane issues the copies),
 * setmaxnreg 24 / 240, one block per SM. A stage (48 KB): A [256][32] in
 * the 128-byte swizzle (one box), then B as 4 boxes [32 (K)][32 (N)], each
 * in the same swizzle: element (k, n) of box n / 32 at row k, 16-byte piece
 * ((n % 32) / 4) ^ (k % 8).
 *
 * The fragment reads. Lane (g, t) = (lane / 4, lane % 4) of warp w reads,
 * per K step of 8, rows t and t + 4 of the step (k) at the columns (n) of
 * its fragment rows 16w + g and 16w + g + 8. Which column of C a fragment
 * row is, is the kernel's choice (the epilogue follows it): row
 * 16w + 8h + g is column 32 (w / 2) + 4 p + g % 4 of the warpgroup's 64,
 * with p = 4 (g / 4) + 2 (w % 2) + h. Then a warp's 32 lanes read pieces
 * p ^ t = 4 (g / 4) + ((2 (w % 2) + h) ^ t) at element g % 4: 32 distinct
 * banks, no conflict (k % 8 = t + 4 flips the piece's high bit: the same).
 *
 * A consumer waits for its step before's products (wait_group 0) before it
 * reads the next fragments, releases that step's slot, and issues the
 * step's four products: ptxas serializes every wgmma of a kernel that
 * writes a wgmma's register operands while a group is in flight (C7513,
 * seen with two fragment sets read under the step before's products), so
 * one warpgroup's steps do not overlap; the other warpgroup's products
 * fill the tensor cores meanwhile.
 *
 * The kernel is src/kernels/wgmma_rs.cuh's, one block per tile.
 *
 * Two more differences from 35, each measured in bench/results/tensor-cores/README.md:
 * the epilogue goes through shared memory (a warp then stores 256
 * contiguous bytes of a row of C, where the products' layout gives 4 rows
 * of 16-byte runs), and the grid is one-dimensional in grouped order
 * (WG_RS_GROUP_M rows of tiles at a time, pg_grouped_tile).
 *
 *   pipegemm bench --variant cublas_tf32,wgmma_tma_coop_n256,wgmma_tma_rs --stages 2-4
 */
#include "kernels/wgmma_rs.cuh"

PG_KERNELS_BEGIN

/* Op N, N on one GEMM: the study's kernel; else the one that takes any
 * layout and a batch (wgmma_rs.cuh, ANY): pg_other_layout. */

static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  if (pg_other_layout(args))
    wg_rs_configure_any<1>(args, launch);
  else
    wg_rs_configure<0, 0>(args, launch);
}

static pg_status check(const pg_layout_args *g, char *why, size_t why_size) {
  return pg_other_layout(g) ? wg_rs_check_any(g, why, why_size) : wg_rs_check(g, why, why_size);
}

static const pg_sass_rule rules[] = {WG_RS_RULES};

PG_ENTRY(wgmma_tma_rs) = {
    .info = {.name = "wgmma_tma_rs", .kind = PG_KIND_KERNEL, .precision = PG_PRECISION_TF32,
             .technique = "wgmma TF32 with B^T from registers: no transpose",
             .source = PG_FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 4,
             .default_stages = 3, .tile_m = WG_RS_TILE_M, .tile_n = WG_RS_TILE_N,
             .tile_k = WG_TILE_K, .threads = WG_RS_THREADS,
             .description = "wgmma TF32 with B^T from registers (C^T = B^T A^T, no transpose): "
                            "TMA producer + two consumer warpgroups, 256x128 tile, STAGES "
                            "buffers; any op(B) and batch read in place (rank-3 maps), op(A) = T "
                            "through A^T in a first kernel",
             .layouts = PG_LAYOUT_ANY},
    .smem_bytes = wg_rs_smem<0>,
    .configure = configure,
    .check = check,
    .kernel = {.symbol = "pg_wgmma_tma_rs_kernel", .launched = "pg_wgmma_tma_rs_kernel<0>",
               .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
