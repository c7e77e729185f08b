/* The collective primitives (MLX's mlx/distributed/primitives.h):
 * AllReduce(op), AllGather, ReduceScatter (sum), Send(dst), Recv(src).
 * Their CPU kernels hand flat buffers to the group's transport
 * (distributed/comm.h).
 *
 *   AllReduce   vjp: the cotangent itself (MLX's rule, for every op);
 *               jvp: the same reduction of the tangent; vmap: the same
 *               reduction, batch axis unchanged
 *   AllGather   vjp: this rank's block of the cotangent along axis 0;
 *               jvp: all_gather of the tangent; vmap: all_gather, batch
 *               axis unchanged (as MLX)
 *   Send        vmap: send of the batched array; no derivatives
 *   Recv, ReduceScatter   no rules (errors naming the primitive) */
#ifndef CMLX_PRIMITIVES_DISTRIBUTED_H
#define CMLX_PRIMITIVES_DISTRIBUTED_H

#include "distributed/group.h"
#include "primitives/primitive.h"

typedef struct cm_dist_params {
  cm_group *group; /* groups live until exit (distributed/group.h) */
  int32_t op;      /* cm_reduce_op for AllReduce and ReduceScatter */
  int32_t peer;    /* Send's dst, Recv's src */
} cm_dist_params;
CM_PARAMS_ACCESSOR(cm_dist_params, cm_dist_params_of)

extern const cm_prim cm_prim_all_reduce;
extern const cm_prim cm_prim_all_gather;
extern const cm_prim cm_prim_reduce_scatter;
extern const cm_prim cm_prim_send;
extern const cm_prim cm_prim_recv;

#endif
