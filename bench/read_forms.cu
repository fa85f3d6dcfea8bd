/* What reading N bytes costs on this GPU as `pipegemm bench` times a call
 * (CUDA events around one launch, L2 flushed first by a memset of its size;
 * median of 31), by the form of the read: the floor under `skinny_ffma`'s
 * forms, which read their long operand once and write little, and where
 * the RING ROWS form's time goes beyond it.
 *
 *   empty            a kernel of one warp that does nothing (the launch and
 *                    the events), plain and with the PDL attribute
 *   readP cs [Bblk]  16-byte loads (__ldcs, evict-first), P in flight a
 *                    thread, 256 threads, B blocks an SM (8 unless said);
 *                    "smem24K" with 24 KiB of dynamic shared memory a block
 *                    (does the carveout change cost?), "ldg" with __ldg,
 *                    "nc-ef" ld.global.nc with an evict-first policy,
 *                    "L2-256B" with the 256-byte prefetch, "noflush" with
 *                    no flush before, "readflush" with L2 filled by a read
 *                    (clean lines) rather than the memset (dirty ones),
 *                    "1wave" a grid of exactly 8 blocks an SM
 *   bulk S x C       1-D bulk copies (cp.async.bulk, sm_90) of C bytes into
 *                    a ring of S in shared memory, one thread issuing
 *   ring W.. (64 MiB as 4096 x 4096 floats) the RING ROWS form's reads
 *                    alone: a block W columns of B over all of K (or K/kN),
 *                    its warps' 16-row steps in turn, cp.async into a ring
 *                    of S steps a warp
 *   rr ..            the same at W 32 with A's copies (+A) and the 8 rows'
 *                    FFMAs (+A+FMA), as the form runs them
 *
 *   build/pg_read_forms
 *
 * Every CUDA call is checked; a failure prints the call and exits 1. */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#define CK(call)                                                                   \
  do {                                                                             \
    cudaError_t e_ = (call);                                                       \
    if (e_ != cudaSuccess) {                                                       \
      printf("%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

__device__ unsigned smem_addr(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

__global__ void empty_k(float *out) {
  if (threadIdx.x == 1000)
    out[0] = 1.f;
}

template <int T, int PER, int MODE>
__global__ void read_k(const float4 *__restrict__ in, float *__restrict__ out, long long n4) {
  extern __shared__ float dyn[];
  __shared__ float sums[T / 32];
  const long long stride = (long long)gridDim.x * T * PER;
  float acc = 0.f;
  unsigned long long pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(pol));
  for (long long base = blockIdx.x * (long long)T * PER + threadIdx.x; base < n4; base += stride) {
    float4 v[PER];
#pragma unroll
    for (int j = 0; j < PER; ++j) {
      const long long e = base + (long long)j * T;
      if (e < n4) {
        if (MODE == 0)
          v[j] = __ldcs(in + e);
        else if (MODE == 1)
          v[j] = __ldg(in + e);
        else if (MODE == 2)
          asm("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;"
              : "=f"(v[j].x), "=f"(v[j].y), "=f"(v[j].z), "=f"(v[j].w)
              : "l"(in + e), "l"(pol));
        else
          asm("ld.global.cs.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
              : "=f"(v[j].x), "=f"(v[j].y), "=f"(v[j].z), "=f"(v[j].w)
              : "l"(in + e));
      } else
        v[j] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int j = 0; j < PER; ++j)
      acc += (v[j].x + v[j].y) + (v[j].z + v[j].w);
  }
  for (int off = 16; off > 0; off /= 2)
    acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if (threadIdx.x % 32 == 0)
    sums[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.f;
    for (int w = 0; w < T / 32; ++w)
      s += sums[w];
    out[blockIdx.x] = s + (n4 < 0 ? dyn[0] : 0.f);
  }
}

// contiguous chunk per block; one thread issues 1-D bulk copies into a ring
template <int S, int CHUNK>
__global__ void bulk_k(const char *__restrict__ in, float *__restrict__ out, long long bytes,
                       int evict_first) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) char ring[];
  __shared__ __align__(8) unsigned long long full[S];
  __shared__ float sums[8];
  const long long per = (bytes / gridDim.x + 15) / 16 * 16;
  const long long lo = blockIdx.x * per, hi = min(bytes, lo + per);
  const int nchunks = hi > lo ? (int)((hi - lo + CHUNK - 1) / CHUNK) : 0;
  unsigned long long pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(pol));
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s)
      asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(smem_addr(&full[s])));
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  auto issue = [&](int c) {
    const int s = c % S;
    const long long off = lo + (long long)c * CHUNK;
    const unsigned n = (unsigned)min((long long)CHUNK, hi - off);
    asm volatile(
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(&full[s])), "r"(n)
        : "memory");
    if (evict_first)
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], "
          "[%1], %2, [%3], %4;" ::"r"(smem_addr(ring + s * CHUNK)),
          "l"(in + off), "r"(n), "r"(smem_addr(&full[s])), "l"(pol)
          : "memory");
    else
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
          "[%3];" ::"r"(smem_addr(ring + s * CHUNK)),
          "l"(in + off), "r"(n), "r"(smem_addr(&full[s]))
          : "memory");
  };
  if (threadIdx.x == 0)
    for (int c = 0; c < min(S, nchunks); ++c)
      issue(c);
  float acc = 0.f;
  for (int c = 0; c < nchunks; ++c) {
    const int s = c % S;
    const unsigned par = (c / S) & 1;
    unsigned done = 0;
    while (!done)
      asm volatile(
          "{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
          : "=r"(done)
          : "r"(smem_addr(&full[s])), "r"(par)
          : "memory");
    const long long off = lo + (long long)c * CHUNK;
    const int n4 = (int)(min((long long)CHUNK, hi - off) / 16);
    const float4 *src = (const float4 *)(ring + s * CHUNK);
    for (int i = threadIdx.x; i < n4; i += blockDim.x) {
      float4 v = src[i];
      acc += (v.x + v.y) + (v.z + v.w);
    }
    __syncthreads();
    if (threadIdx.x == 0 && c + S < nchunks) {
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      issue(c + S);
    }
  }
  for (int off = 16; off > 0; off /= 2)
    acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if (threadIdx.x % 32 == 0)
    sums[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.f;
    for (int w = 0; w < (int)blockDim.x / 32; ++w)
      s += sums[w];
    out[blockIdx.x] = s;
  }
#else
  (void)in, (void)out, (void)bytes, (void)evict_first;
  __trap();
#endif
}

__global__ void flush_read(const float4 *in, float *out, long long n4) {
  float acc = 0.f;
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n4; i += (long long)gridDim.x * 256) {
    float4 v = in[i];
    acc += v.x;
  }
  if (acc == 12345.f)
    out[0] = acc;
}

// RING ROWS access pattern: block = W cols x K range; warp steps of 16 rows in turn; cp.async ring
template <int WARPS, int S, int LPR>
__global__ void __launch_bounds__(WARPS * 32)
    ring_k(const float *__restrict__ b, float *__restrict__ out, int n, int k, int ksplit) {
  extern __shared__ __align__(16) float4 rring[];
  const int W = LPR * 4, RPI = 32 / LPR;  // rows a warp instruction covers
  const int STEP = 16;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int colblocks = n / W;
  const int cb = blockIdx.x % colblocks, ks = blockIdx.x / colblocks;
  const int k0 = (int)((long long)k * ks / ksplit), k1 = (int)((long long)k * (ks + 1) / ksplit);
  float4 *myring = rring + (size_t)warp * S * STEP * LPR;
  const int steps_all = (k1 - k0) / STEP;
  const int steps = steps_all > warp ? (steps_all - warp + WARPS - 1) / WARPS : 0;
  unsigned long long pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(pol));
  const float *col = b + (size_t)cb * W + 4 * (lane % LPR);
  const int r0 = lane / LPR;
  auto copy = [&](int st) {
    const int kk = k0 + (st * WARPS + warp) * STEP;
    float4 *into = myring + (st % S) * STEP * LPR;
#pragma unroll
    for (int j = 0; j < STEP / RPI; ++j) {
      const int r = r0 + j * RPI;
      asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, 16, %2;\n" ::"r"(
                       smem_addr(into + r * LPR + lane % LPR)),
                   "l"(col + (size_t)(kk + r) * n), "l"(pol)
                   : "memory");
    }
  };
  float acc = 0.f;
  for (int st = 0; st < S - 1; ++st) {
    if (st < steps)
      copy(st);
    asm volatile("cp.async.commit_group;" ::: "memory");
  }
  for (int st = 0; st < steps; ++st) {
    asm volatile("cp.async.wait_group %0;" ::"n"(S - 2) : "memory");
    __syncwarp();
    if (st + S - 1 < steps)
      copy(st + S - 1);
    asm volatile("cp.async.commit_group;" ::: "memory");
    const float4 *in = myring + (st % S) * STEP * LPR;
#pragma unroll
    for (int j = 0; j < STEP / RPI; ++j) {
      float4 v = in[(r0 + j * RPI) * LPR + lane % LPR];
      acc += (v.x + v.y) + (v.z + v.w);
    }
  }
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  if (acc == 1234.5f)
    out[blockIdx.x] = acc;
}

// RING ROWS-like with A and math: MODE 0 pattern only, 1 + A copies (sum), 2 + A copies + FMAs
// (MR=8)
template <int WARPS, int S, int MODE>
__global__ void __launch_bounds__(WARPS * 32)
    rr_k(const float *__restrict__ b, const float *__restrict__ a, float *__restrict__ out, int n,
         int k) {
  extern __shared__ __align__(16) float4 rr_ring[];
  enum { STEP = 16, LPR = 8, MR = 8 };
  struct step_t {
    float4 b[STEP][LPR];
    float4 a[MR][STEP / 4];
  };
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  step_t *ring = (step_t *)rr_ring + warp * S;
  const int cb = blockIdx.x;
  const int steps_all = k / STEP;
  const int steps = steps_all > warp ? (steps_all - warp + WARPS - 1) / WARPS : 0;
  unsigned long long pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(pol));
  const float *col = b + (size_t)cb * 32 + 4 * (lane % LPR);
  const int row0 = 4 * (lane / LPR);
  const int ar = lane / 4, aq = lane % 4;
  const float *a_row = a + (size_t)ar * k;
  auto copy = [&](int st) {
    const int kk = (st * WARPS + warp) * STEP;
    step_t &into = ring[st % S];
#pragma unroll
    for (int j = 0; j < 4; ++j)
      asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, 16, %2;\n" ::"r"(
                       smem_addr(&into.b[row0 + j][lane % LPR])),
                   "l"(col + (size_t)(kk + row0 + j) * n), "l"(pol)
                   : "memory");
    if (MODE >= 1)
      asm volatile(
          "cp.async.cg.shared.global [%0], [%1], 16, 16;\n" ::"r"(smem_addr(&into.a[ar][aq])),
          "l"(a_row + kk + 4 * aq)
          : "memory");
  };
  float acc[MR][4];
#pragma unroll
  for (int r = 0; r < MR; ++r)
    acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = 0.f;
  for (int st = 0; st < S - 1; ++st) {
    if (st < steps)
      copy(st);
    asm volatile("cp.async.commit_group;" ::: "memory");
  }
  for (int st = 0; st < steps; ++st) {
    asm volatile("cp.async.wait_group %0;" ::"n"(S - 2) : "memory");
    __syncwarp();
    if (st + S - 1 < steps)
      copy(st + S - 1);
    asm volatile("cp.async.commit_group;" ::: "memory");
    const step_t &in = ring[st % S];
    float4 bb[4];
#pragma unroll
    for (int j = 0; j < 4; ++j)
      bb[j] = in.b[row0 + j][lane % LPR];
    if (MODE == 0) {
#pragma unroll
      for (int j = 0; j < 4; ++j)
        acc[0][j] += (bb[j].x + bb[j].y) + (bb[j].z + bb[j].w);
    } else if (MODE == 1) {
      float4 av = in.a[lane % 8][lane / 8];
#pragma unroll
      for (int j = 0; j < 4; ++j)
        acc[0][j] += (bb[j].x + bb[j].y) + (bb[j].z + bb[j].w) + av.x;
    } else {
      float4 aa[MR];
#pragma unroll
      for (int r = 0; r < MR; ++r)
        aa[r] = in.a[r][lane / LPR];
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int r = 0; r < MR; ++r) {
          const float av = j == 0 ? aa[r].x : j == 1 ? aa[r].y : j == 2 ? aa[r].z : aa[r].w;
          acc[r][0] = fmaf(av, bb[j].x, acc[r][0]);
          acc[r][1] = fmaf(av, bb[j].y, acc[r][1]);
          acc[r][2] = fmaf(av, bb[j].z, acc[r][2]);
          acc[r][3] = fmaf(av, bb[j].w, acc[r][3]);
        }
    }
  }
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  float s = 0.f;
#pragma unroll
  for (int r = 0; r < MR; ++r)
    s += acc[r][0] + acc[r][1] + acc[r][2] + acc[r][3];
  if (s == 1234.5f)
    out[blockIdx.x] = s;
}

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  int cc = 0;
  CK(cudaDeviceGetAttribute(&cc, cudaDevAttrComputeCapabilityMajor, 0));
  std::vector<long long> sizes_mb = {33554432LL, 67108864LL, 268435456LL};
  long long most = 268435456LL;
  char *in, *flush;
  float *out;
  CK(cudaMalloc(&in, most));
  CK(cudaMalloc(&out, 1 << 20));
  CK(cudaMalloc(&flush, 256 << 20));
  std::vector<float> h(most / 4);
  for (size_t i = 0; i < h.size(); ++i)
    h[i] = (float)((i * 2654435761u) % 2001) / 1000.f - 1.f;
  CK(cudaMemcpy(in, h.data(), most, cudaMemcpyHostToDevice));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  /* `launch` between two events after `before(run)` (the flush): the
   * median and the least of 31 runs, 3 more first and dropped. */
  auto time_us = [&](auto before, auto launch, double *least) {
    std::vector<float> us;
    for (int run = 0; run < 34; ++run) {
      before(run);
      CK(cudaEventRecord(a));
      launch();
      CK(cudaGetLastError());
      CK(cudaEventRecord(b));
      CK(cudaEventSynchronize(b));
      float ms;
      CK(cudaEventElapsedTime(&ms, a, b));
      if (run >= 3)
        us.push_back(ms * 1000.f);
    }
    std::sort(us.begin(), us.end());
    *least = us[0];
    return (double)us[us.size() / 2];
  };
  auto memset_flush = [&](int run) { CK(cudaMemsetAsync(flush, run, l2)); };
  CK(cudaFuncSetAttribute(read_k<256, 8, 0>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          24 * 1024));
  CK(cudaFuncSetAttribute(bulk_k<8, 16384>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          8 * 16384));
  CK(cudaFuncSetAttribute(bulk_k<4, 16384>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          4 * 16384));
  CK(cudaFuncSetAttribute(bulk_k<4, 8192>, cudaFuncAttributeMaxDynamicSharedMemorySize, 4 * 8192));
  printf("GPU %d SMs, L2 %d bytes; median of 31, flushed by memset of L2 size unless said\n", sms,
         l2);
  const char *names[] = {
      "empty",          "empty-pdl",           "read8 cs",         "read8 cs smem24K",
      "read8 ldg",      "read8 nc-ef",         "read8 L2-256B",    "read16 cs",
      "read4 cs 16blk", "read8 cs 4blk",       "read8 cs noflush", "read8 cs readflush",
      "bulk 8x16K ef",  "bulk 8x16K",          "bulk 4x16K 2blk",  "bulk 4x8K 4blk",
      "read8 cs 1wave", "bulk 8x16K ef 256thr"};
  const int nk = sizeof names / sizeof names[0];
  for (long long bytes : sizes_mb) {
    const long long n4 = bytes / 16;
    for (int k = 0; k < nk; ++k) {
      if (cc < 9 && ((k >= 12 && k <= 15) || k == 17))
        continue; /* bulk copies: sm_90 */
      auto before = [&](int run) {
        if (k == 11)
          flush_read<<<sms * 8, 256>>>((const float4 *)flush, out + 1000, (256 << 20) / 16);
        else if (k != 10)
          memset_flush(run);
      };
      auto launch = [&]() {
        auto rd = [&](auto kern, int T, int PER, int bps, size_t smem) {
          long long blocks = std::min<long long>(
              (long long)bps * sms, (n4 + (long long)T * PER - 1) / ((long long)T * PER));
          kern<<<(unsigned)blocks, T, smem>>>((const float4 *)in, out, n4);
        };
        switch (k) {
          case 0:
            empty_k<<<1, 32>>>(out);
            break;
          case 1: {
            cudaLaunchConfig_t cfg = {};
            cfg.gridDim = dim3(1);
            cfg.blockDim = dim3(32);
            cudaLaunchAttribute at[1];
            at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
            at[0].val.programmaticStreamSerializationAllowed = 1;
            cfg.attrs = at;
            cfg.numAttrs = 1;
            CK(cudaLaunchKernelEx(&cfg, empty_k, out));
            break;
          }
          case 2:
          case 10:
          case 11:
            rd(read_k<256, 8, 0>, 256, 8, 8, 0);
            break;
          case 3:
            rd(read_k<256, 8, 0>, 256, 8, 8, 24 * 1024);
            break;
          case 4:
            rd(read_k<256, 8, 1>, 256, 8, 8, 0);
            break;
          case 5:
            rd(read_k<256, 8, 2>, 256, 8, 8, 0);
            break;
          case 6:
            rd(read_k<256, 8, 3>, 256, 8, 8, 0);
            break;
          case 7:
            rd(read_k<256, 16, 0>, 256, 16, 8, 0);
            break;
          case 8:
            rd(read_k<256, 4, 0>, 256, 4, 16, 0);
            break;
          case 9:
            rd(read_k<256, 8, 0>, 256, 8, 4, 0);
            break;
          case 16: { /* a grid of exactly 8 blocks an SM */
            read_k<256, 8, 0><<<(unsigned)(8 * sms), 256>>>((const float4 *)in, out, n4);
            break;
          }
          case 12:
            bulk_k<8, 16384><<<sms, 128, 8 * 16384>>>(in, out, bytes, 1);
            break;
          case 13:
            bulk_k<8, 16384><<<sms, 128, 8 * 16384>>>(in, out, bytes, 0);
            break;
          case 14:
            bulk_k<4, 16384><<<2 * sms, 128, 4 * 16384>>>(in, out, bytes, 1);
            break;
          case 15:
            bulk_k<4, 8192><<<4 * sms, 128, 4 * 8192>>>(in, out, bytes, 1);
            break;
          case 17:
            bulk_k<8, 16384><<<sms, 256, 8 * 16384>>>(in, out, bytes, 1);
            break;
        }
      };
      double least;
      const double med = time_us(before, launch, &least);
      printf("%6.1f MB  %-22s %8.2f us (min %8.2f)  %5.2f TB/s  %5.1f %% of 4.8\n", bytes / 1e6,
             names[k], med, least, bytes / 1e6 / med, 100.0 * bytes / 1e6 / med / 4.8);
    }
  }
  {
    const int n = 4096, k = 4096;
    struct rcfg {
      const char *name;
      void (*kern)(const float *, float *, int, int, int);
      int warps, s, lpr, ksplit;
    };
    rcfg cfgs[] = {
        {"ring W32 8w S4", ring_k<8, 4, 8>, 8, 4, 8, 1},
        {"ring W32 16w S4", ring_k<16, 4, 8>, 16, 4, 8, 1},
        {"ring W32 8w S8", ring_k<8, 8, 8>, 8, 8, 8, 1},
        {"ring W32 8w S4 k2", ring_k<8, 4, 8>, 8, 4, 8, 2},
        {"ring W16 8w S4", ring_k<8, 4, 4>, 8, 4, 4, 1},
        {"ring W64 8w S4 k2", ring_k<8, 4, 16>, 8, 4, 16, 2},
        {"ring W32 4w S8", ring_k<4, 8, 8>, 4, 8, 8, 1},
    };
    for (auto &c : cfgs) {
      const size_t smem = (size_t)c.warps * c.s * 16 * c.lpr * 16;
      CK(cudaFuncSetAttribute(c.kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
      const int blocks = n / (c.lpr * 4) * c.ksplit;
      double least;
      const double med = time_us(
          memset_flush,
          [&]() { c.kern<<<blocks, c.warps * 32, smem>>>((const float *)in, out, n, k, c.ksplit); },
          &least);
      printf("%6.1f MB  %-22s %8.2f us (min %8.2f) blocks %d  %5.1f %% of 4.8\n", 67.1, c.name, med,
             least, blocks, 100.0 * 67.108864 / med / 4.8);
    }
  }

  {
    const int n = 4096, k = 4096;
    struct rc {
      const char *name;
      void (*kern)(const float *, const float *, float *, int, int);
      int warps, s;
    };
    rc cfgs[] = {
        {"rr 8w S4 pattern", rr_k<8, 4, 0>, 8, 4},   {"rr 8w S4 +A", rr_k<8, 4, 1>, 8, 4},
        {"rr 8w S4 +A+FMA", rr_k<8, 4, 2>, 8, 4},    {"rr 8w S8 +A+FMA", rr_k<8, 8, 2>, 8, 8},
        {"rr 16w S4 +A+FMA", rr_k<16, 4, 2>, 16, 4}, {"rr 8w S6 +A+FMA", rr_k<8, 6, 2>, 8, 6},
    };
    for (auto &c : cfgs) {
      const size_t smem = (size_t)c.warps * c.s * (16 * 8 + 8 * 4) * 16;
      CK(cudaFuncSetAttribute(c.kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
      double least;
      const double med = time_us(
          memset_flush,
          [&]() {
            c.kern<<<128, c.warps * 32, smem>>>((const float *)in,
                                                (const float *)(in + 128 * 1024 * 1024), out, n, k);
          },
          &least);
      printf("%6.1f MB  %-22s %8.2f us (min %8.2f)  %5.1f %% of 4.8\n", 67.1, c.name, med, least,
             100.0 * 67.108864 / med / 4.8);
    }
  }
  return 0;
}
