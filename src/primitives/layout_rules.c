/* Transform rules of the layout primitives: Broadcast, AsType, Copy, Full
 * (Identity's are in layout.c).
 *
 * Broadcast  vjp: the cotangent summed over the broadcast axes and
 *            reshaped back; jvp: the tangent broadcast the same way.
 * AsType     vjp: the cotangent cast back to the input's dtype (complex to
 *            real keeps the real part); jvp: the tangent cast forward.
 * Copy       the identity in every mode.
 * Full       out = vals broadcast to the shape and cast.  vjp: summed back
 *            to vals' shape and cast to its dtype, the true gradient.
 *            (MLX 0.32's Full::vjp multiplies the cotangent by the value
 *            instead, so mx.grad(lambda v: mx.full((3,), v).sum())(2.0) is
 *            6 there; this gives 3, which finite differences agree with.)
 *
 * None of these parameter blocks records the output's shape or dtype, so
 * the vmap rules read them from the traced node they are given.  A
 * batched input gets its batch axis in front and size-1 axes after it up
 * to the output's rank, so that a per-example (3,) broadcast to (1, 3)
 * stays (1, 3) per example. */
#include <string.h>

#include "ops/creation.h"
#include "ops/shape.h"
#include "primitives/layout.h"
#include "primitives/rules.h"
#include "primitives/rules_util.h"

/* ---- helpers ---- */

/* in (batched on ax) with the batch in front and size-1 axes after it up
 * to 1 + rank axes in all. */
static cm_array *front_padded(cm_array *in, int ax, int rank, cm_stream s) {
  if (rank + 1 > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[vmap] Arrays may have at most %d dimensions.", CM_MAX_DIMS),
           NULL;
  cm_array *x = ax == 0 ? cm_retain(in) : cm_moveaxis(in, ax, 0, s);
  if (!x) return NULL;
  int pad = rank - (x->ndim - 1);
  if (pad <= 0) return x;
  int32_t shape[CM_MAX_DIMS];
  shape[0] = x->shape[0];
  for (int i = 0; i < pad; i++) shape[1 + i] = 1;
  memcpy(shape + 1 + pad, x->shape + 1, sizeof(int32_t) * (size_t)(x->ndim - 1));
  cm_array *r = cm_reshape(x, x->ndim + pad, shape, s);
  cm_release(x);
  return r;
}

/* The vmap of a node that spreads its one input over the node's shape
 * (Broadcast; Full, which also casts to the node's dtype): the same over
 * (batch, node's shape...), the batch in front. */
static int spread_vmap(const cm_array *node, cm_array *const *in, const cm_params *p,
                       const int *axes, bool full, cm_array **out, int *out_axis, cm_stream s) {
  (void)p;
  if (axes[0] < 0) { /* an unbatched input (MLX's rule): the node as it is */
    *out = full ? cm_full(node->ndim, node->shape, in[0], node->dtype, s)
                : cm_broadcast_to(in[0], node->ndim, node->shape, s);
    *out_axis = -1;
    return *out ? 0 : -1;
  }
  cm_array *x = front_padded(in[0], axes[0], node->ndim, s);
  if (!x) return -1;
  int32_t shape[CM_MAX_DIMS];
  shape[0] = x->shape[0];
  memcpy(shape + 1, node->shape, sizeof(int32_t) * (size_t)node->ndim);
  *out = full ? cm_full(node->ndim + 1, shape, x, node->dtype, s)
              : cm_broadcast_to(x, node->ndim + 1, shape, s);
  *out_axis = 0;
  cm_release(x);
  return *out ? 0 : -1;
}

/* ---- Broadcast ---- */

int cm_rule_broadcast_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                          cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                          cm_stream s) {
  (void)out, (void)nin, (void)p, (void)argnums, (void)nargs;
  return (grads[0] = cm_rule_sum_to_shape(cotan, in[0]->ndim, in[0]->shape, s)) ? 0 : -1;
}

int cm_rule_broadcast_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                          cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  if (nin > 1) /* a shapeless trace's Broadcast against other inputs */
    return cm_prim_broadcast_axes.jvp(out, in, nin, NULL, tangents, tangent, s);
  (void)p;
  return (*tangent = cm_broadcast_to(tangents[0], out->ndim, out->shape, s)) ? 0 : -1;
}

int cm_rule_broadcast_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                           const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  /* a shapeless trace's Broadcast against other inputs: as BroadcastAxes */
  if (nin > 1) return cm_prim_broadcast_axes.vmap(node, in, nin, NULL, axes, out, out_axis, s);
  return spread_vmap(node, in, p, axes, false, out, out_axis, s);
}

/* ---- AsType ---- */

int cm_rule_astype_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                       cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                       cm_stream s) {
  (void)out, (void)nin, (void)p, (void)argnums, (void)nargs;
  return (grads[0] = cm_astype(cotan, in[0]->dtype, s)) ? 0 : -1;
}

int cm_rule_astype_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                       cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)in, (void)nin, (void)p;
  return (*tangent = cm_astype(tangents[0], out->dtype, s)) ? 0 : -1;
}

int cm_rule_astype_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                        const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)p, (void)nin;
  *out = cm_astype(in[0], node->dtype, s);
  *out_axis = axes[0];
  return *out ? 0 : -1;
}

/* ---- Copy ---- */

int cm_rule_copy_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                     cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                     cm_stream s) {
  (void)out, (void)in, (void)nin, (void)p, (void)argnums, (void)nargs, (void)s;
  grads[0] = cm_retain(cotan);
  return 0;
}

int cm_rule_copy_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                     cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)out, (void)in, (void)nin, (void)p, (void)s;
  *tangent = cm_retain(tangents[0]);
  return 0;
}

int cm_rule_copy_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                      const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)node, (void)nin, (void)p;
  /* another copy node: the batched result is row-contiguous too */
  *out = cm_op_node(in[0]->dtype, in[0]->ndim, in[0]->shape, &cm_prim_copy, NULL, 0, in, 1, s);
  *out_axis = axes[0];
  return *out ? 0 : -1;
}

/* ---- Full ---- */

int cm_rule_full_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                     cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                     cm_stream s) {
  (void)out, (void)nin, (void)p, (void)argnums, (void)nargs;
  cm_array *g = cm_rule_sum_to_shape(cotan, in[0]->ndim, in[0]->shape, s);
  grads[0] = g ? cm_astype(g, in[0]->dtype, s) : NULL;
  cm_release(g);
  return grads[0] ? 0 : -1;
}

int cm_rule_full_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                     cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)in, (void)nin, (void)p;
  cm_array *b = cm_broadcast_to(tangents[0], out->ndim, out->shape, s);
  *tangent = b ? cm_astype(b, out->dtype, s) : NULL;
  cm_release(b);
  return *tangent ? 0 : -1;
}

int cm_rule_full_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                      const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin;
  return spread_vmap(node, in, p, axes, true, out, out_axis, s);
}
