/* A short fuzz of the tool's two parsers, and its driver: pgc_parse_args
 * (src/cli/args.c) on argument vectors and pgc_shapes_parse /
 * pgc_shapes_read (src/cli/shapes.c) on shape-file text, made from the real
 * option table, variant names, numbers at the edges of int ranges, very long
 * words, random bytes, NUL bytes and CRLF, and mutations of valid inputs.
 * Each case must end within CASE_SECONDS (an alarm) and keep what args.h and
 * shapes.h promise (check_args in args.c, check_shapes in shapes.c; the
 * random source and the failure's report in common.h and common.c); in the
 * sanitizer build (make test-sanitize) a memory error or undefined behaviour
 * also ends it. No GPU. This file holds a case (run_case), the loop over the
 * cases and the child process they run in (main).
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
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define DEFAULT_SEED 20240611u
/* About 10 s in the sanitizer build on a 2-core machine, 2 s without. */
#define DEFAULT_CASES 100000
#define DEFAULT_SECONDS 20
/* A file name past PATH_MAX, which shapes.h says is cut short in messages. */
#define LONG_NAME 5000

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
