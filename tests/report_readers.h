/* What the tests of the report printers read their output with
 * (test_cli_format.c, test_cli_results.c, test_cli_list.c): a memory stream
 * to print into,
 * an RFC 4180 reader, and a strict JSON parser. Include after cmocka.h. */
#ifndef PG_TEST_REPORT_READERS_H
#define PG_TEST_REPORT_READERS_H

#include <stdio.h>

#include "measure/report.h"

/* ---- capturing a printer's output ------------------------------------------ */

typedef struct {
  char *text;
  size_t size;
  FILE *stream;
} capture;

FILE *capture_begin(capture *c);
/* The captured text; the caller frees it. */
char *capture_end(capture *c);

/* ---- an RFC 4180 reader ------------------------------------------------------ */

#define CSV_MAX_RECORDS 64 /* list has a record a variant */
#define CSV_MAX_FIELDS PGC_MAX_COLUMNS /* a bench row has 21 */
/* Room for every field and comment of one text, each as long as it comes
 * (a technique at length is hundreds of bytes). */
#define CSV_POOL_SIZE (256 * 1024)

typedef struct {
  int records;
  int fields[CSV_MAX_RECORDS];
  const char *field[CSV_MAX_RECORDS][CSV_MAX_FIELDS]; /* into pool */
  int comments;
  const char *comment[CSV_MAX_RECORDS]; /* into pool */
  size_t used;
  char pool[CSV_POOL_SIZE];
} csv_table;

/* Reads records, setting aside lines that start with '#'. Returns 0, or -1
 * when the text breaks the quoting rules. */
int csv_read(const char *text, csv_table *t);

/* ---- a strict JSON parser (RFC 8259), structure only ------------------------ */

/* 0 if text is exactly one JSON object and nothing else but blanks. */
int json_check(const char *text);

#endif
