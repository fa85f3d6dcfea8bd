/* The variant registry, without a GPU: names, lookups, stage ranges, the
 * facts of the 128x128 tile the study depends on, and shared-memory sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <cuda_runtime_api.h>

#include "kernels/tma_ws.h" /* TWS_FORMS */
#include "pipegemm.h"

static int have_gpu(void) {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

static void test_count_and_at(void **state) {
  (void)state;
  int n = pg_variant_count();
  assert_true(n > 0);
  assert_null(pg_variant_at(-1));
  assert_null(pg_variant_at(n));
  assert_null(pg_variant_at(INT32_MAX));
  for (int i = 0; i < n; i++) assert_non_null(pg_variant_at(i));
}

static void test_names_unique_and_found(void **state) {
  (void)state;
  int n = pg_variant_count();
  for (int i = 0; i < n; i++) {
    const pg_variant_info *v = pg_variant_at(i);
    assert_non_null(v->name);
    assert_true(strlen(v->name) > 0);
    assert_non_null(v->technique);
    assert_true(strlen(v->technique) > 0);
    assert_non_null(v->source);
    /* Every kernel comes from a write-up; the reference and auto from none. */
    if (v->kind == PG_KIND_KERNEL)
      assert_true(strlen(v->source) > 0);
    else
      assert_string_equal(v->source, "");
    assert_true(v->kind == PG_KIND_KERNEL || v->kind == PG_KIND_LIBRARY ||
                v->kind == PG_KIND_SELECTOR);
    assert_true(strcmp(pg_kind_name(v->kind), "unknown kind") != 0);
    assert_true(strcmp(pg_precision_name(v->precision), "unknown precision") != 0);
    for (int j = 0; j < i; j++) assert_string_not_equal(v->name, pg_variant_at(j)->name);
    /* Round trip: find gives back the very entry. */
    assert_ptr_equal(pg_variant_find(v->name), v);
  }
}

/* auto and the FFMA family are strict IEEE FP32; the tensor-core reference
 * row says it is TF32, so that it is held to the TF32 bound (and only it). */
static void test_precision(void **state) {
  (void)state;
  const char *const strict[] = {"cublas", "baseline", "cp_async", "tma_ws", "auto"};
  for (size_t i = 0; i < sizeof strict / sizeof strict[0]; ++i) {
    const pg_variant_info *v = pg_variant_find(strict[i]);
    assert_non_null(v);
    assert_int_equal(v->precision, PG_PRECISION_STRICT);
  }
  const pg_variant_info *tf32 = pg_variant_find("cublas_tf32");
  assert_non_null(tf32);
  assert_int_equal(tf32->precision, PG_PRECISION_TF32);
  assert_int_equal(tf32->kind, PG_KIND_LIBRARY);
  assert_string_equal(pg_precision_name(PG_PRECISION_STRICT), "strict");
  assert_string_equal(pg_precision_name(PG_PRECISION_EMULATED), "emulated");
  assert_string_equal(pg_precision_name(PG_PRECISION_TF32), "tf32");
  assert_string_equal(pg_precision_name((pg_precision)99), "unknown precision");
}

/* The technique is one short line, for `pipegemm list` and the README's
 * table: at most 60 characters, no line break; the rest is the
 * description's, which is NULL or more than the technique, on one line. */
#define TECHNIQUE_MOST 60
static void test_technique_is_one_short_line(void **state) {
  (void)state;
  for (int i = 0; i < pg_variant_count(); i++) {
    const pg_variant_info *v = pg_variant_at(i);
    const size_t length = strlen(v->technique);
    if (length > TECHNIQUE_MOST)
      fail_msg("%s's technique is %zu characters, more than %d: \"%s\" (move the rest to "
               ".description)",
               v->name, length, TECHNIQUE_MOST, v->technique);
    if (strpbrk(v->technique, "\n\r") != NULL)
      fail_msg("%s's technique is more than one line", v->name);
    if (v->description != NULL) {
      if (strlen(v->description) <= length)
        fail_msg("%s's description says no more than its technique: leave it NULL", v->name);
      if (strpbrk(v->description, "\n\r") != NULL)
        fail_msg("%s's description holds a line break", v->name);
    }
  }
}

/* Every tile form of tma_ws (a line of TWS_FORMS, src/kernels/tma_ws.h) is
 * an entry of the registry, once, as its line says: src/variants.h takes
 * the list with one line (PG_VARIANT_FORMS), 13_tma_ws_splitk.cu defines
 * each entry from it. */
typedef struct {
  const char *name, *technique;
  int tile_m, tile_n, warpgroups, max_stages;
} form_line;
#define FORM_LINE(form, tm, tn, layout, wg, thread_m, thread_n, blocks, max, text) \
  {#form, text, tm, tn, wg, max},
static const form_line forms[] = {TWS_FORMS(FORM_LINE)};

/* 1 where `name` is a tile form of tma_ws (a line of TWS_FORMS). */
static int is_tile_form(const char *name) {
  for (size_t f = 0; f < sizeof forms / sizeof forms[0]; ++f)
    if (strcmp(forms[f].name, name) == 0) return 1;
  return 0;
}

static void test_tile_forms_are_entries(void **state) {
  (void)state;
  const int count = (int)(sizeof forms / sizeof forms[0]);
  for (int f = 0; f < count; ++f) {
    const form_line *line = &forms[f];
    int found = 0, at = -1;
    for (int i = 0; i < pg_variant_count(); i++)
      if (strcmp(pg_variant_at(i)->name, line->name) == 0) found++, at = i;
    if (found != 1)
      fail_msg("the tile form %s (TWS_FORMS) is %d entries of the registry, not one: "
               "src/variants.h takes TWS_FORMS with one PG_VARIANT_FORMS line, and names "
               "no form itself",
               line->name, found);
    const pg_variant_info *v = pg_variant_at(at);
    assert_int_equal(v->kind, PG_KIND_KERNEL);
    assert_int_equal(v->precision, PG_PRECISION_STRICT);
    assert_string_equal(v->technique, line->technique);
    assert_non_null(v->description);
    assert_int_equal(v->tile_m, line->tile_m);
    assert_int_equal(v->tile_n, line->tile_n);
    assert_int_equal(v->tile_k, TWS_TILE_K);
    assert_int_equal(v->threads, 128 * line->warpgroups + 128);
    assert_int_equal(v->min_cc, 90);
    assert_int_equal(v->min_stages, 2);
    assert_int_equal(v->max_stages, line->max_stages);
    assert_int_equal(v->default_stages, 3);
    /* In the registry's order, one after another. */
    if (f > 0) assert_string_equal(pg_variant_at(at - 1)->name, forms[f - 1].name);
    for (int g = 0; g < f; ++g)
      if (forms[g].tile_m == line->tile_m && forms[g].tile_n == line->tile_n)
        fail_msg("%s and %s are one tile: a form is a tile", forms[g].name, line->name);
  }
}

static void test_find_unknown(void **state) {
  (void)state;
  assert_null(pg_variant_find(NULL));
  assert_null(pg_variant_find(""));
  assert_null(pg_variant_find("no_such_variant"));
  assert_null(pg_variant_find("baseline "));
  assert_null(pg_variant_find("Baseline"));
  assert_null(pg_variant_find("base"));
  assert_null(pg_variant_find("cp_async2"));
}

static void test_stage_ranges(void **state) {
  (void)state;
  for (int i = 0; i < pg_variant_count(); i++) {
    const pg_variant_info *v = pg_variant_at(i);
    if (v->kind == PG_KIND_SELECTOR) {
      /* auto has no stages or tile of its own: it runs another variant. */
      assert_int_equal(v->min_stages, 0);
      assert_int_equal(v->max_stages, 0);
      assert_int_equal(v->default_stages, 0);
      assert_int_equal(v->tile_m, 0);
      continue;
    }
    assert_true(v->min_stages >= 1);
    assert_true(v->min_stages <= v->default_stages);
    assert_true(v->default_stages <= v->max_stages);
    assert_true(v->min_cc >= 0);
    assert_true(v->tile_m >= 0 && v->tile_n >= 0 && v->tile_k >= 0);
    /* A kernel launches its threads; nothing else has a block of its own. */
    if (v->kind == PG_KIND_KERNEL)
      assert_true(v->threads > 0 && v->threads % 32 == 0);
    else
      assert_int_equal(v->threads, 0);
  }
}

static const pg_variant_info *must_find(const char *name) {
  const pg_variant_info *v = pg_variant_find(name);
  if (v == NULL) fail_msg("variant \"%s\" is missing from the registry", name);
  return v;
}

/* baseline, pingpong and cp_async share the write-up's 128x128 tile so that a comparison
 * isolates the pipelining mechanism (docs/design.md, "Variants"). */
static void check_study_tile(const pg_variant_info *v) {
  assert_int_equal(v->tile_m, 128);
  assert_int_equal(v->tile_n, 128);
  assert_int_equal(v->tile_k, 8);
  assert_int_equal(v->threads, 256);
  assert_int_equal(v->min_cc, 80);
  assert_string_equal(v->source, "CUDA Kernel Study: Pipelining");
}

static void test_contract_variants(void **state) {
  (void)state;
  check_study_tile(must_find("baseline"));
  check_study_tile(must_find("pingpong"));
  const pg_variant_info *cp = must_find("cp_async");
  check_study_tile(cp);
  assert_int_equal(cp->min_stages, 1);
  assert_int_equal(cp->max_stages, 8);
  /* cuBLAS is the reference row; auto the selector. */
  assert_int_equal(must_find("cublas")->kind, PG_KIND_LIBRARY);
  assert_int_equal(must_find("auto")->kind, PG_KIND_SELECTOR);
}

static void test_smem_bytes(void **state) {
  (void)state;
  const pg_variant_info *cp = must_find("cp_async");
  size_t prev = 0;
  for (int s = cp->min_stages; s <= cp->max_stages; s++) {
    size_t bytes = 0;
    assert_int_equal(pg_variant_smem_bytes(cp, s, &bytes), PG_OK);
    /* Each stage holds at least one 128x8 tile of A and one 8x128 of B. */
    assert_true(bytes >= (size_t)s * (128 * 8 + 8 * 128) * sizeof(float));
    if (s > cp->min_stages) assert_true(bytes > prev);
    prev = bytes;
  }
  size_t dflt = 0, explicit_default = 0;
  assert_int_equal(pg_variant_smem_bytes(cp, 0, &dflt), PG_OK);
  assert_int_equal(pg_variant_smem_bytes(cp, cp->default_stages, &explicit_default), PG_OK);
  assert_true(dflt == explicit_default);
}

static void test_smem_bytes_rejects(void **state) {
  (void)state;
  size_t sentinel = (size_t)0x5a5a5a5a, bytes;
  for (int i = 0; i < pg_variant_count(); i++) {
    const pg_variant_info *v = pg_variant_at(i);
    bytes = sentinel;
    assert_int_equal(pg_variant_smem_bytes(v, v->max_stages + 1, &bytes), PG_ERR_STAGES);
    assert_int_equal(pg_variant_smem_bytes(v, -1, &bytes), PG_ERR_STAGES);
    if (v->min_stages > 1)
      assert_int_equal(pg_variant_smem_bytes(v, v->min_stages - 1, &bytes), PG_ERR_STAGES);
    assert_true(bytes == sentinel); /* untouched on failure */
    for (int s = v->min_stages; s <= v->max_stages; s++)
      assert_int_equal(pg_variant_smem_bytes(v, s, &bytes), PG_OK);
    assert_int_equal(pg_variant_smem_bytes(v, 0, NULL), PG_ERR_INVALID_ARG);
  }
  bytes = sentinel;
  assert_int_equal(pg_variant_smem_bytes(NULL, 0, &bytes), PG_ERR_INVALID_ARG);
  assert_int_equal(pg_variant_smem_bytes(NULL, 2, &bytes), PG_ERR_INVALID_ARG);
  assert_true(bytes == sentinel);
}

/* ---- docs/variants.md's table holds the registry ------------------------------- */

#define PAGE_LINE 1024

/* The cells of a Markdown table row "| a | b | c |", trimmed; returns the count. */
static int split_row(char *line, char **cells, int max) {
  int count = 0;
  char *p = strchr(line, '|');
  while (p != NULL && count < max) {
    char *start = p + 1, *end = strchr(start, '|');
    if (end == NULL) break;
    *end = '\0';
    while (*start == ' ') ++start;
    char *last = end;
    while (last > start && last[-1] == ' ') --last;
    *last = '\0';
    cells[count++] = start;
    p = end;
  }
  return count;
}

/* "Title" or "Title 1"; "Title 2" from the registry's "Title 1; Title 2",
 * and an em dash for none. */
static void source_cell(const char *source, char *out, size_t size) {
  if (source[0] == '\0') {
    snprintf(out, size, "\u2014");
    return;
  }
  size_t used = 0;
  out[used++] = '"';
  for (const char *p = source; *p && used + 4 < size; ++p) {
    if (p[0] == ';' && p[1] == ' ') {
      memcpy(out + used, "\"; \"", 4);
      used += 4;
      ++p;
    } else {
      out[used++] = *p;
    }
  }
  out[used++] = '"';
  out[used] = '\0';
}

/* A technique as a page writes it: code spans, a times sign and an arrow,
 * in the registry's plain text (no backticks, x, ->). */
static void plain_technique(const char *cell, char *out, size_t size) {
  size_t used = 0;
  for (const char *p = cell; *p && used + 3 < size;) {
    if (*p == '`') {
      ++p;
    } else if (strncmp(p, "\u00d7", strlen("\u00d7")) == 0) {
      out[used++] = 'x';
      p += strlen("\u00d7");
    } else if (strncmp(p, "\u2192", strlen("\u2192")) == 0) {
      out[used++] = '-';
      out[used++] = '>';
      p += strlen("\u2192");
    } else {
      out[used++] = *p++;
    }
  }
  out[used] = '\0';
}

/* docs/variants.md: its table "| name | kind | precision | technique | source |"
 * has a row for every entry of the registry, in the registry's order, with
 * its kind, precision, technique (the registry's one short line) and
 * source's title; a variant added, renamed or moved in one place and not
 * the other fails here. A tile form of tma_ws may have its row or leave
 * it to the family's: adding a form is one line of TWS_FORMS. */
static void test_variants_page(void **state) {
  (void)state;
  FILE *f = fopen(PG_VARIANTS_PAGE, "r");
  if (f == NULL) fail_msg("cannot open %s", PG_VARIANTS_PAGE);
  char line[PAGE_LINE];
  int in_table = 0, rows = 0, entry = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    if (!in_table) {
      in_table = strncmp(line, "| name | kind | precision | technique | source |", 48) == 0;
      continue;
    }
    if (line[0] != '|') break;
    if (strncmp(line, "| ---", 5) == 0) continue;
    char *cells[8];
    line[strcspn(line, "\n")] = '\0';
    const int n = split_row(line, cells, 8);
    if (n != 5) fail_msg("docs/variants.md: a row with %d cells, want 5", n);
    /* The row's entry: the registry's next, past tile forms the page
     * leaves to its family's row (a form is one line of TWS_FORMS). */
    char name[64];
    const pg_variant_info *v = NULL;
    for (;; ++entry) {
      if (entry >= pg_variant_count())
        fail_msg("docs/variants.md: row %d, %s, is past the registry's %d entries", rows + 1,
                 cells[0], pg_variant_count());
      v = pg_variant_at(entry);
      snprintf(name, sizeof name, "`%s`", v->name);
      if (strcmp(cells[0], name) == 0) break;
      if (!is_tile_form(v->name))
        fail_msg("docs/variants.md: row %d is %s where the registry's entry %d is %s (a "
                 "variant missing from the page, or out of order)",
                 rows + 1, cells[0], entry, name);
    }
    ++entry;
    if (strcmp(cells[1], pg_kind_name(v->kind)) != 0)
      fail_msg("docs/variants.md: %s's kind is \"%s\", the registry's \"%s\"", v->name, cells[1],
               pg_kind_name(v->kind));
    if (strcmp(cells[2], pg_precision_name(v->precision)) != 0)
      fail_msg("docs/variants.md: %s's precision is \"%s\", the registry's \"%s\"", v->name,
               cells[2], pg_precision_name(v->precision));
    char technique[256];
    plain_technique(cells[3], technique, sizeof technique);
    if (strcmp(technique, v->technique) != 0)
      fail_msg("docs/variants.md: %s's technique is \"%s\", the registry's \"%s\"", v->name,
               technique, v->technique);
    char source[256];
    source_cell(v->source, source, sizeof source);
    if (strcmp(cells[4], source) != 0)
      fail_msg("docs/variants.md: %s's source is %s, the registry's %s", v->name, cells[4],
               source);
    ++rows;
  }
  fclose(f);
  if (rows == 0) fail_msg("docs/variants.md has no table \"| name | kind | precision | ...\"");
  for (; entry < pg_variant_count(); ++entry)
    if (!is_tile_form(pg_variant_at(entry)->name))
      fail_msg("docs/variants.md: %d rows, the registry %d entries: %s has none", rows,
               pg_variant_count(), pg_variant_at(entry)->name);
}

static void test_supported_without_gpu(void **state) {
  (void)state;
  if (have_gpu()) skip(); /* the GPU tests cover pg_variant_supported there */
  for (int i = 0; i < pg_variant_count(); i++) {
    const pg_variant_info *v = pg_variant_at(i);
    assert_int_equal(pg_variant_supported(v, 0), PG_ERR_NO_DEVICE);
    assert_int_equal(pg_variant_supported(v, v->max_stages), PG_ERR_NO_DEVICE);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_count_and_at),
      cmocka_unit_test(test_names_unique_and_found),
      cmocka_unit_test(test_precision),
      cmocka_unit_test(test_technique_is_one_short_line),
      cmocka_unit_test(test_tile_forms_are_entries),
      cmocka_unit_test(test_find_unknown),
      cmocka_unit_test(test_stage_ranges),
      cmocka_unit_test(test_contract_variants),
      cmocka_unit_test(test_smem_bytes),
      cmocka_unit_test(test_smem_bytes_rejects),
      cmocka_unit_test(test_supported_without_gpu),
      cmocka_unit_test(test_variants_page),
  };
  return cmocka_run_group_tests_name("registry", tests, NULL, NULL);
}
