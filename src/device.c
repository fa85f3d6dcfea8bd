/* What the library knows of each device, asked once and kept: compute
 * capability, SMs, shared memory, which of our kernels the GPU loads (and
 * their resources), and the split-K workspace pool.
 *
 * Every question that can fail is asked on a short-lived thread of the
 * library's own. The CUDA runtime keeps its last error per host thread, so a
 * probe that fails (cudaFuncGetAttributes on a kernel built only for another
 * architecture) leaves nothing in the caller's error slot, and an error the
 * caller had pending is never overwritten. That thread also runs in the
 * relaxed stream-capture mode: a capture under way on the caller's thread
 * forbids cudaMalloc there, which cublasCreate needs. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "tma.h"

#define PG_MAX_DEVICES 64
/* (device, kernel) pairs remembered; past this a kernel is probed each time. */
#define PG_MAX_IMAGES 512
#define PG_DETAIL_TEXT 200
#define PG_CUDA_MAJOR 1000 /* CUDA versions are major*1000 + minor*10 */
#define PG_CUDA_MINOR 10

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static int device_known[PG_MAX_DEVICES];
static pg_device devices[PG_MAX_DEVICES];
/* Per device, made on first use (object_of): a cudaMemPool_t. */
static void *pools[PG_MAX_DEVICES];

typedef struct {
  int ordinal;
  const void *kernel;
  pg_kernel_image image;
} image_slot;
static image_slot images[PG_MAX_IMAGES];
static int image_count;

/* ---- the probing thread ------------------------------------------------------ */

typedef struct {
  void (*work)(void *ctx);
  void *ctx;
} probe_job;

static void *probe_main(void *arg) {
  const probe_job *job = arg;
  enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  (void)cudaThreadExchangeStreamCaptureMode(&mode); /* this thread only */
  job->work(job->ctx);
  return NULL;
}

pg_status pg_on_probe_thread(void (*work)(void *), void *ctx) {
  probe_job job = {work, ctx};
  pthread_t thread;
  if (pthread_create(&thread, NULL, probe_main, &job) != 0) {
    pg_set_error_detail("the library could not start its probing thread");
    return PG_ERR_NO_MEMORY;
  }
  pthread_join(thread, NULL);
  return PG_OK;
}

/* ---- the device ----------------------------------------------------------------- */

typedef struct {
  int ordinal;
  pg_device device;
  cudaError_t error;
  char why[PG_DETAIL_TEXT]; /* when error != cudaSuccess */
} device_probe;

/* Tells "no driver", "a driver too old" and "no GPU" apart. */
static void explain_no_device(cudaError_t err, char *why, size_t size) {
  int driver = 0, runtime = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  if (driver == 0)
    snprintf(why, size, "no NVIDIA driver is installed");
  else if (err == cudaErrorInsufficientDriver)
    snprintf(why, size,
             "the NVIDIA driver is too old: it supports CUDA %d.%d, this build needs CUDA %d.%d",
             driver / PG_CUDA_MAJOR, driver % PG_CUDA_MAJOR / PG_CUDA_MINOR,
             runtime / PG_CUDA_MAJOR, runtime % PG_CUDA_MAJOR / PG_CUDA_MINOR);
  else if (err == cudaErrorNoDevice)
    snprintf(why, size, "no CUDA GPU found (the NVIDIA driver, for CUDA %d.%d, is loaded)",
             driver / PG_CUDA_MAJOR, driver % PG_CUDA_MAJOR / PG_CUDA_MINOR);
  else
    snprintf(why, size, "%s", cudaGetErrorString(err));
}

static void probe_device(void *ctx) {
  device_probe *p = ctx;
  int major = 0, minor = 0, sms = 0, smem = 0;
  const int d = p->ordinal;
  cudaError_t err = cudaSetDevice(d);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, d);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, d);
  p->error = err;
  if (err != cudaSuccess) {
    explain_no_device(err, p->why, sizeof p->why);
    return;
  }
  (void)pg_tma_find_encoder(); /* here, so its runtime call fails (if at all) off the caller's thread */
  p->device.ordinal = d;
  p->device.cc = major * 10 + minor;
  p->device.sm_count = sms;
  p->device.smem_optin = (size_t)smem;
  p->device.tuning = pg_tuning_row(p->device.cc, sms);
  int per_sm = 0, reserved = 0;
  if (cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, d) ==
          cudaSuccess &&
      cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, d) ==
          cudaSuccess) {
    p->device.smem_per_sm = (size_t)per_sm;
    p->device.smem_reserved = (size_t)reserved;
  }
  pg_probe_cluster_blocks(&p->device);
}

long long pg_device_cluster_blocks(const pg_device *device, int blocks_per_sm, int cluster) {
  if (blocks_per_sm < 1 || blocks_per_sm > PG_CLUSTER_BLOCKS_PER_SM || cluster < 2 ||
      cluster > PG_CLUSTER_MAX)
    return 0;
  return device->cluster_blocks[blocks_per_sm - 1][cluster];
}

/* A failure to reach a device: PG_ERR_NO_DEVICE, the reason as the detail. */
static pg_status no_device(cudaError_t err, const char *why);

pg_status pg_no_device(cudaError_t err) {
  char why[PG_DETAIL_TEXT];
  explain_no_device(err, why, sizeof why);
  return no_device(err, why);
}

static pg_status no_device(cudaError_t err, const char *why) {
  pg_status st = pg_status_from_cuda(err);
  pg_set_error_detail("%s", why);
  return st == PG_ERR_NO_MEMORY ? st : PG_ERR_NO_DEVICE;
}

pg_status pg_device_current(const pg_device **out) {
  int ordinal = 0;
  cudaError_t err = cudaGetDevice(&ordinal);
  if (err != cudaSuccess) return pg_no_device(err);
  if (ordinal < 0 || ordinal >= PG_MAX_DEVICES) {
    pg_set_error_detail("device %d: the library handles devices 0..%d", ordinal,
                        PG_MAX_DEVICES - 1);
    return PG_ERR_NO_DEVICE;
  }
  pthread_mutex_lock(&cache_lock);
  pg_status st = PG_OK;
  if (!device_known[ordinal]) {
    device_probe probe;
    memset(&probe, 0, sizeof probe);
    probe.ordinal = ordinal;
    st = pg_on_probe_thread(probe_device, &probe);
    if (st == PG_OK && probe.error != cudaSuccess) st = no_device(probe.error, probe.why);
    if (st == PG_OK) {
      devices[ordinal] = probe.device;
      device_known[ordinal] = 1;
    }
  }
  pthread_mutex_unlock(&cache_lock);
  if (st == PG_OK) *out = &devices[ordinal];
  return st;
}

/* ---- kernel images ---------------------------------------------------------------- */

typedef struct {
  const pg_device *device;
  const void *kernel;
  pg_kernel_image image;
} image_probe;

static void probe_image(void *ctx) {
  image_probe *p = ctx;
  struct cudaFuncAttributes attr;
  memset(&attr, 0, sizeof attr);
  cudaError_t err = cudaSetDevice(p->device->ordinal);
  /* The first question about a kernel loads its code onto the GPU; a load
   * that runs out of device memory midway leaves the kernel unusable for
   * the life of the process (its launches fail with an unknown error once
   * memory is back: seen with CUDA 13.0's lazy loading), so it is not tried
   * with less than PG_LOAD_HEADROOM free. */
  size_t total = 0;
  if (err == cudaSuccess) err = cudaMemGetInfo(&p->image.free_bytes, &total);
  if (err == cudaSuccess && p->image.free_bytes < PG_LOAD_HEADROOM) {
    p->image.load_error = cudaErrorMemoryAllocation;
    return;
  }
  if (err == cudaSuccess) err = cudaFuncGetAttributes(&attr, p->kernel);
  if (err == cudaSuccess) {
    p->image.ptx_version = attr.ptxVersion;
    p->image.registers = attr.numRegs;
    p->image.static_smem = attr.sharedSizeBytes;
    /* Opt in once to all the dynamic shared memory the device allows. */
    const size_t dynamic = p->device->smem_optin > attr.sharedSizeBytes
                               ? p->device->smem_optin - attr.sharedSizeBytes
                               : 0;
    err = cudaFuncSetAttribute(p->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)dynamic);
  }
  p->image.load_error = err;
}

/* Whether a probe's answer holds for the life of the process: the kernel
 * loads, or the build holds no image this GPU can load. A failure for want
 * of memory, or any other, is asked again next time. */
static int lasting(cudaError_t err) {
  switch (err) {
    case cudaSuccess:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidDeviceFunction:
    case cudaErrorInvalidKernelImage:
    case cudaErrorInvalidPtx:
    case cudaErrorUnsupportedPtxVersion:
      return 1;
    default:
      return 0;
  }
}

pg_status pg_kernel_image_of(const pg_device *device, const void *kernel,
                             pg_kernel_image *image) {
  pthread_mutex_lock(&cache_lock);
  for (int i = 0; i < image_count; ++i)
    if (images[i].ordinal == device->ordinal && images[i].kernel == kernel) {
      *image = images[i].image;
      pthread_mutex_unlock(&cache_lock);
      return PG_OK;
    }
  image_probe probe;
  memset(&probe, 0, sizeof probe);
  probe.device = device;
  probe.kernel = kernel;
  pg_status st = pg_on_probe_thread(probe_image, &probe);
  if (st == PG_OK) {
    *image = probe.image;
    if (lasting(probe.image.load_error) && image_count < PG_MAX_IMAGES) {
      images[image_count].ordinal = device->ordinal;
      images[image_count].kernel = kernel;
      images[image_count].image = probe.image;
      ++image_count;
    }
  }
  pthread_mutex_unlock(&cache_lock);
  return st;
}

/* ---- the split-K pool, made once per device ----------------------------------------- */

/* What a maker fills on the probing thread: the object, or why it failed. */
typedef struct {
  int ordinal;
  void *object;
  pg_status status;
  cudaError_t cuda_error; /* behind a failure, for pg_last_cuda_error() */
  char why[PG_DETAIL_TEXT];
} object_probe;

static void fail_probe(object_probe *p, pg_status status, cudaError_t err, const char *what,
                       const char *reason) {
  p->status = status;
  p->cuda_error = err;
  snprintf(p->why, sizeof p->why, "%s: %s", what, reason);
}

/* slots[device], made by `make` on first use (on the probing thread, under
 * the cache lock, so two threads never make two). */
static pg_status object_of(const pg_device *device, void **slots, void (*make)(void *),
                           void **out) {
  pthread_mutex_lock(&cache_lock);
  pg_status st = PG_OK;
  if (slots[device->ordinal] == NULL) {
    object_probe probe;
    memset(&probe, 0, sizeof probe);
    probe.ordinal = device->ordinal;
    st = pg_on_probe_thread(make, &probe);
    if (st == PG_OK && probe.status != PG_OK) {
      if (probe.cuda_error != cudaSuccess) (void)pg_status_from_cuda(probe.cuda_error);
      pg_set_error_detail("%s", probe.why);
      st = probe.status;
    }
    if (st == PG_OK) slots[device->ordinal] = probe.object;
  }
  if (st == PG_OK) *out = slots[device->ordinal];
  pthread_mutex_unlock(&cache_lock);
  return st;
}

/* The memory pool for split-K's partial sums. */
static void create_pool(void *ctx) {
  object_probe *p = ctx;
  int supported = 0;
  cudaMemPool_t pool = NULL;
  cudaError_t err = cudaSetDevice(p->ordinal);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, p->ordinal);
  if (err == cudaSuccess && !supported) err = cudaErrorNotSupported;
  if (err == cudaSuccess) {
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = p->ordinal;
    err = cudaMemPoolCreate(&pool, &props);
  }
  if (err == cudaSuccess) {
    /* Keep freed memory for the next launch instead of returning it to the
     * driver at every synchronisation. */
    unsigned long long keep = ~0ull;
    err = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  }
  if (err != cudaSuccess)
    fail_probe(p, err == cudaErrorMemoryAllocation ? PG_ERR_NO_MEMORY : PG_ERR_CUDA, err,
               "the split-K workspace pool", cudaGetErrorString(err));
  else
    p->object = pool;
}

pg_status pg_device_pool(const pg_device *device, cudaMemPool_t *pool) {
  void *object = NULL;
  pg_status st = object_of(device, pools, create_pool, &object);
  if (st == PG_OK) *pool = (cudaMemPool_t)object;
  return st;
}

/* Bytes each pool is known to hold: the largest allocation it has served
 * (its release threshold keeps all it was given, until pg_shutdown trims
 * it). Read on every launch that takes a workspace, so without the lock. */
static _Atomic size_t pool_held[PG_MAX_DEVICES];

typedef struct {
  int ordinal;
  cudaMemPool_t pool;
  size_t bytes;
  cudaError_t error;
  size_t free_bytes; /* device memory free when it failed */
} reserve_probe;

/* Takes `bytes` from the pool and gives them back in a stream of its own,
 * so that the pool holds them for the caller's stream-ordered allocation. */
static void reserve_in_pool(void *ctx) {
  reserve_probe *p = ctx;
  cudaStream_t stream = NULL;
  void *memory = NULL;
  cudaError_t err = cudaSetDevice(p->ordinal);
  if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (err == cudaSuccess) err = cudaMallocFromPoolAsync(&memory, p->bytes, p->pool, stream);
  if (err == cudaSuccess) err = cudaFreeAsync(memory, stream);
  if (stream != NULL) {
    const cudaError_t synced = cudaStreamSynchronize(stream);
    if (err == cudaSuccess) err = synced;
    (void)cudaStreamDestroy(stream);
  }
  p->error = err;
  size_t total = 0;
  if (err != cudaSuccess && cudaMemGetInfo(&p->free_bytes, &total) != cudaSuccess)
    p->free_bytes = 0;
}

pg_status pg_device_pool_hold(const pg_device *device, cudaMemPool_t pool, size_t bytes,
                              const char *what) {
  const int d = device->ordinal;
  if (bytes <= pool_held[d]) return PG_OK;
  pthread_mutex_lock(&cache_lock);
  pg_status st = PG_OK;
  if (bytes > pool_held[d]) {
    reserve_probe probe;
    memset(&probe, 0, sizeof probe);
    probe.ordinal = d;
    probe.pool = pool;
    probe.bytes = bytes;
    st = pg_on_probe_thread(reserve_in_pool, &probe);
    if (st == PG_OK && probe.error != cudaSuccess) {
      st = pg_status_from_cuda(probe.error);
      pg_set_error_detail("%s: %zu bytes of device memory for its workspace from the library's "
                          "pool: %s (%zu bytes free on the device)",
                          what, bytes, cudaGetErrorString(probe.error), probe.free_bytes);
    }
    if (st == PG_OK) pool_held[d] = bytes;
  }
  pthread_mutex_unlock(&cache_lock);
  return st;
}

/* On the probing thread, each device current in turn. Plans may still use
 * a pool: its memory goes back, the pool stays. */
static void trim_pools(void *ctx) {
  (void)ctx;
  for (int i = 0; i < PG_MAX_DEVICES; ++i) {
    if (pools[i] == NULL || cudaSetDevice(i) != cudaSuccess) continue;
    (void)cudaMemPoolTrimTo((cudaMemPool_t)pools[i], 0);
    pool_held[i] = 0;
  }
}

void pg_device_release(void) {
  pthread_mutex_lock(&cache_lock);
  (void)pg_on_probe_thread(trim_pools, NULL);
  pthread_mutex_unlock(&cache_lock);
}
