/* What pipegemm's own tools ask of the library beyond include/pipegemm.h:
 * the pipegemm command (src/cli/), its measurement session (src/measure/),
 * its adapters to other programs (src/adapters/) and the tests. Not
 * installed, and no promise of stability: it changes with the tools.
 *
 *   - where a variant's kernels are in a binary, and what their SASS must
 *     show (pipegemm inspect, pipegemm profile);
 *   - the trace hooks (pipegemm trace) and the records' layout (trace_records.h);
 *   - auto's candidates on this GPU (pipegemm list);
 *   - the single-warp study's kernels (pipegemm study single-warp);
 *   - the library's per-thread error state, which the tools' own CUDA calls
 *     set too, so that every error reaches the user the same way.
 *
 * Plain C; the kernels (C++) read the SASS rule types from here too. */
#ifndef PG_INTROSPECT_H
#define PG_INTROSPECT_H

#include <stddef.h>
#include <stdint.h>

#include "pipegemm.h"
#include "trace_records.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- a variant's kernels in a binary ----------------------------------------- */

/* One instruction a variant's SASS must show, or must not show, for its
 * mechanism to be what the variant claims (`pipegemm inspect --check`).
 * `opcode` names the instruction and the modifiers it must carry, in any
 * order: "LDGSTS" matches LDGSTS.E.BYPASS.128, "LDG.128" matches
 * LDG.E.128.CONSTANT, "SYNCS.PHASECHK" matches SYNCS.PHASECHK.TRANS64.TRYWAIT,
 * and "DEPBAR" does not match LDGDEPBAR. */
typedef struct {
  int min_sm, max_sm;  /* code for sm_<min_sm>..sm_<max_sm> (0: no bound) */
  int must_appear;     /* 1: at least once; 0: never */
  const char *opcode;
  const char *meaning; /* completes "LDGSTS missing — ..." or "STS present — ..." */
} pg_sass_rule;

/* Where a kernel entry's code is in a binary and what it must show. */
typedef struct {
  /* Symbol stem: the kernel "pg_cp_async_kernel", or every instance
   * "pg_pipeline_block_kernel<N>" of a template. */
  const char *symbol;
  /* The instance launched at the default configuration ("..._kernel<2>"),
   * or NULL when the stem is not a template. */
  const char *launched;
  int dynamic_smem; /* 1: launched with its shared memory per stage count as
                       dynamic shared memory; 0: its shared memory is static */
  const pg_sass_rule *rules;
  int rule_count;
} pg_kernel_spec;

/* A registry entry's kernel; NULL for an entry that is not one of
 * pipegemm's kernels (cublas, auto) or a pointer not into the registry. */
const pg_kernel_spec *pg_variant_kernel(const pg_variant_info *variant);

/* ---- pipegemm trace ---------------------------------------------------------------- */

/* Whether `variant` (a registry entry) has a traced kernel. */
int pg_variant_traced(const pg_variant_info *variant);

/* The buffer a traced launch of `plan` needs to sample `wanted` blocks
 * (spread over the grid with a stride, so that they land on different
 * SMs and in different waves), with room for every event of their K tiles
 * unless that passes PG_TRACE_MAX_BYTES. */
typedef struct {
  pg_trace_header header; /* what to write at the buffer's start */
  int grid_blocks;        /* blocks the plan launches */
  int steps_per_block;    /* K tiles a block computes, at most */
  size_t bytes;
} pg_trace_layout;
pg_status pg_trace_layout_of(const pg_plan *plan, int wanted, pg_trace_layout *layout);

/* Switches `plan`, made by pg_plan_create for a traced variant, to the
 * traced twin of its kernel: the same grid, shared memory and tensor maps,
 * recording into `buffer` (device memory of the layout's size, its header
 * written). PG_ERR_UNSUPPORTED (detail set) for a variant without a traced
 * kernel, a plan that splits its work, or one that only scales C (alpha = 0
 * or K = 0). The plan's launches then record; the caller keeps the buffer
 * alive while they run. */
pg_status pg_plan_trace(pg_plan *plan, pg_trace_header *buffer);

/* ---- auto ---------------------------------------------------------------------------- */

/* A selector's (auto's or auto_tf32's) candidate `index` (0, 1, ...) on
 * the current device, in the order of its tuning table (src/tuning.c),
 * whether this GPU runs it or not: PG_OK with the entry and its stage
 * count; PG_ERR_INVALID_ARG past the last or for an entry that is no
 * selector; PG_ERR_NO_DEVICE without a GPU. */
pg_status pg_auto_candidate(const pg_variant_info *selector, int index,
                            const pg_variant_info **variant, int *stages);

/* ---- the single-warp study ----------------------------------------------------------
 * The single-warp experiment of the "A study on CUDA async memcpy" blog
 * post: C = A * B with M, N <= 32 and a long K, computed by ONE block of ONE
 * warp, so that nothing but the kernel's own pipelining can hide the
 * global-memory latency of each K step (src/kernels/20_single_warp.cu):
 *
 *   reference: per K step, load a column of A and a row of B into shared
 *              memory, __syncthreads, accumulate, __syncthreads;
 *   pipeline:  the same, through a 2-stage block-scoped cuda::pipeline
 *              (pipeline_shared_state in shared memory, cuda::memcpy_async),
 *              so step k + 1's copy is in flight while step k is computed.
 *
 * Not registry variants: they exist for `pipegemm study single-warp`.
 * Row-major, dense or padded (lda >= K, ldb >= N, ldc >= N), device
 * pointers; C = A * B (alpha 1, beta 0: C is only written). M or N = 0 does
 * nothing; K = 0 writes zeros. Both launch asynchronously on `stream` and
 * return PG_OK, PG_ERR_INVALID_ARG (m or n outside 0..32, k < 0, an ld below
 * its row width, a NULL pointer with work to do; nothing launched) or
 * PG_ERR_CUDA (pg_last_cuda_error). */
#define PG_SINGLE_WARP_DIM 32 /* one warp: thread i owns row i of C */
pg_status pg_single_warp_reference(int m, int n, int k, const float *a, int lda,
                                   const float *b, int ldb, float *c, int ldc,
                                   cudaStream_t stream);
pg_status pg_single_warp_pipeline(int m, int n, int k, const float *a, int lda,
                                  const float *b, int ldb, float *c, int ldc,
                                  cudaStream_t stream);

/* ---- the scaled FP16 split (src/kernels/fp16x3_split.cu) ----------------------------
 * The first kernels of the FP16x3 product to come: `lines` lines of `len`
 * floats (element p of line i at x[i * line_stride + p * elem_stride]),
 * each line's scale exponent into scales[i] (PG_FP16X3_UNSPLIT where the
 * span rule of src/kernels/fp16x3.h fails), then its FP16 parts h and l,
 * len_padded of each, at hi + i * pitch and lo + i * pitch (pitch at least
 * len_padded; the GEMM's workspace interleaves them: lo = hi + len_padded,
 * pitch 2 len_padded), zeros in the padding and in lines not split.
 * Device pointers; launched on `stream`. PG_OK, PG_ERR_INVALID_ARG
 * (detail set; nothing launched) or PG_ERR_CUDA. */
pg_status pg_fp16x3_split_lines(const float *x, long long line_stride, long long elem_stride,
                                int lines, int len, int lines_padded, int len_padded,
                                int *scales, uint16_t *hi, uint16_t *lo, long long pitch,
                                cudaStream_t stream);

/* ---- the kernel cache ------------------------------------------------------------
 * How many times the library has asked a GPU about one of its kernels (its
 * image, resources, shared-memory opt-in) in this process: once per
 * (device, kernel) whose answer lasts, for any number of kernels and
 * devices; a test plans every entry twice and holds the second round to no
 * new probe. */
long long pg_kernel_image_probes(void);

/* ---- the library's error state ----------------------------------------------------
 * pg_last_cuda_error() and pg_last_error_detail() belong to the calling
 * thread; the tools' own CUDA calls set them through these, so that a failed
 * cudaMalloc of the measurement session reads as a failed call of the
 * library's. */

/* Records a CUDA error for pg_last_cuda_error() and maps it to a pg_status. */
pg_status pg_status_from_cuda(cudaError_t err);
/* PG_ERR_NO_DEVICE (or PG_ERR_NO_MEMORY) for a failure to reach a device,
 * its reason as the detail: no driver, a driver too old, no GPU. */
pg_status pg_no_device(cudaError_t err);
/* Sets the detail, printf-style; clears it. */
void pg_set_error_detail(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
void pg_clear_error_detail(void);

/* cuBLAS's version as major*10000 + minor*100 + patch, or a negative pg_status. */
int pg_cublas_version(void);

#ifdef __cplusplus
}
#endif
#endif
