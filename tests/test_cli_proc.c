/* Running other programs (src/adapters/proc.c), against the real /bin/sh: shell
 * words come back from the shell exactly as they went in, a PATH search
 * finds /bin/sh and passes over directories and files without the execute
 * bit, and a command's stdout, stderr and exit status are captured apart
 * (or together, in order). No GPU. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "adapters/proc.h"

/* Words a shell would otherwise split, expand or choke on. */
static const char *const awkward_words[] = {
    "plain", "", " ", "two words", "it's", "''", "\"double\"", "$HOME", "${PATH}",
    "`id`", "$(id)", "a;b", "a|b", "a&b", "*", "?", "[ab]", "~", "~root", "back\\slash",
    "new\nline", "tab\there", "-n", "--flag=x,y", "#comment", "!bang", "{a,b}",
    "caf\xc3\xa9", "'leading", "trailing'", "%s\\0",
};
#define AWKWARD_COUNT (sizeof awkward_words / sizeof awkward_words[0])

static pgc_proc_result run_ok(const char *command, const pgc_proc_options *options) {
  pgc_proc_result result;
  char err[256] = "";
  int rc = pgc_proc_run(command, options, &result, err, sizeof err);
  if (rc != 0) print_error("pgc_proc_run(%s): %s\n", command, err);
  assert_int_equal(rc, 0);
  assert_non_null(result.out);
  assert_non_null(result.err);
  return result;
}

/* printf '%s\0' WORDS... through the shell: the words, NUL-separated. */
static void assert_round_trip(const char *command) {
  pgc_proc_result result = run_ok(command, NULL);
  assert_int_equal(result.exit_code, 0);
  size_t at = 0;
  for (size_t i = 0; i < AWKWARD_COUNT; ++i) {
    size_t len = strlen(awkward_words[i]);
    assert_true(at + len < result.out_len + 1);
    if (memcmp(result.out + at, awkward_words[i], len) != 0 || result.out[at + len] != '\0')
      print_error("word %zu (%s) did not come back\n", i, awkward_words[i]);
    assert_memory_equal(result.out + at, awkward_words[i], len);
    assert_int_equal(result.out[at + len], '\0');
    at += len + 1;
  }
  assert_int_equal(at, result.out_len);
  pgc_proc_result_free(&result);
}

static void test_quoting_round_trips(void **state) {
  (void)state;
  char command[4096] = "printf '%s\\0'";
  for (size_t i = 0; i < AWKWARD_COUNT; ++i)
    assert_int_equal(pgc_shell_append(command, sizeof command, awkward_words[i]), 0);
  assert_round_trip(command);

  /* The same words quoted only where needed. */
  size_t used = strlen("printf '%s\\0'");
  command[used] = '\0';
  for (size_t i = 0; i < AWKWARD_COUNT; ++i) {
    command[used++] = ' ';
    size_t need = pgc_shell_quote(command + used, sizeof command - used, awkward_words[i],
                                  PGC_QUOTE_IF_NEEDED);
    assert_true(need < sizeof command - used);
    used += need;
  }
  assert_round_trip(command);
}

static void test_quoting_text(void **state) {
  (void)state;
  char buf[64];
  assert_int_equal(pgc_shell_quote(buf, sizeof buf, "it's", PGC_QUOTE_ALWAYS), 9);
  assert_string_equal(buf, "'it'\\''s'");
  assert_int_equal(pgc_shell_quote(buf, sizeof buf, "--size=2048", PGC_QUOTE_IF_NEEDED), 11);
  assert_string_equal(buf, "--size=2048");
  pgc_shell_quote(buf, sizeof buf, "a b", PGC_QUOTE_IF_NEEDED);
  assert_string_equal(buf, "'a b'");
  pgc_shell_quote(buf, sizeof buf, "", PGC_QUOTE_IF_NEEDED);
  assert_string_equal(buf, "''");
  /* Like snprintf: the length it needs, the rest cut, always terminated. */
  char small[4];
  assert_int_equal(pgc_shell_quote(small, sizeof small, "abcdef", PGC_QUOTE_ALWAYS), 8);
  assert_string_equal(small, "'ab");
  assert_int_equal(pgc_shell_quote(NULL, 0, "abc", PGC_QUOTE_IF_NEEDED), 3);

  char line[16] = "";
  assert_int_equal(pgc_shell_append(line, sizeof line, "ls"), 0);
  assert_int_equal(pgc_shell_append(line, sizeof line, "-l"), 0);
  assert_string_equal(line, "'ls' '-l'");
  assert_int_equal(pgc_shell_append(line, sizeof line, "toolong"), -1);
  assert_string_equal(line, "'ls' '-l'"); /* unchanged */
}

/* ---- finding an executable ------------------------------------------------------ */

typedef struct {
  char root[64];
  char dir_entry[128];   /* holds a directory named "tool" */
  char plain_entry[128]; /* holds a file "tool" without the execute bit */
  char exec_entry[128];  /* holds an executable "tool" */
  char tool[160];        /* exec_entry/tool */
  char *saved_path;
} tool_dirs;

static void write_file(const char *path, mode_t mode) {
  FILE *file = fopen(path, "w");
  assert_non_null(file);
  assert_true(fputs("#!/bin/sh\nexit 0\n", file) >= 0);
  assert_int_equal(fclose(file), 0);
  assert_int_equal(chmod(path, mode), 0);
}

static int make_tool_dirs(void **state) {
  tool_dirs *dirs = calloc(1, sizeof *dirs);
  assert_non_null(dirs);
  const char *tmp = getenv("TMPDIR");
  snprintf(dirs->root, sizeof dirs->root, "%s/pg-proc-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  assert_non_null(mkdtemp(dirs->root));
  char path[256];
  snprintf(dirs->dir_entry, sizeof dirs->dir_entry, "%s/a", dirs->root);
  snprintf(dirs->plain_entry, sizeof dirs->plain_entry, "%s/b", dirs->root);
  snprintf(dirs->exec_entry, sizeof dirs->exec_entry, "%s/c", dirs->root);
  assert_int_equal(mkdir(dirs->dir_entry, 0755), 0);
  assert_int_equal(mkdir(dirs->plain_entry, 0755), 0);
  assert_int_equal(mkdir(dirs->exec_entry, 0755), 0);
  snprintf(path, sizeof path, "%s/tool", dirs->dir_entry);
  assert_int_equal(mkdir(path, 0755), 0);
  snprintf(path, sizeof path, "%s/tool", dirs->plain_entry);
  write_file(path, 0644);
  snprintf(dirs->tool, sizeof dirs->tool, "%s/tool", dirs->exec_entry);
  write_file(dirs->tool, 0755);
  const char *path_now = getenv("PATH");
  dirs->saved_path = path_now ? strdup(path_now) : NULL;
  *state = dirs;
  return 0;
}

static int remove_tool_dirs(void **state) {
  tool_dirs *dirs = *state;
  if (dirs->saved_path)
    setenv("PATH", dirs->saved_path, 1);
  else
    unsetenv("PATH");
  char path[256];
  snprintf(path, sizeof path, "%s/tool", dirs->dir_entry);
  assert_int_equal(rmdir(path), 0);
  snprintf(path, sizeof path, "%s/tool", dirs->plain_entry);
  assert_int_equal(unlink(path), 0);
  assert_int_equal(unlink(dirs->tool), 0);
  assert_int_equal(rmdir(dirs->dir_entry), 0);
  assert_int_equal(rmdir(dirs->plain_entry), 0);
  assert_int_equal(rmdir(dirs->exec_entry), 0);
  assert_int_equal(rmdir(dirs->root), 0);
  free(dirs->saved_path);
  free(dirs);
  return 0;
}

static void set_path(const char *a, const char *b) {
  char path[512];
  snprintf(path, sizeof path, "%s:%s", a, b);
  assert_int_equal(setenv("PATH", path, 1), 0);
}

static void test_path_search(void **state) {
  tool_dirs *dirs = *state;
  char found[256];
  set_path("/no/such/dir", "/bin");
  assert_int_equal(pgc_find_in_path("sh", found, sizeof found), 0);
  assert_string_equal(found, "/bin/sh");

  /* A directory and a file without the execute bit are passed over. */
  set_path(dirs->dir_entry, dirs->plain_entry);
  assert_int_equal(pgc_find_in_path("tool", found, sizeof found), -1);
  char path[512];
  snprintf(path, sizeof path, "%s:%s:%s", dirs->dir_entry, dirs->plain_entry,
           dirs->exec_entry);
  assert_int_equal(setenv("PATH", path, 1), 0);
  assert_int_equal(pgc_find_in_path("tool", found, sizeof found), 0);
  assert_string_equal(found, dirs->tool);
  /* A path that does not fit is no match. */
  assert_int_equal(pgc_find_in_path("tool", found, 8), -1);

  assert_true(pgc_is_executable("/bin/sh"));
  assert_false(pgc_is_executable("/bin"));
  assert_false(pgc_is_executable(""));
  assert_false(pgc_is_executable(NULL));
  snprintf(path, sizeof path, "%s/tool", dirs->plain_entry);
  assert_false(pgc_is_executable(path));
}

static void test_find_tool(void **state) {
  tool_dirs *dirs = *state;
  char found[256];
  pgc_tool_origin origin = PGC_TOOL_FROM_OPTION;
  char pattern[256];
  snprintf(pattern, sizeof pattern, "%s/[abc]/tool", dirs->root);
  const char *const baked[] = {"", "/no/such/tool", pattern, NULL};
  pgc_tool_search search = {"tool", NULL, "--tool", "PG_TEST_TOOL", baked, 0};
  unsetenv("PG_TEST_TOOL");
  set_path("/no/such/dir", "/bin");

  /* Baked: the glob's last executable match (c/tool, not b's or a's). */
  assert_int_equal(pgc_find_tool(&search, found, sizeof found, &origin), PGC_TOOL_FOUND);
  assert_string_equal(found, dirs->tool);
  assert_int_equal(origin, PGC_TOOL_FROM_BAKED);

  /* PATH first when asked, and a bare name is looked up on PATH. */
  search.name = "sh";
  search.path_first = 1;
  assert_int_equal(pgc_find_tool(&search, found, sizeof found, &origin), PGC_TOOL_FOUND);
  assert_string_equal(found, "/bin/sh");
  assert_int_equal(origin, PGC_TOOL_FROM_PATH);

  assert_int_equal(setenv("PG_TEST_TOOL", "sh", 1), 0);
  assert_int_equal(pgc_find_tool(&search, found, sizeof found, &origin), PGC_TOOL_FOUND);
  assert_string_equal(found, "/bin/sh");
  assert_int_equal(origin, PGC_TOOL_FROM_ENV);

  /* The option wins, and must be usable. */
  search.given = dirs->tool;
  assert_int_equal(pgc_find_tool(&search, found, sizeof found, &origin), PGC_TOOL_FOUND);
  assert_string_equal(found, dirs->tool);
  assert_int_equal(origin, PGC_TOOL_FROM_OPTION);
  search.given = dirs->dir_entry;
  assert_int_equal(pgc_find_tool(&search, found, sizeof found, &origin), PGC_TOOL_UNUSABLE);
  assert_non_null(strstr(found, "--tool "));
  assert_non_null(strstr(found, "is not an executable file"));
  search.given = NULL;
  assert_int_equal(setenv("PG_TEST_TOOL", "no-such-tool-anywhere", 1), 0);
  assert_int_equal(pgc_find_tool(&search, found, sizeof found, &origin), PGC_TOOL_UNUSABLE);
  assert_string_equal(found, "PG_TEST_TOOL=no-such-tool-anywhere is not on PATH");
  unsetenv("PG_TEST_TOOL");

  search.name = "no-such-tool-anywhere";
  search.baked = NULL;
  assert_int_equal(pgc_find_tool(&search, found, sizeof found, &origin), PGC_TOOL_NOT_FOUND);
  assert_string_equal(found, "");

  char dir[256];
  pgc_dirname("/a/b/tool", dir, sizeof dir);
  assert_string_equal(dir, "/a/b");
  pgc_dirname("/tool", dir, sizeof dir);
  assert_string_equal(dir, "/");
  pgc_dirname("tool", dir, sizeof dir);
  assert_string_equal(dir, ".");
}

/* ---- running a command ------------------------------------------------------------ */

static void test_run_captures_failure(void **state) {
  (void)state;
  pgc_proc_result result =
      run_ok("echo out; echo 'cuobjdump fatal   : no luck' >&2; echo more; exit 3", NULL);
  assert_string_equal(result.out, "out\nmore\n");
  assert_int_equal(result.out_len, strlen("out\nmore\n"));
  assert_string_equal(result.err, "cuobjdump fatal   : no luck\n");
  assert_int_equal(result.exit_code, 3);
  assert_int_equal(result.signal, 0);
  pgc_proc_result_free(&result);

  /* Together, in the order written. */
  pgc_proc_options merged = {NULL, 0, 1};
  result = run_ok("echo 1; echo 2 >&2; echo 3; echo 4 >&2", &merged);
  assert_string_equal(result.out, "1\n2\n3\n4\n");
  assert_string_equal(result.err, "");
  assert_int_equal(result.exit_code, 0);
  pgc_proc_result_free(&result);

  /* No such program: the shell's 127 and its message. */
  result = run_ok("/no/such/program --version", NULL);
  assert_int_equal(result.exit_code, 127);
  assert_true(result.err_len > 0);
  assert_string_equal(result.out, "");
  pgc_proc_result_free(&result);

  /* Killed: 128 + the signal. */
  result = run_ok("kill -TERM $$", NULL);
  assert_int_equal(result.exit_code, 128 + 15);
  assert_int_equal(result.signal, 15);
  pgc_proc_result_free(&result);
}

/* The tool ignores SIGPIPE (src/cli/main.c); a command it runs must not:
 * it is to end by it once we stop reading, as would a pipeline's writer. */
static void test_run_default_sigpipe(void **state) {
  (void)state;
  void (*saved)(int) = signal(SIGPIPE, SIG_IGN);
  assert_true(saved != SIG_ERR);
  pgc_proc_result result = run_ok("kill -PIPE $$; echo survived", NULL);
  assert_string_equal(result.out, "");
  assert_int_equal(result.signal, SIGPIPE);
  assert_int_equal(result.exit_code, 128 + SIGPIPE);
  pgc_proc_result_free(&result);
  /* And its own pipelines: yes ends by SIGPIPE, quietly, once head is done. */
  result = run_ok("yes | head -c 1 >/dev/null", NULL);
  assert_string_equal(result.err, "");
  assert_int_equal(result.exit_code, 0);
  pgc_proc_result_free(&result);
  signal(SIGPIPE, saved);
}

static void test_run_large_output(void **state) {
  (void)state;
  /* More than a pipe holds on both streams at once: neither may block. */
  pgc_proc_result result =
      run_ok("head -c 1000000 /dev/zero; head -c 300000 /dev/zero >&2; "
             "head -c 1000000 /dev/zero",
             NULL);
  assert_int_equal(result.out_len, 2000000);
  assert_int_equal(result.err_len, 300000);
  assert_int_equal(result.exit_code, 0);
  pgc_proc_result_free(&result);
}

static void test_run_path_prepend(void **state) {
  (void)state;
  char *saved = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
  assert_int_equal(setenv("PATH", "/usr/bin:/bin", 1), 0);
  const char *const dirs[] = {"/first", NULL, "", "/has:colon", "/second"};
  pgc_proc_options options = {dirs, 5, 0};
  pgc_proc_result result = run_ok("printf '%s' \"$PATH\"", &options);
  assert_string_equal(result.out, "/first:/second:/usr/bin:/bin");
  pgc_proc_result_free(&result);
  /* Ours stays as it was. */
  assert_string_equal(getenv("PATH"), "/usr/bin:/bin");
  if (saved) assert_int_equal(setenv("PATH", saved, 1), 0);
  free(saved);
}

static void test_error_line(void **state) {
  (void)state;
  char line[128];
  assert_int_equal(
      pgc_error_line("cuobjdump warning : Function listed in --function 'x' not found\n"
                     "cuobjdump warning : Function listed in --function 'x' not found\n"
                     "  cuobjdump fatal   : Could not find executable file 'nvdisasm'  \n",
                     line, sizeof line),
      1);
  assert_string_equal(line, "cuobjdump fatal   : Could not find executable file 'nvdisasm'");
  assert_int_equal(pgc_error_line("\n\n  first words\r\nsecond\n", line, sizeof line), 0);
  assert_string_equal(line, "first words");
  assert_int_equal(pgc_error_line("==ERROR== it broke\n", line, sizeof line), 1);
  assert_string_equal(line, "==ERROR== it broke");
  assert_int_equal(pgc_error_line("", line, sizeof line), 0);
  assert_string_equal(line, "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_quoting_round_trips),
      cmocka_unit_test(test_quoting_text),
      cmocka_unit_test_setup_teardown(test_path_search, make_tool_dirs, remove_tool_dirs),
      cmocka_unit_test_setup_teardown(test_find_tool, make_tool_dirs, remove_tool_dirs),
      cmocka_unit_test(test_run_captures_failure),
      cmocka_unit_test(test_run_default_sigpipe),
      cmocka_unit_test(test_run_large_output),
      cmocka_unit_test(test_run_path_prepend),
      cmocka_unit_test(test_error_line),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
