/* What the files of the fuzz of the tool's parsers (fuzz_cli) share: the
 * bounds of a case, the random source (splitmix64, one stream per case),
 * where a failure is told (the case running, the pipe to the parent, the
 * broken promise's text), the inputs of a case (argument vectors and byte
 * buffers) with their helpers, and the two kinds of case that main.c runs:
 * argument vectors (args.c) and shape texts (shapes.c). main.c says what
 * the fuzz does and how to run it. */
#ifndef PG_TESTS_FUZZ_COMMON_H
#define PG_TESTS_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A parse takes microseconds; one still running after this is a hang. */
#define CASE_SECONDS 5
#define CASE_SECONDS_TEXT "5"

#define MAX_WORDS 48
/* The longest word made: far past any buffer of the parser (1 KiB messages,
 * 64-byte variant names). */
#define LONG_WORD 70000
#define BIG_ERROR (1 << 17)

/* ---- the random source: splitmix64, one stream per case ------------------- */

typedef struct {
  uint64_t state;
} rng;

static inline uint64_t next(rng *r) {
  uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0 (the bias of a modulo does not matter here). */
static inline size_t below(rng *r, size_t n) { return (size_t)(next(r) % n); }
static inline int chance(rng *r, unsigned percent) { return below(r, 100) < percent; }
#define PICK(r, pool) ((pool)[below((r), sizeof(pool) / sizeof((pool)[0]))])

/* Numbers at the edges of int ranges, and --op's words (args.c), which the
 * shape lines' layout words take too. */
extern const char *const fuzz_numbers[];
extern const size_t fuzz_numbers_count;
extern const char *const fuzz_op_words[];
extern const size_t fuzz_op_words_count;

/* ---- where a failure is told (common.c) ----------------------------------- */

/* The cases run in a child process, which writes each case's number to a
 * pipe before running it: when the child dies (a crash, or a sanitizer's
 * report, which ends the process without a word of the case), the parent
 * names the last case it heard of. TOLD: the child has named the case
 * that failed itself. */
#define TOLD UINT64_MAX

extern uint64_t g_seed;
extern volatile uint64_t g_case; /* the case running, for the alarm */
extern int g_report_fd;          /* the child's end of the pipe */

void report_case(uint64_t value);
/* SIGALRM's handler: the case running is a hang. */
void on_alarm(int sig);
/* A byte string as C would write it, cut at `max` bytes. */
void print_escaped(FILE *out, const char *s, size_t len, size_t max);

/* What broke, for the case's report (NULL: nothing yet). */
#define FAILURE_TEXT_SIZE 512
extern const char *g_failure;
extern char g_failure_text[FAILURE_TEXT_SIZE];

/* Sets g_failure from the format; returns 0, a check's "broken". */
int broken(const char *fmt, ...);
/* A message the tool prints as one line: not empty, and no control byte (a
 * newline or an escape sequence would break the line, or the terminal). */
int one_line(const char *err, size_t size, const char *who);

/* How many cases of each kind ran, and how many of them parsed. */
typedef struct {
  long args, args_parsed, shapes, shapes_read;
} tally;

/* ---- the inputs of a case (common.c) ------------------------------------- */

/* An argument vector; every word its own allocation of its exact size, so
 * that the sanitizer sees a read past a word's end. `saved` keeps the words
 * as made: the parser must not change them. */
typedef struct {
  int argc;
  char *argv[MAX_WORDS + 1];
  char *saved[MAX_WORDS];
} words;

/* Shape-file text: `len` bytes of an allocation of exactly `len` (no NUL
 * after them to stop a read that overruns). */
typedef struct {
  char *text;
  size_t len, cap;
} buffer;

void *checked_alloc(size_t size);
/* Room for `len` more bytes. */
void reserve(buffer *b, size_t len);
void put(buffer *b, const char *bytes, size_t len);
void puts_b(buffer *b, const char *s);
void putf(buffer *b, const char *fmt, ...);
char *dup_bytes(const char *s, size_t len);
/* Bytes, seven in ten printable, the rest any byte but NUL (which argv
 * cannot hold) unless allow_nul. One draw a byte: long words are common. */
void random_bytes(rng *r, buffer *b, size_t len, int allow_nul);

/* ---- argument vectors and what their parse must keep (args.c) ------------ */

void make_words(rng *r, words *w);
void free_words(words *w);
void print_words(FILE *out, const words *w);
/* pgc_parse_args on the words, held to args.h: 1 when every promise held. */
int check_args(rng *r, const words *w, tally *t);

/* ---- shape texts and what their parse must keep (shapes.c) --------------- */

void shape_text(rng *r, buffer *b);
/* pgc_shapes_parse (and pgc_shapes_read) on the text, held to shapes.h: 1
 * when every promise held. */
int check_shapes(rng *r, const buffer *b, const char *name, tally *t);
void print_text(FILE *out, const buffer *b, const char *name);

#endif
