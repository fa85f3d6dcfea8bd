/* Every consumer thread of every tma_ws tile form, on the host, at each
 * layout the kernel reads (op N, N; A, B and both read transposed): a
 * stage laid out as the copy engine lays it out (A's or B^T's K-contiguous
 * rows of 128 bytes in its 128-byte swizzle, 16-byte piece p of row r at
 * piece p ^ (r % 8); an M- or N-contiguous operand dense), each thread's
 * origin (tws_origin_of), its inner product over the stage (tws_compute or
 * tws_compute_layout) and its epilogue (tws_epilogue) into a C of fewer
 * rows and columns than the tile, with beta = 1 over zeros: every element
 * of C must be its exact sum (small integers: no rounding), written once
 * (a second write would double it), and nothing outside M x N written.
 * The kernel's arithmetic is this code (src/kernels/tma_ws.cuh); what it
 * cannot see is the copy engine itself, which the GPU tests hold.
 * Exit 0 pass, 1 fail. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/tma_ws.cuh"

static int failures;

/* The value of A (TM x K, op N as used) at (m, k) and of B (K x TN) at (k, n):
 * small integers of both signs, different for each form and layout. */
static float value_a(int seed, int m, int k) { return (float)((m * 7 + k * 3 + seed) % 9 - 4); }
static float value_b(int seed, int k, int n) { return (float)((k * 5 + n * 11 + seed) % 7 - 3); }

/* Byte offset of element e of K-contiguous row r (TWS_A_ROW_BYTES a row). */
static size_t swizzled(int r, int e) {
  const int piece = e / 4, pieces = TWS_A_ROW_BYTES / 16;
  return (size_t)r * TWS_A_ROW_BYTES + (size_t)((piece ^ (r % pieces)) * 16 + (e % 4) * 4);
}

template <int TM, int TN, int LAYOUT> static void check(const char *form) {
  typedef tws_tile<TM, TN> tile;
  enum { THREAD_M = tile::THREAD_M, THREAD_N = tile::THREAD_N, K = TWS_TILE_K };
  enum { COL_STEP_T = tile::LAYOUT == TWS_LAYOUT_THIN ? 4 : 8 };
  constexpr bool A_T = (LAYOUT & TWS_A_T) != 0, B_T = (LAYOUT & TWS_B_T) != 0;
  const int seed = TM + 3 * TN + LAYOUT;
  char *stage = (char *)aligned_alloc(1024, tile::STAGE_BYTES);
  memset(stage, 0, tile::STAGE_BYTES);
  for (int m = 0; m < TM; ++m)
    for (int k = 0; k < K; ++k) {
      const float v = value_a(seed, m, k);
      if (A_T)
        ((float *)stage)[k * TM + m] = v;
      else
        memcpy(stage + swizzled(m, k), &v, sizeof v);
    }
  char *bs = stage + tile::STAGE_A_BYTES;
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < TN; ++n) {
      const float v = value_b(seed, k, n);
      if (B_T)
        memcpy(bs + swizzled(n, k), &v, sizeof v);
      else
        ((float *)bs)[k * TN + n] = v;
    }
  /* C: the tile's rows and columns less a few (the guards), then a border
   * that no thread may write. */
  const int m = TM > 8 ? TM - 3 : TM, n = TN > 8 ? TN - 5 : TN, ld = TN + 4;
  const float untouched = 12345.0f;
  float *c = (float *)aligned_alloc(16, (size_t)(TM + 2) * ld * sizeof(float));
  for (int i = 0; i < (TM + 2) * ld; ++i) c[i] = untouched;
  for (int r = 0; r < m; ++r)
    for (int col = 0; col < n; ++col) c[r * ld + col] = 0.0f;
  for (int t = 0; t < tile::CONSUMERS; ++t) {
    const tws_origin o = tws_origin_of<TM, TN, LAYOUT>(t / 32, t % 32);
    float acc[THREAD_M][THREAD_N];
    for (int i = 0; i < THREAD_M; ++i)
      for (int j = 0; j < THREAD_N; ++j) acc[i][j] = 0.0f;
    if ((LAYOUT & (TWS_A_T | TWS_B_T)) == 0)
      tws_compute<TM, TN>(stage, o.row0, o.swz, o.col0, acc);
    else
      tws_compute_layout<TM, TN, LAYOUT>(stage, o.row0, o.swz, o.col0, acc);
    tws_epilogue<THREAD_M, THREAD_N, tile::ROW_STEP, LAYOUT, COL_STEP_T>(
        c, ld, m, n, 1.0f, 1.0f, 0, 0, o.row0, o.col0, acc);
  }
  int bad = 0;
  for (int r = 0; r < TM + 2; ++r)
    for (int col = 0; col < ld; ++col) {
      float want = untouched;
      if (r < m && col < n) {
        want = 0.0f;
        for (int k = 0; k < K; ++k) want += value_a(seed, r, k) * value_b(seed, k, col);
      }
      if (c[r * ld + col] != want && bad++ < 3)
        printf("FAIL %s, layout %d: C[%d][%d] = %g, want %g\n", form, LAYOUT, r, col,
               c[r * ld + col], want);
    }
  if (bad) ++failures;
  free(c);
  free(stage);
}

#define TWS_CHECK_LAYOUTS(name, tm, tn, layout, wg, thread_m, thread_n, blocks, max, text) \
  check<tm, tn, 0>(#name);                                                                 \
  check<tm, tn, TWS_BATCHED | TWS_A_T>(#name);                                             \
  check<tm, tn, TWS_BATCHED | TWS_B_T>(#name);                                             \
  check<tm, tn, TWS_BATCHED | TWS_A_T | TWS_B_T>(#name);

int main(void) {
  int forms = 0;
#define TWS_COUNT(...) ++forms;
  TWS_FORMS(TWS_COUNT)
  TWS_FORMS(TWS_CHECK_LAYOUTS)
  printf("test_tws_threads: %d forms x 4 layouts, %d failed\n", forms, failures);
  return failures ? 1 : 0;
}
