/* The host half of the TMA variants, without a GPU: the layout rules that
 * decide PG_ERR_UNSUPPORTED and their reasons, split K's rule
 * (pg_configure_split_k) and its planners, auto's model, and the registry
 * facts of tma, tma_ws and auto. (The tuning table: test_tuning.c; where
 * skinny_ffma takes each of its forms: test_skinny.c.) */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/tma_ws.h" /* TWS_FORMS */
#include "tma.h"
#include "tuning.h"
#include "model_args.h"

/* A tile form's name, from its line of TWS_FORMS. */
#define FORM_NAME(form, ...) #form,


/* The rows and row width of the workspace region a view reads (0 for the
 * caller's operand). */
static long long view_rows(const pg_kernel_launch *launch, int view) {
  return view == PG_CALLER ? 0 : launch->workspace.region[view - 1].rows;
}

static long long view_ld(const pg_kernel_launch *launch, int view) {
  return view == PG_CALLER ? 0 : launch->workspace.region[view - 1].ld;
}


static void test_aligned_layout_passes(void **state) {
  (void)state;
  pg_layout_args g = aligned_args();
  char why[200] = "untouched";
  assert_int_equal(pg_tma_check(&g, why, sizeof why), PG_OK);
  g.lda = 40; /* padded rows, still 16-byte multiples */
  g.ldb = 64;
  assert_int_equal(pg_tma_check(&g, why, sizeof why), PG_OK);
  /* a batch: each operand's stride between its matrices too, unless 0 */
  g.batch = 3;
  g.stride_a = 0;
  g.stride_b = 64 * 64 + 2;
  why[0] = '\0';
  assert_int_equal(pg_tma_check(&g, why, sizeof why), PG_ERR_UNSUPPORTED);
  assert_non_null(strstr(why, "B's batch stride"));
  g.stride_b = 64 * 64 + 4;
  assert_int_equal(pg_tma_check(&g, why, sizeof why), PG_OK);
}

static void test_odd_stride_rejected_with_reason(void **state) {
  (void)state;
  char why[200] = "";
  pg_layout_args g = aligned_args();
  g.lda = 37;
  assert_int_equal(pg_tma_check(&g, why, sizeof why), PG_ERR_UNSUPPORTED);
  assert_non_null(strstr(why, "A's row stride"));
  assert_non_null(strstr(why, "lda = 37"));
  assert_non_null(strstr(why, "148 bytes"));

  g = aligned_args();
  g.ldb = 62;
  why[0] = '\0';
  assert_int_equal(pg_tma_check(&g, why, sizeof why), PG_ERR_UNSUPPORTED);
  assert_non_null(strstr(why, "B's row stride"));
  assert_non_null(strstr(why, "ldb = 62"));
}

static void test_misaligned_base_rejected_with_reason(void **state) {
  (void)state;
  char why[200] = "";
  pg_layout_args g = aligned_args();
  g.a = pgt_storage + 1;
  assert_int_equal(pg_tma_check(&g, why, sizeof why), PG_ERR_UNSUPPORTED);
  assert_non_null(strstr(why, "A's base address"));

  g = aligned_args();
  g.b = pgt_storage + 2; /* 8-byte aligned is not enough */
  why[0] = '\0';
  assert_int_equal(pg_tma_check(&g, why, sizeof why), PG_ERR_UNSUPPORTED);
  assert_non_null(strstr(why, "B's base address"));
}

/* The wgmma members read B^T from their own workspace: only A's layout is
 * TMA's business there. */
static void test_a_only_check_ignores_b(void **state) {
  (void)state;
  char why[200] = "";
  pg_layout_args g = aligned_args();
  g.b = pgt_storage + 1;
  g.ldb = 61;
  assert_int_equal(pg_tma_check(&g, why, sizeof why), PG_ERR_UNSUPPORTED);
  assert_int_equal(pg_tma_check_a(&g, why, sizeof why), PG_OK);
  g.lda = 37;
  why[0] = '\0';
  assert_int_equal(pg_tma_check_a(&g, why, sizeof why), PG_ERR_UNSUPPORTED);
  assert_non_null(strstr(why, "lda = 37"));
  /* Both: B's reasons name B. */
  g.lda = 64;
  why[0] = '\0';
  assert_int_equal(pg_tma_check(&g, why, sizeof why), PG_ERR_UNSUPPORTED);
  assert_non_null(strstr(why, "B's base address"));
  g.b = pgt_storage;
  why[0] = '\0';
  assert_int_equal(pg_tma_check(&g, why, sizeof why), PG_ERR_UNSUPPORTED);
  assert_non_null(strstr(why, "ldb = 61"));
  g.ldb = 64;
  assert_int_equal(pg_tma_check(&g, why, sizeof why), PG_OK);
}

/* The any-layout wgmma entries that read A^T from their workspace: only
 * B's layout (and its batch stride) is TMA's business there. */
static void test_b_only_check_ignores_a(void **state) {
  (void)state;
  char why[200] = "";
  pg_layout_args g = aligned_args();
  g.a = pgt_storage + 1;
  g.lda = 37;
  assert_int_equal(pg_tma_check(&g, why, sizeof why), PG_ERR_UNSUPPORTED);
  assert_int_equal(pg_tma_check_b(&g, why, sizeof why), PG_OK);
  g.ldb = 61;
  why[0] = '\0';
  assert_int_equal(pg_tma_check_b(&g, why, sizeof why), PG_ERR_UNSUPPORTED);
  assert_non_null(strstr(why, "ldb = 61"));
  g.ldb = 64;
  g.batch = 2;
  g.stride_b = 64 * 64 + 2;
  why[0] = '\0';
  assert_int_equal(pg_tma_check_b(&g, why, sizeof why), PG_ERR_UNSUPPORTED);
  assert_non_null(strstr(why, "B's batch stride"));
  g.stride_b = 0; /* one B for the batch */
  assert_int_equal(pg_tma_check_b(&g, why, sizeof why), PG_OK);
}

static void test_k_zero_needs_no_maps(void **state) {
  (void)state;
  char why[200] = "";
  pg_layout_args g = aligned_args();
  g.k = 0;
  g.a = pgt_storage + 1; /* nothing is copied, so nothing can be misaligned */
  g.lda = 1;
  assert_int_equal(pg_tma_check(&g, why, sizeof why), PG_OK);
  pg_tma_maps maps;
  memset(&maps, 0xff, sizeof maps);
  const pg_tma_boxes boxes = {.a_box_k = 8, .a_box_m = 128, .b_box_n = 128, .b_box_k = 8};
  assert_int_equal(pg_tma_encode(&g, &boxes, 1, 1, &maps), cudaSuccess);
  const unsigned char *bytes = (const unsigned char *)&maps;
  for (size_t i = 0; i < sizeof maps; ++i) assert_int_equal(bytes[i], 0);
}

static void test_registry_facts(void **state) {
  (void)state;
  const char *hopper[] = {"tma", "tma_ws"};
  for (int i = 0; i < 2; ++i) {
    const pg_variant_info *v = pg_variant_find(hopper[i]);
    assert_non_null(v);
    assert_int_equal(v->min_cc, 90);
    assert_int_equal(v->min_stages, 2);
    assert_int_equal(v->max_stages, 8);
    const pg_variant_entry *e = pg_entry_of(v);
    assert_non_null(e->check); /* the TMA layout rules are enforced */
    size_t two = 0, three = 0;
    assert_int_equal(pg_variant_smem_bytes(v, 2, &two), PG_OK);
    assert_int_equal(pg_variant_smem_bytes(v, 3, &three), PG_OK);
    assert_true(three > two);
  }
  /* tma is the 128x128 tile of cp_async, so that it compares with cp_async. */
  const pg_variant_info *tma = pg_variant_find("tma"), *cp = pg_variant_find("cp_async");
  assert_int_equal(tma->tile_m, cp->tile_m);
  assert_int_equal(tma->tile_n, cp->tile_n);
  assert_int_equal(tma->tile_k, cp->tile_k);
  assert_int_equal(tma->threads, cp->threads);
  /* tma_ws's default fits two blocks per SM in an H200's 227 KiB. */
  const pg_variant_info *ws = pg_variant_find("tma_ws");
  size_t bytes = 0;
  assert_int_equal(pg_variant_smem_bytes(ws, 0, &bytes), PG_OK);
  assert_true(2 * (bytes + 1024) <= 228 * 1024);
  assert_int_equal(ws->tile_k, TWS_TILE_K);
}

static void test_auto_without_gpu(void **state) {
  (void)state;
  const pg_variant_info *v = NULL;
  int stages = -1;
  assert_int_equal(pg_auto_select(8, 8, 8, pgt_storage, 8, pgt_storage, 8, NULL, &stages),
                   PG_ERR_INVALID_ARG);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    assert_int_equal(pg_auto_select(8, 8, 8, pgt_storage, 8, pgt_storage, 8, &v, &stages),
                     PG_ERR_NO_DEVICE);
  } else { /* a GPU: auto always names a variant that runs */
    assert_int_equal(pg_auto_select(8, 8, 8, pgt_storage, 8, pgt_storage, 8, &v, &stages), PG_OK);
    assert_non_null(v);
    assert_int_equal(pg_variant_supported(v, stages), PG_OK);
  }
}

/* Split-K's rule (pg_configure_split_k): K split where the tiles leave
 * slots idle, ranges of equal length of at least the fewest steps, the last
 * shorter, the planes' bytes added to what the launch had. */
static void test_split_k_rule(void **state) {
  (void)state;
  pg_layout_args g = aligned_args();
  g.m = 130;
  g.n = 201; /* planes of 204 floats a row */
  pg_kernel_launch launch;
  memset(&launch, 0, sizeof launch);
  launch.grid_x = 4;
  (void)pg_workspace_add(&launch.workspace, 250, 1); /* 1000 bytes before the planes */
  /* 132 slots over 4 tiles: 33 splits, at most 129 / 8 = 16; 16 ranges of
   * 9 steps would leave the last empty, so 15 (the last of 3 steps). */
  assert_int_equal(pg_configure_split_k(&g, &launch, 132, 129, 8), 15);
  assert_int_equal(g.splits, 15);
  assert_int_equal(g.k_tiles_per_split, 9);
  assert_int_equal(g.ldp, 204); /* no first kernel: the planes' */
  assert_int_equal(launch.grid_x, 60);
  assert_int_equal(launch.workspace.bytes, 1000 + (size_t)15 * 130 * 204 * sizeof(float));
  /* Up to 16 ranges the reduction takes 4 columns a thread: 130 rows of 51
   * pieces, 6630 threads, 26 blocks of 256. */
  assert_non_null(launch.last.kernel);
  assert_int_equal(launch.last.grid_x, 26);
  assert_int_equal(launch.last.grid_y, 1);
  assert_int_equal(launch.last.programmatic, 1); /* it waits for the planes itself */
  /* Past 16 (a fewest of 4 steps: 32 splits, 26 ranges of 5 steps) another
   * kernel, its rows on y. */
  const void *const vec4 = launch.last.kernel;
  pg_layout_args many = aligned_args();
  many.m = 130;
  many.n = 201;
  memset(&launch, 0, sizeof launch);
  launch.grid_x = 4;
  assert_int_equal(pg_configure_split_k(&many, &launch, 132, 129, 4), 26);
  assert_non_null(launch.last.kernel);
  assert_ptr_not_equal(launch.last.kernel, vec4);
  assert_int_equal(launch.last.grid_y, 130);
  /* Tiles that fill the slots, or a K too short for two ranges: no split,
   * nothing changed. */
  pg_layout_args h = aligned_args();
  memset(&launch, 0, sizeof launch);
  launch.grid_x = 132;
  assert_int_equal(pg_configure_split_k(&h, &launch, 132, 4096, 8), 1);
  launch.grid_x = 4;
  assert_int_equal(pg_configure_split_k(&h, &launch, 132, 15, 8), 1);
  assert_int_equal(h.splits, 0);
  assert_int_equal(launch.grid_x, 4);
  assert_int_equal(launch.workspace.bytes, 0);
  assert_null(launch.last.kernel);
  /* A fewest of 0 counts as 1. */
  assert_int_equal(pg_configure_split_k(&h, &launch, 132, 2, 0), 2);
  /* After a first kernel, ldp stays its own (the plan points the kernel at
   * the planes at launch). */
  pg_layout_args p = aligned_args();
  p.ldp = 40;
  memset(&launch, 0, sizeof launch);
  launch.grid_x = 4;
  launch.first.kernel = &p;
  assert_int_equal(pg_configure_split_k(&p, &launch, 132, 129, 8), 15);
  assert_int_equal(p.ldp, 40);
}

/* Split K in the partial last wave (pg_configure_split_tail), checked
 * against the model worked by hand (its header's words): */
static void test_split_tail_rule(void **state) {
  (void)state;
  pg_kernel_launch launch;
  /* 2560^3 on 128x128 tiles and 264 slots: 400 tiles of 80 steps, whole
   * they take two waves (162 steps with a block's cost of 1). The top 13
   * tile rows whole (260 tiles, 4 slots left), the 7 below in 5 ranges of
   * 16 steps: 700 blocks, 16 of them beside the whole tiles, the other 684
   * in three rounds of 17 after them, and the reduction's 7 planes of 896
   * rows (7 x 896 x 2560 x 4 bytes x 16 FLOPs a byte over a wave's step,
   * 264 x 128 x 128 x 64 FLOPs: 3.7, so 4): 81 + 51 + 4 = 136 steps. */
  pg_layout_args g = aligned_args();
  g.m = g.n = g.k = 2560;
  memset(&launch, 0, sizeof launch);
  launch.grid_x = 400;
  (void)pg_workspace_add(&launch.workspace, 25, 1); /* 100 bytes before the planes */
  assert_int_equal(pg_configure_split_tail(&g, &launch, 264, 128, 128, 80, 2, 1, 16), 5);
  assert_int_equal(g.splits, 5);
  assert_int_equal(g.k_tiles_per_split, 16);
  assert_int_equal(g.split_row0, 13 * 128);
  assert_int_equal(g.ldp, 2560);
  assert_int_equal(launch.grid_x, 260 + 140 * 5);
  assert_int_equal(launch.workspace.bytes, 100 + (size_t)5 * (2560 - 1664) * 2560 * sizeof(float));
  assert_non_null(launch.last.kernel); /* 896 rows of 640 pieces of 4 columns */
  assert_int_equal(launch.last.grid_x, (2560 - 1664) * 640 / 256);
  assert_int_equal(launch.last.grid_y, 1);
  assert_true(fabs(launch.model.fill - 400.0 * 80 / (264.0 * 136)) < 1e-12);
  /* 1536^3: 144 tiles of 48 steps for 264 slots, none whole: 3 ranges of
   * 16 (432 blocks, two rounds of 17, a reduction of 5 planes' worth, 3:
   * 37 steps) beat 2 ranges (two rounds of 25: 53) and tie 5 (three of 11
   * and 4: 37), where the fewer ranges win. */
  pg_layout_args h = aligned_args();
  h.m = h.n = h.k = 1536;
  memset(&launch, 0, sizeof launch);
  launch.grid_x = 144;
  assert_int_equal(pg_configure_split_tail(&h, &launch, 264, 128, 128, 48, 2, 1, 16), 3);
  assert_int_equal(h.split_row0, 0);
  assert_int_equal(h.k_tiles_per_split, 16);
  assert_int_equal(launch.grid_x, 432);
  /* 4096^3: 1024 tiles, 3.9 waves: no plan gains 5 %; nothing changed. A
   * K of fewer than two ranges of the fewest steps: none either. */
  pg_layout_args q = aligned_args();
  q.m = q.n = q.k = 4096;
  memset(&launch, 0, sizeof launch);
  launch.grid_x = 1024;
  assert_int_equal(pg_configure_split_tail(&q, &launch, 264, 128, 128, 128, 2, 1, 16), 1);
  assert_int_equal(q.splits, 0);
  assert_int_equal(q.split_row0, 0);
  assert_int_equal(launch.grid_x, 1024);
  assert_int_equal(launch.workspace.bytes, 0);
  assert_null(launch.last.kernel);
  assert_true(launch.model.fill == 0.0);
  launch.grid_x = 4;
  assert_int_equal(pg_configure_split_tail(&q, &launch, 264, 128, 128, 3, 2, 1, 16), 1);
  /* Few tiles, free blocks: as many ranges as fill the slots once, as
   * pg_configure_split_k takes (132 slots, 4 tiles of 129 steps, at least
   * 8 a range: 15 ranges of 9). */
  pg_layout_args f = aligned_args();
  f.m = 130;
  f.n = 201;
  memset(&launch, 0, sizeof launch);
  launch.grid_x = 4;
  assert_int_equal(pg_configure_split_tail(&f, &launch, 132, 128, 128, 129, 8, 0, 0), 15);
  assert_int_equal(f.k_tiles_per_split, 9);
  assert_int_equal(f.split_row0, 0);
  assert_int_equal(f.ldp, 204);
}

/* The split forms' first kernel (pg_configure_operand_copies): none where
 * TMA reads both; else, where A's layout asks, A's copy (M rows of K
 * rounded up to 4) and, where B's layout asks, B's after it (K rows of N
 * rounded up to 4), on a grid of a block for each 1024 floats of the
 * copies, at most one wave of 4 blocks an SM. */
static void test_operand_copies(void **state) {
  (void)state;
  pg_layout_args g = aligned_args(); /* 100 x 60 x 36 */
  pg_kernel_launch launch;
  memset(&launch, 0, sizeof launch);
  pg_device device;
  memset(&device, 0, sizeof device);
  device.sm_count = 132;
  g.vec_a = g.vec_b = 1;
  assert_int_equal(pg_configure_operand_copies(&g, &device, &launch), 0);
  assert_null(launch.first.kernel);
  assert_int_equal(launch.workspace.bytes, 0);
  g.k = 35;
  g.n = 61;
  g.vec_a = g.vec_b = 0;
  assert_int_equal(pg_configure_operand_copies(&g, &device, &launch), 1);
  assert_non_null(launch.first.kernel);
  assert_int_equal(g.ldp, 36);
  assert_int_equal(view_rows(&launch, launch.views.a), 100);
  assert_int_equal(view_rows(&launch, launch.views.b), 35);
  assert_int_equal(view_ld(&launch, launch.views.b), 64);
  assert_int_equal(launch.workspace.bytes, (size_t)(100 * 36 + 35 * 64) * sizeof(float));
  assert_int_equal(launch.first.threads, PG_FIRST_THREADS);
  assert_int_equal(launch.first.grid_x, 6); /* 5840 floats, 1024 a block */
  assert_int_equal(launch.first.grid_y, 1);
  assert_true(launch.model.first_bytes == 8.0 * (100 * 36 + 35 * 64));
  assert_int_equal(launch.programmatic, 1); /* the kernel waits for the copies */
  /* A alone: no B rows. */
  pg_layout_args h = aligned_args();
  memset(&launch, 0, sizeof launch);
  h.vec_a = 0;
  h.vec_b = 1;
  assert_int_equal(pg_configure_operand_copies(&h, &device, &launch), 1);
  assert_int_equal(view_rows(&launch, launch.views.b), 0);
  assert_int_equal(h.ldp, 36);
  assert_int_equal(launch.first.grid_x, 4); /* 3600 floats */
  assert_true(launch.model.first_bytes == 8.0 * (100 * 36));
  assert_int_equal(launch.workspace.bytes, (size_t)100 * 36 * sizeof(float));
  /* Rows of 2052 (K = 2050): 205200 floats, 201 blocks; on a GPU of 2 SMs
   * one wave of 8. */
  pg_layout_args w = aligned_args();
  memset(&launch, 0, sizeof launch);
  w.k = 2050;
  w.lda = 2051;
  w.vec_a = 0;
  w.vec_b = 1;
  assert_int_equal(pg_configure_operand_copies(&w, &device, &launch), 1);
  assert_int_equal(w.ldp, 2052);
  assert_int_equal(launch.first.grid_x, 201);
  assert_true(launch.model.first_bytes == 8.0 * (100 * 2052));
  pg_layout_args w2 = w;
  w2.ldp = 0;
  device.sm_count = 2;
  memset(&launch, 0, sizeof launch);
  assert_int_equal(pg_configure_operand_copies(&w2, &device, &launch), 1);
  assert_int_equal(launch.first.grid_x, 8);
  device.sm_count = 132;
  /* B alone: A read where it is, B's copy at the workspace's start. */
  pg_layout_args b = aligned_args();
  memset(&launch, 0, sizeof launch);
  b.n = 61;
  b.vec_a = 1;
  b.vec_b = 0;
  assert_int_equal(pg_configure_operand_copies(&b, &device, &launch), 1);
  assert_int_equal(view_rows(&launch, launch.views.a), 0);
  assert_int_equal(view_rows(&launch, launch.views.b), 36);
  assert_int_equal(view_ld(&launch, launch.views.b), 64);
  assert_int_equal(launch.first.grid_x, 3); /* 2304 floats */
  assert_true(launch.model.first_bytes == 8.0 * (36 * 64));
  assert_int_equal(launch.workspace.bytes, (size_t)36 * 64 * sizeof(float));
}

/* Which entries take a layout TMA cannot read: the split forms (they copy
 * it first), not tma_ws, tma_ws_streamk or tma, which read A and B where
 * they are. */
static void test_split_forms_take_any_layout(void **state) {
  (void)state;
  pg_layout_args g = aligned_args();
  g.lda = 37; /* A's rows 148 bytes apart */
  g.b = pgt_storage + 1; /* B off 16 bytes */
  char why[200];
  const char *any[] = {TWS_FORMS(FORM_NAME) "tma_ws_any"}; /* every tile form (tma_ws.h) */
  for (size_t i = 0; i < sizeof any / sizeof any[0]; ++i) {
    const pg_variant_entry *e = pg_entry_find(any[i]);
    assert_non_null(e);
    assert_non_null(e->check);
    assert_int_equal(e->check(&g, why, sizeof why), PG_OK);
  }
  const char *in_place[] = {"tma_ws", "tma_ws_streamk", "tma"};
  for (size_t i = 0; i < sizeof in_place / sizeof in_place[0]; ++i) {
    const pg_variant_entry *e = pg_entry_find(in_place[i]);
    assert_non_null(e);
    why[0] = '\0';
    assert_int_equal(e->check(&g, why, sizeof why), PG_ERR_UNSUPPORTED);
    assert_non_null(strstr(why, "TMA needs"));
  }
}

/* Split K added up in clusters (13_tma_ws_splitk.cu): where every tile is
 * split, in at most PG_CLUSTER_MAX ranges, and the GPU keeps all the
 * clusters resident, a tile's ranges are one cluster and nothing else is
 * launched; the planes and their reduction otherwise, or where the tuning
 * (or the environment) says no. */
static pg_layout_args square_args(int size) {
  pg_layout_args g = aligned_args();
  g.m = g.n = g.k = size;
  g.lda = g.ldb = g.ldc = size;
  g.c = pgt_storage;
  g.alpha = 1.f;
  g.vec_a = g.vec_b = 1;
  g.stages = 3;
  return g;
}

static void test_split_in_clusters(void **state) {
  (void)state;
  pg_device h200 = pg_device_model(90, 132, 227 * 1024);
  for (int b = 1; b <= PG_CLUSTER_BLOCKS_PER_SM; ++b)
    for (int c = 2; c <= PG_CLUSTER_MAX; ++c) h200.cluster_blocks[b - 1][c] = b * 132;
  const pg_variant_entry *e = pg_entry_find("tma_ws_n32");
  assert_non_null(e);
  pg_layout_args g = square_args(512);
  pg_kernel_launch launch;
  memset(&launch, 0, sizeof launch);
  e->configure(&g, &h200, &h200.tuning, &launch);
  assert_true(g.splits > 1 && g.splits <= PG_CLUSTER_MAX);
  assert_int_equal(g.split_row0, 0);
  assert_int_equal(launch.cluster_x, g.splits);
  assert_int_equal(launch.grid_x, 4 * 16 * g.splits); /* 128 x 32 tiles, ranges together */
  assert_null(launch.last.kernel);
  assert_int_equal(launch.last.programmatic, 0);
  assert_int_equal(launch.workspace.bytes, 0);
  /* 256 blocks on 132 SMs: two an SM at most (the form fits three), so
   * that the hardware spreads the clusters evenly. */
  assert_int_equal(launch.max_blocks_per_sm, 2);
  const void *in_clusters = launch.kernel;
  const int splits = g.splits;
  const long long grid = launch.grid_x;
  /* The same split where the clusters would not all be resident, two
   * blocks an SM: planes. */
  h200.cluster_blocks[1][splits] = (int)grid - splits;
  g = square_args(512);
  memset(&launch, 0, sizeof launch);
  e->configure(&g, &h200, &h200.tuning, &launch);
  assert_int_equal(g.splits, splits);
  assert_int_equal(launch.cluster_x, 0);
  assert_true(launch.kernel != in_clusters);
  assert_non_null(launch.last.kernel);
  assert_int_equal(launch.workspace.bytes, (size_t)splits * 512 * 512 * sizeof(float));
  h200.cluster_blocks[1][splits] = (int)grid;
  /* Switched off in the tuning row, or by the environment. */
  pg_tuning off = h200.tuning;
  off.split_in_clusters = 0;
  g = square_args(512);
  memset(&launch, 0, sizeof launch);
  e->configure(&g, &h200, &off, &launch);
  assert_int_equal(launch.cluster_x, 0);
  assert_non_null(launch.last.kernel);
  assert_int_equal(setenv("PIPEGEMM_SPLIT_IN_CLUSTERS", "0", 1), 0);
  pg_tuning_reread_environment();
  g = square_args(512);
  memset(&launch, 0, sizeof launch);
  e->configure(&g, &h200, &h200.tuning, &launch);
  assert_int_equal(launch.cluster_x, 0);
  assert_non_null(launch.last.kernel);
  assert_int_equal(unsetenv("PIPEGEMM_SPLIT_IN_CLUSTERS"), 0);
  pg_tuning_reread_environment();
  /* B copied first (N = 510: rows of 510 floats): the workspace is the
   * copy's alone, the kernel behind it in clusters. */
  g = square_args(512);
  g.n = g.ldb = g.ldc = 510;
  g.vec_b = 0;
  memset(&launch, 0, sizeof launch);
  e->configure(&g, &h200, &h200.tuning, &launch);
  assert_int_equal(launch.cluster_x, g.splits);
  assert_null(launch.last.kernel);
  assert_non_null(launch.first.kernel);
  assert_int_equal(launch.workspace.bytes, (size_t)512 * 512 * sizeof(float));
  /* No cluster capacity known (a GPU before sm_90, or a model of one):
   * planes. */
  const pg_device bare = pg_device_model(90, 132, 227 * 1024);
  g = square_args(512);
  memset(&launch, 0, sizeof launch);
  e->configure(&g, &bare, &bare.tuning, &launch);
  assert_int_equal(launch.cluster_x, 0);
  assert_non_null(launch.last.kernel);
}

/* pg_split_in_clusters on its own: spread evenly (the FMA-bound tma_ws
 * forms) the blocks an SM are ceil(grid / SMs), padded to where that is
 * below the kernel's; otherwise (skinny_ffma, bound by memory) one where
 * the grid has no more blocks than SMs, else the kernel's own, or the most
 * the table knows, never padded; no clusters past the capacity or past
 * PG_CLUSTER_MAX ranges. */
static void test_split_in_clusters_rule(void **state) {
  (void)state;
  pg_device h200 = pg_device_model(90, 132, 227 * 1024);
  for (int b = 1; b <= PG_CLUSTER_BLOCKS_PER_SM; ++b)
    for (int c = 2; c <= PG_CLUSTER_MAX; ++c) h200.cluster_blocks[b - 1][c] = b * 120;
  /* Any addresses: never launched. */
  const void *kernel = (const void *)&h200, *reduce = (const void *)&h200.tuning;
  struct {
    long long grid, per_sm;
    int splits, spread, taken, max_blocks_per_sm;
  } cases[] = {
      {256, 4, 8, 1, 0, 0}, /* two an SM evenly: 256 > 240 resident */
      {256, 4, 8, 0, 1, 0}, /* at three an SM (the table's most): 360 */
      {200, 4, 8, 1, 1, 2}, /* two an SM, padded to two */
      {120, 3, 8, 1, 1, 1}, /* one an SM, padded to one */
      {240, 3, 8, 1, 1, 2}, /* two an SM, padded to two */
      {360, 3, 8, 1, 1, 0}, /* three an SM: the kernel's own */
      {264, 2, 8, 1, 0, 0}, /* 264 > 240 */
      {264, 2, 8, 0, 0, 0}, /* the same at the kernel's two */
      {240, 2, 8, 0, 1, 0},
      {120, 4, 8, 0, 1, 0}, /* one an SM, not padded */
      {128, 4, 8, 0, 0, 0}, /* one an SM: 128 > 120 resident */
      {16, 2, 16, 0, 0, 0}, /* past PG_CLUSTER_MAX ranges */
      {16, 2, 1, 0, 0, 0},  /* not split */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    pg_layout_args g = aligned_args();
    g.splits = cases[i].splits;
    pg_kernel_launch launch;
    memset(&launch, 0, sizeof launch);
    launch.grid_x = cases[i].grid;
    /* A first region, then the planes of 100 x 60 x splits floats, as the
     * split planners leave them. */
    (void)pg_workspace_add(&launch.workspace, (1 << 18) - (long long)cases[i].splits * 100 * 60,
                           1);
    launch.views.partials =
        PG_IN_REGION(pg_workspace_add(&launch.workspace, (long long)cases[i].splits * 100, 60));
    launch.kernel = reduce; /* the kernel for the planes, any other address */
    launch.last.kernel = reduce;
    const int taken = pg_split_in_clusters(&g, &launch, &h200, cases[i].per_sm, cases[i].spread,
                                           kernel);
    assert_int_equal(taken, cases[i].taken);
    assert_int_equal(launch.cluster_x, taken ? cases[i].splits : 0);
    assert_int_equal(launch.max_blocks_per_sm, cases[i].max_blocks_per_sm);
    assert_true(taken ? launch.last.kernel == NULL : launch.last.kernel == reduce);
    assert_true(launch.kernel == (taken ? kernel : reduce));
    assert_int_equal(launch.workspace.bytes,
                     taken ? (1 << 20) - (size_t)cases[i].splits * 100 * 60 * sizeof(float)
                           : (size_t)1 << 20);
    assert_int_equal(launch.grid_x, cases[i].grid);
  }
}

/* auto's model alone on an H200's facts (pg_auto_model, no GPU asked):
 * every candidate a row, the chosen one the first of the best predicted,
 * refusals with no speed; the layout rules as a call applies them. */
static void test_auto_model(void **state) {
  (void)state;
  const pg_device h200 = pg_device_model(90, 132, 227 * 1024);
  assert_int_equal(h200.model_only, 1);
  assert_int_equal(h200.tuning.cc, 90);
  const pg_variant_info *selector = pg_variant_find("auto");
  const int shapes[][3] = {{8192, 8192, 8192}, {333, 777, 4444}, {1, 4096, 4096}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
    pg_model_row rows[PG_AUTO_MAX_RULES];
    int chosen = -2;
    const int count = pg_auto_model(&h200, selector, shapes[i][0], shapes[i][1], shapes[i][2],
                                    rows, PG_AUTO_MAX_RULES, &chosen);
    assert_true(count >= 2);
    assert_true(chosen >= 0 && chosen < count);
    assert_int_equal(rows[chosen].status, PG_OK);
    for (int r = 0; r < count; ++r) {
      assert_non_null(pg_variant_find(rows[r].variant->name));
      if (rows[r].status != PG_OK) {
        assert_true(rows[r].speed == 0.0);
        continue;
      }
      assert_true(rows[r].speed > 0.0);
      if (r < chosen) assert_true(rows[r].speed < rows[chosen].speed);
      if (r > chosen) assert_true(rows[r].speed <= rows[chosen].speed);
      /* 333 x 777 x 4444: ldb = 777 floats, which TMA cannot read. */
      if (i == 1) assert_true(strcmp(rows[r].variant->name, "tma_ws") != 0);
    }
  }
  /* No selector, no rows. */
  pg_model_row row;
  int chosen = 7;
  assert_int_equal(pg_auto_model(&h200, pg_variant_find("tma_ws"), 64, 64, 64, &row, 1, &chosen),
                   0);
  assert_int_equal(chosen, -1);
}

/* auto's choice at short N on an H200's facts: skinny_ffma where its RING
 * form (N of 1 to 3) or BAND form (4 to 8) runs, also at 3000x8x12288 and
 * 2500x6x6000, whose 188 and 157 blocks of 16 rows, fewer than a wave of
 * two an SM, the model counts full (tma_ws_n16 was its choice there while
 * it counted them in waves of one an SM); tma_ws_n16 past 8 columns. */
static void test_auto_short_n(void **state) {
  (void)state;
  const pg_device h200 = pg_device_model(90, 132, 227 * 1024);
  const pg_variant_info *selector = pg_variant_find("auto");
  const struct {
    int m, n, k;
    const char *want;
  } cases[] = {{4096, 5, 4096, "skinny_ffma"}, {4096, 8, 4096, "skinny_ffma"},
               {16384, 8, 4096, "skinny_ffma"}, {700, 6, 8192, "skinny_ffma"},
               {4096, 4, 4096, "skinny_ffma"},  {4096, 12, 4096, "tma_ws_n16"},
               {3000, 8, 12288, "skinny_ffma"}, {2500, 6, 6000, "skinny_ffma"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    pg_model_row rows[PG_AUTO_MAX_RULES];
    int chosen = -2;
    pg_auto_model(&h200, selector, cases[i].m, cases[i].n, cases[i].k, rows, PG_AUTO_MAX_RULES,
                  &chosen);
    assert_true(chosen >= 0);
    if (strcmp(rows[chosen].variant->name, cases[i].want) != 0)
      print_message("%dx%dx%d: auto chose %s\n", cases[i].m, cases[i].n, cases[i].k,
                    rows[chosen].variant->name);
    assert_string_equal(rows[chosen].variant->name, cases[i].want);
  }
}

/* auto_tf32 at a short side on an H200's facts: memory sets the pace, so
 * the strict skinny_ffma (within TF32's bound) beats the TF32 tiles, which
 * fill 1 to 8 of their 128 rows; at a square, a TF32 tile. A strict entry
 * is among its candidates, an emulated one never. */
static void test_auto_tf32_short_side(void **state) {
  (void)state;
  const pg_device h200 = pg_device_model(90, 132, 227 * 1024);
  const pg_variant_info *selector = pg_variant_find("auto_tf32");
  const struct {
    int m, n, k;
    const char *want;
  } cases[] = {{1, 4096, 4096, "skinny_ffma"},   {8, 8192, 8192, "skinny_ffma"},
               {4, 11008, 4096, "skinny_ffma"},  {4096, 4, 4096, "skinny_ffma"},
               {4096, 4096, 4096, "wgmma_tma_rs"}, {8192, 8192, 8192, "wgmma_tma_rs"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    pg_model_row rows[PG_AUTO_MAX_RULES];
    int chosen = -2;
    const int count = pg_auto_model(&h200, selector, cases[i].m, cases[i].n, cases[i].k, rows,
                                    PG_AUTO_MAX_RULES, &chosen);
    assert_true(chosen >= 0);
    if (strcmp(rows[chosen].variant->name, cases[i].want) != 0)
      print_message("%dx%dx%d: auto_tf32 chose %s\n", cases[i].m, cases[i].n, cases[i].k,
                    rows[chosen].variant->name);
    assert_string_equal(rows[chosen].variant->name, cases[i].want);
    for (int r = 0; r < count; ++r)
      assert_int_not_equal(rows[r].variant->precision, PG_PRECISION_EMULATED);
  }
}

/* tma_ws at few K steps on an H200's facts: a persistent grid of two
 * blocks an SM where K <= 128 (and auto then runs it, ahead of
 * tma_ws_m256), one block a tile above, and at the stage count where one
 * block fills an SM; the environment's blocks an SM decide at every K. */
static pg_kernel_launch tma_ws_launch_at(const pg_device *device, int k, int stages) {
  const pg_variant_entry *e = pg_entry_find("tma_ws");
  assert_non_null(e);
  pg_layout_args g = aligned_args();
  g.m = g.n = g.ldb = g.ldc = 8192;
  g.k = g.lda = k;
  g.c = pgt_storage;
  g.stages = stages;
  pg_kernel_launch launch;
  memset(&launch, 0, sizeof launch);
  e->configure(&g, device, &device->tuning, &launch);
  return launch;
}

static void test_tma_ws_small_k(void **state) {
  (void)state;
  const pg_device h200 = pg_device_model(90, 132, 227 * 1024);
  const struct {
    int k, stages, persistent;
  } cases[] = {{64, 3, 2}, {128, 3, 2}, {129, 3, 0}, {256, 3, 0}, {4096, 3, 0}, {128, 4, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const pg_kernel_launch launch = tma_ws_launch_at(&h200, cases[i].k, cases[i].stages);
    if (launch.persistent_blocks_per_sm != cases[i].persistent)
      print_message("K %d at %d stages: %d blocks an SM\n", cases[i].k, cases[i].stages,
                    launch.persistent_blocks_per_sm);
    assert_int_equal(launch.persistent_blocks_per_sm, cases[i].persistent);
    assert_true((launch.model.speed_factor > 1.0) == (cases[i].persistent > 0));
  }
  const pg_variant_info *selector = pg_variant_find("auto");
  const int ks[] = {128, 256};
  const char *want[] = {"tma_ws", "tma_ws_m256"};
  for (int i = 0; i < 2; ++i) {
    pg_model_row rows[PG_AUTO_MAX_RULES];
    int chosen = -2;
    pg_auto_model(&h200, selector, 8192, 8192, ks[i], rows, PG_AUTO_MAX_RULES, &chosen);
    assert_true(chosen >= 0);
    assert_string_equal(rows[chosen].variant->name, want[i]);
  }
  /* PIPEGEMM_TMA_WS_BLOCKS_PER_SM=0: one block a tile at K = 128 too. */
  assert_int_equal(setenv("PIPEGEMM_TMA_WS_BLOCKS_PER_SM", "0", 1), 0);
  pg_tuning_reread_environment();
  const pg_kernel_launch launch = tma_ws_launch_at(&h200, 128, 3);
  assert_int_equal(unsetenv("PIPEGEMM_TMA_WS_BLOCKS_PER_SM"), 0);
  pg_tuning_reread_environment();
  assert_int_equal(launch.persistent_blocks_per_sm, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_aligned_layout_passes),
      cmocka_unit_test(test_odd_stride_rejected_with_reason),
      cmocka_unit_test(test_misaligned_base_rejected_with_reason),
      cmocka_unit_test(test_a_only_check_ignores_b),
      cmocka_unit_test(test_b_only_check_ignores_a),
      cmocka_unit_test(test_k_zero_needs_no_maps),
      cmocka_unit_test(test_split_k_rule),
      cmocka_unit_test(test_split_tail_rule),
      cmocka_unit_test(test_operand_copies),
      cmocka_unit_test(test_split_forms_take_any_layout),
      cmocka_unit_test(test_registry_facts),
      cmocka_unit_test(test_auto_without_gpu),
      cmocka_unit_test(test_auto_model),
      cmocka_unit_test(test_tma_ws_small_k),
      cmocka_unit_test(test_split_in_clusters),
      cmocka_unit_test(test_split_in_clusters_rule),
      cmocka_unit_test(test_auto_short_n),
      cmocka_unit_test(test_auto_tf32_short_side),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
