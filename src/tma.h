/* The host half of Hopper's bulk tensor copy (src/tma.c): the layout rules
 * and the tensor-map encoding behind the TMA kernels. Plain C so the
 * library's C code and the .cu kernels share it. */
#ifndef PG_TMA_H
#define PG_TMA_H

#include <stddef.h>

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The layout rules of cp.async.bulk.tensor, checked before anything runs:
 * PG_OK, or PG_ERR_UNSUPPORTED with the reason written to `why`. */
pg_status pg_tma_check(const pg_layout_args *args, char *why, size_t why_size);
/* The same for A alone: the wgmma members read B^T from their workspace,
 * which is aligned whatever B is. */
pg_status pg_tma_check_a(const pg_layout_args *args, char *why, size_t why_size);

/* The same for B alone: a kernel that reads A from its workspace (A
 * transposed there by a first kernel) and B where it is. */
pg_status pg_tma_check_b(const pg_layout_args *args, char *why, size_t why_size);

/* 1 where the kernel reads the call's operands as stored, through maps of
 * rank 3 (a matrix of the batch the third coordinate): its boxes say it
 * takes any layout (any_layout) and the call is not op N, N on one GEMM. */
int pg_tma_reads_layout(const pg_layout_args *args, const pg_tma_boxes *boxes);

/* Finds the driver's encoder, once per process (the device probe does it
 * on its own thread, so a failure stays there); its error, if any. */
cudaError_t pg_tma_find_encoder(void);

/* Encodes A's map (with_a) and B's (with_b) with cuTensorMapEncodeTiled
 * (found through cudaGetDriverEntryPointByVersion, so nothing links
 * libcuda): as pg_tma_reads_layout says, A as M x K and B as K x N, or
 * the operands as stored over the batch; the others are left zeroed, for a map encoded at launch on
 * what a first kernel writes (the plan decides). With K = 0 there is
 * nothing to copy and the maps are left zeroed. */
cudaError_t pg_tma_encode(const pg_layout_args *args, const pg_tma_boxes *boxes, int with_a,
                          int with_b, pg_tma_maps *maps);
/* B's map on args->b as B^T (N rows of K, leading dimension args->ldb), in
 * boxes->b_swizzle_bytes (boxes->b_k_major), once the workspace that holds
 * it is there (at launch). */
cudaError_t pg_tma_encode_bt(const pg_layout_args *args, const pg_tma_boxes *boxes,
                             pg_tma_maps *maps);
/* B's map on args->b (K rows of N, leading dimension args->ldb): what
 * pg_tma_encode does for B, and at launch on the copy a first kernel made
 * of it. */
cudaError_t pg_tma_encode_b(const pg_layout_args *args, const pg_tma_boxes *boxes,
                            pg_tma_maps *maps);
/* A's map again, on args->a as `rows` rows of K (leading dimension
 * args->lda): the parts of A that a first kernel wrote into the workspace,
 * one under the other (at launch). */
cudaError_t pg_tma_encode_a_parts(const pg_layout_args *args, const pg_tma_boxes *boxes,
                                  long long rows, pg_tma_maps *maps);

/* A's map on args->partials as `rows` rows of args->ldp floats, every
 * float of each (boxes->workspace_lines: a workspace whose lines hold more
 * than K), at launch. */
cudaError_t pg_tma_encode_lines(const pg_layout_args *args, const pg_tma_boxes *boxes,
                                long long rows, pg_tma_maps *maps);

/* The maps of what a kernel that reads layouts (pg_tma_reads_layout) reads
 * in the workspace, at launch: rank 3 over the batch as the caller's are, a
 * matrix every stride_a or stride_b floats (the views set them: a region's
 * rows over the matrices it holds, src/launch.c). A's region (a_region_rows
 * > 0): rows of K (A's parts, or A transposed), in A's boxes; B's (b_region_rows
 * > 0): rows of K where the kernel reads B K-major (b_k_major) or B is
 * stored N x K (op_b T: a copy as stored), in the boxes of B^T; else rows of
 * N, in B's. A region of one matrix where the stride is 0 or the batch 1. */
cudaError_t pg_tma_encode_views(const pg_layout_args *args, const pg_tma_boxes *boxes,
                                long long a_region_rows, long long b_region_rows,
                                pg_tma_maps *maps);

#ifdef __cplusplus
}
#endif
#endif
