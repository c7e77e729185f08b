/* mlx/c/distributed.h: collective communication.
 * Every function not written out below reports "<function>: not
 * implemented yet in cmlx" through the error handler and returns 1 (an
 * empty handle, or false, where the function returns one); none computes
 * anything.  Freeing an (empty) handle succeeds. */
#include "capi/capi.h"

/* Each function below reports that it is not implemented yet and ignores
 * its arguments: it never computes a result. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

int mlx_distributed_all_gather(mlx_array *res, const mlx_array x, const mlx_distributed_group group,
                               const mlx_stream S) {
  return capi_not_impl(__func__);
}

int mlx_distributed_all_max(mlx_array *res, const mlx_array x, const mlx_distributed_group group,
                            const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_distributed_all_min(mlx_array *res, const mlx_array x, const mlx_distributed_group group,
                            const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_distributed_all_sum(mlx_array *res, const mlx_array x, const mlx_distributed_group group,
                            const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_distributed_recv(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype,
                         int src, const mlx_distributed_group group, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_distributed_recv_like(mlx_array *res, const mlx_array x, int src,
                              const mlx_distributed_group group, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_distributed_send(mlx_array *res, const mlx_array x, int dst,
                         const mlx_distributed_group group, const mlx_stream s) {
  return capi_not_impl(__func__);
}

int mlx_distributed_sum_scatter(mlx_array *res, const mlx_array x,
                                const mlx_distributed_group group, const mlx_stream s) {
  return capi_not_impl(__func__);
}
