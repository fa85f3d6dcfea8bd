/*
 * pipegemm inside XLA programs (JAX under jit): an XLA FFI handler.
 *
 * Present only in a library configured where jaxlib's headers were found
 * (CMake's PG_XLA_FFI, CMakeLists.txt); elsewhere the library is the same
 * without it. Declared here with plain pointers so that this header needs
 * none of XLA's: the handler is an XLA_FFI_Handler of XLA's FFI C API
 * (xla/ffi/api/c_api.h), XLA_FFI_Error *(XLA_FFI_CallFrame *), for the
 * platform "CUDA". The Python package registers it with JAX
 * (jax.ffi.register_ffi_target, python/pipegemm/jax.py).
 *
 * The call: one operand a, one operand b and one result c, all float32 and
 * row-major (XLA's default layout), each of rank 2 or more:
 *
 *   c[..., :, :] = alpha * op(a[..., :, :]) * op(b[..., :, :])
 *
 * op(x) is x's last two dimensions as stored (op N) or transposed (op T).
 * The dimensions before the last two are a batch, aligned from the right
 * with c's: each of a's and b's is c's or 1 (the same matrix for the whole
 * dimension), and a missing one is taken as 1. Attributes:
 *
 *   op_a, op_b  int32 or int64: 0 (N) or 1 (T)
 *   alpha       float32
 *   stages      int32 or int64: the variant's stage count, 0 its default
 *   variant     string: a registry entry, as pg_gemm takes it
 *
 * It runs pg_gemm (one strided batch where the batch dimensions collapse to
 * one stride, else one call per outer index) on XLA's stream and device.
 * A refusal of the library becomes an XLA error carrying pg_strerror, the
 * detail and the status name.
 */
#ifndef PIPEGEMM_XLA_H
#define PIPEGEMM_XLA_H

#include "pipegemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* XLA_FFI_Error *(XLA_FFI_CallFrame *call_frame); NULL on success. */
PG_API void *pg_xla_matmul(void *call_frame);

#ifdef __cplusplus
}
#endif
#endif /* PIPEGEMM_XLA_H */
