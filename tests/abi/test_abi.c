/* pg_plan_describe's size protocol (docs/api.md, "Versions and the ABI"),
 * through the shared library as a program built against another header of
 * the same soname meets it. No GPU: a plan with M = 0 needs no device.
 *
 *   a caller of exactly 0.5.0's pg_plan_info: those bytes are written, not
 *     one past them;
 *   a caller of a newer, longer struct: its bytes past what the library
 *     knows are zeros, and nothing past its size is touched;
 *   a size left unset (0) or below 0.5.0's: refused, nothing written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pipegemm.h"

#define FILL 0xAB
#define ROOM 256 /* bytes around any struct a test hands over */

/* pg_plan_info as 0.5.0 declared it: the first of its kind to carry its size. */
typedef struct {
  size_t size;
  const pg_variant_info *variant;
  int stages;
  int launches;
  unsigned grid_x, grid_y;
  pg_kernel_facts kernel;
  int splits;
  int stream_k_blocks;
  size_t workspace_bytes;
  int split_from_row;
  int split_in_clusters;
  pg_op op_a, op_b;
  int batch;
  int transposes;
} plan_info_0_5_0;

static pg_plan *empty_plan(void) {
  pg_plan *plan = NULL;
  assert_int_equal(pg_plan_create(&plan, pg_variant_find("cp_async"), 0, 0, 8, 8, 1.0f, NULL,
                                  8, NULL, 8, 0.0f, NULL, 8),
                   PG_OK);
  assert_non_null(plan);
  return plan;
}

static void assert_filled(const unsigned char *bytes, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i)
    if (bytes[i] != FILL) fail_msg("byte %zu of the caller's memory was written", i);
}

static void test_older_caller(void **state) {
  (void)state;
  _Alignas(max_align_t) unsigned char room[ROOM];
  memset(room, FILL, sizeof room);
  plan_info_0_5_0 *info = (plan_info_0_5_0 *)room;
  info->size = sizeof *info;
  pg_plan *plan = empty_plan();
  assert_int_equal(pg_plan_describe(plan, (pg_plan_info *)info), PG_OK);
  assert_int_equal(info->size, sizeof *info);
  assert_null(info->variant);
  assert_int_equal(info->launches, 0);
  assert_filled(room, sizeof *info, sizeof room);
  pg_plan_destroy(plan);
}

static void test_newer_caller(void **state) {
  (void)state;
  _Alignas(max_align_t) unsigned char room[ROOM];
  memset(room, FILL, sizeof room);
  const size_t newer = sizeof(pg_plan_info) + 24; /* three fields this library lacks */
  ((pg_plan_info *)room)->size = newer;
  pg_plan *plan = empty_plan();
  assert_int_equal(pg_plan_describe(plan, (pg_plan_info *)room), PG_OK);
  assert_int_equal(((pg_plan_info *)room)->size, newer);
  for (size_t i = sizeof(pg_plan_info); i < newer; ++i)
    if (room[i] != 0) fail_msg("byte %zu, past what the library knows, is not zero", i);
  assert_filled(room, newer, sizeof room);
  pg_plan_destroy(plan);
}

static void test_size_unset(void **state) {
  (void)state;
  pg_plan *plan = empty_plan();
  const size_t sizes[] = {0, sizeof(size_t), sizeof(plan_info_0_5_0) - 1};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
    _Alignas(max_align_t) unsigned char room[ROOM];
    memset(room, FILL, sizeof room);
    ((pg_plan_info *)room)->size = sizes[s];
    assert_int_equal(pg_plan_describe(plan, (pg_plan_info *)room), PG_ERR_INVALID_ARG);
    assert_non_null(strstr(pg_last_error_detail(), "sizeof(pg_plan_info)"));
    assert_int_equal(((pg_plan_info *)room)->size, sizes[s]);
    assert_filled(room, sizeof(size_t), sizeof room);
  }
  /* The header's initialiser is the size a caller of this header has. */
  pg_plan_info info = PG_PLAN_INFO_INIT;
  assert_int_equal(info.size, sizeof info);
  assert_int_equal(pg_plan_describe(plan, &info), PG_OK);
  pg_plan_destroy(plan);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_older_caller),
      cmocka_unit_test(test_newer_caller),
      cmocka_unit_test(test_size_unset),
  };
  return cmocka_run_group_tests_name("abi", tests, NULL, NULL);
}
