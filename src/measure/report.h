/* Reports of the pipegemm tool in three formats. A report is a few header
 * facts, a table of typed cells and a few notes; bench, study and list each
 * build one, and the printers here turn it into an aligned text table, CSV
 * (RFC 4180 quoting, header facts as leading "# key: value" lines) or JSON.
 * Printers are pure: they write to the FILE* they are given and nothing else,
 * so tests print into a memory stream and read the text back. */
#ifndef PGC_REPORT_H
#define PGC_REPORT_H

#include <stdint.h>
#include <stdio.h>

/* The tool's exit codes (docs/design.md, "The command line"), which the
 * measurement session returns as the commands do. */
enum {
  PGC_EXIT_OK = 0,
  PGC_EXIT_FAILED = 1,   /* a check failed or a run returned an error */
  PGC_EXIT_USAGE = 2,    /* bad usage */
  PGC_EXIT_NO_GPU = 3    /* no usable CUDA GPU */
};

typedef enum { PGC_FORMAT_TABLE = 0, PGC_FORMAT_CSV, PGC_FORMAT_JSON } pgc_format;

/* "on" or "off", for the facts of a header. */
const char *pgc_on_off(int flag);
/* bench --inputs' names, by pgh_inputs value: "uniform", "wide", "tiny";
 * NULL past them. */
const char *pgc_inputs_name(int inputs);

typedef enum {
  PGC_CELL_ABSENT = 0, /* "-" in a table, empty in CSV, null in JSON */
  PGC_CELL_TEXT,
  PGC_CELL_INTEGER,
  PGC_CELL_UNSIGNED,
  PGC_CELL_REAL /* NaN or Inf prints as absent */
} pgc_cell_kind;

typedef struct {
  pgc_cell_kind kind;
  const char *text; /* borrowed; PGC_CELL_TEXT only */
  long long integer;
  unsigned long long unsigned_integer;
  double real;
} pgc_cell;

pgc_cell pgc_cell_absent(void);
pgc_cell pgc_cell_text(const char *text); /* NULL gives an absent cell */
pgc_cell pgc_cell_int(long long value);
pgc_cell pgc_cell_uint(unsigned long long value);
pgc_cell pgc_cell_real(double value);

/* Where a column or fact shows: the text table reads best with composed
 * cells ("4096x4096x4096"), machine formats with separate numbers. */
enum {
  PGC_SHOW_TABLE = 1,
  PGC_SHOW_DATA = 2, /* CSV and JSON */
  PGC_SHOW_ALL = PGC_SHOW_TABLE | PGC_SHOW_DATA
};

typedef enum { PGC_ALIGN_LEFT = 0, PGC_ALIGN_RIGHT } pgc_align;

typedef struct {
  const char *key;   /* CSV header and JSON member name: [a-z0-9_]+ */
  const char *title; /* text table heading */
  pgc_align align;
  int decimals;      /* digits after the point for reals in the text table,
                        or PGC_SCIENTIFIC */
  int show;          /* PGC_SHOW_* */
} pgc_column;

/* As `decimals`: three significant digits with an exponent ("3.05e-05"), for
 * values that span many orders of magnitude, such as errors. */
#define PGC_SCIENTIFIC (-1)

typedef struct {
  const char *key;   /* as for columns */
  const char *label; /* text table */
  pgc_cell value;
  int decimals;      /* for a real value in the text table */
  const char *unit;  /* appended in the text table ("MHz"), or NULL */
  int show;
} pgc_fact;

/* The text table shows at most this many columns (the rest are data-only
 * or dropped); no report comes near it. */
#define PGC_MAX_COLUMNS 32

typedef struct {
  const char *command; /* which report: "bench", "list", "study pipelining" */
  const pgc_fact *facts;
  int fact_count;
  const pgc_column *columns;
  int column_count;
  const pgc_cell *cells; /* row_count x column_count, row-major */
  int row_count;
  const char *const *notes; /* lines printed after the table */
  int note_count;
  /* The rest is the text table's alone, and 0 or NULL in a report that
   * leaves its lines as long as they come (every one but list's). */
  /* At most this many terminal columns a line (0: no limit): columns that
   * may narrow (min_widths) are narrowed to fit, a fact's value is cut
   * short with "…", and the notes are wrapped between words. */
  int max_width;
  /* NULL, or column_count widths: 0 keeps a column as wide as its widest
   * cell; N > 0 lets the table narrow it to fit max_width, down to N
   * terminal columns (never below its title), each cell longer than the
   * column then cut short and ending in "…". CSV and JSON keep every cell
   * whole. */
  const int *min_widths;
  /* NULL, or row_count texts (NULL for none) printed under their rows,
   * indented, a line for each '\n'-separated part, each wrapped between
   * words to max_width. Before them, a cell the table cut short is given
   * whole, after its column's title. Rows that have details are set apart
   * by a blank line. */
  const char *const *row_details;
} pgc_report;

void pgc_print_table(FILE *out, const pgc_report *report);
void pgc_print_csv(FILE *out, const pgc_report *report);
void pgc_print_json(FILE *out, const pgc_report *report);
void pgc_print_report(FILE *out, pgc_format format, const pgc_report *report);

/* A JSON string literal with its quotes, escaped per RFC 8259, in UTF-8
 * whatever the text holds (a GPU's name, a path, what a tool printed):
 * control characters (U+0000-U+001F, U+007F-U+009F) as \u00XX, each
 * ill-formed UTF-8 sequence as one \ufffd, the rest as it is. */
void pgc_print_json_string(FILE *out, const char *text);

/* What pgc_utf8_next finds where no well-formed character starts. */
#define PGC_UTF8_INVALID 0xFFFFFFFFu
/* The character that starts at text, of the len > 0 bytes there: its
 * length, with its code point in *code_point; or, where no well-formed
 * UTF-8 character (RFC 3629: no overlong form, no surrogate, nothing past
 * U+10FFFF) starts, the length of the ill-formed part (the bytes that
 * start one and stop short, else the one byte), with PGC_UTF8_INVALID. */
size_t pgc_utf8_next(const char *text, size_t len, uint32_t *code_point);
/* A CSV field, quoted when it holds a comma, quote, CR or LF, or starts or
 * ends with a space; quotes inside are doubled (RFC 4180). */
void pgc_print_csv_field(FILE *out, const char *text);

/* ---- the result row of bench (and of study, which adds seed columns) ---- */

typedef enum {
  PGC_VERDICT_PASS = 0,
  PGC_VERDICT_FAIL,
  PGC_VERDICT_SKIP,      /* the GPU cannot run it; text says why */
  PGC_VERDICT_ERROR,     /* the run returned an error */
  PGC_VERDICT_UNCHECKED  /* --check off */
} pgc_verdict;

#define PGC_SHAPE_TEXT_SIZE 40
/* Room for the library's longest reason in a SKIP: a study kernel's
 * refusal of a layout names the ops and the batch it was given. */
#define PGC_VERDICT_TEXT_SIZE 160
/* "split-K 8", "split-K 5 from row 1664", "stream-K 264": the longest work
 * text with room to spare. */
#define PGC_WORK_TEXT_SIZE 48
/* The batch as the table shows it, "16 stride_a=... stride_b=... stride_c=..."
 * at the longest. */
#define PGC_BATCH_TEXT_SIZE 112

typedef struct {
  const char *variant; /* registry name, static */
  /* `auto` only: the variant it ran at this shape (registry name, static). */
  const char *runs;
  int stages;          /* stage count used; 0 where the variant has none */
  /* How the plan divides the work beyond one block per tile ("split-K 8",
   * "stream-K 264"); "" for a plain grid, cublas and a row that did not run. */
  char work[PGC_WORK_TEXT_SIZE];
  int m, n, k;
  char shape[PGC_SHAPE_TEXT_SIZE]; /* "MxNxK" */
  /* The layout: op(A) then op(B) ("NN", "NT", "TN", "TT"), the GEMMs of the
   * batch, and their strides in floats (0 for one GEMM); batch_text, the
   * table's cell, names the strides that are not the dense ones ("16
   * stride_b=0"), so that rows of one shape and batch stay apart. */
  char op[3];
  int batch;
  long long stride_a, stride_b, stride_c;
  char batch_text[PGC_BATCH_TEXT_SIZE];
  /* NaN where not measured (a skipped or failed run, or no baseline). */
  double median_ms, min_ms, max_ms;
  double tflops;
  double x_baseline; /* baseline's median at this shape / this median */
  double x_cublas;   /* cublas's median at this shape / this median */
  double x_cublas_tf32; /* cublas_tf32's (TF32 tensor cores), the same way */
  double pct_ffma_peak;
  double max_abs_err;
  double err_tol_ratio; /* max |out - ref| / tolerance; <= 1 passes */
  /* max and mean |out - ref| / (u * sum_k |a b|), u = 2^-24: the error in
   * units of FP32's rounding of the magnitudes summed */
  double err_u_max, err_u_mean;
  /* What the kernel needs and gets (pg_variant_kernel_facts): registers per
   * thread (-1), shared memory per block, static + dynamic, in KiB (NaN), and
   * resident blocks per SM (-1); unknown for cublas and for a variant this
   * GPU cannot run. */
  int registers;
  double smem_kib;
  int blocks_per_sm;
  pgc_verdict verdict;
  char verdict_text[PGC_VERDICT_TEXT_SIZE]; /* "PASS", "SKIP (no GPU)", ... */
} pgc_result_row;

/* Every number NaN (registers and blocks_per_sm -1), verdict PASS, shape text filled in,
 * op N, N and one GEMM. */
void pgc_result_row_init(pgc_result_row *row, const char *variant, int stages,
                         int m, int n, int k);
/* The row's layout (pgc_result_row_init leaves op N, N and one GEMM): whether
 * op(A) and op(B) are transposed, the batch, its strides (a, b, c), and
 * which of them the table's batch cell names: bit 0 for stride_a, 1 for
 * stride_b, 2 for stride_c. */
void pgc_result_row_set_layout(pgc_result_row *row, int transposed_a, int transposed_b,
                               int batch, const long long strides[3], unsigned named);
/* Sets verdict and its text: "PASS", "FAIL", "UNCHECKED", or
 * "SKIP (reason)" / "ERROR (reason)" when reason is not NULL. */
void pgc_result_row_set_verdict(pgc_result_row *row, pgc_verdict verdict,
                                const char *reason);

/* Fills x_baseline, x_cublas and x_cublas_tf32 of each row from the rows of
 * the variants named baseline_name, cublas_name and cublas_tf32_name at the
 * same shape and layout (ops, batch, strides), when those ran. */
void pgc_result_rows_relate(pgc_result_row *rows, int count, const char *baseline_name,
                            const char *cublas_name, const char *cublas_tf32_name);

/* The columns of a bench report, and one row's cells in that order
 * (cells must hold pgc_result_column_count entries; they borrow from row). */
extern const pgc_column pgc_result_columns[];
extern const int pgc_result_column_count;
void pgc_result_row_cells(const pgc_result_row *row, pgc_cell *cells);

#endif
