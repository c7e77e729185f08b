#include "core/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#define MAX_THREADS 256
/* Pauses a thread spins before it sleeps on a condition variable: about
 * 120-360 us.  Waking a sleeping thread costs 10-50 us on a virtual
 * machine, twice per parallel loop (the workers at the start, the caller
 * at the end), which is as long as a loop over 100K floats itself: the
 * demo CNN's training step ran slower on two threads than on one.  A
 * decode step of a language model leaves gaps of 50-300 us between its
 * products (the small ops and Python in between); with 1000 pauses the
 * worker slept in most of them and 4-bit decode of a 1B model ran 5%
 * slower (16000 gained 8%, but burns a core for a millisecond after every
 * loop, which oversubscribed processes on two cores pay for). */
#define SPIN 4000

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int nthreads = 1;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t start_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
/* The job being run: one at a time; a second caller (another stream's
 * worker, or a kernel nested in a kernel) runs its loop serially instead of
 * waiting, so the pool can never deadlock on itself. */
static bool busy;
/* Written under mu; atomic so that spinning threads may read them without
 * it. */
static atomic_ulong generation;
static cm_range_fn job_fn;
static void *job_ctx;
static int64_t job_n;
static int job_chunks, job_next;
static atomic_int job_left;

static void chunk_range(int64_t n, int chunks, int i, int64_t *b, int64_t *e) {
  *b = n * i / chunks;
  *e = n * (i + 1) / chunks;
}

/* Take chunks until none are left; returns once the caller's share is done. */
static void work_on_job(void) {
  for (;;) {
    pthread_mutex_lock(&mu);
    if (job_next >= job_chunks) {
      pthread_mutex_unlock(&mu);
      return;
    }
    int i = job_next++;
    cm_range_fn fn = job_fn;
    void *ctx = job_ctx;
    int64_t n = job_n;
    int chunks = job_chunks;
    pthread_mutex_unlock(&mu);
    int64_t b, e;
    chunk_range(n, chunks, i, &b, &e);
    fn(ctx, b, e);
    pthread_mutex_lock(&mu);
    if (--job_left == 0) pthread_cond_broadcast(&done_cv);
    pthread_mutex_unlock(&mu);
  }
}

static void *pool_main(void *arg) {
  (void)arg;
  unsigned long seen = 0;
  for (;;) {
    for (int i = 0; i < SPIN && atomic_load_explicit(&generation, memory_order_acquire) == seen;
         i++)
      cpu_relax();
    pthread_mutex_lock(&mu);
    while (generation == seen) pthread_cond_wait(&start_cv, &mu);
    seen = generation;
    pthread_mutex_unlock(&mu);
    work_on_job();
  }
  return NULL;
}

static void pool_init(void) {
  const char *env = getenv("CMLX_NUM_THREADS");
  int n = env ? atoi(env) : 0;
  if (n <= 0) {
    cpu_set_t set;
    n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  }
  if (n > MAX_THREADS) n = MAX_THREADS;
  if (n < 1) n = 1;
  nthreads = n;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  for (int i = 1; i < n; i++) {
    pthread_t t;
    if (pthread_create(&t, &attr, pool_main, NULL) != 0) {
      nthreads = i;
      break;
    }
  }
  pthread_attr_destroy(&attr);
}

int cm_num_threads(void) {
  pthread_once(&once, pool_init);
  return nthreads;
}

void cm_parallel_for(int64_t n, int64_t min_chunk, cm_range_fn fn, void *ctx) {
  if (n <= 0) return;
  int threads = cm_num_threads();
  if (min_chunk < 1) min_chunk = 1;
  /* A few chunks per thread, taken in turn: on a busy machine one late
   * thread then delays the op by a small chunk, not by its whole share. */
  int64_t chunks = n / min_chunk;
  if (chunks > (int64_t)threads * 4) chunks = (int64_t)threads * 4;
  if (chunks < 2 || threads == 1) {
    fn(ctx, 0, n);
    return;
  }
  pthread_mutex_lock(&mu);
  if (busy) {
    pthread_mutex_unlock(&mu);
    fn(ctx, 0, n);
    return;
  }
  busy = true;
  job_fn = fn;
  job_ctx = ctx;
  job_n = n;
  job_chunks = (int)chunks;
  job_next = 0;
  job_left = (int)chunks;
  generation++;
  pthread_cond_broadcast(&start_cv);
  pthread_mutex_unlock(&mu);
  work_on_job();
  for (int i = 0; i < SPIN && atomic_load_explicit(&job_left, memory_order_acquire); i++)
    cpu_relax();
  pthread_mutex_lock(&mu);
  while (job_left) pthread_cond_wait(&done_cv, &mu);
  busy = false;
  pthread_mutex_unlock(&mu);
}
