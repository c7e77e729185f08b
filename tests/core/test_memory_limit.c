/* A strict memory limit (cm_memory_set_limit_relaxed(limit, false)): an
 * allocation over it first empties the cache, then waits for scheduled
 * work that can finish without it, then fails with MLX's MemoryError.
 * Tasks queued straight on a stream stand in for an eval's work: one holds
 * a buffer for a while and frees it, and the allocation waiting for it
 * must succeed once it is gone; with no work left it fails at once. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/allocator.h"
#include "core/error.h"
#include "core/scheduler.h"

#include "check.h"

#define MB ((size_t)1 << 20)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct holder {
  cm_buffer *held;
  atomic_int started;
} holder;

/* A task that keeps its buffer 300 ms, then frees it. */
static void hold_then_free(void *ctx) {
  holder *h = ctx;
  atomic_store(&h->started, 1);
  usleep(300 * 1000);
  cm_buffer_release(h->held);
  h->held = NULL;
}

int main(void) {
  cm_memory_set_cache_limit(256 * MB);
  cm_memory_clear_cache();
  size_t base = cm_memory_active();
  size_t old = cm_memory_set_limit_relaxed(base + 48 * MB, false);

  /* within the limit: allocations succeed, counters exact */
  cm_buffer *a = cm_buffer_alloc(40 * MB);
  CHECK(a && cm_memory_active() == base + 40 * MB);
  /* over it with nothing running: MLX's MemoryError, at once */
  double t0 = now();
  cm_buffer *b = cm_buffer_alloc(20 * MB);
  CHECK(!b && cm_error_kind_get() == CM_ERR_MEMORY);
  CHECK(!strcmp(cm_error_message(), "[malloc] Unable to allocate 20971520 bytes."));
  CHECK(now() - t0 < 1.0);
  cm_error_clear();
  CHECK(cm_memory_active() == base + 40 * MB);

  /* the cache goes first: freed blocks do not count against the limit's
   * fit, and are given back when new memory is refused */
  cm_buffer *c = cm_buffer_alloc(3 * MB);
  cm_buffer_release(c);
  CHECK(cm_memory_cache() == 3 * MB);
  CHECK(!cm_buffer_alloc(20 * MB));
  cm_error_clear();
  CHECK(cm_memory_cache() == 0);

  /* work that will free memory: the allocation waits for it */
  cm_stream s;
  CHECK(cm_new_stream((cm_device){CM_CPU, 0}, &s) == 0);
  holder h = {a, 0};
  CHECK(cm_stream_enqueue(s, hold_then_free, &h) == 0);
  while (!atomic_load(&h.started)) usleep(1000);
  t0 = now();
  b = cm_buffer_alloc(20 * MB);
  double waited = now() - t0;
  CHECK(b != NULL);
  CHECK(waited > 0.1);  /* it waited for the task ... */
  CHECK(h.held == NULL); /* ... which had freed its 40 MB */
  CHECK(cm_memory_active() == base + 20 * MB);
  CHECK(cm_synchronize(s) == 0);
  cm_buffer_release(b);

  /* relaxed: over the limit proceeds, the cache still given back first */
  cm_memory_set_limit_relaxed(base + 8 * MB, true);
  c = cm_buffer_alloc(5 * MB);
  cm_buffer_release(c);
  CHECK(cm_memory_cache() >= 5 * MB);
  b = cm_buffer_alloc(20 * MB);
  CHECK(b != NULL && cm_memory_cache() == 0);
  cm_buffer_release(b);

  cm_memory_set_limit(old);
  cm_memory_clear_cache();
  CHECK(cm_memory_active() == base && cm_memory_cache() == 0);
  return check_report("test_memory_limit");
}
