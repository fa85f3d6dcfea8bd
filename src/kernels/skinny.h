/* skinny_ffma's own settings (pg_gemm_args.own; pg_own in the kernels),
 * plain C, so that the tests read what its configure decided. */
#ifndef PG_KERNELS_SKINNY_H
#define PG_KERNELS_SKINNY_H

/* The BAND form (17_skinny_ring.cu): the floats a copy of a step's B moves
 * (4 or 2: B dense and aligned to them; else 1). */
typedef struct {
  int b_vector;
} sk_band_own;

#endif
