/* Shape sets for `pipegemm bench --shapes FILE`: one GEMM a line, "MxNxK"
 * or "M x N x K" (x or X), then, after a blank, the words of its layout in
 * any order, each at most once: the ops, NN, NT, TN or TT (op(A) then
 * op(B)), or several ("NN,NT": a GEMM each); batch=N (1 to INT_MAX);
 * stride_a=S, stride_b=S, stride_c=S (0 to 2^63-1 floats, where the batch
 * is above 1; 0 shares one matrix among the batch, stride_c at least M x N).
 * What a line does not name is the command line's (--op, --batch,
 * --stride-a/b/c; pgc_layout_request), by default NN, one GEMM and dense
 * members. '#' to the end of a line a comment, blank lines ignored, M, N and
 * K from 1 to INT_MAX. Parsing is a pure function of a text buffer
 * (tests/test_cli_shapes.c); reading a file is a thin layer on it. Neither
 * prints nor exits: a problem is one line in the caller's buffer, naming the
 * file and the line ("set.txt:7: 'abc' is not MxNxK"). */
#ifndef PGC_SHAPES_H
#define PGC_SHAPES_H

#include <stddef.h>

#include "measure/session.h" /* pgc_layout */

/* Bounds that stop a wrong file (a log, a binary, /dev/zero) from being
 * read whole or timed for hours: far above any set worth timing in one run
 * (bench/shapes/set.txt has 21 shapes in under 1 KiB). */
#define PGC_MAX_SHAPES 4096
#define PGC_MAX_SHAPE_FILE_BYTES (1 << 20)
/* A caller buffer this large holds any message written here whole (a file
 * name of up to PATH_MAX is cut short, not the message's ending). */
#define PGC_SHAPES_ERROR_SIZE 1024

/* The four op combinations, op(A) then op(B): index 2 * (op_a is T) +
 * (op_b is T). */
#define PGC_OP_COUNT 4
/* "NN", "NT", "TN", "TT"; NULL past them. */
const char *pgc_op_name(int op);

/* What the command line asks of every shape's layout (bench --op, --batch,
 * --stride-a/b/c): the op combinations to run, in the order given, each
 * once; the batch; the strides, PGC_STRIDE_DENSE where not given. A line of
 * a shape file that names its own takes its place. */
typedef struct {
  int op_count;
  int ops[PGC_OP_COUNT];
  int batch;
  long long stride_a, stride_b, stride_c;
} pgc_layout_request;
#define PGC_LAYOUT_REQUEST_NN                                                             \
  {1, {0, 0, 0, 0}, 1, PGC_STRIDE_DENSE, PGC_STRIDE_DENSE, PGC_STRIDE_DENSE}

/* One GEMM of a set: its shape and layout (the strides as given, or
 * PGC_STRIDE_DENSE). */
typedef struct {
  int m, n, k;
  size_t line; /* the line of the text it was read from, from 1; 0: the command line */
  pgc_layout layout;
} pgc_shape;

/* The shapes in the order of the file. The caller owns `shapes` and frees
 * it with pgc_shape_set_free. */
typedef struct {
  pgc_shape *shapes;
  int count;
} pgc_shape_set;

/* Parses `len` bytes of `text` (a NUL byte in it is a bad line), naming the
 * set `name` in messages, a line's ops each a shape of the set, in the
 * line's order. Returns PGC_EXIT_OK with *set filled; or PGC_EXIT_USAGE
 * with one line in err (no trailing newline, no "pipegemm: " prefix) for a
 * line that is not a shape, a dimension out of range, a word that is no op
 * or key=value of the layout, a value out of range, a word given twice, a
 * stride where the batch is 1, a stride_c below M x N, a shape and layout
 * given twice, too many shapes or none ("no shape in NAME"); or
 * PGC_EXIT_FAILED when the host is out of memory. On failure *set is empty.
 * pgc_shapes_parse takes what a line does not name from `request` (NULL:
 * NN, one GEMM). */
int pgc_shapes_parse(const char *text, size_t len, const char *name,
                     pgc_shape_set *set, char *err, size_t err_size);
int pgc_shapes_parse_with(const char *text, size_t len, const char *name,
                          const pgc_layout_request *request, pgc_shape_set *set, char *err,
                          size_t err_size);

/* Reads the file at `path` and parses it, naming it by `path` as given.
 * Returns as pgc_shapes_parse; a file that cannot be opened or read, or is
 * larger than PGC_MAX_SHAPE_FILE_BYTES, is PGC_EXIT_USAGE ("cannot read
 * PATH: No such file or directory"). */
int pgc_shapes_read(const char *path, pgc_shape_set *set, char *err,
                    size_t err_size);
int pgc_shapes_read_with(const char *path, const pgc_layout_request *request,
                         pgc_shape_set *set, char *err, size_t err_size);

/* The set of the command line's one shape: M x N x K in each op of
 * `request`, with its batch and strides. PGC_EXIT_OK, PGC_EXIT_USAGE with
 * the reason in err (a stride_c below M x N), or PGC_EXIT_FAILED out of
 * host memory. */
int pgc_shapes_of_request(int m, int n, int k, const pgc_layout_request *request,
                          pgc_shape_set *set, char *err, size_t err_size);

/* --op's value, or a line's op word: names from pgc_op_name joined by
 * commas, into ops[] in the order given without repeats. Returns the count
 * (1 to PGC_OP_COUNT), or 0 for a text that is not such a list. */
int pgc_parse_op_list(const char *text, size_t len, int ops[PGC_OP_COUNT]);

/* Whether a resolved layout fits its shape: PGC_EXIT_OK, or PGC_EXIT_USAGE
 * with why in `why` ("stride_c=100 is below M x N = 4096: the batch's Cs
 * would overlap"), `stride_c_name` naming where stride_c came from
 * ("stride_c=100", "--stride-c 100"). */
int pgc_layout_check(int m, int n, const pgc_layout *layout, const char *stride_c_name,
                     char *why, size_t why_size);

/* A shape as a line of a shape file would ask for it: "MxNxK", then its
 * ops where not NN, "batch=N" where above 1, and the strides given. */
void pgc_shape_text(const pgc_shape *shape, char *buf, size_t size);

/* Frees the shapes and empties the set; safe on an empty set. */
void pgc_shape_set_free(pgc_shape_set *set);

#endif
