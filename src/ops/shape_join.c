/* Joining and splitting: concatenate, stack, unstack, split, tile, repeat,
 * pad, roll, meshgrid.  Concatenate is the one primitive here; the rest
 * compose views (slices, broadcasts, reshapes) so that each result is
 * written once by a parallel strided copy (Concatenate, SliceUpdate, or a
 * Reshape that has to copy). */
#include "ops/shape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/creation.h"
#include "primitives/shape.h"

/* ---- concatenate, stack ---- */

cm_array *cm_concatenate(cm_array *const *arrays, int n, int axis, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (n <= 0)
    return cm_error(CM_ERR_VALUE, "[concatenate] No arrays provided for concatenation"), NULL;
  if (n == 1) return cm_retain(arrays[0]);
  int ax, nd = arrays[0]->ndim;
  if (cm_normalize_axis("concatenate", axis, nd, &ax)) return NULL;
  int32_t shape[CM_MAX_DIMS];
  memcpy(shape, arrays[0]->shape, sizeof(int32_t) * (size_t)nd);
  int64_t total = 0;
  cm_dtype dtype = arrays[0]->dtype;
  for (int k = 0; k < n; k++) {
    const cm_array *a = arrays[k];
    if (a->ndim != nd)
      return cm_error(CM_ERR_VALUE, "[concatenate] All the input arrays must have the same number "
                                    "of dimensions. However, got arrays with dimensions %d and %d.",
                      nd, a->ndim),
             NULL;
    for (int i = 0; i < nd; i++)
      if (i != ax && a->shape[i] != shape[i]) {
        char msg[1024], buf[256];
        size_t len = 0;
        for (int j = 0; j < n && len < sizeof msg; j++)
          len += (size_t)snprintf(msg + len, sizeof msg - len, "%s, ",
                                  cm_shape_str(buf, sizeof buf, arrays[j]->ndim, arrays[j]->shape));
        return cm_error(CM_ERR_VALUE, "[concatenate] All the input array dimensions must match "
                                      "exactly except for the concatenation axis. However, the "
                                      "provided shapes are %sand the concatenation axis is %d.",
                        msg, axis),
               NULL;
      }
    total += a->shape[ax];
    dtype = cm_promote_types(dtype, a->dtype);
  }
  if (cm_shape_dim("concatenate", total, &shape[ax])) return NULL;
  cm_array **ins = calloc((size_t)n, sizeof *ins);
  if (!ins) return cm_error(CM_ERR_MEMORY, "[concatenate] Out of memory."), NULL;
  cm_array *r = NULL;
  int k = 0;
  for (; k < n; k++)
    if (!(ins[k] = cm_astype(arrays[k], dtype, s))) break;
  if (k == n) {
    cm_concatenate_params p = {ax};
    r = cm_op_node(dtype, nd, shape, &cm_prim_concatenate, &p, sizeof p, ins, n, s);
  }
  for (int j = 0; j < k; j++) cm_release(ins[j]);
  free(ins);
  return r;
}

/* Apply fn(a, s) to each array, then concatenate along axis. */
static cm_array *concat_mapped(cm_array *const *arrays, int n, int axis,
                               cm_array *(*fn)(cm_array *, int, cm_stream), int arg, cm_stream s) {
  if (n <= 0) return cm_concatenate(arrays, n, axis, s);
  cm_array **xs = calloc((size_t)n, sizeof *xs);
  if (!xs) return cm_error(CM_ERR_MEMORY, "[concatenate] Out of memory."), NULL;
  cm_array *r = NULL;
  int k = 0;
  for (; k < n; k++)
    if (!(xs[k] = fn(arrays[k], arg, s))) break;
  if (k == n) r = cm_concatenate(xs, n, axis, s);
  for (int j = 0; j < k; j++) cm_release(xs[j]);
  free(xs);
  return r;
}

static cm_array *flatten_all(cm_array *a, int unused, cm_stream s) {
  (void)unused;
  return cm_flatten(a, 0, -1, s);
}

static cm_array *expand_at(cm_array *a, int axis, cm_stream s) {
  return cm_expand_dims(a, 1, &axis, s);
}

cm_array *cm_concatenate_flat(cm_array *const *arrays, int n, cm_stream s) {
  return concat_mapped(arrays, n, 0, flatten_all, 0, s);
}

cm_array *cm_stack(cm_array *const *arrays, int n, int axis, cm_stream s) {
  if (n <= 0) return cm_error(CM_ERR_VALUE, "[stack] No arrays provided for stacking"), NULL;
  const cm_array *a0 = arrays[0];
  for (int k = 1; k < n; k++) {
    bool same = arrays[k]->ndim == a0->ndim;
    for (int i = 0; same && i < a0->ndim; i++) same = arrays[k]->shape[i] == a0->shape[i];
    if (!same) return cm_error(CM_ERR_VALUE, "[stack] All arrays must have the same shape"), NULL;
  }
  int ax;
  if (cm_normalize_axis("stack", axis, a0->ndim + 1, &ax)) return NULL;
  return concat_mapped(arrays, n, ax, expand_at, ax, s);
}

/* ---- splitting ---- */

/* a[lo:hi] along ax (a view). */
static cm_array *slice_axis(cm_array *a, int ax, int32_t lo, int32_t hi, cm_stream s) {
  int32_t start[CM_MAX_DIMS], stop[CM_MAX_DIMS];
  for (int i = 0; i < a->ndim; i++) {
    start[i] = 0;
    stop[i] = a->shape[i];
  }
  start[ax] = lo;
  stop[ax] = hi;
  return cm_slice(a, a->ndim, start, a->ndim, stop, 0, NULL, s);
}

/* A list of n new references, for the multi-output ops. */
static cm_array **new_list(int n) {
  cm_array **list = calloc((size_t)(n > 0 ? n : 1), sizeof *list);
  if (!list) cm_error(CM_ERR_MEMORY, "[split] Out of memory.");
  return list;
}

static void free_list(cm_array **list, int n) {
  for (int i = 0; i < n; i++) cm_release(list[i]);
  free(list);
}

int cm_split_indices(cm_array *a, int n, const int32_t *indices, int axis, cm_array ***outs,
                     int *nout, cm_stream s) {
  int ax;
  if (cm_op_stream(&s) || cm_normalize_axis("split", axis, a->ndim, &ax)) return -1;
  cm_array **list = new_list(n + 1);
  if (!list) return -1;
  /* piece i is a[indices[i-1]:indices[i]], each bound normalised as a
   * slice bound (so unsorted or negative indices follow NumPy) */
  int32_t lo = 0;
  for (int i = 0; i <= n; i++) {
    int32_t hi = i < n ? indices[i] : a->shape[ax];
    if (!(list[i] = slice_axis(a, ax, lo, hi, s))) {
      free_list(list, i);
      return -1;
    }
    lo = hi;
  }
  *outs = list;
  *nout = n + 1;
  return 0;
}

int cm_split(cm_array *a, int num_splits, int axis, cm_array ***outs, int *nout, cm_stream s) {
  int ax;
  if (cm_normalize_axis("split", axis, a->ndim, &ax)) return -1;
  if (num_splits <= 0)
    return cm_error(CM_ERR_VALUE, "[split] num_splits must be positive and non-zero but got %d.",
                    num_splits);
  if (a->shape[ax] % num_splits) {
    char buf[256];
    return cm_error(CM_ERR_VALUE, "Array split does not result in sub arrays with equal size: "
                                  "attempting %d splits along axis %d for shape %s.",
                    num_splits, axis, cm_shape_str(buf, sizeof buf, a->ndim, a->shape));
  }
  int32_t step = a->shape[ax] / num_splits;
  int32_t *idx = malloc(sizeof(int32_t) * (size_t)(num_splits > 1 ? num_splits - 1 : 1));
  if (!idx) return cm_error(CM_ERR_MEMORY, "[split] Out of memory.");
  for (int i = 0; i < num_splits - 1; i++) idx[i] = (i + 1) * step;
  int rc = cm_split_indices(a, num_splits - 1, idx, ax, outs, nout, s);
  free(idx);
  return rc;
}

int cm_unstack(cm_array *a, int axis, cm_array ***outs, int *nout, cm_stream s) {
  int ax;
  if (cm_op_stream(&s) || cm_normalize_axis("unstack", axis, a->ndim, &ax)) return -1;
  int n = a->shape[ax];
  cm_array **list = new_list(n);
  if (!list) return -1;
  for (int i = 0; i < n; i++) {
    cm_array *x = slice_axis(a, ax, i, i + 1, s);
    list[i] = x ? cm_squeeze(x, 1, &ax, s) : NULL;
    cm_release(x);
    if (!list[i]) {
      free_list(list, i);
      return -1;
    }
  }
  *outs = list;
  *nout = n;
  return 0;
}

/* ---- tile, repeat ---- */

cm_array *cm_tile(cm_array *a, int nreps, const int32_t *reps, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  int nd = a->ndim > nreps ? a->ndim : nreps;
  if (2 * nd > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[tile] Too many dimensions (%d).", nd), NULL;
  int32_t shape[CM_MAX_DIMS], rp[CM_MAX_DIMS];
  for (int i = 0; i < nd; i++) {
    int si = i - (nd - a->ndim), ri = i - (nd - nreps);
    shape[i] = si >= 0 ? a->shape[si] : 1;
    rp[i] = ri >= 0 ? reps[ri] : 1;
    if (rp[i] < 0)
      return cm_error(CM_ERR_VALUE, "[broadcast_to] Negative dimensions not allowed."), NULL;
  }
  /* (.., 1, d, ..) broadcast to (.., r, d, ..), then merged to (.., r*d, ..):
   * the final reshape of the broadcast view is the one copy */
  int32_t expand[CM_MAX_DIMS], bcast[CM_MAX_DIMS], final[CM_MAX_DIMS];
  int ne = 0;
  for (int i = 0; i < nd; i++) {
    if (rp[i] != 1) {
      expand[ne] = 1;
      bcast[ne++] = rp[i];
    }
    expand[ne] = shape[i];
    bcast[ne++] = shape[i];
    if (cm_shape_dim("tile", (int64_t)rp[i] * shape[i], &final[i])) return NULL;
  }
  cm_array *x = cm_reshape(a, ne, expand, s);
  cm_array *y = x ? cm_broadcast_to(x, ne, bcast, s) : NULL;
  cm_array *r = y ? cm_reshape(y, nd, final, s) : NULL;
  cm_release(x);
  cm_release(y);
  return r;
}

cm_array *cm_repeat(cm_array *a, int repeats, int axis, cm_stream s) {
  int ax;
  if (cm_op_stream(&s) || cm_normalize_axis("repeat", axis, a->ndim, &ax)) return NULL;
  if (repeats < 0)
    return cm_error(CM_ERR_VALUE, "[repeat] Number of repeats cannot be negative"), NULL;
  if (repeats == 1) return cm_retain(a);
  if (a->ndim + 1 > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[repeat] Too many dimensions."), NULL;
  int32_t merged;
  if (cm_shape_dim("repeat", (int64_t)a->shape[ax] * repeats, &merged)) return NULL;
  /* (.., d, 1, ..) broadcast to (.., d, r, ..), merged to (.., d*r, ..) */
  int32_t bshape[CM_MAX_DIMS], final[CM_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < a->ndim; i++) {
    bshape[n++] = a->shape[i];
    if (i == ax) bshape[n++] = repeats;
    final[i] = i == ax ? (int32_t)merged : a->shape[i];
  }
  int next = ax + 1;
  cm_array *x = cm_expand_dims(a, 1, &next, s);
  cm_array *y = x ? cm_broadcast_to(x, n, bshape, s) : NULL;
  cm_array *r = y ? cm_reshape(y, a->ndim, final, s) : NULL;
  cm_release(x);
  cm_release(y);
  return r;
}

cm_array *cm_repeat_flat(cm_array *a, int repeats, cm_stream s) {
  cm_array *f = cm_flatten(a, 0, -1, s);
  cm_array *r = f ? cm_repeat(f, repeats, 0, s) : NULL;
  cm_release(f);
  return r;
}

/* ---- pad ---- */

/* Edge padding along ax: concatenate(first broadcast lo times, x, last
 * broadcast hi times).  x is not empty along ax. */
static cm_array *pad_edge_axis(cm_array *x, int ax, int32_t lo, int32_t hi, cm_stream s) {
  cm_array *parts[3] = {NULL, x, NULL};
  int32_t shape[CM_MAX_DIMS];
  memcpy(shape, x->shape, sizeof(int32_t) * (size_t)x->ndim);
  int32_t n = x->shape[ax];
  cm_array *r = NULL;
  if (lo) {
    cm_array *e = slice_axis(x, ax, 0, 1, s);
    shape[ax] = lo;
    parts[0] = e ? cm_broadcast_to(e, x->ndim, shape, s) : NULL;
    cm_release(e);
    if (!parts[0]) goto done;
  }
  if (hi) {
    cm_array *e = slice_axis(x, ax, n - 1, n, s);
    shape[ax] = hi;
    parts[2] = e ? cm_broadcast_to(e, x->ndim, shape, s) : NULL;
    cm_release(e);
    if (!parts[2]) goto done;
  }
  r = cm_concatenate(parts + (lo ? 0 : 1), 1 + (lo != 0) + (hi != 0), ax, s);
done:
  cm_release(parts[0]);
  cm_release(parts[2]);
  return r;
}

/* Reflect / symmetric padding along ax.  Both are periodic: position j
 * (counted from x's first element, j < 0 in the low pad) reads element
 * P[j mod p] of one period P = x followed by x reversed (without its end
 * elements for reflect: period 2n-2; with them for symmetric: 2n).  So
 * the result is a window of P tiled enough times, whatever the widths. */
static cm_array *pad_reflect_axis(cm_array *x, int ax, int32_t lo, int32_t hi, bool symmetric,
                                  cm_stream s) {
  int32_t n = x->shape[ax];
  if (n == 1 && !symmetric) return pad_edge_axis(x, ax, lo, hi, s); /* period 0: all x[0] */
  int32_t start[CM_MAX_DIMS], stop[CM_MAX_DIMS], step[CM_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) {
    start[i] = 0;
    stop[i] = x->shape[i];
    step[i] = 1;
  }
  step[ax] = -1;
  int32_t reach = symmetric ? n : n - 1;
  if (lo <= reach && hi <= reach) {
    /* the usual case, widths within one mirror image: concatenate the two
     * reversed edge windows around x (one copy).  Reflect: x[lo:0:-1] and
     * x[n-2:n-2-hi:-1]; symmetric: x[lo-1::-1] and x[n-1:n-1-hi:-1]. */
    cm_array *parts[3] = {NULL, x, NULL}, *list[3];
    int np = 0;
    if (lo) {
      start[ax] = symmetric ? lo - 1 : lo;
      stop[ax] = symmetric ? -n - 1 : 0;
      if (!(parts[0] = cm_slice(x, x->ndim, start, x->ndim, stop, x->ndim, step, s))) return NULL;
    }
    if (hi) {
      start[ax] = symmetric ? n - 1 : n - 2;
      stop[ax] = start[ax] - hi;
      if (stop[ax] < 0) stop[ax] -= n; /* a negative stop counts from the end */
      if (!(parts[2] = cm_slice(x, x->ndim, start, x->ndim, stop, x->ndim, step, s))) {
        cm_release(parts[0]);
        return NULL;
      }
    }
    for (int k = 0; k < 3; k++)
      if (parts[k]) list[np++] = parts[k];
    cm_array *r = cm_concatenate(list, np, ax, s);
    cm_release(parts[0]);
    cm_release(parts[2]);
    return r;
  }
  /* reversed part: x[n-2:0:-1] (reflect) or x[n-1::-1] (symmetric) */
  start[ax] = symmetric ? n - 1 : n - 2;
  stop[ax] = symmetric ? -n - 1 : 0;
  step[ax] = -1;
  cm_array *rev = cm_slice(x, x->ndim, start, x->ndim, stop, x->ndim, step, s);
  if (!rev) return NULL;
  cm_array *pair[2] = {x, rev};
  cm_array *period = rev->shape[ax] ? cm_concatenate(pair, 2, ax, s) : cm_retain(x);
  cm_release(rev);
  if (!period) return NULL;
  int64_t p = period->shape[ax], len = (int64_t)lo + n + hi;
  int64_t first = ((-(int64_t)lo) % p + p) % p;
  int64_t copies = (first + len + p - 1) / p;
  if (copies > INT32_MAX / p) {
    cm_release(period);
    return cm_error(CM_ERR_VALUE, "[pad] The result is too large."), NULL;
  }
  int32_t reps[CM_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) reps[i] = i == ax ? (int32_t)copies : 1;
  cm_array *tiled = cm_tile(period, x->ndim, reps, s);
  cm_release(period);
  cm_array *r = tiled ? slice_axis(tiled, ax, (int32_t)first, (int32_t)(first + len), s) : NULL;
  cm_release(tiled);
  return r;
}

/* A Pad node: a inside a block of the value (0 without one), a at
 * offset lo on each axis; its window is a Slice block of the output. */
static cm_array *pad_constant(cm_array *a, const int64_t *lo, const int32_t *out_shape,
                              cm_array *pad_value, cm_stream s) {
  cm_slice_params p;
  memset(&p, 0, sizeof p);
  for (int i = 0; i < a->ndim; i++)
    if (out_shape[i] != a->shape[i])
      p.ax[p.n++] = (cm_slice_axis){.axis = i, .start = (int32_t)lo[i], .step = 1,
                                    .len = a->shape[i]};
  cm_array *r0 = pad_value ? cm_reshape(pad_value, 0, NULL, s) : cm_array_scalar_int(0, a->dtype);
  cm_array *v = r0 ? cm_astype(r0, a->dtype, s) : NULL;
  cm_array *ins[2] = {a, v};
  cm_array *r = v ? cm_op_node(a->dtype, a->ndim, out_shape, &cm_prim_pad, &p,
                               cm_slice_params_size((const cm_params *)&p), ins, 2, s)
                  : NULL;
  cm_release(r0);
  cm_release(v);
  return r;
}

cm_array *cm_pad(cm_array *a, int naxes, const int *axes, int nlow, const int32_t *low, int nhigh,
                 const int32_t *high, cm_array *pad_value, const char *mode, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (naxes != nlow || naxes != nhigh)
    return cm_error(CM_ERR_VALUE,
                    "Invalid number of padding sizes passed to pad with axes of size %d", naxes),
           NULL;
  /* per-axis totals (an axis named twice pads twice) */
  int64_t lo[CM_MAX_DIMS] = {0}, hi[CM_MAX_DIMS] = {0};
  for (int i = 0; i < naxes; i++) {
    if (low[i] < 0)
      return cm_error(CM_ERR_VALUE, "Invalid low padding size (%d) passed to pad for axis %d. "
                                    "Padding sizes must be non-negative", low[i], i),
             NULL;
    if (high[i] < 0)
      return cm_error(CM_ERR_VALUE, "Invalid high padding size (%d) passed to pad for axis %d. "
                                    "Padding sizes must be non-negative", high[i], i),
             NULL;
    int ax;
    if (cm_normalize_axis("pad", axes[i], a->ndim, &ax)) return NULL;
    lo[ax] += low[i];
    hi[ax] += high[i];
  }
  if (!mode) mode = "constant";
  bool constant = !strcmp(mode, "constant"), edge = !strcmp(mode, "edge");
  bool reflect = !strcmp(mode, "reflect"), symmetric = !strcmp(mode, "symmetric");
  if (!constant && !edge && !reflect && !symmetric)
    return cm_error(CM_ERR_VALUE, "Invalid padding mode (%s) passed to pad", mode), NULL;
  int32_t out_shape[CM_MAX_DIMS], start[CM_MAX_DIMS];
  bool any = false;
  for (int i = 0; i < a->ndim; i++) {
    if (cm_shape_dim("pad", a->shape[i] + lo[i] + hi[i], &out_shape[i])) return NULL;
    start[i] = (int32_t)lo[i];
    any |= lo[i] || hi[i];
    if ((reflect || symmetric) && a->shape[i] == 0 && (lo[i] || hi[i]))
      return cm_error(CM_ERR_VALUE, "[pad] Cannot pad empty axis %d using mode '%s'.", i, mode),
             NULL;
  }
  if (constant) {
    if (pad_value && pad_value->size != 1)
      return cm_error(CM_ERR_VALUE, "[pad] The padding value must be a scalar."), NULL;
    if (!any) return cm_retain(a);
    return pad_constant(a, lo, out_shape, pad_value, s);
  }
  /* MLX's edge mode over an empty array leaves the zeros it started from */
  if (a->size == 0) return cm_zeros(a->ndim, out_shape, a->dtype, s);
  cm_array *x = cm_retain(a);
  for (int i = 0; i < a->ndim && x; i++) {
    if (!lo[i] && !hi[i]) continue;
    cm_array *y = edge ? pad_edge_axis(x, i, start[i], (int32_t)hi[i], s)
                       : pad_reflect_axis(x, i, start[i], (int32_t)hi[i], symmetric, s);
    cm_release(x);
    x = y;
  }
  return x;
}

cm_array *cm_pad_symmetric(cm_array *a, int pad_width, cm_array *pad_value, const char *mode,
                           cm_stream s) {
  int axes[CM_MAX_DIMS];
  int32_t w[CM_MAX_DIMS];
  for (int i = 0; i < a->ndim; i++) {
    axes[i] = i;
    w[i] = pad_width;
  }
  return cm_pad(a, a->ndim, axes, a->ndim, w, a->ndim, w, pad_value, mode, s);
}

/* ---- roll ---- */

cm_array *cm_roll(cm_array *a, int nshift, const int32_t *shift, int naxes, const int *axes,
                  cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (!axes) { /* flattened, by the total shift */
    int64_t total = 0;
    for (int i = 0; i < nshift; i++) total += shift[i];
    int32_t t = (int32_t)(total % (a->size ? a->size : 1)), ax = 0;
    cm_array *f = cm_flatten(a, 0, -1, s);
    cm_array *r = f ? cm_roll(f, 1, &t, 1, &ax, s) : NULL;
    cm_release(f);
    cm_array *out = r ? cm_reshape(r, a->ndim, a->shape, s) : NULL;
    cm_release(r);
    return out;
  }
  if (naxes == 0) return cm_retain(a);
  if (nshift < naxes)
    return cm_error(CM_ERR_VALUE, "[roll] At least one shift value per axis is required, %d "
                                  "provided for %d axes.", nshift, naxes),
           NULL;
  cm_array *x = cm_retain(a);
  for (int i = 0; i < naxes && x; i++) {
    int ax = axes[i] < 0 ? axes[i] + a->ndim : axes[i];
    if (ax < 0 || ax >= a->ndim) {
      cm_release(x);
      return cm_error(CM_ERR_INDEX, "[roll] Invalid axis %d for array with %d dimensions.",
                      axes[i], a->ndim),
             NULL;
    }
    int32_t n = a->shape[ax];
    if (n == 0) continue;
    /* the last `shift` elements move to the front */
    int32_t split = (int32_t)((((int64_t)n - shift[i]) % n + n) % n);
    if (split == 0) continue;
    cm_array *parts[2] = {slice_axis(x, ax, split, n, s), slice_axis(x, ax, 0, split, s)};
    cm_array *y = parts[0] && parts[1] ? cm_concatenate(parts, 2, ax, s) : NULL;
    cm_release(parts[0]);
    cm_release(parts[1]);
    cm_release(x);
    x = y;
  }
  return x;
}

cm_array *cm_roll_axis(cm_array *a, int nshift, const int32_t *shift, int axis, cm_stream s) {
  int64_t total = 0;
  for (int i = 0; i < nshift; i++) total += shift[i];
  int ax = axis < 0 ? axis + a->ndim : axis;
  int64_t n = ax >= 0 && ax < a->ndim && a->shape[ax] ? a->shape[ax] : 1;
  int32_t t = (int32_t)(total % n);
  return cm_roll(a, 1, &t, 1, &axis, s);
}

/* ---- meshgrid ---- */

int cm_meshgrid(cm_array *const *arrays, int n, bool sparse, const char *indexing,
                cm_array **outs, cm_stream s) {
  if (cm_op_stream(&s)) return -1;
  bool xy = !indexing || !strcmp(indexing, "xy");
  if (!xy && strcmp(indexing, "ij"))
    return cm_error(CM_ERR_VALUE,
                    "[meshgrid] Invalid indexing value. Valid values are 'xy' and 'ij'.");
  if (n > CM_MAX_DIMS) return cm_error(CM_ERR_VALUE, "[meshgrid] Too many arrays (%d).", n);
  /* input i becomes a vector along axis i (axes 0 and 1 swap for xy) */
  cm_array *vs[CM_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    int32_t shape[CM_MAX_DIMS];
    for (int j = 0; j < n; j++) shape[j] = 1;
    int at = xy && n > 1 && i < 2 ? 1 - i : i;
    shape[at] = -1;
    if (!(vs[i] = cm_reshape(arrays[i], n, shape, s))) {
      for (int j = 0; j < i; j++) cm_release(vs[j]);
      return -1;
    }
  }
  if (sparse) {
    memcpy(outs, vs, sizeof(cm_array *) * (size_t)n);
    return 0;
  }
  int rc = cm_broadcast_arrays(vs, n, outs, s);
  for (int i = 0; i < n; i++) cm_release(vs[i]);
  return rc;
}
