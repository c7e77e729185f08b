/* The array node.  A handle is a counted pointer to a node: the node holds
 * dtype, shape, strides, byte offset and contiguity flags over a shared
 * buffer, and, until it is evaluated, the primitive, parameters and inputs
 * that compute it.  Evaluation fills the buffer and drops the graph. */
#ifndef CMLX_CORE_ARRAY_H
#define CMLX_CORE_ARRAY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/allocator.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/prim.h"
#include "core/stream.h"

#define CM_INLINE_DIMS 8
#define CM_INLINE_INPUTS 3
#define CM_MAX_DIMS 64

/* Parameter blocks up to this size live inside the node (no malloc per
 * op); larger ones are allocated with it. */
#define CM_PARAMS_INLINE 64

typedef struct cm_params cm_params; /* opaque: see core/prim.h */

/* The outputs of one multi-output node, in order.  Every output is a node
 * of its own (own dtype, shape, buffer, handle count); they share the
 * first output's primitive, parameters and inputs, and are evaluated
 * together.  The structs of a group are freed together, when no output has
 * a handle left; an output dropped earlier releases its buffer as soon as
 * it is evaluated (see cm_release). */
typedef struct cm_siblings {
  int n;
  int alive; /* outputs with handles; guarded by the sibling lock */
  cm_array *out[];
} cm_siblings;

enum {
  CM_FLAG_CONTIGUOUS = 1,     /* elements fill data_size exactly, no gaps or repeats */
  CM_FLAG_ROW_CONTIGUOUS = 2, /* C order */
  CM_FLAG_COL_CONTIGUOUS = 4, /* Fortran order */
};

typedef enum cm_node_state {
  CM_STATE_PENDING = 0,   /* has a graph, not yet handed to a stream */
  CM_STATE_VISITING = 1,  /* being sorted by an eval */
  CM_STATE_SCHEDULED = 2, /* on a stream's queue */
  CM_STATE_DONE = 3,      /* buffer filled (or failed: see error) */
} cm_node_state;

struct cm_array {
  atomic_long refs;
  atomic_int state;
  cm_dtype dtype;
  int ndim;
  int64_t size;
  int32_t *shape;   /* -> shape_inline unless ndim > CM_INLINE_DIMS */
  int64_t *strides; /* in elements; valid once evaluated */
  int32_t shape_inline[CM_INLINE_DIMS];
  int64_t strides_inline[CM_INLINE_DIMS];
  int64_t offset;    /* bytes from buf->ptr to element 0 */
  int64_t data_size; /* elements from the lowest to the highest address touched */
  int flags;
  cm_buffer *buf;
  cm_error_record *error; /* set when evaluation failed */
  /* The graph: present while state < DONE.  Siblings share the first
   * output's params and in (only it owns them). */
  const cm_prim *prim;
  cm_params *params; /* -> params_inline, or a heap block; NULL: none */
  uint32_t params_size;
  int nin;
  cm_stream stream;
  cm_array **in; /* -> in_inline unless nin > CM_INLINE_INPUTS */
  cm_array *in_inline[CM_INLINE_INPUTS];
  cm_siblings *sib; /* NULL: a single-output node */
  int position;     /* this output's index in sib */
  bool zombie;      /* no handle left, group still alive (sibling lock) */
  /* Built from an input a transform traces (MLX's tracer flag): set on the
   * traced inputs, inherited by every node built from one. */
  bool tracer;
  /* A bool array whose bytes may be other than 0 and 1: another dtype's
   * bytes viewed as bool (MLX keeps them; a nonzero byte reads as True).
   * Only primitives that move bytes take it as it is; every other op
   * constructor first turns it into a clean bool (cm_op_node). */
  bool raw_bytes;
  /* A thread sleeps until this node is done: only then does finishing it
   * wake the sleepers (eval.c).  Waking them for every node woke a thread
   * waiting on a decode step's token some 400 times per step, stealing a
   * core from the step on a two-core machine. */
  atomic_bool waited;
  _Alignas(16) unsigned char params_inline[CM_PARAMS_INLINE];
};

/* ---- handles ---- */
/* An output of a multi-output node whose handles were all dropped can be
 * reached again through a sibling (the vjp of the node hands every output
 * to its rule); it is then alive again. */
void cm_sibling_revive(cm_array *a);
static inline cm_array *cm_retain(cm_array *a) {
  if (a && atomic_fetch_add_explicit(&a->refs, 1, memory_order_relaxed) == 0 && a->sib)
    cm_sibling_revive(a);
  return a;
}
/* Drop a reference; frees the node and, iteratively, any inputs it was the
 * last holder of (a million-node chain frees without recursion). */
void cm_release(cm_array *a);

/* ---- construction ---- */
/* A graph node computing prim(inputs) with the given output dtype and shape.
 * Inputs are retained; params (params_size bytes, may be NULL) are copied
 * after checking the size against the descriptor (core/prim.h).  On
 * success the node owns what the block points to (the descriptor's
 * params_destroy releases it); on failure the caller still does.  The
 * stream must already be resolved. */
cm_array *cm_node_new(cm_dtype dtype, int ndim, const int32_t *shape, const cm_prim *prim,
                      const void *params, size_t params_size, cm_array *const *inputs, int nin,
                      cm_stream stream);
/* A node with nout outputs (siblings) sharing one evaluation: output k
 * has dtypes[k] and shape (ndims[k], shapes[k]).  outs[k] receive new
 * references.  Same ownership of params as cm_node_new. */
int cm_node_new_multi(int nout, const cm_dtype *dtypes, const int *ndims,
                      const int32_t *const *shapes, const cm_prim *prim, const void *params,
                      size_t params_size, cm_array *const *inputs, int nin, cm_stream stream,
                      cm_array **outs);
/* An evaluated array holding a copy of row-major data (NULL data: zeros). */
cm_array *cm_array_from_data(const void *data, int ndim, const int32_t *shape, cm_dtype dtype);
/* An evaluated array that adopts a buffer (a retained reference). */
cm_array *cm_array_from_buffer(cm_buffer *buf, int64_t offset, int ndim, const int32_t *shape,
                               const int64_t *strides, cm_dtype dtype);
/* An evaluated 0-d array from one element of type st converted to dtype. */
cm_array *cm_array_scalar(const void *value, cm_dtype st, cm_dtype dtype);
cm_array *cm_array_scalar_double(double v, cm_dtype dtype);
cm_array *cm_array_scalar_int(int64_t v, cm_dtype dtype);

/* ---- siblings ---- */
static inline int cm_num_outputs(const cm_array *a) { return a->sib ? a->sib->n : 1; }
/* Output k of a's node (borrowed; a itself when single-output). */
static inline cm_array *cm_output(const cm_array *a, int k) {
  return a->sib ? a->sib->out[k] : (cm_array *)a;
}

/* ---- parameter blocks ---- */
/* Same primitive and equal parameters (the descriptor's params_equal, or
 * the bytes): what graph simplification and compile merge on. */
bool cm_node_params_equal(const cm_array *a, const cm_array *b);
uint64_t cm_node_params_hash(const cm_array *a);
/* Append a's parameter block to out for export; -1 with an error when the
 * primitive's block cannot be saved. */
int cm_node_params_save(const cm_array *a, cm_bytes *out);
/* A block for prim from saved bytes, checked as a node's would be:
 * malloc'd into *p (free with cm_params_free), *size its size. */
int cm_params_load(const cm_prim *prim, const unsigned char *data, size_t len, cm_params **p,
                   size_t *size);
void cm_params_free(const cm_prim *prim, cm_params *p);

/* ---- queries ---- */
static inline bool cm_is_evaluated(const cm_array *a) {
  return atomic_load_explicit(&a->state, memory_order_acquire) == CM_STATE_DONE;
}
static inline size_t cm_itemsize(const cm_array *a) { return cm_dtype_size(a->dtype); }
static inline size_t cm_nbytes(const cm_array *a) { return (size_t)a->size * cm_itemsize(a); }
/* Address of element 0 (valid once evaluated). */
static inline void *cm_data(const cm_array *a) {
  return a->buf ? (char *)a->buf->ptr + a->offset : NULL;
}
static inline bool cm_row_contiguous(const cm_array *a) {
  return a->flags & CM_FLAG_ROW_CONTIGUOUS;
}
static inline bool cm_col_contiguous(const cm_array *a) {
  return a->flags & CM_FLAG_COL_CONTIGUOUS;
}
static inline bool cm_is_contiguous(const cm_array *a) { return a->flags & CM_FLAG_CONTIGUOUS; }
int64_t cm_shape_size(int ndim, const int32_t *shape);
static inline bool cm_shape_equal(int na, const int32_t *a, int nb, const int32_t *b) {
  if (na != nb) return false;
  for (int i = 0; i < na; i++)
    if (a[i] != b[i]) return false;
  return true;
}
/* a has exactly b's shape */
static inline bool cm_same_shape(const cm_array *a, const cm_array *b) {
  return cm_shape_equal(a->ndim, a->shape, b->ndim, b->shape);
}
/* Validate a shape (no negative dims, size fits); -1 + ValueError if not. */
int cm_check_shape(const char *op, int ndim, const int32_t *shape);
/* A computed dimension as int32: *out, or MLX's OverflowError "[op] Shape
 * dimension v is outside the supported range [-2147483648, 2147483647].
 * MLX currently uses 32-bit integers for shape dimensions." (op may be
 * NULL: no prefix). */
int cm_shape_dim(const char *op, int64_t v, int32_t *out);
/* Format "(2,3)" the way MLX's messages print shapes. */
const char *cm_shape_str(char *buf, size_t cap, int ndim, const int32_t *shape);

/* ---- for kernels: setting an output's data ---- */
/* Allocate a fresh row-contiguous buffer for out, from the allocator of
 * the device of out's stream (core/allocator.h). */
int cm_alloc_output(cm_array *out);
/* Give out the layout (strides, offset, data_size) of src over src's buffer:
 * views (transpose, slice, broadcast) and donation use this. */
void cm_share_layout(cm_array *out, const cm_array *src, const int64_t *strides, int64_t offset,
                     int64_t data_size);
/* Allocate out with the same strides as the dense (contiguous) array like;
 * elementwise kernels use it so a transposed input yields a transposed
 * output and the loop stays flat. */
int cm_alloc_output_like(cm_array *out, const cm_array *like);
/* Reuse in's buffer for out if nothing else holds it, it is memory of
 * out's device, and the layouts fit (same size and itemsize, contiguous);
 * returns true if it did. */
bool cm_try_donate(cm_array *out, cm_array *in);
/* Recompute contiguity flags from shape/strides (and data_size). */
void cm_update_flags(cm_array *a);
void cm_row_major_strides(int ndim, const int32_t *shape, int64_t *strides);

/* Drop the graph of an evaluated node (called by the scheduler). */
void cm_detach(cm_array *a);

/* While a transform traces a function, evaluation must keep the graph (a
 * gradient may flow through an array the function evaluated) and kernels
 * must not donate buffers that a backward node may still read. */
void cm_graph_retention_push(void);
void cm_graph_retention_pop(void);
bool cm_graph_retained(void);

#endif
