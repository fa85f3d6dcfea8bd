/* What the parts of `pipegemm profile` share (src/cli/profile*.c), and no
 * one else: a run's row, the facts ncu told about the GPU, and the context
 * the report is printed from. profile_ncu.c runs ncu and reads what it
 * printed, profile_table.c prints the report, profile.c runs it all. */
#ifndef PGC_PROFILE_INTERNAL_H
#define PGC_PROFILE_INTERNAL_H

#include <stdio.h>

#include "profile.h"
#include "measure/session.h"

#define PROFILE_PATH_SIZE 4096
#define TITLE_SIZE 64
/* A note on a run: its title, ": " and why it was not profiled, each whole. */
#define RUN_NOTE_SIZE (TITLE_SIZE + sizeof ": " - 1 + PGC_PROFILE_TEXT_SIZE)

/* How one (variant, stage count) went. */
typedef enum {
  RUN_PROFILED = 0,
  RUN_SKIPPED, /* the profiled program says this GPU cannot run it */
  RUN_MISSING  /* ncu profiled no kernel */
} run_status;

/* One run: what was profiled, or why not, and its counters (NaN where
 * none) in the metric table's order. */
typedef struct {
  const pg_variant_info *variant;
  int stages;
  run_status status;
  char note[PGC_PROFILE_TEXT_SIZE];   /* why not profiled */
  char kernel[PGC_PROFILE_TEXT_SIZE]; /* the kernel ncu profiled */
  char title[TITLE_SIZE];             /* column heading */
  double values[PGC_PROFILE_MAX_METRICS];
} profile_row;

/* Facts ncu reports about the GPU, from the first profiled kernel. */
typedef struct {
  char gpu[PGC_PROFILE_TEXT_SIZE];
  char cc[16];
  int known;
} gpu_facts;

/* What the report is printed from besides the rows: the command, ncu, the
 * shape, the date and the notes gathered while the runs went. */
typedef struct {
  const pgc_options *opts;
  const pgc_profile_config *config;
  const pgc_profile_extras *extras;
  const char *ncu;
  char ncu_version[PGC_PROFILE_TEXT_SIZE];
  gpu_facts gpu;
  char shape[PGC_SHAPE_TEXT_SIZE];
  char command_line[PGC_COMMAND_LINE_SIZE];
  char date[PGC_HEADER_TEXT_SIZE];
  char method_note[PGC_COMMAND_LINE_SIZE];
  char fallback_note[PGC_COMMAND_LINE_SIZE / 2]; /* "" unless the full set was used */
  /* Notes on runs: one per run not profiled, and cublas's kernel. */
  char (*run_notes)[RUN_NOTE_SIZE];
  int run_note_count;
} report_context;

/* ---- running ncu (profile_ncu.c) ---------------------------------------------- */

/* This executable, for ncu to run: /proc/self/exe, else argv[0]. 0, or -1. */
int pgc_profile_find_self(const pgc_options *opts, char *buf, size_t size);

/* "Version 2025.3.0.0 (build ...)" from `ncu --version`; "unknown" if not. */
void pgc_profile_ncu_version(const char *ncu, char *buf, size_t size);

/* Profiles one run: each kernel filter of the variant in turn, each first
 * with the table's sections and, when ncu refuses that with an error, with
 * its full set, which the runs after it then use from the start (the
 * fallback note says so). Returns 0 (row->status says how it went), or the
 * exit code to stop with (the line already printed). */
int pgc_profile_run_one(const pgc_profile_config *config, const char *ncu, const char *self,
                        FILE *raw, profile_row *row, gpu_facts *facts, char *fallback_note,
                        size_t note_size);

/* ---- the report (profile_table.c) --------------------------------------------- */

/* The report of the runs in rows, with ctx's facts and notes, in
 * opts->format on the report stream. PGC_EXIT_OK, or PGC_EXIT_FAILED after
 * a line (out of host memory). */
int pgc_profile_print_report(report_context *ctx, const profile_row *rows, int row_count);

#endif
