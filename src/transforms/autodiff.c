#include "transforms/autodiff.h"

#include <stdlib.h>

#include "ops/ops.h"
#include "primitives/layout.h"
#include "transforms/eval.h"
#include "transforms/graph.h"

void cm_array_list_free(cm_array **list, int n) {
  if (!list) return;
  for (int i = 0; i < n; i++) cm_release(list[i]);
  free(list);
}

/* Wrap the primals and call f with graph retention on, so that arrays the
 * function evaluates keep the graph the walk needs.  The wrappers are
 * tracers, so async_eval of what f builds from them is refused. */
static int trace(cm_closure f, cm_array *const *primals, int n, cm_array **wrapped,
                 cm_graph_walk *w, cm_array ***outs, int *nout) {
  for (int i = 0; i < n; i++) wrapped[i] = NULL;
  for (int i = 0; i < n; i++) {
    cm_stream s = CM_STREAM_DEFAULT;
    if (cm_op_stream(&s)) return -1;
    wrapped[i] = cm_node_new(primals[i]->dtype, primals[i]->ndim, primals[i]->shape,
                             &cm_prim_identity, NULL, 0, &primals[i], 1, s);
    if (!wrapped[i] || cm_graph_add_input(w, wrapped[i], i)) return -1;
    wrapped[i]->tracer = true;
  }
  cm_graph_retention_push();
  cm_trace_push();
  int rc = f.call(f.ctx, wrapped, n, outs, nout);
  cm_trace_pop();
  cm_graph_retention_pop();
  return rc;
}

/* cot[node] += g (takes g). */
static int accumulate(cm_ptrmap *cot, cm_array *node, cm_array *g) {
  void **slot = cm_ptrmap_insert(cot, node);
  if (!slot) {
    cm_release(g);
    return cm_error(CM_ERR_MEMORY, "[vjp] Out of memory.");
  }
  if (!*slot) {
    *slot = g;
    return 0;
  }
  cm_array *sum = cm_add(*slot, g, CM_STREAM_DEFAULT);
  cm_release(g);
  if (!sum) return -1;
  cm_release(*slot);
  *slot = sum;
  return 0;
}

static void release_map_values(cm_ptrmap *m) {
  for (size_t i = 0; i < m->cap; i++)
    if (m->keys[i]) cm_release(m->vals[i]);
  cm_ptrmap_free(m);
}

/* Run the vjp rule of one node for its inputs on the path.  cots holds
 * the cotangent of each output (one for a single-output node). */
static int backprop_node(cm_graph_walk *w, cm_ptrmap *cot, cm_array *a, cm_array *const *cots) {
  int argnums[64], nargs = 0;
  int *args = a->nin <= 64 ? argnums : malloc(sizeof(int) * (size_t)a->nin);
  cm_array *gl[64], **grads = a->nin <= 64 ? gl : calloc((size_t)a->nin, sizeof *grads);
  int rc = 0;
  bool multi = a->sib != NULL;
  if (!args || !grads) rc = cm_error(CM_ERR_MEMORY, "[vjp] Out of memory.");
  for (int i = 0; !rc && i < a->nin; i++)
    if (cm_graph_on_path(w, a->in[i])) args[nargs++] = i;
  if (!rc && nargs) {
    if (multi ? !a->prim->vjp_multi : !a->prim->vjp) {
      rc = cm_error(CM_ERR_NOT_IMPLEMENTED, "[vjp] Not implemented for %s.",
                    cm_prim_name(a->prim, a->params, a->params_size));
    } else {
      for (int i = 0; i < nargs; i++) grads[i] = NULL;
      rc = multi
               ? a->prim->vjp_multi(a->sib->out, a->sib->n, a->in, a->nin, a->params, cots, args,
                                    nargs, grads, a->stream)
               : a->prim->vjp(a, a->in, a->nin, a->params, cots[0], args, nargs, grads, a->stream);
      for (int i = 0; i < nargs; i++) {
        if (!rc && grads[i]) rc = accumulate(cot, a->in[args[i]], grads[i]);
        else cm_release(grads[i]);
      }
    }
  }
  if (args != argnums) free(args);
  if (grads != gl) free(grads);
  return rc;
}

/* The cotangents of every output of a's node (borrowed; NULL: none yet);
 * false when none has one.  cots has room for cm_num_outputs(a). */
static bool node_cotangents(const cm_ptrmap *cot, const cm_array *a, cm_array **cots) {
  bool any = false;
  for (int k = 0; k < cm_num_outputs(a); k++) {
    void **g = cm_ptrmap_find(cot, cm_output(a, k));
    cots[k] = g ? *g : NULL;
    any |= cots[k] != NULL;
  }
  return any;
}

/* Once per multi-output node: its outputs are adjacent in the walk's
 * order, and the rule handles all of them at the first one reached. */
static bool group_seen(cm_ptrmap *seen, const cm_array *a, int *rc) {
  if (!a->sib) return false;
  if (cm_ptrmap_find(seen, a->sib)) return true;
  void **slot = cm_ptrmap_insert(seen, a->sib);
  if (!slot) *rc = cm_error(CM_ERR_MEMORY, "[transforms] Out of memory.");
  else *slot = (void *)1;
  return false;
}

int cm_vjp(cm_closure f, cm_array *const *primals, int nprimals, cm_array *const *cotangents,
           int ncotangents, cm_array ***outputs, int *nout, cm_array ***grads) {
  cm_graph_walk w = {.stop_gradients = true};
  cm_ptrmap cot = {0};
  cm_array **wrapped = calloc((size_t)(nprimals ? nprimals : 1), sizeof *wrapped);
  cm_array **outs = NULL, **res = NULL;
  int n = 0, rc = wrapped ? 0 : cm_error(CM_ERR_MEMORY, "[vjp] Out of memory.");
  if (!rc) rc = trace(f, primals, nprimals, wrapped, &w, &outs, &n);
  if (!rc && n != ncotangents)
    rc = cm_error(CM_ERR_VALUE,
                  "[vjp] Number of outputs to compute gradients for (%d) does not match number of "
                  "cotangents (%d).",
                  n, ncotangents);
  for (int i = 0; !rc && i < n; i++)
    if (!cm_same_shape(outs[i], cotangents[i])) {
      char sa[256], sb[256];
      rc = cm_error(CM_ERR_VALUE, "[vjp] Output shape %s does not match cotangent shape %s.",
                    cm_shape_str(sa, sizeof sa, outs[i]->ndim, outs[i]->shape),
                    cm_shape_str(sb, sizeof sb, cotangents[i]->ndim, cotangents[i]->shape));
    }
  if (!rc) rc = cm_graph_sort(&w, outs, n);
  /* MLX casts each cotangent to its output's dtype (grad seeds float32 1.0
   * into a float16 loss and gets float16 gradients). */
  for (int i = 0; !rc && i < n; i++)
    if (cm_graph_on_path(&w, outs[i])) {
      cm_array *c = cm_astype(cotangents[i], outs[i]->dtype, CM_STREAM_DEFAULT);
      rc = c ? accumulate(&cot, outs[i], c) : -1;
    }
  cm_ptrmap groups = {0};
  for (size_t k = w.len; !rc && k-- > 0;) {
    cm_array *a = w.order[k];
    if (cm_graph_input_index(&w, a) >= 0 || !cm_has_graph(a) || !cm_graph_on_path(&w, a)) continue;
    cm_array *cl[8],
        **cots = cm_num_outputs(a) <= 8 ? cl : malloc(sizeof *cots * (size_t)cm_num_outputs(a));
    if (!cots) rc = cm_error(CM_ERR_MEMORY, "[vjp] Out of memory.");
    else if (node_cotangents(&cot, a, cots) && !group_seen(&groups, a, &rc) && !rc)
      rc = backprop_node(&w, &cot, a, cots);
    if (cots != cl) free(cots);
  }
  cm_ptrmap_free(&groups);
  if (!rc) {
    res = calloc((size_t)(nprimals ? nprimals : 1), sizeof *res);
    if (!res) rc = cm_error(CM_ERR_MEMORY, "[vjp] Out of memory.");
  }
  for (int i = 0; !rc && i < nprimals; i++) {
    void **g = cm_ptrmap_find(&cot, wrapped[i]);
    /* As in MLX the gradient keeps the dtype the rules produced (the
     * derivative of an integer power is float32, not truncated). */
    res[i] = g && *g ? cm_retain(*g) : cm_zeros_like(primals[i], CM_STREAM_DEFAULT);
    if (!res[i]) rc = -1;
  }
  release_map_values(&cot);
  cm_graph_walk_free(&w);
  for (int i = 0; wrapped && i < nprimals; i++) cm_release(wrapped[i]);
  free(wrapped);
  if (rc) {
    cm_array_list_free(outs, n);
    cm_array_list_free(res, nprimals);
    return -1;
  }
  *outputs = outs;
  *nout = n;
  *grads = res;
  return 0;
}

/* Run the jvp rule of one node, recording the tangent of each output. */
static int forward_node(cm_ptrmap *tan, cm_array *a) {
  bool multi = a->sib != NULL;
  int nout = cm_num_outputs(a);
  if (multi ? !a->prim->jvp_multi : !a->prim->jvp)
    return cm_error(CM_ERR_NOT_IMPLEMENTED, "[jvp] Not implemented for %s.",
                    cm_prim_name(a->prim, a->params, a->params_size));
  cm_array *tl[64], **ts = a->nin <= 64 ? tl : malloc(sizeof *ts * (size_t)a->nin);
  cm_array *ol[8], **outs = nout <= 8 ? ol : calloc((size_t)nout, sizeof *outs);
  int rc = ts && outs ? 0 : cm_error(CM_ERR_MEMORY, "[jvp] Out of memory.");
  for (int i = 0; !rc && i < a->nin; i++) {
    void **t = cm_ptrmap_find(tan, a->in[i]);
    ts[i] = t ? *t : NULL;
  }
  for (int k = 0; k < nout && outs; k++) outs[k] = NULL;
  if (!rc)
    rc = multi
             ? a->prim->jvp_multi(a->sib->out, nout, a->in, a->nin, a->params, ts, outs, a->stream)
             : a->prim->jvp(a, a->in, a->nin, a->params, ts, &outs[0], a->stream);
  for (int k = 0; outs && k < nout; k++) {
    void **slot = rc ? NULL : cm_ptrmap_insert(tan, cm_output(a, k));
    if (!rc && !slot) rc = cm_error(CM_ERR_MEMORY, "[jvp] Out of memory.");
    if (slot) *slot = outs[k];
    else cm_release(outs[k]);
  }
  if (ts != tl) free(ts);
  if (outs != ol) free(outs);
  return rc;
}

int cm_jvp(cm_closure f, cm_array *const *primals, int nprimals, cm_array *const *tangents,
           int ntangents, cm_array ***outputs, int *nout, cm_array ***out_tangents) {
  if (ntangents != nprimals)
    return cm_error(CM_ERR_VALUE,
                    "[jvp] Number of inputs to compute derivatives for (%d) does not match number "
                    "of tangents (%d).",
                    nprimals, ntangents);
  for (int i = 0; i < nprimals; i++)
    if (!cm_same_shape(primals[i], tangents[i])) {
      char sa[256], sb[256];
      return cm_error(CM_ERR_VALUE, "[jvp] Primal shape %s does not match tangent shape %s.",
                      cm_shape_str(sa, sizeof sa, primals[i]->ndim, primals[i]->shape),
                      cm_shape_str(sb, sizeof sb, tangents[i]->ndim, tangents[i]->shape));
    }
  cm_graph_walk w = {.stop_gradients = true};
  cm_ptrmap tan = {0};
  cm_array **wrapped = calloc((size_t)(nprimals ? nprimals : 1), sizeof *wrapped);
  cm_array **outs = NULL, **res = NULL;
  int n = 0, rc = wrapped ? 0 : cm_error(CM_ERR_MEMORY, "[jvp] Out of memory.");
  if (!rc) rc = trace(f, primals, nprimals, wrapped, &w, &outs, &n);
  if (!rc) rc = cm_graph_sort(&w, outs, n);
  for (int i = 0; !rc && i < nprimals; i++) {
    void **slot = cm_ptrmap_insert(&tan, wrapped[i]);
    if (!slot) rc = cm_error(CM_ERR_MEMORY, "[jvp] Out of memory.");
    else *slot = cm_retain(tangents[i]);
  }
  cm_ptrmap groups = {0};
  for (size_t k = 0; !rc && k < w.len; k++) {
    cm_array *a = w.order[k];
    if (cm_graph_input_index(&w, a) >= 0 || !cm_has_graph(a) || !cm_graph_on_path(&w, a)) continue;
    if (group_seen(&groups, a, &rc) || rc) continue;
    rc = forward_node(&tan, a);
  }
  cm_ptrmap_free(&groups);
  if (!rc) {
    res = calloc((size_t)(n ? n : 1), sizeof *res);
    if (!res) rc = cm_error(CM_ERR_MEMORY, "[jvp] Out of memory.");
  }
  for (int j = 0; !rc && j < n; j++) {
    void **t = cm_ptrmap_find(&tan, outs[j]);
    res[j] = t && *t ? cm_retain(*t) : cm_zeros_like(outs[j], CM_STREAM_DEFAULT);
    if (!res[j]) rc = -1;
  }
  release_map_values(&tan);
  cm_graph_walk_free(&w);
  for (int i = 0; wrapped && i < nprimals; i++) cm_release(wrapped[i]);
  free(wrapped);
  if (rc) {
    cm_array_list_free(outs, n);
    cm_array_list_free(res, n);
    return -1;
  }
  *outputs = outs;
  *nout = n;
  *out_tangents = res;
  return 0;
}
