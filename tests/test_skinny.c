/* skinny_ffma's selector among its forms, without a GPU: on a model H200
 * (and a model A100 and sm_86 where shared memory decides), which form a
 * shape takes, its grid, its split of K and its copies of B: the RING form
 * (17_skinny_ring.cu), the BAND form (17), the RING ROWS form
 * (18_skinny_ring_rows.cu), the realigned GEMV (19_skinny_gemv.cu), and the
 * split forms (16_skinny_split.cu) where none of them fits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "tuning.h"
#include "model_args.h"
#include "kernels/skinny.h"


/* skinny_ffma's configure on an H200's facts: M x N x K, C dense and 16-byte
 * aligned, B b_offset floats past a 16-byte boundary, A's rows lda floats
 * apart, B's ldb (0: N, dense). */
/* skinny_ffma's own settings, as its configure left them. */
static sk_band_own band_own(const pg_layout_args *g) {
  sk_band_own own;
  memcpy(&own, g->own, sizeof own);
  return own;
}

static void configure_skinny_at(int m, int n, int k, int lda, int ldb, int b_offset,
                                pg_layout_args *g, pg_kernel_launch *launch) {
  const pg_device h200 = pg_device_model(90, 132, 227 * 1024);
  const pg_variant_entry *e = pg_entry_find("skinny_ffma");
  assert_non_null(e);
  *g = aligned_args();
  g->b = pgt_storage + b_offset;
  g->m = m;
  g->n = g->ldc = n;
  g->ldb = ldb > 0 ? ldb : n;
  g->k = k;
  g->lda = lda;
  g->c = pgt_storage;
  g->vec_a = g->lda % 4 == 0;
  g->vec_b = g->ldb % 4 == 0 && b_offset % 4 == 0;
  memset(launch, 0, sizeof *launch);
  e->configure(g, &h200, &h200.tuning, launch);
}

/* The same with B 16-byte aligned. */
static void configure_skinny(int m, int n, int k, int lda, int ldb, pg_layout_args *g,
                             pg_kernel_launch *launch) {
  configure_skinny_at(m, n, k, lda, ldb, 0, g, launch);
}

/* skinny_ffma's RING form (src/kernels/17_skinny_ring.cu) on an H200's
 * facts: N of 1 to 3 against rows of A in 16-byte copies, K whole vectors
 * and B dense take it wherever its blocks (4 rows of A for 1 column, 2 for
 * 2 and 3) are at least the SMs: one kernel over all of K, no split and no
 * second kernel; too few blocks or A's rows off 16 bytes take a split
 * form. */
static void test_skinny_ring_form(void **state) {
  (void)state;
  struct {
    int m, n, k, lda, blocks; /* blocks: the RING form's grid, 0: a split form */
  } cases[] = {
      {4096, 1, 4096, 4096, 1024}, {4096, 2, 4096, 4096, 2048}, {4096, 3, 4096, 4096, 2048},
      {263, 3, 1000, 1000, 132},   {528, 1, 1000, 1000, 132},   {400, 1, 3000, 3000, 0},
      {262, 3, 1000, 1000, 0},     {4096, 2, 4096, 4097, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    pg_layout_args g;
    pg_kernel_launch launch;
    configure_skinny(cases[i].m, cases[i].n, cases[i].k, cases[i].lda, 0, &g, &launch);
    if (cases[i].blocks > 0) {
      assert_int_equal(launch.grid_x, cases[i].blocks);
      assert_int_equal(launch.dynamic_smem, 0);
      assert_int_equal(g.splits, 1);
      assert_null(launch.last.kernel);
      assert_int_equal(launch.workspace.bytes, 0);
    } else {
      assert_true(g.splits > 1);
    }
  }
}

/* skinny_ffma's BAND form on an H200's facts: N of 4 to 8 against rows of
 * A in 16-byte copies and K whole vectors take it, whatever B's layout: a
 * block of 16 rows over all of K, K split into ranges only where the
 * blocks are at most half the SMs (planes here: a model has no clusters),
 * its rings dynamic shared memory (more than 48 KiB), its blocks counted
 * full by auto's model where they are at least the SMs; 9 columns, K off
 * whole vectors or A's rows off 16 bytes take another form, none of which
 * asks for dynamic shared memory. B's step goes in vectors of 4 floats
 * (2 at 6 columns, or B 8-byte aligned alone) where B is dense and aligned
 * to them and the blocks fit one wave (264 here), and 4 past it where K
 * is at least 4096; else a float at a time. */
static void test_skinny_band_form(void **state) {
  (void)state;
  struct {
    int m, n, k, lda, ldb, b_offset, grid, splits, vector; /* grid 0: another form */
  } cases[] = {
      {4096, 4, 4096, 4096, 4, 0, 256, 1, 4},    {4096, 8, 4096, 4096, 8, 0, 256, 1, 4},
      {3000, 8, 12288, 12288, 8, 0, 188, 1, 4},  {2112, 5, 1000, 1000, 5, 0, 132, 1, 1},
      {2096, 5, 1000, 1000, 5, 0, 131, 1, 1},    {1000, 7, 3000, 3000, 7, 0, 126, 2, 1},
      {530, 8, 3000, 3000, 8, 0, 102, 3, 4},     {900, 6, 4100, 4100, 13, 0, 114, 2, 1},
      {4096, 6, 4096, 4096, 7, 0, 256, 1, 1},    {100, 8, 500, 500, 8, 0, 7, 1, 4},
      {4096, 6, 4096, 4096, 6, 0, 256, 1, 2},    {2500, 6, 6000, 6000, 6, 0, 157, 1, 2},
      {9000, 6, 3000, 3000, 6, 0, 563, 1, 1},    {6000, 8, 2000, 2000, 8, 0, 375, 1, 1},
      {16384, 8, 4096, 4096, 8, 0, 1024, 1, 4},  {4224, 4, 2000, 2000, 4, 0, 264, 1, 4},
      {4240, 4, 2000, 2000, 4, 0, 265, 1, 1},    {4096, 8, 4096, 4096, 8, 2, 256, 1, 2},
      {4096, 8, 4096, 4096, 8, 1, 256, 1, 1},    {4096, 4, 4096, 4096, 8, 0, 256, 1, 1},
      {16384, 6, 4096, 4096, 6, 0, 1024, 1, 1},  {16384, 8, 4092, 4092, 8, 0, 1024, 1, 1},
      {4096, 9, 4096, 4096, 9, 0, 0, 0, 0},      {4096, 8, 4098, 4098, 8, 0, 0, 0, 0},
      {4096, 8, 4096, 4097, 8, 0, 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    pg_layout_args g;
    pg_kernel_launch launch;
    configure_skinny_at(cases[i].m, cases[i].n, cases[i].k, cases[i].lda, cases[i].ldb,
                        cases[i].b_offset, &g, &launch);
    if (cases[i].grid > 0) {
      assert_int_equal(band_own(&g).b_vector, cases[i].vector);
      assert_int_equal(launch.grid_x, cases[i].grid);
      assert_true(launch.dynamic_smem > 48 * 1024);
      assert_int_equal(g.splits, cases[i].splits);
      assert_true(cases[i].splits > 1 ? launch.last.kernel != NULL : launch.last.kernel == NULL);
      /* Bound by memory: counted full by auto's model where its blocks
       * are at least the SMs, else by their share of one wave. */
      assert_true(launch.grid_x >= 132 ? launch.model.fill == 1.0 : launch.model.fill == 0.0);
    } else {
      assert_int_equal(launch.dynamic_smem, 0);
    }
  }
}

/* skinny_ffma's RING ROWS form on an H200's facts: M of 1 to 8 against
 * B's and A's rows in 16-byte copies and K whole vectors take it where M
 * is more than 4 or its blocks of 32 columns are no more than the SMs (else
 * the GEMV): a block of 32 columns over all of K, K split into ranges only
 * where the blocks are fewer than the SMs (planes here: a model has no
 * clusters), its rings dynamic shared memory (more than 48 KiB); 9 rows, N
 * or K off whole vectors, or A's rows off 16 bytes take another form,
 * none of which asks for dynamic shared memory. Its chunks: 5 and 6 rows
 * take the form of 6, 7 and 8 that of 8. */
static void test_skinny_ring_rows_form(void **state) {
  (void)state;
  struct {
    int m, n, k, lda, grid, splits; /* grid 0: another form */
  } cases[] = {
      {8, 4096, 4096, 4096, 128, 1}, {1, 4096, 4096, 4096, 128, 1}, {4, 2048, 8192, 8192, 128, 2},
      {1, 1000, 8192, 8192, 128, 4}, {8, 12288, 3000, 3000, 384, 1}, {6, 4224, 100, 100, 132, 1},
      {3, 4224, 4096, 4096, 132, 1}, {2, 4228, 1000, 1000, 0, 1},   {1, 6144, 5000, 5000, 0, 1},
      {8, 4096, 4098, 4098, 0, 0},   {8, 4098, 4096, 4096, 0, 0},   {9, 4096, 4096, 4096, 0, 0},
      {8, 4096, 4096, 4097, 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    pg_layout_args g;
    pg_kernel_launch launch;
    configure_skinny(cases[i].m, cases[i].n, cases[i].k, cases[i].lda, 0, &g, &launch);
    if (cases[i].grid > 0) {
      assert_int_equal(launch.grid_x, cases[i].grid);
      assert_true(launch.dynamic_smem > 48 * 1024);
      assert_int_equal(g.splits, cases[i].splits);
      assert_true(cases[i].splits > 1 ? launch.last.kernel != NULL : launch.last.kernel == NULL);
    } else {
      assert_int_equal(launch.dynamic_smem, 0);
      if (cases[i].splits == 1) assert_int_equal(g.splits, 1); /* the GEMV: one kernel */
    }
  }
  /* A kernel for each chunk, less shared memory at 6 rows than at 8. */
  const void *kernel[9];
  size_t smem[9];
  for (int m = 5; m <= 8; ++m) {
    pg_layout_args g;
    pg_kernel_launch launch;
    configure_skinny(m, 4096, 4096, 4096, 0, &g, &launch);
    kernel[m] = launch.kernel;
    smem[m] = launch.dynamic_smem;
  }
  assert_ptr_equal(kernel[5], kernel[6]);
  assert_ptr_equal(kernel[7], kernel[8]);
  assert_ptr_not_equal(kernel[6], kernel[8]);
  assert_true(smem[6] < smem[8]);
}

/* skinny_ffma's GEMV of one row where B is dense but its rows are not
 * 16-byte aligned (N no multiple of 4, or B a float past a boundary), on
 * an H200's facts: the realigned GEMV, blocks of 4 (L - 1) columns (L = 8:
 * 28, 16: 60, 32: 124), one kernel, where 8 lanes leave no more blocks than
 * the SMs (1x3696: 132) or 16 and 32 lanes are needed; past the SMs at 8
 * lanes (1x3697: 133, 1x4095: 147), B padded, two rows, or too few blocks
 * (1x2001x700: 72 of 28 columns) the GEMV of 4-byte loads (blocks of 4L
 * columns); B aligned the RING ROWS form. */
static void test_skinny_gemv_realigned(void **state) {
  (void)state;
  struct {
    int m, n, k, ldb, b_offset, grid, realigned;
  } cases[] = {
      {1, 3001, 8192, 0, 0, 108, 1},    {1, 3696, 1000, 0, 1, 132, 1},
      {1, 17003, 100, 0, 0, 138, 1},    {1, 9000, 300, 0, 3, 150, 1},
      {1, 3697, 1000, 0, 0, 116, 0},    {1, 4095, 4097, 0, 0, 128, 0},
      {1, 4100, 4100, 0, 1, 129, 0},    {1, 3001, 8192, 3003, 0, 94, 0},
      {1, 2001, 700, 0, 0, 126, 0},     {2, 3001, 8192, 0, 0, 94, 0},
      {1, 4096, 4096, 0, 0, 128, 0},
  };
  const void *realigned8 = NULL, *scalar8 = NULL;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    pg_layout_args g;
    pg_kernel_launch launch;
    configure_skinny_at(cases[i].m, cases[i].n, cases[i].k, cases[i].k, cases[i].ldb,
                        cases[i].b_offset, &g, &launch);
    assert_int_equal(launch.grid_x, cases[i].grid);
    assert_int_equal(g.splits, 1);
    assert_null(launch.last.kernel);
    /* 8 lanes: the realigned instance, or the one of 4-byte loads. */
    if (i <= 1) {
      if (realigned8 == NULL) realigned8 = launch.kernel;
      assert_ptr_equal(launch.kernel, realigned8);
    }
    if (i >= 4 && i <= 7) {
      if (scalar8 == NULL) scalar8 = launch.kernel;
      assert_ptr_equal(launch.kernel, scalar8);
    }
    if (!cases[i].realigned) assert_ptr_not_equal(launch.kernel, realigned8);
    /* RING ROWS (dynamic shared memory) only where B is aligned. */
    assert_true(i == 10 ? launch.dynamic_smem > 0 : launch.dynamic_smem == 0);
  }
  assert_ptr_not_equal(realigned8, scalar8);
}

/* skinny_ffma on a GPU that allows a block 99 KiB of shared memory
 * (sm_86, sm_89): the entry asks for no more than that, and its RING ROWS
 * and BAND forms run only where their rings fit (8 rows in 80 KiB and 4
 * columns in 84 do, 2 and 4 rows in 102 and 108 and 8 columns in 100 do
 * not: the GEMV and the split COLS form take those, no dynamic shared
 * memory). */
static void test_skinny_small_smem(void **state) {
  (void)state;
  const pg_device sm86 = pg_device_model(86, 84, 99 * 1024);
  const pg_variant_entry *e = pg_entry_find("skinny_ffma");
  assert_non_null(e);
  size_t bytes = 0;
  assert_int_equal(pg_variant_smem_bytes(&e->info, 0, &bytes), PG_OK);
  assert_true(bytes <= sm86.smem_optin);
  struct {
    int m, n, k;
    int dynamic; /* 1: a form with dynamic shared memory (RING ROWS, BAND) */
  } cases[] = {{8, 4096, 4096, 1}, {4096, 4, 4096, 1}, {2, 4096, 4096, 0},
               {4, 2048, 8192, 0}, {4096, 8, 4096, 0}, {4096, 5, 4096, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    pg_layout_args g = aligned_args();
    g.m = cases[i].m;
    g.n = g.ldb = g.ldc = cases[i].n;
    g.k = g.lda = cases[i].k;
    g.c = pgt_storage;
    g.vec_a = g.vec_b = 1;
    pg_kernel_launch launch;
    memset(&launch, 0, sizeof launch);
    e->configure(&g, &sm86, &sm86.tuning, &launch);
    assert_non_null(launch.kernel);
    assert_true(launch.dynamic_smem <= sm86.smem_optin);
    assert_true(cases[i].dynamic ? launch.dynamic_smem > 48 * 1024 : launch.dynamic_smem == 0);
  }
}

/* The BAND form's wave where an SM's shared memory is known: 188 blocks of
 * 8 columns (102 KiB of rings each) fit one wave two an SM on 132 SMs of
 * 228 KiB (16-byte copies of B at K = 2000), not one an SM on 108 SMs of
 * 164 KiB, where two would have fit them (4-byte copies). */
static void test_skinny_band_wave(void **state) {
  (void)state;
  pg_device h200 = pg_device_model(90, 132, 227 * 1024);
  h200.smem_per_sm = 228 * 1024;
  h200.smem_reserved = 1024;
  pg_device a100 = pg_device_model(80, 108, 163 * 1024);
  a100.smem_per_sm = 164 * 1024;
  a100.smem_reserved = 1024;
  const pg_device *devices[] = {&h200, &a100};
  const int vectors[] = {4, 1};
  const pg_variant_entry *e = pg_entry_find("skinny_ffma");
  assert_non_null(e);
  for (int d = 0; d < 2; ++d) {
    pg_layout_args g = aligned_args();
    g.m = 3000;
    g.n = g.ldb = g.ldc = 8;
    g.k = g.lda = 2000;
    g.c = pgt_storage;
    g.vec_a = g.vec_b = 1;
    pg_kernel_launch launch;
    memset(&launch, 0, sizeof launch);
    e->configure(&g, devices[d], &devices[d]->tuning, &launch);
    assert_int_equal(launch.grid_x, 188);
    assert_true(launch.dynamic_smem > 48 * 1024);
    assert_int_equal(band_own(&g).b_vector, vectors[d]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_skinny_ring_form),
      cmocka_unit_test(test_skinny_band_form),
      cmocka_unit_test(test_skinny_gemv_realigned),
      cmocka_unit_test(test_skinny_small_smem),
      cmocka_unit_test(test_skinny_band_wave),
      cmocka_unit_test(test_skinny_ring_rows_form),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
