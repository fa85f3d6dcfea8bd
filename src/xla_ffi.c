/* pg_xla_matmul (include/pipegemm_xla.h): pg_gemm as an XLA FFI handler,
 * for JAX under jit. Written against XLA's FFI C API, whose header comes
 * from the installed jaxlib at configure time (CMakeLists.txt, PG_XLA_FFI).
 *
 * XLA calls the handler first with a metadata extension, to learn the API
 * version it was built for and its traits, then at each execution with the
 * buffers, the attributes and a context that gives the stream and device.
 * Buffers are row-major; the batch dimensions (all but the last two) of a
 * and b are aligned from the right with c's, a dimension of size 1 read
 * again for every index of c's (stride 0). The batch is collapsed from the
 * innermost dimension outwards while every operand's strides stay one
 * stride (x's stride at the outer dimension = its stride at the inner one x
 * the inner one's size); that group is one pg_gemm batch, and each index of
 * the dimensions outside it one more call. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <xla/ffi/api/c_api.h>

#include "pipegemm.h"
#include "pipegemm_xla.h"

enum { MAX_RANK = 16 };

static XLA_FFI_Error *make_error(const XLA_FFI_Api *api, XLA_FFI_Error_Code code,
                                 const char *message) {
  XLA_FFI_Error_Create_Args args;
  memset(&args, 0, sizeof args);
  args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  args.message = message;
  args.errc = code;
  return api->XLA_FFI_Error_Create(&args);
}

static XLA_FFI_Error *invalid(const XLA_FFI_Api *api, const char *message) {
  char text[512];
  snprintf(text, sizeof text, "pipegemm: %s", message);
  return make_error(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, text);
}

/* The metadata XLA asks for before any call: the API version of the header
 * this file was compiled with. Traits: what the handler launches depends
 * on its attributes and shapes alone, and every pipegemm launch can be
 * captured, so XLA may put it in a command buffer (a CUDA graph). */
static XLA_FFI_Error *metadata(const XLA_FFI_Api *api, XLA_FFI_Metadata_Extension *extension) {
  if (extension->extension_base.struct_size < XLA_FFI_Metadata_Extension_STRUCT_SIZE ||
      extension->metadata == NULL ||
      extension->metadata->struct_size < XLA_FFI_Metadata_STRUCT_SIZE)
    return invalid(api, "XLA's metadata structs are older than the handler's header");
  XLA_FFI_Api_Version version;
  memset(&version, 0, sizeof version);
  version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
  version.major_version = XLA_FFI_API_MAJOR;
  version.minor_version = XLA_FFI_API_MINOR;
  extension->metadata->api_version = version;
  extension->metadata->traits = XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE;
  return NULL;
}

static int name_is(const XLA_FFI_ByteSpan *name, const char *wanted) {
  return name != NULL && name->len == strlen(wanted) && memcmp(name->ptr, wanted, name->len) == 0;
}

/* The attribute called `name`, of type `type`, or NULL. */
static void *attribute(const XLA_FFI_CallFrame *frame, const char *name, XLA_FFI_AttrType type) {
  for (int64_t i = 0; i < frame->attrs.size; ++i)
    if (name_is(frame->attrs.names[i], name))
      return frame->attrs.types[i] == type ? frame->attrs.attrs[i] : NULL;
  return NULL;
}

/* An integer attribute (int32 or int64) into *value; 0 where it is none. */
static int int_attribute(const XLA_FFI_CallFrame *frame, const char *name, long long *value) {
  const XLA_FFI_Scalar *scalar = attribute(frame, name, XLA_FFI_AttrType_SCALAR);
  if (scalar == NULL) return 0;
  if (scalar->dtype == XLA_FFI_DataType_S32)
    *value = *(const int32_t *)scalar->value;
  else if (scalar->dtype == XLA_FFI_DataType_S64)
    *value = *(const int64_t *)scalar->value;
  else
    return 0;
  return 1;
}

/* One operand: its buffer, and the element stride of each of c's batch
 * dimensions (0 where it has size 1 or lacks the dimension). */
typedef struct {
  const XLA_FFI_Buffer *buffer;
  long long rows, cols;          /* its last two dimensions, as stored */
  long long stride[MAX_RANK];    /* per batch dimension of c */
} operand;

static const char *describe(operand *x, const char *name, const XLA_FFI_Buffer *c, int batch_rank,
                            char *problem, size_t size) {
  const XLA_FFI_Buffer *buffer = x->buffer;
  if (buffer->dtype != XLA_FFI_DataType_F32) {
    snprintf(problem, size, "%s is not float32 (XLA type %d)", name, (int)buffer->dtype);
    return problem;
  }
  if (buffer->rank < 2 || buffer->rank > MAX_RANK || buffer->rank - 2 > batch_rank) {
    snprintf(problem, size, "%s has rank %lld: 2 to %d, and no more batch dimensions than c's",
             name, (long long)buffer->rank, 2 + batch_rank);
    return problem;
  }
  x->rows = buffer->dims[buffer->rank - 2];
  x->cols = buffer->dims[buffer->rank - 1];
  long long stride = x->rows * x->cols;
  const int own = (int)buffer->rank - 2;
  for (int j = batch_rank - 1; j >= 0; --j) {
    const int d = j - (batch_rank - own); /* x's dimension, or < 0: none */
    const long long extent = d >= 0 ? buffer->dims[d] : 1;
    if (extent != 1 && extent != c->dims[j]) {
      snprintf(problem, size, "%s's batch dimension %d is %lld, neither 1 nor c's %lld", name, d,
               extent, (long long)c->dims[j]);
      return problem;
    }
    x->stride[j] = extent == 1 ? 0 : stride;
    stride *= extent;
  }
  return NULL;
}

static XLA_FFI_Error *library_error(const XLA_FFI_Api *api, pg_status st) {
  char text[1024];
  const char *detail = pg_last_error_detail();
  snprintf(text, sizeof text, "pipegemm: %s%s%s (%s)", pg_strerror(st), *detail ? ": " : "",
           detail, pg_status_name(st));
  const XLA_FFI_Error_Code code = st == PG_ERR_INVALID_ARG || st == PG_ERR_UNKNOWN_VARIANT ||
                                          st == PG_ERR_STAGES || st == PG_ERR_UNSUPPORTED
                                      ? XLA_FFI_Error_Code_INVALID_ARGUMENT
                                  : st == PG_ERR_NO_MEMORY ? XLA_FFI_Error_Code_RESOURCE_EXHAUSTED
                                                           : XLA_FFI_Error_Code_INTERNAL;
  return make_error(api, code, text);
}

/* The device XLA runs this call on, where the API can say (it gained the
 * call in a later minor version): -1 where it cannot. */
static int device_ordinal(const XLA_FFI_CallFrame *frame) {
  const XLA_FFI_Api *api = frame->api;
  if (api->struct_size < XLA_FFI_STRUCT_SIZE(XLA_FFI_Api, XLA_FFI_DeviceOrdinal_Get) ||
      api->XLA_FFI_DeviceOrdinal_Get == NULL)
    return -1;
  XLA_FFI_DeviceOrdinal_Get_Args args;
  memset(&args, 0, sizeof args);
  args.struct_size = XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE;
  args.ctx = frame->ctx;
  XLA_FFI_Error *error = api->XLA_FFI_DeviceOrdinal_Get(&args);
  if (error != NULL) {
    XLA_FFI_Error_Destroy_Args destroy;
    memset(&destroy, 0, sizeof destroy);
    destroy.struct_size = XLA_FFI_Error_Destroy_Args_STRUCT_SIZE;
    destroy.error = error;
    api->XLA_FFI_Error_Destroy(&destroy);
    return -1;
  }
  return args.device_ordinal;
}

static XLA_FFI_Error *execute(XLA_FFI_CallFrame *frame) {
  const XLA_FFI_Api *api = frame->api;
  char problem[256];
  if (frame->args.size != 2 || frame->rets.size != 1 ||
      frame->args.types[0] != XLA_FFI_ArgType_BUFFER ||
      frame->args.types[1] != XLA_FFI_ArgType_BUFFER ||
      frame->rets.types[0] != XLA_FFI_RetType_BUFFER)
    return invalid(api, "pg_xla_matmul takes two buffers (a, b) and returns one (c)");
  const XLA_FFI_Buffer *c = frame->rets.rets[0];
  if (c->dtype != XLA_FFI_DataType_F32 || c->rank < 2 || c->rank > MAX_RANK)
    return invalid(api, "c must be float32 of rank 2 to 16");
  const int batch_rank = (int)c->rank - 2;
  operand a = {.buffer = frame->args.args[0]}, b = {.buffer = frame->args.args[1]};
  if (describe(&a, "a", c, batch_rank, problem, sizeof problem) != NULL ||
      describe(&b, "b", c, batch_rank, problem, sizeof problem) != NULL)
    return invalid(api, problem);

  long long op_a = 0, op_b = 0, stages = 0;
  const XLA_FFI_Scalar *alpha = attribute(frame, "alpha", XLA_FFI_AttrType_SCALAR);
  const XLA_FFI_ByteSpan *variant = attribute(frame, "variant", XLA_FFI_AttrType_STRING);
  if (!int_attribute(frame, "op_a", &op_a) || !int_attribute(frame, "op_b", &op_b) ||
      !int_attribute(frame, "stages", &stages) || alpha == NULL ||
      alpha->dtype != XLA_FFI_DataType_F32 || variant == NULL)
    return invalid(api, "pg_xla_matmul's attributes are op_a, op_b and stages (integers), "
                        "alpha (float32) and variant (a string)");
  if ((op_a != 0 && op_a != 1) || (op_b != 0 && op_b != 1) || stages < INT32_MIN ||
      stages > INT32_MAX)
    return invalid(api, "op_a and op_b are 0 (N) or 1 (T), and stages an int");
  char name[128];
  if (variant->len >= sizeof name) return invalid(api, "the variant's name is too long");
  memcpy(name, variant->ptr, variant->len);
  name[variant->len] = '\0';

  pg_gemm_desc g = PG_GEMM_DESC_INIT;
  g.op_a = op_a ? PG_OP_T : PG_OP_N;
  g.op_b = op_b ? PG_OP_T : PG_OP_N;
  const long long m = op_a ? a.cols : a.rows, k = op_a ? a.rows : a.cols;
  const long long kb = op_b ? b.cols : b.rows, n = op_b ? b.rows : b.cols;
  if (k != kb || m != c->dims[c->rank - 2] || n != c->dims[c->rank - 1]) {
    snprintf(problem, sizeof problem, "op(a) is %lld x %lld, op(b) %lld x %lld and c %lld x %lld",
             m, k, kb, n, (long long)c->dims[c->rank - 2], (long long)c->dims[c->rank - 1]);
    return invalid(api, problem);
  }
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX)
    return invalid(api, "M, N and K are C ints for the library");
  g.m = (int)m;
  g.n = (int)n;
  g.k = (int)k;
  g.alpha = *(const float *)alpha->value;
  g.beta = 0.0f;
  g.lda = a.cols > 1 ? a.cols : 1;
  g.ldb = b.cols > 1 ? b.cols : 1;
  g.ldc = n > 1 ? n : 1;

  /* c's strides, then the inner group of batch dimensions (size 1 ones
   * skipped) whose strides collapse for all three. */
  long long c_stride[MAX_RANK], total = 1;
  long long s = m * n;
  for (int j = batch_rank - 1; j >= 0; --j) {
    c_stride[j] = s;
    s *= c->dims[j];
  }
  for (int j = 0; j < batch_rank; ++j) total *= c->dims[j];
  if (total == 0 || m == 0 || n == 0) return NULL;
  int inner = batch_rank; /* dimensions inner..batch_rank-1 form the batch */
  long long batch = 1, stride_a = 0, stride_b = 0, stride_c = 0;
  int last = -1; /* the outermost dimension of the group so far */
  for (int j = batch_rank - 1; j >= 0; --j) {
    if (c->dims[j] == 1) {
      inner = j;
      continue;
    }
    if (last >= 0) {
      const long long e = c->dims[last];
      if (a.stride[j] != a.stride[last] * e || b.stride[j] != b.stride[last] * e ||
          c_stride[j] != c_stride[last] * e)
        break;
    } else {
      stride_a = a.stride[j];
      stride_b = b.stride[j];
      stride_c = c_stride[j];
    }
    if (batch * c->dims[j] > INT32_MAX) break;
    batch *= c->dims[j];
    last = j;
    inner = j;
  }
  g.batch = (int)batch;
  g.stride_a = stride_a;
  g.stride_b = stride_b;
  g.stride_c = stride_c;

  XLA_FFI_Stream_Get_Args stream_args;
  memset(&stream_args, 0, sizeof stream_args);
  stream_args.struct_size = XLA_FFI_Stream_Get_Args_STRUCT_SIZE;
  stream_args.ctx = frame->ctx;
  XLA_FFI_Error *error = api->XLA_FFI_Stream_Get(&stream_args);
  if (error != NULL) return error;
  cudaStream_t stream = (cudaStream_t)stream_args.stream;

  /* The call runs on XLA's device: made current for it, and put back. */
  int previous = -1;
  const int ordinal = device_ordinal(frame);
  if (ordinal >= 0 && cudaGetDevice(&previous) == cudaSuccess && previous != ordinal) {
    if (cudaSetDevice(ordinal) != cudaSuccess) {
      cudaGetLastError();
      return make_error(api, XLA_FFI_Error_Code_INTERNAL,
                        "pipegemm: cannot make XLA's device current");
    }
  } else {
    previous = -1;
  }

  const float *a0 = a.buffer->data, *b0 = b.buffer->data;
  float *c0 = c->data;
  long long outer = total / batch;
  pg_status st = PG_OK;
  for (long long index = 0; index < outer && st == PG_OK; ++index) {
    long long rest = index, off_a = 0, off_b = 0, off_c = 0;
    for (int j = inner - 1; j >= 0; --j) {
      const long long i = rest % c->dims[j];
      rest /= c->dims[j];
      off_a += i * a.stride[j];
      off_b += i * b.stride[j];
      off_c += i * c_stride[j];
    }
    g.a = a0 + off_a;
    g.b = b0 + off_b;
    g.c = c0 + off_c;
    st = pg_gemm(name, (int)stages, &g, stream);
  }
  if (previous >= 0) cudaSetDevice(previous);
  return st == PG_OK ? NULL : library_error(api, st);
}

void *pg_xla_matmul(void *call_frame) {
  XLA_FFI_CallFrame *frame = call_frame;
  if (frame == NULL || frame->api == NULL) return NULL;
  if (frame->struct_size < XLA_FFI_CallFrame_STRUCT_SIZE)
    return invalid(frame->api, "XLA's call frame is older than the handler's header");
  /* Every extension of the frame starts with this head (the FFI's ABI; the
   * name of its type differs between XLA versions, so it is not named). */
  typedef struct {
    size_t struct_size;
    int type; /* XLA_FFI_Extension_Type */
    const void *next;
  } extension_head;
  const extension_head *extension = (const void *)frame->extension_start;
  if (extension != NULL && extension->type == XLA_FFI_Extension_Metadata)
    return metadata(frame->api, (XLA_FFI_Metadata_Extension *)frame->extension_start);
  if (frame->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
  return execute(frame);
}
