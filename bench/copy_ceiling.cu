/* How fast this GPU copies the bytes the split forms' first kernel copies
 * (src/kernels/copy_operands.cu: an operand TMA cannot read, rows x width
 * floats of leading dimension `width`, into rows of width rounded up to 4):
 * the floor under any such copy. Three copies of each shape, timed with
 * CUDA events after an L2 flush (as bench times a call), median of 21:
 *   plain     the same number of bytes, contiguous, 16-byte loads and
 *             stores: no row to realign, the fastest a copy of them goes
 *   pitched   the copy itself: a thread stores 4 floats of an output row
 *             (one 16-byte store), loading them one by one from the input
 *             row wherever it lies
 *   memcpy2D  cudaMemcpy2DAsync, the runtime's copy with two pitches
 *   read      the input's bytes read and nothing written but a float a
 *             block (16-byte loads, CC_PER_THREAD in flight a thread,
 *             evict-first): the floor under the skinny forms, which read
 *             their long operand once and write little
 * and, for each, the bytes read over the median time. A pitched copy as
 * fast as the plain one is at the ceiling; what is left of the time is
 * the bytes and the launch.
 *
 *   build/pg_copy_ceiling [ROWSxWIDTH ...]   (default: the operands that
 *                                            any-layout.txt's shapes copy)
 *
 * Every CUDA call is checked; a failure prints the call and exits 1. */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CC_CHECK(call)                                                                \
  do {                                                                              \
    const cudaError_t e_ = (call);                                                  \
    if (e_ != cudaSuccess) {                                                        \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,            \
                   cudaGetErrorString(e_));                                         \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

#define CC_THREADS 256
#define CC_PER_THREAD 8 /* 16-byte stores a thread has in flight */
#define CC_RUNS 21
#define CC_FLUSH_BYTES (256u << 20)

__global__ void plain_copy(const float4 *__restrict__ in, float4 *__restrict__ out, long long n4) {
  for (long long i = blockIdx.x * (long long)CC_THREADS + threadIdx.x; i < n4;
       i += (long long)gridDim.x * CC_THREADS)
    out[i] = in[i];
}

/* Output vector e (4 floats of row e / (ld_out / 4)) from the input row,
 * zeros past width; CC_PER_THREAD vectors a thread, loads before stores. */
__global__ void pitched_copy(const float *__restrict__ in, float4 *__restrict__ out, int width,
                             int ld_in, int ld_out, long long n4) {
  const int per_row = ld_out / 4;
  const long long stride = (long long)gridDim.x * CC_THREADS * CC_PER_THREAD;
  for (long long base = blockIdx.x * (long long)CC_THREADS * CC_PER_THREAD + threadIdx.x;
       base < n4; base += stride) {
    float v[CC_PER_THREAD][4];
#pragma unroll
    for (int j = 0; j < CC_PER_THREAD; ++j) {
      const long long e = base + (long long)j * CC_THREADS;
      const long long r = e / per_row;
      const int c = (int)(e - r * per_row) * 4;
#pragma unroll
      for (int i = 0; i < 4; ++i)
        v[j][i] = e < n4 && c + i < width ? __ldg(in + r * ld_in + c + i) : 0.f;
    }
#pragma unroll
    for (int j = 0; j < CC_PER_THREAD; ++j) {
      const long long e = base + (long long)j * CC_THREADS;
      if (e < n4) out[e] = make_float4(v[j][0], v[j][1], v[j][2], v[j][3]);
    }
  }
}

/* Reads n4 vectors, CC_PER_THREAD a thread in flight, and stores the block's
 * sum, so that no load is dropped. */
__global__ void read_only(const float4 *__restrict__ in, float *__restrict__ out, long long n4) {
  __shared__ float sums[CC_THREADS / 32];
  const long long stride = (long long)gridDim.x * CC_THREADS * CC_PER_THREAD;
  float acc = 0.f;
  for (long long base = blockIdx.x * (long long)CC_THREADS * CC_PER_THREAD + threadIdx.x;
       base < n4; base += stride) {
    float4 v[CC_PER_THREAD];
#pragma unroll
    for (int j = 0; j < CC_PER_THREAD; ++j) {
      const long long e = base + (long long)j * CC_THREADS;
      v[j] = e < n4 ? __ldcs(in + e) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int j = 0; j < CC_PER_THREAD; ++j) acc += (v[j].x + v[j].y) + (v[j].z + v[j].w);
  }
  for (int off = 16; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if (threadIdx.x % 32 == 0) sums[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.f;
    for (int w = 0; w < CC_THREADS / 32; ++w) s += sums[w];
    out[blockIdx.x] = s;
  }
}

int main(int argc, char **argv) {
  std::vector<std::pair<int, int>> shapes;
  for (int i = 1; i < argc; ++i) {
    int rows = 0, width = 0;
    if (std::sscanf(argv[i], "%dx%d", &rows, &width) != 2 || rows < 1 || width < 1) {
      std::fprintf(stderr, "usage: %s [ROWSxWIDTH ...]\n", argv[0]);
      return 2;
    }
    shapes.push_back({rows, width});
  }
  if (shapes.empty()) /* B of 333x777x4444, A and B of 777x333x2223, B of 4096x4097x4096 */
    shapes = {{4444, 777}, {777, 2223}, {2223, 333}, {4096, 4097}};
  int sms = 0;
  CC_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CC_CHECK(cudaGetDeviceProperties(&prop, 0));
  size_t most = 0;
  for (auto s : shapes) most = std::max(most, (size_t)s.first * (size_t)((s.second + 3) / 4 * 4));
  float *in = nullptr, *out = nullptr;
  char *flush = nullptr;
  CC_CHECK(cudaMalloc((void **)&in, most * sizeof(float)));
  CC_CHECK(cudaMalloc((void **)&out, most * sizeof(float)));
  CC_CHECK(cudaMalloc((void **)&flush, CC_FLUSH_BYTES));
  std::vector<float> host(most);
  for (size_t i = 0; i < most; ++i) host[i] = (float)((i * 2654435761u) % 2001) / 1000.f - 1.f;
  CC_CHECK(cudaMemcpy(in, host.data(), most * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CC_CHECK(cudaEventCreate(&start));
  CC_CHECK(cudaEventCreate(&stop));
  std::printf("GPU: %s, %d SMs; median of %d runs, L2 flushed before each\n", prop.name, sms,
              CC_RUNS);
  std::printf("%-12s %-9s %10s %10s %8s\n", "rows x width", "copy", "median us", "min us",
              "TB/s");
  const char *names[] = {"plain", "pitched", "memcpy2D", "read"};
  for (auto s : shapes) {
    const int rows = s.first, width = s.second, ld_out = (width + 3) / 4 * 4;
    const long long n4 = (long long)rows * ld_out / 4;
    const long long blocks = std::min<long long>(
        8LL * sms, (n4 + CC_THREADS * CC_PER_THREAD - 1) / (CC_THREADS * CC_PER_THREAD));
    for (int kind = 0; kind < 4; ++kind) {
      std::vector<float> us;
      for (int run = 0; run < CC_RUNS + 3; ++run) {
        CC_CHECK(cudaMemsetAsync(flush, run, CC_FLUSH_BYTES));
        CC_CHECK(cudaEventRecord(start));
        if (kind == 0)
          plain_copy<<<(unsigned)(8LL * sms), CC_THREADS>>>((const float4 *)in, (float4 *)out, n4);
        else if (kind == 1)
          pitched_copy<<<(unsigned)blocks, CC_THREADS>>>(in, (float4 *)out, width, width, ld_out,
                                                          n4);
        else if (kind == 3)
          read_only<<<(unsigned)blocks, CC_THREADS>>>((const float4 *)in, out, n4);
        else
          CC_CHECK(cudaMemcpy2DAsync(out, ld_out * sizeof(float), in, width * sizeof(float),
                                     width * sizeof(float), rows, cudaMemcpyDeviceToDevice));
        CC_CHECK(cudaGetLastError());
        CC_CHECK(cudaEventRecord(stop));
        CC_CHECK(cudaEventSynchronize(stop));
        float ms = 0.f;
        CC_CHECK(cudaEventElapsedTime(&ms, start, stop));
        if (run >= 3) us.push_back(ms * 1000.f);
      }
      if (kind == 1) { /* the pitched copy is right: every row, then its padding's zeros */
        std::vector<float> got((size_t)rows * ld_out);
        CC_CHECK(cudaMemcpy(got.data(), out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
        for (int r = 0; r < rows; ++r)
          for (int c = 0; c < ld_out; ++c)
            if (got[(size_t)r * ld_out + c] != (c < width ? host[(size_t)r * width + c] : 0.f)) {
              std::fprintf(stderr, "pitched copy wrong at row %d, column %d\n", r, c);
              return 1;
            }
      }
      std::sort(us.begin(), us.end());
      const double median = us[us.size() / 2];
      const double read_mb = (double)rows * width * sizeof(float) / 1e6;
      char shape[32];
      std::snprintf(shape, sizeof shape, "%dx%d", rows, width);
      std::printf("%-12s %-9s %10.2f %10.2f %8.2f\n", shape, names[kind], median, us[0],
                  read_mb / median);
    }
  }
  CC_CHECK(cudaFree(in));
  CC_CHECK(cudaFree(out));
  CC_CHECK(cudaFree(flush));
  return 0;
}
