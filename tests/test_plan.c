/* A plan's steps and workspace, planned on a model of the H200 (no GPU):
 * which launches a call makes, the workspace's regions, and the argument
 * each kernel gets with the workspace at a made-up address, as
 * pg_plan_launch computes it (pg_plan_step_args). The layouts checked are
 * the ones the first kernels write and the kernels read (copy_operands.cu,
 * 40_wgmma_3xtf32.cu, transpose_b.cu, reduce_splits.cu): a region in the
 * wrong place is a wrong C on the GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "kernels/tma_ws.h"
#include "tma.h"

/* Addresses that stand for device memory: only their alignment matters to
 * a plan, which never reads them. */
#define ALIGNED(address) ((float *)(uintptr_t)(address))
#define BASE ALIGNED(0x700000000000ull) /* the workspace, as the pool gives it */

static pg_device h200(void) {
  pg_device device = pg_device_model(90, 132, 227 * 1024);
  device.smem_per_sm = 228 * 1024;
  device.smem_reserved = 1024;
  return device;
}

static pg_plan plan_of(const char *variant, int m, int n, int k, const float *a, int lda,
                       const float *b, int ldb, float alpha) {
  const pg_device device = h200();
  static pg_device kept; /* the plan points at its device */
  kept = device;
  pg_plan plan;
  const pg_gemm_desc gemm =
      pg_gemm_desc_of(m, n, k, alpha, a, lda, b, ldb, 0.0f, ALIGNED(0x20000000), n);
  const pg_status st = pg_plan_prepare_on(&plan, &kept, pg_variant_find(variant), 0, &gemm);
  if (st != PG_OK) fail_msg("%s at %dx%dx%d: %s (%s)", variant, m, n, k, pg_status_name(st),
                            pg_last_error_detail());
  return plan;
}

static const float *at(size_t bytes) { return (const float *)((const char *)BASE + bytes); }

static void test_one_kernel(void **state) {
  (void)state;
  const pg_plan plan = plan_of("cp_async", 300, 200, 40, ALIGNED(0x10000000), 40,
                               ALIGNED(0x18000000), 200, 1.0f);
  assert_int_equal(plan.steps, 1);
  assert_int_equal(plan.main_step, 0);
  assert_int_equal(plan.workspace.bytes, 0);
  assert_int_equal(plan.workspace.count, 0);
  pg_layout_args args;
  pg_plan_step_args(&plan, 0, NULL, &args);
  assert_ptr_equal(args.a, ALIGNED(0x10000000));
  assert_ptr_equal(args.b, ALIGNED(0x18000000));
}

/* alpha = 0: C = beta * C, one launch, no workspace, whatever the entry. */
static void test_scale_only(void **state) {
  (void)state;
  const pg_plan plan = plan_of("tma_ws_splitk", 512, 512, 8192, ALIGNED(0x10000000), 8192,
                               ALIGNED(0x18000000), 512, 0.0f);
  assert_int_equal(plan.steps, 1);
  assert_int_equal(plan.scales_c_only, 1);
  assert_int_equal(plan.workspace.bytes, 0);
}

/* K split: the kernel, then the reduction, both reading the planes (the
 * whole workspace, N rounded up to 4 floats a row). */
static void test_split_planes(void **state) {
  (void)state;
  const pg_plan plan = plan_of("tma_ws_splitk", 512, 510, 8192, ALIGNED(0x10000000), 8192,
                               ALIGNED(0x18000000), 512, 1.0f);
  const int splits = plan.args.splits;
  assert_true(splits > 1);
  assert_int_equal(plan.steps, 2);
  assert_int_equal(plan.main_step, 0);
  assert_int_equal(plan.workspace.count, 1);
  const long long rows = 512 - plan.args.split_row0;
  assert_int_equal(plan.workspace.bytes, (size_t)splits * rows * 512 * sizeof(float));
  for (int s = 0; s < 2; ++s) {
    pg_layout_args args;
    pg_plan_step_args(&plan, s, BASE, &args);
    assert_ptr_equal(args.partials, BASE);
    assert_int_equal(args.ldp, 512);
    assert_ptr_equal(args.a, ALIGNED(0x10000000)); /* the caller's operands */
    assert_ptr_equal(args.b, ALIGNED(0x18000000));
  }
  assert_true(plan.step[1].programmatic); /* the reduction waits for the planes itself */
}

/* An A that TMA cannot read (4 bytes off), K split: a first kernel copies A
 * (M rows of K rounded up to 4) to the workspace's start, the kernel reads
 * it there, and the planes follow the copy. */
static void test_copied_operand_then_planes(void **state) {
  (void)state;
  const float *a = ALIGNED(0x10000004);
  const pg_plan plan = plan_of("tma_ws_splitk", 512, 510, 8190, a, 8190, ALIGNED(0x18000000), 512,
                               1.0f);
  assert_true(plan.args.splits > 1);
  assert_int_equal(plan.steps, 3);
  assert_int_equal(plan.main_step, 1);
  const size_t a_bytes = (size_t)512 * 8192 * sizeof(float);
  pg_layout_args first, main, last;
  pg_plan_step_args(&plan, 0, BASE, &first);
  pg_plan_step_args(&plan, 1, BASE, &main);
  pg_plan_step_args(&plan, 2, BASE, &last);
  /* The copy reads the caller's A and writes from the workspace's start. */
  assert_ptr_equal(first.a, a);
  assert_ptr_equal(first.partials, BASE);
  assert_int_equal(first.ldp, 8192);
  /* The kernel reads the copy, 16-byte rows, and writes its planes after it. */
  assert_ptr_equal(main.a, BASE);
  assert_int_equal(main.lda, 8192);
  assert_int_equal(main.vec_a, 1);
  assert_ptr_equal(main.b, ALIGNED(0x18000000));
  assert_ptr_equal(main.partials, at(a_bytes));
  assert_int_equal(main.ldp, 512);
  /* The reduction reads the planes where the kernel wrote them. */
  assert_ptr_equal(last.partials, main.partials);
  assert_int_equal(last.ldp, main.ldp);
  const long long rows = 512 - plan.args.split_row0;
  assert_int_equal(plan.workspace.bytes,
                   a_bytes + (size_t)plan.args.splits * rows * 512 * sizeof(float));
  assert_true(plan.step[1].programmatic); /* the kernel waits for the copy itself */
}

/* The emulated entry where N > 512 and B is 4 bytes off: A's two parts
 * (2 x M rounded up to the tile, K rounded up to 4 floats a row), then B's
 * copy (K rows of N rounded up to 4), read where A and B were. */
static void test_emulated_parts(void **state) {
  (void)state;
  const float *b = ALIGNED(0x18000004);
  const pg_plan plan = plan_of("wgmma_3xtf32", 1000, 1001, 1003, ALIGNED(0x10000000), 1003, b,
                               1001, 1.0f);
  assert_int_equal(plan.main_step, 1);
  assert_true(plan.steps >= 2);
  pg_layout_args first, main;
  pg_plan_step_args(&plan, 0, BASE, &first);
  pg_plan_step_args(&plan, 1, BASE, &main);
  const long long ldp = 1004, rows = 2 * 1024; /* tiles of 128 rows */
  assert_ptr_equal(first.partials, BASE);
  assert_int_equal(first.ldp, ldp);
  assert_ptr_equal(main.a, BASE);
  assert_int_equal(main.lda, ldp);
  assert_ptr_equal(main.b, at((size_t)rows * ldp * sizeof(float)));
  assert_int_equal(main.ldb, 1004);
  assert_int_equal(main.vec_b, 1);
  assert_int_equal(plan.workspace.region[0].rows, rows);
  assert_true(plan.workspace.bytes >= (size_t)(rows * ldp + 1003 * 1004) * sizeof(float));
}

/* A TF32 wgmma member: B^T first (N rows of K rounded up to 4), read as B. */
static void test_transposed_b(void **state) {
  (void)state;
  const pg_plan plan = plan_of("wgmma_tma", 512, 384, 1000, ALIGNED(0x10000000), 1000,
                               ALIGNED(0x18000000), 384, 1.0f);
  assert_int_equal(plan.steps, 2);
  assert_int_equal(plan.main_step, 1);
  assert_int_equal(plan.workspace.bytes, (size_t)384 * 1000 * sizeof(float));
  pg_layout_args first, main;
  pg_plan_step_args(&plan, 0, BASE, &first);
  pg_plan_step_args(&plan, 1, BASE, &main);
  assert_ptr_equal(first.partials, BASE);
  assert_int_equal(first.ldp, 1000);
  assert_ptr_equal(first.b, ALIGNED(0x18000000)); /* it reads the caller's B */
  assert_ptr_equal(main.b, BASE);
  assert_int_equal(main.ldb, 1000);
  assert_ptr_equal(main.a, ALIGNED(0x10000000));
  assert_false(plan.step[1].programmatic);
  assert_int_equal(plan.transposes, 1);
}

/* A layout or a batch: the study's kernels refuse it, auto runs an entry
 * that takes it, with the batch on the grid's z. */
static void test_layouts_and_batches(void **state) {
  (void)state;
  static pg_device kept;
  kept = h200();
  pg_gemm_desc gemm = pg_gemm_desc_of(1000, 600, 700, 1.0f, ALIGNED(0x10000000), 1000,
                                      ALIGNED(0x18000000), 700, 0.0f, ALIGNED(0x20000000), 600);
  gemm.op_a = PG_OP_T; /* A stored 700 x 1000 */
  gemm.op_b = PG_OP_T; /* B stored 600 x 700 */
  gemm.batch = 3;
  gemm.stride_a = 700 * 1000;
  gemm.stride_b = 0; /* one B for the batch */
  gemm.stride_c = 1000 * 600;
  pg_plan plan;
  assert_int_equal(pg_plan_prepare_on(&plan, &kept, pg_variant_find("tma"), 0, &gemm),
                   PG_ERR_UNSUPPORTED);
  assert_non_null(strstr(pg_last_error_detail(), "op_a T, op_b T and 3 GEMMs"));
  /* tma_ws: its tile on the layout, whole tiles, the batch on y */
  assert_int_equal(pg_plan_prepare_on(&plan, &kept, pg_variant_find("tma_ws"), 0, &gemm), PG_OK);
  assert_int_equal(plan.step[plan.main_step].grid_y, 3);
  assert_int_equal(plan.steps, 1);
  assert_int_equal(pg_plan_prepare_on(&plan, &kept, pg_variant_find("auto"), 0, &gemm), PG_OK);
  assert_int_equal(plan.entry->info.layouts, PG_LAYOUT_ANY);
  assert_int_equal(plan.args.op_a, 1);
  assert_int_equal(plan.args.op_b, 1);
  assert_int_equal(plan.args.batch, 3);
  assert_int_equal(plan.args.stride_b, 0);
  /* a tile form of tma_ws, reading both operands where they are (one
   * launch, no copy), the batch on the grid's y, K not split */
  assert_non_null(strstr(plan.entry->info.name, "tma_ws"));
  assert_int_equal(plan.steps, 1);
  assert_int_equal(plan.step[plan.main_step].grid_y, 3);
  assert_int_equal(plan.args.splits, 1);
  assert_non_null(plan.tma);
  assert_true(pg_tma_reads_layout(&plan.args, plan.tma));
  /* a batch stride TMA cannot read: the tile forms refuse it, and auto
   * runs cp_async_any, the batch on the grid's z */
  gemm.stride_a = 700 * 1000 + 2;
  assert_int_equal(pg_plan_prepare_on(&plan, &kept, pg_variant_find("tma_ws_splitk"), 0, &gemm),
                   PG_ERR_UNSUPPORTED);
  assert_non_null(strstr(pg_last_error_detail(), "A's batch stride"));
  assert_int_equal(pg_plan_prepare_on(&plan, &kept, pg_variant_find("auto"), 0, &gemm), PG_OK);
  assert_string_equal(plan.entry->info.name, "cp_async_any");
  assert_int_equal(plan.step[plan.main_step].grid_z, 3);
  gemm.stride_a = 700 * 1000;
  /* one GEMM of op T, T at a shape of few tiles: K split as for op N, N */
  gemm.batch = 1;
  gemm.m = gemm.n = 256;
  gemm.k = 16384;
  gemm.lda = 256;
  gemm.ldb = 16384;
  gemm.ldc = 256;
  assert_int_equal(pg_plan_prepare_on(&plan, &kept, pg_variant_find("tma_ws_splitk"), 0, &gemm),
                   PG_OK);
  assert_true(plan.args.splits > 1);
  assert_int_equal(plan.steps, 2); /* the reduction after */
  gemm.m = 1000;
  gemm.n = 600;
  gemm.k = 700;
  gemm.lda = 1000;
  gemm.ldb = 700;
  gemm.ldc = 600;
  gemm.batch = 3;
  assert_int_equal(pg_plan_prepare_on(&plan, &kept, pg_variant_find("auto_tf32"), 0, &gemm),
                   PG_OK);
  assert_int_equal(plan.entry->info.layouts, PG_LAYOUT_ANY);
  assert_int_equal(plan.entry->info.precision, PG_PRECISION_TF32);
  /* C = beta C over every C of the batch: rows of all three on y. */
  gemm.alpha = 0.0f;
  assert_int_equal(pg_plan_prepare_on(&plan, &kept, pg_variant_find("auto"), 0, &gemm), PG_OK);
  assert_int_equal(plan.scales_c_only, 1);
  assert_int_equal(plan.step[0].grid_y, 3 * 1000);
  /* Past 65535 GEMMs the grid's z stops there; the kernels walk the rest. */
  gemm.alpha = 1.0f;
  gemm.m = gemm.n = gemm.k = 4;
  gemm.lda = gemm.ldb = gemm.ldc = 4;
  gemm.batch = 65537;
  gemm.stride_a = gemm.stride_b = gemm.stride_c = 16;
  assert_int_equal(pg_plan_prepare_on(&plan, &kept, pg_variant_find("auto"), 0, &gemm), PG_OK);
  assert_int_equal(plan.step[plan.main_step].grid_y, 65535);
  assert_int_equal(pg_plan_prepare_on(&plan, &kept, pg_variant_find("cp_async_any"), 0, &gemm),
                   PG_OK);
  assert_int_equal(plan.step[plan.main_step].grid_z, 65535);
}

/* A GEMM of the layouts' tests: M x N x K, dense (each operand's rows as
 * stored, 16-byte aligned), op(A) and op(B), `batch` GEMMs one after the
 * other (stride 0 where `share_b`: one B for all). */
static pg_gemm_desc layout_gemm(int m, int n, int k, int op_a, int op_b, int batch, int share_b) {
  pg_gemm_desc g = pg_gemm_desc_of(m, n, k, 1.0f, ALIGNED(0x10000000), op_a ? m : k,
                                   ALIGNED(0x18000000), op_b ? k : n, 0.0f, ALIGNED(0x20000000), n);
  g.op_a = op_a ? PG_OP_T : PG_OP_N;
  g.op_b = op_b ? PG_OP_T : PG_OP_N;
  g.batch = batch;
  if (batch > 1) {
    g.stride_a = (long long)m * k;
    g.stride_b = share_b ? 0 : (long long)k * n;
    g.stride_c = (long long)m * n;
  }
  return g;
}

static pg_plan plan_gemm(const char *variant, const pg_gemm_desc *gemm) {
  static pg_device kept; /* the plan points at its device */
  kept = h200();
  pg_plan plan;
  const pg_status st = pg_plan_prepare_on(&plan, &kept, pg_variant_find(variant), 0, gemm);
  if (st != PG_OK)
    fail_msg("%s at %dx%dx%d, op %d%d, batch %d: %s (%s)", variant, gemm->m, gemm->n, gemm->k,
             gemm->op_a, gemm->op_b, gemm->batch, pg_status_name(st), pg_last_error_detail());
  return plan;
}

/* auto_emulated's plan of `gemm`, held to run `entry`. */
static pg_plan auto_emulated_runs(const pg_gemm_desc *gemm, const char *entry) {
  const pg_plan plan = plan_gemm("auto_emulated", gemm);
  assert_string_equal(plan.entry->info.name, entry);
  return plan;
}
/* The same of a square-ish problem, op(B) = N, `batch` GEMMs. */
static pg_plan auto_emulated_runs_at(int m, int n, int k, int op_a, int batch, const char *entry) {
  const pg_gemm_desc gemm = layout_gemm(m, n, k, op_a, 0, batch, 0);
  return auto_emulated_runs(&gemm, entry);
}

/* A short side against a long operand along K (x @ W.T for a few rows of
 * x): skinny_ffma's DOT form, one kernel over all of K, 32 long rows a
 * block, the batch on y; strict auto runs it. The layouts of a short side
 * it does not take are refused with the reason. */
static void test_short_side_at_other_layouts(void **state) {
  (void)state;
  pg_gemm_desc nt = layout_gemm(4, 4096, 4096, 0, 1, 1, 0);
  pg_plan plan = plan_gemm("skinny_ffma", &nt);
  assert_int_equal(plan.steps, 1);
  assert_int_equal(plan.step[plan.main_step].grid_x, 4096 / 32);
  assert_int_equal(plan.step[plan.main_step].grid_y, 1);
  assert_int_equal(plan.args.splits, 1);
  const void *dot = plan.step[plan.main_step].kernel;
  plan = plan_gemm("auto", &nt);
  assert_string_equal(plan.entry->info.name, "skinny_ffma");
  assert_ptr_equal(plan.step[plan.main_step].kernel, dot);
  /* a short N, op N, N over a batch of 3 */
  const pg_gemm_desc batched = layout_gemm(3000, 2, 1024, 0, 0, 3, 1);
  plan = plan_gemm("skinny_ffma", &batched);
  assert_int_equal(plan.step[plan.main_step].grid_x, (3000 + 31) / 32);
  assert_int_equal(plan.step[plan.main_step].grid_y, 3);
  /* op N, N on one GEMM keeps the other forms */
  const pg_gemm_desc nn = layout_gemm(4, 4096, 4096, 0, 0, 1, 0);
  plan = plan_gemm("skinny_ffma", &nn);
  assert_ptr_not_equal(plan.step[plan.main_step].kernel, dot);
  /* a short M with op(B) = N at op(A) = T: refused, with why */
  static pg_device kept;
  kept = h200();
  const pg_gemm_desc tn = layout_gemm(4, 4096, 4096, 1, 0, 1, 0);
  assert_int_equal(pg_plan_prepare_on(&plan, &kept, pg_variant_find("skinny_ffma"), 0, &tn),
                   PG_ERR_UNSUPPORTED);
  assert_non_null(strstr(pg_last_error_detail(), "long operand runs along K"));
  assert_int_equal(pg_variant_find("skinny_ffma")->layouts, PG_LAYOUT_SOME);
}

/* op(B) = T is B^T's layout: the TF32 wgmma entries read the caller's B
 * where it is, with no first kernel (or, where A is split or transposed,
 * one that leaves B alone), and the selectors run them. */
static void test_b_transposed_read_in_place(void **state) {
  (void)state;
  const char *const entries[] = {"wgmma_tma_rs", "wgmma_tma_coop_n256", "wgmma_cp_async"};
  const pg_gemm_desc gemm = layout_gemm(1024, 768, 1024, 0, 1, 1, 0);
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; ++i) {
    const pg_plan plan = plan_gemm(entries[i], &gemm);
    assert_int_equal(plan.steps, 1);
    assert_int_equal(plan.workspace.bytes, 0);
    assert_int_equal(plan.transposes, 0);
    pg_layout_args main;
    pg_plan_step_args(&plan, plan.main_step, BASE, &main);
    assert_ptr_equal(main.b, ALIGNED(0x18000000));
    assert_ptr_equal(main.a, ALIGNED(0x10000000));
  }
  /* The emulated entry: fused (N <= 512: no first kernel), or A split first
   * and B where it is. */
  pg_gemm_desc narrow = layout_gemm(1024, 512, 512, 0, 1, 1, 0);
  pg_plan plan = plan_gemm("wgmma_3xtf32", &narrow);
  assert_int_equal(plan.main_step, 0); /* (a reduction may follow: K split) */
  assert_int_equal(plan.workspace.count, plan.args.splits > 1 ? 1 : 0);
  assert_int_equal(plan.transposes, 0);
  plan = plan_gemm("wgmma_3xtf32", &gemm);
  assert_int_equal(plan.step[0].kernel != plan.step[plan.main_step].kernel, 1);
  assert_int_equal(plan.main_step, 1);
  assert_int_equal(plan.transposes, 0);
  pg_layout_args main;
  pg_plan_step_args(&plan, 1, BASE, &main);
  assert_ptr_equal(main.a, BASE); /* A's parts */
  assert_ptr_equal(main.b, ALIGNED(0x18000000));
  assert_int_equal(plan.workspace.region[0].rows, 2 * 1024); /* M rows a part */
  /* The selectors: their first TF32 and emulated candidates, no B copy. */
  plan = plan_gemm("auto_tf32", &gemm);
  assert_string_equal(plan.entry->info.name, "wgmma_tma_rs");
  assert_int_equal(plan.steps, 1);
  plan = plan_gemm("auto_emulated", &gemm);
  assert_string_equal(plan.entry->info.name, "wgmma_3xtf32");
  assert_int_equal(plan.transposes, 0);
}

/* op(A) = T: the emulated entry's split reads A as stored (one first
 * kernel, no transpose besides), never the fused form; the TF32 entries
 * transpose A first (charged to auto's model). */
static void test_a_transposed(void **state) {
  (void)state;
  const pg_gemm_desc gemm = layout_gemm(1000, 512, 700, 1, 0, 1, 0);
  pg_plan plan = plan_gemm("wgmma_3xtf32", &gemm); /* N <= 512, yet op(A) = T: not fused */
  assert_int_equal(plan.main_step, 1);
  assert_int_equal(plan.transposes, 1);
  pg_layout_args first, main;
  pg_plan_step_args(&plan, 0, BASE, &first);
  pg_plan_step_args(&plan, 1, BASE, &main);
  assert_ptr_equal(first.a, ALIGNED(0x10000000));
  assert_int_equal(first.op_a, 1);
  assert_ptr_equal(first.partials, BASE);
  assert_int_equal(first.ldp, 700);
  assert_ptr_equal(main.a, BASE);
  assert_int_equal(main.lda, 700);
  assert_ptr_equal(main.b, ALIGNED(0x18000000));
  assert_int_equal(plan.workspace.region[0].rows, 2 * 1000); /* M rows a part */

  plan = plan_gemm("wgmma_tma_rs", &gemm);
  assert_int_equal(plan.steps, 2);
  assert_int_equal(plan.transposes, 1);
  assert_int_equal(plan.workspace.bytes, (size_t)1000 * 700 * sizeof(float));
  pg_plan_step_args(&plan, 1, BASE, &main);
  assert_ptr_equal(main.a, BASE); /* A^T: M rows of K */
  assert_int_equal(main.lda, 700);
  assert_ptr_equal(main.b, ALIGNED(0x18000000));

  /* Both transposed where B is op N: A^T then B^T, one first kernel. */
  plan = plan_gemm("wgmma_tma_coop_n256", &gemm);
  assert_int_equal(plan.steps, 2);
  assert_int_equal(plan.transposes, 2);
  pg_plan_step_args(&plan, 1, BASE, &main);
  assert_ptr_equal(main.a, BASE);
  assert_ptr_equal(main.b, at((size_t)1000 * 700 * sizeof(float)));
  assert_int_equal(main.ldb, 700);
}

/* A batch: one launch over it (its GEMMs' tiles on x), K not split; the
 * first kernels write a matrix for each of the caller's (one where its
 * stride is 0), and the views' strides step over them. */
static void test_batch_one_launch(void **state) {
  (void)state;
  const pg_gemm_desc gemm = layout_gemm(1000, 600, 4096, 1, 0, 3, 1); /* B shared */
  pg_plan plan = plan_gemm("wgmma_3xtf32", &gemm);
  assert_int_equal(plan.args.splits <= 1, 1);
  assert_int_equal(plan.step[plan.main_step].grid_x, 8 * 5 * 3); /* 128 x 128 tiles */
  assert_int_equal(plan.step[plan.main_step].grid_z, 1);
  assert_int_equal(plan.steps, 2); /* the split, the kernel: no reduction */
  pg_layout_args main;
  pg_plan_step_args(&plan, 1, BASE, &main);
  assert_int_equal(plan.workspace.region[0].rows, 3 * 2 * 1000);
  assert_int_equal(main.stride_a, 2 * 1000 * 4096LL);
  assert_int_equal(main.stride_b, 0);
  assert_ptr_equal(main.b, ALIGNED(0x18000000));

  plan = plan_gemm("wgmma_cp_async", &gemm);
  assert_int_equal(plan.steps, 2);
  assert_int_equal(plan.transposes, 2);
  assert_int_equal(plan.step[1].grid_x, 5 * 3);
  assert_int_equal(plan.step[1].grid_y, 8);
  pg_plan_step_args(&plan, 1, BASE, &main);
  assert_int_equal(plan.workspace.region[0].rows, 3 * 1000); /* A^T of each GEMM */
  assert_int_equal(plan.workspace.region[1].rows, 600);      /* one B^T: B is shared */
  assert_int_equal(main.stride_a, 1000 * 4096LL);
  assert_int_equal(main.stride_b, 0);
  assert_ptr_equal(main.b, at((size_t)3 * 1000 * 4096 * sizeof(float)));

  /* op(B) = T, batched: the TMA entries read both operands where they are. */
  const pg_gemm_desc nt = layout_gemm(1000, 600, 512, 0, 1, 3, 0);
  plan = plan_gemm("wgmma_tma_rs", &nt);
  assert_int_equal(plan.steps, 1);
  assert_int_equal(plan.step[0].grid_x, 4 * 5 * 3); /* 256 x 128 tiles */
  plan = plan_gemm("wgmma_tma_coop_n256", &nt);
  assert_int_equal(plan.steps, 1);
  assert_int_equal(plan.step[0].grid_x, 3 * 3);
  assert_int_equal(plan.step[0].grid_y, 8);
}

/* What TMA cannot read is refused with a reason, so that a selector takes
 * the next candidate: a batch's stride off 16 bytes. */
static void test_layout_refusals(void **state) {
  (void)state;
  static pg_device kept;
  kept = h200();
  pg_gemm_desc gemm = layout_gemm(256, 256, 256, 0, 1, 2, 0);
  gemm.stride_b = 256 * 256 + 2;
  pg_plan plan;
  assert_int_equal(pg_plan_prepare_on(&plan, &kept, pg_variant_find("wgmma_tma_rs"), 0, &gemm),
                   PG_ERR_UNSUPPORTED);
  assert_non_null(strstr(pg_last_error_detail(), "batch stride"));
  assert_int_equal(
      pg_plan_prepare_on(&plan, &kept, pg_variant_find("wgmma_tma_coop_n256"), 0, &gemm),
      PG_ERR_UNSUPPORTED);
  /* The emulated entry copies B as stored instead; cp.async reads it. */
  assert_int_equal(pg_plan_prepare_on(&plan, &kept, pg_variant_find("wgmma_3xtf32"), 0, &gemm),
                   PG_OK);
  assert_int_equal(plan.workspace.count >= 2, 1);
  assert_int_equal(plan.workspace.region[1].rows, 2 * 256); /* B's copy, each GEMM's */
  assert_int_equal(pg_plan_prepare_on(&plan, &kept, pg_variant_find("wgmma_cp_async"), 0, &gemm),
                   PG_OK);
  assert_int_equal(pg_plan_prepare_on(&plan, &kept, pg_variant_find("auto_tf32"), 0, &gemm),
                   PG_OK);
  assert_string_equal(plan.entry->info.name, "wgmma_cp_async");
}

/* wgmma_fp16x3: the split, its kernel, and, where op(A) = N and A's and
 * B's rows are 16-byte aligned, wgmma_3xtf32's kernel for the tiles past
 * the span rule (FUSED, at any N, never split: no workspace of its own),
 * its argument the call's with the scales' address in the workspace,
 * after the split's lines (src/kernels/42_wgmma_fp16x3.cu). Elsewhere the
 * FP16 form's kernel computes those tiles itself (leave_wide 0). */
static void test_wide_tiles_after(void **state) {
  (void)state;
  const int sizes[][3] = {{1000, 4000, 700}, {256, 256, 8192}, {300, 260, 200}};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    const int m = sizes[i][0], n = sizes[i][1], k = sizes[i][2];
    for (int op_b = 0; op_b < 2; ++op_b) {
      const pg_gemm_desc gemm = layout_gemm(m, n, k, 0, op_b, 1, 0);
      const pg_plan plan = plan_gemm("wgmma_fp16x3", &gemm);
      assert_int_equal(plan.steps, 3);
      assert_int_equal(plan.main_step, 1);
      assert_int_equal(plan.then.step, 2);
      assert_string_equal(plan.then.entry->info.name, "wgmma_3xtf32");
      assert_int_equal(plan.step[2].programmatic, 0);
      assert_int_equal(plan.workspace.count, 1); /* the split's alone */
      assert_int_equal(plan.args.own[0], 1);     /* leave_wide */
      const long long mp = (m + 127) / 128 * 128, np = (n + 127) / 128 * 128;
      const long long ml = (m + 15) / 16 * 16, nl = (n + 15) / 16 * 16; /* a matrix's lines */
      const long long kp = (k + 63) / 64 * 64;
      pg_layout_args split, main, wide;
      pg_plan_step_args(&plan, 0, BASE, &split);
      pg_plan_step_args(&plan, 1, BASE, &main);
      pg_plan_step_args(&plan, 2, BASE, &wide);
      assert_ptr_equal(split.partials, BASE);
      assert_ptr_equal(main.partials, BASE);
      assert_null(main.wide_lines);
      assert_ptr_equal(wide.wide_lines, at((size_t)((ml + nl) * kp) * sizeof(float)));
      assert_ptr_equal(wide.a, ALIGNED(0x10000000));
      assert_ptr_equal(wide.b, ALIGNED(0x18000000));
      assert_ptr_equal(wide.c, ALIGNED(0x20000000));
      assert_int_equal(wide.op_b, op_b);
      assert_int_equal(wide.splits <= 1, 1);
      assert_int_equal(plan.step[2].grid_x, (mp / 128) * (np / 128));
      assert_int_equal(plan.step[2].cluster_x, 1);
      assert_int_equal(plan.step[2].threads, plan.then.entry->info.threads);
      assert_int_equal(plan.step[2].dynamic_smem,
                       pg_entry_of(&plan.then.entry->info)->smem_bytes(wide.stages));
      assert_true(plan.step[2].kernel != plan.step[1].kernel);
      pg_plan_step_args(&plan, 2, NULL, &wide);
      assert_ptr_equal(wide.wide_lines, PG_WIDE_LINES_AT_LAUNCH); /* no workspace yet */
    }
  }
  /* op(A) = T, B or A 4 bytes off, a row of B not of 16 bytes: the FP16
   * form's kernel keeps them. */
  pg_gemm_desc kept[4];
  kept[0] = layout_gemm(1000, 512, 700, 1, 0, 1, 0);
  kept[1] = layout_gemm(1000, 512, 700, 0, 0, 1, 0);
  kept[1].b = ALIGNED(0x18000004);
  kept[2] = layout_gemm(1000, 512, 700, 0, 1, 1, 0);
  kept[2].a = ALIGNED(0x10000004);
  kept[3] = layout_gemm(1000, 511, 700, 0, 0, 1, 0);
  pg_plan plan;
  for (int i = 0; i < 4; ++i) {
    plan = plan_gemm("wgmma_fp16x3", &kept[i]);
    assert_int_equal(plan.steps, 2);
    assert_int_equal(plan.then.step, 0);
    assert_int_equal(plan.args.own[0], 0);
  }
  /* A GPU whose shared memory holds the FP16 form at two stages but not
   * wgmma_3xtf32's four: the FP16 form's kernel keeps them too. */
  static pg_device small;
  small = h200();
  small.smem_optin = 160 * 1024;
  const pg_gemm_desc nn = layout_gemm(1000, 512, 700, 0, 0, 1, 0);
  assert_int_equal(pg_plan_prepare_on(&plan, &small, pg_variant_find("wgmma_fp16x3"), 2, &nn),
                   PG_OK);
  assert_int_equal(plan.steps, 2);
  assert_int_equal(plan.args.own[0], 0);
  /* A batch of 3, B shared: each A's lines (M rounded up to 16), then B's
   * once; the batch's tiles rounded up to a whole pair; the wide tiles'
   * kernel over the batch's tiles. */
  const pg_gemm_desc batch = layout_gemm(300, 260, 200, 0, 0, 3, 1);
  plan = plan_gemm("wgmma_fp16x3", &batch);
  assert_int_equal(plan.steps, 3);
  const long long lines = 3 * 304 + 272, kp = 256;
  assert_int_equal(plan.workspace.region[0].rows, lines + (lines + kp - 1) / kp);
  assert_int_equal(plan.workspace.region[0].ld, kp);
  assert_int_equal(plan.step[1].grid_x, 28); /* 3 x 3 x 3 tiles, rounded up to even */
  assert_int_equal(plan.step[2].grid_x, 3 * 9);
  pg_layout_args wide;
  pg_plan_step_args(&plan, 2, BASE, &wide);
  assert_ptr_equal(wide.wide_lines, at((size_t)(lines * kp) * sizeof(float)));
  assert_int_equal(wide.batch, 3);
  assert_int_equal(wide.stride_b, 0);
  /* auto_emulated: the FP16 form from about 3000 of K (its split's pass
   * and a tile's start and end weigh less), its three launches; 3xTF32
   * below; a batch of them as one. */
  const pg_gemm_desc big = layout_gemm(4096, 4096, 4096, 0, 1, 1, 0);
  assert_int_equal(auto_emulated_runs(&big, "wgmma_fp16x3").steps, 3);
  (void)auto_emulated_runs_at(2048, 2048, 2048, 0, 1, "wgmma_3xtf32");
  (void)auto_emulated_runs_at(4096, 4096, 4096, 0, 2, "wgmma_fp16x3");
  /* Where wgmma_3xtf32 cannot take the wide tiles after it (rows not of 16
   * bytes: 4095; op(A) = T), the FP16 form would keep them on mma.sync, a
   * tenth of the speed on wide inputs: auto_emulated runs 3xTF32 there,
   * while the entry named alone still plans, in two launches. */
  const pg_gemm_desc odd = layout_gemm(4095, 4095, 4095, 0, 0, 1, 0);
  (void)auto_emulated_runs(&odd, "wgmma_3xtf32");
  plan = plan_gemm("wgmma_fp16x3", &odd);
  assert_int_equal(plan.steps, 2);
  (void)auto_emulated_runs_at(4096, 4096, 4096, 1, 1, "wgmma_3xtf32");
  /* The split: a block a unit of lines (4096 rows of A, 8 a block; 4096
   * columns of B, 16 a block), or n blocks an SM walking them. */
  const pg_gemm_desc square = layout_gemm(4096, 4096, 4096, 0, 0, 1, 0);
  plan = plan_gemm("wgmma_fp16x3", &square);
  assert_int_equal(plan.step[0].grid_x, 4096 / 8 + 4096 / 16);
  static pg_device walking;
  walking = h200();
  walking.tuning.fp16x3_split_blocks_per_sm = 2;
  assert_int_equal(pg_plan_prepare_on(&plan, &walking, pg_variant_find("wgmma_fp16x3"), 0, &square),
                   PG_OK);
  assert_int_equal(plan.step[0].grid_x, 2 * 132);
  /* alpha = 0: C = beta C alone. */
  pg_gemm_desc zero = layout_gemm(1000, 512, 700, 0, 0, 1, 0);
  zero.alpha = 0.0f;
  plan = plan_gemm("wgmma_fp16x3", &zero);
  assert_int_equal(plan.steps, 1);
  assert_int_equal(plan.then.step, 0);
}

/* `entry`'s launch on `gemm`, as auto's model sees it (pg_decide_entry). */
static pg_kernel_launch model_launch(const char *entry, const pg_gemm_desc *gemm) {
  static pg_device device;
  device = h200();
  pg_plan plan;
  memset(&plan, 0, sizeof plan);
  pg_set_problem(&plan.args, gemm);
  pg_kernel_launch launch;
  const pg_variant_info *info = pg_variant_find(entry);
  assert_int_equal(pg_decide_entry(&device, pg_entry_of(info), info->default_stages, &plan,
                                   &launch, 1),
                   PG_OK);
  return launch;
}

/* The emulated entries' first kernels as memory traffic in auto's model
 * (first_bytes): wgmma_fp16x3's split reads each element of op(A)'s rows
 * and op(B)'s columns twice and writes two FP16 of it (each A of a batch,
 * a shared B once); wgmma_3xtf32's reads A once and writes its two parts,
 * and copies B where TMA cannot read it (ldb 1001). With the rules' fixed
 * time a call (call_us), auto_emulated runs strict FP32 at 512^3, where
 * 3xTF32 was 0.78x cuBLAS strict and auto 1.10x, and 3xTF32 at 768^3 (1.27
 * against 1.14x; H100, bench/results/products). And pg_then_alone, which
 * the plan and the selectors ask of the wide tiles' entry. */
static void test_emulated_model(void **state) {
  (void)state;
  const pg_gemm_desc batch = layout_gemm(300, 260, 200, 0, 0, 3, 1);
  assert_true(model_launch("wgmma_fp16x3", &batch).model.first_bytes ==
              12.0 * 200 * (3 * 300 + 260));
  const pg_gemm_desc odd = layout_gemm(1000, 1001, 700, 0, 0, 1, 0);
  assert_true(model_launch("wgmma_3xtf32", &odd).model.first_bytes ==
              4.0 * (3 * 1000 * 700 + 2 * 700 * 1001));
  const pg_gemm_desc fused = layout_gemm(1000, 512, 700, 0, 0, 1, 0);
  assert_true(model_launch("wgmma_3xtf32", &fused).model.first_bytes == 0.0);
  const pg_gemm_desc small = layout_gemm(512, 512, 512, 0, 0, 1, 0);
  assert_int_equal(plan_gemm("auto_emulated", &small).entry->info.precision,
                   PG_PRECISION_STRICT);
  (void)auto_emulated_runs_at(768, 768, 768, 0, 1, "wgmma_3xtf32");
  /* The wide tiles' entry runs alone where its split is inside (op(A) =
   * N, 16-byte rows), not where it needs its first kernel (op(A) = T, ldb
   * 1001), nor where it is not in the build. */
  const pg_device device = h200();
  pg_layout_args problem;
  pg_set_problem(&problem, &fused);
  assert_int_equal(pg_then_alone(&device, "wgmma_3xtf32", &problem), PG_OK);
  assert_int_equal(pg_then_alone(&device, "no_such_entry", &problem), PG_ERR_UNSUPPORTED);
  pg_set_problem(&problem, &odd);
  assert_int_equal(pg_then_alone(&device, "wgmma_3xtf32", &problem), PG_ERR_UNSUPPORTED);
  const pg_gemm_desc a_t = layout_gemm(1000, 512, 700, 1, 0, 1, 0);
  pg_set_problem(&problem, &a_t);
  assert_int_equal(pg_then_alone(&device, "wgmma_3xtf32", &problem), PG_ERR_UNSUPPORTED);
}

/* Stream-K: two tiles of partial sums a block, and the fix-up after. */
static void test_stream_k(void **state) {
  (void)state;
  const pg_plan plan = plan_of("tma_ws_streamk", 1408, 1408, 4096, ALIGNED(0x10000000), 4096,
                               ALIGNED(0x18000000), 1408, 1.0f);
  if (plan.stream_k_blocks == 0) skip(); /* every tile whole at this shape on this model */
  assert_int_equal(plan.steps, 2);
  assert_int_equal(plan.workspace.bytes,
                   (size_t)plan.stream_k_blocks * 2 * 128 * 128 * sizeof(float));
  /* The blocks the plan reports are the ones its kernel shares the K steps
   * among (tma_ws's own settings). */
  tws_own own;
  memcpy(&own, plan.args.own, sizeof own);
  assert_int_equal(own.stream_k, 1);
  assert_int_equal(own.sk_blocks, plan.stream_k_blocks);
  pg_layout_args main, last;
  pg_plan_step_args(&plan, 0, BASE, &main);
  pg_plan_step_args(&plan, 1, BASE, &last);
  assert_ptr_equal(main.partials, BASE);
  assert_ptr_equal(last.partials, BASE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_kernel),
      cmocka_unit_test(test_scale_only),
      cmocka_unit_test(test_split_planes),
      cmocka_unit_test(test_copied_operand_then_planes),
      cmocka_unit_test(test_emulated_parts),
      cmocka_unit_test(test_transposed_b),
      cmocka_unit_test(test_layouts_and_batches),
      cmocka_unit_test(test_b_transposed_read_in_place),
      cmocka_unit_test(test_a_transposed),
      cmocka_unit_test(test_batch_one_launch),
      cmocka_unit_test(test_layout_refusals),
      cmocka_unit_test(test_short_side_at_other_layouts),
      cmocka_unit_test(test_stream_k),
      cmocka_unit_test(test_wide_tiles_after),
      cmocka_unit_test(test_emulated_model),
  };
  return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
