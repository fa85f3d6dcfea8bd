/* The scaled FP16 split on the GPU (src/kernels/fp16x3_split.cu) against
 * the host's arithmetic (src/kernels/fp16x3.h, itself held by test_fp16x3),
 * bit for bit: each line's scale exponent, h and l of every element, the
 * padding zero, a line past the span rule (one huge element, a NaN, an
 * Inf) not split and zero, a line of zeros. Lines as rows (a row-major
 * matrix's rows) and as columns (its columns: the strided read), values
 * spread over 2^28 within a line at tops across FP32's range, the lowest
 * among the denormals; paddings of whole tiles and paddings that end inside
 * a block's lines. Then wgmma_fp16x3 itself where some rows of A and a
 * column of B are past the rule (its 3xTF32 tiles beside its FP16 ones),
 * at each op(A), op(B), against FP64. Exit 0 pass, 1 fail, 77 without a
 * GPU. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"
#include "introspect.h"
#include "measure/harness.h"
#include "pipegemm.h"
#include "kernels/fp16x3.h"
#include "tuning.h" /* pg_tuning_reread_environment */

static int failures;
static uint64_t lcg = 11;
static uint32_t next_random(void) {
  lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(lcg >> 32);
}

/* A rows x cols row-major matrix read as `lines` lines (its rows, or its
 * columns where by_rows is 0): line i's values spread over 2^28 below
 * 2^top[i % 5]; lines 1, 2 and 3 made to fail the span rule (one element
 * of 2^40 among ones, a NaN, an Inf), line 5 all zeros. */
static void fill(float *x, int rows, int cols, int by_rows) {
  static const int tops[] = {100, 14, 0, -30, -121};
  const int lines = by_rows ? rows : cols, len = by_rows ? cols : rows;
  for (int i = 0; i < lines; ++i)
    for (int p = 0; p < len; ++p) {
      const int top = tops[i % 5];
      const int e = p == 0 ? top : top - (int)(next_random() % (PG_FP16X3_MAX_SPAN + 1));
      const float significand = 1.0f + (float)(next_random() >> 8) * 0x1p-24f;
      float v = pg16_scale(significand, e) * ((next_random() & 1u) ? -1.0f : 1.0f);
      if ((i * 7 + p) % 11 == 3) v = 0.0f;
      if (lines > 5 && i == 1) v = p == len / 2 ? 0x1p40f : 1.0f;
      if (lines > 5 && i == 2 && p == len - 1) v = NAN;
      if (lines > 5 && i == 3 && p == 0) v = -INFINITY;
      if (lines > 5 && i == 5) v = 0.0f;
      x[by_rows ? (size_t)i * cols + p : (size_t)p * cols + i] = v;
    }
}

/* The device's split of `lines` lines of x against the host's: h and l in
 * arrays of their own, or (interleaved) one line's h then its l, as the
 * GEMM's workspace holds them. */
static void check(const char *what, const float *host_x, const float *dev_x, long long line_stride,
                  long long elem_stride, int lines, int len, int lines_padded, int len_padded,
                  int interleaved) {
  const size_t parts = (size_t)lines_padded * len_padded;
  int *scales = pgt_malloc_device((size_t)lines * sizeof(int) + 4);
  uint16_t *both = pgt_malloc_device(2 * parts * sizeof(uint16_t));
  uint16_t *hi = both, *lo = interleaved ? both + len_padded : both + parts;
  const long long pitch = interleaved ? 2LL * len_padded : len_padded;
  /* Every scale and part must be written: poisoned first. */
  PGT_CUDA(cudaMemset(scales, 0x55, (size_t)lines * sizeof(int) + 4));
  PGT_CUDA(cudaMemset(both, 0xff, 2 * parts * sizeof(uint16_t)));
  PGT_PG(pg_fp16x3_split_lines(dev_x, line_stride, elem_stride, lines, len, lines_padded,
                               len_padded, scales, hi, lo, pitch, 0));
  PGT_CUDA(cudaDeviceSynchronize());
  int *got_scales = pgt_malloc_host((size_t)lines * sizeof(int) + 4);
  uint16_t *got = pgt_malloc_host(2 * parts * sizeof(uint16_t));
  PGT_CUDA(cudaMemcpy(got_scales, scales, (size_t)lines * sizeof(int), cudaMemcpyDeviceToHost));
  PGT_CUDA(cudaMemcpy(got, both, 2 * parts * sizeof(uint16_t), cudaMemcpyDeviceToHost));
  const uint16_t *got_hi = got, *got_lo = got + (lo - hi);
  int bad = 0, unsplit = 0;
  for (int i = 0; i < lines_padded; ++i) {
    int want_scale = PG_FP16X3_UNSPLIT;
    if (i < lines) {
      float largest = 0.0f, smallest = INFINITY;
      int finite = 1;
      for (int p = 0; p < len; ++p) {
        const float v = fabsf(host_x[i * line_stride + p * elem_stride]);
        finite &= v <= 3.4028234663852886e38f;
        if (v > largest) largest = v;
        if (v != 0.0f && v < smallest) smallest = v;
      }
      want_scale = finite && pg_fp16x3_span_ok(largest, smallest) ? pg_fp16x3_scale(largest)
                                                                  : PG_FP16X3_UNSPLIT;
      unsplit += want_scale == PG_FP16X3_UNSPLIT;
      if (got_scales[i] != want_scale && bad++ < 5)
        printf("FAIL %s: line %d scale %d, want %d\n", what, i, got_scales[i], want_scale);
    }
    for (int p = 0; p < len_padded; ++p) {
      uint16_t h = 0, l = 0;
      if (want_scale != PG_FP16X3_UNSPLIT && p < len)
        pg_fp16x3_split(host_x[i * line_stride + p * elem_stride], want_scale, &h, &l);
      const size_t at = (size_t)i * pitch + p;
      if ((got_hi[at] != h || got_lo[at] != l) && bad++ < 5)
        printf("FAIL %s: line %d element %d: h %04x l %04x, want %04x %04x\n", what, i, p,
               got_hi[at], got_lo[at], h, l);
    }
  }
  printf("%s: %d lines (%d not split) of %d, padded to %d x %d: %s\n", what, lines, unsplit, len,
         lines_padded, len_padded, bad ? "FAIL" : "ok");
  failures += bad != 0;
  if (lines > 5 && unsplit != 3) {
    printf("FAIL %s: %d lines not split, want the 3 made to fail the span rule\n", what,
           unsplit);
    ++failures;
  }
  free(got_scales);
  free(got);
  PGT_CUDA(cudaFree(scales));
  PGT_CUDA(cudaFree(both));
}

/* x (rows x cols, row-major, device) stored transposed (cols x rows), in
 * a new device array. */
static float *transposed(const float *x, int rows, int cols) {
  float *h = pgt_malloc_host((size_t)rows * cols * sizeof(float));
  float *t = pgt_malloc_host((size_t)rows * cols * sizeof(float));
  PGT_CUDA(cudaMemcpy(h, x, (size_t)rows * cols * sizeof(float), cudaMemcpyDeviceToHost));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) t[(size_t)c * rows + r] = h[(size_t)r * cols + c];
  float *d = pgt_malloc_device((size_t)rows * cols * sizeof(float));
  PGT_CUDA(cudaMemcpy(d, t, (size_t)rows * cols * sizeof(float), cudaMemcpyHostToDevice));
  free(h);
  free(t);
  return d;
}

/* What a plan runs (pg_plan_describe), counted a failure where it makes
 * other than `want` launches (3: the split, the FP16 form's kernel and
 * wgmma_3xtf32's for the wide tiles; 2: no third). `what` names the call. */
static pg_plan_info launches_are(const pg_plan *plan, int want, const char *what) {
  pg_plan_info info = PG_PLAN_INFO_INIT;
  PGT_PG(pg_plan_describe(plan, &info));
  if (info.launches != want) {
    printf("FAIL: wgmma_fp16x3 %s: %d launches, not %d\n", what, info.launches, want);
    ++failures;
  }
  return info;
}

/* wgmma_fp16x3 on A and B uniform in [-1, 1) but for three rows of A and
 * a column of B spread over 2^+-60 (each past the span rule), all in the
 * first 128: the tiles of the first row and column of tiles run 3xTF32,
 * the others the FP16 form. 3xTF32 by wgmma_3xtf32's kernel after the FP16
 * form's (the plan's third launch) where op(A) = N and A's and B's rows are
 * 16-byte aligned, else by the FP16 form's kernel on mma.sync: the plan is
 * held to the launches it should make. Each op(A), op(B): the same op(A)
 * and op(B), stored as that op reads them (A as K x M for op T, B as N x
 * K), so one FP64 reference serves all four. C is poisoned first, and all
 * of it is held to the emulated bound. `wide` 0: no wide line, every tile
 * the FP16 form's (pairs of tiles in clusters); `stages`: the entry's
 * (0: its default). Returns 0 where this build or GPU cannot run the
 * entry. */
static int gemm_with_wide_lines(int m, int n, int k, int wide, int stages) {
  float *a = pgt_malloc_device((size_t)m * k * sizeof(float));
  float *b = pgt_malloc_device((size_t)k * n * sizeof(float));
  float *c = pgt_malloc_device((size_t)m * n * sizeof(float));
  double *ref = pgt_malloc_device((size_t)m * n * sizeof(double));
  double *scale = pgt_malloc_device((size_t)m * n * sizeof(double));
  PGT_PG(pgh_fill(a, m, k, k, 21, PGH_UNIFORM, 0));
  PGT_PG(pgh_fill(b, k, n, n, 22, PGH_UNIFORM, 0));
  const int wide_rows[] = {5, 17, 100}, wide_col = 7;
  for (int r = 0; r < 3 && wide; ++r)
    PGT_PG(pgh_fill(a + (size_t)wide_rows[r] * k, 1, k, k, 23 + r, PGH_WIDE, 0));
  if (wide) {
    /* The column: filled dense, then copied in (a fill of k x 1 at ld n
     * would poison the rest of its span). */
    float *column = pgt_malloc_device((size_t)k * sizeof(float));
    PGT_PG(pgh_fill(column, k, 1, 1, 27, PGH_WIDE, 0));
    PGT_CUDA(cudaMemcpy2D(b + wide_col, (size_t)n * sizeof(float), column, sizeof(float),
                          sizeof(float), (size_t)k, cudaMemcpyDeviceToDevice));
    PGT_CUDA(cudaFree(column));
  }
  PGT_PG(pgh_reference(m, n, k, 1.0f, a, k, b, n, 0.0f, NULL, n, ref, scale, 0));
  float *at = transposed(a, m, k), *bt = transposed(b, k, n);
  int ran = 0;
  for (int op = 0; op < 4; ++op) {
    pg_gemm_desc g = PG_GEMM_DESC_INIT;
    g.op_a = op & 2 ? PG_OP_T : PG_OP_N;
    g.op_b = op & 1 ? PG_OP_T : PG_OP_N;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = op & 2 ? at : a;
    g.lda = op & 2 ? m : k;
    g.b = op & 1 ? bt : b;
    g.ldb = op & 1 ? k : n;
    g.c = c;
    g.ldc = n;
    PGT_PG(pgh_poison(c, m, n, n, 0));
    pg_plan *plan = NULL;
    const pg_status st = pg_plan_create_gemm(&plan, pg_variant_find("wgmma_fp16x3"), stages, &g);
    if (st == PG_ERR_ARCH || st == PG_ERR_SMEM) {
      printf("wgmma_fp16x3 with wide lines: not run here (%s)\n", pg_last_error_detail());
      break;
    }
    PGT_PG(st);
    const int then = !(op & 2) && g.ldb % 4 == 0 && g.lda % 4 == 0;
    char what[32];
    snprintf(what, sizeof what, "op %c%c", op & 2 ? 'T' : 'N', op & 1 ? 'T' : 'N');
    const pg_plan_info info = launches_are(plan, then ? 3 : 2, what);
    PGT_PG(pg_plan_launch(plan, 0));
    pgh_check check;
    PGT_PG(pgh_compare(m, n, k, c, n, ref, scale, PG_PRECISION_EMULATED, &check, 0));
    PGT_CUDA(cudaDeviceSynchronize());
    /* The same plan on copies elsewhere (its maps encoded anew, the wide
     * tiles' kernel's too): the same bits. */
    const size_t a_bytes = (size_t)m * k * sizeof(float), b_bytes = (size_t)k * n * sizeof(float);
    const size_t c_bytes = (size_t)m * n * sizeof(float);
    float *a2 = pgt_malloc_device(a_bytes), *b2 = pgt_malloc_device(b_bytes);
    float *c2 = pgt_malloc_device(c_bytes);
    PGT_CUDA(cudaMemcpy(a2, g.a, a_bytes, cudaMemcpyDeviceToDevice));
    PGT_CUDA(cudaMemcpy(b2, g.b, b_bytes, cudaMemcpyDeviceToDevice));
    PGT_PG(pgh_poison(c2, m, n, n, 0));
    PGT_PG(pg_plan_launch_with(plan, a2, b2, c2, 0));
    pg_plan_destroy(plan);
    float *h1 = pgt_malloc_host(c_bytes), *h2 = pgt_malloc_host(c_bytes);
    PGT_CUDA(cudaMemcpy(h1, c, c_bytes, cudaMemcpyDeviceToHost));
    PGT_CUDA(cudaMemcpy(h2, c2, c_bytes, cudaMemcpyDeviceToHost));
    if (memcmp(h1, h2, c_bytes) != 0) {
      printf("FAIL: wgmma_fp16x3 op %c%c: the plan on copies of A and B gave other bits\n",
             op & 2 ? 'T' : 'N', op & 1 ? 'T' : 'N');
      ++failures;
    }
    free(h1);
    free(h2);
    PGT_CUDA(cudaFree(a2));
    PGT_CUDA(cudaFree(b2));
    PGT_CUDA(cudaFree(c2));
    printf("wgmma_fp16x3 %dx%dx%d op %c%c, %d stages, %s (%s): %lld of %lld outside the "
           "bound (worst %.3g of it): %s\n", m, n, k, op & 2 ? 'T' : 'N', op & 1 ? 'T' : 'N',
           info.stages, wide ? "wide lines" : "no wide line",
           then ? "wgmma_3xtf32 after" : "mma.sync", check.failed, check.checked,
           check.max_tol_ratio, check.failed ? "FAIL" : "ok");
    failures += check.failed != 0;
    ran = 1;
  }
  PGT_CUDA(cudaFree(a));
  PGT_CUDA(cudaFree(b));
  PGT_CUDA(cudaFree(at));
  PGT_CUDA(cudaFree(bt));
  PGT_CUDA(cudaFree(c));
  PGT_CUDA(cudaFree(ref));
  PGT_CUDA(cudaFree(scale));
  return ran;
}

/* A batch of `batch` GEMMs, B shared (stride 0), op(B) N and T, 16-byte
 * rows: A uniform in [-1, 1) but for a wide row in GEMM 1 alone, so that
 * GEMM 1's first row of tiles goes to wgmma_3xtf32's kernel after the FP16
 * form's and the other GEMMs' tiles all stay the FP16 form's (each GEMM's
 * tiles decided by its own lines). Every member against FP64. */
static void batch_with_a_wide_row(int m, int n, int k, int batch) {
  float *a = pgt_malloc_device((size_t)batch * m * k * sizeof(float));
  float *b = pgt_malloc_device((size_t)k * n * sizeof(float));
  float *c = pgt_malloc_device((size_t)batch * m * n * sizeof(float));
  double *ref = pgt_malloc_device((size_t)batch * m * n * sizeof(double));
  double *scale = pgt_malloc_device((size_t)batch * m * n * sizeof(double));
  PGT_PG(pgh_fill(a, batch * m, k, k, 41, PGH_UNIFORM, 0));
  PGT_PG(pgh_fill(b, k, n, n, 42, PGH_UNIFORM, 0));
  PGT_PG(pgh_fill(a + ((size_t)m + 9) * k, 1, k, k, 43, PGH_WIDE, 0)); /* GEMM 1, row 9 */
  float *bt = transposed(b, k, n);
  for (int op_b = 0; op_b < 2; ++op_b) {
    pg_gemm_desc g = PG_GEMM_DESC_INIT;
    g.op_b = op_b ? PG_OP_T : PG_OP_N;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = a;
    g.lda = k;
    g.b = op_b ? bt : b;
    g.ldb = op_b ? k : n;
    g.c = c;
    g.ldc = n;
    g.batch = batch;
    g.stride_a = (long long)m * k;
    g.stride_b = 0;
    g.stride_c = (long long)m * n;
    PGT_PG(pgh_reference_gemm(&g, NULL, ref, scale, 0));
    PGT_PG(pgh_poison(c, batch * m, n, n, 0));
    pg_plan *plan = NULL;
    PGT_PG(pg_plan_create_gemm(&plan, pg_variant_find("wgmma_fp16x3"), 0, &g));
    char what[48];
    snprintf(what, sizeof what, "batch of %d, op N%c", batch, op_b ? 'T' : 'N');
    (void)launches_are(plan, 3, what);
    PGT_PG(pg_plan_launch(plan, 0));
    pg_plan_destroy(plan);
    long long failed = 0, checked = 0;
    double worst = 0.0;
    for (int z = 0; z < batch; ++z) {
      pgh_check check;
      const size_t off = (size_t)z * m * n;
      PGT_PG(pgh_compare(m, n, k, c + off, n, ref + off, scale + off, PG_PRECISION_EMULATED,
                         &check, 0));
      failed += check.failed;
      checked += check.checked;
      if (check.max_tol_ratio > worst) worst = check.max_tol_ratio;
    }
    PGT_CUDA(cudaDeviceSynchronize());
    printf("wgmma_fp16x3 batch of %d %dx%dx%d op N%c, a wide row in GEMM 1: %lld of %lld "
           "outside the bound (worst %.3g of it): %s\n", batch, m, n, k, op_b ? 'T' : 'N',
           failed, checked, worst, failed ? "FAIL" : "ok");
    failures += failed != 0;
  }
  PGT_CUDA(cudaFree(a));
  PGT_CUDA(cudaFree(b));
  PGT_CUDA(cudaFree(bt));
  PGT_CUDA(cudaFree(c));
  PGT_CUDA(cudaFree(ref));
  PGT_CUDA(cudaFree(scale));
}

int main(void) {
  if (!pgt_have_device()) return PG_TEST_SKIP;
  const int shapes[][2] = {{37, 100}, {128, 64}, {300, 257}, {1, 1}, {6, 1000}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
    const int rows = shapes[s][0], cols = shapes[s][1];
    float *x = pgt_malloc_host((size_t)rows * cols * sizeof(float));
    float *dev = pgt_malloc_device((size_t)rows * cols * sizeof(float));
    char what[64];
    /* Rows as lines (op(A) = N's rows), padded to 128 lines of 64k. */
    fill(x, rows, cols, 1);
    PGT_CUDA(cudaMemcpy(dev, x, (size_t)rows * cols * sizeof(float), cudaMemcpyHostToDevice));
    snprintf(what, sizeof what, "%dx%d rows", rows, cols);
    check(what, x, dev, cols, 1, rows, cols, (rows + 127) / 128 * 128, (cols + 63) / 64 * 64, 0);
    snprintf(what, sizeof what, "%dx%d rows, h and l interleaved", rows, cols);
    check(what, x, dev, cols, 1, rows, cols, (rows + 127) / 128 * 128, (cols + 63) / 64 * 64, 1);
    snprintf(what, sizeof what, "%dx%d rows, odd padding", rows, cols);
    check(what, x, dev, cols, 1, rows, cols, rows + 3, cols + 5, 0);
    /* Columns as lines (op(B) = N's columns: K along the rows). */
    fill(x, rows, cols, 0);
    PGT_CUDA(cudaMemcpy(dev, x, (size_t)rows * cols * sizeof(float), cudaMemcpyHostToDevice));
    snprintf(what, sizeof what, "%dx%d columns", rows, cols);
    check(what, x, dev, 1, cols, cols, rows, (cols + 127) / 128 * 128, (rows + 63) / 64 * 64, 1);
    /* Paddings that end inside a block's 16 lines and a tile's 64 elements. */
    snprintf(what, sizeof what, "%dx%d columns, odd padding", rows, cols);
    check(what, x, dev, 1, cols, cols, rows, cols + 3, rows + 5, 0);
    free(x);
    PGT_CUDA(cudaFree(dev));
  }
  /* The GEMM on both sides of the rule: partial tiles, K past a stage;
   * then with the tensor cores summing 3 stages at a time (16 stages of K:
   * five periods and one of a stage), as PIPEGEMM_FP16X3_SUM_STAGES asks,
   * with wide lines and without (every tile in a pair of a cluster), at 2
   * and 3 stages. */
  if (gemm_with_wide_lines(300, 257, 200, 1, 0) && gemm_with_wide_lines(256, 384, 1000, 1, 0)) {
    batch_with_a_wide_row(256, 256, 200, 3);
    setenv("PIPEGEMM_FP16X3_SUM_STAGES", "3", 1);
    pg_tuning_reread_environment(); /* the library reads it once */
    printf("PIPEGEMM_FP16X3_SUM_STAGES=3:\n");
    for (int stages = 2; stages <= 3; ++stages) {
      (void)gemm_with_wide_lines(256, 384, 1000, 1, stages);
      (void)gemm_with_wide_lines(256, 256, 1000, 0, stages);
    }
    unsetenv("PIPEGEMM_FP16X3_SUM_STAGES");
    /* The split walked by one block an SM (more units of lines than SMs
     * at op(A) = N: 1500 rows of A are 188 units, a batch of 3 x 700 rows
     * 264; 2304 columns of B are 144 units of 16, so that blocks take two
     * column units one after the other, and at op(A) = T A's 256 columns
     * 16 more). */
    setenv("PIPEGEMM_FP16X3_SPLIT_BLOCKS_PER_SM", "1", 1);
    pg_tuning_reread_environment();
    printf("PIPEGEMM_FP16X3_SPLIT_BLOCKS_PER_SM=1:\n");
    (void)gemm_with_wide_lines(1500, 257, 200, 1, 0);
    (void)gemm_with_wide_lines(256, 2304, 200, 1, 0);
    batch_with_a_wide_row(700, 256, 200, 3);
    unsetenv("PIPEGEMM_FP16X3_SPLIT_BLOCKS_PER_SM");
    pg_tuning_reread_environment();
  }
  /* Bad arguments: refused, nothing launched. */
  if (pg_fp16x3_split_lines(NULL, 1, 1, 4, 4, 4, 4, NULL, NULL, NULL, 4, 0) != PG_ERR_INVALID_ARG ||
      pg_fp16x3_split_lines(NULL, 1, 1, 4, 4, 3, 4, NULL, NULL, NULL, 4, 0) != PG_ERR_INVALID_ARG) {
    printf("FAIL: bad arguments not refused\n");
    ++failures;
  }
  PGT_PG(pg_fp16x3_split_lines(NULL, 1, 1, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0)); /* nothing to do */
  printf("test_gpu_fp16x3: %s\n", failures ? "FAIL" : "ok");
  return failures ? 1 : 0;
}
