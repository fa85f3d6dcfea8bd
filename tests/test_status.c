/* The status table: every code has its own negative value, a name and a
 * message, and the lookup functions never return NULL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pipegemm.h"

typedef struct {
  pg_status value;
  const char *macro_name;
  const char *message;
} status_row;

/* The test reads the same X-macro table as the library, so a code added to
 * the table is checked here without editing this file. */
static const status_row rows[] = {
#define ROW_(name, value, message) {name, #name, message},
    PG_STATUS_TABLE(ROW_)
#undef ROW_
};
static const int row_count = (int)(sizeof rows / sizeof rows[0]);

static void test_values_distinct_and_negative(void **state) {
  (void)state;
  int saw_ok = 0;
  for (int i = 0; i < row_count; i++) {
    if (strcmp(rows[i].macro_name, "PG_OK") == 0) {
      assert_int_equal(rows[i].value, 0);
      saw_ok = 1;
    } else {
      assert_true(rows[i].value < 0);
    }
    for (int j = i + 1; j < row_count; j++) assert_int_not_equal(rows[i].value, rows[j].value);
  }
  assert_true(saw_ok);
}

static void test_messages(void **state) {
  (void)state;
  for (int i = 0; i < row_count; i++) {
    const char *msg = pg_strerror(rows[i].value);
    assert_non_null(msg);
    assert_true(strlen(msg) > 0);
    /* pg_strerror serves the table's own message. */
    assert_string_equal(msg, rows[i].message);
  }
}

static void test_names(void **state) {
  (void)state;
  for (int i = 0; i < row_count; i++) {
    const char *name = pg_status_name(rows[i].value);
    assert_non_null(name);
    assert_true(strlen(name) > 0);
    /* The name is the enumerator's, possibly without its prefix: "PG_ERR_SMEM"
     * or "SMEM" (like uv_err_name's "EINVAL"). It must end the enumerator. */
    size_t len = strlen(name), full = strlen(rows[i].macro_name);
    assert_true(len <= full);
    assert_string_equal(rows[i].macro_name + (full - len), name);
    for (int j = 0; j < i; j++) assert_string_not_equal(name, pg_status_name(rows[j].value));
  }
}

static int contains_unknown(const char *s) {
  for (const char *p = s; *p; p++)
    if (strncmp(p, "unknown", 7) == 0 || strncmp(p, "UNKNOWN", 7) == 0 ||
        strncmp(p, "Unknown", 7) == 0)
      return 1;
  return 0;
}

static void test_unknown_values(void **state) {
  (void)state;
  const int unknown[] = {1, 12345, -12345, -1000000, INT32_MIN, INT32_MAX};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    pg_status s = (pg_status)unknown[i];
    const char *msg = pg_strerror(s);
    const char *name = pg_status_name(s);
    assert_non_null(msg);
    assert_non_null(name);
    assert_true(contains_unknown(msg));
    assert_true(contains_unknown(name));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_values_distinct_and_negative),
      cmocka_unit_test(test_messages),
      cmocka_unit_test(test_names),
      cmocka_unit_test(test_unknown_values),
  };
  return cmocka_run_group_tests_name("status", tests, NULL, NULL);
}
