/* The flagship's kernel (12) on every layout a call has: op(A) and op(B)
 * in {N, T} over a strided batch, for each tile form of TWS_FORMS, read in
 * place. The operands' maps are of rank 3 (a matrix of the batch the third
 * coordinate, a stride of 0 one matrix for all), over the operands as the
 * call stores them (src/tma.c, pg_tma_reads_layout): A transposed arrives
 * M-contiguous and B transposed K-contiguous, and the consumers read them
 * with float4 loads of that orientation (tws_compute_layout, tma_ws.cuh),
 * as many a stage as for op N, N. The batch's GEMMs are grid y (and a loop
 * past 65535); K is split as in 13 where the batch is one GEMM. The entries
 * are 13's forms, whose configure picks the instance here
 * (pg_tws_layout_kernel); this file holds the instances alone, so that
 * they compile beside 13's. sm_90 only. */
#define TWS_KERNEL_ONLY
#include "kernels/12_tma_ws.cu"

/* A form's four instances: op N, N over a batch, then A, B, both read
 * transposed. */
#define TWS_LAYOUT_CASE(name, tm, tn, layout, wg, thread_m, thread_n, blocks, max_stages, text) \
  if (tile_m == tm && tile_n == tn) switch (layout_bits) {                                     \
      case TWS_BATCHED: return (const void *)pg_tma_ws_layout_kernel<tm, tn, TWS_BATCHED>;     \
      case TWS_BATCHED | TWS_A_T:                                                               \
        return (const void *)pg_tma_ws_layout_kernel<tm, tn, TWS_BATCHED | TWS_A_T>;           \
      case TWS_BATCHED | TWS_B_T:                                                               \
        return (const void *)pg_tma_ws_layout_kernel<tm, tn, TWS_BATCHED | TWS_B_T>;           \
      case TWS_BATCHED | TWS_A_T | TWS_B_T:                                                     \
        return (const void *)pg_tma_ws_layout_kernel<tm, tn, TWS_BATCHED | TWS_A_T | TWS_B_T>; \
      default: return NULL;                                                                     \
    }

extern "C" const void *pg_tws_layout_kernel(int tile_m, int tile_n, int layout_bits) {
  TWS_FORMS(TWS_LAYOUT_CASE)
  return NULL;
}
