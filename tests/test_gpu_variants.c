/* Every registered variant the GPU runs, at every allowed stage count in
 * 1..4 (and its default), over edge shapes and layouts, against the FP64
 * reference of src/measure/harness.cu. Exit 0 pass, 1 fail, 77 without a GPU.
 *
 * Layouts ("modes"), each with its own alpha and beta:
 *   dense       alpha 1, beta 0, C poisoned with NaN (an unwritten element fails)
 *   beta        alpha 0.5, beta 3, random C0 (C is read); also run with stages 0
 *   padded      lda = K+3, ldb = N+5, ldc = N+7, padding of A and B holds NaN
 *   unaligned_ab  A and B start one float past a 16-byte boundary, odd lda, ldb
 *   unaligned_c   C starts one float past a 16-byte boundary, odd ldc
 *   unaligned_ptr A, B and C start one float past a 16-byte boundary while
 *                 every ld is a multiple of 4: alignment is a property of the
 *                 pointer too, not of the stride alone
 *   unaligned_23  A and C start three floats past a 16-byte boundary, B two,
 *                 odd lda, ldb, ldc: a first row off by 2 or 3 floats (the
 *                 realigned GEMV's head and tail at B's ends)
 * Around and between C's rows lies a sentinel: a variant that writes outside
 * the M x N window fails. A variant may answer PG_ERR_UNSUPPORTED only for a
 * layout whose pointers or strides are not 16-byte multiples, and never for
 * `auto`; it must then leave C as it was.
 *
 *   PG_TEST_QUICK=1      drops 1000x1000x1000 (for compute-sanitizer runs)
 *   PG_TEST_VARIANTS=a,b only these variants (debugging)
 *   PG_TEST_SKIP_VARIANTS=a,b  all but these (e.g. cublas under racecheck) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_util.h"
#include "tuning.h" /* pg_tuning_reread_environment */
#include "kernels/tma_ws.h" /* TWS_FORMS */
#include "measure/harness.h"

/* A tile form's name, from its line of TWS_FORMS. */
#define FORM_NAME(form, ...) #form,

typedef struct {
  int m, n, k;
} shape;

/* 2100x2100x8 has 289 tiles of 128x128: more than a persistent grid of two
 * blocks per SM on a 132-SM GPU, so in the persistent pass below (main) the
 * blocks of tma_ws take several tiles and their stage rings run on across
 * tiles. */
/* skinny_ffma's forms: 1x1x1 takes its chunk of 1 row; on a GPU of 132
 * SMs (B's and A's rows 16 bytes, N and K whole vectors) its RING ROWS
 * form: 1x1000x3000 (32 blocks of columns, K in 4 ranges), 1x2000x700 (2
 * ranges, the last short), 1x4100x1000 (129 blocks, the last of 4
 * columns), 2x4100x1000 of 2 rows, 5x1000x8 of 6 (one step, short, and
 * seven warps with none), 6x4100x1000 of 6 (129 blocks), 4x2048x260 of 4
 * (64 blocks, K too short to split), 8x2048x1000 of 8 (2 ranges), 7x9000x300 of 8 (282 blocks, 2 an
 * SM, a row past M, the last step short); 1x2000x701 (125 blocks),
 * 1x4100x1001 (129) and 1x9000x300 (141, K no multiple of the 16 rows a thread takes)
 * its GEMV at 4, 8 and 16 lanes a row, 2x9000x1000 of 2 rows at 16 lanes,
 * 1x2001x700 (126, a last block of one column) and 1x17003x100 (133
 * blocks of 32 lanes, the last thread's 3 columns) N no multiple of 4;
 * B dense but its rows off 16 bytes (N no multiple of 4, or B one float
 * past a boundary in unaligned_ab and unaligned_ptr, two in unaligned_23)
 * its realigned GEMV:
 * 1x3003x301 (108 blocks of 8 lanes, the last of 7 columns; B ends off a
 * boundary, or starts off one), 1x3601x33 (K in one step, rows past it),
 * 1x3001x1 (row 0 is row K - 1), 1x17003x100 (32 lanes), 1x9000x300 (16
 * lanes, unaligned_ptr) and 1x3600x1001 (8 lanes, unaligned_ptr: B's rows
 * all one float off);
 * its GEMV of 4 rows with one past M
 * at 3x2001x700 (4 lanes, N no multiple of 4) and 3x9000x302 (16 lanes,
 * K no multiple of 4: 4-byte loads though B's rows allow 16); 2x333x2000
 * (K split) of 2, 3x130x700 of 4, 7x13x5 of 8, 12x300x70 of 16 and 35x79x19 three
 * of 16; 400x1x3000 (16-byte loads, K split) its chunk of 1 column,
 * 600x2x777 of 2, 250x3x1100 of 4 (125 blocks of 2 rows: too few for the
 * RING form on 132 SMs), 300x5x70 of 8 (K no multiple of 4) and 77x20x300
 * three of 8; on a GPU of up to 150 SMs (16-byte rows of A, K whole
 * vectors, a block an SM at least: 4 rows of 1 column, 2 rows of 2 or 3)
 * its RING form: 1000x1x3000 and 600x1x1000 of 1 column (the last step
 * short), 1000x1x8 (seven warps of eight with no step of K), 2000x2x4100
 * of 2, 1001x3x1000 and 517x3x1100 of 3 (a last block of one row); 4 to 8
 * columns (16-byte rows of A, K whole vectors) its BAND form, 16 rows a
 * block: 1700x4x300 (107 blocks, two warps with two steps, the last step
 * short), 1003x4x1000 (K in 2 ranges on 132 SMs, a last block of 11
 * rows), 1000x4x3000 and 1000x5x1000 (2 ranges), 2001x6x700 (a last block
 * of one row), 1500x7x4100 (94 blocks), 530x8x3000 (3 ranges), 999x8x8
 * (one step: seven warps with none), 3800x5x260 (238 blocks, the last of
 * 8 rows) and 7700x7x300 (482 blocks: a second wave at 2 an SM); B's
 * step, where B is dense and the blocks fit one wave, in 16-byte copies
 * at 4 or 8 columns (1700x4x300, 1000x4x3000, 530x8x3000) and 8-byte ones
 * at 6 (2001x6x700; 1500x6x3000, the last block of 12 rows; 700x6x4100, K
 * in ranges, the last step short), in 4-byte ones in the padded layouts.
 * 130x203x4100 and 130x200x4101, dense, split K after the copy of B alone
 * and of A alone (every split form).
 * 64x96x1000 and 130x200x4100 have a tile or four and K long enough for
 * tma_ws_splitk to split it: into ranges K is no multiple of, the last one
 * short and ending in a partial step. 3000x2900x40 has 552 tiles of 128x128:
 * on a 132-SM GPU tma_ws_streamk runs one data-parallel wave before its
 * stream-K part (the partial wave's 24 tiles have 48 K steps, fewer than
 * its 264 blocks: the last full wave is streamed too). 2100x2100x256 (K in
 * 8 steps) splits K only in its bottom tile rows in the tma_ws forms
 * (128x128: 4 ranges from row 1920; 128x64: 2 from 1536; 64x128: 2 from
 * 1472; 256x128 and 128x256: 4 from 1792; 128x32 does not split), the rows above whole:
 * the partial last wave (pg_configure_split_tail); 2100x2101x256 the same
 * with planes wider than N (tma_ws_any: 4 ranges from row 1920), 1300x1300x256
 * in the 128x32 form (from row 1152). */
static const shape shapes[] = {
    {1, 1, 1},       {7, 13, 5},       {35, 79, 19},  {128, 128, 8}, {129, 257, 17},
    {300, 200, 9},   {256, 384, 40},   {64, 96, 0},   {2100, 2100, 8}, {1000, 1000, 1000},
    {64, 96, 1000},  {130, 200, 4100}, {3000, 2900, 40}, {12, 300, 70}, {300, 5, 70},
    {77, 20, 300},   {130, 203, 4100}, {130, 200, 4101}, {2100, 2100, 256},
    {2100, 2101, 256}, {1300, 1300, 256}, {1, 4100, 1000}, {2, 333, 2000}, {3, 130, 700},
    {1000, 1, 3000},   {600, 2, 777},     {517, 3, 1100}, {1, 1000, 3000}, {1, 9000, 300},
    {1, 2000, 700},  {1, 2001, 700},  {1, 17003, 100}, {600, 1, 1000}, {1000, 1, 8},
    {2000, 2, 4100}, {1001, 3, 1000}, {400, 1, 3000}, {2, 4100, 1000}, {3, 2001, 700},
    {3, 9000, 302},  {7, 9000, 300},  {250, 3, 1100}, {1700, 4, 300}, {1000, 4, 3000},
    {1003, 4, 1000}, {1000, 5, 1000}, {2001, 6, 700}, {1500, 7, 4100}, {530, 8, 3000},
    {999, 8, 8},     {3800, 5, 260},  {7700, 7, 300}, {1, 2000, 701}, {1, 4100, 1001},
    {2, 9000, 1000}, {5, 1000, 8},    {4, 2048, 260}, {8, 2048, 1000}, {1500, 6, 3000},
    {700, 6, 4100},  {6, 4100, 1000},  {1, 3003, 301},   {1, 3601, 33},   {1, 3001, 1},
    {1, 3600, 1001},
};
#define BIG_WORK 1e8 /* shapes with M*N*K this large are dropped by PG_TEST_QUICK */

typedef enum {
  MODE_DENSE,
  MODE_BETA,
  MODE_PADDED,
  MODE_UNALIGNED_AB,
  MODE_UNALIGNED_C,
  MODE_UNALIGNED_PTR,
  MODE_UNALIGNED_23,
  MODE_PADDED_B /* B's rows alone padded, not dense: not in modes[], below */
} mode_id;
typedef struct {
  mode_id id;
  const char *name;
  float alpha, beta;
} mode;
static const mode modes[] = {
    {MODE_DENSE, "dense", 1.0f, 0.0f},
    {MODE_BETA, "beta", 0.5f, 3.0f},
    {MODE_PADDED, "padded", 1.25f, -0.5f},
    {MODE_UNALIGNED_AB, "unaligned_ab", -0.75f, 0.25f},
    {MODE_UNALIGNED_C, "unaligned_c", 1.0f, -2.0f},
    {MODE_UNALIGNED_PTR, "unaligned_ptr", 2.0f, 0.0f},
    {MODE_UNALIGNED_23, "unaligned_23", -1.25f, 0.75f},
};
#define N_MODES ((int)(sizeof modes / sizeof modes[0]))
/* A and C dense, B's rows 3 floats longer than N: a layout the modes above
 * never give a 16-byte A with (skinny_ffma's BAND form, which reads a B
 * that is not dense in 4-byte copies, runs it). */
static const mode padded_b = {MODE_PADDED_B, "padded_b", 1.5f, -1.0f};

#define GUARD_FLOATS 64       /* sentinel after the last row of C */
#define MAX_FAILURE_REPORTS 40 /* full reports; later failures are only counted */
#define MAX_TEST_STAGES 4
static const uint32_t SENTINEL_BITS = 0x7FA5A5A5u; /* a NaN with a payload */

/* One problem: inputs, its reference, and C's initial image. */
typedef struct {
  shape s;
  const mode *md;
  int lda, ldb, ldc;
  int a_off, b_off, c_off; /* in floats from the allocation */
  size_t a_total, b_total, c_total;
  float *a_buf, *b_buf; /* device */
  float *c_init, *c_run; /* device: pristine image, and the one a variant writes */
  float *c_host_init, *c_host_out; /* host copies of the whole C allocation */
  double *ref, *scale; /* device, m x n */
} problem;

static int failures, runs_checked, runs_unsupported;
static int *unsupported_by_variant; /* per registry index */
static int quick;
static const char *only_variants, *skip_variants;
static cudaStream_t stream;

static int max_int(int x, int y) { return x > y ? x : y; }
static int odd(int x) { return x | 1; }
static int round_up4(int x) { return (x + 3) / 4 * 4; }

static void setup_layout(problem *p) {
  int m = p->s.m, n = p->s.n, k = p->s.k;
  p->lda = max_int(1, k);
  p->ldb = max_int(1, n);
  p->ldc = max_int(1, n);
  p->a_off = p->b_off = p->c_off = 0;
  switch (p->md->id) {
  case MODE_DENSE:
  case MODE_BETA:
    break;
  case MODE_PADDED:
    p->lda = k + 3;
    p->ldb = n + 5;
    p->ldc = n + 7;
    break;
  case MODE_UNALIGNED_AB:
    p->a_off = p->b_off = 1;
    p->lda = odd(p->lda);
    p->ldb = odd(p->ldb);
    break;
  case MODE_UNALIGNED_C:
    p->c_off = 1;
    p->ldc = odd(p->ldc);
    break;
  case MODE_UNALIGNED_PTR:
    p->a_off = p->b_off = p->c_off = 1;
    p->lda = round_up4(p->lda);
    p->ldb = round_up4(p->ldb);
    p->ldc = round_up4(p->ldc);
    break;
  case MODE_UNALIGNED_23:
    p->a_off = p->c_off = 3;
    p->b_off = 2;
    p->lda = odd(p->lda);
    p->ldb = odd(p->ldb);
    p->ldc = odd(p->ldc);
    break;
  case MODE_PADDED_B:
    p->ldb = n + 3;
    break;
  }
  p->a_total = (size_t)p->a_off + (size_t)m * p->lda + GUARD_FLOATS;
  p->b_total = (size_t)p->b_off + (size_t)max_int(k, 1) * p->ldb + GUARD_FLOATS;
  p->c_total = (size_t)p->c_off + (size_t)m * p->ldc + GUARD_FLOATS;
}

/* 1 when every pointer and row stride is a multiple of 16 bytes: no variant
 * may call such a layout unsupported. */
static int layout_aligned(const problem *p) {
  return p->a_off % 4 == 0 && p->b_off % 4 == 0 && p->c_off % 4 == 0 && p->lda % 4 == 0 &&
         p->ldb % 4 == 0 && p->ldc % 4 == 0;
}

static int in_window(const problem *p, size_t index) {
  if (index < (size_t)p->c_off) return 0;
  size_t rel = index - (size_t)p->c_off;
  size_t row = rel / (size_t)p->ldc, col = rel % (size_t)p->ldc;
  return row < (size_t)p->s.m && col < (size_t)p->s.n;
}

static void prepare(problem *p, int shape_index) {
  const int m = p->s.m, n = p->s.n, k = p->s.k;
  const uint64_t seed = 1000u * (uint64_t)shape_index + 10u * (uint64_t)p->md->id;
  setup_layout(p);
  p->a_buf = pgt_malloc_device(p->a_total * sizeof(float));
  p->b_buf = pgt_malloc_device(p->b_total * sizeof(float));
  p->c_init = pgt_malloc_device(p->c_total * sizeof(float));
  p->c_run = pgt_malloc_device(p->c_total * sizeof(float));
  p->ref = pgt_malloc_device((size_t)m * n * sizeof(double));
  p->scale = pgt_malloc_device((size_t)m * n * sizeof(double));
  p->c_host_init = pgt_malloc_host(p->c_total * sizeof(float));
  p->c_host_out = pgt_malloc_host(p->c_total * sizeof(float));

  /* All-ones bytes are a NaN: whatever lies outside A's and B's windows is NaN. */
  PGT_CUDA(cudaMemset(p->a_buf, 0xFF, p->a_total * sizeof(float)));
  PGT_CUDA(cudaMemset(p->b_buf, 0xFF, p->b_total * sizeof(float)));
  if (k > 0) {
    PGT_PG(pgh_fill_uniform(p->a_buf + p->a_off, m, k, p->lda, seed + 1, stream));
    PGT_PG(pgh_fill_uniform(p->b_buf + p->b_off, k, n, p->ldb, seed + 2, stream));
  }

  /* C: sentinel everywhere, the window NaN (beta 0) or random C0. */
  float sentinel;
  memcpy(&sentinel, &SENTINEL_BITS, sizeof sentinel);
  for (size_t i = 0; i < p->c_total; i++) p->c_host_init[i] = sentinel;
  float *c0_dense = NULL;
  if (p->md->beta != 0.0f) {
    float *d = pgt_malloc_device((size_t)m * n * sizeof(float));
    PGT_PG(pgh_fill_uniform(d, m, n, n, seed + 3, stream));
    c0_dense = pgt_malloc_host((size_t)m * n * sizeof(float));
    PGT_CUDA(cudaMemcpyAsync(c0_dense, d, (size_t)m * n * sizeof(float), cudaMemcpyDeviceToHost,
                             stream));
    PGT_CUDA(cudaStreamSynchronize(stream));
    PGT_CUDA(cudaFree(d));
  }
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      p->c_host_init[(size_t)p->c_off + (size_t)i * p->ldc + j] =
          c0_dense ? c0_dense[(size_t)i * n + j] : NAN;
  free(c0_dense);
  PGT_CUDA(cudaMemcpyAsync(p->c_init, p->c_host_init, p->c_total * sizeof(float),
                           cudaMemcpyHostToDevice, stream));

  PGT_PG(pgh_reference(m, n, k, p->md->alpha, p->a_buf + p->a_off, p->lda, p->b_buf + p->b_off,
                       p->ldb, p->md->beta, p->md->beta != 0.0f ? p->c_init + p->c_off : NULL,
                       p->ldc, p->ref, p->scale, stream));
  PGT_CUDA(cudaStreamSynchronize(stream));
}

/* p, set up for shape s in layout md (its inputs seeded by `seed`). */
static void start_problem(problem *p, shape s, const mode *md, int seed) {
  memset(p, 0, sizeof *p);
  p->s = s;
  p->md = md;
  prepare(p, seed);
}

/* The registry index of v. */
static int index_of(const pg_variant_info *v) {
  int index = 0;
  while (pg_variant_at(index) != v) index++;
  return index;
}

/* Whether `v`'s plan at `sh` adds a split K's ranges up in clusters
 * (pg_plan_info.split_in_clusters), -1 where the plan fails; a plan in
 * clusters must keep them all resident: its blocks an SM (at the shared
 * memory it pads to, static part included) times the SMs hold its grid.
 * The plan is described, never launched (`any`: 16 bytes of device memory
 * for its pointers). */
static int plan_in_clusters(const pg_variant_info *v, shape sh, float *any, int sm_count) {
  pg_plan *plan = NULL;
  pg_plan_info info = PG_PLAN_INFO_INIT;
  pg_status st = pg_plan_create(&plan, v, 0, sh.m, sh.n, sh.k, 1.0f, any, sh.k, any, sh.n, 0.0f,
                                any, sh.n);
  if (st == PG_OK) st = pg_plan_describe(plan, &info);
  pg_plan_destroy(plan);
  if (st != PG_OK) {
    printf("FAIL: %s at %dx%dx%d: planned %s (%s)\n", v->name, sh.m, sh.n, sh.k,
           pg_status_name(st), pg_last_error_detail());
    failures++;
    return -1;
  }
  if (info.split_in_clusters &&
      (long long)info.kernel.blocks_per_sm * sm_count < (long long)info.grid_x) {
    printf("FAIL: %s at %dx%dx%d: %u blocks in clusters of %d ranges, %d an SM of %d SMs\n",
           v->name, sh.m, sh.n, sh.k, info.grid_x, info.splits, info.kernel.blocks_per_sm,
           sm_count);
    failures++;
  }
  return info.split_in_clusters;
}

static void release(problem *p) {
  PGT_CUDA(cudaFree(p->a_buf));
  PGT_CUDA(cudaFree(p->b_buf));
  PGT_CUDA(cudaFree(p->c_init));
  PGT_CUDA(cudaFree(p->c_run));
  PGT_CUDA(cudaFree(p->ref));
  PGT_CUDA(cudaFree(p->scale));
  free(p->c_host_init);
  free(p->c_host_out);
}

static void describe(const problem *p, const pg_variant_info *v, int stages) {
  printf("FAIL variant=%s stages=%d shape=%dx%dx%d mode=%s alpha=%g beta=%g lda=%d ldb=%d "
         "ldc=%d offsets(floats) a+%d b+%d c+%d\n",
         v->name, stages, p->s.m, p->s.n, p->s.k, p->md->name, (double)p->md->alpha,
         (double)p->md->beta, p->lda, p->ldb, p->ldc, p->a_off, p->b_off, p->c_off);
}

/* Elements outside the window must still hold their initial bits. */
static long long count_outside_writes(const problem *p, long long *first) {
  long long changed = 0;
  *first = -1;
  for (size_t i = 0; i < p->c_total; i++) {
    if (in_window(p, i)) continue;
    if (memcmp(&p->c_host_out[i], &p->c_host_init[i], sizeof(float)) != 0) {
      if (*first < 0) *first = (long long)i;
      changed++;
    }
  }
  return changed;
}

/* Counts a failure; returns 1 when its details should still be printed. */
static int begin_failure(const problem *p, const pg_variant_info *v, int stages) {
  failures++;
  if (failures > MAX_FAILURE_REPORTS) return 0;
  describe(p, v, stages);
  return 1;
}

static void fail_report(const problem *p, const pg_variant_info *v, int stages, const char *why) {
  if (begin_failure(p, v, stages)) printf("  %s\n", why);
}

static void run_one(const problem *p, int variant_index, int stages) {
  const pg_variant_info *v = pg_variant_at(variant_index);
  const int m = p->s.m, n = p->s.n, k = p->s.k;
  char why[512];
  PGT_CUDA(cudaMemcpyAsync(p->c_run, p->c_init, p->c_total * sizeof(float),
                           cudaMemcpyDeviceToDevice, stream));
  pg_status st = pg_sgemm_variant(v, stages, m, n, k, p->md->alpha, p->a_buf + p->a_off, p->lda,
                                  p->b_buf + p->b_off, p->ldb, p->md->beta, p->c_run + p->c_off,
                                  p->ldc, stream);
  cudaError_t sync = cudaStreamSynchronize(stream);
  if (sync != cudaSuccess) {
    /* A fault in a kernel poisons the context: nothing after it can be trusted. */
    describe(p, v, stages);
    printf("  CUDA error after the call (status %s): %s\n", pg_status_name(st),
           cudaGetErrorString(sync));
    printf("FAILED: stopping, the CUDA context is no longer usable\n");
    exit(1);
  }
  cudaError_t pending = cudaGetLastError();
  if (pending != cudaSuccess && st == PG_OK) {
    snprintf(why, sizeof why, "returned PG_OK but left a CUDA error behind: %s",
             cudaGetErrorString(pending));
    fail_report(p, v, stages, why);
    return;
  }
  PGT_CUDA(cudaMemcpy(p->c_host_out, p->c_run, p->c_total * sizeof(float),
                      cudaMemcpyDeviceToHost));

  if (st == PG_ERR_UNSUPPORTED) {
    if (layout_aligned(p) || v->kind == PG_KIND_SELECTOR) {
      fail_report(p, v, stages, "PG_ERR_UNSUPPORTED for a layout every variant must run");
      return;
    }
    if (pg_last_error_detail()[0] == '\0') {
      fail_report(p, v, stages, "PG_ERR_UNSUPPORTED without a reason in pg_last_error_detail()");
      return;
    }
    long long diff = pgt_first_diff(p->c_host_out, p->c_host_init, p->c_total);
    if (diff >= 0) {
      snprintf(why, sizeof why, "PG_ERR_UNSUPPORTED but C changed (first at buffer index %lld)",
               diff);
      fail_report(p, v, stages, why);
      return;
    }
    runs_unsupported++;
    unsupported_by_variant[variant_index]++;
    return;
  }
  if (st != PG_OK) {
    snprintf(why, sizeof why, "returned %s (%s), CUDA: %s", pg_status_name(st), pg_strerror(st),
             cudaGetErrorString(pg_last_cuda_error()));
    fail_report(p, v, stages, why);
    return;
  }
  runs_checked++;

  pgh_check chk;
  PGT_PG(pgh_compare(m, n, k, p->c_run + p->c_off, p->ldc, p->ref, p->scale, v->precision, &chk,
                     stream));
  long long first_outside = -1;
  long long outside = count_outside_writes(p, &first_outside);
  if (chk.failed == 0 && outside == 0) return;

  if (!begin_failure(p, v, stages)) return;
  if (chk.failed != 0) {
    printf("  %lld of %lld elements wrong (%lld NaN/Inf), max |err| %.3g, max err/tolerance %.3g\n",
           chk.failed, chk.checked, chk.nonfinite, chk.max_abs_err, chk.max_tol_ratio);
    for (int r = 0; r < chk.reported && r < 5; r++)
      printf("  C[%d][%d] = %.9g, reference %.9g\n", chk.bad_row[r], chk.bad_col[r],
             (double)chk.bad_out[r], chk.bad_ref[r]);
  }
  if (outside != 0) {
    long long rel = first_outside - p->c_off;
    printf("  wrote outside C: %lld element(s) changed, first at buffer index %lld "
           "(row %lld, column %lld of ldc %d)\n",
           outside, first_outside, rel >= 0 ? rel / p->ldc : -1, rel >= 0 ? rel % p->ldc : -1,
           p->ldc);
  }
}

/* Stage counts to test: allowed ones in 1..4, plus the default if above. */
static int stage_list(const pg_variant_info *v, int *out) {
  int count = 0;
  for (int s = max_int(1, v->min_stages); s <= v->max_stages && s <= MAX_TEST_STAGES; s++)
    out[count++] = s;
  if (v->default_stages > MAX_TEST_STAGES) out[count++] = v->default_stages;
  return count;
}

int main(void) {
  if (!pgt_have_device()) return PG_TEST_SKIP;
  const char *q = getenv("PG_TEST_QUICK");
  quick = q != NULL && strcmp(q, "") != 0 && strcmp(q, "0") != 0;
  only_variants = getenv("PG_TEST_VARIANTS");
  skip_variants = getenv("PG_TEST_SKIP_VARIANTS");
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);

  pgh_device_info dev;
  PGT_PG(pgh_device_query(0, &dev));
  printf("device: %s, sm_%d%d, %d SMs%s\n", dev.name, dev.cc_major, dev.cc_minor, dev.sm_count,
         quick ? " (PG_TEST_QUICK: large shapes dropped)" : "");
  PGT_CUDA(cudaStreamCreate(&stream));
  unsupported_by_variant = calloc((size_t)pg_variant_count() + 1, sizeof(int));
  if (unsupported_by_variant == NULL) return 1;

  /* Which (variant, stages) pairs this device runs. */
  int tested_variants = 0;
  for (int i = 0; i < pg_variant_count(); i++) {
    const pg_variant_info *v = pg_variant_at(i);
    if (!pgt_selected(v->name)) continue;
    int stages[MAX_TEST_STAGES + 1], n_stages = stage_list(v, stages);
    printf("%-18s stages:", v->name);
    for (int j = 0; j < n_stages; j++) {
      pg_status st = pg_variant_supported(v, stages[j]);
      if (st == PG_OK) printf(" %d", stages[j]);
      else if (st == PG_ERR_ARCH || st == PG_ERR_SMEM) printf(" %d(%s: not run)", stages[j], pg_status_name(st));
      else {
        printf(" %d(FAIL: pg_variant_supported returned %s)", stages[j], pg_status_name(st));
        failures++;
      }
    }
    printf("\n");
    tested_variants++;
  }
  if (tested_variants == 0) {
    printf("FAIL: no variant selected (PG_TEST_VARIANTS=%s, PG_TEST_SKIP_VARIANTS=%s)\n",
           only_variants ? only_variants : "", skip_variants ? skip_variants : "");
    return 1;
  }

  for (int si = 0; si < (int)(sizeof shapes / sizeof shapes[0]); si++) {
    const shape s = shapes[si];
    if (quick && (double)s.m * s.n * s.k >= BIG_WORK) continue;
    for (int mi = 0; mi < N_MODES; mi++) {
      problem p;
      start_problem(&p, s, &modes[mi], si);
      for (int i = 0; i < pg_variant_count(); i++) {
        const pg_variant_info *v = pg_variant_at(i);
        if (!pgt_selected(v->name)) continue;
        int stages[MAX_TEST_STAGES + 1], n_stages = stage_list(v, stages);
        for (int j = 0; j < n_stages; j++)
          if (pg_variant_supported(v, stages[j]) == PG_OK) run_one(&p, i, stages[j]);
        /* stages 0 means "the default"; a variant without stages (auto)
         * runs only so, in every mode */
        if ((n_stages == 0 || modes[mi].id == MODE_BETA) && pg_variant_supported(v, 0) == PG_OK)
          run_one(&p, i, 0);
      }
      release(&p);
    }
  }

  /* tma_ws's persistent grid (the H200's table launches one block per
   * tile): two blocks per SM and an odd tile group, so blocks take several
   * tiles each (2100x2100x8: 289 tiles) and their stage rings run on across
   * tiles. The overrides are read again after they are set (the library
   * reads the environment once, at its first plan). */
  const pg_variant_info *ws = pg_variant_find("tma_ws");
  if (ws != NULL && pgt_selected(ws->name) && pg_variant_supported(ws, 0) == PG_OK) {
    const int ws_index = index_of(ws);
    setenv("PIPEGEMM_TMA_WS_BLOCKS_PER_SM", "2", 1);
    setenv("PIPEGEMM_TMA_WS_GROUP_M", "3", 1);
    pg_tuning_reread_environment(); /* the library reads them once */
    printf("tma_ws, persistent grid (PIPEGEMM_TMA_WS_BLOCKS_PER_SM=2, GROUP_M=3)\n");
    for (int si = 0; si < (int)(sizeof shapes / sizeof shapes[0]); si++) {
      if (quick && (double)shapes[si].m * shapes[si].n * shapes[si].k >= BIG_WORK) continue;
      for (int mi = 0; mi < N_MODES; mi++) {
        if (modes[mi].id != MODE_DENSE && modes[mi].id != MODE_BETA) continue;
        problem p;
        start_problem(&p, shapes[si], &modes[mi], si);
        run_one(&p, ws_index, 2);
        run_one(&p, ws_index, 0);
        release(&p);
      }
    }
    unsetenv("PIPEGEMM_TMA_WS_BLOCKS_PER_SM");
    unsetenv("PIPEGEMM_TMA_WS_GROUP_M");
    pg_tuning_reread_environment(); /* the library reads them once */
  }

  /* The tma_ws forms' split K added up in clusters (the default where the
   * GPU has them) against the planes and their reduction
   * (PIPEGEMM_SPLIT_IN_CLUSTERS=0): the same additions in the same order,
   * so the same bits, in each layout; each run is checked above too. (Past 16
   * ranges and below 2^18 elements of C the reduction may add the ranges in
   * slices, another order: reduce_splits.cu; the shapes here keep split
   * order; at 2100x2101x2103, unaligned, each thread of the copy kernel
   * copies more than one batch, and a block's span crosses from A to B.)
   * On an H200 512x512x192 runs every
   * form in clusters, four of them padded to fewer blocks an SM than they
   * fit (pg_split_in_clusters). */
  const char *split_forms[] = {TWS_FORMS(FORM_NAME)}; /* every tile form (tma_ws.h) */
  const shape split_shapes[] = {{64, 96, 1000}, {130, 200, 4100}, {130, 203, 4100},
                                {1000, 1000, 1000}, {512, 512, 512}, {512, 512, 192},
                                {2100, 2101, 2103}};
  float *any = NULL; /* for plans described, never launched */
  PGT_CUDA(cudaMalloc((void **)&any, 16));
  for (size_t f = 0; f < sizeof split_forms / sizeof split_forms[0]; ++f) {
    const pg_variant_info *v = pg_variant_find(split_forms[f]);
    if (v == NULL || !pgt_selected(v->name) || pg_variant_supported(v, 0) != PG_OK) continue;
    const int index = index_of(v);
    printf("%s, split K in clusters against planes\n", v->name);
    for (size_t si = 0; si < sizeof split_shapes / sizeof split_shapes[0]; si++) {
      const shape sh = split_shapes[si];
      if (quick && (double)sh.m * sh.n * sh.k >= BIG_WORK) continue;
      (void)plan_in_clusters(v, sh, any, dev.sm_count);
      for (int mi = 0; mi < N_MODES; mi++) {
        problem p;
        start_problem(&p, sh, &modes[mi], (int)si);
        const int before = failures;
        run_one(&p, index, 0);
        float *in_clusters = (float *)malloc(p.c_total * sizeof(float));
        if (in_clusters == NULL) {
          printf("FAIL: out of host memory\n");
          exit(1);
        }
        memcpy(in_clusters, p.c_host_out, p.c_total * sizeof(float));
        setenv("PIPEGEMM_SPLIT_IN_CLUSTERS", "0", 1);
        pg_tuning_reread_environment(); /* the library reads them once */
        run_one(&p, index, 0);
        unsetenv("PIPEGEMM_SPLIT_IN_CLUSTERS");
        pg_tuning_reread_environment(); /* the library reads them once */
        const long long diff = pgt_first_diff(in_clusters, p.c_host_out, p.c_total);
        if (failures == before && diff >= 0 && begin_failure(&p, v, 0))
          printf("  in clusters and in planes differ (first at buffer index %lld)\n", diff);
        free(in_clusters);
        release(&p);
      }
    }
  }

  /* skinny_ffma's split K: added up in clusters where they all fit at
   * once on the GPU (sm_90: at some of these shapes, each of which splits
   * on a GPU of up to 150 SMs, too few rows of A for the ring form of one
   * column at 400x1x3000, the RING ROWS form's ranges at 8x1500x4100,
   * 6x1500x4100 and 3x1000x4100, the ROWS form's chunk of 8 rows at
   * 7x1500x4101 (K no multiple of 4), the BAND form's at 900x8x4100 and 1003x5x3000 (a last
   * block of 11 rows) on a GPU of 114 and 126 SMs or more; on an H200 all
   * but 4100x8x4100, which does not split, in clusters), and
   * in planes by the second kernel
   * (PIPEGEMM_SPLIT_IN_CLUSTERS=0); the two split K differently (clusters
   * take at most 8 ranges), so each is checked against the reference alone,
   * in every layout and with B's rows alone padded (padded_b: the BAND
   * form's 4-byte copies of B). */
  const pg_variant_info *sk = pg_variant_find("skinny_ffma");
  if (sk != NULL && pgt_selected(sk->name) && pg_variant_supported(sk, 0) == PG_OK) {
    const int index = index_of(sk);
    const shape sk_shapes[] = {{2, 333, 2000},  {400, 1, 3000}, {8, 1500, 4100},
                               {900, 8, 4100},  {16, 600, 9000}, {600, 3, 7777},
                               {4100, 8, 4100}, {3, 1000, 4100}, {7, 1500, 4101},
                               {1003, 5, 3000}, {6, 1500, 4100}};
    int in_clusters = 0;
    const char *env_clusters = getenv("PIPEGEMM_SPLIT_IN_CLUSTERS");
    const int clusters_off = env_clusters != NULL && strcmp(env_clusters, "0") == 0;
    printf("skinny_ffma, split K in clusters and in planes\n");
    for (size_t si = 0; si < sizeof sk_shapes / sizeof sk_shapes[0]; si++) {
      const shape sh = sk_shapes[si];
      if (quick && (double)sh.m * sh.n * sh.k >= BIG_WORK) continue;
      in_clusters += plan_in_clusters(sk, sh, any, dev.sm_count) == 1;
      for (int mi = 0; mi <= N_MODES; mi++) {
        problem p;
        start_problem(&p, sh, mi < N_MODES ? &modes[mi] : &padded_b, (int)si);
        run_one(&p, index, 0);
        setenv("PIPEGEMM_SPLIT_IN_CLUSTERS", "0", 1);
        pg_tuning_reread_environment(); /* the library reads them once */
        run_one(&p, index, 0);
        unsetenv("PIPEGEMM_SPLIT_IN_CLUSTERS");
        pg_tuning_reread_environment(); /* the library reads them once */
        release(&p);
      }
    }
    /* None before sm_90; some on sm_90 where the build has sm_90 code (the
     * tma_ws forms run: not a build of compute_80 PTX alone) and the
     * environment did not switch clusters off before the test began. */
    const pg_variant_info *ws_split = pg_variant_find("tma_ws_splitk");
    const int expect = dev.cc_major >= 9 && !clusters_off && ws_split != NULL &&
                       pg_variant_supported(ws_split, 0) == PG_OK;
    if (dev.cc_major < 9 ? in_clusters > 0 : expect && in_clusters == 0) {
      printf("FAIL: skinny_ffma in clusters at %d of these shapes on sm_%d%d\n", in_clusters,
             dev.cc_major, dev.cc_minor);
      failures++;
    }
  }
  PGT_CUDA(cudaFree(any));

  PGT_CUDA(cudaStreamDestroy(stream));
  pg_shutdown();
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  for (int i = 0; i < pg_variant_count(); i++)
    if (unsupported_by_variant[i] != 0)
      printf("note: %s answered PG_ERR_UNSUPPORTED (C untouched) in %d unaligned/odd-stride runs\n",
             pg_variant_at(i)->name, unsupported_by_variant[i]);
  free(unsupported_by_variant);
  if (failures > MAX_FAILURE_REPORTS)
    printf("(%d more failures not shown)\n", failures - MAX_FAILURE_REPORTS);
  printf("test_gpu_variants: %d runs checked, %d unsupported layouts (allowed), %d failed, %.1f s\n",
         runs_checked, runs_unsupported, failures, seconds);
  if (runs_checked == 0) {
    printf("FAIL: nothing was checked\n");
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
