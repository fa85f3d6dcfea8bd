/* What `pipegemm inspect` makes of cuobjdump's text (src/adapters/sass.c), on
 * fixtures trimmed from real output (tests/data/inspect_*.txt): resources,
 * the opcode census, kernel names, blocks per SM against the figures the
 * occupancy calculator gave on an H200, the mechanism check with the
 * registry's rules, and the registry's kernel entries themselves. No
 * disassembler and no GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "read_file.h"
#include "adapters/sass.h"
#include "cli/commands.h"

#ifndef PG_TEST_DATA_DIR
#error "PG_TEST_DATA_DIR must name tests/data"
#endif

/* A fixture of tests/data. */
static char *read_fixture(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", PG_TEST_DATA_DIR, name);
  return pgt_read_file(path);
}

/* Both fixtures, parsed into one dump as inspect does. */
static void load_fixtures(pgc_dump *dump) {
  pgc_dump_init(dump);
  char *res = read_fixture("inspect_res_usage.txt");
  char *sass = read_fixture("inspect_sass.txt");
  assert_int_equal(pgc_dump_res_usage_text(dump, res), 0);
  assert_int_equal(pgc_dump_sass_text(dump, sass), 0);
  free(res);
  free(sass);
}

#define CP_ASYNC "_Z18pg_cp_async_kernel12pg_gemm_args"
#define PINGPONG "_Z18pg_pingpong_kernel12pg_gemm_args"
#define BLOCK8 "_Z24pg_pipeline_block_kernelILi8EEv12pg_gemm_args"

static const pgc_kernel_record *must_find(const pgc_dump *dump, const char *arch,
                                          const char *symbol) {
  const pgc_kernel_record *kernel = pgc_dump_find(dump, arch, symbol);
  if (!kernel) print_error("%s %s not in the dump\n", arch, symbol);
  assert_non_null(kernel);
  return kernel;
}

/* ---- parsing ---------------------------------------------------------------- */

static void test_resources(void **state) {
  (void)state;
  pgc_dump dump;
  load_fixtures(&dump);
  assert_int_equal(dump.count, 4);
  assert_int_equal(dump.arch_count, 2);
  assert_string_equal(dump.archs[0], "sm_80");
  assert_string_equal(dump.archs[1], "sm_90");

  const pgc_kernel_record *k = must_find(&dump, "sm_80", CP_ASYNC);
  assert_true(k->has_resources);
  assert_int_equal(k->sm, 80);
  assert_int_equal(k->registers, 127);
  assert_int_equal(k->shared_bytes, 0);
  k = must_find(&dump, "sm_90", CP_ASYNC);
  assert_int_equal(k->registers, 128);
  assert_int_equal(k->shared_bytes, 1024);
  /* The first description of a kernel wins over a repeated one. */
  k = must_find(&dump, "sm_90", PINGPONG);
  assert_int_equal(k->registers, 163);
  assert_int_equal(k->stack_bytes, 16);
  assert_int_equal(k->shared_bytes, 17408);
  assert_int_equal(k->local_bytes, 8);
  assert_null(pgc_dump_find(&dump, "sm_80", PINGPONG));
  assert_null(pgc_dump_find(&dump, "sm_90", "pg_cp_async_kernel"));
  pgc_dump_free(&dump);
  assert_int_equal(dump.count, 0);
}

static void test_census(void **state) {
  (void)state;
  pgc_dump dump;
  load_fixtures(&dump);

  /* cp_async, sm_80: the @!PT padding LDS never runs and is not counted. */
  const pgc_kernel_record *k = must_find(&dump, "sm_80", CP_ASYNC);
  assert_true(k->has_sass);
  assert_int_equal(k->instructions, 10);
  assert_int_equal(k->family[PGC_OP_LDGSTS], 2);
  assert_int_equal(k->width[PGC_OP_LDGSTS][PGC_WIDTH_128], 1);
  assert_int_equal(k->width[PGC_OP_LDGSTS][PGC_WIDTH_32], 1);
  assert_int_equal(k->family[PGC_OP_LDGDEPBAR], 1);
  assert_int_equal(k->family[PGC_OP_DEPBAR], 1);
  assert_int_equal(k->family[PGC_OP_BAR_SYNC], 1);
  assert_int_equal(k->family[PGC_OP_LDS], 1);
  assert_int_equal(k->width[PGC_OP_LDS][PGC_WIDTH_128], 1);
  assert_int_equal(k->family[PGC_OP_LDG], 1);
  assert_int_equal(k->width[PGC_OP_LDG][PGC_WIDTH_32], 1);
  assert_int_equal(k->family[PGC_OP_FFMA], 2);
  assert_int_equal(k->family[PGC_OP_OTHER], 1); /* EXIT */
  assert_int_equal(k->family[PGC_OP_STS], 0);
  assert_int_equal(pgc_kernel_count(k, "LDGSTS"), 2);
  assert_int_equal(pgc_kernel_count(k, "LDGSTS.128"), 1);
  assert_int_equal(pgc_kernel_count(k, "DEPBAR"), 1);
  assert_int_equal(pgc_kernel_count(k, "LDS"), 1);

  /* pingpong, sm_90: the duplicate listing adds nothing. */
  k = must_find(&dump, "sm_90", PINGPONG);
  assert_int_equal(k->instructions, 8);
  assert_int_equal(k->family[PGC_OP_LDG], 3);
  assert_int_equal(k->width[PGC_OP_LDG][PGC_WIDTH_128], 2);
  assert_int_equal(k->width[PGC_OP_LDG][PGC_WIDTH_32], 1);
  assert_int_equal(k->family[PGC_OP_STS], 1);
  assert_int_equal(k->width[PGC_OP_STS][PGC_WIDTH_128], 1);
  assert_int_equal(k->family[PGC_OP_STL], 1);
  assert_int_equal(k->family[PGC_OP_LDL], 1);
  assert_int_equal(pgc_kernel_count(k, "LDG.128"), 2);

  k = must_find(&dump, "sm_90", BLOCK8);
  assert_int_equal(k->family[PGC_OP_SYNCS], 2);
  assert_int_equal(k->family[PGC_OP_ARRIVES], 1);
  assert_int_equal(k->family[PGC_OP_BULK], 1);
  assert_int_equal(k->family[PGC_OP_TMA], 0);
  assert_int_equal(pgc_kernel_count(k, "SYNCS.PHASECHK"), 1);
  assert_int_equal(pgc_kernel_count(k, "ARRIVES.LDGSTSBAR"), 1);
  /* It has resources but the sm_90 cp_async has no SASS in the fixture. */
  assert_false(must_find(&dump, "sm_90", CP_ASYNC)->has_sass);
  pgc_dump_free(&dump);
}

static void test_odd_text(void **state) {
  (void)state;
  pgc_dump dump;
  pgc_dump_init(&dump);
  /* Nothing that looks like a kernel: nothing recorded. */
  assert_int_equal(pgc_dump_sass_text(&dump, ""), 0);
  assert_int_equal(pgc_dump_sass_text(&dump, "garbage\n/*zz*/ FFMA\n   /* 0x00 */\n"), 0);
  assert_int_equal(pgc_dump_res_usage_text(&dump, "REG:3 STACK:0\n"), 0);
  assert_int_equal(dump.count, 0);
  /* Instructions before any Function line count for nobody; CRLF is fine. */
  assert_int_equal(pgc_dump_sass_text(&dump,
                                      "\tcode for sm_80\r\n"
                                      "        /*0000*/  FFMA R0, R1, R2, R3 ;\r\n"
                                      "\t\tFunction : k\r\n"
                                      "        /*0000*/  @PT FFMA.FTZ R0, R1, R2, R3 ;\r\n"
                                      "        /*0010*/  @!P1 BAR.SYNC 0x0 ;\r\n"),
                   0);
  assert_int_equal(dump.count, 1);
  const pgc_kernel_record *k = must_find(&dump, "sm_80", "k");
  assert_int_equal(k->instructions, 2);
  assert_int_equal(k->family[PGC_OP_FFMA], 1);
  assert_int_equal(k->family[PGC_OP_BAR_SYNC], 1);
  pgc_dump_free(&dump);
}

/* ---- opcodes and names --------------------------------------------------------- */

static void test_opcodes(void **state) {
  (void)state;
  assert_true(pgc_opcode_matches("LDG.E.128.CONSTANT", "LDG.128"));
  assert_true(pgc_opcode_matches("LDG.E.128.CONSTANT", "LDG"));
  assert_false(pgc_opcode_matches("LDG.E.CONSTANT", "LDG.128"));
  assert_true(pgc_opcode_matches("SYNCS.PHASECHK.TRANS64.TRYWAIT", "SYNCS.PHASECHK"));
  assert_false(pgc_opcode_matches("SYNCS.ARRIVE.TRANS64.A1T0", "SYNCS.PHASECHK"));
  assert_false(pgc_opcode_matches("LDGDEPBAR", "DEPBAR"));
  assert_true(pgc_opcode_matches("DEPBAR.LE", "DEPBAR"));
  assert_false(pgc_opcode_matches("LDGSTS.E", "LDG"));
  assert_true(pgc_opcode_matches("BAR.SYNC.DEFER_BLOCKING", "BAR.SYNC"));
  assert_false(pgc_opcode_matches("BAR.ARV", "BAR.SYNC"));
  assert_true(pgc_opcode_matches("FENCE.VIEW.ASYNC.S", "FENCE.VIEW.ASYNC"));
  assert_false(pgc_opcode_matches("FENCE.VIEW.S", "FENCE.VIEW.ASYNC"));
  assert_false(pgc_opcode_matches("LDGSTS", ""));
  assert_false(pgc_opcode_matches(NULL, "LDG"));

  assert_int_equal(pgc_op_family_of("LDG.E.U8"), PGC_OP_LDG);
  assert_int_equal(pgc_op_width_of("LDG.E.U8"), PGC_WIDTH_NARROW);
  assert_int_equal(pgc_op_width_of("LDS.64"), PGC_WIDTH_64);
  assert_int_equal(pgc_op_width_of("STS"), PGC_WIDTH_32);
  assert_int_equal(pgc_op_width_of("LDGSTS.E.BYPASS.128"), PGC_WIDTH_128);
  assert_int_equal(pgc_op_family_of("BAR.RED.POPC"), PGC_OP_BAR_OTHER);
  assert_int_equal(pgc_op_family_of("BAR.SYNC"), PGC_OP_BAR_SYNC);
  assert_int_equal(pgc_op_family_of("UTMALDG.2D"), PGC_OP_TMA);
  assert_int_equal(pgc_op_family_of("UBLKCP.S.G"), PGC_OP_BULK);
  assert_int_equal(pgc_op_family_of("FFMA.FTZ"), PGC_OP_FFMA);
  assert_int_equal(pgc_op_family_of("FFMA2"), PGC_OP_OTHER);
  assert_int_equal(pgc_op_family_of("ARRIVES.LDGSTSBAR.64"), PGC_OP_ARRIVES);
  assert_int_equal(pgc_op_family_of("LDL.64"), PGC_OP_LDL);
  assert_int_equal(pgc_op_family_of("STL"), PGC_OP_STL);
  assert_string_equal(pgc_op_family_name(PGC_OP_BAR_OTHER), "BAR other");
  assert_int_equal(pgc_width_bits(PGC_WIDTH_128), 128);
}

static void test_names(void **state) {
  (void)state;
  char name[128];
  pgc_kernel_display_name(CP_ASYNC, name, sizeof name);
  assert_string_equal(name, "pg_cp_async_kernel");
  pgc_kernel_display_name(BLOCK8, name, sizeof name);
  assert_string_equal(name, "pg_pipeline_block_kernel<8>");
  assert_int_equal(pgc_kernel_template_arg(name), 8);
  pgc_kernel_display_name("_Z1kILin3ELj7EEvv", name, sizeof name);
  assert_string_equal(name, "k<-3, 7>");
  assert_int_equal(pgc_kernel_template_arg(name), -3);
  /* Not one of the forms above: as it is, or the part that was understood. */
  pgc_kernel_display_name("plain_c_kernel", name, sizeof name);
  assert_string_equal(name, "plain_c_kernel");
  pgc_kernel_display_name("_ZN2ns1kEv", name, sizeof name);
  assert_string_equal(name, "_ZN2ns1kEv");
  pgc_kernel_display_name("_Z99short", name, sizeof name);
  assert_string_equal(name, "_Z99short");
  pgc_kernel_display_name("_Z1kI12some_typeEvv", name, sizeof name);
  assert_string_equal(name, "k<...>");
  char small[8];
  pgc_kernel_display_name(BLOCK8, small, sizeof small);
  assert_string_equal(small, "pg_pipe");
  assert_int_equal(pgc_kernel_template_arg("pg_cp_async_kernel"), -1);

  assert_true(pgc_kernel_has_stem("pg_cp_async_kernel", "pg_cp_async_kernel"));
  assert_true(pgc_kernel_has_stem("pg_pipeline_block_kernel<2>", "pg_pipeline_block_kernel"));
  assert_false(pgc_kernel_has_stem("pg_cp_async_kernel2", "pg_cp_async_kernel"));
  assert_false(pgc_kernel_has_stem("pg_cp_async", "pg_cp_async_kernel"));
  assert_false(pgc_kernel_has_stem("x", ""));
}

/* ---- blocks per SM --------------------------------------------------------------- */

static void test_blocks_per_sm(void **state) {
  (void)state;
  const pgc_arch_limits *sm80 = pgc_arch_limits_of(80);
  const pgc_arch_limits *sm90 = pgc_arch_limits_of(90);
  assert_non_null(sm80);
  assert_non_null(sm90);
  assert_null(pgc_arch_limits_of(86));
  unsigned limiters = 0;
  char text[64];

  /* What cudaOccupancyMaxActiveBlocksPerMultiprocessor said on an H200
   * (bench/results/mechanisms/README.md). */
  assert_int_equal(pgc_blocks_per_sm(sm90, 256, 128, 16384, &limiters), 2); /* cp_async */
  assert_int_equal(limiters, PGC_LIMIT_REGISTERS);
  assert_int_equal(pgc_blocks_per_sm(sm90, 256, 163, 16384, &limiters), 1); /* pingpong */
  assert_int_equal(pgc_blocks_per_sm(sm90, 320, 112, 16416, &limiters), 1); /* warp_specialized */
  assert_int_equal(pgc_blocks_per_sm(sm90, 256, 127, 8 * 4112 + 144, &limiters), 2);
  assert_int_equal(pgc_blocks_per_sm(sm90, 1024, 32, 8448, &limiters), 2); /* tiled32 */
  assert_int_equal(limiters, PGC_LIMIT_REGISTERS | PGC_LIMIT_THREADS);
  pgc_limiters_text(limiters, text, sizeof text);
  assert_string_equal(text, "registers, threads");

  /* Shared memory: (100 KiB + 1 KiB reserved) twice fits 228 KiB, not 164. */
  assert_int_equal(pgc_blocks_per_sm(sm90, 128, 32, 100 * 1024, &limiters), 2);
  assert_int_equal(limiters, PGC_LIMIT_SMEM);
  assert_int_equal(pgc_blocks_per_sm(sm80, 128, 32, 100 * 1024, &limiters), 1);
  /* 64 KiB + 1 KiB at 128 registers on sm_80: both allow 2. */
  assert_int_equal(pgc_blocks_per_sm(sm80, 256, 128, 64 * 1024, &limiters), 2);
  assert_int_equal(limiters, PGC_LIMIT_REGISTERS | PGC_LIMIT_SMEM);
  pgc_limiters_text(limiters, text, sizeof text);
  assert_string_equal(text, "registers, shared memory");
  /* A tiny block: 32 per SM at most. */
  assert_int_equal(pgc_blocks_per_sm(sm80, 32, 16, 0, &limiters), 32);
  assert_int_equal(limiters, PGC_LIMIT_BLOCKS);
  /* Does not fit at all. */
  assert_int_equal(pgc_blocks_per_sm(sm90, 256, 256, 0, &limiters), 0);
  assert_int_equal(pgc_blocks_per_sm(sm80, 256, 32, 164 * 1024, &limiters), 0);
  assert_true(limiters & PGC_LIMIT_SMEM);
  assert_int_equal(pgc_blocks_per_sm(sm90, 2048, 16, 0, &limiters), 0);
  assert_int_equal(pgc_blocks_per_sm(NULL, 256, 32, 0, &limiters), 0);
  assert_int_equal(limiters, 0);

  /* sm_90's SHARED counts the reserved KiB; sm_80's does not. */
  assert_int_equal(pgc_static_smem_bytes(sm90, 9216), 8192);
  assert_int_equal(pgc_static_smem_bytes(sm90, 1024), 0);
  assert_int_equal(pgc_static_smem_bytes(sm90, 0), 0);
  assert_int_equal(pgc_static_smem_bytes(sm80, 8192), 8192);
  assert_int_equal(pgc_static_smem_bytes(NULL, 8192), 8192);
}

/* ---- the check -------------------------------------------------------------------- */

static const pg_kernel_spec *spec_of(const char *variant) {
  const pg_variant_entry *entry = pg_entry_of(pg_variant_find(variant));
  assert_non_null(entry);
  return &entry->kernel;
}

static void test_check(void **state) {
  (void)state;
  pgc_dump dump;
  load_fixtures(&dump);
  pgc_violation found[16];

  /* cp_async's own sm_80 code holds to its rules. */
  const pg_kernel_spec *cp_async = spec_of("cp_async");
  const pgc_kernel_record *k = must_find(&dump, "sm_80", CP_ASYNC);
  assert_int_equal(pgc_check_kernel(k, cp_async->rules, cp_async->rule_count, found, 16), 0);

  /* pingpong's kernel judged by cp_async's rules: no cp.async in it. */
  k = must_find(&dump, "sm_90", PINGPONG);
  int count = pgc_check_kernel(k, cp_async->rules, cp_async->rule_count, found, 16);
  assert_int_equal(count, 4);
  assert_string_equal(found[0].opcode, "LDGSTS");
  assert_true(found[0].must_appear);
  assert_string_equal(found[1].opcode, "LDGDEPBAR");
  assert_string_equal(found[2].opcode, "DEPBAR");
  assert_string_equal(found[3].opcode, "STS");
  assert_false(found[3].must_appear);
  assert_int_equal(found[3].count, 1);
  char line[512];
  pgc_violation_line("cp_async", k, &found[0], line, sizeof line);
  assert_string_equal(line, "inspect: cp_async (sm_90, pg_pingpong_kernel): LDGSTS missing "
                            "\xe2\x80\x94 the kernel no longer shows cp.async");
  pgc_violation_line("cp_async", k, &found[3], line, sizeof line);
  assert_non_null(strstr(line, "): STS present (1) \xe2\x80\x94 "));
  /* Fewer slots than violations: the count is still all of them. */
  assert_int_equal(pgc_check_kernel(k, cp_async->rules, cp_async->rule_count, found, 1), 4);
  /* ... and pingpong's own rules hold. */
  const pg_kernel_spec *pingpong = spec_of("pingpong");
  assert_int_equal(pgc_check_kernel(k, pingpong->rules, pingpong->rule_count, found, 16), 0);

  /* Rules for sm_90 apply to sm_90 code only: pipeline_block's hold there. */
  const pg_kernel_spec *block = spec_of("pipeline_block");
  k = must_find(&dump, "sm_90", BLOCK8);
  assert_int_equal(pgc_check_kernel(k, block->rules, block->rule_count, found, 16), 0);
  pgc_dump_free(&dump);

  /* The same instructions in sm_80 code: Hopper-only ones are violations,
   * and sm_80's own mbarrier arrive (ATOMS.ARRIVE) is missing. */
  pgc_dump_init(&dump);
  char *sass = read_fixture("inspect_sass.txt");
  char *sm80 = sass;
  /* Every sm_90 of the fixture becomes sm_80. */
  for (char *p = strstr(sm80, "sm_90"); p; p = strstr(p, "sm_90")) p[3] = '8';
  for (char *p = strstr(sm80, "SM90"); p; p = strstr(p, "SM90")) p[2] = '8';
  assert_int_equal(pgc_dump_sass_text(&dump, sm80), 0);
  free(sass);
  k = must_find(&dump, "sm_80", BLOCK8);
  count = pgc_check_kernel(k, block->rules, block->rule_count, found, 16);
  int hopper = 0, atoms = 0;
  for (int i = 0; i < count; ++i) {
    if (strstr(found[i].meaning, "Hopper-only")) {
      assert_false(found[i].must_appear);
      ++hopper;
    }
    if (strcmp(found[i].opcode, "ATOMS.ARRIVE") == 0) atoms = 1;
  }
  assert_int_equal(hopper, 2); /* SYNCS (2 of them) and UBLKCP */
  assert_true(atoms);
  pgc_dump_free(&dump);
}

/* ---- the registry's kernel entries ------------------------------------------------- */

static void test_registry_kernels(void **state) {
  (void)state;
  for (int i = 0; i < pg_variant_count(); ++i) {
    const pg_variant_info *info = pg_variant_at(i);
    const pg_variant_entry *entry = pg_entry_of(info);
    const pg_kernel_spec *spec = &entry->kernel;
    if (info->kind != PG_KIND_KERNEL) {
      assert_null(spec->symbol);
      assert_int_equal(spec->rule_count, 0);
      assert_null(entry->configure);
      continue;
    }
    /* Every kernel of ours can be found, configured, and has something to prove. */
    assert_non_null(entry->configure);
    assert_non_null(spec->symbol);
    assert_true(strncmp(spec->symbol, "pg_", 3) == 0);
    if (spec->launched) assert_true(pgc_kernel_has_stem(spec->launched, spec->symbol));
    assert_non_null(spec->rules);
    assert_true(spec->rule_count > 0);
    int must = 0;
    for (int r = 0; r < spec->rule_count; ++r) {
      const pg_sass_rule *rule = &spec->rules[r];
      assert_non_null(rule->opcode);
      assert_true(strlen(rule->opcode) > 0);
      assert_non_null(rule->meaning);
      assert_true(strlen(rule->meaning) > 0);
      assert_true(rule->must_appear == 0 || rule->must_appear == 1);
      assert_true(rule->max_sm == 0 || rule->max_sm >= rule->min_sm);
      must += rule->must_appear;
    }
    assert_true(must > 0);
    for (int j = 0; j < i; ++j) {
      const pg_kernel_spec *other = &pg_entry_of(pg_variant_at(j))->kernel;
      /* Two entries may launch one kernel (a work decomposition of
       * another's), then judged by the same rules. */
      if (other->symbol && strcmp(other->symbol, spec->symbol) == 0) {
        assert_int_equal(other->rule_count, spec->rule_count);
        for (int r = 0; r < spec->rule_count; ++r) {
          assert_string_equal(other->rules[r].opcode, spec->rules[r].opcode);
          assert_int_equal(other->rules[r].must_appear, spec->rules[r].must_appear);
          assert_int_equal(other->rules[r].min_sm, spec->rules[r].min_sm);
          assert_int_equal(other->rules[r].max_sm, spec->rules[r].max_sm);
        }
      }
    }
  }
}

/* Where no cuobjdump is found, the line says where it looked and how to
 * get one: in a checkout, make deps fetches cuobjdump and nvdisasm. */
static void test_no_cuobjdump_hint(void **state) {
  (void)state;
  char line[1024];
  static const char *const configured[] = {"", "/gone/.deps/pip/nvidia/cu13/bin/cuobjdump"};
  for (size_t i = 0; i < sizeof configured / sizeof configured[0]; ++i) {
    pgc_inspect_no_cuobjdump_text(line, sizeof line, configured[i]);
    if (!strstr(line, "make deps")) print_error("no 'make deps' in: %s\n", line);
    assert_non_null(strstr(line, "make deps"));
    assert_non_null(strstr(line, ".deps/"));
    assert_non_null(strstr(line, "PG_CUOBJDUMP"));
    assert_non_null(strstr(line, configured[i][0] ? configured[i] : "none found when"));
    assert_null(strchr(line, '\n'));
    assert_true(strlen(line) < sizeof line - 1); /* whole */
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_resources),
      cmocka_unit_test(test_census),
      cmocka_unit_test(test_odd_text),
      cmocka_unit_test(test_opcodes),
      cmocka_unit_test(test_names),
      cmocka_unit_test(test_blocks_per_sm),
      cmocka_unit_test(test_check),
      cmocka_unit_test(test_registry_kernels),
      cmocka_unit_test(test_no_cuobjdump_hint),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
