#include "transforms/vmap.h"

#include <stdlib.h>

#include "ops/ops.h"
#include "ops/shape.h"
#include "transforms/eval.h"
#include "transforms/graph.h"

/* Placeholders are never evaluated: tracing forbids eval (see eval.h). */
static int placeholder_eval(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)out, (void)in, (void)nin, (void)p;
  return cm_error(CM_ERR_VALUE, "[vmap] A vmap placeholder cannot be evaluated.");
}
static const cm_prim placeholder = {.name = "VmapPlaceholder", .eval = placeholder_eval};

typedef struct batched {
  cm_array *arr; /* owned */
  int axis;
} batched;

/* Normalise in_axes into axes (-1: not batched) and find the batch size;
 * -1 with a ValueError on bad axes. */
static int batch_axes(cm_array *const *inputs, int nin, const int *in_axes, int *axes, int *batch) {
  *batch = -1;
  for (int i = 0; i < nin; i++) {
    axes[i] = -1;
    if (in_axes[i] == CM_VMAP_NONE) continue;
    int nd = inputs[i]->ndim, ax = in_axes[i] < 0 ? in_axes[i] + nd : in_axes[i];
    if (ax < 0 || ax >= nd)
      return cm_error(CM_ERR_VALUE, "[vmap] Invalid vmap axis %d for input with %d dimensions.",
                      in_axes[i], nd);
    if (*batch >= 0 && inputs[i]->shape[ax] != *batch)
      return cm_error(CM_ERR_VALUE, "[vmap] Inconsistent axis sizes: %d and %d.", *batch,
                      inputs[i]->shape[ax]);
    *batch = inputs[i]->shape[ax];
    axes[i] = ax;
  }
  if (*batch < 0) return cm_error(CM_ERR_VALUE, "[vmap] At least one of in_axes must be non-None.");
  return 0;
}

/* One placeholder per batched input (the input itself when not batched). */
static int make_placeholders(cm_array *const *inputs, int nin, const int *axes, cm_array **ph,
                             cm_stream s) {
  for (int i = 0; i < nin; i++) ph[i] = NULL;
  for (int i = 0; i < nin; i++) {
    if (axes[i] < 0) {
      ph[i] = cm_retain(inputs[i]);
      continue;
    }
    int32_t shape[CM_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < inputs[i]->ndim; d++)
      if (d != axes[i]) shape[nd++] = inputs[i]->shape[d];
    ph[i] = cm_node_new(inputs[i]->dtype, nd, shape, &placeholder, NULL, 0, NULL, 0, s);
    if (!ph[i]) return -1;
    ph[i]->tracer = true; /* as MLX marks its placeholders */
  }
  return 0;
}

/* Apply the vmap rule of node a, whose inputs are batched or plain.  For
 * a multi-output node the rule batches every output at once: res[k] gets
 * output k's (the caller places them). */
static int vmap_node(cm_graph_walk *w, batched *state, cm_ptrmap *index, cm_array *a,
                     batched *res) {
  bool multi = a->sib != NULL;
  int nout = cm_num_outputs(a);
  if (multi ? !a->prim->vmap_multi : !a->prim->vmap)
    return cm_error(CM_ERR_NOT_IMPLEMENTED, "[vmap] Not implemented for %s.",
                    cm_prim_name(a->prim, a->params, a->params_size));
  cm_array *il[16], **ins = a->nin <= 16 ? il : malloc(sizeof *ins * (size_t)a->nin);
  int al[16], *axes = a->nin <= 16 ? al : malloc(sizeof *axes * (size_t)a->nin);
  cm_array *ol[8], **outs = nout <= 8 ? ol : calloc((size_t)nout, sizeof *outs);
  int xl[8], *oaxes = nout <= 8 ? xl : calloc((size_t)nout, sizeof *oaxes);
  int rc = 0;
  if (!ins || !axes || !outs || !oaxes) rc = cm_error(CM_ERR_MEMORY, "[vmap] Out of memory.");
  for (int i = 0; !rc && i < a->nin; i++) {
    void **k = cm_graph_on_path(w, a->in[i]) ? cm_ptrmap_find(index, a->in[i]) : NULL;
    ins[i] = k ? state[(intptr_t)*k - 1].arr : a->in[i];
    axes[i] = k ? state[(intptr_t)*k - 1].axis : -1;
  }
  for (int k = 0; outs && k < nout; k++) outs[k] = NULL, oaxes[k] = -1;
  if (!rc)
    rc = multi ? a->prim->vmap_multi(a->sib->out, nout, ins, a->nin, a->params, axes, outs, oaxes,
                                     a->stream)
               : a->prim->vmap(a, ins, a->nin, a->params, axes, &outs[0], &oaxes[0], a->stream);
  for (int k = 0; outs && k < nout; k++) {
    if (rc) cm_release(outs[k]);
    else res[k] = (batched){outs[k], oaxes[k]};
  }
  if (ins != il) free(ins);
  if (axes != al) free(axes);
  if (outs != ol) free(outs);
  if (oaxes != xl) free(oaxes);
  return rc;
}

/* A multi-output node: batch it once and file each output's result at
 * that output's own position in the walk. */
static int vmap_group(cm_graph_walk *w, batched *state, cm_ptrmap *index, cm_array *a) {
  int n = a->sib->n;
  batched *res = calloc((size_t)n, sizeof *res);
  if (!res) return cm_error(CM_ERR_MEMORY, "[vmap] Out of memory.");
  int rc = vmap_node(w, state, index, a, res);
  for (int k = 0; k < n; k++) {
    void **slot = rc ? NULL : cm_ptrmap_find(index, a->sib->out[k]);
    if (slot) state[(intptr_t)*slot - 1] = res[k];
    else cm_release(res[k].arr); /* an output not in the walk */
  }
  free(res);
  return rc;
}

/* Put the batch axis of a traced output where out_axis asks; outputs that
 * do not depend on a batched input are broadcast along a new axis. */
static cm_array *place_output(cm_array *arr, int axis, int out_axis, int batch, cm_stream s) {
  /* An out axis of None is MLX's -1: an unbatched output gets its new axis
   * last, a batched one is an error (MLX's wording). */
  if (out_axis == CM_VMAP_NONE) {
    if (axis >= 0)
      return cm_error(CM_ERR_VALUE, "[vmap] Axis -1 invalid for output with %d dimensions.",
                      arr->ndim),
             NULL;
    out_axis = -1;
  }
  if (axis < 0) {
    int nd = arr->ndim + 1, ax = out_axis < 0 ? out_axis + nd : out_axis;
    if (ax < 0 || ax >= nd)
      return cm_error(CM_ERR_VALUE, "[vmap] Invalid out axis %d.", out_axis), NULL;
    cm_array *e = cm_expand_dims(arr, 1, &ax, s);
    if (!e) return NULL;
    int32_t shape[CM_MAX_DIMS];
    for (int d = 0; d < nd; d++) shape[d] = e->shape[d];
    shape[ax] = batch;
    cm_array *r = cm_broadcast_to(e, nd, shape, s);
    cm_release(e);
    return r;
  }
  int nd = arr->ndim, ax = out_axis < 0 ? out_axis + nd : out_axis;
  if (ax < 0 || ax >= nd)
    return cm_error(CM_ERR_VALUE, "[vmap] Invalid out axis %d.", out_axis), NULL;
  return ax == axis ? cm_retain(arr) : cm_moveaxis(arr, axis, ax, s);
}

int cm_vmap_trace(cm_closure f, cm_array *const *inputs, int nin, const int *in_axes,
                  cm_array ***s_inputs, cm_array ***s_outputs, int *nout) {
  cm_stream s = CM_STREAM_DEFAULT;
  if (cm_op_stream(&s)) return -1;
  cm_array **ph = calloc((size_t)(nin ? nin : 1), sizeof *ph), **outs = NULL;
  int *axes = calloc((size_t)(nin ? nin : 1), sizeof *axes);
  int n = 0, batch = 0, rc = ph && axes ? 0 : cm_error(CM_ERR_MEMORY, "[vmap] Out of memory.");
  if (!rc) rc = batch_axes(inputs, nin, in_axes, axes, &batch);
  if (!rc) rc = make_placeholders(inputs, nin, axes, ph, s);
  if (!rc) {
    cm_eval_forbid_push();
    cm_trace_push();
    rc = f.call(f.ctx, ph, nin, &outs, &n);
    cm_trace_pop();
    cm_eval_forbid_pop();
  }
  free(axes);
  if (rc) {
    cm_array_list_free(ph, nin);
    return -1;
  }
  *s_inputs = ph;
  *s_outputs = outs;
  *nout = n;
  return 0;
}

int cm_vmap_replace(cm_array *const *inputs, cm_array *const *s_inputs, int nin,
                    cm_array *const *s_outputs, int n, const int *in_axes, const int *out_axes,
                    int nout_axes, cm_array ***outputs) {
  cm_stream s = CM_STREAM_DEFAULT;
  if (cm_op_stream(&s)) return -1;
  if (nout_axes != 1 && nout_axes != n)
    return cm_error(CM_ERR_VALUE,
                    "[vmap] The number of out axes (%d) must match the number of outputs (%d).",
                    nout_axes, n);
  cm_graph_walk w = {0};
  cm_ptrmap index = {0};
  batched *state = NULL;
  cm_array **res = NULL;
  int *axes = calloc((size_t)(nin ? nin : 1), sizeof *axes);
  int batch = 0, rc = axes ? 0 : cm_error(CM_ERR_MEMORY, "[vmap] Out of memory.");
  if (!rc) rc = batch_axes(inputs, nin, in_axes, axes, &batch);
  for (int i = 0; !rc && i < nin; i++)
    if (axes[i] >= 0) rc = cm_graph_add_input(&w, s_inputs[i], i);
  if (!rc) rc = cm_graph_sort(&w, s_outputs, n);
  if (!rc && !(state = calloc(w.len ? w.len : 1, sizeof *state)))
    rc = cm_error(CM_ERR_MEMORY, "[vmap] Out of memory.");
  /* Every node's position, up front: a multi-output node fills the
   * states of all its outputs when the first is reached. */
  for (size_t k = 0; !rc && k < w.len; k++) {
    void **slot = cm_ptrmap_insert(&index, w.order[k]);
    if (!slot) rc = cm_error(CM_ERR_MEMORY, "[vmap] Out of memory.");
    else *slot = (void *)(intptr_t)(k + 1);
  }
  /* replay: every node on the path gets its batched form */
  for (size_t k = 0; !rc && k < w.len; k++) {
    cm_array *a = w.order[k];
    if (!cm_graph_on_path(&w, a) || state[k].arr) continue;
    int in = cm_graph_input_index(&w, a);
    if (in >= 0) {
      state[k] = (batched){cm_retain(inputs[in]), axes[in]};
    } else if (!cm_has_graph(a)) {
      rc =
          cm_error(CM_ERR_VALUE, "[vmap] Cannot vmap through an array that was already evaluated.");
    } else if (!a->sib) {
      rc = vmap_node(&w, state, &index, a, &state[k]);
    } else {
      rc = vmap_group(&w, state, &index, a);
    }
  }
  if (!rc && !(res = calloc((size_t)(n ? n : 1), sizeof *res)))
    rc = cm_error(CM_ERR_MEMORY, "[vmap] Out of memory.");
  for (int j = 0; !rc && j < n; j++) {
    void **k = cm_graph_on_path(&w, s_outputs[j]) ? cm_ptrmap_find(&index, s_outputs[j]) : NULL;
    batched b = k ? state[(intptr_t)*k - 1] : (batched){s_outputs[j], -1};
    res[j] = place_output(b.arr, b.axis, out_axes[nout_axes == 1 ? 0 : j], batch, s);
    if (!res[j]) rc = -1;
  }
  for (size_t k = 0; state && k < w.len; k++) cm_release(state[k].arr);
  free(state);
  cm_ptrmap_free(&index);
  cm_graph_walk_free(&w);
  free(axes);
  if (rc) {
    cm_array_list_free(res, n);
    return -1;
  }
  *outputs = res;
  return 0;
}
