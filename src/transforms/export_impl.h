/* Internal to the .mlxfn writer and reader, and to the descriptors'
 * export hooks (primitives/export_desc.h): the byte codec (MLX's
 * little-endian serialise/deserialise) and what a node's state is. */
#ifndef CMLX_TRANSFORMS_EXPORT_IMPL_H
#define CMLX_TRANSFORMS_EXPORT_IMPL_H

#include "core/array.h"
#include "transforms/export.h"

/* A writer: bytes, and (for callbacks) the state items written. */
typedef struct xw {
  cm_bytes b;
  cm_state_item *items;
  int nitems, cap;
  bool record, fail;
} xw;

void xw_raw(xw *w, const void *p, size_t n);
void xw_u8(xw *w, uint8_t v);
void xw_u64(xw *w, uint64_t v);
void xw_i32(xw *w, int32_t v); /* an int or an enum: one INT item */
void xw_bool(xw *w, bool v);
void xw_f32(xw *w, float v);
void xw_f64(xw *w, double v);
void xw_dtype(xw *w, cm_dtype t);
void xw_ints(xw *w, int n, const int32_t *v); /* std::vector<int> or Shape */
void xw_i64s(xw *w, int n, const int64_t *v); /* std::vector<int64_t> */
void xw_str(xw *w, const char *s, size_t n);
void xw_state_str(xw *w, const char *s); /* a std::string state: one STR item */
void xw_free(xw *w);

/* A reader over bytes; any read past the end or bad value sets fail. */
typedef struct xr {
  const unsigned char *p;
  size_t len, pos;
  bool fail;
  const char *why; /* first failure */
} xr;

void xr_bad(xr *r, const char *why);
uint8_t xr_u8(xr *r);
uint64_t xr_u64(xr *r);
int32_t xr_i32(xr *r);
bool xr_bool(xr *r);
float xr_f32(xr *r);
double xr_f64(xr *r);
cm_dtype xr_dtype(xr *r);
/* A vector of at most max entries (more is a failure); returns its length. */
int xr_ints(xr *r, int32_t *v, int max);
/* n bytes (NULL past the end); a vector's count, at most max entries of
 * each bytes that the rest of the data can hold; a shape; a string (not
 * terminated, pointing into the data). */
const unsigned char *xr_take(xr *r, size_t n);
uint64_t xr_count(xr *r, uint64_t max, size_t each);
int xr_shape(xr *r, int32_t *shape);
const char *xr_str(xr *r, size_t *n);
int xr_i64s(xr *r, int64_t *v, int max);

/* A trace's signature and MLX's FunctionTable::match: the keys are
 * present, the dtypes and ndims equal, and the shapes unless shapeless. */
typedef struct xsig {
  int nin, nkw;
  char *const *kw;
  const cm_dtype *dt;
  const int *nd;
  const int32_t *sh; /* CM_MAX_DIMS per input */
} xsig;
bool xsig_match(const xsig *s, bool shapeless, cm_array *const *in, int nin,
                const char *const *keys, int nkw);

/* Save: write node's state and return MLX's factory name, or NULL with
 * the error set.  *reshape_to is set when MLX's primitive has another
 * output shape than cmlx's node (a reduction that drops axes): the writer
 * then records that shape (mlx_ndim, mlx_shape) and adds a Squeeze of the
 * axes in squeeze. */
typedef struct xsave {
  const char *name;
  int mlx_ndim;
  int32_t mlx_shape[CM_MAX_DIMS];
  bool reshape;
  uint64_t squeeze; /* with reshape: the axes MLX's node keeps and a Squeeze drops */
  /* MLX's node has this dtype (Abs of complex64 stays complex64): the
   * writer records it and adds Real to reach cmlx's dtype */
  bool real;
  /* MLX's primitive has a leading batch axis that cmlx's node has not
   * (MaskedScatter): the writer adds ExpandDims to each input and a Squeeze,
   * and records the node's shape with the axis (mlx_ndim, mlx_shape) */
  bool batch;
  /* RandomBits' unit form: MLX's uniform composition follows the bits,
   * min(float32(bits) / 2^32, upper) (bit for bit what cmlx's kernel
   * computes) */
  bool unit;
  float upper;
  /* MLX composes the op as a binary one: with a constant (value, of the
   * input's dtype, broadcast; first when scalar_first), or on the input
   * twice (self) */
  bool scalar, scalar_first, self;
  double value;
} xsave;
/* Through the node's descriptor (primitives/export_desc.h): an error
 * naming the primitive when it has no export desc. */
int cm_export_save_node(const cm_array *node, xw *w, xsave *out);

/* Load: the primitive called name, its state read from r, rebuilt on ins
 * through the op constructors.  outs gets nout new references; the
 * recorded output dtypes and shapes are what the file says (Full and
 * RandomBits take their shape from them). */
typedef struct xout {
  int n;
  const cm_dtype *dtypes;
  const int *ndims;
  const int32_t *const *shapes;
} xout;
typedef int (*xload_fn)(xr *r, int code, cm_array *const *ins, int nin, const xout *o,
                        cm_array **outs, cm_stream s);
typedef struct xloader {
  xload_fn load;
  int code; /* handed to load: an op code, or which of its names */
} xloader;
/* The loader of the primitive MLX calls name (len bytes, not terminated),
 * from the descriptors' declarations (primitives/all.c); a NULL load for
 * a name none of them reads. */
xloader cm_export_find_loader(const char *name, size_t len);

/* export_lower.c: replace the trace's nodes that MLX builds as a graph of
 * its primitives (the convolution's weight gradient) by that graph. */
struct cm_compile_trace_result;
int cm_export_lower(struct cm_compile_trace_result *t);

#endif
