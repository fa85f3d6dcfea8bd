/* What the pipegemm tool's argument parsing writes, and what is written
 * about it: argument text repeated in a message escaped so that it stays
 * one printable line, --help and --version, the usage texts
 * (src/cli/args_usage.c) against the option table both ways, and every
 * `pipegemm ...` command line in the README's and docs/' code blocks, each
 * of which must parse. No GPU needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>

#include "cli_args_common.h"

/* ---- argument text in messages -------------------------------------------- */

/* Whether the message is one line of well-formed UTF-8 without a control
 * character (C0, DEL or C1): what a terminal shows as it is. */
static int is_printable_utf8(const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p;) {
    unsigned c = *p, need = 0, code = 0, least = 0;
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) return 0;
      ++p;
      continue;
    }
    if (c >= 0xc2 && c <= 0xdf) need = 1, code = c & 0x1f, least = 0x80;
    else if (c >= 0xe0 && c <= 0xef) need = 2, code = c & 0x0f, least = 0x800;
    else if (c >= 0xf0 && c <= 0xf4) need = 3, code = c & 0x07, least = 0x10000;
    else return 0;
    ++p;
    for (unsigned i = 0; i < need; ++i, ++p) {
      if ((*p & 0xc0) != 0x80) return 0;
      code = code << 6 | (*p & 0x3f);
    }
    if (code < least || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff) ||
        (code >= 0x80 && code < 0xa0))
      return 0;
  }
  return 1;
}

/* A usage error that repeats argument text: `part` in it, escaped, and the
 * whole message printable. */
static void expect_escaped(parse_result r, const char *part) {
  expect_usage_error(r, part);
  if (!is_printable_utf8(r.err)) print_error("message '%s' holds raw bytes\n", r.err);
  assert_true(is_printable_utf8(r.err));
}

/* Control bytes and what is not UTF-8 come out as escapes wherever a
 * message repeats what was typed; well-formed UTF-8 as it is. */
static void test_argument_text_escaped(void **state) {
  (void)state;
  expect_escaped(PARSE("bench", "--variant", "a\nb\x1b[31mred\xff"),
                 "unknown variant 'a\\nb\\x1b[31mred\\xff'");
  expect_escaped(PARSE("bench", "--variant", "cp_async,\r"), "unknown variant '\\r'");
  expect_escaped(PARSE("bench", "--variant", "back\\slash"), "'back\\\\slash'");
  expect_escaped(PARSE("bench", "--variant", "caf\xc3\xa9"), "unknown variant 'caf\xc3\xa9'");
  /* C1 controls, overlong forms, surrogates, cut and stray sequences. */
  expect_escaped(PARSE("bench", "--variant", "\xc2\x9b" "2J"), "'\\xc2\\x9b2J'");
  expect_escaped(PARSE("bench", "--variant", "\xc0\xaf"), "'\\xc0\\xaf'");
  expect_escaped(PARSE("bench", "--variant", "\xed\xa0\x80"), "'\\xed\\xa0\\x80'");
  expect_escaped(PARSE("bench", "--variant", "\xe2\x82"), "'\\xe2\\x82'");
  expect_escaped(PARSE("bench", "--variant", "\x80x\xf4\x90\x80\x80"),
                 "'\\x80x\\xf4\\x90\\x80\\x80'");
  expect_escaped(PARSE("bench", "--variant", "baseline,,\x07"),
                 "empty name in 'baseline,,\\x07'");
  expect_escaped(PARSE("bench", "--size", "1\n2"),
                 "--size expects a non-negative integer, got '1\\n2'");
  expect_escaped(PARSE("bench", "--iters", "\t3"), "got '\\t3'");
  expect_escaped(PARSE("bench", "--seed", "\x80"), "--seed expects a non-negative integer, got '\\x80'");
  expect_escaped(PARSE("bench", "--format", "csv\x7f"), "got 'csv\\x7f'");
  expect_escaped(PARSE("bench", "--flush-l2", "o\x1bn"), "got 'o\\x1bn'");
  expect_escaped(PARSE("bench", "--inputs", "\xfe"), "got '\\xfe'");
  expect_escaped(PARSE("bench", "--stages", "2\n3"), "--stages: '2\\n3' is not");
  expect_escaped(PARSE("bench", "--stages", "2,,\x1b"), "empty entry in '2,,\\x1b'");
  expect_escaped(PARSE("bench", "--frob\x1b"), "unknown option '--frob\\x1b'");
  expect_escaped(PARSE("bench", "--frob\n=3"), "unknown option '--frob\\n'");
  expect_escaped(PARSE("bench", "-\x1b"), "unknown option '-\\x1b'");
  expect_escaped(PARSE("bench", "extra\n"), "unexpected argument 'extra\\n'");
  expect_escaped(PARSE("--version", "x\ny"), "unexpected argument 'x\\ny'");
  expect_escaped(PARSE("study", "pipe\x7flining"), "unknown experiment 'pipe\\x7flining'");
  expect_escaped(PARSE("bench\xff"), "unknown command 'bench\\xff'");
  expect_escaped(PARSE("inspect", "--swap", "a\nb"), "got 'a\\nb'");
  expect_escaped(PARSE("inspect", "--swap", "cp_async=\x1b"), "unknown variant '\\x1b'");
  expect_escaped(PARSE("inspect", "--swap", "\x1b=cp_async"), "unknown variant '\\x1b'");

  /* A long argument is repeated in part, whole escapes only, and the rest
   * of the message still fits. */
  static char escapes[4000];
  memset(escapes, '\x1b', sizeof escapes - 1);
  parse_result r = PARSE("bench", "--variant", escapes);
  expect_escaped(r, "unknown variant '\\x1b\\x1b");
  assert_non_null(strstr(r.err, "\\x1b...' (valid: "));
  assert_non_null(strstr(r.err, "; or all)"));
}

/* The escaping itself: as snprintf, but a text that does not fit is cut
 * after a whole character or escape and ends in "...". */
static void test_escape_text(void **state) {
  (void)state;
  char buf[16];
  pgc_escape_text(buf, sizeof buf, "plain", 5);
  assert_string_equal(buf, "plain");
  pgc_escape_text(buf, sizeof buf, "a\0b", 3);
  assert_string_equal(buf, "a\\x00b");
  pgc_escape_text(buf, sizeof buf, "\x1b\x1b\x1b\x1b", 4);
  assert_string_equal(buf, "\\x1b\\x1b\\x1b..."); /* 16 bytes would not hold all four */
  pgc_escape_text(buf, sizeof buf, "0123456789abcdef", 16);
  assert_string_equal(buf, "0123456789ab...");
  pgc_escape_text(buf, sizeof buf, "0123456789abcde", 15);
  assert_string_equal(buf, "0123456789abcde");
  pgc_escape_text(buf, sizeof buf, "0123456789ab\xc3\xa9\xc3\xa9", 16);
  assert_string_equal(buf, "0123456789ab..."); /* no half of an é */
  pgc_escape_text(buf, 3, "abcdef", 6);
  assert_string_equal(buf, "ab");
  pgc_escape_text(buf, 1, "abc", 3);
  assert_string_equal(buf, "");
}

static void test_help_and_version(void **state) {
  (void)state;
  static const struct {
    const char *words[3];
    pgc_command topic;
  } cases[] = {
      {{"--help", NULL, NULL}, PGC_CMD_NONE},
      {{"-h", NULL, NULL}, PGC_CMD_NONE},
      {{"list", "--help", NULL}, PGC_CMD_LIST},
      {{"bench", "-h", NULL}, PGC_CMD_BENCH},
      {{"bench", "--size=8", "--help"}, PGC_CMD_BENCH},
      {{"study", "--help", NULL}, PGC_CMD_STUDY},
      {{"study", "pipelining", "-h"}, PGC_CMD_STUDY},
      {{"study", "single-warp", "--help"}, PGC_CMD_STUDY},
      {{"profile", "--help", NULL}, PGC_CMD_PROFILE},
      {{"inspect", "--check", "-h"}, PGC_CMD_INSPECT},
      {{"trace", "--help", NULL}, PGC_CMD_TRACE},
      {{"trace", "--variant=cp_async", "-h"}, PGC_CMD_TRACE},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    parse_result r = PARSE(cases[i].words[0], cases[i].words[1], cases[i].words[2]);
    EXPECT_OK(r);
    assert_int_equal(r.opts.command, PGC_CMD_HELP);
    assert_int_equal(r.opts.help_topic, cases[i].topic);
  }
  expect_usage_error(PARSE("--help=bench"), "takes no value");

  parse_result r = PARSE("--version");
  EXPECT_OK(r);
  assert_int_equal(r.opts.command, PGC_CMD_VERSION);
  expect_usage_error(PARSE("--version", "list"), "'list'");
}

/* Every "--word" in a usage text: the options it documents. */
static int documents(const char *text, const char *option) {
  size_t len = strlen(option);
  for (const char *p = strstr(text, option); p; p = strstr(p + 1, option)) {
    char after = p[len];
    int starts = p == text || !(p[-1] == '-' || (p[-1] >= 'a' && p[-1] <= 'z'));
    int ends = !(after == '-' || (after >= 'a' && after <= 'z') ||
                 (after >= '0' && after <= '9'));
    if (starts && ends) return 1;
  }
  return 0;
}

/* One name may be two options for different commands (--check: on|off for
 * bench and study, a flag for inspect); the command accepts the name if it
 * takes either. */
static int is_option_of(const char *word, size_t len, pgc_command command) {
  for (int i = 0; i < pgc_option_count(); ++i) {
    const char *name = pgc_option_name(i);
    if (strlen(name) == len && strncmp(name, word, len) == 0 &&
        pgc_option_applies(i, command))
      return 1;
  }
  return 0;
}

/* Whether experiment `study` accepts an option of this name. */
static int study_accepts(const char *option, pgc_study study) {
  for (int i = 0; i < pgc_option_count(); ++i)
    if (strcmp(pgc_option_name(i), option) == 0 &&
        pgc_option_applies_to_study(i, study))
      return 1;
  return 0;
}

/* The usage texts document exactly the options each command accepts. */
static void test_usage_matches_option_table(void **state) {
  (void)state;
  static const pgc_command commands[] = {PGC_CMD_NONE,    PGC_CMD_LIST,
                                         PGC_CMD_BENCH,   PGC_CMD_STUDY,
                                         PGC_CMD_PROFILE, PGC_CMD_INSPECT,
                                         PGC_CMD_TRACE};
  for (size_t c = 0; c < sizeof commands / sizeof commands[0]; ++c) {
    const char *text = pgc_usage_text(commands[c]);
    assert_non_null(text);
    assert_int_equal(text[strlen(text) - 1], '\n');
    for (int i = 0; i < pgc_option_count(); ++i) {
      if (!pgc_option_applies(i, commands[c])) continue;
      if (!documents(text, pgc_option_name(i)))
        print_error("usage of command %d lacks %s\n", (int)commands[c],
                    pgc_option_name(i));
      assert_true(documents(text, pgc_option_name(i)));
    }
    for (const char *p = strstr(text, "--"); p; p = strstr(p + 2, "--")) {
      size_t len = 2;
      while (p[len] == '-' || (p[len] >= 'a' && p[len] <= 'z') ||
             (p[len] >= '0' && p[len] <= '9'))
        ++len;
      if (!is_option_of(p, len, commands[c]))
        print_error("usage of command %d documents %.*s, not accepted\n",
                    (int)commands[c], (int)len, p);
      assert_true(is_option_of(p, len, commands[c]));
      p += len - 2;
    }
  }
}

/* The part of `text` from the line `heading` to the next blank line, copied
 * into buf (empty if there is no such heading). */
static const char *section(const char *text, const char *heading, char *buf,
                           size_t size) {
  buf[0] = '\0';
  const char *start = strstr(text, heading);
  if (!start) return buf;
  const char *end = strstr(start, "\n\n");
  size_t len = end ? (size_t)(end - start) : strlen(start);
  if (len >= size) len = size - 1;
  memcpy(buf, start, len);
  buf[len] = '\0';
  return buf;
}

/* The study's usage text has a section of options for every experiment and
 * one per experiment; together they document exactly what it accepts. */
static void test_study_usage_sections(void **state) {
  (void)state;
  static const pgc_study studies[] = {PGC_STUDY_PIPELINING,
                                      PGC_STUDY_SINGLE_WARP};
  enum { SECTION_SIZE = 4096 };
  static char common[SECTION_SIZE], own[SECTION_SIZE];
  const char *text = pgc_usage_text(PGC_CMD_STUDY);
  section(text, "options of every experiment:", common, sizeof common);
  assert_true(strlen(common) > 0);
  assert_non_null(strstr(text, "pipegemm study <experiment>"));
  for (size_t s = 0; s < sizeof studies / sizeof studies[0]; ++s) {
    const char *name = pgc_study_name(studies[s]);
    assert_non_null(name);
    char heading[64];
    snprintf(heading, sizeof heading, "options of %s:", name);
    section(text, heading, own, sizeof own);
    if (strlen(own) == 0) print_error("no '%s' in the study usage\n", heading);
    assert_true(strlen(own) > 0);
    for (int i = 0; i < pgc_option_count(); ++i) {
      const char *option = pgc_option_name(i);
      int documented = documents(common, option) || documents(own, option);
      int applies = study_accepts(option, studies[s]);
      if (documented != applies)
        print_error("study %s: %s is %s but %s\n", name, option,
                    documented ? "documented" : "not documented",
                    applies ? "accepted" : "not accepted");
      assert_int_equal(documented, applies);
    }
  }
  /* Options of every experiment apply to each of them. */
  for (int i = 0; i < pgc_option_count(); ++i) {
    if (!documents(common, pgc_option_name(i))) continue;
    for (size_t s = 0; s < sizeof studies / sizeof studies[0]; ++s)
      assert_true(study_accepts(pgc_option_name(i), studies[s]));
  }
  assert_false(pgc_option_applies_to_study(0, PGC_STUDY_NONE));
}

/* ---- the command lines the documentation shows ---------------------------- */

/* A code line "pipegemm ..." (or "build/pipegemm ..."), cut into words as
 * /bin/sh would for the simple lines the docs hold ('...' and "..."
 * quoting), up to a redirection, a pipe, a && or a comment. Returns the
 * word count, 0 for a line that runs no pipegemm. */
static int doc_words(char *line, char **words, int max) {
  char *p = line;
  while (*p == ' ') ++p;
  if (strncmp(p, "pipegemm ", 9) != 0 && strncmp(p, "build/pipegemm ", 15) != 0) return 0;
  int count = 0;
  char *out = p;
  while (*p && count < max) {
    while (*p == ' ') ++p;
    if (!*p || *p == '#' || *p == '>' || *p == '|' || *p == '&' || *p == ';' ||
        strncmp(p, "2>", 2) == 0)
      break;
    words[count++] = out;
    char quote = 0;
    while (*p && (quote || *p != ' ')) {
      if (!quote && (*p == '\'' || *p == '"')) {
        quote = *p++;
      } else if (quote && *p == quote) {
        quote = 0;
        ++p;
      } else {
        *out++ = *p++;
      }
    }
    if (*p) ++p;
    *out++ = '\0';
  }
  return count;
}

/* Checks every pipegemm line of the code blocks of one Markdown file;
 * returns how many it checked. */
static int check_doc_commands(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) fail_msg("cannot open %s", path);
  char line[1024];
  int in_code = 0, checked = 0, number = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    ++number;
    line[strcspn(line, "\n")] = '\0';
    if (strncmp(line, "```", 3) == 0) {
      in_code = !in_code;
      continue;
    }
    if (!in_code) continue;
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", line);
    char *words[MAX_ARGS];
    const int count = doc_words(copy, words, MAX_ARGS - 1);
    if (count == 0) continue;
    words[0] = (char *)"pipegemm";
    words[count] = NULL;
    pgc_options opts;
    char err[PGC_ERROR_SIZE];
    if (pgc_parse_args(count, words, &opts, err, sizeof err) != PGC_EXIT_OK)
      fail_msg("%s:%d: `%s` is a usage error: %s", path, number, line, err);
    ++checked;
  }
  fclose(f);
  return checked;
}

/* README.md and every page of docs/: each command line they show parses. */
static void test_documented_command_lines(void **state) {
  (void)state;
  int checked = check_doc_commands(PG_SOURCE_DIR "/README.md");
  DIR *docs = opendir(PG_SOURCE_DIR "/docs");
  if (docs == NULL) fail_msg("cannot open %s/docs", PG_SOURCE_DIR);
  for (struct dirent *e = readdir(docs); e != NULL; e = readdir(docs)) {
    const size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 3, ".md") != 0) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/docs/%s", PG_SOURCE_DIR, e->d_name);
    checked += check_doc_commands(path);
  }
  closedir(docs);
  assert_true(checked >= 7); /* the README's Commands block alone has 7 */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_argument_text_escaped),
      cmocka_unit_test(test_escape_text),
      cmocka_unit_test(test_help_and_version),
      cmocka_unit_test(test_usage_matches_option_table),
      cmocka_unit_test(test_study_usage_sections),
      cmocka_unit_test(test_documented_command_lines),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
