/* Shape sets of `pipegemm bench --shapes` (src/cli/shapes.c): what a line may
 * look like (a shape, then the words of its layout), what each bad line is
 * told as (with its file and line), the command line's layout for the lines
 * that name none, and reading files, the committed set among them. No GPU
 * needed. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/args.h"
#include "cli/shapes.h"

typedef struct {
  pgc_shape_set set;
  char err[PGC_SHAPES_ERROR_SIZE];
  int rc;
} parsed;

static parsed parse_bytes(const char *text, size_t len) {
  parsed p;
  memset(&p, 0, sizeof p);
  p.rc = pgc_shapes_parse(text, len, "set.txt", &p.set, p.err, sizeof p.err);
  return p;
}

static parsed parse(const char *text) { return parse_bytes(text, strlen(text)); }

static void expect_shape(const parsed *p, int index, int m, int n, int k,
                         size_t line) {
  assert_true(index < p->set.count);
  assert_int_equal(p->set.shapes[index].m, m);
  assert_int_equal(p->set.shapes[index].n, n);
  assert_int_equal(p->set.shapes[index].k, k);
  assert_int_equal(p->set.shapes[index].line, line);
}

/* The text is refused with exactly `message`, and the set left empty. */
static void expect_error(const char *text, size_t len, const char *message) {
  parsed p = parse_bytes(text, len);
  if (p.rc != PGC_EXIT_USAGE || strcmp(p.err, message) != 0)
    print_error("text '%s': rc %d, message '%s', expected '%s'\n", text, p.rc,
                p.err, message);
  assert_int_equal(p.rc, PGC_EXIT_USAGE);
  assert_string_equal(p.err, message);
  assert_null(p.set.shapes);
  assert_int_equal(p.set.count, 0);
}
#define EXPECT_ERROR(text, message) expect_error(text, strlen(text), message)

/* ---- what a set may look like ------------------------------------------------ */

static void test_shapes_comments_blanks_spaces(void **state) {
  (void)state;
  parsed p = parse(
      "# a set\n"              /* 1: a comment line */
      "\n"                     /* 2: blank */
      "512x512x512\n"          /* 3 */
      "   \t\n"                /* 4: blanks only */
      "64 x 4096 x 4096\n"     /* 5: spaces around the x */
      "\t4096X64X4096  \n"     /* 6: capital X, tab and trailing blanks */
      "128x8192x8192 # skinny\n" /* 7: a comment after the shape */
      "  # indented comment\n" /* 8 */
      "1x1x1#tight comment\r\n" /* 9: CRLF */
      "2147483647 x1 X 1");    /* 10: INT_MAX, no final newline */
  assert_int_equal(p.rc, PGC_EXIT_OK);
  assert_int_equal(p.set.count, 6);
  expect_shape(&p, 0, 512, 512, 512, 3);
  expect_shape(&p, 1, 64, 4096, 4096, 5);
  expect_shape(&p, 2, 4096, 64, 4096, 6);
  expect_shape(&p, 3, 128, 8192, 8192, 7);
  expect_shape(&p, 4, 1, 1, 1, 9);
  expect_shape(&p, 5, INT_MAX, 1, 1, 10);
  pgc_shape_set_free(&p.set);
  assert_null(p.set.shapes);
  assert_int_equal(p.set.count, 0);
  pgc_shape_set_free(&p.set); /* twice is harmless */
}

static void test_shapes_leading_zeros(void **state) {
  (void)state;
  /* Decimal, whatever the zeros in front: 010 is ten, not octal eight. */
  parsed p = parse("010x0008x0000000000000000000064\n");
  assert_int_equal(p.rc, PGC_EXIT_OK);
  expect_shape(&p, 0, 10, 8, 64, 1);
  pgc_shape_set_free(&p.set);
}

/* ---- bad lines, told with their file and line -------------------------------- */

static void test_shapes_not_a_shape(void **state) {
  (void)state;
  EXPECT_ERROR("512x512x512\n\n# c\n\n\n\nabc\n",
               "set.txt:7: 'abc' is not MxNxK");
  EXPECT_ERROR("4096x4096\n", "set.txt:1: '4096x4096' is not MxNxK");
  EXPECT_ERROR("4096x4096x\n", "set.txt:1: '4096x4096x' is not MxNxK");
  EXPECT_ERROR("x4096x4096\n", "set.txt:1: 'x4096x4096' is not MxNxK");
  EXPECT_ERROR("1x2x3x4\n", "set.txt:1: '1x2x3x4' is not MxNxK");
  EXPECT_ERROR("64 64 64\n", "set.txt:1: '64 64 64' is not MxNxK");
  EXPECT_ERROR("64,64,64\n", "set.txt:1: '64,64,64' is not MxNxK");
  EXPECT_ERROR("64*64*64\n", "set.txt:1: '64*64*64' is not MxNxK");
  /* After a blank, words of the layout; one that is none is told so. */
  EXPECT_ERROR("64x64x64 extra\n",
               "set.txt:1: '64x64x64 extra': 'extra' is none of NN, NT, TN, TT (or a list of "
               "them), batch=N, stride_a=S, stride_b=S, stride_c=S");
  /* Without the blank, no shape at all. */
  EXPECT_ERROR("64x64x64NT\n", "set.txt:1: '64x64x64NT' is not MxNxK");
  EXPECT_ERROR("64x64x64batch=2\n", "set.txt:1: '64x64x64batch=2' is not MxNxK");
  EXPECT_ERROR("6 4x64x64\n", "set.txt:1: '6 4x64x64' is not MxNxK");
  EXPECT_ERROR("+64x64x64\n", "set.txt:1: '+64x64x64' is not MxNxK");
  EXPECT_ERROR("0x40x40x40\n", "set.txt:1: '0x40x40x40' is not MxNxK");
  EXPECT_ERROR("1e3x64x64\n", "set.txt:1: '1e3x64x64' is not MxNxK");
  EXPECT_ERROR("64.0x64x64\n", "set.txt:1: '64.0x64x64' is not MxNxK");
  EXPECT_ERROR("64xx64x64\n", "set.txt:1: '64xx64x64' is not MxNxK");
  EXPECT_ERROR("--size 64\n", "set.txt:1: '--size 64' is not MxNxK");
  /* The syntax first: a zero in a line that is not a shape is not the news. */
  EXPECT_ERROR("0x4xabc\n", "set.txt:1: '0x4xabc' is not MxNxK");
  /* A comment is cut off before the quote; the line number counts blank
   * and comment lines, and a CRLF line is quoted without its CR. */
  EXPECT_ERROR("# one\r\n\r\n64x64 # two\r\n", "set.txt:3: '64x64' is not MxNxK");
}

static void test_shapes_out_of_range(void **state) {
  (void)state;
  EXPECT_ERROR("0x64x64\n", "set.txt:1: '0x64x64': M must be at least 1");
  EXPECT_ERROR("64x0x64\n", "set.txt:1: '64x0x64': N must be at least 1");
  EXPECT_ERROR("64x64x0\n", "set.txt:1: '64x64x0': K must be at least 1");
  EXPECT_ERROR("64x64x00\n", "set.txt:1: '64x64x00': K must be at least 1");
  EXPECT_ERROR("-64x64x64\n", "set.txt:1: '-64x64x64': M must be at least 1");
  EXPECT_ERROR("64 x -1 x 64\n", "set.txt:1: '64 x -1 x 64': N must be at least 1");
  EXPECT_ERROR("64x64x-0\n", "set.txt:1: '64x64x-0': K must be at least 1");
  EXPECT_ERROR("64x64x2147483648\n",
               "set.txt:1: '64x64x2147483648': K is above 2147483647");
  EXPECT_ERROR("99999999999999999999999999x1x1\n",
               "set.txt:1: '99999999999999999999999999x1x1': M is above 2147483647");
  /* Two problems: the first dimension's is told. */
  EXPECT_ERROR("0x4294967296x1\n", "set.txt:1: '0x4294967296x1': M must be at least 1");
}

static void test_shapes_binary_and_long_lines(void **state) {
  (void)state;
  /* A NUL or another control byte is no digit, and is quoted escaped, as is
   * what is not UTF-8, so that the message stays one printable line. */
  static const char nul[] = "64x6\0004x64\n";
  expect_error(nul, sizeof nul - 1, "set.txt:1: '64x6\\x004x64' is not MxNxK");
  EXPECT_ERROR("64x64x64\n\x1b[31m\n", "set.txt:2: '\\x1b[31m' is not MxNxK");
  EXPECT_ERROR("6\t4x64x64\n", "set.txt:1: '6\\t4x64x64' is not MxNxK");
  EXPECT_ERROR("64x64x64\xff\n", "set.txt:1: '64x64x64\\xff' is not MxNxK");
  EXPECT_ERROR("64x64x64\xc2\x9b" "2J\n", "set.txt:1: '64x64x64\\xc2\\x9b2J' is not MxNxK");
  EXPECT_ERROR("0x\\64x64\n", "set.txt:1: '0x\\\\64x64' is not MxNxK");
  /* Well-formed UTF-8 is quoted as it is. */
  EXPECT_ERROR("64\xc3\x97" "64\xc3\x97" "64\n",
               "set.txt:1: '64\xc3\x97" "64\xc3\x97" "64' is not MxNxK");
  /* A long line is quoted in part. */
  char line[200];
  memset(line, 'a', sizeof line - 1);
  line[sizeof line - 1] = '\0';
  parsed p = parse(line);
  assert_int_equal(p.rc, PGC_EXIT_USAGE);
  assert_non_null(strstr(p.err, "set.txt:1: 'aaaa"));
  assert_non_null(strstr(p.err, "a...' is not MxNxK"));
  assert_true(strlen(p.err) < 100);
  memset(line, '\x1b', sizeof line - 1);
  p = parse(line);
  assert_int_equal(p.rc, PGC_EXIT_USAGE);
  assert_non_null(strstr(p.err, "set.txt:1: '\\x1b\\x1b"));
  assert_non_null(strstr(p.err, "\\x1b...' is not MxNxK"));
  assert_true(strlen(p.err) < 100);
  /* The file's name, as given, is escaped too. */
  char err[PGC_SHAPES_ERROR_SIZE];
  pgc_shape_set set;
  assert_int_equal(pgc_shapes_parse("abc\n", 4, "se\nt\xff.txt", &set, err, sizeof err),
                   PGC_EXIT_USAGE);
  assert_string_equal(err, "se\\nt\\xff.txt:1: 'abc' is not MxNxK");
  assert_int_equal(pgc_shapes_parse("\n", 1, "\x1b.txt", &set, err, sizeof err),
                   PGC_EXIT_USAGE);
  assert_string_equal(err, "no shape in \\x1b.txt");
}

static void test_shapes_repeated(void **state) {
  (void)state;
  EXPECT_ERROR("# set\n64x64x64\n128x64x64\n64 X 64 X 64\n",
               "set.txt:4: 64x64x64 is on line 2 already");
  /* The same dimensions in another order are another shape. */
  parsed p = parse("64x128x256\n256x128x64\n128x64x256\n");
  assert_int_equal(p.rc, PGC_EXIT_OK);
  assert_int_equal(p.set.count, 3);
  pgc_shape_set_free(&p.set);
}

/* ---- layouts ---------------------------------------------------------------- */

static void expect_layout(const parsed *p, int index, pg_op op_a, pg_op op_b, int batch,
                          long long stride_a, long long stride_b, long long stride_c) {
  assert_true(index < p->set.count);
  const pgc_layout *l = &p->set.shapes[index].layout;
  assert_int_equal(l->op_a, op_a);
  assert_int_equal(l->op_b, op_b);
  assert_int_equal(l->batch, batch);
  assert_true(l->stride_a == stride_a);
  assert_true(l->stride_b == stride_b);
  assert_true(l->stride_c == stride_c);
}
#define D PGC_STRIDE_DENSE

/* The words after a shape: ops (a list is a GEMM each, in its order),
 * batch=N, stride_x=S, in any order; what a line does not name is NN, one
 * GEMM, dense members. */
static void test_shapes_layout_words(void **state) {
  (void)state;
  parsed p = parse(
      "4096x4096x4096 NT\n"                         /* 1 */
      "64x64x64 NN batch=1024\n"                    /* 2 */
      "2048x4096x4096 NN batch=16 stride_b=0\n"     /* 3 */
      "64x64x64\n"                                  /* 4: NN, one GEMM */
      "8 x 8 x 8   TT,NN\tbatch=3 # two GEMMs\r\n"  /* 5: a list, blanks and a comment */
      "3x5x7 stride_c=40 batch=2 stride_a=0 TN\n");  /* 6: any order */
  if (p.rc != PGC_EXIT_OK) print_error("%s\n", p.err);
  assert_int_equal(p.rc, PGC_EXIT_OK);
  assert_int_equal(p.set.count, 7);
  expect_shape(&p, 0, 4096, 4096, 4096, 1);
  expect_layout(&p, 0, PG_OP_N, PG_OP_T, 1, D, D, D);
  expect_shape(&p, 1, 64, 64, 64, 2);
  expect_layout(&p, 1, PG_OP_N, PG_OP_N, 1024, D, D, D);
  expect_shape(&p, 2, 2048, 4096, 4096, 3);
  expect_layout(&p, 2, PG_OP_N, PG_OP_N, 16, D, 0, D);
  expect_shape(&p, 3, 64, 64, 64, 4);
  expect_layout(&p, 3, PG_OP_N, PG_OP_N, 1, D, D, D);
  expect_shape(&p, 4, 8, 8, 8, 5);
  expect_layout(&p, 4, PG_OP_T, PG_OP_T, 3, D, D, D);
  expect_shape(&p, 5, 8, 8, 8, 5);
  expect_layout(&p, 5, PG_OP_N, PG_OP_N, 3, D, D, D);
  expect_shape(&p, 6, 3, 5, 7, 6);
  expect_layout(&p, 6, PG_OP_T, PG_OP_N, 2, 0, D, 40);
  char text[128];
  pgc_shape_text(&p.set.shapes[2], text, sizeof text);
  assert_string_equal(text, "2048x4096x4096 batch=16 stride_b=0");
  pgc_shape_text(&p.set.shapes[6], text, sizeof text);
  assert_string_equal(text, "3x5x7 TN batch=2 stride_a=0 stride_c=40");
  pgc_shape_text(&p.set.shapes[3], text, sizeof text);
  assert_string_equal(text, "64x64x64");
  pgc_shape_set_free(&p.set);
}

static void test_shapes_layout_errors(void **state) {
  (void)state;
  EXPECT_ERROR("64x64x64 nt\n", "set.txt:1: '64x64x64 nt': 'nt' is none of NN, NT, TN, TT (or "
                                "a list of them), batch=N, stride_a=S, stride_b=S, stride_c=S");
  EXPECT_ERROR("64x64x64 NN,\n", "set.txt:1: '64x64x64 NN,': 'NN,' is none of NN, NT, TN, "
                                 "TT (or a list of them), batch=N, stride_a=S, stride_b=S, "
                                 "stride_c=S");
  EXPECT_ERROR("64x64x64 Batch=2\n", "set.txt:1: '64x64x64 Batch=2': 'Batch=2' is none of "
                                     "NN, NT, TN, TT (or a list of them), batch=N, stride_a=S, "
                                     "stride_b=S, stride_c=S");
  EXPECT_ERROR("64x64x64 NN NT\n", "set.txt:1: '64x64x64 NN NT': the ops are named twice");
  EXPECT_ERROR("64x64x64 batch=2 batch=2\n",
               "set.txt:1: '64x64x64 batch=2 batch=2': batch is named twice");
  EXPECT_ERROR("64x64x64 batch=2 stride_b=0 stride_b=0\n",
               "set.txt:1: '64x64x64 batch=2 stride_b=0 stride_b=0': stride_b is named twice");
  EXPECT_ERROR("64x64x64 batch=0\n",
               "set.txt:1: '64x64x64 batch=0': batch=0: the batch is a count from 1 to "
               "2147483647");
  EXPECT_ERROR("64x64x64 batch=\n",
               "set.txt:1: '64x64x64 batch=': batch=: the batch is a count from 1 to 2147483647");
  EXPECT_ERROR("64x64x64 batch=2147483648\n",
               "set.txt:1: '64x64x64 batch=2147483648': batch=2147483648: the batch is a count "
               "from 1 to 2147483647");
  EXPECT_ERROR("64x64x64 batch=-1\n",
               "set.txt:1: '64x64x64 batch=-1': batch=-1: the batch is a count from 1 to "
               "2147483647");
  EXPECT_ERROR("64x64x64 batch=2 stride_a=-1\n",
               "set.txt:1: '64x64x64 batch=2 stride_a=-1': stride_a=-1: a stride is a count of "
               "floats from 0 to 9223372036854775807");
  EXPECT_ERROR("64x64x64 batch=2 stride_a=9223372036854775808\n",
               "set.txt:1: '64x64x64 batch=2 stride_a=9223372036854775808': "
               "stride_a=9223372036854775808: a stride is a count of floats from 0 to "
               "9223372036854775807");
  /* A stride of one GEMM, and Cs that would overlap. */
  EXPECT_ERROR("64x64x64 stride_b=0\n",
               "set.txt:1: '64x64x64 stride_b=0': stride_b needs a batch above 1 (one GEMM has "
               "no stride)");
  EXPECT_ERROR("64x64x64 batch=1 stride_a=0\n",
               "set.txt:1: '64x64x64 batch=1 stride_a=0': stride_a needs a batch above 1 (one "
               "GEMM has no stride)");
  EXPECT_ERROR("3x5x7 batch=2 stride_c=14\n",
               "set.txt:1: '3x5x7 batch=2 stride_c=14': stride_c=14 is below M x N = 15: the "
               "batch's Cs would overlap");
  /* At the bound, apart. */
  parsed p = parse("3x5x7 batch=2 stride_c=15 stride_a=0 stride_b=9223372036854775807\n");
  assert_int_equal(p.rc, PGC_EXIT_OK);
  expect_layout(&p, 0, PG_OP_N, PG_OP_N, 2, 0, 9223372036854775807LL, 15);
  pgc_shape_set_free(&p.set);
}

/* A GEMM asked for twice: the same shape, ops, batch and strides (dense
 * ones as their numbers), on one line or two. */
static void test_shapes_layout_repeated(void **state) {
  (void)state;
  EXPECT_ERROR("64x64x64 NT\n64x64x64 NN,NT\n", "set.txt:2: 64x64x64 NT is on line 1 already");
  EXPECT_ERROR("64x64x64 NT,NT,TT\n64x64x64 TT\n",
               "set.txt:2: 64x64x64 TT is on line 1 already");
  EXPECT_ERROR("64x64x64 batch=2\n64x64x64 batch=2 stride_a=4096\n",
               "set.txt:2: 64x64x64 batch=2 stride_a=4096 is on line 1 already");
  EXPECT_ERROR("64x64x64\n64x64x64 NN batch=1\n", "set.txt:2: 64x64x64 is on line 1 already");
  /* Another op, batch or stride is another GEMM. */
  parsed p = parse("64x64x64\n64x64x64 NT\n64x64x64 batch=2\n64x64x64 batch=2 stride_b=0\n"
                   "64x64x64 batch=3\n");
  assert_int_equal(p.rc, PGC_EXIT_OK);
  assert_int_equal(p.set.count, 5);
  pgc_shape_set_free(&p.set);
}

/* The command line's layout (--op, --batch, --stride-*) for the lines that
 * name none; a line's own words in its place. */
static void test_shapes_request(void **state) {
  (void)state;
  pgc_layout_request request = {2, {0, 1}, 4, PGC_STRIDE_DENSE, 0, PGC_STRIDE_DENSE};
  static const char text[] = "64x64x64\n32x32x32 TT\n16x16x16 batch=1\n8x8x8 batch=2 stride_b=64\n";
  parsed p;
  memset(&p, 0, sizeof p);
  p.rc = pgc_shapes_parse_with(text, strlen(text), "set.txt", &request, &p.set, p.err,
                               sizeof p.err);
  if (p.rc != PGC_EXIT_OK) print_error("%s\n", p.err);
  assert_int_equal(p.rc, PGC_EXIT_OK);
  assert_int_equal(p.set.count, 7);
  expect_layout(&p, 0, PG_OP_N, PG_OP_N, 4, D, 0, D); /* --op NN,NT, --batch 4, --stride-b 0 */
  expect_layout(&p, 1, PG_OP_N, PG_OP_T, 4, D, 0, D);
  expect_layout(&p, 2, PG_OP_T, PG_OP_T, 4, D, 0, D); /* its own ops */
  expect_layout(&p, 3, PG_OP_N, PG_OP_N, 1, D, D, D); /* one GEMM: no stride */
  expect_layout(&p, 4, PG_OP_N, PG_OP_T, 1, D, D, D);
  expect_layout(&p, 5, PG_OP_N, PG_OP_N, 2, D, 64, D); /* its own stride */
  expect_layout(&p, 6, PG_OP_N, PG_OP_T, 2, D, 64, D);
  expect_shape(&p, 6, 8, 8, 8, 4);
  pgc_shape_set_free(&p.set);

  /* --stride-c below a line's M x N: told at that line, by its option. */
  request.stride_c = 100;
  static const char small[] = "8x8x8\n64x64x64\n";
  p.rc = pgc_shapes_parse_with(small, strlen(small), "set.txt", &request, &p.set, p.err,
                               sizeof p.err);
  assert_int_equal(p.rc, PGC_EXIT_USAGE);
  assert_string_equal(p.err, "set.txt:2: '64x64x64': --stride-c 100 is below M x N = 4096: the "
                             "batch's Cs would overlap");
  assert_null(p.set.shapes);

  /* The command line's one shape, in each of its ops. */
  request.stride_c = PGC_STRIDE_DENSE;
  pgc_shape_set set;
  char err[PGC_SHAPES_ERROR_SIZE];
  assert_int_equal(pgc_shapes_of_request(3, 5, 7, &request, &set, err, sizeof err), PGC_EXIT_OK);
  assert_int_equal(set.count, 2);
  assert_int_equal(set.shapes[1].m, 3);
  assert_int_equal(set.shapes[1].layout.op_b, PG_OP_T);
  assert_int_equal(set.shapes[1].layout.batch, 4);
  assert_true(set.shapes[1].line == 0);
  pgc_shape_set_free(&set);
  request.stride_c = 14;
  assert_int_equal(pgc_shapes_of_request(3, 5, 7, &request, &set, err, sizeof err),
                   PGC_EXIT_USAGE);
  assert_string_equal(err, "--stride-c 14 is below M x N = 15: the batch's Cs would overlap");
  assert_null(set.shapes);
  /* No request: NN, one GEMM, as pgc_shapes_parse. */
  assert_int_equal(pgc_shapes_of_request(3, 5, 7, NULL, &set, err, sizeof err), PGC_EXIT_OK);
  assert_int_equal(set.count, 1);
  assert_int_equal(set.shapes[0].layout.batch, 1);
  pgc_shape_set_free(&set);
}

/* --op's list, as the tool and a line read it. */
static void test_op_list(void **state) {
  (void)state;
  int ops[PGC_OP_COUNT];
  assert_int_equal(pgc_parse_op_list("NN", 2, ops), 1);
  assert_int_equal(ops[0], 0);
  assert_int_equal(pgc_parse_op_list("TN,NT,TN", 8, ops), 2);
  assert_int_equal(ops[0], 2);
  assert_int_equal(ops[1], 1);
  assert_int_equal(pgc_parse_op_list("NN,NT,TN,TT", 11, ops), 4);
  assert_int_equal(pgc_parse_op_list("", 0, ops), 0);
  assert_int_equal(pgc_parse_op_list("N", 1, ops), 0);
  assert_int_equal(pgc_parse_op_list("NN,", 3, ops), 0);
  assert_int_equal(pgc_parse_op_list(",NN", 3, ops), 0);
  assert_int_equal(pgc_parse_op_list("NC", 2, ops), 0);
  assert_int_equal(pgc_parse_op_list("NN NT", 5, ops), 0);
  for (int i = 0; i < PGC_OP_COUNT; ++i) {
    assert_int_equal(pgc_parse_op_list(pgc_op_name(i), 2, ops), 1);
    assert_int_equal(ops[0], i);
  }
  assert_null(pgc_op_name(4));
}

static void test_shapes_empty_set(void **state) {
  (void)state;
  EXPECT_ERROR("", "no shape in set.txt");
  EXPECT_ERROR("\n\n", "no shape in set.txt");
  EXPECT_ERROR("# only\n  # comments\n\t\n", "no shape in set.txt");
}

static void test_shapes_too_many(void **state) {
  (void)state;
  enum { LINE_SIZE = 32 };
  size_t size = (size_t)(PGC_MAX_SHAPES + 1) * LINE_SIZE + 1;
  char *text = malloc(size);
  assert_non_null(text);
  size_t used = 0;
  for (int i = 1; i <= PGC_MAX_SHAPES; ++i)
    used += (size_t)snprintf(text + used, size - used, "%dx1x1\n", i);
  parsed p = parse_bytes(text, used);
  assert_int_equal(p.rc, PGC_EXIT_OK);
  assert_int_equal(p.set.count, PGC_MAX_SHAPES);
  expect_shape(&p, PGC_MAX_SHAPES - 1, PGC_MAX_SHAPES, 1, 1, PGC_MAX_SHAPES);
  pgc_shape_set_free(&p.set);

  used += (size_t)snprintf(text + used, size - used, "%dx1x1\n", PGC_MAX_SHAPES + 1);
  char message[64];
  snprintf(message, sizeof message, "set.txt:%d: more than %d shapes",
           PGC_MAX_SHAPES + 1, PGC_MAX_SHAPES);
  expect_error(text, used, message);
  free(text);
}

/* ---- files ----------------------------------------------------------------- */

/* A file in the temporary directory holding `len` bytes of `text`; the
 * caller removes it. */
static void temp_file(char *path, size_t size, const char *text, size_t len) {
  const char *dir = getenv("TMPDIR");
  snprintf(path, size, "%s/test_cli_shapes.XXXXXX", dir && *dir ? dir : "/tmp");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *file = fdopen(fd, "wb");
  assert_non_null(file);
  assert_int_equal(fwrite(text, 1, len, file), len);
  assert_int_equal(fclose(file), 0);
}

static void test_shapes_read_files(void **state) {
  (void)state;
  char path[256], expected[PGC_SHAPES_ERROR_SIZE], err[PGC_SHAPES_ERROR_SIZE];
  pgc_shape_set set;
  static const char text[] = "# two shapes\n64x32x16\n\nbad line\n";
  temp_file(path, sizeof path, text, sizeof text - 1);
  assert_int_equal(pgc_shapes_read(path, &set, err, sizeof err), PGC_EXIT_USAGE);
  snprintf(expected, sizeof expected, "%s:4: 'bad line' is not MxNxK", path);
  assert_string_equal(err, expected);
  assert_int_equal(remove(path), 0);

  static const char good[] = "64x32x16\n";
  temp_file(path, sizeof path, good, sizeof good - 1);
  assert_int_equal(pgc_shapes_read(path, &set, err, sizeof err), PGC_EXIT_OK);
  assert_int_equal(set.count, 1);
  assert_int_equal(set.shapes[0].n, 32);
  pgc_shape_set_free(&set);
  assert_int_equal(remove(path), 0);

  assert_int_equal(pgc_shapes_read("/nonexistent/set.txt", &set, err, sizeof err),
                   PGC_EXIT_USAGE);
  assert_string_equal(err, "cannot read /nonexistent/set.txt: No such file or directory");
  assert_int_equal(pgc_shapes_read("/nonexistent/\x1b[2J.txt", &set, err, sizeof err),
                   PGC_EXIT_USAGE);
  assert_string_equal(err, "cannot read /nonexistent/\\x1b[2J.txt: No such file or directory");
  assert_null(set.shapes);
  assert_int_equal(pgc_shapes_read("/", &set, err, sizeof err), PGC_EXIT_USAGE);
  assert_string_equal(err, "cannot read /: Is a directory");
}

static void test_shapes_file_too_large(void **state) {
  (void)state;
  /* A file of blank lines one byte past the limit: refused unread. */
  size_t len = PGC_MAX_SHAPE_FILE_BYTES + 1;
  char *text = malloc(len);
  assert_non_null(text);
  memset(text, '\n', len);
  char path[256], expected[PGC_SHAPES_ERROR_SIZE], err[PGC_SHAPES_ERROR_SIZE];
  temp_file(path, sizeof path, text, len);
  pgc_shape_set set;
  assert_int_equal(pgc_shapes_read(path, &set, err, sizeof err), PGC_EXIT_USAGE);
  snprintf(expected, sizeof expected, "%s is larger than 1024 KiB: not a shape set",
           path);
  assert_string_equal(err, expected);
  assert_int_equal(remove(path), 0);
  /* At the limit it is read, and is no set. */
  temp_file(path, sizeof path, text, len - 1);
  assert_int_equal(pgc_shapes_read(path, &set, err, sizeof err), PGC_EXIT_USAGE);
  snprintf(expected, sizeof expected, "no shape in %s", path);
  assert_string_equal(err, expected);
  assert_int_equal(remove(path), 0);
  free(text);
}

/* The committed set reads as it is. */
static void test_shapes_committed_set(void **state) {
  (void)state;
  pgc_shape_set set;
  char err[PGC_SHAPES_ERROR_SIZE];
  int rc = pgc_shapes_read(PG_SHAPE_SET_PATH, &set, err, sizeof err);
  if (rc != PGC_EXIT_OK) print_error("%s\n", err);
  assert_int_equal(rc, PGC_EXIT_OK);
  assert_int_equal(set.count, 42);
  assert_int_equal(set.shapes[0].m, 512);
  assert_int_equal(set.shapes[set.count - 1].m, 8192);
  assert_int_equal(set.shapes[set.count - 1].n, 8192);
  assert_int_equal(set.shapes[set.count - 1].k, 256);
  pgc_shape_set_free(&set);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shapes_comments_blanks_spaces),
      cmocka_unit_test(test_shapes_leading_zeros),
      cmocka_unit_test(test_shapes_not_a_shape),
      cmocka_unit_test(test_shapes_out_of_range),
      cmocka_unit_test(test_shapes_binary_and_long_lines),
      cmocka_unit_test(test_shapes_repeated),
      cmocka_unit_test(test_shapes_layout_words),
      cmocka_unit_test(test_shapes_layout_errors),
      cmocka_unit_test(test_shapes_layout_repeated),
      cmocka_unit_test(test_shapes_request),
      cmocka_unit_test(test_op_list),
      cmocka_unit_test(test_shapes_empty_set),
      cmocka_unit_test(test_shapes_too_many),
      cmocka_unit_test(test_shapes_read_files),
      cmocka_unit_test(test_shapes_file_too_large),
      cmocka_unit_test(test_shapes_committed_set),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
