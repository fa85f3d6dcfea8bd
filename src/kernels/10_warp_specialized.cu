/* 10 warp_specialized — producer and consumer warps (the "A study on CUDA
 * async memcpy" blog post's producer/consumer split, in raw PTX);
 * STAGES = 2..8 at run time, P producer warps (PG_WS_PRODUCER_WARPS in
 * src/internal.h).
 *
 * The block is the 128x128 tile's 256 compute threads (8 consumer warps)
 * plus P producer warps that only copy. Producers walk the K tiles, wait for
 * a slot to be released (empty[s]), copy the whole tile into it with
 * cp.async and arrive on full[s] when their copies land
 * (cp.async.mbarrier.arrive.noinc). Consumers wait on full[s], compute, and
 * release the slot (one arrival per thread on empty[s]). Nobody ever waits for
 * the whole block: the producers run up to STAGES tiles ahead, and the
 * consumers issue no load instructions at all. The cost is registers: see
 * WS_MAX_REGISTERS.
 *
 *   pipegemm bench --variant warp_specialized --stages 2-8 --size 4096
 */
#include "kernels/tile128.cuh"

PG_KERNELS_BEGIN

/* Registers decide what this design costs. The compute threads of the
 * 128x128 tile need about 128 registers; each of an SM's 4 scheduler
 * partitions has 16K, so 4 such warps fill one. Any producer warp therefore
 * displaces a consumer warp: one block of 8 consumer + P producer warps per
 * SM, where 05_cp_async.cu runs two blocks (16 compute warps). Two blocks of
 * 9 warps would need <= 96 registers, which spills. The cap of 112 compiles
 * without spills; it is the measured choice against the uncapped kernel
 * (bench/results/mechanisms/README.md). Hopper's setmaxnreg (sm_90a) is the
 * way out: producers give their registers to the consumers (12_tma_ws.cu). */
#define WS_MAX_REGISTERS 112

/* The producers' copy of one tile: thread `producer` of `count` takes pieces
 * producer, producer + count, ... Interior tiles with 16-byte-aligned rows
 * (most of them) skip the per-piece bounds checks: piece i of a thread is
 * its first piece's address plus i*count/2 rows of A, or plus i*count/32
 * rows of B, so each copy costs an address add. Edge tiles take the
 * guarded per-piece path shared with the other kernels. */
static __device__ __forceinline__ void ws_copy_tile(const pg_gemm_args &g, float *stage, int m0,
                                                    int n0, int k0, int producer, int count) {
  const int interior = g.vec_a && g.vec_b && m0 + T128_TILE_M <= g.m &&
                       n0 + T128_TILE_N <= g.n && k0 + T128_TILE_K <= g.k;
  if (interior) {
    const float *a_src = g.a + (size_t)(m0 + producer / 2) * g.lda + k0 + (producer % 2) * 4;
    const float *b_src = g.b + (size_t)(k0 + producer / 32) * g.ldb + n0 + (producer % 32) * 4;
    const size_t a_step = (size_t)(count / 2) * g.lda, b_step = (size_t)(count / 32) * g.ldb;
    for (int p = producer; p < T128_PIECES_A; p += count, a_src += a_step)
      pg_cp_async_16(t128_smem_a(stage) + p * 4, a_src, 16);
    for (int q = producer; q < T128_PIECES_B; q += count, b_src += b_step)
      pg_cp_async_16(t128_smem_b(stage) + q * 4, b_src, 16);
    return;
  }
  for (int p = producer; p < T128_PIECES_A; p += count) t128_cp_async_a_piece(g, stage, m0, k0, p);
  for (int q = producer; q < T128_PIECES_B; q += count) t128_cp_async_b_piece(g, stage, n0, k0, q);
}

template <int PRODUCER_WARPS>
__global__ void __maxnreg__(WS_MAX_REGISTERS) pg_warp_specialized_kernel(const pg_gemm_args g) {
  extern __shared__ float4 smem_raw[];
  float *const smem = (float *)smem_raw;
  const int stages = g.stages;
  unsigned long long *const full = (unsigned long long *)(smem + stages * T128_STAGE_FLOATS);
  unsigned long long *const empty = full + stages;
  const int m0 = blockIdx.y * T128_TILE_M, n0 = blockIdx.x * T128_TILE_N;
  const int k_tiles = t128_k_tiles(g);

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      pg_mbar_init(&full[s], 32 * PRODUCER_WARPS); /* every producer thread's copies */
      pg_mbar_init(&empty[s], T128_THREADS);     /* every consumer thread */
    }
  }
  __syncthreads(); /* the only block-wide barrier: the mbarriers exist */

  if (threadIdx.x >= T128_THREADS) {
    /* Producer warps. */
    const int producer = threadIdx.x - T128_THREADS;
    PG_TRACE_OPEN(g, PG_TRACE_ROLE_PRODUCER, producer == 0);
    int slot = 0, parity = 0; /* parity of the slot's current use */
    for (int kt = 0; kt < k_tiles; ++kt) {
      /* A slot's first use (kt < STAGES) has nothing to wait for; the n-th
       * refill waits for the consumers' release of use n-1. */
      if (kt >= stages)
        PG_TRACE_BEFORE(SLOT_WAIT, slot, kt) pg_mbar_wait_parity(&empty[slot], parity ^ 1);
      PG_TRACE_BEFORE(ISSUE, slot, kt)
          ws_copy_tile(g, smem + slot * T128_STAGE_FLOATS, m0, n0, kt * T128_TILE_K, producer,
                       32 * PRODUCER_WARPS);
      pg_cp_async_mbar_arrive_noinc(&full[slot]);
      parity ^= t128_ring_next(&slot, stages);
    }
    /* Leave no copy in flight behind an exited thread. */
    pg_cp_async_wait_all();
    PG_TRACE_CLOSE(g, PG_TRACE_ROLE_PRODUCER);
    return;
  }

  /* Consumer warps: threadIdx.x < 256, the layout tile128.cuh expects. */
  PG_TRACE_OPEN(g, PG_TRACE_ROLE_CONSUMER, threadIdx.x == 0);
  float acc[T128_THREAD_M][T128_THREAD_N];
  t128_zero(acc);
  int slot = 0, parity = 0;
  for (int kt = 0; kt < k_tiles; ++kt) {
    PG_TRACE_SPAN(DATA, slot, kt) pg_mbar_wait_parity(&full[slot], parity);
    PG_TRACE_SPAN(COMPUTE, slot, kt) t128_compute(smem + slot * T128_STAGE_FLOATS, acc);
    /* Every thread releases its own reads: its arrival orders them before
     * the refill that waits on this phase. (Why not one elected lane per
     * warp: bench/results/mechanisms/README.md, mbarrier.) */
    PG_TRACE_BEFORE(RELEASE, slot, kt) pg_mbar_arrive(&empty[slot]);
    parity ^= t128_ring_next(&slot, stages);
  }
  PG_TRACE_SPAN(EPILOGUE, 0, 0) t128_epilogue(g, m0, n0, acc);
  PG_TRACE_CLOSE(g, PG_TRACE_ROLE_CONSUMER);
}

/* The block is the registry's threads: 256 compute threads and
 * PG_WS_PRODUCER_WARPS producer warps. */
static void configure(pg_layout_args *args, const pg_device *device, const pg_tuning *tuning,
                      pg_kernel_launch *launch) {
  (void)device;
  (void)tuning;
  t128_configure(launch, (const void *)pg_warp_specialized_kernel<PG_WS_PRODUCER_WARPS>, args);
}

/* Producers copy with cp.async onto full[s] mbarriers, consumers release
 * slots with mbarrier.arrive. (A producer's final cp.async.wait_all shows
 * one LDGDEPBAR and one DEPBAR: allowed.) */
static const pg_sass_rule rules[] = {
    {PG_ANY_SM, PG_MUST, "LDGSTS", "the producers no longer copy with cp.async"},
    {PG_ANY_SM, PG_MUST, "ARRIVES.LDGSTSBAR", "copies no longer complete on the full[] mbarriers"},
    {PG_SM8X, PG_MUST, "ATOMS.ARRIVE", "consumers no longer release slots with mbarrier.arrive"},
    {PG_SM90_UP, PG_MUST, "SYNCS.ARRIVE", "consumers no longer release slots with mbarrier.arrive"},
    {PG_SM90_UP, PG_MUST, "SYNCS.PHASECHK", "nobody waits on an mbarrier (try_wait) any more"},
};

PG_ENTRY(warp_specialized) = {
    .info = {.name = "warp_specialized", .kind = PG_KIND_KERNEL,
             .technique = "producer warps copy (cp.async), consumer warps compute",
             .source = PG_FROM_BLOG, .min_cc = 80, .min_stages = 2, .max_stages = 8,
             .default_stages = 2, .tile_m = T128_TILE_M, .tile_n = T128_TILE_N,
             .tile_k = T128_TILE_K,
             /* the seed tile's 256 compute threads and the producer warps */
             .threads = T128_THREADS + 32 * PG_WS_PRODUCER_WARPS,
             .description = "producer warp(s) fill STAGES buffers with cp.async, consumer warps "
                            "compute"},
    .smem_bytes = t128_smem_barriers,
    .configure = configure,
    .kernel = {.symbol = "pg_warp_specialized_kernel",
               .launched = "pg_warp_specialized_kernel<" PG_STRINGIFY(PG_WS_PRODUCER_WARPS) ">",
               .dynamic_smem = 1, PG_RULES(rules)},
};

PG_KERNELS_END
