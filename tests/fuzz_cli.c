/* A short fuzz of the tool's two parsers: pgc_parse_args (src/cli/args.c)
 * on argument vectors and pgc_shapes_parse / pgc_shapes_read
 * (src/cli/shapes.c) on shape-file text, made from the real option table,
 * variant names, numbers at the edges of int ranges, very long words, random
 * bytes, NUL bytes and CRLF, and mutations of valid inputs. Each case must
 * end within CASE_SECONDS (an alarm) and keep what args.h and shapes.h
 * promise (check_args, check_shapes); in the sanitizer build (make
 * test-sanitize) a memory error or undefined behaviour also ends it. No GPU.
 *
 * Every case is made from the seed and its number alone, so a failure names
 * the case that reproduces it; the cases run in a child process, so that a
 * crash or a sanitizer's report, which end it, are named too (main):
 *   PG_FUZZ_SEED=N     another seed (default DEFAULT_SEED)
 *   PG_FUZZ_CASES=N    cases to run (default DEFAULT_CASES)
 *   PG_FUZZ_SECONDS=S  stop after S seconds (default DEFAULT_SECONDS); given
 *                      without PG_FUZZ_CASES, cases run until then
 *   PG_FUZZ_CASE=I     only case I, its input printed first
 *   PG_FUZZ_KEEP_GOING=1  go on past a broken promise (not past a crash),
 *                      and count each kind at the end
 * Exit 0 when every case kept the promises; 1 at the first that did not, a
 * hang or a crash; a sanitizer's exit code after its report. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/shapes.h"
#include "introspect.h"
#include "trace_records.h" /* PG_TRACE_MAX_BLOCKS, --blocks' bound */

#define DEFAULT_SEED 20240611u
/* About 10 s in the sanitizer build on a 2-core machine, 2 s without. */
#define DEFAULT_CASES 100000
#define DEFAULT_SECONDS 20
/* A parse takes microseconds; one still running after this is a hang. */
#define CASE_SECONDS 5
#define CASE_SECONDS_TEXT "5"

#define MAX_WORDS 48
/* The longest word made: far past any buffer of the parser (1 KiB messages,
 * 64-byte variant names). */
#define LONG_WORD 70000
/* A file name past PATH_MAX, which shapes.h says is cut short in messages. */
#define LONG_NAME 5000
#define BIG_ERROR (1 << 17)

/* ---- the random source: splitmix64, one stream per case ------------------- */

typedef struct {
  uint64_t state;
} rng;

static uint64_t next(rng *r) {
  uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0 (the bias of a modulo does not matter here). */
static size_t below(rng *r, size_t n) { return (size_t)(next(r) % n); }
static int chance(rng *r, unsigned percent) { return below(r, 100) < percent; }
#define PICK(r, pool) ((pool)[below((r), sizeof(pool) / sizeof((pool)[0]))])

/* ---- where a failure is told -------------------------------------------- */

/* The cases run in a child process, which writes each case's number to a
 * pipe before running it: when the child dies (a crash, or a sanitizer's
 * report, which ends the process without a word of the case), the parent
 * names the last case it heard of. TOLD: the child has named the case
 * that failed itself. */
#define TOLD UINT64_MAX

static uint64_t g_seed;
static volatile uint64_t g_case; /* the case running, for the alarm */
static int g_report_fd = -1;     /* the child's end of the pipe */

static void report_case(uint64_t value) {
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

static void on_alarm(int sig) {
  (void)sig;
  say_case("no end after " CASE_SECONDS_TEXT " s (a hang)");
  report_case(TOLD);
  _exit(1);
}

/* A byte string as C would write it, cut at `max` bytes. */
static void print_escaped(FILE *out, const char *s, size_t len, size_t max) {
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

/* ---- the inputs of a case ------------------------------------------------ */

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

static void *checked_alloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) {
    fprintf(stderr, "fuzz_cli: out of host memory (%zu bytes)\n", size);
    exit(1);
  }
  return p;
}

/* Room for `len` more bytes. */
static void reserve(buffer *b, size_t len) {
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

static void put(buffer *b, const char *bytes, size_t len) {
  if (len == 0) return; /* b->text may still be NULL */
  reserve(b, len);
  memcpy(b->text + b->len, bytes, len);
  b->len += len;
}
static void puts_b(buffer *b, const char *s) { put(b, s, strlen(s)); }

static void putf(buffer *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  put(b, tmp, n < 0 ? 0 : (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static char *dup_bytes(const char *s, size_t len) {
  char *p = checked_alloc(len + 1);
  if (len) memcpy(p, s, len); /* s may be NULL when len is 0 */
  p[len] = '\0';
  return p;
}

/* Bytes, seven in ten printable, the rest any byte but NUL (which argv
 * cannot hold) unless allow_nul. One draw a byte: long words are common. */
static void random_bytes(rng *r, buffer *b, size_t len, int allow_nul) {
  reserve(b, len);
  for (size_t i = 0; i < len; ++i) {
    uint64_t x = next(r);
    char c;
    if ((x & 0xff) < 179) c = (char)(0x20 + (x >> 8) % 0x5f);
    else c = (char)(allow_nul ? (x >> 16) & 0xff : 1 + (x >> 16) % 255);
    b->text[b->len++] = c;
  }
}

/* ---- argument vectors ---------------------------------------------------- */

static const char *const commands[] = {"list", "bench", "study", "profile", "inspect",
                                       "trace", "pipelining", "single-warp"};
static const char *const odd_options[] = {"-h", "--", "-", "---", "--=", "-x", "--size=",
                                          "--Size", "--siz", "--help=1", "--version=",
                                          "--quiet=on", "--check=", "=", "--variant==all"};
static const char *const numbers[] = {
    "0", "1", "2", "3", "4", "8", "31", "32", "33", "63", "64", "65", "100", "1023", "1024",
    "1025", "65536", "1000000", "1000001", "16777216", "16777217", "2147483646",
    "2147483647", "2147483648", "4294967295", "4294967296", "9223372036854775807",
    "9223372036854775808", "18446744073709551615", "18446744073709551616",
    "99999999999999999999999999999999", "-1", "-0", "-2147483648", "-2147483649", "007",
    "+5", " 5", "5 ", "1e3", "0x10", "3.5", "", "1,2", "\xd9\xa3" /* an Arabic-Indic 3 */};
static const char *const stage_lists[] = {
    "1-8", "1-3,6", "2,3,4", "0-2", "3-1", "1-64", "1-65", "2-65", "64-127",
    "2147483646-2147483647", "2147483647-2147483648", "1-2147483647", "2147483648",
    "4294967297", ",", "1,", ",1", "1,,2", "-", "1-", "-3", "5-5", "1-2-3", "1--2", "0",
    "1,1,1", "4,3,2,1", "1-4,2-5,3-6", "99999999999999999999-1", "1-99999999999999999999",
    " 2", "2 ", "2,3 ,4"};
static const char *const words_of_values[] = {
    "all", "all,baseline", "baseline,all", "table", "csv", "json", "JSON", "on", "off",
    "ON", "uniform", "wide", "tiny", "bench/shapes/set.txt", "/dev/null", "x", "cp_async=baseline",
    "=baseline", "cp_async=", "=", "cp_async==baseline", "nonesuch=baseline",
    "baseline=nonesuch", "a,b", ",", ",,", "baseline,", ",baseline", "pipelining",
    "single-warp", "--", "-", "--size", "t.json"};

/* --op's values and a shape line's op words: lists, and some a little off. */
static const char *const op_words[] = {"NN", "NT", "TN", "TT", "NN,NT", "TT,NN,TT",
                                       "NN,NT,TN,TT", "nt", "NX", "NN,", ",NN", "NNT",
                                       "N", "", "NN,,NT", "T T"};

/* A variant name from the registry, or one a little off it. */
static void variant_word(rng *r, buffer *b) {
  int count = pg_variant_count();
  const pg_variant_info *v = count > 0 ? pg_variant_at((int)below(r, (size_t)count)) : NULL;
  const char *name = v ? v->name : "baseline";
  switch (below(r, 10)) {
    case 0: puts_b(b, name); put(b, "x", 1); break;
    case 1: put(b, name, strlen(name) > 1 ? strlen(name) - 1 : 0); break;
    case 2: { /* names of 62 to 65 bytes: the parser's copy holds 63 */
      size_t len = 62 + below(r, 4);
      for (size_t i = 0; i < len; ++i) put(b, "a", 1);
      break;
    }
    default: puts_b(b, name);
  }
}

static void variant_list(rng *r, buffer *b) {
  size_t names = 1 + (chance(r, 20) ? below(r, 90) : below(r, 4));
  for (size_t i = 0; i < names; ++i) {
    if (i) put(b, ",", 1);
    if (chance(r, 3)) puts_b(b, "all");
    else variant_word(r, b);
  }
}

static void any_value(rng *r, buffer *b) {
  switch (below(r, 9)) {
    case 0: case 1: puts_b(b, PICK(r, numbers)); break;
    case 2: puts_b(b, PICK(r, stage_lists)); break;
    case 3: { /* a stage list of many entries */
      size_t n = 1 + below(r, 80);
      for (size_t i = 0; i < n; ++i) putf(b, i ? ",%zu" : "%zu", 1 + below(r, 100));
      break;
    }
    case 4: variant_list(r, b); break;
    case 5: { /* --swap A=B from registry names */
      variant_word(r, b);
      put(b, "=", 1);
      variant_word(r, b);
      break;
    }
    case 6: puts_b(b, PICK(r, words_of_values)); break;
    case 7: random_bytes(r, b, below(r, 24), 0); break;
    default: random_bytes(r, b, chance(r, 5) ? LONG_WORD : below(r, 1500), 0); break;
  }
}

static void add_word(words *w, const char *s, size_t len) {
  if (w->argc >= MAX_WORDS) return;
  w->argv[w->argc++] = dup_bytes(s, len);
}

static void option_word(rng *r, buffer *b) {
  if (chance(r, 90)) puts_b(b, pgc_option_name((int)below(r, (size_t)pgc_option_count())));
  else puts_b(b, PICK(r, odd_options));
}

/* A value of the kind the option takes, mostly near what it accepts. */
static void typed_value(rng *r, buffer *b, const char *option) {
  static const char *const counts[] = {"--size",   "--m",      "--n",        "--k",
                                       "--warmup", "--iters",  "--rounds",   "--device",
                                       "--blocks", "--seed",   "--batch",    "--stride-a",
                                       "--stride-b", "--stride-c"};
  static const char *const small[] = {"0", "1", "2", "3", "7", "32", "64", "100", "1000", "1024"};
  static const char *const formats[] = {"table", "csv", "json"};
  static const char *const on_off[] = {"on", "off"};
  static const char *const inputs[] = {"uniform", "wide", "tiny"};
  static const char *const paths[] = {"bench/shapes/set.txt", "t.json", "/dev/null", "./x",
                                      "raw.txt", "/usr/bin/ncu"};
  if (chance(r, 10)) {
    any_value(r, b);
    return;
  }
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; ++i)
    if (strcmp(option, counts[i]) == 0) {
      puts_b(b, chance(r, 60) ? PICK(r, small) : PICK(r, numbers));
      return;
    }
  if (strcmp(option, "--stages") == 0) {
    if (chance(r, 50)) putf(b, "%zu", 1 + below(r, 8));
    else puts_b(b, PICK(r, stage_lists));
  } else if (strcmp(option, "--variant") == 0) {
    if (chance(r, 10)) puts_b(b, "all");
    else variant_list(r, b);
  } else if (strcmp(option, "--swap") == 0) {
    variant_word(r, b);
    put(b, "=", 1);
    variant_word(r, b);
  } else if (strcmp(option, "--format") == 0) {
    puts_b(b, PICK(r, formats));
  } else if (strcmp(option, "--check") == 0 || strcmp(option, "--flush-l2") == 0) {
    puts_b(b, PICK(r, on_off));
  } else if (strcmp(option, "--inputs") == 0) {
    puts_b(b, PICK(r, inputs));
  } else if (strcmp(option, "--op") == 0) {
    puts_b(b, PICK(r, op_words));
  } else {
    puts_b(b, PICK(r, paths));
  }
}

/* Whether the option (by index) takes a value for this command: inspect's
 * --check is a flag, bench's takes on|off. */
static int takes_value(int index, pgc_command command) {
  const char *name = pgc_option_name(index);
  static const char *const flags[] = {"--help", "--version", "--quiet", "--profile", "--long"};
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; ++i)
    if (strcmp(name, flags[i]) == 0) return 0;
  return !(strcmp(name, "--check") == 0 && command == PGC_CMD_INSPECT);
}

/* A command line of the tool's own words: a command, then mostly the
 * options it takes with values of their kind, joined or apart; some values
 * missing, some options of other commands, some words stray. */
static void make_structured(rng *r, words *w) {
  buffer b = {0};
  pgc_command command = PGC_CMD_NONE;
  pgc_study study = PGC_STUDY_NONE;
  add_word(w, "pipegemm", 8);
  if (chance(r, 90)) {
    command = (pgc_command)(PGC_CMD_LIST + (int)below(r, PGC_CMD_TRACE - PGC_CMD_LIST + 1));
    const char *name = pgc_command_name(command);
    add_word(w, name, strlen(name));
    if (command == PGC_CMD_STUDY && chance(r, 90)) {
      study = chance(r, 50) ? PGC_STUDY_PIPELINING : PGC_STUDY_SINGLE_WARP;
      add_word(w, pgc_study_name(study), strlen(pgc_study_name(study)));
    }
  } else if (chance(r, 50)) {
    option_word(r, &b);
    add_word(w, b.text, b.len);
  }
  size_t items = chance(r, 70) ? below(r, 6) : below(r, 14);
  for (size_t i = 0; i < items; ++i) {
    b.len = 0;
    if (chance(r, 8)) { /* a stray word or value, or "--" and random bytes */
      if (chance(r, 30)) {
        puts_b(&b, PICK(r, commands));
      } else if (chance(r, 50)) {
        any_value(r, &b);
      } else {
        puts_b(&b, "--");
        random_bytes(r, &b, below(r, 16), 0);
      }
      add_word(w, b.text, b.len);
      continue;
    }
    int option = (int)below(r, (size_t)pgc_option_count());
    for (int tries = 0; tries < 20 && chance(r, 90); ++tries) {
      int fits = command == PGC_CMD_STUDY && study != PGC_STUDY_NONE
                     ? pgc_option_applies_to_study(option, study)
                     : pgc_option_applies(option, command);
      if (fits && strcmp(pgc_option_name(option), "--help") != 0) break;
      option = (int)below(r, (size_t)pgc_option_count());
    }
    const char *name = chance(r, 97) ? pgc_option_name(option) : PICK(r, odd_options);
    if (!takes_value(option, command) || chance(r, 3)) { /* a flag, or a value missing */
      add_word(w, name, strlen(name));
    } else if (chance(r, 50)) { /* --option value */
      add_word(w, name, strlen(name));
      typed_value(r, &b, name);
      add_word(w, b.text, b.len);
    } else { /* --option=value */
      puts_b(&b, name);
      put(&b, "=", 1);
      typed_value(r, &b, name);
      add_word(w, b.text, b.len);
    }
  }
  free(b.text);
}

/* Valid command lines, to mutate. */
static const char *const valid_lines[] = {
    "bench",
    "bench --size 2048",
    "bench --variant cp_async,pingpong --stages 2,3,4 --size=1024",
    "bench --shapes bench/shapes/set.txt --variant cublas,auto --warmup 1 --iters 1",
    "bench --m 1000 --n 8 --k 4096 --format csv --quiet",
    "bench --rounds 3 --warmup 1 --iters 2 --inputs wide --seed 18446744073709551615 "
    "--flush-l2 off --check off --device 0",
    "bench --variant all --stages 1-8",
    "study pipelining --size 256 --profile --ncu /usr/bin/ncu --raw raw.txt",
    "study single-warp --k 4096 --warmup 1 --iters 1 --format json",
    "profile --variant baseline,pingpong,cp_async --stages 1-3 --m 64 --n 32 --k 16",
    "inspect --variant cp_async --check --swap cp_async=baseline --binary ./pipegemm",
    "trace --variant cp_async --stages 3 --size 200 --blocks 3 --out t.json",
    "trace --variant mbarrier --m 1 --n 1 --k 0 --out=t.json --blocks=1024",
    "list --format json --device 1",
    "list --long --device 0",
    "--help",
    "--version",
    "bench --help",
    "study --help"};

static void split_line(const char *line, words *w) {
  add_word(w, "pipegemm", 8);
  for (const char *p = line; *p;) {
    while (*p == ' ') ++p;
    const char *end = strchr(p, ' ');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len) add_word(w, p, len);
    p += len;
  }
}

/* s may be the word itself (cut short). */
static void replace_word(words *w, int i, const char *s, size_t len) {
  char *word = dup_bytes(s, len);
  free(w->argv[i]);
  w->argv[i] = word;
}

/* A valid line with one to four changes: a word dropped, repeated, swapped
 * with the next, replaced, cut short, or a byte of it changed. */
static void make_mutated(rng *r, words *w) {
  split_line(PICK(r, valid_lines), w);
  size_t changes = 1 + below(r, 4);
  buffer b = {0};
  for (size_t c = 0; c < changes && w->argc > 1; ++c) {
    int i = 1 + (int)below(r, (size_t)w->argc - 1);
    size_t len = strlen(w->argv[i]);
    b.len = 0;
    switch (below(r, 8)) {
      case 0: /* drop */
        free(w->argv[i]);
        memmove(&w->argv[i], &w->argv[i + 1], (size_t)(w->argc - i - 1) * sizeof(char *));
        --w->argc;
        break;
      case 1: add_word(w, w->argv[i], len); break;
      case 2:
        if (i + 1 < w->argc) {
          char *t = w->argv[i];
          w->argv[i] = w->argv[i + 1];
          w->argv[i + 1] = t;
        }
        break;
      case 3:
        any_value(r, &b);
        replace_word(w, i, b.text, b.len);
        break;
      case 4:
        option_word(r, &b);
        replace_word(w, i, b.text, b.len);
        break;
      case 5: replace_word(w, i, w->argv[i], below(r, len + 1)); break;
      case 6: { /* one byte changed or put in */
        put(&b, w->argv[i], len);
        char byte = (char)(1 + below(r, 255));
        size_t at = below(r, len + 1);
        if (at < len && chance(r, 50)) b.text[at] = byte;
        else {
          put(&b, "", 1);
          memmove(b.text + at + 1, b.text + at, len - at);
          b.text[at] = byte;
        }
        replace_word(w, i, b.text, b.len);
        break;
      }
      default: /* a value joined with '=' */
        put(&b, w->argv[i], len);
        put(&b, "=", 1);
        any_value(r, &b);
        replace_word(w, i, b.text, b.len);
        break;
    }
  }
  free(b.text);
}

static void make_random(rng *r, words *w) {
  buffer b = {0};
  int argc = (int)below(r, 10);
  for (int i = 0; i < argc; ++i) {
    b.len = 0;
    random_bytes(r, &b, below(r, 40), 0);
    add_word(w, b.text, b.len);
  }
  free(b.text);
}

static void make_words(rng *r, words *w) {
  memset(w, 0, sizeof *w);
  size_t kind = below(r, 100);
  if (kind < 55) make_structured(r, w);
  else if (kind < 90) make_mutated(r, w);
  else make_random(r, w);
  w->argv[w->argc] = NULL;
  for (int i = 0; i < w->argc; ++i) w->saved[i] = dup_bytes(w->argv[i], strlen(w->argv[i]));
}

static void free_words(words *w) {
  for (int i = 0; i < w->argc; ++i) {
    free(w->argv[i]);
    free(w->saved[i]);
  }
}

static void print_words(FILE *out, const words *w) {
  fprintf(out, "argv (%d words):", w->argc);
  for (int i = 0; i < w->argc; ++i) {
    fputc(' ', out);
    print_escaped(out, w->saved[i], strlen(w->saved[i]), 200);
  }
  fputc('\n', out);
}

/* ---- what a parse of arguments must keep -------------------------------- */

/* How many cases of each kind ran, and how many of them parsed. */
typedef struct {
  long args, args_parsed, shapes, shapes_read;
} tally;

static const char *g_failure; /* what broke, for the case's report */
static char g_failure_text[512];

static int broken(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_failure_text, sizeof g_failure_text, fmt, ap);
  va_end(ap);
  g_failure = g_failure_text;
  return 0;
}

/* A message the tool prints as one line: not empty, and no control byte (a
 * newline or an escape sequence would break the line, or the terminal). */
static int one_line(const char *err, size_t size, const char *who) {
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

/* Whether p points into one of the words (a borrowed value). */
static int in_argv(const words *w, const char *p) {
  for (int i = 0; i < w->argc; ++i) {
    const char *word = w->argv[i];
    if (p >= word && p <= word + strlen(word)) return 1;
  }
  return 0;
}

static int borrowed(const words *w, const char *p, const char *what) {
  if (p == NULL) return 1;
  if (!in_argv(w, p)) return broken("%s does not point into argv", what);
  if (p[0] == '\0') return broken("%s is empty", what);
  return 1;
}

static pgc_command command_named(const words *w) {
  if (w->argc < 2 || w->argv[1][0] == '-') return PGC_CMD_NONE;
  for (int c = PGC_CMD_LIST; c <= PGC_CMD_TRACE; ++c)
    if (strcmp(w->argv[1], pgc_command_name((pgc_command)c)) == 0) return (pgc_command)c;
  return PGC_CMD_NONE;
}

static int in_range(long long v, long long lo, long long hi, const char *what) {
  if (v < lo || v > hi) return broken("%s = %lld, outside %lld..%lld", what, v, lo, hi);
  return 1;
}

/* The options of a successful parse, against args.h. */
static int check_options(const words *w, const pgc_options *o) {
  if (o->argc != w->argc || o->argv != w->argv) return broken("argc/argv not kept");
  if (o->command == PGC_CMD_HELP)
    return o->help_topic == PGC_CMD_NONE ||
                   (o->help_topic >= PGC_CMD_LIST && o->help_topic <= PGC_CMD_TRACE)
               ? 1
               : broken("help for command %d", (int)o->help_topic);
  if (o->command == PGC_CMD_VERSION) return 1;
  if (o->command < PGC_CMD_LIST || o->command > PGC_CMD_TRACE)
    return broken("success with command %d", (int)o->command);
  if (o->command != command_named(w))
    return broken("command %d, argv[1] names another", (int)o->command);
  if (o->format != PGC_FORMAT_TABLE && o->format != PGC_FORMAT_CSV && o->format != PGC_FORMAT_JSON)
    return broken("format %d", (int)o->format);
  int flags[] = {o->quiet, o->check, o->flush_l2, o->profile, o->inspect_check, o->all_variants};
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; ++i)
    if (flags[i] != 0 && flags[i] != 1) return broken("flag %zu is %d", i, flags[i]);
  if (!in_range(o->device, 0, INT_MAX, "device") || !in_range(o->m, 0, INT_MAX, "m") ||
      !in_range(o->n, 0, INT_MAX, "n") || !in_range(o->k, 0, INT_MAX, "k") ||
      !in_range(o->warmup, 0, PGC_MAX_REPEATS, "warmup") ||
      !in_range(o->iters, 1, PGC_MAX_REPEATS, "iters") ||
      !in_range(o->rounds, 1, PGC_MAX_ROUNDS, "rounds") ||
      !in_range(o->trace_blocks, 1, PG_TRACE_MAX_BLOCKS, "trace_blocks") ||
      !in_range(o->variant_count, 0, PGC_MAX_VARIANTS, "variant_count") ||
      !in_range(o->stage_count, 0, PGC_MAX_STAGE_COUNTS, "stage_count"))
    return 0;
  if (o->inputs < 0 || pgc_inputs_name(o->inputs) == NULL) return broken("inputs %d", o->inputs);
  if (o->all_variants != (o->variant_count == 0))
    return broken("all_variants %d with %d variants", o->all_variants, o->variant_count);
  for (int i = 0; i < o->variant_count; ++i) {
    const pg_variant_info *v = o->variants[i];
    if (v == NULL || pg_variant_find(v->name) != v)
      return broken("variant %d is no registry entry", i);
    for (int j = 0; j < i; ++j)
      if (o->variants[j] == v) return broken("variant %s twice", v->name);
  }
  for (int i = 0; i < o->stage_count; ++i) {
    if (o->stages[i] < 1) return broken("stage count %d", o->stages[i]);
    for (int j = 0; j < i; ++j)
      if (o->stages[j] == o->stages[i]) return broken("stage count %d twice", o->stages[i]);
  }
  /* A variant named with --variant takes every stage count asked for. */
  if (o->command == PGC_CMD_BENCH || o->command == PGC_CMD_PROFILE ||
      o->command == PGC_CMD_TRACE)
    for (int i = 0; i < o->variant_count; ++i) {
      const pg_variant_info *v = o->variants[i];
      if (v->min_stages == v->max_stages) continue;
      for (int s = 0; s < o->stage_count; ++s)
        if (o->stages[s] < v->min_stages || o->stages[s] > v->max_stages)
          return broken("%s at %d stages, outside %d-%d", v->name, o->stages[s],
                        v->min_stages, v->max_stages);
    }
  if (o->command == PGC_CMD_TRACE) {
    if (o->variant_count != 1 || !pg_variant_traced(o->variants[0]))
      return broken("trace without one traced variant");
    if (o->stage_count > 1 || o->out_path == NULL || o->m < 1 || o->n < 1)
      return broken("trace with %d stage counts, out %p, %dx%d", o->stage_count,
                    (const void *)o->out_path, o->m, o->n);
  }
  if (o->command == PGC_CMD_STUDY) {
    if (o->study != PGC_STUDY_PIPELINING && o->study != PGC_STUDY_SINGLE_WARP)
      return broken("study %d", (int)o->study);
    if (o->study == PGC_STUDY_SINGLE_WARP &&
        (o->m != PG_SINGLE_WARP_DIM || o->n != PG_SINGLE_WARP_DIM || o->k > PGC_SINGLE_WARP_MAX_K))
      return broken("single-warp at %dx%dx%d", o->m, o->n, o->k);
    if (!o->profile && (o->ncu_path || o->raw_path))
      return broken("--ncu or --raw without --profile");
  } else if (o->study != PGC_STUDY_NONE) {
    return broken("an experiment outside study");
  }
  if (o->shapes_path && o->command != PGC_CMD_BENCH) return broken("--shapes outside bench");
  /* The layouts: one to four op combinations, each once; a batch of one
   * GEMM at least; strides dense or counts; for bench's one shape, a
   * stride only with a batch, and the Cs apart (args.h). */
  const pgc_layout_request *l = &o->layout;
  if (l->op_count < 1 || l->op_count > PGC_OP_COUNT) return broken("%d ops", l->op_count);
  for (int i = 0; i < l->op_count; ++i) {
    if (l->ops[i] < 0 || l->ops[i] >= PGC_OP_COUNT) return broken("op %d", l->ops[i]);
    for (int j = 0; j < i; ++j)
      if (l->ops[j] == l->ops[i]) return broken("op %s twice", pgc_op_name(l->ops[i]));
  }
  if (l->batch < 1) return broken("batch %d", l->batch);
  const long long strides[3] = {l->stride_a, l->stride_b, l->stride_c};
  for (int i = 0; i < 3; ++i) {
    if (strides[i] < 0 && strides[i] != PGC_STRIDE_DENSE) return broken("stride %lld", strides[i]);
    if (o->command != PGC_CMD_BENCH && strides[i] != PGC_STRIDE_DENSE)
      return broken("a stride outside bench");
    if (o->command == PGC_CMD_BENCH && !o->shapes_path && strides[i] != PGC_STRIDE_DENSE &&
        l->batch < 2)
      return broken("a stride of one GEMM");
  }
  if (o->command == PGC_CMD_BENCH && !o->shapes_path && l->batch > 1 &&
      l->stride_c != PGC_STRIDE_DENSE && o->m > 0 && o->n > 0 &&
      l->stride_c < (long long)o->m * o->n)
    return broken("stride_c %lld below %dx%d", l->stride_c, o->m, o->n);
  if (o->command != PGC_CMD_BENCH && (l->op_count != 1 || l->ops[0] != 0 || l->batch != 1))
    return broken("a layout outside bench");
  if (o->long_listing != 0 && (o->long_listing != 1 || o->command != PGC_CMD_LIST))
    return broken("long_listing %d outside list", o->long_listing);
  if ((o->swap_claim == NULL) != (o->swap_kernels == NULL)) return broken("half a --swap");
  if (o->swap_claim && (pg_variant_find(o->swap_claim->name) != o->swap_claim ||
                        pg_variant_find(o->swap_kernels->name) != o->swap_kernels))
    return broken("--swap names no registry entry");
  return borrowed(w, o->shapes_path, "shapes_path") && borrowed(w, o->ncu_path, "ncu_path") &&
         borrowed(w, o->raw_path, "raw_path") && borrowed(w, o->inspect_binary, "inspect_binary") &&
         borrowed(w, o->out_path, "out_path");
}

/* The runs the options expand to, and the command line as text. */
static int check_plan(const pgc_options *o) {
  if (o->command < PGC_CMD_LIST || o->command > PGC_CMD_TRACE) return 1;
  int count = pgc_expand_runs(o, NULL, 0);
  if (count < 0) return broken("pgc_expand_runs gave %d", count);
  pgc_run_spec *runs = checked_alloc((size_t)count * sizeof *runs);
  int again = pgc_expand_runs(o, runs, count);
  int ok = again == count ? 1 : broken("pgc_expand_runs gave %d, then %d", count, again);
  for (int i = 0; ok && i < count; ++i) {
    const pg_variant_info *v = runs[i].variant;
    if (v == NULL) ok = broken("run %d without a variant", i);
    else if (runs[i].stages < v->min_stages || runs[i].stages > v->max_stages)
      ok = broken("run %d: %s at %d stages, outside %d-%d", i, v->name, runs[i].stages,
                  v->min_stages, v->max_stages);
  }
  free(runs);
  static const size_t sizes[] = {1, 2, 9, 64, PGC_COMMAND_LINE_SIZE};
  for (size_t s = 0; ok && s < sizeof sizes / sizeof sizes[0]; ++s) {
    char *text = checked_alloc(sizes[s]);
    pgc_command_line_text(o, text, sizes[s]);
    if (strnlen(text, sizes[s]) == sizes[s])
      ok = broken("command line text not terminated in %zu", sizes[s]);
    free(text);
  }
  return ok;
}

static int check_args(rng *r, const words *w, tally *t) {
  pgc_options o, again;
  char err[PGC_ERROR_SIZE], err_again[PGC_ERROR_SIZE];
  int rc = pgc_parse_args(w->argc, (char **)w->argv, &o, err, sizeof err);
  for (int i = 0; i < w->argc; ++i)
    if (strcmp(w->argv[i], w->saved[i]) != 0) return broken("argv[%d] changed", i);
  if (rc != PGC_EXIT_OK && rc != PGC_EXIT_USAGE) return broken("pgc_parse_args returned %d", rc);
  int rc_again = pgc_parse_args(w->argc, (char **)w->argv, &again, err_again, sizeof err_again);
  if (rc_again != rc) return broken("a second parse returned %d, the first %d", rc_again, rc);
  if (rc == PGC_EXIT_OK) {
    ++t->args_parsed;
    return check_options(w, &o) && check_plan(&o);
  }

  if (!one_line(err, sizeof err, "pgc_parse_args")) return 0;
  if (strcmp(err, err_again) != 0) return broken("a second parse told another message");
  if (o.command != command_named(w))
    return broken("a failure left command %d, argv[1] names %d", (int)o.command,
                  (int)command_named(w));
  /* args.h: "A caller buffer this large holds any message". */
  char *big = checked_alloc(BIG_ERROR);
  pgc_parse_args(w->argc, (char **)w->argv, &again, big, BIG_ERROR);
  size_t big_len = strlen(big);
  free(big);
  if (big_len >= PGC_ERROR_SIZE)
    return broken("a message of %zu bytes, past PGC_ERROR_SIZE (%d)", big_len, PGC_ERROR_SIZE);
  /* A buffer too small for the message: cut short, terminated, no byte
   * written past it (the sanitizer sees that). */
  size_t small = 1 + below(r, 40);
  char *cut = checked_alloc(small);
  pgc_parse_args(w->argc, (char **)w->argv, &again, cut, small);
  int ok = strnlen(cut, small) < small ? 1 : broken("a message not terminated in %zu bytes", small);
  if (ok && strncmp(cut, err, small - 1) != 0) ok = broken("a message cut short differs");
  free(cut);
  return ok;
}

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
                              : PICK(r, op_words));
        break;
      case 1: putf(b, "batch=%s", clean && chance(r, 80) ? PICK(r, ((const char *const[]){
                                                               "1", "2", "3", "7", "1024"}))
                                                         : PICK(r, numbers));
        break;
      default:
        putf(b, "stride_%c=%s", clean ? "abc"[below(r, 3)] : "abcdA"[below(r, 5)],
             clean && chance(r, 80) ? PICK(r, ((const char *const[]){"0", "1", "9", "64",
                                                                     "4096", "100000"}))
                                    : PICK(r, numbers));
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
static void shape_text(rng *r, buffer *b) {
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

static int check_shapes(rng *r, const buffer *b, const char *name, tally *t) {
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

static void print_text(FILE *out, const buffer *b, const char *name) {
  fprintf(out, "name: ");
  print_escaped(out, name, strlen(name), 200);
  fprintf(out, "\ntext (%zu bytes): ", b->len);
  print_escaped(out, b->text, b->len, 2000);
  fputc('\n', out);
}

/* ---- a case ---------------------------------------------------------------- */

/* Case `index`: 1 when it kept every promise. The input is printed before
 * the case with print_input, after it when it failed and show_failure. */
static int run_case(uint64_t index, int print_input, int show_failure, tally *t) {
  rng r = {g_seed ^ (index * 0xD1B54A32D192ED03ull)};
  next(&r);
  g_failure = NULL;
  int ok;
  alarm(CASE_SECONDS);
  if (chance(&r, 55)) {
    words w;
    make_words(&r, &w);
    if (print_input) print_words(stderr, &w);
    ok = check_args(&r, &w, t);
    if (!ok && show_failure) print_words(stderr, &w);
    free_words(&w);
    ++t->args;
  } else {
    buffer b = {0};
    shape_text(&r, &b);
    /* The parser gets exactly len bytes: nothing after them to stop an
     * overrun short of the sanitizer. */
    char *exact = checked_alloc(b.len);
    if (b.len) memcpy(exact, b.text, b.len);
    free(b.text);
    b.text = exact;
    b.cap = b.len;
    char *long_name = NULL;
    const char *name = "set.txt";
    if (chance(&r, 3)) { /* a path far past the message's buffer */
      size_t len = 900 + below(&r, LONG_NAME);
      long_name = checked_alloc(len + 1);
      for (size_t i = 0; i < len; ++i) long_name[i] = i % 10 == 9 ? '/' : 'd';
      long_name[len] = '\0';
      name = long_name;
    }
    if (print_input) print_text(stderr, &b, name);
    ok = check_shapes(&r, &b, name, t);
    if (!ok && show_failure) print_text(stderr, &b, name);
    free(b.text);
    free(long_name);
    ++t->shapes;
  }
  alarm(0);
  return ok;
}

static int env_u64(const char *name, uint64_t *value) {
  const char *text = getenv(name);
  if (text == NULL || *text == '\0') return 0;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 0);
  if (errno || *end != '\0') {
    fprintf(stderr, "fuzz_cli: %s=%s is not a number\n", name, text);
    exit(2);
  }
  *value = v;
  return 1;
}

/* PG_FUZZ_KEEP_GOING: the broken promises by kind (the text without its
 * numbers), each with its first case. */
#define MAX_KINDS 64
#define SHOWN_FAILURES 20
typedef struct {
  char text[sizeof g_failure_text];
  uint64_t first_case;
  long count;
} failure_kind;

static void count_failure(failure_kind *kinds, int *kind_count, uint64_t index) {
  char text[sizeof g_failure_text];
  size_t n = 0;
  for (const char *c = g_failure; *c && n + 1 < sizeof text; ++c) {
    if (*c < '0' || *c > '9') {
      text[n++] = *c;
      continue;
    }
    text[n++] = '#'; /* a number, decimal or 0x.. */
    while (c[1] == 'x' || (c[1] >= '0' && c[1] <= '9') || (c[1] >= 'a' && c[1] <= 'f')) ++c;
  }
  text[n] = '\0';
  for (int k = 0; k < *kind_count; ++k)
    if (strcmp(kinds[k].text, text) == 0) {
      ++kinds[k].count;
      return;
    }
  if (*kind_count == MAX_KINDS) return;
  failure_kind *kind = &kinds[(*kind_count)++];
  memcpy(kind->text, text, n + 1);
  kind->first_case = index;
  kind->count = 1;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Cases first..last-1 (one: a single case, its input printed), within
 * `seconds`. Returns the exit code. */
static int run_cases(uint64_t first, uint64_t last, uint64_t seconds, int one,
                     int keep_going) {
  uint64_t seed = g_seed;
  signal(SIGALRM, on_alarm);
  tally t = {0, 0, 0, 0};
  double start = now();
  uint64_t done = 0;
  long failures = 0;
  static failure_kind kinds[MAX_KINDS];
  int kind_count = 0;
  for (uint64_t i = first; i < last; ++i) {
    if (!one && now() - start > (double)seconds) break;
    g_case = i;
    report_case(i);
    int show = failures < SHOWN_FAILURES;
    ++done;
    if (run_case(i, one, show, &t)) continue;
    ++failures;
    if (show) {
      fprintf(stderr, "fuzz_cli: FAIL: case %llu: %s\n", (unsigned long long)i, g_failure);
      fprintf(stderr, "fuzz_cli: PG_FUZZ_SEED=%llu PG_FUZZ_CASE=%llu reruns it\n",
              (unsigned long long)seed, (unsigned long long)i);
    }
    if (!keep_going) {
      report_case(TOLD);
      return 1;
    }
    count_failure(kinds, &kind_count, i);
  }
  if (failures) {
    fprintf(stderr,
            "fuzz_cli: %ld of %llu cases broke a promise, seed %llu (%ld of %ld argument "
            "vectors parsed, %ld of %ld shape texts read whole):\n",
            failures, (unsigned long long)done, (unsigned long long)seed, t.args_parsed, t.args,
            t.shapes_read, t.shapes);
    for (int k = 0; k < kind_count; ++k)
      fprintf(stderr, "  %6ld x %s (first: case %llu)\n", kinds[k].count, kinds[k].text,
              (unsigned long long)kinds[k].first_case);
    report_case(TOLD);
    return 1;
  }
  printf("fuzz_cli: %llu cases in %.1f s, seed %llu: %ld argument vectors (%ld parsed), "
         "%ld shape texts (%ld read whole); every promise kept\n",
         (unsigned long long)done, now() - start, (unsigned long long)seed, t.args,
         t.args_parsed, t.shapes, t.shapes_read);
  return 0;
}

int main(void) {
  uint64_t seed = DEFAULT_SEED, cases = DEFAULT_CASES, seconds = DEFAULT_SECONDS, only = 0;
  env_u64("PG_FUZZ_SEED", &seed);
  int cases_given = env_u64("PG_FUZZ_CASES", &cases);
  if (env_u64("PG_FUZZ_SECONDS", &seconds) && !cases_given) cases = UINT64_MAX;
  int one = env_u64("PG_FUZZ_CASE", &only);
  uint64_t keep_going = 0;
  env_u64("PG_FUZZ_KEEP_GOING", &keep_going);
  g_seed = seed;
  if (one) return run_cases(only, only + 1, seconds, 1, 0);

  int fds[2];
  if (pipe(fds) != 0) {
    perror("fuzz_cli: pipe");
    return 1;
  }
  fflush(NULL);
  pid_t child = fork();
  if (child < 0) {
    perror("fuzz_cli: fork");
    return 1;
  }
  if (child == 0) {
    close(fds[0]);
    g_report_fd = fds[1];
    int code = run_cases(0, cases, seconds, 0, keep_going != 0);
    fflush(NULL);
    exit(code);
  }
  close(fds[1]);
  /* The last whole number the child wrote, if any. */
  uint64_t last = 0, value;
  int heard = 0;
  unsigned char buf[4096];
  size_t have = 0;
  for (;;) {
    ssize_t n = read(fds[0], buf + have, sizeof buf - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += (size_t)n;
    size_t whole = have / sizeof value * sizeof value;
    if (whole) {
      memcpy(&last, buf + whole - sizeof value, sizeof value);
      heard = 1;
    }
    memmove(buf, buf + whole, have - whole);
    have -= whole;
  }
  close(fds[0]);
  int status;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR) {
      perror("fuzz_cli: waitpid");
      return 1;
    }
  if (WIFEXITED(status) && (WEXITSTATUS(status) == 0 || (heard && last == TOLD)))
    return WEXITSTATUS(status);
  char how[64];
  if (WIFSIGNALED(status)) snprintf(how, sizeof how, "signal %d", WTERMSIG(status));
  else snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(status));
  if (!heard || last == TOLD)
    fprintf(stderr, "fuzz_cli: FAIL: the cases' process ended with %s outside a case\n", how);
  else
    fprintf(stderr,
            "fuzz_cli: FAIL: the cases' process ended with %s in case %llu (a crash or a "
            "sanitizer's report, above); PG_FUZZ_SEED=%llu PG_FUZZ_CASE=%llu reruns it\n",
            how, (unsigned long long)last, (unsigned long long)seed, (unsigned long long)last);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
