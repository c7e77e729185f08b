/* The buffer cache and counters, one pool per device type, over the raw
 * memory each backend registers (cm_allocator_impl, core/backend.h).  The
 * policy follows MLX's CPU allocator (mlx/backend/no_gpu/allocator.cpp) so
 * that the memory API reports the numbers MLX reports:
 *
 * - A new block is counted at the size asked for.  A freed block goes to
 *   its device's cache if the cache stays within its limit, else back to
 *   the device at once: a block larger than the limit never stays, so a
 *   loop over big temporaries of varying sizes keeps at most the limit
 *   resident.
 * - Up to MLX's CPU limit (32 MiB, or the cache limit if lower) that is
 *   all, and the cache behaves exactly as MLX's.  The rest of a larger
 *   limit (the CPU's default is RAM / 16, up to 1 GiB) holds only blocks
 *   the program has shown it reuses: one served from the cache, or one
 *   whose size was asked for again shortly after a block of that size was
 *   freed and not kept (the last 64 such sizes are remembered).  A
 *   training step's activations recur every step and stay cached; a loop
 *   over sizes that never recur keeps MLX's 32 MiB, not the whole limit.
 * - Cached blocks age by the bytes of new memory allocated since they were
 *   cached: past a whole cache limit of it the program has moved on, and
 *   the oldest go back to the system until the cache is down to MLX's
 *   part (a cache that serves every request never ages).  Large blocks
 *   are mapped memory (backend/cpu/allocator.c), so what goes back is
 *   unmapped at once.
 * - A request is served from the cache by the smallest cached block at
 *   least as big, if it wastes less than min(size, 8 KiB) (MLX's
 *   BufferCache with 4 KiB pages); among blocks of one size the oldest.
 *   The block keeps its own size in the counters.
 * - Lowering the cache limit frees the least recently cached blocks first
 *   (all of them when that is at least 90% of the cache).
 * - The limits default to what the device's allocator says (the CPU's:
 *   backend/cpu/allocator.c).  New memory that would take active + cache
 *   over the memory limit first takes the difference out of the cache (as
 *   MLX's GPU allocators do under pressure).  With the limit set strict
 *   (cm_memory_set_limit_relaxed, MLX's relaxed=False) an allocation that
 *   still does not fit waits for scheduled work that can finish without
 *   it (core/scheduler.h) and tries again, then fails with MLX's
 *   MemoryError; relaxed (the default) it proceeds.  The wired limit does
 *   not exist (0). */
#include "core/allocator.h"

#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/error.h"
#include "core/scheduler.h"

#define PAGE 4096 /* MLX's BufferCache page size */
/* Requests beyond this could not be rounded up to whole pages by a
 * device's raw allocator (the CPU's rounds to 2 MiB). */
#define MAX_REQUEST (SIZE_MAX / 2)
#define UNKNOWN_TOTAL_LIMIT ((size_t)1 << 33)
#define TRIAL_LIMIT ((size_t)32 << 20) /* MLX's CPU cache limit */
#define NGHOSTS 64

/* The cached blocks of one size, oldest first (FIFO through bin_next). */
typedef struct bin {
  size_t size;
  cm_buffer *head, *tail;
} bin;

/* One device type's cache and counters.  One lock guards them:
 * allocation happens once per op output, far less often than the kernels'
 * inner loops. */
typedef struct pool {
  pthread_mutex_t lock;
  /* Set once (under config_mu), before ready is published; then fixed. */
  const cm_allocator_impl *impl;
  atomic_bool ready;
  /* Bins sorted by size: a request finds its best fit by binary search.
   * There are as many bins as distinct cached sizes, a few hundred at most
   * in practice, so inserting one by moving the tail is cheap. */
  bin *bins;
  size_t nbins, bins_cap;
  /* Every cached block, newest at lru_head: eviction order. */
  cm_buffer *lru_head, *lru_tail;
  size_t active_bytes, peak_bytes, cache_bytes;
  size_t memory_limit, cache_limit;
  bool strict; /* the memory limit is enforced (relaxed=False) */
  /* Cached bytes of blocks not (yet) recurring: at most trial_cap. */
  size_t trial_bytes;
  /* The cache's clock: bytes of new memory allocated so far. */
  size_t miss_bytes;
  /* Sizes of blocks freed and not kept, newest at ghost_next - 1 (0:
   * empty): a new block of such a size is recurring. */
  size_t ghosts[NGHOSTS];
  unsigned ghost_next;
} pool;

_Static_assert(CM_NUM_DEVICE_TYPES == 2, "one initialiser per device type below");
static pool pools[CM_NUM_DEVICE_TYPES] = {{.lock = PTHREAD_MUTEX_INITIALIZER},
                                          {.lock = PTHREAD_MUTEX_INITIALIZER}};

/* The totals the memory API reports: active over every pool, and the peak
 * of that sum (what one allocator for every device, as MLX has, would
 * see).  While one pool is bound (every CPU-only process) the totals are
 * that pool's own counters, and allocation pays for no atomic update;
 * binding a second pool starts the sums (bind_pool, holding every pool's
 * lock so that no allocation is counted twice or missed), which are then
 * updated inside the pool's lock, next to the pool's own counters. */
static atomic_size_t total_active, total_peak;
static atomic_int bound_pools;

/* Binding pools and the limits set through the memory API.  Taken before
 * a pool's lock, never after one. */
static pthread_mutex_t config_mu = PTHREAD_MUTEX_INITIALIZER;
static bool memory_limit_set, cache_limit_set, memory_strict_value;
static size_t memory_limit_value, cache_limit_value;

static bool valid_type(cm_device_type t) { return (unsigned)t < CM_NUM_DEVICE_TYPES; }

/* Publish p (called under config_mu).  The second pool bound turns the
 * totals into running sums, seeded from the first pool's counters with
 * every lock held. */
static void bind_pool(pool *p) {
  for (int t = 0; t < CM_NUM_DEVICE_TYPES; t++) pthread_mutex_lock(&pools[t].lock);
  if (atomic_load_explicit(&bound_pools, memory_order_relaxed) == 1) {
    size_t active = 0, peak = 0;
    for (int t = 0; t < CM_NUM_DEVICE_TYPES; t++) {
      active += pools[t].active_bytes;
      if (pools[t].peak_bytes > peak) peak = pools[t].peak_bytes;
    }
    atomic_store_explicit(&total_active, active, memory_order_relaxed);
    atomic_store_explicit(&total_peak, peak, memory_order_relaxed);
  }
  atomic_fetch_add_explicit(&bound_pools, 1, memory_order_relaxed);
  atomic_store_explicit(&p->ready, true, memory_order_release);
  for (int t = CM_NUM_DEVICE_TYPES - 1; t >= 0; t--) pthread_mutex_unlock(&pools[t].lock);
}

/* t's pool with its allocator bound, or NULL when no backend with an
 * allocator is registered for t.  The allocator is asked for its totals
 * outside every lock (the registry may be initialising on this thread). */
static pool *pool_bind(cm_device_type t);
static inline pool *pool_get(cm_device_type t) {
  if (!valid_type(t)) return NULL;
  pool *p = &pools[t];
  return atomic_load_explicit(&p->ready, memory_order_acquire) ? p : pool_bind(t);
}

static pool *pool_bind(cm_device_type t) {
  pool *p = &pools[t];
  const cm_backend *b = cm_backend_for(t);
  const cm_allocator_impl *impl = b ? b->allocator : NULL;
  if (!impl || !impl->raw_alloc || !impl->raw_free) return NULL;
  size_t total = impl->total_memory ? impl->total_memory(impl->ctx) : 0;
  size_t mem = (size_t)(impl->default_limit_fraction * (double)total);
  if (mem == 0) mem = UNKNOWN_TOTAL_LIMIT;
  size_t cache = impl->default_cache_limit ? impl->default_cache_limit(total, impl->ctx) : mem;
  pthread_mutex_lock(&config_mu);
  if (!atomic_load_explicit(&p->ready, memory_order_relaxed)) {
    p->impl = impl;
    p->memory_limit = memory_limit_set ? memory_limit_value : mem;
    p->strict = memory_strict_value;
    p->cache_limit = cache_limit_set ? cache_limit_value : cache;
    bind_pool(p);
  }
  pthread_mutex_unlock(&config_mu);
  return p;
}

/* The pool a block of b's device belongs to: bound, as it allocated b. */
static pool *pool_of(const cm_buffer *b) { return &pools[b->device]; }

static bool summing(void) { return atomic_load_explicit(&bound_pools, memory_order_relaxed) > 1; }

static void count_alloc_locked(pool *p, size_t size) {
  p->active_bytes += size;
  if (p->active_bytes > p->peak_bytes) p->peak_bytes = p->active_bytes;
  if (!summing()) return;
  size_t now = atomic_fetch_add_explicit(&total_active, size, memory_order_relaxed) + size;
  size_t peak = atomic_load_explicit(&total_peak, memory_order_relaxed);
  while (now > peak && !atomic_compare_exchange_weak_explicit(
                           &total_peak, &peak, now, memory_order_relaxed, memory_order_relaxed)) {}
}

static void count_free_locked(pool *p, size_t size) {
  p->active_bytes -= size;
  if (summing()) atomic_fetch_sub_explicit(&total_active, size, memory_order_relaxed);
}

static void buffer_destroy(cm_buffer *b) {
  const cm_allocator_impl *impl = pool_of(b)->impl;
  impl->raw_free(b->ptr, b->size, impl->ctx);
  free(b);
}

/* ---- the cache ---- */

/* Index of the first bin of p whose size is >= size (nbins if none). */
static size_t lower_bound(const pool *p, size_t size) {
  size_t lo = 0, hi = p->nbins;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (p->bins[mid].size < size) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static void lru_unlink(pool *p, cm_buffer *b) {
  if (b->lru_prev) b->lru_prev->lru_next = b->lru_next;
  else p->lru_head = b->lru_next;
  if (b->lru_next) b->lru_next->lru_prev = b->lru_prev;
  else p->lru_tail = b->lru_prev;
  b->lru_prev = b->lru_next = NULL;
}

/* Take the oldest block of bin i out of the cache. */
static cm_buffer *bin_pop(pool *p, size_t i) {
  bin *bins = p->bins;
  cm_buffer *b = bins[i].head;
  bins[i].head = b->bin_next;
  b->bin_next = NULL;
  if (!bins[i].head) {
    memmove(&bins[i], &bins[i + 1], (p->nbins - i - 1) * sizeof *bins);
    p->nbins--;
  }
  lru_unlink(p, b);
  p->cache_bytes -= b->size;
  if (!b->recurring) p->trial_bytes -= b->size;
  return b;
}

/* The least recently cached block, out of the cache.  Bins and the LRU
 * list are both in caching order, so the oldest block overall is the
 * oldest of its size: the head of its bin. */
static cm_buffer *pop_oldest(pool *p) {
  cm_buffer *b = p->lru_tail;
  size_t i = lower_bound(p, b->size);
  assert(i < p->nbins && p->bins[i].head == b);
  return bin_pop(p, i);
}

static size_t fit_waste(size_t size) {
  return size < 2 * PAGE ? size : 2 * PAGE; /* min(2 size, size + 2 pages) - size */
}

/* What blocks that do not recur may hold of the cache: MLX's limit. */
static size_t trial_cap(const pool *p) {
  return p->cache_limit < TRIAL_LIMIT ? p->cache_limit : TRIAL_LIMIT;
}

static void ghost_note(pool *p, size_t size) {
  if (size) p->ghosts[p->ghost_next++ % NGHOSTS] = size;
}

/* Whether a block of exactly this size was freed lately and not kept: a
 * tensor of the same shape again, as each step of a loop asks for.  (Not
 * the cache's looser fit, so that sizes that merely come close, as in a
 * loop over random sizes, do not count.) */
static bool ghost_seen(const pool *p, size_t size) {
  for (int i = 0; i < NGHOSTS; i++)
    if (p->ghosts[i] == size) return true;
  return false;
}

static cm_buffer *reuse_locked(pool *p, size_t size) {
  size_t i = lower_bound(p, size);
  if (i == p->nbins || p->bins[i].size - size >= fit_waste(size)) return NULL;
  cm_buffer *b = bin_pop(p, i);
  b->recurring = true; /* reused: the program comes back for this size */
  return b;
}

/* Whether the cache keeps b when it is freed. */
static bool admits(const pool *p, const cm_buffer *b) {
  if (b->size == 0 || p->cache_bytes + b->size > p->cache_limit) return false;
  return b->recurring || p->trial_bytes + b->size <= trial_cap(p);
}

/* Put b in the cache; false (b not cached) if the bin list cannot grow. */
static bool recycle_locked(pool *p, cm_buffer *b) {
  size_t i = lower_bound(p, b->size);
  if (i == p->nbins || p->bins[i].size != b->size) {
    if (p->nbins == p->bins_cap) {
      size_t cap = p->bins_cap ? 2 * p->bins_cap : 64;
      bin *nb = realloc(p->bins, cap * sizeof *nb);
      if (!nb) return false;
      p->bins = nb;
      p->bins_cap = cap;
    }
    memmove(&p->bins[i + 1], &p->bins[i], (p->nbins - i) * sizeof *p->bins);
    p->nbins++;
    p->bins[i] = (bin){b->size, NULL, NULL};
  }
  bin *bn = &p->bins[i];
  b->bin_next = NULL;
  if (bn->tail) bn->tail->bin_next = b;
  else bn->head = b;
  bn->tail = b;
  b->lru_prev = NULL;
  b->lru_next = p->lru_head;
  if (p->lru_head) p->lru_head->lru_prev = b;
  else p->lru_tail = b;
  p->lru_head = b;
  p->cache_bytes += b->size;
  if (!b->recurring) p->trial_bytes += b->size;
  b->stamp = p->miss_bytes;
  return true;
}

/* Unlink the least recently cached blocks until at least want bytes are
 * out (everything when that is 90% of the cache, as MLX); the caller frees
 * the returned chain (linked by bin_next) outside the lock. */
static cm_buffer *evict_locked(pool *p, size_t want) {
  cm_buffer *chain = NULL;
  bool all = (double)want >= 0.9 * (double)p->cache_bytes;
  size_t freed = 0;
  while (p->lru_tail && (all || freed < want)) {
    cm_buffer *b = pop_oldest(p);
    freed += b->size;
    b->bin_next = chain;
    chain = b;
  }
  return chain;
}

/* Push onto *chain the oldest blocks that sat through more than a cache
 * limit of new memory, while the cache holds more than MLX's part. */
static void age_locked(pool *p, cm_buffer **chain) {
  while (p->cache_bytes > trial_cap(p) && p->miss_bytes - p->lru_tail->stamp > p->cache_limit) {
    cm_buffer *b = pop_oldest(p);
    ghost_note(p, b->size);
    b->bin_next = *chain;
    *chain = b;
  }
}

/* Before n bytes of new memory are taken (the clock advanced): the cache
 * gives back what would put active + cache over the memory limit, and
 * what aged out.  The caller frees the chain outside the lock. */
static cm_buffer *make_room_locked(pool *p, size_t n) {
  cm_buffer *chain = NULL;
  size_t need = p->active_bytes + p->cache_bytes + n;
  if (need > p->memory_limit && p->cache_bytes) chain = evict_locked(p, need - p->memory_limit);
  age_locked(p, &chain);
  return chain;
}

static void free_chain(cm_buffer *chain) {
  while (chain) {
    cm_buffer *next = chain->bin_next;
    buffer_destroy(chain);
    chain = next;
  }
}

/* ---- buffers ---- */

/* A new block of nbytes from p's device, or NULL with MLX's error. */
static cm_buffer *fresh_block(pool *p, cm_device_type t, size_t nbytes, bool recurring) {
  cm_buffer *b = malloc(sizeof *b);
  void *ptr = b ? p->impl->raw_alloc(nbytes, p->impl->ctx) : NULL;
  if (!ptr) {
    free(b);
    cm_error(CM_ERR_MEMORY, "[malloc] Unable to allocate %zu bytes.", nbytes);
    return NULL;
  }
  b->ptr = ptr;
  b->size = nbytes;
  b->device = (unsigned char)t;
  b->recurring = recurring;
  b->lru_prev = b->lru_next = b->bin_next = NULL;
  return b;
}

cm_buffer *cm_buffer_alloc_on(cm_device_type t, size_t nbytes) {
  if (nbytes > MAX_REQUEST) {
    cm_error(
        CM_ERR_MEMORY,
        "[malloc] Attempting to allocate %zu bytes which is greater than the supported maximum.",
        nbytes);
    return NULL;
  }
  pool *p = pool_get(t);
  if (!p) {
    cm_error(CM_ERR_RUNTIME, "[malloc] No allocator is registered for the %s device.",
             valid_type(t) ? cm_device_type_name(t) : "unknown");
    return NULL;
  }
  cm_buffer *b;
  for (;;) {
    pthread_mutex_lock(&p->lock);
    b = reuse_locked(p, nbytes);
    if (b) break;
    bool refused = p->strict && nbytes && p->active_bytes + nbytes > p->memory_limit;
    bool recurring = false;
    cm_buffer *chain = NULL;
    if (refused) { /* the cache first: freeing it cannot hurt anyone */
      chain = evict_locked(p, p->cache_bytes);
    } else {
      p->miss_bytes += nbytes;
      recurring = nbytes && ghost_seen(p, nbytes);
      chain = make_room_locked(p, nbytes);
    }
    pthread_mutex_unlock(&p->lock);
    free_chain(chain);
    if (!refused) {
      if (!(b = fresh_block(p, t, nbytes, recurring))) return NULL;
      pthread_mutex_lock(&p->lock);
      break;
    }
    /* Work still running may free what this needs; when none can finish
     * without this allocation, waiting would never end. */
    if (!cm_sched_wait_for_progress()) {
      cm_error(CM_ERR_MEMORY, "[malloc] Unable to allocate %zu bytes.", nbytes);
      return NULL;
    }
  }
  count_alloc_locked(p, b->size);
  pthread_mutex_unlock(&p->lock);
  atomic_init(&b->refs, 1);
  b->nbytes = nbytes;
  b->wrapped = false;
  b->dtor = NULL;
  b->payload = NULL;
  return b;
}

cm_buffer *cm_buffer_alloc(size_t nbytes) { return cm_buffer_alloc_on(CM_CPU, nbytes); }

cm_buffer *cm_buffer_wrap(void *ptr, size_t nbytes, void (*dtor)(void *), void *payload) {
  cm_buffer *b = calloc(1, sizeof *b);
  if (!b) {
    cm_error(CM_ERR_MEMORY, "[malloc] Unable to allocate a buffer handle.");
    return NULL;
  }
  atomic_init(&b->refs, 1);
  b->ptr = ptr;
  b->nbytes = nbytes;
  b->wrapped = true;
  b->device = CM_CPU; /* host memory */
  b->dtor = dtor;
  b->payload = payload;
  return b;
}

void cm_buffer_release(cm_buffer *b) {
  if (!b || atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1) return;
  if (b->wrapped) {
    if (b->dtor) b->dtor(b->payload);
    free(b);
    return;
  }
  pool *p = pool_of(b);
  pthread_mutex_lock(&p->lock);
  count_free_locked(p, b->size);
  if (admits(p, b) && recycle_locked(p, b)) b = NULL;
  else ghost_note(p, b->size);
  pthread_mutex_unlock(&p->lock);
  if (b) buffer_destroy(b);
}

/* ---- one device's numbers ---- */

/* A counter of t's pool, read under its lock; 0 for a pool never bound
 * (it has no blocks and, without an allocator, no limits). */
static size_t pool_read(cm_device_type t, size_t pool_offset, bool bind) {
  pool *p = bind ? pool_get(t) : valid_type(t) ? &pools[t] : NULL;
  if (!p || !atomic_load_explicit(&p->ready, memory_order_acquire)) return 0;
  pthread_mutex_lock(&p->lock);
  size_t v = *(const size_t *)((const char *)p + pool_offset);
  pthread_mutex_unlock(&p->lock);
  return v;
}

#define POOL_READ(t, field, bind) pool_read(t, offsetof(pool, field), bind)

size_t cm_memory_active_on(cm_device_type t) { return POOL_READ(t, active_bytes, false); }
size_t cm_memory_peak_on(cm_device_type t) { return POOL_READ(t, peak_bytes, false); }
size_t cm_memory_cache_on(cm_device_type t) { return POOL_READ(t, cache_bytes, false); }
size_t cm_memory_limit_on(cm_device_type t) { return POOL_READ(t, memory_limit, true); }
size_t cm_memory_cache_limit_on(cm_device_type t) { return POOL_READ(t, cache_limit, true); }

void cm_memory_clear_cache_on(cm_device_type t) {
  if (!valid_type(t) || !atomic_load_explicit(&pools[t].ready, memory_order_acquire)) return;
  pool *p = &pools[t];
  pthread_mutex_lock(&p->lock);
  cm_buffer *chain = evict_locked(p, p->cache_bytes);
  pthread_mutex_unlock(&p->lock);
  free_chain(chain);
}

/* ---- the memory API: totals ---- */

/* The device whose limits the memory API reads back: the accelerator when
 * one is present (a CUDA build's one allocator is the GPU's), else the
 * CPU. */
static cm_device_type primary_device(void) {
  return cm_device_count(CM_GPU) > 0 && pool_get(CM_GPU) ? CM_GPU : CM_CPU;
}

/* With one pool bound the totals are its counters (the other reads 0). */
size_t cm_memory_active(void) {
  if (summing()) return atomic_load(&total_active);
  return cm_memory_active_on(CM_CPU) + cm_memory_active_on(CM_GPU);
}

size_t cm_memory_peak(void) {
  if (summing()) return atomic_load(&total_peak);
  return cm_memory_peak_on(CM_CPU) + cm_memory_peak_on(CM_GPU);
}

size_t cm_memory_cache(void) {
  size_t sum = 0;
  for (int t = 0; t < CM_NUM_DEVICE_TYPES; t++) sum += cm_memory_cache_on((cm_device_type)t);
  return sum;
}

/* Every pool's lock at once (in index order, the only place two are
 * held), so no allocation lands between resetting one peak and another. */
void cm_memory_reset_peak(void) {
  for (int t = 0; t < CM_NUM_DEVICE_TYPES; t++) pthread_mutex_lock(&pools[t].lock);
  for (int t = 0; t < CM_NUM_DEVICE_TYPES; t++) pools[t].peak_bytes = 0;
  atomic_store(&total_peak, 0);
  for (int t = CM_NUM_DEVICE_TYPES - 1; t >= 0; t--) pthread_mutex_unlock(&pools[t].lock);
}

size_t cm_memory_limit(void) { return cm_memory_limit_on(primary_device()); }

/* Set a limit on every bound pool, and record it for pools bound later;
 * the previous value is the primary device's.  For the cache limit, each
 * pool then evicts down to it. */
static size_t set_limit_all(bool cache, size_t limit, bool strict) {
  cm_device_type primary = primary_device();
  pool_get(primary); /* so it reports its own previous limit */
  size_t old = 0;
  cm_buffer *chains[CM_NUM_DEVICE_TYPES] = {0};
  pthread_mutex_lock(&config_mu);
  if (cache) cache_limit_set = true, cache_limit_value = limit;
  else memory_limit_set = true, memory_limit_value = limit, memory_strict_value = strict;
  for (int t = 0; t < CM_NUM_DEVICE_TYPES; t++) {
    pool *p = &pools[t];
    if (!atomic_load_explicit(&p->ready, memory_order_acquire)) continue;
    pthread_mutex_lock(&p->lock);
    size_t *field = cache ? &p->cache_limit : &p->memory_limit;
    if (t == (int)primary) old = *field;
    *field = limit;
    if (!cache) p->strict = strict;
    if (cache && p->cache_bytes > limit) chains[t] = evict_locked(p, p->cache_bytes - limit);
    pthread_mutex_unlock(&p->lock);
  }
  pthread_mutex_unlock(&config_mu);
  for (int t = 0; t < CM_NUM_DEVICE_TYPES; t++) free_chain(chains[t]);
  return old;
}

size_t cm_memory_set_limit(size_t limit) { return set_limit_all(false, limit, false); }
size_t cm_memory_set_limit_relaxed(size_t limit, bool relaxed) {
  return set_limit_all(false, limit, !relaxed);
}
size_t cm_memory_set_cache_limit(size_t limit) { return set_limit_all(true, limit, false); }

size_t cm_memory_set_wired_limit(size_t limit) {
  (void)limit; /* MLX's CPU build keeps no wired memory and returns 0 */
  return 0;
}

void cm_memory_clear_cache(void) {
  for (int t = 0; t < CM_NUM_DEVICE_TYPES; t++) cm_memory_clear_cache_on((cm_device_type)t);
}

size_t cm_memory_total_ram(void) {
  pool *p = pool_get(CM_CPU);
  return p && p->impl->total_memory ? p->impl->total_memory(p->impl->ctx) : 0;
}
