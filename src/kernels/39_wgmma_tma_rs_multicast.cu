/* 39 wgmma_tma_rs_multicast — member 7: 36 wgmma_tma_rs launched as
 * clusters of two blocks on neighbouring tiles along N, (tm, 2j) and
 * (tm, 2j + 1), which read the same 256 rows of A. Each block's producer
 * loads half of them (128 rows, 16 KB a stage) with one TMA copy multicast
 * to both blocks of the cluster, and its own 128 columns of B: a block
 * fetches 32 KB a K step from L2 where 36 fetches 48 KB, and the pair reads
 * A once.
 *
 * What the sharing costs is synchronisation across the pair. A stage's
 * full[s] in each block expects the whole 48 KB (its own producer's
 * arrive.expect_tx; the other block's half of A counts its bytes there as
 * it lands). A slot is written in both blocks by both producers, so it may
 * be refilled only when the consumers of both have released it: empty[s]
 * counts 16 arrivals, one from each consumer warp of each block (the
 * release is a plain arrival on its own block's barrier and a remote one,
 * through mapa, on the other's: pg_mbar_arrive_cluster, whose comment says
 * why not .release.cluster; the slot's reads are done by then). The barriers are made before one cluster-wide
 * barrier (barrier.cluster), and a producer waits at the end until both
 * blocks have released every slot, so that no arrival reaches a block that
 * has gone. The pair's tiles are paced by the slower of the two.
 *
 * The grid is the tile pairs in grouped order (WG_RS_GROUP_M rows of pairs
 * at a time), two blocks each; with an odd number of tiles along N the last
 * pair's second block works on a tile past N (zeros, from TMA's bounds) and
 * stores nothing. The kernel is src/kernels/wgmma_rs.cuh's with MULTICAST;
 * the launch sets the cluster dimension (cudaLaunchKernelEx).
 *
 *   pipegemm bench --variant cublas_tf32,wgmma_tma_rs,wgmma_tma_rs_multicast --stages 2-4
 */
#include "kernels/wgmma_rs.cuh"

PG_KERNELS_BEGIN

static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  wg_rs_configure<0, 1>(args, launch);
}

static const pg_sass_rule rules[] = {
    WG_RS_RULES,
    {PG_SM90_UP, PG_MUST, "UTMALDG.2D.MULTICAST", "A's half no longer goes to both blocks (TMA multicast)"},
    {PG_SM90_UP, PG_MUST, "UCGABAR_ARV", "no cluster-wide barrier before the blocks use each other's barriers"},
};

PG_ENTRY(wgmma_tma_rs_multicast) = {
    .info = {.name = "wgmma_tma_rs_multicast", .kind = PG_KIND_KERNEL,
             .precision = PG_PRECISION_TF32,
             .technique = "wgmma_tma_rs in clusters of 2, A loaded by TMA multicast",
             .source = PG_FROM_GUIDE, .min_cc = 90, .min_stages = 2, .max_stages = 4,
             .default_stages = 3, .tile_m = WG_RS_TILE_M, .tile_n = WG_RS_TILE_N,
             .tile_k = WG_TILE_K, .threads = WG_RS_THREADS,
             .description = "wgmma_tma_rs in clusters of 2 along N: each block loads half of the "
                            "pair's A rows by TMA multicast to both"},
    .smem_bytes = wg_rs_smem<0>,
    .configure = configure,
    .check = wg_rs_check,
    .kernel = {.symbol = "pg_wgmma_tma_rs_multicast_kernel",
               .launched = "pg_wgmma_tma_rs_multicast_kernel<2>",
               .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
