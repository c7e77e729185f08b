/* mlx/c/distributed_group.h: process groups.
 * Every function not written out below reports "<function>: not
 * implemented yet in cmlx" through the error handler and returns 1 (an
 * empty handle, or false, where the function returns one); none computes
 * anything.  Freeing an (empty) handle succeeds. */
#include "capi/capi.h"

/* Each function below reports that it is not implemented yet and ignores
 * its arguments: it never computes a result. */
#pragma GCC diagnostic ignored "-Wunused-parameter"


/* No distributed backend is built in, so none is available. */
bool mlx_distributed_is_available(const char *bk) { return false; }

mlx_distributed_group mlx_distributed_group_new(void) {
  return (mlx_distributed_group){0};
}

int mlx_distributed_group_free(mlx_distributed_group group) {
  return 0;
}

int mlx_distributed_init(mlx_distributed_group* res, bool strict, const char* bk) {
  return capi_not_impl(__func__);
}

int mlx_distributed_group_rank(mlx_distributed_group group) {
  return capi_not_impl(__func__);
}

int mlx_distributed_group_size(mlx_distributed_group group) {
  return capi_not_impl(__func__);
}

int mlx_distributed_group_split(mlx_distributed_group *res, mlx_distributed_group group, int color,
                                int key) {
  return capi_not_impl(__func__);
}
