/* Shape sets: a text of "MxNxK [layout words]" lines into a list of GEMMs,
 * or one line that says which line of which file is wrong and why. */
#include "shapes.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

/* A bad line is quoted up to this many bytes, escaped (pgc_escape_text):
 * enough to find it, short enough for a binary file's one "line". */
#define QUOTE_MAX 48
/* The file's name in a message, escaped; a longer one is cut. */
#define NAME_SIZE (PGC_SHAPES_ERROR_SIZE / 4)
/* The first allocation of shapes; it doubles up to PGC_MAX_SHAPES. */
#define INITIAL_CAPACITY 16
#define BYTES_PER_KIB 1024

static int set_error(char *err, size_t err_size, int code, const char *fmt, ...) {
  if (err && err_size > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
  }
  return code;
}

/* Blanks around a shape and its parts; '\r' so that CRLF files read as
 * their LF twins. */
static int is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* A line's shape text: before its '#', without the blanks around it. */
typedef struct {
  const char *text;
  size_t len;
} span;

static span shape_text(const char *line, size_t len) {
  const char *hash = memchr(line, '#', len);
  if (hash) len = (size_t)(hash - line);
  while (len > 0 && is_blank(line[0])) ++line, --len;
  while (len > 0 && is_blank(line[len - 1])) --len;
  return (span){line, len};
}

/* A name as a message repeats it (a path as typed may hold any byte). */
typedef struct {
  char text[NAME_SIZE];
} escaped_name;

static escaped_name escaped(const char *name) {
  escaped_name e;
  pgc_escape_text(e.text, sizeof e.text, name, strlen(name));
  return e;
}

/* What one dimension of a shape is. */
typedef enum { DIM_OK, DIM_NOT_A_NUMBER, DIM_BELOW_1, DIM_ABOVE_INT_MAX } dim_status;

/* One dimension at text[*pos]: blanks, an optional '-' (so that "-4" is
 * told as out of range rather than as garbage), decimal digits. */
static dim_status parse_dimension(span text, size_t *pos, int *value) {
  size_t p = *pos;
  while (p < text.len && is_blank(text.text[p])) ++p;
  int negative = p < text.len && text.text[p] == '-';
  if (negative) ++p;
  size_t first = p;
  unsigned long long acc = 0;
  for (; p < text.len && text.text[p] >= '0' && text.text[p] <= '9'; ++p) {
    acc = acc * 10 + (unsigned)(text.text[p] - '0');
    if (acc > (unsigned long long)INT_MAX) acc = (unsigned long long)INT_MAX + 1;
  }
  if (p == first) return DIM_NOT_A_NUMBER;
  while (p < text.len && is_blank(text.text[p])) ++p;
  *pos = p;
  if (negative || acc < 1) return DIM_BELOW_1;
  if (acc > (unsigned long long)INT_MAX) return DIM_ABOVE_INT_MAX;
  *value = (int)acc;
  return DIM_OK;
}

/* A shape text into *shape, and where its layout words start (*words_at,
 * the text's end where there are none). Returns PGC_EXIT_OK, or
 * PGC_EXIT_USAGE with why it is not a shape in `why` (the caller adds file
 * and line). The shape must read as MxNxK, followed by the end or a blank,
 * before a dimension's range is judged: "0x4xabc" is not a shape at all. */
static int parse_shape(span text, pgc_shape *shape, size_t *words_at, char *why,
                       size_t why_size) {
  static const char names[3] = {'M', 'N', 'K'};
  int values[3] = {0, 0, 0};
  dim_status status[3];
  size_t pos = 0;
  int syntax_ok = 1;
  for (int d = 0; d < 3 && syntax_ok; ++d) {
    if (d > 0) {
      if (pos < text.len && (text.text[pos] == 'x' || text.text[pos] == 'X'))
        ++pos;
      else
        syntax_ok = 0;
    }
    if (syntax_ok) status[d] = parse_dimension(text, &pos, &values[d]);
    if (syntax_ok && status[d] == DIM_NOT_A_NUMBER) syntax_ok = 0;
  }
  /* Control bytes (a NUL, an escape) and what is not UTF-8 escaped, so
   * that the message stays one printable line. */
  char quoted[QUOTE_MAX + sizeof "..."];
  pgc_escape_text(quoted, sizeof quoted, text.text, text.len);
  /* Words start after a blank: "64x64x64NT" is no shape. */
  if (!syntax_ok || (pos != text.len && !is_blank(text.text[pos - 1])))
    return set_error(why, why_size, PGC_EXIT_USAGE, "'%s' is not MxNxK", quoted);
  *words_at = pos;
  for (int d = 0; d < 3; ++d) {
    if (status[d] == DIM_BELOW_1)
      return set_error(why, why_size, PGC_EXIT_USAGE,
                       "'%s': %c must be at least 1", quoted, names[d]);
    if (status[d] == DIM_ABOVE_INT_MAX)
      return set_error(why, why_size, PGC_EXIT_USAGE, "'%s': %c is above %d",
                       quoted, names[d], INT_MAX);
  }
  shape->m = values[0];
  shape->n = values[1];
  shape->k = values[2];
  return PGC_EXIT_OK;
}

const char *pgc_op_name(int op) {
  static const char *const names[PGC_OP_COUNT] = {"NN", "NT", "TN", "TT"};
  return op >= 0 && op < PGC_OP_COUNT ? names[op] : NULL;
}

int pgc_parse_op_list(const char *text, size_t len, int ops[PGC_OP_COUNT]) {
  int count = 0;
  size_t at = 0;
  for (;;) {
    /* One name: two letters, each N or T, then a comma or the end. */
    if (len - at < 2 || (text[at] != 'N' && text[at] != 'T') ||
        (text[at + 1] != 'N' && text[at + 1] != 'T'))
      return 0;
    const int op = 2 * (text[at] == 'T') + (text[at + 1] == 'T');
    int seen = 0;
    for (int i = 0; i < count; ++i) seen |= ops[i] == op;
    if (!seen) ops[count++] = op;
    at += 2;
    if (at == len) return count;
    if (text[at] != ',') return 0;
    ++at;
  }
}

/* Decimal digits of a key=value word, at most `max`; 0 or -1 (not a
 * number, or above max). */
static int parse_value(const char *text, size_t len, unsigned long long max,
                       unsigned long long *value) {
  if (len == 0) return -1;
  unsigned long long acc = 0;
  for (size_t i = 0; i < len; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    const unsigned digit = (unsigned)(text[i] - '0');
    if (acc > (max - digit) / 10) return -1;
    acc = acc * 10 + digit;
  }
  *value = acc;
  return 0;
}

/* What a line's layout words name: the ops (op_count 0: none), the batch
 * (0: none) and the strides (PGC_STRIDE_DENSE: none). */
typedef struct {
  int op_count;
  int ops[PGC_OP_COUNT];
  int batch;
  long long strides[3];
} line_words;

static const char *const stride_keys[3] = {"stride_a", "stride_b", "stride_c"};

/* The layout words of a line, from text.text[at] on. PGC_EXIT_OK, or
 * PGC_EXIT_USAGE with why (`quoted`, the line as the message repeats it). */
static int parse_words(span text, size_t at, const char *quoted, line_words *words, char *why,
                       size_t why_size) {
  words->op_count = 0;
  words->batch = 0;
  for (int i = 0; i < 3; ++i) words->strides[i] = PGC_STRIDE_DENSE;
  while (at < text.len) {
    while (at < text.len && is_blank(text.text[at])) ++at;
    size_t end = at;
    while (end < text.len && !is_blank(text.text[end])) ++end;
    if (end == at) break;
    const char *word = text.text + at;
    const size_t len = end - at;
    at = end;
    char shown[QUOTE_MAX + sizeof "..."];
    pgc_escape_text(shown, sizeof shown, word, len);
    const char *equals = memchr(word, '=', len);
    const size_t key_len = equals ? (size_t)(equals - word) : len;
    const char *value = equals ? equals + 1 : NULL;
    const size_t value_len = equals ? len - key_len - 1 : 0;
    unsigned long long number = 0;
    if (!equals) {
      int ops[PGC_OP_COUNT] = {0, 0, 0, 0};
      const int count = pgc_parse_op_list(word, len, ops);
      if (count > 0) {
        if (words->op_count > 0)
          return set_error(why, why_size, PGC_EXIT_USAGE, "'%s': the ops are named twice",
                           quoted);
        words->op_count = count;
        memcpy(words->ops, ops, sizeof ops);
        continue;
      }
    } else if (key_len == strlen("batch") && memcmp(word, "batch", key_len) == 0) {
      if (words->batch > 0)
        return set_error(why, why_size, PGC_EXIT_USAGE, "'%s': batch is named twice", quoted);
      if (parse_value(value, value_len, INT_MAX, &number) != 0 || number < 1)
        return set_error(why, why_size, PGC_EXIT_USAGE,
                         "'%s': %s: the batch is a count from 1 to %d", quoted, shown, INT_MAX);
      words->batch = (int)number;
      continue;
    } else {
      int which = -1;
      for (int i = 0; i < 3; ++i)
        if (key_len == strlen(stride_keys[i]) && memcmp(word, stride_keys[i], key_len) == 0)
          which = i;
      if (which >= 0) {
        if (words->strides[which] != PGC_STRIDE_DENSE)
          return set_error(why, why_size, PGC_EXIT_USAGE, "'%s': %s is named twice", quoted,
                           stride_keys[which]);
        if (parse_value(value, value_len, LLONG_MAX, &number) != 0)
          return set_error(why, why_size, PGC_EXIT_USAGE,
                           "'%s': %s: a stride is a count of floats from 0 to %lld", quoted,
                           shown, LLONG_MAX);
        words->strides[which] = (long long)number;
        continue;
      }
    }
    return set_error(why, why_size, PGC_EXIT_USAGE,
                     "'%s': '%s' is none of NN, NT, TN, TT (or a list of them), batch=N, "
                     "stride_a=S, stride_b=S, stride_c=S",
                     quoted, shown);
  }
  return PGC_EXIT_OK;
}

int pgc_layout_check(int m, int n, const pgc_layout *layout, const char *stride_c_name,
                     char *why, size_t why_size) {
  if (layout->batch <= 1 || layout->stride_c == PGC_STRIDE_DENSE || m <= 0 || n <= 0)
    return PGC_EXIT_OK;
  /* C is dense in its rows (ldc = N): a member spans M x N floats. */
  const long long extent = (long long)m * (long long)n;
  if (layout->stride_c >= extent) return PGC_EXIT_OK;
  return set_error(why, why_size, PGC_EXIT_USAGE,
                   "%s is below M x N = %lld: the batch's Cs would overlap", stride_c_name,
                   extent);
}

/* The strides a layout has, the dense ones where none was given (the
 * members one after another, each operand's rows as wide as they are
 * stored), 0 for one GEMM: what tells two GEMMs of a set apart. */
static void resolved_strides(const pgc_shape *shape, long long out[3]) {
  const pgc_layout *l = &shape->layout;
  const long long m = shape->m, n = shape->n, k = shape->k;
  const long long dense[3] = {m * k, k * n, m * n};
  const long long given[3] = {l->stride_a, l->stride_b, l->stride_c};
  for (int i = 0; i < 3; ++i)
    out[i] = l->batch <= 1 ? 0 : given[i] == PGC_STRIDE_DENSE ? dense[i] : given[i];
}

static int same_gemm(const pgc_shape *x, const pgc_shape *y) {
  if (x->m != y->m || x->n != y->n || x->k != y->k || x->layout.op_a != y->layout.op_a ||
      x->layout.op_b != y->layout.op_b || x->layout.batch != y->layout.batch)
    return 0;
  long long sx[3], sy[3];
  resolved_strides(x, sx);
  resolved_strides(y, sy);
  return sx[0] == sy[0] && sx[1] == sy[1] && sx[2] == sy[2];
}

void pgc_shape_text(const pgc_shape *shape, char *buf, size_t size) {
  if (size == 0) return;
  const pgc_layout *l = &shape->layout;
  size_t used = (size_t)snprintf(buf, size, "%dx%dx%d", shape->m, shape->n, shape->k);
  const int op = 2 * (l->op_a == PG_OP_T) + (l->op_b == PG_OP_T);
  if (op != 0 && used < size)
    used += (size_t)snprintf(buf + used, size - used, " %s", pgc_op_name(op));
  if (l->batch > 1 && used < size)
    used += (size_t)snprintf(buf + used, size - used, " batch=%d", l->batch);
  const long long given[3] = {l->stride_a, l->stride_b, l->stride_c};
  for (int i = 0; i < 3 && l->batch > 1; ++i)
    if (given[i] != PGC_STRIDE_DENSE && used < size)
      used += (size_t)snprintf(buf + used, size - used, " %s=%lld", stride_keys[i], given[i]);
}

void pgc_shape_set_free(pgc_shape_set *set) {
  free(set->shapes);
  set->shapes = NULL;
  set->count = 0;
}

/* Appends a GEMM read on line `line`. One given twice is refused: its
 * × cuBLAS would be measured against the first one's cuBLAS row, and the
 * geometric mean would count it twice. */
static int add_shape(pgc_shape_set *set, int *capacity, pgc_shape shape,
                     char *why, size_t why_size) {
  for (int i = 0; i < set->count; ++i) {
    const pgc_shape *seen = &set->shapes[i];
    if (same_gemm(seen, &shape)) {
      char text[PGC_SHAPES_ERROR_SIZE / 4];
      pgc_shape_text(&shape, text, sizeof text);
      if (seen->line == 0)
        return set_error(why, why_size, PGC_EXIT_USAGE, "%s is asked for twice", text);
      return set_error(why, why_size, PGC_EXIT_USAGE, "%s is on line %zu already", text,
                       seen->line);
    }
  }
  if (set->count == PGC_MAX_SHAPES)
    return set_error(why, why_size, PGC_EXIT_USAGE, "more than %d shapes",
                     PGC_MAX_SHAPES);
  if (set->count == *capacity) {
    int grown = *capacity ? *capacity * 2 : INITIAL_CAPACITY;
    if (grown > PGC_MAX_SHAPES) grown = PGC_MAX_SHAPES;
    pgc_shape *shapes = realloc(set->shapes, (size_t)grown * sizeof *shapes);
    if (!shapes)
      return set_error(why, why_size, PGC_EXIT_FAILED,
                       "out of host memory for %d shapes", grown);
    set->shapes = shapes;
    *capacity = grown;
  }
  set->shapes[set->count++] = shape;
  return PGC_EXIT_OK;
}

static const pgc_layout_request nn_request = PGC_LAYOUT_REQUEST_NN;

/* One line's GEMMs, its words over the request's, into the set. */
static int add_line(span text, size_t line, const pgc_layout_request *request,
                    pgc_shape_set *set, int *capacity, char *why, size_t why_size) {
  pgc_shape shape;
  memset(&shape, 0, sizeof shape);
  shape.line = line;
  size_t words_at = text.len;
  int rc = parse_shape(text, &shape, &words_at, why, why_size);
  if (rc != PGC_EXIT_OK) return rc;
  char quoted[QUOTE_MAX + sizeof "..."];
  pgc_escape_text(quoted, sizeof quoted, text.text, text.len);
  line_words words;
  rc = parse_words(text, words_at, quoted, &words, why, why_size);
  if (rc != PGC_EXIT_OK) return rc;
  shape.layout.batch = words.batch > 0 ? words.batch : request->batch;
  const long long asked[3] = {request->stride_a, request->stride_b, request->stride_c};
  long long strides[3];
  for (int i = 0; i < 3; ++i) {
    if (words.strides[i] != PGC_STRIDE_DENSE && shape.layout.batch <= 1)
      return set_error(why, why_size, PGC_EXIT_USAGE,
                       "'%s': %s needs a batch above 1 (one GEMM has no stride)", quoted,
                       stride_keys[i]);
    strides[i] = shape.layout.batch <= 1                  ? PGC_STRIDE_DENSE
                 : words.strides[i] != PGC_STRIDE_DENSE ? words.strides[i]
                                                          : asked[i];
  }
  shape.layout.stride_a = strides[0];
  shape.layout.stride_b = strides[1];
  shape.layout.stride_c = strides[2];
  char stride_c_name[64];
  if (words.strides[2] != PGC_STRIDE_DENSE)
    snprintf(stride_c_name, sizeof stride_c_name, "stride_c=%lld", strides[2]);
  else
    snprintf(stride_c_name, sizeof stride_c_name, "--stride-c %lld", strides[2]);
  char overlap[PGC_SHAPES_ERROR_SIZE / 4];
  if (pgc_layout_check(shape.m, shape.n, &shape.layout, stride_c_name, overlap,
                       sizeof overlap) != PGC_EXIT_OK)
    return set_error(why, why_size, PGC_EXIT_USAGE, "'%s': %s", quoted, overlap);
  const int op_count = words.op_count > 0 ? words.op_count : request->op_count;
  const int *ops = words.op_count > 0 ? words.ops : request->ops;
  for (int i = 0; i < op_count; ++i) {
    shape.layout.op_a = ops[i] & 2 ? PG_OP_T : PG_OP_N;
    shape.layout.op_b = ops[i] & 1 ? PG_OP_T : PG_OP_N;
    rc = add_shape(set, capacity, shape, why, why_size);
    if (rc != PGC_EXIT_OK) return rc;
  }
  return PGC_EXIT_OK;
}

int pgc_shapes_parse(const char *text, size_t len, const char *name,
                     pgc_shape_set *set, char *err, size_t err_size) {
  return pgc_shapes_parse_with(text, len, name, NULL, set, err, err_size);
}

int pgc_shapes_parse_with(const char *text, size_t len, const char *name,
                          const pgc_layout_request *request, pgc_shape_set *set, char *err,
                          size_t err_size) {
  set->shapes = NULL;
  set->count = 0;
  if (request == NULL) request = &nn_request;
  int capacity = 0;
  size_t line = 0;
  for (size_t start = 0; start < len;) {
    const char *newline = memchr(text + start, '\n', len - start);
    size_t end = newline ? (size_t)(newline - text) : len;
    span shape_line = shape_text(text + start, end - start);
    start = end + 1;
    ++line;
    if (shape_line.len == 0) continue; /* blank or a comment */
    char why[PGC_SHAPES_ERROR_SIZE / 2];
    int rc = add_line(shape_line, line, request, set, &capacity, why, sizeof why);
    if (rc != PGC_EXIT_OK) {
      pgc_shape_set_free(set);
      if (rc == PGC_EXIT_FAILED) return set_error(err, err_size, rc, "%s", why);
      return set_error(err, err_size, rc, "%s:%zu: %s", escaped(name).text, line, why);
    }
  }
  if (set->count == 0)
    return set_error(err, err_size, PGC_EXIT_USAGE, "no shape in %s", escaped(name).text);
  return PGC_EXIT_OK;
}

int pgc_shapes_of_request(int m, int n, int k, const pgc_layout_request *request,
                          pgc_shape_set *set, char *err, size_t err_size) {
  set->shapes = NULL;
  set->count = 0;
  if (request == NULL) request = &nn_request;
  int capacity = 0;
  pgc_shape shape;
  memset(&shape, 0, sizeof shape);
  shape.m = m;
  shape.n = n;
  shape.k = k;
  shape.layout.batch = request->batch;
  shape.layout.stride_a = request->batch > 1 ? request->stride_a : PGC_STRIDE_DENSE;
  shape.layout.stride_b = request->batch > 1 ? request->stride_b : PGC_STRIDE_DENSE;
  shape.layout.stride_c = request->batch > 1 ? request->stride_c : PGC_STRIDE_DENSE;
  char name[64];
  snprintf(name, sizeof name, "--stride-c %lld", shape.layout.stride_c);
  int rc = pgc_layout_check(m, n, &shape.layout, name, err, err_size);
  for (int i = 0; rc == PGC_EXIT_OK && i < request->op_count; ++i) {
    shape.layout.op_a = request->ops[i] & 2 ? PG_OP_T : PG_OP_N;
    shape.layout.op_b = request->ops[i] & 1 ? PG_OP_T : PG_OP_N;
    rc = add_shape(set, &capacity, shape, err, err_size);
  }
  if (rc != PGC_EXIT_OK) pgc_shape_set_free(set);
  return rc;
}

int pgc_shapes_read(const char *path, pgc_shape_set *set, char *err,
                    size_t err_size) {
  return pgc_shapes_read_with(path, NULL, set, err, err_size);
}

int pgc_shapes_read_with(const char *path, const pgc_layout_request *request,
                         pgc_shape_set *set, char *err, size_t err_size) {
  set->shapes = NULL;
  set->count = 0;
  FILE *file = fopen(path, "rb");
  if (!file)
    return set_error(err, err_size, PGC_EXIT_USAGE, "cannot read %s: %s",
                     escaped(path).text, strerror(errno));
  /* One byte past the limit tells a file at the limit from a larger one. */
  char *text = malloc(PGC_MAX_SHAPE_FILE_BYTES + 1);
  if (!text) {
    fclose(file);
    return set_error(err, err_size, PGC_EXIT_FAILED,
                     "out of host memory to read %s", escaped(path).text);
  }
  errno = 0;
  size_t len = fread(text, 1, PGC_MAX_SHAPE_FILE_BYTES + 1, file);
  int read_error = ferror(file) ? (errno ? errno : EIO) : 0;
  fclose(file);
  int rc;
  if (read_error)
    rc = set_error(err, err_size, PGC_EXIT_USAGE, "cannot read %s: %s",
                   escaped(path).text, strerror(read_error));
  else if (len > PGC_MAX_SHAPE_FILE_BYTES)
    rc = set_error(err, err_size, PGC_EXIT_USAGE,
                   "%s is larger than %d KiB: not a shape set", escaped(path).text,
                   PGC_MAX_SHAPE_FILE_BYTES / BYTES_PER_KIB);
  else
    rc = pgc_shapes_parse_with(text, len, path, request, set, err, err_size);
  free(text);
  return rc;
}
