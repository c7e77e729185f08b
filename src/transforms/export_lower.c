/* Export lowering (see export_impl.h): before a trace is written, nodes
 * that cmlx has as one primitive where MLX builds a graph of its own
 * primitives are replaced by that graph, built through cmlx's op
 * constructors on the node's inputs, so that MLX reads the file.
 *
 *   the convolution's weight gradient (cmlx's CM_CONV_WEIGHT_GRAD node)
 *     MLX's Convolution::vjp general form: a Convolution of the input and
 *     the cotangent with batch and channel axes swapped (grouped: the
 *     input's groups moved beside the batch), kernel strides and
 *     dilations exchanged, flipped back with a reversing Slice when the
 *     forward flips, the result's axes swapped back;
 *   Identity (which the transforms put on traced inputs, grad's too)
 *     its input: MLX has no such primitive.
 *
 * The replacement takes the node's place in the tape (its new nodes just
 * before it) and in every later node's inputs and the outputs. */
#include <stdlib.h>
#include <string.h>

#include "ops/conv.h"
#include "ops/ops.h"
#include "ops/shape.h"
#include "primitives/conv.h"
#include "primitives/layout.h"
#include "primitives/rules_util.h"
#include "transforms/compile.h"
#include "transforms/export_impl.h"
#include "transforms/ptrmap.h"

static int64_t dilated(int64_t n, int64_t d) { return n > 0 ? 1 + d * (n - 1) : 0; }

/* MLX's weight gradient: x (N, S.., C), cotangent (N, Y.., O) -> (O, K.., C / groups). */
static cm_array *lower_weight_grad(const cm_array *a) {
  cm_conv_params c = cm_conv_params_copy((const cm_conv_params *)a->params);
  cm_array *x = a->in[0], *cot = a->in[1];
  int nd = c.ndim, g = c.groups;
  cm_stream s = a->stream;
  int32_t st[CM_CONV_MAX_SPATIAL], lo[CM_CONV_MAX_SPATIAL], hi[CM_CONV_MAX_SPATIAL],
      kd[CM_CONV_MAX_SPATIAL], id[CM_CONV_MAX_SPATIAL];
  for (int i = 0; i < nd; i++) {
    const cm_conv_axis *ax = &c.ax[i];
    int64_t in = dilated(x->shape[1 + i], ax->idil), out = dilated(cot->shape[1 + i], ax->stride);
    int64_t wt = dilated(a->shape[1 + i], ax->kdil);
    st[i] = ax->kdil, kd[i] = ax->stride, id[i] = ax->idil, lo[i] = ax->pad_lo;
    hi[i] = (int32_t)(out - in + wt - ax->pad_lo - 1);
  }
  cm_rt t = {0};
  cm_array *xt;
  if (g > 1) { /* (N, S.., G, C/G) -> (C/G, S.., G, N) -> (C/G, S.., G * N) */
    int32_t sh[CM_MAX_DIMS];
    memcpy(sh, x->shape, sizeof(int32_t) * (size_t)x->ndim);
    sh[x->ndim - 1] = g, sh[x->ndim] = x->shape[x->ndim - 1] / g;
    cm_array *r = RT(&t, cm_reshape(x, x->ndim + 1, sh, s));
    cm_array *w = RT(&t, cm_swapaxes(r, 0, -1, s));
    xt = RT(&t, cm_flatten(w, x->ndim - 1, x->ndim, s));
  } else {
    xt = RT(&t, cm_swapaxes(x, 0, -1, s));
  }
  cm_array *ct = RT(&t, cm_swapaxes(cot, 0, -1, s));
  cm_array *gt =
      t.fail ? NULL
             : RT(&t, cm_conv_general(xt, ct, (cm_conv_list){nd, st}, (cm_conv_list){nd, lo},
                                      (cm_conv_list){nd, hi}, (cm_conv_list){nd, kd},
                                      (cm_conv_list){nd, id}, g, false, s));
  if (c.flip && !t.fail) { /* reverse the spatial axes */
    int n = gt->ndim;
    int32_t b[CM_MAX_DIMS], e[CM_MAX_DIMS], step[CM_MAX_DIMS];
    for (int i = 0; i < n; i++) {
      bool sp = i >= 1 && i < n - 1;
      b[i] = sp ? gt->shape[i] - 1 : 0, e[i] = sp ? -gt->shape[i] - 1 : gt->shape[i];
      step[i] = sp ? -1 : 1;
    }
    gt = RT(&t, cm_slice(gt, n, b, n, e, n, step, s));
  }
  cm_array *r = RT(&t, cm_swapaxes(gt, 0, -1, s)), *out;
  return cm_rt_done(&t, r, &out) ? NULL : out;
}

/* The replacement for a (a new reference), NULL with *err 0 for none. */
static cm_array *lowered(const cm_array *a, int *err) {
  cm_array *r = NULL;
  *err = 0;
  if (a->prim == &cm_prim_identity && a->nin == 1) return cm_retain(a->in[0]);
  if (a->prim == &cm_prim_conv &&
      ((const cm_conv_params *)a->params)->kind == CM_CONV_WEIGHT_GRAD && a->nin == 2) {
    r = lower_weight_grad(a);
    *err = r ? 0 : -1;
  }
  return r;
}

/* Append to list the nodes of c's graph not in known, inputs first. */
static int collect(cm_array *c, cm_ptrmap *known, cm_array ***list, size_t *n, size_t *cap) {
  if (!c->prim || cm_ptrmap_find(known, c)) return 0;
  for (int i = 0; i < c->nin; i++)
    if (collect(c->in[i], known, list, n, cap)) return -1;
  if (!cm_ptrmap_insert(known, c)) return -1;
  if (*n == *cap) {
    size_t nc = *cap ? 2 * *cap : 16;
    cm_array **l = realloc(*list, sizeof *l * nc);
    if (!l) return -1;
    *list = l, *cap = nc;
  }
  (*list)[(*n)++] = cm_retain(c);
  return 0;
}

/* Put c where a was: in the tape (after its new nodes) and in every later
 * reference. */
static int splice(cm_compile_trace_result *t, size_t k, cm_array *c, cm_ptrmap *known,
                  cm_array **replaced) {
  cm_array **list = NULL;
  size_t n = 0, cap = 0;
  if (collect(c, known, &list, &n, &cap)) {
    for (size_t i = 0; i < n; i++) cm_release(list[i]);
    free(list);
    return cm_error(CM_ERR_MEMORY, "[export_function] Out of memory.");
  }
  cm_array **tape = malloc(sizeof *tape * (t->len + n));
  if (!tape) {
    for (size_t i = 0; i < n; i++) cm_release(list[i]);
    free(list);
    return cm_error(CM_ERR_MEMORY, "[export_function] Out of memory.");
  }
  cm_array *a = t->tape[k];
  memcpy(tape, t->tape, sizeof *tape * k);
  memcpy(tape + k, list, sizeof *tape * n);
  memcpy(tape + k + n, t->tape + k + 1, sizeof *tape * (t->len - k - 1));
  free(list);
  free(t->tape);
  t->tape = tape, t->len += n - 1;
  for (size_t j = k + n; j < t->len; j++)
    for (int i = 0; i < tape[j]->nin; i++)
      if (tape[j]->in[i] == a) {
        tape[j]->in[i] = cm_retain(c);
        cm_release(a);
      }
  for (int j = 0; j < t->nout; j++)
    if (t->outputs[j] == a) {
      t->outputs[j] = cm_retain(c);
      cm_release(a);
    }
  *replaced = a; /* the tape's reference, released after the walk (known holds its address) */
  return 0;
}

int cm_export_lower(cm_compile_trace_result *t) {
  cm_ptrmap known = {0};
  cm_array **gone = malloc(sizeof *gone * (t->len + 1));
  size_t ngone = 0;
  int rc = gone ? 0 : -1;
  for (size_t k = 0; !rc && k < t->len; k++)
    if (!cm_ptrmap_insert(&known, t->tape[k])) rc = -1;
  for (int i = 0; !rc && i < t->nin; i++)
    if (!cm_ptrmap_insert(&known, t->inputs[i])) rc = -1;
  if (rc) rc = cm_error(CM_ERR_MEMORY, "[export_function] Out of memory.");
  for (size_t k = 0; !rc && k < t->len; k++) {
    cm_array *a = t->tape[k];
    if (!a->prim || (a->sib && a->sib->n > 1)) continue;
    bool input = false;
    for (int i = 0; i < t->nin && !input; i++) input = t->inputs[i] == a;
    if (input) continue;
    int err;
    cm_array *c = lowered(a, &err);
    if (err) rc = -1;
    if (!c) continue;
    size_t before = t->len;
    rc = splice(t, k, c, &known, &gone[ngone]);
    cm_release(c);
    if (!rc) k += t->len - before, ngone++; /* past the new nodes, at c */
  }
  for (size_t i = 0; i < ngone; i++) cm_release(gone[i]);
  free(gone);
  cm_ptrmap_free(&known);
  return rc;
}
