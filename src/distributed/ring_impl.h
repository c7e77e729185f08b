/* The ring transport's internals, shared by ring.c (set-up: hostfile,
 * sockets, the comm object) and ring_ops.c (the collectives).
 *
 * Rank r holds nconn TCP connections to its right neighbour (r + 1, which
 * it connected to) and nconn to its left neighbour (r - 1, which connected
 * to it).  A collective splits its buffer into lanes: lane j uses
 * connection j / 2 and runs around the ring to the right (j even: sends on
 * right[], receives on left[]) or to the left (j odd), so every socket has
 * one writer and one reader.  Sockets are non-blocking; every wait is a
 * poll bounded by the operation timeout, and any failure marks the ring
 * broken, so later collectives fail at once instead of desynchronising. */
#ifndef CMLX_DISTRIBUTED_RING_IMPL_H
#define CMLX_DISTRIBUTED_RING_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "distributed/comm.h"

#define RING_MAX_CONN 16
#define RING_SCRATCH (1u << 20) /* each lane's receive buffer for reductions */

typedef struct ring {
  cm_comm comm;
  int nconn;
  int right[RING_MAX_CONN], left[RING_MAX_CONN];
  int timeout_ms; /* longest wait without progress in a collective */
  bool verbose;
  /* a collective failed: the byte streams are out of step, so every socket
   * is shut down at once (the neighbours see it and fail in turn, round
   * the ring) and the first error is kept for every later call */
  atomic_bool broken;
  char first_err[256];
  pthread_mutex_t lock; /* one collective at a time */
  char *scratch[2 * RING_MAX_CONN];
} ring;

/* Mark the ring broken after a failure with message err (the first one
 * is kept) and shut every socket down. */
void cm_ring_break(ring *r, const char *err);

/* The collectives (comm.h's table). */
int cm_ring_all_reduce(cm_comm *c, const void *in, void *out, size_t count, cm_dtype dt,
                       cm_reduce_op op);
int cm_ring_all_gather(cm_comm *c, const void *in, void *out, size_t bytes);
int cm_ring_reduce_scatter(cm_comm *c, const void *in, void *out, size_t count, cm_dtype dt,
                           cm_reduce_op op);
int cm_ring_send(cm_comm *c, const void *buf, size_t bytes, int dst);
int cm_ring_recv(cm_comm *c, void *buf, size_t bytes, int src);

#endif
