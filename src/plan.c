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

/* ---- arguments -------------------------------------------------------------- */


/* The stage count `stages` means for the variant, and the call's arguments. */
static pg_status check_arguments(const pg_variant_info *variant, int *stages,
                                 const pg_gemm_desc *gemm) {
  if (pg_variant_stages(variant, *stages, stages) != PG_OK) return PG_ERR_STAGES;
  return pg_check_gemm(gemm);
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
pg_status pg_decide_entry(const pg_device *dev, const pg_variant_entry *entry, int stages,
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
  const pg_layout_args *g = &plan->args;
  if (info->layouts == PG_LAYOUT_NN && pg_other_layout(g)) {
    pg_set_error_detail("%s takes op(A) = N, op(B) = N and one GEMM (the study's layout); this "
                        "call has op_a %s, op_b %s and %d GEMMs",
                        info->name, g->op_a ? "T" : "N", g->op_b ? "T" : "N", g->batch);
    return PG_ERR_UNSUPPORTED;
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
  if (kernel->grid_x > PG_MAX_GRID_X || kernel->grid_y > PG_MAX_GRID_Y ||
      kernel->grid_z > PG_MAX_GRID_Y) {
    pg_set_error_detail("%s would launch a grid of %lld x %lld x %lld blocks; CUDA allows %lld x "
                        "%lld x %lld",
                        info->name, kernel->grid_x, kernel->grid_y,
                        kernel->grid_z > 0 ? kernel->grid_z : 1, PG_MAX_GRID_X, PG_MAX_GRID_Y,
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

/* The dynamic shared memory an entry's kernel launches with at `stages`. */
static size_t dynamic_smem_of(const pg_variant_entry *entry, int stages) {
  return entry->kernel.dynamic_smem ? entry->smem_bytes(stages) : 0;
}

/* A kernel before or after the entry's, as a step of the plan: its code
 * loaded (plain CUDA, built for every architecture: no floor on its
 * code's architecture) and launched programmatically only where the GPU
 * and the tuning row allow it. */
static pg_status add_step(pg_plan *plan, const pg_launch_step *decl, int programmatic_ok,
                          const pg_views *views) {
  if (!plan->device->model_only) {
    const pg_status st =
        load_kernel(plan->device, &plan->entry->info, decl->kernel, decl->what, 0);
    if (st != PG_OK) return st;
  }
  pg_plan_step *step = &plan->step[plan->steps++];
  step->kernel = decl->kernel;
  step->grid_x = (unsigned)decl->grid_x;
  step->grid_y = (unsigned)(decl->grid_y > 0 ? decl->grid_y : 1);
  step->grid_z = 1;
  step->threads = (unsigned)decl->threads;
  step->cluster_x = 1;
  step->programmatic = programmatic_ok && decl->programmatic;
  step->views = *views;
  step->what = decl->what;
  return PG_OK;
}

/* The plan's steps from the entry's launch: a first kernel, the entry's
 * kernel (its block, dynamic shared memory, a persistent grid's cap,
 * clusters), a reduction reading what that kernel wrote; the workspace
 * they share; the tensor maps of the operands read where they are. */
static pg_status finish_plan(pg_plan *plan, const pg_kernel_launch *kernel) {
  const pg_variant_entry *entry = plan->entry;
  /* Programmatic dependent launch exists from sm_90 on; the kernels'
   * waits compile to nothing below it. */
  const int programmatic_ok = plan->device->cc >= 90 &&
                              pg_tuning_with_env(&plan->device->tuning).programmatic_launch;
  pg_status st = PG_OK;
  const int model_only = plan->device->model_only; /* no GPU asked (pg_plan_prepare_on) */
  plan->workspace = kernel->workspace;
  plan->transposes = kernel->transposes;
  plan->stream_k_blocks = kernel->stream_k_blocks;
  if (plan->workspace.bytes > 0 && !model_only) st = pg_device_pool(plan->device, &plan->pool);
  if (st == PG_OK && kernel->first.kernel != NULL)
    st = add_step(plan, &kernel->first, 0, &kernel->first.views);
  if (st != PG_OK) return st;

  plan->main_step = plan->steps++;
  pg_plan_step *main = &plan->step[plan->main_step];
  main->kernel = kernel->kernel;
  main->threads = (unsigned)entry->info.threads;
  main->views = kernel->views;
  main->what = "kernel";
  main->programmatic = kernel->first.kernel != NULL && programmatic_ok && kernel->programmatic;
  main->dynamic_smem = dynamic_smem_of(entry, plan->stages);
  if (kernel->dynamic_smem > main->dynamic_smem) main->dynamic_smem = kernel->dynamic_smem;
  if (kernel->max_blocks_per_sm > 0) {
    /* A block's share of the SM's shared memory, its static part (the
     * kernel image's) taken off, so that that many blocks fit and no more. */
    size_t spread = pg_smem_for_blocks_per_sm(plan->device, kernel->max_blocks_per_sm);
    pg_kernel_image image;
    memset(&image, 0, sizeof image);
    if (!plan->device->model_only) {
      st = pg_kernel_image_of(plan->device, kernel->kernel, &image);
      if (st != PG_OK) return st;
    }
    spread = spread > image.static_smem ? spread - image.static_smem : 0;
    if (spread > main->dynamic_smem) main->dynamic_smem = spread;
  }
  long long grid_x = kernel->grid_x;
  if (kernel->persistent_blocks_per_sm > 0 && !model_only) {
    int fit = 0;
    cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &fit, kernel->kernel, (int)main->threads, main->dynamic_smem);
    if (err != cudaSuccess) return pg_status_from_cuda(err);
    const int per_sm = fit < kernel->persistent_blocks_per_sm ? fit : kernel->persistent_blocks_per_sm;
    if (per_sm > 0 && (long long)per_sm * plan->device->sm_count < grid_x)
      grid_x = (long long)per_sm * plan->device->sm_count;
  }
  main->grid_x = (unsigned)grid_x;
  main->grid_y = (unsigned)(kernel->grid_y > 0 ? kernel->grid_y : 1);
  main->grid_z = (unsigned)(kernel->grid_z > 0 ? kernel->grid_z : 1);
  main->cluster_x = kernel->cluster_x > 1 ? (unsigned)kernel->cluster_x : 1;

  /* The reduction reads what the entry's kernel wrote, as it sees it. */
  if (kernel->last.kernel != NULL)
    st = add_step(plan, &kernel->last, programmatic_ok, &kernel->views);
  if (st != PG_OK) return st;

  plan->tma = kernel->tma;
  if (kernel->tma != NULL && !model_only) {
    /* An operand the kernel reads in the workspace (B^T, A's parts, B's
     * copy) gets its map at launch, once the workspace is there. */
    cudaError_t err = pg_tma_encode(&plan->args, kernel->tma, kernel->views.a == PG_CALLER,
                                    kernel->views.b == PG_CALLER, &plan->maps);
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
static int product_vanishes(const pg_layout_args *args) {
  return args->alpha == 0.0f || args->k == 0;
}

static pg_status finish_scale_plan(pg_plan *plan) {
  pg_kernel_launch kernel;
  memset(&kernel, 0, sizeof kernel);
  pg_configure_scale_c(&plan->args, &kernel);
  if (!plan->device->model_only) {
    const pg_status st =
        load_kernel(plan->device, &plan->entry->info, kernel.kernel, "C = beta * C", 0);
    if (st != PG_OK) return st;
  }
  plan->args.splits = 0;
  plan->stream_k_blocks = 0;
  plan->scales_c_only = 1;
  plan->steps = 1;
  plan->main_step = 0;
  pg_plan_step *step = &plan->step[0];
  step->kernel = kernel.kernel;
  step->threads = PG_SCALE_C_THREADS;
  step->grid_x = (unsigned)kernel.grid_x;
  step->grid_y = (unsigned)(kernel.grid_y > 0 ? kernel.grid_y : 1);
  step->grid_z = 1;
  step->cluster_x = 1;
  step->what = "kernel";
  return PG_OK;
}

pg_status pg_plan_prepare(pg_plan *plan, const pg_variant_info *variant, int stages,
                          const pg_gemm_desc *gemm) {
  return pg_plan_prepare_on(plan, NULL, variant, stages, gemm);
}

static pg_status prepare(pg_plan *plan, const pg_device *dev, const pg_variant_info *variant,
                         int stages, const pg_gemm_desc *gemm, const int *wide_lines);

int pg_is_refusal(pg_status st) {
  return st == PG_ERR_ARCH || st == PG_ERR_SMEM || st == PG_ERR_UNSUPPORTED ||
         st == PG_ERR_STAGES || st == PG_ERR_INVALID_ARG;
}

pg_status pg_then_alone(const pg_device *dev, const char *entry, const pg_layout_args *problem) {
  const pg_variant_info *info = pg_variant_find(entry);
  if (info == NULL) {
    pg_set_error_detail("%s is not in this build", entry);
    return PG_ERR_UNSUPPORTED;
  }
  pg_plan then;
  memset(&then, 0, sizeof then);
  then.args = *problem;
  then.args.wide_lines = PG_WIDE_LINES_AT_LAUNCH;
  pg_device facts = *dev; /* its launch alone, no kernel loaded: prepare loads it */
  facts.model_only = 1;
  pg_kernel_launch kernel;
  const pg_status st =
      pg_decide_entry(&facts, pg_entry_of(info), info->default_stages, &then, &kernel, 1);
  if (st != PG_OK) return st;
  if (kernel.first.kernel != NULL || kernel.last.kernel != NULL || kernel.workspace.count > 0) {
    pg_set_error_detail("%s takes this layout only with a kernel before or after its own",
                        entry);
    return PG_ERR_UNSUPPORTED;
  }
  return PG_OK;
}

/* The entry's launch names another whose kernel computes the tiles its own
 * leaves (pg_kernel_launch.then): where that one runs alone
 * (pg_then_alone), it is planned on the same problem, at its default
 * stages, with wide_lines set, as the plan's last step, with the entry's
 * own settings for it; else the plan stays as configure made it, the
 * entry's kernel computing those tiles itself. A failure that is no
 * refusal (no memory, a CUDA error) fails the plan. */
static pg_status add_then(pg_plan *plan, const pg_kernel_launch *kernel,
                          const pg_gemm_desc *gemm) {
  pg_layout_args problem;
  pg_set_problem(&problem, gemm);
  pg_plan planned, *then = &planned; /* its plan, whose one step and maps are taken */
  pg_status st = pg_then_alone(plan->device, kernel->then.entry, &problem);
  if (st == PG_OK)
    st = prepare(then, plan->device, pg_variant_find(kernel->then.entry), 0, gemm,
                 PG_WIDE_LINES_AT_LAUNCH);
  if (pg_is_refusal(st)) {
    pg_clear_error_detail(); /* the tiles stay with the entry's kernel */
    return PG_OK;
  }
  if (st != PG_OK) {
    char why[PG_DETAIL_COPY];
    snprintf(why, sizeof why, "%s", pg_last_error_detail());
    pg_set_error_detail("%s: its wide tiles' entry: %s", plan->label, why);
    return st;
  }
  memcpy(plan->args.own, kernel->then.own, sizeof plan->args.own);
  pg_plan_then *t = &plan->then;
  t->maps = then->maps;
  t->args = then->args;
  t->tma = then->tma;
  t->entry = then->entry;
  t->lines_region = kernel->then.lines_region;
  t->lines_offset = kernel->then.lines_offset;
  t->step = plan->steps++;
  plan->step[t->step] = then->step[0];
  plan->step[t->step].programmatic = 0; /* the scales are the split's, two launches back */
  plan->step[t->step].what = "kernel for the wide tiles";
  return PG_OK;
}

pg_status pg_plan_prepare_on(pg_plan *plan, const pg_device *dev, const pg_variant_info *variant,
                             int stages, const pg_gemm_desc *gemm) {
  return prepare(plan, dev, variant, stages, gemm, NULL);
}

static pg_status prepare(pg_plan *plan, const pg_device *dev, const pg_variant_info *variant,
                         int stages, const pg_gemm_desc *gemm, const int *wide_lines) {
  memset(plan, 0, sizeof *plan);
  pg_clear_error_detail();
  const pg_variant_entry *entry = NULL;
  pg_status st = entry_of(variant, &entry);
  if (st == PG_OK) st = check_arguments(variant, &stages, gemm);
  if (st != PG_OK || pg_gemm_is_empty(gemm)) return st; /* nothing to do: no entry to run */
  st = pg_check_int_lds(gemm);
  if (st == PG_OK && dev == NULL) st = pg_device_current(&dev);
  if (st != PG_OK) return st;
  plan->device = dev;
  pg_set_problem(&plan->args, gemm);
  plan->args.wide_lines = wide_lines;
  pg_kernel_launch kernel;
  if (entry->info.kind == PG_KIND_SELECTOR) {
    st = pg_auto_choose(dev, variant, plan, &entry, &stages, &kernel);
    if (st != PG_OK) {
      name_the_selector(variant);
      return st;
    }
    snprintf(plan->label, sizeof plan->label, "%s (%s)", variant->name, entry->info.name);
  } else {
    st = pg_decide_entry(dev, entry, stages, plan, &kernel, 1);
    if (st != PG_OK) return st;
    snprintf(plan->label, sizeof plan->label, "%s", entry->info.name);
  }
  plan->entry = entry;
  plan->stages = stages;
  plan->args.stages = stages;
  if (entry->info.kind == PG_KIND_KERNEL)
    st = product_vanishes(&plan->args) ? finish_scale_plan(plan) : finish_plan(plan, &kernel);
  if (st == PG_OK && entry->info.kind == PG_KIND_KERNEL && !plan->scales_c_only &&
      kernel.then.entry != NULL)
    st = add_then(plan, &kernel, gemm);
  if (st != PG_OK) {
    plan->entry = NULL;
    if (variant->kind == PG_KIND_SELECTOR) name_the_selector(variant);
  }
  return st;
}

pg_status pg_plan_create_gemm(pg_plan **out, const pg_variant_info *variant, int stages,
                              const pg_gemm_desc *gemm) {
  pg_clear_error_detail();
  if (out == NULL) {
    pg_set_error_detail("no place for the plan given (NULL)");
    return PG_ERR_INVALID_ARG;
  }
  *out = NULL;
  pg_gemm_desc own;
  pg_status st = pg_gemm_desc_read(gemm, &own);
  if (st != PG_OK) return st;
  /* The tensor maps inside want their 64-byte alignment. */
  const size_t align = _Alignof(pg_plan);
  pg_plan *plan = aligned_alloc(align, (sizeof(pg_plan) + align - 1) / align * align);
  if (plan == NULL) {
    pg_set_error_detail("no host memory for a plan (%zu bytes)", sizeof(pg_plan));
    return PG_ERR_NO_MEMORY;
  }
  st = pg_plan_prepare(plan, variant, stages, &own);
  if (st != PG_OK) {
    free(plan);
    return st;
  }
  *out = plan;
  return PG_OK;
}

pg_status pg_plan_create(pg_plan **out, const pg_variant_info *variant, int stages, int m,
                         int n, int k, float alpha, const float *a, int lda, const float *b,
                         int ldb, float beta, float *c, int ldc) {
  const pg_gemm_desc gemm = pg_gemm_desc_of(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  return pg_plan_create_gemm(out, variant, stages, &gemm);
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
 * transposes: a caller's struct is at least that. */
#define PG_PLAN_INFO_MIN_SIZE (offsetof(pg_plan_info, transposes) + sizeof(int))

/* What a plan runs, in the library's own pg_plan_info. */
static pg_status describe(const pg_plan *plan, pg_plan_info *info) {
  memset(info, 0, sizeof *info);
  info->size = sizeof *info;
  if (plan->entry == NULL) return PG_OK;
  info->variant = &plan->entry->info;
  info->stages = plan->stages;
  info->launches = plan->entry->info.kind == PG_KIND_KERNEL ? plan->steps : 1;
  info->splits = plan->args.splits > 1 ? plan->args.splits : 1;
  info->stream_k_blocks = plan->stream_k_blocks;
  info->split_from_row = info->splits > 1 ? plan->args.split_row0 : 0;
  info->workspace_bytes = plan->workspace.bytes;
  info->op_a = plan->args.op_a ? PG_OP_T : PG_OP_N;
  info->op_b = plan->args.op_b ? PG_OP_T : PG_OP_N;
  info->batch = plan->args.batch;
  info->transposes = plan->transposes;
  if (plan->entry->info.kind != PG_KIND_KERNEL) return PG_OK;
  const pg_plan_step *main = &plan->step[plan->main_step];
  info->split_in_clusters = info->splits > 1 && main->cluster_x > 1;
  info->grid_x = main->grid_x;
  info->grid_y = main->grid_y;
  return kernel_facts(plan->device, main->kernel, main->threads, main->dynamic_smem,
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

/* The variant a name gives, or PG_ERR_UNKNOWN_VARIANT with the detail. */
static pg_status variant_named(const char *name, const pg_variant_info **variant) {
  *variant = pg_variant_find(name);
  if (*variant != NULL) return PG_OK;
  if (name == NULL)
    pg_set_error_detail("no variant name given (NULL)");
  else
    pg_set_error_detail("no variant is named \"%.60s\" (pipegemm list shows them)", name);
  return PG_ERR_UNKNOWN_VARIANT;
}

/* A call: planned on the stack, launched. */
static pg_status run_gemm(const pg_variant_info *variant, int stages, const pg_gemm_desc *gemm,
                          cudaStream_t stream) {
  pg_plan plan;
  const pg_status st = pg_plan_prepare(&plan, variant, stages, gemm);
  return st == PG_OK ? pg_plan_launch(&plan, stream) : st;
}

pg_status pg_gemm(const char *variant, int stages, const pg_gemm_desc *gemm,
                  cudaStream_t stream) {
  pg_clear_error_detail();
  const pg_variant_info *info = NULL;
  pg_gemm_desc own;
  pg_status st = variant_named(variant, &info);
  if (st == PG_OK) st = pg_gemm_desc_read(gemm, &own);
  return st == PG_OK ? run_gemm(info, stages, &own, stream) : st;
}

pg_status pg_sgemm_variant(const pg_variant_info *variant, int stages, int m, int n, int k,
                           float alpha, const float *a, int lda, const float *b, int ldb,
                           float beta, float *c, int ldc, cudaStream_t stream) {
  const pg_gemm_desc gemm = pg_gemm_desc_of(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  return run_gemm(variant, stages, &gemm, stream);
}

pg_status pg_sgemm(const char *variant, int stages, int m, int n, int k, float alpha,
                   const float *a, int lda, const float *b, int ldb, float beta, float *c,
                   int ldc, cudaStream_t stream) {
  pg_clear_error_detail();
  const pg_variant_info *info = NULL;
  const pg_status st = variant_named(variant, &info);
  if (st != PG_OK) return st;
  return pg_sgemm_variant(info, stages, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream);
}

pg_status pg_variant_accepts_gemm(const pg_variant_info *variant, int stages,
                                  const pg_gemm_desc *gemm) {
  pg_clear_error_detail();
  pg_gemm_desc own;
  pg_status st = pg_gemm_desc_read(gemm, &own);
  if (st != PG_OK) return st;
  pg_plan plan;
  return pg_plan_prepare(&plan, variant, stages, &own);
}

pg_status pg_variant_accepts(const pg_variant_info *variant, int stages, int m, int n, int k,
                             const float *a, int lda, const float *b, int ldb, const float *c,
                             int ldc) {
  const pg_gemm_desc gemm = pg_gemm_desc_of(m, n, k, 1.0f, a, lda, b, ldb, 0.0f, (float *)c, ldc);
  pg_plan plan;
  return pg_plan_prepare(&plan, variant, stages, &gemm);
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
  const pg_gemm_desc nominal = pg_gemm_desc_of(1, 1, 1, 1.0f, NULL, 1, NULL, 1, 0.0f, NULL, 1);
  pg_set_problem(&plan.args, &nominal);
  return pg_decide_entry(dev, entry, stages, &plan, kernel, 0);
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

/* ---- the library's lifetime ---------------------------------------------------------- */

void pg_shutdown(void) {
  pg_cublas_release();
  pg_device_release();
}
