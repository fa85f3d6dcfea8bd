/* Other programs, for the commands that run them (inspect runs cuobjdump,
 * profile runs ncu): finding an executable, writing a word for /bin/sh, and
 * running a command line with its output captured. Nothing here prints;
 * failures come back as a one-line reason. tests/test_cli_proc.c checks it
 * against the real /bin/sh. */
#ifndef PGC_PROC_H
#define PGC_PROC_H

#include <stddef.h>

/* ---- finding an executable ------------------------------------------------ */

/* Whether `path` names a regular file this process may execute. */
int pgc_is_executable(const char *path);

/* `name` in the directories of $PATH, in order (an empty entry is the
 * current directory). Returns 0 with the path in buf, or -1 when no
 * directory has it as an executable file (or the path does not fit). */
int pgc_find_in_path(const char *name, char *buf, size_t size);

/* Where a tool may be, in the order tried: the value of a command-line
 * option, an environment variable, then $PATH and the baked paths (which of
 * the two first: path_first). A value from the option or the environment
 * that holds no '/' is looked up on $PATH; it must be usable, or the search
 * stops there with the reason. */
typedef struct {
  const char *name;         /* looked for on $PATH: "ncu" */
  const char *given;        /* the option's value, or NULL */
  const char *given_label;  /* the option, for messages: "--ncu" */
  const char *env;          /* the variable's name, or NULL: "PG_NCU" */
  /* Fixed places, NULL-terminated (NULL: none); "" entries are skipped. An
   * entry with a glob character ('*', '?', '[') takes its last match, the
   * newest of a versioned install. */
  const char *const *baked;
  int path_first;           /* 1: $PATH before the baked paths */
} pgc_tool_search;

enum {
  PGC_TOOL_FOUND = 0,
  PGC_TOOL_UNUSABLE = -1, /* the option or variable names no executable */
  PGC_TOOL_NOT_FOUND = -2 /* nothing given, nothing found */
};

/* Where a found tool came from. */
typedef enum {
  PGC_TOOL_FROM_OPTION,
  PGC_TOOL_FROM_ENV,
  PGC_TOOL_FROM_PATH,
  PGC_TOOL_FROM_BAKED
} pgc_tool_origin;

/* Follows the search. PGC_TOOL_FOUND with the path in buf and, when
 * `origin` is not NULL, where it came from; PGC_TOOL_UNUSABLE with why in
 * buf ("PG_NCU=/x/ncu is not an executable file"); PGC_TOOL_NOT_FOUND with
 * buf empty, for the caller to say what to install. */
int pgc_find_tool(const pgc_tool_search *search, char *buf, size_t size,
                  pgc_tool_origin *origin);

/* The directory part of a path ("/a/b/ncu" -> "/a/b", "ncu" -> "."). */
void pgc_dirname(const char *path, char *buf, size_t size);

/* ---- shell words ------------------------------------------------------------ */

typedef enum {
  PGC_QUOTE_ALWAYS,   /* '...' around every word: command lines we run */
  PGC_QUOTE_IF_NEEDED /* a word of [A-Za-z0-9_./=,:+@%-] stays bare: for a
                         command line a reader sees */
} pgc_quote;

/* `word` as one word of a POSIX shell, in single quotes with each ' written
 * '\''. Like snprintf: writes at most size bytes (NUL included) and returns
 * the length the whole word needs, so that a result >= size means it was
 * cut. buf may be NULL when size is 0. */
size_t pgc_shell_quote(char *buf, size_t size, const char *word, pgc_quote quote);

/* Appends `word`, always quoted, to the command line in buf, after a space
 * unless buf is empty. Returns 0, or -1 when it does not fit (buf is then
 * unchanged). */
int pgc_shell_append(char *buf, size_t size, const char *word);

/* ---- running a command -------------------------------------------------------- */

/* What a command printed (at most PGC_PROC_MAX_OUTPUT bytes) and how it
 * ended. */
#define PGC_PROC_MAX_OUTPUT ((size_t)256 << 20)

typedef struct {
  /* Directories put in front of the child's $PATH, in order; NULL and ""
   * entries are skipped. So that a tool finds its helpers (cuobjdump its
   * nvdisasm) where we found the tool. */
  const char *const *path_prepend;
  int path_prepend_count;
  /* 1: the child's stderr goes where its stdout goes, in the order written
   * (as 2>&1): one text, an error next to the output it explains. */
  int merge_stderr;
} pgc_proc_options;

typedef struct {
  char *out;     /* stdout (and stderr with merge_stderr), NUL-terminated */
  size_t out_len;
  char *err;     /* stderr, NUL-terminated; "" with merge_stderr */
  size_t err_len;
  int exit_code; /* the exit status; 128 + the signal for a killed child */
  int signal;    /* the signal that killed it, or 0 */
} pgc_proc_result;

/* Runs `command` with /bin/sh -c, stdin inherited, and waits for it.
 * Returns 0 with *result (free it with pgc_proc_result_free) whenever the
 * shell ran, whatever the command's exit status (a shell that finds no such
 * program exits 127, one that cannot execute it 126); -1 with a one-line
 * reason in err when it could not be started, read or waited for, when host
 * memory ran out, or past PGC_PROC_MAX_OUTPUT bytes (result then holds
 * nothing). `options` may be NULL. */
int pgc_proc_run(const char *command, const pgc_proc_options *options,
                 pgc_proc_result *result, char *err, size_t err_size);
void pgc_proc_result_free(pgc_proc_result *result);

/* The line of a tool's messages that says what went wrong: the first that
 * mentions "fatal" or "error" (any case) and is no warning, trimmed, into
 * buf; returns 1. Without one, the first line that is not blank ("" for
 * none) and 0. */
int pgc_error_line(const char *text, char *buf, size_t size);

#endif
