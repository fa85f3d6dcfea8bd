/* Inline-PTX wrappers shared by the kernels. One place for each instruction,
 * so a kernel file shows the mechanism, not the asm syntax.
 * Reference: PTX ISA, "cp.async", "cp.async.commit_group", "cp.async.wait_group". */
#ifndef PG_PTX_CUH
#define PG_PTX_CUH

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "pipegemm kernels need sm_80 or newer (cp.async); set CMAKE_CUDA_ARCHITECTURES"
#endif

static __device__ __forceinline__ unsigned pg_smem_addr(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

/* 4-byte asynchronous copy global -> shared. src_bytes is 4 or 0; with 0
 * nothing is read and the destination is zero-filled, which is how edge
 * tiles are padded without a branch around the copy. `.ca` is the only cache
 * mode a 4-byte copy may use. */
static __device__ __forceinline__ void pg_cp_async_4(void *smem, const void *gmem,
                                                     int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(pg_smem_addr(smem)),
               "l"(gmem), "r"(src_bytes)
               : "memory");
}

/* 8-byte asynchronous copy (`.ca`, as every copy under 16 bytes). */
static __device__ __forceinline__ void pg_cp_async_8(void *smem, const void *gmem,
                                                     int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(pg_smem_addr(smem)),
               "l"(gmem), "r"(src_bytes)
               : "memory");
}

/* 16-byte asynchronous copy through L1 (`.ca`): for a small operand that
 * the blocks of an SM read again. */
static __device__ __forceinline__ void pg_cp_async_16_ca(void *smem, const void *gmem,
                                                         int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(pg_smem_addr(smem)),
               "l"(gmem), "r"(src_bytes)
               : "memory");
}

/* 16-byte asynchronous copy; `.cg` skips L1 (the tile is read once per block). */
static __device__ __forceinline__ void pg_cp_async_16(void *smem, const void *gmem,
                                                      int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(pg_smem_addr(smem)),
               "l"(gmem), "r"(src_bytes)
               : "memory");
}

/* An L2 cache policy under which the lines an access brings in are the
 * first evicted (PTX ISA, "createpolicy"): for an operand read once, so
 * that streaming it does not push out lines that are read again. */
static __device__ __forceinline__ unsigned long long pg_l2_evict_first_policy(void) {
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

/* pg_cp_async_16 under an L2 cache policy (pg_l2_evict_first_policy). */
static __device__ __forceinline__ void pg_cp_async_16_policy(void *smem, const void *gmem,
                                                             int src_bytes,
                                                             unsigned long long policy) {
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n" ::"r"(
                   pg_smem_addr(smem)),
               "l"(gmem), "r"(src_bytes), "l"(policy)
               : "memory");
}

/* A 16-byte load of data read once (evict-first, as __ldcs) whose miss
 * in L2 fetches the whole 128-byte line around it, not only the sectors
 * asked for (PTX ISA, "ld": .L2::128B): where a warp's pieces of a line
 * are not all its own (rows off 16 bytes, each block a window of its own),
 * the line still comes from DRAM in one piece. Not volatile: a pure read
 * of memory the kernel does not write, free to be scheduled. */
static __device__ __forceinline__ float4 pg_ld_stream_line(const float4 *p) {
  float4 v;
  asm("ld.global.cs.L2::128B.v4.f32 {%0, %1, %2, %3}, [%4];\n"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "l"(p));
  return v;
}

/* Closes the group of copies this thread issued since the last commit. */
static __device__ __forceinline__ void pg_cp_async_commit(void) {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Waits until at most `pending` of this thread's groups are still in flight.
 * The count must be an immediate in PTX; the stage count is a run-time value,
 * so the switch maps it (a uniform branch: every thread takes the same case). */
static __device__ __forceinline__ void pg_cp_async_wait(int pending) {
  switch (pending) {
    case 0: asm volatile("cp.async.wait_group 0;\n" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;\n" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;\n" ::: "memory"); break;
    case 3: asm volatile("cp.async.wait_group 3;\n" ::: "memory"); break;
    case 4: asm volatile("cp.async.wait_group 4;\n" ::: "memory"); break;
    case 5: asm volatile("cp.async.wait_group 5;\n" ::: "memory"); break;
    case 6: asm volatile("cp.async.wait_group 6;\n" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 7;\n" ::: "memory"); break;
  }
}

/* ---- warp-level tensor-core MMA (PTX ISA: "mma", m16n8k8 with .tf32) ----
 * d += a * b for one 16x8 tile of C, 8 along K, on one warp. Fragments, with
 * g = lane / 4 and t = lane % 4 (PTX ISA, "Matrix Fragments for mma.m16n8k8"):
 *   a[0] = A[g][t], a[1] = A[g+8][t], a[2] = A[g][t+4], a[3] = A[g+8][t+4];
 *   b[0] = B[t][g], b[1] = B[t+4][g];
 *   d[0] = C[g][2t], d[1] = C[g][2t+1], d[2] = C[g+8][2t], d[3] = C[g+8][2t+1].
 * The operands go in as FP32 bit patterns, with no cvt.rna.tf32: the tensor
 * core uses their TF32 part, as wgmma does with FP32 in shared memory, and
 * the error stays within the TF32 bound (docs/measuring.md; the GPU tests
 * hold every TF32 entry to it). The sums are FP32. Not volatile: a pure
 * function of its operands, which the compiler may schedule. */
static __device__ __forceinline__ void pg_mma_tf32_m16n8k8(float d[4], const float a[4],
                                                           const float b[2]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])), "r"(__float_as_uint(a[2])),
        "r"(__float_as_uint(a[3])), "r"(__float_as_uint(b[0])), "r"(__float_as_uint(b[1])));
}

/* x rounded to TF32 (nearest, ties away: cvt.rna.tf32.f32), as FP32: the
 * big part of a 3xTF32 split. */
static __device__ __forceinline__ float pg_tf32_big(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
}

/* What big leaves of x, rounded to TF32 again: the small part; none for
 * Inf and NaN (their big part is themselves). */
static __device__ __forceinline__ float pg_tf32_small(float x, float big) {
  return fabsf(big) < INFINITY ? pg_tf32_big(x - big) : 0.f;
}

/* Programmatic dependent launch (PTX ISA: "griddepcontrol", sm_90; no-ops
 * below). A kernel launched programmatically behind another
 * (cudaLaunchAttributeProgrammaticStreamSerialization) may start once
 * every block of that one has called pg_grid_launch_dependents or ended;
 * pg_grid_dependency_wait returns once that kernel has completed and its
 * writes are visible (at once where the kernel was launched in plain
 * stream order). So a kernel's launch and start overlap the end of the
 * one before it. */
static __device__ __forceinline__ void pg_grid_dependency_wait(void) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}
static __device__ __forceinline__ void pg_grid_launch_dependents(void) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

/* ---- mbarrier (PTX ISA: "Parallel Synchronization and Communication
 * Instructions: mbarrier"). A 64-bit object in shared memory that counts
 * arrivals; when the expected count is reached its current phase completes
 * and the next begins. Waiters name the phase by its parity (0, 1, 0, ...),
 * so a ring of barriers needs one bit of state per slot, not a token. */

/* One thread initialises; the block must sync before anyone else uses it. */
static __device__ __forceinline__ void pg_mbar_init(unsigned long long *bar, unsigned count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(pg_smem_addr(bar)), "r"(count)
               : "memory");
}

/* An ordinary arrival (release: this thread's earlier shared-memory reads
 * and writes are ordered before the phase completes). */
static __device__ __forceinline__ void pg_mbar_arrive(unsigned long long *bar) {
  /* The returned phase state is not needed: waits go by parity. */
  asm volatile(
      "{\n .reg .b64 state;\n"
      " mbarrier.arrive.shared.b64 state, [%0];\n}\n" ::"r"(pg_smem_addr(bar))
      : "memory");
}

/* Arrives on `bar` once every cp.async this thread issued so far has landed.
 * `.noinc`: the arrival is one of the count given at init (without it the
 * instruction would add one to the expected count and cancel itself). */
static __device__ __forceinline__ void pg_cp_async_mbar_arrive_noinc(unsigned long long *bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(pg_smem_addr(bar))
               : "memory");
}

/* Returns once the phase of parity `parity` has completed (acquire: what the
 * arriving threads and their tracked copies wrote is visible). sm_90 has
 * try_wait, which may suspend the thread in hardware for a while; sm_80 has
 * only test_wait, a poll. */
static __device__ __forceinline__ void pg_mbar_wait_parity(unsigned long long *bar,
                                                           unsigned parity) {
  const unsigned addr = pg_smem_addr(bar);
  unsigned done = 0;
  while (!done) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile(
        "{\n .reg .pred p;\n"
        " mbarrier.try_wait.parity.shared.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(addr), "r"(parity)
        : "memory");
#else
    asm volatile(
        "{\n .reg .pred p;\n"
        " mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(addr), "r"(parity)
        : "memory");
#endif
  }
}

/* Waits for every cp.async this thread issued (a producer before it exits). */
static __device__ __forceinline__ void pg_cp_async_wait_all(void) {
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

/* ---- Hopper tensor memory accelerator (PTX ISA: "cp.async.bulk.tensor",
 * "mbarrier.expect_tx"). One thread hands the copy engine a tensor map (the
 * matrix's shape, strides, box and swizzle, encoded on the host) and a
 * coordinate; the engine moves the whole box into shared memory, fills
 * out-of-range elements with zeros, and counts the bytes it wrote against
 * an mbarrier's transaction count. These exist on sm_90 only: callers guard
 * with PG_HAVE_TMA, so no Hopper instruction reaches sm_80 code. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define PG_HAVE_TMA 1

/* Orders this thread's later async-proxy accesses to global memory (the
 * copy engine's reads of a tensor) after the generic-proxy writes it has
 * observed (a first kernel's copy, seen through pg_grid_dependency_wait). */
static __device__ __forceinline__ void pg_fence_proxy_async_global(void) {
  asm volatile("fence.proxy.async.global;\n" ::: "memory");
}

/* Makes barrier initialisation visible to the async proxy (the copy engine)
 * before any copy may complete on the barrier. */
static __device__ __forceinline__ void pg_fence_barrier_init(void) {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* Releases a ring's stage that this thread read with ordinary loads
 * (generic proxy) to the copy engine, which refills it (async proxy) once
 * the phase completes: the proxy fence orders the reads before those
 * writes, as the PTX memory model asks where two proxies touch the same
 * bytes. Without it ptxas issues the arrival with the stage's last shared
 * loads still in flight (their FFMAs follow it), and on an H200 under
 * other streams' kernels a consumer warp of tma_ws_n32 now and then read
 * bytes of a later k-step: one warp's share of a tile wrong in about 1 of
 * 500 checked calls (test_gpu_threads, 8 threads, 2000 rounds; none in
 * 3000 rounds with the fence). */
static __device__ __forceinline__ void pg_mbar_release_to_copy_engine(unsigned long long *bar) {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  pg_mbar_arrive(bar);
}

/* Arrives (one of the init count) and raises the phase's expected
 * transaction count by `bytes`: the phase completes when the arrivals are
 * in and that many bytes have landed. */
static __device__ __forceinline__ void pg_mbar_arrive_expect_tx(unsigned long long *bar,
                                                                unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(
                   pg_smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

/* Box at (x, y) of a 2-D tensor map -> shared memory at `dst`, completing on
 * `bar`. x is the innermost (contiguous) coordinate. `map` must be a
 * __grid_constant__ parameter (or in global/const memory). */
static __device__ __forceinline__ void pg_tma_load_2d(void *dst, const void *map, int x, int y,
                                                      unsigned long long *bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(pg_smem_addr(dst)),
      "l"(map), "r"(x), "r"(y), "r"(pg_smem_addr(bar))
      : "memory");
}

/* Box at (x, y, z) of a 3-D tensor map (z: a matrix of a batch, as
 * src/tma.c encodes the layouts' maps) -> shared memory at `dst`,
 * completing on `bar`; as pg_tma_load_2d. */
static __device__ __forceinline__ void pg_tma_load_3d(void *dst, const void *map, int x, int y,
                                                      int z, unsigned long long *bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(pg_smem_addr(dst)),
      "l"(map), "r"(x), "r"(y), "r"(z), "r"(pg_smem_addr(bar))
      : "memory");
}

/* ---- thread-block clusters (PTX ISA: "Cluster", "mapa", "barrier.cluster",
 * "cp.async.bulk.tensor" .multicast::cluster). The blocks of a cluster run
 * at once on one GPC and may address each other's shared memory. */

/* This block's rank in its cluster. */
static __device__ __forceinline__ unsigned pg_cluster_rank(void) {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

/* Every thread of every block of the cluster: what each wrote before
 * (barrier initialisation included, after pg_fence_barrier_init_cluster) is
 * visible to all after. */
static __device__ __forceinline__ void pg_cluster_sync(void) {
  asm volatile("barrier.cluster.arrive.release.aligned;\n"
               "barrier.cluster.wait.acquire.aligned;\n" ::
                   : "memory");
}

/* Four floats at the same place as `local` (16-byte aligned) in the shared
 * memory of the cluster's block `rank` (which may be this one). */
static __device__ __forceinline__ float4 pg_ld_cluster_f4(const void *local, unsigned rank) {
  float4 v;
  asm volatile(
      "{\n .reg .b32 remote;\n"
      " mapa.shared::cluster.u32 remote, %4, %5;\n"
      " ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [remote];\n}\n"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "r"(pg_smem_addr(local)), "r"(rank)
      : "memory");
  return v;
}

/* One float at the same place as `local` in the shared memory of the
 * cluster's block `rank`. */
static __device__ __forceinline__ float pg_ld_cluster_f32(const void *local, unsigned rank) {
  float v;
  asm volatile(
      "{\n .reg .b32 remote;\n"
      " mapa.shared::cluster.u32 remote, %1, %2;\n"
      " ld.shared::cluster.f32 %0, [remote];\n}\n"
      : "=f"(v)
      : "r"(pg_smem_addr(local)), "r"(rank)
      : "memory");
  return v;
}

/* A barrier of `threads` threads (a multiple of 32) of the block, named `id`
 * (1-15; 0 is __syncthreads'): a part of the block waits for itself alone. */
static __device__ __forceinline__ void pg_named_barrier_sync(unsigned id, unsigned threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/* The same for threads that reach it at different places (not .aligned):
 * lanes of a warp that diverged. The release costs a wait for every store
 * of the thread in flight (ptxas: MEMBAR.ALL.GPU before the arrival). */
static __device__ __forceinline__ void pg_cluster_sync_any(void) {
  asm volatile("barrier.cluster.arrive.release;\n"
               "barrier.cluster.wait.acquire;\n" ::
                   : "memory");
}

/* The same with nothing released: for threads that wrote nothing the
 * others read, or that only need to know the others have got this far. */
static __device__ __forceinline__ void pg_cluster_sync_relaxed(void) {
  asm volatile("barrier.cluster.arrive.relaxed;\n"
               "barrier.cluster.wait;\n" ::
                   : "memory");
}

/* Makes this thread's mbarrier.init visible to the cluster (the other
 * blocks' arrivals and copies), before a pg_cluster_sync. */
static __device__ __forceinline__ void pg_fence_barrier_init_cluster(void) {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/* An arrival on the barrier at the same place as `bar` in the shared memory
 * of the cluster's block `rank`. Its ordering is the default (release at
 * CTA scope), not .release.cluster, which ptxas turns into a full GPU
 * memory barrier (MEMBAR.ALL.GPU) before every arrival: a caller that
 * releases a slot has its reads of it done already (a wgmma waited for, a
 * fragment in registers), and nothing it wrote is for the other block. */
static __device__ __forceinline__ void pg_mbar_arrive_cluster(unsigned long long *bar,
                                                              unsigned rank) {
  asm volatile(
      "{\n .reg .b32 remote;\n"
      " mapa.shared::cluster.u32 remote, %0, %1;\n"
      " mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(pg_smem_addr(bar)),
      "r"(rank)
      : "memory");
}

/* A consumer's release of a ring slot whose barrier counts its threads
 * (alone: each thread arrives), or, where both blocks of a cluster of two
 * write the slot (paired), one arrival a warp on the slot's barrier in each
 * block, through pg_mbar_arrive_cluster for the other's (`rank`: this
 * block's). */
static __device__ __forceinline__ void pg_mbar_release_slot(unsigned long long *bar, int paired,
                                                            unsigned rank) {
  if (paired) {
    __syncwarp();
    if (threadIdx.x % 32 == 0) {
      pg_mbar_arrive(bar);
      pg_mbar_arrive_cluster(bar, rank ^ 1);
    }
  } else {
    pg_mbar_arrive(bar);
  }
}

/* pg_tma_load_2d into every block of the cluster that `mask` names (bit r:
 * rank r): the box lands at `dst` in each one's shared memory and counts its
 * bytes on the barrier at `bar` there. */
static __device__ __forceinline__ void pg_tma_load_2d_multicast(void *dst, const void *map,
                                                                int x, int y,
                                                                unsigned long long *bar,
                                                                unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(pg_smem_addr(dst)),
      "l"(map), "r"(x), "r"(y), "r"(pg_smem_addr(bar)), "h"(mask)
      : "memory");
}

/* setmaxnreg (sm_90a): a warpgroup gives registers back to the SM's pool or
 * takes them from it; every warp of the warpgroup executes the same one.
 * Where the arch-specific features are absent the kernel keeps its launch
 * count (PG_HAVE_SETMAXNREG tells which). */
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define PG_HAVE_SETMAXNREG 1
#define pg_setmaxnreg_dec(n) asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(n))
#define pg_setmaxnreg_inc(n) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(n))
#else
#define PG_HAVE_SETMAXNREG 0
#define pg_setmaxnreg_dec(n) ((void)0)
#define pg_setmaxnreg_inc(n) ((void)0)
#endif

/* Brings a tensor map into the cache before its first use. */
static __device__ __forceinline__ void pg_tma_prefetch_map(const void *map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
}
#endif

#endif
