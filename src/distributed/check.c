/* The collectives with the optional agreement check (see check.h). */
#include "distributed/check.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define MAGIC 0x434d4443u /* "CMDC": a descriptor, not payload bytes */

enum { F_ALL_REDUCE = 1, F_ALL_GATHER, F_REDUCE_SCATTER, F_SEND };

/* 16 bytes on the wire, the same on every rank (all little-endian hosts
 * in practice; a mismatch of byte order reads as "out of step") */
typedef struct desc {
  uint32_t magic;
  uint8_t family, op, dtype, pad;
  uint64_t count;
} desc;
_Static_assert(sizeof(desc) == 16, "the descriptor is 16 bytes");

bool cm_dist_check_enabled(void) {
  static int enabled = -1; /* benign race: every thread computes the same */
  if (enabled < 0) {
    const char *v = getenv("CMLX_DIST_CHECK");
    enabled = v && !strcmp(v, "1");
  }
  return enabled;
}

static const char *op_name(const desc *d) {
  switch (d->family) {
  case F_ALL_REDUCE:
    return d->op == CM_REDUCE_SUM   ? "all_sum"
           : d->op == CM_REDUCE_MAX ? "all_max"
           : d->op == CM_REDUCE_MIN ? "all_min"
                                    : "all_reduce";
  case F_ALL_GATHER: return "all_gather";
  case F_REDUCE_SCATTER: return d->op == CM_REDUCE_SUM ? "sum_scatter" : "reduce_scatter";
  case F_SEND: return "send";
  default: return "?";
  }
}

static desc describe(int family, int op, cm_dtype dt, size_t count) {
  return (desc){MAGIC, (uint8_t)family, (uint8_t)op, (uint8_t)dt, 0, (uint64_t)count};
}

static bool sane(const desc *d) { return d->magic == MAGIC && d->dtype < CM_NUM_DTYPES; }

/* "3 float32 elements" */
static void what(char *buf, size_t n, const desc *d) {
  snprintf(buf, n, "%" PRIu64 " %s element%s", d->count, cm_dtype_name((cm_dtype)d->dtype),
           d->count == 1 ? "" : "s");
}

static int out_of_step(const char *name, int rank) {
  return cm_error(CM_ERR_RUNTIME,
                  "[distributed] %s: rank %d sent something that is not a collective's "
                  "descriptor; the ranks are out of step (is CMLX_DIST_CHECK=1 set on every "
                  "rank?)",
                  name, rank);
}

/* Every rank's descriptor, compared with rank 0's: the same verdict and
 * message on every rank, and no payload moved yet. */
static int agree(cm_comm *c, const desc *mine) {
  if (c->size == 1 || !cm_dist_check_enabled()) return 0;
  desc stack[16], *all = c->size <= 16 ? stack : malloc(sizeof(desc) * (size_t)c->size);
  if (!all) return cm_error(CM_ERR_MEMORY, "[distributed] Out of memory.");
  int rc = c->ops->all_gather(c, mine, all, sizeof *mine);
  for (int k = 0; !rc && k < c->size; k++) {
    const desc *a = &all[0], *b = &all[k];
    if (!sane(b)) {
      rc = out_of_step(op_name(mine), k);
    } else if (a->family != b->family || a->op != b->op) {
      rc = cm_error(CM_ERR_RUNTIME,
                    "[distributed] The ranks call different collectives: rank 0 calls %s, "
                    "rank %d calls %s.",
                    op_name(a), k, op_name(b));
    } else if (a->dtype != b->dtype || a->count != b->count) {
      char wa[96], wb[96];
      what(wa, sizeof wa, a), what(wb, sizeof wb, b);
      rc = cm_error(CM_ERR_RUNTIME, "[distributed] %s: rank 0 has %s, rank %d has %s.", op_name(a),
                    wa, k, wb);
    }
  }
  if (all != stack) free(all);
  return rc;
}

int cm_comm_all_reduce(cm_comm *c, const void *in, void *out, size_t count, cm_dtype dt,
                       cm_reduce_op op) {
  desc d = describe(F_ALL_REDUCE, op, dt, count);
  return agree(c, &d) ? -1 : !count ? 0 : c->ops->all_reduce(c, in, out, count, dt, op);
}

int cm_comm_all_gather(cm_comm *c, const void *in, void *out, size_t count, cm_dtype dt) {
  desc d = describe(F_ALL_GATHER, 0, dt, count);
  return agree(c, &d) ? -1 : !count ? 0 : c->ops->all_gather(c, in, out, count * cm_dtype_size(dt));
}

int cm_comm_reduce_scatter(cm_comm *c, const void *in, void *out, size_t count, cm_dtype dt,
                           cm_reduce_op op) {
  desc d = describe(F_REDUCE_SCATTER, op, dt, count);
  return agree(c, &d) ? -1 : !count ? 0 : c->ops->reduce_scatter(c, in, out, count, dt, op);
}

int cm_comm_send(cm_comm *c, const void *buf, size_t count, cm_dtype dt, int dst) {
  if (cm_dist_check_enabled()) {
    desc d = describe(F_SEND, 0, dt, count);
    if (c->ops->send(c, &d, sizeof d, dst)) return -1;
  }
  return c->ops->send(c, buf, count * cm_dtype_size(dt), dst);
}

/* Read and drop bytes the sender sent: the stream stays in step. */
static int drain(cm_comm *c, uint64_t bytes, int src) {
  size_t chunk = 1u << 20;
  char *tmp = malloc(chunk);
  if (!tmp) return cm_error(CM_ERR_MEMORY, "[distributed] Out of memory.");
  int rc = 0;
  while (!rc && bytes) {
    size_t n = bytes < chunk ? (size_t)bytes : chunk;
    rc = c->ops->recv(c, tmp, n, src);
    bytes -= n;
  }
  free(tmp);
  return rc;
}

int cm_comm_recv(cm_comm *c, void *buf, size_t count, cm_dtype dt, int src) {
  if (cm_dist_check_enabled()) {
    desc theirs;
    if (c->ops->recv(c, &theirs, sizeof theirs, src)) return -1;
    if (!sane(&theirs) || theirs.family != F_SEND) return out_of_step("recv", src);
    if (theirs.dtype != (uint8_t)dt || theirs.count != (uint64_t)count) {
      desc mine = describe(F_SEND, 0, dt, count);
      char wa[96], wb[96];
      what(wa, sizeof wa, &theirs), what(wb, sizeof wb, &mine);
      if (drain(c, theirs.count * cm_dtype_size((cm_dtype)theirs.dtype), src)) return -1;
      return cm_error(CM_ERR_RUNTIME, "[distributed] recv: rank %d sent %s, rank %d expected %s.",
                      src, wa, c->rank, wb);
    }
  }
  return c->ops->recv(c, buf, count * cm_dtype_size(dt), src);
}
