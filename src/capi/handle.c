/* The store of handle cells (see handle.h for what it catches).
 *
 * Cells come from 64 KiB chunks aligned to their size, mapped once and
 * never unmapped: a freed cell must stay readable, and the chunk's base is found
 * from any cell address by masking, which is what the registry of
 * CMLX_CHECK_HANDLES looks up.  Allocation and free touch only the calling
 * thread's state (a bump pointer, the quarantine ring of handle.h and a
 * spill stack), because a mutex per op would cost more than the whole
 * check is allowed to; a cell freed by another thread than the one that
 * made it simply joins that thread's ring.  The common make and free are
 * inline in handle.h; what is here runs once a ring lap, on a bump, or
 * when makes and frees do not alternate.  Chunks are recorded in a global
 * table (under a lock, once per 2048 cells) for the registry.  Under ASan each chunk is a root
 * region of the leak checker, which does not scan mappings by itself: a
 * handle a program still holds at exit (a global default stream) keeps
 * its object reachable, as it did when ctx pointed at the object.  (So a
 * handle lost without its free is not reported either: its cell stays
 * live.) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "capi/capi.h"

#define CHUNK_BYTES 65536u
#define CHUNK_CELLS (CHUNK_BYTES / sizeof(capi_cell))
/* Dead cells a thread holds before it reuses the oldest: a use of a
 * handle freed fewer than this many frees ago is always caught.  The ring
 * has a few slots more (see capi_cell_new_slow). */
#define CAPI_QUARANTINE 4096
#define CAPI_RING (CAPI_QUARANTINE + 64)

_Static_assert(sizeof(capi_cell) == CAPI_CELL_ALIGN, "one cell per alignment unit");

bool capi_check_all;

static const char *const type_name[CAPI_H_COUNT] = {
    [CAPI_H_ARRAY] = "mlx_array",
    [CAPI_H_STREAM] = "mlx_stream",
    [CAPI_H_DEVICE] = "mlx_device",
    [CAPI_H_DEVICE_INFO] = "mlx_device_info",
    [CAPI_H_STRING] = "mlx_string",
    [CAPI_H_VECTOR_ARRAY] = "mlx_vector_array",
    [CAPI_H_VECTOR_VECTOR_ARRAY] = "mlx_vector_vector_array",
    [CAPI_H_VECTOR_INT] = "mlx_vector_int",
    [CAPI_H_VECTOR_STRING] = "mlx_vector_string",
    [CAPI_H_MAP_ARRAY] = "mlx_map_string_to_array",
    [CAPI_H_MAP_STRING] = "mlx_map_string_to_string",
    [CAPI_H_CLOSURE] = "mlx_closure",
    [CAPI_H_MAP_ARRAY_ITER] = "mlx_map_string_to_array_iterator",
    [CAPI_H_MAP_STRING_ITER] = "mlx_map_string_to_string_iterator",
    [CAPI_H_CLOSURE_KWARGS] = "mlx_closure_kwargs",
    [CAPI_H_CLOSURE_VALUE_AND_GRAD] = "mlx_closure_value_and_grad",
    [CAPI_H_CLOSURE_CUSTOM] = "mlx_closure_custom",
    [CAPI_H_CLOSURE_CUSTOM_JVP] = "mlx_closure_custom_jvp",
    [CAPI_H_CLOSURE_CUSTOM_VMAP] = "mlx_closure_custom_vmap",
    [CAPI_H_IO_READER] = "mlx_io_reader",
    [CAPI_H_IO_WRITER] = "mlx_io_writer",
    [CAPI_H_IO_GGUF] = "mlx_io_gguf",
    [CAPI_H_FUNCTION_EXPORTER] = "mlx_function_exporter",
    [CAPI_H_IMPORTED_FUNCTION] = "mlx_imported_function",
    [CAPI_H_DISTRIBUTED_GROUP] = "mlx_distributed_group",
    [CAPI_H_NODE_NAMER] = "mlx_node_namer",
    [CAPI_H_FAST_KERNEL_CONFIG] = "mlx_fast_metal_kernel_config",
    [CAPI_H_FAST_KERNEL] = "mlx_fast_metal_kernel",
};

__attribute__((constructor)) static void read_env(void) {
  const char *v = getenv("CMLX_CHECK_HANDLES");
  capi_check_all = v && *v && strcmp(v, "0") != 0;
}

/* ---- the chunk registry: an open-addressed set of chunk bases ---- */

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t *reg;      /* 0 = free slot */
static size_t reg_cap, reg_len;

static size_t slot_of(uintptr_t base, size_t cap) {
  return (size_t)((base / CHUNK_BYTES) * 0x9e3779b97f4a7c15ull) & (cap - 1);
}

static void reg_put(uintptr_t *tab, size_t cap, uintptr_t base) {
  size_t i = slot_of(base, cap);
  while (tab[i]) i = (i + 1) & (cap - 1);
  tab[i] = base;
}

/* Record a new chunk; false when the table cannot grow. */
static bool reg_add(uintptr_t base) {
  pthread_mutex_lock(&reg_mu);
  bool ok = true;
  if ((reg_len + 1) * 2 > reg_cap) {
    size_t ncap = reg_cap ? reg_cap * 2 : 64;
    uintptr_t *nt = calloc(ncap, sizeof *nt);
    if (!nt) {
      ok = false;
    } else {
      for (size_t i = 0; i < reg_cap; i++)
        if (reg[i]) reg_put(nt, ncap, reg[i]);
      free(reg);
      reg = nt;
      reg_cap = ncap;
    }
  }
  if (ok) {
    reg_put(reg, reg_cap, base);
    reg_len++;
  }
  pthread_mutex_unlock(&reg_mu);
  return ok;
}

static bool reg_has(uintptr_t base) {
  pthread_mutex_lock(&reg_mu);
  bool found = false;
  if (reg_cap)
    for (size_t i = slot_of(base, reg_cap); reg[i]; i = (i + 1) & (reg_cap - 1))
      if (reg[i] == base) {
        found = true;
        break;
      }
  pthread_mutex_unlock(&reg_mu);
  return found;
}

/* ---- per-thread allocation ---- */

/* What a thread's ring pointer starts at: one sentinel slot, so its first
 * new and its first free both take the slow path, which maps the ring. */
static capi_cell *const start_slot[1] = {CAPI_SLOT_END};

_Thread_local capi_tcache capi_tc
    __attribute__((tls_model("initial-exec"))) = {(capi_cell **)start_slot};

typedef struct {
  capi_cell *bump, *end; /* the rest of the current chunk */
  capi_cell *spill;      /* dead cells pushed out of the ring, all past quarantine */
  capi_cell **ring;      /* CAPI_RING slots and the sentinel; NULL until mapped */
  bool lapped;           /* wp has wrapped once: the slots ahead hold cells */
} cell_cache;

static _Thread_local cell_cache tc __attribute__((tls_model("initial-exec")));

/* A chunk aligned to its size, straight from mmap: taking it from malloc
 * (aligned_alloc) left split fragments in malloc's bins that every later
 * small allocation of the core then walked, which cost more than all the
 * checks together. */
static void *map_chunk(void) {
  size_t len = 2 * (size_t)CHUNK_BYTES;
  char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  uintptr_t a = ((uintptr_t)p + CHUNK_BYTES - 1) & ~(uintptr_t)(CHUNK_BYTES - 1);
  size_t head = a - (uintptr_t)p, tail = len - head - CHUNK_BYTES;
  if (head) munmap(p, head);
  if (tail) munmap((char *)a + CHUNK_BYTES, tail);
  return (void *)a;
}

static capi_cell *new_chunk(void) {
  capi_cell *c = map_chunk(); /* zero-filled */
  if (!c) return NULL;
  if (!reg_add((uintptr_t)c)) {
    munmap(c, CHUNK_BYTES);
    return NULL;
  }
#if defined(__SANITIZE_ADDRESS__)
  __lsan_register_root_region(c, CHUNK_BYTES);
#endif
  tc.bump = c;
  tc.end = c + CHUNK_CELLS;
  return c;
}

/* Point wp at the ring's first slot, mapping the ring on first use
 * (mmap, not malloc: it lives as long as its thread, and a thread that
 * exits leaves it, with its dead cells, behind, as it leaves its chunk's
 * unused cells; the leak checker does not count mappings).  False when it
 * cannot be had: the thread then frees without quarantine reuse (cells
 * stay dead for ever), which is safe. */
static bool ring_wrap(void) {
  if (tc.ring) {
    tc.lapped = true;
  } else {
    size_t len = (CAPI_RING + 1) * sizeof(capi_cell *);
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    tc.ring = p; /* zero: every slot free */
    tc.ring[CAPI_RING] = CAPI_SLOT_END;
  }
  capi_tc.wp = tc.ring;
  return true;
}

void *capi_cell_new_slow(capi_htype t, void *obj) {
  capi_cell **wp = capi_tc.wp, *c = NULL;
  if (*wp == CAPI_SLOT_END && tc.ring) {
    ring_wrap(); /* cannot fail once mapped */
    return capi_cell_new(t, obj);
  }
  if (tc.spill) {
    c = tc.spill;
    tc.spill = c->next;
  } else {
    /* The slots just ahead of wp hold the next oldest cells: the one at
     * wp + k has had CAPI_RING - 1 - k frees after its own, so while that is at
     * least CAPI_QUARANTINE it may be taken.  Taking one means two makes
     * in a row do not leave an untaken cell for the next free to spill.
     * (Before the first lap the slots ahead were never written.) */
    if (tc.lapped)
      for (int k = 1; k < CAPI_RING - CAPI_QUARANTINE && wp[k] != CAPI_SLOT_END; k++)
        if (wp[k]) {
          c = wp[k];
          wp[k] = NULL;
          break;
        }
  }
  if (!c) {
    if (tc.bump == tc.end && !new_chunk()) {
      capi_errorf("[%s] Out of memory.", type_name[t]);
      return NULL;
    }
    c = tc.bump++;
  }
  c->tag = capi_check_all ? CAPI_TAG_LIVE_REG(t) : CAPI_TAG_LIVE(t);
  c->obj = obj;
  c->next = NULL;
  return c;
}

/* Kill a live cell: its tag says freed, its object is gone, and it takes
 * this thread's next ring slot (never, in registry mode: it stays dead).
 * The slot's old cell, if no new handle took it, has waited a whole ring
 * and moves to the spill stack. */
static void cell_kill(capi_cell *c, capi_htype t) {
  c->tag = CAPI_TAG_DEAD(t);
  c->obj = NULL;
  if (capi_check_all) return;
  if (*capi_tc.wp == CAPI_SLOT_END && !ring_wrap()) return;
  capi_cell **wp = capi_tc.wp, *old = *wp;
  if (old) {
    old->next = tc.spill;
    tc.spill = old;
  }
  *wp = c;
  capi_tc.wp = wp + 1;
}

/* ---- checks ---- */

static bool is_cell(const void *ctx) {
  uintptr_t p = (uintptr_t)ctx;
  if (p & (CAPI_CELL_ALIGN - 1)) return false;
  return !capi_check_all || reg_has(p & ~(uintptr_t)(CHUNK_BYTES - 1));
}

static const char *name_of(uint32_t tag) {
  uint32_t t = tag & 0xffu;
  return t > 0 && t < CAPI_H_COUNT ? type_name[t] : NULL;
}

/* Why ctx (non-NULL) is not a live t, or NULL if it is one. */
static const char *diagnose(const void *ctx, capi_htype t, char *buf, size_t n) {
  if (!is_cell(ctx)) return "is invalid (not a handle cmlx made)";
  uint32_t tag = ((const capi_cell *)ctx)->tag;
  if (tag == (capi_check_all ? CAPI_TAG_LIVE_REG(t) : CAPI_TAG_LIVE(t))) return NULL;
  const char *other = name_of(tag);
  if (tag == CAPI_TAG_DEAD(t)) return "was freed";
  if (other && ((tag & ~0xffu) == CAPI_TAG_LIVE(0) || (tag & ~0xffu) == CAPI_TAG_LIVE_REG(0))) {
    snprintf(buf, n, "is an %s, not an %s", other, type_name[t]);
    return buf;
  }
  if (other && (tag & ~0xffu) == CAPI_TAG_DEAD(0)) {
    snprintf(buf, n, "is a freed %s, not an %s", other, type_name[t]);
    return buf;
  }
  return "is invalid (not a handle cmlx made)";
}

int capi_bad_handle(const char *fn, const void *ctx, capi_htype t) {
  char buf[128];
  const char *why = diagnose(ctx, t, buf, sizeof buf);
  if (!why) return 0;
  return capi_errorf("[%s] The %s handle %s.", fn, type_name[t], why);
}

int capi_need_handle(const char *fn, const void *ctx, capi_htype t) {
  if (!ctx) return capi_errorf("[%s] expected a non-empty %s", fn, type_name[t]);
  return capi_bad_handle(fn, ctx, t);
}

int capi_cell_free_slow(const char *fn, void *ctx, capi_htype t, void **obj) {
  *obj = NULL;
  if (!ctx) return 0; /* freeing an empty handle is fine, as in mlx-c */
  if (capi_live(ctx, t)) {
    capi_cell *c = ctx;
    *obj = c->obj;
    cell_kill(c, t);
    return 0;
  }
  char buf[128];
  const char *why = diagnose(ctx, t, buf, sizeof buf);
  if (why) {
    if (((uintptr_t)ctx & (CAPI_CELL_ALIGN - 1)) == 0 && is_cell(ctx) &&
        ((const capi_cell *)ctx)->tag == CAPI_TAG_DEAD(t))
      return capi_errorf("[%s] Double free of an %s handle.", fn, type_name[t]);
    return capi_errorf("[%s] The %s handle %s.", fn, type_name[t], why);
  }
  capi_cell *c = ctx;
  *obj = c->obj;
  cell_kill(c, t);
  return 0;
}
