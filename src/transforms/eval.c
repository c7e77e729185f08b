#include "transforms/eval.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/backend.h"
#include "core/scheduler.h"
#include "primitives/primitive.h"

/* One lock orders graph sorting and queueing across threads: every eval
 * queues its whole tape while holding it, so the queues of all streams
 * agree with one topological order and a task only ever waits for tasks
 * queued before it (no cross-stream deadlock). */
static pthread_mutex_t sched_mu = PTHREAD_MUTEX_INITIALIZER;
/* Sleepers on a node or a batch: a finisher wakes them (all of them; they
 * re-check their own) only when what it finished has one.  The flag is
 * set, and the state read, in one order (seq_cst) against the finisher's
 * store of the state and read of the flag: one of the two sees the
 * other, so no wake-up is lost. */
static pthread_mutex_t done_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;

typedef struct tape {
  cm_array **nodes;
  size_t len, cap;
} tape;

static int tape_push(tape *t, cm_array *a) {
  if (t->len == t->cap) {
    size_t ncap = t->cap ? t->cap * 2 : 64;
    cm_array **nn = realloc(t->nodes, ncap * sizeof *nn);
    if (!nn) return cm_error(CM_ERR_MEMORY, "[eval] Out of memory.");
    t->nodes = nn;
    t->cap = ncap;
  }
  t->nodes[t->len++] = a;
  return 0;
}

/* The outputs of a multi-output node move through the states together:
 * reaching one schedules the node once, for all of them. */
static void set_state(cm_array *a, cm_node_state st) {
  for (int k = 0, n = cm_num_outputs(a); k < n; k++) atomic_store(&cm_output(a, k)->state, st);
}

/* async_eval cannot return while a trace on this thread still needs the
 * graph it would hand to the workers (MLX's check, in its graph walk). */
static int tracer_error(void) {
  return cm_error(CM_ERR_VALUE, "[async_eval] Not allowed inside a graph transformation.");
}

/* Iterative post-order DFS over pending nodes.  A node is marked VISITING
 * when first reached and SCHEDULED when all its inputs are on the tape.
 * With reject_tracers a pending tracer node is an error.  On failure the
 * marks are rolled back to PENDING. */
typedef struct frame {
  cm_array *node;
  int next_input;
} frame;

static int build_tape(cm_array *const *roots, int n, bool reject_tracers, tape *out) {
  frame *stack = NULL;
  size_t top = 0, cap = 0;
  int rc = 0;
  for (int r = 0; r < n && !rc; r++) {
    cm_array *root = roots[r];
    if (atomic_load(&root->state) != CM_STATE_PENDING) continue;
    if (reject_tracers && root->tracer) {
      rc = tracer_error();
      break;
    }
    set_state(root, CM_STATE_VISITING);
    if (top == cap) {
      size_t ncap = cap ? cap * 2 : 64;
      frame *ns = realloc(stack, ncap * sizeof *ns);
      if (!ns) {
        rc = cm_error(CM_ERR_MEMORY, "[eval] Out of memory.");
        break;
      }
      stack = ns;
      cap = ncap;
    }
    stack[top++] = (frame){root, 0};
    while (top && !rc) {
      frame *f = &stack[top - 1];
      if (f->next_input < f->node->nin) {
        cm_array *x = f->node->in[f->next_input++];
        if (atomic_load(&x->state) != CM_STATE_PENDING) continue;
        if (reject_tracers && x->tracer) {
          rc = tracer_error();
          break;
        }
        set_state(x, CM_STATE_VISITING);
        if (top == cap) {
          size_t ncap = cap * 2;
          frame *ns = realloc(stack, ncap * sizeof *ns);
          if (!ns) {
            rc = cm_error(CM_ERR_MEMORY, "[eval] Out of memory.");
            break;
          }
          stack = ns;
          cap = ncap;
        }
        stack[top++] = (frame){x, 0};
      } else {
        rc = tape_push(out, f->node);
        set_state(f->node, CM_STATE_SCHEDULED);
        top--;
      }
    }
  }
  if (rc) { /* undo: everything marked goes back to pending */
    for (size_t i = 0; i < top; i++) set_state(stack[i].node, CM_STATE_PENDING);
    for (size_t i = 0; i < out->len; i++) set_state(out->nodes[i], CM_STATE_PENDING);
    out->len = 0;
  }
  free(stack);
  return rc;
}

static void wait_done(cm_array *a) {
  if (atomic_load_explicit(&a->state, memory_order_acquire) == CM_STATE_DONE) return;
  cm_sched_block();
  pthread_mutex_lock(&done_mu);
  atomic_store(&a->waited, true);
  while (atomic_load(&a->state) != CM_STATE_DONE) pthread_cond_wait(&done_cv, &done_mu);
  pthread_mutex_unlock(&done_mu);
  cm_sched_unblock();
}

static void mark_failed(cm_array *a, const cm_error_record *rec) {
  cm_error_record *e = malloc(sizeof *e);
  if (e) *e = *rec;
  free(a->error);
  a->error = e;
}

/* Compute one node: wait for inputs (they may be on other streams), run
 * the kernel (once for all outputs of a multi-output node, given the
 * first), drop the graph, wake waiters.  A failure of a node async_eval
 * queued is also left on its stream for synchronize to report, before the
 * node is marked done so that a waiter who reports the node's error can
 * clear it again. */
static void run_node(cm_array *a, bool async) {
  cm_array *first = cm_output(a, 0);
  int nout = cm_num_outputs(a);
  const cm_error_record *failed_input = NULL;
  cm_error_record rec, *failed = NULL;
  for (int i = 0; i < a->nin; i++) {
    cm_array *x = a->in[i];
    wait_done(x);
    if (x->error && !failed_input) failed_input = x->error;
  }
  /* An input another stream made may still be in flight on its device (a
   * GPU stream's kernels run after they are queued). */
  for (int i = 0; i < a->nin && !failed_input; i++)
    if (!cm_stream_equal(a->in[i]->stream, a->stream) && cm_backend_finish(a->in[i]->stream)) {
      cm_error_save(&rec);
      failed_input = &rec;
      cm_error_clear();
    }
  if (failed_input) {
    if (failed_input != &rec) rec = *failed_input;
    failed = &rec;
  } else {
    cm_eval_fn fn = cm_kernel_for(a->stream.device.type, a->prim, a->params);
    int rc = fn ? fn(first, first->in, first->nin, first->params) : -1;
    if (rc) {
      cm_error_save(&rec);
      failed = &rec;
      cm_error_clear();
    }
  }
  for (int k = 0; failed && k < nout; k++) mark_failed(cm_output(a, k), failed);
  if (failed && async) cm_stream_note_error(a->stream, failed);
  if (!cm_graph_retained()) cm_detach(a);
  bool wake = false;
  for (int k = 0; k < nout; k++) atomic_store(&cm_output(a, k)->state, CM_STATE_DONE);
  for (int k = 0; k < nout; k++) wake = wake || atomic_load(&cm_output(a, k)->waited);
  if (wake) {
    pthread_mutex_lock(&done_mu);
    pthread_cond_broadcast(&done_cv);
    pthread_mutex_unlock(&done_mu);
  }
}

/* The tasks one eval queued.  A synchronous eval waits until every task
 * has also dropped its reference, so memory the caller frees right after
 * eval returns is really free (a producer on another stream would
 * otherwise hold its output a moment longer). */
typedef struct task {
  cm_array *node;
  struct batch *batch;
} task;

typedef struct batch {
  bool async;            /* queued by async_eval: nobody waits on the tasks */
  atomic_int tasks_left; /* guarded for waiting by done_mu */
  atomic_bool waited;    /* an eval sleeps until tasks_left is 0 */
  atomic_int refs;       /* tasks left + the scheduling eval's own */
  task tasks[];
} batch;

static void batch_release(batch *b) {
  if (atomic_fetch_sub(&b->refs, 1) == 1) free(b);
}

/* Worker-side task: it holds a reference so async_eval callers may drop
 * their arrays while work is in flight. */
static void run_task(void *ctx) {
  task *t = ctx;
  run_node(t->node, t->batch->async);
  cm_release(t->node);
  if (atomic_fetch_sub(&t->batch->tasks_left, 1) == 1 && atomic_load(&t->batch->waited)) {
    pthread_mutex_lock(&done_mu);
    pthread_cond_broadcast(&done_cv);
    pthread_mutex_unlock(&done_mu);
  }
  batch_release(t->batch);
}

static void batch_wait(batch *b) {
  cm_sched_block(); /* an eval inside a task waits like a blocked input */
  pthread_mutex_lock(&done_mu);
  atomic_store(&b->waited, true);
  while (atomic_load(&b->tasks_left) > 0) pthread_cond_wait(&done_cv, &done_mu);
  pthread_mutex_unlock(&done_mu);
  cm_sched_unblock();
}

static bool single_stream(const tape *t) {
  for (size_t i = 1; i < t->len; i++)
    if (!cm_stream_equal(t->nodes[i]->stream, t->nodes[0]->stream)) return false;
  return true;
}

static _Thread_local int eval_forbidden;
void cm_eval_forbid_push(void) { eval_forbidden++; }
void cm_eval_forbid_pop(void) { eval_forbidden--; }

static _Thread_local int tracing;
void cm_trace_push(void) { tracing++; }
void cm_trace_pop(void) { tracing--; }
bool cm_in_trace(void) { return tracing > 0; }

/* Every stream on the tape must be usable from this thread (MLX checks as
 * it encodes each node); nothing runs when one is not.  Consecutive nodes
 * share a stream, so this is one check per eval in the common case. */
static int claim_streams(const tape *t) {
  for (size_t i = 0; i < t->len; i++) {
    cm_stream s = t->nodes[i]->stream;
    if ((i == 0 || !cm_stream_equal(s, t->nodes[i - 1]->stream)) && cm_stream_claim(s)) return -1;
  }
  return 0;
}

/* Sort and run or queue the graph behind arrays.  When work was queued and
 * *queued is non-NULL it receives the batch (with a reference) to wait on. */
static int schedule(cm_array *const *arrays, int n, bool want_inline, batch **queued) {
  bool pending = false, async = !want_inline;
  /* async_eval inside a trace is judged per node, by the tracer marks */
  for (int i = 0; i < n && eval_forbidden && !async; i++)
    pending = pending || (arrays[i] && !cm_is_evaluated(arrays[i]));
  if (pending)
    return cm_error(CM_ERR_VALUE, "[eval] Attempting to eval an array during function "
                                  "transformations like compile or vmap is not allowed.");
  for (int i = 0; i < n; i++)
    if (!arrays[i]) return cm_error(CM_ERR_VALUE, "[eval] Cannot evaluate an empty array.");
  tape t = {0};
  pthread_mutex_lock(&sched_mu);
  int rc = build_tape(arrays, n, async && tracing > 0, &t);
  if (!rc && t.len && (rc = claim_streams(&t))) { /* roll back: nothing was queued */
    for (size_t i = 0; i < t.len; i++) set_state(t.nodes[i], CM_STATE_PENDING);
    t.len = 0;
  }
  bool inline_run = false;
  batch *b = NULL;
  if (!rc && t.len) {
    inline_run = want_inline && single_stream(&t) && cm_stream_begin_inline(t.nodes[0]->stream);
    if (!inline_run) {
      b = malloc(sizeof *b + t.len * sizeof(task));
      if (!b) rc = cm_error(CM_ERR_MEMORY, "[eval] Out of memory.");
      else {
        b->async = async;
        atomic_init(&b->tasks_left, 0);
        atomic_init(&b->waited, false);
        atomic_init(&b->refs, 1);
      }
    }
    for (size_t i = 0; i < t.len && b; i++) {
      b->tasks[i] = (task){cm_retain(t.nodes[i]), b};
      atomic_fetch_add(&b->tasks_left, 1);
      atomic_fetch_add(&b->refs, 1);
      if (cm_stream_enqueue(t.nodes[i]->stream, run_task, &b->tasks[i])) {
        /* Could not queue: the rest never will be; run them here so no
         * node is left SCHEDULED forever. */
        atomic_fetch_sub(&b->tasks_left, 1);
        atomic_fetch_sub(&b->refs, 1);
        cm_release(t.nodes[i]);
        cm_error_record rec;
        cm_error_save(&rec);
        for (size_t j = i; j < t.len; j++) run_node(t.nodes[j], false);
        cm_error_restore(&rec);
        rc = -1;
        break;
      }
    }
    if (rc && !b) /* nothing was queued: leave no node SCHEDULED */
      for (size_t j = 0; j < t.len; j++) run_node(t.nodes[j], false);
  }
  pthread_mutex_unlock(&sched_mu);
  if (inline_run) {
    /* The tape holds no references: every node is kept alive by a consumer
     * still ahead on the tape or by the caller, which lets kernels donate
     * an input's buffer when its consumer is its last holder. */
    cm_stream s = t.nodes[0]->stream;
    for (size_t i = 0; i < t.len; i++) run_node(t.nodes[i], false);
    cm_stream_end_inline(s);
  }
  free(t.nodes);
  if (b && queued) *queued = b;
  else if (b) batch_release(b);
  return rc;
}

/* Block until a (already scheduled) is done; reports its error if it
 * failed, which leaves its stream nothing to report at synchronize (MLX
 * raises a stream's error once). */
static int cm_wait(cm_array *a) {
  wait_done(a);
  if (a->error) {
    cm_stream_forget_error(a->stream);
    cm_error_restore(a->error);
    return -1;
  }
  /* done on the host's side; the device may still be computing it */
  return cm_backend_finish(a->stream);
}

int cm_eval(cm_array *const *arrays, int n) {
  batch *b = NULL;
  int rc = schedule(arrays, n, true, &b);
  if (b) {
    batch_wait(b);
    batch_release(b);
  }
  if (rc) return -1;
  for (int i = 0; i < n; i++)
    if (cm_wait(arrays[i]) && !rc) rc = -1;
  return rc;
}

int cm_async_eval(cm_array *const *arrays, int n) { return schedule(arrays, n, false, NULL); }
