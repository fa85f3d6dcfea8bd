/* Parsing cuobjdump's text, the SASS census, blocks per SM and the mechanism
 * check of `pipegemm inspect` (see sass.h). */
#include "sass.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Opcodes first seen in sm_90 code: each appeared when a probe kernel using
 * mbarrier.try_wait, mbarrier.arrive.expect_tx, cp.async.bulk,
 * cp.async.bulk.tensor, elect.sync, fence.proxy.async, barrier.cluster,
 * setmaxnreg and wgmma was compiled for sm_90/sm_90a with nvcc 13.0, and ptxas rejects each
 * of those PTX instructions for sm_80 ("requires .target sm_90 or higher"). */
const char *const pgc_hopper_only_opcodes[] = {
    "SYNCS",     /* mbarrier try_wait, arrive, expect_tx */
    "UBLKCP",    /* cp.async.bulk */
    "UTMALDG",   /* cp.async.bulk.tensor, global -> shared */
    "UTMASTG",   /* cp.async.bulk.tensor, shared -> global */
    "UTMAPF",    /* cp.async.bulk.prefetch.tensor */
    "UTMACMDFLUSH",
    "ELECT",     /* elect.sync */
    "FENCE.VIEW.ASYNC", /* fence.proxy.async */
    "UCGABAR_ARV", /* barrier.cluster.arrive */
    "UCGABAR_WAIT",
    "CGAERRBAR",
    "HGMMA",     /* wgmma (sm_90a) */
    "WARPGROUP", /* wgmma.fence / commit / wait */
    "USETMAXREG", /* setmaxnreg (sm_90a) */
    NULL,
};

/* ---- opcodes ---------------------------------------------------------------- */

static const char *const family_names[PGC_OP_FAMILY_COUNT] = {
    "LDG",     "STS",    "LDS",     "LDGSTS", "LDGDEPBAR", "DEPBAR",
    "BAR.SYNC", "BAR other", "SYNCS", "ARRIVES", "TMA",      "bulk",
    "FFMA",    "LDL",    "STL",     "other",
};

const char *pgc_op_family_name(pgc_op_family family) {
  return (int)family >= 0 && family < PGC_OP_FAMILY_COUNT ? family_names[family] : "?";
}

int pgc_width_bits(pgc_width width) {
  static const int bits[PGC_WIDTH_COUNT] = {16, 32, 64, 128};
  return (int)width >= 0 && width < PGC_WIDTH_COUNT ? bits[width] : 0;
}

/* The `index`-th dot-separated part of `opcode` ("LDG.E.128": 0 "LDG",
 * 2 "128"), copied into part; 0 if there are fewer parts. */
static int opcode_part(const char *opcode, int index, char *part, size_t size) {
  const char *start = opcode;
  for (int i = 0; i < index; ++i) {
    start = strchr(start, '.');
    if (!start) return 0;
    ++start;
  }
  size_t len = strcspn(start, ".");
  if (len >= size) len = size - 1;
  memcpy(part, start, len);
  part[len] = '\0';
  return 1;
}

static int has_modifier(const char *opcode, const char *modifier) {
  char part[PGC_OPCODE_SIZE];
  for (int i = 1; opcode_part(opcode, i, part, sizeof part); ++i)
    if (strcmp(part, modifier) == 0) return 1;
  return 0;
}

int pgc_opcode_matches(const char *opcode, const char *pattern) {
  char want[PGC_OPCODE_SIZE], have[PGC_OPCODE_SIZE];
  if (!opcode || !pattern || !opcode_part(pattern, 0, want, sizeof want) ||
      !opcode_part(opcode, 0, have, sizeof have) || strcmp(want, have) != 0)
    return 0;
  for (int i = 1; opcode_part(pattern, i, want, sizeof want); ++i)
    if (!has_modifier(opcode, want)) return 0;
  return 1;
}

pgc_op_family pgc_op_family_of(const char *opcode) {
  char name[PGC_OPCODE_SIZE], second[PGC_OPCODE_SIZE];
  if (!opcode_part(opcode, 0, name, sizeof name)) return PGC_OP_OTHER;
  static const struct {
    const char *name;
    pgc_op_family family;
  } exact[] = {
      {"LDG", PGC_OP_LDG},         {"STS", PGC_OP_STS},
      {"LDS", PGC_OP_LDS},         {"LDGSTS", PGC_OP_LDGSTS},
      {"LDGDEPBAR", PGC_OP_LDGDEPBAR}, {"DEPBAR", PGC_OP_DEPBAR},
      {"SYNCS", PGC_OP_SYNCS},     {"ARRIVES", PGC_OP_ARRIVES},
      {"FFMA", PGC_OP_FFMA},       {"LDL", PGC_OP_LDL},
      {"STL", PGC_OP_STL},
  };
  for (size_t i = 0; i < sizeof exact / sizeof exact[0]; ++i)
    if (strcmp(name, exact[i].name) == 0) return exact[i].family;
  if (strcmp(name, "BAR") == 0)
    return opcode_part(opcode, 1, second, sizeof second) &&
                   strcmp(second, "SYNC") == 0
               ? PGC_OP_BAR_SYNC
               : PGC_OP_BAR_OTHER;
  if (strncmp(name, "UTMA", 4) == 0) return PGC_OP_TMA;
  if (strncmp(name, "UBLK", 4) == 0) return PGC_OP_BULK;
  return PGC_OP_OTHER;
}

pgc_width pgc_op_width_of(const char *opcode) {
  static const char *const narrow[] = {"U8", "S8", "U16", "S16"};
  for (size_t i = 0; i < sizeof narrow / sizeof narrow[0]; ++i)
    if (has_modifier(opcode, narrow[i])) return PGC_WIDTH_NARROW;
  if (has_modifier(opcode, "128")) return PGC_WIDTH_128;
  if (has_modifier(opcode, "64")) return PGC_WIDTH_64;
  return PGC_WIDTH_32;
}

/* ---- the dump ----------------------------------------------------------------- */

void pgc_dump_init(pgc_dump *dump) {
  memset(dump, 0, sizeof *dump);
  dump->sass_kernel = -1;
  dump->resource_kernel = -1;
}

void pgc_dump_free(pgc_dump *dump) {
  for (int i = 0; i < dump->count; ++i) free(dump->kernels[i].opcodes);
  free(dump->kernels);
  pgc_dump_init(dump);
}

static void copy_text(char *dst, size_t size, const char *src, size_t len) {
  if (len >= size) len = size - 1;
  memcpy(dst, src, len);
  dst[len] = '\0';
}

static const char *skip_space(const char *p) {
  while (*p == ' ' || *p == '\t') ++p;
  return p;
}

/* Length of `p` without trailing blanks, CR or LF. */
static size_t trimmed_length(const char *p) {
  size_t len = strlen(p);
  while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t' ||
                     p[len - 1] == '\r' || p[len - 1] == '\n'))
    --len;
  return len;
}

/* "sm_90a" -> 90; 0 for anything else. */
static int sm_of(const char *arch) {
  if (strncmp(arch, "sm_", 3) != 0 || !isdigit((unsigned char)arch[3])) return 0;
  return atoi(arch + 3);
}

/* "arch = sm_90" (-res-usage and -sass headers) or "code for sm_90" (-sass):
 * the architecture of the code that follows. */
static int read_arch_line(pgc_dump *dump, const char *line) {
  const char *p = skip_space(line);
  const char *arch = NULL;
  if (strncmp(p, "arch = ", 7) == 0)
    arch = p + 7;
  else if (strncmp(p, "code for ", 9) == 0)
    arch = p + 9;
  if (!arch) return 0;
  arch = skip_space(arch);
  copy_text(dump->arch, sizeof dump->arch, arch, strcspn(arch, " \t\r\n"));
  dump->sm = sm_of(dump->arch);
  dump->sass_kernel = -1;
  dump->resource_kernel = -1;
  int known = 0;
  for (int i = 0; i < dump->arch_count; ++i)
    known |= strcmp(dump->archs[i], dump->arch) == 0;
  if (!known && dump->arch_count < PGC_MAX_ARCHS && dump->sm > 0)
    copy_text(dump->archs[dump->arch_count++], PGC_ARCH_NAME_SIZE, dump->arch,
              strlen(dump->arch));
  return 1;
}

static int find_index(const pgc_dump *dump, const char *arch, const char *symbol) {
  for (int i = 0; i < dump->count; ++i)
    if (strcmp(dump->kernels[i].arch, arch) == 0 &&
        strcmp(dump->kernels[i].name, symbol) == 0)
      return i;
  return -1;
}

/* The record of `symbol` (len bytes) in the current architecture, made if
 * it is new; -1 when host memory ran out. */
static int kernel_index(pgc_dump *dump, const char *symbol, size_t len) {
  char name[PGC_KERNEL_NAME_SIZE];
  copy_text(name, sizeof name, symbol, len);
  int index = find_index(dump, dump->arch, name);
  if (index >= 0) return index;
  if (dump->count == dump->capacity) {
    int capacity = dump->capacity ? 2 * dump->capacity : 32;
    pgc_kernel_record *grown =
        realloc(dump->kernels, (size_t)capacity * sizeof *grown);
    if (!grown) return -1;
    dump->kernels = grown;
    dump->capacity = capacity;
  }
  pgc_kernel_record *kernel = &dump->kernels[dump->count];
  memset(kernel, 0, sizeof *kernel);
  copy_text(kernel->arch, sizeof kernel->arch, dump->arch, strlen(dump->arch));
  kernel->sm = dump->sm;
  copy_text(kernel->name, sizeof kernel->name, name, strlen(name));
  return dump->count++;
}

/* "REG:128 STACK:0 SHARED:9216 LOCAL:0 CONSTANT[0]:632 ...": the value of
 * `key`, or -1. */
static long resource_value(const char *line, const char *key) {
  size_t len = strlen(key);
  for (const char *p = line; (p = strstr(p, key)) != NULL; p += len) {
    int starts = p == line || p[-1] == ' ' || p[-1] == '\t';
    if (starts && p[len] == ':' && isdigit((unsigned char)p[len + 1]))
      return strtol(p + len + 1, NULL, 10);
  }
  return -1;
}

int pgc_dump_res_usage_line(pgc_dump *dump, const char *line) {
  if (read_arch_line(dump, line)) return 0;
  const char *p = skip_space(line);
  if (strncmp(p, "Function ", 9) == 0) {
    const char *symbol = skip_space(p + 9);
    size_t len = trimmed_length(symbol);
    if (len > 0 && symbol[len - 1] == ':') --len;
    if (len == 0) return 0;
    int index = kernel_index(dump, symbol, len);
    if (index < 0) return -1;
    /* A kernel seen twice keeps its first description. */
    dump->resource_kernel = dump->kernels[index].has_resources ? -1 : index;
    return 0;
  }
  if (dump->resource_kernel >= 0 && strncmp(p, "REG:", 4) == 0) {
    pgc_kernel_record *kernel = &dump->kernels[dump->resource_kernel];
    kernel->has_resources = 1;
    kernel->registers = (int)resource_value(p, "REG");
    kernel->stack_bytes = resource_value(p, "STACK");
    kernel->shared_bytes = resource_value(p, "SHARED");
    kernel->local_bytes = resource_value(p, "LOCAL");
    dump->resource_kernel = -1;
  }
  return 0;
}

static int count_opcode(pgc_kernel_record *kernel, const char *opcode) {
  for (int i = 0; i < kernel->opcode_count; ++i) {
    if (strcmp(kernel->opcodes[i].opcode, opcode) == 0) {
      ++kernel->opcodes[i].count;
      return 0;
    }
  }
  if (kernel->opcode_count == kernel->opcode_capacity) {
    int capacity = kernel->opcode_capacity ? 2 * kernel->opcode_capacity : 64;
    pgc_opcode_count *grown =
        realloc(kernel->opcodes, (size_t)capacity * sizeof *grown);
    if (!grown) return -1;
    kernel->opcodes = grown;
    kernel->opcode_capacity = capacity;
  }
  pgc_opcode_count *entry = &kernel->opcodes[kernel->opcode_count++];
  copy_text(entry->opcode, sizeof entry->opcode, opcode, strlen(opcode));
  entry->count = 1;
  return 0;
}

/* An instruction line is an address in a comment, an optional predicate,
 * the opcode and its operands:
 *         / *0c40* /   @!P0 LDGSTS.E [R3], [R4.64] ;   / * 0x...* /
 * (without the spaces inside the comment marks). Returns the opcode's start
 * (and its length in *len) or NULL; *never is set when the predicate is @!PT,
 * which never executes (the compiler pads with such instructions). The
 * second line of each instruction holds only the rest of its encoding in a
 * comment, "/ * 0x000fe40000015200 * /", and is not an instruction line. */
static const char *instruction_opcode(const char *line, size_t *len, int *never) {
  const char *p = skip_space(line);
  if (p[0] != '/' || p[1] != '*') return NULL;
  p += 2;
  const char *digits = p;
  while (isxdigit((unsigned char)*p)) ++p;
  if (p == digits || p[0] != '*' || p[1] != '/') return NULL;
  p = skip_space(p + 2);
  if (*p == '{') p = skip_space(p + 1); /* dual issue on older architectures */
  *never = 0;
  if (*p == '@') {
    size_t predicate = strcspn(p, " \t");
    *never = predicate == 4 && strncmp(p, "@!PT", 4) == 0;
    p = skip_space(p + predicate);
  }
  size_t n = 0;
  while (isupper((unsigned char)p[n]) || isdigit((unsigned char)p[n]) ||
         p[n] == '_' || p[n] == '.')
    ++n;
  if (n == 0 || !isupper((unsigned char)p[0])) return NULL;
  *len = n;
  return p;
}

int pgc_dump_sass_line(pgc_dump *dump, const char *line) {
  if (read_arch_line(dump, line)) return 0;
  const char *p = skip_space(line);
  if (strncmp(p, "Function : ", 11) == 0) {
    const char *symbol = skip_space(p + 11);
    size_t len = trimmed_length(symbol);
    if (len == 0) return 0;
    int index = kernel_index(dump, symbol, len);
    if (index < 0) return -1;
    pgc_kernel_record *kernel = &dump->kernels[index];
    /* A kernel seen twice keeps its first census. */
    dump->sass_kernel = kernel->has_sass ? -1 : index;
    kernel->has_sass = 1;
    return 0;
  }
  if (dump->sass_kernel < 0) return 0;
  size_t len = 0;
  int never = 0;
  const char *start = instruction_opcode(line, &len, &never);
  if (!start || never) return 0;
  char opcode[PGC_OPCODE_SIZE];
  copy_text(opcode, sizeof opcode, start, len);
  pgc_kernel_record *kernel = &dump->kernels[dump->sass_kernel];
  pgc_op_family family = pgc_op_family_of(opcode);
  ++kernel->family[family];
  if ((int)family < PGC_OP_WIDE_FAMILIES)
    ++kernel->width[family][pgc_op_width_of(opcode)];
  ++kernel->instructions;
  return count_opcode(kernel, opcode);
}

/* Feeds each line of `text` to `feed`. */
static int feed_text(pgc_dump *dump, const char *text,
                     int (*feed)(pgc_dump *, const char *)) {
  char line[1024];
  while (*text) {
    size_t len = strcspn(text, "\n");
    copy_text(line, sizeof line, text, len);
    if (feed(dump, line) != 0) return -1;
    text += len;
    if (*text == '\n') ++text;
  }
  return 0;
}

int pgc_dump_res_usage_text(pgc_dump *dump, const char *text) {
  return feed_text(dump, text, pgc_dump_res_usage_line);
}

int pgc_dump_sass_text(pgc_dump *dump, const char *text) {
  return feed_text(dump, text, pgc_dump_sass_line);
}

const pgc_kernel_record *pgc_dump_find(const pgc_dump *dump, const char *arch,
                                       const char *symbol) {
  int index = find_index(dump, arch, symbol);
  return index >= 0 ? &dump->kernels[index] : NULL;
}

unsigned long pgc_kernel_count(const pgc_kernel_record *kernel,
                               const char *pattern) {
  unsigned long count = 0;
  for (int i = 0; i < kernel->opcode_count; ++i)
    if (pgc_opcode_matches(kernel->opcodes[i].opcode, pattern))
      count += kernel->opcodes[i].count;
  return count;
}

/* ---- names -------------------------------------------------------------------- */

/* A buffer that silently stops at its end (the caller sized it). */
typedef struct {
  char *buf;
  size_t size, len;
} text_out;

static void put(text_out *out, const char *text, size_t len) {
  if (out->size == 0) return;
  size_t room = out->size - 1 - out->len;
  if (len > room) len = room;
  memcpy(out->buf + out->len, text, len);
  out->len += len;
  out->buf[out->len] = '\0';
}

/* "<decimal>" at *p: its value in *value, the position after it returned. */
static const char *read_decimal(const char *p, unsigned long *value) {
  if (!isdigit((unsigned char)*p)) return NULL;
  char *end = NULL;
  *value = strtoul(p, &end, 10);
  return end;
}

/* Itanium C++ ABI, the part nvcc's kernels use here: _Z <length> <name>
 * [I (L <type> [n] <digits> E)+ E] <parameter types>. */
void pgc_kernel_display_name(const char *symbol, char *buf, size_t size) {
  text_out out = {buf, size, 0};
  if (size > 0) buf[0] = '\0';
  unsigned long length = 0;
  const char *p = strncmp(symbol, "_Z", 2) == 0 ? read_decimal(symbol + 2, &length) : NULL;
  if (!p || length == 0 || strlen(p) < length) {
    put(&out, symbol, strlen(symbol));
    return;
  }
  put(&out, p, length);
  p += length;
  if (*p != 'I') return;
  ++p;
  put(&out, "<", 1);
  for (int first = 1; *p != 'E'; first = 0) {
    /* An integer literal: L, one letter for its type, n for minus, digits, E. */
    unsigned long value = 0;
    const char *end = NULL;
    if (p[0] == 'L' && islower((unsigned char)p[1])) {
      const char *digits = p + 2 + (p[2] == 'n');
      end = read_decimal(digits, &value);
    }
    if (!first) put(&out, ", ", 2);
    if (!end || *end != 'E') {
      put(&out, "...", 3);
      break;
    }
    char number[32];
    int n = snprintf(number, sizeof number, "%s%lu", p[2] == 'n' ? "-" : "", value);
    put(&out, number, n > 0 ? (size_t)n : 0);
    p = end + 1;
  }
  put(&out, ">", 1);
}

int pgc_kernel_has_stem(const char *display, const char *stem) {
  size_t len = strlen(stem);
  return len > 0 && strncmp(display, stem, len) == 0 &&
         (display[len] == '\0' || display[len] == '<');
}

long pgc_kernel_template_arg(const char *display) {
  const char *open = strchr(display, '<');
  if (!open) return -1;
  char *end = NULL;
  long value = strtol(open + 1, &end, 10);
  return end != open + 1 && (*end == '>' || *end == ',') ? value : -1;
}

/* ---- blocks per SM ------------------------------------------------------------- */

#define KIB 1024L

/* The CUDA C++ Programming Guide's table of compute capabilities, and what
 * the runtime reports on an A100 (8.0) and an H100/H200 (9.0). */
static const pgc_arch_limits arch_limits[] = {
    {80, 65536, 4, 256, 255, 2048, 1024, 32, 164 * KIB, 163 * KIB, KIB, 128, 0},
    {90, 65536, 4, 256, 255, 2048, 1024, 32, 228 * KIB, 227 * KIB, KIB, 128, 1},
};

const pgc_arch_limits *pgc_arch_limits_of(int sm) {
  for (size_t i = 0; i < sizeof arch_limits / sizeof arch_limits[0]; ++i)
    if (arch_limits[i].sm == sm) return &arch_limits[i];
  return NULL;
}

long pgc_static_smem_bytes(const pgc_arch_limits *limits, long cubin_shared) {
  if (limits && limits->shared_counts_reserved &&
      cubin_shared >= limits->smem_reserved_per_block)
    return cubin_shared - limits->smem_reserved_per_block;
  return cubin_shared;
}

static long round_up(long value, long unit) {
  return unit > 0 ? (value + unit - 1) / unit * unit : value;
}

int pgc_blocks_per_sm(const pgc_arch_limits *limits, int threads, int registers,
                      long smem_bytes, unsigned *limiters) {
  enum { WARP = 32 };
  unsigned mask = 0;
  if (!limits || threads <= 0 || registers < 0 || smem_bytes < 0) {
    if (limiters) *limiters = 0;
    return 0;
  }
  const long warps_per_block = (threads + WARP - 1) / WARP;

  /* Registers: each scheduler partition holds whole warps. */
  long by_registers = limits->max_blocks_per_sm;
  if (registers > limits->max_regs_per_thread) {
    by_registers = 0;
  } else if (registers > 0) {
    long per_warp = round_up((long)registers * WARP, limits->reg_alloc_unit);
    long per_partition = limits->regs_per_sm / limits->reg_partitions;
    long warps = per_partition / per_warp * limits->reg_partitions;
    by_registers = warps / warps_per_block;
  }

  long footprint = round_up(smem_bytes + limits->smem_reserved_per_block,
                            limits->smem_alloc_unit);
  long by_smem = smem_bytes > limits->smem_per_block_max
                     ? 0
                     : limits->smem_per_sm / footprint;

  long by_threads = threads > limits->max_threads_per_block
                        ? 0
                        : limits->max_threads_per_sm / (warps_per_block * WARP);
  long by_blocks = limits->max_blocks_per_sm;

  long blocks = by_registers;
  if (by_smem < blocks) blocks = by_smem;
  if (by_threads < blocks) blocks = by_threads;
  if (by_blocks < blocks) blocks = by_blocks;
  if (by_registers == blocks) mask |= PGC_LIMIT_REGISTERS;
  if (by_smem == blocks) mask |= PGC_LIMIT_SMEM;
  if (by_threads == blocks) mask |= PGC_LIMIT_THREADS;
  if (by_blocks == blocks) mask |= PGC_LIMIT_BLOCKS;
  if (limiters) *limiters = mask;
  return (int)blocks;
}

void pgc_limiters_text(unsigned limiters, char *buf, size_t size) {
  static const struct {
    unsigned bit;
    const char *name;
  } names[] = {
      {PGC_LIMIT_REGISTERS, "registers"},
      {PGC_LIMIT_SMEM, "shared memory"},
      {PGC_LIMIT_THREADS, "threads"},
      {PGC_LIMIT_BLOCKS, "blocks"},
  };
  text_out out = {buf, size, 0};
  if (size > 0) buf[0] = '\0';
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    if (!(limiters & names[i].bit)) continue;
    if (out.len > 0) put(&out, ", ", 2);
    put(&out, names[i].name, strlen(names[i].name));
  }
}

/* ---- the check ------------------------------------------------------------------ */

static int rule_applies(const pg_sass_rule *rule, int sm) {
  return (rule->min_sm == 0 || sm >= rule->min_sm) &&
         (rule->max_sm == 0 || sm <= rule->max_sm);
}

int pgc_check_kernel(const pgc_kernel_record *kernel, const pg_sass_rule *rules,
                     int rule_count, pgc_violation *out, int capacity) {
  enum { HOPPER_SM = 90 };
  int found = 0;
  for (int i = 0; i < rule_count; ++i) {
    const pg_sass_rule *rule = &rules[i];
    if (!rule->opcode || !rule_applies(rule, kernel->sm)) continue;
    unsigned long count = pgc_kernel_count(kernel, rule->opcode);
    if ((count > 0) == (rule->must_appear != 0)) continue;
    if (found < capacity)
      out[found] = (pgc_violation){rule->opcode, rule->must_appear, count,
                                   rule->meaning};
    ++found;
  }
  if (kernel->sm > 0 && kernel->sm < HOPPER_SM) {
    for (int i = 0; pgc_hopper_only_opcodes[i]; ++i) {
      unsigned long count = pgc_kernel_count(kernel, pgc_hopper_only_opcodes[i]);
      if (count == 0) continue;
      if (found < capacity)
        out[found] = (pgc_violation){pgc_hopper_only_opcodes[i], 0, count,
                                     "a Hopper-only instruction in code for an "
                                     "earlier architecture"};
      ++found;
    }
  }
  return found;
}

void pgc_violation_line(const char *variant, const pgc_kernel_record *kernel,
                        const pgc_violation *violation, char *buf, size_t size) {
  char display[PGC_KERNEL_NAME_SIZE];
  pgc_kernel_display_name(kernel->name, display, sizeof display);
  if (violation->must_appear)
    snprintf(buf, size, "inspect: %s (%s, %s): %s missing \xe2\x80\x94 %s", variant,
             kernel->arch, display, violation->opcode, violation->meaning);
  else
    snprintf(buf, size, "inspect: %s (%s, %s): %s present (%lu) \xe2\x80\x94 %s",
             variant, kernel->arch, display, violation->opcode, violation->count,
             violation->meaning);
}
