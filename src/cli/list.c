/* `pipegemm list`: the variant registry, and whether the selected GPU runs
 * each entry. Works without a GPU: the registry is host data, and "runs
 * here" is then left out of the table (the header says there is no GPU).
 *
 * The table is one line an entry, within a terminal of PGC_LIST_WIDTH
 * columns: name, precision, stage counts, runs (here) and the one-line
 * technique, cut short with "…" where it does not fit. --long adds under
 * each row what the table leaves out (kind, compute capability, tile,
 * shared memory, source, a cell cut short, the description at length);
 * CSV and JSON carry every field whole. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/session.h"
#include "commands.h"
#include "output.h"
#include "introspect.h"

#define BYTES_PER_KIB 1024.0
#define KIB_DECIMALS 1
/* A terminal narrower than this still gets lines this long: below it the
 * fixed columns alone would not fit, and the details would wrap a few
 * words a line. */
#define LIST_NARROWEST 40
/* --long's line of facts, and the description after it. */
#define FACTS_TEXT_SIZE 512

/* Text cells of one variant, kept alive until the report is printed. */
typedef struct {
  char min_cc[16];
  char stages[48];
  char tile[48];
  char smem[32];
  char runs_here[PGC_VERDICT_TEXT_SIZE];
  char *details; /* --long: what goes under the row (malloc'd), or NULL */
} variant_texts;

/* The table shows name, precision, stages, runs (here: yes or no) and
 * technique; the rest, and technique and runs here whole, are data (CSV, JSON) and
 * --long's. Technique is a column twice: data where it always was, second,
 * and in the table last, where it can take what the others leave. */
enum {
  COL_NAME,
  COL_TECHNIQUE_DATA,
  COL_DESCRIPTION,
  COL_KIND,
  COL_PRECISION,
  COL_SOURCE,
  COL_MIN_CC,
  COL_STAGES_TEXT,
  COL_MIN_STAGES,
  COL_MAX_STAGES,
  COL_DEFAULT_STAGES,
  COL_TILE_M,
  COL_TILE_N,
  COL_TILE_K,
  COL_THREADS,
  COL_SMEM_BYTES,
  COL_LAYOUTS,
  COL_RUNS_HERE_DATA,
  COL_RUNS_HERE_TABLE,
  COL_TECHNIQUE_TABLE,
  LIST_COLUMNS
};

static const pgc_column list_columns[LIST_COLUMNS] = {
    [COL_NAME] = {"name", "variant", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    [COL_TECHNIQUE_DATA] = {"technique", "", PGC_ALIGN_LEFT, 0, PGC_SHOW_DATA},
    [COL_DESCRIPTION] = {"description", "", PGC_ALIGN_LEFT, 0, PGC_SHOW_DATA},
    [COL_KIND] = {"kind", "", PGC_ALIGN_LEFT, 0, PGC_SHOW_DATA},
    [COL_PRECISION] = {"precision", "precision", PGC_ALIGN_LEFT, 0, PGC_SHOW_ALL},
    [COL_SOURCE] = {"source", "", PGC_ALIGN_LEFT, 0, PGC_SHOW_DATA},
    [COL_MIN_CC] = {"min_cc", "", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    [COL_STAGES_TEXT] = {"stages", "stages", PGC_ALIGN_LEFT, 0, PGC_SHOW_TABLE},
    [COL_MIN_STAGES] = {"min_stages", "", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    [COL_MAX_STAGES] = {"max_stages", "", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    [COL_DEFAULT_STAGES] = {"default_stages", "", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    [COL_TILE_M] = {"tile_m", "", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    [COL_TILE_N] = {"tile_n", "", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    [COL_TILE_K] = {"tile_k", "", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    [COL_THREADS] = {"threads", "", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    [COL_SMEM_BYTES] = {"smem_bytes", "", PGC_ALIGN_RIGHT, 0, PGC_SHOW_DATA},
    /* "any": every op(A), op(B) and batch; "NN": op N, N, one GEMM */
    [COL_LAYOUTS] = {"layouts", "", PGC_ALIGN_LEFT, 0, PGC_SHOW_DATA},
    [COL_RUNS_HERE_DATA] = {"runs_here", "", PGC_ALIGN_LEFT, 0, PGC_SHOW_DATA},
    /* Shown only with a GPU: without one, every row would say so. */
    [COL_RUNS_HERE_TABLE] = {"runs_here", "runs", PGC_ALIGN_LEFT, 0, PGC_SHOW_TABLE},
    [COL_TECHNIQUE_TABLE] = {"technique", "technique", PGC_ALIGN_LEFT, 0, PGC_SHOW_TABLE},
};

/* The columns the table may narrow to fit its width, and how far: the
 * technique down to its title, the rest never (they are short). */
static const int list_min_widths[LIST_COLUMNS] = {
    [COL_TECHNIQUE_TABLE] = 1,
};

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

/* Which layouts an entry takes (pg_variant_info.layouts): a word for the
 * data, or said at length for --long. */
static const char *layouts_text(const pg_variant_info *variant, int at_length) {
  if (variant->layouts == PG_LAYOUT_ANY)
    return at_length ? "op(A), op(B) in {N, T} and strided batches" : "any";
  if (variant->layouts == PG_LAYOUT_SOME && at_length &&
      strcmp(variant->name, "wgmma_fp16x3") == 0)
    return "op(A), op(B) in {N, T} on one GEMM (a batch: PG_ERR_UNSUPPORTED)";
  if (variant->layouts == PG_LAYOUT_SOME)
    return at_length ? "op N, N and one GEMM; a short side's other layouts where its long "
                       "operand runs along K (the rest: PG_ERR_UNSUPPORTED)"
                     : "some";
  return at_length ? "op(A) = N, op(B) = N and one GEMM (others: PG_ERR_UNSUPPORTED)" : "NN";
}

/* --long's lines under a row: its facts beside the table's, where it comes
 * from, what runs here says at length, and the description. NULL when out
 * of memory (the row then goes without). */
static char *long_details(const pg_variant_info *variant, const variant_texts *texts,
                          int have_gpu) {
  char facts[FACTS_TEXT_SIZE];
  size_t used = (size_t)snprintf(facts, sizeof facts, "%s; compute capability %s or newer",
                                 pg_kind_name(variant->kind), texts->min_cc);
  if (variant->kind == PG_KIND_KERNEL && used < sizeof facts)
    used += (size_t)snprintf(facts + used, sizeof facts - used,
                             "; tile %s; %s of shared memory a block at %d stage%s",
                             texts->tile, texts->smem, variant->default_stages,
                             variant->default_stages == 1 ? "" : "s");
  if (used < sizeof facts)
    used += (size_t)snprintf(facts + used, sizeof facts - used, "\nlayouts: %s",
                             layouts_text(variant, 1));
  if (variant->source[0] != '\0' && used < sizeof facts)
    used += (size_t)snprintf(facts + used, sizeof facts - used, "\nsource: %s",
                             variant->source);
  /* The table's "yes" and "no" said at length: the library's reason, or a
   * selector's candidates here. */
  if (have_gpu && strcmp(texts->runs_here, "yes") != 0 && used < sizeof facts)
    snprintf(facts + used, sizeof facts - used, "\nruns here: %s", texts->runs_here);
  const char *description = variant->description ? variant->description : "";
  const size_t size = strlen(facts) + 1 + strlen(description) + 1;
  char *details = malloc(size);
  if (details != NULL)
    snprintf(details, size, "%s%s%s", facts, description[0] ? "\n" : "", description);
  return details;
}

static void describe(const pg_variant_info *variant, int have_gpu, variant_texts *texts,
                     pgc_cell *cells) {
  enum { CC_SCALE = 10 }; /* min_cc is major * 10 + minor */
  snprintf(texts->min_cc, sizeof texts->min_cc, "%d.%d",
           variant->min_cc / CC_SCALE, variant->min_cc % CC_SCALE);
  /* "2-8 (3)": the counts it takes and its default, short enough to leave
   * the technique its room. */
  if (variant->max_stages <= 0)
    snprintf(texts->stages, sizeof texts->stages, "-");
  else if (variant->min_stages == variant->max_stages)
    snprintf(texts->stages, sizeof texts->stages, "%d", variant->min_stages);
  else
    snprintf(texts->stages, sizeof texts->stages, "%d-%d (%d)",
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

  cells[COL_NAME] = pgc_cell_text(variant->name);
  cells[COL_TECHNIQUE_DATA] = pgc_cell_text(variant->technique);
  cells[COL_DESCRIPTION] = pgc_cell_text(variant->description); /* NULL: absent */
  cells[COL_KIND] = pgc_cell_text(pg_kind_name(variant->kind));
  cells[COL_PRECISION] = pgc_cell_text(pg_precision_name(variant->precision));
  cells[COL_SOURCE] = pgc_cell_text(variant->source[0] != '\0' ? variant->source : "-");
  cells[COL_MIN_CC] = pgc_cell_text(texts->min_cc);
  cells[COL_STAGES_TEXT] = pgc_cell_text(texts->stages);
  cells[COL_MIN_STAGES] = pgc_cell_int(variant->min_stages);
  cells[COL_MAX_STAGES] = pgc_cell_int(variant->max_stages);
  cells[COL_DEFAULT_STAGES] = pgc_cell_int(variant->default_stages);
  cells[COL_TILE_M] = optional_int(variant->tile_m);
  cells[COL_TILE_N] = optional_int(variant->tile_n);
  cells[COL_TILE_K] = optional_int(variant->tile_k);
  cells[COL_THREADS] = optional_int(variant->threads);
  cells[COL_SMEM_BYTES] = has_smem ? pgc_cell_int((long long)smem) : pgc_cell_absent();
  cells[COL_LAYOUTS] = pgc_cell_text(layouts_text(variant, 0));
  cells[COL_RUNS_HERE_DATA] = pgc_cell_text(texts->runs_here);
  /* The table says yes or no; --long says why not, or what a selector
   * picks from. */
  cells[COL_RUNS_HERE_TABLE] = pgc_cell_text(status == PG_OK ? "yes" : "no");
  cells[COL_TECHNIQUE_TABLE] = pgc_cell_text(variant->technique);
}

int pgc_list_print(FILE *out, const pgc_options *opts, int width) {
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

  const int long_listing = opts->long_listing && opts->format == PGC_FORMAT_TABLE;
  int count = pg_variant_count();
  variant_texts *texts = calloc(count > 0 ? (size_t)count : 1, sizeof *texts);
  pgc_cell *cells = calloc(count > 0 ? (size_t)count * LIST_COLUMNS : 1,
                           sizeof *cells);
  const char **details = calloc(count > 0 ? (size_t)count : 1, sizeof *details);
  if (!texts || !cells || !details) {
    fprintf(stderr, "pipegemm: out of host memory\n");
    free(texts);
    free(cells);
    free(details);
    return PGC_EXIT_FAILED;
  }
  int rows = 0;
  for (int i = 0; i < count; ++i) {
    const pg_variant_info *variant = pg_variant_at(i);
    if (!variant) continue;
    describe(variant, have_gpu, &texts[rows],
             &cells[(size_t)rows * LIST_COLUMNS]);
    if (long_listing) {
      texts[rows].details = long_details(variant, &texts[rows], have_gpu);
      details[rows] = texts[rows].details;
    }
    ++rows;
  }
  pgc_column columns[LIST_COLUMNS];
  memcpy(columns, list_columns, sizeof columns);
  if (!have_gpu) columns[COL_RUNS_HERE_TABLE].show = 0;

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
      "TF32 bound). stages: the stage counts it takes, its default in parentheses. "
      "runs (with a GPU): whether this GPU runs it (compute capability, shared "
      "memory, a kernel image it loads); auto, auto_tf32 and auto_emulated run the "
      "best predicted of their candidates here.",
      "'pipegemm list --long' adds under each entry what the table leaves out: a "
      "technique cut short (ending in \xe2\x80\xa6) whole, the kind, compute "
      "capability, tile, shared memory per block at the default stage count, "
      "the layouts it takes (any op(A), op(B) and batch, some, or op N, N alone), "
      "source, what runs says at length, and the description; --format csv "
      "and json carry every field whole. 'pipegemm bench --variant NAME' runs one.",
  };
  pgc_report report = {
      .command = "list",
      .facts = facts,
      .fact_count = (int)(sizeof facts / sizeof facts[0]),
      .columns = columns,
      .column_count = LIST_COLUMNS,
      .cells = cells,
      .row_count = rows,
      .notes = notes,
      .note_count = (int)(sizeof notes / sizeof notes[0]),
      .max_width = width,
      .min_widths = list_min_widths,
      .row_details = long_listing ? details : NULL,
  };
  pgc_print_report(out, opts->format, &report);
  for (int r = 0; r < rows; ++r) free(texts[r].details);
  free(texts);
  free(cells);
  free(details);
  return PGC_EXIT_OK;
}

int pgc_cmd_list(const pgc_options *opts) {
  /* A terminal's own width where it is narrower than the table's. */
  const int terminal = pgc_terminal_columns();
  int width = PGC_LIST_WIDTH;
  if (terminal > 0 && terminal < width)
    width = terminal > LIST_NARROWEST ? terminal : LIST_NARROWEST;
  return pgc_list_print(pgc_stdout(), opts, width);
}
