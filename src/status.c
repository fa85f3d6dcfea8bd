/* pg_status strings and the CUDA error kept for pg_last_cuda_error(). */
#include "internal.h"

const char *pg_strerror(pg_status status) {
  switch (status) {
#define PG_STATUS_MESSAGE_(name, value, message) \
  case name:                                     \
    return message;
    PG_STATUS_TABLE(PG_STATUS_MESSAGE_)
#undef PG_STATUS_MESSAGE_
  }
  return "unknown status";
}

const char *pg_status_name(pg_status status) {
  switch (status) {
#define PG_STATUS_NAME_(name, value, message) \
  case name:                                  \
    return #name;
    PG_STATUS_TABLE(PG_STATUS_NAME_)
#undef PG_STATUS_NAME_
  }
  return "PG_UNKNOWN_STATUS";
}

/* Per thread, so concurrent callers each see their own failure. */
static _Thread_local cudaError_t last_cuda_error = cudaSuccess;

cudaError_t pg_last_cuda_error(void) { return last_cuda_error; }

#define PG_DETAIL_SIZE 256
static _Thread_local char last_detail[PG_DETAIL_SIZE];

const char *pg_last_error_detail(void) { return last_detail; }

void pg_set_error_detail(const char *text) {
  size_t i = 0;
  for (; text != NULL && text[i] != '\0' && i + 1 < PG_DETAIL_SIZE; ++i) last_detail[i] = text[i];
  last_detail[i] = '\0';
}

pg_status pg_status_from_cuda(cudaError_t err) {
  if (err == cudaSuccess) return PG_OK;
  last_cuda_error = err;
  switch (err) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorCompatNotSupportedOnDevice:
      return PG_ERR_NO_DEVICE;
    case cudaErrorMemoryAllocation:
      return PG_ERR_NO_MEMORY;
    case cudaErrorNoKernelImageForDevice:
      return PG_ERR_ARCH;
    default:
      return PG_ERR_CUDA;
  }
}
