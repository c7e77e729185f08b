/* The ring transport over TCP: set-up (see ring_impl.h for the design).
 *
 * Configuration, as MLX's ring backend: MLX_RANK (this process's rank) and
 * MLX_HOSTFILE (JSON: one list per rank of the "ip:port" addresses that
 * rank listens on; every rank lists the same number, one connection per
 * address; a single rank needs no sockets).  MLX_RING_VERBOSE logs the
 * set-up to stderr.  cmlx adds two bounds: CMLX_RING_TIMEOUT (seconds,
 * default 60) for the neighbours to connect, CMLX_RING_OP_TIMEOUT
 * (seconds, default 600) for a collective to make progress.
 *
 * Each rank listens on its own addresses only (and only until its left
 * neighbour has connected), connects to each address of its right
 * neighbour, retrying until the deadline, and accepts one connection per
 * address; a 16-byte greeting checks that the peer is the rank expected. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "distributed/ring_impl.h"

#ifdef CMLX_HAVE_CJSON
#include <cJSON.h>
#endif

#define GREETING_MAGIC 0x474e5243u /* "CRNG" */

typedef struct addr {
  struct sockaddr_storage sa;
  socklen_t len;
  char text[128];
} addr;

typedef struct hostfile {
  int nranks, per_rank;
  addr *a; /* nranks * per_rank */
} hostfile;

static void logf_(const ring *r, const char *fmt, const char *s, int i) {
  if (!r->verbose) return;
  fprintf(stderr, "[ring] Rank %d ", r->comm.rank);
  fprintf(stderr, fmt, s, i);
  fputc('\n', stderr);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int env_seconds(const char *name, int dflt) {
  const char *v = getenv(name);
  if (!v || !*v) return dflt;
  char *end;
  long s = strtol(v, &end, 10);
  return *end || s <= 0 || s > 86400 * 365 ? dflt : (int)s;
}

/* ---- the hostfile ---------------------------------------------------- */

static int parse_addr(const char *text, addr *out, const char *path) {
  const char *colon = strrchr(text, ':');
  char host[128];
  size_t hl = colon ? (size_t)(colon - text) : 0;
  if (!colon || hl == 0 || hl >= sizeof host || !colon[1])
    return cm_error(CM_ERR_RUNTIME, "[ring] Can't parse address %s in the hostfile %s", text, path);
  memcpy(host, text, hl);
  host[hl] = 0;
  if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
    memmove(host, host + 1, hl - 2);
    host[hl - 2] = 0;
  }
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
  int e = getaddrinfo(host, colon + 1, &hints, &res);
  if (e || !res)
    return cm_error(CM_ERR_RUNTIME, "[ring] Can't parse address %s in the hostfile %s (%s)", text,
                    path, gai_strerror(e));
  memcpy(&out->sa, res->ai_addr, res->ai_addrlen);
  out->len = res->ai_addrlen;
  snprintf(out->text, sizeof out->text, "%s", text);
  freeaddrinfo(res);
  return 0;
}

#ifdef CMLX_HAVE_CJSON
static int bad_hostfile(const char *path, const char *why) {
  return cm_error(CM_ERR_RUNTIME,
                  "[ring] The hostfile %s %s: it should be a JSON list with, for each rank, a "
                  "list of the \"ip:port\" addresses it listens on.",
                  path, why);
}

static int load_hostfile(const char *path, hostfile *h) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return cm_error(CM_ERR_RUNTIME, "[ring] Couldn't open the hostfile %s: %s", path,
                    strerror(errno));
  char *text = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len + 4096 + 1 > cap) {
      cap = cap ? 2 * cap : 8192;
      char *t = realloc(text, cap);
      if (!t) break;
      text = t;
    }
    size_t got = fread(text + len, 1, cap - len - 1, f);
    len += got;
    if (got == 0) break;
  }
  fclose(f);
  if (!text) return cm_error(CM_ERR_MEMORY, "[ring] Out of memory.");
  text[len] = 0;
  cJSON *root = cJSON_Parse(text);
  free(text);
  int rc = 0;
  if (!root) {
    rc = bad_hostfile(path, "is not valid JSON");
  } else if (!cJSON_IsArray(root) || cJSON_GetArraySize(root) < 1) {
    rc = bad_hostfile(path, "is not a non-empty list");
  } else {
    h->nranks = cJSON_GetArraySize(root);
    cJSON *first = cJSON_GetArrayItem(root, 0);
    h->per_rank = cJSON_IsArray(first) ? cJSON_GetArraySize(first) : 0;
    if (h->per_rank < 1 || h->per_rank > RING_MAX_CONN) {
      rc = bad_hostfile(path, "has a rank without addresses (or more than 16)");
    } else if (!(h->a = calloc((size_t)h->nranks * (size_t)h->per_rank, sizeof(addr)))) {
      rc = cm_error(CM_ERR_MEMORY, "[ring] Out of memory.");
    }
    for (int i = 0; !rc && i < h->nranks; i++) {
      cJSON *node = cJSON_GetArrayItem(root, i);
      if (!cJSON_IsArray(node) || cJSON_GetArraySize(node) != h->per_rank) {
        rc = bad_hostfile(path, "gives the ranks different numbers of addresses");
        break;
      }
      for (int j = 0; !rc && j < h->per_rank; j++) {
        cJSON *s = cJSON_GetArrayItem(node, j);
        if (!cJSON_IsString(s)) rc = bad_hostfile(path, "has an address that is not a string");
        else rc = parse_addr(s->valuestring, &h->a[i * h->per_rank + j], path);
      }
    }
  }
  cJSON_Delete(root);
  if (rc) free(h->a);
  return rc;
}
#endif

/* ---- sockets --------------------------------------------------------- */

static int set_nonblocking(int fd) {
  int fl = fcntl(fd, F_GETFL, 0);
  return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int listen_on(const addr *a) {
  int fd = socket(a->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
  if (fd < 0)
    return cm_error(CM_ERR_RUNTIME, "[ring] Couldn't create a socket: %s", strerror(errno));
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, (const struct sockaddr *)&a->sa, a->len) || listen(fd, 4) || set_nonblocking(fd)) {
    int e = errno;
    close(fd);
    return cm_error(CM_ERR_RUNTIME, "[ring] Couldn't listen on %s: %s", a->text, strerror(e));
  }
  return fd;
}

/* wait for fd to be ready for ev until the deadline: 1 ready, 0 timed out */
static int wait_fd(int fd, short ev, double deadline) {
  for (;;) {
    double left = deadline - now_s();
    if (left <= 0) return 0;
    struct pollfd p = {fd, ev, 0};
    int k = poll(&p, 1, (int)(left * 1000) + 1);
    if (k < 0 && errno == EINTR) continue;
    return k > 0 ? 1 : k;
  }
}

static int write_all(int fd, const void *b, size_t n, double deadline) {
  size_t done = 0;
  while (done < n) {
    ssize_t w = send(fd, (const char *)b + done, n - done, MSG_NOSIGNAL);
    if (w > 0) done += (size_t)w;
    else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (wait_fd(fd, POLLOUT, deadline) <= 0) return -1;
    } else return -1;
  }
  return 0;
}

static int read_all(int fd, void *b, size_t n, double deadline) {
  size_t done = 0;
  while (done < n) {
    ssize_t g = recv(fd, (char *)b + done, n - done, 0);
    if (g > 0) done += (size_t)g;
    else if (g < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (wait_fd(fd, POLLIN, deadline) <= 0) return -1;
    } else return -1;
  }
  return 0;
}

static void tune(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* One connection to a: retried until the deadline. */
static int connect_to(ring *r, const addr *a, double deadline, int peer) {
  double wait = 0.02;
  int last = 0;
  for (int attempt = 1;; attempt++) {
    int fd = socket(a->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
      return cm_error(CM_ERR_RUNTIME, "[ring] Couldn't create a socket: %s", strerror(errno));
    set_nonblocking(fd);
    int rc = connect(fd, (const struct sockaddr *)&a->sa, a->len);
    if (rc && errno == EINPROGRESS) {
      if (wait_fd(fd, POLLOUT, deadline) > 0) {
        socklen_t l = sizeof rc;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &rc, &l);
        errno = rc;
      } else {
        rc = -1;
        errno = ETIMEDOUT;
      }
    }
    if (!rc) return fd;
    last = errno;
    close(fd);
    logf_(r, "could not connect to %s (attempt %d), retrying", a->text, attempt);
    if (now_s() + wait > deadline)
      return cm_error(CM_ERR_RUNTIME,
                      "[ring] Rank %d couldn't connect to rank %d at %s within %d s (%s). Is "
                      "every rank started with the same hostfile? (CMLX_RING_TIMEOUT sets the "
                      "wait)",
                      r->comm.rank, peer, a->text, env_seconds("CMLX_RING_TIMEOUT", 60),
                      strerror(last));
    usleep((useconds_t)(wait * 1e6));
    if (wait < 0.5) wait *= 2;
  }
}

typedef struct greeting {
  uint32_t magic;
  int32_t rank, size, index;
} greeting;

static int connect_right(ring *r, const hostfile *h, double deadline) {
  int peer = (r->comm.rank + 1) % r->comm.size;
  for (int i = 0; i < r->nconn; i++) {
    const addr *a = &h->a[peer * h->per_rank + i];
    logf_(r, "connecting to %s (connection %d)", a->text, i);
    int fd = connect_to(r, a, deadline, peer);
    if (fd < 0) return -1;
    r->right[i] = fd;
    greeting g = {GREETING_MAGIC, r->comm.rank, r->comm.size, i};
    if (write_all(fd, &g, sizeof g, deadline))
      return cm_error(CM_ERR_RUNTIME, "[ring] Rank %d couldn't greet rank %d at %s", r->comm.rank,
                      peer, a->text);
  }
  return 0;
}

static int accept_left(ring *r, const hostfile *h, const int *listeners, double deadline) {
  int peer = (r->comm.rank + r->comm.size - 1) % r->comm.size;
  for (int i = 0; i < r->nconn; i++) {
    const addr *a = &h->a[r->comm.rank * h->per_rank + i];
    logf_(r, "accepting on %s (connection %d)", a->text, i);
    for (;;) {
      if (wait_fd(listeners[i], POLLIN, deadline) <= 0)
        return cm_error(CM_ERR_RUNTIME,
                        "[ring] Rank %d timed out after %d s waiting for rank %d to connect to "
                        "%s (CMLX_RING_TIMEOUT sets the wait)",
                        r->comm.rank, env_seconds("CMLX_RING_TIMEOUT", 60), peer, a->text);
      int fd = accept4(listeners[i], NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) continue;
      greeting g;
      if (read_all(fd, &g, sizeof g, deadline) || g.magic != GREETING_MAGIC) {
        close(fd); /* not one of ours: keep waiting */
        continue;
      }
      if (g.rank != peer || g.size != r->comm.size || g.index != i) {
        close(fd);
        return cm_error(CM_ERR_RUNTIME,
                        "[ring] Rank %d expected rank %d of %d on %s but rank %d of %d "
                        "connected: are two processes started with the same MLX_RANK?",
                        r->comm.rank, peer, r->comm.size, a->text, g.rank, g.size);
      }
      r->left[i] = fd;
      break;
    }
  }
  return 0;
}

/* ---- the comm object ------------------------------------------------- */

void cm_ring_break(ring *r, const char *err) {
  if (atomic_exchange(&r->broken, true)) return;
  snprintf(r->first_err, sizeof r->first_err, "%s", err);
  for (int i = 0; i < r->nconn; i++) {
    shutdown(r->right[i], SHUT_RDWR);
    shutdown(r->left[i], SHUT_RDWR);
  }
}

static int ring_split(cm_comm *c, int color, int key, cm_comm **out) {
  (void)c, (void)color, (void)key;
  *out = NULL;
  return cm_error(CM_ERR_RUNTIME, "[ring] Group split not supported.");
}

static void ring_free(cm_comm *c) {
  ring *r = c->impl;
  for (int i = 0; i < r->nconn; i++) {
    if (r->right[i] >= 0) close(r->right[i]);
    if (r->left[i] >= 0) close(r->left[i]);
  }
  for (int i = 0; i < 2 * RING_MAX_CONN; i++) free(r->scratch[i]);
  pthread_mutex_destroy(&r->lock);
  free(r);
}

static const cm_comm_ops ring_ops = {
    .name = "ring",
    .all_reduce = cm_ring_all_reduce,
    .all_gather = cm_ring_all_gather,
    .reduce_scatter = cm_ring_reduce_scatter,
    .send = cm_ring_send,
    .recv = cm_ring_recv,
    .split = ring_split,
    .free = ring_free,
};

static int connect_ring(ring *r, const hostfile *h) {
  double deadline = now_s() + env_seconds("CMLX_RING_TIMEOUT", 60);
  int listeners[RING_MAX_CONN];
  int n = 0, rc = 0;
  for (; n < r->nconn; n++) {
    listeners[n] = listen_on(&h->a[r->comm.rank * h->per_rank + n]);
    if (listeners[n] < 0) {
      rc = -1;
      break;
    }
  }
  if (!rc) rc = connect_right(r, h, deadline);
  if (!rc) rc = accept_left(r, h, listeners, deadline);
  for (int i = 0; i < n; i++) close(listeners[i]); /* nothing listens after set-up */
  for (int i = 0; !rc && i < r->nconn; i++) {
    tune(r->right[i]);
    tune(r->left[i]);
  }
  return rc;
}

bool cm_ring_available(void) {
#ifdef CMLX_HAVE_CJSON
  return true;
#else
  return false;
#endif
}

int cm_ring_init(bool strict, cm_comm **out) {
  *out = NULL;
  const char *path = getenv("MLX_HOSTFILE"), *rank_s = getenv("MLX_RANK");
  if (!path || !rank_s) {
    if (!strict) return 0;
    return cm_error(CM_ERR_RUNTIME,
                    "[ring] You need to provide via environment variables both a rank "
                    "(MLX_RANK) and a hostfile (MLX_HOSTFILE) but provided MLX_RANK=\"%s\" and "
                    "MLX_HOSTFILE=\"%s\"",
                    rank_s ? rank_s : "", path ? path : "");
  }
#ifndef CMLX_HAVE_CJSON
  return cm_error(CM_ERR_RUNTIME, "[ring] This build of cmlx has no JSON reader (cJSON).");
#else
  char *end;
  long rank = strtol(rank_s, &end, 10);
  if (*end || end == rank_s || rank < 0)
    return cm_error(CM_ERR_RUNTIME, "[ring] MLX_RANK must be a rank (0, 1, ...) but is \"%s\"",
                    rank_s);
  hostfile h = {0};
  if (load_hostfile(path, &h)) return -1;
  if (rank >= h.nranks) {
    free(h.a);
    return cm_error(CM_ERR_RUNTIME,
                    "[ring] Rank cannot be larger than the size of the group (MLX_RANK=%ld, %d "
                    "ranks in %s)",
                    rank, h.nranks, path);
  }
  ring *r = calloc(1, sizeof *r);
  if (!r) {
    free(h.a);
    return cm_error(CM_ERR_MEMORY, "[ring] Out of memory.");
  }
  r->comm = (cm_comm){&ring_ops, (int)rank, h.nranks, r};
  r->nconn = h.nranks > 1 ? h.per_rank : 0;
  for (int i = 0; i < RING_MAX_CONN; i++) r->right[i] = r->left[i] = -1;
  r->timeout_ms = env_seconds("CMLX_RING_OP_TIMEOUT", 600) * 1000;
  r->verbose = getenv("MLX_RING_VERBOSE") != NULL;
  pthread_mutex_init(&r->lock, NULL);
  int rc = r->nconn ? connect_ring(r, &h) : 0;
  free(h.a);
  if (rc) {
    ring_free(&r->comm);
    return -1;
  }
  logf_(r, "connected%s (%d connections per neighbour)", "", r->nconn);
  *out = &r->comm;
  return 0;
#endif
}
