/* mlx/c/distributed_group.h: process groups, over distributed/group.h.
 * Groups live until the process exits, so freeing a handle only forgets
 * it (its cell, handle.h, is killed, so a later use is reported). */
#include "capi/capi.h"
#include "distributed/group.h"

bool mlx_distributed_is_available(const char *bk) { return cm_dist_is_available(bk ? bk : "any"); }

mlx_distributed_group mlx_distributed_group_new(void) { return (mlx_distributed_group){0}; }

#define T_GRP CAPI_H_DISTRIBUTED_GROUP

int mlx_distributed_group_free(mlx_distributed_group group) {
  void *g;
  return capi_cell_free("mlx_distributed_group_free", group.ctx, T_GRP, &g);
}

/* *res (checked) names g: a live handle keeps its cell.  0 or 1. */
static int put_group(mlx_distributed_group *res, cm_group *g) {
  if (res->ctx) {
    capi_obj_set(res->ctx, g);
    return 0;
  }
  void *c = capi_cell_new(T_GRP, g);
  if (!c) return 1;
  res->ctx = c;
  return 0;
}

int mlx_distributed_init(mlx_distributed_group *res, bool strict, const char *bk) {
  if (capi_out("mlx_distributed_init", res) ||
      capi_check("mlx_distributed_init", res->ctx, T_GRP))
    return 1;
  cm_group *g = cm_dist_init(strict, bk ? bk : "any");
  if (!g) return capi_fail();
  return put_group(res, g);
}

static cm_group *need_group(const char *fn, mlx_distributed_group g) {
  if (!g.ctx) {
    capi_errorf("%s: the group is empty", fn);
    return NULL;
  }
  return capi_check(fn, g.ctx, T_GRP) ? NULL : capi_obj(g.ctx);
}

int mlx_distributed_group_rank(mlx_distributed_group group) {
  cm_group *g = need_group(__func__, group);
  return g ? g->rank : -1;
}

int mlx_distributed_group_size(mlx_distributed_group group) {
  cm_group *g = need_group(__func__, group);
  return g ? g->size : -1;
}

int mlx_distributed_group_split(mlx_distributed_group *res, mlx_distributed_group group, int color,
                                int key) {
  if (capi_out(__func__, res) || capi_check(__func__, res->ctx, T_GRP)) return 1;
  cm_group *g = need_group(__func__, group);
  if (!g) return 1;
  cm_group *r = cm_group_split(g, color, key);
  if (!r) return capi_fail();
  return put_group(res, r);
}
