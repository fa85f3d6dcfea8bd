/* Shape sets: a text of "MxNxK" lines into a list of shapes, or one line
 * that says which line of which file is wrong and why. */
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

/* A shape text into *shape. Returns PGC_EXIT_OK, or PGC_EXIT_USAGE with
 * why it is not a shape in `why` (the caller adds file and line). The
 * whole text must read as MxNxK before a dimension's range is judged:
 * "0x4xabc" is not a shape at all. */
static int parse_shape(span text, pgc_shape *shape, char *why, size_t why_size) {
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
  if (!syntax_ok || pos != text.len)
    return set_error(why, why_size, PGC_EXIT_USAGE, "'%s' is not MxNxK", quoted);
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

void pgc_shape_set_free(pgc_shape_set *set) {
  free(set->shapes);
  set->shapes = NULL;
  set->count = 0;
}

/* Appends a shape read on line `line`. A shape given twice is refused: its
 * × cuBLAS would be measured against the first one's cuBLAS row, and the
 * geometric mean would count it twice. */
static int add_shape(pgc_shape_set *set, int *capacity, pgc_shape shape,
                     char *why, size_t why_size) {
  for (int i = 0; i < set->count; ++i) {
    const pgc_shape *seen = &set->shapes[i];
    if (seen->m == shape.m && seen->n == shape.n && seen->k == shape.k)
      return set_error(why, why_size, PGC_EXIT_USAGE,
                       "%dx%dx%d is on line %zu already", shape.m, shape.n,
                       shape.k, seen->line);
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

int pgc_shapes_parse(const char *text, size_t len, const char *name,
                     pgc_shape_set *set, char *err, size_t err_size) {
  set->shapes = NULL;
  set->count = 0;
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
    pgc_shape shape = {0, 0, 0, line};
    int rc = parse_shape(shape_line, &shape, why, sizeof why);
    if (rc == PGC_EXIT_OK) rc = add_shape(set, &capacity, shape, why, sizeof why);
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

int pgc_shapes_read(const char *path, pgc_shape_set *set, char *err,
                    size_t err_size) {
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
    rc = pgc_shapes_parse(text, len, path, set, err, err_size);
  free(text);
  return rc;
}
