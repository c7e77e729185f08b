#include "core/stream.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "core/backend.h"
#include "core/error.h"
#include "core/scheduler.h"

typedef struct task {
  cm_task_fn fn;
  void *ctx;
  struct task *next;
} task;

/* Who may evaluate on a stream.  MLX 0.32 keeps a stream's command encoder
 * in the thread that made it, so only that thread can put work on it; a
 * thread-unsafe stream's encoder is global.  Thread ids are never reused,
 * so the streams of a thread that exited are nobody's, as in MLX where its
 * thread-local encoders die with it. */
#define OWNER_ANY 0           /* cm_new_thread_unsafe_stream */
#define OWNER_NONE UINT64_MAX /* destroyed by cm_clear_streams */

typedef struct stream_state {
  cm_stream stream;
  atomic_ullong owner;
  /* The first failure of a task async_eval queued here that nobody has
   * reported yet (MLX keeps the earliest error of a stream). */
  _Atomic(cm_error_record *) error;
  pthread_mutex_t mu;
  pthread_cond_t has_work, idle;
  task *head, *tail;
  long pending; /* queued + running (+1 while claimed inline) */
  bool worker_started;
  pthread_t worker;
} stream_state;

/* The registry only grows (streams live for the whole process, as in MLX),
 * in chunks that never move: a lookup reads it without a lock, which keeps
 * resolving an op's stream and claiming it for an eval cheap. */
#define CHUNK_BITS 8
#define CHUNK_SIZE (1 << CHUNK_BITS)
#define MAX_CHUNKS 4096
static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static stream_state *chunks[MAX_CHUNKS]; /* written before num_streams publishes them */
static atomic_int num_streams;
static atomic_int next_thread_local;
/* The default device is one for the process (MLX's is global too). */
/* type | index << 1; UNCHOSEN until first asked: MLX's default device is
 * the GPU when a GPU backend finds one, which only the registry knows. */
#define UNCHOSEN (-1)
static atomic_int default_device = UNCHOSEN;

/* ---- the calling thread ---- */

static atomic_ullong next_thread_id = 1;
static _Thread_local uint64_t thread_id;
/* This thread's default stream index per device type (-1: not made yet). */
static _Thread_local int default_index[2] = {-1, -1};
/* This thread's stream for thread-local stream k is map[k] - 1 (0: none);
 * freed when the thread exits. */
static _Thread_local struct { int *map; int cap; } thread_locals;
static pthread_key_t thread_locals_key;
static pthread_once_t thread_locals_once = PTHREAD_ONCE_INIT;

static uint64_t this_thread(void) {
  if (!thread_id) thread_id = atomic_fetch_add(&next_thread_id, 1);
  return thread_id;
}

static void thread_locals_create_key(void) { pthread_key_create(&thread_locals_key, free); }

const char *cm_device_type_name(cm_device_type t) { return t == CM_GPU ? "gpu" : "cpu"; }

/* A device type has devices when a backend registered for it finds some
 * (core/backend.h): the CPU always, the GPU only in a build with a GPU
 * backend on a machine with a GPU. */
int cm_device_count(cm_device_type t) {
  const cm_backend *b = cm_backend_for(t);
  return b && b->device_count ? b->device_count() : 0;
}

bool cm_device_available(cm_device d) { return d.index >= 0 && d.index < cm_device_count(d.type); }

/* MLX's builds without a GPU refuse gpu streams and devices with a
 * ValueError "[op] Cannot <what> without gpu backend.". */
static bool no_gpu(cm_device d) { return d.type == CM_GPU && cm_device_count(CM_GPU) == 0; }

bool cm_stream_equal(cm_stream a, cm_stream b) {
  return a.index == b.index && a.device.type == b.device.type && a.device.index == b.device.index;
}

static int check_device(const char *op, cm_device d) {
  if (!cm_device_available(d))
    return cm_error(CM_ERR_VALUE, "[%s] Device index %d is out of range.", op, d.index);
  return 0;
}

static stream_state *lookup(int index) {
  int n = atomic_load_explicit(&num_streams, memory_order_acquire);
  if (index < 0 || index >= n) return NULL;
  return &chunks[index >> CHUNK_BITS][index & (CHUNK_SIZE - 1)];
}

/* A new stream on d that owner may use. */
static int make_stream(cm_device d, uint64_t owner, const char *op, cm_stream *out) {
  pthread_mutex_lock(&registry_mu);
  int n = atomic_load_explicit(&num_streams, memory_order_relaxed);
  int c = n >> CHUNK_BITS;
  if (c >= MAX_CHUNKS) {
    pthread_mutex_unlock(&registry_mu);
    return cm_error(CM_ERR_RUNTIME, "[%s] Too many streams.", op);
  }
  if (!chunks[c] && !(chunks[c] = calloc(CHUNK_SIZE, sizeof(stream_state)))) {
    pthread_mutex_unlock(&registry_mu);
    return cm_error(CM_ERR_MEMORY, "[%s] Out of memory.", op);
  }
  stream_state *st = &chunks[c][n & (CHUNK_SIZE - 1)];
  st->stream = (cm_stream){n, d, true};
  atomic_init(&st->owner, owner);
  atomic_init(&st->error, NULL);
  pthread_mutex_init(&st->mu, NULL);
  pthread_cond_init(&st->has_work, NULL);
  pthread_cond_init(&st->idle, NULL);
  atomic_store_explicit(&num_streams, n + 1, memory_order_release);
  pthread_mutex_unlock(&registry_mu);
  *out = st->stream;
  return 0;
}

cm_device cm_default_device(void) {
  int v = atomic_load_explicit(&default_device, memory_order_relaxed);
  if (v == UNCHOSEN) {
    int first = cm_device_count(CM_GPU) > 0 ? (int)CM_GPU : (int)CM_CPU;
    if (!atomic_compare_exchange_strong(&default_device, &v, first)) return cm_default_device();
    v = first;
  }
  return (cm_device){(cm_device_type)(v & 1), v >> 1};
}

int cm_set_default_device(cm_device d) {
  if (no_gpu(d))
    return cm_error(CM_ERR_VALUE,
                    "[set_default_device] Cannot set gpu device without gpu backend.");
  if (check_device("set_default_device", d)) return -1;
  atomic_store_explicit(&default_device, (int)d.type | d.index << 1, memory_order_relaxed);
  return 0;
}

int cm_default_stream(cm_device d, cm_stream *out) {
  /* Every op resolves its stream here: a default stream this thread has
   * made was checked when it was made, so it is returned first. */
  int i = (unsigned)d.type < 2 && d.index == 0 ? default_index[d.type] : -1;
  if (i >= 0) {
    *out = (cm_stream){i, d, true};
    return 0;
  }
  if (no_gpu(d))
    return cm_error(CM_ERR_VALUE, "[default_stream] Cannot get gpu stream without gpu backend.");
  if (check_device("default_stream", d)) return -1;
  if (make_stream(d, this_thread(), "default_stream", out)) return -1;
  default_index[d.type] = out->index;
  return 0;
}

int cm_set_default_stream(cm_stream s) {
  if (no_gpu(s.device))
    return cm_error(CM_ERR_VALUE,
                    "[set_default_stream] Cannot set gpu stream without gpu backend.");
  stream_state *st = lookup(s.index);
  if (!st) return cm_error(CM_ERR_VALUE, "[set_default_stream] Invalid stream index %d.", s.index);
  /* MLX does not check the owner here: a thread may make another thread's
   * stream its default, and fails when it evaluates on it. */
  default_index[st->stream.device.type] = s.index;
  return 0;
}

static int new_owned_stream(const char *op, cm_device d, uint64_t owner, cm_stream *out) {
  if (no_gpu(d))
    return cm_error(CM_ERR_VALUE, "[%s] Cannot make gpu stream without gpu backend.", op);
  if (check_device(op, d)) return -1;
  /* The first stream of the process is the default of the thread that
   * starts using streams, as MLX's main thread gets stream 0. */
  cm_stream def;
  if (atomic_load(&num_streams) == 0 && cm_default_stream(d, &def)) return -1;
  return make_stream(d, owner, op, out);
}

int cm_new_stream(cm_device d, cm_stream *out) {
  return new_owned_stream("new_stream", d, this_thread(), out);
}

int cm_new_thread_unsafe_stream(cm_device d, cm_stream *out) {
  return new_owned_stream("new_thread_unsafe_stream", d, OWNER_ANY, out);
}

int cm_new_thread_local_stream(cm_device d, cm_thread_local_stream *out) {
  /* Only the handle: each thread makes its stream when it first uses it
   * (so a gpu handle is made, and fails on use, as in MLX). */
  *out = (cm_thread_local_stream){atomic_fetch_add(&next_thread_local, 1), d};
  return 0;
}

int cm_stream_from_thread_local(cm_thread_local_stream t, cm_stream *out) {
  if (t.index < 0) return cm_error(CM_ERR_VALUE, "[stream] Invalid thread-local stream.");
  if (t.index < thread_locals.cap && thread_locals.map[t.index]) {
    *out = lookup(thread_locals.map[t.index] - 1)->stream;
    return 0;
  }
  if (t.index >= thread_locals.cap) {
    int ncap = thread_locals.cap ? thread_locals.cap : 8;
    while (ncap <= t.index) ncap *= 2;
    int *nm = realloc(thread_locals.map, sizeof *nm * (size_t)ncap);
    if (!nm) return cm_error(CM_ERR_MEMORY, "[stream] Out of memory.");
    for (int i = thread_locals.cap; i < ncap; i++) nm[i] = 0;
    pthread_once(&thread_locals_once, thread_locals_create_key);
    pthread_setspecific(thread_locals_key, nm); /* freed at thread exit */
    thread_locals.map = nm;
    thread_locals.cap = ncap;
  }
  if (cm_new_stream(t.device, out)) return -1;
  thread_locals.map[t.index] = out->index + 1;
  return 0;
}

void cm_clear_streams(void) {
  /* As MLX's clear_streams drops this thread's command encoders: the
   * streams stay in the registry (and remain this thread's default and
   * thread-local streams) but no thread can evaluate on them any more. */
  uint64_t me = this_thread();
  int n = atomic_load_explicit(&num_streams, memory_order_acquire);
  for (int i = 0; i < n; i++) {
    unsigned long long want = me;
    atomic_compare_exchange_strong(&lookup(i)->owner, &want, OWNER_NONE);
  }
}

int cm_stream_resolve(cm_stream in, cm_stream *out) {
  if (in.index >= 0) {
    if (no_gpu(in.device))
      return cm_error(CM_ERR_VALUE, "[stream] Cannot use gpu stream without gpu backend.");
    stream_state *st = lookup(in.index);
    if (!st) return cm_error(CM_ERR_VALUE, "[stream] Invalid stream index %d.", in.index);
    *out = st->stream;
    return 0;
  }
  return cm_default_stream(in.device_given ? in.device : cm_default_device(), out);
}

/* ---- errors and owners ---- */

static cm_error_record *take_error(stream_state *st) {
  if (!atomic_load_explicit(&st->error, memory_order_relaxed)) return NULL;
  return atomic_exchange(&st->error, NULL);
}

int cm_stream_claim(cm_stream s) {
  stream_state *st = lookup(s.index);
  if (!st) return cm_error(CM_ERR_VALUE, "[eval] Invalid stream index %d.", s.index);
  uint64_t owner = atomic_load_explicit(&st->owner, memory_order_relaxed);
  if (owner != OWNER_ANY && owner != this_thread())
    return cm_error(CM_ERR_RUNTIME, "There is no Stream(%s, %d) in current thread.",
                    cm_device_type_name(st->stream.device.type), s.index);
  cm_error_record *e = take_error(st);
  if (!e) return 0;
  cm_error_restore(e);
  free(e);
  return -1;
}

void cm_stream_note_error(cm_stream s, const cm_error_record *rec) {
  stream_state *st = lookup(s.index);
  if (!st || atomic_load(&st->error)) return;
  cm_error_record *e = malloc(sizeof *e), *none = NULL;
  if (!e) return;
  *e = *rec;
  if (!atomic_compare_exchange_strong(&st->error, &none, e)) free(e);
}

void cm_stream_forget_error(cm_stream s) {
  stream_state *st = lookup(s.index);
  if (st) free(take_error(st));
}

/* ---- progress: whether waiting can free memory ----
 *
 * An allocation over a strict memory limit (core/allocator.c) waits for
 * scheduled work only while that work can finish without it.  busy counts
 * the threads running a stream's tasks that are not blocked waiting for an
 * input: a worker from its first task until its queue is empty (not per
 * task, so that a waiter never sees a worker between two tasks as idle),
 * an eval running a stream inline on its caller.  When no other thread is
 * busy, every remaining task waits, directly or not, for the allocating
 * one, and waiting would deadlock.  Runners signal the waiters (there are
 * none outside an allocation failure, so the common path pays one load). */
static atomic_int busy, progress_waiters;
static _Thread_local int busy_depth; /* > 0: this thread counts in busy */
static pthread_mutex_t progress_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t progress_cv = PTHREAD_COND_INITIALIZER;
static unsigned long progress_gen;

static void progress_signal(void) {
  if (!atomic_load(&progress_waiters)) return;
  pthread_mutex_lock(&progress_mu);
  progress_gen++;
  pthread_cond_broadcast(&progress_cv);
  pthread_mutex_unlock(&progress_mu);
}

static void busy_enter(void) {
  if (busy_depth++ == 0) atomic_fetch_add(&busy, 1);
}

static void busy_leave(void) {
  if (--busy_depth == 0) atomic_fetch_sub(&busy, 1);
  progress_signal();
}

void cm_sched_block(void) {
  if (busy_depth == 0) return; /* not a runner: nobody counts it */
  atomic_fetch_sub(&busy, 1);
  progress_signal();
}

void cm_sched_unblock(void) {
  if (busy_depth > 0) atomic_fetch_add(&busy, 1);
}

#define PROGRESS_PATIENCE_S 10

bool cm_sched_wait_for_progress(void) {
  pthread_mutex_lock(&progress_mu);
  /* announced before busy is read: a runner that leaves after the read
   * then sees a waiter and signals (both seq_cst) */
  atomic_fetch_add(&progress_waiters, 1);
  bool others = atomic_load(&busy) - (busy_depth > 0) > 0;
  int rc = 0;
  if (others) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += PROGRESS_PATIENCE_S;
    unsigned long gen = progress_gen;
    while (gen == progress_gen && rc == 0)
      rc = pthread_cond_timedwait(&progress_cv, &progress_mu, &until);
  }
  atomic_fetch_sub(&progress_waiters, 1);
  pthread_mutex_unlock(&progress_mu);
  return others && rc == 0;
}

/* ---- workers ---- */

static void *worker_main(void *arg) {
  stream_state *st = arg;
  pthread_mutex_lock(&st->mu);
  for (;;) {
    while (!st->head) pthread_cond_wait(&st->has_work, &st->mu);
    if (busy_depth == 0) busy_enter();
    task *t = st->head;
    st->head = t->next;
    if (!st->head) st->tail = NULL;
    pthread_mutex_unlock(&st->mu);
    t->fn(t->ctx);
    free(t);
    pthread_mutex_lock(&st->mu);
    if (--st->pending == 0) pthread_cond_broadcast(&st->idle);
    if (!st->head) busy_leave();
    else progress_signal();
  }
  return NULL;
}

int cm_stream_enqueue(cm_stream s, cm_task_fn fn, void *ctx) {
  stream_state *st = lookup(s.index);
  if (!st) return cm_error(CM_ERR_VALUE, "[eval] Invalid stream index %d.", s.index);
  task *t = malloc(sizeof *t);
  if (!t) return cm_error(CM_ERR_MEMORY, "[eval] Out of memory.");
  t->fn = fn;
  t->ctx = ctx;
  t->next = NULL;
  pthread_mutex_lock(&st->mu);
  if (!st->worker_started) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&st->worker, &attr, worker_main, st);
    pthread_attr_destroy(&attr);
    if (rc) {
      pthread_mutex_unlock(&st->mu);
      free(t);
      return cm_error(CM_ERR_RUNTIME, "[eval] Could not start the stream's worker thread.");
    }
    st->worker_started = true;
  }
  if (st->tail) st->tail->next = t; else st->head = t;
  st->tail = t;
  st->pending++;
  pthread_cond_signal(&st->has_work);
  pthread_mutex_unlock(&st->mu);
  return 0;
}

bool cm_stream_begin_inline(cm_stream s) {
  stream_state *st = lookup(s.index);
  if (!st) return false;
  pthread_mutex_lock(&st->mu);
  bool ok = st->pending == 0;
  if (ok) st->pending = 1; /* holds off synchronize until we finish */
  pthread_mutex_unlock(&st->mu);
  if (ok) busy_enter();
  return ok;
}

void cm_stream_end_inline(cm_stream s) {
  stream_state *st = lookup(s.index);
  pthread_mutex_lock(&st->mu);
  if (--st->pending == 0) pthread_cond_broadcast(&st->idle);
  pthread_mutex_unlock(&st->mu);
  busy_leave();
}

int cm_synchronize(cm_stream s) {
  cm_stream r;
  if (cm_stream_resolve(s, &r)) return -1;
  stream_state *st = lookup(r.index);
  pthread_mutex_lock(&st->mu);
  while (st->pending) pthread_cond_wait(&st->idle, &st->mu);
  pthread_mutex_unlock(&st->mu);
  /* the tasks ran; what they queued on the device may not have */
  int finished = cm_backend_finish(r);
  /* MLX 0.32 raises (and clears) the stream's stored error here. */
  cm_error_record *e = take_error(st);
  if (!e) return finished;
  cm_error_restore(e);
  free(e);
  return -1;
}
