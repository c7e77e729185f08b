/* The collectives as the kernels call them: the transport's operation,
 * preceded, when CMLX_DIST_CHECK=1, by a check that every rank combines the
 * same thing.
 *
 * Without it a rank that all_sums 3 float32 elements against a rank that
 * all_sums 5 (or int32) gets garbage, or the byte streams fall out of step.
 * With it each collective first all-gathers a 16-byte descriptor (which
 * operation, dtype, element count) from every rank; on a mismatch every
 * rank raises the same RuntimeError, naming rank 0's and the first
 * differing rank's, before any payload moves, so the group stays usable.
 * send/recv: the sender sends its descriptor ahead of the payload; a
 * receiver expecting something else drains the payload (the stream stays in
 * step) and raises; the sender is not told (as with MPI).
 *
 * It costs one more small collective per call (a round of latency: +40-70 %
 * on a tiny ring all_sum; nothing measurable at megabytes; see
 * docs/distributed.md), so it is off by default.  Every rank must run with the same setting: the
 * launchers pass the environment on. */
#ifndef CMLX_DISTRIBUTED_CHECK_H
#define CMLX_DISTRIBUTED_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "distributed/comm.h"

/* CMLX_DIST_CHECK is "1" (read once) */
bool cm_dist_check_enabled(void);

int cm_comm_all_reduce(cm_comm *c, const void *in, void *out, size_t count, cm_dtype dt,
                       cm_reduce_op op);
/* count elements of dt per rank */
int cm_comm_all_gather(cm_comm *c, const void *in, void *out, size_t count, cm_dtype dt);
/* count elements of dt out per rank (size * count in) */
int cm_comm_reduce_scatter(cm_comm *c, const void *in, void *out, size_t count, cm_dtype dt,
                           cm_reduce_op op);
int cm_comm_send(cm_comm *c, const void *buf, size_t count, cm_dtype dt, int dst);
int cm_comm_recv(cm_comm *c, void *buf, size_t count, cm_dtype dt, int src);

#endif
