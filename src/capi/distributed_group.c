/* mlx/c/distributed_group.h: process groups, over distributed/group.h.
 * Groups live until the process exits, so freeing a handle only forgets
 * it. */
#include "capi/capi.h"
#include "distributed/group.h"

bool mlx_distributed_is_available(const char *bk) { return cm_dist_is_available(bk ? bk : "any"); }

mlx_distributed_group mlx_distributed_group_new(void) { return (mlx_distributed_group){0}; }

int mlx_distributed_group_free(mlx_distributed_group group) {
  (void)group;
  return 0;
}

int mlx_distributed_init(mlx_distributed_group *res, bool strict, const char *bk) {
  if (capi_out("mlx_distributed_init", res)) return 1;
  cm_group *g = cm_dist_init(strict, bk ? bk : "any");
  if (!g) return capi_fail();
  res->ctx = g;
  return 0;
}

static cm_group *need_group(const char *fn, mlx_distributed_group g) {
  if (!g.ctx) capi_errorf("%s: the group is empty", fn);
  return g.ctx;
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
  if (capi_out(__func__, res)) return 1;
  cm_group *g = need_group(__func__, group);
  if (!g) return 1;
  cm_group *r = cm_group_split(g, color, key);
  if (!r) return capi_fail();
  res->ctx = r;
  return 0;
}
