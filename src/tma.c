/* Host half of the TMA variants: layout checks and tensor-map encoding. */
#include "tma.h"

#include <cudaTypedefs.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* PTX ISA / CUDA driver API, cuTensorMapEncodeTiled: the global address must
 * be 16-byte aligned and every stride (bytes between rows) a multiple of 16. */
#define TMA_ALIGN 16u

static int misaligned(const void *p) { return ((uintptr_t)p % TMA_ALIGN) != 0; }

/* The rules for the first `operands` of A and B. */
/* One operand's layout against TMA's rules. */
static pg_status check_operand(const char *name, const void *ptr, int ld, const char *ld_name,
                               char *why, size_t why_size) {
  if (misaligned(ptr)) {
    snprintf(why, why_size, "TMA needs %s's base address 16-byte aligned; %p is not", name, ptr);
    return PG_ERR_UNSUPPORTED;
  }
  if (((size_t)ld * sizeof(float)) % TMA_ALIGN != 0) {
    snprintf(why, why_size,
             "TMA needs %s's row stride a multiple of 16 bytes; %s = %d floats is %zu bytes",
             name, ld_name, ld, (size_t)ld * sizeof(float));
    return PG_ERR_UNSUPPORTED;
  }
  return PG_OK;
}

/* A batch's stride between an operand's matrices: a multiple of 16 bytes
 * (0, one matrix for the whole batch, reads no stride). */
static pg_status check_stride(const char *name, int batch, long long stride, char *why,
                              size_t why_size) {
  if (batch > 1 && ((unsigned long long)stride * sizeof(float)) % TMA_ALIGN != 0) {
    snprintf(why, why_size,
             "TMA needs %s's batch stride a multiple of 16 bytes; %lld floats is not", name,
             stride);
    return PG_ERR_UNSUPPORTED;
  }
  return PG_OK;
}

/* The operands a kernel copies with TMA; none when K = 0 (no copies:
 * C = beta*C). */
static pg_status check_operands(const pg_layout_args *g, int check_a, int check_b, char *why,
                                size_t why_size) {
  if (g->k == 0) return PG_OK;
  pg_status st = PG_OK;
  if (check_a) st = check_operand("A", g->a, g->lda, "lda", why, why_size);
  if (st == PG_OK && check_a) st = check_stride("A", g->batch, g->stride_a, why, why_size);
  if (st == PG_OK && check_b) st = check_operand("B", g->b, g->ldb, "ldb", why, why_size);
  if (st == PG_OK && check_b) st = check_stride("B", g->batch, g->stride_b, why, why_size);
  return st;
}

pg_status pg_tma_check(const pg_layout_args *g, char *why, size_t why_size) {
  return check_operands(g, 1, 1, why, why_size);
}

pg_status pg_tma_check_a(const pg_layout_args *g, char *why, size_t why_size) {
  return check_operands(g, 1, 0, why, why_size);
}

pg_status pg_tma_check_b(const pg_layout_args *g, char *why, size_t why_size) {
  return check_operands(g, 0, 1, why, why_size);
}

/* The driver's encoder, found once it is found: a lookup that failed
 * (a driver without it, or one not loaded yet) is asked again next time,
 * on the probing thread, so that its error never lands in the caller's
 * CUDA error slot. */
static PFN_cuTensorMapEncodeTiled_v12000 encode_tiled;
static int encoder_found; /* set with release order after encode_tiled */
static pthread_mutex_t lookup_lock = PTHREAD_MUTEX_INITIALIZER;

static void lookup_encoder(void *ctx) {
  cudaError_t *error = ctx;
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  *error = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                            cudaEnableDefault, &found);
  if (*error == cudaSuccess && (found != cudaDriverEntryPointSuccess || fn == NULL))
    *error = cudaErrorSymbolNotFound;
  if (*error == cudaSuccess) encode_tiled = (PFN_cuTensorMapEncodeTiled_v12000)fn;
}

static CUtensorMapSwizzle swizzle_mode(int bytes) {
  switch (bytes) {
    case 32: return CU_TENSOR_MAP_SWIZZLE_32B;
    case 64: return CU_TENSOR_MAP_SWIZZLE_64B;
    case 128: return CU_TENSOR_MAP_SWIZZLE_128B;
    default: return CU_TENSOR_MAP_SWIZZLE_NONE;
  }
}

/* `matrices` row-major rows x cols FP32 matrices with leading dimension
 * ld, `stride` floats apart, read in boxes of box_cols x box_rows (x one
 * matrix): a map of rank 2 where `rank3` is 0 (one matrix), else of rank 3.
 * Out-of-range elements arrive as zeros. */
static cudaError_t encode_tensor(CUtensorMap *map, const float *base, long long rows,
                                 long long cols, long long ld, int box_cols, int box_rows,
                                 int swizzle_bytes, int rank3, long long matrices,
                                 long long stride) {
  /* A single matrix's stride is never read: any multiple of 16 bytes. */
  if (matrices <= 1) stride = ld * rows;
  const cuuint64_t dims[3] = {(cuuint64_t)cols, (cuuint64_t)rows,
                              (cuuint64_t)(matrices > 1 ? matrices : 1)};
  const cuuint64_t strides[2] = {(cuuint64_t)ld * sizeof(float),
                                 (cuuint64_t)stride * sizeof(float)};
  const cuuint32_t box[3] = {(cuuint32_t)box_cols, (cuuint32_t)box_rows, 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  CUresult r = encode_tiled(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, rank3 ? 3 : 2, (void *)base,
                            dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            swizzle_mode(swizzle_bytes), CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

static cudaError_t encode_matrix(CUtensorMap *map, const float *base, int rows, int cols,
                                 int ld, int box_cols, int box_rows, int swizzle_bytes) {
  return encode_tensor(map, base, rows, cols, ld, box_cols, box_rows, swizzle_bytes, 0, 1, 0);
}

int pg_tma_reads_layout(const pg_layout_args *g, const pg_tma_boxes *boxes) {
  return boxes->any_layout && pg_other_layout(g);
}

/* The operands as the call stores them, each over the batch (its stride 0:
 * one matrix for all): A M x K, or K x M where op(A) = T; B K x N, or N x K
 * where op(B) = T; a box of the tile's K by its rows or columns, in the
 * orientation of the storage. */
static cudaError_t encode_layout(const pg_layout_args *g, const pg_tma_boxes *boxes, int with_a,
                                 int with_b, pg_tma_maps *maps) {
  cudaError_t err = cudaSuccess;
  const long long batch_a = g->stride_a != 0 ? g->batch : 1;
  const long long batch_b = g->stride_b != 0 ? g->batch : 1;
  if (with_a)
    err = g->op_a ? encode_tensor(&maps->a, g->a, g->k, g->m, g->lda, boxes->a_box_m,
                                  boxes->a_box_k, boxes->a_t_swizzle_bytes, 1, batch_a,
                                  g->stride_a)
                  : encode_tensor(&maps->a, g->a, g->m, g->k, g->lda, boxes->a_box_k,
                                  boxes->a_box_m, boxes->a_swizzle_bytes, 1, batch_a,
                                  g->stride_a);
  if (err == cudaSuccess && with_b)
    err = g->op_b ? encode_tensor(&maps->b, g->b, g->n, g->k, g->ldb, boxes->b_box_k,
                                  boxes->b_box_n, boxes->b_t_swizzle_bytes, 1, batch_b,
                                  g->stride_b)
                  : encode_tensor(&maps->b, g->b, g->k, g->n, g->ldb, boxes->b_box_n,
                                  boxes->b_box_k, boxes->b_swizzle_bytes, 1, batch_b,
                                  g->stride_b);
  return err;
}

/* The matrices of an operand's batch that a map holds: one where its
 * stride is 0 (the same matrix for all) or the call has one GEMM. */
static long long matrices_of(const pg_layout_args *g, long long stride) {
  return stride != 0 && g->batch > 1 ? g->batch : 1;
}

cudaError_t pg_tma_encode_views(const pg_layout_args *g, const pg_tma_boxes *boxes,
                                long long a_region_rows, long long b_region_rows,
                                pg_tma_maps *maps) {
  if (g->k == 0) return cudaSuccess;
  cudaError_t err = pg_tma_find_encoder();
  if (err != cudaSuccess) return err;
  if (a_region_rows > 0) {
    const long long matrices = matrices_of(g, g->stride_a);
    err = encode_tensor(&maps->a, g->a, a_region_rows / matrices, g->k, g->lda, boxes->a_box_k,
                        boxes->a_box_m, boxes->a_swizzle_bytes, 1, matrices, g->stride_a);
  }
  if (err == cudaSuccess && b_region_rows > 0) {
    const long long matrices = matrices_of(g, g->stride_b);
    const long long rows = b_region_rows / matrices;
    /* K-major (B^T, or a copy of a B stored N x K): rows of K. */
    const int k_major = boxes->b_k_major || g->op_b;
    err = k_major ? encode_tensor(&maps->b, g->b, rows, g->k, g->ldb, boxes->b_box_k,
                                  boxes->b_box_n,
                                  boxes->b_k_major ? boxes->b_swizzle_bytes
                                                   : boxes->b_t_swizzle_bytes,
                                  1, matrices, g->stride_b)
                  : encode_tensor(&maps->b, g->b, rows, g->n, g->ldb, boxes->b_box_n,
                                  boxes->b_box_k, boxes->b_swizzle_bytes, 1, matrices,
                                  g->stride_b);
  }
  return err;
}

cudaError_t pg_tma_find_encoder(void) {
  if (__atomic_load_n(&encoder_found, __ATOMIC_ACQUIRE)) return cudaSuccess;
  pthread_mutex_lock(&lookup_lock);
  cudaError_t error = cudaSuccess;
  if (!encoder_found) {
    if (pg_on_probe_thread(lookup_encoder, &error) != PG_OK) error = cudaErrorMemoryAllocation;
    if (error == cudaSuccess) __atomic_store_n(&encoder_found, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&lookup_lock);
  return error;
}

cudaError_t pg_tma_encode(const pg_layout_args *g, const pg_tma_boxes *boxes, int with_a,
                          int with_b, pg_tma_maps *maps) {
  memset(maps, 0, sizeof *maps);
  if (g->k == 0) return cudaSuccess;
  cudaError_t found = pg_tma_find_encoder();
  if (found != cudaSuccess) return found;
  if (boxes->workspace_lines) return cudaSuccess; /* encoded at launch */
  if (pg_tma_reads_layout(g, boxes)) return encode_layout(g, boxes, with_a, with_b, maps);
  cudaError_t err = cudaSuccess;
  if (with_a)
    err = encode_matrix(&maps->a, g->a, g->m, g->k, g->lda, boxes->a_box_k, boxes->a_box_m,
                        boxes->a_swizzle_bytes);
  if (err == cudaSuccess && with_b) err = pg_tma_encode_b(g, boxes, maps);
  return err;
}

cudaError_t pg_tma_encode_b(const pg_layout_args *g, const pg_tma_boxes *boxes, pg_tma_maps *maps) {
  if (g->k == 0) return cudaSuccess;
  cudaError_t found = pg_tma_find_encoder();
  if (found != cudaSuccess) return found;
  return encode_matrix(&maps->b, g->b, g->k, g->n, g->ldb, boxes->b_box_n, boxes->b_box_k,
                       boxes->b_swizzle_bytes);
}

/* maps->a over `rows` rows of `cols` floats at `base` (ld apart), in A's
 * boxes; nothing where K is 0. */
static cudaError_t encode_a_rows(const pg_layout_args *g, const pg_tma_boxes *boxes,
                                 const float *base, long long rows, int cols, int ld,
                                 pg_tma_maps *maps) {
  if (g->k == 0) return cudaSuccess;
  cudaError_t found = pg_tma_find_encoder();
  if (found != cudaSuccess) return found;
  if (rows > INT_MAX) return cudaErrorInvalidValue;
  return encode_matrix(&maps->a, base, (int)rows, cols, ld, boxes->a_box_k, boxes->a_box_m,
                       boxes->a_swizzle_bytes);
}

cudaError_t pg_tma_encode_a_parts(const pg_layout_args *g, const pg_tma_boxes *boxes,
                                  long long rows, pg_tma_maps *maps) {
  return encode_a_rows(g, boxes, g->a, rows, g->k, g->lda, maps);
}

cudaError_t pg_tma_encode_lines(const pg_layout_args *g, const pg_tma_boxes *boxes,
                                long long rows, pg_tma_maps *maps) {
  return encode_a_rows(g, boxes, g->partials, rows, g->ldp, g->ldp, maps);
}

cudaError_t pg_tma_encode_bt(const pg_layout_args *g, const pg_tma_boxes *boxes,
                             pg_tma_maps *maps) {
  if (g->k == 0) return cudaSuccess;
  cudaError_t found = pg_tma_find_encoder();
  if (found != cudaSuccess) return found;
  return encode_matrix(&maps->b, g->b, g->n, g->k, g->ldb, boxes->b_box_k, boxes->b_box_n,
                       boxes->b_swizzle_bytes);
}
