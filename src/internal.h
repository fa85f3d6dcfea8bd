/* Internal to libpipegemm: the registry entry and the launch contract shared
 * by the C dispatcher and the extern "C" launchers in src/kernels/. */
#ifndef PG_INTERNAL_H
#define PG_INTERNAL_H

#include "pipegemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Everything a launcher needs, already checked by pg_sgemm. */
typedef struct {
  int m, n, k;
  float alpha, beta;
  const float *a;
  const float *b;
  float *c;
  int lda, ldb, ldc;
  int vec_a; /* 1: A rows may be read as 16-byte vectors (lda % 4 == 0, a 16-byte aligned) */
  int vec_b; /* 1: same for B */
  int stages;
  size_t smem_bytes; /* dynamic shared memory the launcher must request */
  int producer_warps; /* warp_specialized: warps that only copy (PG_WS_PRODUCER_WARPS) */
  int group_m;        /* tma_ws: tile rows per group of the tile order (its launcher sets it) */
  int cc, sm_count;   /* the device's compute capability (major*10+minor) and SMs */
  cudaStream_t stream;
  /* Non-NULL: report the kernel that would run into *query, launch nothing.
   * The launcher picks its kernel once, for both uses. */
  pg_kernel_facts *query;
} pg_gemm_args;

/* warp_specialized's producer warps: 2 measured 3.95 ms against 4.46 for 1
 * at 4096^3 on an H200 (bench/results/h200-mechanisms.md). */
#define PG_WS_PRODUCER_WARPS 2

typedef cudaError_t (*pg_launch_fn)(const pg_gemm_args *args);
/* A layout check a variant needs beyond pg_sgemm's own: PG_OK, or an error
 * with its reason written to `why`. */
typedef pg_status (*pg_check_fn)(const pg_gemm_args *args, char *why, size_t why_size);
typedef size_t (*pg_smem_fn)(int stages);

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

/* Where a variant's kernels are in a binary, how the default configuration
 * launches one, and the instructions that prove its mechanism. */
typedef struct {
  /* Symbol stem: the kernel "pg_cp_async_kernel", or every instance
   * "pg_pipeline_block_kernel<N>" of a template. NULL: none of ours (cublas). */
  const char *kernel;
  /* The instance launched at the default configuration ("..._kernel<2>"),
   * or NULL when the stem is not a template. */
  const char *launched;
  int launch_threads; /* threads per block of that launch */
  int dynamic_smem;   /* 1: the launcher asks for smem_bytes(stages) as dynamic
                         shared memory; 0: the kernel's shared memory is static */
  const pg_sass_rule *rules;
  int rule_count;
} pg_kernel_spec;

typedef struct {
  pg_variant_info info;
  pg_smem_fn smem_bytes; /* per block, for an allowed stage count */
  pg_launch_fn launch;   /* NULL for cublas, which pg_sgemm calls itself */
  pg_kernel_spec kernel;
  pg_check_fn check; /* NULL: every layout pg_sgemm accepts runs */
  int grid_y_tiles;  /* 1: the launch puts M's tiles on grid y (at most 65535) */
} pg_variant_entry;

/* The registry (src/registry.c). */
extern const pg_variant_entry pg_registry[];
extern const int pg_registry_count;
const pg_variant_entry *pg_entry_of(const pg_variant_info *info);

/* cuBLAS strict FP32 (src/cublas.c). */
pg_status pg_cublas_sgemm(const pg_gemm_args *args);
/* cuBLAS version as major*10000 + minor*100 + patch, or a negative pg_status. */
int pg_cublas_version(void);

/* Sets the text pg_last_error_detail() returns on this thread ("" clears). */
void pg_set_error_detail(const char *text);

/* Records a CUDA error for pg_last_cuda_error() and maps it to a pg_status. */
pg_status pg_status_from_cuda(cudaError_t err);

/* Every launcher ends here (src/kernels/launch.cu): raises the dynamic
 * shared-memory limit above 48 KB when needed, then launches `kernel` (whose
 * one parameter is a pg_gemm_args by value) or, with args->query, fills it. */
cudaError_t pg_launch_kernel(const void *kernel, dim3 grid, int threads,
                             size_t dynamic_smem, const pg_gemm_args *args);
/* The same for a kernel with a second parameter (the TMA kernels' tensor
 * maps): `second` points to it. */
cudaError_t pg_launch_kernel_with(const void *kernel, dim3 grid, int threads,
                                  size_t dynamic_smem, const pg_gemm_args *args,
                                  const void *second);

/* Launchers, one per file in src/kernels/, in study order. */
cudaError_t pg_launch_tiled32(const pg_gemm_args *args);
cudaError_t pg_launch_tiled32_db(const pg_gemm_args *args);
cudaError_t pg_launch_baseline(const pg_gemm_args *args);
cudaError_t pg_launch_pingpong(const pg_gemm_args *args);
cudaError_t pg_launch_cp_async(const pg_gemm_args *args);
cudaError_t pg_launch_pipeline_thread(const pg_gemm_args *args);
cudaError_t pg_launch_pipeline_block(const pg_gemm_args *args);
cudaError_t pg_launch_barrier(const pg_gemm_args *args);
cudaError_t pg_launch_mbarrier(const pg_gemm_args *args);
cudaError_t pg_launch_warp_specialized(const pg_gemm_args *args);
cudaError_t pg_launch_tma(const pg_gemm_args *args);
cudaError_t pg_launch_tma_ws(const pg_gemm_args *args);

#ifdef __cplusplus
}
#endif
#endif
