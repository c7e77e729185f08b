/* Process groups (MLX's mx.distributed.Group) over the transports of
 * comm.h.
 *
 * A group is a world communicator from a transport, a sub-group made by
 * split, or the singleton group of this process alone (comm NULL, rank 0,
 * size 1), which init returns when no backend can be brought up and strict
 * is false.  Groups live until the process exits: nodes of the collective
 * primitives hold plain pointers to them (their parameter blocks are bytes,
 * copied by compile), so they are never freed.
 *
 * init(strict, backend) follows mlx/distributed/distributed.cpp: a backend
 * initialised once is returned by every later init of its name (and of
 * "any"); "any" tries ring, then mpi, then jaccl (nccl only with CUDA);
 * "nccl" and "jaccl" are not available in this build ("Cannot initialize
 * nccl distributed backend." with strict); another name is MLX's
 * ValueError. */
#ifndef CMLX_DISTRIBUTED_GROUP_H
#define CMLX_DISTRIBUTED_GROUP_H

#include <stdbool.h>

#include "distributed/comm.h"

typedef struct cm_group {
  cm_comm *comm; /* NULL: the singleton group */
  int rank, size;
} cm_group;

/* Whether a backend ("any", "ring", "mpi", "nccl", "jaccl") can be used in
 * this build; false for any other name. */
bool cm_dist_is_available(const char *backend);
/* The group of backend (see above); NULL with the error set. */
cm_group *cm_dist_init(bool strict, const char *backend);
/* The global group: init(false, "any"). */
cm_group *cm_dist_world(void);
/* Ranks with the same color form a group, ordered by key (key < 0: by
 * rank).  The singleton group: RuntimeError "Cannot split the distributed
 * group further."; a transport may refuse too (ring). */
cm_group *cm_group_split(cm_group *g, int color, int key);

#endif
