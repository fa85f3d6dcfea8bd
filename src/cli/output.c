/* Streams that keep the reason of their first failed write.
 *
 * stdio tells a failed write only through ferror(): the errno of the write(2)
 * that failed is gone by the time the command checks its stream. A page
 * longer than the stream's buffer fails inside fwrite, and the last fflush
 * may then have nothing left to write. The tool's report streams therefore
 * write through a function of ours (fopencookie, glibc and musl) that keeps
 * the first errno, wherever the write happened. */
#define _GNU_SOURCE /* fopencookie */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Streams of ours open at once: the report and a file or two. */
#define PGC_MAX_STREAMS 8

typedef struct {
  int fd;
  int owns_fd;     /* close it with the stream */
  int first_errno; /* of the first write that failed; 0: none failed */
} sink;

static struct {
  FILE *stream;
  sink *sink;
} streams[PGC_MAX_STREAMS];

static ssize_t sink_write(void *cookie, const char *buf, size_t size) {
  sink *s = cookie;
  size_t done = 0;
  while (done < size) {
    const ssize_t n = write(s->fd, buf + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (s->first_errno == 0) s->first_errno = n < 0 ? errno : EIO;
      return 0; /* stdio marks the stream in error */
    }
    done += (size_t)n;
  }
  return (ssize_t)size;
}

static int sink_close(void *cookie) {
  sink *s = cookie;
  int rc = 0;
  if (s->owns_fd && close(s->fd) != 0) rc = -1;
  return rc;
}

/* The slot of a stream of ours, or -1. */
static int slot_of(const FILE *stream) {
  for (int i = 0; i < PGC_MAX_STREAMS; ++i)
    if (streams[i].stream == stream && stream != NULL) return i;
  return -1;
}

static sink *sink_of(const FILE *stream) {
  const int slot = slot_of(stream);
  return slot >= 0 ? streams[slot].sink : NULL;
}

/* Frees a slot once its stream is closed (its close function used it). */
static void forget(int slot) {
  if (slot < 0) return;
  free(streams[slot].sink);
  streams[slot].stream = NULL;
  streams[slot].sink = NULL;
}

/* A stream over fd, tracked; NULL (errno set) when none can be made. */
static FILE *open_sink(int fd, int owns_fd) {
  int slot = -1;
  for (int i = 0; i < PGC_MAX_STREAMS && slot < 0; ++i)
    if (streams[i].stream == NULL) slot = i;
  sink *s = slot >= 0 ? calloc(1, sizeof *s) : NULL;
  if (s == NULL) {
    errno = ENOMEM;
    return NULL;
  }
  s->fd = fd;
  s->owns_fd = owns_fd;
  const cookie_io_functions_t io = {NULL, sink_write, NULL, sink_close};
  FILE *stream = fopencookie(s, "w", io);
  if (stream == NULL) {
    free(s);
    return NULL;
  }
  /* A terminal sees each line as it is written, as with stdout. */
  if (isatty(fd)) (void)setvbuf(stream, NULL, _IOLBF, BUFSIZ);
  streams[slot].stream = stream;
  streams[slot].sink = s;
  return stream;
}

FILE *pgc_stdout(void) {
  static FILE *report;
  if (report == NULL) {
    (void)fflush(stdout); /* nothing of stdio's own may come after ours */
    report = open_sink(STDOUT_FILENO, 0);
    if (report == NULL) report = stdout; /* the reason of a failure is then lost */
  }
  return report;
}

FILE *pgc_output_open(const char *path) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return NULL;
  FILE *stream = open_sink(fd, 1);
  if (stream == NULL) {
    const int saved = errno;
    close(fd);
    errno = saved;
  }
  return stream;
}

int pgc_output_error(FILE *out) {
  errno = 0;
  const int flushed = fflush(out);
  const int flush_errno = errno;
  const sink *s = sink_of(out);
  if (s != NULL && s->first_errno != 0) return s->first_errno;
  if (flushed != 0) return flush_errno ? flush_errno : EIO;
  /* A stream of stdio's own: an earlier write failed, its reason unknown. */
  return ferror(out) ? EIO : 0;
}

static void report_failure(int failure, const char *what) {
  fprintf(stderr, "pipegemm: writing %s failed: %s\n", what, strerror(failure));
}

int pgc_output_check(FILE *out, const char *what) {
  const int failure = pgc_output_error(out);
  if (failure == 0) return 0;
  report_failure(failure, what);
  clearerr(out);
  sink *s = sink_of(out);
  if (s != NULL) s->first_errno = 0; /* told once */
  return -1;
}

int pgc_output_close(FILE *file, const char *what) {
  int failure = pgc_output_error(file);
  const int slot = slot_of(file);
  errno = 0;
  const int closed = fclose(file);
  if (closed != 0 && failure == 0) failure = errno ? errno : EIO;
  forget(slot);
  if (failure == 0) return 0;
  report_failure(failure, what);
  return -1;
}

int pgc_terminal_columns(void) {
  struct winsize size;
  if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}
