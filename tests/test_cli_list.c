/* `pipegemm list` (src/cli/list.c) against the registry itself: the table
 * within its width, every entry a row and its technique whole or cut short
 * with "…"; --long giving under each row what the table cut and the
 * description; CSV and JSON carrying the technique and the description
 * whole. Printed into memory streams; with or without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/commands.h"
#include "report_readers.h"

#define ELLIPSIS "\xe2\x80\xa6"

static pgc_options list_options(const char *format, int long_listing) {
  char *argv[] = {(char *)"pipegemm", (char *)"list", (char *)"--format", (char *)format, NULL};
  pgc_options opts;
  char err[PGC_ERROR_SIZE];
  assert_int_equal(pgc_parse_args(4, argv, &opts, err, sizeof err), PGC_EXIT_OK);
  opts.long_listing = long_listing;
  return opts;
}

/* What list prints at `width`; the caller frees it. */
static char *print_list(const char *format, int long_listing, int width) {
  const pgc_options opts = list_options(format, long_listing);
  capture c;
  assert_int_equal(pgc_list_print(capture_begin(&c), &opts, width), PGC_EXIT_OK);
  return capture_end(&c);
}

/* Terminal columns of the first `len` bytes of `text`: continuation bytes
 * of UTF-8 take none. */
static int columns_of(const char *text, size_t len) {
  int columns = 0;
  for (size_t i = 0; i < len; ++i)
    if (((unsigned char)text[i] & 0xC0) != 0x80) ++columns;
  return columns;
}

/* Every line of `text` within `width` columns; each one over printed. */
static void expect_lines_within(const char *text, int width) {
  int over = 0;
  for (const char *line = text; *line;) {
    const char *end = strchr(line, '\n');
    const size_t len = end ? (size_t)(end - line) : strlen(line);
    if (columns_of(line, len) > width) {
      print_error("%d columns, over %d: '%.*s'\n", columns_of(line, len), width, (int)len, line);
      ++over;
    }
    line += len + (end ? 1 : 0);
  }
  assert_int_equal(over, 0);
}

/* The line of `text` that starts with `name` and a blank (a table row). */
static const char *row_of(const char *text, const char *name) {
  const size_t len = strlen(name);
  for (const char *line = text; line; line = strchr(line, '\n')) {
    if (*line == '\n') ++line;
    if (strncmp(line, name, len) == 0 && line[len] == ' ') return line;
  }
  return NULL;
}

/* `text` without its blanks, so that wrapped text compares with the one
 * line it came from. */
static char *without_blanks(const char *text, size_t len) {
  char *out = malloc(len + 1);
  assert_non_null(out);
  size_t n = 0;
  for (size_t i = 0; i < len; ++i)
    if (text[i] != ' ' && text[i] != '\n') out[n++] = text[i];
  out[n] = '\0';
  return out;
}

static const int widths[] = {100, 80, 60};

static void test_table_within_width(void **state) {
  (void)state;
  for (size_t w = 0; w < sizeof widths / sizeof widths[0]; ++w) {
    char *text = print_list("table", 0, widths[w]);
    expect_lines_within(text, widths[w]);
    assert_non_null(strstr(text, "\nvariant "));
    for (int i = 0; i < pg_variant_count(); ++i) {
      const pg_variant_info *v = pg_variant_at(i);
      const char *row = row_of(text, v->name);
      if (row == NULL) fail_msg("no row for %s at %d columns", v->name, widths[w]);
      const size_t len = strcspn(row, "\n");
      /* The technique ends the row: whole, or cut short with the
       * ellipsis after as much of it as fits. */
      const char *cut = strstr(row, ELLIPSIS);
      const size_t whole = strlen(v->technique);
      if (cut == NULL || cut - row > (ptrdiff_t)len) {
        if (len < whole || strncmp(row + len - whole, v->technique, whole) != 0)
          fail_msg("%s's row at %d columns does not end in its technique: '%.*s'", v->name,
                   widths[w], (int)len, row);
        continue;
      }
      assert_int_equal(cut + strlen(ELLIPSIS) - row, (ptrdiff_t)len);
      /* The longest start of the technique that ends where the cut does. */
      const size_t shown_end = (size_t)(cut - row);
      size_t start = 0;
      while (start < shown_end && strncmp(row + start, v->technique, shown_end - start) != 0)
        ++start;
      if (shown_end - start < 8 || shown_end - start >= whole)
        fail_msg("%s's row at %d columns cuts no start of its technique: '%.*s'", v->name,
                 widths[w], (int)len, row);
    }
    free(text);
  }
}

/* Under each row, --long gives the technique whole (in the row, or after
 * "technique:" below it), the kind, and the description; every line within
 * the width. */
static void test_long_gives_every_entry_whole(void **state) {
  (void)state;
  for (size_t w = 0; w < sizeof widths / sizeof widths[0]; ++w) {
    char *text = print_list("table", 1, widths[w]);
    expect_lines_within(text, widths[w]);
    for (int i = 0; i < pg_variant_count(); ++i) {
      const pg_variant_info *v = pg_variant_at(i);
      const char *row = row_of(text, v->name);
      if (row == NULL) fail_msg("no row for %s", v->name);
      /* The row and its details: up to the blank line after them. */
      const char *end = strstr(row, "\n\n");
      char *block = without_blanks(row, end ? (size_t)(end - row) : strlen(row));
      char *technique = without_blanks(v->technique, strlen(v->technique));
      if (strstr(block, technique) == NULL)
        fail_msg("--long at %d columns does not give %s's technique whole", widths[w],
                 v->name);
      char *kind = without_blanks(pg_kind_name(v->kind), strlen(pg_kind_name(v->kind)));
      assert_non_null(strstr(block, kind));
      if (v->description != NULL) {
        char *description = without_blanks(v->description, strlen(v->description));
        if (strstr(block, description) == NULL)
          fail_msg("--long at %d columns does not give %s's description", widths[w], v->name);
        free(description);
      }
      free(technique);
      free(kind);
      free(block);
    }
    free(text);
  }
  /* Without --long, no details: each row followed by the next. */
  char *text = print_list("table", 0, 100);
  const char *second = row_of(text, pg_variant_at(1)->name);
  assert_non_null(second);
  assert_int_equal(second[-1], '\n');
  assert_int_not_equal(second[-2], '\n');
  free(text);
}

/* The column of `key` in the CSV's header record; fails without one. */
static int csv_column(const csv_table *t, const char *key) {
  for (int f = 0; f < t->fields[0]; ++f)
    if (strcmp(t->field[0][f], key) == 0) return f;
  fail_msg("the list CSV has no %s column", key);
  return -1;
}

static void test_csv_carries_technique_and_description(void **state) {
  (void)state;
  char *text = print_list("csv", 1, 100); /* --long changes nothing here */
  csv_table *t = malloc(sizeof *t);
  assert_non_null(t);
  assert_int_equal(csv_read(text, t), 0);
  const int name = csv_column(t, "name");
  const int technique = csv_column(t, "technique");
  const int description = csv_column(t, "description");
  csv_column(t, "runs_here");
  assert_int_equal(t->records, 1 + pg_variant_count());
  for (int i = 0; i < pg_variant_count(); ++i) {
    const pg_variant_info *v = pg_variant_at(i);
    assert_int_equal(t->fields[1 + i], t->fields[0]);
    assert_string_equal(t->field[1 + i][name], v->name);
    assert_string_equal(t->field[1 + i][technique], v->technique);
    assert_string_equal(t->field[1 + i][description], v->description ? v->description : "");
  }
  free(t);
  free(text);
}

/* `"key": value` as the JSON printer writes a member; the caller frees it. */
static char *json_member(const char *key, const char *text) {
  capture c;
  FILE *out = capture_begin(&c);
  fprintf(out, "\"%s\": ", key);
  if (text)
    pgc_print_json_string(out, text);
  else
    fputs("null", out);
  return capture_end(&c);
}

static void test_json_carries_technique_and_description(void **state) {
  (void)state;
  char *text = print_list("json", 0, 100);
  assert_int_equal(json_check(text), 0);
  for (int i = 0; i < pg_variant_count(); ++i) {
    const pg_variant_info *v = pg_variant_at(i);
    char *technique = json_member("technique", v->technique);
    char *description = json_member("description", v->description);
    if (strstr(text, technique) == NULL) fail_msg("no %s in the list JSON", technique);
    if (strstr(text, description) == NULL)
      fail_msg("no %s (%s's) in the list JSON", description, v->name);
    free(technique);
    free(description);
  }
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table_within_width),
      cmocka_unit_test(test_long_gives_every_entry_whole),
      cmocka_unit_test(test_csv_carries_technique_and_description),
      cmocka_unit_test(test_json_carries_technique_and_description),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
