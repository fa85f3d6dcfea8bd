/* The shared pieces of the fuzz of the tool's parsers (common.h): where a
 * failure is told (the case's number on the pipe to the parent, the alarm's
 * line, the broken promise's text, a message held to one line) and the
 * inputs of a case (allocations, byte buffers, random bytes). */
#include "common.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- where a failure is told -------------------------------------------- */

uint64_t g_seed;
volatile uint64_t g_case;
int g_report_fd = -1;

void report_case(uint64_t value) {
  if (g_report_fd < 0) return;
  ssize_t ignored = write(g_report_fd, &value, sizeof value);
  (void)ignored;
}

/* Async-signal-safe pieces of a line, for the alarm's handler. */
static size_t add_text(char *line, size_t used, size_t size, const char *text) {
  while (*text && used + 1 < size) line[used++] = *text++;
  return used;
}

static size_t add_number(char *line, size_t used, size_t size, uint64_t x) {
  char digits[24];
  int n = 0;
  do digits[n++] = (char)('0' + x % 10);
  while ((x /= 10) != 0);
  while (n > 0 && used + 1 < size) line[used++] = digits[--n];
  return used;
}

/* "fuzz_cli: FAIL: case N: WHAT; PG_FUZZ_SEED=S PG_FUZZ_CASE=N reruns it",
 * with write(2) alone. */
static void say_case(const char *what) {
  char line[256];
  size_t used = add_text(line, 0, sizeof line, "fuzz_cli: FAIL: case ");
  used = add_number(line, used, sizeof line, g_case);
  used = add_text(line, used, sizeof line, ": ");
  used = add_text(line, used, sizeof line, what);
  used = add_text(line, used, sizeof line, "; PG_FUZZ_SEED=");
  used = add_number(line, used, sizeof line, g_seed);
  used = add_text(line, used, sizeof line, " PG_FUZZ_CASE=");
  used = add_number(line, used, sizeof line, g_case);
  used = add_text(line, used, sizeof line, " reruns it\n");
  ssize_t ignored = write(STDERR_FILENO, line, used);
  (void)ignored;
}

void on_alarm(int sig) {
  (void)sig;
  say_case("no end after " CASE_SECONDS_TEXT " s (a hang)");
  report_case(TOLD);
  _exit(1);
}

/* A byte string as C would write it, cut at `max` bytes. */
void print_escaped(FILE *out, const char *s, size_t len, size_t max) {
  fputc('"', out);
  for (size_t i = 0; i < len && i < max; ++i) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
    else if (c == '\n') fputs("\\n", out);
    else if (c == '\r') fputs("\\r", out);
    else if (c < 0x20 || c >= 0x7f) fprintf(out, "\\x%02x", c);
    else fputc(c, out);
  }
  fputc('"', out);
  if (len > max) fprintf(out, "... (%zu bytes)", len);
}

/* ---- what broke --------------------------------------------------------- */

const char *g_failure;
char g_failure_text[FAILURE_TEXT_SIZE];

int broken(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_failure_text, sizeof g_failure_text, fmt, ap);
  va_end(ap);
  g_failure = g_failure_text;
  return 0;
}

/* A message the tool prints as one line: not empty, and no control byte (a
 * newline or an escape sequence would break the line, or the terminal). */
int one_line(const char *err, size_t size, const char *who) {
  size_t len = strnlen(err, size);
  if (len == size) return broken("%s: the message is not terminated within its buffer", who);
  if (len == 0) return broken("%s: a failure without a message", who);
  for (size_t i = 0; i < len; ++i) {
    unsigned char c = (unsigned char)err[i];
    if (c < 0x20 || c == 0x7f)
      return broken("%s: the message holds the control byte 0x%02x at %zu", who, c, i);
  }
  return 1;
}


/* ---- the inputs of a case ------------------------------------------------ */

void *checked_alloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) {
    fprintf(stderr, "fuzz_cli: out of host memory (%zu bytes)\n", size);
    exit(1);
  }
  return p;
}

/* Room for `len` more bytes. */
void reserve(buffer *b, size_t len) {
  if (b->len + len > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + len) cap *= 2;
    char *grown = realloc(b->text, cap);
    if (!grown) {
      fprintf(stderr, "fuzz_cli: out of host memory\n");
      exit(1);
    }
    b->text = grown;
    b->cap = cap;
  }
}

void put(buffer *b, const char *bytes, size_t len) {
  if (len == 0) return; /* b->text may still be NULL */
  reserve(b, len);
  memcpy(b->text + b->len, bytes, len);
  b->len += len;
}
void puts_b(buffer *b, const char *s) { put(b, s, strlen(s)); }

void putf(buffer *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  put(b, tmp, n < 0 ? 0 : (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

char *dup_bytes(const char *s, size_t len) {
  char *p = checked_alloc(len + 1);
  if (len) memcpy(p, s, len); /* s may be NULL when len is 0 */
  p[len] = '\0';
  return p;
}

/* Bytes, seven in ten printable, the rest any byte but NUL (which argv
 * cannot hold) unless allow_nul. One draw a byte: long words are common. */
void random_bytes(rng *r, buffer *b, size_t len, int allow_nul) {
  reserve(b, len);
  for (size_t i = 0; i < len; ++i) {
    uint64_t x = next(r);
    char c;
    if ((x & 0xff) < 179) c = (char)(0x20 + (x >> 8) % 0x5f);
    else c = (char)(allow_nul ? (x >> 16) & 0xff : 1 + (x >> 16) % 255);
    b->text[b->len++] = c;
  }
}
