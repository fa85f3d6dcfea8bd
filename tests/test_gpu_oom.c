/* Out of device memory, for every entry of the registry, each in a process
 * of its own so that its first use (module load, cuBLAS's handle, the
 * workspace pool) comes while the GPU is full:
 *
 *   test_gpu_oom            runs `test_gpu_oom VARIANT` for each entry, in turn
 *   test_gpu_oom VARIANT    one entry: prepares its problems, takes the GPU's
 *                           memory until cudaMalloc refuses, calls the entry at
 *                           a plain shape and at one where the split forms
 *                           split K, frees the memory, and calls it again
 *
 * Under pressure a call must either succeed (with C right) or return
 * PG_ERR_NO_MEMORY with a detail that names what it allocated, leave C as it
 * was, and leave the caller's CUDA error as it was: none, and then one the
 * test left pending on purpose (cudaErrorInvalidDevice). Once the memory is
 * back, the same calls must succeed: nothing that failed for want of memory
 * is remembered. The child frees all it took before it returns, and the
 * driver frees it if the child dies; an alarm ends a child after
 * CHILD_SECONDS. Exit 0 pass, 1 fail, 77 without a GPU. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_util.h"
#include "measure/harness.h"

extern char **environ;

#define CHILD_SECONDS 120
#define MAX_CHUNKS 8192
#define LARGEST_CHUNK ((size_t)1 << 30)
#define SMALLEST_CHUNK ((size_t)1 << 16)
/* What the fill may leave free and still count as full. */
#define FULL_BYTES ((size_t)64 << 20)

typedef struct {
  const char *name;
  int m, n, k;
  float *a, *b, *c;          /* device */
  double *ref, *scale;       /* host: the FP64 reference, made before the fill */
  float *c_before, *c_after; /* host */
} problem;

static cudaStream_t stream;
static int failures;

static void fail(const char *variant, const problem *p, const char *phase, const char *what) {
  failures++;
  printf("FAIL %s, %s shape %dx%dx%d, %s: %s\n", variant, p->name, p->m, p->n, p->k, phase,
         what);
}

static void prepare(problem *p, const char *name, int m, int n, int k, uint64_t seed) {
  memset(p, 0, sizeof *p);
  p->name = name;
  p->m = m;
  p->n = n;
  p->k = k;
  p->a = pgt_malloc_device((size_t)m * k * sizeof(float));
  p->b = pgt_malloc_device((size_t)k * n * sizeof(float));
  p->c = pgt_malloc_device((size_t)m * n * sizeof(float));
  const size_t results = (size_t)m * n;
  p->ref = pgt_malloc_host(results * sizeof(double));
  p->scale = pgt_malloc_host(results * sizeof(double));
  p->c_before = pgt_malloc_host(results * sizeof(float));
  p->c_after = pgt_malloc_host(results * sizeof(float));
  PGT_PG(pgh_fill_uniform(p->a, m, k, k, seed, stream));
  PGT_PG(pgh_fill_uniform(p->b, k, n, n, seed + 1, stream));
  double *ref = pgt_malloc_device(results * sizeof(double));
  double *scale = pgt_malloc_device(results * sizeof(double));
  PGT_PG(pgh_reference(m, n, k, 1.0f, p->a, k, p->b, n, 0.0f, NULL, n, ref, scale, stream));
  PGT_CUDA(cudaMemcpyAsync(p->ref, ref, results * sizeof(double), cudaMemcpyDeviceToHost, stream));
  PGT_CUDA(cudaMemcpyAsync(p->scale, scale, results * sizeof(double), cudaMemcpyDeviceToHost,
                           stream));
  PGT_CUDA(cudaStreamSynchronize(stream));
  PGT_CUDA(cudaFree(ref));
  PGT_CUDA(cudaFree(scale));
}

static void release(problem *p) {
  PGT_CUDA(cudaFree(p->a));
  PGT_CUDA(cudaFree(p->b));
  PGT_CUDA(cudaFree(p->c));
  free(p->ref);
  free(p->scale);
  free(p->c_before);
  free(p->c_after);
}

/* C is right against the reference: compared on the host, since the GPU
 * may have no memory to spare for the comparison. */
static int c_is_right(const char *variant, problem *p) {
  PGT_CUDA(cudaMemcpy(p->c_after, p->c, (size_t)p->m * p->n * sizeof(float),
                      cudaMemcpyDeviceToHost));
  pgh_check check;
  pgh_compare_host(p->m, p->n, p->k, p->c_after, p->n, p->ref, p->scale,
                   pg_variant_find(variant)->precision, &check);
  return check.failed == 0;
}

/* The GPU's memory, taken in chunks that halve each time cudaMalloc
 * refuses, down to SMALLEST_CHUNK. Returns how many chunks it holds. */
static int take_memory(void **chunks, size_t *free_after) {
  int count = 0;
  for (size_t chunk = LARGEST_CHUNK; chunk >= SMALLEST_CHUNK && count < MAX_CHUNKS;) {
    if (cudaMalloc(&chunks[count], chunk) == cudaSuccess)
      ++count;
    else
      chunk /= 2;
  }
  (void)cudaGetLastError(); /* the refusals were the test's own */
  size_t total = 0;
  if (cudaMemGetInfo(free_after, &total) != cudaSuccess) *free_after = 0;
  (void)cudaGetLastError();
  return count;
}

/* One call while the GPU is full, with `pending` left in the CUDA error
 * slot before it (cudaSuccess: none). Returns 1 when it ran out of memory. */
static int call_under_pressure(const char *variant, problem *p, cudaError_t pending) {
  const char *phase = pending == cudaSuccess ? "GPU full" : "GPU full, an error pending";
  char what[512];
  /* C poisoned from the host: a kernel launch may itself need memory the
   * full GPU does not have (under compute-sanitizer it does). */
  const size_t elements = (size_t)p->m * p->n;
  for (size_t i = 0; i < elements; ++i) p->c_before[i] = NAN;
  PGT_CUDA(cudaMemcpy(p->c, p->c_before, elements * sizeof(float), cudaMemcpyHostToDevice));
  if (pending != cudaSuccess && cudaSetDevice(-1) != pending) {
    printf("FATAL: cudaSetDevice(-1) did not leave %s pending\n", cudaGetErrorName(pending));
    exit(1);
  }
  const pg_status st =
      pg_sgemm(variant, 0, p->m, p->n, p->k, 1.0f, p->a, p->k, p->b, p->n, 0.0f, p->c, p->n,
               stream);
  const cudaError_t left = cudaGetLastError();
  if (left != pending) {
    snprintf(what, sizeof what, "returned %s and left %s in the CUDA error slot, not %s",
             pg_status_name(st), cudaGetErrorName(left), cudaGetErrorName(pending));
    fail(variant, p, phase, what);
  }
  const cudaError_t synced = cudaStreamSynchronize(stream);
  if (synced != cudaSuccess) {
    snprintf(what, sizeof what, "the stream failed after the call: %s", cudaGetErrorString(synced));
    fail(variant, p, phase, what);
    exit(1);
  }
  if (st == PG_OK) {
    if (!c_is_right(variant, p)) fail(variant, p, phase, "PG_OK but C is wrong");
    return 0;
  }
  if (st != PG_ERR_NO_MEMORY) {
    snprintf(what, sizeof what, "returned %s (%s), not PG_OK or PG_ERR_NO_MEMORY",
             pg_status_name(st), pg_last_error_detail());
    fail(variant, p, phase, what);
    return 0;
  }
  const char *detail = pg_last_error_detail();
  printf("  %s shape, %s: PG_ERR_NO_MEMORY: %s\n", p->name, phase, detail);
  if (strstr(detail, variant) == NULL && strstr(detail, "cuBLAS") == NULL &&
      strstr(detail, "cublas") == NULL)
    fail(variant, p, phase, "the detail does not name what ran out of memory");
  if (strstr(detail, "bytes") == NULL && strstr(detail, "cuBLAS") == NULL &&
      strstr(detail, "cublas") == NULL)
    fail(variant, p, phase, "the detail does not say how many bytes");
  PGT_CUDA(cudaMemcpy(p->c_after, p->c, (size_t)p->m * p->n * sizeof(float),
                      cudaMemcpyDeviceToHost));
  if (pgt_first_diff(p->c_before, p->c_after, (size_t)p->m * p->n) >= 0)
    fail(variant, p, phase, "PG_ERR_NO_MEMORY but C changed");
  return 1;
}

static int child(const char *variant) {
  alarm(CHILD_SECONDS);
  PGT_CUDA(cudaFree(NULL)); /* the context, before the GPU fills */
  PGT_CUDA(cudaStreamCreate(&stream));
  problem problems[2];
  prepare(&problems[0], "plain", 256, 256, 512, 1);
  /* Four tiles over K = 65536: the split forms, and auto, split K. */
  prepare(&problems[1], "split", 256, 256, 65536, 3);

  static void *chunks[MAX_CHUNKS];
  size_t free_after = 0;
  const int count = take_memory(chunks, &free_after);
  printf("%s: the GPU is full (%d allocations, %zu bytes left)\n", variant, count, free_after);
  if (free_after > FULL_BYTES) {
    printf("FAIL %s: %zu bytes are still free after the fill\n", variant, free_after);
    failures++;
  }
  int ran_out = 0;
  for (int i = 0; i < 2; ++i) {
    ran_out += call_under_pressure(variant, &problems[i], cudaSuccess);
    ran_out += call_under_pressure(variant, &problems[i], cudaErrorInvalidDevice);
  }
  for (int i = 0; i < count; ++i) PGT_CUDA(cudaFree(chunks[i]));

  int skipped = 0;
  for (int i = 0; i < 2; ++i) {
    problem *p = &problems[i];
    PGT_PG(pgh_poison(p->c, p->m, p->n, p->n, stream));
    const pg_status st =
        pg_sgemm(variant, 0, p->m, p->n, p->k, 1.0f, p->a, p->k, p->b, p->n, 0.0f, p->c, p->n,
                 stream);
    const cudaError_t synced = cudaStreamSynchronize(stream);
    if (synced != cudaSuccess) {
      char what[400];
      snprintf(what, sizeof what, "returned %s (%s), then the stream failed: %s",
               pg_status_name(st), pg_last_error_detail(), cudaGetErrorName(synced));
      fail(variant, p, "memory back", what);
      return 1;
    }
    if (st == PG_ERR_ARCH || st == PG_ERR_SMEM) {
      skipped = 1; /* this GPU does not run it */
    } else if (st != PG_OK) {
      char what[400];
      snprintf(what, sizeof what, "returned %s (%s)", pg_status_name(st), pg_last_error_detail());
      fail(variant, p, "memory back", what);
    } else if (!c_is_right(variant, p)) {
      fail(variant, p, "memory back", "C is wrong");
    }
  }
  release(&problems[0]);
  release(&problems[1]);
  pg_shutdown();
  printf("%s: %d of 4 calls under pressure ran out of memory; %s\n", variant, ran_out,
         failures ? "FAILED" : skipped ? "not run on this GPU once memory was back" : "ok");
  if (failures) return 1;
  return skipped ? PG_TEST_SKIP : 0;
}

/* `self VARIANT`, waited for: its exit code, or 1 when it could not run. */
static int run_child(const char *self, const char *variant) {
  char *argv[] = {(char *)self, (char *)variant, NULL};
  pid_t pid;
  const int rc = posix_spawn(&pid, self, NULL, NULL, argv, environ);
  if (rc != 0) {
    printf("FAIL %s: cannot start %s: %s\n", variant, self, strerror(rc));
    return 1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 1;
  fflush(stdout);
  if (WIFSIGNALED(status)) {
    printf("FAIL %s: the child died of signal %d%s\n", variant, WTERMSIG(status),
           WTERMSIG(status) == SIGALRM ? " (it ran past its time)" : "");
    return 1;
  }
  return WEXITSTATUS(status);
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc == 2) return child(argv[1]);
  if (!pgt_have_device()) return PG_TEST_SKIP;
  int ran = 0, skipped = 0, failed = 0;
  for (int i = 0; i < pg_variant_count(); ++i) {
    const pg_variant_info *v = pg_variant_at(i);
    if (!pgt_selected(v->name)) continue;
    const int code = run_child(argv[0], v->name);
    if (code == 0)
      ++ran;
    else if (code == PG_TEST_SKIP)
      ++skipped;
    else
      ++failed;
  }
  printf("%d entries passed, %d not run on this GPU, %d failed\n", ran, skipped, failed);
  return failed == 0 && ran > 0 ? 0 : 1;
}
