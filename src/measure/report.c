/* Text table, CSV and JSON printers for pgc_report, and the bench result row.
 * Machine formats print reals with enough digits to round-trip a float
 * measurement; the text table rounds to what a reader compares. */
#include "report.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Nine significant digits reproduce any FP32 value exactly, and every event
 * timing starts as a float. */
#define DATA_REAL_FORMAT "%.9g"
/* Three significant digits for PGC_SCIENTIFIC cells. */
#define SCIENTIFIC_FORMAT "%.2e"
/* Spaces between two columns of the text table. */
#define COLUMN_GAP 2
/* Room for any one formatted number. */
#define NUMBER_TEXT_SIZE 64
/* What ends a cell or a value cut short (a report's max_width): one
 * terminal column, and plainly not part of the text. */
#define ELLIPSIS "\xe2\x80\xa6"
/* Where the details under a row start. */
#define DETAIL_INDENT 4

const char *pgc_on_off(int flag) { return flag ? "on" : "off"; }

const char *pgc_inputs_name(int inputs) {
  static const char *const names[] = {"uniform", "wide", "tiny"};
  return inputs >= 0 && inputs < (int)(sizeof names / sizeof names[0]) ? names[inputs] : NULL;
}

pgc_cell pgc_cell_absent(void) {
  pgc_cell cell = {PGC_CELL_ABSENT, NULL, 0, 0, 0.0};
  return cell;
}

pgc_cell pgc_cell_text(const char *text) {
  pgc_cell cell = pgc_cell_absent();
  if (text) {
    cell.kind = PGC_CELL_TEXT;
    cell.text = text;
  }
  return cell;
}

pgc_cell pgc_cell_int(long long value) {
  pgc_cell cell = pgc_cell_absent();
  cell.kind = PGC_CELL_INTEGER;
  cell.integer = value;
  return cell;
}

pgc_cell pgc_cell_uint(unsigned long long value) {
  pgc_cell cell = pgc_cell_absent();
  cell.kind = PGC_CELL_UNSIGNED;
  cell.unsigned_integer = value;
  return cell;
}

pgc_cell pgc_cell_real(double value) {
  pgc_cell cell = pgc_cell_absent();
  cell.kind = PGC_CELL_REAL;
  cell.real = value;
  return cell;
}

static int cell_is_absent(const pgc_cell *cell) {
  return cell->kind == PGC_CELL_ABSENT ||
         (cell->kind == PGC_CELL_REAL && !isfinite(cell->real));
}

/* Columns on a terminal: UTF-8 continuation bytes take none, so that
 * "× baseline" lines up with ASCII titles. */
static int display_width(const char *text) {
  int width = 0;
  for (const unsigned char *p = (const unsigned char *)text; *p; ++p)
    if ((*p & 0xC0) != 0x80) ++width;
  return width;
}

static void print_spaces(FILE *out, int count) {
  for (int i = 0; i < count; ++i) fputc(' ', out);
}

/* A line break or tab inside a cell would break the table's lines and
 * columns: control characters print as one space each (display_width counts
 * them as one column too). */
static void print_table_bytes(FILE *out, const char *text, size_t len) {
  const unsigned char *p = (const unsigned char *)text;
  for (size_t i = 0; i < len; ++i) fputc(p[i] < 0x20 || p[i] == 0x7f ? ' ' : p[i], out);
}

static void print_table_text(FILE *out, const char *text) {
  print_table_bytes(out, text, strlen(text));
}

/* How many of the first `len` bytes of `text` fill at most `columns`
 * terminal columns, in whole characters. */
static size_t bytes_within(const char *text, size_t len, int columns) {
  const unsigned char *p = (const unsigned char *)text;
  int used = 0;
  size_t i = 0;
  for (; i < len; ++i) {
    if ((p[i] & 0xC0) == 0x80) continue; /* the rest of a character */
    if (used == columns) break;
    ++used;
  }
  return i;
}

/* Columns the first `len` bytes of `text` take (display_width of a part). */
static int width_of(const char *text, size_t len) {
  int width = 0;
  for (size_t i = 0; i < len; ++i)
    if (((unsigned char)text[i] & 0xC0) != 0x80) ++width;
  return width;
}

/* `text` in at most `width` columns: whole where it fits, else cut short
 * and ending in the ellipsis. Returns the columns printed. */
static int print_fitted(FILE *out, const char *text, int width) {
  const int whole = display_width(text);
  if (whole <= width) {
    print_table_text(out, text);
    return whole;
  }
  if (width < 1) return 0;
  print_table_bytes(out, text, bytes_within(text, strlen(text), width - 1));
  fputs(ELLIPSIS, out);
  return width;
}

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* `text` in lines of at most `width` columns (0: any length), each after
 * `indent` spaces, broken between words; a word longer than a line is
 * broken where the line ends, so that no line is longer. Blanks between
 * words print as one space; a text of blanks prints nothing. */
static void print_wrapped(FILE *out, const char *text, int indent, int width) {
  const int room = width <= 0 ? INT_MAX : width - indent > 0 ? width - indent : 1;
  const char *p = text;
  int used = -1; /* columns on the line after its indent; -1: no line begun */
  for (;;) {
    while (is_blank(*p)) ++p;
    if (*p == '\0') break;
    size_t len = 0;
    while (p[len] != '\0' && !is_blank(p[len])) ++len;
    int word = width_of(p, len);
    if (used >= 0 && used + 1 + word > room) {
      fputc('\n', out);
      used = -1;
    }
    if (used < 0) {
      print_spaces(out, indent);
      used = 0;
    } else {
      fputc(' ', out);
      ++used;
    }
    while (word > room - used) { /* only at a line's start: too long for any line */
      const size_t part = bytes_within(p, len, room - used);
      print_table_bytes(out, p, part);
      fputc('\n', out);
      print_spaces(out, indent);
      used = 0;
      p += part;
      len -= part;
      word = width_of(p, len);
    }
    print_table_bytes(out, p, len);
    used += word;
    p += len;
  }
  if (used >= 0) fputc('\n', out);
}

/* A number as the text table shows it; text cells are returned as they are.
 * `buf` must hold NUMBER_TEXT_SIZE bytes. */
static const char *table_text(const pgc_cell *cell, int decimals, char *buf) {
  if (cell_is_absent(cell)) return "-";
  switch (cell->kind) {
    case PGC_CELL_TEXT: return cell->text;
    case PGC_CELL_INTEGER:
      snprintf(buf, NUMBER_TEXT_SIZE, "%lld", cell->integer);
      return buf;
    case PGC_CELL_UNSIGNED:
      snprintf(buf, NUMBER_TEXT_SIZE, "%llu", cell->unsigned_integer);
      return buf;
    case PGC_CELL_REAL:
      if (decimals == PGC_SCIENTIFIC)
        snprintf(buf, NUMBER_TEXT_SIZE, SCIENTIFIC_FORMAT, cell->real);
      else
        snprintf(buf, NUMBER_TEXT_SIZE, "%.*f", decimals, cell->real);
      return buf;
    default: return "-";
  }
}

/* A number as CSV and JSON show it; NULL for an absent cell. */
static const char *data_number_text(const pgc_cell *cell, char *buf) {
  if (cell_is_absent(cell)) return NULL;
  switch (cell->kind) {
    case PGC_CELL_INTEGER:
      snprintf(buf, NUMBER_TEXT_SIZE, "%lld", cell->integer);
      return buf;
    case PGC_CELL_UNSIGNED:
      snprintf(buf, NUMBER_TEXT_SIZE, "%llu", cell->unsigned_integer);
      return buf;
    case PGC_CELL_REAL:
      snprintf(buf, NUMBER_TEXT_SIZE, DATA_REAL_FORMAT, cell->real);
      return buf;
    default: return NULL;
  }
}

/* ---- text table ----------------------------------------------------------- */

static void print_table_facts(FILE *out, const pgc_report *report) {
  int label_width = 0, shown = 0;
  for (int i = 0; i < report->fact_count; ++i) {
    const pgc_fact *fact = &report->facts[i];
    if (!(fact->show & PGC_SHOW_TABLE)) continue;
    int width = display_width(fact->label);
    if (width > label_width) label_width = width;
    ++shown;
  }
  if (shown == 0) return;
  for (int i = 0; i < report->fact_count; ++i) {
    const pgc_fact *fact = &report->facts[i];
    if (!(fact->show & PGC_SHOW_TABLE)) continue;
    char buf[NUMBER_TEXT_SIZE];
    const char *value = table_text(&fact->value, fact->decimals, buf);
    const char *unit = fact->unit && !cell_is_absent(&fact->value) ? fact->unit : NULL;
    print_table_text(out, fact->label);
    fputc(':', out);
    print_spaces(out, label_width - display_width(fact->label) + 1);
    /* The value starts after the label, its colon and a space. */
    int room = report->max_width - (label_width + 2) - (unit ? 1 + display_width(unit) : 0);
    if (report->max_width > 0)
      print_fitted(out, value, room);
    else
      print_table_text(out, value);
    if (unit) fprintf(out, " %s", unit);
    fputc('\n', out);
  }
  fputc('\n', out);
}

static void print_table_cell(FILE *out, const char *text, int width,
                             pgc_align align, int last) {
  const int shown = display_width(text) < width ? display_width(text) : width;
  int pad = width - shown;
  if (align == PGC_ALIGN_RIGHT) print_spaces(out, pad);
  print_fitted(out, text, width);
  /* No trailing blanks at the end of a line. */
  if (align == PGC_ALIGN_LEFT && !last) print_spaces(out, pad);
  if (!last) print_spaces(out, COLUMN_GAP);
}

/* Narrows the columns that may narrow (min_widths) until a line fits
 * max_width, a column at a time, the one with the most columns above its
 * least first, so that the least given is what each keeps longest. Stops
 * where none may narrow further (a column to its title, the last to its
 * least alone). */
static void narrow_to_fit(const pgc_report *report, const int *shown, int *width,
                          int count) {
  if (report->max_width <= 0 || report->min_widths == NULL || count == 0) return;
  int least[PGC_MAX_COLUMNS];
  int total = (count - 1) * COLUMN_GAP;
  for (int i = 0; i < count; ++i) {
    const int asked = report->min_widths[shown[i]];
    const int title = display_width(report->columns[shown[i]].title);
    /* The last column may cut its title too (it has the line's end to
     * itself); the others keep theirs whole. */
    least[i] = asked <= 0         ? width[i]
               : i == count - 1   ? asked
               : asked > title    ? asked
               : title > 0        ? title
                                  : 1;
    total += width[i];
  }
  while (total > report->max_width) {
    int most = -1;
    for (int i = 0; i < count; ++i)
      if (width[i] > least[i] && (most < 0 || width[i] - least[i] > width[most] - least[most]))
        most = i;
    if (most < 0) return;
    --width[most];
    --total;
  }
}

/* Under row r: each cell the table cut short, whole after its column's
 * title, then the row's details, a line for each '\n'-separated part. */
static void print_row_details(FILE *out, const pgc_report *report, int r, const int *shown,
                              const int *width, int count) {
  for (int i = 0; i < count; ++i) {
    const pgc_column *column = &report->columns[shown[i]];
    const pgc_cell *cell = &report->cells[(size_t)r * report->column_count + shown[i]];
    char buf[NUMBER_TEXT_SIZE];
    const char *text = table_text(cell, column->decimals, buf);
    if (display_width(text) <= width[i]) continue;
    const size_t size = strlen(column->title) + strlen(text) + sizeof ": ";
    char *whole = malloc(size);
    if (whole == NULL) continue; /* the table's cut cell stands */
    snprintf(whole, size, "%s: %s", column->title, text);
    print_wrapped(out, whole, DETAIL_INDENT, report->max_width);
    free(whole);
  }
  const char *detail = report->row_details[r];
  if (detail == NULL) return;
  for (;;) {
    const char *end = strchr(detail, '\n');
    const size_t len = end ? (size_t)(end - detail) : strlen(detail);
    char *part = malloc(len + 1);
    if (part != NULL) {
      memcpy(part, detail, len);
      part[len] = '\0';
      print_wrapped(out, part, DETAIL_INDENT, report->max_width);
      free(part);
    }
    if (end == NULL) return;
    detail = end + 1;
  }
}

void pgc_print_table(FILE *out, const pgc_report *report) {
  print_table_facts(out, report);
  int shown[PGC_MAX_COLUMNS];
  int width[PGC_MAX_COLUMNS];
  int shown_count = 0;
  for (int c = 0; c < report->column_count && shown_count < PGC_MAX_COLUMNS; ++c) {
    const pgc_column *column = &report->columns[c];
    if (!(column->show & PGC_SHOW_TABLE)) continue;
    int w = display_width(column->title);
    for (int r = 0; r < report->row_count; ++r) {
      char buf[NUMBER_TEXT_SIZE];
      const pgc_cell *cell = &report->cells[(size_t)r * report->column_count + c];
      int cw = display_width(table_text(cell, column->decimals, buf));
      if (cw > w) w = cw;
    }
    shown[shown_count] = c;
    width[shown_count] = w;
    ++shown_count;
  }
  narrow_to_fit(report, shown, width, shown_count);
  if (shown_count > 0) {
    for (int i = 0; i < shown_count; ++i) {
      const pgc_column *column = &report->columns[shown[i]];
      print_table_cell(out, column->title, width[i], column->align,
                       i == shown_count - 1);
    }
    fputc('\n', out);
    for (int i = 0; i < shown_count; ++i) {
      for (int j = 0; j < width[i]; ++j) fputc('-', out);
      if (i != shown_count - 1) print_spaces(out, COLUMN_GAP);
    }
    fputc('\n', out);
    for (int r = 0; r < report->row_count; ++r) {
      if (report->row_details && r > 0) fputc('\n', out);
      for (int i = 0; i < shown_count; ++i) {
        const pgc_column *column = &report->columns[shown[i]];
        const pgc_cell *cell =
            &report->cells[(size_t)r * report->column_count + shown[i]];
        char buf[NUMBER_TEXT_SIZE];
        print_table_cell(out, table_text(cell, column->decimals, buf), width[i],
                         column->align, i == shown_count - 1);
      }
      fputc('\n', out);
      if (report->row_details) print_row_details(out, report, r, shown, width, shown_count);
    }
  }
  if (report->note_count > 0) {
    fputc('\n', out);
    for (int i = 0; i < report->note_count; ++i) {
      if (report->max_width > 0) {
        print_wrapped(out, report->notes[i], 0, report->max_width);
      } else {
        print_table_text(out, report->notes[i]);
        fputc('\n', out);
      }
    }
  }
}

/* ---- CSV ------------------------------------------------------------------ */

void pgc_print_csv_field(FILE *out, const char *text) {
  size_t len = strlen(text);
  int quote = strpbrk(text, ",\"\r\n") != NULL ||
              (len > 0 && (text[0] == ' ' || text[len - 1] == ' '));
  if (!quote) {
    fputs(text, out);
    return;
  }
  fputc('"', out);
  for (const char *p = text; *p; ++p) {
    if (*p == '"') fputc('"', out);
    fputc(*p, out);
  }
  fputc('"', out);
}

/* Comment lines are not fields: a line break would end them early. */
static void print_comment_text(FILE *out, const char *text) {
  for (const char *p = text; *p; ++p)
    fputc(*p == '\n' || *p == '\r' ? ' ' : *p, out);
}

static void print_csv_cell(FILE *out, const pgc_cell *cell) {
  char buf[NUMBER_TEXT_SIZE];
  if (cell->kind == PGC_CELL_TEXT) {
    pgc_print_csv_field(out, cell->text);
    return;
  }
  const char *number = data_number_text(cell, buf);
  if (number) fputs(number, out);
}

void pgc_print_csv(FILE *out, const pgc_report *report) {
  fprintf(out, "# report: pipegemm %s\n", report->command);
  for (int i = 0; i < report->fact_count; ++i) {
    const pgc_fact *fact = &report->facts[i];
    if (!(fact->show & PGC_SHOW_DATA)) continue;
    char buf[NUMBER_TEXT_SIZE];
    fprintf(out, "# %s: ", fact->key);
    if (fact->value.kind == PGC_CELL_TEXT) {
      print_comment_text(out, fact->value.text);
    } else {
      const char *number = data_number_text(&fact->value, buf);
      fputs(number ? number : "", out);
    }
    fputc('\n', out);
  }
  for (int i = 0; i < report->note_count; ++i) {
    fputs("# note: ", out);
    print_comment_text(out, report->notes[i]);
    fputc('\n', out);
  }
  int first = 1;
  for (int c = 0; c < report->column_count; ++c) {
    if (!(report->columns[c].show & PGC_SHOW_DATA)) continue;
    if (!first) fputc(',', out);
    pgc_print_csv_field(out, report->columns[c].key);
    first = 0;
  }
  fputc('\n', out);
  for (int r = 0; r < report->row_count; ++r) {
    first = 1;
    for (int c = 0; c < report->column_count; ++c) {
      if (!(report->columns[c].show & PGC_SHOW_DATA)) continue;
      if (!first) fputc(',', out);
      print_csv_cell(out, &report->cells[(size_t)r * report->column_count + c]);
      first = 0;
    }
    fputc('\n', out);
  }
}

/* ---- JSON ----------------------------------------------------------------- */

size_t pgc_utf8_next(const char *text, size_t len, uint32_t *code_point) {
  const unsigned char *p = (const unsigned char *)text;
  *code_point = PGC_UTF8_INVALID;
  if (p[0] < 0x80) {
    *code_point = p[0];
    return 1;
  }
  /* The lead byte says how many continuation bytes follow and the range of
   * the first of them, which excludes the overlong forms, the surrogates
   * and what lies past U+10FFFF (RFC 3629, section 4). */
  size_t need;
  unsigned char low = 0x80, high = 0xbf;
  uint32_t code;
  if (p[0] >= 0xc2 && p[0] <= 0xdf) {
    need = 1;
    code = p[0] & 0x1fu;
  } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
    need = 2;
    code = p[0] & 0x0fu;
    if (p[0] == 0xe0) low = 0xa0;
    if (p[0] == 0xed) high = 0x9f;
  } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
    need = 3;
    code = p[0] & 0x07u;
    if (p[0] == 0xf0) low = 0x90;
    if (p[0] == 0xf4) high = 0x8f;
  } else {
    return 1; /* a continuation byte, or a byte no character starts with */
  }
  for (size_t i = 1; i <= need; ++i) {
    if (i >= len || p[i] < low || p[i] > high) return i;
    code = code << 6 | (p[i] & 0x3fu);
    low = 0x80;
    high = 0xbf;
  }
  *code_point = code;
  return need + 1;
}

void pgc_print_json_string(FILE *out, const char *text) {
  fputc('"', out);
  const size_t len = strlen(text);
  for (size_t at = 0; at < len;) {
    uint32_t code;
    const size_t n = pgc_utf8_next(text + at, len - at, &code);
    switch (code) {
      case '"': fputs("\\\"", out); break;
      case '\\': fputs("\\\\", out); break;
      case '\b': fputs("\\b", out); break;
      case '\f': fputs("\\f", out); break;
      case '\n': fputs("\\n", out); break;
      case '\r': fputs("\\r", out); break;
      case '\t': fputs("\\t", out); break;
      /* JSON text is UTF-8 (RFC 8259, section 8.1): a name or a path in
       * another encoding is shown as replaced, not passed on to break
       * the reader. */
      case PGC_UTF8_INVALID: fputs("\\ufffd", out); break;
      default:
        /* Control characters: those below 0x20 must be escaped (RFC 8259,
         * section 7), DEL and C1 are, so that no terminal acts on them. */
        if (code < 0x20 || (code >= 0x7f && code < 0xa0))
          fprintf(out, "\\u%04x", (unsigned)code);
        else
          fwrite(text + at, 1, n, out);
    }
    at += n;
  }
  fputc('"', out);
}

static void print_json_cell(FILE *out, const pgc_cell *cell) {
  char buf[NUMBER_TEXT_SIZE];
  if (cell->kind == PGC_CELL_TEXT) {
    pgc_print_json_string(out, cell->text);
    return;
  }
  const char *number = data_number_text(cell, buf);
  fputs(number ? number : "null", out);
}

void pgc_print_json(FILE *out, const pgc_report *report) {
  fputs("{\n  \"report\": ", out);
  pgc_print_json_string(out, report->command);
  fputs(",\n  \"header\": {", out);
  int first = 1;
  for (int i = 0; i < report->fact_count; ++i) {
    const pgc_fact *fact = &report->facts[i];
    if (!(fact->show & PGC_SHOW_DATA)) continue;
    fputs(first ? "\n    " : ",\n    ", out);
    pgc_print_json_string(out, fact->key);
    fputs(": ", out);
    print_json_cell(out, &fact->value);
    first = 0;
  }
  fputs(first ? "},\n" : "\n  },\n", out);
  fputs("  \"rows\": [", out);
  for (int r = 0; r < report->row_count; ++r) {
    fputs(r ? ",\n    {" : "\n    {", out);
    first = 1;
    for (int c = 0; c < report->column_count; ++c) {
      const pgc_column *column = &report->columns[c];
      if (!(column->show & PGC_SHOW_DATA)) continue;
      if (!first) fputs(", ", out);
      pgc_print_json_string(out, column->key);
      fputs(": ", out);
      print_json_cell(out, &report->cells[(size_t)r * report->column_count + c]);
      first = 0;
    }
    fputc('}', out);
  }
  fputs(report->row_count ? "\n  ],\n" : "],\n", out);
  fputs("  \"notes\": [", out);
  for (int i = 0; i < report->note_count; ++i) {
    fputs(i ? ", " : "", out);
    pgc_print_json_string(out, report->notes[i]);
  }
  fputs("]\n}\n", out);
}

void pgc_print_report(FILE *out, pgc_format format, const pgc_report *report) {
  switch (format) {
    case PGC_FORMAT_CSV: pgc_print_csv(out, report); break;
    case PGC_FORMAT_JSON: pgc_print_json(out, report); break;
    default: pgc_print_table(out, report); break;
  }
}

/* ---- the bench result row ------------------------------------------------- */

void pgc_result_row_init(pgc_result_row *row, const char *variant, int stages,
                         int m, int n, int k) {
  memset(row, 0, sizeof *row);
  row->variant = variant;
  row->stages = stages;
  row->m = m;
  row->n = n;
  row->k = k;
  snprintf(row->shape, sizeof row->shape, "%dx%dx%d", m, n, k);
  const long long dense[3] = {0, 0, 0};
  pgc_result_row_set_layout(row, 0, 0, 1, dense, 0);
  row->median_ms = row->min_ms = row->max_ms = NAN;
  row->tflops = row->x_baseline = row->x_cublas = row->x_cublas_tf32 = NAN;
  row->pct_ffma_peak = NAN;
  row->max_abs_err = row->err_tol_ratio = row->err_u_max = row->err_u_mean = NAN;
  row->smem_kib = NAN;
  row->blocks_per_sm = -1;
  row->registers = -1;
  pgc_result_row_set_verdict(row, PGC_VERDICT_PASS, NULL);
}

void pgc_result_row_set_layout(pgc_result_row *row, int transposed_a, int transposed_b,
                               int batch, const long long strides[3], unsigned named) {
  static const char *const names[3] = {"stride_a", "stride_b", "stride_c"};
  row->op[0] = transposed_a ? 'T' : 'N';
  row->op[1] = transposed_b ? 'T' : 'N';
  row->op[2] = '\0';
  row->batch = batch;
  row->stride_a = batch > 1 ? strides[0] : 0;
  row->stride_b = batch > 1 ? strides[1] : 0;
  row->stride_c = batch > 1 ? strides[2] : 0;
  /* The shape file's own words (docs/measuring.md), so that a cell reads
   * as the line that asked for it. */
  size_t used = (size_t)snprintf(row->batch_text, sizeof row->batch_text, "%d", batch);
  for (int i = 0; i < 3 && batch > 1; ++i)
    if ((named >> i) & 1u && used < sizeof row->batch_text)
      used += (size_t)snprintf(row->batch_text + used, sizeof row->batch_text - used,
                               " %s=%lld", names[i], strides[i]);
}

void pgc_result_row_set_verdict(pgc_result_row *row, pgc_verdict verdict,
                                const char *reason) {
  static const char *const names[] = {"PASS", "FAIL", "SKIP", "ERROR",
                                      "UNCHECKED"};
  row->verdict = verdict;
  if (reason)
    snprintf(row->verdict_text, sizeof row->verdict_text, "%s (%s)",
             names[verdict], reason);
  else
    snprintf(row->verdict_text, sizeof row->verdict_text, "%s", names[verdict]);
}

/* Whether two rows ran the same problem: shape, ops, batch and strides. */
static int same_problem(const pgc_result_row *x, const pgc_result_row *y) {
  return x->m == y->m && x->n == y->n && x->k == y->k && strcmp(x->op, y->op) == 0 &&
         x->batch == y->batch && x->stride_a == y->stride_a && x->stride_b == y->stride_b &&
         x->stride_c == y->stride_c;
}

static const pgc_result_row *timed_row_of(const pgc_result_row *rows, int count,
                                          const char *variant, const pgc_result_row *like) {
  for (int i = 0; i < count; ++i) {
    const pgc_result_row *row = &rows[i];
    if (same_problem(row, like) && row->variant && strcmp(row->variant, variant) == 0 &&
        isfinite(row->median_ms) && row->median_ms > 0)
      return row;
  }
  return NULL;
}

/* The other row's median / this row's, or NaN when there is no such row. */
static double speedup_over(const pgc_result_row *rows, int count, const char *name,
                           const pgc_result_row *row) {
  const pgc_result_row *other = timed_row_of(rows, count, name, row);
  return other != NULL ? other->median_ms / row->median_ms : NAN;
}

void pgc_result_rows_relate(pgc_result_row *rows, int count, const char *baseline_name,
                            const char *cublas_name, const char *cublas_tf32_name) {
  for (int i = 0; i < count; ++i) {
    pgc_result_row *row = &rows[i];
    row->x_baseline = row->x_cublas = row->x_cublas_tf32 = NAN;
    if (!isfinite(row->median_ms) || row->median_ms <= 0) continue;
    row->x_baseline = speedup_over(rows, count, baseline_name, row);
    row->x_cublas = speedup_over(rows, count, cublas_name, row);
    row->x_cublas_tf32 = speedup_over(rows, count, cublas_tf32_name, row);
  }
}

/* Millisecond timings of small shapes are a few microseconds: four places. */
#define MS_DECIMALS 4
#define TFLOPS_DECIMALS 2
#define RATIO_DECIMALS 2
#define ERR_U_DECIMALS 2
#define PERCENT_DECIMALS 1
#define KIB_DECIMALS 2 /* 8.25 KiB: tiled32's padded tiles */

const pgc_column pgc_result_columns[] = {
    {"variant", "variant", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    /* auto: what it ran */
    {"runs", "runs", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    /* split-K or stream-K, with their splits or blocks */
    {"work", "work", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    {"stages", "stages", PGC_ALIGN_RIGHT, 0, PGC_SHOW_ALL},
    {"shape", "shape", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    /* op(A) then op(B); the batch, in the table with the strides that are
     * not dense, in CSV and JSON as numbers */
    {"op", "op", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    {"batch_text", "batch", PGC_ALIGN_RIGHT, 0, PGC_SHOW_TABLE},
    {"batch", "batch", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"m", "M", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"n", "N", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"k", "K", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"stride_a", "stride A", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"stride_b", "stride B", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"stride_c", "stride C", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"median_ms", "median ms", PGC_ALIGN_RIGHT, MS_DECIMALS, PGC_SHOW_ALL},
    {"min_ms", "min ms", PGC_ALIGN_RIGHT, MS_DECIMALS, PGC_SHOW_ALL},
    {"max_ms", "max ms", PGC_ALIGN_RIGHT, MS_DECIMALS, PGC_SHOW_ALL},
    {"tflops", "TFLOP/s", PGC_ALIGN_RIGHT, TFLOPS_DECIMALS, PGC_SHOW_ALL},
    {"x_baseline", "× baseline", PGC_ALIGN_RIGHT, RATIO_DECIMALS, PGC_SHOW_ALL},
    {"x_cublas", "× cuBLAS", PGC_ALIGN_RIGHT, RATIO_DECIMALS, PGC_SHOW_ALL},
    {"x_cublas_tf32", "× cuBLAS TF32", PGC_ALIGN_RIGHT, RATIO_DECIMALS, PGC_SHOW_ALL},
    {"pct_ffma_peak", "% FFMA peak", PGC_ALIGN_RIGHT, PERCENT_DECIMALS,
     PGC_SHOW_ALL},
    {"registers", "regs", PGC_ALIGN_RIGHT, 0, PGC_SHOW_ALL},
    {"smem_kib", "smem/block KiB", PGC_ALIGN_RIGHT, KIB_DECIMALS, PGC_SHOW_ALL},
    {"blocks_per_sm", "blocks/SM", PGC_ALIGN_RIGHT, 0, PGC_SHOW_ALL},
    {"max_abs_err", "max error", PGC_ALIGN_RIGHT, PGC_SCIENTIFIC, PGC_SHOW_ALL},
    {"err_tol_ratio", "error/tol", PGC_ALIGN_RIGHT, PGC_SCIENTIFIC,
     PGC_SHOW_ALL},
    {"err_u_max", "max err/u", PGC_ALIGN_RIGHT, ERR_U_DECIMALS, PGC_SHOW_ALL},
    {"err_u_mean", "mean err/u", PGC_ALIGN_RIGHT, ERR_U_DECIMALS, PGC_SHOW_ALL},
    {"verdict", "verdict", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
};
const int pgc_result_column_count =
    (int)(sizeof pgc_result_columns / sizeof pgc_result_columns[0]);

void pgc_result_row_cells(const pgc_result_row *row, pgc_cell *cells) {
  int i = 0;
  cells[i++] = pgc_cell_text(row->variant);
  cells[i++] = row->runs ? pgc_cell_text(row->runs) : pgc_cell_absent();
  cells[i++] = row->work[0] ? pgc_cell_text(row->work) : pgc_cell_absent();
  cells[i++] = row->stages > 0 ? pgc_cell_int(row->stages) : pgc_cell_absent();
  cells[i++] = pgc_cell_text(row->shape);
  cells[i++] = pgc_cell_text(row->op);
  cells[i++] = pgc_cell_text(row->batch_text);
  cells[i++] = pgc_cell_int(row->batch);
  cells[i++] = pgc_cell_int(row->m);
  cells[i++] = pgc_cell_int(row->n);
  cells[i++] = pgc_cell_int(row->k);
  /* One GEMM has no strides: absent, not 0 (a broadcast). */
  cells[i++] = row->batch > 1 ? pgc_cell_int(row->stride_a) : pgc_cell_absent();
  cells[i++] = row->batch > 1 ? pgc_cell_int(row->stride_b) : pgc_cell_absent();
  cells[i++] = row->batch > 1 ? pgc_cell_int(row->stride_c) : pgc_cell_absent();
  cells[i++] = pgc_cell_real(row->median_ms);
  cells[i++] = pgc_cell_real(row->min_ms);
  cells[i++] = pgc_cell_real(row->max_ms);
  cells[i++] = pgc_cell_real(row->tflops);
  cells[i++] = pgc_cell_real(row->x_baseline);
  cells[i++] = pgc_cell_real(row->x_cublas);
  cells[i++] = pgc_cell_real(row->x_cublas_tf32);
  cells[i++] = pgc_cell_real(row->pct_ffma_peak);
  cells[i++] = row->registers >= 0 ? pgc_cell_int(row->registers) : pgc_cell_absent();
  cells[i++] = pgc_cell_real(row->smem_kib);
  cells[i++] = row->blocks_per_sm >= 0 ? pgc_cell_int(row->blocks_per_sm)
                                       : pgc_cell_absent();
  cells[i++] = pgc_cell_real(row->max_abs_err);
  cells[i++] = pgc_cell_real(row->err_tol_ratio);
  cells[i++] = pgc_cell_real(row->err_u_max);
  cells[i++] = pgc_cell_real(row->err_u_mean);
  cells[i++] = pgc_cell_text(row->verdict_text);
}
