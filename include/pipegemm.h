/*
 * pipegemm — software pipelining in FP32 GEMM, one variant per technique.
 *
 * Row-major C = alpha * A * B + beta * C on device pointers:
 *   A is M x K with lda >= max(1, K), B is K x N with ldb >= max(1, N),
 *   C is M x N with ldc >= max(1, N) (the BLAS rule for row-major storage:
 *   a leading dimension is at least the row width, and never below 1).
 * Every variant accepts any M, N, K >= 0. M or N = 0 does nothing. As in
 * BLAS, alpha = 0 or K = 0 reads neither A nor B (a NaN or Inf in them does
 * not reach C) and computes C = beta * C: every kernel entry then launches
 * one small kernel that scales C instead of its own. C is not read when
 * beta == 0 (it is set to zeros when alpha = 0 too).
 *
 * Out of device memory: a call that cannot load a kernel's code onto the
 * GPU, get its workspace, or make cuBLAS's handle returns PG_ERR_NO_MEMORY,
 * with pg_last_error_detail() naming what it was allocating (and the bytes,
 * where the library knows them), and leaves C and the caller's CUDA error
 * state as they were. Nothing that failed for want of memory is remembered:
 * the same call succeeds once the memory is back. A kernel's code is loaded
 * onto the GPU (at its first use) only while 16 MiB of device memory are
 * free, since a load that runs out midway would leave that kernel unusable
 * for the life of the process.
 *
 * Errors are negative pg_status codes. The library never prints and never
 * exits; a rejected call leaves C untouched, and pg_last_error_detail() says
 * which argument broke which rule. Launches are asynchronous on the given
 * stream: an error raised while a kernel runs surfaces at the next
 * synchronising call, as with any CUDA library.
 *
 * CUDA's error state: a call that returns PG_OK leaves the runtime's
 * per-thread error (cudaPeekAtLastError) as it found it. The library asks the
 * GPU what it can run once per device, on a short-lived thread of its own,
 * so a failed probe never lands in the caller's error slot, and an error the
 * caller had pending before the call is still pending after it.
 *
 * Threads: every function may be called from several host threads at once.
 * Per-thread state: pg_last_cuda_error() and pg_last_error_detail().
 *
 * CUDA graphs: every variant can be captured into a graph (any capture
 * mode), the first call of the process included; replaying the graph repeats
 * the GEMM on the pointers of the captured call.
 *
 * Linking: libpipegemm (static or shared), CUDA's runtime and cuBLAS; the
 * static library also needs the C++ runtime (libstdc++). The CMake package
 * (find_package(pipegemm), target pipegemm::pipegemm) and pkg-config
 * (`pkg-config --libs pipegemm`) carry all of that.
 */
#ifndef PIPEGEMM_H
#define PIPEGEMM_H

#include <stddef.h>
#include <cuda_runtime_api.h>

/* The version of this header; pg_version() gives the library's. The three
 * numbers are the only place it is written (CMake reads them too).
 *
 * Binary compatibility (docs/api.md, "Versions and the ABI"): while the
 * major version is 0, each minor version is its own ABI, and the shared
 * library's soname says which (libpipegemm.so.0.5); patch releases keep it.
 * Within one soname, functions are only added, and a struct the caller
 * allocates for the library to fill (pg_plan_info) starts with its size,
 * which the caller sets, so that it can grow at its end: the library never
 * writes past the size it is given. pg_variant_info, which the library
 * owns and hands out by pointer, may grow at its end. */
#define PIPEGEMM_VERSION_MAJOR 0
#define PIPEGEMM_VERSION_MINOR 5
#define PIPEGEMM_VERSION_PATCH 0
#define PIPEGEMM_VERSION                                                          \
  (PIPEGEMM_VERSION_MAJOR * 10000 + PIPEGEMM_VERSION_MINOR * 100 + PIPEGEMM_VERSION_PATCH)
#define PIPEGEMM_STRING_(x) #x
#define PIPEGEMM_XSTRING_(x) PIPEGEMM_STRING_(x)
#define PIPEGEMM_VERSION_STRING                                                   \
  PIPEGEMM_XSTRING_(PIPEGEMM_VERSION_MAJOR) "." PIPEGEMM_XSTRING_(PIPEGEMM_VERSION_MINOR) "." \
  PIPEGEMM_XSTRING_(PIPEGEMM_VERSION_PATCH)

/* What the shared library exports: the functions below and nothing else. */
#if defined(__GNUC__) || defined(__clang__)
#define PG_API __attribute__((visibility("default")))
#else
#define PG_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, major*10000 + minor*100 + patch, and as text. */
PG_API int pg_version(void);
PG_API const char *pg_version_string(void);

/* One table of status codes: X(name, value, message). */
#define PG_STATUS_TABLE(X)                                                     \
  X(PG_OK, 0, "success")                                                       \
  X(PG_ERR_INVALID_ARG, -1, "invalid argument")                                \
  X(PG_ERR_UNKNOWN_VARIANT, -2, "unknown variant name")                        \
  X(PG_ERR_STAGES, -3, "stage count not allowed for this variant")             \
  X(PG_ERR_SMEM, -4, "shared memory needed exceeds what this GPU allows per block") \
  X(PG_ERR_ARCH, -5, "variant cannot run on this GPU's architecture")          \
  X(PG_ERR_UNSUPPORTED, -6, "layout not supported by this variant")            \
  X(PG_ERR_NO_DEVICE, -7, "no usable CUDA device")                             \
  X(PG_ERR_CUDA, -8, "CUDA runtime error")                                     \
  X(PG_ERR_CUBLAS, -9, "cuBLAS error")                                         \
  X(PG_ERR_NO_MEMORY, -10, "out of memory")

typedef enum {
#define PG_STATUS_ENUM_(name, value, message) name = value,
  PG_STATUS_TABLE(PG_STATUS_ENUM_)
#undef PG_STATUS_ENUM_
} pg_status;

/* Static strings; never NULL ("unknown status" for a value not in the table). */
PG_API const char *pg_strerror(pg_status status);
PG_API const char *pg_status_name(pg_status status);

/* The CUDA error behind the last PG_ERR_CUDA / PG_ERR_NO_DEVICE /
 * PG_ERR_NO_MEMORY / PG_ERR_ARCH returned on this thread (cudaSuccess if
 * none). */
PG_API cudaError_t pg_last_cuda_error(void);

/* Why the last call on this thread failed, in one line, where the status
 * alone does not say: which argument broke which rule (PG_ERR_INVALID_ARG,
 * "ldb = 7 is below max(1, n) = 8: B's rows are n = 8 floats apart at
 * least"), which layout rule a PG_ERR_UNSUPPORTED broke, what a PG_ERR_ARCH
 * or PG_ERR_SMEM lacks, or why there is no device (no driver, a driver too
 * old, no GPU). Every call that returns a pg_status sets it or, returning
 * PG_OK, clears it (""); the functions that return no status (names,
 * strings, the registry's lookups, pg_plan_destroy, pg_shutdown) leave it
 * as it was, so that pg_strerror(st) may be called before it. The string
 * belongs to the thread and stays valid until its next pipegemm call. */
PG_API const char *pg_last_error_detail(void);

/* What a registry entry is. */
typedef enum {
  PG_KIND_KERNEL = 0,   /* one of pipegemm's kernels */
  PG_KIND_LIBRARY = 1,  /* another library's GEMM, run as the reference (cuBLAS) */
  PG_KIND_SELECTOR = 2, /* runs another entry, chosen per call (auto) */
} pg_variant_kind;

/* "kernel", "library reference", "selector"; never NULL. */
PG_API const char *pg_kind_name(pg_variant_kind kind);

/* What an entry's arithmetic is, and so which error bound its results are
 * held to (docs/measuring.md, "How a row is verified"). */
typedef enum {
  /* IEEE FP32: FFMA, and cuBLAS with CUBLAS_COMPUTE_32F (no TF32). Error
   * within (8 + sqrt(K)) * 2^-24 * sum |alpha a b| (+ |beta c|). */
  PG_PRECISION_STRICT = 0,
  /* FP32-accurate on the tensor cores (several low-precision products per
   * term: wgmma_3xtf32's three TF32 products): held to the strict bound,
   * though not bitwise IEEE (another order and rounding of the same sum).
   * NaN and Inf reach C as in FP32 arithmetic. Its limits: where |a| or |b|
   * is below about 2^-115 the operand's small part falls below FP32's
   * smallest normal and the term keeps little more than TF32's accuracy
   * (measured: 5-16x strict FP32's error with A near 2^-126); a finite
   * |x| >= 2^128 (1 - 2^-12) rounds to an infinite TF32 part; an output
   * that comes out NaN is computed again with FFMA (K a NaN output: slow
   * where many rows of A or columns of B hold NaN or Inf). A call may use
   * workspace from the library's pool (A's split parts where N > 512 or a
   * layout TMA cannot read, and a split K's partial sums), stream-ordered
   * as every workspace is. The auto_emulated selector (the fastest
   * FP32-accurate entry: emulated or strict) takes these entries.
   * bench/results/emulated/README.md. */
  PG_PRECISION_EMULATED = 1,
  /* One TF32 product per term on the tensor cores (10-bit mantissas in,
   * FP32 sums): error within (2^-9 + 2^-20 + (8 + sqrt(K)) * 2^-24) times
   * the same sum, whether the operands are rounded or truncated to TF32. */
  PG_PRECISION_TF32 = 2,
} pg_precision;

/* "strict", "emulated", "tf32"; never NULL. */
PG_API const char *pg_precision_name(pg_precision precision);

/* Description of one variant. Strings are static; the registry owns them. */
typedef struct {
  const char *name;      /* stable name, e.g. "cp_async" */
  pg_variant_kind kind;
  pg_precision precision; /* a selector's is that of every entry it picks */
  const char *technique; /* one short line (at most 60 characters): how
                            global->shared latency is hidden */
  /* The title of the write-up the variant comes from ("CUDA Kernel Study:
   * Pipelining"; two titles joined by "; "), or "" for none. */
  const char *source;
  int min_cc;            /* minimum compute capability, major*10+minor */
  int min_stages;        /* allowed stage counts: min_stages..max_stages; */
  int max_stages;        /* all 0 for a selector, which runs another entry's */
  int default_stages;
  int tile_m, tile_n, tile_k; /* block tile (0 when not one of ours) */
  int threads;                /* threads per block it launches (0: not ours) */
  /* The technique at length (which forms it has, where it runs them), or
   * NULL where the one line says it all. */
  const char *description;
  /* The layouts it takes (pg_gemm_desc): PG_LAYOUT_NN alone, all four op
   * combinations and batches (PG_LAYOUT_ANY), or some (PG_LAYOUT_SOME). */
  int layouts;
} pg_variant_info;

/* pg_variant_info.layouts: op N, N and one GEMM (a study kernel), every
 * combination of op(A), op(B) and any batch, or op N, N and some others
 * (skinny_ffma: a short side whose long operand runs along K); such an
 * entry refuses the rest with PG_ERR_UNSUPPORTED and its reason. */
#define PG_LAYOUT_NN 0
#define PG_LAYOUT_ANY 1
#define PG_LAYOUT_SOME 2

/* Registry: indexes 0..pg_variant_count()-1, in study order. */
PG_API int pg_variant_count(void);
PG_API const pg_variant_info *pg_variant_at(int index);           /* NULL if out of range */
PG_API const pg_variant_info *pg_variant_find(const char *name);  /* NULL if unknown */

/* The stage count `stages` means for `variant` (0: its default): PG_OK with
 * it in *resolved (which may be NULL); PG_ERR_STAGES, with the allowed range
 * in pg_last_error_detail(), when the variant does not take it;
 * PG_ERR_INVALID_ARG for a pointer that is no registry entry. Does not touch
 * the GPU. */
PG_API pg_status pg_variant_stages(const pg_variant_info *variant, int stages, int *resolved);

/* Shared memory per block for `stages` (0 = default). PG_ERR_STAGES if the
 * stage count is not allowed. Does not touch the GPU. */
PG_API pg_status pg_variant_smem_bytes(const pg_variant_info *variant, int stages,
                                       size_t *bytes);

/* Whether the current CUDA device can run the variant with `stages`
 * (0 = default): PG_OK; PG_ERR_ARCH when its compute capability is too low
 * or the build holds no kernel image this GPU can load; PG_ERR_SMEM;
 * PG_ERR_STAGES; PG_ERR_NO_DEVICE. */
PG_API pg_status pg_variant_supported(const pg_variant_info *variant, int stages);

/* What the kernel a variant launches at `stages` needs and gets on the
 * current device: threads per block, registers per thread, shared memory per
 * block (static + dynamic), and resident blocks per SM from the occupancy
 * calculator. PG_ERR_UNSUPPORTED for an entry that is not a kernel (cublas,
 * auto). pg_plan_info holds one, so it never changes within a soname. */
typedef struct {
  int threads;
  int registers;
  size_t smem_bytes;
  int blocks_per_sm;
} pg_kernel_facts;
PG_API pg_status pg_variant_kernel_facts(const pg_variant_info *variant, int stages,
                                         pg_kernel_facts *facts);

/* ---- every layout and batch ------------------------------------------------
 * op(X) is X as it is stored (N) or its transpose (T); CUBLAS_OP_N and
 * CUBLAS_OP_T have the same values (and CUBLAS_OP_C, the transpose of a real
 * matrix, is taken as T). */
typedef enum { PG_OP_N = 0, PG_OP_T = 1 } pg_op;

/* One GEMM, or a strided batch of them, on row-major matrices:
 *
 *   C_i = alpha * op(A_i) * op(B_i) + beta * C_i,   i = 0 .. batch - 1,
 *   X_i = X + i * stride_x (in elements).
 *
 * op(A) is M x K: A is stored M x K with lda >= max(1, K) (op_a N) or K x M
 * with lda >= max(1, M) (op_a T). op(B) is K x N: B is stored K x N with
 * ldb >= max(1, N) (op_b N) or N x K with ldb >= max(1, K) (op_b T). C is
 * M x N with ldc >= max(1, N). batch >= 0 (0: nothing to do); stride_a and
 * stride_b >= 0 (0: every GEMM of the batch reads the same A, or B);
 * where batch > 1, stride_c >= (M - 1) * ldc + N, so that no two Cs
 * overlap. Leading dimensions and strides are 64-bit; a leading dimension
 * past INT_MAX is refused by every entry (PG_ERR_UNSUPPORTED).
 *
 * A column-major caller (BLAS, cuBLAS) maps onto this by C^T = op(B)^T *
 * op(A)^T: its C (m x n, column-major) is row-major C^T (n x m); see
 * pg_blas_sgemm, which does that.
 *
 * The struct carries its size (docs/api.md, "Versions and the ABI"):
 * start from PG_GEMM_DESC_INIT (size set, op N, alpha 1, beta 0, one GEMM)
 * and set the rest, so that a field added later keeps its default. */
typedef struct {
  size_t size; /* sizeof(pg_gemm_desc) */
  pg_op op_a, op_b;
  int m, n, k;
  float alpha, beta;
  const float *a;
  const float *b;
  float *c;
  long long lda, ldb, ldc;
  int batch;
  long long stride_a, stride_b, stride_c;
} pg_gemm_desc;
#define PG_GEMM_DESC_INIT {.size = sizeof(pg_gemm_desc), .alpha = 1.0f, .batch = 1}

/* The GEMM of `gemm` with the named variant (stages 0: its default) on the
 * current device. The selectors (auto, auto_tf32, auto_emulated) and the
 * cuBLAS rows take every layout and batch, and so do the kernels they
 * choose among but the study's and skinny_ffma: tma_ws and its tile forms,
 * the TF32 and emulated wgmma entries, cp_async_any and mma_cp_async_any,
 * each batch in one launch. The FFMA kernels read op T in place; TF32 wgmma
 * reads shared memory K-major, so op(B) = T is read in place and op(A) = T
 * (and op(B) = N, where an entry reads B from shared memory) costs a
 * transpose into the workspace by a first kernel, counted in the call's
 * time (pg_plan_info.transposes). An entry that reads an operand with TMA
 * refuses one TMA cannot read (rows or batch stride off 16 bytes) with
 * PG_ERR_UNSUPPORTED and a reason, and a selector then takes its next
 * candidate; a study kernel takes op N, N and one GEMM alone
 * (pg_variant_info.layouts says which). */
PG_API pg_status pg_gemm(const char *variant, int stages, const pg_gemm_desc *gemm,
                         cudaStream_t stream);

/* A column-major GEMM in cuBLAS's argument order, so that a call of
 * cublasSgemm becomes one of this by its name and first argument (a stream
 * for the handle): C = alpha * op(A) * op(B) + beta * C, C m x n, alpha and
 * beta host pointers, transa and transb cuBLAS's values. It runs `auto`
 * (strict FP32) on the row-major core as C^T = op(B)^T * op(A)^T. */
PG_API pg_status pg_blas_sgemm(cudaStream_t stream, int transa, int transb, int m, int n,
                               int k, const float *alpha, const float *a, int lda,
                               const float *b, int ldb, const float *beta, float *c, int ldc);

/* The same for cublasSgemmStridedBatched: batch_count GEMMs, the i-th on
 * A + i * stride_a, B + i * stride_b, C + i * stride_c. */
PG_API pg_status pg_blas_sgemm_strided_batched(cudaStream_t stream, int transa, int transb,
                                               int m, int n, int k, const float *alpha,
                                               const float *a, int lda, long long stride_a,
                                               const float *b, int ldb, long long stride_b,
                                               const float *beta, float *c, int ldc,
                                               long long stride_c, int batch_count);

/* ---- the short form: row-major C = alpha * A * B + beta * C ---------------
 * C = alpha * A * B + beta * C with the named variant on the current device.
 * stages = 0 picks the variant's default. Arguments are checked before any
 * device work: negative sizes, a leading dimension below max(1, row width),
 * NULL pointers with work to do, and a bad stage count are rejected with
 * PG_ERR_INVALID_ARG or PG_ERR_STAGES, and C is left as it was.
 * Same as pg_plan_create + pg_plan_launch + pg_plan_destroy, without the
 * allocation. */
PG_API pg_status pg_sgemm(const char *variant, int stages, int m, int n, int k, float alpha,
                          const float *a, int lda, const float *b, int ldb, float beta, float *c,
                          int ldc, cudaStream_t stream);

/* Same, with a registry entry instead of a name. */
PG_API pg_status pg_sgemm_variant(const pg_variant_info *variant, int stages, int m, int n,
                                  int k, float alpha, const float *a, int lda, const float *b,
                                  int ldb, float beta, float *c, int ldc, cudaStream_t stream);

/* ---- plans: decide once, launch cheaply -----------------------------------
 * A plan is one call of pg_sgemm_variant decided in advance: arguments
 * checked, the device's limits read, `auto` resolved, the kernel, grid,
 * block, shared memory and parameters (TMA descriptors included) fixed.
 * Launching it decides nothing again (it takes the call's workspace from
 * the library's pool and encodes the tensor maps that point into it), so a
 * GEMM repeated on the same buffers (a timing loop, a graph, a solver's
 * inner step) pays for the decision once.
 *
 * A plan belongs to the device that was current when it was made; launch it
 * on a stream of that device (or 0, that device's default stream), from any
 * thread: where the thread's current device is another, pg_plan_launch makes
 * the plan's current for the launch and puts the thread's back. It refers to
 * A, B and C by pointer: they must stay allocated while the plan is
 * launched. One plan may be launched from several threads at once, on their
 * own streams. */
typedef struct pg_plan pg_plan;

/* Makes a plan, or returns the status pg_sgemm_variant would return before
 * any device work (with *plan left NULL). The caller owns the plan and
 * frees it with pg_plan_destroy. PG_ERR_NO_MEMORY if the host is out of it. */
PG_API pg_status pg_plan_create(pg_plan **plan, const pg_variant_info *variant, int stages,
                                int m, int n, int k, float alpha, const float *a, int lda,
                                const float *b, int ldb, float beta, float *c, int ldc);

/* Enqueues the planned GEMM on `stream`.
 *
 * Workspace: a plan that splits K (tma_ws_splitk and its forms where their
 * tiles leave SMs idle, and auto where it chooses them) needs splits x R x N
 * floats (N rounded up to a multiple of 4) for its partial sums, R the rows
 * it splits (M, or those from pg_plan_info.split_from_row down), unless it
 * adds them up in clusters (pg_plan_info.split_in_clusters: none); a stream-K
 * plan (tma_ws_streamk) needs 2 x 128 x 128 floats per block of its grid, for
 * the tiles cut between blocks. pg_plan_info gives the bytes. The caller
 * allocates nothing: each launch takes them from a memory pool of the
 * library's own on the device (cudaMallocFromPoolAsync on `stream`), runs
 * the GEMM and a second kernel that adds the partial sums up in a fixed
 * order (split order, or block order for stream-K; in clusters the blocks
 * of a tile's ranges add them up in split order through their shared
 * memory, and no second kernel runs), and gives the memory back
 * (cudaFreeAsync on `stream`). So launches on different streams and threads
 * never share a workspace, nothing synchronises the device, and a stream
 * capture records the allocation and the free as graph memory nodes (as CUDA
 * allows such a graph to be instantiated once at a time). The pool keeps the
 * memory it has handed out for later launches; pg_shutdown gives it back.
 * Results are bitwise the same on every run: no atomics, a fixed order. */
PG_API pg_status pg_plan_launch(const pg_plan *plan, cudaStream_t stream);

/* A plan of `gemm` (pg_gemm's arguments, decided once). */
PG_API pg_status pg_plan_create_gemm(pg_plan **plan, const pg_variant_info *variant, int stages,
                                     const pg_gemm_desc *gemm);

/* Launches the plan on other matrices of the same shape, layout and batch:
 * A, B and C in place of the planned ones, without deciding again (their
 * tensor maps are encoded anew, a few microseconds of host work a map).
 * PG_ERR_UNSUPPORTED where a new pointer is not aligned as the planned one
 * was (16 bytes, or 4), which the decision rests on: make a plan for it. */
PG_API pg_status pg_plan_launch_with(const pg_plan *plan, const float *a, const float *b,
                                     float *c, cudaStream_t stream);

/* Frees a plan; NULL is ignored. */
PG_API void pg_plan_destroy(pg_plan *plan);

/* What a plan runs. Set `size` to sizeof(pg_plan_info) before asking
 * (PG_PLAN_INFO_INIT does): the library fills that many bytes and no more,
 * so a program built against an older header of the same soname gets the
 * fields it knows of. */
typedef struct {
  size_t size;                    /* set by the caller: sizeof(pg_plan_info) */
  const pg_variant_info *variant; /* the entry that runs: `auto` resolved to its choice */
  int stages;                     /* its stage count (0 for an entry without stages) */
  int launches;                   /* kernels it enqueues (0 when M or N is 0; 1 for cublas) */
  unsigned grid_x, grid_y;        /* of its kernel; 0 for cublas */
  pg_kernel_facts kernel;         /* of its kernel; zeros for cublas */
  int splits;                     /* K split in this many ranges (1: not split) */
  int stream_k_blocks;            /* stream-K: blocks sharing the tiles' K steps (0: not stream-K) */
  size_t workspace_bytes;         /* device memory a launch takes for them (0: none) */
  int split_from_row;             /* K split: only in rows from this one down, the rows
                                     above over all of K (0: in all rows) */
  int split_in_clusters;          /* K split: 1 where each tile's ranges are added up in
                                     a cluster of their blocks (sm_90), with no partial
                                     sums in the workspace and no second kernel */
  pg_op op_a, op_b;               /* the GEMM's layout */
  int batch;                      /* GEMMs (0 when M or N is 0) */
  int transposes;                 /* operands a first kernel transposes into the
                                     workspace because the kernel cannot read their
                                     layout (TF32 wgmma reads A and B K-major) */
} pg_plan_info;
#define PG_PLAN_INFO_INIT {.size = sizeof(pg_plan_info)}
/* Fills info->size bytes of *info (fields the library does not know of, in
 * a struct from a newer header, are zeros). PG_ERR_INVALID_ARG where
 * info->size is below the size of the first pg_plan_info that carried its
 * size (0.5.0's), which is what an unset size usually is. */
PG_API pg_status pg_plan_describe(const pg_plan *plan, pg_plan_info *info);

/* Whether pg_gemm would run this call, without running it: PG_OK, or the
 * status it would return before any device work. */
PG_API pg_status pg_variant_accepts_gemm(const pg_variant_info *variant, int stages,
                                         const pg_gemm_desc *gemm);

/* What a selector (auto, auto_tf32, auto_emulated) runs for `gemm` on the
 * current device: its entry and stage count (NULL and 0 where M, N or the
 * batch is 0: nothing runs); pg_plan_describe tells the whole choice. */
PG_API pg_status pg_selector_choice(const pg_variant_info *selector, const pg_gemm_desc *gemm,
                                    const pg_variant_info **variant, int *stages);

/* Whether pg_sgemm_variant would run this call, without running it: PG_OK,
 * or the status it would return before any device work (PG_ERR_UNSUPPORTED
 * with pg_last_error_detail() saying which layout rule fails, PG_ERR_ARCH,
 * PG_ERR_STAGES, ...). Needs the device for everything past the arguments. */
PG_API pg_status pg_variant_accepts(const pg_variant_info *variant, int stages, int m, int n,
                                    int k, const float *a, int lda, const float *b, int ldb,
                                    const float *c, int ldc);

/* What the `auto` variant runs for this shape and layout on the current
 * device: of the tuning table's candidates (src/tuning.c) that this GPU runs
 * and that accept the layout, the one with the best predicted speed (its
 * measured speed at full waves x how full its waves are x the share of its
 * tiles that is the problem). Writes the variant and its stage count; PG_ERR_NO_DEVICE
 * without a GPU. The whole choice (K split, grid) is what pg_plan_describe
 * tells of an `auto` plan. */
PG_API pg_status pg_auto_select(int m, int n, int k, const float *a, int lda, const float *b,
                                int ldb, const pg_variant_info **variant, int *stages);

/* Releases the cuBLAS handles the `cublas` and `cublas_tf32` entries made
 * (one per device and stream they ran on, each with its own workspace of
 * 32 MiB on sm_90 and newer, 4 MiB before: as cuBLAS advises, so that calls
 * on several streams run concurrently, deterministically and capturable in
 * graphs without allocating) and the memory the split-K pool kept.
 * Optional; safe to call more than once, and beside other calls (it waits
 * for cuBLAS calls under way); plans stay valid.
 *
 * The library keeps what it learnt of each device (its limits, which kernels
 * it loads and their shared-memory opt-in, the pool, cuBLAS's handle) for the
 * life of the process: do not cudaDeviceReset a device it has used. */
PG_API void pg_shutdown(void);

#ifdef __cplusplus
}
#endif
#endif /* PIPEGEMM_H */
