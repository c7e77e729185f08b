/* The backend and kernel registry (core/backend.h).
 *
 * Kernels are found once per evaluated node, so the lookup is a few loads:
 * an open-addressed table keyed by the descriptor's address, written under
 * a lock and read without one.  A slot's kernels are stored before its key
 * is published, so a reader that sees the key sees a kernel (or NULL for a
 * device with none); replacing a kernel is one atomic store.  Keys are
 * never removed (removing a kernel stores NULL), so a probe sequence never
 * breaks.  There are about a hundred descriptors; the table holds four
 * times as many. */
#include "core/backend.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/error.h"

#define SLOTS 512 /* a power of two */

typedef struct slot {
  _Atomic(const cm_prim *) prim;
  _Atomic(cm_eval_fn) eval[CM_NUM_DEVICE_TYPES];
} slot;

static slot table[SLOTS];
static pthread_mutex_t register_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(const cm_backend *) backends[CM_NUM_DEVICE_TYPES];
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* The built-in backends register through the functions below while the
 * once routine runs; calling pthread_once again from there would
 * deadlock, so the initialising thread skips it. */
static _Thread_local bool initialising;
/* Set once the built-in backends are registered: every lookup after that
 * is one relaxed load here (thread-local storage in a shared library costs
 * a call per access, and this runs once per evaluated node). */
static atomic_bool init_done;
static void init_builtin(void) {
  initialising = true;
  cm_backends_init();
  initialising = false;
  atomic_store_explicit(&init_done, true, memory_order_release);
}
static inline void ensure_init(void) {
  if (atomic_load_explicit(&init_done, memory_order_acquire)) return;
  if (!initialising) pthread_once(&init_once, init_builtin);
}

static size_t slot_of(const cm_prim *prim) {
  uintptr_t h = (uintptr_t)prim;
  h ^= h >> 17;
  h *= (uintptr_t)0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 7) & (SLOTS - 1);
}

static bool valid_device(cm_device_type t) { return (unsigned)t < CM_NUM_DEVICE_TYPES; }

int cm_backend_register(const cm_backend *b) {
  ensure_init();
  if (!b || !valid_device(b->device))
    return cm_error(CM_ERR_VALUE, "[backend] Invalid backend registration.");
  pthread_mutex_lock(&register_mu);
  const cm_backend *old = atomic_load_explicit(&backends[b->device], memory_order_relaxed);
  /* A backend that replaces another brings its own kernels: the old
   * one's must not run against the new one's memory. */
  if (old && old != b)
    for (size_t i = 0; i < SLOTS; i++)
      atomic_store_explicit(&table[i].eval[b->device], NULL, memory_order_release);
  atomic_store_explicit(&backends[b->device], b, memory_order_release);
  pthread_mutex_unlock(&register_mu);
  return 0;
}

const cm_backend *cm_backend_for(cm_device_type t) {
  ensure_init();
  return valid_device(t) ? atomic_load_explicit(&backends[t], memory_order_acquire) : NULL;
}

int cm_backend_finish(cm_stream s) {
  const cm_backend *b = cm_backend_for(s.device.type);
  return b && b->finish ? b->finish(s) : 0;
}

int cm_device_info(cm_device d, cm_device_info_entry out[CM_DEVICE_INFO_MAX]) {
  const cm_backend *b = cm_backend_for(d.type);
  if (!b || !b->device_info || !cm_device_available(d)) return 0;
  int n = b->device_info(d.index, out);
  return n < 0 ? 0 : n > CM_DEVICE_INFO_MAX ? CM_DEVICE_INFO_MAX : n;
}

/* Called with register_mu held: prim's slot, claimed if new; NULL when the
 * table is full. */
static size_t used_slots;
static slot *claim_slot(const cm_prim *prim) {
  for (size_t i = slot_of(prim), n = 0; n < SLOTS; i = (i + 1) & (SLOTS - 1), n++) {
    const cm_prim *k = atomic_load_explicit(&table[i].prim, memory_order_relaxed);
    if (k == prim) return &table[i];
    if (!k) {
      if (used_slots == SLOTS - 1) return NULL; /* keep one empty: lookups end there */
      used_slots++;
      for (int d = 0; d < CM_NUM_DEVICE_TYPES; d++)
        atomic_store_explicit(&table[i].eval[d], NULL, memory_order_relaxed);
      atomic_store_explicit(&table[i].prim, prim, memory_order_release);
      return &table[i];
    }
  }
  return NULL;
}

static int register_locked(cm_device_type t, const cm_prim *prim, cm_eval_fn fn) {
  if (!prim || !valid_device(t))
    return cm_error(CM_ERR_VALUE, "[backend] Invalid kernel registration.");
  slot *s = claim_slot(prim);
  if (!s) return cm_error(CM_ERR_RUNTIME, "[backend] Too many primitives with kernels.");
  atomic_store_explicit(&s->eval[t], fn, memory_order_release);
  return 0;
}

int cm_kernel_register(cm_device_type t, const cm_prim *prim, cm_eval_fn fn) {
  ensure_init();
  pthread_mutex_lock(&register_mu);
  int rc = register_locked(t, prim, fn);
  pthread_mutex_unlock(&register_mu);
  return rc;
}

int cm_kernels_register(cm_device_type t, const cm_kernel_entry *entries, size_t n) {
  ensure_init();
  int rc = 0;
  pthread_mutex_lock(&register_mu);
  for (size_t i = 0; i < n && !rc; i++) rc = register_locked(t, entries[i].prim, entries[i].eval);
  pthread_mutex_unlock(&register_mu);
  return rc;
}

cm_eval_fn cm_kernel_lookup(cm_device_type t, const cm_prim *prim) {
  ensure_init();
  if (!valid_device(t)) return NULL;
  /* The table always keeps an empty slot (claim_slot stops one short),
   * so a probe ends at prim's slot or at an empty one. */
  for (size_t i = slot_of(prim);; i = (i + 1) & (SLOTS - 1)) {
    const cm_prim *k = atomic_load_explicit(&table[i].prim, memory_order_acquire);
    if (k == prim) {
      cm_eval_fn fn = atomic_load_explicit(&table[i].eval[t], memory_order_acquire);
      return fn ? fn : prim->eval;
    }
    if (!k) return prim->eval;
  }
}

/* Out of the lookup's way: the error is the rare path. */
static __attribute__((noinline, cold)) cm_eval_fn no_kernel(cm_device_type t, const cm_prim *prim,
                                                            const cm_params *p) {
  cm_error(CM_ERR_RUNTIME, "%s has no %s implementation.",
           cm_prim_name(prim, p, prim->params_size), t == CM_GPU ? "GPU" : "CPU");
  return NULL;
}

cm_eval_fn cm_kernel_for(cm_device_type t, const cm_prim *prim, const cm_params *p) {
  cm_eval_fn fn = cm_kernel_lookup(t, prim);
  return fn ? fn : no_kernel(t, prim, p);
}
