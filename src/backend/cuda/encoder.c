/* GPU streams' command encoders (encoder.h). */
#include "backend/cuda/encoder.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/device.h"
#include "backend/cuda/graph_plan.h"

/* ---- settings (read once, as MLX reads its environment) ---- */

static long env_long(const char *name, long fallback) {
  const char *v = getenv(name);
  if (!v || !*v) return fallback;
  char *end;
  long x = strtol(v, &end, 10);
  return *end ? fallback : x;
}

static bool graphs_enabled(void) {
  static int on = -1;
  if (on < 0) on = env_long("MLX_USE_CUDA_GRAPHS", 1) != 0;
  return on;
}

void cm_cuda_graph_limits(int major, int minor, int *max_ops, size_t *max_mb) {
  int cc = major * 100 + minor * 10, ops = 20;
  long mb = 100;
  switch (cc) {
  case 800: mb = 400; break;                         /* A100 */
  case 900: case 1000: case 1200: ops = 100, mb = 1000; break; /* Hopper, Blackwell */
  case 1210: mb = 25; break;                         /* DGX Spark */
  default: break;
  }
  *max_ops = (int)env_long("MLX_MAX_OPS_PER_BUFFER", ops);
  if (*max_ops < 1) *max_ops = 1;
  long m = env_long("MLX_MAX_MB_PER_BUFFER", mb);
  *max_mb = m < 0 ? 0 : (size_t)m;
}

/* ---- buffers kept alive ---- */

typedef struct held {
  cm_buffer **v;
  size_t n, cap;
} held;

static int held_push(held *h, cm_buffer *b) {
  if (h->n == h->cap) {
    size_t cap = h->cap ? h->cap * 2 : 64;
    cm_buffer **v = realloc(h->v, cap * sizeof *v);
    if (!v) return cm_error(CM_ERR_MEMORY, "[cuda] Out of memory.");
    h->v = v, h->cap = cap;
  }
  cm_buffer_retain(b);
  h->v[h->n++] = b;
  return 0;
}

static void held_release(held *h) {
  for (size_t i = 0; i < h->n; i++) cm_buffer_release(h->v[i]);
  h->n = 0;
}

/* Work committed to the device, with the buffers it uses, until its event
 * has fired. */
typedef struct inflight {
  cudaEvent_t done;
  held bufs;
} inflight;

struct cm_cuda_encoder {
  pthread_mutex_t mu;
  int device;
  cudaStream_t stream;
  bool graphs;
  int max_ops;
  size_t max_mb;
  /* the graph being built */
  cudaGraph_t graph;
  cm_graph_plan plan;
  cudaGraphNode_t *nodes;
  size_t nodes_cap;
  int ops_since_commit; /* without graphs: launches since the last event */
  held pending;         /* buffers of the work not yet committed */
  inflight *flights;    /* committed, oldest first */
  size_t nflights, flights_cap;
  cm_graph_lru execs;
  atomic_bool dirty; /* something queued since the last finish */
};

/* ---- the encoders, one per GPU stream index (made on first use) ---- */

#define CHUNK 64
#define MAX_CHUNKS 4096
static _Atomic(cm_cuda_encoder *) *chunks[MAX_CHUNKS];
static pthread_mutex_t make_mu = PTHREAD_MUTEX_INITIALIZER;

static void exec_destroy(void *v) { (void)cudaGraphExecDestroy((cudaGraphExec_t)v); }

static cm_cuda_encoder *make_encoder(cm_stream s) {
  const cm_cuda_device_props *d = cm_cuda_device(s.device.index);
  if (!d) {
    cm_error(CM_ERR_VALUE, "[cuda] Device index %d is out of range.", s.device.index);
    return NULL;
  }
  if (cm_cuda_use_device(s.device.index)) return NULL;
  cm_cuda_encoder *e = calloc(1, sizeof *e);
  if (!e) {
    cm_error(CM_ERR_MEMORY, "[cuda] Out of memory.");
    return NULL;
  }
  if (cm_cuda_check(cudaStreamCreateWithFlags(&e->stream, cudaStreamNonBlocking),
                    "cudaStreamCreate")) {
    free(e);
    return NULL;
  }
  pthread_mutex_init(&e->mu, NULL);
  e->device = s.device.index;
  e->graphs = graphs_enabled();
  cm_cuda_graph_limits(d->major, d->minor, &e->max_ops, &e->max_mb);
  cm_graph_plan_init(&e->plan);
  cm_graph_lru_init(&e->execs, (size_t)env_long("MLX_CUDA_GRAPH_CACHE_SIZE", 400), exec_destroy);
  return e;
}

cm_cuda_encoder *cm_cuda_encoder_of(cm_stream s) {
  if (s.index < 0 || s.index >= CHUNK * MAX_CHUNKS) {
    cm_error(CM_ERR_VALUE, "[cuda] Invalid stream index %d.", s.index);
    return NULL;
  }
  _Atomic(cm_cuda_encoder *) *chunk = chunks[s.index / CHUNK];
  cm_cuda_encoder *e = chunk ? atomic_load(&chunk[s.index % CHUNK]) : NULL;
  if (e) return e;
  pthread_mutex_lock(&make_mu);
  if (!chunks[s.index / CHUNK]) chunks[s.index / CHUNK] = calloc(CHUNK, sizeof **chunks);
  chunk = chunks[s.index / CHUNK];
  if (!chunk) {
    pthread_mutex_unlock(&make_mu);
    cm_error(CM_ERR_MEMORY, "[cuda] Out of memory.");
    return NULL;
  }
  e = atomic_load(&chunk[s.index % CHUNK]);
  if (!e && (e = make_encoder(s))) atomic_store(&chunk[s.index % CHUNK], e);
  pthread_mutex_unlock(&make_mu);
  return e;
}

/* ---- completion ---- */

/* Release the buffers of every committed batch that has completed, oldest
 * first, stopping at the first that has not (they complete in order). */
static void reap(cm_cuda_encoder *e) {
  size_t k = 0;
  for (; k < e->nflights; k++) {
    cudaError_t q = cudaEventQuery(e->flights[k].done);
    if (q == cudaErrorNotReady) {
      (void)cudaGetLastError();
      break;
    }
    /* an error here is the kernel's: finish reports it */
    held_release(&e->flights[k].bufs);
    free(e->flights[k].bufs.v);
    (void)cudaEventDestroy(e->flights[k].done);
  }
  memmove(e->flights, e->flights + k, (e->nflights - k) * sizeof *e->flights);
  e->nflights -= k;
}

/* Mark the end of what was committed so far with an event that owns the
 * pending buffers. */
static int close_batch(cm_cuda_encoder *e) {
  if (!e->pending.n) return 0;
  if (e->nflights == e->flights_cap) {
    size_t cap = e->flights_cap ? e->flights_cap * 2 : 16;
    inflight *f = realloc(e->flights, cap * sizeof *f);
    if (!f) return cm_error(CM_ERR_MEMORY, "[cuda] Out of memory.");
    e->flights = f, e->flights_cap = cap;
  }
  inflight *f = &e->flights[e->nflights];
  if (cm_cuda_check(cudaEventCreateWithFlags(&f->done, cudaEventDisableTiming),
                    "cudaEventCreate"))
    return -1;
  if (cm_cuda_check(cudaEventRecord(f->done, e->stream), "cudaEventRecord")) {
    (void)cudaEventDestroy(f->done);
    return -1;
  }
  f->bufs = e->pending;
  e->pending = (held){0};
  e->nflights++;
  return 0;
}

/* ---- graphs ---- */

static int ensure_graph(cm_cuda_encoder *e) {
  if (e->graph) return 0;
  return cm_cuda_check(cudaGraphCreate(&e->graph, 0), "cudaGraphCreate");
}

static int remember_node(cm_cuda_encoder *e, int index, cudaGraphNode_t n) {
  if ((size_t)index >= e->nodes_cap) {
    size_t cap = e->nodes_cap ? e->nodes_cap * 2 : 128;
    while (cap <= (size_t)index) cap *= 2;
    cudaGraphNode_t *v = realloc(e->nodes, cap * sizeof *v);
    if (!v) return cm_error(CM_ERR_MEMORY, "[cuda] Out of memory.");
    e->nodes = v, e->nodes_cap = cap;
  }
  e->nodes[index] = n;
  return 0;
}

/* Plan a node over arrays' buffers; its index, or -1. */
static int plan_node(cm_cuda_encoder *e, cm_graph_node_kind kind, uint64_t id,
                     cm_array *const *reads, int nreads, cm_array *const *writes, int nwrites) {
  enum { MAX_BUFS = 64 };
  const void *r[MAX_BUFS], *w[MAX_BUFS];
  size_t rb[MAX_BUFS], wb[MAX_BUFS];
  if (nreads > MAX_BUFS || nwrites > MAX_BUFS)
    return cm_error(CM_ERR_VALUE, "[cuda] A kernel with more than %d inputs.", MAX_BUFS);
  for (int i = 0; i < nreads; i++) r[i] = reads[i]->buf, rb[i] = reads[i]->buf->nbytes;
  for (int i = 0; i < nwrites; i++) w[i] = writes[i]->buf, wb[i] = writes[i]->buf->nbytes;
  int k = cm_graph_plan_add(&e->plan, kind, id, r, rb, nreads, w, wb, nwrites);
  if (k < 0) cm_error(CM_ERR_MEMORY, "[cuda] Out of memory.");
  return k;
}

/* Add the graph's edges, instantiate or update, launch; then start over. */
static int commit(cm_cuda_encoder *e) {
  int rc = 0;
  if (e->graph && e->plan.n_nodes) {
    size_t n = e->plan.n_edges;
    cudaGraphNode_t *from = NULL, *to = NULL;
    if (n) {
      from = malloc(n * sizeof *from);
      to = malloc(n * sizeof *to);
      if (!from || !to) rc = cm_error(CM_ERR_MEMORY, "[cuda] Out of memory.");
      for (size_t i = 0; !rc && i < n; i++) {
        from[i] = e->nodes[e->plan.edge_from[i]];
        to[i] = e->nodes[e->plan.edge_to[i]];
      }
      if (!rc)
        rc = cm_cuda_check(cudaGraphAddDependencies(e->graph, from, to, NULL, n),
                           "cudaGraphAddDependencies");
    }
    free(from);
    free(to);
    cudaGraphExec_t exec = NULL;
    bool keep = e->plan.updatable;
    if (!rc && keep && (exec = cm_graph_lru_take(&e->execs, e->plan.key))) {
      cudaGraphExecUpdateResultInfo info;
      if (cudaGraphExecUpdate(exec, e->graph, &info) != cudaSuccess ||
          info.result != cudaGraphExecUpdateSuccess) {
        (void)cudaGetLastError();
        (void)cudaGraphExecDestroy(exec);
        exec = NULL;
      }
    }
    if (!rc && !exec) rc = cm_cuda_check(cudaGraphInstantiate(&exec, e->graph, 0), "cudaGraphInstantiate");
    if (!rc) rc = cm_cuda_check(cudaGraphLaunch(exec, e->stream), "cudaGraphLaunch");
    if (exec) {
      /* destroying an exec in flight frees it when it completes */
      if (rc || !keep || cm_graph_lru_put(&e->execs, e->plan.key, exec))
        (void)cudaGraphExecDestroy(exec);
    }
  }
  if (e->graph) (void)cudaGraphDestroy(e->graph);
  e->graph = NULL;
  cm_graph_plan_reset(&e->plan);
  e->ops_since_commit = 0;
  if (close_batch(e) && !rc) rc = -1;
  reap(e);
  return rc;
}

/* After a node: commit when the graph (or the batch) is full. */
static int after_node(cm_cuda_encoder *e) {
  atomic_store_explicit(&e->dirty, true, memory_order_relaxed);
  if (e->graphs) return cm_graph_plan_full(&e->plan, e->max_ops, e->max_mb) ? commit(e) : 0;
  return ++e->ops_since_commit >= e->max_ops ? commit(e) : 0;
}

static int hold_arrays(cm_cuda_encoder *e, cm_array *const *a, int n) {
  for (int i = 0; i < n; i++)
    if (a[i]->buf && held_push(&e->pending, a[i]->buf)) return -1;
  return 0;
}

/* Lock s's encoder and make its device current; NULL with an error. */
static cm_cuda_encoder *enter(cm_stream s) {
  cm_cuda_encoder *e = cm_cuda_encoder_of(s);
  if (!e) return NULL;
  pthread_mutex_lock(&e->mu);
  if (cm_cuda_use_device(e->device)) {
    pthread_mutex_unlock(&e->mu);
    return NULL;
  }
  return e;
}

static int leave(cm_cuda_encoder *e, int rc) {
  pthread_mutex_unlock(&e->mu);
  return rc;
}

/* ---- queueing ---- */

int cm_cuda_launch_kernel(cm_stream s, const cm_cuda_launch *l) {
  cm_cuda_encoder *e = enter(s);
  if (!e) return -1;
  if (hold_arrays(e, l->reads, l->nreads) || hold_arrays(e, l->writes, l->nwrites))
    return leave(e, -1);
  dim3 grid = {l->grid[0], l->grid[1], l->grid[2]}, block = {l->block[0], l->block[1], l->block[2]};
  if (!e->graphs) {
    int rc = cm_cuda_check(cudaLaunchKernel(l->func, grid, block, l->args, l->shared_bytes, e->stream),
                           "cudaLaunchKernel");
    return leave(e, rc ? rc : after_node(e));
  }
  if (ensure_graph(e)) return leave(e, -1);
  /* the function and launch shape name the node for the topology key */
  uint64_t id = (uint64_t)(uintptr_t)l->func;
  id = id * 31 + grid.x, id = id * 31 + grid.y, id = id * 31 + grid.z;
  id = id * 31 + block.x, id = id * 31 + block.y, id = id * 31 + block.z;
  id = id * 31 + l->shared_bytes;
  struct cudaKernelNodeParams kp = {.func = (void *)l->func,
                                    .gridDim = grid,
                                    .blockDim = block,
                                    .sharedMemBytes = (unsigned)l->shared_bytes,
                                    .kernelParams = l->args};
  cudaGraphNode_t node;
  if (cm_cuda_check(cudaGraphAddKernelNode(&node, e->graph, NULL, 0, &kp), "cudaGraphAddKernelNode"))
    return leave(e, -1);
  int k = plan_node(e, CM_GRAPH_KERNEL, id, l->reads, l->nreads, l->writes, l->nwrites);
  if (k < 0 || remember_node(e, k, node)) return leave(e, -1);
  return leave(e, after_node(e));
}

int cm_cuda_library_call(cm_stream s, int (*fn)(cudaStream_t stream, void *ctx), void *ctx,
                         cm_array *const *reads, int nreads, cm_array *const *writes,
                         int nwrites) {
  cm_cuda_encoder *e = enter(s);
  if (!e) return -1;
  if (hold_arrays(e, reads, nreads) || hold_arrays(e, writes, nwrites)) return leave(e, -1);
  if (!e->graphs) {
    int rc = fn(e->stream, ctx);
    return leave(e, rc ? rc : after_node(e));
  }
  if (ensure_graph(e)) return leave(e, -1);
  /* Capture what the library queues into a graph of its own; the library
   * call must not wait on the stream while it is being captured. */
  if (cm_cuda_check(cudaStreamBeginCapture(e->stream, cudaStreamCaptureModeThreadLocal),
                    "cudaStreamBeginCapture"))
    return leave(e, -1);
  int rc = fn(e->stream, ctx);
  cudaGraph_t child = NULL;
  int end = cm_cuda_check(cudaStreamEndCapture(e->stream, &child), "cudaStreamEndCapture");
  if (rc || end) {
    if (child) (void)cudaGraphDestroy(child);
    return leave(e, -1);
  }
  cudaGraphNode_t node;
  rc = cm_cuda_check(cudaGraphAddChildGraphNode(&node, e->graph, NULL, 0, child),
                     "cudaGraphAddChildGraphNode");
  (void)cudaGraphDestroy(child); /* the node holds its own copy */
  if (rc) return leave(e, -1);
  int k = plan_node(e, CM_GRAPH_CHILD, 0, reads, nreads, writes, nwrites);
  if (k < 0 || remember_node(e, k, node)) return leave(e, -1);
  return leave(e, after_node(e));
}

int cm_cuda_hold(cm_stream s, cm_buffer *b) {
  cm_cuda_encoder *e = enter(s);
  if (!e) return -1;
  return leave(e, held_push(&e->pending, b));
}

const void *cm_cuda_input_ptr(cm_stream s, const cm_array *a) {
  cm_buffer *b = a->buf;
  if (!b) return NULL;
  if (b->device == CM_GPU && !b->wrapped && !b->dtor) return cm_data(a);
  /* Host memory the GPU may not reach: copy the whole block (a view may
   * reach anywhere in it) into GPU-visible memory.  The host copy is
   * complete before any kernel queued later can start. */
  cm_buffer *g = cm_buffer_alloc_on(CM_GPU, b->nbytes);
  if (!g) return NULL;
  memcpy(g->ptr, b->ptr, b->nbytes);
  int rc = cm_cuda_hold(s, g);
  cm_buffer_release(g);
  return rc ? NULL : (const char *)g->ptr + a->offset;
}

int cm_cuda_finish(cm_stream s) {
  cm_cuda_encoder *e = cm_cuda_encoder_of(s);
  if (!e) return -1;
  if (!atomic_load_explicit(&e->dirty, memory_order_relaxed)) return 0;
  e = enter(s);
  if (!e) return -1;
  int rc = commit(e);
  int sync = cm_cuda_check(cudaStreamSynchronize(e->stream), "cudaStreamSynchronize");
  if (!sync) {
    reap(e);
    atomic_store_explicit(&e->dirty, false, memory_order_relaxed);
  }
  return leave(e, rc ? rc : sync);
}
