/* `pipegemm profile`: Nsight Compute counters of each selected kernel, side
 * by side in the rows of the "CUDA Kernel Study: Pipelining" write-up's
 * metric tables. The tool runs ncu on itself (`pipegemm bench` for one
 * launch of one variant), once per (variant, stage count), so that the
 * profiled program is exactly what bench times. `study pipelining --profile`
 * prints the same table beside the write-up's own figures. */
#ifndef PGC_PROFILE_H
#define PGC_PROFILE_H

#include <stdio.h>

#include "args.h"
#include "adapters/ncu.h"

/* The metric table's rows fit in this many values. */
#define PGC_PROFILE_MAX_METRICS PGC_NCU_MAX_METRICS
#define PGC_PROFILE_TEXT_SIZE 256

/* Where ncu, the raw output and the profiled program come from. */
typedef struct {
  const char *ncu_option; /* --ncu, or NULL */
  const char *raw_path;   /* --raw, or NULL */
  int device;
  int m, n, k;
  int quiet;
} pgc_profile_config;

/* Figures published elsewhere, printed as columns beside the measured
 * ones (the write-up's RTX A6000 table). */
typedef struct {
  const char *title;  /* column heading in the text table */
  const char *source; /* "source" cell in CSV and JSON */
  const char *variant;
  int stages;
  int m, n, k;
  /* pgc_ncu_metric_count values in table order; NaN where not published. */
  const double *values;
} pgc_profile_reference;

/* What the report says besides the runs. */
typedef struct {
  const char *command; /* "profile", "study pipelining --profile" */
  const pgc_profile_reference *references;
  int reference_count;
  const char *const *notes; /* printed after the report's own notes */
  int note_count;
} pgc_profile_extras;

/* Profiles each run with ncu and prints the report in opts->format.
 * Returns PGC_EXIT_OK; PGC_EXIT_NO_GPU after one line on stderr when ncu is
 * missing, cannot read the counters, or profiled no kernel at all;
 * PGC_EXIT_FAILED when some run was not profiled (the table still prints)
 * or on a system error. */
int pgc_profile_runs(const pgc_options *opts, const pgc_profile_config *config,
                     const pgc_run_spec *runs, int count,
                     const pgc_profile_extras *extras);

/* What a selector (auto, auto_tf32, ...) runs at M x N x K, asked as
 * pg_auto_select is: PG_OK with the variant and its stage count, or with
 * *variant NULL where it runs nothing (M or N is 0); another status, with
 * pg_last_error_detail() saying why, where it cannot tell (PG_ERR_NO_DEVICE:
 * no GPU to ask). A and B are stand-ins whose addresses the library looks
 * at for their alignment alone. */
typedef pg_status (*pgc_selector_query)(const pg_variant_info *selector, int device, int m,
                                        int n, int k, const float *a, int lda, const float *b,
                                        int ldb, const pg_variant_info **variant, int *stages);

/* The library's answer: pg_auto_select for auto, and for the selectors it
 * does not answer for, the plan that bench would make. */
pg_status pgc_selector_choice(const pg_variant_info *selector, int device, int m, int n, int k,
                              const float *a, int lda, const float *b, int ldb,
                              const pg_variant_info **variant, int *stages);

/* Why selectors were left out of a profile. */
typedef struct {
  int no_gpu;   /* no GPU to ask what they run */
  int nothing;  /* they run nothing at this shape (M or N is 0) */
  int failed;   /* the library could not tell (a line on `log` says why) */
} pgc_selectors_left_out;

/* Replaces each selector among runs by the variant it runs at opts' shape
 * (asked through `query` with stand-ins for A and B: dense, 16-byte aligned,
 * lda = max(1, K), ldb = max(1, N)), unless that run is planned already,
 * and leaves out those that run nothing or cannot be asked, with a line on
 * `log` for each (the ones that are no failure not with opts->quiet).
 * Returns the new count; *left_out counts what was left out and why. */
int pgc_profile_resolve_selectors(const pgc_options *opts, pgc_run_spec *runs, int count,
                                  pgc_selector_query query, FILE *log,
                                  pgc_selectors_left_out *left_out);

/* Where ncu is: `option` (--ncu), else $PG_NCU, else `ncu` on $PATH, else
 * /usr/local/cuda/bin/ncu, else the newest Nsight Compute installed under
 * /opt/nvidia/nsight-compute or the toolkit. A name without a slash is
 * looked up on $PATH.
 * Returns 0 with the path in buf, or -1 with why not in buf. */
int pgc_profile_find_ncu(const char *option, char *buf, size_t size);

#endif
