/* Helpers shared by the transform rules of the elementwise, layout and
 * shape families (unary_rules.c, binary_rules.c, ternary_rules.c,
 * layout_rules.c, shape_rules.c).
 *
 * Rules build graphs from op constructors only (never touching buffers),
 * and only from ops whose primitives have rules themselves, so that a
 * gradient of a gradient works.  A rule typically builds several
 * temporaries; cm_rt collects them so that one call releases them all and
 * so that, after the first failure, nothing more is built (RT() skips the
 * expression, which therefore never sees a NULL operand). */
#ifndef CMLX_PRIMITIVES_RULES_UTIL_H
#define CMLX_PRIMITIVES_RULES_UTIL_H

#include <stddef.h>

#include "primitives/primitive.h"

#define CM_RT_MAX 48

typedef struct cm_rt {
  cm_array *a[CM_RT_MAX];
  int n;
  bool fail;
} cm_rt;

/* Keep x (a new reference, or NULL after an error) in t; returns x. */
cm_array *cm_rt_keep(cm_rt *t, cm_array *x);
#define RT(t, e) ((t)->fail ? NULL : cm_rt_keep((t), (e)))
/* Release every temporary; *out gets a new reference to r unless a step
 * failed.  Returns 0, or -1 with the error set. */
int cm_rt_done(cm_rt *t, cm_array *r, cm_array **out);

/* Output shapes for shapeless compile (cm_prim.output_shape): the first
 * input's shape (elementwise with one input, casts, copies), and the
 * NumPy broadcast of every input's shape (binary, select). */
int cm_shape_of_first(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                      int *ndim, int32_t *shape);
int cm_shape_of_broadcast(const cm_array *node, cm_array *const *in, int nin,
                          const cm_params *p, int *ndim, int32_t *shape);

/* An evaluated 0-d constant (never on a differentiation path). */
cm_array *cm_rule_scalar(double v, cm_dtype dtype);

/* x summed back to shape after a NumPy broadcast from shape to x's shape:
 * the leading extra axes and the axes where shape has 1 are summed (keeping
 * dims), then the result is reshaped to shape.  A new reference to x when
 * the shapes already match. */
cm_array *cm_rule_sum_to_shape(cm_array *x, int ndim, const int32_t *shape, cm_stream s);

/* Align the batch axes of n operands of an elementwise op for vmap, as
 * MLX does: every operand gets leading size-1 axes up to one common rank
 * (the largest per-example rank plus one), so that per-example shapes
 * broadcast from the right exactly as they did unbatched; an unbatched
 * operand's batch axis is its last added size-1 axis; then every batch
 * axis is moved to where the first batched operand's is.  outs[i] are new
 * references (on failure none are left); *out_axis is the common axis. */
int cm_rule_align(cm_array *const *in, int n, const int *axes, cm_array **outs, int *out_axis,
                  cm_stream s);

/* The dtype of the first non-NULL tangent (float32 if none). */
cm_dtype cm_rule_tangent_dtype(cm_array *const *tangents, int n);

/* A new zero array shaped like shape_of. */
cm_array *cm_rule_zeros(const cm_array *shape_of, cm_dtype dtype, cm_stream s);

#endif
