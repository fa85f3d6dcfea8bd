/* The readers of report_readers.h: a memory stream, CSV by RFC 4180, and
 * JSON by RFC 8259 (structure only, UTF-8 only). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report_readers.h"

/* ---- capturing a printer's output ------------------------------------------ */

FILE *capture_begin(capture *c) {
  c->text = NULL;
  c->size = 0;
  c->stream = open_memstream(&c->text, &c->size);
  assert_non_null(c->stream);
  return c->stream;
}

/* The captured text; the caller frees it. */
char *capture_end(capture *c) {
  assert_int_equal(fclose(c->stream), 0);
  assert_non_null(c->text);
  return c->text;
}

/* ---- an RFC 4180 reader ------------------------------------------------------ */

/* Appends one byte to the pool; -1 when it is full. */
static int pool_put(csv_table *t, char c) {
  if (t->used == CSV_POOL_SIZE) return -1;
  t->pool[t->used++] = c;
  return 0;
}

/* Reads records, setting aside lines that start with '#'. Returns 0, or -1
 * when the text breaks the quoting rules (or holds more than the table). */
int csv_read(const char *text, csv_table *t) {
  t->records = t->comments = 0;
  t->used = 0;
  memset(t->fields, 0, sizeof t->fields);
  const char *p = text;
  while (*p) {
    if (*p == '#') {
      const char *end = strchr(p, '\n');
      size_t len = end ? (size_t)(end - p) : strlen(p);
      if (t->comments == CSV_MAX_RECORDS) return -1;
      t->comment[t->comments++] = t->pool + t->used;
      for (size_t i = 0; i < len; ++i)
        if (pool_put(t, p[i]) != 0) return -1;
      if (pool_put(t, '\0') != 0) return -1;
      p += len + (end ? 1 : 0);
      continue;
    }
    if (t->records == CSV_MAX_RECORDS) return -1;
    int r = t->records++;
    for (;;) { /* one field */
      if (t->fields[r] == CSV_MAX_FIELDS) return -1;
      t->field[r][t->fields[r]++] = t->pool + t->used;
      if (*p == '"') {
        ++p;
        for (;;) {
          if (*p == '\0') return -1; /* unterminated */
          if (*p == '"' && p[1] == '"') {
            p += 2;
            if (pool_put(t, '"') != 0) return -1;
          } else if (*p == '"') {
            ++p;
            break;
          } else if (pool_put(t, *p++) != 0) {
            return -1;
          }
        }
        if (*p != ',' && *p != '\n' && *p != '\0') return -1;
      } else {
        while (*p && *p != ',' && *p != '\n') {
          if (*p == '"' || *p == '\r') return -1; /* must have been quoted */
          if (pool_put(t, *p++) != 0) return -1;
        }
      }
      if (pool_put(t, '\0') != 0) return -1;
      if (*p == ',') {
        ++p;
        continue;
      }
      if (*p == '\n') ++p;
      break;
    }
  }
  return 0;
}

/* ---- a strict JSON parser (RFC 8259), structure only ------------------------ */

typedef struct {
  const char *p;
  int depth;
} json_reader;

#define JSON_MAX_DEPTH 32

static void json_space(json_reader *r) {
  while (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t') ++r->p;
}

static int json_value(json_reader *r);

/* The length of the well-formed UTF-8 character at p (RFC 3629: no
 * overlong form, no surrogate, nothing past U+10FFFF), or 0. */
static int utf8_length(const unsigned char *p) {
  unsigned need, code, least;
  if (p[0] < 0x80) return 1;
  if (p[0] >= 0xc2 && p[0] <= 0xdf) need = 1, code = p[0] & 0x1fu, least = 0x80;
  else if (p[0] >= 0xe0 && p[0] <= 0xef) need = 2, code = p[0] & 0x0fu, least = 0x800;
  else if (p[0] >= 0xf0 && p[0] <= 0xf4) need = 3, code = p[0] & 0x07u, least = 0x10000;
  else return 0;
  for (unsigned i = 1; i <= need; ++i) {
    if ((p[i] & 0xc0) != 0x80) return 0;
    code = code << 6 | (p[i] & 0x3fu);
  }
  if (code < least || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return 0;
  return (int)need + 1;
}

static int json_string(json_reader *r) {
  if (*r->p != '"') return -1;
  ++r->p;
  for (;;) {
    unsigned char ch = (unsigned char)*r->p;
    if (ch == '\0' || ch < 0x20) return -1; /* raw control character */
    /* JSON text is UTF-8 (RFC 8259, section 8.1). */
    int len = utf8_length((const unsigned char *)r->p);
    if (len == 0) return -1;
    r->p += len;
    if (len > 1) continue;
    if (ch == '"') return 0;
    if (ch != '\\') continue;
    char esc = *r->p++;
    if (esc == 'u') {
      for (int i = 0; i < 4; ++i, ++r->p)
        if (!strchr("0123456789abcdefABCDEF", *r->p) || *r->p == '\0') return -1;
    } else if (!strchr("\"\\/bfnrt", esc) || esc == '\0') {
      return -1;
    }
  }
}

static int json_digits(json_reader *r) {
  if (*r->p < '0' || *r->p > '9') return -1;
  while (*r->p >= '0' && *r->p <= '9') ++r->p;
  return 0;
}

static int json_number(json_reader *r) {
  if (*r->p == '-') ++r->p;
  if (*r->p == '0')
    ++r->p;
  else if (json_digits(r) != 0)
    return -1;
  if (*r->p == '.') {
    ++r->p;
    if (json_digits(r) != 0) return -1;
  }
  if (*r->p == 'e' || *r->p == 'E') {
    ++r->p;
    if (*r->p == '+' || *r->p == '-') ++r->p;
    if (json_digits(r) != 0) return -1;
  }
  return 0;
}

static int json_word(json_reader *r, const char *word) {
  size_t len = strlen(word);
  if (strncmp(r->p, word, len) != 0) return -1;
  r->p += len;
  return 0;
}

/* '{' members '}' or '[' values ']'. */
static int json_container(json_reader *r, char close, int members) {
  if (++r->depth > JSON_MAX_DEPTH) return -1;
  ++r->p;
  json_space(r);
  if (*r->p == close) {
    ++r->p;
    --r->depth;
    return 0;
  }
  for (;;) {
    json_space(r);
    if (members) {
      if (json_string(r) != 0) return -1;
      json_space(r);
      if (*r->p++ != ':') return -1;
    }
    if (json_value(r) != 0) return -1;
    json_space(r);
    if (*r->p == ',') {
      ++r->p;
      continue;
    }
    if (*r->p++ != close) return -1;
    --r->depth;
    return 0;
  }
}

static int json_value(json_reader *r) {
  json_space(r);
  switch (*r->p) {
    case '{': return json_container(r, '}', 1);
    case '[': return json_container(r, ']', 0);
    case '"': return json_string(r);
    case 't': return json_word(r, "true");
    case 'f': return json_word(r, "false");
    case 'n': return json_word(r, "null");
    default: return json_number(r);
  }
}

/* 0 if text is exactly one JSON object and nothing else but blanks. */
int json_check(const char *text) {
  json_reader r = {text, 0};
  json_space(&r);
  if (*r.p != '{' || json_value(&r) != 0) return -1;
  json_space(&r);
  return *r.p == '\0' ? 0 : -1;
}
