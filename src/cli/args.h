/* Command-line parsing for the pipegemm tool: pure functions that read argv
 * and the variant registry, never print, never exit and never touch a GPU,
 * so that every rule here is checked by tests/test_cli_args.c,
 * test_cli_commands.c and test_cli_usage.c. */
#ifndef PGC_ARGS_H
#define PGC_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include "measure/report.h"  /* the exit codes, pgc_format */
#include "measure/session.h" /* pgc_run_spec */
#include "pipegemm.h"
#include "shapes.h" /* pgc_layout_request */

typedef enum {
  PGC_CMD_NONE = 0,
  PGC_CMD_HELP,    /* print the usage text of help_topic */
  PGC_CMD_VERSION,
  PGC_CMD_LIST,
  PGC_CMD_BENCH,
  PGC_CMD_STUDY,
  PGC_CMD_PROFILE,
  PGC_CMD_INSPECT,
  PGC_CMD_TRACE
} pgc_command;

typedef enum {
  PGC_STUDY_NONE = 0,
  PGC_STUDY_PIPELINING, /* the "CUDA Kernel Study: Pipelining" write-up: 2048^3, baseline/pingpong/cp_async */
  PGC_STUDY_SINGLE_WARP /* the "A study on CUDA async memcpy" blog post: 32x32xK on one warp */
} pgc_study;

/* Upper bounds that keep the options in fixed-size arrays and stop a typo
 * from asking for an hour of GPU time or a huge host allocation. */
#define PGC_MAX_STAGE_COUNTS 64
#define PGC_MAX_VARIANTS 64
#define PGC_MAX_REPEATS 1000000 /* --warmup, --iters */
#define PGC_MAX_ROUNDS 100      /* --rounds */
/* A caller buffer this large holds any message pgc_parse_args writes. */
#define PGC_ERROR_SIZE 1024

/* Defaults (docs/measuring.md, and the protocols of the sources). */
#define PGC_BENCH_DEFAULT_SIZE 4096
#define PGC_STUDY_DEFAULT_SIZE 2048
#define PGC_PROFILE_DEFAULT_SIZE 2048 /* the write-up's profiled size */
/* study single-warp: M = N = one warp's width (PG_SINGLE_WARP_DIM), K as in
 * the blog post. One warp does all the work, so K is capped well below what
 * would tie a GPU up for minutes. */
#define PGC_SINGLE_WARP_DEFAULT_K 65536
#define PGC_SINGLE_WARP_MAX_K (1 << 24)
#define PGC_DEFAULT_WARMUP 10
#define PGC_DEFAULT_ITERS 20
#define PGC_DEFAULT_SEED 1u
/* trace: blocks sampled, and the launches of each kernel, traced and not,
 * that time what tracing costs (few: the time of one launch at 4096^3 is
 * steady to a fraction of a percent). */
#define PGC_TRACE_DEFAULT_BLOCKS 8
#define PGC_TRACE_DEFAULT_WARMUP 3
#define PGC_TRACE_DEFAULT_ITERS 10

typedef struct {
  pgc_command command;
  /* With PGC_CMD_HELP: whose help was asked for (PGC_CMD_NONE = the tool's). */
  pgc_command help_topic;
  pgc_study study;

  pgc_format format;
  int device;
  int quiet;     /* 1: no progress lines on stderr */
  int check;     /* 1: verify before timing */
  int flush_l2;  /* 1: flush L2 before every timed run */
  uint64_t seed;
  int m, n, k;
  /* bench --shapes FILE: the shape set to run instead of m, n, k (borrowed
   * from argv; read by the command, not here); NULL: the one shape above. */
  const char *shapes_path;
  int warmup, iters;
  int rounds; /* bench --rounds: timed rounds of each shape's runs */
  /* bench --op, --batch, --stride-a/b/c: the layouts of the one shape, or
   * of each line of --shapes that does not name its own (NN, one GEMM,
   * dense members when not given). */
  pgc_layout_request layout;
  int long_listing; /* list --long: each entry at length under its row */
  int inputs; /* bench --inputs: a pgh_inputs value (pgc_inputs_name) */

  /* Variant selection: all_variants, or the variant_count registry entries
   * named by --variant, in the order given, without repeats. */
  int all_variants;
  int variant_count;
  const pg_variant_info *variants[PGC_MAX_VARIANTS];

  /* Stage counts from --stages, in the order given, without repeats;
   * stage_count == 0 means "each variant's default". */
  int stage_count;
  int stages[PGC_MAX_STAGE_COUNTS];

  /* profile, and study pipelining --profile: where ncu is (--ncu) and
   * where its raw output goes (--raw); NULL when not given (borrowed from
   * argv). `profile` is 1 with study's --profile. */
  int profile;
  const char *ncu_path;
  const char *raw_path;

  /* inspect: the binary to read (--binary, borrowed from argv; NULL: this
   * executable), --check, and --swap A=B (judge B's kernels by A's rules;
   * both NULL when not given). Variant selection as for bench. */
  const char *inspect_binary;
  int inspect_check;
  const pg_variant_info *swap_claim;
  const pg_variant_info *swap_kernels;

  /* trace: blocks to sample (--blocks) and the JSON file (--out, borrowed
   * from argv). One variant (variants[0]) at one stage count (stages[0],
   * or its default when stage_count is 0). */
  int trace_blocks;
  const char *out_path;

  /* The command line as given, for the report header (borrowed from argv). */
  int argc;
  char **argv;
} pgc_options;

/* Parses argv into *opts. Returns PGC_EXIT_OK, or PGC_EXIT_USAGE with a
 * one-line message (no trailing newline, no "pipegemm: " prefix) in err.
 * *opts is fully written on success; on failure only opts->command holds:
 * the command named (PGC_CMD_NONE before one was), so that the message can
 * point to that command's --help. Validates
 * variant names against the registry, and rejects a stage count outside the
 * allowed range of a variant named explicitly with --variant. */
int pgc_parse_args(int argc, char **argv, pgc_options *opts, char *err,
                   size_t err_size);

/* Expands the options into the combinations to run, in variant order and
 * then stage order: a variant with one fixed stage count runs once at it
 * whatever --stages says; otherwise once per requested count in its range
 * (counts out of range are skipped, which only happens with --variant all),
 * or once at its default when --stages was not given. Writes at most
 * `capacity` specs and returns how many there are in all. */
int pgc_expand_runs(const pgc_options *opts, pgc_run_spec *runs, int capacity);

/* The command line as a shell would need it typed ("pipegemm bench --size
 * 2048"): argv[0] named "pipegemm", whole words only. */
void pgc_command_line_text(const pgc_options *opts, char *buf, size_t size);

/* The facts above a command's report: the session's, and its command line. */
void pgc_header_for(pgc_header *header, const pgc_session *session, const pgc_options *opts);

/* A command's name as typed ("bench"); NULL for PGC_CMD_NONE, HELP and
 * VERSION, which are options of the tool itself. */
const char *pgc_command_name(pgc_command command);

/* The usage text for a command (PGC_CMD_NONE: the tool's), ending in a
 * newline. Static storage. */
const char *pgc_usage_text(pgc_command topic);

/* The option table, so tests can hold the usage texts to it: the number of
 * options, the name of one ("--size"), and whether a command accepts it
 * (PGC_CMD_NONE: the tool itself, before any command). */
int pgc_option_count(void);
const char *pgc_option_name(int index);
int pgc_option_applies(int index, pgc_command command);
/* Whether `study <experiment>` accepts option `index`: each experiment
 * takes its own subset of the study options. */
int pgc_option_applies_to_study(int index, pgc_study study);
/* The experiment's name as typed after `study` ("single-warp"); NULL for
 * PGC_STUDY_NONE. */
const char *pgc_study_name(pgc_study study);

/* `len` bytes of text a message repeats (an argument, a path, a line of a
 * file), written so that the message stays one line a terminal shows as
 * it is: \\ for a backslash, \n, \r and \t, and \xHH for every other
 * control byte (C0, DEL, the two bytes of a C1 control) and every byte of
 * what is not well-formed UTF-8; the rest as it is. Always NUL-terminated
 * (size > 0); a text that does not fit is cut after a whole character or
 * escape and ends in "...". */
void pgc_escape_text(char *buf, size_t size, const char *text, size_t len);

/* "on"/"off" and the format's name, for headers. */
const char *pgc_format_name(pgc_format format);

#endif
