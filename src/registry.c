/* The registry: every entry of src/variants.h, in its order (study order:
 * the reference, the guide's 32x32 tiles, then the write-up's 128x128 family
 * from no pipeline to the deepest one, the Hopper kernels, and auto). Each
 * entry is defined beside its kernel (src/kernels/entry.h); this file only
 * puts them in a row. The CLI, the tests and the docs read the registry;
 * nothing else lists the variants (the tuning table and the studies name the
 * entries they use by their stable names). */
#include <stddef.h>
#include <string.h>

#include "internal.h"
#include "kernels/tma_ws.h" /* TWS_FORMS, the flagship's tile forms */

#define PG_TRACED_TWIN_TRACED(name) extern const pg_variant_entry pg_entry_##name##_traced;
#define PG_TRACED_TWIN_UNTRACED(name)
#define PG_VARIANT(name, file, trace, arch) \
  extern const pg_variant_entry pg_entry_##name; PG_TRACED_TWIN_##trace(name)
/* A family's forms: an entry for each line of its list, every line's first
 * field the entry's name. */
#define PG_FORM_DECLARED_TRACED(name, ...) PG_VARIANT(name, "", TRACED, )
#define PG_FORM_DECLARED_UNTRACED(name, ...) PG_VARIANT(name, "", UNTRACED, )
#define PG_VARIANT_FORMS(list, file, trace, arch) list(PG_FORM_DECLARED_##trace)
#define PG_KERNEL_FILE(file, trace, arch)
#include "variants.h"
#undef PG_VARIANT
#undef PG_VARIANT_FORMS

typedef struct {
  const pg_variant_entry *entry;
  const pg_variant_entry *traced; /* NULL: untraced */
} registry_slot;

#define PG_TWIN_TRACED(name) &pg_entry_##name##_traced
#define PG_TWIN_UNTRACED(name) NULL
#define PG_VARIANT(name, file, trace, arch) {&pg_entry_##name, PG_TWIN_##trace(name)},
#define PG_FORM_SLOT_TRACED(name, ...) PG_VARIANT(name, "", TRACED, )
#define PG_FORM_SLOT_UNTRACED(name, ...) PG_VARIANT(name, "", UNTRACED, )
#define PG_VARIANT_FORMS(list, file, trace, arch) list(PG_FORM_SLOT_##trace)
static const registry_slot registry[] = {
#include "variants.h"
};
#undef PG_VARIANT
#undef PG_VARIANT_FORMS
#undef PG_KERNEL_FILE

enum { REGISTRY_COUNT = (int)(sizeof registry / sizeof registry[0]) };

int pg_variant_count(void) { return REGISTRY_COUNT; }

const pg_variant_info *pg_variant_at(int index) {
  if (index < 0 || index >= REGISTRY_COUNT) return NULL;
  return &registry[index].entry->info;
}

const pg_variant_info *pg_variant_find(const char *name) {
  if (name == NULL) return NULL;
  for (int i = 0; i < REGISTRY_COUNT; ++i)
    if (strcmp(registry[i].entry->info.name, name) == 0) return &registry[i].entry->info;
  return NULL;
}

/* Only a pointer into the registry converts back; anything else is NULL. */
static int slot_of(const pg_variant_info *info) {
  for (int i = 0; i < REGISTRY_COUNT; ++i)
    if (&registry[i].entry->info == info) return i;
  return -1;
}

const pg_variant_entry *pg_entry_of(const pg_variant_info *info) {
  const int i = slot_of(info);
  return i >= 0 ? registry[i].entry : NULL;
}

const pg_variant_entry *pg_entry_find(const char *name) {
  return pg_entry_of(pg_variant_find(name));
}

const pg_variant_entry *pg_entry_traced(const pg_variant_entry *entry) {
  const int i = entry != NULL ? slot_of(&entry->info) : -1;
  return i >= 0 ? registry[i].traced : NULL;
}

const pg_kernel_spec *pg_variant_kernel(const pg_variant_info *variant) {
  const pg_variant_entry *entry = pg_entry_of(variant);
  return entry != NULL && entry->info.kind == PG_KIND_KERNEL ? &entry->kernel : NULL;
}

const char *pg_kind_name(pg_variant_kind kind) {
  switch (kind) {
    case PG_KIND_KERNEL: return "kernel";
    case PG_KIND_LIBRARY: return "library reference";
    case PG_KIND_SELECTOR: return "selector";
  }
  return "unknown kind";
}

const char *pg_precision_name(pg_precision precision) {
  switch (precision) {
    case PG_PRECISION_STRICT: return "strict";
    case PG_PRECISION_EMULATED: return "emulated";
    case PG_PRECISION_TF32: return "tf32";
  }
  return "unknown precision";
}

pg_status pg_variant_smem_bytes(const pg_variant_info *variant, int stages,
                                size_t *bytes) {
  pg_clear_error_detail();
  const pg_variant_entry *entry = pg_entry_of(variant);
  if (entry == NULL || bytes == NULL) {
    pg_set_error_detail(entry == NULL ? "the variant is not an entry of pipegemm's registry "
                                        "(use pg_variant_find or pg_variant_at)"
                                      : "no place for the answer given (NULL)");
    return PG_ERR_INVALID_ARG;
  }
  pg_status st = pg_variant_stages(variant, stages, &stages);
  if (st != PG_OK) return st;
  *bytes = entry->smem_bytes != NULL ? entry->smem_bytes(stages) : 0;
  return PG_OK;
}

pg_status pg_variant_stages(const pg_variant_info *variant, int stages, int *resolved) {
  pg_clear_error_detail();
  if (pg_entry_of(variant) == NULL) {
    pg_set_error_detail("the variant is not an entry of pipegemm's registry "
                        "(use pg_variant_find or pg_variant_at)");
    return PG_ERR_INVALID_ARG;
  }
  const int s = stages == 0 ? variant->default_stages : stages;
  if (s >= variant->min_stages && s <= variant->max_stages) {
    if (resolved != NULL) *resolved = s;
    return PG_OK;
  }
  if (variant->max_stages == 0)
    pg_set_error_detail("stages = %d: %s takes only 0 (it runs its choice's own)", stages,
                        variant->name);
  else
    pg_set_error_detail("stages = %d: %s takes %d..%d (0 for its default, %d)", stages,
                        variant->name, variant->min_stages, variant->max_stages,
                        variant->default_stages);
  return PG_ERR_STAGES;
}
