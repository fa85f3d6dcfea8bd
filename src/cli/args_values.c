/* The values of pipegemm's options, read and refused: numbers, on/off, the
 * format, seeds, stage lists, variant names and --swap; and the helpers
 * that write a usage message, with argument text escaped so that it stays
 * one printable line (pgc_escape_text). */
#include "args_internal.h"
#include "introspect.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Longest variant name we compare; anything longer is unknown anyway. */
#define VARIANT_NAME_MAX 64

const char *pgc_format_name(pgc_format format) {
  switch (format) {
    case PGC_FORMAT_CSV: return "csv";
    case PGC_FORMAT_JSON: return "json";
    default: return "table";
  }
}

/* Writes a message into the caller's buffer; returns PGC_EXIT_USAGE so that
 * `return args_usage_error(...)` reads as what it does. */
int args_usage_error(char *err, size_t err_size, const char *fmt, ...) {
  if (err && err_size > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
  }
  return PGC_EXIT_USAGE;
}

/* Appends to a message already in err, truncating at the buffer's end. */
void args_append(char *err, size_t err_size, const char *fmt, ...) {
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

/* For a message's arguments: `args_quoted(value).text` lives until the end of
 * the call it is written in. */
args_quoted_text args_quoted_part(const char *text, size_t len) {
  args_quoted_text q;
  pgc_escape_text(q.text, sizeof q.text, text, len);
  return q;
}

args_quoted_text args_quoted(const char *text) { return args_quoted_part(text, strlen(text)); }

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
int args_parse_int_option(const char *option, const char *text, int min,
                            int max, int *value, char *err, size_t err_size) {
  uint64_t parsed = 0;
  int rc = parse_digits(text, strlen(text), (uint64_t)max, &parsed);
  if (rc == -1)
    return args_usage_error(err, err_size,
                            "%s expects a non-negative integer, got '%s'", option,
                            args_quoted(text).text);
  if (rc == -2)
    return args_usage_error(err, err_size, "%s %s is too large (at most %d)",
                            option, args_quoted(text).text, max);
  if ((int)parsed < min)
    return args_usage_error(err, err_size, "%s must be at least %d, got %s", option,
                            min, args_quoted(text).text);
  *value = (int)parsed;
  return PGC_EXIT_OK;
}

int args_parse_on_off(const char *option, const char *text, int *flag,
                        char *err, size_t err_size) {
  if (strcmp(text, "on") == 0) {
    *flag = 1;
    return PGC_EXIT_OK;
  }
  if (strcmp(text, "off") == 0) {
    *flag = 0;
    return PGC_EXIT_OK;
  }
  return args_usage_error(err, err_size, "%s expects on or off, got '%s'", option,
                          args_quoted(text).text);
}

int args_parse_format(const char *text, pgc_format *format, char *err,
                        size_t err_size) {
  static const pgc_format formats[] = {PGC_FORMAT_TABLE, PGC_FORMAT_CSV,
                                       PGC_FORMAT_JSON};
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; ++i) {
    if (strcmp(text, pgc_format_name(formats[i])) == 0) {
      *format = formats[i];
      return PGC_EXIT_OK;
    }
  }
  return args_usage_error(err, err_size,
                          "--format expects table, csv or json, got '%s'", args_quoted(text).text);
}

int args_parse_seed(const char *text, uint64_t *seed, char *err,
                      size_t err_size) {
  int rc = parse_digits(text, strlen(text), UINT64_MAX, seed);
  if (rc == -1)
    return args_usage_error(err, err_size,
                            "--seed expects a non-negative integer, got '%s'",
                            args_quoted(text).text);
  if (rc == -2)
    return args_usage_error(err, err_size,
                            "--seed %s is too large (at most 2^64-1)", args_quoted(text).text);
  return PGC_EXIT_OK;
}

int args_parse_stride(const char *option, const char *text, long long *value, char *err,
                      size_t err_size) {
  uint64_t parsed = 0;
  int rc = parse_digits(text, strlen(text), (uint64_t)LLONG_MAX, &parsed);
  if (rc == -1)
    return args_usage_error(err, err_size,
                            "%s expects a non-negative integer (floats), got '%s'", option,
                            args_quoted(text).text);
  if (rc == -2)
    return args_usage_error(err, err_size, "%s %s is too large (at most %lld)", option,
                            args_quoted(text).text, LLONG_MAX);
  *value = (long long)parsed;
  return PGC_EXIT_OK;
}

int args_parse_ops(const char *text, pgc_options *opts, char *err, size_t err_size) {
  int ops[PGC_OP_COUNT] = {0, 0, 0, 0};
  const int count = pgc_parse_op_list(text, strlen(text), ops);
  if (count == 0)
    return args_usage_error(err, err_size,
                            "--op expects NN, NT, TN or TT (op(A) then op(B)), or a "
                            "comma-separated list of them, got '%s'",
                            args_quoted(text).text);
  opts->layout.op_count = count;
  memcpy(opts->layout.ops, ops, sizeof ops);
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
    return args_usage_error(err, err_size,
                            "--stages: '%s' is not a stage count or a range A-B",
                            args_quoted_part(entry, len).text);
  /* A number of any length, up to the list's end: "99999999999" is a count
   * too large, not something else. */
  if (first_rc == -2 || last_rc == -2)
    return args_usage_error(err, err_size, "--stages: '%s' is too large (at most %d)",
                            first_rc == -2 ? args_quoted_part(entry, first_len).text
                                           : args_quoted_part(last_text, last_len).text,
                            most);
  if (first < 1 || last < 1)
    return args_usage_error(err, err_size,
                            "--stages: stage counts start at 1, got '%s'",
                            args_quoted_part(entry, len).text);
  if (first > last)
    return args_usage_error(err, err_size,
                            "--stages: range '%s' is reversed (write it low-high)",
                            args_quoted_part(entry, len).text);
  /* The registry bounds the counts above; this bounds what the array holds,
   * should a variant ever allow more, before a range is expanded. */
  if (last - first + 1 > PGC_MAX_STAGE_COUNTS)
    return args_usage_error(err, err_size,
                            "--stages: more than %d stage counts in '%s'",
                            PGC_MAX_STAGE_COUNTS, args_quoted(list).text);
  for (uint64_t value = first; value <= last; ++value) {
    if (has_stage(opts, (int)value)) continue;
    if (opts->stage_count == PGC_MAX_STAGE_COUNTS)
      return args_usage_error(err, err_size,
                              "--stages: more than %d stage counts in '%s'",
                              PGC_MAX_STAGE_COUNTS, args_quoted(list).text);
    opts->stages[opts->stage_count++] = (int)value;
  }
  return PGC_EXIT_OK;
}

int args_parse_stage_list(const char *list, pgc_options *opts, char *err,
                            size_t err_size) {
  opts->stage_count = 0;
  if (list[0] == '\0')
    return args_usage_error(err, err_size, "--stages needs at least one stage count");
  const char *entry = list;
  for (;;) {
    const char *comma = strchr(entry, ',');
    size_t len = comma ? (size_t)(comma - entry) : strlen(entry);
    if (len == 0)
      return args_usage_error(err, err_size, "--stages: empty entry in '%s'",
                              args_quoted(list).text);
    int rc = parse_stage_entry(entry, len, list, opts, err, err_size);
    if (rc != PGC_EXIT_OK) return rc;
    if (!comma) return PGC_EXIT_OK;
    entry = comma + 1;
  }
}

/* The variants with a traced kernel, the ones trace takes, after a message. */
void args_append_traced(char *err, size_t err_size) {
  int listed = 0;
  for (int i = 0; i < pg_variant_count(); ++i)
    if (pg_variant_traced(pg_variant_at(i)))
      args_append(err, err_size, "%s%s", listed++ ? ", " : "", pg_variant_at(i)->name);
}

/* What was asked for: the names that would do, as the option takes them
 * (trace only those it traces and one of them; all, only where a list of
 * names may be all). */
typedef enum { NAMES_OR_ALL, ONE_NAME, ONE_TRACED } name_choice;

static int unknown_variant(const char *name, size_t len, name_choice choice, char *err,
                           size_t err_size) {
  if (choice == ONE_TRACED) {
    args_usage_error(err, err_size, "unknown variant '%s' (trace takes: ",
                     args_quoted_part(name, len).text);
    args_append_traced(err, err_size);
    args_append(err, err_size, ")");
    return PGC_EXIT_USAGE;
  }
  args_usage_error(err, err_size, "unknown variant '%s' (valid: ",
                   args_quoted_part(name, len).text);
  for (int i = 0; i < pg_variant_count(); ++i) {
    const pg_variant_info *variant = pg_variant_at(i);
    if (variant) args_append(err, err_size, "%s%s", i ? ", " : "", variant->name);
  }
  args_append(err, err_size, choice == NAMES_OR_ALL ? "; or all)" : ")");
  return PGC_EXIT_USAGE;
}

/* trace runs one traced kernel: 'all' is refused where it is typed, with
 * the names it takes instead. */
static int trace_takes_one(char *err, size_t err_size) {
  args_usage_error(err, err_size, "trace takes one variant, not all (trace takes: ");
  args_append_traced(err, err_size);
  args_append(err, err_size, ")");
  return PGC_EXIT_USAGE;
}

int args_parse_variant_list(const char *list, pgc_options *opts, char *err,
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
    return args_usage_error(err, err_size, "--variant needs at least one name");
  const char *name = list;
  for (;;) {
    const char *comma = strchr(name, ',');
    size_t len = comma ? (size_t)(comma - name) : strlen(name);
    if (len == 0)
      return args_usage_error(err, err_size, "--variant: empty name in '%s'",
                              args_quoted(list).text);
    if (len == strlen("all") && strncmp(name, "all", len) == 0)
      return choice == ONE_TRACED
                 ? trace_takes_one(err, err_size)
                 : args_usage_error(err, err_size,
                                    "--variant: 'all' cannot be combined with names");
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
        return args_usage_error(err, err_size, "--variant: more than %d names",
                                PGC_MAX_VARIANTS);
      opts->variants[opts->variant_count++] = variant;
    }
    if (!comma) return PGC_EXIT_OK;
    name = comma + 1;
  }
}

/* --swap A=B: two registry names. */
int args_parse_swap(const char *value, pgc_options *opts, char *err,
                      size_t err_size) {
  const char *equals = strchr(value, '=');
  if (!equals || equals == value || equals[1] == '\0')
    return args_usage_error(err, err_size,
                            "--swap takes CLAIM=KERNELS, two variant names, got '%s'",
                            args_quoted(value).text);
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
