/* Report printers of the pipegemm tool (src/measure/report.c): the text table is
 * aligned, CSV reads back field for field through an RFC 4180 reader, JSON
 * passes a strict structural parser, and absent numbers come out as "-",
 * empty fields and null. Also the bench result row and the FLOP arithmetic
 * the report is made of. Printers write into memory streams; no GPU. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "measure/session.h"
#include "measure/report.h"
#include "cli/output.h"

/* ---- capturing a printer's output ------------------------------------------ */

typedef struct {
  char *text;
  size_t size;
  FILE *stream;
} capture;

static FILE *capture_begin(capture *c) {
  c->text = NULL;
  c->size = 0;
  c->stream = open_memstream(&c->text, &c->size);
  assert_non_null(c->stream);
  return c->stream;
}

/* The captured text; the caller frees it. */
static char *capture_end(capture *c) {
  assert_int_equal(fclose(c->stream), 0);
  assert_non_null(c->text);
  return c->text;
}

/* ---- a report with every kind of awkward cell ------------------------------- */

static const char awkward_name[] =
    "has,comma \"quoted\"\nnewline\\back\ttab\x01" "ctl";

static const pgc_column sample_columns[] = {
    {"name", "name", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    {"count", "count", PGC_ALIGN_RIGHT, 0, PGC_SHOW_ALL},
    {"ratio", "ratio", PGC_ALIGN_RIGHT, 2, PGC_SHOW_ALL},
    {"hidden", "hidden", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"pretty", "pretty", PGC_ALIGN_LEFT, 0, PGC_SHOW_TABLE},
    {"big", "big", PGC_ALIGN_RIGHT, 0, PGC_SHOW_ALL},
    {"speed", "× speed", PGC_ALIGN_RIGHT, PGC_SCIENTIFIC, PGC_SHOW_ALL},
};
#define SAMPLE_COLUMNS ((int)(sizeof sample_columns / sizeof sample_columns[0]))
#define SAMPLE_ROWS 3

static const char *const sample_notes[] = {"a note, with \"quotes\""};

typedef struct {
  pgc_fact facts[5];
  pgc_cell cells[SAMPLE_ROWS * SAMPLE_COLUMNS];
  pgc_report report;
} sample;

static void sample_build(sample *s) {
  pgc_fact facts[] = {
      {"gpu", "GPU", pgc_cell_text("Test \"GPU\", rev\\2"), 0, NULL, PGC_SHOW_ALL},
      {"sms", "SMs", pgc_cell_int(132), 0, NULL, PGC_SHOW_ALL},
      {"clock", "clock", pgc_cell_real(1980.4), 0, "MHz", PGC_SHOW_TABLE},
      {"clock_mhz", "", pgc_cell_real(1980.4), 0, NULL, PGC_SHOW_DATA},
      {"missing", "missing", pgc_cell_real(NAN), 1, "ms", PGC_SHOW_ALL},
  };
  memcpy(s->facts, facts, sizeof facts);
  pgc_cell rows[SAMPLE_ROWS][SAMPLE_COLUMNS] = {
      {pgc_cell_text("plain"), pgc_cell_int(7), pgc_cell_real(1.5),
       pgc_cell_int(42), pgc_cell_text("p"), pgc_cell_uint(UINT64_MAX),
       pgc_cell_real(3.05e-5)},
      {pgc_cell_text(awkward_name), pgc_cell_int(-3), pgc_cell_real(NAN),
       pgc_cell_absent(), pgc_cell_text("q"), pgc_cell_uint(0),
       pgc_cell_real(12.0)},
      {pgc_cell_text(" padded "), pgc_cell_int(0), pgc_cell_real(INFINITY),
       pgc_cell_int(1), pgc_cell_text(NULL), pgc_cell_uint(5),
       pgc_cell_absent()},
  };
  memcpy(s->cells, rows, sizeof rows);
  pgc_report report = {"test", s->facts, 5, sample_columns, SAMPLE_COLUMNS,
                       s->cells, SAMPLE_ROWS, sample_notes, 1};
  s->report = report;
}

static char *print_sample(pgc_format format) {
  sample s;
  sample_build(&s);
  capture c;
  pgc_print_report(capture_begin(&c), format, &s.report);
  return capture_end(&c);
}

/* ---- an RFC 4180 reader ------------------------------------------------------ */

#define CSV_MAX_RECORDS 16
#define CSV_MAX_FIELDS PGC_MAX_COLUMNS /* a bench row has 21 */
#define CSV_FIELD_SIZE 128

typedef struct {
  int records;
  int fields[CSV_MAX_RECORDS];
  char field[CSV_MAX_RECORDS][CSV_MAX_FIELDS][CSV_FIELD_SIZE];
  int comments;
  char comment[CSV_MAX_RECORDS][CSV_FIELD_SIZE];
} csv_table;

/* Reads records, setting aside lines that start with '#'. Returns 0, or -1
 * when the text breaks the quoting rules. */
static int csv_read(const char *text, csv_table *t) {
  memset(t, 0, sizeof *t);
  const char *p = text;
  while (*p) {
    if (*p == '#') {
      const char *end = strchr(p, '\n');
      size_t len = end ? (size_t)(end - p) : strlen(p);
      if (t->comments == CSV_MAX_RECORDS || len >= CSV_FIELD_SIZE) return -1;
      memcpy(t->comment[t->comments++], p, len);
      p += len + (end ? 1 : 0);
      continue;
    }
    if (t->records == CSV_MAX_RECORDS) return -1;
    int r = t->records++;
    for (;;) { /* one field */
      if (t->fields[r] == CSV_MAX_FIELDS) return -1;
      char *out = t->field[r][t->fields[r]++];
      size_t len = 0;
      if (*p == '"') {
        ++p;
        for (;;) {
          if (*p == '\0') return -1; /* unterminated */
          if (*p == '"' && p[1] == '"') {
            p += 2;
            out[len++] = '"';
          } else if (*p == '"') {
            ++p;
            break;
          } else {
            out[len++] = *p++;
          }
          if (len >= CSV_FIELD_SIZE) return -1;
        }
        if (*p != ',' && *p != '\n' && *p != '\0') return -1;
      } else {
        while (*p && *p != ',' && *p != '\n') {
          if (*p == '"' || *p == '\r') return -1; /* must have been quoted */
          out[len++] = *p++;
          if (len >= CSV_FIELD_SIZE) return -1;
        }
      }
      out[len] = '\0';
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

static void test_csv_reads_back(void **state) {
  (void)state;
  char *text = print_sample(PGC_FORMAT_CSV);
  csv_table t;
  assert_int_equal(csv_read(text, &t), 0);

  /* Header facts as "# key: value" lines; table-only facts left out. */
  assert_string_equal(t.comment[0], "# report: pipegemm test");
  assert_string_equal(t.comment[1], "# gpu: Test \"GPU\", rev\\2");
  assert_string_equal(t.comment[2], "# sms: 132");
  assert_string_equal(t.comment[3], "# clock_mhz: 1980.4");
  assert_string_equal(t.comment[4], "# missing: ");
  assert_string_equal(t.comment[5], "# note: a note, with \"quotes\"");
  assert_int_equal(t.comments, 6);

  /* Header line of keys, data-only columns in, table-only out. */
  assert_int_equal(t.records, 1 + SAMPLE_ROWS);
  static const char *const keys[] = {"name", "count", "ratio", "hidden", "big",
                                     "speed"};
  assert_int_equal(t.fields[0], 6);
  for (int i = 0; i < 6; ++i) assert_string_equal(t.field[0][i], keys[i]);
  for (int r = 1; r <= SAMPLE_ROWS; ++r) assert_int_equal(t.fields[r], 6);

  assert_string_equal(t.field[1][0], "plain");
  assert_string_equal(t.field[1][1], "7");
  assert_string_equal(t.field[1][2], "1.5");
  assert_string_equal(t.field[1][3], "42");
  assert_string_equal(t.field[1][4], "18446744073709551615");
  assert_string_equal(t.field[1][5], "3.05e-05");
  /* Commas, quotes, line breaks and backslashes survive the round trip. */
  assert_string_equal(t.field[2][0], awkward_name);
  assert_string_equal(t.field[2][1], "-3");
  assert_string_equal(t.field[2][2], ""); /* NaN */
  assert_string_equal(t.field[2][3], ""); /* absent */
  assert_string_equal(t.field[3][0], " padded ");
  assert_string_equal(t.field[3][2], ""); /* Inf */
  assert_string_equal(t.field[3][5], "");
  free(text);
}

static void test_csv_field_quoting(void **state) {
  (void)state;
  static const struct {
    const char *in, *out;
  } cases[] = {
      {"plain", "plain"},
      {"", ""},
      {"a,b", "\"a,b\""},
      {"say \"hi\"", "\"say \"\"hi\"\"\""},
      {"two\nlines", "\"two\nlines\""},
      {"cr\rhere", "\"cr\rhere\""},
      {" lead", "\" lead\""},
      {"trail ", "\"trail \""},
      {"mid space", "mid space"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    capture c;
    pgc_print_csv_field(capture_begin(&c), cases[i].in);
    char *text = capture_end(&c);
    assert_string_equal(text, cases[i].out);
    free(text);
  }
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
static int json_check(const char *text) {
  json_reader r = {text, 0};
  json_space(&r);
  if (*r.p != '{' || json_value(&r) != 0) return -1;
  json_space(&r);
  return *r.p == '\0' ? 0 : -1;
}

static void test_json_parser_rejects_bad_text(void **state) {
  (void)state;
  /* The checker itself must catch what a broken printer would produce. */
  assert_int_equal(json_check("{\"a\": 1}"), 0);
  assert_int_not_equal(json_check("{\"a\": nan}"), 0);
  assert_int_not_equal(json_check("{\"a\": 1,}"), 0);
  assert_int_not_equal(json_check("{\"a\": \"x\ny\"}"), 0);
  assert_int_not_equal(json_check("{\"a\": \"\\q\"}"), 0);
  assert_int_not_equal(json_check("{\"a\": [1, 2}"), 0);
  assert_int_not_equal(json_check("{\"a\": 1} x"), 0);
  assert_int_not_equal(json_check("{\"a\": 01}"), 0);
  assert_int_not_equal(json_check("{\"a\": \"\xff\"}"), 0);
  assert_int_not_equal(json_check("{\"a\": \"\xe2\x82\"}"), 0);
  assert_int_not_equal(json_check("{\"a\": \"\xed\xa0\x80\"}"), 0);
  assert_int_equal(json_check("{\"a\": \"\xe2\x82\xac\"}"), 0);
}

static void test_json_is_valid_and_escaped(void **state) {
  (void)state;
  char *text = print_sample(PGC_FORMAT_JSON);
  if (json_check(text) != 0) print_error("invalid JSON:\n%s\n", text);
  assert_int_equal(json_check(text), 0);
  assert_non_null(strstr(text, "\"report\": \"test\""));
  assert_non_null(strstr(text, "\"gpu\": \"Test \\\"GPU\\\", rev\\\\2\""));
  assert_non_null(strstr(text, "\"sms\": 132"));
  assert_non_null(strstr(text, "\"clock_mhz\": 1980.4"));
  assert_non_null(strstr(text, "\"missing\": null"));
  assert_null(strstr(text, "\"clock\":")); /* table-only fact */
  assert_non_null(strstr(
      text,
      "\"name\": \"has,comma \\\"quoted\\\"\\nnewline\\\\back\\ttab\\u0001ctl\""));
  assert_non_null(strstr(text, "\"ratio\": null"));  /* NaN */
  assert_non_null(strstr(text, "\"hidden\": null")); /* absent */
  assert_non_null(strstr(text, "\"big\": 18446744073709551615"));
  assert_null(strstr(text, "pretty"));
  assert_null(strstr(text, "nan"));
  assert_null(strstr(text, "inf"));
  assert_non_null(strstr(text, "\"notes\": [\"a note, with \\\"quotes\\\"\"]"));
  free(text);
}

/* The JSON string of `text`, quotes and all; the caller frees it. */
static char *json_string_of(const char *text) {
  capture c;
  pgc_print_json_string(capture_begin(&c), text);
  return capture_end(&c);
}

/* Whatever bytes a text holds (a GPU's name, a path, what a tool said),
 * its JSON string is valid JSON in well-formed UTF-8: control characters
 * as \u00XX, each ill-formed sequence as one U+FFFD, the rest as it is. */
static void test_json_string_escaper(void **state) {
  (void)state;
  static const struct {
    const char *in, *out;
  } cases[] = {
      {"plain", "\"plain\""},
      {"", "\"\""},
      {"q\"b\\s/", "\"q\\\"b\\\\s/\""},
      {"\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\""},
      {"\x01\x1b[0m\x1f", "\"\\u0001\\u001b[0m\\u001f\""},
      /* DEL and the C1 controls (U+0080-U+009F) are control characters too. */
      {"a\x7f" "b", "\"a\\u007fb\""},
      {"\xc2\x85\xc2\x9b", "\"\\u0085\\u009b\""},
      /* Well-formed UTF-8 of every length stays as it is. */
      {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0",
       "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0\""},
      {"\xef\xbf\xbd", "\"\xef\xbf\xbd\""},
      /* Ill-formed: a stray continuation byte, bytes that never start a
       * character, an overlong form, a surrogate, past U+10FFFF, and a
       * character cut short (one U+FFFD for the part that was there). */
      {"a\x80z", "\"a\\ufffdz\""},
      {"\xff\xfe", "\"\\ufffd\\ufffd\""},
      {"\xc0\xaf", "\"\\ufffd\\ufffd\""},
      {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},
      {"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""},
      {"\xe2\x82" "x", "\"\\ufffdx\""},
      {"\xf0\x9f\x98", "\"\\ufffd\""},
      {"NVIDIA H200\xe2", "\"NVIDIA H200\\ufffd\""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char *text = json_string_of(cases[i].in);
    if (strcmp(text, cases[i].out) != 0)
      print_error("case %zu: got %s, expected %s\n", i, text, cases[i].out);
    assert_string_equal(text, cases[i].out);
    free(text);
  }
  /* Every byte value, alone and after each lead byte: always a JSON string
   * that the strict parser takes, UTF-8 included. */
  for (int first = 1; first < 256; ++first) {
    for (int second = 0; second < 256; second += first >= 0xc0 ? 1 : 255) {
      const char in[3] = {(char)first, (char)second, '\0'};
      char *text = json_string_of(in);
      char member[64];
      snprintf(member, sizeof member, "{\"k\": %s}", text);
      if (json_check(member) != 0) print_error("bytes %02x %02x: %s\n", first, second, text);
      assert_int_equal(json_check(member), 0);
      free(text);
    }
  }
}

static void test_json_empty_report(void **state) {
  (void)state;
  pgc_report empty = {"nothing", NULL, 0, sample_columns, SAMPLE_COLUMNS, NULL,
                      0, NULL, 0};
  capture c;
  pgc_print_json(capture_begin(&c), &empty);
  char *text = capture_end(&c);
  assert_int_equal(json_check(text), 0);
  assert_non_null(strstr(text, "\"rows\": []"));
  free(text);
}

/* ---- the text table ----------------------------------------------------------- */

/* Display column of byte offset `at` in `line` (UTF-8). */
static int column_of(const char *line, size_t at) {
  int col = 0;
  for (size_t i = 0; i < at; ++i)
    if (((unsigned char)line[i] & 0xC0) != 0x80) ++col;
  return col;
}

/* Byte offset of display column `col`. */
static size_t offset_of(const char *line, int col) {
  size_t i = 0;
  for (int c = 0; line[i] && c < col; ++c) {
    ++i;
    while (((unsigned char)line[i] & 0xC0) == 0x80) ++i;
  }
  return i;
}

#define MAX_LINES 32

static int split_lines(char *text, char **lines) {
  int count = 0;
  for (char *line = strtok(text, "\n"); line && count < MAX_LINES;
       line = strtok(NULL, "\n"))
    lines[count++] = line;
  return count;
}

static void test_table_is_aligned(void **state) {
  (void)state;
  char *text = print_sample(PGC_FORMAT_TABLE);
  char *copy = strdup(text);
  char *lines[MAX_LINES];
  int count = split_lines(copy, lines);

  /* Facts first, values in one column; data-only facts left out; an absent
   * value has no unit. */
  assert_string_equal(lines[0], "GPU:     Test \"GPU\", rev\\2");
  assert_string_equal(lines[1], "SMs:     132");
  assert_string_equal(lines[2], "clock:   1980 MHz");
  assert_string_equal(lines[3], "missing: -");
  assert_null(strstr(text, "clock_mhz"));

  /* Then the table: titles, a rule of dashes per column, the rows. */
  const char *header = lines[4];
  const char *rule = lines[5];
  assert_non_null(strstr(header, "name"));
  assert_non_null(strstr(header, "× speed"));
  assert_non_null(strstr(header, "pretty"));
  assert_null(strstr(header, "hidden"));
  assert_int_equal(count, 4 + 2 + SAMPLE_ROWS + 1);
  assert_string_equal(lines[count - 1], sample_notes[0]);

  /* Column extents from the rule: runs of dashes. */
  int start[SAMPLE_COLUMNS], end[SAMPLE_COLUMNS], columns = 0;
  for (size_t i = 0; rule[i];) {
    if (rule[i] != '-') {
      assert_int_equal(rule[i], ' ');
      ++i;
      continue;
    }
    start[columns] = (int)i;
    while (rule[i] == '-') ++i;
    end[columns++] = (int)i;
  }
  assert_int_equal(columns, 6); /* every column but the data-only one */
  for (int c = 1; c < columns; ++c) assert_int_equal(start[c] - end[c - 1], 2);

  /* Left-aligned columns (name, pretty) start at their rule; right-aligned
   * ones end at it; UTF-8 titles count one column per character. */
  static const int right_aligned[] = {0, 1, 1, 0, 1, 1};
  for (int l = 4; l < 4 + 2 + SAMPLE_ROWS; ++l) {
    const char *line = lines[l];
    assert_true(line[strlen(line) - 1] != ' '); /* no trailing blanks */
    assert_int_equal(column_of(line, strlen(line)), end[columns - 1]);
    for (int c = 0; c < columns; ++c) {
      size_t first = offset_of(line, start[c]);
      size_t last = offset_of(line, end[c] - 1);
      if (right_aligned[c]) {
        assert_true(line[last] != ' ');
      } else {
        assert_true(line[first] != ' ' || (l == 4 + 2 + 2 && c == 0));
      }
      if (c > 0) assert_true(line[offset_of(line, start[c]) - 1] == ' ');
    }
  }
  /* Absent and non-finite cells show as "-"; no raw line break leaks. */
  assert_non_null(strstr(lines[7], "has,comma \"quoted\" newline\\back tab ctl"));
  assert_null(strstr(text, "nan"));
  assert_null(strstr(text, "inf"));
  assert_non_null(strstr(lines[6], "3.05e-05"));
  assert_non_null(strstr(lines[6], "1.50"));
  free(copy);
  free(text);
}

/* ---- the bench result row ----------------------------------------------------- */

static void test_result_row(void **state) {
  (void)state;
  pgc_result_row row;
  pgc_result_row_init(&row, "cp_async", 2, 64, 32, 16);
  assert_string_equal(row.shape, "64x32x16");
  assert_true(isnan(row.median_ms) && isnan(row.tflops) && isnan(row.x_cublas));
  assert_true(isnan(row.max_abs_err) && isnan(row.pct_ffma_peak));
  assert_string_equal(row.verdict_text, "PASS");
  pgc_result_row_set_verdict(&row, PGC_VERDICT_SKIP, "needs CC 9.0");
  assert_int_equal(row.verdict, PGC_VERDICT_SKIP);
  assert_string_equal(row.verdict_text, "SKIP (needs CC 9.0)");
  pgc_result_row_set_verdict(&row, PGC_VERDICT_FAIL, NULL);
  assert_string_equal(row.verdict_text, "FAIL");
  pgc_result_row_set_verdict(&row, PGC_VERDICT_UNCHECKED, NULL);
  assert_string_equal(row.verdict_text, "UNCHECKED");

  /* One cell per column, no more; stages 0 is absent. */
  pgc_cell cells[PGC_MAX_COLUMNS + 1];
  for (int i = 0; i <= PGC_MAX_COLUMNS; ++i) cells[i] = pgc_cell_text("sentinel");
  pgc_result_row_init(&row, "cublas", 0, 8, 8, 8);
  pgc_result_row_cells(&row, cells);
  assert_true(pgc_result_column_count <= PGC_MAX_COLUMNS);
  assert_string_equal(cells[pgc_result_column_count].text, "sentinel");
  assert_int_equal(cells[0].kind, PGC_CELL_TEXT);
  assert_string_equal(cells[0].text, "cublas");
  assert_int_equal(cells[1].kind, PGC_CELL_ABSENT);
  assert_string_equal(pgc_result_columns[0].key, "variant");
  assert_string_equal(pgc_result_columns[pgc_result_column_count - 1].key,
                      "verdict");

  /* Shared memory and blocks per SM: absent until the kernel's facts are
   * known (cublas never has them), numbers in every format once they are. */
  int smem = -1, blocks = -1, regs = -1;
  for (int c = 0; c < pgc_result_column_count; ++c) {
    if (strcmp(pgc_result_columns[c].key, "smem_kib") == 0) smem = c;
    if (strcmp(pgc_result_columns[c].key, "blocks_per_sm") == 0) blocks = c;
    if (strcmp(pgc_result_columns[c].key, "registers") == 0) regs = c;
  }
  assert_true(smem >= 0 && blocks >= 0 && regs >= 0);
  assert_int_equal(row.registers, -1);
  assert_int_equal(cells[regs].kind, PGC_CELL_ABSENT);
  assert_int_equal(pgc_result_columns[smem].show, PGC_SHOW_ALL);
  assert_int_equal(pgc_result_columns[blocks].show, PGC_SHOW_ALL);
  assert_true(isnan(row.smem_kib));
  assert_int_equal(row.blocks_per_sm, -1);
  assert_true(cells[smem].kind == PGC_CELL_ABSENT ||
              (cells[smem].kind == PGC_CELL_REAL && isnan(cells[smem].real)));
  assert_int_equal(cells[blocks].kind, PGC_CELL_ABSENT);
  pgc_result_row_init(&row, "cp_async", 4, 8, 8, 8);
  row.smem_kib = 32.0625;
  row.blocks_per_sm = 0; /* does not fit: a number, not absent */
  row.registers = 112;
  pgc_result_row_cells(&row, cells);
  assert_int_equal(cells[smem].kind, PGC_CELL_REAL);
  assert_float_equal(cells[smem].real, 32.0625, 0);
  assert_int_equal(cells[blocks].kind, PGC_CELL_INTEGER);
  assert_int_equal(cells[blocks].integer, 0);
  assert_int_equal(cells[regs].kind, PGC_CELL_INTEGER);
  assert_int_equal(cells[regs].integer, 112);
}

/* The `work` column: right after `runs`, absent for a plain grid, the
 * plan's division of the work when it has one. */
static void test_work_column(void **state) {
  (void)state;
  int runs = -1, work = -1;
  for (int c = 0; c < pgc_result_column_count; ++c) {
    if (strcmp(pgc_result_columns[c].key, "runs") == 0) runs = c;
    if (strcmp(pgc_result_columns[c].key, "work") == 0) work = c;
  }
  assert_true(runs >= 0 && work == runs + 1);
  assert_int_equal(pgc_result_columns[work].show, PGC_SHOW_ALL);

  pgc_result_row row;
  pgc_cell cells[PGC_MAX_COLUMNS];
  pgc_result_row_init(&row, "cublas", 0, 8, 8, 8);
  assert_string_equal(row.work, "");
  pgc_result_row_cells(&row, cells);
  assert_int_equal(cells[work].kind, PGC_CELL_ABSENT);

  /* What pg_plan_describe tells, as the column shows it. */
  pg_plan_info info;
  memset(&info, 0, sizeof info);
  info.splits = 1;
  pgc_work_text(&info, row.work, sizeof row.work);
  assert_string_equal(row.work, ""); /* one block per tile */
  info.splits = 8;
  pgc_work_text(&info, row.work, sizeof row.work);
  assert_string_equal(row.work, "split-K 8");
  info.split_from_row = 1664; /* only the rows below split */
  pgc_work_text(&info, row.work, sizeof row.work);
  assert_string_equal(row.work, "split-K 8 from row 1664");
  info.split_from_row = 0;
  info.split_in_clusters = 1; /* the ranges added up in their clusters */
  pgc_work_text(&info, row.work, sizeof row.work);
  assert_string_equal(row.work, "split-K 8 in clusters");
  info.split_in_clusters = 0;
  info.splits = 1;
  info.stream_k_blocks = 264;
  pgc_work_text(&info, row.work, sizeof row.work);
  assert_string_equal(row.work, "stream-K 264");
  info.splits = 0; /* a plan with nothing to run */
  info.stream_k_blocks = 0;
  pgc_work_text(&info, row.work, sizeof row.work);
  assert_string_equal(row.work, "");
  /* The widest values fit the row's buffer whole. */
  info.splits = 2147483647;
  pgc_work_text(&info, row.work, sizeof row.work);
  assert_string_equal(row.work, "split-K 2147483647");
  info.split_from_row = 2147483647;
  pgc_work_text(&info, row.work, sizeof row.work);
  assert_string_equal(row.work, "split-K 2147483647 from row 2147483647");
  info.split_from_row = 0;
  info.stream_k_blocks = 2147483647;
  pgc_work_text(&info, row.work, sizeof row.work);
  assert_string_equal(row.work, "stream-K 2147483647");

  pgc_result_row_cells(&row, cells);
  assert_int_equal(cells[work].kind, PGC_CELL_TEXT);
  assert_string_equal(cells[work].text, "stream-K 2147483647");
}

static void test_result_rows_relate(void **state) {
  (void)state;
  enum { ROWS = 6 };
  pgc_result_row rows[ROWS];
  pgc_result_row_init(&rows[0], "baseline", 1, 64, 64, 64);
  pgc_result_row_init(&rows[1], "cp_async", 2, 64, 64, 64);
  pgc_result_row_init(&rows[2], "cublas", 1, 64, 64, 64);
  pgc_result_row_init(&rows[3], "cp_async", 2, 128, 128, 128); /* no baseline */
  pgc_result_row_init(&rows[4], "tma", 4, 64, 64, 64);         /* skipped */
  pgc_result_row_init(&rows[5], "cublas_tf32", 1, 64, 64, 64);
  rows[0].median_ms = 2.0;
  rows[1].median_ms = 1.0;
  rows[2].median_ms = 0.5;
  rows[3].median_ms = 3.0;
  rows[5].median_ms = 0.25;
  rows[1].smem_kib = 16.5;
  rows[1].blocks_per_sm = 3;
  pgc_result_rows_relate(rows, ROWS, "baseline", "cublas", "cublas_tf32");
  assert_float_equal(rows[0].x_baseline, 1.0, 1e-12);
  assert_float_equal(rows[1].x_baseline, 2.0, 1e-12);
  assert_float_equal(rows[2].x_baseline, 4.0, 1e-12);
  assert_float_equal(rows[0].x_cublas, 0.25, 1e-12);
  assert_float_equal(rows[1].x_cublas, 0.5, 1e-12);
  assert_float_equal(rows[2].x_cublas, 1.0, 1e-12);
  assert_true(isnan(rows[3].x_baseline) && isnan(rows[3].x_cublas));
  assert_true(isnan(rows[4].x_baseline) && isnan(rows[4].x_cublas));
  /* Against the TF32 tensor-core reference, the same way. */
  assert_float_equal(rows[0].x_cublas_tf32, 0.125, 1e-12);
  assert_float_equal(rows[2].x_cublas_tf32, 0.5, 1e-12);
  assert_float_equal(rows[5].x_cublas_tf32, 1.0, 1e-12);
  assert_float_equal(rows[5].x_cublas, 2.0, 1e-12);
  assert_true(isnan(rows[3].x_cublas_tf32) && isnan(rows[4].x_cublas_tf32));

  /* A bench report of these rows is valid JSON and CSV. */
  pgc_cell cells[ROWS * PGC_MAX_COLUMNS];
  for (int r = 0; r < ROWS; ++r)
    pgc_result_row_cells(&rows[r], &cells[r * pgc_result_column_count]);
  pgc_report report = {"bench", NULL, 0, pgc_result_columns,
                       pgc_result_column_count, cells, ROWS, NULL, 0};
  capture c;
  pgc_print_json(capture_begin(&c), &report);
  char *text = capture_end(&c);
  assert_int_equal(json_check(text), 0);
  assert_non_null(strstr(text, "\"x_baseline\": 2,"));
  assert_non_null(strstr(text, "\"smem_kib\": 16.5, \"blocks_per_sm\": 3,"));
  assert_non_null(strstr(text, "\"smem_kib\": null, \"blocks_per_sm\": null,"));
  free(text);
  pgc_print_csv(capture_begin(&c), &report);
  text = capture_end(&c);
  csv_table t;
  assert_int_equal(csv_read(text, &t), 0);
  assert_int_equal(t.records, 1 + ROWS);
  assert_int_equal(t.fields[0], t.fields[1]);
  int smem = -1, blocks = -1;
  for (int f = 0; f < t.fields[0]; ++f) {
    if (strcmp(t.field[0][f], "smem_kib") == 0) smem = f;
    if (strcmp(t.field[0][f], "blocks_per_sm") == 0) blocks = f;
  }
  assert_true(smem >= 0 && blocks == smem + 1);
  assert_string_equal(t.field[2][smem], "16.5"); /* cp_async, row 1 */
  assert_string_equal(t.field[2][blocks], "3");
  assert_string_equal(t.field[3][smem], ""); /* cublas, row 2 */
  assert_string_equal(t.field[3][blocks], "");
  /* `work`: empty where the plan has one block per tile. */
  int work = -1;
  for (int f = 0; f < t.fields[0]; ++f)
    if (strcmp(t.field[0][f], "work") == 0) work = f;
  assert_true(work >= 0);
  assert_string_equal(t.field[0][work - 1], "runs");
  assert_string_equal(t.field[2][work], "");
  free(text);
}

/* ---- the summary of a shape set ----------------------------------------------- */

/* A run's row at one shape, timed at `ms` (NaN: not timed), else as given. */
static void set_row(pgc_result_row *row, const pgc_run_spec *run, int size,
                    double ms, pgc_verdict verdict) {
  pgc_result_row_init(row, run->variant->name, run->stages, size, size, size);
  row->median_ms = ms;
  pgc_result_row_set_verdict(row, verdict, verdict == PGC_VERDICT_SKIP ? "needs CC 9.0" : NULL);
}

static void test_geomeans(void **state) {
  (void)state;
  enum { RUNS = 6, SHAPES = 3 };
  const pgc_run_spec runs[RUNS] = {
      {pg_variant_find("cublas"), 1},   {pg_variant_find("tma_ws"), 3},
      {pg_variant_find("cp_async"), 2}, {pg_variant_find("cp_async"), 3},
      {pg_variant_find("auto"), 0},     {pg_variant_find("tma"), 4},
  };
  for (int r = 0; r < RUNS; ++r) assert_non_null(runs[r].variant);
  pgc_result_row rows[SHAPES * RUNS];
  pgc_result_row *at[SHAPES] = {&rows[0], &rows[RUNS], &rows[2 * RUNS]};
  /* 64: everything but tma ran. */
  set_row(&at[0][0], &runs[0], 64, 1.0, PGC_VERDICT_PASS);
  set_row(&at[0][1], &runs[1], 64, 2.0, PGC_VERDICT_PASS);  /* × 0.5 */
  set_row(&at[0][2], &runs[2], 64, 4.0, PGC_VERDICT_PASS);  /* × 0.25 */
  set_row(&at[0][3], &runs[3], 64, 1.0, PGC_VERDICT_PASS);  /* × 1 */
  set_row(&at[0][4], &runs[4], 64, 0.5, PGC_VERDICT_PASS);  /* × 2 */
  at[0][4].runs = "tma_ws";
  at[0][4].stages = 3; /* what auto chose: not what tells its runs apart */
  set_row(&at[0][5], &runs[5], 64, NAN, PGC_VERDICT_SKIP);
  /* 128: tma_ws skipped, cp_async at 3 failed its check (timed all the same). */
  set_row(&at[1][0], &runs[0], 128, 2.0, PGC_VERDICT_PASS);
  set_row(&at[1][1], &runs[1], 128, NAN, PGC_VERDICT_SKIP);
  set_row(&at[1][2], &runs[2], 128, 4.0, PGC_VERDICT_PASS); /* × 0.5 */
  set_row(&at[1][3], &runs[3], 128, 1.0, PGC_VERDICT_FAIL); /* × 2, left out */
  set_row(&at[1][4], &runs[4], 128, 1.0, PGC_VERDICT_PASS); /* × 2 */
  at[1][4].runs = "tma";
  at[1][4].stages = 4;
  set_row(&at[1][5], &runs[5], 128, NAN, PGC_VERDICT_SKIP);
  /* 256: cuBLAS failed to run, so nothing is measured against it here. */
  for (int r = 0; r < RUNS; ++r)
    set_row(&at[2][r], &runs[r], 256, r == 0 ? NAN : 1.0, r == 0 ? PGC_VERDICT_ERROR : PGC_VERDICT_PASS);
  pgc_result_rows_relate(rows, SHAPES * RUNS, "baseline", "cublas", "cublas_tf32");

  pgc_geomean means[RUNS];
  assert_int_equal(pgc_geomeans(rows, RUNS, SHAPES, "cublas", means), 2);
  assert_int_equal(means[0].shapes, 2);
  assert_float_equal(means[0].geomean, 1.0, 1e-12);
  assert_int_equal(means[1].shapes, 1);
  assert_float_equal(means[1].geomean, 0.5, 1e-12);
  assert_int_equal(means[2].shapes, 2);
  assert_float_equal(means[2].geomean, sqrt(0.25 * 0.5), 1e-12);
  assert_int_equal(means[3].shapes, 1);
  assert_float_equal(means[3].geomean, 1.0, 1e-12);
  assert_int_equal(means[4].shapes, 2);
  assert_float_equal(means[4].geomean, 2.0, 1e-12);
  assert_int_equal(means[5].shapes, 0);
  assert_true(isnan(means[5].geomean));

  static const char expected[] =
      "geometric mean of × cuBLAS over 2 shapes: tma_ws 0.50 (1 shape), "
      "cp_async at 2 stages 0.35, cp_async at 3 stages 1.00 (1 shape), auto 2.00, "
      "tma - (0 shapes)";
  char note[512];
  size_t len = pgc_geomean_note(note, sizeof note, runs, means, RUNS, 2, "cublas");
  assert_string_equal(note, expected);
  assert_int_equal(len, strlen(expected));
  /* Measured without a buffer; cut short, but terminated, in a small one. */
  assert_int_equal(pgc_geomean_note(NULL, 0, runs, means, RUNS, 2, "cublas"), len);
  char small[16];
  assert_int_equal(pgc_geomean_note(small, sizeof small, runs, means, RUNS, 2, "cublas"),
                   len);
  assert_int_equal(strlen(small), sizeof small - 1);
  assert_memory_equal(small, expected, sizeof small - 1);

  /* cuBLAS timed nowhere (or not asked for): the note says there is no mean. */
  pgc_geomean_note(note, sizeof note, runs, means, RUNS, 0, "cublas");
  assert_string_equal(note, "geometric mean of × cuBLAS: none, cublas was timed at no shape");
  /* Every run at every shape: no counts after the means; one shape. */
  pgc_geomean all[2] = {{1.0, 1}, {0.871, 1}};
  pgc_geomean_note(note, sizeof note, &runs[3], all, 2, 1, "cublas");
  assert_string_equal(note, "geometric mean of × cuBLAS over 1 shape: cp_async 1.00, auto 0.87");
  /* Nothing beside cuBLAS: no note. */
  assert_int_equal(pgc_geomean_note(note, sizeof note, runs, means, 1, 2, "cublas"), 0);
  assert_string_equal(note, "");
}

/* ---- the arithmetic behind TFLOP/s and % of peak ------------------------------ */

static void test_flop_arithmetic(void **state) {
  (void)state;
  assert_int_equal(pgc_fp32_lanes_per_sm(7, 0), 64);
  assert_int_equal(pgc_fp32_lanes_per_sm(7, 5), 64);
  assert_int_equal(pgc_fp32_lanes_per_sm(8, 0), 64);
  assert_int_equal(pgc_fp32_lanes_per_sm(8, 6), 128);
  assert_int_equal(pgc_fp32_lanes_per_sm(8, 9), 128);
  assert_int_equal(pgc_fp32_lanes_per_sm(9, 0), 128);
  assert_int_equal(pgc_fp32_lanes_per_sm(10, 0), 128);
  assert_int_equal(pgc_fp32_lanes_per_sm(6, 1), 0);
  /* H200: 132 SMs x 128 lanes x 2 x 1980 MHz. */
  assert_float_equal(pgc_ffma_peak_tflops(9, 0, 132, 1980.0), 66.90816, 1e-9);
  assert_true(isnan(pgc_ffma_peak_tflops(9, 0, 132, 0.0)));
  assert_true(isnan(pgc_ffma_peak_tflops(6, 1, 20, 1500.0)));
  /* The write-up's baseline: 2048^3 in 2.296 ms is 7484 GFLOPS. */
  assert_float_equal(pgc_gemm_tflops(2048, 2048, 2048, 2.296), 7.4825, 1e-3);
  assert_true(isnan(pgc_gemm_tflops(64, 64, 64, 0.0)));
  char buf[16];
  pgc_cuda_version_text(12080, buf, sizeof buf);
  assert_string_equal(buf, "12.8");
  pgc_cuda_version_text(13000, buf, sizeof buf);
  assert_string_equal(buf, "13.0");
  pgc_cuda_version_text(0, buf, sizeof buf);
  assert_string_equal(buf, "unknown");
}

/* ---- write errors ------------------------------------------------------------ */

/* A stream to /dev/full fails every write: the check says so once, and a
 * stream whose writes reached their file passes. */
static void test_output_check(void **state) {
  (void)state;
  FILE *full = pgc_output_open("/dev/full");
  if (!full) skip();
  for (int i = 0; i < 1000; ++i) fprintf(full, "row %d of a long report\n", i);
  assert_int_equal(pgc_output_check(full, "the report"), -1);
  assert_int_equal(pgc_output_check(full, "the report"), 0); /* told once */
  fputs("more\n", full);
  assert_int_equal(pgc_output_close(full, "/dev/full"), -1);

  char *text = NULL;
  size_t size = 0;
  FILE *memory = open_memstream(&text, &size);
  assert_non_null(memory);
  fputs("all of it\n", memory);
  assert_int_equal(pgc_output_check(memory, "the report"), 0);
  assert_int_equal(pgc_output_close(memory, "memory"), 0);
  assert_string_equal(text, "all of it\n");
  free(text);
}

/* The reason is the first failed write's, wherever it failed: a page longer
 * than stdio's buffer fails inside fprintf, long before the last flush, and
 * a page shorter than it fails at the flush. Both are ENOSPC on /dev/full. */
static void test_output_first_errno(void **state) {
  (void)state;
  const int lines[] = {1, 10 * BUFSIZ};
  for (int t = 0; t < 2; ++t) {
    FILE *full = pgc_output_open("/dev/full");
    if (!full) skip();
    for (int i = 0; i < lines[t]; ++i) fprintf(full, "row %d\n", i);
    if (lines[t] > 1) assert_true(ferror(full)); /* failed before any flush of ours */
    assert_int_equal(pgc_output_error(full), ENOSPC);
    assert_int_equal(pgc_output_close(full, "/dev/full"), -1);
  }
  /* A file that takes everything: no error. */
  char path[] = "/tmp/pgc-output-XXXXXX";
  const int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  FILE *file = pgc_output_open(path);
  assert_non_null(file);
  for (int i = 0; i < 10 * BUFSIZ; ++i) fprintf(file, "row %d\n", i);
  assert_int_equal(pgc_output_error(file), 0);
  assert_int_equal(pgc_output_close(file, path), 0);
  FILE *back = fopen(path, "r");
  assert_non_null(back);
  int last = -1, rows = 0, value = 0;
  while (fscanf(back, "row %d\n", &value) == 1) last = value, ++rows;
  fclose(back);
  unlink(path);
  assert_int_equal(rows, 10 * BUFSIZ);
  assert_int_equal(last, 10 * BUFSIZ - 1);
  /* A path that cannot be opened: NULL and its errno. */
  errno = 0;
  assert_null(pgc_output_open("/nonexistent-dir/file"));
  assert_int_equal(errno, ENOENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_csv_reads_back),
      cmocka_unit_test(test_csv_field_quoting),
      cmocka_unit_test(test_json_parser_rejects_bad_text),
      cmocka_unit_test(test_json_is_valid_and_escaped),
      cmocka_unit_test(test_json_string_escaper),
      cmocka_unit_test(test_json_empty_report),
      cmocka_unit_test(test_table_is_aligned),
      cmocka_unit_test(test_result_row),
      cmocka_unit_test(test_work_column),
      cmocka_unit_test(test_result_rows_relate),
      cmocka_unit_test(test_geomeans),
      cmocka_unit_test(test_flop_arithmetic),
      cmocka_unit_test(test_output_check),
      cmocka_unit_test(test_output_first_errno),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
