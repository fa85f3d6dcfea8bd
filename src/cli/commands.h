/* The commands of the pipegemm tool. Each takes parsed options, prints its
 * report on stdout and its errors on stderr, and returns the exit code. */
#ifndef PGC_COMMANDS_H
#define PGC_COMMANDS_H

#include <stdio.h>

#include "args.h"

int pgc_cmd_list(const pgc_options *opts);
/* The most columns a line of `pipegemm list`'s table takes: fewer where the
 * terminal is narrower. */
#define PGC_LIST_WIDTH 100
/* list's report on `out` in opts->format (--long: opts->long_listing), the
 * table's lines at most `width` columns (0: as long as they come). What
 * pgc_cmd_list prints on the report stream; the tests print it anywhere.
 * Returns the exit code. */
int pgc_list_print(FILE *out, const pgc_options *opts, int width);
int pgc_cmd_bench(const pgc_options *opts);
int pgc_cmd_study(const pgc_options *opts);
int pgc_cmd_profile(const pgc_options *opts);
int pgc_cmd_inspect(const pgc_options *opts);
int pgc_cmd_trace(const pgc_options *opts);

/* inspect's line where no cuobjdump is found, with how to get one;
 * `configured` is the one found when pipegemm was configured ("": none). */
void pgc_inspect_no_cuobjdump_text(char *buf, size_t size, const char *configured);

#endif
