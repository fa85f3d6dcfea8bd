/* What the parts of `pipegemm inspect` share (src/cli/inspect*.c), and no
 * one else: cuobjdump as found, the variants judged and a row per kernel,
 * and the state the command's phases fill in turn. inspect_tool.c finds
 * and runs cuobjdump, inspect_report.c fills the rows and prints them,
 * inspect.c runs the phases. */
#ifndef PGC_INSPECT_INTERNAL_H
#define PGC_INSPECT_INTERNAL_H

#include "args.h"
#include "introspect.h"
#include "adapters/sass.h"

/* Exit code 3 (docs/design.md, "The command line"): what the command needs
 * is not on this machine. */
#define EXIT_NO_DISASSEMBLER PGC_EXIT_NO_GPU
#define INSPECT_PATH_SIZE 4096
/* Room for a message naming two paths. */
#define INSPECT_MESSAGE_SIZE (2 * INSPECT_PATH_SIZE + 1024)
/* Violations kept per kernel; more are counted, not listed. */
#define MAX_VIOLATIONS 32
/* Directories put in front of cuobjdump's PATH: $PG_NVDISASM's,
 * cuobjdump's own, PG_NVDISASM_PATH's. */
#define HELPER_DIRS 3

/* cuobjdump, and where it runs nvdisasm from. */
typedef struct {
  char path[INSPECT_PATH_SIZE];
  const char *source; /* as the report says it */
  char version[64];   /* "V13.5.37", or "" */
  char helper_dirs[HELPER_DIRS][INSPECT_PATH_SIZE];
  const char *path_prepend[HELPER_DIRS];
  int helper_count;
} disassembler;

/* A variant as judged: by whose rules, on whose kernels (--swap). */
typedef struct {
  const pg_variant_info *claim;  /* whose rules, whose name in the report */
  const pg_variant_info *source; /* whose kernels (the claim's, unless --swap) */
  const pg_kernel_spec *claim_kernel, *source_kernel;
} judged_variant;

#define COMPOSED_SIZE 96
#define MECHANISM_SIZE 256

/* One kernel of one judged variant: its figures and its verdict. */
typedef struct {
  const judged_variant *judged;
  const pgc_kernel_record *kernel;
  char display[PGC_KERNEL_NAME_SIZE];
  long template_arg;
  int launched; /* the kernel of the default configuration */
  int threads;  /* -1: not the launched kernel */
  long static_smem, dynamic_smem;
  int blocks; /* -1: not computed */
  char limited_by[64];
  char composed[PGC_OP_WIDE_FAMILIES][COMPOSED_SIZE];
  int violation_count;
  pgc_violation violations[MAX_VIOLATIONS];
  char mechanism[MECHANISM_SIZE];
} inspect_row;

/* Problems that are not a rule of one kernel: a kernel missing for an
 * architecture, or missing SASS. One line each. */
typedef struct {
  char **lines;
  int count, capacity;
  int failed;
} line_list;

/* What the phases share: each fills its part and returns an exit code; the
 * next runs only after PGC_EXIT_OK. inspect_free releases it all. */
typedef struct {
  const pgc_options *opts;
  char binary[INSPECT_PATH_SIZE];
  disassembler tool;
  pgc_dump dump;
  judged_variant judged[PGC_MAX_VARIANTS];
  int judged_count;
  inspect_row *rows; /* one per judged kernel, sorted once judged */
  int row_count;
  line_list problems; /* kernels missing altogether, SASS missing */
  char archs_text[PGC_MAX_ARCHS * (PGC_ARCH_NAME_SIZE + 2)];
} inspect_state;

/* ---- cuobjdump (inspect_tool.c): each returns an exit code, after a line
 * on stderr unless PGC_EXIT_OK ------------------------------------------------ */

/* cuobjdump and nvdisasm's directories, and a first run: --version. */
int inspect_prepare_disassembler(inspect_state *state);
/* Resources of every kernel of the binary: fast, and it names them. */
int inspect_read_resources(inspect_state *state);
/* The SASS of the rows' kernels only. */
int inspect_read_sass(inspect_state *state);

/* ---- the rows and the report (inspect_report.c) ------------------------------ */

/* Report order: by variant, architecture, template argument, name. */
int inspect_compare_rows(const void *a, const void *b);
/* A row's figures and its verdict, from its kernel's record. */
void inspect_fill_row(inspect_row *row);
/* The report on stdout: facts, one row per kernel, notes. */
int inspect_print_report(const inspect_state *state);
/* --check: one line on stderr per problem and per broken rule, then the
 * count; PGC_EXIT_FAILED when there is any. */
int inspect_report_violations(const inspect_state *state);

#endif
