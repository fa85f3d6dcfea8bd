/* The rules of each command beyond its options' own values: study's
 * experiment and the options each experiment takes, the shape (--size,
 * --m/--n/--k, --shapes), the stage counts of the variants bench and
 * profile name, and trace's one traced variant and its --out FILE. */
#include "args_internal.h"
#include "introspect.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  const char *name;
  pgc_study study;
} study_spec;

static const study_spec study_table[] = {
    {"pipelining", PGC_STUDY_PIPELINING},
    {"single-warp", PGC_STUDY_SINGLE_WARP},
};
#define STUDY_COUNT ((int)(sizeof study_table / sizeof study_table[0]))

const char *pgc_study_name(pgc_study study) {
  for (int s = 0; s < STUDY_COUNT; ++s)
    if (study_table[s].study == study) return study_table[s].name;
  return NULL;
}

/* A variant named with --variant must allow every count in --stages,
 * unless it has one fixed count (then --stages does not apply to it). */
static int check_explicit_stages(const pgc_options *opts, char *err,
                                 size_t err_size) {
  if (opts->all_variants) return PGC_EXIT_OK;
  for (int v = 0; v < opts->variant_count; ++v) {
    const pg_variant_info *variant = opts->variants[v];
    if (variant->min_stages == variant->max_stages) continue;
    for (int s = 0; s < opts->stage_count; ++s) {
      int stages = opts->stages[s];
      if (stages < variant->min_stages || stages > variant->max_stages)
        return args_usage_error(err, err_size,
                                "%s allows stage counts %d-%d, --stages asked for %d",
                                variant->name, variant->min_stages,
                                variant->max_stages, stages);
    }
  }
  return PGC_EXIT_OK;
}

/* bench's layout of its one shape: a stride where there is a batch, and
 * the Cs of the batch apart. With --shapes, each line is judged with its
 * own words (src/cli/shapes.c): a stride given here applies to the lines
 * with a batch. */
static int check_layout(const pgc_options *opts, char *err, size_t err_size) {
  if (opts->shapes_path) return PGC_EXIT_OK;
  const pgc_layout_request *l = &opts->layout;
  const long long strides[3] = {l->stride_a, l->stride_b, l->stride_c};
  static const char *const names[3] = {"--stride-a", "--stride-b", "--stride-c"};
  for (int i = 0; i < 3; ++i)
    if (strides[i] != PGC_STRIDE_DENSE && l->batch <= 1)
      return args_usage_error(err, err_size,
                              "%s applies to a batch: give --batch above 1 (one GEMM has no "
                              "stride)",
                              names[i]);
  const pgc_layout layout = {PG_OP_N, PG_OP_N, l->batch, l->stride_a, l->stride_b,
                             l->stride_c};
  char name[64];
  snprintf(name, sizeof name, "--stride-c %lld", l->stride_c);
  return pgc_layout_check(opts->m, opts->n, &layout, name, err, err_size);
}

/* trace: one variant with a traced kernel, at most one stage count in its
 * range, a file to write, and a problem with something to compute. */
static int check_trace_options(const pgc_options *opts, char *err, size_t err_size) {
  if (opts->all_variants)
    return args_usage_error(err, err_size, "trace takes one variant: --variant NAME");
  if (opts->variant_count != 1)
    return args_usage_error(err, err_size, "trace takes one variant, --variant named %d",
                            opts->variant_count);
  const pg_variant_info *variant = opts->variants[0];
  if (!pg_variant_traced(variant)) {
    args_usage_error(err, err_size, "%s has no traced kernel (trace takes: ", variant->name);
    args_append_traced(err, err_size);
    args_append(err, err_size, ")");
    return PGC_EXIT_USAGE;
  }
  if (opts->stage_count > 1)
    return args_usage_error(err, err_size, "trace takes one stage count, --stages gave %d",
                            opts->stage_count);
  if (opts->stage_count == 1 &&
      (opts->stages[0] < variant->min_stages || opts->stages[0] > variant->max_stages))
    return args_usage_error(err, err_size,
                            "%s allows stage counts %d-%d, --stages asked for %d", variant->name,
                            variant->min_stages, variant->max_stages, opts->stages[0]);
  if (opts->out_path == NULL)
    return args_usage_error(err, err_size, "trace needs --out FILE, the JSON file to write");
  if (opts->m == 0 || opts->n == 0)
    return args_usage_error(err, err_size,
                            "trace needs M and N of at least 1 (%dx%d: no kernel runs)", opts->m,
                            opts->n);
  return PGC_EXIT_OK;
}

/* A word that is no option: only `study` takes one, the experiment. */
int args_parse_experiment(const char *arg, pgc_options *opts, char *err,
                            size_t err_size) {
  if (opts->command != PGC_CMD_STUDY || opts->study != PGC_STUDY_NONE)
    return args_usage_error(err, err_size, "unexpected argument '%s' for %s", args_quoted(arg).text,
                                 args_command_display(opts->command));
  for (int s = 0; s < STUDY_COUNT; ++s)
    if (strcmp(arg, study_table[s].name) == 0) opts->study = study_table[s].study;
  if (opts->study != PGC_STUDY_NONE) return PGC_EXIT_OK;
  args_usage_error(err, err_size, "unknown experiment '%s' (known: ", args_quoted(arg).text);
  for (int s = 0; s < STUDY_COUNT; ++s)
    args_append(err, err_size, "%s%s", s ? ", " : "", study_table[s].name);
  args_append(err, err_size, ")");
  return PGC_EXIT_USAGE;
}

/* `study` needs an experiment, which must take every option given. */
int args_check_study_options(const pgc_options *opts, const option_spec *const *given,
                               int given_count, char *err, size_t err_size) {
  if (opts->study == PGC_STUDY_NONE) {
    args_usage_error(err, err_size, "study needs an experiment: ");
    for (int s = 0; s < STUDY_COUNT; ++s)
      args_append(err, err_size, "%s%s", s ? ", " : "", study_table[s].name);
    return PGC_EXIT_USAGE;
  }
  for (int g = 0; g < given_count; ++g)
    if (!(given[g]->studies & (1u << opts->study)))
      return args_usage_error(err, err_size, "%s is not an option of 'study %s'",
                              given[g]->name, pgc_study_name(opts->study));
  if (!opts->profile && (opts->ncu_path || opts->raw_path))
    return args_usage_error(err, err_size, "%s needs --profile",
                            opts->ncu_path ? "--ncu" : "--raw");
  return PGC_EXIT_OK;
}

/* M, N and K from --size and --m/--n/--k (single-warp: 32 x 32 x K), and
 * the stage counts of the variants named. */
int args_settle_shape(pgc_options *opts, const shape_request *shape, char *err,
                        size_t err_size) {
  if (opts->command == PGC_CMD_STUDY && opts->study == PGC_STUDY_SINGLE_WARP) {
    opts->m = opts->n = PG_SINGLE_WARP_DIM;
    opts->k = shape->k >= 0 ? shape->k : PGC_SINGLE_WARP_DEFAULT_K;
    if (opts->k > PGC_SINGLE_WARP_MAX_K)
      return args_usage_error(err, err_size,
                              "--k %d is too large for study single-warp (at most "
                              "%d: one warp does all the work)",
                              opts->k, PGC_SINGLE_WARP_MAX_K);
    return PGC_EXIT_OK;
  }
  /* The file gives every shape: a dimension given beside it would be
   * ignored, which is worse than refused. */
  if (opts->shapes_path) {
    const char *also = shape->size_given ? "--size"
                       : shape->m >= 0   ? "--m"
                       : shape->n >= 0   ? "--n"
                       : shape->k >= 0   ? "--k"
                                         : NULL;
    if (also)
      return args_usage_error(err, err_size,
                              "--shapes and %s exclude each other: the file gives "
                              "every shape", also);
  }
  opts->m = shape->m >= 0 ? shape->m : shape->size;
  opts->n = shape->n >= 0 ? shape->n : shape->size;
  opts->k = shape->k >= 0 ? shape->k : shape->size;
  if (opts->command == PGC_CMD_BENCH) {
    const int rc = check_layout(opts, err, err_size);
    if (rc != PGC_EXIT_OK) return rc;
  }
  if (opts->command == PGC_CMD_BENCH || opts->command == PGC_CMD_PROFILE)
    return check_explicit_stages(opts, err, err_size);
  if (opts->command == PGC_CMD_TRACE) return check_trace_options(opts, err, err_size);
  return PGC_EXIT_OK;
}
