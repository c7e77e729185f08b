/* mx.distributed's op constructors (see ops/distributed.h). */
#include "ops/distributed.h"

#include "primitives/distributed.h"

/* g, or the global group when NULL; NULL with the error set. */
static cm_group *group_of(cm_group *g) { return g ? g : cm_dist_world(); }

static int need(const char *op, const cm_array *x) {
  return x ? 0 : cm_error(CM_ERR_VALUE, "[%s] Got a null array.", op);
}

static cm_array *collective(cm_array *x, cm_group *g, const cm_prim *prim, int op, int ndim,
                            const int32_t *shape, cm_stream s) {
  cm_dist_params p = {g, op, 0};
  return cm_op_node(x->dtype, ndim, shape, prim, &p, sizeof p, &x, 1, s);
}

static cm_array *all_reduce(const char *name, cm_array *x, cm_group *g, cm_reduce_op op,
                            cm_stream s) {
  if (need(name, x) || !(g = group_of(g)) || cm_op_stream(&s)) return NULL;
  if (g->size == 1) return cm_retain(x);
  return collective(x, g, &cm_prim_all_reduce, op, x->ndim, x->shape, s);
}

cm_array *cm_dist_all_sum(cm_array *x, cm_group *g, cm_stream s) {
  return all_reduce("all_sum", x, g, CM_REDUCE_SUM, s);
}

cm_array *cm_dist_all_max(cm_array *x, cm_group *g, cm_stream s) {
  return all_reduce("all_max", x, g, CM_REDUCE_MAX, s);
}

cm_array *cm_dist_all_min(cm_array *x, cm_group *g, cm_stream s) {
  return all_reduce("all_min", x, g, CM_REDUCE_MIN, s);
}

cm_array *cm_dist_all_gather(cm_array *x, cm_group *g, cm_stream s) {
  if (need("all_gather", x) || !(g = group_of(g)) || cm_op_stream(&s)) return NULL;
  if (g->size == 1) return cm_retain(x);
  int32_t shape[CM_MAX_DIMS];
  int ndim = x->ndim ? x->ndim : 1;
  for (int i = 0; i < x->ndim; i++) shape[i] = x->shape[i];
  int64_t first = (int64_t)(x->ndim ? x->shape[0] : 1) * g->size;
  if (cm_shape_dim("all_gather", first, &shape[0])) return NULL;
  return collective(x, g, &cm_prim_all_gather, 0, ndim, shape, s);
}

cm_array *cm_dist_sum_scatter(cm_array *x, cm_group *g, cm_stream s) {
  if (need("sum_scatter", x) || !(g = group_of(g)) || cm_op_stream(&s)) return NULL;
  if (g->size == 1) return cm_retain(x);
  if (x->ndim == 0 || x->shape[0] % g->size) {
    char buf[128];
    return cm_error(CM_ERR_VALUE,
                    "[sum_scatter] Invalid shape=%s for a group of size %d. The first "
                    "dimension (axis 0) must be divisible by the group size and input mst have "
                    "at least one.",
                    cm_shape_str(buf, sizeof buf, x->ndim, x->shape), g->size),
           NULL;
  }
  int32_t shape[CM_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) shape[i] = x->shape[i];
  shape[0] /= g->size;
  return collective(x, g, &cm_prim_reduce_scatter, CM_REDUCE_SUM, x->ndim, shape, s);
}

cm_array *cm_dist_send(cm_array *x, int dst, cm_group *g, cm_stream s) {
  if (need("send", x) || !(g = group_of(g))) return NULL;
  if (g->size == 1) return cm_error(CM_ERR_VALUE, "Cannot send to a singleton group"), NULL;
  if (cm_op_stream(&s)) return NULL;
  if (dst < 0 || dst >= g->size)
    return cm_error(CM_ERR_VALUE, "Invalid destination=%d for a group of size %d", dst, g->size),
           NULL;
  cm_dist_params p = {g, 0, dst};
  return cm_op_node(x->dtype, x->ndim, x->shape, &cm_prim_send, &p, sizeof p, &x, 1, s);
}

cm_array *cm_dist_recv(int ndim, const int32_t *shape, cm_dtype dtype, int src, cm_group *g,
                       cm_stream s) {
  if (!(g = group_of(g))) return NULL;
  if (g->size == 1) return cm_error(CM_ERR_VALUE, "Cannot recv from a singleton group"), NULL;
  if (cm_op_stream(&s)) return NULL;
  if (src < 0 || src >= g->size)
    return cm_error(CM_ERR_VALUE, "Invalid source=%d for a group of size %d", src, g->size), NULL;
  if (cm_check_shape("recv", ndim, shape)) return NULL;
  cm_dist_params p = {g, 0, src};
  return cm_op_node(dtype, ndim, shape, &cm_prim_recv, &p, sizeof p, NULL, 0, s);
}

cm_array *cm_dist_recv_like(cm_array *x, int src, cm_group *g, cm_stream s) {
  if (need("recv_like", x)) return NULL;
  return cm_dist_recv(x->ndim, x->shape, x->dtype, src, g, s);
}
