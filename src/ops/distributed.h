/* mx.distributed's collectives (MLX 0.32's mlx/distributed/ops.cpp): lazy
 * ops like every other.  group NULL means the global group
 * (cm_dist_world(): init(strict=false, backend="any")).
 *
 * On a group of one process all_sum / all_max / all_min / all_gather /
 * sum_scatter return x itself (no node), and send / recv are MLX's
 * ValueErrors "Cannot send to a singleton group" / "Cannot recv from a
 * singleton group".  all_gather concatenates along axis 0 (a 0-d x gives
 * shape (size,)); sum_scatter needs x.shape[0] divisible by the size
 * (ValueError "[sum_scatter] Invalid shape=..." otherwise); send's dst and
 * recv's src must be ranks of the group ("Invalid destination=3 for a
 * group of size 2").  send returns an array holding x's values whose
 * evaluation performs the send. */
#ifndef CMLX_OPS_DISTRIBUTED_H
#define CMLX_OPS_DISTRIBUTED_H

#include "distributed/group.h"
#include "ops/common.h"

cm_array *cm_dist_all_sum(cm_array *x, cm_group *g, cm_stream s);
cm_array *cm_dist_all_max(cm_array *x, cm_group *g, cm_stream s);
cm_array *cm_dist_all_min(cm_array *x, cm_group *g, cm_stream s);
cm_array *cm_dist_all_gather(cm_array *x, cm_group *g, cm_stream s);
cm_array *cm_dist_sum_scatter(cm_array *x, cm_group *g, cm_stream s);
cm_array *cm_dist_send(cm_array *x, int dst, cm_group *g, cm_stream s);
cm_array *cm_dist_recv(int ndim, const int32_t *shape, cm_dtype dtype, int src, cm_group *g,
                       cm_stream s);
cm_array *cm_dist_recv_like(cm_array *x, int src, cm_group *g, cm_stream s);

#endif
