/* What the wgmma members (src/kernels/31_* .. 35_*) share: the warpgroup MMA
 * and its shared-memory descriptors, the tile's swizzled layout
 * (wgmma_tile.h), one stage's products for a warpgroup, the epilogue, and
 * the plan of the call (B^T first, into the workspace). Only how a stage
 * reaches shared memory and who waits for it differs between the members.
 *
 * References: PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-
 * Accumulate Instructions" (wgmma.mma_async, wgmma.fence,
 * wgmma.commit_group, wgmma.wait_group; "Matrix Descriptor Format";
 * "Shared Memory Matrix Layout" with 128-byte swizzling).
 *
 * A warpgroup is 4 consecutive warps (128 threads, the first warp's index a
 * multiple of 4). One m64n128k8 instruction multiplies 64 rows of A (8 along
 * K) by 128 columns of B into 64 FP32 accumulators per thread; with TF32
 * operands both come from shared memory K-major. The tensor cores read the
 * FP32 bit patterns and use their TF32 part (as 30 mma_cp_async does; the
 * error bound is docs/measuring.md's). */
#ifndef PG_WGMMA_CUH
#define PG_WGMMA_CUH

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "kernels/entry.h"
#include "kernels/ptx.cuh"
#include "kernels/tile128.cuh" /* t128_load_row4, t128_cp_async_piece, t128_ring_next */
#include "kernels/tma_common.cuh"
#include "kernels/wgmma_tile.h"

#define WG_WARPGROUP 128
#define WG_ACC_OF(tn) ((tn) / 2) /* accumulators a thread of one m64n<tn> product */
#define WG_ACC WG_ACC_OF(WG_TILE_N) /* of the tile's m64n128 product: 64 */

/* The sm_90a features (wgmma, setmaxnreg) exist only in code built for
 * sm_90a: elsewhere the kernels trap, and the host refuses them below
 * sm_90 (min_cc). */
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define PG_HAVE_WGMMA 1

/* The descriptor of a K-major operand in 128-byte swizzle at `smem` (a
 * 1024-byte-aligned group of 8 rows, or 32 * i bytes past one along K):
 *   bits  0-13  start address / 16
 *   bits 16-29  leading-dimension byte offset / 16: unused for a swizzled
 *               K-major operand whose K (8 TF32 = 32 bytes) fits in the
 *               128-byte span; 1 by convention
 *   bits 32-45  stride-dimension byte offset / 16: 1024, from one group of
 *               8 rows to the next
 *   bits 62-63  swizzle: 1 = 128 bytes. */
static __device__ __forceinline__ uint64_t wg_desc(const void *smem) {
  const uint64_t addr = pg_smem_addr(smem);
  return ((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
}

/* Orders this warpgroup's register and shared-memory accesses before the
 * wgmma that follows (before the first of a stage). */
static __device__ __forceinline__ void wg_fence(void) {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
/* Closes the wgmma instructions issued since the last commit into a group. */
static __device__ __forceinline__ void wg_commit(void) {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
/* Waits until at most N of this warpgroup's groups are in flight. */
template <int N> static __device__ __forceinline__ void wg_wait(void) {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/* The accumulators are outputs of the asynchronous instruction: the
 * compiler must not read them (the epilogue) before a wait says they are
 * written. An empty volatile asm that "changes" each is ordered after the
 * wait and before every later use. */
template <int TN = WG_TILE_N>
static __device__ __forceinline__ void wg_fence_acc(float d[WG_ACC_OF(TN)]) {
#pragma unroll
  for (int i = 0; i < WG_ACC_OF(TN); ++i) asm volatile("" : "+f"(d[i])::"memory");
}

#define WG_D8(i)                                                                          \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
      "+f"(d[i + 6]), "+f"(d[i + 7])
#define WG_D64(i) WG_D8(i), WG_D8(i + 8), WG_D8(i + 16), WG_D8(i + 24), WG_D8(i + 32), \
                  WG_D8(i + 40), WG_D8(i + 48), WG_D8(i + 56)

/* d += A (64 x 8, descriptor da) * B (8 x TN, descriptor db of B^T), issued
 * asynchronously. Accumulator i of a thread (lane l of the warpgroup's warp
 * w, g = l / 4, t = l % 4) is C[16w + g + 8 * ((i / 2) % 2)][8 * (i / 4) +
 * 2t + i % 2] of the 64 x TN product. */
template <int TN> struct wg_mma;
template <> struct wg_mma<128> {
  static __device__ __forceinline__ void k8(float d[64], uint64_t da, uint64_t db) {
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, "
        "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, "
        "%35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, "
        "%52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, 1, 1, 1;\n"
        : WG_D64(0)
        : "l"(da), "l"(db)
        : "memory");
  }
};
template <> struct wg_mma<256> {
  static __device__ __forceinline__ void k8(float d[128], uint64_t da, uint64_t db) {
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, "
        "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, "
        "%35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, "
        "%52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, "
        "%69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, "
        "%86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, "
        "%102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, "
        "%116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, "
        "1, 1, 1;\n"
        : WG_D64(0), WG_D64(64)
        : "l"(da), "l"(db)
        : "memory");
  }
};
/* The same with A from registers ("RS"): a[0..3] are this thread's TF32
 * operands of the 64 x 8 A (warp w of the warpgroup, g = lane / 4,
 * t = lane % 4): A[16w + g][t], A[16w + g + 8][t], A[16w + g][t + 4],
 * A[16w + g + 8][t + 4], as FP32 bit patterns. They must stay unchanged
 * until the instruction's group is waited for. */
static __device__ __forceinline__ void wg_mma_rs_m64n256k8(float d[128], const unsigned a[4],
                                                           uint64_t db) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
      "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "
      "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, "
      "%70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, "
      "%87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, "
      "%103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, "
      "%117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
      "{%128, %129, %130, %131}, %132, 1, 1, 1;\n"
      : WG_D64(0), WG_D64(64)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)
      : "memory");
}
/* The same on 128 columns, d = A B + (accumulate ? d : 0): with
 * accumulate = 0 the product starts d afresh (scale-d). */
static __device__ __forceinline__ void wg_mma_rs_m64n128k8(float d[64], const unsigned a[4],
                                                           uint64_t db, int accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
      "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "
      "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "{%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
      : WG_D64(0)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate)
      : "memory");
}
#undef WG_D64
#undef WG_D8

/* One stage's products for 64 rows: acc += A rows (a_rows: the first of
 * them in the stage, a multiple of 8) times the stage's B^T (TN rows), four
 * K steps of 8 (32 bytes further along the swizzled rows each: +2 in the
 * descriptor's address field). The caller fences before and commits after. */
template <int TN = WG_TILE_N>
static __device__ __forceinline__ void wg_stage_mma(const float *a_rows, const float *bt,
                                                    float acc[WG_ACC_OF(TN)]) {
  const uint64_t da = wg_desc(a_rows), db = wg_desc(bt);
#pragma unroll
  for (int kk = 0; kk < WG_TILE_K / 8; ++kk) wg_mma<TN>::k8(acc, da + 2 * kk, db + 2 * kk);
}

/* A TMA ring's barriers, made by thread 0 before the block's one sync:
 * full[s] completes on the producer's arrive.expect_tx and the stage's
 * bytes, empty[s] on `consumers` arrivals (the threads that read it). */
static __device__ __forceinline__ void wg_ring_init(unsigned long long *full,
                                                    unsigned long long *empty, int stages,
                                                    unsigned consumers) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      pg_mbar_init(&full[s], 1);
      pg_mbar_init(&empty[s], consumers);
    }
    pg_fence_barrier_init();
  }
  __syncthreads(); /* the barriers exist before anyone arrives or waits */
}

/* Generic-proxy writes (st.shared, cp.async) become visible to the wgmma
 * that reads them (the async proxy) only after this fence and a barrier. */
static __device__ __forceinline__ void wg_fence_proxy_async(void) {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
#endif /* __CUDA_ARCH_FEAT_SM90_ALL */

static __device__ __forceinline__ float *wg_stage_a(float *stage) { return stage; }
static __device__ __forceinline__ float *wg_stage_bt(float *stage) {
  return stage + WG_STAGE_A_BYTES / 4;
}

/* Where the 16-byte piece p (0..7) of row r lands in a swizzled [rows][32]
 * tile, in floats from its start. */
static __device__ __forceinline__ int wg_swizzled(int r, int p) {
  return r * WG_TILE_K + ((p ^ (r % 8)) * 4);
}

/* C = alpha * acc + beta * C for the 64 x TN block at (row0, col0) that a
 * warpgroup's accumulators hold (layout: wg_mma), guarded; C is not read
 * when beta == 0. Pairs of columns go as one 8-byte store where both are
 * inside and the address allows. Each accumulator goes through fix(row,
 * col, value) first (col may be past N: its value is not stored). */
template <int TN = WG_TILE_N, class Fix = pg_keep>
static __device__ __forceinline__ void wg_epilogue(const pg_gemm_args &g, int row0, int col0,
                                                   const float acc[WG_ACC_OF(TN)], Fix fix = {}) {
  const int lane = threadIdx.x % 32, warp = (threadIdx.x / 32) % 4;
  const int r = row0 + 16 * warp + lane / 4, c = col0 + 2 * (lane % 4);
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = r + 8 * half;
    if (row >= g.m) continue;
    float *c_row = g.c + (size_t)row * g.ldc;
#pragma unroll
    for (int j = 0; j < TN / 8; ++j) {
      const int col = c + 8 * j;
      float v0 = g.alpha * fix(row, col, acc[4 * j + 2 * half]),
            v1 = g.alpha * fix(row, col + 1, acc[4 * j + 2 * half + 1]);
      if (col + 1 < g.n && ((uintptr_t)(c_row + col) % 8) == 0) {
        float2 *p = (float2 *)(c_row + col);
        if (g.beta != 0.f) {
          const float2 old = *p;
          v0 = fmaf(g.beta, old.x, v0);
          v1 = fmaf(g.beta, old.y, v1);
        }
        *p = make_float2(v0, v1);
        continue;
      }
      if (col < g.n) c_row[col] = g.beta == 0.f ? v0 : fmaf(g.beta, c_row[col], v0);
      if (col + 1 < g.n) c_row[col + 1] = g.beta == 0.f ? v1 : fmaf(g.beta, c_row[col + 1], v1);
    }
  }
}

static __device__ __forceinline__ int wg_k_tiles(const pg_gemm_args &g) {
  return (int)(((long long)g.k + WG_TILE_K - 1) / WG_TILE_K);
}

/* ---- the host's side (the entries' configure functions) ---- */

/* The call's plan: B^T into the workspace first (pg_configure_transpose_b),
 * then `kernel` over the 128 x tile_n tiles, reading B^T where B was. */
static inline void wg_configure(pg_kernel_launch *launch, const void *kernel, pg_layout_args *g,
                                int tile_n = WG_TILE_N) {
  launch->kernel = kernel;
  launch->grid_x = ((long long)g->n + tile_n - 1) / tile_n;
  launch->grid_y = ((long long)g->m + WG_TILE_M - 1) / WG_TILE_M;
  pg_configure_transpose_b(g, launch);
}

/* The build's Hopper code for these files is sm_90a (CMakeLists.txt says
 * PG_SM90A_FEATURES): without it the kernels are traps, and the entries
 * refuse to run, with the reason. */
#ifndef PG_SM90A_FEATURES
#define PG_SM90A_FEATURES 1
#endif
static inline pg_status wg_check_sm90a(char *why, size_t why_size) {
  if (PG_SM90A_FEATURES) return PG_OK;
  snprintf(why, why_size, "this build has no sm_90a code for the wgmma kernels "
                          "(PG_SM90A_ARCHITECTURES without 90a); wgmma needs it");
  return PG_ERR_ARCH;
}

/* B^T's leading dimension (K rounded up to 4) must be an int. */
static inline pg_status wg_check(const pg_layout_args *g, char *why, size_t why_size) {
  const pg_status arch = wg_check_sm90a(why, why_size);
  if (arch != PG_OK) return arch;
  if (WG_LDT(g->k) > INT_MAX) {
    snprintf(why, why_size, "K = %d: B^T's rows (K rounded up to 4 floats) would pass INT_MAX",
             g->k);
    return PG_ERR_UNSUPPORTED;
  }
  return PG_OK;
}

/* The TMA members: also A's layout rules (B^T in the workspace keeps them). */
static inline pg_status wg_check_tma(const pg_layout_args *g, char *why, size_t why_size) {
  const pg_status st = wg_check(g, why, why_size);
  return st != PG_OK ? st : pg_tma_check_a(g, why, why_size);
}

/* The TMA members' boxes: A's 128 rows and B^T's TN (from the workspace),
 * 32 floats along K, both in the 128-byte swizzle. */
template <int TN> struct wg_bt_boxes {
  static constexpr pg_tma_boxes boxes = {.a_box_k = WG_TILE_K, .a_box_m = WG_TILE_M,
                                         .a_swizzle_bytes = WG_ROW_BYTES, .b_box_n = TN,
                                         .b_box_k = WG_TILE_K, .b_k_major = 1,
                                         .b_swizzle_bytes = WG_ROW_BYTES};
};

/* A wgmma entry's boxes for its kernel that takes any layout: maps of rank
 * 3 over the batch (pg_tma_reads_layout), B as it is where op(B) = T (N x
 * K, in boxes of the same shape and swizzle); A is read M x K only (A^T
 * from the workspace, or the split, where op(A) = T). */
static constexpr pg_tma_boxes wg_any_layout_boxes(pg_tma_boxes boxes) {
  boxes.any_layout = 1;
  boxes.a_t_swizzle_bytes = 0;
  boxes.b_t_swizzle_bytes = WG_ROW_BYTES;
  return boxes;
}
template <int TN> struct wg_bt_any_boxes {
  static constexpr pg_tma_boxes boxes = wg_any_layout_boxes(wg_bt_boxes<TN>::boxes);
};


/* The rules of a member that reads B K-major and takes any layout: A's
 * TMA rules where TMA reads A as it is (op(A) = N), B's where it reads B as
 * it is (op(B) = T; else B^T in the workspace); with_tma 0: none (cp.async
 * reads any alignment). */
static inline pg_status wg_check_any(const pg_layout_args *g, int with_tma, char *why,
                                     size_t why_size) {
  pg_status st = wg_check(g, why, why_size);
  if (st == PG_OK && with_tma && !g->op_a) st = pg_tma_check_a(g, why, why_size);
  if (st == PG_OK && with_tma && g->op_b) st = pg_tma_check_b(g, why, why_size);
  return st;
}

#define WG_TILE_INFO .tile_m = WG_TILE_M, .tile_n = WG_TILE_N, .tile_k = WG_TILE_K

/* Every member: wgmma on sm_90a. PG_RULES_WGMMA_COMMON adds what the TMA
 * members have from PG_RULES_TMA_COMMON: the sm_80 build (no wgmma there)
 * traps. */
#define PG_RULES_WGMMA                                                                         \
  {PG_SM90_UP, PG_MUST, "HGMMA", "the products no longer run on wgmma (the warpgroup MMA)"},   \
      {PG_SM90_UP, PG_MUST, "WARPGROUP.ARRIVE", "no wgmma.fence before the products"},          \
      {PG_ANY_SM, PG_NEVER, "HMMA", "the products went back to mma.sync"}
#define PG_RULES_WGMMA_COMMON                                                                  \
  PG_RULES_WGMMA,                                                                              \
      {PG_SM8X, PG_MUST, "BPT.TRAP", "the sm_80 build no longer traps: it would silently do nothing"}

#endif
