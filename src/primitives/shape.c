/* Shape primitives: descriptors and their transform rules.  The rules
 * build graphs from ops and, where an op's parameters are already packed
 * on the node (Slice, SliceUpdate, the dynamic slices, Diagonal), build
 * the mirror node directly with the same parameter block.
 *
 * vjp: a slice's cotangent is written into zeros (SliceUpdate); an
 * update's cotangent is the window of the output's (Slice); reshapes and
 * transposes undo themselves; Concatenate splits the cotangent.  jvp
 * applies the same primitive to the tangents.  View and the windows have
 * no vjp.
 *
 * vmap moves the batch axis to the front (a view) and applies the op with
 * its axes shifted by one; inputs without a batch are broadcast along it.
 * Not supported: AsStrided, and DynamicSliceUpdate with batched starts.
 * (AsStrided's vjp and DynamicSlice's vmap live in shape_rules.c.) */
#include "primitives/shape.h"
#include "primitives/export_desc.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/binary.h"
#include "ops/creation.h"
#include "ops/reduce.h"
#include "ops/shape.h"
#include "primitives/rules.h"
#include "primitives/rules_util.h"

/* The packed parameter blocks must fit the node's inline storage. */

/* ---- helpers ---- */

static cm_array *zeros_of(const cm_array *shape_of, cm_dtype dtype, cm_stream s) {
  return cm_zeros(shape_of->ndim, shape_of->shape, dtype, s);
}

/* A tangent for in[i]: the given one, or zeros in dtype. */
static cm_array *tangent_or_zeros(cm_array *const *tangents, cm_array *const *in, int i,
                                  cm_dtype dtype, cm_stream s) {
  return tangents[i] ? cm_astype(tangents[i], dtype, s) : zeros_of(in[i], dtype, s);
}

/* The dtype of the first non-NULL tangent. */
static cm_dtype tangent_dtype(cm_array *const *tangents, int n) {
  for (int i = 0; i < n; i++)
    if (tangents[i]) return tangents[i]->dtype;
  return CM_FLOAT32;
}

/* The batch size: the batched axis of the first batched input. */
static int batch_size(cm_array *const *in, const int *axes, int n) {
  for (int i = 0; i < n; i++)
    if (axes[i] >= 0) return in[i]->shape[axes[i]];
  return 1;
}

/* x with its batch axis (ax; -1: none) moved to the front; an unbatched x
 * is broadcast along a new front axis of size b. */
static cm_array *batch_front(cm_array *x, int ax, int b, cm_stream s) {
  if (ax >= 0) return cm_moveaxis(x, ax, 0, s);
  if (x->ndim + 1 > CM_MAX_DIMS) return cm_error(CM_ERR_VALUE, "[vmap] Too many dimensions."), NULL;
  int zero = 0;
  int32_t shape[CM_MAX_DIMS];
  shape[0] = b;
  if (x->ndim) memcpy(shape + 1, x->shape, sizeof(int32_t) * (size_t)x->ndim);
  cm_array *e = cm_expand_dims(x, 1, &zero, s);
  cm_array *r = e ? cm_broadcast_to(e, x->ndim + 1, shape, s) : NULL;
  cm_release(e);
  return r;
}

/* Finish a vmap rule whose result has its batch at the front. */
static int front(cm_array *r, cm_array **out, int *out_axis) {
  *out = r;
  *out_axis = 0;
  return r ? 0 : -1;
}

/* ---- Reshape, Flatten, Unflatten, Squeeze, ExpandDims ---- */

static int reshape_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                       cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                       cm_stream s) {
  (void)out, (void)nin, (void)p, (void)argnums, (void)nargs;
  return (grads[0] = cm_reshape(cotan, in[0]->ndim, in[0]->shape, s)) ? 0 : -1;
}

static int reshape_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                       cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)in, (void)nin, (void)p;
  return (*tangent = cm_reshape(tangents[0], out->ndim, out->shape, s)) ? 0 : -1;
}

/* Every reshape-like node: batch to the front, then reshape to the
 * node's own (per-example) shape behind it. */
static int reshape_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                        const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)p, (void)nin;
  if (node->ndim + 1 > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[vmap] Arrays may have at most %d dimensions.", CM_MAX_DIMS);
  cm_array *x = cm_moveaxis(in[0], axes[0], 0, s);
  if (!x) return -1;
  int32_t shape[CM_MAX_DIMS];
  shape[0] = x->shape[0];
  if (node->ndim) memcpy(shape + 1, node->shape, sizeof(int32_t) * (size_t)node->ndim);
  cm_array *r = cm_reshape(x, node->ndim + 1, shape, s);
  cm_release(x);
  return front(r, out, out_axis);
}

/* Shapeless compile: each re-derives its output from the new input. */
size_t cm_reshape_params_size(const cm_params *p) {
  int32_t n = cm_reshape_params_of_block(p, cm_prim_reshape.params_size)->ndim;
  if (n < 0 || n > CM_MAX_DIMS) return SIZE_MAX;
  return offsetof(cm_reshape_params, shape) + sizeof(int32_t) * (size_t)n;
}

static int reshape_shape(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                         int *ndim, int32_t *shape) {
  (void)nin, (void)p;
  const cm_reshape_params *rp = cm_reshape_params_of(node);
  *ndim = rp->ndim;
  return cm_reshape_infer(in[0]->size, rp->ndim, rp->shape, shape);
}

static int flatten_shape(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                         int *ndim, int32_t *shape) {
  (void)nin, (void)p;
  const cm_flatten_params *fp = cm_flatten_params_of(node);
  const cm_array *x = in[0];
  if (fp->end_axis >= x->ndim) return cm_error(CM_ERR_VALUE, "[Flatten] Invalid axes.");
  int n = 0;
  for (int i = 0; i < fp->start_axis; i++) shape[n++] = x->shape[i];
  int64_t merged = 1;
  for (int i = fp->start_axis; i <= fp->end_axis; i++) merged *= x->shape[i];
  if (cm_shape_dim("flatten", merged, &shape[n++])) return -1;
  for (int i = fp->end_axis + 1; i < x->ndim; i++) shape[n++] = x->shape[i];
  *ndim = n;
  return 0;
}

/* The axis becomes the traced sizes it was split into (MLX keeps them). */
static int unflatten_shape(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                           int *ndim, int32_t *shape) {
  (void)nin, (void)p;
  int ax = cm_unflatten_params_of(node)->axis, k = node->ndim - node->in[0]->ndim + 1;
  const cm_array *x = in[0];
  int64_t size = 1;
  for (int i = 0; i < k; i++) size *= node->shape[ax + i];
  if (ax >= x->ndim || size != x->shape[ax] || x->ndim - 1 + k > CM_MAX_DIMS) {
    char buf[256];
    return cm_error(CM_ERR_VALUE, "[Unflatten] Cannot unflatten array of shape %s.",
                    cm_shape_str(buf, sizeof buf, x->ndim, x->shape));
  }
  int n = 0;
  for (int i = 0; i < ax; i++) shape[n++] = x->shape[i];
  for (int i = 0; i < k; i++) shape[n++] = node->shape[ax + i];
  for (int i = ax + 1; i < x->ndim; i++) shape[n++] = x->shape[i];
  *ndim = n;
  return 0;
}

static int squeeze_shape(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                         int *ndim, int32_t *shape) {
  (void)nin, (void)p;
  uint64_t mask = cm_axes_mask_params_of(node)->mask;
  const cm_array *x = in[0];
  int n = 0;
  for (int i = 0; i < x->ndim; i++) {
    if (!(mask >> i & 1)) shape[n++] = x->shape[i];
    else if (x->shape[i] != 1)
      return cm_error(CM_ERR_VALUE,
                      "[squeeze] Cannot squeeze axis %d with size %d which is not equal to 1.", i,
                      x->shape[i]);
  }
  *ndim = n;
  return 0;
}

static int expand_dims_shape(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                             int *ndim, int32_t *shape) {
  (void)nin, (void)p;
  uint64_t mask = cm_axes_mask_params_of(node)->mask;
  const cm_array *x = in[0];
  int n = x->ndim + (node->ndim - node->in[0]->ndim);
  if (n > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[expand_dims] Arrays may have at most %d dimensions.",
                    CM_MAX_DIMS);
  for (int i = 0, j = 0; i < n; i++) shape[i] = (mask >> i & 1) ? 1 : x->shape[j++];
  *ndim = n;
  return 0;
}

#define RESHAPE_LIKE(NAME, EXPORT, T, SHAPE)                                                     \
  {                                                                                              \
    .name = NAME, .export = EXPORT, CM_PARAMS_OF(T), .moves_bytes = true, .output_shape = SHAPE, \
    .vjp = reshape_vjp, .jvp = reshape_jvp, .vmap = reshape_vmap                                 \
  }
const cm_prim cm_prim_reshape = {.name = "Reshape",
                                 .export = &cm_export_reshape,
                                 CM_PARAMS_OF_VAR(cm_reshape_params, shape),
                                 .params_extent = cm_reshape_params_size,
                                 .moves_bytes = true,
                                 .output_shape = reshape_shape,
                                 .vjp = reshape_vjp,
                                 .jvp = reshape_jvp,
                                 .vmap = reshape_vmap};
const cm_prim cm_prim_flatten =
    RESHAPE_LIKE("Flatten", &cm_export_flatten, cm_flatten_params, flatten_shape);
const cm_prim cm_prim_unflatten =
    RESHAPE_LIKE("Unflatten", &cm_export_unflatten, cm_unflatten_params, unflatten_shape);
const cm_prim cm_prim_squeeze =
    RESHAPE_LIKE("Squeeze", &cm_export_squeeze, cm_axes_mask_params, squeeze_shape);
const cm_prim cm_prim_expand_dims =
    RESHAPE_LIKE("ExpandDims", &cm_export_expand_dims, cm_axes_mask_params, expand_dims_shape);

/* ---- Transpose ---- */

static int transpose_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                         cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                         cm_stream s) {
  (void)in, (void)nin, (void)argnums, (void)nargs, (void)p;
  const cm_transpose_params *tp = cm_transpose_params_of(out);
  int inv[CM_MAX_DIMS];
  for (int i = 0; i < out->ndim; i++) inv[tp->perm[i]] = i;
  return (grads[0] = cm_transpose(cotan, out->ndim, inv, s)) ? 0 : -1;
}

static int transpose_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                         cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)in, (void)nin, (void)p;
  const cm_transpose_params *tp = cm_transpose_params_of(out);
  int perm[CM_MAX_DIMS];
  for (int i = 0; i < out->ndim; i++) perm[i] = tp->perm[i];
  return (*tangent = cm_transpose(tangents[0], out->ndim, perm, s)) ? 0 : -1;
}

static int transpose_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                          const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin, (void)p;
  const cm_transpose_params *tp = cm_transpose_params_of(node);
  cm_array *x = cm_moveaxis(in[0], axes[0], 0, s);
  if (!x) return -1;
  int perm[CM_MAX_DIMS];
  perm[0] = 0;
  for (int i = 1; i < x->ndim; i++) perm[i] = tp->perm[i - 1] + 1;
  cm_array *r = cm_transpose(x, x->ndim, perm, s);
  cm_release(x);
  return front(r, out, out_axis);
}

static int transpose_shape(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                           int *ndim, int32_t *shape) {
  (void)nin, (void)p;
  const cm_transpose_params *tp = cm_transpose_params_of(node);
  if (in[0]->ndim != node->ndim)
    return cm_error(CM_ERR_VALUE, "[transpose] Received %d axes for array with %d dimensions.",
                    node->ndim, in[0]->ndim);
  for (int i = 0; i < node->ndim; i++) shape[i] = in[0]->shape[tp->perm[i]];
  *ndim = node->ndim;
  return 0;
}

const cm_prim cm_prim_transpose = {.name = "Transpose",
                                   .export = &cm_export_transpose,
                                   .output_shape = transpose_shape,
                                   .moves_bytes = true,
                                   CM_PARAMS_OF(cm_transpose_params),
                                   .vjp = transpose_vjp,
                                   .jvp = transpose_jvp,
                                   .vmap = transpose_vmap};

/* ---- Slice and SliceUpdate ---- */

/* SIZE_MAX for a header no node could have: construction then refuses it. */
size_t cm_slice_params_size(const cm_params *p) {
  int32_t n = cm_slice_params_of_block(p, cm_prim_slice.params_size)->n;
  if (n < 0 || n > CM_MAX_DIMS) return SIZE_MAX;
  return offsetof(cm_slice_params, ax) + sizeof(cm_slice_axis) * (size_t)n;
}

/* base with its p-window replaced by upd (a SliceUpdate node). */
static cm_array *write_window(cm_array *base, cm_array *upd, const cm_params *p, cm_stream s) {
  cm_array *ins[2] = {base, upd};
  return cm_op_node(base->dtype, base->ndim, base->shape, &cm_prim_slice_update, p,
                    cm_slice_params_size(p), ins, 2, s);
}

/* The p-window of x with the given shape (a Slice node). */
static cm_array *read_window(cm_array *x, const cm_array *shape_of, const cm_params *p,
                             cm_stream s) {
  return cm_op_node(x->dtype, shape_of->ndim, shape_of->shape, &cm_prim_slice, p,
                    cm_slice_params_size(p), &x, 1, s);
}

static int slice_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                     cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                     cm_stream s) {
  (void)out, (void)nin, (void)argnums, (void)nargs;
  cm_array *z = zeros_of(in[0], cotan->dtype, s);
  grads[0] = z ? write_window(z, cotan, p, s) : NULL;
  cm_release(z);
  return grads[0] ? 0 : -1;
}

static int slice_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                     cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)in, (void)nin;
  return (*tangent = read_window(tangents[0], out, p, s)) ? 0 : -1;
}

static int slice_update_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                            cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                            cm_stream s) {
  (void)out, (void)nin;
  for (int k = 0; k < nargs; k++) {
    if (argnums[k] == 0) { /* src: everything outside the window */
      cm_array *z = zeros_of(in[1], cotan->dtype, s);
      grads[k] = z ? write_window(cotan, z, p, s) : NULL;
      cm_release(z);
    } else { /* update: the window */
      grads[k] = read_window(cotan, in[1], p, s);
    }
    if (!grads[k]) return -1;
  }
  return 0;
}

static int slice_update_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                            cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)out, (void)nin;
  cm_dtype t = tangent_dtype(tangents, 2);
  cm_array *a = tangent_or_zeros(tangents, in, 0, t, s);
  cm_array *b = a ? tangent_or_zeros(tangents, in, 1, t, s) : NULL;
  *tangent = b ? write_window(a, b, p, s) : NULL;
  cm_release(a);
  cm_release(b);
  return *tangent ? 0 : -1;
}

/* The same window one axis further along (the batch is in front). */
static cm_slice_params shifted(const cm_params *p) {
  cm_slice_params q;
  memcpy(&q, p, cm_slice_params_size(p));
  for (int k = 0; k < q.n; k++) q.ax[k].axis++;
  return q;
}

static int slice_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                      const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)node, (void)nin;
  cm_slice_params q = shifted(p);
  cm_array *x = cm_moveaxis(in[0], axes[0], 0, s);
  if (!x) return -1;
  int32_t shape[CM_MAX_DIMS];
  memcpy(shape, x->shape, sizeof(int32_t) * (size_t)x->ndim);
  for (int k = 0; k < q.n; k++) shape[q.ax[k].axis] = q.ax[k].len;
  cm_array *r = cm_op_node(x->dtype, x->ndim, shape, &cm_prim_slice, &q,
                           cm_slice_params_size((const cm_params *)&q), &x, 1, s);
  cm_release(x);
  return front(r, out, out_axis);
}

static int slice_update_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                             const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)node;
  cm_slice_params q = shifted(p);
  int b = batch_size(in, axes, nin);
  cm_array *x = batch_front(in[0], axes[0], b, s);
  cm_array *u = x ? batch_front(in[1], axes[1], b, s) : NULL;
  cm_array *r = u ? write_window(x, u, (const cm_params *)&q, s) : NULL;
  cm_release(x);
  cm_release(u);
  return front(r, out, out_axis);
}

const cm_prim cm_prim_slice = {.name = "Slice",
                               .export = &cm_export_slice,
                               .moves_bytes = true,
                               CM_PARAMS_OF_VAR(cm_slice_params, ax),
                               .params_extent = cm_slice_params_size,
                               .vjp = slice_vjp,
                               .jvp = slice_jvp,
                               .vmap = slice_vmap};
const cm_prim cm_prim_slice_update = {.name = "SliceUpdate",
                                      .export = &cm_export_slice_update,
                                      .output_shape = cm_shape_of_first,
                                      CM_PARAMS_OF_VAR(cm_slice_params, ax),
                                      .params_extent = cm_slice_params_size,
                                      .vjp = slice_update_vjp,
                                      .jvp = slice_update_jvp,
                                      .vmap = slice_update_vmap};

/* ---- Pad ---- */

/* Pad(a, value) with the window p (a Slice block of the output). */
static cm_array *pad_node(cm_array *a, cm_array *value, const cm_array *shape_of,
                          const cm_params *p, cm_stream s) {
  cm_array *ins[2] = {a, value};
  return cm_op_node(a->dtype, shape_of->ndim, shape_of->shape, &cm_prim_pad, p,
                    cm_slice_params_size(p), ins, 2, s);
}

/* All of x summed (a 0-d array). */
static cm_array *sum_all(cm_array *x, cm_stream s) {
  uint64_t mask = x->ndim >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << x->ndim) - 1);
  return cm_reduce_mask(CM_REDUCE_SUM, x, mask, false, s);
}

/* d/da: the window of the cotangent; d/dvalue: the sum of the rest (MLX
 * differentiates a only). */
static int pad_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p, cm_array *cotan,
                   const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  (void)out, (void)nin;
  for (int k = 0; k < nargs; k++) grads[k] = NULL;
  cm_array *win = read_window(cotan, in[0], p, s);
  if (!win) return -1;
  int rc = 0;
  for (int k = 0; k < nargs && !rc; k++) {
    if (argnums[k] == 0) {
      grads[k] = cm_retain(win);
      continue;
    }
    cm_array *all = sum_all(cotan, s), *inner = all ? sum_all(win, s) : NULL;
    grads[k] = inner ? cm_subtract(all, inner, s) : NULL;
    cm_release(all);
    cm_release(inner);
    rc = grads[k] ? 0 : -1;
  }
  cm_release(win);
  return rc;
}

static int pad_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                   cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)nin;
  cm_dtype dt = tangent_dtype(tangents, 2);
  cm_array *a = tangent_or_zeros(tangents, in, 0, dt, s);
  cm_array *v = a ? tangent_or_zeros(tangents, in, 1, dt, s) : NULL;
  *tangent = v ? pad_node(a, v, out, p, s) : NULL;
  cm_release(a);
  cm_release(v);
  return *tangent ? 0 : -1;
}

/* The window moves one axis on; a batched value is MLX's error (each
 * example would need its own fill). */
static int pad_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                    const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin;
  if (axes[1] >= 0)
    return cm_error(CM_ERR_VALUE, "[Pad::vmap] Vmap over padding value is not supported.");
  cm_slice_params q = shifted(p);
  cm_array *x = cm_moveaxis(in[0], axes[0], 0, s);
  if (!x) return -1;
  int32_t shape[CM_MAX_DIMS];
  shape[0] = x->shape[0];
  memcpy(shape + 1, node->shape, sizeof(int32_t) * (size_t)node->ndim);
  cm_array *r =
      cm_op_node(x->dtype, node->ndim + 1, shape, &cm_prim_pad, &q,
                 cm_slice_params_size((const cm_params *)&q), (cm_array *[]){x, in[1]}, 2, s);
  cm_release(x);
  return front(r, out, out_axis);
}

const cm_prim cm_prim_pad = {.name = "Pad",
                             .export = &cm_export_pad,
                             CM_PARAMS_OF_VAR(cm_slice_params, ax),
                             .params_extent = cm_slice_params_size,
                             .vjp = pad_vjp,
                             .jvp = pad_jvp,
                             .vmap = pad_vmap};

/* ---- DynamicSlice and DynamicSliceUpdate (a derivative with respect
 * to the start is MLX's error) ---- */

static cm_array *dyn_write(cm_array *base, cm_array *upd, cm_array *start, const cm_params *p,
                           cm_stream s) {
  cm_array *ins[3] = {base, upd, start};
  return cm_op_node(base->dtype, base->ndim, base->shape, &cm_prim_dynamic_slice_update, p,
                    sizeof(cm_dynamic_slice_params), ins, 3, s);
}

static cm_array *dyn_read(cm_array *x, cm_array *start, const cm_array *shape_of,
                          const cm_params *p, cm_stream s) {
  cm_array *ins[2] = {x, start};
  return cm_op_node(x->dtype, shape_of->ndim, shape_of->shape, &cm_prim_dynamic_slice, p,
                    sizeof(cm_dynamic_slice_params), ins, 2, s);
}

static int dynamic_slice_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                             cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                             cm_stream s) {
  (void)out, (void)nin;
  for (int k = 0; k < nargs; k++) /* MLX's error: the start is an index */
    if (argnums[k] != 0)
      return cm_error(CM_ERR_VALUE, "[DynamicSlice::vjp] Not supported for start indices.");
  for (int k = 0; k < nargs; k++) {
    cm_array *z = zeros_of(in[0], cotan->dtype, s);
    grads[k] = z ? dyn_write(z, cotan, in[1], p, s) : NULL;
    cm_release(z);
    if (!grads[k]) return -1;
  }
  return 0;
}

static int dynamic_slice_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                             cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)nin;
  *tangent = tangents[0] ? dyn_read(tangents[0], in[1], out, p, s)
                         : zeros_of(out, tangent_dtype(tangents, 2), s);
  return *tangent ? 0 : -1;
}

static int dynamic_update_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                              cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                              cm_stream s) {
  (void)out, (void)nin;
  for (int k = 0; k < nargs; k++) {
    if (argnums[k] == 0) {
      cm_array *z = zeros_of(in[1], cotan->dtype, s);
      grads[k] = z ? dyn_write(cotan, z, in[2], p, s) : NULL;
      cm_release(z);
    } else if (argnums[k] == 1) {
      grads[k] = dyn_read(cotan, in[2], in[1], p, s);
    } else { /* MLX's error: the start is an index */
      return cm_error(CM_ERR_VALUE, "[DynamicSliceUpdate::vjp] Not supported for start indices");
    }
    if (!grads[k]) return -1;
  }
  return 0;
}

static int dynamic_update_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                              cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)out, (void)nin;
  cm_dtype t = tangent_dtype(tangents, 2);
  cm_array *a = tangent_or_zeros(tangents, in, 0, t, s);
  cm_array *b = a ? tangent_or_zeros(tangents, in, 1, t, s) : NULL;
  *tangent = b ? dyn_write(a, b, in[2], p, s) : NULL;
  cm_release(a);
  cm_release(b);
  return *tangent ? 0 : -1;
}

static int dynamic_update_vmap(const cm_array *node, cm_array *const *in, int nin,
                               const cm_params *p, const int *axes, cm_array **out, int *out_axis,
                               cm_stream s) {
  (void)p;
  if (axes[2] >= 0)
    return cm_error(CM_ERR_RUNTIME, /* MLX's type and message */
                    "[DynamicSliceUpdate::vmap] vmap over start indices not yet supported.");
  cm_dynamic_slice_params q = *cm_dynamic_slice_params_of(node);
  for (int64_t k = 0; k < in[2]->size; k++) q.axes[k]++;
  int b = batch_size(in, axes, nin);
  cm_array *x = batch_front(in[0], axes[0], b, s);
  cm_array *u = x ? batch_front(in[1], axes[1], b, s) : NULL;
  cm_array *r = u ? dyn_write(x, u, in[2], (const cm_params *)&q, s) : NULL;
  cm_release(x);
  cm_release(u);
  return front(r, out, out_axis);
}

const cm_prim cm_prim_dynamic_slice = {.name = "DynamicSlice",
                                       .export = &cm_export_dynamic_slice,
                                       CM_PARAMS_OF(cm_dynamic_slice_params),
                                       .vjp = dynamic_slice_vjp,
                                       .jvp = dynamic_slice_jvp,
                                       .vmap = cm_rule_dynamic_slice_vmap};
const cm_prim cm_prim_dynamic_slice_update = {.name = "DynamicSliceUpdate",
                                              .export = &cm_export_dynamic_slice_update,
                                              .output_shape = cm_shape_of_first,
                                              CM_PARAMS_OF(cm_dynamic_slice_params),
                                              .vjp = dynamic_update_vjp,
                                              .jvp = dynamic_update_jvp,
                                              .vmap = dynamic_update_vmap};

/* ---- AsStrided, View ---- */

size_t cm_as_strided_params_size(const cm_params *p) {
  int32_t n = cm_as_strided_params_of_block(p, cm_prim_as_strided.params_size)->ndim;
  if (n < 0 || n > CM_MAX_DIMS) return SIZE_MAX;
  return offsetof(cm_as_strided_params, strides) + sizeof(int64_t) * (size_t)n;
}

static int as_strided_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                          cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)in;
  if (!tangents[0]) return (*tangent = zeros_of(out, out->dtype, s)) ? 0 : -1;
  *tangent = cm_op_node(tangents[0]->dtype, out->ndim, out->shape, &cm_prim_as_strided, p,
                        cm_as_strided_params_size(p), tangents, nin, s);
  return *tangent ? 0 : -1;
}

const cm_prim cm_prim_as_strided = {.name = "AsStrided",
                                    .export = &cm_export_as_strided,
                                    .moves_bytes = true,
                                    CM_PARAMS_OF_VAR(cm_as_strided_params, strides),
                                    .params_extent = cm_as_strided_params_size,
                                    .jvp = as_strided_jvp,
                                    .vjp = cm_rule_as_strided_vjp};
static int view_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                     const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin, (void)p;
  cm_array *x = cm_moveaxis(in[0], axes[0], 0, s); /* keeps the last axis last */
  cm_array *r = x ? cm_view(x, (cm_dtype)cm_view_params_of(node)->dtype, s) : NULL;
  cm_release(x);
  return front(r, out, out_axis);
}

const cm_prim cm_prim_view = {.name = "View",
                              .export = &cm_export_view,
                              .moves_bytes = true,
                              CM_PARAMS_OF(cm_view_params),
                              .vmap = view_vmap};

/* ---- Diagonal ---- */

/* The gradient of a diagonal: zeros of the input's shape with cot on the
 * diagonal.  Built on the input's axes permuted to (others.., a1, a2)
 * with the last two merged, where the diagonal is a strided window of
 * the merged axis (start off1*d2 + off2, step d2 + 1). */
static int diagonal_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                        cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                        cm_stream s) {
  (void)nin, (void)argnums, (void)nargs, (void)p;
  const cm_diagonal_params *dp = cm_diagonal_params_of(out);
  const cm_array *x = in[0];
  int nd = x->ndim, perm[CM_MAX_DIMS], inv[CM_MAX_DIMS], n = 0;
  for (int i = 0; i < nd; i++)
    if (i != dp->axis1 && i != dp->axis2) perm[n++] = i;
  perm[n++] = dp->axis1;
  perm[n++] = dp->axis2;
  for (int i = 0; i < nd; i++) inv[perm[i]] = i;
  int64_t d1 = x->shape[dp->axis1], d2 = x->shape[dp->axis2];
  if (d1 * d2 > INT32_MAX)
    return cm_error(CM_ERR_VALUE, "[Diagonal] The vjp's matrix is too large.");
  int32_t merged[CM_MAX_DIMS], split[CM_MAX_DIMS], start[CM_MAX_DIMS], stop[CM_MAX_DIMS],
      step[CM_MAX_DIMS];
  for (int i = 0; i < nd - 2; i++) {
    merged[i] = split[i] = x->shape[perm[i]];
    start[i] = 0;
    stop[i] = merged[i];
    step[i] = 1;
  }
  merged[nd - 2] = (int32_t)(d1 * d2);
  split[nd - 2] = (int32_t)d1;
  split[nd - 1] = (int32_t)d2;
  int64_t len = cotan->shape[cotan->ndim - 1];
  int64_t off1 = dp->offset < 0 ? -(int64_t)dp->offset : 0, off2 = dp->offset > 0 ? dp->offset : 0;
  start[nd - 2] = (int32_t)(off1 * d2 + off2);
  stop[nd - 2] = len ? (int32_t)(start[nd - 2] + (len - 1) * (d2 + 1) + 1) : start[nd - 2];
  step[nd - 2] = (int32_t)(d2 + 1);
  cm_array *z = cm_zeros(nd - 1, merged, cotan->dtype, s);
  cm_array *w = z ? cm_slice_update(z, cotan, nd - 1, start, nd - 1, stop, nd - 1, step, s) : NULL;
  cm_array *r = w ? cm_reshape(w, nd, split, s) : NULL;
  grads[0] = r ? cm_transpose(r, nd, inv, s) : NULL;
  cm_release(z);
  cm_release(w);
  cm_release(r);
  return grads[0] ? 0 : -1;
}

static int diagonal_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                        cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)in, (void)nin;
  *tangent = cm_op_node(tangents[0]->dtype, out->ndim, out->shape, &cm_prim_diagonal, p,
                        sizeof(cm_diagonal_params), &tangents[0], 1, s);
  return *tangent ? 0 : -1;
}

static int diagonal_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                         const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin, (void)p;
  const cm_diagonal_params *dp = cm_diagonal_params_of(node);
  cm_array *x = cm_moveaxis(in[0], axes[0], 0, s);
  cm_array *r = x ? cm_diagonal(x, dp->offset, dp->axis1 + 1, dp->axis2 + 1, s) : NULL;
  cm_release(x);
  return front(r, out, out_axis);
}

const cm_prim cm_prim_diagonal = {.name = "Diagonal",
                                  .export = &cm_export_diagonal,
                                  CM_PARAMS_OF(cm_diagonal_params),
                                  .vjp = diagonal_vjp,
                                  .jvp = diagonal_jvp,
                                  .vmap = diagonal_vmap};

/* ---- Concatenate ---- */

static int concatenate_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                           cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                           cm_stream s) {
  (void)p;
  int ax = cm_concatenate_params_of(out)->axis;
  int32_t start[CM_MAX_DIMS], stop[CM_MAX_DIMS];
  for (int i = 0; i < out->ndim; i++) {
    start[i] = 0;
    stop[i] = out->shape[i];
  }
  for (int k = 0; k < nargs; k++) {
    int32_t pos = 0;
    for (int i = 0; i < argnums[k] && i < nin; i++) pos += in[i]->shape[ax];
    start[ax] = pos;
    stop[ax] = pos + in[argnums[k]]->shape[ax];
    grads[k] = cm_slice(cotan, out->ndim, start, out->ndim, stop, 0, NULL, s);
    if (!grads[k]) return -1;
  }
  return 0;
}

static int concatenate_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                           cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  cm_array *ts[64], **list = nin <= 64 ? ts : NULL;
  if (!list && !(list = calloc((size_t)nin, sizeof *list)))
    return cm_error(CM_ERR_MEMORY, "[Concatenate] Out of memory.");
  int k = 0;
  for (; k < nin; k++)
    if (!(list[k] = tangent_or_zeros(tangents, in, k, out->dtype, s))) break;
  *tangent = k == nin ? cm_op_node(out->dtype, out->ndim, out->shape, &cm_prim_concatenate, p,
                                   sizeof(cm_concatenate_params), list, nin, s)
                      : NULL;
  for (int j = 0; j < k; j++) cm_release(list[j]);
  if (list != ts) free(list);
  return *tangent ? 0 : -1;
}

static int concatenate_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                            const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)p;
  int ax = cm_concatenate_params_of(node)->axis, b = batch_size(in, axes, nin), k = 0;
  cm_array *ts[64], **list = nin <= 64 ? ts : calloc((size_t)nin, sizeof *list);
  if (!list) return cm_error(CM_ERR_MEMORY, "[vmap] Out of memory.");
  for (; k < nin; k++)
    if (!(list[k] = batch_front(in[k], axes[k], b, s))) break;
  cm_array *r = k == nin ? cm_concatenate(list, nin, ax + 1, s) : NULL;
  for (int j = 0; j < k; j++) cm_release(list[j]);
  if (list != ts) free(list);
  return front(r, out, out_axis);
}

const cm_prim cm_prim_concatenate = {.name = "Concatenate",
                                     .export = &cm_export_concatenate,
                                     CM_PARAMS_OF(cm_concatenate_params),
                                     .vjp = concatenate_vjp,
                                     .jvp = concatenate_jvp,
                                     .vmap = concatenate_vmap};

/* ---- Window functions ---- */

static const char *window_name(const cm_params *p, size_t size) {
  switch (cm_window_params_of_block(p, size)->kind) {
  case CM_WINDOW_BARTLETT: return "Bartlett";
  case CM_WINDOW_BLACKMAN: return "Blackman";
  case CM_WINDOW_HAMMING: return "Hamming";
  default: return "Hanning";
  }
}

const cm_prim cm_prim_window = {
    .name = "Window", CM_PARAMS_OF(cm_window_params), .op_name = window_name};
