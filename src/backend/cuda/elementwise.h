/* The CUDA backend's elementwise kernels: Unary, Binary, Select and the
 * copies (AsType, Copy, Full, and the copies views fall back to).  Each
 * launch generates CUDA C for its op, dtypes and layout (which inputs are
 * contiguous, scalar or strided; how many axes remain after merging the
 * ones that can be merged; 32- or 64-bit indices) and compiles it once
 * through jit.h. */
#ifndef CMLX_BACKEND_CUDA_ELEMENTWISE_H
#define CMLX_BACKEND_CUDA_ELEMENTWISE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/dtype.h"
#include "primitives/primitive.h"

int cm_cuda_unary(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cuda_binary(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cuda_select(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
/* out = in[0] converted to out's dtype and broadcast to out's shape. */
int cm_cuda_copy(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

/* Write src (converted to dst's dtype, broadcast to shape) into dst's
 * memory at byte offset dst_offset from its buffer start, with element
 * strides dst_strides over shape: the strided copy that views, slice
 * updates, padding and concatenation use.  dst's buffer must be
 * allocated. */
int cm_cuda_copy_strided(cm_array *dst, int64_t dst_offset, const int64_t *dst_strides, int ndim,
                         const int32_t *shape, const cm_array *src);

/* ---- the generator, for the tests ---- */
/* How a kernel reads an input: element i of a row-contiguous array of the
 * output's shape, the one element of a scalar, or through strides. */
typedef enum cm_ew_mode { CM_EW_CONTIGUOUS = 'c', CM_EW_SCALAR = 's', CM_EW_STRIDED = 'g' } cm_ew_mode;

typedef struct cm_ew_spec {
  /* u_<fn>(x...) or b_<fn>(x, y) from kernels/ops.cuh; NULL: the first
   * input converted (a copy); "?:" : x0 ? x1 : x2 (Select). */
  const char *fn;
  int nin;
  cm_dtype in[3], out;
  char mode[3]; /* cm_ew_mode per input */
  int nd;       /* axes of the strided layout (0 when no input is strided) */
  bool out_strided; /* the output is written through strides too */
  bool wide;    /* 64-bit indexing */
  int nparams;  /* float constants after the inputs (rdec: 2, n2n: 3) */
} cm_ew_spec;

/* CUDA C for spec, a kernel named cm_ew; NULL with a MemoryError
 * (malloc'd: free it). */
char *cm_cuda_ew_source(const cm_ew_spec *spec);
/* The u_/b_ function and dtype set of op code op (cm_unary_op or
 * cm_binary_op); false when the CUDA table has no kernel for in. */
bool cm_cuda_unary_fn(int op, cm_dtype in, const char **fn);
bool cm_cuda_binary_fn(int op, cm_dtype in, const char **fn);
/* The storage type name of t in the kernels ("cm_f16", "float", ...). */
const char *cm_cuda_type_name(cm_dtype t);

#endif
