/* Dependency tracking and topology keys for CUDA graphs (graph_plan.h). */
#include "backend/cuda/graph_plan.h"

#include <stdlib.h>
#include <string.h>

typedef struct cm_plan_slot {
  const void *addr; /* NULL: empty */
  int writer;       /* last node that wrote it, or -1 */
  int *readers;     /* nodes that read it since that write */
  int nreaders, readers_cap;
} cm_plan_slot;

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

void cm_graph_plan_init(cm_graph_plan *p) {
  memset(p, 0, sizeof *p);
  p->updatable = true;
  p->key = 0xcbf29ce484222325ull;
}

void cm_graph_plan_free(cm_graph_plan *p) {
  for (size_t i = 0; i < p->slot_cap; i++) free(p->slots[i].readers);
  free(p->slots);
  free(p->edge_from);
  free(p->edge_to);
  cm_graph_plan_init(p);
}

void cm_graph_plan_reset(cm_graph_plan *p) {
  for (size_t i = 0; i < p->slot_cap; i++) {
    p->slots[i].addr = NULL;
    p->slots[i].nreaders = 0;
  }
  p->slot_used = 0;
  p->n_edges = 0;
  p->n_nodes = 0;
  p->bytes = 0;
  p->key = 0xcbf29ce484222325ull;
  p->updatable = true;
}

static size_t hash_addr(const void *a, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)a;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

/* Double the table (its capacity is a power of two); -1 on out of memory. */
static int grow_slots(cm_graph_plan *p) {
  size_t cap = p->slot_cap ? p->slot_cap * 2 : 64;
  cm_plan_slot *s = calloc(cap, sizeof *s);
  if (!s) return -1;
  for (size_t i = 0; i < p->slot_cap; i++) {
    cm_plan_slot *o = &p->slots[i];
    if (!o->addr) {
      free(o->readers);
      continue;
    }
    size_t j = hash_addr(o->addr, cap);
    while (s[j].addr) j = (j + 1) & (cap - 1);
    s[j] = *o;
  }
  free(p->slots);
  p->slots = s;
  p->slot_cap = cap;
  return 0;
}

/* The slot of addr, made (with no history) when absent; NULL on out of
 * memory.  Finding an existing slot never moves the table. */
static cm_plan_slot *slot_of(cm_graph_plan *p, const void *addr) {
  if (p->slot_cap) {
    size_t j = hash_addr(addr, p->slot_cap);
    while (p->slots[j].addr) {
      if (p->slots[j].addr == addr) return &p->slots[j];
      j = (j + 1) & (p->slot_cap - 1);
    }
  }
  /* absent: insert (growing first keeps the table at most half full) */
  if ((p->slot_used + 1) * 2 > p->slot_cap && grow_slots(p)) return NULL;
  size_t j = hash_addr(addr, p->slot_cap);
  while (p->slots[j].addr) j = (j + 1) & (p->slot_cap - 1);
  cm_plan_slot *s = &p->slots[j];
  s->addr = addr;
  s->writer = -1;
  s->nreaders = 0;
  p->slot_used++;
  return s;
}

/* deps is a small set: the number of buffers a node touches bounds it. */
typedef struct dep_set {
  int *v;
  int n, cap;
} dep_set;

static int dep_add(dep_set *d, int node) {
  if (node < 0) return 0;
  for (int i = 0; i < d->n; i++)
    if (d->v[i] == node) return 0;
  if (d->n == d->cap) {
    int cap = d->cap ? d->cap * 2 : 16;
    int *v = realloc(d->v, sizeof(int) * (size_t)cap);
    if (!v) return -1;
    d->v = v, d->cap = cap;
  }
  d->v[d->n++] = node;
  return 0;
}

static int reserve_edges(cm_graph_plan *p, size_t more) {
  if (p->n_edges + more <= p->edge_cap) return 0;
  size_t cap = p->edge_cap ? p->edge_cap : 64;
  while (cap < p->n_edges + more) cap *= 2;
  int *f = realloc(p->edge_from, sizeof(int) * cap);
  if (!f) return -1;
  p->edge_from = f;
  int *t = realloc(p->edge_to, sizeof(int) * cap);
  if (!t) return -1;
  p->edge_to = t;
  p->edge_cap = cap;
  return 0;
}

static int add_reader(cm_plan_slot *s, int node) {
  if (s->nreaders && s->readers[s->nreaders - 1] == node) return 0;
  if (s->nreaders == s->readers_cap) {
    int cap = s->readers_cap ? s->readers_cap * 2 : 4;
    int *r = realloc(s->readers, sizeof(int) * (size_t)cap);
    if (!r) return -1;
    s->readers = r, s->readers_cap = cap;
  }
  s->readers[s->nreaders++] = node;
  return 0;
}

int cm_graph_plan_add(cm_graph_plan *p, cm_graph_node_kind kind, uint64_t kernel_id,
                      const void *const *reads, const size_t *read_bytes, int nreads,
                      const void *const *writes, const size_t *write_bytes, int nwrites) {
  int node = p->n_nodes;
  dep_set d = {0};
  int rc = 0;
  /* First find every dependency (slots may be made, which changes no
   * history), so that a failure leaves the plan's history as it was. */
  for (int i = 0; i < nreads && !rc; i++) {
    cm_plan_slot *s = slot_of(p, reads[i]);
    rc = !s || dep_add(&d, s->writer);
  }
  for (int i = 0; i < nwrites && !rc; i++) {
    cm_plan_slot *s = slot_of(p, writes[i]);
    rc = !s || dep_add(&d, s->writer);
    for (int k = 0; s && !rc && k < s->nreaders; k++)
      if (s->readers[k] != node) rc = dep_add(&d, s->readers[k]);
  }
  if (!rc) rc = reserve_edges(p, (size_t)d.n);
  /* Record the history: reads first, then writes (a node that reads and
   * writes one buffer, in place, ends up its writer with no readers). */
  for (int i = 0; i < nreads && !rc; i++) rc = add_reader(slot_of(p, reads[i]), node);
  if (rc) {
    /* undo the reads recorded so far */
    for (int i = 0; i < nreads; i++) {
      cm_plan_slot *s = slot_of(p, reads[i]);
      if (s && s->nreaders && s->readers[s->nreaders - 1] == node) s->nreaders--;
    }
    free(d.v);
    return -1;
  }
  for (int i = 0; i < nwrites; i++) {
    cm_plan_slot *s = slot_of(p, writes[i]); /* exists: found above */
    s->writer = node;
    s->nreaders = 0;
  }
  p->key = mix(mix(p->key, (uint64_t)kind), kernel_id);
  for (int i = 0; i < d.n; i++) {
    p->edge_from[p->n_edges] = d.v[i];
    p->edge_to[p->n_edges++] = node;
    p->key = mix(mix(p->key, (uint64_t)d.v[i] << 1 | 1), (uint64_t)node);
  }
  for (int i = 0; i < nreads; i++) p->bytes += read_bytes ? read_bytes[i] : 0;
  for (int i = 0; i < nwrites; i++) p->bytes += write_bytes ? write_bytes[i] : 0;
  if (kind != CM_GRAPH_KERNEL) p->updatable = false;
  free(d.v);
  return p->n_nodes++;
}

bool cm_graph_plan_full(const cm_graph_plan *p, int max_nodes, size_t max_mb) {
  return p->n_nodes >= max_nodes || (p->bytes >> 20) > max_mb;
}

/* ---- LRU ---- */

typedef struct cm_lru_entry {
  uint64_t key;
  void *value;
} cm_lru_entry;

void cm_graph_lru_init(cm_graph_lru *c, size_t capacity, void (*destroy)(void *value)) {
  c->entries = NULL;
  c->n = 0;
  c->cap = capacity;
  c->destroy = destroy;
}

void cm_graph_lru_free(cm_graph_lru *c) {
  for (size_t i = 0; i < c->n; i++) c->destroy(c->entries[i].value);
  free(c->entries);
  c->entries = NULL;
  c->n = 0;
}

static long find(const cm_graph_lru *c, uint64_t key) {
  for (size_t i = 0; i < c->n; i++)
    if (c->entries[i].key == key) return (long)i;
  return -1;
}

/* Move entry i to the front. */
static void to_front(cm_graph_lru *c, size_t i) {
  cm_lru_entry e = c->entries[i];
  memmove(c->entries + 1, c->entries, i * sizeof e);
  c->entries[0] = e;
}

void *cm_graph_lru_get(cm_graph_lru *c, uint64_t key) {
  long i = find(c, key);
  if (i < 0) return NULL;
  to_front(c, (size_t)i);
  return c->entries[0].value;
}

void *cm_graph_lru_take(cm_graph_lru *c, uint64_t key) {
  long i = find(c, key);
  if (i < 0) return NULL;
  void *v = c->entries[i].value;
  memmove(c->entries + i, c->entries + i + 1, (c->n - (size_t)i - 1) * sizeof *c->entries);
  c->n--;
  return v;
}

int cm_graph_lru_put(cm_graph_lru *c, uint64_t key, void *value) {
  if (c->cap == 0) {
    c->destroy(value);
    return 0;
  }
  long i = find(c, key);
  if (i >= 0) {
    if (c->entries[i].value != value) c->destroy(c->entries[i].value);
    c->entries[i].value = value;
    to_front(c, (size_t)i);
    return 0;
  }
  if (!c->entries) {
    c->entries = malloc(c->cap * sizeof *c->entries);
    if (!c->entries) return -1;
  }
  if (c->n == c->cap) c->destroy(c->entries[--c->n].value);
  memmove(c->entries + 1, c->entries, c->n * sizeof *c->entries);
  c->entries[0] = (cm_lru_entry){key, value};
  c->n++;
  return 0;
}
