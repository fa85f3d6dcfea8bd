/* Nsight Compute for `pipegemm profile`: the one table of metrics the
 * "CUDA Kernel Study: Pipelining" write-up compares, the ncu command line
 * that collects them, and the parser of ncu's raw CSV page. Everything here
 * is pure (no process, no GPU), so tests/test_ncu.c checks it on a fixture;
 * src/cli/profile_ncu.c runs ncu, profile_table.c prints. */
#ifndef PGC_NCU_H
#define PGC_NCU_H

#include <stddef.h>

/* How a value ncu gives in base units (second, byte, byte/second, or a plain
 * number) is shown. */
typedef enum {
  PGC_NCU_SCALE_NONE = 0,
  PGC_NCU_SCALE_MS,  /* second -> millisecond */
  PGC_NCU_SCALE_KB,  /* byte -> KB of 1000 bytes, as ncu and the write-up */
  PGC_NCU_SCALE_GBPS, /* byte/second -> GB/s (10^9) */
  PGC_NCU_SCALE_PER_WARP /* a count of threads' instructions -> of warps' (/32) */
} pgc_ncu_scale;

/* How a shown value is made from one or two raw metrics a and b. */
typedef enum {
  PGC_NCU_NONE = 0, /* end of a metric's list of ways */
  PGC_NCU_VALUE,    /* a */
  PGC_NCU_SUM,      /* a + b */
  PGC_NCU_DIFF,     /* a - b (excessive = total - ideal) */
  PGC_NCU_RATIO,    /* a / b */
  PGC_NCU_PERCENT,  /* 100 * a / b */
  PGC_NCU_PERCENT_EXCESS /* 100 * (a - b) / a: excessive share of total a */
} pgc_ncu_op;

typedef struct {
  pgc_ncu_op op;
  const char *a, *b; /* ncu metric names; b unused by PGC_NCU_VALUE */
} pgc_ncu_formula;

#define PGC_NCU_MAX_WAYS 3

/* One row of the write-up's "Key Metric Comparison" tables. Metric names
 * and spellings differ between ncu versions and GPUs; `ways` lists the
 * formulas to try in order, and the first whose inputs ncu reported wins. */
typedef struct {
  const char *key;     /* CSV column and JSON member: [a-z0-9_]+ */
  const char *label;   /* the row's title, as the write-up names it */
  const char *unit;    /* shown unit ("" for a plain number) */
  /* The ncu section that collects the inputs; NULL: no section has them
   * everywhere, and ncu is asked for the first way's metrics by name
   * (--metrics), so such a row has one way. */
  const char *section;
  pgc_ncu_scale scale;
  int decimals; /* digits after the point in the text table */
  pgc_ncu_formula ways[PGC_NCU_MAX_WAYS];
} pgc_ncu_metric;

/* The table has at most this many rows (checked where it is defined), so
 * that a row of values fits a fixed array. */
#define PGC_NCU_MAX_METRICS 40

extern const pgc_ncu_metric pgc_ncu_metrics[];
extern const int pgc_ncu_metric_count;
/* The table's index of a key, or -1. */
int pgc_ncu_metric_index(const char *key);

/* The distinct sections of the table, in table order. Writes at most
 * `capacity` names (static strings) and returns how many there are. */
int pgc_ncu_sections(const char **sections, int capacity);

/* The metrics of the rows no section collects, comma-separated, for ncu's
 * --metrics (an empty string when there are none). Returns 0, or -1 when
 * they do not fit in `size`. */
int pgc_ncu_named_metrics(char *buf, size_t size);

/* ---- one profiled kernel, from ncu's raw page ------------------------------ */

typedef struct {
  char *name;   /* the header cell: a metric name or "Kernel Name", ... */
  char *unit;   /* the units row's cell ("" when there is none) */
  char *text;   /* the cell as ncu printed it, unquoted */
  double value; /* the number in base units (see pgc_ncu_unit_factor) */
  int has_value; /* 0: empty, "n/a" or not a number */
} pgc_ncu_field;

typedef struct {
  int count;
  pgc_ncu_field *fields; /* owned */
} pgc_ncu_result;

/* Finds the first profiled kernel in ncu output: a CSV header row whose
 * first cell is "ID", an optional units row (first cell empty), then a
 * row whose first cell is a number. Lines that are not part of it (ncu's
 * ==PROF== lines, the profiled program's own output) are skipped, so the
 * text may be everything the ncu process printed. Cells are RFC 4180
 * fields; numbers may carry thousands separators ("33,554,432") and are
 * scaled by their unit to base units. Returns 0 and fills *result (free it
 * with pgc_ncu_result_free), -1 when there is no such row, -2 when out of
 * memory. */
int pgc_ncu_parse_raw(const char *text, pgc_ncu_result *result);
void pgc_ncu_result_free(pgc_ncu_result *result);

/* The field of that name, or NULL. */
const pgc_ncu_field *pgc_ncu_find(const pgc_ncu_result *result,
                                  const char *name);

/* The metric's shown value (in its scale) from the first of its ways whose
 * inputs all have values; NaN when none has. `way_used`, if not NULL, gets
 * the index of that way (-1 for none). */
double pgc_ncu_derive(const pgc_ncu_metric *metric,
                      const pgc_ncu_result *result, int *way_used);

/* A number as ncu prints it: optional spaces, thousands separators (','),
 * a decimal point, an exponent. Returns 0 with *value, or -1 for empty
 * text, "n/a" and anything else that is not a whole number. */
int pgc_ncu_parse_number(const char *text, double *value);

/* What a unit means in base units: "msecond" 1e-3, "Kbyte" 1e3,
 * "Gbyte/second" 1e9, "%" and "" 1. A prefix (n u m K M G T) counts only in
 * front of a unit ncu scales (second, byte, cycle, inst, warp, sector, ...);
 * anything else is 1. */
double pgc_ncu_unit_factor(const char *unit);

/* Splits one CSV line (RFC 4180: quotes, doubled quotes; no line breaks
 * inside a field) into at most `capacity` fields, written NUL-terminated
 * into buf (size bytes) with pointers in fields. Returns the field count (may
 * exceed capacity: the rest are dropped), or -1 if buf is too small. */
int pgc_ncu_split_csv(const char *line, size_t len, char *buf, size_t size,
                      char **fields, int capacity);

/* ---- the ncu command line ------------------------------------------------- */

/* What ncu is told to profile: one (variant, stage count) of the profiled
 * program `self` run as `self bench ...` at M x N x K on `device`. */
typedef struct {
  const char *ncu;  /* path of ncu */
  const char *self; /* path of the pipegemm executable */
  const char *variant;
  const char *kernel; /* the variant's kernel function (the registry's symbol); NULL: cublas */
  int stages;
  int m, n, k;
  int device;
  int attempt; /* which kernel filter (pgc_ncu_kernel_filter) */
  /* 0: the sections of the metric table, values in base units; 1: ncu's
   * "full" set with its own units, for an ncu that refused the first;
   * PGC_NCU_FULL_SET_UNNAMED: the full set without the metrics asked for
   * by name, for an ncu that knows one of them not. */
  int full_set;
} pgc_ncu_job;
#define PGC_NCU_FULL_SET_UNNAMED 2

/* The kernel filters of a variant, to try in order until one profiles a
 * kernel. A variant of ours launches `kernel`, the registry's symbol (the
 * forms of tma_ws share pg_tma_ws_kernel), matched by function name; its
 * second kernel, where it has one (a split's reduction), is named apart
 * and runs after it. cublas (kernel NULL) has kernels of its own:
 * first any kernel whose demangled name says GEMM (or nvjet, cuBLAS's
 * Hopper kernels), then the first kernel that is not ours (pg_, pgh_).
 * Writes attempt's name base ("function" or "demangled") and regex
 * ("regex:..."); returns the number of filters the variant has, or 0 when
 * `attempt` is past them or the buffers are too small. */
int pgc_ncu_kernel_filter(const char *kernel, int attempt, const char **name_base,
                          char *regex, size_t size);

/* The whole shell command (words quoted by pgc_shell_append, proc.h),
 * stderr joined to stdout. Returns 0, or -1 when it does not fit in buf. */
int pgc_ncu_command(const pgc_ncu_job *job, char *buf, size_t size);

#endif
