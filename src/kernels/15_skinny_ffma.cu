/* 15 skinny_ffma — strict FP32 GEMM where one side of C is short (M or N
 * of a few): the problem is then a few matrix-vector products, bound by
 * reading the large operand, which tiles of 64 or 128 rows would mostly
 * spend on padding. The large operand is streamed once a chunk of the short
 * side, straight from global memory (16-byte loads where the layout allows,
 * many in flight a thread, evict-first where one chunk of the short side
 * reads it: read once, its lines leave L2 before others', which took the
 * GEMV at 1 x 4096 x 4096 from 25.4 to 22.4 us on the H200 behind bench's
 * L2 flush), the small one in shared memory or beside it, FFMA in a fixed
 * order, so that a call gives the same bits on every run. Its source, by
 * title (the registry's): "Software Pipelining and Double Buffering".
 *
 * One entry, six forms, each in a file of its own over what they share
 * (skinny.cuh: one kernel template for all, the work of a block, the
 * split of K and the cluster sum, the stores), in study order:
 *   16_skinny_split.cu  ROWS (M <= N, chunks of 1-16 rows) and COLS (M > N,
 *                       chunks of 1-8 columns): the short operand in shared
 *                       memory, K split into short ranges to fill the GPU,
 *                       added up by a second kernel or, where it pays, in a
 *                       cluster of their blocks. Any shape and layout.
 *   17_skinny_ring.cu   RING (N of 1-3) and BAND (N of 4-8): a block rows
 *                       of A over all of K, each lane's 16-byte copies a
 *                       step ahead in a cp.async ring (BAND: each warp's
 *                       ring holds its step of B beside A's).
 *   18_skinny_ring_rows.cu  RING ROWS (M of 1-8): the ring turned round, a
 *                       block 32 columns of B over all of K.
 *   19_skinny_gemv.cu   GEMV (M of 1-4 against a long N): one kernel, K not
 *                       split between blocks; one row against B's rows off
 *                       16 bytes in aligned 16-byte loads, the rows' four
 *                       shifts summed apart.
 *   22_skinny_dot.cu    DOT (a short side of 1-8 at another layout, where
 *                       the long operand's rows run along K: op(B) = T for
 *                       a short M, op(A) = N for a short N; any batch):
 *                       dot products of long rows with the short ones
 *                       staged in shared memory. The other layouts of a
 *                       short side are refused (check).
 * The selector (configure, below) asks them in this order and takes the
 * first whose rules the call meets: RING, BAND, RING ROWS, GEMV; the split
 * form of the short side takes the rest (and on a GPU of 99 KiB of shared
 * memory a block, sm_86 and sm_89, the shapes of the forms whose rings do
 * not fit).
 *
 * auto's model of it (the launch's speed_share): its form's rate at a full
 * chunk (the tuning's skinny_rate_percent, one a form), times the short
 * side over its chunks' width, a chunk after the first at a share of the
 * first's cost, the whole under a cap (src/tuning.h; the BAND form past 4
 * columns the tuning's skinny_ring_percent). The registry's tile is the
 * split forms' widest chunks (16 rows, 8 columns) and K's split unit.
 * Measured on the H200: bench/results/short-sides.
 *
 *   pipegemm bench --shapes bench/shapes/skinny.txt --variant cublas,auto,skinny_ffma
 */
#include <stdio.h>

#include "kernels/skinny.cuh"

PG_KERNELS_BEGIN

/* The forms in order (skinny.cuh): the split form of the short side sets
 * the launch and auto's model, the others take the call where it meets
 * their rules, and where none does the split form splits K. */
static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  sk_shape shape;
  sk_split_launch(args, tuning, launch, &shape);
  /* Another layout: the DOT form, where it takes it (else skinny_check
   * refuses the call), auto's model as the split form's of the side. */
  if (pg_other_layout(args)) {
    sk_dot_launch(args, launch);
    return;
  }
  if (sk_ring_launch(args, device, launch, &shape) ||
      sk_band_launch(args, device, tuning, launch, &shape) ||
      sk_ring_rows_launch(args, device, tuning, launch, &shape) ||
      sk_gemv_launch(args, device, launch, &shape))
    return;
  sk_split_k(args, device, tuning, launch, &shape);
}

/* Shared memory a block, the most of the forms every GPU of the entry
 * runs. The RING ROWS and BAND forms hold theirs as dynamic shared memory
 * (66-108 KiB) and run only where the GPU allows a block that much
 * (configure): on a GPU of 99 KiB a block (sm_86, sm_89) the other forms
 * take their shapes. */
static size_t smem_bytes(int stages) {
  (void)stages;
  const size_t most = sk_split_smem(), ring = sk_ring_smem_most();
  return most > ring ? most : ring;
}

/* Op N, N on one GEMM, or the DOT form's layouts (22_skinny_dot.cu). */
static pg_status check(const pg_layout_args *args, char *why, size_t why_size) {
  if (!pg_other_layout(args) || sk_dot_side(args) != 0) return PG_OK;
  snprintf(why, why_size,
           "skinny_ffma takes op N, N on one GEMM, or a short side of 1 to %d whose long "
           "operand runs along K: op(B) = T for a short M, op(A) = N for a short N",
           SKD_MAX_SHORT);
  return PG_ERR_UNSUPPORTED;
}

static const pg_sass_rule rules[] = {
    {PG_ANY_SM, PG_MUST, "FFMA", "the products are no longer FP32 FMAs"},
    {PG_ANY_SM, PG_MUST, "LDS", "no operand comes from shared memory any more (the short one; the RING form's copies of the long one)"},
    {PG_ANY_SM, PG_NEVER, "HMMA", "tensor-core products in a strict FP32 entry"},
};

PG_ENTRY(skinny_ffma) = {
    .info = {.name = "skinny_ffma", .kind = PG_KIND_KERNEL,
             .technique = "a short M or N: the long operand streamed once, FFMA",
             .source = PG_FROM_GUIDE, .min_cc = 80, .min_stages = 1, .max_stages = 1,
             .default_stages = 1, .tile_m = SK_ROWS_MAX_CHUNK, .tile_n = SK_COLS_MAX_CHUNK,
             .tile_k = SK_SPLIT_K, .threads = SK_THREADS,
             .description = "a short side (M or N up to a few dozen): the long operand streamed "
                            "once a chunk of the short side (1-16 rows, 1-8 columns), many "
                            "16-byte loads in flight a thread, the short one in shared memory, "
                            "FFMA, K split into short ranges to fill the GPU, added up by a "
                            "second kernel or, where it pays, in a cluster of their blocks; 1-4 "
                            "rows against a long N a GEMV of one kernel, K not split between "
                            "blocks (one row against B's rows off 16 bytes in aligned 16-byte "
                            "loads, the rows' four shifts summed apart); 1-3 columns against many "
                            "rows one kernel too, each lane's 16-byte copies in a cp.async ring "
                            "of its own; 4-8 columns a block 16 rows of A over all of K, each "
                            "warp's ring holding its step of B beside A's; 1-8 rows the ring "
                            "turned round, a block 32 columns of B over all of K; at another layout, a short side "
                            "of 1-8 whose long operand runs along K, dot products of its rows "
                            "with the short ones staged in shared memory",
             .layouts = PG_LAYOUT_SOME},
    .smem_bytes = smem_bytes,
    .configure = configure,
    .check = check,
    .kernel = {.symbol = "pg_skinny_kernel", .launched = "pg_skinny_kernel<8, 0, 1, 0>",
               PG_RULES(rules)},
};

PG_KERNELS_END
