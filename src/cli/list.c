/* `pipegemm list`: the variant registry as a table, and whether the selected
 * GPU runs each entry. Works without a GPU: the registry is host data, and
 * "runs here" then says "no GPU". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/session.h"
#include "commands.h"
#include "output.h"
#include "introspect.h"

#define BYTES_PER_KIB 1024.0
#define KIB_DECIMALS 1

/* Text cells of one variant, kept alive until the report is printed. */
typedef struct {
  char min_cc[16];
  char stages[48];
  char tile[48];
  char smem[32];
  char runs_here[PGC_VERDICT_TEXT_SIZE];
} variant_texts;

static const pgc_column list_columns[] = {
    {"name", "variant", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    {"technique", "technique", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    {"kind", "kind", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    {"precision", "precision", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    {"source", "source", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    {"min_cc", "min CC", PGC_ALIGN_RIGHT, 0, PGC_SHOW_ALL},
    {"stages", "stages", PGC_ALIGN_LEFT, 0, PGC_SHOW_TABLE},
    {"min_stages", "", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"max_stages", "", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"default_stages", "", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"tile", "tile", PGC_ALIGN_LEFT, 0, PGC_SHOW_TABLE},
    {"tile_m", "", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"tile_n", "", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"tile_k", "", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"threads", "", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"smem", "smem/block", PGC_ALIGN_RIGHT, 0, PGC_SHOW_TABLE},
    {"smem_bytes", "", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    {"runs_here", "runs here", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
};
#define LIST_COLUMNS ((int)(sizeof list_columns / sizeof list_columns[0]))

/* A registry number that may be 0 for "chosen by the library". */
static pgc_cell optional_int(int value) {
  return value > 0 ? pgc_cell_int(value) : pgc_cell_absent();
}

/* auto's candidates on this GPU, in the tuning table's order, those this
 * GPU cannot run left out: "yes: best of tma_ws, tma_ws_splitk, ...". */
static void selector_choices(const pg_variant_info *selector, char *buf, size_t size) {
  size_t used = (size_t)snprintf(buf, size, "yes: best of");
  const char *sep = " ";
  const pg_variant_info *candidate = NULL;
  int stages = 0;
  for (int i = 0; pg_auto_candidate(selector, i, &candidate, &stages) == PG_OK; ++i) {
    if (pg_variant_supported(candidate, stages) != PG_OK) continue;
    if (used < size)
      used += (size_t)snprintf(buf + used, size - used, "%s%s", sep, candidate->name);
    sep = ", ";
  }
}

static void describe(const pg_variant_info *variant, int have_gpu, variant_texts *texts,
                     pgc_cell *cells) {
  enum { CC_SCALE = 10 }; /* min_cc is major * 10 + minor */
  snprintf(texts->min_cc, sizeof texts->min_cc, "%d.%d",
           variant->min_cc / CC_SCALE, variant->min_cc % CC_SCALE);
  if (variant->max_stages <= 0)
    snprintf(texts->stages, sizeof texts->stages, "-");
  else if (variant->min_stages == variant->max_stages)
    snprintf(texts->stages, sizeof texts->stages, "%d", variant->min_stages);
  else
    snprintf(texts->stages, sizeof texts->stages, "%d-%d, default %d",
             variant->min_stages, variant->max_stages, variant->default_stages);
  if (variant->kind == PG_KIND_KERNEL)
    snprintf(texts->tile, sizeof texts->tile, "%dx%dx%d, %d threads",
             variant->tile_m, variant->tile_n, variant->tile_k,
             variant->threads);
  else
    snprintf(texts->tile, sizeof texts->tile, "-");

  size_t smem = 0;
  int has_smem = variant->kind == PG_KIND_KERNEL &&
                 pg_variant_smem_bytes(variant, 0, &smem) == PG_OK;
  if (has_smem)
    snprintf(texts->smem, sizeof texts->smem, "%.*f KiB", KIB_DECIMALS,
             (double)smem / BYTES_PER_KIB);
  else
    snprintf(texts->smem, sizeof texts->smem, "-");

  /* Without a usable device, do not ask the library: it would look at
   * whatever device is current, not the one --device named. */
  pg_status status = have_gpu ? pg_variant_supported(variant, 0) : PG_ERR_NO_DEVICE;
  if (!have_gpu)
    snprintf(texts->runs_here, sizeof texts->runs_here, "no GPU");
  else if (status == PG_OK)
    snprintf(texts->runs_here, sizeof texts->runs_here, "yes");
  else /* the library's own reason */
    snprintf(texts->runs_here, sizeof texts->runs_here, "no: %s",
             pg_last_error_detail()[0] ? pg_last_error_detail() : pg_strerror(status));
  if (status == PG_OK && variant->kind == PG_KIND_SELECTOR)
    selector_choices(variant, texts->runs_here, sizeof texts->runs_here);

  int i = 0;
  cells[i++] = pgc_cell_text(variant->name);
  cells[i++] = pgc_cell_text(variant->technique);
  cells[i++] = pgc_cell_text(pg_kind_name(variant->kind));
  cells[i++] = pgc_cell_text(pg_precision_name(variant->precision));
  cells[i++] = pgc_cell_text(variant->source[0] != '\0' ? variant->source : "-");
  cells[i++] = pgc_cell_text(texts->min_cc);
  cells[i++] = pgc_cell_text(texts->stages);
  cells[i++] = pgc_cell_int(variant->min_stages);
  cells[i++] = pgc_cell_int(variant->max_stages);
  cells[i++] = pgc_cell_int(variant->default_stages);
  cells[i++] = pgc_cell_text(texts->tile);
  cells[i++] = optional_int(variant->tile_m);
  cells[i++] = optional_int(variant->tile_n);
  cells[i++] = optional_int(variant->tile_k);
  cells[i++] = optional_int(variant->threads);
  cells[i++] = pgc_cell_text(texts->smem);
  cells[i++] = has_smem ? pgc_cell_int((long long)smem) : pgc_cell_absent();
  cells[i++] = pgc_cell_text(texts->runs_here);
}

int pgc_cmd_list(const pgc_options *opts) {
  pgh_device_info info;
  memset(&info, 0, sizeof info);
  char gpu_text[sizeof info.name + PGC_VERDICT_TEXT_SIZE];
  char cc_text[16];
  int have_gpu = pgh_device_query(opts->device, &info) == PG_OK;
  const char *why_not = NULL;
  if (have_gpu) {
    cudaError_t err = cudaSetDevice(opts->device);
    if (err != cudaSuccess) {
      have_gpu = 0;
      why_not = cudaGetErrorString(err);
    }
  } else {
    why_not = pg_last_error_detail()[0] != '\0' ? pg_last_error_detail()
                                                : pg_strerror(PG_ERR_NO_DEVICE);
  }
  if (have_gpu)
    snprintf(gpu_text, sizeof gpu_text, "%s", info.name);
  else
    snprintf(gpu_text, sizeof gpu_text, "none (%s)", why_not);
  snprintf(cc_text, sizeof cc_text, "%d.%d", info.cc_major, info.cc_minor);

  int count = pg_variant_count();
  variant_texts *texts = calloc(count > 0 ? (size_t)count : 1, sizeof *texts);
  pgc_cell *cells = calloc(count > 0 ? (size_t)count * LIST_COLUMNS : 1,
                           sizeof *cells);
  if (!texts || !cells) {
    fprintf(stderr, "pipegemm: out of host memory\n");
    free(texts);
    free(cells);
    return PGC_EXIT_FAILED;
  }
  int rows = 0;
  for (int i = 0; i < count; ++i) {
    const pg_variant_info *variant = pg_variant_at(i);
    if (!variant) continue;
    describe(variant, have_gpu, &texts[rows],
             &cells[(size_t)rows * LIST_COLUMNS]);
    ++rows;
  }

  pgc_fact facts[] = {
      {"gpu", "GPU", pgc_cell_text(gpu_text), 0, NULL, PGC_SHOW_ALL},
      {"device", "device", pgc_cell_int(opts->device), 0, NULL, PGC_SHOW_ALL},
      {"cc", "compute capability",
       have_gpu ? pgc_cell_text(cc_text) : pgc_cell_absent(), 0, NULL,
       PGC_SHOW_ALL},
      {"sm_count", "SMs", have_gpu ? pgc_cell_int(info.sm_count) : pgc_cell_absent(),
       0, NULL, PGC_SHOW_ALL},
      {"smem_optin_bytes", "shared memory per block, max",
       have_gpu ? pgc_cell_real((double)info.smem_optin_bytes / BYTES_PER_KIB)
                : pgc_cell_absent(),
       KIB_DECIMALS, "KiB", PGC_SHOW_TABLE},
      {"smem_optin_bytes", "",
       have_gpu ? pgc_cell_int((long long)info.smem_optin_bytes) : pgc_cell_absent(),
       0, NULL, PGC_SHOW_DATA},
  };
  static const char *const notes[] = {
      "precision: strict (IEEE FP32), emulated (FP32-accurate on the tensor cores, "
      "held to the strict bound) or tf32 (one TF32 product per term, held to the "
      "TF32 bound). "
      "smem/block: shared memory per block at the default stage count. runs here: "
      "whether this GPU runs it (compute capability, shared memory, a kernel image "
      "it loads); for auto, auto_tf32 and auto_emulated, their candidates here, of which each runs the best predicted. "
      "'pipegemm bench --variant NAME' runs one.",
  };
  pgc_report report = {
      .command = "list",
      .facts = facts,
      .fact_count = (int)(sizeof facts / sizeof facts[0]),
      .columns = list_columns,
      .column_count = LIST_COLUMNS,
      .cells = cells,
      .row_count = rows,
      .notes = notes,
      .note_count = (int)(sizeof notes / sizeof notes[0]),
  };
  pgc_print_report(pgc_stdout(), opts->format, &report);
  free(texts);
  free(cells);
  return PGC_EXIT_OK;
}
