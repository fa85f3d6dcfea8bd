/* Report printers of the pipegemm tool (src/measure/report.c): the text table is
 * aligned, CSV reads back field for field through an RFC 4180 reader, JSON
 * passes a strict structural parser, and absent numbers come out as "-",
 * empty fields and null; and the report streams keep the errno of a failed
 * write (src/cli/output.c). The bench result row is test_cli_results.c's.
 * Printers write into memory streams; no GPU. */
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

#include "report_readers.h"

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
                       s->cells, SAMPLE_ROWS, sample_notes, 1, 0, NULL, NULL};
  s->report = report;
}

static char *print_sample(pgc_format format) {
  sample s;
  sample_build(&s);
  capture c;
  pgc_print_report(capture_begin(&c), format, &s.report);
  return capture_end(&c);
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
                      0, NULL, 0, 0, NULL, NULL};
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

/* ---- a table held to a width ------------------------------------------------- */

/* Lines of `text` (split in place) longer than `width` columns; each
 * printed. */
static int lines_over(char *text, int width) {
  int over = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (column_of(line, strlen(line)) <= width) continue;
    print_error("over %d columns: '%s'\n", width, line);
    ++over;
  }
  return over;
}

/* `text` without its blanks: what wrapping leaves of it, whichever lines
 * it falls on. */
static char *without_blanks(const char *text) {
  char *out = malloc(strlen(text) + 1);
  assert_non_null(out);
  size_t n = 0;
  for (const char *p = text; *p; ++p)
    if (*p != ' ' && *p != '\n') out[n++] = *p;
  out[n] = '\0';
  return out;
}

#define FIT_ROWS 2
static const pgc_column fit_columns[] = {
    {"name", "name", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    {"what", "what", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    {"why", "why", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
};
#define FIT_COLUMNS ((int)(sizeof fit_columns / sizeof fit_columns[0]))
static const char fit_long[] = "a cell far longer than any column of a table thirty wide";
static const char fit_word[] =
    "Unbreakable_word_longer_than_any_line_of_the_details_below_it";
static const char *const fit_notes[] = {
    "a note of many words that must be wrapped between them to fit the width"};

/* A report of two rows whose second cells cannot fit 30 columns, with
 * details under both and a fact too long for the width. */
static char *print_fitted(int max_width, const int *min_widths, int with_details) {
  static const char *const details[FIT_ROWS] = {
      "first line of details, long enough to be wrapped at thirty\nsecond", NULL};
  const char *const *details_of = with_details ? details : NULL;
  pgc_fact facts[] = {
      {"gpu", "GPU", pgc_cell_text("a name longer than the width of thirty"), 0, "!",
       PGC_SHOW_ALL},
  };
  pgc_cell cells[FIT_ROWS * FIT_COLUMNS] = {
      pgc_cell_text("one"), pgc_cell_text(fit_long), pgc_cell_text("short"),
      pgc_cell_text("two"), pgc_cell_text("ok"),     pgc_cell_text(fit_word),
  };
  pgc_report report = {"fit", facts, 1, fit_columns, FIT_COLUMNS, cells, FIT_ROWS,
                       fit_notes, 1, max_width, min_widths, details_of};
  capture c;
  pgc_print_table(capture_begin(&c), &report);
  return capture_end(&c);
}

static void test_table_fits_max_width(void **state) {
  (void)state;
  static const int narrowing[FIT_COLUMNS] = {0, 4, 6};
  char *text = print_fitted(30, narrowing, 0);
  char *copy = strdup(text);
  assert_int_equal(lines_over(copy, 30), 0);
  free(copy);
  /* The fact's value cut short before its unit; the long cells cut short,
   * each ending in the ellipsis; the note whole, over several lines. */
  assert_non_null(strstr(text, "GPU: a name longer than the\xe2\x80\xa6 !\n"));
  assert_null(strstr(text, fit_long));
  assert_non_null(strstr(text, "one   a cell"));
  assert_int_equal(strncmp(strstr(text, "one   ") + strlen("one   "), fit_long, 4), 0);
  assert_non_null(strstr(text, "\xe2\x80\xa6  short"));
  char *bare = without_blanks(text), *note = without_blanks(fit_notes[0]);
  assert_non_null(strstr(bare, note));
  free(bare);
  free(note);
  free(text);

  /* Without max_width, or without columns that may narrow, nothing is cut. */
  text = print_fitted(0, narrowing, 0);
  assert_non_null(strstr(text, fit_long));
  assert_non_null(strstr(text, fit_word));
  assert_null(strstr(text, "\xe2\x80\xa6"));
  free(text);
  text = print_fitted(30, NULL, 0);
  assert_non_null(strstr(text, fit_long));
  free(text);
}

static void test_table_details(void **state) {
  (void)state;
  static const int narrowing[FIT_COLUMNS] = {0, 4, 6};
  char *text = print_fitted(30, narrowing, 1);
  char *copy = strdup(text);
  assert_int_equal(lines_over(copy, 30), 0);
  free(copy);
  /* Under the first row: its cut cell whole after its title, then its
   * details, a line for each part, every line indented; a blank line
   * before the second row, whose cut cell is told whole too, broken where
   * the lines end since no line holds it. */
  const char *first = strstr(text, "\none ");
  const char *second = strstr(text, "\ntwo ");
  assert_non_null(first);
  assert_non_null(second);
  assert_true(first < second);
  assert_memory_equal(second - 1, "\n\n", 2);
  assert_non_null(strstr(first, "\n    what: a cell"));
  assert_non_null(strstr(first, "\n    first line"));
  assert_non_null(strstr(first, "\n    second\n"));
  char *block = strndup(first, (size_t)(second - first));
  char *bare = without_blanks(block);
  char *want = without_blanks("what: a cell far longer than any column of a table thirty wide"
                              "first line of details, long enough to be wrapped at thirty"
                              "second");
  assert_non_null(strstr(bare, want));
  free(block);
  free(bare);
  free(want);
  bare = without_blanks(second);
  want = without_blanks(fit_word);
  assert_non_null(strstr(bare, want));
  for (const char *line = strchr(second + 1, '\n') + 1; *line != '\n';
       line = strchr(line, '\n') + 1)
    assert_memory_equal(line, "    ", 4);
  free(bare);
  free(want);
  free(text);
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
      cmocka_unit_test(test_table_fits_max_width),
      cmocka_unit_test(test_table_details),
      cmocka_unit_test(test_output_check),
      cmocka_unit_test(test_output_first_errno),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
