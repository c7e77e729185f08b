#include "core/stream.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/error.h"
#include "core/scheduler.h"

typedef struct task {
  cm_task_fn fn;
  void *ctx;
  struct task *next;
} task;

typedef struct stream_state {
  cm_stream stream;
  pthread_mutex_t mu;
  pthread_cond_t has_work, idle;
  task *head, *tail;
  long pending; /* queued + running (+1 while claimed inline) */
  bool worker_started;
  pthread_t worker;
} stream_state;

/* The registry only grows; streams live for the whole process, as in MLX. */
static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static stream_state **streams;
static int num_streams, cap_streams;
static cm_device default_device = {CM_CPU, 0};
static int default_cpu_stream = -1;

const char *cm_device_type_name(cm_device_type t) { return t == CM_GPU ? "gpu" : "cpu"; }

bool cm_device_available(cm_device d) { return d.type == CM_CPU && d.index == 0; }

int cm_device_count(cm_device_type t) { return t == CM_CPU ? 1 : 0; }

bool cm_stream_equal(cm_stream a, cm_stream b) {
  return a.index == b.index && a.device.type == b.device.type && a.device.index == b.device.index;
}

static int check_device(const char *op, cm_device d) {
  if (d.index != 0)
    return cm_error(CM_ERR_VALUE, "[%s] Device index %d is out of range.", op, d.index);
  return 0;
}

static stream_state *stream_create_locked(cm_device d) {
  if (num_streams == cap_streams) {
    int ncap = cap_streams ? cap_streams * 2 : 8;
    stream_state **ns = realloc(streams, sizeof *ns * (size_t)ncap);
    if (!ns) return NULL;
    streams = ns;
    cap_streams = ncap;
  }
  stream_state *st = calloc(1, sizeof *st);
  if (!st) return NULL;
  st->stream = (cm_stream){num_streams, d, true};
  pthread_mutex_init(&st->mu, NULL);
  pthread_cond_init(&st->has_work, NULL);
  pthread_cond_init(&st->idle, NULL);
  streams[num_streams++] = st;
  return st;
}

cm_device cm_default_device(void) {
  pthread_mutex_lock(&registry_mu);
  cm_device d = default_device;
  pthread_mutex_unlock(&registry_mu);
  return d;
}

int cm_set_default_device(cm_device d) {
  if (d.type == CM_GPU)
    return cm_error(CM_ERR_VALUE,
                    "[set_default_device] Cannot set gpu device without gpu backend.");
  if (check_device("set_default_device", d)) return -1;
  pthread_mutex_lock(&registry_mu);
  default_device = d;
  pthread_mutex_unlock(&registry_mu);
  return 0;
}

int cm_default_stream(cm_device d, cm_stream *out) {
  if (d.type == CM_GPU)
    return cm_error(CM_ERR_VALUE, "[default_stream] Cannot get gpu stream without gpu backend.");
  if (check_device("default_stream", d)) return -1;
  pthread_mutex_lock(&registry_mu);
  if (default_cpu_stream < 0) {
    stream_state *st = stream_create_locked(d);
    if (!st) {
      pthread_mutex_unlock(&registry_mu);
      return cm_error(CM_ERR_MEMORY, "[default_stream] Out of memory.");
    }
    default_cpu_stream = st->stream.index;
  }
  *out = streams[default_cpu_stream]->stream;
  pthread_mutex_unlock(&registry_mu);
  return 0;
}

int cm_set_default_stream(cm_stream s) {
  if (s.device.type == CM_GPU)
    return cm_error(CM_ERR_VALUE,
                    "[set_default_stream] Cannot set gpu stream without gpu backend.");
  pthread_mutex_lock(&registry_mu);
  int ok = s.index >= 0 && s.index < num_streams;
  if (ok) default_cpu_stream = s.index;
  pthread_mutex_unlock(&registry_mu);
  return ok ? 0 : cm_error(CM_ERR_VALUE, "[set_default_stream] Invalid stream index %d.", s.index);
}

int cm_new_stream(cm_device d, cm_stream *out) {
  if (d.type == CM_GPU)
    return cm_error(CM_ERR_VALUE, "[new_stream] Cannot make gpu stream without gpu backend.");
  if (check_device("new_stream", d)) return -1;
  cm_stream def;
  if (cm_default_stream(d, &def)) return -1; /* the default takes index 0 */
  pthread_mutex_lock(&registry_mu);
  stream_state *st = stream_create_locked(d);
  if (st) *out = st->stream;
  pthread_mutex_unlock(&registry_mu);
  return st ? 0 : cm_error(CM_ERR_MEMORY, "[new_stream] Out of memory.");
}

int cm_stream_resolve(cm_stream in, cm_stream *out) {
  if (in.index >= 0) {
    if (in.device.type == CM_GPU)
      return cm_error(CM_ERR_VALUE, "[stream] Cannot use gpu stream without gpu backend.");
    pthread_mutex_lock(&registry_mu);
    int ok = in.index < num_streams;
    if (ok) *out = streams[in.index]->stream;
    pthread_mutex_unlock(&registry_mu);
    return ok ? 0 : cm_error(CM_ERR_VALUE, "[stream] Invalid stream index %d.", in.index);
  }
  return cm_default_stream(in.device_given ? in.device : cm_default_device(), out);
}

static stream_state *lookup(cm_stream s) {
  pthread_mutex_lock(&registry_mu);
  stream_state *st = s.index >= 0 && s.index < num_streams ? streams[s.index] : NULL;
  pthread_mutex_unlock(&registry_mu);
  return st;
}

/* ---- workers ---- */

static void *worker_main(void *arg) {
  stream_state *st = arg;
  pthread_mutex_lock(&st->mu);
  for (;;) {
    while (!st->head) pthread_cond_wait(&st->has_work, &st->mu);
    task *t = st->head;
    st->head = t->next;
    if (!st->head) st->tail = NULL;
    pthread_mutex_unlock(&st->mu);
    t->fn(t->ctx);
    free(t);
    pthread_mutex_lock(&st->mu);
    if (--st->pending == 0) pthread_cond_broadcast(&st->idle);
  }
  return NULL;
}

int cm_stream_enqueue(cm_stream s, cm_task_fn fn, void *ctx) {
  stream_state *st = lookup(s);
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
  stream_state *st = lookup(s);
  if (!st) return false;
  pthread_mutex_lock(&st->mu);
  bool ok = st->pending == 0;
  if (ok) st->pending = 1; /* holds off synchronize until we finish */
  pthread_mutex_unlock(&st->mu);
  return ok;
}

void cm_stream_end_inline(cm_stream s) {
  stream_state *st = lookup(s);
  pthread_mutex_lock(&st->mu);
  if (--st->pending == 0) pthread_cond_broadcast(&st->idle);
  pthread_mutex_unlock(&st->mu);
}

int cm_synchronize(cm_stream s) {
  cm_stream r;
  if (cm_stream_resolve(s, &r)) return -1;
  stream_state *st = lookup(r);
  pthread_mutex_lock(&st->mu);
  while (st->pending) pthread_cond_wait(&st->idle, &st->mu);
  pthread_mutex_unlock(&st->mu);
  return 0;
}
