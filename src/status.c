/* pg_status strings, the per-thread error state (pg_last_cuda_error,
 * pg_last_error_detail) and the library's version. */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

int pg_version(void) { return PIPEGEMM_VERSION; }

const char *pg_version_string(void) { return PIPEGEMM_VERSION_STRING; }

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

void pg_restore_last_cuda_error(cudaError_t err) { last_cuda_error = err; }

#define PG_DETAIL_SIZE 256
static _Thread_local char last_detail[PG_DETAIL_SIZE];

const char *pg_last_error_detail(void) { return last_detail; }

void pg_clear_error_detail(void) { last_detail[0] = '\0'; }

void pg_set_error_detail(const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  if (vsnprintf(last_detail, sizeof last_detail, format, ap) < 0) last_detail[0] = '\0';
  va_end(ap);
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
    case cudaErrorInvalidDeviceFunction:
    case cudaErrorInvalidKernelImage:
    case cudaErrorInvalidPtx:
    case cudaErrorUnsupportedPtxVersion:
      return PG_ERR_ARCH;
    default:
      return PG_ERR_CUDA;
  }
}
