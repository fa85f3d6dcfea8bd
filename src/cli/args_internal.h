/* What the parts of the argument parser share (src/cli/args*.c), and no
 * one else: the option table's row, the helpers that write a usage message,
 * and the parsers of values and checks of commands that args.c calls. */
#ifndef PGC_ARGS_INTERNAL_H
#define PGC_ARGS_INTERNAL_H

#include <stddef.h>

#include "args.h"

typedef enum {
  OPT_HELP,
  OPT_VERSION,
  OPT_VARIANT,
  OPT_SIZE,
  OPT_M,
  OPT_N,
  OPT_K,
  OPT_SHAPES,
  OPT_OP,
  OPT_BATCH,
  OPT_STRIDE_A,
  OPT_STRIDE_B,
  OPT_STRIDE_C,
  OPT_STAGES,
  OPT_WARMUP,
  OPT_ITERS,
  OPT_ROUNDS,
  OPT_INPUTS,
  OPT_FLUSH_L2,
  OPT_SEED,
  OPT_FORMAT,
  OPT_CHECK,
  OPT_DEVICE,
  OPT_QUIET,
  OPT_PROFILE,
  OPT_NCU,
  OPT_RAW,
  OPT_BINARY,
  OPT_INSPECT_CHECK,
  OPT_SWAP,
  OPT_BLOCKS,
  OPT_OUT,
  OPT_LONG
} option_id;

typedef struct {
  const char *name;
  option_id id;
  int takes_value;
  unsigned commands;
  unsigned studies; /* with FOR_STUDY: the experiments that take it */
} option_spec;

/* ---- messages (args_values.c) ---------------------------------------------- */

/* Writes a message into the caller's buffer; returns PGC_EXIT_USAGE so that
 * `return args_usage_error(...)` reads as what it does. */
int args_usage_error(char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends to a message already in err, truncating at the buffer's end. */
void args_append(char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Argument text as a message repeats it (pgc_escape_text): enough of it to
 * know it again, short enough that the longest message, an unknown
 * variant's with every name listed after it, still fits PGC_ERROR_SIZE. */
#define QUOTED_SIZE 256
typedef struct {
  char text[QUOTED_SIZE];
} args_quoted_text;

/* For a message's arguments: `args_quoted(value).text` lives until the end
 * of the call it is written in. */
args_quoted_text args_quoted_part(const char *text, size_t len);
args_quoted_text args_quoted(const char *text);

/* The variants with a traced kernel, the ones trace takes, after a message. */
void args_append_traced(char *err, size_t err_size);

/* ---- values (args_values.c): each PGC_EXIT_OK, or PGC_EXIT_USAGE with the
 * message in err -------------------------------------------------------------- */

/* A non-negative integer option value in [min, max]. */
int args_parse_int_option(const char *option, const char *text, int min, int max, int *value,
                          char *err, size_t err_size);
int args_parse_on_off(const char *option, const char *text, int *flag, char *err,
                      size_t err_size);
int args_parse_format(const char *text, pgc_format *format, char *err, size_t err_size);
int args_parse_seed(const char *text, uint64_t *seed, char *err, size_t err_size);
/* --stride-a/b/c: a count of floats, 0 to LLONG_MAX. */
int args_parse_stride(const char *option, const char *text, long long *value, char *err,
                      size_t err_size);
/* --op: NN, NT, TN or TT, or a comma-separated list, into opts->layout. */
int args_parse_ops(const char *text, pgc_options *opts, char *err, size_t err_size);
/* --stages: counts and ranges into opts->stages. */
int args_parse_stage_list(const char *list, pgc_options *opts, char *err, size_t err_size);
/* --variant: names (or all, where the command takes it) into opts. */
int args_parse_variant_list(const char *list, pgc_options *opts, char *err, size_t err_size);
/* --swap A=B: two registry names. */
int args_parse_swap(const char *value, pgc_options *opts, char *err, size_t err_size);

/* ---- the command's rules (args_checks.c) ------------------------------------ */

/* How messages name a command: "'bench'", or the tool before any command
 * (args.c). */
const char *args_command_display(pgc_command command);

/* Dimensions as given: --size, then --m/--n/--k wherever they appear. */
typedef struct {
  int size;
  int size_given; /* 1: --size was on the command line */
  int m, n, k;    /* -1: not given */
} shape_request;

/* A word that is no option: only `study` takes one, the experiment. */
int args_parse_experiment(const char *arg, pgc_options *opts, char *err, size_t err_size);
/* `study` needs an experiment, which must take every option given. */
int args_check_study_options(const pgc_options *opts, const option_spec *const *given,
                             int given_count, char *err, size_t err_size);
/* M, N and K from the request, and the rules of the command about them and
 * about the stage counts of the variants named. */
int args_settle_shape(pgc_options *opts, const shape_request *shape, char *err,
                      size_t err_size);

#endif
