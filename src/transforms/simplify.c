/* Simplification of a compile trace (MLX's compile_simplify): equal
 * scalar constants become one, size-one elementwise nodes on constants are
 * folded into constants, Copy and StopGradient nodes go, and equivalent
 * nodes are merged, all in one forward walk that remaps each node's inputs
 * to what replaced them.  Every replacement computes the same bits (the
 * same kernels run on the same inputs), so replays are unchanged. */
#include "transforms/simplify.h"

#include <string.h>

#include "primitives/binary.h"
#include "primitives/layout.h"
#include "primitives/load.h"
#include "primitives/random.h"
#include "primitives/ternary.h"
#include "primitives/unary.h"
#include "transforms/eval.h"
#include "transforms/graph.h"
#include "transforms/ptrmap.h"

/* ---- tape helpers ---------------------------------------------------------- */

static bool is_placeholder(const cm_array *a) { return a->tracer && a->nin == 0 && a->prim; }

void cm_tape_set_input(cm_array *a, int i, cm_array *x) {
  cm_array *old = a->in[i];
  if (old == x) return;
  a->in[i] = cm_retain(x);
  cm_release(old);
}

void cm_tape_replace_uses(cm_tape *t, cm_array *x, cm_array *y) {
  for (size_t k = 0; k < t->len; k++) {
    cm_array *a = t->order[k];
    if (!cm_has_graph(a) || (a->sib && a->position)) continue; /* groups: once */
    for (int i = 0; i < a->nin; i++)
      if (a->in[i] == x) cm_tape_set_input(a, i, y);
  }
  for (int j = 0; j < t->nout; j++)
    if (t->outputs[j] == x) {
      t->outputs[j] = cm_retain(y);
      cm_release(x);
    }
}

int cm_tape_prune(cm_tape *t) {
  cm_ptrmap live = {0};
  int rc = 0;
  for (int j = 0; !rc && j < t->nout; j++)
    if (!cm_ptrmap_insert(&live, t->outputs[j])) rc = -1;
  /* backwards: a live node makes its inputs live (a group is live when any
   * output is; its outputs are next to each other in the order) */
  for (size_t k = t->len; !rc && k-- > 0;) {
    cm_array *a = t->order[k];
    bool on = cm_ptrmap_find(&live, a) != NULL;
    for (int j = 0; !on && a->sib && j < a->sib->n; j++)
      on = cm_ptrmap_find(&live, a->sib->out[j]) != NULL;
    if (!on || !cm_has_graph(a)) continue;
    for (int j = 0; !rc && a->sib && j < a->sib->n; j++)
      if (!cm_ptrmap_insert(&live, a->sib->out[j])) rc = -1;
    for (int i = 0; !rc && i < a->nin; i++)
      if (!cm_ptrmap_insert(&live, a->in[i])) rc = -1;
  }
  if (rc) {
    cm_ptrmap_free(&live);
    return cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
  }
  size_t n = 0;
  for (size_t k = 0; k < t->len; k++) {
    cm_array *a = t->order[k];
    bool keep = is_placeholder(a) || cm_ptrmap_find(&live, a);
    for (int j = 0; !keep && a->sib && j < a->sib->n; j++)
      keep = cm_ptrmap_find(&live, a->sib->out[j]) != NULL;
    if (keep) t->order[n++] = a;
    else cm_release(a);
  }
  t->len = n;
  cm_ptrmap_free(&live);
  return 0;
}

/* ---- the rewrites ---------------------------------------------------------- */

/* A constant scalar: evaluated, 0-d, no error. */
static bool is_scalar_constant(const cm_array *a) {
  return !cm_has_graph(a) && cm_is_evaluated(a) && !a->error && a->ndim == 0 && a->buf &&
         !a->raw_bytes;
}

static bool same_scalar(const cm_array *a, const cm_array *b) {
  return a->dtype == b->dtype && !memcmp(cm_data(a), cm_data(b), cm_itemsize(a));
}

/* Elementwise primitives whose size-one nodes on constants are folded. */
static bool foldable(const cm_array *a) {
  const cm_prim *p = a->prim;
  return (p == &cm_prim_unary || p == &cm_prim_binary || p == &cm_prim_select ||
          p == &cm_prim_astype || (p == &cm_prim_broadcast && a->nin == 1)) &&
         !a->sib && a->size == 1 && a->nin > 0;
}

/* Nodes that are never merged: random draws, loads, nodes without inputs
 * (placeholders, creation), groups, and blocks that own state. */
static bool mergeable(const cm_array *a) {
  const cm_prim *p = a->prim;
  return a->nin > 0 && !a->sib && p != &cm_prim_random_bits && p != &cm_prim_load &&
         p != &cm_prim_depends && !p->params_destroy;
}

static uint64_t node_key(const cm_array *a) {
  uint64_t h = cm_node_params_hash(a) ^ ((uint64_t)a->dtype * 0x9e3779b97f4a7c15ull);
  for (int i = 0; i < a->nin; i++) h = (h ^ (uint64_t)(uintptr_t)a->in[i]) * 0x100000001b3ull;
  for (int d = 0; d < a->ndim; d++) h = (h ^ (uint64_t)a->shape[d]) * 0x100000001b3ull;
  return h;
}

static bool equivalent(const cm_array *a, const cm_array *b) {
  if (a->prim != b->prim || a->dtype != b->dtype || a->nin != b->nin || !cm_same_shape(a, b) ||
      !cm_stream_equal(a->stream, b->stream) || !cm_node_params_equal(a, b))
    return false;
  for (int i = 0; i < a->nin; i++)
    if (a->in[i] != b->in[i]) return false;
  return true;
}

/* An open hash set of nodes by node_key (or, for scalars, by value). */
typedef struct node_set {
  cm_array **slot;
  uint64_t *key;
  size_t cap;
} node_set;

/* The node equal to a already in the set, or NULL after inserting a. */
static cm_array *set_find_or_add(node_set *s, cm_array *a, uint64_t key, bool scalar) {
  size_t i = (size_t)(key * 0xff51afd7ed558ccdull >> 17) & (s->cap - 1);
  for (;; i = (i + 1) & (s->cap - 1)) {
    cm_array *b = s->slot[i];
    if (!b) break;
    if (s->key[i] == key && (scalar ? same_scalar(a, b) : equivalent(a, b))) return b;
  }
  s->slot[i] = a;
  s->key[i] = key;
  return NULL;
}

/* A copy of size-one node a evaluated now, or NULL (a stays). */
static cm_array *fold(cm_array *a) {
  for (int i = 0; i < a->nin; i++)
    if (cm_has_graph(a->in[i]) || !cm_is_evaluated(a->in[i]) || a->in[i]->error) return NULL;
  cm_array *c = cm_node_new(a->dtype, a->ndim, a->shape, a->prim, a->params, a->params_size, a->in,
                            a->nin, a->stream);
  if (!c) return cm_error_clear(), NULL;
  if (cm_eval1(c) || c->error) {
    cm_error_clear();
    cm_release(c);
    return NULL;
  }
  return c;
}

int cm_simplify_tape(cm_tape *t) {
  size_t cap = 64;
  while (cap < 2 * t->len + 2) cap *= 2;
  node_set nodes = {calloc(cap, sizeof(cm_array *)), calloc(cap, sizeof(uint64_t)), cap};
  node_set scalars = {calloc(cap, sizeof(cm_array *)), calloc(cap, sizeof(uint64_t)), cap};
  cm_ptrmap repl = {0};
  cm_array **folded = malloc(sizeof *folded * (t->len ? t->len : 1));
  size_t nfolded = 0;
  int rc = folded && nodes.slot && nodes.key && scalars.slot && scalars.key ? 0 : -1;
  for (size_t k = 0; !rc && k < t->len; k++) {
    cm_array *a = t->order[k];
    if (cm_has_graph(a) && !(a->sib && a->position))
      for (int i = 0; i < a->nin; i++) {
        void **r = cm_ptrmap_find(&repl, a->in[i]);
        if (r) cm_tape_set_input(a, i, *r);
      }
    cm_array *with = NULL;
    if (cm_has_graph(a) && foldable(a) && (with = fold(a))) {
      /* the constant takes a's place in the order */
      t->order[k] = with;
      if (!cm_ptrmap_insert(&repl, a)) rc = -1;
      else *cm_ptrmap_find(&repl, a) = with;
      folded[nfolded++] = a; /* released at the end: the map keys on it */
      a = with;
      with = NULL;
    }
    if (is_scalar_constant(a)) {
      uint64_t key = (uint64_t)a->dtype;
      const unsigned char *p = cm_data(a);
      for (size_t b = 0; b < cm_itemsize(a); b++) key = (key ^ p[b]) * 0x100000001b3ull;
      with = set_find_or_add(&scalars, a, key, true);
    } else if (cm_has_graph(a) && (a->prim == &cm_prim_stop_gradient ||
                                   (a->prim == &cm_prim_copy && a->in[0]->dtype == a->dtype &&
                                    !a->in[0]->raw_bytes && !a->raw_bytes))) {
      with = a->in[0];
    } else if (cm_has_graph(a) && mergeable(a)) {
      with = set_find_or_add(&nodes, a, node_key(a), false);
    }
    if (with) {
      void **r = cm_ptrmap_insert(&repl, a);
      if (!r) rc = -1;
      else *r = with;
    }
  }
  for (int j = 0; !rc && j < t->nout; j++) {
    void **r = cm_ptrmap_find(&repl, t->outputs[j]);
    if (r) {
      cm_array *old = t->outputs[j];
      t->outputs[j] = cm_retain(*r);
      cm_release(old);
    }
  }
  free(nodes.slot), free(nodes.key), free(scalars.slot), free(scalars.key);
  cm_ptrmap_free(&repl);
  for (size_t k = 0; k < nfolded; k++) cm_release(folded[k]);
  free(folded);
  if (rc) return cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
  return cm_tape_prune(t);
}
