/* The tuning table (src/tuning.c) without a GPU: each selector's rules of
 * its own class and in their entries' stage ranges, auto_emulated's list
 * built from auto's, the untuned row, and the PIPEGEMM_* overrides (read
 * once; re-read here where a test sets them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "tuning.h"

static void test_tuning_table(void **state) {
  (void)state;
  unsetenv("PIPEGEMM_TMA_WS_GROUP_M");
  unsetenv("PIPEGEMM_TMA_WS_BLOCKS_PER_SM");
  pg_tuning_reread_environment();
  pg_tuning h200 = pg_tuning_for(90, 132);
  assert_non_null(strstr(h200.measured_on, "H200"));
  assert_true(h200.tma_ws_group_m >= 1);
  assert_true(h200.tma_ws_blocks_per_sm >= 0);
  /* auto's rules: every candidate a registry entry that is not a selector,
   * at a stage count it takes, with a speed and the blocks an SM holds;
   * speeds in units of tma_ws's (its own 100); at the end one that needs
   * neither TMA nor sm_80. */
  int rules = 0, flagship = -1;
  for (; rules < PG_AUTO_MAX_RULES && h200.auto_rules[rules].variant != NULL; ++rules) {
    const pg_auto_rule *r = &h200.auto_rules[rules];
    const pg_variant_info *v = pg_variant_find(r->variant);
    assert_non_null(v);
    assert_int_not_equal(v->kind, PG_KIND_SELECTOR);
    assert_true(r->stages == 0 || (r->stages >= v->min_stages && r->stages <= v->max_stages));
    assert_true(r->speed_percent > 0 && r->speed_percent <= 200);
    assert_true(r->blocks_per_sm >= 1);
    if (strcmp(r->variant, "tma_ws") == 0) flagship = rules;
  }
  assert_true(rules >= 2);
  assert_true(rules < PG_AUTO_MAX_RULES); /* the list ends at a NULL variant */
  assert_true(flagship >= 0);
  assert_int_equal(h200.auto_rules[flagship].speed_percent, 100);
  /* A way out on every GPU (a rule below sm_80), and for every layout and
   * batch (a rule that takes them all). */
  int below_sm80 = 0, any_layout = 0;
  for (int i = 0; i < rules; ++i) {
    const pg_variant_info *v = pg_variant_find(h200.auto_rules[i].variant);
    below_sm80 |= v->min_cc < 80;
    any_layout |= v->layouts == PG_LAYOUT_ANY;
  }
  assert_true(below_sm80);
  assert_true(any_layout);
  assert_true(h200.tma_ws_split_min_k_tiles >= 1);

  /* auto_tf32's rules: TF32 or strict kernel entries (strict is within
   * TF32's bound), never emulated, in their stage ranges, speeds in units
   * of cuBLAS TF32's (no candidate is faster than it was measured), one
   * TF32 entry that needs no sm_90 and takes any layout (mma.sync). */
  int tf32_rules = 0, tf32_way_out = 0;
  for (; tf32_rules < PG_AUTO_MAX_RULES && h200.auto_tf32_rules[tf32_rules].variant != NULL;
       ++tf32_rules) {
    const pg_auto_rule *r = &h200.auto_tf32_rules[tf32_rules];
    const pg_variant_info *v = pg_variant_find(r->variant);
    assert_non_null(v);
    assert_int_equal(v->kind, PG_KIND_KERNEL);
    assert_true(v->precision == PG_PRECISION_TF32 || v->precision == PG_PRECISION_STRICT);
    assert_true(r->stages >= v->min_stages && r->stages <= v->max_stages);
    assert_true(r->speed_percent > 0 && r->speed_percent <= 100);
    assert_true(r->blocks_per_sm >= 1);
    tf32_way_out |= v->precision == PG_PRECISION_TF32 && v->min_cc < 90 &&
                    v->layouts == PG_LAYOUT_ANY;
  }
  assert_true(tf32_rules >= 2);
  assert_true(tf32_rules < PG_AUTO_MAX_RULES);
  assert_true(tf32_way_out);
  const pg_variant_info *auto_tf32 = pg_variant_find("auto_tf32");
  assert_non_null(auto_tf32);
  assert_int_equal(auto_tf32->kind, PG_KIND_SELECTOR);
  assert_int_equal(auto_tf32->precision, PG_PRECISION_TF32);

  /* auto_emulated's rules: FP32-accurate kernels only (emulated or
   * strict), every one of auto's among them (it is never predicted slower
   * than auto), an emulated one first. */
  int emulated_rules = 0, strict_rules = 0;
  for (; emulated_rules < PG_AUTO_MAX_RULES &&
         h200.auto_emulated_rules[emulated_rules].variant != NULL;
       ++emulated_rules) {
    const pg_auto_rule *r = &h200.auto_emulated_rules[emulated_rules];
    const pg_variant_info *v = pg_variant_find(r->variant);
    assert_non_null(v);
    assert_int_equal(v->kind, PG_KIND_KERNEL);
    assert_true(v->precision == PG_PRECISION_EMULATED || v->precision == PG_PRECISION_STRICT);
    assert_true(r->stages >= v->min_stages && r->stages <= v->max_stages);
    assert_true(r->k_overhead >= 0);
    if (v->precision == PG_PRECISION_STRICT) ++strict_rules;
  }
  assert_true(emulated_rules < PG_AUTO_MAX_RULES);
  assert_int_equal(pg_variant_find(h200.auto_emulated_rules[0].variant)->precision,
                   PG_PRECISION_EMULATED);
  assert_int_equal(strict_rules, rules);
  for (int i = 0; i < rules; ++i) {
    int found = 0;
    for (int j = 0; j < emulated_rules; ++j)
      found |= strcmp(h200.auto_rules[i].variant, h200.auto_emulated_rules[j].variant) == 0 &&
               h200.auto_rules[i].speed_percent == h200.auto_emulated_rules[j].speed_percent &&
               h200.auto_rules[i].stages == h200.auto_emulated_rules[j].stages;
    assert_true(found);
  }
  assert_int_equal(pg_variant_find("auto_emulated")->precision, PG_PRECISION_EMULATED);
  assert_true(h200.emulated_sum_steps >= 1);
  /* Its tuning run's override: the steps at every K. */
  assert_int_equal(setenv("PIPEGEMM_EMULATED_SUM_STEPS", "0", 1), 0);
  pg_tuning_reread_environment();
  const pg_tuning all_on_tensor_cores = pg_tuning_for(90, 132);
  assert_int_equal(all_on_tensor_cores.emulated_sum_steps, 0);
  assert_int_equal(all_on_tensor_cores.emulated_sum_min_k, 0);
  assert_int_equal(unsetenv("PIPEGEMM_EMULATED_SUM_STEPS"), 0);
  pg_tuning_reread_environment();
  assert_int_equal(pg_tuning_for(90, 132).emulated_sum_min_k, h200.emulated_sum_min_k);
  assert_true(h200.emulated_split_min_k_tiles >= 1);
  assert_int_equal(setenv("PIPEGEMM_EMULATED_SPLIT_MIN_K_TILES", "3", 1), 0);
  pg_tuning_reread_environment();
  assert_int_equal(pg_tuning_for(90, 132).emulated_split_min_k_tiles, 3);
  assert_int_equal(unsetenv("PIPEGEMM_EMULATED_SPLIT_MIN_K_TILES"), 0);
  pg_tuning_reread_environment();
  assert_true(h200.emulated_fused_max_n > 0);
  assert_int_equal(setenv("PIPEGEMM_EMULATED_FUSED_SPLIT", "0", 1), 0);
  pg_tuning_reread_environment();
  assert_int_equal(pg_tuning_for(90, 132).emulated_fused_max_n, 0);
  assert_int_equal(setenv("PIPEGEMM_EMULATED_FUSED_SPLIT", "1", 1), 0);
  pg_tuning_reread_environment();
  assert_int_equal(pg_tuning_for(90, 132).emulated_fused_max_n, INT_MAX);
  assert_int_equal(unsetenv("PIPEGEMM_EMULATED_FUSED_SPLIT"), 0);
  pg_tuning_reread_environment();
  assert_int_equal(h200.fp16x3_split_blocks_per_sm, 0);
  assert_int_equal(setenv("PIPEGEMM_FP16X3_SPLIT_BLOCKS_PER_SM", "2", 1), 0);
  pg_tuning_reread_environment();
  assert_int_equal(pg_tuning_for(90, 132).fp16x3_split_blocks_per_sm, 2);
  assert_int_equal(unsetenv("PIPEGEMM_FP16X3_SPLIT_BLOCKS_PER_SM"), 0);
  pg_tuning_reread_environment();
  assert_int_equal(pg_tuning_for(90, 132).fp16x3_split_blocks_per_sm, 0);
  /* A call's kernels launched programmatically unless the environment
   * asks for plain stream order (any non-zero number: programmatic). */
  assert_int_equal(h200.programmatic_launch, 1);
  assert_int_equal(setenv("PIPEGEMM_PROGRAMMATIC_LAUNCH", "0", 1), 0);
  pg_tuning_reread_environment();
  assert_int_equal(pg_tuning_for(90, 132).programmatic_launch, 0);
  assert_int_equal(setenv("PIPEGEMM_PROGRAMMATIC_LAUNCH", "7", 1), 0);
  pg_tuning_reread_environment();
  assert_int_equal(pg_tuning_for(90, 132).programmatic_launch, 1);
  assert_int_equal(setenv("PIPEGEMM_PROGRAMMATIC_LAUNCH", "off", 1), 0);
  pg_tuning_reread_environment();
  assert_int_equal(pg_tuning_for(90, 132).programmatic_launch, 1);
  assert_int_equal(unsetenv("PIPEGEMM_PROGRAMMATIC_LAUNCH"), 0);
  pg_tuning_reread_environment();

  /* Any other GPU gets a row too, with its way out. */
  pg_tuning other = pg_tuning_for(80, 108);
  assert_non_null(other.measured_on);
  assert_non_null(other.auto_rules[0].variant);
  assert_non_null(other.auto_tf32_rules[0].variant);

  /* The environment is read once: a variable set after that changes
   * nothing until it is read again (pg_tuning_reread_environment). */
  assert_int_equal(setenv("PIPEGEMM_TMA_WS_GROUP_M", "3", 1), 0);
  assert_int_equal(pg_tuning_for(90, 132).tma_ws_group_m, h200.tma_ws_group_m);
  assert_int_equal(unsetenv("PIPEGEMM_TMA_WS_GROUP_M"), 0);

  /* Overrides for tuning runs; junk is ignored. */
  char other_blocks[16];
  snprintf(other_blocks, sizeof other_blocks, "%d", h200.tma_ws_blocks_per_sm + 2);
  setenv("PIPEGEMM_TMA_WS_GROUP_M", "3", 1);
  setenv("PIPEGEMM_TMA_WS_BLOCKS_PER_SM", other_blocks, 1);
  pg_tuning_reread_environment();
  pg_tuning t = pg_tuning_for(90, 132);
  assert_int_equal(t.tma_ws_group_m, 3);
  assert_int_equal(t.tma_ws_blocks_per_sm, h200.tma_ws_blocks_per_sm + 2);
  /* The persistent grid at few K steps: on the H200 where K <= 128, at a
   * gain above the 1 % that tma_ws_m256's rule holds over tma_ws's; the
   * environment's blocks an SM, where set, decide at every K. */
  assert_int_equal(h200.tma_ws_persistent_max_k_tiles, 4);
  assert_true(h200.tma_ws_persistent_speed_percent > 101);
  assert_int_equal(t.tma_ws_persistent_max_k_tiles, 0);
  setenv("PIPEGEMM_TMA_WS_GROUP_M", "many", 1);
  setenv("PIPEGEMM_TMA_WS_BLOCKS_PER_SM", "-2", 1);
  pg_tuning_reread_environment();
  t = pg_tuning_for(90, 132);
  assert_int_equal(t.tma_ws_group_m, h200.tma_ws_group_m);
  assert_int_equal(t.tma_ws_blocks_per_sm, h200.tma_ws_blocks_per_sm);
  assert_int_equal(t.tma_ws_persistent_max_k_tiles, h200.tma_ws_persistent_max_k_tiles);
  unsetenv("PIPEGEMM_TMA_WS_GROUP_M");
  unsetenv("PIPEGEMM_TMA_WS_BLOCKS_PER_SM");
  pg_tuning_reread_environment();
}

/* Rule list `a` (room for `room` rules) holds `b`'s rules in `b`'s order,
 * every field the same, and ends where `b` ends. Returns their count. */
static int assert_same_rules(const pg_auto_rule *a, int room, const pg_auto_rule *b) {
  int i = 0;
  for (; i < PG_AUTO_MAX_RULES && b[i].variant != NULL; ++i) {
    assert_true(i < room);
    assert_non_null(a[i].variant);
    assert_string_equal(a[i].variant, b[i].variant);
    assert_int_equal(a[i].stages, b[i].stages);
    assert_int_equal(a[i].speed_percent, b[i].speed_percent);
    assert_int_equal(a[i].blocks_per_sm, b[i].blocks_per_sm);
    assert_int_equal(a[i].k_overhead, b[i].k_overhead);
    assert_int_equal(a[i].k_block_overhead, b[i].k_block_overhead);
  }
  assert_true(i < room);
  assert_null(a[i].variant);
  return i;
}

/* auto_emulated's list is derived, not copied: its emulated entries'
 * rules, then auto's list whole, in auto's order, every field the same,
 * and nothing after it. A hand-kept copy out of step with auto's (a rule
 * changed, moved, added or left out) fails here. */
static void assert_emulated_follows_strict(const pg_tuning *t) {
  const pg_auto_rule *emulated = t->auto_emulated_rules;
  int own = 0;
  while (own < PG_AUTO_MAX_RULES && emulated[own].variant != NULL &&
         pg_variant_find(emulated[own].variant) != NULL &&
         pg_variant_find(emulated[own].variant)->precision == PG_PRECISION_EMULATED)
    ++own;
  assert_true(own >= 1);
  assert_true(assert_same_rules(emulated + own, PG_AUTO_MAX_RULES - own, t->auto_rules) >= 2);
}

static void test_emulated_rules_follow_strict(void **state) {
  (void)state;
  const pg_tuning h200 = pg_tuning_row(90, 132), untuned = pg_tuning_row(80, 108);
  assert_emulated_follows_strict(&h200);
  assert_emulated_follows_strict(&untuned);
}

/* The untuned row (any GPU not tuned, an H200 of another SM count too) is
 * the H200's values under its own name; skinny_ffma's rates, written by
 * index, leave no form out. */
static void test_untuned_row(void **state) {
  (void)state;
  const pg_tuning h200 = pg_tuning_row(90, 132);
  const pg_tuning untuned[] = {pg_tuning_row(75, 40), pg_tuning_row(90, 114)};
  for (int u = 0; u < 2; ++u) {
    const pg_tuning *t = &untuned[u];
    assert_int_equal(t->cc, 0);
    assert_int_equal(t->sm_count, 0);
    assert_non_null(strstr(t->measured_on, "untuned"));
    assert_int_equal(t->tma_ws_group_m, h200.tma_ws_group_m);
    assert_int_equal(t->tma_ws_persistent_max_k_tiles, h200.tma_ws_persistent_max_k_tiles);
    assert_int_equal(t->emulated_sum_min_k, h200.emulated_sum_min_k);
    assert_int_equal(t->skinny_ring_percent, h200.skinny_ring_percent);
    assert_memory_equal(t->skinny_rate_percent, h200.skinny_rate_percent,
                        sizeof h200.skinny_rate_percent);
    assert_same_rules(t->auto_rules, PG_AUTO_MAX_RULES, h200.auto_rules);
    assert_same_rules(t->auto_tf32_rules, PG_AUTO_MAX_RULES, h200.auto_tf32_rules);
    assert_same_rules(t->auto_emulated_rules, PG_AUTO_MAX_RULES, h200.auto_emulated_rules);
  }
  for (int f = 0; f < PG_SKINNY_FORMS; ++f) assert_true(h200.skinny_rate_percent[f] > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tuning_table),
      cmocka_unit_test(test_emulated_rules_follow_strict),
      cmocka_unit_test(test_untuned_row),
  };
  return cmocka_run_group_tests_name("tuning", tests, NULL, NULL);
}
