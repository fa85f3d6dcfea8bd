/* auto's model replayed without a GPU: for every shape of the given shape
 * files (as those in bench/shapes/; row-major and dense, so that a leading
 * dimension no multiple of 4 is one TMA cannot read), each of the
 * selector's candidates as a call on a GPU of the given facts would plan
 * it, with its predicted speed and whether the selector would run it.
 * Beside a run measured on that GPU (`pipegemm bench --format csv` with the
 * candidates' rows), scripts/auto-replay.py says where the model's choice
 * is not the fastest entry and what that costs: the ground for refitting
 * the rules of src/tuning.c, which the tool reads as it is built.
 *
 *   build/pg_auto_replay [--selector auto] [--cc 90] [--sms 132] [--smem-kib 227] FILE...
 *
 * Prints CSV: shape,m,n,k,candidate,stages,predicted,status,chosen,blocks,block_k
 * (the planned kernel's blocks and a block's K; 0 where it refuses). Exit 2
 * for bad arguments, an unreadable file, or a line that names a layout
 * other than op N, N and one GEMM. Not installed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/shapes.h"
#include "internal.h"

#define MAX_ROWS PG_AUTO_MAX_RULES

static int usage(const char *why) {
  fprintf(stderr, "pg_auto_replay: %s\n"
                  "usage: pg_auto_replay [--selector auto|auto_tf32|auto_emulated] [--cc 90] "
                  "[--sms 132] [--smem-kib 227] FILE...\n", why);
  return 2;
}

/* A positive int from text, or -1. */
static int positive(const char *text) {
  char *end = NULL;
  const long v = strtol(text, &end, 10);
  return end != text && *end == '\0' && v > 0 && v < 1 << 30 ? (int)v : -1;
}

int main(int argc, char **argv) {
  const char *selector_name = "auto";
  int cc = 90, sms = 132, smem_kib = 227, files = 0;
  for (int i = 1; i < argc; ++i) {
    int *number = !strcmp(argv[i], "--cc") ? &cc : !strcmp(argv[i], "--sms") ? &sms
                : !strcmp(argv[i], "--smem-kib") ? &smem_kib : NULL;
    if (number != NULL || !strcmp(argv[i], "--selector")) {
      if (i + 1 >= argc) return usage("an option without its value");
      if (number == NULL) {
        selector_name = argv[++i];
      } else if ((*number = positive(argv[++i])) < 0) {
        return usage("a number that is not a positive integer");
      }
    } else if (argv[i][0] == '-') {
      return usage("an unknown option");
    } else {
      ++files;
    }
  }
  if (files == 0) return usage("no shape file");
  const pg_variant_info *selector = pg_variant_find(selector_name);
  if (selector == NULL || selector->kind != PG_KIND_SELECTOR) return usage("no such selector");
  const pg_device device = pg_device_model(cc, sms, (size_t)smem_kib * 1024);
  printf("# pg_auto_replay: %s on cc %d, %d SMs, %d KiB of shared memory a block; tuning row: "
         "%s\n", selector_name, cc, sms, smem_kib, device.tuning.measured_on);
  printf("shape,m,n,k,candidate,stages,predicted,status,chosen,blocks,block_k\n");
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') {
      ++i; /* an option's value */
      continue;
    }
    pgc_shape_set set = {0};
    char err[PGC_SHAPES_ERROR_SIZE];
    if (pgc_shapes_read(argv[i], &set, err, sizeof err) != 0) {
      fprintf(stderr, "pg_auto_replay: %s\n", err);
      return 2;
    }
    for (int j = 0; j < set.count; ++j) {
      const pgc_shape *s = &set.shapes[j];
      /* The model plans one row-major GEMM, op N, N: a line that names
       * another layout would be replayed as something it is not. */
      if (s->layout.op_a != PG_OP_N || s->layout.op_b != PG_OP_N || s->layout.batch != 1) {
        char text[PGC_SHAPES_ERROR_SIZE / 4];
        pgc_shape_text(s, text, sizeof text);
        fprintf(stderr, "pg_auto_replay: %s:%zu: %s: the model replays op N, N and one GEMM\n",
                argv[i], s->line, text);
        pgc_shape_set_free(&set);
        return 2;
      }
      pg_model_row rows[MAX_ROWS];
      int chosen = -1;
      const int count = pg_auto_model(&device, selector, s->m, s->n, s->k, rows, MAX_ROWS, &chosen);
      for (int r = 0; r < count; ++r)
        printf("%dx%dx%d,%d,%d,%d,%s,%d,%.4f,%s,%d,%lld,%lld\n", s->m, s->n, s->k, s->m, s->n,
               s->k, rows[r].variant->name, rows[r].stages, rows[r].speed,
               pg_status_name(rows[r].status), r == chosen, rows[r].blocks, rows[r].block_k);
    }
    pgc_shape_set_free(&set);
  }
  return 0;
}
