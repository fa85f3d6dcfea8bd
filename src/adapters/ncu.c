/* The metric table of `pipegemm profile`, the ncu command line and the
 * parser of ncu's raw CSV page (see ncu.h). */
#include "ncu.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

#define PERCENT 100.0
#define MS_PER_SECOND 1e3
#define BYTES_PER_KB 1e3
#define BYTES_PER_GB 1e9
#define WARP_THREADS 32.0

/* ---- the metric table ------------------------------------------------------
 *
 * The rows of the write-up's "Key Metric Comparison" tables, in its order,
 * with two of ours: dynamic shared memory (the cp.async kernels here size
 * their buffers at launch, so "static" alone would read 0) and shared bank
 * conflicts. Names are Nsight Compute's (Kernel Profiling Guide, metrics
 * reference; and the sections named in `section`, which ncu is told to
 * collect). They exist on sm_80 and sm_90; where ncu renamed one (DRAM
 * throughput) or a derived metric may be missing, a later way computes the
 * same quantity from its parts:
 *   excessive wavefronts or sectors = total - ideal (what ncu's
 *   UncoalescedSharedAccess / UncoalescedGlobalAccess rules report),
 *   their ratio = excessive / total,
 *   warp cycles per issued instruction = active warps / issued warps, per
 *   scheduler and cycle. */
#define WAY1(op, a, b) {{op, a, b}, {PGC_NCU_NONE, NULL, NULL}, {PGC_NCU_NONE, NULL, NULL}}
#define WAY2(op1, a1, b1, op2, a2, b2) {{op1, a1, b1}, {op2, a2, b2}, {PGC_NCU_NONE, NULL, NULL}}
#define VALUE(a) WAY1(PGC_NCU_VALUE, a, NULL)

#define STALL(reason) \
  VALUE("smsp__average_warps_issue_stalled_" reason "_per_issue_active.ratio")

const pgc_ncu_metric pgc_ncu_metrics[] = {
    {"duration_ms", "Kernel Duration", "ms", "SpeedOfLight", PGC_NCU_SCALE_MS, 3,
     VALUE("gpu__time_duration.sum")},
    {"sm_throughput_pct", "Compute (SM) Throughput", "%", "SpeedOfLight",
     PGC_NCU_SCALE_NONE, 2,
     VALUE("sm__throughput.avg.pct_of_peak_sustained_elapsed")},
    {"memory_throughput_pct", "Memory Throughput", "%", "SpeedOfLight",
     PGC_NCU_SCALE_NONE, 2,
     VALUE("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")},
    {"dram_throughput_pct", "DRAM Throughput", "%", "SpeedOfLight",
     PGC_NCU_SCALE_NONE, 2,
     WAY2(PGC_NCU_VALUE, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", NULL,
          PGC_NCU_VALUE, "dram__throughput.avg.pct_of_peak_sustained_elapsed", NULL)},
    {"dram_bandwidth_gbps", "DRAM Bandwidth", "GB/s", "MemoryWorkloadAnalysis",
     PGC_NCU_SCALE_GBPS, 2,
     WAY2(PGC_NCU_VALUE, "dram__bytes.sum.per_second", NULL,
          PGC_NCU_RATIO, "dram__bytes.sum", "gpu__time_duration.sum")},
    {"l1tex_throughput_pct", "L1/TEX Cache Throughput", "%", "SpeedOfLight",
     PGC_NCU_SCALE_NONE, 2,
     VALUE("l1tex__throughput.avg.pct_of_peak_sustained_active")},
    {"l2_throughput_pct", "L2 Cache Throughput", "%", "SpeedOfLight",
     PGC_NCU_SCALE_NONE, 2,
     VALUE("lts__throughput.avg.pct_of_peak_sustained_elapsed")},
    {"issued_warps_per_scheduler", "Issued Warp / Scheduler", "warps",
     "SchedulerStats", PGC_NCU_SCALE_NONE, 2,
     VALUE("smsp__issue_active.avg.per_cycle_active")},
    {"eligible_warps_per_scheduler", "Eligible Warps / Scheduler", "warps",
     "SchedulerStats", PGC_NCU_SCALE_NONE, 2,
     VALUE("smsp__warps_eligible.avg.per_cycle_active")},
    {"warp_cycles_per_issued_inst", "Warp Cycles / Issued Instruction",
     "cycles", "WarpStateStats", PGC_NCU_SCALE_NONE, 2,
     WAY2(PGC_NCU_VALUE, "smsp__average_warp_latency_per_inst_issued.ratio", NULL,
          PGC_NCU_RATIO, "smsp__warps_active.avg.per_cycle_active",
          "smsp__issue_active.avg.per_cycle_active")},
    {"registers_per_thread", "Registers / Thread", "", "LaunchStats",
     PGC_NCU_SCALE_NONE, 0, VALUE("launch__registers_per_thread")},
    {"static_smem_kb", "Static Shared Memory / Block", "KB", "LaunchStats",
     PGC_NCU_SCALE_KB, 2, VALUE("launch__shared_mem_per_block_static")},
    {"dynamic_smem_kb", "Dynamic Shared Memory / Block", "KB", "LaunchStats",
     PGC_NCU_SCALE_KB, 2, VALUE("launch__shared_mem_per_block_dynamic")},
    {"achieved_occupancy_pct", "Achieved Occupancy", "%", "Occupancy",
     PGC_NCU_SCALE_NONE, 2,
     VALUE("sm__warps_active.avg.pct_of_peak_sustained_active")},
    {"l1tex_hit_rate_pct", "L1/TEX Hit Rate", "%", "MemoryWorkloadAnalysis",
     PGC_NCU_SCALE_NONE, 2, VALUE("l1tex__t_sector_hit_rate.pct")},
    {"stall_wait", "Stall Wait", "cycles/inst", "WarpStateStats",
     PGC_NCU_SCALE_NONE, 2, STALL("wait")},
    {"stall_long_scoreboard", "Stall Long Scoreboard", "cycles/inst",
     "WarpStateStats", PGC_NCU_SCALE_NONE, 2, STALL("long_scoreboard")},
    {"stall_barrier", "Stall Barrier", "cycles/inst", "WarpStateStats",
     PGC_NCU_SCALE_NONE, 2, STALL("barrier")},
    /* What separates two kernels that both issue an instruction nearly
     * every cycle (an FP32 GEMM's FFMA loop): how often an instruction
     * issues, how much of what issues is FFMA, how busy the FMA pipe is,
     * and why a warp that was ready did not issue. Asked for by name: no
     * section holds all of them on every ncu. The FFMA share counts
     * threads' FFMAs in whole warps (/32): it reads low where lanes are
     * predicated off. */
    {"issued_ipc", "Issued IPC Active", "inst/cycle", NULL, PGC_NCU_SCALE_NONE, 2,
     VALUE("sm__inst_issued.avg.per_cycle_active")},
    {"ffma_share_pct", "FFMA Share of Warp Instructions", "%", NULL, PGC_NCU_SCALE_PER_WARP,
     2,
     WAY1(PGC_NCU_PERCENT, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
          "smsp__inst_executed.sum")},
    {"fma_pipe_pct", "FMA Pipe Utilization", "%", NULL, PGC_NCU_SCALE_NONE, 2,
     VALUE("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active")},
    {"stall_dispatch", "Stall Dispatch", "cycles/inst", NULL, PGC_NCU_SCALE_NONE, 2,
     STALL("dispatch_stall")},
    {"stall_short_scoreboard", "Stall Short Scoreboard", "cycles/inst", NULL,
     PGC_NCU_SCALE_NONE, 2, STALL("short_scoreboard")},
    {"stall_mio_throttle", "Stall MIO Throttle", "cycles/inst", NULL, PGC_NCU_SCALE_NONE, 2,
     STALL("mio_throttle")},
    {"stall_not_selected", "Stall Not Selected", "cycles/inst", NULL, PGC_NCU_SCALE_NONE, 2,
     STALL("not_selected")},
    {"stall_no_instruction", "Stall No Instruction", "cycles/inst", NULL, PGC_NCU_SCALE_NONE,
     2, STALL("no_instruction")},
    {"shared_wavefronts_per_request", "Shared Load Wavefronts / Request", "", NULL,
     PGC_NCU_SCALE_NONE, 2,
     WAY1(PGC_NCU_RATIO, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
          "smsp__inst_executed_op_shared_ld.sum")},
    {"shared_excessive_wavefronts", "L1 Wavefronts Shared Excessive", "",
     "SourceCounters", PGC_NCU_SCALE_NONE, 0,
     WAY2(PGC_NCU_VALUE, "derived__memory_l1_wavefronts_shared_excessive", NULL,
          PGC_NCU_DIFF, "memory_l1_wavefronts_shared",
          "memory_l1_wavefronts_shared_ideal")},
    {"shared_excessive_pct", "Uncoalesced Shared Access Ratio", "%",
     "SourceCounters", PGC_NCU_SCALE_NONE, 0,
     WAY2(PGC_NCU_PERCENT, "derived__memory_l1_wavefronts_shared_excessive",
          "memory_l1_wavefronts_shared",
          PGC_NCU_PERCENT_EXCESS, "memory_l1_wavefronts_shared",
          "memory_l1_wavefronts_shared_ideal")},
    {"shared_bank_conflicts", "Shared Bank Conflicts", "",
     "MemoryWorkloadAnalysis_Tables", PGC_NCU_SCALE_NONE, 0,
     WAY2(PGC_NCU_VALUE, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", NULL,
          PGC_NCU_SUM, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
          "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")},
    {"global_excessive_pct", "Global Excessive Sectors Ratio", "%",
     "SourceCounters", PGC_NCU_SCALE_NONE, 0,
     WAY2(PGC_NCU_PERCENT, "derived__memory_l2_theoretical_sectors_global_excessive",
          "memory_l2_theoretical_sectors_global",
          PGC_NCU_PERCENT_EXCESS, "memory_l2_theoretical_sectors_global",
          "memory_l2_theoretical_sectors_global_ideal")},
};
const int pgc_ncu_metric_count =
    (int)(sizeof pgc_ncu_metrics / sizeof pgc_ncu_metrics[0]);
_Static_assert(sizeof pgc_ncu_metrics / sizeof pgc_ncu_metrics[0] <=
                   PGC_NCU_MAX_METRICS,
               "raise PGC_NCU_MAX_METRICS for the metric table");

int pgc_ncu_metric_index(const char *key) {
  for (int i = 0; key && i < pgc_ncu_metric_count; ++i)
    if (strcmp(pgc_ncu_metrics[i].key, key) == 0) return i;
  return -1;
}

int pgc_ncu_sections(const char **sections, int capacity) {
  int count = 0;
  for (int i = 0; i < pgc_ncu_metric_count; ++i) {
    const char *section = pgc_ncu_metrics[i].section;
    if (section == NULL) continue; /* asked for by name */
    int seen = 0;
    for (int j = 0; j < i; ++j)
      if (pgc_ncu_metrics[j].section && strcmp(pgc_ncu_metrics[j].section, section) == 0)
        seen = 1;
    if (seen) continue;
    if (count < capacity) sections[count] = section;
    ++count;
  }
  return count;
}

/* Appends `name` to the comma-separated list in buf unless it is there. */
static int append_metric_name(char *buf, size_t size, const char *name) {
  if (name == NULL) return 0;
  const size_t len = strlen(name);
  for (const char *p = strstr(buf, name); p; p = strstr(p + 1, name))
    if ((p == buf || p[-1] == ',') && (p[len] == ',' || p[len] == '\0')) return 0;
  const size_t used = strlen(buf);
  if (used + (used ? 1 : 0) + len + 1 > size) return -1;
  if (used) strcat(buf, ",");
  strcat(buf, name);
  return 0;
}

int pgc_ncu_named_metrics(char *buf, size_t size) {
  if (size == 0) return -1;
  buf[0] = '\0';
  for (int i = 0; i < pgc_ncu_metric_count; ++i) {
    const pgc_ncu_metric *metric = &pgc_ncu_metrics[i];
    if (metric->section != NULL) continue;
    if (append_metric_name(buf, size, metric->ways[0].a) != 0 ||
        append_metric_name(buf, size, metric->ways[0].b) != 0)
      return -1;
  }
  return 0;
}

/* ---- numbers and units ----------------------------------------------------- */

int pgc_ncu_parse_number(const char *text, double *value) {
  char digits[128];
  size_t used = 0;
  const char *p = text;
  while (*p == ' ' || *p == '\t') ++p;
  for (; *p; ++p) {
    if (*p == ',') continue; /* thousands separator */
    if (used + 1 >= sizeof digits) return -1;
    digits[used++] = *p;
  }
  while (used > 0 && (digits[used - 1] == ' ' || digits[used - 1] == '\t'))
    --used;
  digits[used] = '\0';
  if (used == 0) return -1;
  /* Only what strtod reads as a plain decimal: no "nan", "inf" or hex. */
  for (size_t i = 0; i < used; ++i)
    if (!strchr("0123456789.+-eE", digits[i])) return -1;
  char *end = NULL;
  errno = 0;
  double parsed = strtod(digits, &end);
  if (end == digits || *end != '\0' || errno == ERANGE) return -1;
  *value = parsed;
  return 0;
}

/* The factor of one side of a unit ("msecond", "Kbyte", "inst"; "ns", "us",
 * "ms": with --print-units base ncu 2025 writes durations as "ns"). */
static double unit_side_factor(const char *unit, size_t len) {
  static const char *const scaled[] = {
      "second", "s",      "byte",      "cycle",  "inst",  "warp", "sector",
      "request", "wavefront", "thread", "block", "hz",  "bit"};
  static const struct {
    char prefix;
    double factor;
  } prefixes[] = {{'n', 1e-9}, {'u', 1e-6}, {'m', 1e-3}, {'K', 1e3},
                  {'M', 1e6},  {'G', 1e9},  {'T', 1e12}};
  if (len < 2) return 1.0;
  for (size_t p = 0; p < sizeof prefixes / sizeof prefixes[0]; ++p) {
    if (unit[0] != prefixes[p].prefix) continue;
    for (size_t s = 0; s < sizeof scaled / sizeof scaled[0]; ++s)
      if (strlen(scaled[s]) == len - 1 && strncmp(unit + 1, scaled[s], len - 1) == 0)
        return prefixes[p].factor;
  }
  return 1.0;
}

double pgc_ncu_unit_factor(const char *unit) {
  if (!unit) return 1.0;
  const char *slash = strchr(unit, '/');
  if (!slash) return unit_side_factor(unit, strlen(unit));
  double numerator = unit_side_factor(unit, (size_t)(slash - unit));
  double denominator = unit_side_factor(slash + 1, strlen(slash + 1));
  return numerator / denominator;
}

/* ---- CSV --------------------------------------------------------------------- */

int pgc_ncu_split_csv(const char *line, size_t len, char *buf, size_t size,
                      char **fields, int capacity) {
  size_t out = 0;
  int count = 0;
  size_t i = 0;
  if (size == 0) return -1;
  for (;;) {
    /* One field starts at i and is copied to buf + out. */
    char *start = buf + out;
    int quoted = 0;
    if (i < len && line[i] == '"') {
      quoted = 1;
      ++i;
    }
    for (; i < len; ++i) {
      char c = line[i];
      if (quoted) {
        if (c == '"') {
          if (i + 1 < len && line[i + 1] == '"') {
            ++i; /* a doubled quote is one quote */
          } else {
            quoted = 0;
            continue;
          }
        }
      } else if (c == ',') {
        break;
      }
      if (out + 1 >= size) return -1;
      buf[out++] = c;
    }
    if (out + 1 > size) return -1;
    buf[out++] = '\0';
    if (count < capacity) fields[count] = start;
    ++count;
    if (i >= len) return count;
    ++i; /* the comma */
  }
}

/* ---- the raw page ------------------------------------------------------------ */

/* A line of text: [start, start + len), without its line break. */
typedef struct {
  const char *start;
  size_t len;
} text_line;

static int next_line(const char **cursor, text_line *line) {
  const char *p = *cursor;
  if (*p == '\0') return 0;
  const char *end = strchr(p, '\n');
  size_t len = end ? (size_t)(end - p) : strlen(p);
  *cursor = end ? end + 1 : p + len;
  if (len > 0 && p[len - 1] == '\r') --len;
  line->start = p;
  line->len = len;
  return 1;
}

/* A split CSV line with its own storage. */
typedef struct {
  char *buf;
  char **fields;
  int count;
} csv_record;

static void record_free(csv_record *record) {
  free(record->buf);
  free(record->fields);
  record->buf = NULL;
  record->fields = NULL;
  record->count = 0;
}

/* 0 ok, -2 out of memory. */
static int record_split(const text_line *line, csv_record *record) {
  memset(record, 0, sizeof *record);
  /* Every field takes at most its bytes plus a NUL; there are at most
   * len + 1 fields. */
  size_t size = line->len + 2;
  int capacity = (int)(line->len + 1);
  record->buf = malloc(size);
  record->fields = malloc((size_t)capacity * sizeof *record->fields);
  if (!record->buf || !record->fields) {
    record_free(record);
    return -2;
  }
  record->count = pgc_ncu_split_csv(line->start, line->len, record->buf, size,
                                    record->fields, capacity);
  if (record->count < 0 || record->count > capacity) {
    record_free(record);
    return -2;
  }
  return 0;
}

static int is_integer_text(const char *text) {
  if (!*text) return 0;
  for (const char *p = text; *p; ++p)
    if (*p < '0' || *p > '9') return 0;
  return 1;
}

static char *copy_text(const char *text) {
  size_t len = strlen(text);
  char *copy = malloc(len + 1);
  if (copy) memcpy(copy, text, len + 1);
  return copy;
}

void pgc_ncu_result_free(pgc_ncu_result *result) {
  if (!result) return;
  for (int i = 0; i < result->count && result->fields; ++i) {
    free(result->fields[i].name);
    free(result->fields[i].unit);
    free(result->fields[i].text);
  }
  free(result->fields);
  result->fields = NULL;
  result->count = 0;
}

/* The result of a header, its units (may be NULL) and one data row. */
static int build_result(const csv_record *header, const csv_record *units,
                        const csv_record *data, pgc_ncu_result *result) {
  result->count = 0;
  result->fields = calloc((size_t)header->count, sizeof *result->fields);
  if (!result->fields) return -2;
  for (int i = 0; i < header->count; ++i) {
    pgc_ncu_field *field = &result->fields[i];
    const char *unit = units ? units->fields[i] : "";
    field->name = copy_text(header->fields[i]);
    field->unit = copy_text(unit);
    field->text = copy_text(data->fields[i]);
    result->count = i + 1;
    if (!field->name || !field->unit || !field->text) {
      pgc_ncu_result_free(result);
      return -2;
    }
    double value = 0;
    field->has_value = pgc_ncu_parse_number(field->text, &value) == 0;
    field->value = field->has_value ? value * pgc_ncu_unit_factor(unit) : NAN;
  }
  return 0;
}

int pgc_ncu_parse_raw(const char *text, pgc_ncu_result *result) {
  memset(result, 0, sizeof *result);
  if (!text) return -1;
  csv_record header = {0}, units = {0};
  int have_header = 0, have_units = 0;
  const char *cursor = text;
  text_line line;
  int rc = -1;
  while (rc == -1 && next_line(&cursor, &line)) {
    /* Cheap filter: a CSV row of ncu starts with a quote or a digit, the
     * header with "ID" or ID. */
    char first = line.len ? line.start[0] : '\0';
    if (first != '"' && !(first >= '0' && first <= '9') && first != 'I' &&
        first != ',')
      continue;
    csv_record record;
    if (record_split(&line, &record) != 0) {
      rc = -2;
      break;
    }
    if (record.count >= 2 && strcmp(record.fields[0], "ID") == 0) {
      record_free(&header);
      record_free(&units);
      header = record;
      have_header = 1;
      have_units = 0;
      continue;
    }
    if (have_header && record.count == header.count) {
      if (!have_units && record.fields[0][0] == '\0') {
        units = record;
        have_units = 1;
        continue;
      }
      if (is_integer_text(record.fields[0])) {
        rc = build_result(&header, have_units ? &units : NULL, &record, result);
        record_free(&record);
        break;
      }
    }
    record_free(&record);
  }
  record_free(&header);
  record_free(&units);
  return rc;
}

const pgc_ncu_field *pgc_ncu_find(const pgc_ncu_result *result,
                                  const char *name) {
  if (!result || !name) return NULL;
  for (int i = 0; i < result->count; ++i)
    if (strcmp(result->fields[i].name, name) == 0) return &result->fields[i];
  return NULL;
}

static int lookup(const pgc_ncu_result *result, const char *name,
                  double *value) {
  const pgc_ncu_field *field = pgc_ncu_find(result, name);
  if (!field || !field->has_value) return -1;
  *value = field->value;
  return 0;
}

/* One way; NaN when an input is missing or the result is undefined. */
static double apply_formula(const pgc_ncu_formula *way,
                            const pgc_ncu_result *result) {
  double a = 0, b = 0;
  if (lookup(result, way->a, &a) != 0) return NAN;
  if (way->op != PGC_NCU_VALUE && lookup(result, way->b, &b) != 0) return NAN;
  switch (way->op) {
    case PGC_NCU_VALUE: return a;
    case PGC_NCU_SUM: return a + b;
    case PGC_NCU_DIFF: return a - b;
    case PGC_NCU_RATIO: return b != 0 ? a / b : NAN;
    case PGC_NCU_PERCENT: return b != 0 ? PERCENT * a / b : NAN;
    case PGC_NCU_PERCENT_EXCESS: return a != 0 ? PERCENT * (a - b) / a : NAN;
    case PGC_NCU_NONE: break;
  }
  return NAN;
}

static double apply_scale(pgc_ncu_scale scale, double value) {
  switch (scale) {
    case PGC_NCU_SCALE_MS: return value * MS_PER_SECOND;
    case PGC_NCU_SCALE_KB: return value / BYTES_PER_KB;
    case PGC_NCU_SCALE_GBPS: return value / BYTES_PER_GB;
    case PGC_NCU_SCALE_PER_WARP: return value / WARP_THREADS;
    case PGC_NCU_SCALE_NONE: break;
  }
  return value;
}

double pgc_ncu_derive(const pgc_ncu_metric *metric,
                      const pgc_ncu_result *result, int *way_used) {
  if (way_used) *way_used = -1;
  for (int w = 0; w < PGC_NCU_MAX_WAYS && metric->ways[w].op != PGC_NCU_NONE;
       ++w) {
    double value = apply_formula(&metric->ways[w], result);
    if (isfinite(value)) {
      if (way_used) *way_used = w;
      return apply_scale(metric->scale, value);
    }
  }
  return NAN;
}

/* ---- the command line ------------------------------------------------------ */

int pgc_ncu_kernel_filter(const char *kernel, int attempt, const char **name_base,
                          char *regex, size_t size) {
  int count = kernel == NULL ? 2 : 1;
  if (attempt < 0 || attempt >= count || size == 0) return 0;
  int written;
  /* Each pattern matches the whole name as well as a part of it, so it
   * means the same whether ncu searches or matches. */
  if (count == 1) {
    /* The function name, without parameters (or template arguments). */
    *name_base = "function";
    written = snprintf(regex, size, "regex:.*%s.*", kernel);
  } else if (attempt == 0) {
    *name_base = "demangled";
    written = snprintf(regex, size, "regex:.*([Gg][Ee][Mm][Mm]|nvjet).*");
  } else {
    /* The only kernels of ours in a cublas run are the harness's (pgh_:
     * filling A and B, sampling the clock). */
    *name_base = "function";
    written = snprintf(regex, size, "regex:^(?!pgh?_).*");
  }
  if (written < 0 || (size_t)written >= size) return 0;
  return count;
}

/* Appends words until the first that does not fit. */
static int append_words(char *buf, size_t size, const char *const *words,
                        int count) {
  for (int i = 0; i < count; ++i)
    if (pgc_shell_append(buf, size, words[i]) != 0) return -1;
  return 0;
}

#define NUMBER_WORD_SIZE 24
#define MAX_SECTIONS 16
#define REGEX_SIZE 128
#define NAMED_METRICS_SIZE 1024

int pgc_ncu_command(const pgc_ncu_job *job, char *buf, size_t size) {
  if (size == 0) return -1;
  buf[0] = '\0';
  const char *name_base = NULL;
  char regex[REGEX_SIZE];
  if (pgc_ncu_kernel_filter(job->kernel, job->attempt, &name_base, regex,
                            sizeof regex) == 0)
    return -1;
  /* Counters at the GPU's own clocks, as the timings were taken (ncu locks
   * them to base otherwise). */
  const char *head[] = {job->ncu, "--clock-control", "none", "--csv", "--page",
                        "raw"};
  if (append_words(buf, size, head, (int)(sizeof head / sizeof head[0])) != 0)
    return -1;
  if (job->full_set) {
    /* Every section ncu has; units as ncu scales them (the parser reads
     * them), in case the option below is what it refused. */
    const char *words[] = {"--set", "full"};
    if (append_words(buf, size, words, 2) != 0) return -1;
  } else {
    /* Numbers in base units, so no row is scaled differently from the
     * next; only the sections the table needs. */
    const char *words[] = {"--print-units", "base"};
    if (append_words(buf, size, words, 2) != 0) return -1;
    const char *sections[MAX_SECTIONS];
    int section_count = pgc_ncu_sections(sections, MAX_SECTIONS);
    if (section_count > MAX_SECTIONS) return -1;
    for (int i = 0; i < section_count; ++i) {
      const char *section[] = {"--section", sections[i]};
      if (append_words(buf, size, section, 2) != 0) return -1;
    }
  }
  char named[NAMED_METRICS_SIZE];
  if (pgc_ncu_named_metrics(named, sizeof named) != 0) return -1;
  if (named[0] != '\0' && job->full_set != PGC_NCU_FULL_SET_UNNAMED) {
    const char *words[] = {"--metrics", named};
    if (append_words(buf, size, words, 2) != 0) return -1;
  }
  const char *filter[] = {"--kernel-name-base", name_base, "--kernel-name",
                          regex, "--launch-count", "1"};
  if (append_words(buf, size, filter, (int)(sizeof filter / sizeof filter[0])) != 0)
    return -1;
  /* The profiled program: one untimed-quality launch of the kernel, with
   * nothing else of ours around it that the filter could catch. */
  char stages[NUMBER_WORD_SIZE], m[NUMBER_WORD_SIZE], n[NUMBER_WORD_SIZE],
      k[NUMBER_WORD_SIZE], device[NUMBER_WORD_SIZE];
  snprintf(stages, sizeof stages, "%d", job->stages);
  snprintf(m, sizeof m, "%d", job->m);
  snprintf(n, sizeof n, "%d", job->n);
  snprintf(k, sizeof k, "%d", job->k);
  snprintf(device, sizeof device, "%d", job->device);
  const char *program[] = {job->self,   "bench",      "--variant", job->variant,
                           "--stages",  stages,       "--m",       m,
                           "--n",       n,            "--k",       k,
                           "--device",  device,       "--warmup",  "0",
                           "--iters",   "1",          "--check",   "off",
                           "--flush-l2", "off",       "--format",  "csv",
                           "--quiet"};
  if (append_words(buf, size, program,
                   (int)(sizeof program / sizeof program[0])) != 0)
    return -1;
  /* ncu's own messages (==PROF==, ==ERROR==) go to stderr in some versions:
   * one stream, so an error is seen next to the output it explains. */
  static const char join[] = " 2>&1";
  if (strlen(buf) + sizeof join > size) return -1;
  strcat(buf, join);
  return 0;
}
