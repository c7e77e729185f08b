#ifndef CMLX_DISTRIBUTED_COMM_H
#define CMLX_DISTRIBUTED_COMM_H
/* The contract between the distributed layer (groups, primitives, Python and
 * C API) and its transports (ring over TCP, MPI).  A transport only moves and
 * reduces flat buffers; shapes, dtypes checks, laziness and autodiff live
 * above it.  Every function returns 0 on success or -1 after cm_error(), and
 * never aborts: a dead or missing peer is an error within the transport's
 * timeout, not a hang. */
#include <stdbool.h>
#include <stddef.h>

#include "core/backend.h"
#include "core/dtype.h"
/* The reduction codes are the core's (cm_reduce_op of ops/reduce.h: a
 * transport is asked for CM_REDUCE_SUM, CM_REDUCE_MAX or CM_REDUCE_MIN
 * only); a second enum of the same name could not be included beside it. */
#include "ops/reduce.h"

typedef struct cm_comm cm_comm;

/* acc[i] = op(acc[i], x[i]) for n elements of dt: how a transport combines
 * a received block with its own.  The reduction is the backend's, so that
 * the ring and MPI give the same bits for every dtype; the transports
 * move host memory, so it is the CPU's.  Called once per block, not per
 * element. */
static inline void cm_comm_reduce_into(void *acc, const void *x, size_t n, cm_dtype dt,
                                       cm_reduce_op op) {
  cm_backend_for(CM_CPU)->reduce_into(acc, x, n, dt, (int)op);
}

typedef struct cm_comm_ops {
  const char *name; /* "ring", "mpi" */
  /* out[i] = op over ranks of in[i], count elements of dtype; in == out allowed. */
  int (*all_reduce)(cm_comm *c, const void *in, void *out, size_t count, cm_dtype dt,
                    cm_reduce_op op);
  /* out = concatenation over ranks (rank order) of each rank's bytes. */
  int (*all_gather)(cm_comm *c, const void *in, void *out, size_t bytes);
  /* in holds size * count elements; rank r gets the reduction of block r. */
  int (*reduce_scatter)(cm_comm *c, const void *in, void *out, size_t count, cm_dtype dt,
                        cm_reduce_op op);
  int (*send)(cm_comm *c, const void *buf, size_t bytes, int dst);
  int (*recv)(cm_comm *c, void *buf, size_t bytes, int src);
  /* MLX's Group.split: ranks with equal color form a group, ordered by key
   * (key < 0: by current rank). */
  int (*split)(cm_comm *c, int color, int key, cm_comm **out);
  void (*free)(cm_comm *c);
} cm_comm_ops;

struct cm_comm {
  const cm_comm_ops *ops;
  int rank, size;
  void *impl; /* the transport's own state */
};

/* Transport entry points.  *_available says whether the transport can be used
 * in this process (for mx.distributed.is_available); *_init creates the world
 * communicator from the environment (ring: MLX_RANK, MLX_HOSTFILE; mpi: the
 * launcher's variables, libmpi loaded at run time, MPI_LIBNAME honoured).
 * With strict false, an unusable transport returns 0 and *out = NULL, so
 * backend='any' can fall back; with strict true it is an error. */
bool cm_ring_available(void);
int cm_ring_init(bool strict, cm_comm **out);
bool cm_mpi_available(void);
int cm_mpi_init(bool strict, cm_comm **out);

#endif
