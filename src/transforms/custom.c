#include "transforms/custom.h"

#include <stdlib.h>
#include <string.h>

#include "ops/ops.h"
#include "primitives/primitive.h"
#include "transforms/vmap.h"

/* What one call of a custom function keeps for its transforms; owned by
 * the anchor's buffer. */
typedef struct custom_state {
  cm_closure fun;
  cm_custom_rules rules;
} custom_state;

typedef struct custom_params {
  custom_state *st;
  int32_t nprimals, nout, index; /* node = output index of the call */
} custom_params;

static const custom_params *params_of(const cm_params *p) { return (const custom_params *)p->bytes; }

static void state_free(void *payload) {
  custom_state *st = payload;
  if (st->rules.destroy) st->rules.destroy(st->rules.ctx);
  free(st);
}

/* The data of output index is the stopped output, already an input. */
static int custom_eval(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin;
  const custom_params *cp = params_of(p);
  const cm_array *src = in[cp->nprimals + cp->index];
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

static int custom_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p, cm_array *cotan,
                      const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  (void)out, (void)nin;
  const custom_params *cp = params_of(p);
  const custom_state *st = cp->st;
  int np = cp->nprimals, nout = cp->nout;
  bool wanted = false;
  for (int k = 0; k < nargs; k++) wanted |= argnums[k] < np;
  if (!wanted) return 0; /* only the stopped outputs or the anchor: zero */
  cm_array **cots = calloc((size_t)nout, sizeof *cots), **all = NULL, **outs = NULL;
  int nall = 0, nouts = 0, rc = cots ? 0 : cm_error(CM_ERR_MEMORY, "[vjp] Out of memory.");
  for (int k = 0; !rc && k < nout; k++) {
    cots[k] = k == cp->index ? cm_retain(cotan) : cm_zeros_like(in[np + k], s);
    if (!cots[k]) rc = -1;
  }
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
  cm_array_list_free(cots, nout);
  cm_array_list_free(all, nall);
  cm_array_list_free(outs, nouts);
  return rc;
}

static int custom_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                      cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)nin;
  const custom_params *cp = params_of(p);
  const custom_state *st = cp->st;
  int np = cp->nprimals, n = 0, nres = 0, rc = 0;
  int *argnums = malloc(sizeof(int) * (size_t)(np ? np : 1));
  cm_array **ts = calloc((size_t)(np ? np : 1), sizeof *ts), **res = NULL, **outs = NULL;
  if (!argnums || !ts) rc = cm_error(CM_ERR_MEMORY, "[jvp] Out of memory.");
  for (int i = 0; !rc && i < np; i++)
    if (tangents[i]) {
      argnums[n] = i;
      ts[n++] = cm_retain(tangents[i]);
    }
  if (!rc && !n) {
    *tangent = cm_zeros_like(out, s);
    rc = *tangent ? 0 : -1;
    goto done;
  }
  if (!rc && st->rules.jvp) {
    rc = st->rules.jvp(st->rules.ctx, in, np, ts, argnums, n, &res, &nres);
  } else if (!rc) {
    /* The default: jvp of the function with zero tangents filled in. */
    cm_array_list_free(ts, n);
    ts = calloc((size_t)np, sizeof *ts);
    if (!ts) rc = cm_error(CM_ERR_MEMORY, "[jvp] Out of memory.");
    for (int i = 0; !rc && i < np; i++) {
      ts[i] = tangents[i] ? cm_retain(tangents[i]) : cm_zeros_like(in[i], s);
      if (!ts[i]) rc = -1;
    }
    n = np;
    int nouts = 0;
    if (!rc) rc = cm_jvp(st->fun, in, np, ts, np, &outs, &nouts, &res);
    cm_array_list_free(outs, nouts);
    nres = nouts;
  }
  if (!rc && nres != cp->nout)
    rc = cm_error(CM_ERR_VALUE, "[custom_function] The jvp returned %d arrays for %d outputs.", nres, cp->nout);
  if (!rc) rc = check_result("jvp of an output", res[cp->index], out);
  if (!rc) *tangent = cm_retain(res[cp->index]);
done:
  cm_array_list_free(res, nres);
  cm_array_list_free(ts, n);
  free(argnums);
  return rc;
}

static int custom_vmap(cm_array *const *in, int nin, const cm_params *p, const int *axes, cm_array **out,
                       int *out_axis, cm_stream s) {
  (void)nin, (void)s;
  const custom_params *cp = params_of(p);
  const custom_state *st = cp->st;
  int np = cp->nprimals, j = np + cp->index;
  bool batched = false;
  for (int i = 0; i < np; i++) batched |= axes[i] >= 0;
  /* Without a rule, or when only arrays the function captured are batched,
   * the replay has already batched the function's own graph: its result
   * is the stopped output, an input of this node. */
  if (!st->rules.vmap || !batched) {
    *out = cm_retain(in[j]);
    *out_axis = axes[j];
    return 0;
  }
  cm_array **res = NULL;
  int *res_axes = NULL, nres = 0;
  int rc = st->rules.vmap(st->rules.ctx, in, np, axes, &res, &res_axes, &nres);
  if (!rc && nres != cp->nout)
    rc = cm_error(CM_ERR_VALUE, "[custom_function] The vmap returned %d arrays for %d outputs.", nres, cp->nout);
  if (!rc) {
    int ax = res_axes[cp->index];
    if (ax >= res[cp->index]->ndim || ax < -1)
      rc = cm_error(CM_ERR_VALUE, "[custom_function] The vmap returned axis %d for an output with %d dimensions.",
                    ax, res[cp->index]->ndim);
    *out = rc ? NULL : cm_retain(res[cp->index]);
    *out_axis = ax;
  }
  cm_array_list_free(res, nres);
  free(res_axes);
  return rc;
}

static const char *custom_name(const cm_params *p) {
  (void)p;
  return "CustomTransforms";
}

const cm_prim cm_prim_custom_transforms = {.name = "CustomTransforms",
                                           .op_name = custom_name,
                                           .eval_cpu = custom_eval,
                                           .vjp = custom_vjp,
                                           .jvp = custom_jvp,
                                           .vmap = custom_vmap};

/* An empty evaluated array whose buffer frees st when the last node of the
 * call lets it go. */
static cm_array *make_anchor(custom_state *st) {
  cm_buffer *buf = cm_buffer_wrap(st, 0, state_free, st);
  if (!buf) return NULL;
  int32_t zero = 0;
  cm_array *a = cm_array_from_buffer(buf, 0, 1, &zero, NULL, CM_UINT8);
  if (!a) {
    buf->dtor = NULL; /* the caller still owns st */
    cm_buffer_release(buf);
    return NULL;
  }
  cm_buffer_release(buf);
  return a;
}

int cm_custom_function(cm_closure fun, const cm_custom_rules *rules, cm_array *const *inputs, int nin,
                       cm_array ***outputs, int *nout) {
  cm_stream s = CM_STREAM_DEFAULT;
  custom_state *st = malloc(sizeof *st);
  if (!st || cm_op_stream(&s)) {
    if (!st) cm_error(CM_ERR_MEMORY, "[custom_function] Out of memory.");
    if (rules->destroy) rules->destroy(rules->ctx);
    free(st);
    return -1;
  }
  st->fun = fun;
  st->rules = *rules;
  cm_array **outs = NULL, **res = NULL, **ins = NULL, *anchor = NULL;
  int n = 0, rc = fun.call(fun.ctx, inputs, nin, &outs, &n);
  if (!rc && !(anchor = make_anchor(st))) rc = -1;
  if (rc) { /* st is not anchored yet */
    cm_array_list_free(outs, n);
    state_free(st);
    return -1;
  }
  /* From here st belongs to the anchor. */
  res = calloc((size_t)(n ? n : 1), sizeof *res);
  ins = calloc((size_t)(nin + n + 1), sizeof *ins);
  if (!res || !ins) rc = cm_error(CM_ERR_MEMORY, "[custom_function] Out of memory.");
  for (int i = 0; !rc && i < nin; i++) ins[i] = inputs[i];
  for (int k = 0; !rc && k < n; k++)
    if (!(ins[nin + k] = cm_stop_gradient(outs[k], s))) rc = -1;
  if (!rc) ins[nin + n] = anchor;
  for (int k = 0; !rc && k < n; k++) {
    custom_params cp = {st, nin, n, k};
    res[k] = cm_node_new(outs[k]->dtype, outs[k]->ndim, outs[k]->shape, &cm_prim_custom_transforms, &cp,
                         sizeof cp, ins, nin + n + 1, s);
    if (!res[k]) rc = -1;
  }
  for (int k = 0; ins && k < n; k++) cm_release(ins[nin + k]);
  free(ins);
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
