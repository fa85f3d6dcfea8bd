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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tma.h"

#define PG_MAX_DEVICES 64
#define PG_DETAIL_TEXT 200
#define PG_CUDA_MAJOR 1000 /* CUDA versions are major*1000 + minor*10 */
#define PG_CUDA_MINOR 10

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
/* Set (release) once devices[d] is written; read without the lock. */
static _Atomic int device_known[PG_MAX_DEVICES];
static pg_device devices[PG_MAX_DEVICES];
/* Per device, made on first use (object_of): a cudaMemPool_t. */
static void *pools[PG_MAX_DEVICES];

/* What is known of each (device, kernel) pair: a table that grows as it
 * fills (open addressing, at most half full), so that no number of
 * kernels or devices makes a kernel be probed twice. Looked up under a
 * read lock, so that planning threads never wait for each other once
 * their kernels are known; a probe runs under probe_lock alone. */
typedef struct {
  int ordinal;
  const void *kernel; /* NULL: an empty slot */
  pg_kernel_image image;
} image_slot;
static pthread_rwlock_t images_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static image_slot *images;
static size_t image_slots; /* a power of two, or 0 */
static size_t image_count;
static _Atomic long long image_probes;

static void lookup_pool_alloc(void *ctx);

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
  lookup_pool_alloc(NULL);
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
  p->device.clusters_known = pg_probe_cluster_blocks(&p->device, p->device.cluster_blocks);
}

typedef struct {
  const pg_device *device;
  int table[PG_CLUSTER_BLOCKS_PER_SM][PG_CLUSTER_MAX + 1];
  int known;
} cluster_probe;

static void probe_clusters(void *ctx) {
  cluster_probe *p = ctx;
  if (cudaSetDevice(p->device->ordinal) == cudaSuccess)
    p->known = pg_probe_cluster_blocks(p->device, p->table);
}

long long pg_device_cluster_blocks(const pg_device *device, int blocks_per_sm, int cluster) {
  if (blocks_per_sm < 1 || blocks_per_sm > PG_CLUSTER_BLOCKS_PER_SM || cluster < 2 ||
      cluster > PG_CLUSTER_MAX)
    return 0;
  if (device->model_only || __atomic_load_n(&device->clusters_known, __ATOMIC_ACQUIRE))
    return device->cluster_blocks[blocks_per_sm - 1][cluster];
  /* The first probe failed for a reason that may have passed: asked again,
   * the table written (and then read) under the lock, and published. */
  pthread_mutex_lock(&cache_lock);
  pg_device *known = (pg_device *)device; /* one of devices[] */
  if (!known->clusters_known) {
    cluster_probe probe;
    memset(&probe, 0, sizeof probe);
    probe.device = device;
    if (pg_on_probe_thread(probe_clusters, &probe) == PG_OK && probe.known) {
      memcpy(known->cluster_blocks, probe.table, sizeof probe.table);
      __atomic_store_n(&known->clusters_known, 1, __ATOMIC_RELEASE);
    }
  }
  const long long blocks = known->cluster_blocks[blocks_per_sm - 1][cluster];
  pthread_mutex_unlock(&cache_lock);
  return blocks;
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
  if (device_known[ordinal]) { /* every call after the first */
    *out = &devices[ordinal];
    return PG_OK;
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

static size_t image_hash(int ordinal, const void *kernel) {
  uint64_t h = (uint64_t)(uintptr_t)kernel ^ ((uint64_t)ordinal << 56);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return (size_t)h;
}

/* The slot of (ordinal, kernel), or the empty slot where it would go;
 * NULL while the table is empty. Under images_lock. */
static image_slot *image_slot_of(int ordinal, const void *kernel) {
  if (image_slots == 0) return NULL;
  for (size_t i = image_hash(ordinal, kernel) & (image_slots - 1);; i = (i + 1) & (image_slots - 1))
    if (images[i].kernel == NULL || (images[i].kernel == kernel && images[i].ordinal == ordinal))
      return &images[i];
}

static int image_known(int ordinal, const void *kernel, pg_kernel_image *image) {
  pthread_rwlock_rdlock(&images_lock);
  const image_slot *slot = image_slot_of(ordinal, kernel);
  const int known = slot != NULL && slot->kernel != NULL;
  if (known) *image = slot->image;
  pthread_rwlock_unlock(&images_lock);
  return known;
}

/* Keeps an answer; 0 where the host has no memory for a larger table (the
 * answer is then asked again next time, which is slow, not wrong). */
static int keep_image(int ordinal, const void *kernel, const pg_kernel_image *image) {
  pthread_rwlock_wrlock(&images_lock);
  int kept = 1;
  if (2 * (image_count + 1) > image_slots) {
    const size_t slots = image_slots == 0 ? 1024 : 2 * image_slots;
    image_slot *grown = calloc(slots, sizeof *grown);
    if (grown == NULL) {
      kept = 0;
    } else {
      image_slot *old = images;
      const size_t old_slots = image_slots;
      images = grown;
      image_slots = slots;
      for (size_t i = 0; i < old_slots; ++i)
        if (old[i].kernel != NULL) *image_slot_of(old[i].ordinal, old[i].kernel) = old[i];
      free(old);
    }
  }
  if (kept) {
    image_slot *slot = image_slot_of(ordinal, kernel);
    if (slot->kernel == NULL) ++image_count;
    slot->ordinal = ordinal;
    slot->kernel = kernel;
    slot->image = *image;
  }
  pthread_rwlock_unlock(&images_lock);
  return kept;
}

pg_status pg_kernel_image_of(const pg_device *device, const void *kernel,
                             pg_kernel_image *image) {
  if (image_known(device->ordinal, kernel, image)) return PG_OK;
  /* One probe at a time (loading a module onto the GPU is the driver's
   * work and serial anyway), and not again for a kernel another thread has
   * just probed while this one waited. */
  pthread_mutex_lock(&probe_lock);
  pg_status st = PG_OK;
  if (!image_known(device->ordinal, kernel, image)) {
    image_probe probe;
    memset(&probe, 0, sizeof probe);
    probe.device = device;
    probe.kernel = kernel;
    st = pg_on_probe_thread(probe_image, &probe);
    if (st == PG_OK) {
      ++image_probes;
      *image = probe.image;
      if (lasting(probe.image.load_error)) (void)keep_image(device->ordinal, kernel, image);
    }
  }
  pthread_mutex_unlock(&probe_lock);
  return st;
}

long long pg_kernel_image_probes(void) { return image_probes; }

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

/* The driver's cuMemAllocFromPoolAsync: unlike the runtime's call, a
 * failure of it leaves the runtime's per-thread error alone, so that a
 * launch that finds the pool emptied by another leaves an error the caller
 * had pending where it was. Looked up once found, on the probing thread. */
typedef CUresult (*pool_alloc_fn)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
static pool_alloc_fn driver_pool_alloc;
static int driver_pool_alloc_found; /* set with release order after driver_pool_alloc */

static void lookup_pool_alloc(void *ctx) {
  (void)ctx;
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion("cuMemAllocFromPoolAsync", &fn, 11020, cudaEnableDefault,
                                       &found) == cudaSuccess &&
      found == cudaDriverEntryPointSuccess && fn != NULL) {
    driver_pool_alloc = (pool_alloc_fn)fn;
    __atomic_store_n(&driver_pool_alloc_found, 1, __ATOMIC_RELEASE);
  }
}

pg_status pg_device_pool_take(cudaMemPool_t pool, size_t bytes, cudaStream_t stream,
                              void **memory, const char *what) {
  if (!__atomic_load_n(&driver_pool_alloc_found, __ATOMIC_ACQUIRE)) {
    pthread_mutex_lock(&cache_lock);
    if (!driver_pool_alloc_found) (void)pg_on_probe_thread(lookup_pool_alloc, NULL);
    pthread_mutex_unlock(&cache_lock);
  }
  cudaError_t err = cudaSuccess;
  if (__atomic_load_n(&driver_pool_alloc_found, __ATOMIC_ACQUIRE)) {
    CUdeviceptr at = 0;
    const CUresult r = driver_pool_alloc(&at, bytes, (CUmemoryPool)pool, (CUstream)stream);
    *memory = (void *)(uintptr_t)at;
    err = r == CUDA_SUCCESS                ? cudaSuccess
          : r == CUDA_ERROR_OUT_OF_MEMORY ? cudaErrorMemoryAllocation
          : r == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED ? cudaErrorStreamCaptureUnsupported
                                                   : cudaErrorInvalidValue;
  } else {
    /* No driver entry (never seen): the runtime's call, whose failure the
     * caller's slot keeps only where it held nothing. */
    const cudaError_t pending = cudaPeekAtLastError();
    err = cudaMallocFromPoolAsync(memory, bytes, pool, stream);
    if (err != cudaSuccess && pending == cudaSuccess) (void)cudaGetLastError();
  }
  if (err == cudaSuccess) return PG_OK;
  const pg_status st = pg_status_from_cuda(err);
  pg_set_error_detail("%s: %zu bytes of device memory for its workspace from the library's "
                      "pool: %s",
                      what, bytes, cudaGetErrorString(err));
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
