/* Internal to libpipegemm: the registry entry, the device cache, the plan,
 * and the contract between the C core and the kernel files in src/kernels/.
 * Nothing outside the library includes it; pipegemm's tools use
 * src/introspect.h.
 *
 * A call goes through three steps, each in one place:
 *   decide     (src/plan.c)    arguments, the device (src/device.c), auto's
 *                              choice (src/tuning.c), the entry's layout rules;
 *   configure  (src/kernels/)  each entry's configure function says which
 *                              kernel, grid and dynamic shared memory, and
 *                              calls the helpers that add a first kernel,
 *                              a reduction and the workspace's regions; it
 *                              calls no CUDA function;
 *   finish     (src/plan.c)    the plan's steps from that: each launch's
 *                              grid, block, shared memory, views of the
 *                              workspace, tensor maps;
 *   launch     (src/launch.c)  a loop over the steps (one cudaLaunchKernel,
 *                              or up to three over one workspace), or
 *                              cuBLAS. */
#ifndef PG_INTERNAL_H
#define PG_INTERNAL_H

#include <stdint.h>
#include <cuda.h> /* CUtensorMap only: the driver is reached at run time */

#include "introspect.h"
#include "pipegemm.h"
#include "tuning.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The problem as a kernel of one row-major GEMM takes it (its one
 * parameter, by value): sizes, operands, and what the plan decided for the
 * kernel. The fields:
 *   vec_a, vec_b   1: A's (B's) rows may be read as 16-byte vectors (lda %
 *                  4 == 0, the base 16-byte aligned)
 *   group_m        tma_ws: tile rows per group of the tile order
 *   splits, k_tiles_per_split  split-K: K's steps in `splits` ranges of
 *                  k_tiles_per_split; with more than one, each range's sums
 *                  go to its own m x n plane of `partials` (leading
 *                  dimension ldp), and a second kernel adds them up
 *   partials / trace  the launch's device workspace, by what the plan
 *                  launches: the split and stream-K forms' partial sums, or
 *                  a traced kernel's buffer (src/trace_records.h; `pipegemm
 *                  trace` takes no plan that splits its work)
 *   own            the entry's own settings, which only its configure
 *                  function and its kernels read: a struct of at most 16
 *                  bytes declared in its kernel files and reached through
 *                  pg_own / pg_set_own (kernels/entry.h); zeros otherwise
 *                  (tma_ws's stream-K, wgmma_3xtf32's sum steps,
 *                  skinny_ffma's BAND copies)
 *   split_row0     split K below a row (pg_configure_split_tail): rows
 *                  before it (whole tile rows) go straight to C, each tile
 *                  over all of K; the planes hold rows split_row0 .. m-1
 *                  only. 0: every row is split (or none is, splits <= 1)
 *   wide_lines     non-NULL: the kernel computes only the tiles that a
 *                  split before it left to it, those with a row of op(A)
 *                  or a column of op(B) whose scale there is
 *                  PG_FP16X3_UNSPLIT (kernels/fp16x3.h: GEMM z's lines
 *                  from pg_fp16x3_a_first and _b_first); the others exit
 *                  at once. While a plan is made it holds
 *                  PG_WIDE_LINES_AT_LAUNCH, never read; the launch puts the
 *                  scales' address in the workspace there (pg_plan_then)
 * 128 bytes with no tail padding, so that
 * pg_layout_args below extends it at byte 128 in C and C++ alike. Past 128
 * bytes of parameter ptxas allocates these kernels' registers otherwise
 * (nvcc 13.0, sm_90: baseline's 128 registers became 129, one block an SM
 * instead of two, 0.65x its speed). */
#define PG_GEMM_ARGS_FIELDS                                                                        \
  int m, n, k;                                                                                     \
  float alpha, beta;                                                                               \
  const float *a;                                                                                  \
  const float *b;                                                                                  \
  float *c;                                                                                        \
  int lda, ldb, ldc;                                                                               \
  int vec_a, vec_b;                                                                                \
  int stages;                                                                                      \
  int group_m;                                                                                     \
  int splits, k_tiles_per_split;                                                                   \
  union {                                                                                          \
    float *partials;                                                                               \
    struct pg_trace_header *trace;                                                                 \
  };                                                                                               \
  int ldp;                                                                                         \
  int own[4];                                                                                      \
  int split_row0;                                                                                  \
  const int *wide_lines;
typedef struct {
  PG_GEMM_ARGS_FIELDS
} pg_gemm_args;

/* The problem with its layout (pg_gemm_desc): what the library plans and
 * launches, and the one parameter of the kernels that read other layouts.
 * op_a and op_b 1 where A (stored K x M) or B (stored N x K) is read
 * transposed (vec_a and vec_b then speak of the rows as stored); `batch`
 * GEMMs, the i-th on a + i * stride_a, b + i * stride_b and c + i *
 * stride_c (a stride of 0 reads the same A or B for all). A kernel of one
 * row-major GEMM takes pg_gemm_args: launched with a pg_layout_args, it
 * reads the first 128 bytes, which are one. Only entries that take every
 * layout (PG_LAYOUT_ANY) are planned with other than op N, N and one GEMM.
 * In C++ (the kernels) it derives from pg_gemm_args, so that a kernel of
 * other layouts hands itself to the helpers of one GEMM. */
#define PG_LAYOUT_FIELDS                                                                           \
  int op_a, op_b;                                                                                  \
  int batch;                                                                                       \
  long long stride_a, stride_b, stride_c;
#ifdef __cplusplus
struct pg_layout_args : pg_gemm_args {
  PG_LAYOUT_FIELDS
};
#else
typedef struct {
  PG_GEMM_ARGS_FIELDS
  PG_LAYOUT_FIELDS
} pg_layout_args;
#endif
#ifdef __cplusplus
static_assert(sizeof(pg_gemm_args) == 128 && sizeof(pg_layout_args) == 168,
              "pg_layout_args extends pg_gemm_args at byte 128, as in C");
#else
_Static_assert(sizeof(pg_gemm_args) == 128 && offsetof(pg_layout_args, op_a) == 128 &&
                   sizeof(pg_layout_args) == 168,
               "pg_layout_args extends pg_gemm_args at byte 128");
#endif
/* 1 where the call is not op N, N on one GEMM: an entry that takes any
 * layout (PG_LAYOUT_ANY) plans its layout kernel then. */
static inline int pg_other_layout(const pg_layout_args *g) {
  return g->op_a || g->op_b || g->batch > 1;
}

/* The TMA kernels' second parameter (their tensor maps) starts at the next
 * 64-byte boundary past the first. */
#ifdef __cplusplus
static_assert(sizeof(pg_layout_args) <= 192, "the TMA kernels' maps start by byte 192");
#else
_Static_assert(sizeof(pg_layout_args) <= 192, "the TMA kernels' maps start by byte 192");
#endif

/* warp_specialized's producer warps beside its 256 compute threads
 * (bench/results/mechanisms/README.md compares 1 and 2). */
#define PG_WS_PRODUCER_WARPS 2

/* ---- the device (src/device.c) --------------------------------------------- */

/* The largest cluster every sm_90 GPU launches (a portable size), and the
 * blocks an SM the cluster capacities below are known for. */
#define PG_CLUSTER_MAX 8
#define PG_CLUSTER_BLOCKS_PER_SM 3

/* What the library reads of a device, once, on first use. */
typedef struct {
  int ordinal;
  int cc;                 /* major*10 + minor */
  int sm_count;
  size_t smem_optin;      /* shared memory a block may opt in to */
  size_t smem_per_sm;     /* an SM's shared memory (0: unknown) */
  size_t smem_reserved;   /* of it, what the SM keeps for each resident block */
  pg_tuning tuning;       /* its row of src/tuning.c (no environment overrides) */
  /* cluster_blocks[b - 1][c]: the blocks of a kernel that fits b blocks an
   * SM (b <= PG_CLUSTER_BLOCKS_PER_SM) that the GPU keeps resident at once
   * when they are launched in clusters of c (2 <= c <= PG_CLUSTER_MAX): a
   * cluster runs on one GPC, so the GPCs' sizes leave some SMs' slots
   * empty. 0: unknown, or no clusters (before sm_90). */
  int cluster_blocks[PG_CLUSTER_BLOCKS_PER_SM][PG_CLUSTER_MAX + 1];
  /* 1 (set with release order, after the table) once the table holds the
   * runtime's answers; 0 while a probe failed for a reason that may pass
   * (out of memory loading the probe kernel), and the table is asked again
   * at the next lookup (pg_device_cluster_blocks). */
  int clusters_known;
  /* 1: facts of a GPU that is not here, for auto's model alone
   * (pg_auto_model): no kernel's image is looked at. */
  int model_only;
} pg_device;

/* The current device's facts, cached per device. PG_ERR_NO_DEVICE with
 * pg_last_error_detail() saying why (no driver, a driver too old, no GPU). */
pg_status pg_device_current(const pg_device **device);

/* Runs work(ctx) on a short-lived thread of the library's own and waits for
 * it: a probe that fails leaves nothing in the caller's CUDA error slot, and
 * the thread runs in the relaxed stream-capture mode, so it may make what a
 * capture on the caller's thread forbids (a cuBLAS handle, a memory pool). */
pg_status pg_on_probe_thread(void (*work)(void *ctx), void *ctx);

/* auto's model alone, on the facts of a device (model_only: no GPU is
 * asked, no kernel's image looked at): each of `selector`'s candidates on
 * an M x N x K problem, row-major and dense (lda = K, ldb = N, ldc = N; A
 * and B 16-byte aligned, so that a leading dimension no multiple of 4 is
 * what TMA cannot read), planned as a call would plan it. A row a
 * candidate: its entry, stage count, predicted speed (0 where it refuses)
 * and status. Returns the rows written (at most max_rows); *chosen is the
 * row the selector would run (the first of the best), -1 if none runs. For
 * replaying the model over measured shapes (bench/auto_replay.c). A
 * planned row also says its kernel's blocks and a block's K (its range
 * where K is split), what the rules' per-block costs weigh. */
typedef struct {
  const pg_variant_info *variant;
  int stages;
  double speed;
  pg_status status;
  long long blocks, block_k;
} pg_model_row;
int pg_auto_model(const pg_device *dev, const pg_variant_info *selector, int m, int n, int k,
                  pg_model_row *rows, int max_rows, int *chosen);
/* The facts of a GPU that is not here, for pg_auto_model: its compute
 * capability, SMs and the shared memory a block may opt in to, its row of
 * src/tuning.c, model_only set. */
pg_device pg_device_model(int cc, int sm_count, size_t smem_optin);

/* Dynamic shared memory a block that lets `blocks` blocks share an SM and
 * no more: a `blocks`-th of the SM's, less what the SM keeps for each
 * block (smem_reserved), at most what a block may opt in to;
 * 0 where the SM's is unknown. */
static inline size_t pg_smem_for_blocks_per_sm(const pg_device *device, int blocks) {
  if (device->smem_per_sm == 0 || blocks < 1) return 0;
  const size_t smem = device->smem_per_sm / (size_t)blocks - device->smem_reserved;
  return smem < device->smem_optin ? smem : device->smem_optin;
}

/* pg_device.cluster_blocks[blocks_per_sm - 1][cluster], 0 outside the
 * table; asked of the GPU again first where the table is not known. */
long long pg_device_cluster_blocks(const pg_device *device, int blocks_per_sm, int cluster);

/* Fills `table` (as pg_device.cluster_blocks) by asking the runtime of the
 * current device (cudaOccupancyMaxActiveClusters over a probe kernel sized
 * to b blocks an SM); what the GPU does not support stays 0
 * (src/kernels/cluster_probe.cu). Returns 1 where that is the answer, 0
 * where a question failed for a reason that may pass (out of memory). */
int pg_probe_cluster_blocks(const pg_device *device,
                            int table[PG_CLUSTER_BLOCKS_PER_SM][PG_CLUSTER_MAX + 1]);

/* Gives back the memory the split-K pools keep (pg_shutdown). */
void pg_device_release(void);

/* What a kernel of ours is on a device: whether the build holds an image the
 * GPU loads, and its resources. Asked once per (device, kernel), and asked
 * again while the answer is a failure that may pass (out of memory); the
 * first ask that loads it raises the kernel's dynamic shared-memory limit to
 * all the device allows, so no launch needs to. */
/* Device memory that must be free before a kernel's code is loaded: more
 * than the largest of the library's modules (src/device.c says why). */
#define PG_LOAD_HEADROOM ((size_t)16 << 20)

typedef struct {
  cudaError_t load_error; /* cudaSuccess when the GPU loads it */
  size_t free_bytes;      /* device memory free when it was asked (for a failure's reason) */
  int ptx_version;        /* the virtual architecture it was compiled for (80, 90) */
  int registers;
  size_t static_smem;
} pg_kernel_image;
pg_status pg_kernel_image_of(const pg_device *device, const void *kernel,
                             pg_kernel_image *image);

/* The library's own memory pool on a device, for split-K's partial sums:
 * made on first use (on the probing thread), it keeps what it was given
 * (release threshold: all), so a launch's stream-ordered allocation is
 * cheap after the first. */
pg_status pg_device_pool(const pg_device *device, cudaMemPool_t *pool);
/* Makes sure the pool holds `bytes` for one allocation, growing it on the
 * probing thread when it does not yet, so that a launch's stream-ordered
 * allocation on the caller's thread finds them (and a failure leaves the
 * caller's CUDA error state alone). PG_ERR_NO_MEMORY with a detail that
 * names `what` and the bytes; nothing is remembered of a failure. */
pg_status pg_device_pool_hold(const pg_device *device, cudaMemPool_t pool, size_t bytes,
                              const char *what);

/* Takes `bytes` from the pool, stream-ordered on `stream`, for a launch of
 * `what`. A failure (the pool emptied by another launch since
 * pg_device_pool_hold) returns PG_ERR_NO_MEMORY with a detail and leaves
 * the caller's CUDA error slot as it was. */
pg_status pg_device_pool_take(cudaMemPool_t pool, size_t bytes, cudaStream_t stream,
                              void **memory, const char *what);

/* ---- the registry (src/registry.c) ----------------------------------------- */

/* The boxes of the TMA kernels' copies: A as box_k (contiguous) x box_m
 * rows, B as box_n (contiguous) x box_k rows. a_swizzle_bytes is 0 (none),
 * 32, 64 or 128: the shared-memory swizzle of A's rows; b_swizzle_bytes
 * B's (0 for the FFMA family's dense B).
 * b_k_major: the kernel reads B^T from the workspace (the wgmma members:
 * pg_configure_transpose_b), N rows of the workspace's ldp floats, as
 * b_box_k (contiguous) x b_box_n rows in A's swizzle; its map is encoded at
 * each launch, when the workspace is there (as A's, and B's again, are
 * where a first kernel writes A's parts and B's copy: the entry's kernel
 * reads them through its views, pg_kernel_launch.views). */
typedef struct {
  int a_box_k, a_box_m, a_swizzle_bytes;
  int b_box_n, b_box_k;
  int b_k_major;
  int b_swizzle_bytes; /* B's (or B^T's) swizzle, as a_swizzle_bytes */
  /* 1: the kernel takes any layout by reading the operands as the call
   * stores them (pg_tma_reads_layout): maps of rank 3 over the batch, A as
   * K x M where op(A) = T (boxes a_box_m contiguous x a_box_k rows, in
   * a_t_swizzle_bytes) and B as N x K where op(B) = T (b_box_k contiguous
   * x b_box_n rows, in b_t_swizzle_bytes). */
  int any_layout;
  int a_t_swizzle_bytes, b_t_swizzle_bytes;
  /* 1: the kernel's copies read the workspace alone, through A's map over
   * the whole region its partials view names, each row its full ldp in
   * A's boxes (pg_tma_encode_lines, at launch); the caller's A and B get
   * no map. */
  int workspace_lines;
} pg_tma_boxes;

/* ---- a call's launches over one workspace -------------------------------------
 * A plan is a short list of launch steps: at most a first kernel (operands
 * into the workspace), the entry's kernel, a last one (partial sums added
 * up), and another entry's on the tiles the entry's left (pg_plan_then).
 * The workspace is laid out once, region after region, by the
 * helpers that decide what goes in it; a step says which regions its
 * kernel reads as A, as B and as its partial sums (its views), and the
 * launch points the kernel's arguments there. */
#define PG_MAX_REGIONS 3

/* rows x ld floats, `offset` bytes from the workspace's start. */
typedef struct {
  size_t offset;
  long long rows, ld;
} pg_region;

typedef struct {
  size_t bytes; /* 0: no workspace */
  int count;
  pg_region region[PG_MAX_REGIONS];
} pg_workspace;

/* Appends a region of rows x ld floats after the others; returns its
 * index. pg_workspace_drop_last takes the last one back. */
int pg_workspace_add(pg_workspace *workspace, long long rows, long long ld);
void pg_workspace_drop_last(pg_workspace *workspace);

/* What a kernel reads where its arguments say A, B and partials: the
 * planned argument (PG_CALLER: a launch zeroed reads the call's operands),
 * or a region of the workspace (PG_IN_REGION(r): its start, with its ld
 * as lda, ldb or ldp; an operand read there is 16-byte aligned with rows
 * of a multiple of 4 floats). */
#define PG_CALLER 0
#define PG_IN_REGION(r) ((r) + 1)
typedef struct {
  int a, b, partials;
} pg_views;

/* A kernel before or after the entry's, with the call's argument (its
 * views applied) as its one parameter. */
typedef struct {
  const void *kernel;
  long long grid_x, grid_y;
  int threads;
  /* 1: it waits for the kernel before it itself (pg_grid_dependency_wait),
   * so the core launches it programmatically behind that one. */
  int programmatic;
  pg_views views;
  const char *what; /* for messages: "reduction" */
} pg_launch_step;

/* A reduction after the entry's kernel (partial sums added up), reading
 * what that kernel wrote. */
struct pg_kernel_launch;
void pg_add_reduction(struct pg_kernel_launch *launch, const void *kernel, long long grid_x,
                      long long grid_y, int threads, int programmatic);

/* What auto's model (src/auto.c) takes of a launch beyond its grid and the
 * registry's tile, as the helpers and configure functions that know it say
 * it; zeros where the grid and the tile say all. */
typedef struct {
  /* > 0: the share of the entry's full speed this launch reaches, in place
   * of the registry tile's useful share (an entry whose form and tile
   * follow the shape: skinny_ffma). */
  double speed_share;
  /* > 0, with a persistent grid: the launch's predicted speed times this
   * (tma_ws's persistent grid at few K steps: its measured gain, from the
   * tuning row). */
  double speed_factor;
  /* > 0: how full the launch keeps its block slots, in place of its
   * blocks over the slots of the waves they take (a plan whose blocks
   * differ in length: pg_configure_split_tail). */
  double fill;
  /* Bytes a first kernel reads and writes that the rule's speed does not
   * count (operands TMA cannot read, A^T, an emulated entry's split),
   * charged as memory traffic at the tuning row's flops_per_byte; 0: none. */
  double first_bytes;
} pg_model_hints;

/* A kernel entry's launch, as its configure function decides it: which
 * kernel and its grid. The block is the entry's info.threads and the dynamic
 * shared memory its smem_bytes (when kernel.dynamic_smem says so), or the
 * launch's own dynamic_smem where that is more. */
typedef struct pg_kernel_launch {
  const void *kernel;
  long long grid_x, grid_y; /* the core refuses a grid past CUDA's limits */
  /* > 1: blocks along z, one a GEMM of a batch (at most 65535; a kernel
   * walks the batch past it). 0 counts as 1. */
  long long grid_z;
  /* What auto's model needs of the launch beyond its grid (pg_model_hints). */
  pg_model_hints model;
  /* TMA kernels: the copies' boxes; the core encodes A's and B's tensor maps
   * as the kernel's second parameter. NULL: the kernel has one parameter. */
  const pg_tma_boxes *tma;
  /* > 0: a persistent grid of at most this many blocks per SM (no more than
   * fit), whose blocks loop over the tiles; grid_x is the tile count. */
  int persistent_blocks_per_sm;
  /* > 1: the blocks are launched in clusters of this many along x (grid_x a
   * multiple of it; not with a persistent grid). */
  int cluster_x;
  /* > 0: at most this many blocks an SM (the core asks for enough dynamic
   * shared memory that no more fit), so that the hardware spreads a grid
   * of clusters evenly over the SMs rather than filling some. */
  int max_blocks_per_sm;
  /* > 0: dynamic shared memory this launch's kernel needs, where its form
   * holds more than a kernel may declare statically (48 KiB). */
  size_t dynamic_smem;
  /* The call's workspace and the kernels around the entry's: set by the
   * helpers below that decide them (pg_configure_first_kernel and
   * pg_configure_operand_copies, pg_configure_transpose_b, the split
   * planners, pg_add_reduction), never by a configure function itself. */
  pg_workspace workspace;
  pg_launch_step first; /* operands into the workspace first (kernel NULL: none) */
  pg_launch_step last;  /* partial sums added up after (kernel NULL: none) */
  /* The entry whose kernel computes, after this launch's, the tiles its
   * kernel leaves (wgmma_fp16x3's whose lines the split left whole),
   * planned on the same problem by its own configure function with
   * wide_lines set; `lines_offset` bytes into the workspace region
   * `lines_region` (its index) hold the lines' scales. `own`: this entry's
   * own settings (pg_gemm_args.own) where that step is in the plan. Where
   * it cannot be (pg_then_alone), the plan keeps the ones configure set
   * and has no such step: the kernel computes those tiles itself, on a
   * path far slower, so a selector leaves such a plan out (the entry named
   * alone still runs it). NULL: none. */
  struct {
    const char *entry;
    int lines_region;
    size_t lines_offset;
    int own[4];
  } then;
  pg_views views;       /* what the entry's kernel reads from the workspace */
  /* 1: the entry's kernel waits for the first kernel's writes itself
   * (pg_grid_dependency_wait before it reads them), so the core launches
   * it programmatically behind that kernel. */
  int programmatic;
  /* Operands the first kernel transposes because the kernel cannot read
   * their layout (pg_plan_info.transposes). */
  int transposes;
  /* Blocks that share the tiles' K steps, for a stream-K launch
   * (pg_plan_info.stream_k_blocks); 0: none. */
  int stream_k_blocks;
} pg_kernel_launch;

/* An entry's configure function. It may set the fields of args that are its
 * own (tma_ws's group_m). */
typedef void (*pg_configure_fn)(pg_layout_args *args, const pg_device *device,
                                const pg_tuning *tuning, pg_kernel_launch *launch);
/* A layout rule an entry needs beyond pg_sgemm's own: PG_OK, or an error
 * with its reason written to `why`. */
typedef pg_status (*pg_check_fn)(const pg_layout_args *args, char *why, size_t why_size);
typedef size_t (*pg_smem_fn)(int stages);

/* One registry entry, defined in its kernel file (src/kernels/entry.h) or,
 * for cublas, cublas_tf32 and auto, in src/cublas.c and src/plan.c; src/variants.h lists
 * them all. */
typedef struct {
  pg_variant_info info;
  pg_smem_fn smem_bytes;     /* per block, for an allowed stage count; NULL: none */
  pg_configure_fn configure; /* PG_KIND_KERNEL only */
  pg_check_fn check;         /* NULL: every layout pg_sgemm accepts runs */
  pg_kernel_spec kernel;     /* PG_KIND_KERNEL only */
} pg_variant_entry;

/* The entry of a registry info pointer; NULL for anything else. */
const pg_variant_entry *pg_entry_of(const pg_variant_info *info);
/* The entry named `name`; NULL if none. */
const pg_variant_entry *pg_entry_find(const char *name);
/* The entry's traced twin (src/variants.h, TRACED): the same entry, whose
 * configure function launches the kernel that records its pipeline; NULL
 * where `pipegemm trace` does not take the variant. */
const pg_variant_entry *pg_entry_traced(const pg_variant_entry *entry);

/* ---- the decided call (src/plan.c) ------------------------------------------ */

/* Both operands' tensor maps, the TMA kernels' second parameter (each
 * CUtensorMap is 128 bytes, 64-byte aligned). */
typedef struct {
  CUtensorMap a;
  CUtensorMap b;
} pg_tma_maps;

/* One launch of a plan, decided: the grid and shared memory CUDA takes, and
 * the views through which its kernel reads the workspace. */
typedef struct {
  const void *kernel;
  unsigned grid_x, grid_y; /* persistent grids capped at what fits */
  unsigned grid_z;         /* a batch's GEMMs (1: one) */
  unsigned threads;
  unsigned cluster_x;      /* > 1: blocks in clusters of this many along x */
  size_t dynamic_smem;
  int programmatic;        /* behind the step before it, which it waits for */
  pg_views views;
  const char *what;        /* "kernel", "reduction", ...: "launching its <what>" */
} pg_plan_step;

#define PG_MAX_STEPS 4

/* The plan's last step where the entry's launch names a `then` entry: that
 * entry's kernel with its own argument (wide_lines pointed at the scales
 * in the workspace at launch) and tensor maps. step 0: none. */
typedef struct {
  pg_tma_maps maps; /* first: the descriptors want 64-byte alignment */
  pg_layout_args args;
  const pg_tma_boxes *tma;
  const pg_variant_entry *entry;
  int step;
  int lines_region;
  size_t lines_offset;
} pg_plan_then;

/* What wide_lines holds while a plan is made (never read). */
#define PG_WIDE_LINES_AT_LAUNCH ((const int *)(uintptr_t)64)

struct pg_plan {
  pg_tma_maps maps; /* first: the descriptors want 64-byte alignment */
  pg_plan_then then;
  const pg_variant_entry *entry; /* what runs (auto resolved); NULL: nothing to do */
  const pg_device *device;
  int stages;
  pg_layout_args args;
  int steps;               /* launches, in stream order */
  int main_step;           /* the entry's kernel (or cuBLAS's call: no step) */
  pg_plan_step step[PG_MAX_STEPS];
  pg_workspace workspace;  /* bytes 0: none */
  cudaMemPool_t pool;      /* where the workspace comes from */
  const pg_tma_boxes *tma; /* the entry's kernel's copies (maps of regions encoded at launch) */
  int scales_c_only;       /* alpha = 0 or K = 0: the kernel is C = beta * C */
  int transposes;          /* operands a first kernel transposes (pg_plan_info) */
  int stream_k_blocks;     /* a stream-K launch's blocks (pg_plan_info) */
  char label[64];          /* for messages: "tma_ws", or "auto (tma_ws)" */
};

/* ---- arguments (src/arguments.c) ----------------------------------------------
 * The rules every entry point that takes a problem applies (pg_sgemm's
 * family, pg_gemm's and the selectors' questions), in BLAS's order: sizes,
 * layouts, leading dimensions and strides (before the quick return where
 * M, N or the batch is 0), then A and B where K > 0. PG_OK or
 * PG_ERR_INVALID_ARG with the detail set. */
pg_status pg_check_problem(const pg_gemm_desc *gemm);
/* The same, with C (ldc, stride_c, C itself): pg_gemm's rules. */
pg_status pg_check_gemm(const pg_gemm_desc *gemm);
/* 1 where M, N or the batch is 0: nothing to do. */
int pg_gemm_is_empty(const pg_gemm_desc *gemm);
/* PG_ERR_UNSUPPORTED (detail set) for a leading dimension past INT_MAX,
 * which no kernel holds. */
pg_status pg_check_int_lds(const pg_gemm_desc *gemm);

/* The problem's fields of the kernels' parameter, from a GEMM whose
 * arguments were checked (the rest zero). */
void pg_set_problem(pg_layout_args *args, const pg_gemm_desc *gemm);

/* A checked copy of the caller's description (its size honoured: fields
 * past it take PG_GEMM_DESC_INIT's values); PG_ERR_INVALID_ARG with the
 * detail set where it is NULL or its size is below the first one's. */
pg_status pg_gemm_desc_read(const pg_gemm_desc *gemm, pg_gemm_desc *out);

/* pg_sgemm's arguments as a description: op N, N, one GEMM. */
pg_gemm_desc pg_gemm_desc_of(int m, int n, int k, float alpha, const float *a, int lda,
                             const float *b, int ldb, float beta, float *c, int ldc);

/* Whether the device runs `entry` at `stages` on the problem in plan->args,
 * and if so its configure function's launch in *kernel (plan->args as it
 * left them). `layout`: also apply the grid limits and the entry's layout
 * rules (0 when no real problem is at hand). */
pg_status pg_decide_entry(const pg_device *dev, const pg_variant_entry *entry, int stages,
                          pg_plan *plan, pg_kernel_launch *kernel, int layout);

/* Whether `entry` (a launch's then.entry) computes the tiles that launch's
 * kernel leaves on `problem` (as the call describes it) as one kernel
 * without a workspace of its own, the scales being all it reads there:
 * PG_OK, or why not (its refusal, or PG_ERR_UNSUPPORTED). The plan (add_then)
 * and the selectors ask alike. */
pg_status pg_then_alone(const pg_device *dev, const char *entry, const pg_layout_args *problem);

/* Whether `st` is an entry declining a call (arch, shared memory, layout,
 * stages, arguments), as against a failure (no memory, CUDA). */
int pg_is_refusal(pg_status st);

/* A selector's choice for the problem in plan->args (src/auto.c): of its
 * rules' candidates that the device runs, the best predicted; the winner's
 * entry, stage count and launch, plan->args as it planned them. */
pg_status pg_auto_choose(const pg_device *dev, const pg_variant_info *selector, pg_plan *plan,
                         const pg_variant_entry **entry, int *stages, pg_kernel_launch *kernel);

/* pg_plan_prepare on `device` (NULL: the current one); on the facts of a
 * GPU that is not here (pg_device_model), the plan asks no GPU anything
 * (no kernel loaded, no pool, no tensor map encoded, no persistent cap):
 * for tests of the plan's steps on a machine without one. */
pg_status pg_plan_prepare_on(pg_plan *plan, const pg_device *device,
                             const pg_variant_info *variant, int stages,
                             const pg_gemm_desc *gemm);

/* The argument the kernel of step `step` gets with the workspace at `base`
 * (src/launch.c): the plan's, its views pointed into the workspace. */
void pg_plan_step_args(const pg_plan *plan, int step, float *base, pg_layout_args *args);

/* Fills *plan for the call, or returns the status pg_sgemm_variant returns
 * before any device work (detail set). */
pg_status pg_plan_prepare(pg_plan *plan, const pg_variant_info *variant, int stages,
                          const pg_gemm_desc *gemm);

/* ---- errors (src/status.c; the rest in src/introspect.h) ---------------------- */

/* Puts back what pg_last_cuda_error() said before (auto's refused
 * candidates are no error of a call that succeeds). */
void pg_restore_last_cuda_error(cudaError_t err);

/* ---- cuBLAS (src/cublas.c) -------------------------------------------------- */

/* cuBLAS on the plan's problem, in strict FP32 or on TF32 tensor cores
 * (`precision`), with the device's handle (made on first use, on the
 * probing thread). */
pg_status pg_cublas_sgemm(const pg_device *device, const pg_layout_args *args,
                          pg_precision precision, cudaStream_t stream);
/* Destroys the handles (pg_shutdown), once no call is using them. */
void pg_cublas_release(void);

/* ---- C = beta * C (src/kernels/scale_c.cu) ------------------------------------
 * What every kernel entry launches when alpha = 0 or K = 0: A and B are not
 * read, and C only when beta != 0. */
#define PG_SCALE_C_THREADS 256
void pg_configure_scale_c(const pg_layout_args *args, pg_kernel_launch *launch);

/* ---- B^T for the wgmma members (src/kernels/transpose_b.cu) -------------------
 * Sets the launch's first kernel (B -> B^T, N rows of args->ldp = K
 * rounded up to 4 floats, zeros past K), its region of the workspace, and
 * the entry's kernel's view of B there. */
void pg_configure_transpose_b(pg_layout_args *args, pg_kernel_launch *launch);
/* The same for the wgmma entries that take any layout (and a batch),
 * kernels/layout_first.cuh: a first kernel that writes A^T where op(A) = T
 * (M rows of K rounded up to 4, a matrix of the batch after the other) and,
 * with transpose_b, B^T where op(B) = N (N rows), the entry's kernel's views
 * of them, A^T charged to auto's model as a copy; returns 0 (nothing set)
 * where neither is needed (op(A) = N, and op(B) = T or B read as it is). */
int pg_configure_layout_transposes(pg_layout_args *args, pg_kernel_launch *launch,
                                   int transpose_b);

/* ---- split-K's reduction (src/kernels/reduce_splits.cu) -----------------------
 * The planes of partial sums: args->splits planes of M rows, PG_PLANES_LD(N)
 * floats a row (16-byte rows for the partial tiles' stores): a region of
 * the workspace after any a first kernel writes, which the entry's kernel
 * and the reduction read as their partials (args->partials and args->ldp
 * pointed there at launch: the launch's views).
 * K is split where the launch's blocks (launch->grid_x, one a tile) leave
 * some of `slots` idle, into ranges of equal length (the last may be
 * shorter) of at least min_steps of the k_tiles steps; where it splits
 * (the value returned, 1 where it does not), args->splits and
 * k_tiles_per_split say how, the grid has a block a (tile, range), the
 * workspace grows by the planes (with no first kernel, args->ldp becomes
 * theirs) and the launch's reduction (pg_add_reduction) is set:
 * C = alpha (P_0 + ... + P_{S-1}) + beta C, in a fixed order (split order,
 * or past 16 ranges in slices of it where few elements have many splits:
 * reduce_splits.cu). */
#define PG_PLANES_LD(n) ((((long long)(n)) + 3) / 4 * 4)

int pg_configure_split_k(pg_layout_args *args, pg_kernel_launch *launch, long long slots,
                         long long k_tiles, int min_steps);

/* Split K where the last wave is partial, for a kernel whose split blocks
 * take the layout of args->split_row0 (the tma_ws forms): the grid's first
 * blocks are the tiles of the top R tile rows over all of K (to C), then
 * the tiles below in S ranges of K each (to planes of the rows below, which
 * the reduction adds up). R and S are chosen by a model of how the
 * hardware hands blocks to `slots` slots in grid order (a block's time its
 * K steps plus `unit_cost` steps), plus the reduction's memory traffic at
 * `flops_per_byte` (the GPU's FP32 FLOP rate over its memory bandwidth):
 * the plan with the least time. S = 1 (no split) unless splitting gains at
 * least PG_SPLIT_TAIL_MIN_GAIN_PERCENT; R = 0 is a plain split. The grid is
 * launch->grid_x tiles of tile_m x tile_n on entry, one a block. Returns
 * S; sets launch->fill to the model's share of the slots kept busy where
 * it splits. */
#define PG_SPLIT_TAIL_MIN_GAIN_PERCENT 5
int pg_configure_split_tail(pg_layout_args *args, pg_kernel_launch *launch, long long slots,
                            int tile_m, int tile_n, long long k_tiles, int min_steps,
                            int unit_cost, int flops_per_byte);

/* A split K's ranges added up in clusters of their blocks, one cluster a
 * tile (block b range b % S of tile b / S), through their shared memory,
 * instead of in the planes the two above set up: where the ranges are at
 * most PG_CLUSTER_MAX and the GPU keeps every cluster resident at once
 * (a cluster runs on one GPC, so the GPCs' sizes leave some SMs' slots
 * empty; a cluster that found no room would wait for a second wave).
 * `spread`: with the blocks spread evenly over the SMs, ceil(grid / SMs)
 * an SM and no more (per_sm at most), shared memory padded where that is
 * fewer than per_sm (max_blocks_per_sm), for a kernel bound by its SMs'
 * FMAs (the hardware would otherwise fill some SMs to the kernel's limit
 * and leave others idle); else, for one bound by memory, never padded (the
 * padding's shared memory is L1's, and the skinny forms ran slower so),
 * with room for one block an SM where the grid has no more blocks than
 * SMs, else at the kernel's per_sm (or the most the device's table knows,
 * PG_CLUSTER_BLOCKS_PER_SM). Then the planes and their reduction are dropped,
 * `cluster_kernel` runs in clusters of S, and it returns 1; else 0, the
 * plan as it was. The split itself (args->splits, k_tiles_per_split, the
 * grid) stays. */
int pg_split_in_clusters(pg_layout_args *args, pg_kernel_launch *launch, const pg_device *device,
                         long long per_sm, int spread, const void *cluster_kernel);

/* A block's K: its range (k_tiles_per_split steps of tile_k) where K is
 * split, else all of K. */
static inline long long pg_block_k(const pg_layout_args *args, int tile_k) {
  return args->splits > 1 ? (long long)args->k_tiles_per_split * tile_k : args->k;
}

/* ---- operands TMA cannot read (src/kernels/copy_operands.cu) ------------------
 * Where A or B is not 16-byte aligned with a leading dimension of a multiple
 * of 4, sets the launch's first kernel to copy that operand into the
 * workspace, where the kernel then reads it: A where its layout asks (M rows
 * of args->ldp = K rounded up to 4), then B where its layout asks (K rows of
 * N rounded up to 4; at the workspace's start where A is not copied);
 * returns 1, or 0 (nothing set) where TMA reads both where they are. Call
 * it before pg_configure_split_k, whose planes go after the copies. */
int pg_configure_operand_copies(pg_layout_args *args, const pg_device *device,
                                pg_kernel_launch *launch);

/* A first kernel that writes operands into the workspace, a thread 4
 * consecutive floats of a row, PG_FIRST_THREADS a block
 * (kernels/first_kernel.cuh): its launch over `grid_rows` rows (strided
 * past 65535), the workspace's regions for a_rows rows of a_ld floats
 * (args->ldp becomes a_ld) then b_rows rows of b_ld, and the entry's
 * kernel's views of A and B there (of those with rows). */
#define PG_FIRST_THREADS 256
void pg_configure_first_kernel(pg_layout_args *args, pg_kernel_launch *launch, const void *kernel,
                               long long grid_rows, long long a_rows, long long a_ld,
                               long long b_rows, long long b_ld);

#ifdef __cplusplus
}
#endif
#endif
