/* Argument parsing for pipegemm: one table of options says which command
 * takes which option, and the loop here reads argv through it. The values
 * are read in args_values.c, each command's rules checked in args_checks.c,
 * and the usage texts of args_usage.c document exactly this table
 * (tests/test_cli_usage.c checks both directions). Also the plan of runs
 * the options ask for, and the command line as the report repeats it. */
#include "args_internal.h"
#include "adapters/proc.h"
#include "introspect.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* Which commands accept an option: one bit per pgc_command. */
#define FOR_TOOL (1u << PGC_CMD_NONE)
#define FOR_LIST (1u << PGC_CMD_LIST)
#define FOR_BENCH (1u << PGC_CMD_BENCH)
#define FOR_STUDY (1u << PGC_CMD_STUDY)
#define FOR_PROFILE (1u << PGC_CMD_PROFILE)
#define FOR_INSPECT (1u << PGC_CMD_INSPECT)
#define FOR_TRACE (1u << PGC_CMD_TRACE)
#define FOR_EVERY \
  (FOR_TOOL | FOR_LIST | FOR_BENCH | FOR_STUDY | FOR_PROFILE | FOR_INSPECT | FOR_TRACE)

/* Which experiments of `study` accept an option: one bit per pgc_study. */
#define IN_PIPELINING (1u << PGC_STUDY_PIPELINING)
#define IN_SINGLE_WARP (1u << PGC_STUDY_SINGLE_WARP)
#define IN_EVERY_STUDY (IN_PIPELINING | IN_SINGLE_WARP)

static const option_spec option_table[] = {
    {"--help", OPT_HELP, 0, FOR_EVERY, IN_EVERY_STUDY},
    {"--version", OPT_VERSION, 0, FOR_TOOL, 0},
    {"--variant", OPT_VARIANT, 1, FOR_BENCH | FOR_PROFILE | FOR_INSPECT | FOR_TRACE, 0},
    {"--size", OPT_SIZE, 1, FOR_BENCH | FOR_STUDY | FOR_PROFILE | FOR_TRACE, IN_PIPELINING},
    {"--m", OPT_M, 1, FOR_BENCH | FOR_PROFILE | FOR_TRACE, 0},
    {"--n", OPT_N, 1, FOR_BENCH | FOR_PROFILE | FOR_TRACE, 0},
    {"--k", OPT_K, 1, FOR_BENCH | FOR_STUDY | FOR_PROFILE | FOR_TRACE, IN_SINGLE_WARP},
    {"--shapes", OPT_SHAPES, 1, FOR_BENCH, 0},
    {"--op", OPT_OP, 1, FOR_BENCH, 0},
    {"--batch", OPT_BATCH, 1, FOR_BENCH, 0},
    {"--stride-a", OPT_STRIDE_A, 1, FOR_BENCH, 0},
    {"--stride-b", OPT_STRIDE_B, 1, FOR_BENCH, 0},
    {"--stride-c", OPT_STRIDE_C, 1, FOR_BENCH, 0},
    {"--stages", OPT_STAGES, 1, FOR_BENCH | FOR_PROFILE | FOR_TRACE, 0},
    {"--warmup", OPT_WARMUP, 1, FOR_BENCH | FOR_STUDY | FOR_TRACE, IN_SINGLE_WARP},
    {"--iters", OPT_ITERS, 1, FOR_BENCH | FOR_STUDY | FOR_TRACE, IN_SINGLE_WARP},
    {"--rounds", OPT_ROUNDS, 1, FOR_BENCH, 0},
    {"--inputs", OPT_INPUTS, 1, FOR_BENCH, 0},
    {"--flush-l2", OPT_FLUSH_L2, 1, FOR_BENCH | FOR_STUDY | FOR_TRACE, IN_EVERY_STUDY},
    {"--seed", OPT_SEED, 1, FOR_BENCH | FOR_STUDY | FOR_TRACE, IN_EVERY_STUDY},
    {"--format", OPT_FORMAT, 1,
     FOR_LIST | FOR_BENCH | FOR_STUDY | FOR_PROFILE | FOR_INSPECT | FOR_TRACE,
     IN_EVERY_STUDY},
    {"--check", OPT_CHECK, 1, FOR_BENCH | FOR_STUDY, IN_EVERY_STUDY},
    {"--device", OPT_DEVICE, 1, FOR_LIST | FOR_BENCH | FOR_STUDY | FOR_PROFILE | FOR_TRACE,
     IN_EVERY_STUDY},
    {"--quiet", OPT_QUIET, 0, FOR_BENCH | FOR_STUDY | FOR_PROFILE | FOR_TRACE,
     IN_EVERY_STUDY},
    {"--profile", OPT_PROFILE, 0, FOR_STUDY, IN_PIPELINING},
    {"--ncu", OPT_NCU, 1, FOR_STUDY | FOR_PROFILE, IN_PIPELINING},
    {"--raw", OPT_RAW, 1, FOR_STUDY | FOR_PROFILE, IN_PIPELINING},
    {"--binary", OPT_BINARY, 1, FOR_INSPECT, 0},
    /* inspect's --check is a flag; bench's and study's takes on|off. */
    {"--check", OPT_INSPECT_CHECK, 0, FOR_INSPECT, 0},
    {"--swap", OPT_SWAP, 1, FOR_INSPECT, 0},
    {"--blocks", OPT_BLOCKS, 1, FOR_TRACE, 0},
    {"--out", OPT_OUT, 1, FOR_TRACE, 0},
    {"--long", OPT_LONG, 0, FOR_LIST, 0},
};
#define OPTION_COUNT ((int)(sizeof option_table / sizeof option_table[0]))

typedef struct {
  const char *name;
  pgc_command command;
} command_spec;

static const command_spec command_table[] = {
    {"list", PGC_CMD_LIST},
    {"bench", PGC_CMD_BENCH},
    {"study", PGC_CMD_STUDY},
    {"profile", PGC_CMD_PROFILE},
    {"inspect", PGC_CMD_INSPECT},
    {"trace", PGC_CMD_TRACE},
};
#define COMMAND_COUNT ((int)(sizeof command_table / sizeof command_table[0]))

int pgc_option_count(void) { return OPTION_COUNT; }

const char *pgc_option_name(int index) {
  return index >= 0 && index < OPTION_COUNT ? option_table[index].name : NULL;
}

int pgc_option_applies(int index, pgc_command command) {
  if (index < 0 || index >= OPTION_COUNT) return 0;
  return (option_table[index].commands & (1u << command)) != 0;
}

int pgc_option_applies_to_study(int index, pgc_study study) {
  if (!pgc_option_applies(index, PGC_CMD_STUDY) || study == PGC_STUDY_NONE)
    return 0;
  return (option_table[index].studies & (1u << study)) != 0;
}

/* The option of that name for the command (one name may mean different
 * options to different commands: --check), else any of that name, so that
 * the caller can say it is not one of the command's. */
static const option_spec *find_option(const char *name, size_t len,
                                      unsigned command_bit) {
  const option_spec *any = NULL;
  for (int i = 0; i < OPTION_COUNT; ++i) {
    if (strlen(option_table[i].name) == len &&
        strncmp(option_table[i].name, name, len) == 0) {
      if (option_table[i].commands & command_bit) return &option_table[i];
      if (!any) any = &option_table[i];
    }
  }
  return any;
}

/* How messages name a command: "'bench'", or the tool before any command. */
const char *args_command_display(pgc_command command) {
  switch (command) {
    case PGC_CMD_LIST: return "'list'";
    case PGC_CMD_BENCH: return "'bench'";
    case PGC_CMD_STUDY: return "'study'";
    case PGC_CMD_PROFILE: return "'profile'";
    case PGC_CMD_INSPECT: return "'inspect'";
    case PGC_CMD_TRACE: return "'trace'";
    default: return "pipegemm without a command";
  }
}

static void set_defaults(pgc_options *opts, int argc, char **argv) {
  memset(opts, 0, sizeof *opts);
  opts->command = PGC_CMD_NONE;
  opts->help_topic = PGC_CMD_NONE;
  opts->study = PGC_STUDY_NONE;
  opts->format = PGC_FORMAT_TABLE;
  opts->device = 0;
  opts->quiet = 0;
  opts->check = 1;
  opts->flush_l2 = 1;
  opts->seed = PGC_DEFAULT_SEED;
  opts->m = opts->n = opts->k = PGC_BENCH_DEFAULT_SIZE;
  opts->warmup = PGC_DEFAULT_WARMUP;
  opts->iters = PGC_DEFAULT_ITERS;
  opts->rounds = 1;
  const pgc_layout_request nn = PGC_LAYOUT_REQUEST_NN;
  opts->layout = nn;
  opts->all_variants = 1;
  opts->trace_blocks = PGC_TRACE_DEFAULT_BLOCKS;
  opts->argc = argc;
  opts->argv = argv;
}

/* Applies one option with its value (NULL for an option without one). */
static int apply_option(const option_spec *spec, const char *value,
                        pgc_options *opts, shape_request *shape, char *err,
                        size_t err_size) {
  switch (spec->id) {
    case OPT_HELP:
    case OPT_VERSION: return PGC_EXIT_OK; /* handled by the caller */
    case OPT_VARIANT: return args_parse_variant_list(value, opts, err, err_size);
    case OPT_SIZE:
      shape->size_given = 1;
      return args_parse_int_option(spec->name, value, 0, INT_MAX, &shape->size, err,
                                   err_size);
    case OPT_M:
      return args_parse_int_option(spec->name, value, 0, INT_MAX, &shape->m, err,
                                   err_size);
    case OPT_N:
      return args_parse_int_option(spec->name, value, 0, INT_MAX, &shape->n, err,
                                   err_size);
    case OPT_K:
      return args_parse_int_option(spec->name, value, 0, INT_MAX, &shape->k, err,
                                   err_size);
    case OPT_SHAPES:
      if (value[0] == '\0')
        return args_usage_error(err, err_size, "%s needs a path", spec->name);
      opts->shapes_path = value;
      return PGC_EXIT_OK;
    case OPT_OP: return args_parse_ops(value, opts, err, err_size);
    case OPT_BATCH:
      return args_parse_int_option(spec->name, value, 1, INT_MAX, &opts->layout.batch, err,
                                   err_size);
    case OPT_STRIDE_A:
      return args_parse_stride(spec->name, value, &opts->layout.stride_a, err, err_size);
    case OPT_STRIDE_B:
      return args_parse_stride(spec->name, value, &opts->layout.stride_b, err, err_size);
    case OPT_STRIDE_C:
      return args_parse_stride(spec->name, value, &opts->layout.stride_c, err, err_size);
    case OPT_STAGES: return args_parse_stage_list(value, opts, err, err_size);
    case OPT_WARMUP:
      return args_parse_int_option(spec->name, value, 0, PGC_MAX_REPEATS,
                                   &opts->warmup, err, err_size);
    case OPT_ITERS:
      return args_parse_int_option(spec->name, value, 1, PGC_MAX_REPEATS,
                                   &opts->iters, err, err_size);
    case OPT_ROUNDS:
      return args_parse_int_option(spec->name, value, 1, PGC_MAX_ROUNDS, &opts->rounds, err,
                                   err_size);
    case OPT_FLUSH_L2:
      return args_parse_on_off(spec->name, value, &opts->flush_l2, err, err_size);
    case OPT_SEED: return args_parse_seed(value, &opts->seed, err, err_size);
    case OPT_INPUTS:
      for (int i = 0; pgc_inputs_name(i) != NULL; ++i)
        if (strcmp(value, pgc_inputs_name(i)) == 0) {
          opts->inputs = i;
          return PGC_EXIT_OK;
        }
      return args_usage_error(err, err_size, "--inputs expects uniform, wide or tiny, got '%s'",
                              args_quoted(value).text);
    case OPT_FORMAT: return args_parse_format(value, &opts->format, err, err_size);
    case OPT_CHECK:
      return args_parse_on_off(spec->name, value, &opts->check, err, err_size);
    case OPT_DEVICE:
      return args_parse_int_option(spec->name, value, 0, INT_MAX, &opts->device,
                                   err, err_size);
    case OPT_QUIET: opts->quiet = 1; return PGC_EXIT_OK;
    case OPT_PROFILE: opts->profile = 1; return PGC_EXIT_OK;
    case OPT_NCU:
    case OPT_RAW:
      if (value[0] == '\0')
        return args_usage_error(err, err_size, "%s needs a path", spec->name);
      if (spec->id == OPT_NCU)
        opts->ncu_path = value;
      else
        opts->raw_path = value;
      return PGC_EXIT_OK;
    case OPT_BINARY:
      if (value[0] == '\0')
        return args_usage_error(err, err_size, "%s needs a path", spec->name);
      opts->inspect_binary = value;
      return PGC_EXIT_OK;
    case OPT_INSPECT_CHECK: opts->inspect_check = 1; return PGC_EXIT_OK;
    case OPT_SWAP: return args_parse_swap(value, opts, err, err_size);
    case OPT_BLOCKS:
      return args_parse_int_option(spec->name, value, 1, PG_TRACE_MAX_BLOCKS, &opts->trace_blocks,
                                   err, err_size);
    case OPT_LONG: opts->long_listing = 1; return PGC_EXIT_OK;
    case OPT_OUT:
      if (value[0] == '\0')
        return args_usage_error(err, err_size, "%s needs a path", spec->name);
      opts->out_path = value;
      return PGC_EXIT_OK;
  }
  return args_usage_error(err, err_size, "internal error: unhandled option %s",
                          spec->name);
}

static int parse_command_args(int argc, char **argv, int first,
                              pgc_options *opts, char *err, size_t err_size) {
  unsigned command_bit = 1u << opts->command;
  shape_request shape = {opts->command == PGC_CMD_STUDY
                             ? PGC_STUDY_DEFAULT_SIZE
                         : opts->command == PGC_CMD_PROFILE
                             ? PGC_PROFILE_DEFAULT_SIZE
                             : PGC_BENCH_DEFAULT_SIZE,
                         0, -1, -1, -1};
  /* The options given, in order, each once: a study's experiment may come
   * after its options, so whether it takes them is checked at the end. */
  const option_spec *given[OPTION_COUNT];
  int given_count = 0;
  if (opts->command == PGC_CMD_TRACE) {
    opts->warmup = PGC_TRACE_DEFAULT_WARMUP;
    opts->iters = PGC_TRACE_DEFAULT_ITERS;
  }
  for (int i = first; i < argc; ++i) {
    const char *arg = argv[i];
    if (strcmp(arg, "-h") == 0) arg = "--help";
    if (arg[0] == '-' && arg[1] != '\0' && arg[1] != '-')
      return args_usage_error(err, err_size, "unknown option '%s'", args_quoted(arg).text);
    if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
      int rc = args_parse_experiment(arg, opts, err, err_size);
      if (rc != PGC_EXIT_OK) return rc;
      continue;
    }
    const char *equals = strchr(arg, '=');
    size_t name_len = equals ? (size_t)(equals - arg) : strlen(arg);
    const option_spec *spec = find_option(arg, name_len, command_bit);
    if (!spec)
      return args_usage_error(err, err_size, "unknown option '%s'",
                              args_quoted_part(arg, name_len).text);
    if (!(spec->commands & command_bit))
      return args_usage_error(err, err_size, "%s is not an option of %s",
                              spec->name, args_command_display(opts->command));
    if (spec->id == OPT_HELP && !equals) {
      opts->help_topic = opts->command;
      opts->command = PGC_CMD_HELP;
      return PGC_EXIT_OK;
    }
    if (spec->id == OPT_VERSION && !equals) {
      if (i + 1 < argc)
        return args_usage_error(err, err_size, "unexpected argument '%s' after %s",
                                args_quoted(argv[i + 1]).text, spec->name);
      opts->command = PGC_CMD_VERSION;
      return PGC_EXIT_OK;
    }
    const char *value = NULL;
    if (!spec->takes_value) {
      if (equals)
        return args_usage_error(err, err_size, "%s takes no value", spec->name);
    } else if (equals) {
      value = equals + 1;
    } else {
      /* "--size --m 5": the next word is another option, not a value. */
      if (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0)
        return args_usage_error(err, err_size, "%s needs a value", spec->name);
      value = argv[++i];
    }
    int rc = apply_option(spec, value, opts, &shape, err, err_size);
    if (rc != PGC_EXIT_OK) return rc;
    int seen = 0;
    for (int g = 0; g < given_count; ++g) seen |= given[g] == spec;
    if (!seen) given[given_count++] = spec;
  }
  if (opts->command == PGC_CMD_NONE)
    return args_usage_error(err, err_size, "no command given");
  if (opts->command == PGC_CMD_STUDY) {
    int rc = args_check_study_options(opts, given, given_count, err, err_size);
    if (rc != PGC_EXIT_OK) return rc;
  }
  return args_settle_shape(opts, &shape, err, err_size);
}

const char *pgc_command_name(pgc_command command) {
  for (int i = 0; i < COMMAND_COUNT; ++i)
    if (command_table[i].command == command) return command_table[i].name;
  return NULL;
}

int pgc_parse_args(int argc, char **argv, pgc_options *opts, char *err,
                   size_t err_size) {
  if (err && err_size > 0) err[0] = '\0';
  set_defaults(opts, argc, argv);
  if (argc < 2 || !argv[1])
    return args_usage_error(err, err_size, "no command given");
  const char *word = argv[1];
  if (word[0] == '-') /* options of the tool itself: --help, --version */
    return parse_command_args(argc, argv, 1, opts, err, err_size);
  for (int i = 0; i < COMMAND_COUNT; ++i) {
    if (strcmp(word, command_table[i].name) == 0) {
      opts->command = command_table[i].command;
      return parse_command_args(argc, argv, 2, opts, err, err_size);
    }
  }
  args_usage_error(err, err_size, "unknown command '%s' (commands: ", args_quoted(word).text);
  for (int i = 0; i < COMMAND_COUNT; ++i)
    args_append(err, err_size, "%s%s", i ? ", " : "", command_table[i].name);
  args_append(err, err_size, ")");
  return PGC_EXIT_USAGE;
}

/* ---- the plan of runs ----------------------------------------------------- */

static int expand_variant(const pgc_options *opts, const pg_variant_info *variant,
                        pgc_run_spec *runs, int capacity, int count) {
  if (variant->min_stages == variant->max_stages || opts->stage_count == 0) {
    int stages = variant->min_stages == variant->max_stages
                     ? variant->min_stages
                     : variant->default_stages;
    if (count < capacity) runs[count] = (pgc_run_spec){variant, stages};
    return count + 1;
  }
  for (int s = 0; s < opts->stage_count; ++s) {
    int stages = opts->stages[s];
    if (stages < variant->min_stages || stages > variant->max_stages) continue;
    if (count < capacity) runs[count] = (pgc_run_spec){variant, stages};
    ++count;
  }
  return count;
}

int pgc_expand_runs(const pgc_options *opts, pgc_run_spec *runs, int capacity) {
  int count = 0;
  if (opts->all_variants) {
    for (int i = 0; i < pg_variant_count(); ++i) {
      const pg_variant_info *variant = pg_variant_at(i);
      if (variant) count = expand_variant(opts, variant, runs, capacity, count);
    }
  } else {
    for (int i = 0; i < opts->variant_count; ++i)
      count = expand_variant(opts, opts->variants[i], runs, capacity, count);
  }
  return count;
}

void pgc_command_line_text(const pgc_options *opts, char *buf, size_t size) {
  size_t used = 0;
  if (size == 0) return;
  buf[0] = '\0';
  for (int i = 0; i < opts->argc; ++i) {
    /* argv[0] may be a path; the report names the tool. */
    const char *word = i == 0 ? "pipegemm" : opts->argv[i];
    size_t gap = i ? 1 : 0;
    size_t need = pgc_shell_quote(NULL, 0, word, PGC_QUOTE_IF_NEEDED);
    if (used + gap + need >= size) break; /* whole words only */
    if (gap) buf[used++] = ' ';
    used += pgc_shell_quote(buf + used, size - used, word, PGC_QUOTE_IF_NEEDED);
  }
}

void pgc_header_for(pgc_header *header, const pgc_session *session, const pgc_options *opts) {
  char command[PGC_COMMAND_LINE_SIZE];
  pgc_command_line_text(opts, command, sizeof command);
  pgc_header_build(header, session, command);
}
