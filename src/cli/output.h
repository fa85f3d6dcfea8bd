/* The tool's output streams: the report on standard output and the files a
 * command writes (trace --out, profile --raw). Each keeps the errno of its
 * first failed write, wherever it failed (inside fwrite when a page is
 * longer than the stream's buffer, or at the last flush), so that a full
 * disk is told as "No space left on device", not as a generic I/O error. */
#ifndef PGC_OUTPUT_H
#define PGC_OUTPUT_H

#include <stdio.h>

/* The report stream: standard output, through a stream of ours. Every
 * command prints its report here and nowhere else on standard output. */
FILE *pgc_stdout(void);

/* The width of the terminal standard output writes to, in columns; 0 where
 * it is no terminal (a pipe, a file) or does not say. */
int pgc_terminal_columns(void);

/* A file opened (created or truncated) for writing; NULL with errno set. */
FILE *pgc_output_open(const char *path);

/* Flushes `out` and returns the errno of the first write to it that failed
 * (EIO for a stream of stdio's own whose earlier write failed), or 0. */
int pgc_output_error(FILE *out);

/* Whether everything written to `out` reached its file (a full disk, a
 * closed pipe): on a write error, now or earlier, prints "pipegemm: writing
 * <what> failed: <reason>" on stderr and clears the stream's error, so that
 * one failure is told once. Returns 0, or -1 after that line. Call it once
 * the report is written (main does, for the report stream, after every
 * command). */
int pgc_output_check(FILE *out, const char *what);

/* Closes a file the command wrote, with the same line on a write error.
 * Returns 0, or -1 after the line. */
int pgc_output_close(FILE *file, const char *what);

#endif
