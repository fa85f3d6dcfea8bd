/* Shape sets for `pipegemm bench --shapes FILE`: one GEMM shape a line,
 * "MxNxK" or "M x N x K" (x or X), '#' to the end of a line a comment, blank
 * lines ignored, M, N and K from 1 to INT_MAX. Parsing is a pure function of
 * a text buffer (tests/test_cli_shapes.c); reading a file is a thin layer on
 * it. Neither prints nor exits: a problem is one line in the caller's
 * buffer, naming the file and the line ("set.txt:7: 'abc' is not MxNxK"). */
#ifndef PGC_SHAPES_H
#define PGC_SHAPES_H

#include <stddef.h>

/* Bounds that stop a wrong file (a log, a binary, /dev/zero) from being
 * read whole or timed for hours: far above any set worth timing in one run
 * (bench/shapes/set.txt has 21 shapes in under 1 KiB). */
#define PGC_MAX_SHAPES 4096
#define PGC_MAX_SHAPE_FILE_BYTES (1 << 20)
/* A caller buffer this large holds any message written here whole (a file
 * name of up to PATH_MAX is cut short, not the message's ending). */
#define PGC_SHAPES_ERROR_SIZE 1024

typedef struct {
  int m, n, k;
  size_t line; /* the line of the text it was read from, from 1 */
} pgc_shape;

/* The shapes in the order of the file. The caller owns `shapes` and frees
 * it with pgc_shape_set_free. */
typedef struct {
  pgc_shape *shapes;
  int count;
} pgc_shape_set;

/* Parses `len` bytes of `text` (a NUL byte in it is a bad line), naming the
 * set `name` in messages. Returns PGC_EXIT_OK with *set filled; or
 * PGC_EXIT_USAGE with one line in err (no trailing newline, no "pipegemm: "
 * prefix) for a line that is not a shape, a dimension out of range, a shape
 * given twice, too many shapes or none ("no shape in NAME"); or
 * PGC_EXIT_FAILED when the host is out of memory. On failure *set is empty. */
int pgc_shapes_parse(const char *text, size_t len, const char *name,
                     pgc_shape_set *set, char *err, size_t err_size);

/* Reads the file at `path` and parses it, naming it by `path` as given.
 * Returns as pgc_shapes_parse; a file that cannot be opened or read, or is
 * larger than PGC_MAX_SHAPE_FILE_BYTES, is PGC_EXIT_USAGE ("cannot read
 * PATH: No such file or directory"). */
int pgc_shapes_read(const char *path, pgc_shape_set *set, char *err,
                    size_t err_size);

/* Frees the shapes and empties the set; safe on an empty set. */
void pgc_shape_set_free(pgc_shape_set *set);

#endif
