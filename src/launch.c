/* Launching a plan: the one place a kernel of the library is launched.
 *
 * A plan is a short list of steps (src/internal.h, pg_plan_step): at most
 * a first kernel that writes operands into the call's workspace, the
 * entry's kernel, a reduction of its partial sums, and another entry's
 * kernel on the tiles the entry's left (pg_plan_then). Launching it is a
 * loop over the steps: each gets the call's argument with its views of the
 * workspace applied (an operand or the partial sums pointed at a region),
 * and the entry's kernel the tensor maps of what it reads there, encoded
 * now that the workspace is there. The workspace is stream-ordered memory
 * of the library's pool, taken before the first step and given back after
 * the last, so that launches on different streams never share one. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "tma.h"

/* ---- the workspace's layout, as the planners add to it ------------------------ */

int pg_workspace_add(pg_workspace *workspace, long long rows, long long ld) {
  const int index = workspace->count++;
  pg_region *region = &workspace->region[index];
  region->offset = workspace->bytes;
  region->rows = rows;
  region->ld = ld;
  workspace->bytes += (size_t)rows * (size_t)ld * sizeof(float);
  return index;
}

void pg_workspace_drop_last(pg_workspace *workspace) {
  if (workspace->count == 0) return;
  const pg_region *last = &workspace->region[--workspace->count];
  workspace->bytes = last->offset;
}

void pg_add_reduction(struct pg_kernel_launch *launch, const void *kernel, long long grid_x,
                      long long grid_y, int threads, int programmatic) {
  pg_launch_step *step = &launch->last;
  memset(step, 0, sizeof *step);
  step->kernel = kernel;
  step->grid_x = grid_x;
  step->grid_y = grid_y;
  step->threads = threads;
  step->programmatic = programmatic;
  step->what = "reduction";
}

/* ---- launching ---------------------------------------------------------------- */

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
static cudaError_t launch_with(const pg_plan_step *step, void **params, cudaStream_t stream) {
  const dim3 grid = {step->grid_x, step->grid_y, step->grid_z};
  const dim3 block = {step->threads, 1, 1};
  if (step->cluster_x <= 1 && !step->programmatic)
    return cudaLaunchKernel(step->kernel, grid, block, params, step->dynamic_smem, stream);
  cudaLaunchAttribute attrs[2];
  unsigned count = 0;
  if (step->cluster_x > 1) {
    attrs[count].id = cudaLaunchAttributeClusterDimension;
    attrs[count].val.clusterDim.x = step->cluster_x;
    attrs[count].val.clusterDim.y = 1;
    attrs[count].val.clusterDim.z = 1;
    ++count;
  }
  if (step->programmatic) {
    attrs[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[count].val.programmaticStreamSerializationAllowed = 1;
    ++count;
  }
  cudaLaunchConfig_t config = {0};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = step->dynamic_smem;
  config.stream = stream;
  config.attrs = attrs;
  config.numAttrs = count;
  return cudaLaunchKernelExC(&config, step->kernel, params);
}

/* An operand's batch stride where it is read in a region: a batch's
 * matrices (a first kernel wrote one for each of the caller's, none where
 * the caller's stride is 0) follow each other, the region's rows over
 * them; one GEMM, or one matrix for all, keeps its stride. */
static long long view_stride(const pg_layout_args *args, long long stride, const pg_region *r) {
  return args->batch > 1 && stride != 0 ? r->rows / args->batch * r->ld : stride;
}

/* The call's argument as a step's kernel reads it: its views pointed into
 * the workspace at `base`. */
static void apply_views(pg_layout_args *args, const pg_views *views, const pg_workspace *workspace,
                        float *base) {
  if (views->a != PG_CALLER) {
    const pg_region *r = &workspace->region[views->a - 1];
    args->a = (const float *)((char *)base + r->offset);
    args->lda = (int)r->ld;
    args->vec_a = 1;
    args->stride_a = view_stride(args, args->stride_a, r);
  }
  if (views->b != PG_CALLER) {
    const pg_region *r = &workspace->region[views->b - 1];
    args->b = (const float *)((char *)base + r->offset);
    args->ldb = (int)r->ld;
    args->vec_b = 1;
    args->stride_b = view_stride(args, args->stride_b, r);
  }
  if (views->partials != PG_CALLER) {
    const pg_region *r = &workspace->region[views->partials - 1];
    args->partials = (float *)((char *)base + r->offset);
    args->ldp = (int)r->ld;
  }
}

void pg_plan_step_args(const pg_plan *plan, int step, float *base, pg_layout_args *args) {
  const pg_plan_then *then = &plan->then;
  if (then->step > 0 && step == then->step) {
    /* Another entry's kernel on its own argument: only the scales in the
     * workspace (their place to be, before there is one). */
    *args = then->args;
    args->wide_lines =
        base != NULL ? (const int *)((const char *)base +
                                     plan->workspace.region[then->lines_region].offset +
                                     then->lines_offset)
                     : PG_WIDE_LINES_AT_LAUNCH;
    return;
  }
  *args = plan->args;
  if (base != NULL) apply_views(args, &plan->step[step].views, &plan->workspace, base);
}

/* The tensor maps of what the entry's kernel reads in the workspace (A's
 * parts or copy, B's copy or B^T), the rest as planned. */
static cudaError_t encode_views(const pg_plan *plan, const pg_plan_step *step,
                                const pg_layout_args *args, pg_tma_maps *maps, const char **what) {
  *maps = plan->maps;
  cudaError_t err = cudaSuccess;
  if (plan->tma->workspace_lines) {
    *what = "encoding the tensor map of the workspace";
    if (step->views.partials == PG_CALLER) return cudaErrorInvalidValue; /* no workspace view */
    return pg_tma_encode_lines(args, plan->tma,
                               plan->workspace.region[step->views.partials - 1].rows, maps);
  }
  if (pg_tma_reads_layout(args, plan->tma)) {
    /* Over the batch, as the caller's operands' maps are. */
    const pg_region *region = plan->workspace.region;
    *what = "encoding the tensor maps of the operands in the workspace";
    return pg_tma_encode_views(
        args, plan->tma, step->views.a != PG_CALLER ? region[step->views.a - 1].rows : 0,
        step->views.b != PG_CALLER ? region[step->views.b - 1].rows : 0, maps);
  }
  if (step->views.a != PG_CALLER) {
    *what = "encoding the tensor map of A in the workspace";
    err = pg_tma_encode_a_parts(args, plan->tma, plan->workspace.region[step->views.a - 1].rows,
                                maps);
  }
  if (err == cudaSuccess && step->views.b != PG_CALLER) {
    *what = plan->tma->b_k_major ? "encoding B^T's tensor map"
                                 : "encoding the tensor map of B's copy";
    err = plan->tma->b_k_major ? pg_tma_encode_bt(args, plan->tma, maps)
                               : pg_tma_encode_b(args, plan->tma, maps);
  }
  return err;
}

static pg_status launch_steps(const pg_plan *plan, cudaStream_t stream) {
  float *base = NULL;
  if (plan->workspace.bytes > 0) {
    /* The pool is made to hold the bytes first, off this thread, so that a
     * device out of memory fails there and leaves this thread's CUDA
     * error as it was. */
    pg_status st =
        pg_device_pool_hold(plan->device, plan->pool, plan->workspace.bytes, plan->label);
    if (st == PG_OK)
      st = pg_device_pool_take(plan->pool, plan->workspace.bytes, stream, (void **)&base,
                               plan->label);
    if (st != PG_OK) return st;
  }
  cudaError_t err = cudaSuccess;
  char step_name[96] = "";
  for (int i = 0; i < plan->steps && err == cudaSuccess; ++i) {
    const pg_plan_step *step = &plan->step[i];
    pg_layout_args args;
    pg_plan_step_args(plan, i, base, &args);
    pg_tma_maps maps;
    void *params[] = {(void *)&args, (void *)&plan->maps};
    const char *what = NULL;
    if (i == plan->then.step && i > 0) {
      params[1] = (void *)&plan->then.maps;
    } else if (base != NULL) {
      if (i == plan->main_step && plan->tma != NULL &&
          (step->views.a != PG_CALLER || step->views.b != PG_CALLER ||
           plan->tma->workspace_lines)) {
        err = encode_views(plan, step, &args, &maps, &what);
        params[1] = (void *)&maps;
      }
    }
    if (err == cudaSuccess) {
      what = NULL;
      err = launch_with(step, params, stream);
    }
    if (err != cudaSuccess && what != NULL)
      snprintf(step_name, sizeof step_name, "%s", what);
    else if (err != cudaSuccess)
      snprintf(step_name, sizeof step_name, "launching its %s", step->what);
  }
  if (base != NULL) {
    const cudaError_t freed = cudaFreeAsync(base, stream);
    if (err == cudaSuccess && freed != cudaSuccess) {
      snprintf(step_name, sizeof step_name, "giving its workspace back");
      err = freed;
    }
  }
  return err == cudaSuccess ? PG_OK : launch_failed(plan, step_name, err);
}

/* Runs `launch` on the plan's device: where the calling thread's current
 * device is another, the plan's is made current for the launch and the
 * caller's put back after it (CUDA refuses a launch on a stream of another
 * device than the current one, and the default stream is the current
 * device's). */
static pg_status on_device(const pg_plan *plan, cudaStream_t stream,
                           pg_status (*launch)(const pg_plan *, cudaStream_t)) {
  int current = plan->device->ordinal;
  cudaError_t err = cudaGetDevice(&current);
  if (err == cudaSuccess && current != plan->device->ordinal)
    err = cudaSetDevice(plan->device->ordinal);
  if (err != cudaSuccess) return launch_failed(plan, "making its device current", err);
  pg_status st = launch(plan, stream);
  if (current != plan->device->ordinal) {
    err = cudaSetDevice(current);
    if (err != cudaSuccess && st == PG_OK)
      st = launch_failed(plan, "making the caller's device current again", err);
  }
  return st;
}

static pg_status launch_plan(const pg_plan *plan, cudaStream_t stream) {
  if (plan->entry->info.kind == PG_KIND_LIBRARY)
    return pg_cublas_sgemm(plan->device, &plan->args, plan->entry->info.precision, stream);
  return launch_steps(plan, stream);
}

/* An address's alignment as a plan's decision sees it: 16 bytes (vectors,
 * TMA), 4 (a float), or less. */
static int alignment_of(const void *p) {
  const uintptr_t u = (uintptr_t)p;
  return (u & 15u) == 0 ? 16 : (u & 3u) == 0 ? 4 : 1;
}

static pg_status same_alignment(const pg_plan *plan, const char *name, const void *planned,
                                const void *given) {
  if (alignment_of(planned) == alignment_of(given)) return PG_OK;
  pg_set_error_detail("%s: %s at %p is aligned to %d bytes, the planned one to %d: the plan's "
                      "choice rests on it; make a plan for these matrices",
                      plan->label, name, given, alignment_of(given), alignment_of(planned));
  return PG_ERR_UNSUPPORTED;
}

pg_status pg_plan_launch_with(const pg_plan *plan, const float *a, const float *b, float *c,
                              cudaStream_t stream) {
  pg_clear_error_detail();
  if (plan == NULL) {
    pg_set_error_detail("no plan given (NULL)");
    return PG_ERR_INVALID_ARG;
  }
  if (plan->entry == NULL) return PG_OK; /* nothing to do */
  const pg_layout_args *g = &plan->args;
  if (c == NULL || (g->k > 0 && !plan->scales_c_only && (a == NULL || b == NULL))) {
    pg_set_error_detail("%s is NULL with work to do", c == NULL ? "C" : a == NULL ? "A" : "B");
    return PG_ERR_INVALID_ARG;
  }
  pg_status st = same_alignment(plan, "A", g->a, a);
  if (st == PG_OK) st = same_alignment(plan, "B", g->b, b);
  if (st == PG_OK) st = same_alignment(plan, "C", g->c, c);
  if (st != PG_OK) return st;
  /* The plan on the new matrices: the same steps, the maps of the
   * operands read where they are encoded anew. */
  pg_plan moved = *plan;
  moved.args.a = a;
  moved.args.b = b;
  moved.args.c = c;
  if (moved.tma != NULL && !moved.scales_c_only) {
    const pg_plan_step *main = &moved.step[moved.main_step];
    const cudaError_t err = pg_tma_encode(&moved.args, moved.tma, main->views.a == PG_CALLER,
                                          main->views.b == PG_CALLER, &moved.maps);
    if (err != cudaSuccess) return launch_failed(plan, "encoding the tensor maps", err);
  }
  if (moved.then.step > 0) {
    /* The wide tiles' kernel reads the caller's operands (no view). */
    moved.then.args.a = a;
    moved.then.args.b = b;
    moved.then.args.c = c;
    const cudaError_t err = moved.then.tma != NULL
                                ? pg_tma_encode(&moved.then.args, moved.then.tma, 1, 1,
                                                &moved.then.maps)
                                : cudaSuccess;
    if (err != cudaSuccess)
      return launch_failed(plan, "encoding the wide tiles' tensor maps", err);
  }
  return on_device(&moved, stream, launch_plan);
}

pg_status pg_plan_launch(const pg_plan *plan, cudaStream_t stream) {
  pg_clear_error_detail();
  if (plan == NULL) {
    pg_set_error_detail("no plan given (NULL)");
    return PG_ERR_INVALID_ARG;
  }
  if (plan->entry == NULL) return PG_OK; /* nothing to do */
  return on_device(plan, stream, launch_plan);
}
