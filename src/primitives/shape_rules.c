/* Transform rules of the shape primitives that shape.c does not define
 * itself (shape.c holds the descriptors and most of the family's rules).
 *
 * AsStrided vjp (MLX's rule): overlapping views read an input element
 * several times, so its gradient is a scatter-add.  The same strided view
 * of arange(n) gives, for every output element, the input element it
 * reads; the flattened cotangent is added at those positions into zeros.
 * (AsStrided's vmap is not implemented, as in MLX: a batch axis has no
 * stride to put it at in general.)
 *
 * DynamicSlice vmap: with unbatched start indices, the slice of every
 * example is the same window, one axis further along (MLX supports this
 * case too); batched starts raise NotImplementedError. */
#include <string.h>

#include "ops/creation.h"
#include "ops/indexing.h"
#include "ops/shape.h"
#include "primitives/rules.h"
#include "primitives/rules_util.h"
#include "primitives/shape.h"

int cm_rule_as_strided_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                           cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                           cm_stream s) {
  (void)nin, (void)argnums, (void)nargs;
  cm_rt t = {.n = 0};
  cm_array *x = in[0]; /* the op flattened the input: 1-d */
  int64_t n = x->size, m = out->size;
  if (n > INT32_MAX || m > INT32_MAX)
    return cm_error(CM_ERR_VALUE, "[AsStrided] The vjp of an array this large is not supported.");
  cm_dtype it = CM_INT32;
  int32_t mflat = (int32_t)m;
  cm_array *iota = RT(&t, cm_arange(0, (double)n, 1, it, s));
  /* the index view: the node's own parameters */
  cm_array *idx = iota ? RT(&t, cm_op_node(it, out->ndim, out->shape, &cm_prim_as_strided, p,
                                           cm_as_strided_params_size(p), &iota, 1, s))
                       : NULL;
  cm_array *flat_idx = RT(&t, cm_reshape(idx, 1, &mflat, s));
  cm_array *flat_cot = RT(&t, cm_reshape(cotan, 1, &mflat, s));
  cm_array *z = RT(&t, cm_zeros(x->ndim, x->shape, cotan->dtype, s));
  cm_array *g = RT(&t, cm_scatter_add_axis(z, flat_idx, flat_cot, 0, s));
  return cm_rt_done(&t, g, &grads[0]);
}

int cm_rule_dynamic_slice_vmap(const cm_array *node, cm_array *const *in, int nin,
                               const cm_params *p, const int *axes, cm_array **out, int *out_axis,
                               cm_stream s) {
  (void)nin, (void)p;
  if (axes[1] >= 0)
    return cm_error(CM_ERR_VALUE, /* MLX's type and message */
                    "[DynamicSlice::vmap] vmap over start indices not yet supported.");
  if (node->ndim + 1 > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[vmap] Arrays may have at most %d dimensions.", CM_MAX_DIMS);
  cm_dynamic_slice_params q = *cm_dynamic_slice_params_of(node);
  for (int64_t k = 0; k < in[1]->size; k++) q.axes[k]++;
  cm_array *x = axes[0] == 0 ? cm_retain(in[0]) : cm_moveaxis(in[0], axes[0], 0, s);
  if (!x) return -1;
  int32_t shape[CM_MAX_DIMS];
  shape[0] = x->shape[0];
  memcpy(shape + 1, node->shape, sizeof(int32_t) * (size_t)node->ndim);
  cm_array *ins[2] = {x, in[1]};
  *out =
      cm_op_node(x->dtype, node->ndim + 1, shape, &cm_prim_dynamic_slice, &q, sizeof q, ins, 2, s);
  *out_axis = 0;
  cm_release(x);
  return *out ? 0 : -1;
}
