/* The fuzz's shape texts and what their parse must keep: texts of the shape
 * file's grammar (clean, or with bad lines, random bytes, NUL bytes, CRLF
 * and changed bytes), an oracle that reads that grammar independently of
 * src/cli/shapes.c, and pgc_shapes_parse / pgc_shapes_read on each text,
 * held to the oracle and to what src/cli/shapes.h promises (check_shapes). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h" /* pgc_escape_text, the exit codes */
#include "cli/shapes.h"
#include "common.h"

/* ---- shape files --------------------------------------------------------- */

static const char *const dims[] = {
    "1", "2", "3", "7", "8", "16", "31", "32", "127", "128", "1000", "4096", "65535", "65536",
    "2147483646", "2147483647", "2147483648", "4294967295", "4294967296",
    "18446744073709551615", "18446744073709551617", "99999999999999999999999999999999999999",
    "0", "00", "-0", "-1", "-2147483648", "0004096", "+4", "4.0", "1e3", "0x10", "", " ",
    "\xd9\xa3" /* an Arabic-Indic 3 */};
/* The first few of each are what shapes.h allows. */
static const char *const separators[] = {"x",   "X",  " x ", "\tX\t", "  x", "x  ", "\v x\f",
                                         "xx", "*", "",    "x-",   "\x85x"};
#define GOOD_SEPARATORS 7
static const char *const blanks[] = {"", "", " ", "\t", "\r", "  \t", "\v", "\f", "\x85", "\xa0"};
#define GOOD_BLANKS 8

/* One shape; in a clean text, one that shapes.h allows. Dimensions up to
 * dim_max (or at the edges), so that a small one makes shapes alike. */
static void shape_line(rng *r, buffer *b, int clean, size_t dim_max) {
  puts_b(b, blanks[below(r, clean ? GOOD_BLANKS : sizeof blanks / sizeof blanks[0])]);
  for (int d = 0; d < 3; ++d) {
    if (d && !clean && chance(r, 3)) put(b, "x\0", 2); /* a NUL byte: a bad line */
    else if (d)
      puts_b(b, separators[below(r, clean ? GOOD_SEPARATORS
                                          : sizeof separators / sizeof separators[0])]);
    if (clean && chance(r, 3))
      puts_b(b, PICK(r, ((const char *const[]){"2147483647", "0001", "1"})));
    else if (clean || chance(r, 60)) putf(b, "%u", (unsigned)(1 + below(r, dim_max)));
    else puts_b(b, PICK(r, dims));
  }
  /* The layout's words, after a blank: in a clean text ops, a batch and
   * strides (that may still break a rule: a stride of one GEMM, a
   * stride_c below M x N, a word twice); else anything near them. */
  size_t words = chance(r, 30) ? 1 + below(r, 4) : 0;
  for (size_t i = 0; i < words; ++i) {
    puts_b(b, clean ? PICK(r, ((const char *const[]){" ", "\t", "  "}))
                    : blanks[below(r, sizeof blanks / sizeof blanks[0])]);
    switch (below(r, 5)) {
      case 0: puts_b(b, clean ? PICK(r, ((const char *const[]){"NN", "NT", "TN", "TT", "NN,TT"}))
                              : fuzz_op_words[below(r, fuzz_op_words_count)]);
        break;
      case 1: putf(b, "batch=%s", clean && chance(r, 80) ? PICK(r, ((const char *const[]){
                                                               "1", "2", "3", "7", "1024"}))
                                                         : fuzz_numbers[below(r, fuzz_numbers_count)]);
        break;
      default:
        putf(b, "stride_%c=%s", clean ? "abc"[below(r, 3)] : "abcdA"[below(r, 5)],
             clean && chance(r, 80) ? PICK(r, ((const char *const[]){"0", "1", "9", "64",
                                                                     "4096", "100000"}))
                                    : fuzz_numbers[below(r, fuzz_numbers_count)]);
    }
  }
  puts_b(b, blanks[below(r, clean ? GOOD_BLANKS : sizeof blanks / sizeof blanks[0])]);
}

/* A comment's text: any bytes but a newline (and NUL, which shapes.h does
 * not settle for a comment). */
static void comment_bytes(rng *r, buffer *b, size_t len) {
  size_t from = b->len;
  random_bytes(r, b, len, 0);
  for (size_t i = from; i < b->len; ++i)
    if (b->text[i] == '\n') b->text[i] = ' ';
}

/* A shape text: in four of ten, only lines shapes.h allows (a repeated
 * shape aside), else with bad lines, random bytes and changed bytes. */
void shape_text(rng *r, buffer *b) {
  int clean = chance(r, 40);
  size_t dim_max = PICK(r, ((const size_t[]){3, 64, 100000}));
  size_t lines = below(r, 1000) < 3 ? PGC_MAX_SHAPES - 2 + below(r, 4) : below(r, 30);
  int many = lines > 1000;
  for (size_t i = 0; i < lines; ++i) {
    if (many) { /* a set at the bound: distinct shapes, a rare repeat */
      putf(b, "%zux1x7\n", chance(r, 1) ? (size_t)1 : 1 + i);
      continue;
    }
    switch (below(r, clean ? 3 : 12) + (clean ? 9 : 0)) {
      case 0: random_bytes(r, b, below(r, 20), 1); break;
      case 1: random_bytes(r, b, chance(r, 3) ? LONG_WORD : below(r, 300), 1); break;
      case 9: break; /* blank */
      case 10: /* a comment: bytes up to the newline */
        puts_b(b, PICK(r, ((const char *const[]){"#", " # ", "\t#"})));
        comment_bytes(r, b, below(r, 40));
        break;
      case 2: case 11:
        shape_line(r, b, clean, dim_max);
        puts_b(b, " # ");
        if (clean) comment_bytes(r, b, below(r, 10));
        else random_bytes(r, b, below(r, 10), 1);
        break;
      default: shape_line(r, b, clean, dim_max); break;
    }
    if (i + 1 < lines || chance(r, 70)) puts_b(b, chance(r, 20) ? "\r\n" : "\n");
  }
  /* Mutations: bytes changed, put in, cut out; a line repeated. */
  size_t changes = !clean && chance(r, 50) ? below(r, 5) : 0;
  for (size_t c = 0; c < changes && b->len > 0; ++c) {
    size_t at = below(r, b->len);
    switch (below(r, 4)) {
      case 0: b->text[at] = (char)below(r, 256); break;
      case 1: b->text[at] = PICK(r, "x\n\r#0-9 \t"); break;
      case 2: {
        size_t cut = below(r, b->len - at + 1);
        memmove(b->text + at, b->text + at + cut, b->len - at - cut);
        b->len -= cut;
        break;
      }
      default: {
        const char *nl = memchr(b->text + at, '\n', b->len - at);
        size_t end = nl ? (size_t)(nl - b->text) + 1 : b->len;
        if (end - at < 4096) {
          char *copy = dup_bytes(b->text + at, end - at);
          put(b, copy, end - at);
          free(copy);
        }
        break;
      }
    }
  }
}

/* The oracle: the grammar of shapes.h, read independently of shapes.c.
 * Returns the line of the first problem (0: none) and the shapes read, a
 * line's ops each one, with NN, one GEMM and dense strides where the line
 * names none (no request). */
typedef struct {
  long long m, n, k;
  size_t line;
  int op, batch;
  long long stride[3]; /* as given; -1: dense */
} oracle_shape;

static int oracle_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Digits of a value up to `max`, or -1. */
static long long oracle_value(const char *p, size_t len, long long max) {
  if (len == 0) return -1;
  long long v = 0;
  for (size_t i = 0; i < len; ++i) {
    if (p[i] < '0' || p[i] > '9') return -1;
    if (v > (max - (p[i] - '0')) / 10) return -1;
    v = v * 10 + (p[i] - '0');
  }
  return v;
}

/* One line: its shapes in out[] (*count of them) and 1, 0 for nothing
 * (blank, comment), -1 for a bad line. */
static int oracle_line(const char *p, size_t len, oracle_shape *out, int *count) {
  *count = 0;
  const char *hash = memchr(p, '#', len);
  if (hash) len = (size_t)(hash - p);
  size_t i = 0;
  while (i < len && oracle_blank(p[i])) ++i;
  if (i == len) return 0;
  long long v[3];
  for (int d = 0; d < 3; ++d) {
    while (i < len && oracle_blank(p[i])) ++i;
    if (d) {
      if (i == len || (p[i] != 'x' && p[i] != 'X')) return -1;
      ++i;
      while (i < len && oracle_blank(p[i])) ++i;
    }
    int negative = i < len && p[i] == '-';
    i += (size_t)negative;
    size_t first = i;
    long long value = 0;
    while (i < len && p[i] >= '0' && p[i] <= '9') {
      if (value <= INT_MAX) value = value * 10 + (p[i] - '0');
      ++i;
    }
    if (i == first) return -1;
    v[d] = negative ? -value : value;
  }
  /* The words, each after a blank. */
  int ops[4], op_count = 0, batch = 0;
  long long stride[3] = {-1, -1, -1};
  while (i < len) {
    if (!oracle_blank(p[i])) return -1;
    while (i < len && oracle_blank(p[i])) ++i;
    size_t end = i;
    while (end < len && !oracle_blank(p[end])) ++end;
    const char *w = p + i;
    const size_t wl = end - i;
    i = end;
    if (wl == 0) break;
    if (wl > 6 && memcmp(w, "batch=", 6) == 0) {
      if (batch) return -1;
      const long long b = oracle_value(w + 6, wl - 6, INT_MAX);
      if (b < 1) return -1;
      batch = (int)b;
    } else if (wl >= 6 && memcmp(w, "batch=", 6) == 0) {
      return -1;
    } else if (wl >= 9 && memcmp(w, "stride_", 7) == 0 && w[7] >= 'a' && w[7] <= 'c' &&
               w[8] == '=') {
      const int which = w[7] - 'a';
      if (stride[which] >= 0) return -1;
      stride[which] = oracle_value(w + 9, wl - 9, LLONG_MAX);
      if (stride[which] < 0) return -1;
    } else {
      /* ops: NN, NT, TN or TT, joined by commas */
      if (op_count) return -1;
      if (wl % 3 != 2) return -1;
      for (size_t at = 0; at < wl; at += 3) {
        if ((w[at] != 'N' && w[at] != 'T') || (w[at + 1] != 'N' && w[at + 1] != 'T')) return -1;
        if (at + 2 < wl && w[at + 2] != ',') return -1;
        const int op = 2 * (w[at] == 'T') + (w[at + 1] == 'T');
        int seen = 0;
        for (int j = 0; j < op_count; ++j) seen |= ops[j] == op;
        if (!seen) ops[op_count++] = op;
      }
    }
  }
  for (int d = 0; d < 3; ++d)
    if (v[d] < 1 || v[d] > INT_MAX) return -1;
  if (batch == 0) batch = 1;
  for (int j = 0; j < 3; ++j)
    if (stride[j] >= 0 && batch == 1) return -1;
  if (stride[2] >= 0 && stride[2] < v[0] * v[1]) return -1;
  if (op_count == 0) ops[op_count++] = 0;
  for (int j = 0; j < op_count; ++j) {
    oracle_shape *s = &out[(*count)++];
    s->m = v[0], s->n = v[1], s->k = v[2];
    s->op = ops[j];
    s->batch = batch;
    for (int q = 0; q < 3; ++q) s->stride[q] = stride[q];
  }
  return 1;
}

/* Two GEMMs alike: shape, op, batch and, in a batch, the strides with the
 * dense ones as numbers (M K, K N, M N). */
static int oracle_same(const oracle_shape *x, const oracle_shape *y) {
  if (x->m != y->m || x->n != y->n || x->k != y->k || x->op != y->op || x->batch != y->batch)
    return 0;
  if (x->batch == 1) return 1;
  const long long dense[3] = {x->m * x->k, x->k * x->n, x->m * x->n};
  for (int q = 0; q < 3; ++q) {
    const long long a = x->stride[q] >= 0 ? x->stride[q] : dense[q];
    const long long b = y->stride[q] >= 0 ? y->stride[q] : dense[q];
    if (a != b) return 0;
  }
  return 1;
}

static size_t oracle(const buffer *b, oracle_shape *out, int *count) {
  *count = 0;
  size_t line = 0;
  for (size_t start = 0; start < b->len;) {
    size_t end = start;
    while (end < b->len && b->text[end] != '\n') ++end;
    ++line;
    oracle_shape got[4];
    int got_count = 0;
    int kind = oracle_line(b->text + start, end - start, got, &got_count);
    start = end + 1;
    if (kind == 0) continue;
    if (kind < 0) return line;
    for (int g = 0; g < got_count; ++g) {
      got[g].line = line;
      for (int i = 0; i < *count; ++i)
        if (oracle_same(&out[i], &got[g])) return line;
      if (*count == PGC_MAX_SHAPES) return line;
      out[(*count)++] = got[g];
    }
  }
  return 0;
}

typedef struct {
  int rc;
  pgc_shape_set set;
  char err[PGC_SHAPES_ERROR_SIZE];
} shapes_result;

static int same_result(const shapes_result *a, const shapes_result *b, const char *how) {
  if (a->rc != b->rc) return broken("%s returned %d, the text alone %d", how, b->rc, a->rc);
  if (a->rc != PGC_EXIT_OK)
    return strcmp(a->err, b->err) == 0 ? 1 : broken("%s told another message", how);
  if (a->set.count != b->set.count)
    return broken("%s read %d shapes, not %d", how, b->set.count, a->set.count);
  for (int i = 0; i < a->set.count; ++i) {
    const pgc_shape *x = &a->set.shapes[i], *y = &b->set.shapes[i];
    if (x->m != y->m || x->n != y->n || x->k != y->k || x->line != y->line ||
        memcmp(&x->layout, &y->layout, sizeof x->layout) != 0)
      return broken("%s read shape %d otherwise", how, i);
  }
  return 1;
}

/* "no shape in NAME", NAME the quoted name whole, or cut and ended with
 * "...". */
static int names_no_shape(const char *message, const char *quoted) {
  if (strncmp(message, "no shape in ", 12) != 0) return 0;
  const char *name = message + 12;
  const size_t len = strlen(name);
  if (strcmp(name, quoted) == 0) return 1;
  return len >= 3 && strcmp(name + len - 3, "...") == 0 && strncmp(name, quoted, len - 3) == 0;
}

int check_shapes(rng *r, const buffer *b, const char *name, tally *t) {
  shapes_result p;
  memset(&p, 0, sizeof p);
  p.rc = pgc_shapes_parse(b->text, b->len, name, &p.set, p.err, sizeof p.err);
  oracle_shape *expected = checked_alloc((PGC_MAX_SHAPES + 1) * sizeof *expected);
  int expected_count = 0;
  size_t bad_line = oracle(b, expected, &expected_count);
  int ok = 1;
  if (p.rc == PGC_EXIT_OK) {
    ++t->shapes_read;
    if (bad_line || expected_count == 0)
      ok = broken("a set read whole; the grammar refuses line %zu", bad_line);
    else if (p.set.count != expected_count || p.set.shapes == NULL)
      ok = broken("%d shapes read, the grammar gives %d", p.set.count, expected_count);
    for (int i = 0; ok && i < p.set.count; ++i) {
      const pgc_shape *s = &p.set.shapes[i];
      const oracle_shape *e = &expected[i];
      const int op = 2 * (s->layout.op_a == PG_OP_T) + (s->layout.op_b == PG_OP_T);
      const long long given[3] = {s->layout.stride_a, s->layout.stride_b, s->layout.stride_c};
      int strides_ok = 1;
      for (int q = 0; q < 3; ++q)
        strides_ok &= given[q] == (e->stride[q] >= 0 ? e->stride[q] : PGC_STRIDE_DENSE);
      if (s->m != e->m || s->n != e->n || s->k != e->k || s->line != e->line)
        ok = broken("shape %d: %dx%dx%d on line %zu, the grammar gives %lldx%lldx%lld on line %zu",
                    i, s->m, s->n, s->k, s->line, e->m, e->n, e->k, e->line);
      else if (op != e->op || s->layout.batch != e->batch || !strides_ok)
        ok = broken("shape %d on line %zu: %s batch %d, the grammar gives %s batch %d", i,
                    s->line, pgc_op_name(op), s->layout.batch, pgc_op_name(e->op), e->batch);
    }
  } else if (p.rc != PGC_EXIT_USAGE) {
    ok = broken("pgc_shapes_parse returned %d", p.rc);
  } else {
    if (p.set.shapes != NULL || p.set.count != 0) ok = broken("a failure left shapes in the set");
    if (ok) ok = one_line(p.err, sizeof p.err, "pgc_shapes_parse");
    /* shapes.h: the file and the line, or "no shape in NAME". */
    char *big = checked_alloc(BIG_ERROR);
    pgc_shape_set unused;
    pgc_shapes_parse(b->text, b->len, name, &unused, big, BIG_ERROR);
    pgc_shape_set_free(&unused);
    char prefix[64];
    snprintf(prefix, sizeof prefix, ":%zu: ", bad_line);
    /* The name as a message repeats it: escaped (pgc_escape_text), and
     * where that is long, cut short and ended with "..." (shapes.h). */
    const size_t name_len = strlen(name);
    char *quoted = checked_alloc(4 * name_len + 4);
    pgc_escape_text(quoted, 4 * name_len + 4, name, name_len);
    const size_t quoted_len = strlen(quoted);
    /* How much of the message is the name: all of it, or a cut prefix of it
     * and "...". */
    size_t named = 0;
    if (strncmp(big, quoted, quoted_len) == 0) {
      named = quoted_len;
    } else {
      const char *dots = strstr(big, "...");
      if (dots != NULL && strncmp(big, quoted, (size_t)(dots - big)) == 0)
        named = (size_t)(dots - big) + 3;
    }
    if (ok && bad_line == 0 && expected_count > 0)
      ok = broken("a set refused; the grammar takes it whole");
    else if (ok && bad_line == 0 && !names_no_shape(big, quoted))
      ok = broken("no shape, told otherwise");
    else if (ok && bad_line && (named == 0 || strncmp(big + named, prefix, strlen(prefix)) != 0))
      ok = broken("the message does not begin with NAME:%zu: (the grammar's first bad line)",
                  bad_line);
    /* shapes.h: "A caller buffer this large holds any message written here
     * whole (a file name of up to PATH_MAX is cut short, not the message's
     * ending)": the message in the caller's buffer is the one a far larger
     * buffer gets. */
    if (ok && strcmp(p.err, big) != 0)
      ok = broken("a message of %zu bytes lost its ending in the caller's buffer (a name of "
                  "%zu bytes)",
                  strlen(big), name_len);
    free(quoted);
    free(big);
  }
  free(expected);

  /* A long name is a path that does not exist (no folder here is called
   * "ddddddddd"): a file that cannot be read keeps its reason too. */
  if (ok && strncmp(name, "ddddddddd/", 10) == 0) {
    shapes_result f;
    char *big = checked_alloc(BIG_ERROR);
    pgc_shape_set unused;
    memset(&f, 0, sizeof f);
    f.rc = pgc_shapes_read(name, &f.set, f.err, sizeof f.err);
    pgc_shapes_read(name, &unused, big, BIG_ERROR);
    pgc_shape_set_free(&unused);
    const char *reason = strstr(big, name);
    reason = reason ? reason + strlen(name) : big;
    size_t err_len = strlen(f.err), reason_len = strlen(reason);
    if (f.rc != PGC_EXIT_USAGE || f.set.shapes != NULL)
      ok = broken("reading a path that does not exist returned %d", f.rc);
    else if (ok)
      ok = one_line(f.err, sizeof f.err, "pgc_shapes_read");
    if (ok && strlen(name) <= PATH_MAX &&
        (err_len < reason_len || strcmp(f.err + err_len - reason_len, reason) != 0))
      ok = broken("cannot read a path of %zu bytes: the message lost its ending '%s'",
                  strlen(name), reason);
    free(big);
  }

  /* CRLF files read as their LF twins. */
  if (ok && b->len < 200000) {
    buffer crlf = {0};
    for (size_t i = 0; i < b->len; ++i) {
      if (b->text[i] == '\n') put(&crlf, "\r", 1);
      put(&crlf, &b->text[i], 1);
    }
    shapes_result c;
    memset(&c, 0, sizeof c);
    c.rc = pgc_shapes_parse(crlf.text, crlf.len, name, &c.set, c.err, sizeof c.err);
    ok = same_result(&p, &c, "the text with CRLF");
    pgc_shape_set_free(&c.set);
    free(crlf.text);
  }

  /* The same text from a file, named by its path. */
  if (ok && chance(r, 3)) {
    const char *tmp = getenv("TMPDIR");
    char at[1024];
    int n = snprintf(at, sizeof at, "%s/pg-fuzz-shapes-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (n < 0 || (size_t)n >= sizeof at) snprintf(at, sizeof at, "/tmp/pg-fuzz-shapes-XXXXXX");
    int fd = mkstemp(at);
    if (fd < 0) {
      ok = broken("mkstemp %s: %s", at, strerror(errno));
    } else {
      size_t done = 0;
      while (done < b->len) {
        ssize_t written = write(fd, b->text + done, b->len - done);
        if (written <= 0) break;
        done += (size_t)written;
      }
      close(fd);
      shapes_result f, named;
      memset(&f, 0, sizeof f);
      memset(&named, 0, sizeof named);
      f.rc = pgc_shapes_read(at, &f.set, f.err, sizeof f.err);
      named.rc = pgc_shapes_parse(b->text, b->len, at, &named.set, named.err, sizeof named.err);
      if (done != b->len)
        ok = broken("writing %s failed", at);
      else if (b->len <= PGC_MAX_SHAPE_FILE_BYTES)
        ok = same_result(&named, &f, "the file");
      else if (f.rc != PGC_EXIT_USAGE || !strstr(f.err, "larger than") || f.set.shapes)
        ok = broken("a file of %zu bytes, past the bound, was not refused as too large", b->len);
      pgc_shape_set_free(&f.set);
      pgc_shape_set_free(&named.set);
      unlink(at);
    }
  }
  pgc_shape_set_free(&p.set);
  return ok;
}

void print_text(FILE *out, const buffer *b, const char *name) {
  fprintf(out, "name: ");
  print_escaped(out, name, strlen(name), 200);
  fprintf(out, "\ntext (%zu bytes): ", b->len);
  print_escaped(out, b->text, b->len, 2000);
  fputc('\n', out);
}
