/* What `pipegemm inspect` makes of cuobjdump's text: the resources of each
 * kernel (-res-usage), a census of its SASS opcodes (-sass), the blocks per
 * SM those resources allow, and whether the SASS holds to the rules of a
 * variant's registry entry (pg_sass_rule). Pure functions on text and
 * numbers: no process, file or GPU, so tests/test_sass.c checks all of it on
 * a fixture. src/cli/inspect_tool.c runs cuobjdump and feeds its lines here. */
#ifndef PGC_SASS_H
#define PGC_SASS_H

#include <stddef.h>

#include "introspect.h"

#define PGC_ARCH_NAME_SIZE 16    /* "sm_90a" */
#define PGC_KERNEL_NAME_SIZE 512 /* a mangled kernel symbol */
#define PGC_OPCODE_SIZE 64       /* "SYNCS.PHASECHK.TRANS64.TRYWAIT" */

/* The opcode families of the census: the ones that tell how a tile moves
 * and how its arrival is awaited, then the rest. */
typedef enum {
  PGC_OP_LDG,       /* global -> registers */
  PGC_OP_STS,       /* registers -> shared */
  PGC_OP_LDS,       /* shared -> registers */
  PGC_OP_LDGSTS,    /* cp.async: global -> shared */
  PGC_OP_LDGDEPBAR, /* cp.async.commit_group */
  PGC_OP_DEPBAR,    /* cp.async.wait_group (and other scoreboard waits) */
  PGC_OP_BAR_SYNC,  /* __syncthreads, bar.sync */
  PGC_OP_BAR_OTHER, /* BAR.ARV, BAR.RED, ... */
  PGC_OP_SYNCS,     /* sm_90 mbarrier: SYNCS.ARRIVE, SYNCS.PHASECHK, ... */
  PGC_OP_ARRIVES,   /* cp.async.mbarrier.arrive: ARRIVES.LDGSTSBAR */
  PGC_OP_TMA,       /* cp.async.bulk.tensor: UTMALDG, UTMASTG, UTMAPF, ... */
  PGC_OP_BULK,      /* cp.async.bulk: UBLKCP, ... */
  PGC_OP_FFMA,
  PGC_OP_LDL, /* local loads: spill reloads (or local arrays) */
  PGC_OP_STL, /* local stores: spills */
  PGC_OP_OTHER,
  PGC_OP_FAMILY_COUNT
} pgc_op_family;

/* LDG, STS, LDS and LDGSTS (the first four families) are also counted by
 * access width. */
#define PGC_OP_WIDE_FAMILIES 4
typedef enum {
  PGC_WIDTH_NARROW = 0, /* .U8 .S8 .U16 .S16 */
  PGC_WIDTH_32,         /* no width modifier */
  PGC_WIDTH_64,
  PGC_WIDTH_128,
  PGC_WIDTH_COUNT
} pgc_width;

/* "LDG", "BAR.SYNC", "BAR other", ... (static). */
const char *pgc_op_family_name(pgc_op_family family);
/* Bits per access of a width class: 16 (for 8/16), 32, 64, 128. */
int pgc_width_bits(pgc_width width);
pgc_op_family pgc_op_family_of(const char *opcode);
pgc_width pgc_op_width_of(const char *opcode);

/* Whether `opcode` ("LDG.E.128.CONSTANT") matches `pattern` ("LDG.128"):
 * the same instruction (first dot-separated part) carrying every modifier
 * the pattern names, in any order. */
int pgc_opcode_matches(const char *opcode, const char *pattern);

/* The Hopper-only instructions: none may appear in code for an earlier
 * architecture. NULL-terminated. */
extern const char *const pgc_hopper_only_opcodes[];

typedef struct {
  char opcode[PGC_OPCODE_SIZE];
  unsigned long count;
} pgc_opcode_count;

/* One kernel of one architecture in the binary. */
typedef struct {
  char arch[PGC_ARCH_NAME_SIZE]; /* "sm_90" */
  int sm;                        /* 90 */
  char name[PGC_KERNEL_NAME_SIZE]; /* the symbol as in the binary */

  int has_resources; /* from -res-usage */
  int registers;
  long stack_bytes, shared_bytes, local_bytes;

  int has_sass; /* from -sass */
  unsigned long family[PGC_OP_FAMILY_COUNT];
  unsigned long width[PGC_OP_WIDE_FAMILIES][PGC_WIDTH_COUNT];
  unsigned long instructions; /* counted ones: all but @!PT (never executed) */
  pgc_opcode_count *opcodes;  /* every distinct opcode with its count */
  int opcode_count, opcode_capacity;
} pgc_kernel_record;

#define PGC_MAX_ARCHS 16

/* Everything read from one binary, and the state of the line parsers. */
typedef struct {
  pgc_kernel_record *kernels;
  int count, capacity;
  /* Architectures with code in the binary, in the order first seen. */
  char archs[PGC_MAX_ARCHS][PGC_ARCH_NAME_SIZE];
  int arch_count;
  /* parser state */
  char arch[PGC_ARCH_NAME_SIZE];
  int sm;
  int sass_kernel;     /* index SASS lines count into; -1 none */
  int resource_kernel; /* index waiting for its REG line; -1 none */
} pgc_dump;

void pgc_dump_init(pgc_dump *dump);
/* Frees what the dump holds; it may be initialised and used again. */
void pgc_dump_free(pgc_dump *dump);

/* Feed one line (no newline needed) of `cuobjdump -res-usage` or of
 * `cuobjdump -sass` output. 0, or -1 when host memory ran out. A kernel
 * that appears twice for one architecture keeps its first description. */
int pgc_dump_res_usage_line(pgc_dump *dump, const char *line);
int pgc_dump_sass_line(pgc_dump *dump, const char *line);
/* The same for a whole text of lines (tests). */
int pgc_dump_res_usage_text(pgc_dump *dump, const char *text);
int pgc_dump_sass_text(pgc_dump *dump, const char *text);

/* The kernel `symbol` of architecture `arch`, or NULL. */
const pgc_kernel_record *pgc_dump_find(const pgc_dump *dump, const char *arch,
                                       const char *symbol);
/* How many instructions of the kernel match `pattern`. */
unsigned long pgc_kernel_count(const pgc_kernel_record *kernel,
                               const char *pattern);

/* The kernel's name as a reader writes it: "pg_cp_async_kernel",
 * "pg_pipeline_block_kernel<2>". Symbols that are not mangled C++ functions
 * of the global namespace with integer template arguments come back as
 * they are. */
void pgc_kernel_display_name(const char *symbol, char *buf, size_t size);
/* Whether a display name is `stem` or an instance "stem<...>" of it. */
int pgc_kernel_has_stem(const char *display, const char *stem);
/* The first template argument of a display name ("...<8>" -> 8), or -1. */
long pgc_kernel_template_arg(const char *display);

/* ---- blocks per SM ---------------------------------------------------------
 * What the occupancy calculator weighs, per architecture. */
typedef struct {
  int sm;
  int regs_per_sm;        /* 65536 */
  int reg_partitions;     /* 4 schedulers, each with regs_per_sm / 4 */
  int reg_alloc_unit;     /* registers are given to a warp in units of 256 */
  int max_regs_per_thread;
  int max_threads_per_sm;
  int max_threads_per_block;
  int max_blocks_per_sm;
  long smem_per_sm;          /* the largest carveout */
  long smem_per_block_max;   /* with the opt-in attribute */
  long smem_reserved_per_block; /* the system's 1 KiB */
  int smem_alloc_unit;
  /* cuobjdump's SHARED for this architecture counts the reserved 1 KiB
   * (nvcc places a window for it before the kernel's own shared memory). */
  int shared_counts_reserved;
} pgc_arch_limits;

/* NULL for an architecture not in the table (sm_80 and sm_90 are). */
const pgc_arch_limits *pgc_arch_limits_of(int sm);

/* The kernel's own static shared memory, as the runtime reports it
 * (cudaFuncAttributes.sharedSizeBytes), from cuobjdump's SHARED. */
long pgc_static_smem_bytes(const pgc_arch_limits *limits, long cubin_shared);

enum {
  PGC_LIMIT_REGISTERS = 1,
  PGC_LIMIT_SMEM = 2,
  PGC_LIMIT_THREADS = 4,
  PGC_LIMIT_BLOCKS = 8
};
/* Resident blocks per SM of a kernel with `threads` per block, `registers`
 * per thread and `smem_bytes` of its own shared memory per block (static +
 * dynamic, without the reserved KiB), and in *limiters every resource that
 * allows no more (a PGC_LIMIT_* mask). 0 when one block does not fit. */
int pgc_blocks_per_sm(const pgc_arch_limits *limits, int threads, int registers,
                      long smem_bytes, unsigned *limiters);
/* "registers", "registers, shared memory", ... */
void pgc_limiters_text(unsigned limiters, char *buf, size_t size);

/* ---- the mechanism check -------------------------------------------------- */

typedef struct {
  const char *opcode;  /* the rule's pattern (static storage) */
  int must_appear;     /* 1: missing; 0: present though it must not be */
  unsigned long count; /* how many the kernel has */
  const char *meaning; /* static storage */
} pgc_violation;

/* Holds one kernel's SASS to `rules` (those for its architecture) and, for
 * code older than sm_90, to the Hopper-only list. Writes at most `capacity`
 * violations and returns how many there are in all. */
int pgc_check_kernel(const pgc_kernel_record *kernel, const pg_sass_rule *rules,
                     int rule_count, pgc_violation *out, int capacity);

/* "inspect: cp_async (sm_90, pg_cp_async_kernel): LDGSTS missing — the
 * kernel no longer shows cp.async" (no newline). */
void pgc_violation_line(const char *variant, const pgc_kernel_record *kernel,
                        const pgc_violation *violation, char *buf, size_t size);

#endif
