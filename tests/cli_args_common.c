/* The helpers of cli_args_common.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli_args_common.h"

/* Parses a NULL-terminated list of words after "pipegemm". */
parse_result parse_words(const char *first, ...) {
  static char *argv[MAX_ARGS];
  int argc = 0;
  argv[argc++] = (char *)"pipegemm";
  va_list ap;
  va_start(ap, first);
  for (const char *word = first; word && argc < MAX_ARGS - 1;
       word = va_arg(ap, const char *))
    argv[argc++] = (char *)word;
  va_end(ap);
  argv[argc] = NULL;
  parse_result result;
  memset(&result, 0, sizeof result);
  result.rc = pgc_parse_args(argc, argv, &result.opts, result.err,
                             sizeof result.err);
  return result;
}

/* The parse fails as a usage error whose message contains `part`. */
void expect_usage_error(parse_result r, const char *part) {
  if (r.rc != PGC_EXIT_USAGE) print_error("expected an error with '%s'\n", part);
  assert_int_equal(r.rc, PGC_EXIT_USAGE);
  if (!strstr(r.err, part))
    print_error("message '%s' lacks '%s'\n", r.err, part);
  assert_non_null(strstr(r.err, part));
  assert_null(strchr(r.err, '\n')); /* one line */
}
