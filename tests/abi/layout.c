/* The public header's binary layout, one line a fact: every field of every
 * public struct ("pg_plan_info.grid_x 40 4": offset and size in bytes), the
 * size of each struct that may not grow, and every enum value. tests/abi/
 * keeps this output for each soname (libpipegemm.so.0.5.txt); the test
 * abi_layout fails where a line recorded there is no longer printed, which
 * is what moving, resizing or renumbering anything a built program relies
 * on does. Lines may be added (a field at the end of a struct that carries
 * its size, a new enum value): docs/api.md, "Versions and the ABI". */
#include <stddef.h>
#include <stdio.h>

#include "pipegemm.h"

#define FIELD(type, field) \
  printf("%s.%s %zu %zu\n", #type, #field, offsetof(type, field), sizeof(((type *)0)->field))
#define FROZEN(type) printf("sizeof(%s) %zu\n", #type, sizeof(type))
#define VALUE(name) printf("%s %d\n", #name, (int)(name))

int main(void) {
#define PG_STATUS_VALUE_(name, value, message) VALUE(name);
  PG_STATUS_TABLE(PG_STATUS_VALUE_)
#undef PG_STATUS_VALUE_
  VALUE(PG_KIND_KERNEL);
  VALUE(PG_KIND_LIBRARY);
  VALUE(PG_KIND_SELECTOR);
  VALUE(PG_PRECISION_STRICT);
  VALUE(PG_PRECISION_EMULATED);
  VALUE(PG_PRECISION_TF32);

  /* Owned by the library, handed out by pointer: may grow at its end. */
  FIELD(pg_variant_info, name);
  FIELD(pg_variant_info, kind);
  FIELD(pg_variant_info, precision);
  FIELD(pg_variant_info, technique);
  FIELD(pg_variant_info, source);
  FIELD(pg_variant_info, min_cc);
  FIELD(pg_variant_info, min_stages);
  FIELD(pg_variant_info, max_stages);
  FIELD(pg_variant_info, default_stages);
  FIELD(pg_variant_info, tile_m);
  FIELD(pg_variant_info, tile_n);
  FIELD(pg_variant_info, tile_k);
  FIELD(pg_variant_info, threads);
  FIELD(pg_variant_info, description);
  FIELD(pg_variant_info, layouts);
  VALUE(PG_LAYOUT_NN);
  VALUE(PG_LAYOUT_ANY);
  VALUE(PG_LAYOUT_SOME);
  VALUE(PG_OP_N);
  VALUE(PG_OP_T);

  /* Read by the library up to its `size`: may grow at its end. */
  FIELD(pg_gemm_desc, size);
  FIELD(pg_gemm_desc, op_a);
  FIELD(pg_gemm_desc, op_b);
  FIELD(pg_gemm_desc, m);
  FIELD(pg_gemm_desc, n);
  FIELD(pg_gemm_desc, k);
  FIELD(pg_gemm_desc, alpha);
  FIELD(pg_gemm_desc, beta);
  FIELD(pg_gemm_desc, a);
  FIELD(pg_gemm_desc, b);
  FIELD(pg_gemm_desc, c);
  FIELD(pg_gemm_desc, lda);
  FIELD(pg_gemm_desc, ldb);
  FIELD(pg_gemm_desc, ldc);
  FIELD(pg_gemm_desc, batch);
  FIELD(pg_gemm_desc, stride_a);
  FIELD(pg_gemm_desc, stride_b);
  FIELD(pg_gemm_desc, stride_c);

  /* Inside pg_plan_info: never grows. */
  FROZEN(pg_kernel_facts);
  FIELD(pg_kernel_facts, threads);
  FIELD(pg_kernel_facts, registers);
  FIELD(pg_kernel_facts, smem_bytes);
  FIELD(pg_kernel_facts, blocks_per_sm);

  /* Filled by the library up to its `size`: may grow at its end. */
  FIELD(pg_plan_info, size);
  FIELD(pg_plan_info, variant);
  FIELD(pg_plan_info, stages);
  FIELD(pg_plan_info, launches);
  FIELD(pg_plan_info, grid_x);
  FIELD(pg_plan_info, grid_y);
  FIELD(pg_plan_info, kernel);
  FIELD(pg_plan_info, splits);
  FIELD(pg_plan_info, stream_k_blocks);
  FIELD(pg_plan_info, workspace_bytes);
  FIELD(pg_plan_info, split_from_row);
  FIELD(pg_plan_info, split_in_clusters);
  FIELD(pg_plan_info, op_a);
  FIELD(pg_plan_info, op_b);
  FIELD(pg_plan_info, batch);
  FIELD(pg_plan_info, transposes);
  return ferror(stdout) ? 1 : 0;
}
