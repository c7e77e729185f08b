#include "transforms/custom.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"
#include "primitives/primitive.h"
#include "transforms/graph.h"

/* Results handed from one node of a call to another during one walk.  The
 * node that hands them over gives the engine a fresh empty "marker" array
 * as its derivative; the receiving node finds the results again through
 * the markers that reach it, so results of a walk that failed half-way are
 * never picked up by a later one. */
typedef struct exchange {
  struct exchange *next;
  cm_array *marker; /* owned */
  int index;        /* vjp: the output whose cotangent this is */
  cm_array *cot;    /* vjp: that cotangent (owned) */
  cm_array **res;   /* jvp/vmap: one result per output (owned) */
  int *axes;        /* vmap: the batch axis of each result */
  int left;         /* jvp/vmap: outputs that have not collected theirs */
} exchange;

/* What one call of a custom function keeps for its transforms; owned by
 * the anchor's buffer. */
typedef struct custom_state {
  cm_closure fun;
  cm_custom_rules rules;
  int nprimals, nout;
  pthread_mutex_t lock; /* guards pending */
  exchange *pending;
} custom_state;

/* index -1: the call node (inputs: primals, stopped outputs, anchor; an
 * empty output); index k: output k (inputs: the call node, stopped output
 * k; output k's data). */
typedef struct custom_params {
  custom_state *st;
  int32_t index;
} custom_params;

static const custom_params *params_of(const cm_params *p) { return (const custom_params *)(const void *)p; }

static void exchange_free(exchange *e, int nout) {
  cm_release(e->marker);
  cm_release(e->cot);
  if (e->res) cm_array_list_free(e->res, nout);
  free(e->axes);
  free(e);
}

static void state_free(void *payload) {
  custom_state *st = payload;
  if (st->rules.destroy) st->rules.destroy(st->rules.ctx);
  while (st->pending) {
    exchange *e = st->pending;
    st->pending = e->next;
    exchange_free(e, st->nout);
  }
  pthread_mutex_destroy(&st->lock);
  free(st);
}

static cm_array *new_marker(void) {
  int32_t zero = 0;
  return cm_array_from_data(NULL, 1, &zero, CM_FLOAT32);
}

/* Publish e (with a new marker); returns a new reference to the marker. */
static cm_array *publish(custom_state *st, exchange *e) {
  if (!(e->marker = new_marker())) return NULL;
  pthread_mutex_lock(&st->lock);
  e->next = st->pending;
  st->pending = e;
  pthread_mutex_unlock(&st->lock);
  return cm_retain(e->marker);
}

/* Unlink and return the exchange of marker m (NULL if none). */
static exchange *take(custom_state *st, const cm_array *m) {
  pthread_mutex_lock(&st->lock);
  exchange **pp = &st->pending, *e = NULL;
  while (*pp && (*pp)->marker != m) pp = &(*pp)->next;
  if (*pp) {
    e = *pp;
    *pp = e->next;
  }
  pthread_mutex_unlock(&st->lock);
  return e;
}

/* jvp/vmap: result k of marker m's exchange, a new reference (NULL and no
 * error if the marker has none); the exchange goes once all collected. */
static cm_array *collect_result(custom_state *st, const cm_array *m, int k, int *axis) {
  cm_array *r = NULL;
  exchange *done = NULL;
  pthread_mutex_lock(&st->lock);
  exchange **pp = &st->pending;
  while (*pp && (*pp)->marker != m) pp = &(*pp)->next;
  if (*pp && (*pp)->res) {
    exchange *e = *pp;
    r = cm_retain(e->res[k]);
    if (axis) *axis = e->axes ? e->axes[k] : -1;
    if (--e->left == 0) {
      *pp = e->next;
      done = e;
    }
  }
  pthread_mutex_unlock(&st->lock);
  if (done) exchange_free(done, st->nout);
  return r;
}

/* ---- evaluation ------------------------------------------------------------ */

static int custom_eval(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin;
  if (params_of(p)->index < 0) return cm_alloc_output(out); /* the call node: empty */
  const cm_array *src = in[1];
  cm_share_layout(out, src, src->strides, src->offset, src->data_size);
  return 0;
}

static bool same_shape(const cm_array *a, const cm_array *b) {
  if (a->ndim != b->ndim) return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}

static int check_result(const char *what, cm_array *got, const cm_array *want) {
  if (same_shape(got, want)) return 0;
  char sa[256], sb[256];
  return cm_error(CM_ERR_VALUE, "[custom_function] The %s has shape %s but %s was expected.", what,
                  cm_shape_str(sa, sizeof sa, got->ndim, got->shape),
                  cm_shape_str(sb, sizeof sb, want->ndim, want->shape));
}

/* ---- vjp --------------------------------------------------------------------- */

/* The cotangents handed to the call node: the markers reachable from its
 * accumulated cotangent (the engine sums them with empty adds). */
static int gather_cotangents(custom_state *st, cm_array *cotan, cm_array **cots) {
  cm_array *stack[64], **sp = stack;
  size_t top = 0, cap = 64;
  int rc = 0;
  sp[top++] = cotan;
  while (top && !rc) {
    cm_array *a = sp[--top];
    exchange *e = take(st, a);
    if (e) {
      int k = e->index;
      if (!cots[k]) {
        cots[k] = cm_retain(e->cot);
      } else {
        cm_array *sum = cm_add(cots[k], e->cot, CM_STREAM_DEFAULT);
        cm_release(cots[k]);
        cots[k] = sum;
        if (!sum) rc = -1;
      }
      exchange_free(e, st->nout);
      continue;
    }
    if (a->size != 0 || !cm_has_graph(a)) continue; /* only empty sums lead to markers */
    for (int i = 0; !rc && i < a->nin; i++) {
      if (top == cap) {
        cm_array **ns = malloc(sizeof *ns * cap * 2);
        if (!ns) {
          rc = cm_error(CM_ERR_MEMORY, "[vjp] Out of memory.");
          break;
        }
        memcpy(ns, sp, sizeof *ns * top);
        if (sp != stack) free(sp);
        sp = ns;
        cap *= 2;
      }
      sp[top++] = a->in[i];
    }
  }
  if (sp != stack) free(sp);
  return rc;
}

static int call_vjp(custom_state *st, cm_array *const *in, cm_array *cotan, const int *argnums, int nargs,
                    cm_array **grads, cm_stream s) {
  int np = st->nprimals, nout = st->nout;
  bool wanted = false;
  for (int k = 0; k < nargs; k++) wanted |= argnums[k] < np;
  cm_array **cots = calloc((size_t)nout, sizeof *cots), **all = NULL, **outs = NULL;
  int nall = 0, nouts = 0, rc = cots ? 0 : cm_error(CM_ERR_MEMORY, "[vjp] Out of memory.");
  if (!rc) rc = gather_cotangents(st, cotan, cots); /* always: frees the exchanges */
  if (!wanted) goto done; /* only the stopped outputs or the anchor: zero */
  for (int k = 0; !rc && k < nout; k++)
    if (!cots[k] && !(cots[k] = cm_zeros_like(in[np + k], s))) rc = -1;
  if (!rc && st->rules.vjp) {
    rc = st->rules.vjp(st->rules.ctx, in, np, cots, in + np, nout, &all, &nall);
  } else if (!rc) {
    rc = cm_vjp(st->fun, in, np, cots, nout, &outs, &nouts, &all);
    nall = np;
  }
  if (!rc && nall != np)
    rc = cm_error(CM_ERR_VALUE, "[custom_function] The vjp returned %d arrays for %d primals.", nall, np);
  for (int k = 0; !rc && k < nargs; k++) {
    int i = argnums[k];
    if (i >= np) continue;
    rc = check_result("vjp of a primal", all[i], in[i]);
    if (!rc) grads[k] = cm_retain(all[i]);
  }
done:
  for (int k = 0; cots && k < nout; k++) cm_release(cots[k]);
  free(cots);
  cm_array_list_free(all, nall);
  cm_array_list_free(outs, nouts);
  return rc;
}

static int custom_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p, cm_array *cotan,
                      const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  (void)out, (void)nin;
  const custom_params *cp = params_of(p);
  if (cp->index < 0) return call_vjp(cp->st, in, cotan, argnums, nargs, grads, s);
  /* An output: hand its cotangent to the call node. */
  for (int k = 0; k < nargs; k++) {
    if (argnums[k] != 0) continue;
    exchange *e = calloc(1, sizeof *e);
    if (!e) return cm_error(CM_ERR_MEMORY, "[vjp] Out of memory.");
    e->index = cp->index;
    e->cot = cm_retain(cotan);
    if (!(grads[k] = publish(cp->st, e))) {
      exchange_free(e, cp->st->nout);
      return -1;
    }
  }
  return 0;
}

/* ---- jvp ----------------------------------------------------------------------- */

/* The tangents of every output at once, from the primals' tangents. */
static int call_jvp(custom_state *st, cm_array *const *in, cm_array *const *tangents, cm_array ***res, cm_stream s) {
  int np = st->nprimals, nout = st->nout, n = 0, nres = 0, rc = 0;
  int *argnums = malloc(sizeof(int) * (size_t)(np ? np : 1));
  cm_array **ts = calloc((size_t)(np ? np : 1), sizeof *ts), **outs = NULL;
  if (!argnums || !ts) rc = cm_error(CM_ERR_MEMORY, "[jvp] Out of memory.");
  for (int i = 0; !rc && i < np; i++)
    if (tangents[i]) argnums[n] = i, ts[n++] = cm_retain(tangents[i]);
  if (!rc && !n) { /* only captured or stopped inputs move: zero */
    if (!(*res = calloc((size_t)nout, sizeof **res))) rc = cm_error(CM_ERR_MEMORY, "[jvp] Out of memory.");
    for (int k = 0; !rc && k < nout; k++)
      if (!((*res)[k] = cm_zeros_like(in[np + k], s))) rc = -1;
    nres = nout;
  } else if (!rc && st->rules.jvp) {
    rc = st->rules.jvp(st->rules.ctx, in, np, ts, argnums, n, res, &nres);
  } else if (!rc) {
    /* The default: jvp of the function with zero tangents filled in. */
    cm_array_list_free(ts, n);
    n = 0;
    if (!(ts = calloc((size_t)np, sizeof *ts))) rc = cm_error(CM_ERR_MEMORY, "[jvp] Out of memory.");
    for (int i = 0; !rc && i < np; i++, n++)
      if (!(ts[i] = tangents[i] ? cm_retain(tangents[i]) : cm_zeros_like(in[i], s))) rc = -1;
    int nouts = 0;
    if (!rc) rc = cm_jvp(st->fun, in, np, ts, np, &outs, &nouts, res);
    cm_array_list_free(outs, nouts);
    nres = nouts;
  }
  if (!rc && nres != nout)
    rc = cm_error(CM_ERR_VALUE, "[custom_function] The jvp returned %d arrays for %d outputs.", nres, nout);
  for (int k = 0; !rc && k < nout; k++) rc = check_result("jvp of an output", (*res)[k], in[np + k]);
  if (rc && *res) {
    cm_array_list_free(*res, nres);
    *res = NULL;
  }
  cm_array_list_free(ts, n);
  free(argnums);
  return rc;
}

static int custom_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                      cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)nin;
  const custom_params *cp = params_of(p);
  custom_state *st = cp->st;
  if (cp->index >= 0) {
    /* an output: collect its tangent from the call node's exchange */
    if (!tangents[0]) return (*tangent = cm_zeros_like(out, s)) ? 0 : -1;
    *tangent = collect_result(st, tangents[0], cp->index, NULL);
    return *tangent ? 0 : cm_error(CM_ERR_RUNTIME, "[jvp] CustomTransforms lost the tangents of its call.");
  }
  exchange *e = calloc(1, sizeof *e);
  if (!e) return cm_error(CM_ERR_MEMORY, "[jvp] Out of memory.");
  if (call_jvp(st, in, tangents, &e->res, s)) {
    free(e);
    return -1;
  }
  e->left = st->nout;
  if (!(*tangent = publish(st, e))) {
    exchange_free(e, st->nout);
    return -1;
  }
  return 0;
}

/* ---- vmap ---------------------------------------------------------------------- */

static int custom_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p, const int *axes, cm_array **out,
                       int *out_axis, cm_stream s) {
  (void)nin, (void)s;
  const custom_params *cp = params_of(p);
  custom_state *st = cp->st;
  if (cp->index >= 0) {
    /* an output: the rule's result, or else the replay's own batching of
     * the function's graph (the stopped output, an input) */
    *out = collect_result(st, in[0], cp->index, out_axis);
    if (!*out) {
      *out = cm_retain(in[1]);
      *out_axis = axes[1];
    }
    return 0;
  }
  int np = st->nprimals, nout = st->nout;
  bool batched = false;
  for (int i = 0; i < np; i++) batched |= axes[i] >= 0;
  *out_axis = -1;
  if (!st->rules.vmap || !batched) return (*out = new_marker()) ? 0 : -1;
  exchange *e = calloc(1, sizeof *e);
  if (!e) return cm_error(CM_ERR_MEMORY, "[vmap] Out of memory.");
  int nres = 0, rc = st->rules.vmap(st->rules.ctx, in, np, axes, &e->res, &e->axes, &nres);
  if (!rc && nres != nout)
    rc = cm_error(CM_ERR_VALUE, "[custom_function] The vmap returned %d arrays for %d outputs.", nres, nout);
  for (int k = 0; !rc && k < nout; k++)
    if (e->axes[k] < -1 || e->axes[k] >= e->res[k]->ndim)
      rc = cm_error(CM_ERR_VALUE, "[custom_function] The vmap returned axis %d for an output with %d dimensions.",
                    e->axes[k], e->res[k]->ndim);
  e->left = nout;
  if (rc) {
    if (e->res) cm_array_list_free(e->res, nres);
    e->res = NULL;
    exchange_free(e, nout);
    return -1;
  }
  if (!(*out = publish(st, e))) {
    exchange_free(e, nout);
    return -1;
  }
  return 0;
}

const cm_prim cm_prim_custom_transforms = {.name = "CustomTransforms",
                                           .params_size = sizeof(custom_params),
                                           .eval_cpu = custom_eval,
                                           .vjp = custom_vjp,
                                           .jvp = custom_jvp,
                                           .vmap = custom_vmap};

/* ---- building a call ------------------------------------------------------------- */

/* An empty evaluated array whose buffer frees st when the last node of the
 * call lets it go. */
static cm_array *make_anchor(custom_state *st) {
  cm_buffer *buf = cm_buffer_wrap(st, 0, state_free, st);
  if (!buf) return NULL;
  int32_t zero = 0;
  cm_array *a = cm_array_from_buffer(buf, 0, 1, &zero, NULL, CM_UINT8);
  if (!a) buf->dtor = NULL; /* the caller still owns st */
  cm_buffer_release(buf);
  return a;
}

/* The call node and one node per output (res, nout entries). */
static int build_nodes(custom_state *st, cm_array *const *inputs, int nin, cm_array **outs, int n,
                       cm_array *anchor, cm_array **res, cm_stream s) {
  cm_array **ins = calloc((size_t)(nin + n + 1), sizeof *ins), *call = NULL;
  int rc = ins ? 0 : cm_error(CM_ERR_MEMORY, "[custom_function] Out of memory.");
  for (int i = 0; !rc && i < nin; i++) ins[i] = inputs[i];
  for (int k = 0; !rc && k < n; k++)
    if (!(ins[nin + k] = cm_stop_gradient(outs[k], s))) rc = -1;
  if (!rc) {
    ins[nin + n] = anchor;
    custom_params cp = {st, -1};
    int32_t zero = 0;
    call = cm_node_new(CM_UINT8, 1, &zero, &cm_prim_custom_transforms, &cp, sizeof cp, ins, nin + n + 1, s);
    if (!call) rc = -1;
  }
  for (int k = 0; !rc && k < n; k++) {
    custom_params cp = {st, k};
    cm_array *pair[2] = {call, ins[nin + k]};
    res[k] = cm_node_new(outs[k]->dtype, outs[k]->ndim, outs[k]->shape, &cm_prim_custom_transforms, &cp,
                         sizeof cp, pair, 2, s);
    if (!res[k]) rc = -1;
  }
  for (int k = 0; ins && k < n; k++) cm_release(ins[nin + k]);
  free(ins);
  cm_release(call);
  return rc;
}

int cm_custom_function(cm_closure fun, const cm_custom_rules *rules, cm_array *const *inputs, int nin,
                       cm_array ***outputs, int *nout) {
  cm_stream s = CM_STREAM_DEFAULT;
  custom_state *st = calloc(1, sizeof *st);
  if (!st || cm_op_stream(&s)) {
    if (!st) cm_error(CM_ERR_MEMORY, "[custom_function] Out of memory.");
    if (rules->destroy) rules->destroy(rules->ctx);
    free(st);
    return -1;
  }
  st->fun = fun;
  st->rules = *rules;
  st->nprimals = nin;
  pthread_mutex_init(&st->lock, NULL);
  cm_array **outs = NULL, **res = NULL, *anchor = NULL;
  int n = 0, rc = fun.call(fun.ctx, inputs, nin, &outs, &n);
  st->nout = n;
  if (!rc && !(anchor = make_anchor(st))) rc = -1;
  if (rc) { /* st is not anchored yet */
    cm_array_list_free(outs, n);
    state_free(st);
    return -1;
  }
  /* From here st belongs to the anchor. */
  if (!(res = calloc((size_t)(n ? n : 1), sizeof *res))) rc = cm_error(CM_ERR_MEMORY, "[custom_function] Out of memory.");
  if (!rc) rc = build_nodes(st, inputs, nin, outs, n, anchor, res, s);
  cm_array_list_free(outs, n);
  cm_release(anchor);
  if (rc) {
    cm_array_list_free(res, n);
    return -1;
  }
  *outputs = res;
  *nout = n;
  return 0;
}
