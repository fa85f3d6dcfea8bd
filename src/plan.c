/* The decided call: argument checks, the device, auto's choice, the entry's
 * rules and its kernel's plan, made once (pg_plan_prepare); and the one place
 * a kernel of the library is launched (pg_plan_launch). pg_sgemm is both. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tma.h"

/* CUDA's grid limits. */
#define PG_MAX_GRID_X 2147483647LL
#define PG_MAX_GRID_Y 65535LL
/* Room for an entry's reason to reject a layout. */
#define PG_WHY_SIZE 200
/* Room for a copy of pg_last_error_detail(). */
#define PG_DETAIL_COPY 256
#define PG_KIB 1024.0

static int max_int(int a, int b) { return a > b ? a : b; }

static int is_16_byte_aligned(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* The selectors' registry entries: each runs what choose() picks for the
 * call among its rules' entries of its own precision class (auto: strict
 * IEEE FP32, auto_tf32: TF32 products), or for auto_emulated, of the
 * FP32-accurate ones: emulated and strict. */
const pg_variant_entry pg_entry_auto = {
    .info = {.name = "auto", .kind = PG_KIND_SELECTOR,
             .technique = "the best predicted variant for this GPU and shape",
             .source = "", .min_cc = 50,
             .description = "the best predicted variant for this GPU and shape (pg_auto_select, "
                            "src/tuning.c)"},
};
const pg_variant_entry pg_entry_auto_tf32 = {
    .info = {.name = "auto_tf32", .kind = PG_KIND_SELECTOR, .precision = PG_PRECISION_TF32,
             .technique = "the best predicted TF32 tensor-core variant",
             .source = "", .min_cc = 80,
             .description = "the best predicted TF32 tensor-core variant for this GPU and shape "
                            "(src/tuning.c)"},
};
const pg_variant_entry pg_entry_auto_emulated = {
    .info = {.name = "auto_emulated", .kind = PG_KIND_SELECTOR,
             .precision = PG_PRECISION_EMULATED,
             .technique = "the best predicted FP32-accurate variant",
             .source = "", .min_cc = 50,
             .description = "the best predicted FP32-accurate variant for this GPU and shape: "
                            "tensor-core emulation or strict FP32 (src/tuning.c)"},
};

/* ---- arguments -------------------------------------------------------------- */

/* A leading dimension against the BLAS rule ld >= max(1, row width). */
static pg_status check_ld(const char *ld_name, int ld, const char *width_name, int width,
                          const char *matrix) {
  if (ld >= max_int(1, width)) return PG_OK;
  pg_set_error_detail("%s = %d is below max(1, %s) = %d: %s's rows are %s = %d floats apart at "
                      "least",
                      ld_name, ld, width_name, max_int(1, width), matrix, width_name, width);
  return PG_ERR_INVALID_ARG;
}

/* The rules every entry point that takes a problem applies (pg_sgemm's
 * family and pg_auto_select), in BLAS's order: sizes, then leading
 * dimensions (before the quick return of M or N = 0), then the pointers
 * that will be read. */
static pg_status check_sizes(int m, int n, int k) {
  const struct {
    const char *name;
    int value;
  } sizes[] = {{"m", m}, {"n", n}, {"k", k}};
  for (int i = 0; i < 3; ++i)
    if (sizes[i].value < 0) {
      pg_set_error_detail("%s = %d is negative", sizes[i].name, sizes[i].value);
      return PG_ERR_INVALID_ARG;
    }
  return PG_OK;
}

static pg_status check_operand_pointers(int k, const float *a, const float *b) {
  if (k > 0 && (a == NULL || b == NULL)) {
    pg_set_error_detail("%s is NULL with k = %d > 0", a == NULL ? "A" : "B", k);
    return PG_ERR_INVALID_ARG;
  }
  return PG_OK;
}

static pg_status check_arguments(const pg_variant_info *variant, int *stages, int m, int n,
                                 int k, const float *a, int lda, const float *b, int ldb,
                                 const float *c, int ldc) {
  if (pg_variant_stages(variant, *stages, stages) != PG_OK) return PG_ERR_STAGES;
  pg_status st = check_sizes(m, n, k);
  if (st == PG_OK) st = check_ld("lda", lda, "k", k, "A");
  if (st == PG_OK) st = check_ld("ldb", ldb, "n", n, "B");
  if (st == PG_OK) st = check_ld("ldc", ldc, "n", n, "C");
  if (st != PG_OK || m == 0 || n == 0) return st;
  if (c == NULL) {
    pg_set_error_detail("C is NULL with an m x n = %d x %d result to write", m, n);
    return PG_ERR_INVALID_ARG;
  }
  return check_operand_pointers(k, a, b);
}

/* An entry pointer the caller gave: one of the registry's, or a status. */
static pg_status entry_of(const pg_variant_info *variant, const pg_variant_entry **entry) {
  if (variant == NULL) {
    pg_set_error_detail("no variant given (NULL)");
    return PG_ERR_UNKNOWN_VARIANT;
  }
  *entry = pg_entry_of(variant);
  if (*entry == NULL) {
    pg_set_error_detail("the variant is not an entry of pipegemm's registry "
                        "(use pg_variant_find or pg_variant_at)");
    return PG_ERR_INVALID_ARG;
  }
  return PG_OK;
}

/* ---- what an entry needs of the device ------------------------------------------- */

/* Whether the device loads `kernel`, one that `info`'s plan launches (`role`:
 * "kernel", "reduction"), with code for compute capability `min_cc` at least;
 * the first call loads its module onto the GPU. A load that ran out of memory
 * is PG_ERR_NO_MEMORY and is tried again at the next call. */
static pg_status load_kernel(const pg_device *dev, const pg_variant_info *info,
                             const void *kernel, const char *role, int min_cc) {
  pg_kernel_image image;
  pg_status st = pg_kernel_image_of(dev, kernel, &image);
  if (st != PG_OK) return st;
  if (image.load_error == cudaErrorMemoryAllocation) {
    st = pg_status_from_cuda(image.load_error);
    pg_set_error_detail("%s: out of device memory to load its %s's code onto the GPU (%zu "
                        "bytes free; a load needs %zu)",
                        info->name, role, image.free_bytes, PG_LOAD_HEADROOM);
    return st;
  }
  if (image.load_error != cudaSuccess) {
    st = pg_status_from_cuda(image.load_error);
    pg_set_error_detail("%s: this build holds no %s image that sm_%d loads (%s)", info->name,
                        role, dev->cc, cudaGetErrorString(image.load_error));
    return st;
  }
  /* Code compiled for an older virtual architecture than the entry needs
   * loads (the driver compiles its PTX) but holds only the trap of a kernel
   * built without its instructions. */
  if (image.ptx_version < min_cc) {
    st = pg_status_from_cuda(cudaErrorNoKernelImageForDevice);
    pg_set_error_detail("%s: this build holds its code for compute_%d only; it needs sm_%d "
                        "code or compute_%d PTX",
                        info->name, image.ptx_version, min_cc, min_cc);
    return st;
  }
  return PG_OK;
}

/* Whether the device runs `entry` at `stages` on the problem in plan->args,
 * and if so its kernel's plan in *kernel. `layout`: also apply the grid
 * limits and the entry's layout rules (0 when no real problem is at hand). */
static pg_status decide_entry(const pg_device *dev, const pg_variant_entry *entry, int stages,
                              pg_plan *plan, pg_kernel_launch *kernel, int layout) {
  const pg_variant_info *info = &entry->info;
  if (dev->cc < info->min_cc) {
    pg_set_error_detail("%s needs compute capability %d.%d; this GPU has %d.%d", info->name,
                        info->min_cc / 10, info->min_cc % 10, dev->cc / 10, dev->cc % 10);
    return PG_ERR_ARCH;
  }
  const size_t smem = entry->smem_bytes != NULL ? entry->smem_bytes(stages) : 0;
  if (smem > dev->smem_optin) {
    pg_set_error_detail("%s at %d stages needs %.1f KiB of shared memory per block; this GPU "
                        "allows %.1f KiB",
                        info->name, stages, (double)smem / PG_KIB,
                        (double)dev->smem_optin / PG_KIB);
    return PG_ERR_SMEM;
  }
  memset(kernel, 0, sizeof *kernel);
  if (info->kind == PG_KIND_KERNEL) {
    plan->args.stages = stages;
    entry->configure(&plan->args, dev, &dev->tuning, kernel);
    if (kernel->kernel == NULL) {
      pg_set_error_detail("%s has no kernel for %d stages", info->name, stages);
      return PG_ERR_STAGES;
    }
    if (!dev->model_only) {
      pg_status st = load_kernel(dev, info, kernel->kernel, "kernel", info->min_cc);
      if (st != PG_OK) return st;
    }
  }
  if (!layout) return PG_OK;
  if (kernel->grid_x > PG_MAX_GRID_X || kernel->grid_y > PG_MAX_GRID_Y) {
    pg_set_error_detail("%s would launch a grid of %lld x %lld blocks; CUDA allows %lld x %lld",
                        info->name, kernel->grid_x, kernel->grid_y, PG_MAX_GRID_X,
                        PG_MAX_GRID_Y);
    return PG_ERR_UNSUPPORTED;
  }
  if (entry->check != NULL) {
    char why[PG_WHY_SIZE];
    why[0] = '\0';
    pg_status st = entry->check(&plan->args, why, sizeof why);
    if (st != PG_OK) {
      pg_set_error_detail("%s", why);
      return st;
    }
  }
  return PG_OK;
}

/* The blocks a candidate's plan launches (grid_y 0 counts as 1). */
static long long launch_blocks(const pg_kernel_launch *kernel) {
  return kernel->grid_x * (kernel->grid_y > 0 ? kernel->grid_y : 1);
}

/* auto's prediction for a candidate's plan (src/tuning.h): its speed at
 * full waves x the fill of its waves x the share of its tiles' area that is
 * the problem's x (with fixed costs in K) K over K plus a call's cost and a
 * block's K over itself plus a block's cost (src/tuning.h) x, where a first
 * kernel copies operands TMA cannot read, K over K plus the copies' cost:
 * their bytes (read and written) at the tuning row's FLOPs a byte, over the
 * 2 M N FLOPs a unit of K is. */
static double predicted_speed(const pg_device *dev, const pg_auto_rule *rule,
                              const pg_variant_info *info, const pg_gemm_args *args,
                              const pg_kernel_launch *kernel) {
  double fill = 1.0, useful = 1.0;
  const long long blocks = launch_blocks(kernel);
  const long long slots = (long long)(rule->blocks_per_sm > 0 ? rule->blocks_per_sm : 1) *
                          dev->sm_count;
  if (kernel->fill > 0.0)
    fill = kernel->fill;
  else if (blocks > 0)
    fill = (double)blocks / (double)(((blocks + slots - 1) / slots) * slots);
  if (kernel->speed_share > 0.0) {
    useful = kernel->speed_share;
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
  double copy_share = 1.0;
  if (kernel->copied_floats > 0 && k > 0.0 && args->m > 0 && args->n > 0) {
    const double copy_k = (double)dev->tuning.flops_per_byte * 2.0 * sizeof(float) *
                          (double)kernel->copied_floats / (2.0 * (double)args->m * args->n);
    copy_share = k / (k + copy_k);
  }
  const double factor =
      kernel->persistent_blocks_per_sm > 0 && kernel->speed_factor > 0.0 ? kernel->speed_factor
                                                                         : 1.0;
  return rule->speed_percent * fill * useful * k_share * kb_share * copy_share * factor;
}

/* The entry a tuning rule names, if a selector of `precision` may run it: a
 * registered entry, no selector, and of that precision class (auto is
 * strict), or for the emulated selector of that class or strict (both are
 * FP32-accurate); NULL otherwise, and the rule is skipped. choose() and
 * pg_auto_candidate() ask it alike. */
static const pg_variant_entry *auto_rule_entry(const pg_auto_rule *rule,
                                               pg_precision precision) {
  const pg_variant_entry *entry = pg_entry_find(rule->variant);
  if (entry == NULL || entry->info.kind == PG_KIND_SELECTOR) return NULL;
  const pg_precision own = entry->info.precision;
  if (own != precision && !(precision == PG_PRECISION_EMULATED && own == PG_PRECISION_STRICT))
    return NULL;
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

/* A rule's stage count for its candidate: the rule's, or the entry's
 * default; 0 where it is past the entry's range (the rule is skipped). */
static int rule_stages(const pg_auto_rule *rule, const pg_variant_info *info) {
  const int s = rule->stages != 0 ? rule->stages : info->default_stages;
  return s < info->min_stages || s > info->max_stages ? 0 : s;
}

/* One rule's candidate on the problem at `stages`: plans it (plan->args
 * from `problem`) and, where the device runs it, its predicted speed. */
static pg_status rule_speed(const pg_device *dev, const pg_auto_rule *rule,
                            const pg_variant_entry *candidate, int stages,
                            const pg_gemm_args *problem, pg_plan *plan, pg_kernel_launch *kernel,
                            double *speed) {
  plan->args = *problem;
  const pg_status st = decide_entry(dev, candidate, stages, plan, kernel, 1);
  if (st == PG_OK) *speed = predicted_speed(dev, rule, &candidate->info, &plan->args, kernel);
  return st;
}

/* A selector's candidates on `problem`, in its rules' order, a row each
 * (rule_stages, rule_speed); *chosen the first of the best predicted, -1
 * if none runs. It stops after a candidate that found the device out of
 * memory, whose row is then the last. plan->args and *kernel are left as
 * the last candidate planned them. */
static int rank_candidates(const pg_device *dev, const pg_variant_info *selector,
                           const pg_gemm_args *problem, pg_plan *plan, pg_kernel_launch *kernel,
                           pg_model_row *rows, int max_rows, int *chosen) {
  const pg_auto_rule *rules = selector_rules(dev, selector);
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
    row->status = rule_speed(dev, &rules[i], candidate, s, problem, plan, kernel, &row->speed);
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
static pg_status choose(const pg_device *dev, const pg_variant_info *selector, pg_plan *plan,
                        const pg_variant_entry **entry, int *stages, pg_kernel_launch *kernel) {
  const pg_gemm_args problem = plan->args; /* each candidate's configure starts from it */
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
  pg_status st = decide_entry(dev, best, rows[chosen].stages, plan, kernel, 1);
  if (st != PG_OK) return st;
  *entry = best;
  *stages = rows[chosen].stages;
  pg_clear_error_detail();
  pg_restore_last_cuda_error(cuda_error_before);
  return PG_OK;
}

/* The problem's fields of the kernels' parameter. */
static void set_problem(pg_gemm_args *args, int m, int n, int k, float alpha, const float *a,
                        int lda, const float *b, int ldb, float beta, float *c, int ldc) {
  memset(args, 0, sizeof *args);
  args->m = m;
  args->n = n;
  args->k = k;
  args->alpha = alpha;
  args->beta = beta;
  args->a = a;
  args->b = b;
  args->c = c;
  args->lda = lda;
  args->ldb = ldb;
  args->ldc = ldc;
  args->vec_a = (lda % 4 == 0) && is_16_byte_aligned(a);
  args->vec_b = (ldb % 4 == 0) && is_16_byte_aligned(b);
}

/* The dynamic shared memory an entry's kernel launches with at `stages`. */
static size_t dynamic_smem_of(const pg_variant_entry *entry, int stages) {
  return entry->kernel.dynamic_smem ? entry->smem_bytes(stages) : 0;
}

/* The launch itself: block, dynamic shared memory, a persistent grid's cap,
 * the tensor maps. */
static pg_status finish_plan(pg_plan *plan, const pg_kernel_launch *kernel) {
  const pg_variant_entry *entry = plan->entry;
  plan->kernel = kernel->kernel;
  plan->threads = (unsigned)entry->info.threads;
  plan->dynamic_smem = dynamic_smem_of(entry, plan->stages);
  if (kernel->dynamic_smem > plan->dynamic_smem) plan->dynamic_smem = kernel->dynamic_smem;
  if (kernel->max_blocks_per_sm > 0) {
    /* A block's share of the SM's shared memory, its static part (the
     * kernel image's) taken off, so that that many blocks fit and no more. */
    size_t spread = pg_smem_for_blocks_per_sm(plan->device, kernel->max_blocks_per_sm);
    pg_kernel_image image;
    memset(&image, 0, sizeof image);
    if (!plan->device->model_only) {
      pg_status st = pg_kernel_image_of(plan->device, kernel->kernel, &image);
      if (st != PG_OK) return st;
    }
    spread = spread > image.static_smem ? spread - image.static_smem : 0;
    if (spread > plan->dynamic_smem) plan->dynamic_smem = spread;
  }
  long long grid_x = kernel->grid_x;
  if (kernel->persistent_blocks_per_sm > 0) {
    int fit = 0;
    cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &fit, kernel->kernel, (int)plan->threads, plan->dynamic_smem);
    if (err != cudaSuccess) return pg_status_from_cuda(err);
    const int per_sm = fit < kernel->persistent_blocks_per_sm ? fit : kernel->persistent_blocks_per_sm;
    if (per_sm > 0 && (long long)per_sm * plan->device->sm_count < grid_x)
      grid_x = (long long)per_sm * plan->device->sm_count;
  }
  plan->grid_x = (unsigned)grid_x;
  plan->grid_y = (unsigned)kernel->grid_y;
  plan->cluster_x = kernel->cluster_x > 1 ? (unsigned)kernel->cluster_x : 1;
  if (kernel->workspace_bytes > 0) {
    pg_status st = pg_device_pool(plan->device, &plan->pool);
    if (st != PG_OK) return st;
    plan->workspace_bytes = kernel->workspace_bytes;
    plan->reduce_kernel = kernel->reduce_kernel;
    plan->reduce_grid_x = (unsigned)kernel->reduce_grid_x;
    plan->reduce_grid_y = (unsigned)kernel->reduce_grid_y;
    plan->reduce_threads = (unsigned)kernel->reduce_threads;
    /* Programmatic dependent launch exists from sm_90 on; the kernels'
     * waits compile to nothing below it. */
    const int programmatic = plan->device->cc >= 90 &&
                             pg_tuning_with_env(&plan->device->tuning).programmatic_launch;
    plan->reduce_programmatic = programmatic && kernel->reduce_programmatic;
    plan->prepare_programmatic = programmatic && kernel->prepare_programmatic;
    if (kernel->reduce_kernel != NULL) {
      /* The reduction of split K is plain CUDA (reduce_splits.cu, built for
       * every architecture): no floor on its code's architecture. */
      st = load_kernel(plan->device, &entry->info, kernel->reduce_kernel, "reduction", 0);
      if (st != PG_OK) return st;
    }
    plan->prepare_kernel = kernel->prepare_kernel;
    plan->prepare_grid_x = (unsigned)kernel->prepare_grid_x;
    plan->prepare_grid_y = (unsigned)kernel->prepare_grid_y;
    plan->prepare_threads = (unsigned)kernel->prepare_threads;
    plan->prepare_a_rows = kernel->prepare_a_rows;
    plan->prepare_b_rows = kernel->prepare_b_rows;
    plan->prepare_b_ld = kernel->prepare_b_ld;
    if (kernel->prepare_kernel != NULL) {
      st = load_kernel(plan->device, &entry->info, kernel->prepare_kernel,
                       kernel->prepare_a_rows > 0 || kernel->prepare_b_rows > 0
                           ? "first kernel (operands into the workspace)"
                           : "B^T kernel",
                       0);
      if (st != PG_OK) return st;
    }
  }
  plan->tma = kernel->tma;
  if (kernel->tma != NULL) {
    /* An operand a first kernel writes (B^T, A's parts, B's copy) gets its
     * map at launch, on the workspace. */
    const int a_at_launch = kernel->prepare_a_rows > 0;
    const int b_at_launch = kernel->tma->b_k_major || kernel->prepare_b_rows > 0;
    cudaError_t err =
        pg_tma_encode(&plan->args, kernel->tma, !a_at_launch, !b_at_launch, &plan->maps);
    if (err != cudaSuccess) {
      pg_set_error_detail("%s: encoding the tensor maps failed", entry->info.name);
      return pg_status_from_cuda(err);
    }
  }
  return PG_OK;
}

/* A selector's failure is told as its own: "auto: <the candidate's reason>". */
static void name_the_selector(const pg_variant_info *variant) {
  char why[PG_DETAIL_COPY];
  snprintf(why, sizeof why, "%s", pg_last_error_detail());
  pg_set_error_detail("%s: %s", variant->name, why);
}

/* alpha = 0 or K = 0: alpha * A * B is no part of the result, and BLAS reads
 * neither A nor B; the plan launches C = beta * C instead of the entry's
 * kernel (src/kernels/scale_c.cu), with no workspace and no split. */
static int product_vanishes(const pg_gemm_args *args) {
  return args->alpha == 0.0f || args->k == 0;
}

static pg_status finish_scale_plan(pg_plan *plan) {
  pg_kernel_launch kernel;
  memset(&kernel, 0, sizeof kernel);
  pg_configure_scale_c(&plan->args, &kernel);
  pg_status st = load_kernel(plan->device, &plan->entry->info, kernel.kernel, "C = beta * C", 0);
  if (st != PG_OK) return st;
  plan->args.splits = 0;
  plan->args.stream_k = 0;
  plan->scales_c_only = 1;
  plan->kernel = kernel.kernel;
  plan->threads = PG_SCALE_C_THREADS;
  plan->grid_x = (unsigned)kernel.grid_x;
  plan->grid_y = (unsigned)kernel.grid_y;
  return PG_OK;
}

pg_status pg_plan_prepare(pg_plan *plan, const pg_variant_info *variant, int stages, int m,
                          int n, int k, float alpha, const float *a, int lda, const float *b,
                          int ldb, float beta, float *c, int ldc) {
  memset(plan, 0, sizeof *plan);
  pg_clear_error_detail();
  const pg_variant_entry *entry = NULL;
  pg_status st = entry_of(variant, &entry);
  if (st == PG_OK) st = check_arguments(variant, &stages, m, n, k, a, lda, b, ldb, c, ldc);
  if (st != PG_OK || m == 0 || n == 0) return st; /* nothing to do: no entry to run */

  const pg_device *dev = NULL;
  st = pg_device_current(&dev);
  if (st != PG_OK) return st;
  plan->device = dev;
  set_problem(&plan->args, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  pg_kernel_launch kernel;
  if (entry->info.kind == PG_KIND_SELECTOR) {
    st = choose(dev, variant, plan, &entry, &stages, &kernel);
    if (st != PG_OK) {
      name_the_selector(variant);
      return st;
    }
    snprintf(plan->label, sizeof plan->label, "%s (%s)", variant->name, entry->info.name);
  } else {
    st = decide_entry(dev, entry, stages, plan, &kernel, 1);
    if (st != PG_OK) return st;
    snprintf(plan->label, sizeof plan->label, "%s", entry->info.name);
  }
  plan->entry = entry;
  plan->stages = stages;
  plan->args.stages = stages;
  if (entry->info.kind == PG_KIND_KERNEL)
    st = product_vanishes(&plan->args) ? finish_scale_plan(plan) : finish_plan(plan, &kernel);
  if (st != PG_OK) {
    plan->entry = NULL;
    if (variant->kind == PG_KIND_SELECTOR) name_the_selector(variant);
  }
  return st;
}

/* ---- plans --------------------------------------------------------------------- */

/* A launch CUDA refused, with the plan's name and the step that failed. */
static pg_status launch_failed(const pg_plan *plan, const char *step, cudaError_t err) {
  const pg_status st = pg_status_from_cuda(err);
  pg_set_error_detail("%s: %s: %s", plan->label, step, cudaGetErrorString(err));
  return st;
}

/* `kernel` with `params`, in clusters of cluster_x blocks where that is
 * more than 1, and programmatically behind the kernel before it in the
 * stream where `programmatic` (it may start before that one ends, and
 * waits for it itself: pg_grid_dependency_wait). */
static cudaError_t launch_with(const void *kernel, dim3 grid, dim3 block, size_t smem,
                               unsigned cluster_x, int programmatic, void **params,
                               cudaStream_t stream) {
  if (cluster_x <= 1 && !programmatic)
    return cudaLaunchKernel(kernel, grid, block, params, smem, stream);
  cudaLaunchAttribute attrs[2];
  unsigned count = 0;
  if (cluster_x > 1) {
    attrs[count].id = cudaLaunchAttributeClusterDimension;
    attrs[count].val.clusterDim.x = cluster_x;
    attrs[count].val.clusterDim.y = 1;
    attrs[count].val.clusterDim.z = 1;
    ++count;
  }
  if (programmatic) {
    attrs[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[count].val.programmaticStreamSerializationAllowed = 1;
    ++count;
  }
  cudaLaunchConfig_t config = {0};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  config.attrs = attrs;
  config.numAttrs = count;
  return cudaLaunchKernelExC(&config, kernel, params);
}

/* The plan's kernel with `params`, in clusters where the plan has them. */
static cudaError_t launch_kernel(const pg_plan *plan, void **params, cudaStream_t stream,
                                 int programmatic) {
  const dim3 grid = {plan->grid_x, plan->grid_y, 1};
  const dim3 block = {plan->threads, 1, 1};
  return launch_with(plan->kernel, grid, block, plan->dynamic_smem, plan->cluster_x,
                     programmatic, params, stream);
}

static pg_status launch_here(const pg_plan *plan, cudaStream_t stream);

/* A plan runs on its device: where the calling thread's current device is
 * another, the plan's is made current for the launch and the caller's put
 * back after it (CUDA refuses a launch on a stream of another device than
 * the current one, and the default stream is the current device's). */
pg_status pg_plan_launch(const pg_plan *plan, cudaStream_t stream) {
  pg_clear_error_detail();
  if (plan == NULL) {
    pg_set_error_detail("no plan given (NULL)");
    return PG_ERR_INVALID_ARG;
  }
  if (plan->entry == NULL) return PG_OK; /* M or N is 0 */
  int current = plan->device->ordinal;
  cudaError_t err = cudaGetDevice(&current);
  if (err == cudaSuccess && current != plan->device->ordinal)
    err = cudaSetDevice(plan->device->ordinal);
  if (err != cudaSuccess) return launch_failed(plan, "making its device current", err);
  pg_status st = launch_here(plan, stream);
  if (current != plan->device->ordinal) {
    err = cudaSetDevice(current);
    if (err != cudaSuccess && st == PG_OK)
      st = launch_failed(plan, "making the caller's device current again", err);
  }
  return st;
}

static pg_status launch_here(const pg_plan *plan, cudaStream_t stream) {
  if (plan->entry->info.kind == PG_KIND_LIBRARY)
    return pg_cublas_sgemm(plan->device, &plan->args, plan->entry->info.precision, stream);
  if (plan->workspace_bytes == 0) {
    void *params[] = {(void *)&plan->args, (void *)&plan->maps};
    const cudaError_t err = launch_kernel(plan, params, stream, 0);
    return err == cudaSuccess ? PG_OK : launch_failed(plan, "launching its kernel", err);
  }
  /* A workspace in stream-ordered memory of the library's pool: split-K's
   * partial sums (the kernel, then the reduction), the wgmma members' B^T
   * (the B^T kernel, then the kernel), the emulated ones' parts of A or the
   * split forms' copies of an operand TMA cannot read (the first kernel,
   * the kernel, and where K is split the reduction of the planes after
   * them, with the kernel's arguments), and the memory back to the
   * pool; all in `stream`, so concurrent launches never share a workspace.
   * The pool is made to hold the bytes first, off this thread, so that a
   * device out of memory fails there and leaves this thread's CUDA error as
   * it was. */
  pg_status st =
      pg_device_pool_hold(plan->device, plan->pool, plan->workspace_bytes, plan->label);
  if (st != PG_OK) return st;
  pg_gemm_args args = plan->args;
  void *params[] = {(void *)&args, (void *)&plan->maps};
  st = pg_device_pool_take(plan->pool, plan->workspace_bytes, stream, (void **)&args.partials,
                           plan->label);
  if (st != PG_OK) return st;
  cudaError_t err = cudaSuccess;
  const char *step = "launching its kernel";
  /* B^T first (the wgmma members), or operands (the emulated entry's parts
   * of A, the split forms' copies of A or B): the kernel then reads them where B
   * or A was, through a map encoded now that the workspace is there. */
  pg_gemm_args main_args = args;
  pg_tma_maps main_maps;
  void *main_params[] = {(void *)&main_args, (void *)&main_maps};
  void **kernel_params = params;
  if (plan->prepare_kernel != NULL) {
    const dim3 prepare_grid = {plan->prepare_grid_x, plan->prepare_grid_y, 1};
    const dim3 prepare_block = {plan->prepare_threads, 1, 1};
    /* Operands (A's parts or copy, B's copy after it) or B^T. */
    const int operands = plan->prepare_a_rows > 0 || plan->prepare_b_rows > 0;
    step = operands ? "launching its first kernel (operands into the workspace)"
                    : "launching its B^T kernel";
    err = cudaLaunchKernel(plan->prepare_kernel, prepare_grid, prepare_block, params, 0, stream);
    if (operands) {
      if (plan->prepare_a_rows > 0) {
        main_args.a = args.partials;
        main_args.lda = args.ldp;
        main_args.vec_a = 1;
      }
      if (plan->prepare_b_rows > 0) { /* B's copy after A's rows */
        main_args.b = args.partials + plan->prepare_a_rows * (size_t)args.ldp;
        main_args.ldb = plan->prepare_b_ld;
        main_args.vec_b = 1;
      }
    } else {
      main_args.b = args.partials;
      main_args.ldb = args.ldp;
      main_args.vec_b = 1;
    }
    main_args.partials = plan->args.partials; /* the kernel's own: a traced one's buffer */
    if (operands && plan->reduce_kernel != NULL) { /* K split: its planes after the operands */
      main_args.partials = args.partials + plan->prepare_a_rows * (size_t)args.ldp +
                           plan->prepare_b_rows * (size_t)plan->prepare_b_ld;
      main_args.ldp = (int)PG_PLANES_LD(args.n);
    }
    main_maps = plan->maps;
    if (err == cudaSuccess && plan->tma != NULL && operands) {
      if (plan->prepare_a_rows > 0) {
        step = "encoding the tensor map of A's parts";
        err = pg_tma_encode_a_parts(&main_args, plan->tma, plan->prepare_a_rows, &main_maps);
      }
      if (err == cudaSuccess && plan->prepare_b_rows > 0) {
        step = "encoding the tensor map of B's copy";
        err = pg_tma_encode_b(&main_args, plan->tma, &main_maps);
      }
    } else if (err == cudaSuccess && plan->tma != NULL && plan->tma->b_k_major) {
      step = "encoding B^T's tensor map";
      err = pg_tma_encode_bt(&main_args, plan->tma, &main_maps);
    }
    kernel_params = main_params;
    if (err == cudaSuccess) step = "launching its kernel";
  }
  /* Each kernel that waits for the one before it itself is launched
   * programmatically behind it: its launch and set-up overlap that one's
   * end. */
  if (err == cudaSuccess)
    err = launch_kernel(plan, kernel_params, stream,
                        plan->prepare_kernel != NULL && plan->prepare_programmatic);
  if (err == cudaSuccess && plan->reduce_kernel != NULL) {
    const dim3 reduce_grid = {plan->reduce_grid_x, plan->reduce_grid_y, 1};
    const dim3 reduce_block = {plan->reduce_threads, 1, 1};
    step = "launching its reduction";
    err = launch_with(plan->reduce_kernel, reduce_grid, reduce_block, 0, 1,
                      plan->reduce_programmatic, kernel_params, stream);
  }
  const cudaError_t freed = cudaFreeAsync(args.partials, stream);
  if (err == cudaSuccess && freed != cudaSuccess) step = "giving its workspace back", err = freed;
  return err == cudaSuccess ? PG_OK : launch_failed(plan, step, err);
}

pg_status pg_plan_create(pg_plan **out, const pg_variant_info *variant, int stages, int m,
                         int n, int k, float alpha, const float *a, int lda, const float *b,
                         int ldb, float beta, float *c, int ldc) {
  pg_clear_error_detail();
  if (out == NULL) {
    pg_set_error_detail("no place for the plan given (NULL)");
    return PG_ERR_INVALID_ARG;
  }
  *out = NULL;
  /* The tensor maps inside want their 64-byte alignment. */
  const size_t align = _Alignof(pg_plan);
  pg_plan *plan = aligned_alloc(align, (sizeof(pg_plan) + align - 1) / align * align);
  if (plan == NULL) {
    pg_set_error_detail("no host memory for a plan (%zu bytes)", sizeof(pg_plan));
    return PG_ERR_NO_MEMORY;
  }
  pg_status st = pg_plan_prepare(plan, variant, stages, m, n, k, alpha, a, lda, b, ldb, beta, c,
                                 ldc);
  if (st != PG_OK) {
    free(plan);
    return st;
  }
  *out = plan;
  return PG_OK;
}

void pg_plan_destroy(pg_plan *plan) { free(plan); }

/* A kernel's facts on the plan's device. */
static pg_status kernel_facts(const pg_device *dev, const void *kernel, unsigned threads,
                              size_t dynamic_smem, pg_kernel_facts *facts) {
  pg_kernel_image image;
  pg_status st = pg_kernel_image_of(dev, kernel, &image);
  if (st != PG_OK) return st;
  if (image.load_error != cudaSuccess) return pg_status_from_cuda(image.load_error);
  int blocks = 0;
  cudaError_t err =
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, (int)threads, dynamic_smem);
  if (err != cudaSuccess) return pg_status_from_cuda(err);
  facts->threads = (int)threads;
  facts->registers = image.registers;
  facts->smem_bytes = image.static_smem + dynamic_smem;
  facts->blocks_per_sm = blocks;
  return PG_OK;
}

/* The first pg_plan_info that carried its size (0.5.0's) ended with
 * split_in_clusters: a caller's struct is at least that. */
#define PG_PLAN_INFO_MIN_SIZE (offsetof(pg_plan_info, split_in_clusters) + sizeof(int))

/* What a plan runs, in the library's own pg_plan_info. */
static pg_status describe(const pg_plan *plan, pg_plan_info *info) {
  memset(info, 0, sizeof *info);
  info->size = sizeof *info;
  if (plan->entry == NULL) return PG_OK;
  info->variant = &plan->entry->info;
  info->stages = plan->stages;
  info->launches = 1 + (plan->reduce_kernel != NULL) + (plan->prepare_kernel != NULL);
  info->splits = plan->args.splits > 1 ? plan->args.splits : 1;
  info->stream_k_blocks = plan->args.stream_k ? plan->args.sk_blocks : 0;
  info->split_from_row = info->splits > 1 ? plan->args.split_row0 : 0;
  info->split_in_clusters = info->splits > 1 && plan->cluster_x > 1;
  info->workspace_bytes = plan->workspace_bytes;
  if (plan->entry->info.kind != PG_KIND_KERNEL) return PG_OK;
  info->grid_x = plan->grid_x;
  info->grid_y = plan->grid_y;
  return kernel_facts(plan->device, plan->kernel, plan->threads, plan->dynamic_smem,
                      &info->kernel);
}

pg_status pg_plan_describe(const pg_plan *plan, pg_plan_info *info) {
  pg_clear_error_detail();
  if (plan == NULL || info == NULL) {
    pg_set_error_detail("no %s given (NULL)", plan == NULL ? "plan" : "place for the answer");
    return PG_ERR_INVALID_ARG;
  }
  /* The caller's struct may be older (shorter) or newer (longer) than the
   * library's: it is written up to its own size, zeros past what the
   * library knows. */
  const size_t size = info->size;
  if (size < PG_PLAN_INFO_MIN_SIZE) {
    pg_set_error_detail("info->size = %zu is below %zu: set it to sizeof(pg_plan_info) "
                        "(PG_PLAN_INFO_INIT)",
                        size, (size_t)PG_PLAN_INFO_MIN_SIZE);
    return PG_ERR_INVALID_ARG;
  }
  pg_plan_info own;
  const pg_status st = describe(plan, &own);
  if (st != PG_OK) return st;
  const size_t known = size < sizeof own ? size : sizeof own;
  memcpy(info, &own, known);
  if (size > known) memset((char *)info + known, 0, size - known);
  info->size = size;
  return PG_OK;
}

/* ---- calls ------------------------------------------------------------------------ */

pg_status pg_sgemm_variant(const pg_variant_info *variant, int stages, int m, int n, int k,
                           float alpha, const float *a, int lda, const float *b, int ldb,
                           float beta, float *c, int ldc, cudaStream_t stream) {
  pg_plan plan;
  pg_status st =
      pg_plan_prepare(&plan, variant, stages, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  return st == PG_OK ? pg_plan_launch(&plan, stream) : st;
}

pg_status pg_sgemm(const char *variant, int stages, int m, int n, int k, float alpha,
                   const float *a, int lda, const float *b, int ldb, float beta, float *c,
                   int ldc, cudaStream_t stream) {
  pg_clear_error_detail();
  const pg_variant_info *info = pg_variant_find(variant);
  if (info == NULL) {
    if (variant == NULL)
      pg_set_error_detail("no variant name given (NULL)");
    else
      pg_set_error_detail("no variant is named \"%.60s\" (pipegemm list shows them)", variant);
    return PG_ERR_UNKNOWN_VARIANT;
  }
  return pg_sgemm_variant(info, stages, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream);
}

pg_status pg_variant_accepts(const pg_variant_info *variant, int stages, int m, int n, int k,
                             const float *a, int lda, const float *b, int ldb, const float *c,
                             int ldc) {
  pg_plan plan;
  return pg_plan_prepare(&plan, variant, stages, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, (float *)c,
                         ldc);
}

/* ---- questions without a problem ---------------------------------------------------- */

/* The entry, its stage count and the device, for the questions below; a
 * nominal 1x1x1 problem stands in for the shape. */
static pg_status entry_on_device(const pg_variant_info *variant, int *stages,
                                 const pg_variant_entry **entry, const pg_device **dev) {
  pg_clear_error_detail();
  pg_status st = entry_of(variant, entry);
  if (st != PG_OK) return st;
  st = pg_variant_stages(variant, *stages, stages);
  return st == PG_OK ? pg_device_current(dev) : st;
}

/* The entry's kernel plan for a nominal 1x1x1 problem: what it launches,
 * whatever the shape (no layout rule applies). */
static pg_status decide_nominal(const pg_device *dev, const pg_variant_entry *entry, int stages,
                                pg_kernel_launch *kernel) {
  pg_plan plan;
  memset(&plan, 0, sizeof plan);
  set_problem(&plan.args, 1, 1, 1, 1.0f, NULL, 1, NULL, 1, 0.0f, NULL, 1);
  return decide_entry(dev, entry, stages, &plan, kernel, 0);
}

pg_status pg_variant_supported(const pg_variant_info *variant, int stages) {
  const pg_variant_entry *entry = NULL;
  const pg_device *dev = NULL;
  pg_status st = entry_on_device(variant, &stages, &entry, &dev);
  if (st != PG_OK || entry->info.kind == PG_KIND_SELECTOR) return st;
  pg_kernel_launch kernel;
  return decide_nominal(dev, entry, stages, &kernel);
}

pg_status pg_variant_kernel_facts(const pg_variant_info *variant, int stages,
                                  pg_kernel_facts *facts) {
  pg_clear_error_detail();
  if (facts == NULL) {
    pg_set_error_detail("no place for the answer given (NULL)");
    return PG_ERR_INVALID_ARG;
  }
  const pg_variant_entry *entry = NULL;
  const pg_device *dev = NULL;
  if (variant != NULL && pg_entry_of(variant) != NULL && variant->kind != PG_KIND_KERNEL) {
    pg_set_error_detail("%s is a %s, not one of pipegemm's kernels", variant->name,
                        pg_kind_name(variant->kind));
    return PG_ERR_UNSUPPORTED;
  }
  pg_status st = entry_on_device(variant, &stages, &entry, &dev);
  if (st != PG_OK) return st;
  pg_kernel_launch kernel;
  st = decide_nominal(dev, entry, stages, &kernel);
  if (st != PG_OK) return st;
  return kernel_facts(dev, kernel.kernel, (unsigned)entry->info.threads,
                      dynamic_smem_of(entry, stages), facts);
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

pg_status pg_auto_select(int m, int n, int k, const float *a, int lda, const float *b, int ldb,
                         const pg_variant_info **variant, int *stages) {
  pg_clear_error_detail();
  if (variant == NULL || stages == NULL) {
    pg_set_error_detail("no place for the answer given (NULL)");
    return PG_ERR_INVALID_ARG;
  }
  pg_status st = check_sizes(m, n, k);
  if (st == PG_OK) st = check_ld("lda", lda, "k", k, "A");
  if (st == PG_OK) st = check_ld("ldb", ldb, "n", n, "B");
  if (st != PG_OK) return st;
  if (m == 0 || n == 0) { /* as pg_sgemm: nothing to do, so nothing runs */
    *variant = NULL;
    *stages = 0;
    return PG_OK;
  }
  st = check_operand_pointers(k, a, b);
  const pg_device *dev = NULL;
  if (st == PG_OK) st = pg_device_current(&dev);
  if (st != PG_OK) return st;
  pg_plan plan;
  memset(&plan, 0, sizeof plan);
  set_problem(&plan.args, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, NULL, n);
  const pg_variant_entry *entry = NULL;
  pg_kernel_launch kernel;
  int chosen_stages = 0;
  st = choose(dev, &pg_entry_auto.info, &plan, &entry, &chosen_stages, &kernel);
  if (st != PG_OK) return st;
  *variant = &entry->info;
  *stages = chosen_stages;
  return PG_OK;
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
  set_problem(&plan.args, m, n, k, 1.0f, operand, k, operand, n, 0.0f, NULL, n);
  const pg_gemm_args problem = plan.args;
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

/* ---- the library's lifetime ---------------------------------------------------------- */

void pg_shutdown(void) {
  pg_cublas_release();
  pg_device_release();
}
