#include "transforms/custom.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"
#include "primitives/primitive.h"
#include "transforms/graph.h"

/* What one call of a custom function keeps for its transforms.  Counted:
 * compile's replays build new nodes that share the traced node's state. */
typedef struct custom_state {
  cm_closure fun;
  cm_custom_rules rules;
  int nprimals, nout;
  atomic_int refs;
} custom_state;

/* The node's parameter block: it owns the state. */
typedef struct custom_params {
  custom_state *st;
} custom_params;
CM_PARAMS_ACCESSOR(custom_params, custom_params_of)

static custom_state *state_of(const cm_array *node) { return custom_params_of(node)->st; }

static void state_free(custom_state *st) {
  if (st->rules.destroy) st->rules.destroy(st->rules.ctx);
  free(st);
}

static void params_destroy(cm_params *p) {
  custom_state *st = custom_params_of_block(p, cm_prim_custom_transforms.params_size)->st;
  if (atomic_fetch_sub_explicit(&st->refs, 1, memory_order_acq_rel) == 1) state_free(st);
}

static void params_share(cm_params *p) {
  custom_state *st = custom_params_of_block(p, cm_prim_custom_transforms.params_size)->st;
  atomic_fetch_add_explicit(&st->refs, 1, memory_order_relaxed);
}

/* ---- evaluation ------------------------------------------------------------ */

/* Output k is stopped output k (input nprimals + k), shared. */
static int custom_eval(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const custom_state *st = state_of(out);
  for (int k = 0; k < st->nout; k++) {
    cm_array *o = cm_output(out, k);
    const cm_array *src = in[st->nprimals + k];
    cm_share_layout(o, src, src->strides, src->offset, src->data_size);
  }
  return 0;
}

static int check_result(const char *what, cm_array *got, const cm_array *want) {
  if (cm_same_shape(got, want)) return 0;
  char sa[256], sb[256];
  return cm_error(CM_ERR_VALUE, "[custom_function] The %s has shape %s but %s was expected.", what,
                  cm_shape_str(sa, sizeof sa, got->ndim, got->shape),
                  cm_shape_str(sb, sizeof sb, want->ndim, want->shape));
}

/* ---- vjp --------------------------------------------------------------------- */

static int call_vjp(custom_state *st, cm_array *const *in, cm_array *const *cotans,
                    const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  int np = st->nprimals, nout = st->nout;
  bool wanted = false;
  for (int k = 0; k < nargs; k++) wanted |= argnums[k] < np;
  cm_array **cots = calloc((size_t)nout, sizeof *cots), **all = NULL, **outs = NULL;
  int nall = 0, nouts = 0, rc = cots ? 0 : cm_error(CM_ERR_MEMORY, "[vjp] Out of memory.");
  if (!wanted) goto done; /* only the stopped outputs: zero */
  for (int k = 0; !rc && k < nout; k++)
    if (!(cots[k] = cotans[k] ? cm_retain(cotans[k]) : cm_zeros_like(in[np + k], s))) rc = -1;
  if (!rc && st->rules.vjp) {
    rc = st->rules.vjp(st->rules.ctx, in, np, cots, in + np, nout, &all, &nall);
  } else if (!rc) {
    rc = cm_vjp(st->fun, in, np, cots, nout, &outs, &nouts, &all);
    nall = np;
  }
  if (!rc && nall != np)
    rc = cm_error(CM_ERR_VALUE, "[custom_function] The vjp returned %d arrays for %d primals.",
                  nall, np);
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

static int custom_vjp(cm_array *const *outs, int nout, cm_array *const *in, int nin,
                      const cm_params *p, cm_array *const *cotans, const int *argnums, int nargs,
                      cm_array **grads, cm_stream s) {
  (void)nout, (void)nin, (void)p;
  return call_vjp(state_of(outs[0]), in, cotans, argnums, nargs, grads, s);
}

/* ---- jvp ----------------------------------------------------------------------- */

/* The tangents of every output at once, from the primals' tangents. */
static int call_jvp(custom_state *st, cm_array *const *in, cm_array *const *tangents,
                    cm_array ***res, cm_stream s) {
  int np = st->nprimals, nout = st->nout, n = 0, nres = 0, rc = 0;
  int *argnums = malloc(sizeof(int) * (size_t)(np ? np : 1));
  cm_array **ts = calloc((size_t)(np ? np : 1), sizeof *ts), **outs = NULL;
  if (!argnums || !ts) rc = cm_error(CM_ERR_MEMORY, "[jvp] Out of memory.");
  for (int i = 0; !rc && i < np; i++)
    if (tangents[i]) argnums[n] = i, ts[n++] = cm_retain(tangents[i]);
  if (!rc && !n) { /* only captured or stopped inputs move: zero */
    if (!(*res = calloc((size_t)nout, sizeof **res)))
      rc = cm_error(CM_ERR_MEMORY, "[jvp] Out of memory.");
    for (int k = 0; !rc && k < nout; k++)
      if (!((*res)[k] = cm_zeros_like(in[np + k], s))) rc = -1;
    nres = nout;
  } else if (!rc && st->rules.jvp) {
    rc = st->rules.jvp(st->rules.ctx, in, np, ts, argnums, n, res, &nres);
  } else if (!rc) {
    /* The default: jvp of the function with zero tangents filled in. */
    cm_array_list_free(ts, n);
    n = 0;
    if (!(ts = calloc((size_t)np, sizeof *ts)))
      rc = cm_error(CM_ERR_MEMORY, "[jvp] Out of memory.");
    for (int i = 0; !rc && i < np; i++, n++)
      if (!(ts[i] = tangents[i] ? cm_retain(tangents[i]) : cm_zeros_like(in[i], s))) rc = -1;
    int nouts = 0;
    if (!rc) rc = cm_jvp(st->fun, in, np, ts, np, &outs, &nouts, res);
    cm_array_list_free(outs, nouts);
    nres = nouts;
  }
  if (!rc && nres != nout)
    rc = cm_error(CM_ERR_VALUE, "[custom_function] The jvp returned %d arrays for %d outputs.",
                  nres, nout);
  for (int k = 0; !rc && k < nout; k++)
    rc = check_result("jvp of an output", (*res)[k], in[np + k]);
  if (rc && *res) {
    cm_array_list_free(*res, nres);
    *res = NULL;
  }
  cm_array_list_free(ts, n);
  free(argnums);
  return rc;
}

static int custom_jvp(cm_array *const *outs, int nout, cm_array *const *in, int nin,
                      const cm_params *p, cm_array *const *tangents, cm_array **tangents_out,
                      cm_stream s) {
  (void)nin, (void)p;
  cm_array **res = NULL;
  if (call_jvp(state_of(outs[0]), in, tangents, &res, s)) return -1;
  for (int k = 0; k < nout; k++) tangents_out[k] = res[k];
  free(res);
  return 0;
}

/* ---- vmap ---------------------------------------------------------------------- */

/* The rule's batched outputs; without a rule (or with no primal
 * batched), the replay's own batching of the function's graph: the
 * stopped outputs, which are inputs of the node. */
static int custom_vmap(cm_array *const *outs, int nout, cm_array *const *in, int nin,
                       const cm_params *p, const int *axes, cm_array **outs_b, int *out_axes,
                       cm_stream s) {
  (void)nin, (void)p, (void)s;
  custom_state *st = state_of(outs[0]);
  int np = st->nprimals;
  bool batched = false;
  for (int i = 0; i < np; i++) batched |= axes[i] >= 0;
  if (!st->rules.vmap || !batched) {
    for (int k = 0; k < nout; k++) {
      outs_b[k] = cm_retain(in[np + k]);
      out_axes[k] = axes[np + k];
    }
    return 0;
  }
  cm_array **res = NULL;
  int *res_axes = NULL, nres = 0;
  int rc = st->rules.vmap(st->rules.ctx, in, np, axes, &res, &res_axes, &nres);
  if (!rc && nres != nout)
    rc = cm_error(CM_ERR_VALUE, "[custom_function] The vmap returned %d arrays for %d outputs.",
                  nres, nout);
  for (int k = 0; !rc && k < nout; k++)
    if (res_axes[k] < -1 || res_axes[k] >= res[k]->ndim)
      rc = cm_error(CM_ERR_VALUE,
                    "[custom_function] The vmap returned axis %d for an output with %d dimensions.",
                    res_axes[k], res[k]->ndim);
  for (int k = 0; !rc && k < nout; k++) {
    outs_b[k] = cm_retain(res[k]);
    out_axes[k] = res_axes[k];
  }
  if (res) cm_array_list_free(res, nres);
  free(res_axes);
  return rc;
}

const cm_prim cm_prim_custom_transforms = {.name = "CustomTransforms",
                                           CM_PARAMS_OF(custom_params),
                                           .params_destroy = params_destroy,
                                           .params_share = params_share,
                                           .eval = custom_eval,
                                           .vjp_multi = custom_vjp,
                                           .jvp_multi = custom_jvp,
                                           .vmap_multi = custom_vmap};

/* ---- building a call ------------------------------------------------------------- */

/* One node: inputs the primals and the stopped outputs; output k shaped
 * like outs[k].  On success the node owns st. */
static int build_node(custom_state *st, cm_array *const *inputs, int nin, cm_array **outs, int n,
                      cm_array **res, cm_stream s) {
  cm_array **ins = calloc((size_t)(nin + n), sizeof *ins);
  cm_dtype *dtypes = calloc((size_t)n, sizeof *dtypes);
  int *ndims = calloc((size_t)n, sizeof *ndims);
  const int32_t **shapes = calloc((size_t)n, sizeof *shapes);
  int rc = ins && dtypes && ndims && shapes
               ? 0
               : cm_error(CM_ERR_MEMORY, "[custom_function] Out of memory.");
  for (int i = 0; !rc && i < nin; i++) ins[i] = inputs[i];
  for (int k = 0; !rc && k < n; k++) {
    if (!(ins[nin + k] = cm_stop_gradient(outs[k], s))) rc = -1;
    dtypes[k] = outs[k]->dtype;
    ndims[k] = outs[k]->ndim;
    shapes[k] = outs[k]->shape;
  }
  custom_params cp = {st};
  if (!rc)
    rc = cm_node_new_multi(n, dtypes, ndims, shapes, &cm_prim_custom_transforms, &cp, sizeof cp,
                           ins, nin + n, s, res);
  for (int k = 0; ins && k < n; k++) cm_release(ins[nin + k]);
  free(ins);
  free(dtypes);
  free(ndims);
  free(shapes);
  return rc;
}

int cm_custom_function(cm_closure fun, const cm_custom_rules *rules, cm_array *const *inputs,
                       int nin, cm_array ***outputs, int *nout) {
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
  atomic_init(&st->refs, 1);
  cm_array **outs = NULL, **res = NULL;
  int n = 0, rc = fun.call(fun.ctx, inputs, nin, &outs, &n);
  st->nout = n;
  if (!rc && n == 0) { /* no outputs, no node: nothing will ever use the rules */
    free(outs);
    *outputs = calloc(1, sizeof **outputs);
    *nout = 0;
    state_free(st);
    return *outputs ? 0 : cm_error(CM_ERR_MEMORY, "[custom_function] Out of memory.");
  }
  if (!rc && !(res = calloc((size_t)n, sizeof *res)))
    rc = cm_error(CM_ERR_MEMORY, "[custom_function] Out of memory.");
  if (!rc) rc = build_node(st, inputs, nin, outs, n, res, s);
  cm_array_list_free(outs, n);
  if (rc) { /* the node was not built: st is still ours */
    free(res);
    state_free(st);
    return -1;
  }
  *outputs = res;
  *nout = n;
  return 0;
}
