/* The commands of the pipegemm tool. Each takes parsed options, prints its
 * report on stdout and its errors on stderr, and returns the exit code. */
#ifndef PGC_COMMANDS_H
#define PGC_COMMANDS_H

#include "args.h"

int pgc_cmd_list(const pgc_options *opts);
int pgc_cmd_bench(const pgc_options *opts);
int pgc_cmd_study(const pgc_options *opts);
int pgc_cmd_profile(const pgc_options *opts);
int pgc_cmd_inspect(const pgc_options *opts);
int pgc_cmd_trace(const pgc_options *opts);

/* inspect's line where no cuobjdump is found, with how to get one;
 * `configured` is the one found when pipegemm was configured ("": none). */
void pgc_inspect_no_cuobjdump_text(char *buf, size_t size, const char *configured);

#endif
