/* auto's choice: the selectors' registry entries, the model that predicts
 * each candidate's speed on a problem from its plan and its rule in the
 * tuning table (src/tuning.c), and the questions about it (pg_auto_select,
 * pg_auto_model, pg_auto_candidate). */
#include <string.h>

#include "internal.h"

/* The selectors' registry entries: each runs what choose() picks for the
 * call among its rules' entries of its own precision class (auto: strict
 * IEEE FP32, auto_tf32: TF32 products), or strict (within the two other
 * classes' bounds: auto_emulated's FP32-accurate entries, auto_tf32's
 * short sides). */
const pg_variant_entry pg_entry_auto = {
    .info = {.name = "auto", .kind = PG_KIND_SELECTOR, .layouts = PG_LAYOUT_ANY,
             .technique = "the best predicted variant for this GPU and shape",
             .source = "", .min_cc = 50,
             .description = "the best predicted variant for this GPU and shape (pg_auto_select, "
                            "src/tuning.c)"},
};
const pg_variant_entry pg_entry_auto_tf32 = {
    .info = {.name = "auto_tf32", .kind = PG_KIND_SELECTOR, .precision = PG_PRECISION_TF32,
             .layouts = PG_LAYOUT_ANY,
             .technique = "the best predicted TF32-accurate variant",
             .source = "", .min_cc = 80,
             .description = "the best predicted TF32-accurate variant for this GPU and shape: "
                            "TF32 tensor cores, or strict FP32 where memory sets the pace "
                            "(src/tuning.c)"},
};
const pg_variant_entry pg_entry_auto_emulated = {
    .info = {.name = "auto_emulated", .kind = PG_KIND_SELECTOR, .layouts = PG_LAYOUT_ANY,
             .precision = PG_PRECISION_EMULATED,
             .technique = "the best predicted FP32-accurate variant",
             .source = "", .min_cc = 50,
             .description = "the best predicted FP32-accurate variant for this GPU and shape: "
                            "tensor-core emulation or strict FP32 (src/tuning.c)"},
};

/* The blocks a candidate's plan launches (grid_y and grid_z 0 count as 1). */
static long long launch_blocks(const pg_kernel_launch *kernel) {
  return kernel->grid_x * (kernel->grid_y > 0 ? kernel->grid_y : 1) *
         (kernel->grid_z > 0 ? kernel->grid_z : 1);
}

/* auto's prediction for a candidate's plan (src/tuning.h), in the rule's
 * unit: the plan's time is its kernel's at its speed where its waves are
 * full x the fill of its waves x the share of its tiles' area that is the
 * problem's x (with fixed costs in K) K over K plus a tile's cost and a
 * block's K over itself plus a block's cost x a persistent grid's factor;
 * plus a first kernel's bytes at the tuning row's FLOPs a byte; plus the
 * rule's fixed time a call. `unit_tflops`: what the rule's 100 stands for. */
static double predicted_speed(const pg_device *dev, const pg_auto_rule *rule,
                              const pg_variant_info *info, const pg_layout_args *args,
                              const pg_kernel_launch *kernel, int unit_tflops) {
  double fill = 1.0, useful = 1.0;
  const long long blocks = launch_blocks(kernel);
  const long long slots = (long long)(rule->blocks_per_sm > 0 ? rule->blocks_per_sm : 1) *
                          dev->sm_count;
  if (kernel->model.fill > 0.0)
    fill = kernel->model.fill;
  else if (blocks > 0)
    fill = (double)blocks / (double)(((blocks + slots - 1) / slots) * slots);
  if (kernel->model.speed_share > 0.0) {
    useful = kernel->model.speed_share;
  } else if (info->tile_m > 0 && info->tile_n > 0) {
    const long long tiles_m = ((long long)args->m + info->tile_m - 1) / info->tile_m;
    const long long tiles_n = ((long long)args->n + info->tile_n - 1) / info->tile_n;
    useful = (double)args->m * args->n /
             ((double)tiles_m * info->tile_m * (double)tiles_n * info->tile_n);
  }
  const double k = args->k > 0 ? (double)args->k : 0.0;
  const double kb = info->tile_k > 0 ? (double)pg_block_k(args, info->tile_k) : k;
  const double k_share = rule->k_overhead > 0 ? k / (k + rule->k_overhead) : 1.0;
  const double kb_share = rule->k_block_overhead > 0 ? kb / (kb + rule->k_block_overhead) : 1.0;
  const double factor =
      kernel->persistent_blocks_per_sm > 0 && kernel->model.speed_factor > 0.0 ? kernel->model.speed_factor
                                                                         : 1.0;
  const double speed = rule->speed_percent * fill * useful * k_share * kb_share * factor;
  /* The costs in time, as FLOPs at the FP32 unit's rate (flops_per_byte
   * is that rate over the memory's), then in the rule's unit. */
  const double work = 2.0 * (double)args->m * args->n * k * (args->batch > 1 ? args->batch : 1);
  const double fp32_unit = dev->tuning.unit_tflops;
  const double fp32_flops = kernel->model.first_bytes * dev->tuning.flops_per_byte +
                            rule->call_us * 1e6 * fp32_unit;
  if (speed <= 0.0 || work <= 0.0 || fp32_flops <= 0.0 || fp32_unit <= 0.0 || unit_tflops <= 0)
    return speed;
  return 100.0 * work / (100.0 * work / speed + fp32_flops * unit_tflops / fp32_unit);
}

/* The entry a tuning rule names, if a selector of `precision` may run it: a
 * registered entry, no selector, and of that precision class (auto is
 * strict), or strict for the emulated and TF32 selectors (strict FP32 is
 * within both classes' bounds: where memory, not the tensor cores, sets
 * the pace, an FFMA kernel is their fastest); NULL otherwise, and the rule
 * is skipped. choose() and pg_auto_candidate() ask it alike. */
static const pg_variant_entry *auto_rule_entry(const pg_auto_rule *rule,
                                               pg_precision precision) {
  const pg_variant_entry *entry = pg_entry_find(rule->variant);
  if (entry == NULL || entry->info.kind == PG_KIND_SELECTOR) return NULL;
  const pg_precision own = entry->info.precision;
  if (own != precision && own != PG_PRECISION_STRICT) return NULL;
  return entry;
}

/* A selector's rules in the device's tuning row. */
static const pg_auto_rule *selector_rules(const pg_device *dev, const pg_variant_info *selector) {
  switch (selector->precision) {
    case PG_PRECISION_TF32: return dev->tuning.auto_tf32_rules;
    case PG_PRECISION_EMULATED: return dev->tuning.auto_emulated_rules;
    default: return dev->tuning.auto_rules;
  }
}

/* What speed_percent 100 stands for in a selector's rules, TFLOP/s. */
static int selector_unit_tflops(const pg_device *dev, const pg_variant_info *selector) {
  return selector->precision == PG_PRECISION_TF32 ? dev->tuning.tf32_unit_tflops
                                                  : dev->tuning.unit_tflops;
}

/* A rule's stage count for its candidate: the rule's, or the entry's
 * default; 0 where it is past the entry's range (the rule is skipped). */
static int rule_stages(const pg_auto_rule *rule, const pg_variant_info *info) {
  const int s = rule->stages != 0 ? rule->stages : info->default_stages;
  return s < info->min_stages || s > info->max_stages ? 0 : s;
}

/* One rule's candidate on the problem at `stages`: plans it (plan->args
 * from `problem`) and, where the device runs it, its predicted speed in
 * the rule's unit (unit_tflops). */
static pg_status rule_speed(const pg_device *dev, const pg_auto_rule *rule,
                            const pg_variant_entry *candidate, int stages, int unit_tflops,
                            const pg_layout_args *problem, pg_plan *plan, pg_kernel_launch *kernel,
                            double *speed) {
  plan->args = *problem;
  const pg_status st = pg_decide_entry(dev, candidate, stages, plan, kernel, 1);
  if (st != PG_OK) return st;
  /* Its kernel would compute the tiles its then-entry cannot take, far
   * slower on inputs that have such tiles. */
  if (kernel->then.entry != NULL) {
    const pg_status then = pg_then_alone(dev, kernel->then.entry, problem);
    if (then != PG_OK && !pg_is_refusal(then)) return then;
    if (then != PG_OK) {
      pg_set_error_detail("%s: %s cannot take its wide tiles here, which its own kernel then "
                          "takes far slower; a selector leaves it out",
                          candidate->info.name, kernel->then.entry);
      return PG_ERR_UNSUPPORTED;
    }
  }
  *speed = predicted_speed(dev, rule, &candidate->info, &plan->args, kernel, unit_tflops);
  return PG_OK;
}

/* A selector's candidates on `problem`, in its rules' order, a row each
 * (rule_stages, rule_speed); *chosen the first of the best predicted, -1
 * if none runs. It stops after a candidate that found the device out of
 * memory, whose row is then the last. plan->args and *kernel are left as
 * the last candidate planned them. */
static int rank_candidates(const pg_device *dev, const pg_variant_info *selector,
                           const pg_layout_args *problem, pg_plan *plan, pg_kernel_launch *kernel,
                           pg_model_row *rows, int max_rows, int *chosen) {
  const pg_auto_rule *rules = selector_rules(dev, selector);
  const int unit = selector_unit_tflops(dev, selector);
  int count = 0;
  double best = -1.0;
  *chosen = -1;
  for (int i = 0; i < PG_AUTO_MAX_RULES && rules[i].variant != NULL && count < max_rows; ++i) {
    const pg_variant_entry *candidate = auto_rule_entry(&rules[i], selector->precision);
    if (candidate == NULL) continue;
    const int s = rule_stages(&rules[i], &candidate->info);
    if (s == 0) continue;
    pg_model_row *row = &rows[count++];
    row->variant = &candidate->info;
    row->stages = s;
    row->speed = 0.0;
    row->blocks = row->block_k = 0;
    row->status =
        rule_speed(dev, &rules[i], candidate, s, unit, problem, plan, kernel, &row->speed);
    if (row->status == PG_OK) {
      row->blocks = launch_blocks(kernel);
      row->block_k = candidate->info.tile_k > 0 ? pg_block_k(&plan->args, candidate->info.tile_k)
                                                : plan->args.k;
    }
    if (row->status == PG_ERR_NO_MEMORY) break;
    if (row->status == PG_OK && row->speed > best) {
      best = row->speed;
      *chosen = count - 1;
    }
  }
  return count;
}

/* auto: of the tuning table's candidates that the device runs on this
 * problem, the best predicted. Their refusals are no error of the call: the
 * detail is cleared once one runs. */
pg_status pg_auto_choose(const pg_device *dev, const pg_variant_info *selector, pg_plan *plan,
                        const pg_variant_entry **entry, int *stages, pg_kernel_launch *kernel) {
  const pg_layout_args problem = plan->args; /* each candidate's configure starts from it */
  const cudaError_t cuda_error_before = pg_last_cuda_error();
  pg_model_row rows[PG_AUTO_MAX_RULES];
  int chosen = -1;
  const int count =
      rank_candidates(dev, selector, &problem, plan, kernel, rows, PG_AUTO_MAX_RULES, &chosen);
  /* Out of memory is no answer about the candidate: choosing past it
   * would make the choice depend on the moment. */
  if (count > 0 && rows[count - 1].status == PG_ERR_NO_MEMORY) return PG_ERR_NO_MEMORY;
  plan->args = problem;
  /* None runs: the last refusal's status and detail. */
  if (chosen < 0) {
    const pg_status last = count > 0 ? rows[count - 1].status : PG_ERR_ARCH;
    if (last != PG_OK) return last;
    /* Every candidate planned, none with a speed to rank (no problem has
     * that; kept so that a model's NaN is never an answer). */
    pg_set_error_detail("no candidate has a predicted speed at %d x %d x %d", problem.m,
                        problem.n, problem.k);
    return PG_ERR_UNSUPPORTED;
  }
  const pg_variant_entry *best = pg_entry_of(rows[chosen].variant);
  /* The winner's plan again: the candidates after it wrote theirs. */
  pg_status st = pg_decide_entry(dev, best, rows[chosen].stages, plan, kernel, 1);
  if (st != PG_OK) return st;
  *entry = best;
  *stages = rows[chosen].stages;
  pg_clear_error_detail();
  pg_restore_last_cuda_error(cuda_error_before);
  return PG_OK;
}

/* What the questions about auto have in common: a place for the answer,
 * and the current device. */
static pg_status auto_question(const pg_variant_info **variant, const int *stages,
                               const pg_device **dev) {
  pg_clear_error_detail();
  if (variant == NULL || stages == NULL) {
    pg_set_error_detail("no place for the answer given (NULL)");
    return PG_ERR_INVALID_ARG;
  }
  return pg_device_current(dev);
}

/* A selector's choice for a checked description: NULL and 0 where there is
 * nothing to do. */
static pg_status choice_for(const pg_variant_info *selector, const pg_gemm_desc *gemm,
                            const pg_variant_info **variant, int *stages) {
  pg_status st = pg_check_problem(gemm);
  if (st == PG_OK && pg_gemm_is_empty(gemm)) { /* as pg_gemm: nothing to do, so nothing runs */
    *variant = NULL;
    *stages = 0;
    return PG_OK;
  }
  if (st == PG_OK) st = pg_check_int_lds(gemm);
  const pg_device *dev = NULL;
  if (st == PG_OK) st = pg_device_current(&dev);
  if (st != PG_OK) return st;
  pg_plan plan;
  memset(&plan, 0, sizeof plan);
  pg_set_problem(&plan.args, gemm);
  const pg_variant_entry *entry = NULL;
  pg_kernel_launch kernel;
  int chosen_stages = 0;
  st = pg_auto_choose(dev, selector, &plan, &entry, &chosen_stages, &kernel);
  if (st != PG_OK) return st;
  *variant = &entry->info;
  *stages = chosen_stages;
  return PG_OK;
}

pg_status pg_auto_select(int m, int n, int k, const float *a, int lda, const float *b, int ldb,
                         const pg_variant_info **variant, int *stages) {
  pg_clear_error_detail();
  if (variant == NULL || stages == NULL) {
    pg_set_error_detail("no place for the answer given (NULL)");
    return PG_ERR_INVALID_ARG;
  }
  const pg_gemm_desc gemm = pg_gemm_desc_of(m, n, k, 1.0f, a, lda, b, ldb, 0.0f, NULL, n);
  return choice_for(&pg_entry_auto.info, &gemm, variant, stages);
}

pg_status pg_selector_choice(const pg_variant_info *selector, const pg_gemm_desc *gemm,
                             const pg_variant_info **variant, int *stages) {
  pg_clear_error_detail();
  if (variant == NULL || stages == NULL) {
    pg_set_error_detail("no place for the answer given (NULL)");
    return PG_ERR_INVALID_ARG;
  }
  if (selector == NULL || pg_entry_of(selector) == NULL || selector->kind != PG_KIND_SELECTOR) {
    pg_set_error_detail("%s is no selector (auto, auto_tf32, auto_emulated)",
                        selector != NULL && pg_entry_of(selector) != NULL ? selector->name
                                                                          : "the variant");
    return PG_ERR_INVALID_ARG;
  }
  pg_gemm_desc own;
  const pg_status st = pg_gemm_desc_read(gemm, &own);
  return st == PG_OK ? choice_for(selector, &own, variant, stages) : st;
}

int pg_auto_model(const pg_device *dev, const pg_variant_info *selector, int m, int n, int k,
                  pg_model_row *rows, int max_rows, int *chosen) {
  /* Stand-ins for A and B: the plans look at their addresses' alignment
   * alone. */
  static const float operand[4] __attribute__((aligned(16))) = {0};
  *chosen = -1;
  if (dev == NULL || selector == NULL || selector->kind != PG_KIND_SELECTOR || m < 1 || n < 1 ||
      k < 0)
    return 0;
  pg_plan plan;
  memset(&plan, 0, sizeof plan);
  const pg_gemm_desc gemm = pg_gemm_desc_of(m, n, k, 1.0f, operand, k, operand, n, 0.0f, NULL, n);
  pg_set_problem(&plan.args, &gemm);
  const pg_layout_args problem = plan.args;
  pg_kernel_launch kernel;
  const int count =
      rank_candidates(dev, selector, &problem, &plan, &kernel, rows, max_rows, chosen);
  pg_clear_error_detail();
  return count;
}

pg_device pg_device_model(int cc, int sm_count, size_t smem_optin) {
  pg_device device;
  memset(&device, 0, sizeof device);
  device.cc = cc;
  device.sm_count = sm_count;
  device.smem_optin = smem_optin;
  device.tuning = pg_tuning_row(cc, sm_count);
  device.model_only = 1;
  return device;
}

pg_status pg_auto_candidate(const pg_variant_info *selector, int index,
                            const pg_variant_info **variant, int *stages) {
  if (selector == NULL || pg_entry_of(selector) == NULL || selector->kind != PG_KIND_SELECTOR) {
    pg_set_error_detail("%s is no selector", selector != NULL ? selector->name : "(NULL)");
    return PG_ERR_INVALID_ARG;
  }
  const pg_device *dev = NULL;
  pg_status st = auto_question(variant, stages, &dev);
  if (st != PG_OK) return st;
  const pg_auto_rule *rules = selector_rules(dev, selector);
  for (int i = 0, seen = 0; i < PG_AUTO_MAX_RULES && rules[i].variant != NULL; ++i) {
    const pg_variant_entry *candidate = auto_rule_entry(&rules[i], selector->precision);
    if (candidate == NULL || seen++ != index) continue;
    *variant = &candidate->info;
    *stages = rules[i].stages;
    return PG_OK;
  }
  pg_set_error_detail("%s has no candidate %d on this GPU", selector->name, index);
  return PG_ERR_INVALID_ARG;
}

