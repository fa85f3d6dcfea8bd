/* Every traced variant (`pipegemm trace`) the GPU runs, at its smallest,
 * default and largest stage count, over small and edge shapes: the traced
 * kernel's C passes the FP64 reference and has the timed kernel's bits and
 * blocks per SM, and its records obey what any pipeline must
 * (pgc_trace_check): no data ready before its copy was issued, no compute
 * on a K tile before its data was ready, no copy into a slot before the
 * slot was released, never more copies in flight than stages, every K step
 * complete and in slot step % stages, whole output tiles. A second pass
 * runs tma_ws on a persistent grid (PIPEGEMM_TMA_WS_BLOCKS_PER_SM=1), whose
 * blocks take several tiles and run their ring on across them.
 * Exit 0 pass, 1 fail, 77 without a GPU.
 *
 *   PG_TEST_VARIANTS=a,b  only these variants
 *   PG_TEST_QUICK=1       default stage counts and two shapes only, no
 *                         persistent pass (for compute-sanitizer runs) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"
#include "tuning.h" /* pg_tuning_reread_environment */
#include "measure/harness.h"
#include "introspect.h"
#include "adapters/trace_format.h"

typedef struct {
  int m, n, k;
} shape;

/* K below one tile, fewer K tiles than stages, edge tiles in M, N and K,
 * several blocks; 2100x2100x64 has more tiles than a persistent grid of
 * one block per SM. */
/* K = 0 computes C = beta * C only: trace refuses it, with the reason. */
static const shape shapes[] = {{1, 1, 1},     {35, 79, 19},    {300, 260, 200},
                               {256, 384, 64}, {130, 129, 0}};
static const shape persistent_shape = {2100, 2100, 64};
#define QUICK_SHAPES 2 /* shapes[1], shapes[2] */
#define SAMPLED_BLOCKS 64 /* every block of the small grids */
#define SEED_A 11u
#define SEED_B 12u

static int failures;

static void fail(const char *label, const char *what) {
  printf("FAIL %s: %s\n", label, what);
  ++failures;
}

/* Rows of A and B padded to 16 bytes, which the TMA variants need (their
 * padding holds NaN, so a kernel that reads it fails). */
typedef struct {
  int lda, ldb;
  float *a, *b, *c, *c_timed;
  double *ref, *scale;
} problem;

static int padded(int width) { return (width > 0 ? width + 3 : 4) / 4 * 4; }

static void problem_open(problem *p, const shape *s) {
  p->lda = padded(s->k);
  p->ldb = padded(s->n);
  const size_t mk = (size_t)s->m * p->lda, kn = (size_t)s->k * p->ldb;
  const size_t mn = (size_t)s->m * s->n;
  p->a = pgt_malloc_device(mk * sizeof(float));
  p->b = pgt_malloc_device(kn * sizeof(float));
  p->c = pgt_malloc_device(mn * sizeof(float));
  p->c_timed = pgt_malloc_device(mn * sizeof(float));
  p->ref = pgt_malloc_device(mn * sizeof(double));
  p->scale = pgt_malloc_device(mn * sizeof(double));
  if (mk > 0) PGT_PG(pgh_fill_uniform(p->a, s->m, s->k, p->lda, SEED_A, 0));
  if (kn > 0) PGT_PG(pgh_fill_uniform(p->b, s->k, s->n, p->ldb, SEED_B, 0));
  PGT_PG(pgh_reference(s->m, s->n, s->k, 1.0f, p->a, p->lda, p->b, p->ldb, 0.0f, NULL, s->n,
                       p->ref, p->scale, 0));
}

static void problem_close(problem *p) {
  PGT_CUDA(cudaFree(p->a));
  PGT_CUDA(cudaFree(p->b));
  PGT_CUDA(cudaFree(p->c));
  PGT_CUDA(cudaFree(p->c_timed));
  PGT_CUDA(cudaFree(p->ref));
  PGT_CUDA(cudaFree(p->scale));
}

static pg_plan *plan_of(const pg_variant_info *v, int stages, const shape *s, float *c,
                        const problem *p) {
  pg_plan *plan = NULL;
  PGT_PG(pg_plan_create(&plan, v, stages, s->m, s->n, s->k, 1.0f, p->a, p->lda, p->b, p->ldb,
                        0.0f, c, s->n));
  return plan;
}

/* C of the traced launch against the reference and against the timed
 * kernel's bits. */
static void check_output(const char *label, pg_precision precision, const shape *s,
                         const problem *p) {
  pgh_check check;
  PGT_PG(pgh_compare(s->m, s->n, s->k, p->c, s->n, p->ref, p->scale, precision, &check, 0));
  if (check.failed > 0) fail(label, "C differs from the FP64 reference");
  const size_t count = (size_t)s->m * s->n;
  float *traced = pgt_malloc_host(count * sizeof(float));
  float *timed = pgt_malloc_host(count * sizeof(float));
  PGT_CUDA(cudaMemcpy(traced, p->c, count * sizeof(float), cudaMemcpyDeviceToHost));
  PGT_CUDA(cudaMemcpy(timed, p->c_timed, count * sizeof(float), cudaMemcpyDeviceToHost));
  if (pgt_first_diff(traced, timed, count) >= 0) fail(label, "C's bits differ from the timed kernel's");
  free(traced);
  free(timed);
}

/* Which roles a variant's blocks record: a producer track where the
 * kernel has producer warps, except tma_ws's without a K step (its
 * producer lane returns before it opens one; the wgmma kernels' K = 0 is
 * refused before, as C = beta * C). */
static int expects_producer(const pg_variant_info *v, const shape *s) {
  static const char *const with_producer[] = {"warp_specialized", "wgmma_tma_ws",
                                              "wgmma_tma_ws_wait0", "wgmma_tma_coop",
                                              "wgmma_tma_coop_n256"};
  for (size_t i = 0; i < sizeof with_producer / sizeof with_producer[0]; ++i)
    if (strcmp(v->name, with_producer[i]) == 0) return 1;
  return strcmp(v->name, "tma_ws") == 0 && s->k > 0;
}

static void check_records(const char *label, const pg_variant_info *v, int stages,
                          const shape *s, const pg_trace_layout *layout, const void *records) {
  const int k_tiles = (s->k + v->tile_k - 1) / v->tile_k;
  char err[200];
  pgc_trace trace;
  if (pgc_trace_parse(records, layout->bytes, stages, k_tiles, 1.0, &trace, err, sizeof err) != 0) {
    fail(label, err);
    return;
  }
  pgc_trace_problems problems;
  const int count = pgc_trace_check(&trace, &problems);
  for (int i = 0; i < count && i < PGC_TRACE_MAX_PROBLEMS; ++i) fail(label, problems.text[i]);
  const int tracks_per_block = expects_producer(v, s) ? 2 : 1;
  if (trace.track_count != layout->header.blocks * tracks_per_block) {
    char what[200];
    snprintf(what, sizeof what, "%d tracks for %d sampled blocks, expected %d each",
             trace.track_count, layout->header.blocks, tracks_per_block);
    fail(label, what);
  }
  for (int i = 0; i < trace.track_count; ++i)
    if (trace.tracks[i].dropped > 0) fail(label, "records were dropped: the buffer was sized short");
  pgc_trace_free(&trace);
}

/* One traced launch: C checked, the records checked. */
static void run_case(const pg_variant_info *v, int stages, const shape *s) {
  char label[160];
  snprintf(label, sizeof label, "%s stages=%d %dx%dx%d", v->name, stages, s->m, s->n, s->k);
  problem p;
  problem_open(&p, s);
  pg_plan *timed = plan_of(v, stages, s, p.c_timed, &p);
  pg_plan *traced = plan_of(v, stages, s, p.c, &p);
  pg_trace_layout layout;
  PGT_PG(pg_trace_layout_of(traced, SAMPLED_BLOCKS, &layout));
  pg_trace_header *buffer = pgt_malloc_device(layout.bytes);
  PGT_CUDA(cudaMemset(buffer, 0, layout.bytes));
  PGT_CUDA(cudaMemcpy(buffer, &layout.header, sizeof layout.header, cudaMemcpyHostToDevice));
  if (s->k == 0) {
    /* K = 0 runs no pipeline (C = beta * C): refused, with the reason. */
    if (pg_plan_trace(traced, buffer) != PG_ERR_UNSUPPORTED ||
        strstr(pg_last_error_detail(), "C = beta * C") == NULL)
      fail(label, "K = 0 was not refused as a call that only scales C");
    PGT_CUDA(cudaFree(buffer));
    pg_plan_destroy(timed);
    pg_plan_destroy(traced);
    problem_close(&p);
    return;
  }
  PGT_PG(pg_plan_trace(traced, buffer));
  pg_plan_info timed_info = PG_PLAN_INFO_INIT, traced_info = PG_PLAN_INFO_INIT;
  PGT_PG(pg_plan_describe(timed, &timed_info));
  PGT_PG(pg_plan_describe(traced, &traced_info));
  if (timed_info.kernel.blocks_per_sm != traced_info.kernel.blocks_per_sm)
    fail(label, "the traced kernel fits a different number of blocks per SM");
  PGT_PG(pgh_poison(p.c, s->m, s->n, s->n, 0));
  PGT_PG(pg_plan_launch(timed, 0));
  PGT_PG(pg_plan_launch(traced, 0));
  PGT_CUDA(cudaDeviceSynchronize());
  check_output(label, v->precision, s, &p);
  void *records = pgt_malloc_host(layout.bytes);
  PGT_CUDA(cudaMemcpy(records, buffer, layout.bytes, cudaMemcpyDeviceToHost));
  check_records(label, v, stages, s, &layout, records);
  free(records);
  PGT_CUDA(cudaFree(buffer));
  pg_plan_destroy(timed);
  pg_plan_destroy(traced);
  problem_close(&p);
}

/* The smallest, default and largest stage count, once each. */
static int stage_counts(const pg_variant_info *v, int counts[3]) {
  int n = 0;
  const int wanted[3] = {v->min_stages, v->default_stages, v->max_stages};
  for (int i = 0; i < 3; ++i) {
    int seen = 0;
    for (int j = 0; j < n; ++j) seen |= counts[j] == wanted[i];
    if (!seen) counts[n++] = wanted[i];
  }
  return n;
}

static int quick(void) {
  const char *value = getenv("PG_TEST_QUICK");
  return value != NULL && strcmp(value, "1") == 0;
}

static int run_variant(const pg_variant_info *v) {
  int counts[3], cases = 0;
  int n = stage_counts(v, counts);
  const size_t first_shape = quick() ? 1 : 0;
  const size_t shape_count = quick() ? 1 + QUICK_SHAPES : sizeof shapes / sizeof shapes[0];
  if (quick()) {
    counts[0] = v->default_stages;
    n = 1;
  }
  for (int i = 0; i < n; ++i) {
    const pg_status st = pg_variant_supported(v, counts[i]);
    if (st != PG_OK) {
      printf("skip %s stages=%d: %s (%s)\n", v->name, counts[i], pg_strerror(st),
             pg_last_error_detail());
      continue;
    }
    for (size_t s = first_shape; s < shape_count; ++s, ++cases)
      run_case(v, counts[i], &shapes[s]);
  }
  return cases;
}

int main(void) {
  if (!pgt_have_device()) return PG_TEST_SKIP;
  int cases = 0, variants = 0;
  for (int i = 0; i < pg_variant_count(); ++i) {
    const pg_variant_info *v = pg_variant_at(i);
    if (!pg_variant_traced(v) || !pgt_selected(v->name)) continue;
    cases += run_variant(v);
    ++variants;
  }
  const pg_variant_info *flagship = pg_variant_find("tma_ws");
  if (!quick() && pgt_selected("tma_ws") && pg_variant_supported(flagship, 0) == PG_OK) {
    setenv("PIPEGEMM_TMA_WS_BLOCKS_PER_SM", "1", 1); /* several tiles per block */
    pg_tuning_reread_environment(); /* the library reads them once */
    run_case(flagship, flagship->default_stages, &persistent_shape);
    unsetenv("PIPEGEMM_TMA_WS_BLOCKS_PER_SM");
    pg_tuning_reread_environment(); /* the library reads them once */
    ++cases;
  }
  pg_shutdown();
  printf("%d traced variants, %d cases, %d failures\n", variants, cases, failures);
  return failures == 0 ? 0 : 1;
}
