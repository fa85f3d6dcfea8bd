/* Every variant captured into a CUDA graph, in each capture mode, and the
 * graph replayed: C must be right after every replay. The first pipegemm call
 * of this process (and each entry's first call, when the library probes the
 * device and creates cuBLAS's handle) happens inside a capture. The
 * reference rows are captured on two streams too, with no memory node and
 * the same bits from every capture.
 * PG_TEST_VARIANTS / PG_TEST_SKIP_VARIANTS choose variants (gpu_util.h).
 * Exit 0 pass, 1 fail, 77 without a GPU. */
#include <stdio.h>
#include <string.h>

#include "gpu_util.h"
#include "measure/harness.h"

/* Multiples of 4, so every variant (TMA ones too) accepts the layout; K
 * long enough that the split-K and stream-K forms take a workspace, whose
 * stream-ordered allocation the capture records. */
#define M 300
#define N 200
#define K 1024

static float *d_a, *d_b, *d_c;
static double *d_ref, *d_scale;
static cudaStream_t stream;
static int failures, captured, not_here;

/* C against the reference, after C was poisoned and the graph replayed. */
static int replay_is_right(cudaGraphExec_t exec, pg_precision precision, const char *what) {
  PGT_PG(pgh_poison(d_c, M, N, N, stream));
  PGT_CUDA(cudaGraphLaunch(exec, stream));
  PGT_CUDA(cudaStreamSynchronize(stream));
  pgh_check check;
  PGT_PG(pgh_compare(M, N, K, d_c, N, d_ref, d_scale, precision, &check, stream));
  if (check.failed == 0) return 1;
  printf("FAIL %s: %lld of %lld elements wrong after a replay (%lld NaN)\n", what, check.failed,
         check.checked, check.nonfinite);
  return 0;
}

static void capture_one(const pg_variant_info *v, enum cudaStreamCaptureMode mode,
                        const char *mode_name) {
  char what[128];
  snprintf(what, sizeof what, "%s, %s capture", v->name, mode_name);
  cudaGraph_t graph = NULL;
  PGT_CUDA(cudaStreamBeginCapture(stream, mode));
  pg_status st = pg_sgemm_variant(v, 0, M, N, K, 1.0f, d_a, K, d_b, N, 0.0f, d_c, N, stream);
  cudaError_t end = cudaStreamEndCapture(stream, &graph);
  if (st == PG_ERR_ARCH || st == PG_ERR_SMEM) {
    /* This GPU does not run it (the other tests say why): nothing captured. */
    if (mode == cudaStreamCaptureModeGlobal) not_here++;
    if (graph != NULL) PGT_CUDA(cudaGraphDestroy(graph));
    return;
  }
  if (st != PG_OK || end != cudaSuccess) {
    failures++;
    printf("FAIL %s: pg_sgemm_variant returned %s (%s; CUDA: %s), cudaStreamEndCapture: %s\n",
           what, pg_status_name(st), pg_last_error_detail(),
           cudaGetErrorString(pg_last_cuda_error()), cudaGetErrorString(end));
    if (graph != NULL) cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    return;
  }
  cudaGraphExec_t exec = NULL;
  PGT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  captured++;
  /* Twice: a replay repeats the GEMM, it does not depend on the first. */
  if (!replay_is_right(exec, v->precision, what) || !replay_is_right(exec, v->precision, what))
    failures++;
  PGT_CUDA(cudaGraphExecDestroy(exec));
  PGT_CUDA(cudaGraphDestroy(graph));
}

/* The reference rows captured on two streams, twice each: a capture must
 * allocate nothing (no memory node: each stream's handle has a workspace
 * of its own), and every replay must give the bits of the first. */
static void reference_rows_on_streams(const char *name) {
  const pg_variant_info *v = pg_variant_find(name);
  if (v == NULL || !pgt_selected(name) || pg_variant_supported(v, 0) != PG_OK) return;
  cudaStream_t streams[2];
  float *first = pgt_malloc_host((size_t)M * N * sizeof(float));
  float *again = pgt_malloc_host((size_t)M * N * sizeof(float));
  int have_first = 0;
  for (int s = 0; s < 2; ++s) PGT_CUDA(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
  for (int round = 0; round < 4; ++round) {
    cudaStream_t on = streams[round % 2];
    char what[96];
    snprintf(what, sizeof what, "%s captured on stream %d, capture %d", name, round % 2,
             round / 2 + 1);
    cudaGraph_t graph = NULL;
    PGT_CUDA(cudaStreamBeginCapture(on, cudaStreamCaptureModeGlobal));
    const pg_status st =
        pg_sgemm_variant(v, 0, M, N, K, 1.0f, d_a, K, d_b, N, 0.0f, d_c, N, on);
    PGT_CUDA(cudaStreamEndCapture(on, &graph));
    if (st != PG_OK) {
      failures++;
      printf("FAIL %s: %s (%s)\n", what, pg_status_name(st), pg_last_error_detail());
      PGT_CUDA(cudaGraphDestroy(graph));
      continue;
    }
    size_t count = 0;
    PGT_CUDA(cudaGraphGetNodes(graph, NULL, &count));
    cudaGraphNode_t nodes[64];
    if (count > 64) count = 64;
    PGT_CUDA(cudaGraphGetNodes(graph, nodes, &count));
    for (size_t i = 0; i < count; ++i) {
      enum cudaGraphNodeType type;
      PGT_CUDA(cudaGraphNodeGetType(nodes[i], &type));
      if (type == cudaGraphNodeTypeMemAlloc || type == cudaGraphNodeTypeMemFree) {
        failures++;
        printf("FAIL %s: the capture holds a memory node (cuBLAS allocated inside it)\n", what);
        break;
      }
    }
    cudaGraphExec_t exec = NULL;
    PGT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    PGT_PG(pgh_poison(d_c, M, N, N, on));
    PGT_CUDA(cudaGraphLaunch(exec, on));
    PGT_CUDA(cudaMemcpyAsync(have_first ? again : first, d_c, (size_t)M * N * sizeof(float),
                             cudaMemcpyDeviceToHost, on));
    PGT_CUDA(cudaStreamSynchronize(on));
    captured++;
    if (have_first && pgt_first_diff(first, again, (size_t)M * N) >= 0) {
      failures++;
      printf("FAIL %s: its replay's bits differ from the first capture's\n", what);
    }
    have_first = 1;
    PGT_CUDA(cudaGraphExecDestroy(exec));
    PGT_CUDA(cudaGraphDestroy(graph));
  }
  for (int s = 0; s < 2; ++s) PGT_CUDA(cudaStreamDestroy(streams[s]));
  free(first);
  free(again);
}

int main(void) {
  if (!pgt_have_device()) return PG_TEST_SKIP;
  PGT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  d_a = pgt_malloc_device((size_t)M * K * sizeof(float));
  d_b = pgt_malloc_device((size_t)K * N * sizeof(float));
  d_c = pgt_malloc_device((size_t)M * N * sizeof(float));
  d_ref = pgt_malloc_device((size_t)M * N * sizeof(double));
  d_scale = pgt_malloc_device((size_t)M * N * sizeof(double));
  PGT_PG(pgh_fill_uniform(d_a, M, K, K, 11, stream));
  PGT_PG(pgh_fill_uniform(d_b, K, N, N, 12, stream));
  PGT_PG(pgh_reference(M, N, K, 1.0f, d_a, K, d_b, N, 0.0f, NULL, N, d_ref, d_scale, stream));
  PGT_CUDA(cudaStreamSynchronize(stream));

  const struct {
    enum cudaStreamCaptureMode mode;
    const char *name;
  } modes[] = {{cudaStreamCaptureModeGlobal, "global"},
               {cudaStreamCaptureModeThreadLocal, "thread-local"},
               {cudaStreamCaptureModeRelaxed, "relaxed"}};
  for (size_t m = 0; m < sizeof modes / sizeof modes[0]; ++m)
    for (int i = 0; i < pg_variant_count(); ++i)
      if (pgt_selected(pg_variant_at(i)->name))
        capture_one(pg_variant_at(i), modes[m].mode, modes[m].name);

  reference_rows_on_streams("cublas");
  reference_rows_on_streams("cublas_tf32");

  PGT_CUDA(cudaFree(d_a));
  PGT_CUDA(cudaFree(d_b));
  PGT_CUDA(cudaFree(d_c));
  PGT_CUDA(cudaFree(d_ref));
  PGT_CUDA(cudaFree(d_scale));
  PGT_CUDA(cudaStreamDestroy(stream));
  pg_shutdown();
  printf("test_gpu_graph: %d captures replayed, %d variants this GPU does not run, %d failed\n",
         captured, not_here, failures);
  if (captured == 0) {
    printf("FAIL: nothing was captured\n");
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
