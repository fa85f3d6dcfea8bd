/* A first kernel for the TMA entries that take any layout (the split forms
 * of tma_ws, 13_tma_ws_splitk.cu): an operand that is not where TMA reads it
 * (a base address off 16 bytes, or a leading dimension that is no multiple
 * of 4 floats) is copied into the call's workspace with 16-byte rows, as the
 * plan's first-kernel fields describe: where A's layout asks, A's M rows of
 * ldp = K rounded up to 4 floats, then, where B's layout asks, B's K rows of
 * N rounded up to 4 (zeros in the padding). The kernel then reads them there
 * (pg_kernel_launch.prepare_a_rows, prepare_b_rows); an operand TMA reads
 * is not copied.
 *
 * Memory-bound, and overlapped with the kernel after it (internal.h,
 * pg_configure_copy_ready): the copy goes chunk by chunk of K, chunk p of
 * every split range before chunk p + 1 of any, so that each range's first
 * K steps arrive first, and counts each finished task in its chunk's
 * counter; the kernel, launched programmatically once every block of this
 * one has started (each triggers it first thing), waits for a chunk's
 * count before it reads the chunk. A chunk's tasks: A's rows (a task a
 * row's columns of the chunk) where A is copied, then B's rows of the
 * chunk, CO_SEGS segments of 32 floats of a row a task, where B is. A
 * warp does a task at a time (every load and store of the warp 128
 * contiguous bytes, whatever the row's alignment; a lane's CO_SEGS loads
 * in flight before its stores), the grid's warps striding over the tasks;
 * the grid is CO_BLOCKS_PER_SM blocks an SM, so that the kernel's blocks
 * find room beside it. */
#include "kernels/first_kernel.cuh"
#include "kernels/tma_ws.h" /* TWS_READY_RANGE */

#define CO_MAX_GRID_Y 65535 /* the emulated entry's first kernel: rows strided past it */
#define CO_SEGS (PG_READY_CHUNK_K / 32) /* 32-float segments of a task: a chunk's width */
#define CO_WARPS (PG_FIRST_THREADS / 32)
#define CO_BLOCKS_PER_SM 2

/* The copies' rows (A's M rows of K rounded up to 4 floats where its
 * layout asks, then B's K rows of N rounded up to 4), B's tasks a row,
 * and the chunks of K: `range` floats a split range, per_range chunks
 * each, `chunks` in all, and a chunk's tasks (the last chunk of a range
 * fewer: the rest do nothing). */
typedef struct {
  long long a_rows, b_rows, a_ld, b_ld, b_per_row;
  long long range, per_range, splits, chunks, per_chunk;
} co_units;

static __host__ __device__ inline co_units co_units_of(const pg_gemm_args &g) {
  co_units u;
  u.a_rows = g.vec_a ? 0 : g.m;
  u.b_rows = g.vec_b ? 0 : g.k;
  u.a_ld = PG_PLANES_LD(g.k);
  u.b_ld = PG_PLANES_LD(g.n);
  u.b_per_row = u.b_rows > 0 ? (u.b_ld + PG_READY_CHUNK_K - 1) / PG_READY_CHUNK_K : 0;
  u.range = TWS_READY_RANGE(g.splits, g.k_tiles_per_split, g.k);
  u.per_range = (u.range + PG_READY_CHUNK_K - 1) / PG_READY_CHUNK_K;
  u.splits = g.splits > 1 ? g.splits : 1;
  u.chunks = u.splits * u.per_range;
  u.per_chunk = u.a_rows + (long long)PG_READY_CHUNK_K * u.b_per_row;
  return u;
}

/* Floats c0 + lane + 32 j (j < CO_SEGS, below `end`) of the row at `in` to
 * the row at `out`; those at or past `width` as zeros. */
static __device__ __forceinline__ void co_copy_row(const float *in, float *out, long long c0,
                                                   long long end, long long width, int lane) {
  float v[CO_SEGS];
#pragma unroll
  for (int j = 0; j < CO_SEGS; ++j) {
    const long long c = c0 + lane + 32 * j;
    v[j] = c < width && c < end ? __ldg(in + c) : 0.f;
  }
#pragma unroll
  for (int j = 0; j < CO_SEGS; ++j) {
    const long long c = c0 + lane + 32 * j;
    if (c < end) out[c] = v[j];
  }
}

__global__ void __launch_bounds__(PG_FIRST_THREADS) pg_copy_operands_kernel(const pg_gemm_args g) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  /* The kernel after this one may start once every block of it has. */
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
  const co_units u = co_units_of(g);
  float *const a_out = g.partials, *const b_out = g.partials + u.a_rows * u.a_ld;
  unsigned long long *const ready = (unsigned long long *)(b_out + u.b_rows * u.b_ld);
  const long long warps = (long long)gridDim.x * CO_WARPS;
  const int lane = threadIdx.x % 32;
  const long long tasks = u.chunks * u.per_chunk;
  for (long long t = (long long)blockIdx.x * CO_WARPS + threadIdx.x / 32; t < tasks; t += warps) {
    /* Chunk p of range s: the order p-major, so every range's start first. */
    const long long v = t / u.per_chunk, local = t - v * u.per_chunk;
    const long long p = v / u.splits, s = v - p * u.splits;
    const long long c0 = s * u.range + p * PG_READY_CHUNK_K;
    long long c1 = c0 + PG_READY_CHUNK_K;
    if (c1 > (s + 1) * u.range) c1 = (s + 1) * u.range;
    if (c1 > g.k) c1 = g.k;
    if (local < u.a_rows) { /* A's row `local`, columns c0 .. c1 (to its end at K's last) */
      co_copy_row(g.a + local * g.lda, a_out + local * u.a_ld, c0, c1 == g.k ? u.a_ld : c1, g.k,
                  lane);
    } else { /* B's row c0 + i, its q-th stretch of PG_READY_CHUNK_K columns */
      const long long i = (local - u.a_rows) / u.b_per_row;
      const long long q = local - u.a_rows - i * u.b_per_row;
      if (c0 + i >= c1) continue; /* past the chunk's rows: nothing, not counted */
      const long long row = c0 + i, first = q * PG_READY_CHUNK_K;
      const long long end = first + PG_READY_CHUNK_K < u.b_ld ? first + PG_READY_CHUNK_K : u.b_ld;
      co_copy_row(g.b + row * g.ldb, b_out + row * u.b_ld, first, end, g.n, lane);
    }
    /* The warp's stores, then its count (release: the kernel's acquire of
     * the count sees them). */
    __threadfence();
    __syncwarp();
    if (lane == 0) atomicAdd(&ready[s * u.per_range + p], 1ull);
  }
}

/* What every first kernel's launch says but its grid: the workspace it
 * fills (a_rows rows of a_ld floats, args->ldp, then b_rows of b_ld) and
 * the plan's first-kernel fields. */
static void set_first_kernel(pg_gemm_args *args, pg_kernel_launch *launch, const void *kernel,
                             long long a_rows, long long a_ld, long long b_rows, long long b_ld) {
  args->ldp = (int)a_ld;
  launch->workspace_bytes +=
      ((size_t)a_rows * (size_t)a_ld + (size_t)b_rows * (size_t)b_ld) * sizeof(float);
  launch->prepare_kernel = kernel;
  launch->prepare_threads = PG_FIRST_THREADS;
  launch->prepare_a_rows = a_rows;
  launch->prepare_b_rows = b_rows;
  launch->prepare_b_ld = (int)b_ld;
}

extern "C" void pg_configure_first_kernel(pg_gemm_args *args, pg_kernel_launch *launch,
                                          const void *kernel, long long grid_rows,
                                          long long a_rows, long long a_ld, long long b_rows,
                                          long long b_ld) {
  set_first_kernel(args, launch, kernel, a_rows, a_ld, b_rows, b_ld);
  const long long widest = a_ld > b_ld ? a_ld : b_ld;
  launch->prepare_grid_x = (widest / 4 + PG_FIRST_THREADS - 1) / PG_FIRST_THREADS;
  launch->prepare_grid_y = grid_rows < CO_MAX_GRID_Y ? grid_rows : CO_MAX_GRID_Y;
}

extern "C" int pg_configure_operand_copies(pg_gemm_args *args, pg_kernel_launch *launch,
                                           int sm_count) {
  if (args->vec_a && args->vec_b) return 0;
  const co_units u = co_units_of(*args);
  set_first_kernel(args, launch, (const void *)pg_copy_operands_kernel, u.a_rows, u.a_ld,
                   u.b_rows, u.b_rows > 0 ? u.b_ld : 0);
  /* Its grid: CO_BLOCKS_PER_SM blocks an SM (fewer where there are fewer
   * tasks than warps; the tasks are counted once the split planner has
   * run: pg_configure_copy_ready). The kernel takes A's rows to be ldp =
   * PG_PLANES_LD(K) wide, as set_first_kernel has just set it and the plan
   * reads them (the split planner leaves ldp alone after a first kernel:
   * reduce_splits.cu). */
  launch->prepare_grid_x = (long long)(sm_count > 0 ? sm_count : 1) * CO_BLOCKS_PER_SM;
  launch->prepare_grid_y = 1;
  launch->copied_floats = u.a_rows * u.a_ld + u.b_rows * u.b_ld;
  return 1;
}

extern "C" long long pg_ready_chunks(const pg_gemm_args *args) { return co_units_of(*args).chunks; }

extern "C" void pg_configure_copy_ready(const pg_gemm_args *args, pg_kernel_launch *launch) {
  if (launch->prepare_kernel != (const void *)pg_copy_operands_kernel) return;
  const co_units u = co_units_of(*args);
  /* 16 bytes at a time, so that the planes after the counters stay aligned. */
  launch->ready_chunks = (u.chunks + 1) / 2 * 2;
  launch->ready_b_tasks = u.b_per_row;
  launch->workspace_bytes += (size_t)launch->ready_chunks * sizeof(unsigned long long);
  const long long blocks = (u.chunks * u.per_chunk + CO_WARPS - 1) / CO_WARPS;
  if (blocks < launch->prepare_grid_x) launch->prepare_grid_x = blocks > 0 ? blocks : 1;
}
