/* pipegemm: the command-line tool. Parses the arguments, dispatches to the
 * command, and turns a usage error into one line on stderr and exit code 2.
 * `pipegemm --help` lists the commands; `pipegemm <command> --help` its
 * options. Whatever the command, a report that did not reach stdout (a full
 * disk, a closed pipe) is one line on stderr and exit code 1. */
#include <signal.h>
#include <stdio.h>

#include "args.h"
#include "commands.h"
#include "output.h"
#include "pipegemm.h"

static int run_command(const pgc_options *opts) {
  switch (opts->command) {
    case PGC_CMD_HELP:
      fputs(pgc_usage_text(opts->help_topic), pgc_stdout());
      return PGC_EXIT_OK;
    case PGC_CMD_VERSION:
      fprintf(pgc_stdout(), "pipegemm %s\n", pg_version_string());
      return PGC_EXIT_OK;
    case PGC_CMD_LIST: return pgc_cmd_list(opts);
    case PGC_CMD_BENCH: return pgc_cmd_bench(opts);
    case PGC_CMD_STUDY: return pgc_cmd_study(opts);
    case PGC_CMD_PROFILE: return pgc_cmd_profile(opts);
    case PGC_CMD_INSPECT: return pgc_cmd_inspect(opts);
    case PGC_CMD_TRACE: return pgc_cmd_trace(opts);
    case PGC_CMD_NONE: break;
  }
  fprintf(stderr, "pipegemm: no command given (see pipegemm --help)\n");
  return PGC_EXIT_USAGE;
}

int main(int argc, char **argv) {
  /* A reader that left (pipegemm list | head -c1) would otherwise end the
   * tool by SIGPIPE at its next write, without a word and with 141. Ignored,
   * the write fails with EPIPE and is told as any failed write is. The
   * programs the tool runs get the default back (src/adapters/proc.c). */
  (void)signal(SIGPIPE, SIG_IGN);
  pgc_options opts;
  char err[PGC_ERROR_SIZE];
  if (pgc_parse_args(argc, argv, &opts, err, sizeof err) != PGC_EXIT_OK) {
    /* The options of the command that was named are in its own help. */
    const char *command = pgc_command_name(opts.command);
    fprintf(stderr, "pipegemm: %s (see pipegemm %s%s--help)\n", err, command ? command : "",
            command ? " " : "");
    return PGC_EXIT_USAGE;
  }
  int code = run_command(&opts);
  /* A truncated CSV must not pass for a whole one. */
  if (pgc_output_check(pgc_stdout(), "the report") != 0) code = PGC_EXIT_FAILED;
  return code;
}
