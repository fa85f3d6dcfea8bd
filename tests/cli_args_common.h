/* What the tests of pipegemm's argument parsing share (test_cli_args.c,
 * test_cli_commands.c, test_cli_usage.c): argv from a list of words, parsed
 * as the tool parses it, and the checks of a parse that succeeded or failed.
 * Include after cmocka.h. */
#ifndef PG_TEST_CLI_ARGS_COMMON_H
#define PG_TEST_CLI_ARGS_COMMON_H

#include "cli/args.h"

/* Room for any argv a test builds. */
#define MAX_ARGS 32

typedef struct {
  pgc_options opts;
  char err[PGC_ERROR_SIZE];
  int rc;
} parse_result;

/* Parses a NULL-terminated list of words after "pipegemm". */
parse_result parse_words(const char *first, ...);
#define PARSE(...) parse_words(__VA_ARGS__, (const char *)NULL)

/* The parse succeeds. */
#define EXPECT_OK(r)                                                           \
  do {                                                                         \
    if ((r).rc != PGC_EXIT_OK) print_error("unexpected error: %s\n", (r).err); \
    assert_int_equal((r).rc, PGC_EXIT_OK);                                     \
  } while (0)

/* The parse fails as a usage error whose message contains `part`. */
void expect_usage_error(parse_result r, const char *part);

#endif
