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
 *   isinf, isfinite, nan_to_num, round with decimals, logical_xor, and
 *     the float predicates on integers (constants), as MLX's ops.cpp
 *     composes them (isnan, isposinf, isneginf, reciprocal, degrees and
 *     radians on floats are the writer's bridges, export_prims.c);
 *   diagonal: MLX's Gather at two aranges, squeezed, the axis moved last;
 *   median: MLX's sort of the flattened axes, the middle slice(s), NaN
 *     where a lane has one;
 *   affine dequantize: MLX's CPU arithmetic (shifts, scales, biases);
 *   Identity (which the transforms put on traced inputs, grad's too)
 *     its input: MLX has no such primitive.
 *
 * The replacement takes the node's place in the tape (its new nodes just
 * before it) and in every later node's inputs and the outputs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/binary.h"
#include "ops/conv.h"
#include "ops/creation.h"
#include "ops/indexing.h"
#include "ops/ops.h"
#include "ops/quantized.h"
#include "ops/reduce.h"
#include "ops/shape.h"
#include "ops/sort.h"
#include "ops/ternary.h"
#include "ops/unary.h"
#include "primitives/binary.h"
#include "primitives/conv.h"
#include "primitives/layout.h"
#include "primitives/quantized.h"
#include "primitives/reduce.h"
#include "primitives/rules_util.h"
#include "primitives/shape.h"
#include "primitives/unary.h"
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

/* ---- elementwise ops MLX composes (ops.cpp's isinf, isfinite, nan_to_num,
 * round with decimals, logical_xor; the predicates on integers are
 * constants there) ---- */

static cm_array *scalar(cm_rt *t, double v, cm_dtype dt) {
  return RT(t, cm_array_scalar_double(v, dt));
}

/* x == +inf or x == -inf; complex: either part. */
static cm_array *is_inf(cm_rt *t, cm_array *x, cm_stream s) {
  if (x->dtype == CM_COMPLEX64) {
    cm_array *re = RT(t, cm_real(x, s)), *im = RT(t, cm_imag(x, s));
    if (t->fail) return NULL;
    cm_array *a = is_inf(t, re, s), *b = a ? is_inf(t, im, s) : NULL;
    return b ? RT(t, cm_logical_or(a, b, s)) : NULL;
  }
  cm_array *pi = scalar(t, INFINITY, x->dtype), *ni = scalar(t, -INFINITY, x->dtype);
  cm_array *p = t->fail ? NULL : RT(t, cm_equal(x, pi, s));
  cm_array *n = t->fail ? NULL : RT(t, cm_equal(x, ni, s));
  return t->fail ? NULL : RT(t, cm_logical_or(p, n, s));
}

static cm_array *lower_unary(const cm_array *a) {
  const cm_unary_params *u = (const cm_unary_params *)a->params;
  cm_array *x = a->in[0];
  cm_stream s = a->stream;
  bool inexact = cm_dtype_is_inexact(x->dtype), real = cm_dtype_is_float(x->dtype);
  cm_rt t = {0};
  cm_array *r = NULL, *out;
  switch (u->op) {
  case CM_UNARY_ISNAN:
  case CM_UNARY_ISINF:
  case CM_UNARY_ISPOSINF:
  case CM_UNARY_ISNEGINF:
  case CM_UNARY_ISFINITE:
    if (!inexact) { /* MLX's full(shape, false) (true for isfinite) */
      cm_array *v = scalar(&t, u->op == CM_UNARY_ISFINITE, CM_BOOL);
      r = t.fail ? NULL : RT(&t, cm_full(a->ndim, a->shape, v, CM_BOOL, s));
    } else if (u->op == CM_UNARY_ISINF) {
      r = is_inf(&t, x, s);
    } else if (u->op == CM_UNARY_ISFINITE) {
      cm_array *i = is_inf(&t, x, s), *n = t.fail ? NULL : RT(&t, cm_not_equal(x, x, s));
      cm_array *o = t.fail ? NULL : RT(&t, cm_logical_or(i, n, s));
      r = t.fail ? NULL : RT(&t, cm_logical_not(o, s));
    } else {
      return NULL; /* the writer's own bridges (export_prims.c) */
    }
    break;
  case CM_UNARY_NAN_TO_NUM: {
    if (!real) return NULL;
    cm_dtype dt = x->dtype;
    cm_array *vn = scalar(&t, u->nan, dt), *vp = scalar(&t, u->posinf, dt);
    cm_array *vm = scalar(&t, u->neginf, dt), *pi = scalar(&t, INFINITY, dt);
    cm_array *ni = scalar(&t, -INFINITY, dt);
    if (t.fail) break;
    cm_array *nan = RT(&t, cm_not_equal(x, x, s)), *o = RT(&t, cm_where(nan, vn, x, s));
    cm_array *pos = RT(&t, cm_equal(x, pi, s)), *o2 = RT(&t, cm_where(pos, vp, o, s));
    cm_array *neg = RT(&t, cm_equal(x, ni, s));
    r = RT(&t, cm_where(neg, vm, o2, s));
    break;
  }
  case CM_UNARY_ROUND_DECIMALS: {
    if (!cm_dtype_is_float(a->dtype)) return NULL;
    cm_array *sc = scalar(&t, u->scale, a->dtype), *inv = scalar(&t, u->inv_scale, a->dtype);
    cm_array *m = t.fail ? NULL : RT(&t, cm_multiply(x, sc, s));
    cm_array *rd = RT(&t, cm_round(m, 0, s));
    r = RT(&t, cm_multiply(rd, inv, s));
    break;
  }
  default: return NULL;
  }
  if (!t.fail && r &&
      (r->dtype != a->dtype || !cm_shape_equal(r->ndim, r->shape, a->ndim, a->shape)))
    r = NULL; /* not the node's value after all: keep the node */
  return cm_rt_done(&t, r, &out) || !r ? NULL : out;
}

static cm_array *lower_logical_xor(const cm_array *a) {
  cm_stream s = a->stream;
  cm_rt t = {0};
  cm_array *x = RT(&t, cm_astype(a->in[0], CM_BOOL, s)),
           *y = RT(&t, cm_astype(a->in[1], CM_BOOL, s));
  cm_array *r = t.fail ? NULL : RT(&t, cm_not_equal(x, y, s)), *out;
  return cm_rt_done(&t, r, &out) ? NULL : out;
}

/* MLX's diagonal: a Gather at two aranges of indices, squeezed, the
 * diagonal's axis moved last. */
static cm_array *lower_diagonal(const cm_array *a) {
  const cm_diagonal_params *d = (const cm_diagonal_params *)a->params;
  cm_array *x = a->in[0];
  cm_stream s = a->stream;
  int n = a->shape[a->ndim - 1], ax[2] = {d->axis1, d->axis2};
  int64_t o1 = d->offset < 0 ? -(int64_t)d->offset : 0, o2 = d->offset > 0 ? d->offset : 0;
  int32_t sizes[CM_MAX_DIMS];
  memcpy(sizes, x->shape, sizeof(int32_t) * (size_t)x->ndim);
  sizes[ax[0]] = sizes[ax[1]] = 1;
  cm_rt t = {0};
  cm_array *idx[2] = {RT(&t, cm_arange((double)o1, (double)(o1 + n), 1, CM_INT32, s)),
                      RT(&t, cm_arange((double)o2, (double)(o2 + n), 1, CM_INT32, s))};
  cm_array *g = t.fail ? NULL : RT(&t, cm_gather(x, idx, 2, ax, 2, sizes, x->ndim, s));
  int sq[2] = {ax[0] + 1, ax[1] + 1};
  cm_array *q = t.fail ? NULL : RT(&t, cm_squeeze(g, 2, sq, s));
  cm_array *r = t.fail ? NULL : RT(&t, cm_moveaxis(q, 0, -1, s)), *out;
  return cm_rt_done(&t, r, &out) ? NULL : out;
}

/* MLX's median: the reduced axes moved last and flattened, sorted, the
 * middle element (or the mean of the middle two) sliced out, NaN where
 * the lane holds one, squeezed (expanded back with keepdims).  The node's
 * input already has the result's float dtype. */
static cm_array *lower_median(const cm_array *a) {
  const cm_reduce_params *p = (const cm_reduce_params *)a->params;
  cm_array *x = a->in[0];
  cm_stream s = a->stream;
  int nd = x->ndim, perm[CM_MAX_DIMS], red[CM_MAX_DIMS], nk = 0, nr = 0;
  for (int i = 0; i < nd; i++)
    if (!(p->axes >> i & 1)) perm[nk++] = i;
  for (int i = 0; i < nd; i++)
    if (p->axes >> i & 1) red[nr] = i, perm[nk + nr++] = i;
  if (!nr) return NULL;
  cm_rt t = {0};
  cm_array *tr = RT(&t, cm_transpose(x, nd, perm, s));
  cm_array *flat = t.fail ? NULL : RT(&t, cm_flatten(tr, nk, nd - 1, s));
  cm_array *sorted = t.fail ? NULL : RT(&t, cm_sort(flat, -1, s));
  if (t.fail) return cm_rt_done(&t, NULL, &tr), NULL;
  int n = flat->ndim, len = flat->shape[n - 1], mp = len / 2;
  int32_t b[CM_MAX_DIMS] = {0}, e[CM_MAX_DIMS];
  memcpy(e, flat->shape, sizeof(int32_t) * (size_t)n);
  b[n - 1] = mp, e[n - 1] = mp + 1;
  cm_array *m = RT(&t, cm_slice(sorted, n, b, n, e, 0, NULL, s));
  if (len % 2 == 0 && !t.fail) {
    b[n - 1] = mp - 1, e[n - 1] = mp;
    cm_array *lo = RT(&t, cm_slice(sorted, n, b, n, e, 0, NULL, s));
    cm_array *sum = t.fail ? NULL : RT(&t, cm_add(m, lo, s));
    cm_array *half = scalar(&t, 0.5, x->dtype);
    m = t.fail ? NULL : RT(&t, cm_multiply(sum, half, s));
  }
  cm_array *ne = t.fail ? NULL : RT(&t, cm_not_equal(flat, flat, s));
  cm_array *any = t.fail ? NULL : RT(&t, cm_reduce(CM_REDUCE_OR, ne, CM_AXIS(-1), true, s));
  cm_array *nan = scalar(&t, NAN, x->dtype);
  cm_array *w = t.fail ? NULL : RT(&t, cm_where(any, nan, m, s));
  int last = n - 1;
  cm_array *r = t.fail ? NULL : RT(&t, cm_squeeze(w, 1, &last, s)), *out;
  if (p->keepdims && !t.fail) r = RT(&t, cm_expand_dims(r, nr, red, s));
  return cm_rt_done(&t, r, &out) ? NULL : out;
}

/* MLX's affine dequantize on the CPU: the bits unpacked by shifts (power
 * of two widths: a shift pair per field, concatenated; others: single
 * bits regrouped and summed), grouped, times the scales, plus the biases,
 * cast to the result dtype. */
static cm_array *lower_dequantize(const cm_array *a) {
  const cm_quant_params *q = (const cm_quant_params *)a->params;
  cm_array *w = a->in[0], *sc = a->in[1], *bi = a->in[2];
  cm_stream s = a->stream;
  int bits = q->bits, gs = q->group_size, nd = w->ndim, last = -1;
  if (bits < 1 || bits > 8) return NULL;
  cm_rt t = {0};
  cm_array *u;
  if ((bits & (bits - 1)) == 0) {
    cm_array *parts[32]; /* own references: more fields than a cm_rt holds */
    int np = 0;
    bool bad = false;
    for (int start = 0; start < 32 && !bad; start += bits) {
      cm_array *up = cm_array_scalar_double(32 - (start + bits), CM_UINT32);
      cm_array *down = cm_array_scalar_double(32 - bits, CM_UINT32);
      cm_array *l = up && down ? cm_left_shift(w, up, s) : NULL;
      cm_array *r = l ? cm_right_shift(l, down, s) : NULL;
      cm_array *e = r ? cm_expand_dims(r, 1, &last, s) : NULL;
      cm_release(up), cm_release(down), cm_release(l), cm_release(r);
      if (e) parts[np++] = e;
      else bad = true;
    }
    if (bad) t.fail = true;
    u = t.fail ? NULL : RT(&t, cm_concatenate(parts, np, -1, s));
    for (int i = 0; i < np; i++) cm_release(parts[i]);
  } else {
    cm_array *e = RT(&t, cm_expand_dims(w, 1, &last, s));
    cm_array *sh = RT(&t, cm_arange(0, 32, 1, CM_UINT32, s)), *one = scalar(&t, 1, CM_UINT32);
    cm_array *r = t.fail ? NULL : RT(&t, cm_right_shift(e, sh, s));
    cm_array *b = t.fail ? NULL : RT(&t, cm_bitwise_and(r, one, s));
    int32_t shp[CM_MAX_DIMS];
    if (!t.fail) {
      memcpy(shp, b->shape, sizeof(int32_t) * (size_t)b->ndim);
      shp[b->ndim - 2] = -1, shp[b->ndim - 1] = bits;
    }
    cm_array *g = t.fail ? NULL : RT(&t, cm_reshape(b, b->ndim, shp, s));
    cm_array *k = RT(&t, cm_arange(0, bits, 1, CM_UINT32, s));
    cm_array *l = t.fail ? NULL : RT(&t, cm_left_shift(g, k, s));
    u = t.fail ? NULL : RT(&t, cm_reduce(CM_REDUCE_SUM, l, CM_AXIS(-1), false, s));
  }
  int32_t ws[CM_MAX_DIMS + 1];
  memcpy(ws, w->shape, sizeof(int32_t) * (size_t)nd);
  ws[nd - 1] = -1, ws[nd] = gs;
  cm_array *grouped = t.fail ? NULL : RT(&t, cm_reshape(u, nd + 1, ws, s));
  cm_array *se = RT(&t, cm_expand_dims(sc, 1, &last, s)),
           *be = RT(&t, cm_expand_dims(bi, 1, &last, s));
  cm_array *m = t.fail ? NULL : RT(&t, cm_multiply(grouped, se, s));
  cm_array *ad = t.fail ? NULL : RT(&t, cm_add(m, be, s));
  int32_t os[CM_MAX_DIMS];
  memcpy(os, sc->shape, sizeof(int32_t) * (size_t)sc->ndim);
  os[sc->ndim - 1] = -1;
  cm_array *flat = t.fail ? NULL : RT(&t, cm_reshape(ad, sc->ndim, os, s));
  cm_array *r = t.fail ? NULL : RT(&t, cm_astype(flat, a->dtype, s)), *out;
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
  } else if (a->prim == &cm_prim_diagonal && a->nin == 1) {
    r = lower_diagonal(a);
    *err = r ? 0 : -1;
  } else if (a->prim == &cm_prim_median && a->nin == 1 && cm_dtype_is_float(a->dtype)) {
    cm_error_clear(); /* NULL without an error: no lowering */
    r = lower_median(a);
    *err = !r && cm_error_kind_get() != CM_OK ? -1 : 0;
  } else if (a->prim == &cm_prim_dequantize && a->nin == 3 &&
             ((const cm_quant_params *)a->params)->mode == 0 &&
             !((const cm_quant_params *)a->params)->has_global) {
    cm_error_clear(); /* NULL without an error: no lowering */
    r = lower_dequantize(a);
    *err = !r && cm_error_kind_get() != CM_OK ? -1 : 0;
  } else if (a->prim == &cm_prim_unary) {
    cm_error_clear(); /* NULL without an error: no lowering */
    r = lower_unary(a);
    *err = !r && cm_error_kind_get() != CM_OK ? -1 : 0;
  } else if (a->prim == &cm_prim_binary &&
             ((const cm_binary_params *)a->params)->op == CM_BINARY_LOGICAL_XOR) {
    r = lower_logical_xor(a);
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
  if (n) memcpy(tape + k, list, sizeof *tape * n);
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
