/* The ring's collectives over the connections ring.c sets up (see
 * ring_impl.h).
 *
 * all_reduce: small buffers take the latency-optimal path (ring all-gather
 * of whole buffers, size - 1 steps, then every rank reduces the blocks in
 * rank order); large ones are split into lanes (up to two per
 * connection, one each way round the ring), and each lane runs a
 * reduce-scatter and an all-gather over size segments of its part, sending
 * one segment while it receives and reduces another, reductions applied as
 * the bytes arrive.  Each segment is reduced along one path and then copied
 * to every rank, so all ranks get identical bits. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/error.h"
#include "distributed/comm.h"
#include "distributed/ring_impl.h"

#define SMALL_BYTES (128u << 10) /* all_reduce below this: gather, then reduce */
#define MIN_LANE_BYTES (256u << 10)
#define MAX_IO ((size_t)1 << 30)

/* One lane's part of a collective.  Segment k (k = 0 .. size-1) starts at
 * base + k * stride elements and holds min(len, total - k * stride)
 * elements (none past total). */
typedef struct lane {
  ring *r;
  int conn, dir; /* dir +1: to the right */
  char *base;
  const char *src; /* the input, laid out as base (== base: reduced in place) */
  size_t esz, stride, len, total;
  cm_dtype dt;
  cm_reduce_op op;
  char *scratch;
  char err[256];
} lane;

static int lane_fail(lane *l, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(l->err, sizeof l->err, fmt, ap);
  va_end(ap);
  return -1;
}

static int mod(int a, int n) { return ((a % n) + n) % n; }

/* the length of the part of total that starts at off, parts being chunk long */
static size_t part_len(size_t total, size_t off, size_t chunk) {
  return off >= total ? 0 : total - off < chunk ? total - off : chunk;
}

static size_t seg_len(const lane *l, int k) {
  size_t start = (size_t)k * l->stride;
  if (start >= l->total) return 0;
  size_t left = l->total - start;
  return left < l->len ? left : l->len;
}

/* acc[e] = src[e] op received[e] for the completed elements of the scratch
 * ring in [*reduced, upto) (src NULL: acc holds the input already); the
 * input is copied piece by piece, while the piece is in cache */
static void reduce_ready(lane *l, char *acc, const char *src, size_t *reduced, size_t upto) {
  upto -= upto % l->esz;
  while (*reduced < upto) {
    size_t pos = *reduced % RING_SCRATCH, n = upto - *reduced;
    if (n > RING_SCRATCH - pos) n = RING_SCRATCH - pos;
    if (src && src != acc) memcpy(acc + *reduced, src + *reduced, n);
    cm_comm_reduce_into(acc + *reduced, l->scratch + pos, n / l->esz, l->dt, l->op);
    *reduced += n;
  }
}

static int peer_error(lane *l, int peer, const char *what, int err) {
  if (err == 0)
    return lane_fail(l, "[ring] Rank %d closed the connection (it exited or failed).", peer);
  return lane_fail(l, "[ring] %s rank %d failed: %s.", what, peer, strerror(err));
}

/* Send slen bytes on sfd while receiving rlen bytes from rfd (into rb, or,
 * with acc, reduced with acc_src into acc through the scratch ring),
 * polling both. */
static int xfer(lane *l, int sfd, int speer, const char *sb, size_t slen, int rfd, int rpeer,
                char *rb, size_t rlen, char *acc, const char *acc_src) {
  size_t sdone = 0, rdone = 0, reduced = 0;
  int timeout = l->r->timeout_ms;
  while (sdone < slen || rdone < rlen) {
    struct pollfd p[2];
    int n = 0, si = -1, ri = -1;
    if (sdone < slen) p[si = n++] = (struct pollfd){sfd, POLLOUT, 0};
    if (rdone < rlen) p[ri = n++] = (struct pollfd){rfd, POLLIN, 0};
    int k = poll(p, (nfds_t)n, timeout);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return lane_fail(l, "[ring] poll failed: %s.", strerror(errno));
    if (k == 0)
      return lane_fail(l,
                       "[ring] Timed out after %d s waiting for rank %d (set "
                       "CMLX_RING_OP_TIMEOUT to wait longer).",
                       timeout / 1000, rdone < rlen ? rpeer : speer);
    if (si >= 0 && p[si].revents) {
      size_t want = slen - sdone < MAX_IO ? slen - sdone : MAX_IO;
      ssize_t w = send(sfd, sb + sdone, want, MSG_NOSIGNAL);
      if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        return peer_error(l, speer, "Sending to", errno);
      if (w > 0) sdone += (size_t)w;
    }
    if (ri >= 0 && p[ri].revents) {
      char *dst;
      size_t want = rlen - rdone;
      if (acc) {
        size_t pos = rdone % RING_SCRATCH, room = RING_SCRATCH - (rdone - reduced);
        if (want > RING_SCRATCH - pos) want = RING_SCRATCH - pos;
        if (want > room) want = room;
        dst = l->scratch + pos;
      } else {
        dst = rb + rdone;
        if (want > MAX_IO) want = MAX_IO;
      }
      ssize_t got = recv(rfd, dst, want, 0);
      if (got == 0) return peer_error(l, rpeer, "Receiving from", 0);
      if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        return peer_error(l, rpeer, "Receiving from", errno);
      if (got > 0) {
        rdone += (size_t)got;
        if (acc) reduce_ready(l, acc, acc_src, &reduced, rdone);
      }
    }
  }
  return 0;
}

/* size - 1 ring steps: send segment (rank + h - i*dir), receive segment
 * (rank + h - (i+1)*dir) from the previous rank, reducing it with the
 * input's when reduce is set.  Ends holding segment rank + h + dir
 * (reduced: complete).  A reduce-scatter reads each input segment once,
 * sending the first from src and reducing src with what arrives into base
 * for the others, so base needs no copy of the input beforehand. */
static int lane_steps(lane *l, int h, bool reduce) {
  ring *r = l->r;
  int n = r->comm.size, me = r->comm.rank, d = l->dir;
  int sfd = d > 0 ? r->right[l->conn] : r->left[l->conn];
  int rfd = d > 0 ? r->left[l->conn] : r->right[l->conn];
  int speer = mod(me + d, n), rpeer = mod(me - d, n);
  for (int i = 0; i < n - 1; i++) {
    int ks = mod(me + h - i * d, n), kr = mod(me + h - (i + 1) * d, n);
    size_t so = (size_t)ks * l->stride * l->esz, ro = (size_t)kr * l->stride * l->esz;
    const char *sp = (reduce && i == 0 ? l->src : l->base) + so;
    char *rp = l->base + ro;
    if (xfer(l, sfd, speer, sp, seg_len(l, ks) * l->esz, rfd, rpeer, rp, seg_len(l, kr) * l->esz,
             reduce ? rp : NULL, reduce ? l->src + ro : NULL))
      return -1;
  }
  return 0;
}

typedef enum { JOB_ALL_REDUCE, JOB_ALL_GATHER, JOB_REDUCE_SCATTER } job_kind;

typedef struct lane_job {
  lane l;
  job_kind kind;
  int rc;
} lane_job;

static void *run_lane(void *arg) {
  lane_job *j = arg;
  lane *l = &j->l;
  switch (j->kind) {
  case JOB_ALL_REDUCE: j->rc = lane_steps(l, 0, true) || lane_steps(l, l->dir, false); break;
  case JOB_ALL_GATHER: j->rc = lane_steps(l, 0, false); break;
  case JOB_REDUCE_SCATTER: j->rc = lane_steps(l, -l->dir, true); break;
  }
  if (j->rc) cm_ring_break(l->r, l->err); /* unblocks the other lanes too */
  return NULL;
}

/* Run n lane jobs (the first on this thread); 0, or -1 with the first
 * lane's error set.  Any failure breaks the ring. */
static int run_lanes(ring *r, lane_job *jobs, int n) {
  pthread_t th[2 * RING_MAX_CONN];
  bool started[2 * RING_MAX_CONN] = {false};
  for (int i = 0; i < n; i++) {
    jobs[i].l.r = r;
    jobs[i].l.conn = i / 2;
    jobs[i].l.dir = i % 2 ? -1 : 1;
    jobs[i].l.err[0] = 0;
    jobs[i].rc = 0;
    if (jobs[i].kind != JOB_ALL_GATHER && !r->scratch[i]) {
      r->scratch[i] = malloc(RING_SCRATCH);
      if (!r->scratch[i]) return cm_error(CM_ERR_MEMORY, "[ring] Out of memory.");
    }
    jobs[i].l.scratch = r->scratch[i];
  }
  for (int i = 1; i < n; i++) started[i] = !pthread_create(&th[i], NULL, run_lane, &jobs[i]);
  run_lane(&jobs[0]);
  for (int i = 1; i < n; i++) {
    if (started[i]) pthread_join(th[i], NULL);
    else run_lane(&jobs[i]);
  }
  for (int i = 0; i < n; i++)
    if (jobs[i].rc) return cm_error(CM_ERR_RUNTIME, "%s", r->first_err);
  return 0;
}

static int lanes_for(const ring *r, size_t bytes_per_rank) {
  size_t n = bytes_per_rank / MIN_LANE_BYTES;
  size_t most = 2 * (size_t)r->nconn;
  if (n > most) n = most;
  return n < 1 ? 1 : (int)n;
}

static ring *enter(cm_comm *c) {
  ring *r = c->impl;
  pthread_mutex_lock(&r->lock);
  if (atomic_load(&r->broken)) {
    pthread_mutex_unlock(&r->lock);
    cm_error(CM_ERR_RUNTIME,
             "[ring] An earlier collective failed, so the group cannot be used "
             "any more: %s",
             r->first_err);
    return NULL;
  }
  return r;
}

static int leave(ring *r, int rc) {
  pthread_mutex_unlock(&r->lock);
  return rc;
}

/* out = the concatenation of every rank's bytes (r locked) */
static int gather_locked(ring *r, const void *in, void *out, size_t bytes) {
  int n = r->comm.size;
  if (in != (char *)out + (size_t)r->comm.rank * bytes)
    memcpy((char *)out + (size_t)r->comm.rank * bytes, in, bytes);
  if (n == 1 || bytes == 0) return 0;
  int nl = lanes_for(r, bytes);
  lane_job jobs[2 * RING_MAX_CONN];
  size_t chunk = (bytes + (size_t)nl - 1) / (size_t)nl;
  for (int i = 0; i < nl; i++) {
    size_t off = (size_t)i * chunk, len = part_len(bytes, off, chunk);
    jobs[i] = (lane_job){.kind = JOB_ALL_GATHER};
    jobs[i].l = (lane){.base = (char *)out + off,
                       .esz = 1,
                       .stride = bytes,
                       .len = len,
                       .total = (size_t)(n - 1) * bytes + len};
  }
  return run_lanes(r, jobs, nl);
}

int cm_ring_all_gather(cm_comm *c, const void *in, void *out, size_t bytes) {
  ring *r = enter(c);
  return r ? leave(r, gather_locked(r, in, out, bytes)) : -1;
}

static int small_all_reduce(ring *r, const void *in, void *out, size_t count, cm_dtype dt,
                            cm_reduce_op op) {
  size_t esz = cm_dtype_size(dt), bytes = count * esz;
  int n = r->comm.size;
  char *all = malloc(bytes * (size_t)n);
  if (!all) return cm_error(CM_ERR_MEMORY, "[ring] Out of memory.");
  int rc = gather_locked(r, in, all, bytes);
  if (!rc) {
    memcpy(out, all, bytes);
    for (int k = 1; k < n; k++) cm_comm_reduce_into(out, all + (size_t)k * bytes, count, dt, op);
  }
  free(all);
  return rc;
}

int cm_ring_all_reduce(cm_comm *c, const void *in, void *out, size_t count, cm_dtype dt,
                       cm_reduce_op op) {
  ring *r = enter(c);
  if (!r) return -1;
  size_t esz = cm_dtype_size(dt), bytes = count * esz;
  int n = r->comm.size;
  if (n == 1 || count == 0) {
    if (in != out) memmove(out, in, bytes);
    return leave(r, 0);
  }
  if (bytes < SMALL_BYTES) return leave(r, small_all_reduce(r, in, out, count, dt, op));
  int nl = lanes_for(r, bytes / (size_t)n);
  lane_job jobs[2 * RING_MAX_CONN];
  size_t chunk = (count + (size_t)nl - 1) / (size_t)nl;
  for (int i = 0; i < nl; i++) {
    size_t off = (size_t)i * chunk;
    size_t len = part_len(count, off, chunk);
    size_t seg = (len + (size_t)n - 1) / (size_t)n;
    jobs[i] = (lane_job){.kind = JOB_ALL_REDUCE};
    jobs[i].l = (lane){.base = (char *)out + off * esz,
                       .src = (const char *)in + off * esz,
                       .esz = esz,
                       .stride = seg,
                       .len = seg,
                       .total = len,
                       .dt = dt,
                       .op = op};
  }
  return leave(r, run_lanes(r, jobs, nl));
}

int cm_ring_reduce_scatter(cm_comm *c, const void *in, void *out, size_t count, cm_dtype dt,
                           cm_reduce_op op) {
  ring *r = enter(c);
  if (!r) return -1;
  size_t esz = cm_dtype_size(dt), bytes = count * esz;
  int n = r->comm.size, me = r->comm.rank;
  char *work = malloc(bytes ? bytes * (size_t)n : 1);
  if (!work) return leave(r, cm_error(CM_ERR_MEMORY, "[ring] Out of memory."));
  if (n == 1) memcpy(work, in, bytes);
  int rc = 0;
  if (n > 1 && count) {
    int nl = lanes_for(r, bytes);
    lane_job jobs[2 * RING_MAX_CONN];
    size_t chunk = (count + (size_t)nl - 1) / (size_t)nl;
    for (int i = 0; i < nl; i++) {
      size_t off = (size_t)i * chunk;
      size_t len = part_len(count, off, chunk);
      jobs[i] = (lane_job){.kind = JOB_REDUCE_SCATTER};
      jobs[i].l = (lane){.base = work + off * esz,
                         .src = (const char *)in + off * esz,
                         .esz = esz,
                         .stride = count,
                         .len = len,
                         .total = (size_t)(n - 1) * count + len,
                         .dt = dt,
                         .op = op};
    }
    rc = run_lanes(r, jobs, nl);
  }
  if (!rc) memcpy(out, work + (size_t)me * bytes, bytes);
  free(work);
  return leave(r, rc);
}

/* send / recv: to a neighbour only (as MLX's ring), the bytes split over
 * the connections */
static int neighbour(ring *r, int peer, bool sending, int **fds, const char *what) {
  int n = r->comm.size, me = r->comm.rank;
  int right = mod(me + 1, n), left = mod(me - 1, n);
  /* with two ranks both neighbours are one rank: send on right[], receive on
   * left[], which are the two ends of the same connections */
  if (sending ? peer == right : peer == left) *fds = sending ? r->right : r->left;
  else if (sending ? peer == left : peer == right) *fds = sending ? r->left : r->right;
  else
    return cm_error(CM_ERR_RUNTIME,
                    "[ring] %s only supported %s direct neighbors but tried to %s %s %d %s %d",
                    what, sending ? "to" : "from", sending ? "send" : "recv",
                    sending ? "to" : "from", peer, sending ? "from" : "to", me);
  return 0;
}

static int point_to_point(cm_comm *c, char *buf, size_t bytes, int peer, bool sending) {
  ring *r = enter(c);
  if (!r) return -1;
  int *fds = NULL;
  if (neighbour(r, peer, sending, &fds, sending ? "Send" : "Recv")) return leave(r, -1);
  lane l = {.r = r};
  size_t part = (bytes + (size_t)r->nconn - 1) / (size_t)r->nconn;
  if (part < 1024) part = 1024;
  for (int i = 0; i < r->nconn && (size_t)i * part < bytes; i++) {
    size_t off = (size_t)i * part, len = part_len(bytes, off, part);
    int rc = sending ? xfer(&l, fds[i], peer, buf + off, len, -1, peer, NULL, 0, NULL, NULL)
                     : xfer(&l, -1, peer, NULL, 0, fds[i], peer, buf + off, len, NULL, NULL);
    if (rc) {
      cm_ring_break(r, l.err);
      return leave(r, cm_error(CM_ERR_RUNTIME, "%s", r->first_err));
    }
  }
  return leave(r, 0);
}

int cm_ring_send(cm_comm *c, const void *buf, size_t bytes, int dst) {
  return point_to_point(c, (char *)buf, bytes, dst, true);
}

int cm_ring_recv(cm_comm *c, void *buf, size_t bytes, int src) {
  return point_to_point(c, buf, bytes, src, false);
}
