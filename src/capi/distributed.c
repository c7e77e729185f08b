/* mlx/c/distributed.h: the collectives, over ops/distributed.h.  An empty
 * group handle (ctx NULL) means the global group, as mlx-c's optional.
 * A freed or invalid group handle is reported (checked after the other
 * arguments, in grp). */
#include "ops/distributed.h"
#include "capi/capi.h"

/* The group of a checked handle: NULL for the global group (an empty
 * handle); *bad set after reporting a freed or invalid one. */
static cm_group *grp_of(const char *fn, mlx_distributed_group g, int *bad) {
  *bad = capi_check(fn, g.ctx, CAPI_H_DISTRIBUTED_GROUP);
  return *bad ? NULL : (cm_group *)capi_obj(g.ctx);
}
#define GRP(fn, g)                   \
  int bad_;                          \
  cm_group *grp_ = grp_of(fn, g, &bad_); \
  if (bad_) return 1

#define COLLECTIVE(NAME, FN)                                                                   \
  int mlx_distributed_##NAME(mlx_array *res, const mlx_array x, const mlx_distributed_group g, \
                             const mlx_stream s) {                                             \
    if (capi_op(#NAME, res, s) || capi_need(#NAME, x)) return 1;                               \
    GRP(#NAME, g);                                                                             \
    return capi_set(res, FN(capi_arr(x), grp_, capi_stream(s)));                               \
  }

COLLECTIVE(all_gather, cm_dist_all_gather)
COLLECTIVE(all_max, cm_dist_all_max)
COLLECTIVE(all_min, cm_dist_all_min)
COLLECTIVE(all_sum, cm_dist_all_sum)
COLLECTIVE(sum_scatter, cm_dist_sum_scatter)

int mlx_distributed_recv(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype,
                         int src, const mlx_distributed_group group, const mlx_stream s) {
  int nd;
  if (capi_op("recv", res, s) || capi_shape("recv", shape, shape_num, &nd) ||
      capi_dtype("recv", dtype))
    return 1;
  GRP("recv", group);
  return capi_set(res, cm_dist_recv(nd, (const int32_t *)shape, (cm_dtype)dtype, src, grp_,
                                    capi_stream(s)));
}

int mlx_distributed_recv_like(mlx_array *res, const mlx_array x, int src,
                              const mlx_distributed_group group, const mlx_stream s) {
  if (capi_op("recv_like", res, s) || capi_need("recv_like", x)) return 1;
  GRP("recv_like", group);
  return capi_set(res, cm_dist_recv_like(capi_arr(x), src, grp_, capi_stream(s)));
}

int mlx_distributed_send(mlx_array *res, const mlx_array x, int dst,
                         const mlx_distributed_group group, const mlx_stream s) {
  if (capi_op("send", res, s) || capi_need("send", x)) return 1;
  GRP("send", group);
  return capi_set(res, cm_dist_send(capi_arr(x), dst, grp_, capi_stream(s)));
}
