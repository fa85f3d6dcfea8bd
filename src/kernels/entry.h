/* How a kernel file declares its registry entries (src/variants.h lists
 * them): each defines
 *
 *   PG_ENTRY(name) = {.info = {...}, .smem_bytes = ..., .configure = ...,
 *                     .kernel = {.symbol = ..., PG_RULES(rules)}};
 *
 * beside the kernel it describes: what the variant is and where it comes
 * from, its stage counts and tile, its shared memory per stage count, the
 * function that configures its launch, and what its SASS must show.
 *
 * The traced twin. The files marked TRACED in src/variants.h are compiled a
 * second time with PG_TRACE defined, which turns on their pipeline marks
 * (kernels/trace.cuh). In that build PG_ENTRY(name) defines
 * pg_entry_<name>_traced instead, and PG_KERNELS_BEGIN / PG_KERNELS_END put
 * everything between them, kernels included, in the namespace pg_traced:
 * both builds link into one library, and every traced kernel's name tells
 * it from its timed twin (pipegemm inspect and Nsight Compute find kernels
 * by name). A kernel file, and a header that defines kernels, wraps what it
 * defines in the two, after its #includes. */
#ifndef PG_KERNELS_ENTRY_H
#define PG_KERNELS_ENTRY_H

#include <string.h>

#include <type_traits>

#include "internal.h"

#ifdef PG_TRACE
#define PG_ENTRY(name) extern "C" const pg_variant_entry pg_entry_##name##_traced
#define PG_KERNELS_BEGIN namespace pg_traced {
#define PG_KERNELS_END }
#else
#define PG_ENTRY(name) extern "C" const pg_variant_entry pg_entry_##name
#define PG_KERNELS_BEGIN
#define PG_KERNELS_END
#endif

/* The sources, by title. */
#define PG_FROM_STUDY "CUDA Kernel Study: Pipelining"
#define PG_FROM_GUIDE "Software Pipelining and Double Buffering"
#define PG_FROM_BLOG "A study on CUDA async memcpy"

/* ---- SASS rules (`pipegemm inspect --check`) ------------------------------
 * Written from the SASS that nvcc 13.0 emits for sm_80 and sm_90 (the counts
 * are in docs/inspect.md). sm_80 has no mbarrier wait instruction
 * (test_wait is a plain LDS of the barrier), so there the arrive
 * (ATOMS.ARRIVE) is an mbarrier's witness; sm_90 shows SYNCS.* for both. */
#define PG_ANY_SM 0, 0
#define PG_SM8X 80, 89
#define PG_SM90_UP 90, 0
#define PG_MUST 1
#define PG_NEVER 0
#define PG_RULES(array) .rules = array, .rule_count = (int)(sizeof array / sizeof array[0])

/* The layout of a kernel's argument, whichever its type: a kernel of one
 * row-major GEMM (pg_gemm_args) reads op N, N and one GEMM; a kernel of
 * other layouts (pg_layout_args) the call's. So one body serves both, its
 * NN instance on the 128 bytes of pg_gemm_args (internal.h). */
static __host__ __device__ __forceinline__ int pg_op_a(const pg_gemm_args &) { return 0; }
static __host__ __device__ __forceinline__ int pg_op_b(const pg_gemm_args &) { return 0; }
static __host__ __device__ __forceinline__ int pg_batch(const pg_gemm_args &) { return 1; }
static __host__ __device__ __forceinline__ long long pg_stride_a(const pg_gemm_args &) { return 0; }
static __host__ __device__ __forceinline__ long long pg_stride_b(const pg_gemm_args &) { return 0; }
static __host__ __device__ __forceinline__ long long pg_stride_c(const pg_gemm_args &) { return 0; }
static __host__ __device__ __forceinline__ int pg_op_a(const pg_layout_args &g) { return g.op_a; }
static __host__ __device__ __forceinline__ int pg_op_b(const pg_layout_args &g) { return g.op_b; }
static __host__ __device__ __forceinline__ int pg_batch(const pg_layout_args &g) { return g.batch; }
static __host__ __device__ __forceinline__ long long pg_stride_a(const pg_layout_args &g) {
  return g.stride_a;
}
static __host__ __device__ __forceinline__ long long pg_stride_b(const pg_layout_args &g) {
  return g.stride_b;
}
static __host__ __device__ __forceinline__ long long pg_stride_c(const pg_layout_args &g) {
  return g.stride_c;
}

/* An entry's own settings (pg_gemm_args.own): a struct T of its kernel
 * file, read by value on either side (a copy the compiler reads straight
 * from the parameter) and written by its configure function. */
template <typename T> static __host__ __device__ __forceinline__ T pg_own(const pg_gemm_args &g) {
  static_assert(sizeof(T) <= sizeof g.own && alignof(T) <= alignof(int) &&
                    std::is_trivially_copyable<T>::value,
                "an entry's own settings fit pg_gemm_args.own");
  T own;
  memcpy(&own, g.own, sizeof own);
  return own;
}
template <typename T> static __host__ __forceinline__ void pg_set_own(pg_gemm_args *g, const T &own) {
  static_assert(sizeof(T) <= sizeof g->own && std::is_trivially_copyable<T>::value,
                "an entry's own settings fit pg_gemm_args.own");
  memcpy(g->own, &own, sizeof own);
}

/* An epilogue's accumulator as it is (the default of the epilogues' `fix`:
 * wg_epilogue, mma_epilogue). */
struct pg_keep {
  __device__ float operator()(int, int, float v) const { return v; }
};

#define PG_STRINGIFY_(x) #x
#define PG_STRINGIFY(x) PG_STRINGIFY_(x)

#endif
