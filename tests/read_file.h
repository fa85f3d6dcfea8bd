/* A whole text file for a cmocka test, NUL-terminated; the caller frees it.
 * Any failure to read it fails the test. Include after <cmocka.h>. */
#ifndef PGT_READ_FILE_H
#define PGT_READ_FILE_H

#include <stdio.h>
#include <stdlib.h>

static inline char *pgt_read_file(const char *path) {
  FILE *in = fopen(path, "rb");
  if (!in) print_error("cannot open %s\n", path);
  assert_non_null(in);
  assert_int_equal(fseek(in, 0, SEEK_END), 0);
  long size = ftell(in);
  assert_true(size > 0);
  assert_int_equal(fseek(in, 0, SEEK_SET), 0);
  char *text = malloc((size_t)size + 1);
  assert_non_null(text);
  assert_int_equal(fread(text, 1, (size_t)size, in), (size_t)size);
  text[size] = '\0';
  assert_int_equal(fclose(in), 0);
  return text;
}

#endif
