/* Argument parsing for pipegemm: one table of options says which command
 * takes which option, and the usage texts below document exactly that table
 * (tests/test_cli_args.c checks both directions). */
#include "args.h"
#include "adapters/proc.h"
#include "introspect.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>


/* Longest variant name we compare; anything longer is unknown anyway. */
#define VARIANT_NAME_MAX 64

typedef enum {
  OPT_HELP,
  OPT_VERSION,
  OPT_VARIANT,
  OPT_SIZE,
  OPT_M,
  OPT_N,
  OPT_K,
  OPT_SHAPES,
  OPT_STAGES,
  OPT_WARMUP,
  OPT_ITERS,
  OPT_ROUNDS,
  OPT_INPUTS,
  OPT_FLUSH_L2,
  OPT_SEED,
  OPT_FORMAT,
  OPT_CHECK,
  OPT_DEVICE,
  OPT_QUIET,
  OPT_PROFILE,
  OPT_NCU,
  OPT_RAW,
  OPT_BINARY,
  OPT_INSPECT_CHECK,
  OPT_SWAP,
  OPT_BLOCKS,
  OPT_OUT
} option_id;

/* Which commands accept an option: one bit per pgc_command. */
#define FOR_TOOL (1u << PGC_CMD_NONE)
#define FOR_LIST (1u << PGC_CMD_LIST)
#define FOR_BENCH (1u << PGC_CMD_BENCH)
#define FOR_STUDY (1u << PGC_CMD_STUDY)
#define FOR_PROFILE (1u << PGC_CMD_PROFILE)
#define FOR_INSPECT (1u << PGC_CMD_INSPECT)
#define FOR_TRACE (1u << PGC_CMD_TRACE)
#define FOR_EVERY \
  (FOR_TOOL | FOR_LIST | FOR_BENCH | FOR_STUDY | FOR_PROFILE | FOR_INSPECT | FOR_TRACE)

/* Which experiments of `study` accept an option: one bit per pgc_study. */
#define IN_PIPELINING (1u << PGC_STUDY_PIPELINING)
#define IN_SINGLE_WARP (1u << PGC_STUDY_SINGLE_WARP)
#define IN_EVERY_STUDY (IN_PIPELINING | IN_SINGLE_WARP)

typedef struct {
  const char *name;
  option_id id;
  int takes_value;
  unsigned commands;
  unsigned studies; /* with FOR_STUDY: the experiments that take it */
} option_spec;

static const option_spec option_table[] = {
    {"--help", OPT_HELP, 0, FOR_EVERY, IN_EVERY_STUDY},
    {"--version", OPT_VERSION, 0, FOR_TOOL, 0},
    {"--variant", OPT_VARIANT, 1, FOR_BENCH | FOR_PROFILE | FOR_INSPECT | FOR_TRACE, 0},
    {"--size", OPT_SIZE, 1, FOR_BENCH | FOR_STUDY | FOR_PROFILE | FOR_TRACE, IN_PIPELINING},
    {"--m", OPT_M, 1, FOR_BENCH | FOR_PROFILE | FOR_TRACE, 0},
    {"--n", OPT_N, 1, FOR_BENCH | FOR_PROFILE | FOR_TRACE, 0},
    {"--k", OPT_K, 1, FOR_BENCH | FOR_STUDY | FOR_PROFILE | FOR_TRACE, IN_SINGLE_WARP},
    {"--shapes", OPT_SHAPES, 1, FOR_BENCH, 0},
    {"--stages", OPT_STAGES, 1, FOR_BENCH | FOR_PROFILE | FOR_TRACE, 0},
    {"--warmup", OPT_WARMUP, 1, FOR_BENCH | FOR_STUDY | FOR_TRACE, IN_SINGLE_WARP},
    {"--iters", OPT_ITERS, 1, FOR_BENCH | FOR_STUDY | FOR_TRACE, IN_SINGLE_WARP},
    {"--rounds", OPT_ROUNDS, 1, FOR_BENCH, 0},
    {"--inputs", OPT_INPUTS, 1, FOR_BENCH, 0},
    {"--flush-l2", OPT_FLUSH_L2, 1, FOR_BENCH | FOR_STUDY | FOR_TRACE, IN_EVERY_STUDY},
    {"--seed", OPT_SEED, 1, FOR_BENCH | FOR_STUDY | FOR_TRACE, IN_EVERY_STUDY},
    {"--format", OPT_FORMAT, 1,
     FOR_LIST | FOR_BENCH | FOR_STUDY | FOR_PROFILE | FOR_INSPECT | FOR_TRACE,
     IN_EVERY_STUDY},
    {"--check", OPT_CHECK, 1, FOR_BENCH | FOR_STUDY, IN_EVERY_STUDY},
    {"--device", OPT_DEVICE, 1, FOR_LIST | FOR_BENCH | FOR_STUDY | FOR_PROFILE | FOR_TRACE,
     IN_EVERY_STUDY},
    {"--quiet", OPT_QUIET, 0, FOR_BENCH | FOR_STUDY | FOR_PROFILE | FOR_TRACE,
     IN_EVERY_STUDY},
    {"--profile", OPT_PROFILE, 0, FOR_STUDY, IN_PIPELINING},
    {"--ncu", OPT_NCU, 1, FOR_STUDY | FOR_PROFILE, IN_PIPELINING},
    {"--raw", OPT_RAW, 1, FOR_STUDY | FOR_PROFILE, IN_PIPELINING},
    {"--binary", OPT_BINARY, 1, FOR_INSPECT, 0},
    /* inspect's --check is a flag; bench's and study's takes on|off. */
    {"--check", OPT_INSPECT_CHECK, 0, FOR_INSPECT, 0},
    {"--swap", OPT_SWAP, 1, FOR_INSPECT, 0},
    {"--blocks", OPT_BLOCKS, 1, FOR_TRACE, 0},
    {"--out", OPT_OUT, 1, FOR_TRACE, 0},
};
#define OPTION_COUNT ((int)(sizeof option_table / sizeof option_table[0]))

typedef struct {
  const char *name;
  pgc_command command;
} command_spec;

static const command_spec command_table[] = {
    {"list", PGC_CMD_LIST},
    {"bench", PGC_CMD_BENCH},
    {"study", PGC_CMD_STUDY},
    {"profile", PGC_CMD_PROFILE},
    {"inspect", PGC_CMD_INSPECT},
    {"trace", PGC_CMD_TRACE},
};
#define COMMAND_COUNT ((int)(sizeof command_table / sizeof command_table[0]))

typedef struct {
  const char *name;
  pgc_study study;
} study_spec;

static const study_spec study_table[] = {
    {"pipelining", PGC_STUDY_PIPELINING},
    {"single-warp", PGC_STUDY_SINGLE_WARP},
};
#define STUDY_COUNT ((int)(sizeof study_table / sizeof study_table[0]))

int pgc_option_count(void) { return OPTION_COUNT; }

const char *pgc_option_name(int index) {
  return index >= 0 && index < OPTION_COUNT ? option_table[index].name : NULL;
}

int pgc_option_applies(int index, pgc_command command) {
  if (index < 0 || index >= OPTION_COUNT) return 0;
  return (option_table[index].commands & (1u << command)) != 0;
}

int pgc_option_applies_to_study(int index, pgc_study study) {
  if (!pgc_option_applies(index, PGC_CMD_STUDY) || study == PGC_STUDY_NONE)
    return 0;
  return (option_table[index].studies & (1u << study)) != 0;
}

const char *pgc_study_name(pgc_study study) {
  for (int s = 0; s < STUDY_COUNT; ++s)
    if (study_table[s].study == study) return study_table[s].name;
  return NULL;
}

/* ---- usage texts ---------------------------------------------------------- */

static const char usage_tool[] =
    "usage: pipegemm <command> [options]\n"
    "\n"
    "Software pipelining in FP32 GEMM on NVIDIA GPUs: one kernel per way of\n"
    "hiding global-to-shared memory latency, each verified against an FP64\n"
    "reference and timed.\n"
    "\n"
    "commands:\n"
    "  list               every variant, its technique, and whether this GPU runs it\n"
    "  bench              verify and time variants at one GEMM shape or a set\n"
    "  study pipelining   the experiment of the \"CUDA Kernel Study: Pipelining\"\n"
    "                     write-up, beside its RTX A6000 table\n"
    "  study single-warp  the single-warp 32x32xK experiment of the \"A study on\n"
    "                     CUDA async memcpy\" blog post, beside its RTX 4070 figures\n"
    "  profile            Nsight Compute counters of variants side by side, in the\n"
    "                     rows of the pipelining write-up's metric tables\n"
    "  inspect            no GPU needed: registers, shared memory, spills and a\n"
    "                     SASS census of every kernel, and whether each kernel's\n"
    "                     SASS shows the mechanism it claims\n"
    "  trace              a timeline of one kernel's pipeline (copies issued and\n"
    "                     landed, compute, waits) as Chrome trace-event JSON, with\n"
    "                     copies in flight, the pipeline bubble and time per K tile\n"
    "\n"
    "options:\n"
    "  -h, --help         this text; 'pipegemm <command> --help' for a command\n"
    "  --version          the version of pipegemm\n"
    "\n"
    "exit codes: 0 ok, 1 a check failed, a run returned an error or the report\n"
    "            could not be written (a full disk), 2 bad usage, 3 no usable\n"
    "            CUDA GPU (inspect: no usable cuobjdump, or no nvdisasm for it)\n";

static const char usage_list[] =
    "usage: pipegemm list [options]\n"
    "\n"
    "Every variant in the registry: technique, source, minimum compute\n"
    "capability, stage counts, tile, shared memory per block at the default\n"
    "stage count, and whether the selected GPU runs it. Needs no GPU.\n"
    "\n"
    "options:\n"
    "  --format table|csv|json   output format (default: table)\n"
    "  --device N                CUDA device to report on (default: 0)\n"
    "  -h, --help                this text\n"
    "\n"
    "An option's value goes after a space or an '=': --format csv, --format=csv.\n";

static const char usage_bench[] =
    "usage: pipegemm bench [options]\n"
    "\n"
    "Runs each selected variant at each stage count on C = A * B (FP32, row-major,\n"
    "alpha 1, beta 0): first once with C poisoned with NaN, compared with an FP64\n"
    "reference, then timed with CUDA events; reports the median.\n"
    "\n"
    "options:\n"
    "  --variant LIST        comma-separated variant names, or all (default: all);\n"
    "                        'pipegemm list' shows the names\n"
    "  --size S              M = N = K = S (default: 4096)\n"
    "  --m M, --n N, --k K   one dimension; overrides --size wherever it appears\n"
    "  --shapes FILE         every shape of FILE instead, one MxNxK a line ('#'\n"
    "                        starts a comment), in one run that ends with the\n"
    "                        geometric mean of x cuBLAS per variant; not with\n"
    "                        --size or --m/--n/--k (a set: bench/shapes/set.txt)\n"
    "  --stages LIST         stage counts and ranges, e.g. 2,3,4 or 1-8 or 1-3,6\n"
    "                        (default: each variant's default); a variant with one\n"
    "                        fixed stage count runs once at it; with --variant all,\n"
    "                        counts outside a variant's range are skipped for it\n"
    "                        (auto has none: it runs what it picks for the GPU\n"
    "                        and shape, named in the 'runs' column); a count\n"
    "                        above every variant's range is refused\n"
    "  --warmup N            untimed runs before timing (default: 10)\n"
    "  --iters N             timed runs, at least 1 (default: 20)\n"
    "  --rounds N            time every run of a shape N times in turn, --warmup\n"
    "                        and --iters each, and report over all N x --iters\n"
    "                        (default: 1): a clock that drifts (power, heat)\n"
    "                        then weighs on every run alike\n"
    "  --inputs uniform|wide|tiny   the random inputs (default: uniform): values\n"
    "                        in [-1, 1); wide: those times 2^e, e in -60..60; tiny:\n"
    "                        A's times 2^-120..2^-135 (FP32's smallest normals and\n"
    "                        denormals), B uniform\n"
    "  --flush-l2 on|off     clear the L2 cache before every run (default: on)\n"
    "  --seed N              seed of the random inputs, 0 to 2^64-1 (default: 1)\n"
    "  --check on|off        verify before timing (default: on)\n"
    "  --format table|csv|json   output format (default: table)\n"
    "  --device N            CUDA device (default: 0)\n"
    "  --quiet               no progress lines on stderr\n"
    "  -h, --help            this text\n"
    "\n"
    "An option's value goes after a space or an '=': --size 2048, --size=2048.\n"
    "Environment: PIPEGEMM_TMA_WS_GROUP_M and PIPEGEMM_TMA_WS_BLOCKS_PER_SM\n"
    "override tma_ws's tuning table (src/tuning.c; scripts/tune-tma-ws.sh);\n"
    "PIPEGEMM_EMULATED_SUM_STEPS the emulated entries' K steps summed on the\n"
    "tensor cores before FP32 (0: all of K), PIPEGEMM_EMULATED_SPLIT_MIN_K_TILES\n"
    "the fewest K steps of a range where they split K, PIPEGEMM_EMULATED_FUSED_SPLIT\n"
    "0 or 1: A split by a first kernel at every N, or in shared memory wherever\n"
    "TMA reads A and B (default: the latter where N <= 512);\n"
    "PIPEGEMM_PROGRAMMATIC_LAUNCH=0 a call's kernels in plain stream order (by\n"
    "default one that waits for the kernel before it starts beside its end);\n"
    "PIPEGEMM_SPLIT_IN_CLUSTERS=0 a split K's partial sums always in planes that\n"
    "a second kernel adds up (by default, where it can, each tile's ranges are\n"
    "added up in a cluster of their blocks).\n"
    "exit codes: 0 ok, 1 a check failed, a run returned an error or the report\n"
    "            could not be written, 2 bad usage, 3 no usable CUDA GPU\n";

static const char usage_study[] =
    "usage: pipegemm study <experiment> [options]\n"
    "\n"
    "Reruns the experiment of one source on this GPU and prints it beside the\n"
    "source's own figures. Every kernel is verified against an FP64 reference\n"
    "(C poisoned with NaN first), then timed with CUDA events; the median counts.\n"
    "\n"
    "experiments:\n"
    "  pipelining    the \"CUDA Kernel Study: Pipelining\" write-up: baseline,\n"
    "                pingpong and cp_async at STAGES=2, plus cublas, on a size^3\n"
    "                GEMM, timed as the write-up did (5 + 10 warm-up runs, 20\n"
    "                timed runs), beside its RTX A6000 table\n"
    "  single-warp   the \"A study on CUDA async memcpy\" blog post's 32x32xK GEMM\n"
    "                on one block of one warp: its reference kernel (load, sync,\n"
    "                compute, sync per K step) and its 2-stage block-scoped\n"
    "                cuda::pipeline kernel, beside the post's RTX 4070 figures\n"
    "\n"
    "options of every experiment:\n"
    "  --flush-l2 on|off     clear the L2 cache before every run (default: on)\n"
    "  --seed N              seed of the random inputs, 0 to 2^64-1 (default: 1)\n"
    "  --check on|off        verify before timing (default: on)\n"
    "  --format table|csv|json   output format (default: table)\n"
    "  --device N            CUDA device (default: 0)\n"
    "  --quiet               no progress lines on stderr\n"
    "  -h, --help            this text\n"
    "\n"
    "options of pipelining:\n"
    "  --size S              M = N = K = S (default: 2048, the write-up's)\n"
    "  --profile             after the timings, profile baseline, pingpong and\n"
    "                        cp_async (2 stages) with Nsight Compute and print\n"
    "                        the counters beside the write-up's RTX A6000 ones\n"
    "                        (as 'pipegemm profile' does; with csv or json, a\n"
    "                        second report follows the first); exit 3 when ncu\n"
    "                        is missing or may not read the GPU's counters\n"
    "  --ncu PATH            with --profile: the ncu to run (default: $PG_NCU,\n"
    "                        else ncu on PATH, else /usr/local/cuda/bin/ncu,\n"
    "                        else the newest in /opt/nvidia/nsight-compute)\n"
    "  --raw FILE            with --profile: write all that ncu printed to FILE\n"
    "\n"
    "options of single-warp:\n"
    "  --k K                 K, 0 to 16777216 (default: 65536, the post's);\n"
    "                        M = N = 32 always\n"
    "  --warmup N            untimed runs of each kernel (default: 10)\n"
    "  --iters N             timed runs of each kernel, at least 1 (default: 20)\n"
    "\n"
    "An option's value goes after a space or an '=': --k 4096, --k=4096.\n"
    "exit codes: 0 ok, 1 a check failed, a run returned an error or the report\n"
    "            could not be written, 2 bad usage, 3 no usable CUDA GPU\n";

static const char usage_profile[] =
    "usage: pipegemm profile [options]\n"
    "\n"
    "Profiles each selected variant at each stage count with Nsight Compute\n"
    "(ncu) and prints the counters side by side, one column per kernel, in the\n"
    "rows of the \"CUDA Kernel Study: Pipelining\" write-up's metric tables:\n"
    "duration; SM, memory, DRAM, L1 and L2 throughput; DRAM bandwidth; issued\n"
    "and eligible warps per scheduler; warp cycles per issued instruction;\n"
    "registers; shared memory; achieved occupancy; L1 hit rate; wait, long\n"
    "scoreboard and barrier stalls; excessive shared wavefronts, shared bank\n"
    "conflicts and excessive global sectors.\n"
    "\n"
    "ncu runs this pipegemm once per kernel, as 'pipegemm bench' with one\n"
    "unchecked launch, at the GPU's own clocks. It needs the GPU's performance\n"
    "counters: root, or the driver option NVreg_RestrictProfilingToAdminUsers=0.\n"
    "\n"
    "options:\n"
    "  --variant LIST        comma-separated variant names, or all (default: all);\n"
    "                        cublas's own GEMM kernel is found by its name\n"
    "  --size S              M = N = K = S (default: 2048, the write-up's)\n"
    "  --m M, --n N, --k K   one dimension; overrides --size wherever it appears\n"
    "  --stages LIST         stage counts and ranges, e.g. 2,3,4 or 1-8 (default:\n"
    "                        each variant's default), as for bench\n"
    "  --ncu PATH            the ncu to run (default: $PG_NCU, else ncu on PATH,\n"
    "                        else /usr/local/cuda/bin/ncu, else the newest in\n"
    "                        /opt/nvidia/nsight-compute)\n"
    "  --raw FILE            also write all that ncu printed to FILE, each run\n"
    "                        after a '# command:' line, to read again later\n"
    "  --format table|csv|json   output format (default: table); csv and json\n"
    "                        have one row per kernel, one column per metric\n"
    "  --device N            CUDA device (default: 0)\n"
    "  --quiet               no progress lines on stderr\n"
    "  -h, --help            this text\n"
    "\n"
    "An option's value goes after a space or an '=': --size 2048, --size=2048.\n"
    "exit codes: 0 ok, 1 a kernel was not profiled, a run failed, or the report\n"
    "            or --raw FILE could not be written, 2 bad usage, 3 ncu missing,\n"
    "            not allowed to read the counters, no usable GPU, or no kernel\n"
    "            profiled at all\n";

static const char usage_inspect[] =
    "usage: pipegemm inspect [options]\n"
    "\n"
    "Reads the kernels compiled into a binary; needs no GPU. For each kernel of\n"
    "each variant and each architecture: registers per thread, static and\n"
    "dynamic shared memory, stack, local memory and spills (STL/LDL), blocks\n"
    "per SM at the default configuration and the resource that limits it, and a\n"
    "census of the SASS instructions that tell how tiles move and wait: LDG,\n"
    "STS and LDS by width, LDGSTS, LDGDEPBAR, DEPBAR, BAR.SYNC, SYNCS\n"
    "(mbarrier), ARRIVES, TMA and bulk copies, FFMA, and the rest.\n"
    "\n"
    "Each variant's registry entry names the instructions that prove its\n"
    "mechanism (cp_async: LDGSTS, LDGDEPBAR, DEPBAR and no STS; pingpong:\n"
    "LDG and STS, no LDGSTS; ...), and no sm_80 code may hold a Hopper-only\n"
    "instruction. The mechanism column says whether each kernel holds to them.\n"
    "\n"
    "The disassembler is cuobjdump: $PG_CUOBJDUMP, else the one found when\n"
    "pipegemm was configured (the CUDA toolkit's, or the nvidia-cuda-cuobjdump\n"
    "pip wheel's), else cuobjdump on the PATH. For the SASS it runs nvdisasm,\n"
    "which it looks for on its PATH: inspect puts there first the directory of\n"
    "$PG_NVDISASM (the path of an nvdisasm) if set, then cuobjdump's own. When\n"
    "cuobjdump fails, inspect's error line quotes cuobjdump's own. In a checkout,\n"
    "'make deps' fetches cuobjdump and nvdisasm into .deps/, where the next\n"
    "'make' finds them.\n"
    "\n"
    "options:\n"
    "  --binary PATH         the executable or library to read (default: this\n"
    "                        pipegemm, which holds libpipegemm's kernels)\n"
    "  --variant LIST        comma-separated variant names, or all (default: all)\n"
    "  --check               after the report, one line on stderr for each rule a\n"
    "                        kernel breaks, or a kernel missing; exit 1 if any\n"
    "  --swap A=B            self-test of the check: judge variant B's kernels by\n"
    "                        variant A's rules (--swap cp_async=baseline --check\n"
    "                        must fail)\n"
    "  --format table|csv|json   output format (default: table)\n"
    "  -h, --help            this text\n"
    "\n"
    "An option's value goes after a space or an '=': --binary lib.a, --binary=lib.a.\n"
    "exit codes: 0 ok, 1 --check found a violation, cuobjdump failed or the\n"
    "            report could not be written, 2 bad usage or a binary without\n"
    "            CUDA kernels, 3 no usable cuobjdump, or no nvdisasm for it\n";

static const char usage_trace[] =
    "usage: pipegemm trace --variant NAME --out FILE [options]\n"
    "\n"
    "Runs one variant's traced kernel on C = A * B (FP32, alpha 1, beta 0): its\n"
    "kernel compiled a second time with marks that read the SM's clock at each\n"
    "step of the pipeline, in a sample of blocks spread over the grid. Checks C\n"
    "against an FP64 reference and the trace against what a pipeline must\n"
    "obey, writes the timeline as Chrome trace-event JSON (open it in\n"
    "https://ui.perfetto.dev or chrome://tracing: a process per SM, a track per\n"
    "block and role, one per stage for the copies into it; spans for every copy\n"
    "from issued to ready, data wait, compute, slot wait and epilogue), and\n"
    "prints a summary per block and overall: copies in flight, the share of the\n"
    "main loop spent waiting for data (the pipeline bubble), time per K tile,\n"
    "and what tracing costs, the traced kernel's median time over the timed\n"
    "kernel's, the two launched in turn. A variant without a traced kernel is\n"
    "refused, and the message names those with one.\n"
    "\n"
    "options:\n"
    "  --variant NAME        the variant to trace (one)\n"
    "  --out FILE            the JSON file to write (required)\n"
    "  --stages S            its stage count (default: the variant's default)\n"
    "  --size S              M = N = K = S (default: 4096)\n"
    "  --m M, --n N, --k K   one dimension; overrides --size wherever it appears\n"
    "                        (M and N at least 1)\n"
    "  --blocks N            blocks that record, 1 to 1024, every (grid / N)-th\n"
    "                        so that they land on different SMs (default: 8)\n"
    "  --warmup N            untimed launches of each kernel first (default: 3)\n"
    "  --iters N             timed launches of each kernel, traced and timed in\n"
    "                        turn, at least 1 (default: 10); the trace is the\n"
    "                        last traced launch's\n"
    "  --flush-l2 on|off     clear the L2 cache before every launch (default: on)\n"
    "  --seed N              seed of the random inputs, 0 to 2^64-1 (default: 1)\n"
    "  --format table|csv|json   summary format (default: table)\n"
    "  --device N            CUDA device (default: 0)\n"
    "  --quiet               no progress lines on stderr\n"
    "  -h, --help            this text\n"
    "\n"
    "An option's value goes after a space or an '=': --blocks 4, --blocks=4.\n"
    "exit codes: 0 ok, 1 C or the trace failed its check, a run returned an\n"
    "            error, or the report or FILE could not be written, 2 bad usage\n"
    "            (a variant without a traced kernel too), 3 no usable CUDA GPU\n";

const char *pgc_usage_text(pgc_command topic) {
  switch (topic) {
    case PGC_CMD_LIST: return usage_list;
    case PGC_CMD_BENCH: return usage_bench;
    case PGC_CMD_STUDY: return usage_study;
    case PGC_CMD_PROFILE: return usage_profile;
    case PGC_CMD_INSPECT: return usage_inspect;
    case PGC_CMD_TRACE: return usage_trace;
    default: return usage_tool;
  }
}


const char *pgc_format_name(pgc_format format) {
  switch (format) {
    case PGC_FORMAT_CSV: return "csv";
    case PGC_FORMAT_JSON: return "json";
    default: return "table";
  }
}

/* ---- helpers -------------------------------------------------------------- */

/* Writes a message into the caller's buffer; returns PGC_EXIT_USAGE so that
 * `return usage_error(...)` reads as what it does. */
static int usage_error(char *err, size_t err_size, const char *fmt, ...) {
  if (err && err_size > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
  }
  return PGC_EXIT_USAGE;
}

/* Appends to a message already in err, truncating at the buffer's end. */
static void append(char *err, size_t err_size, const char *fmt, ...) {
  if (!err || err_size == 0) return;
  size_t used = strlen(err);
  if (used + 1 >= err_size) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err + used, err_size - used, fmt, ap);
  va_end(ap);
}

/* The longest escape of one character: four bytes of \\xHH. */
#define ESCAPED_UNIT_SIZE (4 * 4)

/* The character at text[at] as pgc_escape_text writes it, into unit;
 * returns the length written and moves *at past the character. */
static size_t escape_unit(const char *text, size_t len, size_t *at, char *unit) {
  uint32_t code;
  const size_t n = pgc_utf8_next(text + *at, len - *at, &code);
  const char *from = text + *at;
  *at += n;
  switch (code) {
    case '\\': memcpy(unit, "\\\\", 2); return 2;
    case '\n': memcpy(unit, "\\n", 2); return 2;
    case '\r': memcpy(unit, "\\r", 2); return 2;
    case '\t': memcpy(unit, "\\t", 2); return 2;
    default: break;
  }
  if (code == PGC_UTF8_INVALID || code < 0x20 || (code >= 0x7f && code < 0xa0)) {
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; ++i) {
      const unsigned byte = (unsigned char)from[i];
      memcpy(unit + 4 * i, "\\x", 2);
      unit[4 * i + 2] = hex[byte >> 4];
      unit[4 * i + 3] = hex[byte & 0xf];
    }
    return 4 * n;
  }
  memcpy(unit, from, n);
  return n;
}

void pgc_escape_text(char *buf, size_t size, const char *text, size_t len) {
  static const char ellipsis[] = "...";
  if (size == 0) return;
  char unit[ESCAPED_UNIT_SIZE];
  size_t whole = 0;
  for (size_t at = 0; at < len;) whole += escape_unit(text, len, &at, unit);
  /* Cut where the ellipsis still fits after it (if it fits at all). */
  const int cut = whole >= size;
  const size_t limit = !cut ? whole : size >= sizeof ellipsis ? size - sizeof ellipsis : size - 1;
  size_t used = 0;
  for (size_t at = 0; at < len;) {
    const size_t n = escape_unit(text, len, &at, unit);
    if (used + n > limit) break;
    memcpy(buf + used, unit, n);
    used += n;
  }
  if (cut && size >= sizeof ellipsis) {
    memcpy(buf + used, ellipsis, sizeof ellipsis - 1);
    used += sizeof ellipsis - 1;
  }
  buf[used] = '\0';
}

/* Argument text as a message repeats it (pgc_escape_text): enough of it to
 * know it again, short enough that the longest message, an unknown
 * variant's with every name listed after it, still fits PGC_ERROR_SIZE. */
#define QUOTED_SIZE 256
typedef struct {
  char text[QUOTED_SIZE];
} quoted_text;

/* For a message's arguments: `quoted(value).text` lives until the end of
 * the call it is written in. */
static quoted_text quoted_part(const char *text, size_t len) {
  quoted_text q;
  pgc_escape_text(q.text, sizeof q.text, text, len);
  return q;
}

static quoted_text quoted(const char *text) { return quoted_part(text, strlen(text)); }

/* Decimal digits only (no sign, no spaces, no base prefix), at least one,
 * value <= max. Returns 0, or -1 if not a number, -2 if above max. Every
 * byte is looked at first, so that "99999999999x" is no number rather
 * than a large one. */
static int parse_digits(const char *text, size_t len, uint64_t max,
                        uint64_t *value) {
  if (len == 0) return -1;
  for (size_t i = 0; i < len; ++i)
    if (text[i] < '0' || text[i] > '9') return -1;
  uint64_t acc = 0;
  for (size_t i = 0; i < len; ++i) {
    unsigned digit = (unsigned)(text[i] - '0');
    if (digit > max || acc > (max - digit) / 10) return -2;
    acc = acc * 10 + digit;
  }
  *value = acc;
  return 0;
}

/* A non-negative integer option value in [min, max]. */
static int parse_int_option(const char *option, const char *text, int min,
                            int max, int *value, char *err, size_t err_size) {
  uint64_t parsed = 0;
  int rc = parse_digits(text, strlen(text), (uint64_t)max, &parsed);
  if (rc == -1)
    return usage_error(err, err_size,
                       "%s expects a non-negative integer, got '%s'", option,
                       quoted(text).text);
  if (rc == -2)
    return usage_error(err, err_size, "%s %s is too large (at most %d)",
                       option, quoted(text).text, max);
  if ((int)parsed < min)
    return usage_error(err, err_size, "%s must be at least %d, got %s", option,
                       min, quoted(text).text);
  *value = (int)parsed;
  return PGC_EXIT_OK;
}

static int parse_on_off(const char *option, const char *text, int *flag,
                        char *err, size_t err_size) {
  if (strcmp(text, "on") == 0) {
    *flag = 1;
    return PGC_EXIT_OK;
  }
  if (strcmp(text, "off") == 0) {
    *flag = 0;
    return PGC_EXIT_OK;
  }
  return usage_error(err, err_size, "%s expects on or off, got '%s'", option,
                     quoted(text).text);
}

static int parse_format(const char *text, pgc_format *format, char *err,
                        size_t err_size) {
  static const pgc_format formats[] = {PGC_FORMAT_TABLE, PGC_FORMAT_CSV,
                                       PGC_FORMAT_JSON};
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; ++i) {
    if (strcmp(text, pgc_format_name(formats[i])) == 0) {
      *format = formats[i];
      return PGC_EXIT_OK;
    }
  }
  return usage_error(err, err_size,
                     "--format expects table, csv or json, got '%s'", quoted(text).text);
}

static int parse_seed(const char *text, uint64_t *seed, char *err,
                      size_t err_size) {
  int rc = parse_digits(text, strlen(text), UINT64_MAX, seed);
  if (rc == -1)
    return usage_error(err, err_size,
                       "--seed expects a non-negative integer, got '%s'",
                       quoted(text).text);
  if (rc == -2)
    return usage_error(err, err_size,
                       "--seed %s is too large (at most 2^64-1)", quoted(text).text);
  return PGC_EXIT_OK;
}

static int has_stage(const pgc_options *opts, int stages) {
  for (int i = 0; i < opts->stage_count; ++i)
    if (opts->stages[i] == stages) return 1;
  return 0;
}

/* The largest stage count any variant allows: above it, a count is too
 * large for every variant (with --variant all it would be skipped for all). */
static int largest_stage_count(void) {
  int most = 0;
  for (int i = 0; i < pg_variant_count(); ++i) {
    const pg_variant_info *variant = pg_variant_at(i);
    if (variant && variant->max_stages > most) most = variant->max_stages;
  }
  return most;
}

/* One entry of a stage list: "N" or "A-B". */
static int parse_stage_entry(const char *entry, size_t len, const char *list,
                             pgc_options *opts, char *err, size_t err_size) {
  const char *dash = memchr(entry, '-', len);
  size_t first_len = dash ? (size_t)(dash - entry) : len;
  const char *last_text = dash ? dash + 1 : entry;
  size_t last_len = dash ? len - first_len - 1 : len;
  const int most = largest_stage_count();
  uint64_t first = 0, last = 0;
  int first_rc = parse_digits(entry, first_len, (uint64_t)most, &first);
  int last_rc = parse_digits(last_text, last_len, (uint64_t)most, &last);
  if (first_rc == -1 || last_rc == -1)
    return usage_error(err, err_size,
                       "--stages: '%s' is not a stage count or a range A-B",
                       quoted_part(entry, len).text);
  /* A number of any length, up to the list's end: "99999999999" is a count
   * too large, not something else. */
  if (first_rc == -2 || last_rc == -2)
    return usage_error(err, err_size, "--stages: '%s' is too large (at most %d)",
                       first_rc == -2 ? quoted_part(entry, first_len).text
                                      : quoted_part(last_text, last_len).text,
                       most);
  if (first < 1 || last < 1)
    return usage_error(err, err_size,
                       "--stages: stage counts start at 1, got '%s'",
                       quoted_part(entry, len).text);
  if (first > last)
    return usage_error(err, err_size,
                       "--stages: range '%s' is reversed (write it low-high)",
                       quoted_part(entry, len).text);
  /* The registry bounds the counts above; this bounds what the array holds,
   * should a variant ever allow more, before a range is expanded. */
  if (last - first + 1 > PGC_MAX_STAGE_COUNTS)
    return usage_error(err, err_size,
                       "--stages: more than %d stage counts in '%s'",
                       PGC_MAX_STAGE_COUNTS, quoted(list).text);
  for (uint64_t value = first; value <= last; ++value) {
    if (has_stage(opts, (int)value)) continue;
    if (opts->stage_count == PGC_MAX_STAGE_COUNTS)
      return usage_error(err, err_size,
                         "--stages: more than %d stage counts in '%s'",
                         PGC_MAX_STAGE_COUNTS, quoted(list).text);
    opts->stages[opts->stage_count++] = (int)value;
  }
  return PGC_EXIT_OK;
}

static int parse_stage_list(const char *list, pgc_options *opts, char *err,
                            size_t err_size) {
  opts->stage_count = 0;
  if (list[0] == '\0')
    return usage_error(err, err_size, "--stages needs at least one stage count");
  const char *entry = list;
  for (;;) {
    const char *comma = strchr(entry, ',');
    size_t len = comma ? (size_t)(comma - entry) : strlen(entry);
    if (len == 0)
      return usage_error(err, err_size, "--stages: empty entry in '%s'",
                         quoted(list).text);
    int rc = parse_stage_entry(entry, len, list, opts, err, err_size);
    if (rc != PGC_EXIT_OK) return rc;
    if (!comma) return PGC_EXIT_OK;
    entry = comma + 1;
  }
}

/* The variants with a traced kernel, the ones trace takes, after a message. */
static void append_traced(char *err, size_t err_size) {
  int listed = 0;
  for (int i = 0; i < pg_variant_count(); ++i)
    if (pg_variant_traced(pg_variant_at(i)))
      append(err, err_size, "%s%s", listed++ ? ", " : "", pg_variant_at(i)->name);
}

/* What was asked for: the names that would do, as the option takes them
 * (trace only those it traces and one of them; all, only where a list of
 * names may be all). */
typedef enum { NAMES_OR_ALL, ONE_NAME, ONE_TRACED } name_choice;

static int unknown_variant(const char *name, size_t len, name_choice choice, char *err,
                           size_t err_size) {
  if (choice == ONE_TRACED) {
    usage_error(err, err_size, "unknown variant '%s' (trace takes: ",
                quoted_part(name, len).text);
    append_traced(err, err_size);
    append(err, err_size, ")");
    return PGC_EXIT_USAGE;
  }
  usage_error(err, err_size, "unknown variant '%s' (valid: ", quoted_part(name, len).text);
  for (int i = 0; i < pg_variant_count(); ++i) {
    const pg_variant_info *variant = pg_variant_at(i);
    if (variant) append(err, err_size, "%s%s", i ? ", " : "", variant->name);
  }
  append(err, err_size, choice == NAMES_OR_ALL ? "; or all)" : ")");
  return PGC_EXIT_USAGE;
}

/* trace runs one traced kernel: 'all' is refused where it is typed, with
 * the names it takes instead. */
static int trace_takes_one(char *err, size_t err_size) {
  usage_error(err, err_size, "trace takes one variant, not all (trace takes: ");
  append_traced(err, err_size);
  append(err, err_size, ")");
  return PGC_EXIT_USAGE;
}

static int parse_variant_list(const char *list, pgc_options *opts, char *err,
                              size_t err_size) {
  const name_choice choice = opts->command == PGC_CMD_TRACE ? ONE_TRACED : NAMES_OR_ALL;
  opts->variant_count = 0;
  opts->all_variants = 0;
  if (strcmp(list, "all") == 0) {
    if (choice == ONE_TRACED) return trace_takes_one(err, err_size);
    opts->all_variants = 1;
    return PGC_EXIT_OK;
  }
  if (list[0] == '\0')
    return usage_error(err, err_size, "--variant needs at least one name");
  const char *name = list;
  for (;;) {
    const char *comma = strchr(name, ',');
    size_t len = comma ? (size_t)(comma - name) : strlen(name);
    if (len == 0)
      return usage_error(err, err_size, "--variant: empty name in '%s'",
                         quoted(list).text);
    if (len == strlen("all") && strncmp(name, "all", len) == 0)
      return choice == ONE_TRACED
                 ? trace_takes_one(err, err_size)
                 : usage_error(err, err_size, "--variant: 'all' cannot be combined with names");
    if (len >= VARIANT_NAME_MAX) return unknown_variant(name, len, choice, err, err_size);
    char copy[VARIANT_NAME_MAX];
    memcpy(copy, name, len);
    copy[len] = '\0';
    const pg_variant_info *variant = pg_variant_find(copy);
    if (!variant) return unknown_variant(name, len, choice, err, err_size);
    int seen = 0;
    for (int i = 0; i < opts->variant_count; ++i)
      if (opts->variants[i] == variant) seen = 1;
    if (!seen) {
      if (opts->variant_count == PGC_MAX_VARIANTS)
        return usage_error(err, err_size, "--variant: more than %d names",
                           PGC_MAX_VARIANTS);
      opts->variants[opts->variant_count++] = variant;
    }
    if (!comma) return PGC_EXIT_OK;
    name = comma + 1;
  }
}

/* --swap A=B: two registry names. */
static int parse_swap(const char *value, pgc_options *opts, char *err,
                      size_t err_size) {
  const char *equals = strchr(value, '=');
  if (!equals || equals == value || equals[1] == '\0')
    return usage_error(err, err_size,
                       "--swap takes CLAIM=KERNELS, two variant names, got '%s'",
                       quoted(value).text);
  size_t len = (size_t)(equals - value);
  if (len >= VARIANT_NAME_MAX) return unknown_variant(value, len, ONE_NAME, err, err_size);
  char claim[VARIANT_NAME_MAX];
  memcpy(claim, value, len);
  claim[len] = '\0';
  opts->swap_claim = pg_variant_find(claim);
  if (!opts->swap_claim) return unknown_variant(value, len, ONE_NAME, err, err_size);
  opts->swap_kernels = pg_variant_find(equals + 1);
  if (!opts->swap_kernels)
    return unknown_variant(equals + 1, strlen(equals + 1), ONE_NAME, err, err_size);
  return PGC_EXIT_OK;
}

/* The option of that name for the command (one name may mean different
 * options to different commands: --check), else any of that name, so that
 * the caller can say it is not one of the command's. */
static const option_spec *find_option(const char *name, size_t len,
                                      unsigned command_bit) {
  const option_spec *any = NULL;
  for (int i = 0; i < OPTION_COUNT; ++i) {
    if (strlen(option_table[i].name) == len &&
        strncmp(option_table[i].name, name, len) == 0) {
      if (option_table[i].commands & command_bit) return &option_table[i];
      if (!any) any = &option_table[i];
    }
  }
  return any;
}

/* How messages name a command: "'bench'", or the tool before any command. */
static const char *command_display(pgc_command command) {
  switch (command) {
    case PGC_CMD_LIST: return "'list'";
    case PGC_CMD_BENCH: return "'bench'";
    case PGC_CMD_STUDY: return "'study'";
    case PGC_CMD_PROFILE: return "'profile'";
    case PGC_CMD_INSPECT: return "'inspect'";
    case PGC_CMD_TRACE: return "'trace'";
    default: return "pipegemm without a command";
  }
}

static void set_defaults(pgc_options *opts, int argc, char **argv) {
  memset(opts, 0, sizeof *opts);
  opts->command = PGC_CMD_NONE;
  opts->help_topic = PGC_CMD_NONE;
  opts->study = PGC_STUDY_NONE;
  opts->format = PGC_FORMAT_TABLE;
  opts->device = 0;
  opts->quiet = 0;
  opts->check = 1;
  opts->flush_l2 = 1;
  opts->seed = PGC_DEFAULT_SEED;
  opts->m = opts->n = opts->k = PGC_BENCH_DEFAULT_SIZE;
  opts->warmup = PGC_DEFAULT_WARMUP;
  opts->iters = PGC_DEFAULT_ITERS;
  opts->rounds = 1;
  opts->all_variants = 1;
  opts->trace_blocks = PGC_TRACE_DEFAULT_BLOCKS;
  opts->argc = argc;
  opts->argv = argv;
}

/* Dimensions as given: --size, then --m/--n/--k wherever they appear. */
typedef struct {
  int size;
  int size_given; /* 1: --size was on the command line */
  int m, n, k;    /* -1: not given */
} shape_request;

/* Applies one option with its value (NULL for an option without one). */
static int apply_option(const option_spec *spec, const char *value,
                        pgc_options *opts, shape_request *shape, char *err,
                        size_t err_size) {
  switch (spec->id) {
    case OPT_HELP:
    case OPT_VERSION: return PGC_EXIT_OK; /* handled by the caller */
    case OPT_VARIANT: return parse_variant_list(value, opts, err, err_size);
    case OPT_SIZE:
      shape->size_given = 1;
      return parse_int_option(spec->name, value, 0, INT_MAX, &shape->size, err,
                              err_size);
    case OPT_M:
      return parse_int_option(spec->name, value, 0, INT_MAX, &shape->m, err,
                              err_size);
    case OPT_N:
      return parse_int_option(spec->name, value, 0, INT_MAX, &shape->n, err,
                              err_size);
    case OPT_K:
      return parse_int_option(spec->name, value, 0, INT_MAX, &shape->k, err,
                              err_size);
    case OPT_SHAPES:
      if (value[0] == '\0')
        return usage_error(err, err_size, "%s needs a path", spec->name);
      opts->shapes_path = value;
      return PGC_EXIT_OK;
    case OPT_STAGES: return parse_stage_list(value, opts, err, err_size);
    case OPT_WARMUP:
      return parse_int_option(spec->name, value, 0, PGC_MAX_REPEATS,
                              &opts->warmup, err, err_size);
    case OPT_ITERS:
      return parse_int_option(spec->name, value, 1, PGC_MAX_REPEATS,
                              &opts->iters, err, err_size);
    case OPT_ROUNDS:
      return parse_int_option(spec->name, value, 1, PGC_MAX_ROUNDS, &opts->rounds, err,
                              err_size);
    case OPT_FLUSH_L2:
      return parse_on_off(spec->name, value, &opts->flush_l2, err, err_size);
    case OPT_SEED: return parse_seed(value, &opts->seed, err, err_size);
    case OPT_INPUTS:
      for (int i = 0; pgc_inputs_name(i) != NULL; ++i)
        if (strcmp(value, pgc_inputs_name(i)) == 0) {
          opts->inputs = i;
          return PGC_EXIT_OK;
        }
      return usage_error(err, err_size, "--inputs expects uniform, wide or tiny, got '%s'",
                         quoted(value).text);
    case OPT_FORMAT: return parse_format(value, &opts->format, err, err_size);
    case OPT_CHECK:
      return parse_on_off(spec->name, value, &opts->check, err, err_size);
    case OPT_DEVICE:
      return parse_int_option(spec->name, value, 0, INT_MAX, &opts->device,
                              err, err_size);
    case OPT_QUIET: opts->quiet = 1; return PGC_EXIT_OK;
    case OPT_PROFILE: opts->profile = 1; return PGC_EXIT_OK;
    case OPT_NCU:
    case OPT_RAW:
      if (value[0] == '\0')
        return usage_error(err, err_size, "%s needs a path", spec->name);
      if (spec->id == OPT_NCU)
        opts->ncu_path = value;
      else
        opts->raw_path = value;
      return PGC_EXIT_OK;
    case OPT_BINARY:
      if (value[0] == '\0')
        return usage_error(err, err_size, "%s needs a path", spec->name);
      opts->inspect_binary = value;
      return PGC_EXIT_OK;
    case OPT_INSPECT_CHECK: opts->inspect_check = 1; return PGC_EXIT_OK;
    case OPT_SWAP: return parse_swap(value, opts, err, err_size);
    case OPT_BLOCKS:
      return parse_int_option(spec->name, value, 1, PG_TRACE_MAX_BLOCKS, &opts->trace_blocks,
                              err, err_size);
    case OPT_OUT:
      if (value[0] == '\0')
        return usage_error(err, err_size, "%s needs a path", spec->name);
      opts->out_path = value;
      return PGC_EXIT_OK;
  }
  return usage_error(err, err_size, "internal error: unhandled option %s",
                     spec->name);
}

/* A variant named with --variant must allow every count in --stages,
 * unless it has one fixed count (then --stages does not apply to it). */
static int check_explicit_stages(const pgc_options *opts, char *err,
                                 size_t err_size) {
  if (opts->all_variants) return PGC_EXIT_OK;
  for (int v = 0; v < opts->variant_count; ++v) {
    const pg_variant_info *variant = opts->variants[v];
    if (variant->min_stages == variant->max_stages) continue;
    for (int s = 0; s < opts->stage_count; ++s) {
      int stages = opts->stages[s];
      if (stages < variant->min_stages || stages > variant->max_stages)
        return usage_error(err, err_size,
                           "%s allows stage counts %d-%d, --stages asked for %d",
                           variant->name, variant->min_stages,
                           variant->max_stages, stages);
    }
  }
  return PGC_EXIT_OK;
}

/* trace: one variant with a traced kernel, at most one stage count in its
 * range, a file to write, and a problem with something to compute. */
static int check_trace_options(const pgc_options *opts, char *err, size_t err_size) {
  if (opts->all_variants)
    return usage_error(err, err_size, "trace takes one variant: --variant NAME");
  if (opts->variant_count != 1)
    return usage_error(err, err_size, "trace takes one variant, --variant named %d",
                       opts->variant_count);
  const pg_variant_info *variant = opts->variants[0];
  if (!pg_variant_traced(variant)) {
    usage_error(err, err_size, "%s has no traced kernel (trace takes: ", variant->name);
    append_traced(err, err_size);
    append(err, err_size, ")");
    return PGC_EXIT_USAGE;
  }
  if (opts->stage_count > 1)
    return usage_error(err, err_size, "trace takes one stage count, --stages gave %d",
                       opts->stage_count);
  if (opts->stage_count == 1 &&
      (opts->stages[0] < variant->min_stages || opts->stages[0] > variant->max_stages))
    return usage_error(err, err_size, "%s allows stage counts %d-%d, --stages asked for %d",
                       variant->name, variant->min_stages, variant->max_stages, opts->stages[0]);
  if (opts->out_path == NULL)
    return usage_error(err, err_size, "trace needs --out FILE, the JSON file to write");
  if (opts->m == 0 || opts->n == 0)
    return usage_error(err, err_size, "trace needs M and N of at least 1 (%dx%d: no kernel runs)",
                       opts->m, opts->n);
  return PGC_EXIT_OK;
}

/* A word that is no option: only `study` takes one, the experiment. */
static int parse_experiment(const char *arg, pgc_options *opts, char *err,
                            size_t err_size) {
  if (opts->command != PGC_CMD_STUDY || opts->study != PGC_STUDY_NONE)
    return usage_error(err, err_size, "unexpected argument '%s' for %s", quoted(arg).text,
                       command_display(opts->command));
  for (int s = 0; s < STUDY_COUNT; ++s)
    if (strcmp(arg, study_table[s].name) == 0) opts->study = study_table[s].study;
  if (opts->study != PGC_STUDY_NONE) return PGC_EXIT_OK;
  usage_error(err, err_size, "unknown experiment '%s' (known: ", quoted(arg).text);
  for (int s = 0; s < STUDY_COUNT; ++s)
    append(err, err_size, "%s%s", s ? ", " : "", study_table[s].name);
  append(err, err_size, ")");
  return PGC_EXIT_USAGE;
}

/* `study` needs an experiment, which must take every option given. */
static int check_study_options(const pgc_options *opts, const option_spec *const *given,
                               int given_count, char *err, size_t err_size) {
  if (opts->study == PGC_STUDY_NONE) {
    usage_error(err, err_size, "study needs an experiment: ");
    for (int s = 0; s < STUDY_COUNT; ++s)
      append(err, err_size, "%s%s", s ? ", " : "", study_table[s].name);
    return PGC_EXIT_USAGE;
  }
  for (int g = 0; g < given_count; ++g)
    if (!(given[g]->studies & (1u << opts->study)))
      return usage_error(err, err_size, "%s is not an option of 'study %s'",
                         given[g]->name, pgc_study_name(opts->study));
  if (!opts->profile && (opts->ncu_path || opts->raw_path))
    return usage_error(err, err_size, "%s needs --profile",
                       opts->ncu_path ? "--ncu" : "--raw");
  return PGC_EXIT_OK;
}

/* M, N and K from --size and --m/--n/--k (single-warp: 32 x 32 x K), and
 * the stage counts of the variants named. */
static int settle_shape(pgc_options *opts, const shape_request *shape, char *err,
                        size_t err_size) {
  if (opts->command == PGC_CMD_STUDY && opts->study == PGC_STUDY_SINGLE_WARP) {
    opts->m = opts->n = PG_SINGLE_WARP_DIM;
    opts->k = shape->k >= 0 ? shape->k : PGC_SINGLE_WARP_DEFAULT_K;
    if (opts->k > PGC_SINGLE_WARP_MAX_K)
      return usage_error(err, err_size,
                         "--k %d is too large for study single-warp (at most "
                         "%d: one warp does all the work)",
                         opts->k, PGC_SINGLE_WARP_MAX_K);
    return PGC_EXIT_OK;
  }
  /* The file gives every shape: a dimension given beside it would be
   * ignored, which is worse than refused. */
  if (opts->shapes_path) {
    const char *also = shape->size_given ? "--size"
                       : shape->m >= 0   ? "--m"
                       : shape->n >= 0   ? "--n"
                       : shape->k >= 0   ? "--k"
                                         : NULL;
    if (also)
      return usage_error(err, err_size,
                         "--shapes and %s exclude each other: the file gives "
                         "every shape", also);
  }
  opts->m = shape->m >= 0 ? shape->m : shape->size;
  opts->n = shape->n >= 0 ? shape->n : shape->size;
  opts->k = shape->k >= 0 ? shape->k : shape->size;
  if (opts->command == PGC_CMD_BENCH || opts->command == PGC_CMD_PROFILE)
    return check_explicit_stages(opts, err, err_size);
  if (opts->command == PGC_CMD_TRACE) return check_trace_options(opts, err, err_size);
  return PGC_EXIT_OK;
}

static int parse_command_args(int argc, char **argv, int first,
                              pgc_options *opts, char *err, size_t err_size) {
  unsigned command_bit = 1u << opts->command;
  shape_request shape = {opts->command == PGC_CMD_STUDY
                             ? PGC_STUDY_DEFAULT_SIZE
                         : opts->command == PGC_CMD_PROFILE
                             ? PGC_PROFILE_DEFAULT_SIZE
                             : PGC_BENCH_DEFAULT_SIZE,
                         0, -1, -1, -1};
  /* The options given, in order, each once: a study's experiment may come
   * after its options, so whether it takes them is checked at the end. */
  const option_spec *given[OPTION_COUNT];
  int given_count = 0;
  if (opts->command == PGC_CMD_TRACE) {
    opts->warmup = PGC_TRACE_DEFAULT_WARMUP;
    opts->iters = PGC_TRACE_DEFAULT_ITERS;
  }
  for (int i = first; i < argc; ++i) {
    const char *arg = argv[i];
    if (strcmp(arg, "-h") == 0) arg = "--help";
    if (arg[0] == '-' && arg[1] != '\0' && arg[1] != '-')
      return usage_error(err, err_size, "unknown option '%s'", quoted(arg).text);
    if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
      int rc = parse_experiment(arg, opts, err, err_size);
      if (rc != PGC_EXIT_OK) return rc;
      continue;
    }
    const char *equals = strchr(arg, '=');
    size_t name_len = equals ? (size_t)(equals - arg) : strlen(arg);
    const option_spec *spec = find_option(arg, name_len, command_bit);
    if (!spec)
      return usage_error(err, err_size, "unknown option '%s'",
                         quoted_part(arg, name_len).text);
    if (!(spec->commands & command_bit))
      return usage_error(err, err_size, "%s is not an option of %s",
                         spec->name, command_display(opts->command));
    if (spec->id == OPT_HELP && !equals) {
      opts->help_topic = opts->command;
      opts->command = PGC_CMD_HELP;
      return PGC_EXIT_OK;
    }
    if (spec->id == OPT_VERSION && !equals) {
      if (i + 1 < argc)
        return usage_error(err, err_size, "unexpected argument '%s' after %s",
                           quoted(argv[i + 1]).text, spec->name);
      opts->command = PGC_CMD_VERSION;
      return PGC_EXIT_OK;
    }
    const char *value = NULL;
    if (!spec->takes_value) {
      if (equals)
        return usage_error(err, err_size, "%s takes no value", spec->name);
    } else if (equals) {
      value = equals + 1;
    } else {
      /* "--size --m 5": the next word is another option, not a value. */
      if (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0)
        return usage_error(err, err_size, "%s needs a value", spec->name);
      value = argv[++i];
    }
    int rc = apply_option(spec, value, opts, &shape, err, err_size);
    if (rc != PGC_EXIT_OK) return rc;
    int seen = 0;
    for (int g = 0; g < given_count; ++g) seen |= given[g] == spec;
    if (!seen) given[given_count++] = spec;
  }
  if (opts->command == PGC_CMD_NONE)
    return usage_error(err, err_size, "no command given");
  if (opts->command == PGC_CMD_STUDY) {
    int rc = check_study_options(opts, given, given_count, err, err_size);
    if (rc != PGC_EXIT_OK) return rc;
  }
  return settle_shape(opts, &shape, err, err_size);
}

const char *pgc_command_name(pgc_command command) {
  for (int i = 0; i < COMMAND_COUNT; ++i)
    if (command_table[i].command == command) return command_table[i].name;
  return NULL;
}

int pgc_parse_args(int argc, char **argv, pgc_options *opts, char *err,
                   size_t err_size) {
  if (err && err_size > 0) err[0] = '\0';
  set_defaults(opts, argc, argv);
  if (argc < 2 || !argv[1])
    return usage_error(err, err_size, "no command given");
  const char *word = argv[1];
  if (word[0] == '-') /* options of the tool itself: --help, --version */
    return parse_command_args(argc, argv, 1, opts, err, err_size);
  for (int i = 0; i < COMMAND_COUNT; ++i) {
    if (strcmp(word, command_table[i].name) == 0) {
      opts->command = command_table[i].command;
      return parse_command_args(argc, argv, 2, opts, err, err_size);
    }
  }
  usage_error(err, err_size, "unknown command '%s' (commands: ", quoted(word).text);
  for (int i = 0; i < COMMAND_COUNT; ++i)
    append(err, err_size, "%s%s", i ? ", " : "", command_table[i].name);
  append(err, err_size, ")");
  return PGC_EXIT_USAGE;
}

/* ---- the plan of runs ----------------------------------------------------- */

static int expand_variant(const pgc_options *opts, const pg_variant_info *variant,
                        pgc_run_spec *runs, int capacity, int count) {
  if (variant->min_stages == variant->max_stages || opts->stage_count == 0) {
    int stages = variant->min_stages == variant->max_stages
                     ? variant->min_stages
                     : variant->default_stages;
    if (count < capacity) runs[count] = (pgc_run_spec){variant, stages};
    return count + 1;
  }
  for (int s = 0; s < opts->stage_count; ++s) {
    int stages = opts->stages[s];
    if (stages < variant->min_stages || stages > variant->max_stages) continue;
    if (count < capacity) runs[count] = (pgc_run_spec){variant, stages};
    ++count;
  }
  return count;
}

int pgc_expand_runs(const pgc_options *opts, pgc_run_spec *runs, int capacity) {
  int count = 0;
  if (opts->all_variants) {
    for (int i = 0; i < pg_variant_count(); ++i) {
      const pg_variant_info *variant = pg_variant_at(i);
      if (variant) count = expand_variant(opts, variant, runs, capacity, count);
    }
  } else {
    for (int i = 0; i < opts->variant_count; ++i)
      count = expand_variant(opts, opts->variants[i], runs, capacity, count);
  }
  return count;
}

void pgc_command_line_text(const pgc_options *opts, char *buf, size_t size) {
  size_t used = 0;
  if (size == 0) return;
  buf[0] = '\0';
  for (int i = 0; i < opts->argc; ++i) {
    /* argv[0] may be a path; the report names the tool. */
    const char *word = i == 0 ? "pipegemm" : opts->argv[i];
    size_t gap = i ? 1 : 0;
    size_t need = pgc_shell_quote(NULL, 0, word, PGC_QUOTE_IF_NEEDED);
    if (used + gap + need >= size) break; /* whole words only */
    if (gap) buf[used++] = ' ';
    used += pgc_shell_quote(buf + used, size - used, word, PGC_QUOTE_IF_NEEDED);
  }
}

void pgc_header_for(pgc_header *header, const pgc_session *session, const pgc_options *opts) {
  char command[PGC_COMMAND_LINE_SIZE];
  pgc_command_line_text(opts, command, sizeof command);
  pgc_header_build(header, session, command);
}
