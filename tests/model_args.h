/* The argument a kernel entry's configure function is planned on in the
 * host tests (no GPU): 100 x 60 x 36, dense, A and B 16-byte aligned at a
 * stand-in address (a plan looks at an address's alignment alone). */
#ifndef PGT_MODEL_ARGS_H
#define PGT_MODEL_ARGS_H

#include <string.h>

#include "internal.h"

static float pgt_storage[64] __attribute__((aligned(16)));

static inline pg_layout_args aligned_args(void) {
  pg_layout_args g;
  memset(&g, 0, sizeof g);
  g.m = 100;
  g.n = 60;
  g.k = 36;
  g.a = pgt_storage;
  g.b = pgt_storage;
  g.lda = 36;
  g.ldb = 60;
  g.batch = 1;
  return g;
}

#endif
