/* Finding, quoting and running other programs (see proc.h). */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ---- finding an executable ------------------------------------------------ */

int pgc_is_executable(const char *path) {
  struct stat info;
  return path && path[0] != '\0' && stat(path, &info) == 0 && S_ISREG(info.st_mode) &&
         access(path, X_OK) == 0;
}

int pgc_find_in_path(const char *name, char *buf, size_t size) {
  const char *path = getenv("PATH");
  if (!path || !buf || size == 0) return -1;
  for (;;) {
    size_t len = strcspn(path, ":");
    /* An empty entry is the current directory. */
    int n = len == 0 ? snprintf(buf, size, "./%s", name)
                     : snprintf(buf, size, "%.*s/%s", (int)len, path, name);
    if (n > 0 && (size_t)n < size && pgc_is_executable(buf)) return 0;
    if (path[len] == '\0') break;
    path += len + 1;
  }
  buf[0] = '\0';
  return -1;
}

/* A value the user gave: a path, or a name to look up on $PATH. `how` says
 * where it came from in the reason: "--ncu x" or "PG_NCU=x". */
static int resolve_given(const char *value, const char *how, const char *separator,
                         char *buf, size_t size) {
  if (strchr(value, '/')) {
    if (pgc_is_executable(value) && strlen(value) < size) {
      snprintf(buf, size, "%s", value);
      return PGC_TOOL_FOUND;
    }
    snprintf(buf, size, "%s%s%s is not an executable file", how, separator, value);
    return PGC_TOOL_UNUSABLE;
  }
  if (pgc_find_in_path(value, buf, size) == 0) return PGC_TOOL_FOUND;
  snprintf(buf, size, "%s%s%s is not on PATH", how, separator, value);
  return PGC_TOOL_UNUSABLE;
}

/* One baked entry: a path, or a glob pattern whose last match wins. */
static int find_baked(const char *entry, char *buf, size_t size) {
  if (entry[0] == '\0') return -1;
  if (!strpbrk(entry, "*?[")) {
    if (!pgc_is_executable(entry) || strlen(entry) >= size) return -1;
    snprintf(buf, size, "%s", entry);
    return 0;
  }
  glob_t found;
  int rc = -1;
  if (glob(entry, 0, NULL, &found) == 0) {
    for (size_t i = found.gl_pathc; i > 0 && rc != 0; --i) {
      const char *path = found.gl_pathv[i - 1];
      if (pgc_is_executable(path) && strlen(path) < size) {
        snprintf(buf, size, "%s", path);
        rc = 0;
      }
    }
  }
  globfree(&found);
  return rc;
}

static int find_any_baked(const char *const *baked, char *buf, size_t size) {
  for (int i = 0; baked && baked[i]; ++i)
    if (find_baked(baked[i], buf, size) == 0) return 0;
  return -1;
}

int pgc_find_tool(const pgc_tool_search *search, char *buf, size_t size,
                  pgc_tool_origin *origin) {
  pgc_tool_origin from = PGC_TOOL_FROM_OPTION;
  int rc = PGC_TOOL_NOT_FOUND;
  const char *env = search->env ? getenv(search->env) : NULL;
  if (size == 0) return PGC_TOOL_NOT_FOUND;
  if (search->given && search->given[0]) {
    rc = resolve_given(search->given, search->given_label, " ", buf, size);
  } else if (env && env[0]) {
    from = PGC_TOOL_FROM_ENV;
    rc = resolve_given(env, search->env, "=", buf, size);
  } else {
    for (int pass = 0; pass < 2 && rc == PGC_TOOL_NOT_FOUND; ++pass) {
      int path_now = (pass == 0) == (search->path_first != 0);
      from = path_now ? PGC_TOOL_FROM_PATH : PGC_TOOL_FROM_BAKED;
      if (path_now ? pgc_find_in_path(search->name, buf, size) == 0
                   : find_any_baked(search->baked, buf, size) == 0)
        rc = PGC_TOOL_FOUND;
    }
    if (rc != PGC_TOOL_FOUND) buf[0] = '\0';
  }
  if (rc == PGC_TOOL_FOUND && origin) *origin = from;
  return rc;
}

void pgc_dirname(const char *path, char *buf, size_t size) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(buf, size, ".");
  else if (slash == path)
    snprintf(buf, size, "/");
  else
    snprintf(buf, size, "%.*s", (int)(slash - path), path);
}

/* ---- shell words ------------------------------------------------------------ */

static int is_plain_word(const char *word) {
  static const char plain[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=,:+@%-";
  return word[0] != '\0' && word[strspn(word, plain)] == '\0';
}

size_t pgc_shell_quote(char *buf, size_t size, const char *word, pgc_quote quote) {
  size_t len = 0;
#define PUT(c)                        \
  do {                                \
    if (len + 1 < size) buf[len] = (c); \
    ++len;                            \
  } while (0)
  if (quote == PGC_QUOTE_IF_NEEDED && is_plain_word(word)) {
    for (const char *p = word; *p; ++p) PUT(*p);
  } else {
    PUT('\'');
    for (const char *p = word; *p; ++p) {
      if (*p == '\'') {
        /* Close the quotes, an escaped quote, open them again. */
        PUT('\'');
        PUT('\\');
        PUT('\'');
        PUT('\'');
      } else {
        PUT(*p);
      }
    }
    PUT('\'');
  }
#undef PUT
  if (size > 0) buf[len < size ? len : size - 1] = '\0';
  return len;
}

int pgc_shell_append(char *buf, size_t size, const char *word) {
  size_t used = strlen(buf);
  size_t gap = used ? 1 : 0;
  size_t need = pgc_shell_quote(NULL, 0, word, PGC_QUOTE_ALWAYS);
  if (used + gap + need + 1 > size) return -1;
  if (gap) buf[used] = ' ';
  pgc_shell_quote(buf + used + gap, size - used - gap, word, PGC_QUOTE_ALWAYS);
  return 0;
}

/* ---- running a command -------------------------------------------------------- */

#define READ_CHUNK 65536

typedef struct {
  char *data;
  size_t len, capacity;
} byte_buffer;

/* Room for `more` bytes and a NUL after them; -1 when out of memory. */
static int reserve(byte_buffer *b, size_t more) {
  if (b->capacity - b->len > more) return 0;
  size_t capacity = b->capacity ? b->capacity : READ_CHUNK;
  while (capacity - b->len <= more) capacity *= 2;
  char *grown = realloc(b->data, capacity);
  if (!grown) return -1;
  b->data = grown;
  b->capacity = capacity;
  return 0;
}

/* An empty text for a stream that said nothing. */
static int terminate(byte_buffer *b) {
  if (reserve(b, 0) != 0) return -1;
  b->data[b->len] = '\0';
  return 0;
}

/* A descriptor moved to 3 or above, closed on exec: the child's 1 and 2 are
 * made by dup2 from these, which must not already be 1 or 2 (our stdout
 * may be closed) nor leak into the child. */
static int high_cloexec(int fd) {
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  int saved = errno;
  close(fd);
  errno = saved;
  return moved;
}

static int make_pipe(int fds[2]) {
  int raw[2];
  if (pipe(raw) != 0) return -1;
  fds[0] = high_cloexec(raw[0]);
  fds[1] = high_cloexec(raw[1]);
  if (fds[0] >= 0 && fds[1] >= 0) return 0;
  if (fds[0] >= 0) close(fds[0]);
  if (fds[1] >= 0) close(fds[1]);
  return -1;
}

/* The environment of the child: ours, with the directories in front of
 * PATH. Built before spawning, since a child of a threaded process (the
 * CUDA runtime's) may not allocate. *environment is NULL when the child
 * takes ours as it is; free both with free_environment. */
typedef struct {
  char **environment;
  char *path_entry;
} child_env;

static void free_environment(child_env *env) {
  free(env->environment);
  free(env->path_entry);
  env->environment = NULL;
  env->path_entry = NULL;
}

static int build_environment(const pgc_proc_options *options, child_env *env) {
  env->environment = NULL;
  env->path_entry = NULL;
  if (!options || options->path_prepend_count <= 0) return 0;
  const char *old = getenv("PATH");
  char default_path[1024] = "";
  if (!old) {
    /* An unset PATH means the shell's default; keep it behind ours. */
    size_t n = confstr(_CS_PATH, default_path, sizeof default_path);
    if (n == 0 || n > sizeof default_path) default_path[0] = '\0';
    old = default_path;
  }
  size_t length = strlen("PATH=") + strlen(old) + 1;
  for (int i = 0; i < options->path_prepend_count; ++i)
    if (options->path_prepend[i]) length += strlen(options->path_prepend[i]) + 1;
  env->path_entry = malloc(length);
  if (!env->path_entry) return -1;
  strcpy(env->path_entry, "PATH=");
  for (int i = 0; i < options->path_prepend_count; ++i) {
    const char *dir = options->path_prepend[i];
    /* A ':' would split the directory in two. */
    if (!dir || dir[0] == '\0' || strchr(dir, ':')) continue;
    strcat(env->path_entry, dir);
    strcat(env->path_entry, ":");
  }
  strcat(env->path_entry, old);

  size_t count = 0;
  while (environ && environ[count]) ++count;
  env->environment = calloc(count + 2, sizeof *env->environment);
  if (!env->environment) {
    free_environment(env);
    return -1;
  }
  size_t kept = 0;
  for (size_t i = 0; i < count; ++i)
    if (strncmp(environ[i], "PATH=", 5) != 0) env->environment[kept++] = environ[i];
  env->environment[kept] = env->path_entry;
  return 0;
}

/* Starts /bin/sh -c command with stdout on out_fd and stderr on err_fd.
 * The child gets SIGPIPE's default back: the tool ignores it (to tell a
 * closed stdout as a failed write), and an ignored signal stays ignored
 * across exec, but a child that writes on after we stop reading must end
 * by it (pgc_proc_run), as must the pipelines of its shell. */
static int spawn_shell(const char *command, int out_fd, int err_fd, char **environment,
                       pid_t *pid) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  int rc = posix_spawn_file_actions_init(&actions);
  if (rc != 0) return rc;
  rc = posix_spawnattr_init(&attributes);
  if (rc != 0) {
    posix_spawn_file_actions_destroy(&actions);
    return rc;
  }
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  rc = posix_spawnattr_setsigdefault(&attributes, &defaults);
  if (rc == 0) rc = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
  if (rc == 0) {
    char sh[] = "sh", dash_c[] = "-c";
    char *argv[] = {sh, dash_c, (char *)command, NULL};
    rc = posix_spawn(pid, "/bin/sh", &actions, &attributes, argv,
                     environment ? environment : environ);
  }
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  return rc;
}

/* Reads the child's pipes to their end. 0; -1 with a reason in err. */
static int read_pipes(int out_fd, int err_fd, byte_buffer *out, byte_buffer *errors,
                      char *err, size_t err_size) {
  struct pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  byte_buffer *into[2] = {out, errors};
  int open_count = err_fd >= 0 ? 2 : 1;
  if (err_fd < 0) fds[1].fd = -1;
  while (open_count > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      snprintf(err, err_size, "cannot wait for the output: %s", strerror(errno));
      return -1;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      if (out->len + errors->len >= PGC_PROC_MAX_OUTPUT) {
        snprintf(err, err_size, "more than %zu MiB of output", PGC_PROC_MAX_OUTPUT >> 20);
        return -1;
      }
      if (reserve(into[i], READ_CHUNK) != 0) {
        snprintf(err, err_size, "out of host memory for the output");
        return -1;
      }
      ssize_t got = read(fds[i].fd, into[i]->data + into[i]->len, READ_CHUNK);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        snprintf(err, err_size, "cannot read the output: %s", strerror(errno));
        return -1;
      }
      if (got == 0) {
        fds[i].fd = -1; /* end of this stream; poll ignores it now */
        --open_count;
      }
      into[i]->len += (size_t)got;
    }
  }
  return 0;
}

static int wait_for(pid_t pid, pgc_proc_result *result, char *err, size_t err_size) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno == EINTR) continue;
    snprintf(err, err_size, "cannot wait for the command: %s", strerror(errno));
    return -1;
  }
  result->exit_code = -1;
  if (WIFEXITED(status)) {
    result->exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result->signal = WTERMSIG(status);
    result->exit_code = 128 + result->signal;
  }
  return 0;
}

int pgc_proc_run(const char *command, const pgc_proc_options *options,
                 pgc_proc_result *result, char *err, size_t err_size) {
  memset(result, 0, sizeof *result);
  int merge = options && options->merge_stderr;
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  child_env env;
  if (build_environment(options, &env) != 0) {
    snprintf(err, err_size, "out of host memory");
    return -1;
  }
  if (make_pipe(out_pipe) != 0 || (!merge && make_pipe(err_pipe) != 0)) {
    snprintf(err, err_size, "cannot make a pipe: %s", strerror(errno));
    if (out_pipe[0] >= 0) close(out_pipe[0]);
    if (out_pipe[1] >= 0) close(out_pipe[1]);
    free_environment(&env);
    return -1;
  }
  pid_t pid = 0;
  int rc = spawn_shell(command, out_pipe[1], merge ? out_pipe[1] : err_pipe[1],
                       env.environment, &pid);
  free_environment(&env);
  close(out_pipe[1]);
  if (!merge) close(err_pipe[1]);
  if (rc != 0) {
    snprintf(err, err_size, "cannot run /bin/sh: %s", strerror(rc));
    close(out_pipe[0]);
    if (!merge) close(err_pipe[0]);
    return -1;
  }

  byte_buffer out = {0}, errors = {0};
  rc = read_pipes(out_pipe[0], merge ? -1 : err_pipe[0], &out, &errors, err, err_size);
  /* Closing the pipes first: a child still writing (we stopped reading)
   * ends on SIGPIPE rather than blocking the wait forever. */
  close(out_pipe[0]);
  if (!merge) close(err_pipe[0]);
  if (wait_for(pid, result, err, err_size) != 0) rc = -1;
  if (rc == 0 && (terminate(&out) != 0 || terminate(&errors) != 0)) {
    snprintf(err, err_size, "out of host memory for the output");
    rc = -1;
  }
  if (rc != 0) {
    free(out.data);
    free(errors.data);
    memset(result, 0, sizeof *result);
    return -1;
  }
  result->out = out.data;
  result->out_len = out.len;
  result->err = errors.data;
  result->err_len = errors.len;
  return 0;
}

void pgc_proc_result_free(pgc_proc_result *result) {
  free(result->out);
  free(result->err);
  memset(result, 0, sizeof *result);
}

/* ---- what a tool said ---------------------------------------------------------- */

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

/* Whether the `len` bytes at `text` hold `word`, ignoring ASCII case. */
static int holds(const char *text, size_t len, const char *word) {
  size_t n = strlen(word);
  for (size_t i = 0; i + n <= len; ++i) {
    size_t j = 0;
    while (j < n && lower((unsigned char)text[i + j]) == word[j]) ++j;
    if (j == n) return 1;
  }
  return 0;
}

int pgc_error_line(const char *text, char *buf, size_t size) {
  const char *first = NULL;
  size_t first_len = 0;
  if (size == 0) return 0;
  buf[0] = '\0';
  for (const char *line = text; line && *line;) {
    size_t len = strcspn(line, "\r\n");
    const char *start = line;
    size_t trimmed = len;
    while (trimmed > 0 && (*start == ' ' || *start == '\t')) {
      ++start;
      --trimmed;
    }
    while (trimmed > 0 && (start[trimmed - 1] == ' ' || start[trimmed - 1] == '\t'))
      --trimmed;
    if (trimmed > 0) {
      if ((holds(start, trimmed, "fatal") || holds(start, trimmed, "error")) &&
          !holds(start, trimmed, "warning")) {
        snprintf(buf, size, "%.*s", (int)trimmed, start);
        return 1;
      }
      if (!first) {
        first = start;
        first_len = trimmed;
      }
    }
    line += len;
    line += strspn(line, "\r\n");
  }
  if (first) snprintf(buf, size, "%.*s", (int)first_len, first);
  return 0;
}
