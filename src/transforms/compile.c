#include "transforms/compile.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ops/common.h"
#include "transforms/eval.h"
#include "transforms/graph.h"
#include "transforms/simplify.h"

/* ---- modes ---------------------------------------------------------------- */

static atomic_int mode = -1; /* -1: not read from the environment yet */

void cm_set_compile_mode(cm_compile_mode m) { atomic_store(&mode, (int)m); }

cm_compile_mode cm_get_compile_mode(void) {
  int m = atomic_load(&mode);
  if (m < 0) {
    const char *env = getenv("MLX_DISABLE_COMPILE");
    int want = env && *env && strcmp(env, "0") ? CM_COMPILE_DISABLED : CM_COMPILE_ENABLED;
    int expected = -1;
    atomic_compare_exchange_strong(&mode, &expected, want);
    m = atomic_load(&mode);
  }
  return (cm_compile_mode)m;
}

/* ---- traces --------------------------------------------------------------- */

/* Placeholders are never evaluated: tracing forbids eval (see eval.h). */
static int placeholder_eval(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)out, (void)in, (void)nin, (void)p;
  return cm_error(CM_ERR_VALUE, "[compile] A compile placeholder cannot be evaluated.");
}
static const cm_prim placeholder = {.name = "CompilePlaceholder", .eval = placeholder_eval};

typedef struct entry {
  struct entry *next;
  uint64_t *constants;
  int nconst, nin;
  cm_dtype *dtypes;
  int *ndims;
  int32_t *dims;      /* every input's shape, one after another */
  cm_array **inputs;  /* the placeholders */
  cm_array **outputs; /* what f returned on them */
  int nout;
  /* The graph between them, inputs before consumers: order[k] is rebuilt
   * on a replay when rebuild[k] (it has a graph), reused as it is (an
   * evaluated constant) otherwise.  Nodes that do not depend on an input
   * are private copies, so the caller evaluating the originals (closure
   * arrays, say) never changes the trace under a replay; originals keeps
   * what the copies replaced, since index maps their addresses too. */
  cm_array **order;
  bool *rebuild;
  cm_array **originals;
  size_t noriginals;
  size_t len;
  cm_ptrmap index; /* traced node -> its position in order + 1 */
  /* The tracing thread's default stream: nodes built on it are rebuilt on
   * the default stream of the thread that replays. */
  cm_stream trace_default;
  void *extra;
} entry;

struct cm_compiled {
  bool shapeless;
  void (*extra_free)(void *);
  pthread_mutex_t mu;
  entry *head;
};

static void entry_free(cm_compiled *c, entry *e) {
  if (!e) return;
  if (e->extra && c->extra_free) c->extra_free(e->extra);
  cm_array_list_free(e->inputs, e->nin);
  cm_array_list_free(e->outputs, e->nout);
  for (size_t k = 0; k < e->len; k++) cm_release(e->order[k]);
  free(e->order);
  free(e->rebuild);
  cm_array_list_free(e->originals, (int)e->noriginals);
  cm_ptrmap_free(&e->index);
  free(e->constants);
  free(e->dtypes);
  free(e->ndims);
  free(e->dims);
  free(e);
}

cm_compiled *cm_compiled_new(bool shapeless, void (*extra_free)(void *)) {
  cm_compiled *c = calloc(1, sizeof *c);
  if (!c) return cm_error(CM_ERR_MEMORY, "[compile] Out of memory."), NULL;
  c->shapeless = shapeless;
  c->extra_free = extra_free;
  pthread_mutex_init(&c->mu, NULL);
  return c;
}

void cm_compiled_clear(cm_compiled *c) {
  pthread_mutex_lock(&c->mu);
  entry *e = c->head;
  c->head = NULL;
  pthread_mutex_unlock(&c->mu);
  while (e) {
    entry *n = e->next;
    entry_free(c, e);
    e = n;
  }
}

void cm_compiled_free(cm_compiled *c) {
  if (!c) return;
  cm_compiled_clear(c);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

static bool entry_matches(const entry *e, bool shapeless, cm_array *const *in, int nin,
                          const uint64_t *constants, int nconst) {
  if (e->nin != nin || e->nconst != nconst ||
      (nconst && memcmp(e->constants, constants, sizeof *constants * (size_t)nconst)))
    return false;
  const int32_t *d = e->dims;
  for (int i = 0; i < nin; i++) {
    if (in[i]->dtype != e->dtypes[i] || in[i]->ndim != e->ndims[i] ||
        (!shapeless && !cm_shape_equal(in[i]->ndim, in[i]->shape, e->ndims[i], d)))
      return false;
    d += e->ndims[i];
  }
  return true;
}

/* The key of a new entry: constants, and each input's dtype and shape. */
static int entry_key(entry *e, cm_array *const *in, int nin, const uint64_t *constants,
                     int nconst) {
  size_t ndims = 0;
  for (int i = 0; i < nin; i++) ndims += (size_t)in[i]->ndim;
  e->nin = nin;
  e->nconst = nconst;
  e->constants = malloc(sizeof *constants * (size_t)(nconst ? nconst : 1));
  e->dtypes = malloc(sizeof *e->dtypes * (size_t)(nin ? nin : 1));
  e->ndims = malloc(sizeof *e->ndims * (size_t)(nin ? nin : 1));
  e->dims = malloc(sizeof *e->dims * (ndims ? ndims : 1));
  e->inputs = calloc((size_t)(nin ? nin : 1), sizeof *e->inputs);
  if (!e->constants || !e->dtypes || !e->ndims || !e->dims || !e->inputs)
    return cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
  if (nconst) memcpy(e->constants, constants, sizeof *constants * (size_t)nconst);
  int32_t *d = e->dims;
  for (int i = 0; i < nin; i++) {
    e->dtypes[i] = in[i]->dtype;
    e->ndims[i] = in[i]->ndim;
    if (in[i]->ndim) memcpy(d, in[i]->shape, sizeof *d * (size_t)in[i]->ndim);
    d += in[i]->ndim;
  }
  return 0;
}

/* Put copy in the place of original x in the order (index keeps both). */
static int file_copy(entry *e, cm_array *x, cm_array *copy) {
  void **slot = cm_ptrmap_find(&e->index, x);
  if (!slot) {
    cm_release(copy); /* an output of a group that the trace never used */
    return 0;
  }
  size_t k = (size_t)(intptr_t)*slot - 1;
  e->originals[e->noriginals++] = e->order[k];
  e->order[k] = copy;
  void **cs = cm_ptrmap_insert(&e->index, copy);
  if (!cs) return cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
  *cs = (void *)(intptr_t)(k + 1);
  return 0;
}

/* Output k of node a's group (a itself when it has one output). */
static cm_array *output_of(cm_array *a, int k) { return a->sib ? a->sib->out[k] : a; }

/* New nodes like traced node a on inputs ins and stream st: outs gets one
 * per output of a's group, in order; a single-output node takes shape
 * (ndim, shape), a group its traced shapes. */
static int node_like(cm_array *a, cm_array *const *ins, cm_stream st, int ndim,
                     const int32_t *shape, cm_array **outs) {
  /* A block that owns something (a custom function's state) is shared
   * with the new node: one more reference, taken once the node exists. */
  void (*share)(cm_params *) = a->prim->params_destroy ? a->prim->params_share : NULL;
  if (!a->sib) {
    outs[0] =
        cm_node_new(a->dtype, ndim, shape, a->prim, a->params, a->params_size, ins, a->nin, st);
    if (outs[0] && share) share(outs[0]->params);
    return outs[0] ? 0 : -1;
  }
  int m = a->sib->n, rc = 0;
  cm_dtype *dt = malloc(sizeof *dt * (size_t)m);
  int *nd = malloc(sizeof *nd * (size_t)m);
  const int32_t **sh = malloc(sizeof *sh * (size_t)m);
  if (!dt || !nd || !sh) rc = cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
  for (int j = 0; !rc && j < m; j++) {
    cm_array *o = a->sib->out[j];
    dt[j] = o->dtype, nd[j] = o->ndim, sh[j] = o->shape;
  }
  cm_array *first = a->sib->out[0]; /* it holds the group's parameters */
  if (!rc)
    rc = cm_node_new_multi(m, dt, nd, sh, first->prim, first->params, first->params_size, ins,
                           a->nin, st, outs);
  if (!rc && share) share(outs[0]->params); /* the group holds one block */
  free(dt), free(nd), free(sh);
  return rc;
}

/* A copy of node a (every output of a group) on the copies of its inputs. */
static int copy_node(entry *e, cm_array *a) {
  int m = cm_num_outputs(a);
  cm_array *il[8], **ins = a->nin <= 8 ? il : malloc(sizeof *ins * (size_t)a->nin);
  cm_array **outs = calloc((size_t)m, sizeof *outs);
  int rc = ins && outs ? 0 : cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
  for (int i = 0; !rc && i < a->nin; i++) {
    void **slot = cm_ptrmap_find(&e->index, a->in[i]);
    ins[i] = slot ? e->order[(intptr_t)*slot - 1] : a->in[i]; /* copied by now */
  }
  if (!rc) rc = node_like(a, ins, a->stream, a->ndim, a->shape, outs);
  for (int j = 0; !rc && j < m; j++) {
    rc = file_copy(e, output_of(a, j), outs[j]);
    outs[j] = NULL; /* filed (or released) */
  }
  for (int j = 0; outs && j < m; j++) cm_release(outs[j]);
  free(outs);
  if (ins != il) free(ins);
  return rc;
}

/* Replace every node of the trace that has a graph but does not depend on
 * an input by a private copy (see entry.originals). */
static int privatise(entry *e, const cm_graph_walk *w) {
  size_t n = 0;
  for (size_t k = 0; k < e->len; k++)
    if (e->rebuild[k] && !cm_graph_on_path(w, e->order[k]))
      n += e->order[k]->sib ? (size_t)e->order[k]->sib->n : 1;
  if (!n) return 0;
  if (!(e->originals = calloc(n, sizeof *e->originals)))
    return cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
  cm_ptrmap copied = {0}; /* groups already copied (by their first output) */
  int rc = 0;
  for (size_t k = 0; !rc && k < e->len; k++) {
    cm_array *a = e->order[k];
    if (!e->rebuild[k] || cm_graph_on_path(w, a)) continue;
    if (a->sib) {
      if (cm_ptrmap_find(&copied, a->sib->out[0])) continue;
      if (!cm_ptrmap_insert(&copied, a->sib->out[0])) {
        rc = cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
        break;
      }
    }
    rc = copy_node(e, a);
  }
  cm_ptrmap_free(&copied);
  for (int j = 0; !rc && j < e->nout; j++) {
    void **slot = cm_ptrmap_find(&e->index, e->outputs[j]);
    cm_array *now = slot ? e->order[(intptr_t)*slot - 1] : e->outputs[j];
    if (now != e->outputs[j]) {
      cm_release(e->outputs[j]);
      e->outputs[j] = cm_retain(now);
    }
  }
  return rc;
}

/* Call f on placeholders and keep the graph it built. */
static int trace(entry *e, cm_closure f, cm_array *const *in, int nin, bool shapeless,
                 bool private_constants) {
  cm_stream s = CM_STREAM_DEFAULT;
  if (cm_op_stream(&s)) return -1;
  e->trace_default = s;
  for (int i = 0; i < nin; i++) {
    e->inputs[i] =
        cm_node_new(in[i]->dtype, in[i]->ndim, in[i]->shape, &placeholder, NULL, 0, NULL, 0, s);
    if (!e->inputs[i]) return -1;
    e->inputs[i]->tracer = true; /* as MLX marks its tracers */
  }
  cm_eval_forbid_push();
  cm_trace_push();
  if (shapeless) cm_dynamic_shapes_push();
  int rc = f.call(f.ctx, e->inputs, nin, &e->outputs, &e->nout);
  if (shapeless) cm_dynamic_shapes_pop();
  cm_trace_pop();
  cm_eval_forbid_pop();
  if (rc) {
    e->outputs = NULL, e->nout = 0;
    return -1;
  }
  cm_graph_walk w = {0};
  cm_ptrmap originals = {0};
  for (int i = 0; !rc && i < nin; i++) rc = cm_graph_add_input(&w, e->inputs[i], i);
  if (!rc) rc = cm_graph_sort(&w, e->outputs, e->nout);
  for (int i = 0; !rc && i < nin; i++)
    if (!cm_ptrmap_insert(&originals, in[i]))
      rc = cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
  if (!rc && !(e->rebuild = calloc(w.len ? w.len : 1, sizeof *e->rebuild)))
    rc = cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
  for (size_t k = 0; !rc && k < w.len; k++) {
    cm_array *a = w.order[k];
    /* The function reached an argument through something other than its
     * parameter (a closure, a global): MLX refuses, since a replay would
     * keep using the first call's array. */
    if (cm_ptrmap_find(&originals, a))
      rc = cm_error(CM_ERR_VALUE, "[compile] Attempting to compile a function with uncaptured "
                                  "inputs is not allowed.");
    e->rebuild[k] = cm_has_graph(a);
    if (!rc && e->rebuild[k] && a->prim->params_destroy && !a->prim->params_share)
      rc = cm_error(CM_ERR_NOT_IMPLEMENTED, "[compile] Compiling %s is not implemented yet.",
                    cm_prim_name(a->prim, a->params, a->params_size));
    void **slot = rc ? NULL : cm_ptrmap_insert(&e->index, a);
    if (!rc && !slot) rc = cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
    if (slot) *slot = (void *)(intptr_t)(k + 1);
  }
  if (!rc) {
    for (size_t k = 0; k < w.len; k++) cm_retain(w.order[k]);
    e->order = w.order, e->len = w.len;
    w.order = NULL, w.len = 0;
    if (private_constants) rc = privatise(e, &w);
  }
  cm_ptrmap_free(&originals);
  cm_graph_walk_free(&w);
  return rc;
}

int cm_compile_trace(cm_closure f, cm_array *const *in, int nin, bool shapeless,
                     cm_compile_trace_result *r) {
  memset(r, 0, sizeof *r);
  entry *e = calloc(1, sizeof *e);
  if (!e) return cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
  int rc = entry_key(e, in, nin, NULL, 0) || trace(e, f, in, nin, shapeless, false) ? -1 : 0;
  if (!rc) {
    r->inputs = e->inputs, r->nin = nin;
    r->outputs = e->outputs, r->nout = e->nout;
    r->tape = e->order, r->len = e->len;
    e->inputs = NULL, e->outputs = NULL, e->order = NULL;
    e->nin = e->nout = 0, e->len = 0;
  }
  cm_compiled tmp = {0};
  entry_free(&tmp, e);
  return rc;
}

void cm_compile_trace_result_free(cm_compile_trace_result *r) {
  cm_array_list_free(r->inputs, r->nin);
  cm_array_list_free(r->outputs, r->nout);
  for (size_t k = 0; k < r->len; k++) cm_release(r->tape[k]);
  free(r->tape);
  memset(r, 0, sizeof *r);
}

/* ---- simplification and fusion (transforms/simplify.c, fuse.c) ------------ */

/* Rewrite a fresh trace's graph as MLX's compile does after tracing (its
 * modes: no_simplify, no_fuse), then index the new order. */
static int optimize(entry *e, bool shapeless) {
  cm_compile_mode m = cm_get_compile_mode();
  cm_tape t = {e->order, e->len, e->outputs, e->nout};
  int rc = 0;
  /* inputs that still name an original of a private copy name the copy
   * (the rewrites follow the nodes' own inputs, not the index) */
  for (size_t k = 0; k < e->len; k++) {
    cm_array *a = e->order[k];
    for (int i = 0; cm_has_graph(a) && !(a->sib && a->position) && i < a->nin; i++) {
      void **slot = cm_ptrmap_find(&e->index, a->in[i]);
      if (slot) cm_tape_set_input(a, i, e->order[(intptr_t)*slot - 1]);
    }
  }
  if (m != CM_COMPILE_NO_SIMPLIFY) rc = cm_simplify_tape(&t);
  if (!rc && m != CM_COMPILE_NO_FUSE) rc = cm_fuse_tape(&t, shapeless);
  e->order = t.order, e->len = t.len;
  free(e->rebuild);
  cm_ptrmap_free(&e->index);
  if (rc) {
    e->rebuild = NULL;
    return -1;
  }
  if (!(e->rebuild = calloc(e->len ? e->len : 1, sizeof *e->rebuild)))
    return cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
  for (size_t k = 0; k < e->len; k++) {
    e->rebuild[k] = cm_has_graph(e->order[k]);
    void **slot = cm_ptrmap_insert(&e->index, e->order[k]);
    if (!slot) return cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
    *slot = (void *)(intptr_t)(k + 1);
  }
  return 0;
}

/* ---- replay --------------------------------------------------------------- */

/* The real array standing for traced node x. */
static cm_array *real_of(const entry *e, cm_array **state, cm_array *x) {
  void **slot = cm_ptrmap_find(&e->index, x);
  if (!slot) return x; /* not in the walk: a constant */
  size_t k = (size_t)(intptr_t)*slot - 1;
  return state[k] ? state[k] : e->order[k];
}

/* True when some real input's shape differs from the traced one's. */
static bool reshaped(const cm_array *a, cm_array *const *ins) {
  for (int i = 0; i < a->nin; i++)
    if (!cm_same_shape(ins[i], a->in[i])) return true;
  return false;
}

/* Rebuild traced node a (every output of a multi-output one) on real
 * inputs, filing the results in state.  A shapeless replay on inputs of
 * other shapes asks the primitive for its output shape. */
static int rebuild(const entry *e, cm_array **state, cm_array *a, cm_stream here, bool shapeless) {
  int m = cm_num_outputs(a);
  cm_array *il[8], **ins = a->nin <= 8 ? il : malloc(sizeof *ins * (size_t)a->nin);
  cm_array **outs = calloc((size_t)m, sizeof *outs);
  int rc = ins && outs ? 0 : cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
  for (int i = 0; !rc && i < a->nin; i++) ins[i] = real_of(e, state, a->in[i]);
  int ndim = a->ndim;
  int32_t shape_buf[CM_MAX_DIMS];
  const int32_t *shape = a->shape;
  if (!rc && shapeless && reshaped(a, ins)) {
    if (a->sib || !a->prim->output_shape)
      rc = cm_error(CM_ERR_VALUE,
                    "[compile] %s cannot infer output shapes: it cannot be part of a shapeless "
                    "compile with inputs of other shapes.",
                    cm_prim_name(a->prim, a->params, a->params_size));
    else rc = a->prim->output_shape(a, ins, a->nin, a->params, &ndim, shape_buf);
    shape = shape_buf;
  }
  cm_stream st = cm_stream_equal(a->stream, e->trace_default) ? here : a->stream;
  if (!rc) rc = node_like(a, ins, st, ndim, shape, outs);
  for (int j = 0; !rc && j < m; j++) {
    /* outputs of the group that the trace used get their slots */
    void **slot = cm_ptrmap_find(&e->index, output_of(a, j));
    if (slot && !state[(intptr_t)*slot - 1]) state[(intptr_t)*slot - 1] = outs[j], outs[j] = NULL;
  }
  for (int j = 0; outs && j < m; j++) cm_release(outs[j]);
  free(outs);
  if (ins != il) free(ins);
  return rc;
}

static int replay(const entry *e, bool shapeless, cm_array *const *in, cm_array ***outputs,
                  int *nout) {
  cm_stream here = CM_STREAM_DEFAULT;
  if (cm_op_stream(&here)) return -1;
  cm_array **state = calloc(e->len ? e->len : 1, sizeof *state), **res = NULL;
  int rc = state ? 0 : cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
  for (int i = 0; !rc && i < e->nin; i++) {
    void **slot = cm_ptrmap_find(&e->index, e->inputs[i]);
    if (slot) state[(intptr_t)*slot - 1] = cm_retain(in[i]);
  }
  for (size_t k = 0; !rc && k < e->len; k++)
    if (e->rebuild[k] && !state[k]) rc = rebuild(e, state, e->order[k], here, shapeless);
  if (!rc && !(res = calloc((size_t)(e->nout ? e->nout : 1), sizeof *res)))
    rc = cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
  for (int j = 0; !rc && j < e->nout; j++) res[j] = cm_retain(real_of(e, state, e->outputs[j]));
  for (size_t k = 0; state && k < e->len; k++) cm_release(state[k]);
  free(state);
  if (rc) return -1;
  *outputs = res;
  *nout = e->nout;
  return 0;
}

int cm_compiled_call(cm_compiled *c, cm_closure f, cm_array *const *inputs, int nin,
                     const uint64_t *constants, int nconst, cm_array ***outputs, int *nout,
                     void ***extra) {
  if (extra) *extra = NULL;
  /* Called while another transform traces (inputs are its tracers): the
   * function is part of that trace, as in MLX, and runs as it is.  As in
   * MLX (is_tracer: the mark and InTracing), arrays built from tracers are
   * ordinary inputs once no trace runs, e.g. the gradients an optimizer
   * gets from value_and_grad. */
  for (int i = 0; i < nin; i++)
    if (inputs[i]->tracer && cm_in_trace()) return f.call(f.ctx, inputs, nin, outputs, nout);
  pthread_mutex_lock(&c->mu);
  entry *e = c->head;
  while (e && !entry_matches(e, c->shapeless, inputs, nin, constants, nconst)) e = e->next;
  pthread_mutex_unlock(&c->mu);
  if (!e) {
    /* Traced outside the lock (f may be slow, or call other compiled
     * functions); two threads missing at once both trace, harmlessly. */
    entry *n = calloc(1, sizeof *n);
    if (!n) return cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
    if (entry_key(n, inputs, nin, constants, nconst) ||
        trace(n, f, inputs, nin, c->shapeless, true) || optimize(n, c->shapeless)) {
      entry_free(c, n);
      return -1;
    }
    pthread_mutex_lock(&c->mu);
    n->next = c->head;
    c->head = n;
    pthread_mutex_unlock(&c->mu);
    e = n;
  }
  if (extra) *extra = &e->extra;
  return replay(e, c->shapeless, inputs, outputs, nout);
}
