/* The Sort family: names and transform rules. */
#include "primitives/sort.h"
#include "primitives/export_desc.h"

#include "ops/creation.h"
#include "ops/indexing.h"
#include "ops/unary.h"

static const char *const names[CM_SORT_NUM_OPS] = {
#define CM_X(CODE, name, Name, ...) [CM_SORT_##CODE] = Name,
    CM_SORT_OPS(CM_X)
#undef CM_X
};

const char *cm_sort_op_name(cm_sort_op op) {
  return (unsigned)op < CM_SORT_NUM_OPS ? names[op] : "Sort";
}

static const char *op_name(const cm_params *p, size_t size) {
  return cm_sort_op_name(cm_sort_params_of_block(p, size)->op);
}

/* The ops whose out column is VALUES (sort, partition); searchsorted has a
 * second input, but gives indices too. */
static bool moves_values(const cm_array *node) {
  return !cm_sort_op_indices(cm_sort_params_of(node)->op);
}

/* The permutation a values op applied along its axis: argsort (or
 * argpartition with the same kth) of its input.  It is locally constant,
 * so its gradient is cut (as MLX does): a second derivative through the
 * gather or scatter built on it must not ask for one of the indices. */
static cm_array *perm_of(cm_array *x, const cm_sort_params *q, cm_stream s) {
  cm_array *p =
      q->op == CM_SORT_SORT ? cm_argsort(x, q->axis, s) : cm_argpartition(x, q->kth, q->axis, s);
  cm_array *r = p ? cm_stop_gradient(p, s) : NULL;
  cm_release(p);
  return r;
}

/* Indices are piecewise constant in the input: a zero gradient.  The
 * values ops scatter the cotangent back through their permutation (as
 * MLX does); a permutation has no repeats, so put_along_axis suffices. */
static int sort_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                    cm_array *cotan, const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  (void)nin, (void)p;
  const cm_sort_params *q = cm_sort_params_of(out);
  for (int i = 0; i < nargs; i++) grads[i] = NULL;
  if (!moves_values(out)) return 0;
  for (int i = 0; i < nargs; i++) {
    if (argnums[i] != 0) continue;
    cm_array *idx = perm_of(in[0], q, s);
    cm_array *z = idx ? cm_zeros(in[0]->ndim, in[0]->shape, cotan->dtype, s) : NULL;
    cm_array *g = z ? cm_put_along_axis(z, idx, cotan, q->axis, s) : NULL;
    cm_release(idx);
    cm_release(z);
    if (!g) return -1;
    grads[i] = g;
  }
  return 0;
}

/* The values ops' tangent is the input's tangent gathered through the
 * permutation. */
static int sort_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                    cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)nin, (void)p;
  if (!moves_values(out)) {
    *tangent = cm_zeros(out->ndim, out->shape, out->dtype, s);
    return *tangent ? 0 : -1;
  }
  const cm_sort_params *q = cm_sort_params_of(out);
  cm_array *idx = perm_of(in[0], q, s);
  *tangent = idx ? cm_take_along_axis(tangents[0], idx, q->axis, s) : NULL;
  cm_release(idx);
  return *tangent ? 0 : -1;
}

/* Batching: the sorted axis moves past the batch axis; searchsorted
 * batches over its values only (a batched sequence would be 2-D). */
static int sort_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                     const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)p;
  cm_sort_params q = *cm_sort_params_of(node);
  if (q.op == CM_SORT_SEARCHSORTED) {
    if (nin != 2 || axes[0] >= 0)
      return cm_error(CM_ERR_VALUE, "[searchsorted] Cannot vmap over the sorted sequence, only "
                                    "over the values being searched for.");
    *out = cm_searchsorted(in[0], in[1], q.right ? "right" : "left", s);
    *out_axis = axes[1];
    return *out ? 0 : -1;
  }
  int bd = axes[0];
  if (bd <= q.axis) q.axis++;
  cm_array *a = in[0];
  cm_dtype dt = q.op == CM_SORT_ARGSORT || q.op == CM_SORT_ARGPARTITION ? CM_UINT32 : a->dtype;
  *out = cm_op_node(dt, a->ndim, a->shape, &cm_prim_sort, &q, sizeof q, &a, 1, s);
  *out_axis = bd;
  return *out ? 0 : -1;
}

const cm_prim cm_prim_sort = {
    .name = "Sort",
    .export = &cm_export_sort,
    CM_PARAMS_OF(cm_sort_params),
    .op_name = op_name,
    .vjp = sort_vjp,
    .jvp = sort_jvp,
    .vmap = sort_vmap,
};
