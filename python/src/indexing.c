/* array.__getitem__ / __setitem__ and the index translation behind
 * array.at (indexing_at.c).
 *
 * An index is parsed into entries (int, slice, None, Ellipsis, integer
 * array; lists, tuples inside a tuple and NumPy arrays become arrays) and
 * laid out with NumPy's rules: ints and arrays are "advanced" when at least
 * one array is present, their broadcast shape B replaces them in place when
 * they are adjacent and goes first otherwise.
 *
 * Reading: without arrays the result is a view (slice + reshape); with
 * arrays it is one Gather over the sliced view.  Writing: without arrays a
 * SliceUpdate; with arrays one Scatter whose index arrays cover every
 * indexed axis (slices become aranges) and whose window spans the trailing
 * untouched axes.  A boolean mask (bool array, NumPy bool array, Python
 * bool, list of bools) is accepted for writing only, as in MLX.
 *
 * Deliberate differences from MLX (which does no bounds checking and reads
 * or writes out of bounds): a Python int out of range raises IndexError as
 * in NumPy; a slice step of 0 raises ValueError (MLX crashes); array
 * indices follow the kernels' rule (clamped reads, dropped writes, or
 * IndexError under CMLX_CHECK_INDICES=1); NumPy integer arrays are
 * accepted as indices; the value of an assignment broadcasts to NumPy's
 * target shape for every index form. */
#include "cmlx_py.h"
#include "init.h"

#include <string.h>

#include "ops/indexing.h"

#define IX_MAX (3 * CM_MAX_DIMS)

typedef enum { IX_INT, IX_SLICE, IX_NONE, IX_ELLIPSIS, IX_ARRAY } ix_kind;

typedef struct ix_entry {
  ix_kind kind;
  int axis;                  /* the axis of a it indexes (not for None) */
  int64_t i;                 /* IX_INT, normalised */
  Py_ssize_t start, step, len; /* IX_SLICE, normalised */
  cm_array *arr;             /* IX_ARRAY (owned) */
} ix_entry;

typedef struct ix_list {
  int n;
  ix_entry e[IX_MAX];
  int nadv;      /* int and array entries, when any array is present */
  bool has_array;
  bool adjacent; /* the advanced entries are next to each other */
  int first_adv; /* entry index of the first advanced entry */
} ix_list;

static void ix_free(ix_list *L) {
  for (int i = 0; i < L->n; i++) cm_release(L->e[i].arr);
  L->n = 0;
}

static int index_type_error(void) {
  PyErr_SetString(PyExc_ValueError, "Cannot index mlx array using the given type.");
  return -1;
}

static bool is_int_like(PyObject *o) {
  return !PyBool_Check(o) && !PyCmArray_Check(o) && !PyFloat_Check(o) && PyIndex_Check(o);
}

/* Objects taken as an index array: lists, tuples (inside a tuple key),
 * NumPy arrays and other buffer / DLPack exporters. */
static bool is_array_like(PyObject *o) {
  if (PyList_Check(o) || PyTuple_Check(o)) return true;
  if (PyUnicode_Check(o) || PyBytes_Check(o) || PyByteArray_Check(o)) return false;
  if (PyObject_CheckBuffer(o)) return true;
  return PyObject_HasAttrString(o, "__array__") || PyObject_HasAttrString(o, "__dlpack__");
}

/* MLX converts every integer of an index (an int, a slice's start, stop
 * and step) to int32 and refuses the others, whatever the axis' size. */
static int index_range_error(void) {
  PyErr_SetString(PyExc_ValueError, "Slice indices must be 32-bit integers.");
  return -1;
}

/* An int-like object (int, NumPy integer scalar, 0-d integer array) as an
 * int32: 0; 1 when it does not convert to an integer (a NumPy array of
 * several elements: an index array), no error left set; -1 with an
 * error. */
static int int32_index(PyObject *o, int64_t *out) {
  PyObject *i = PyNumber_Index(o);
  if (!i) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) return -1;
    PyErr_Clear();
    return 1;
  }
  int overflow;
  long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
  Py_DECREF(i);
  if (v == -1 && PyErr_Occurred()) return -1;
  if (overflow || v < INT32_MIN || v > INT32_MAX) return index_range_error();
  *out = v;
  return 0;
}

/* One element of a key into e (kind and raw payload). */
static int parse_one(PyObject *o, ix_entry *e, bool *saw_ellipsis) {
  int r;
  int64_t iv;
  memset(e, 0, sizeof *e);
  if (o == Py_None) {
    e->kind = IX_NONE;
  } else if (o == Py_Ellipsis) {
    if (*saw_ellipsis) {
      PyErr_SetString(PyExc_ValueError, "An index can only have a single ellipsis (...)");
      return -1;
    }
    *saw_ellipsis = true;
    e->kind = IX_ELLIPSIS;
  } else if (PySlice_Check(o)) {
    PySliceObject *sl = (PySliceObject *)o;
    PyObject *parts[3] = {sl->start, sl->stop, sl->step};
    for (int k = 0; k < 3; k++)
      if (parts[k] != Py_None && !is_int_like(parts[k])) {
        PyErr_SetString(PyExc_ValueError, "Slice indices must be integers or None.");
        return -1;
      }
    for (int k = 0; k < 3; k++) {
      int64_t v;
      if (parts[k] != Py_None && int32_index(parts[k], &v)) {
        if (!PyErr_Occurred()) index_range_error();
        return -1;
      }
    }
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(o, &start, &stop, &step) < 0) return -1;
    e->kind = IX_SLICE;
    e->start = start;
    e->len = stop; /* adjusted per axis later */
    e->step = step;
  } else if (is_int_like(o) && !PyList_Check(o) && !PyTuple_Check(o) &&
             (r = int32_index(o, &iv)) <= 0) {
    if (r < 0) return -1;
    e->kind = IX_INT;
    e->i = iv;
  } else if (PyCmArray_Check(o) || is_array_like(o)) {
    cm_array *x = pycm_to_array(o, -1);
    if (!x) return -1;
    if (x->dtype == CM_BOOL) {
      cm_release(x);
      PyErr_SetString(PyExc_ValueError, "boolean indices are not yet supported");
      return -1;
    }
    e->kind = IX_ARRAY;
    e->arr = x;
  } else {
    return index_type_error();
  }
  return 0;
}

/* Parse key against a: expand the ellipsis, append full slices for the
 * remaining axes, normalise ints and slices, classify. */
static int ix_parse(PyObject *key, const cm_array *a, ix_list *L) {
  memset(L, 0, sizeof *L);
  bool saw = false;
  ix_entry raw[IX_MAX];
  int nraw = 0;
  Py_ssize_t nk = PyTuple_Check(key) ? PyTuple_GET_SIZE(key) : 1;
  if (nk >= IX_MAX - CM_MAX_DIMS) { /* room for the ellipsis' expansion */
    PyErr_Format(PyExc_ValueError, "Too many indices for array with %d dimensions.", a->ndim);
    return -1;
  }
  for (Py_ssize_t k = 0; k < nk; k++) {
    PyObject *o = PyTuple_Check(key) ? PyTuple_GET_ITEM(key, k) : key;
    if (parse_one(o, &raw[nraw], &saw)) {
      for (int j = 0; j < nraw; j++) cm_release(raw[j].arr);
      return -1;
    }
    nraw++;
  }
  int used = 0;
  for (int j = 0; j < nraw; j++) used += raw[j].kind != IX_NONE && raw[j].kind != IX_ELLIPSIS;
  if (used > a->ndim) {
    for (int j = 0; j < nraw; j++) cm_release(raw[j].arr);
    if (a->ndim == 0)
      PyErr_SetString(PyExc_ValueError, "too many indices for array: array is 0-dimensional");
    else
      PyErr_Format(PyExc_ValueError, "Too many indices for array with %d dimensions.", a->ndim);
    return -1;
  }
  /* expand: the ellipsis (or the end) takes the unindexed axes */
  int fill = a->ndim - used;
  if (!saw) raw[nraw++] = (ix_entry){.kind = IX_ELLIPSIS};
  for (int j = 0; j < nraw; j++) {
    if (raw[j].kind != IX_ELLIPSIS) {
      L->e[L->n++] = raw[j];
      continue;
    }
    for (int f = 0; f < fill; f++)
      L->e[L->n++] = (ix_entry){.kind = IX_SLICE, .start = 0, .len = PY_SSIZE_T_MAX, .step = 1};
  }
  /* normalise against the axes */
  int axis = 0;
  for (int j = 0; j < L->n; j++) {
    ix_entry *e = &L->e[j];
    if (e->kind == IX_NONE) continue;
    e->axis = axis++;
    Py_ssize_t n = a->shape[e->axis];
    if (e->kind == IX_INT) {
      int64_t v = e->i < 0 ? e->i + n : e->i;
      if (v < 0 || v >= n) {
        PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for axis %d with size %zd",
                     (long long)e->i, e->axis, n);
        ix_free(L);
        return -1;
      }
      e->i = v;
    } else if (e->kind == IX_SLICE) {
      Py_ssize_t start = e->start, stop = e->len;
      e->len = PySlice_AdjustIndices(n, &start, &stop, e->step);
      e->start = e->len ? start : 0;
    } else {
      L->has_array = true;
    }
  }
  if (L->has_array) {
    int last = -1;
    L->first_adv = -1;
    L->adjacent = true;
    for (int j = 0; j < L->n; j++) {
      ix_kind k = L->e[j].kind;
      if (k != IX_INT && k != IX_ARRAY) continue;
      if (L->first_adv < 0) L->first_adv = j;
      else if (last != j - 1) L->adjacent = false;
      last = j;
      L->nadv++;
    }
  }
  return 0;
}

static bool full_slice(const ix_entry *e, const cm_array *a) {
  return e->kind == IX_SLICE && e->start == 0 && e->step == 1 && e->len == a->shape[e->axis];
}

/* start/stop/step lists for cm_slice: slices as parsed, ints as [i, i+1),
 * arrays (and, with keep_adv, ints) whole. */
static void slice_params(const ix_list *L, const cm_array *a, bool keep_adv, int32_t *start,
                         int32_t *stop, int32_t *step) {
  for (int d = 0; d < a->ndim; d++) {
    start[d] = 0;
    stop[d] = a->shape[d];
    step[d] = 1;
  }
  for (int j = 0; j < L->n; j++) {
    const ix_entry *e = &L->e[j];
    int d = e->axis;
    if (e->kind == IX_SLICE) {
      int64_t end = (int64_t)e->start + (int64_t)e->len * e->step;
      /* cm_slice reads a negative stop from the end: say "before 0" as
       * -n - 1, which it maps back to -1; a stop past the end is the end.
       * Neither changes the length, and both fit int32 whatever the step
       * (a step of -2^31 takes end far below 0). */
      if (end < 0) end = -(int64_t)a->shape[d] - 1;
      else if (end > a->shape[d]) end = a->shape[d];
      start[d] = (int32_t)e->start;
      stop[d] = (int32_t)end;
      step[d] = (int32_t)e->step;
    } else if (e->kind == IX_INT && !keep_adv) {
      start[d] = (int32_t)e->i;
      stop[d] = (int32_t)e->i + 1;
    }
  }
}

/* The shape a[key] has (NumPy's rule); B is the advanced entries'
 * broadcast shape (unused without arrays). */
static int target_shape(const ix_list *L, int nb, const int32_t *B, int *nt, int32_t *T) {
  int k = 0;
  for (int j = -1; j < L->n; j++) {
    /* j == -1: the front, where separated advanced entries go */
    bool group = L->has_array && (j < 0 ? !L->adjacent : L->adjacent && j == L->first_adv);
    ix_kind kind = j < 0 ? IX_ELLIPSIS : L->e[j].kind;
    int add = group ? nb : kind == IX_NONE || kind == IX_SLICE;
    if (k + add > CM_MAX_DIMS) {
      PyErr_Format(PyExc_ValueError, "[index] The result would have more than %d dimensions.",
                   CM_MAX_DIMS);
      return -1;
    }
    if (group)
      for (int i = 0; i < nb; i++) T[k++] = B[i];
    else if (kind == IX_NONE) T[k++] = 1;
    else if (kind == IX_SLICE) T[k++] = (int32_t)L->e[j].len;
  }
  *nt = k;
  return 0;
}

/* Where target_shape puts the None entries' axes: their count, positions
 * in pos. */
static int none_axes(const ix_list *L, int nb, int *pos) {
  int k = 0, n = 0;
  for (int j = -1; j < L->n; j++) {
    bool group = L->has_array && (j < 0 ? !L->adjacent : L->adjacent && j == L->first_adv);
    ix_kind kind = j < 0 ? IX_ELLIPSIS : L->e[j].kind;
    if (group) k += nb;
    else if (kind == IX_NONE) pos[n++] = k++;
    else if (kind == IX_SLICE) k++;
  }
  return n;
}

/* The broadcast shape of the advanced entries. */
static int adv_shape(const ix_list *L, int *nb, int32_t *B) {
  *nb = 0;
  for (int j = 0; j < L->n; j++)
    if (L->e[j].kind == IX_ARRAY &&
        cm_broadcast_shapes(*nb, B, L->e[j].arr->ndim, L->e[j].arr->shape, nb, B)) {
      pycm_raise();
      return -1;
    }
  return 0;
}

/* 0-d int32 arrays for the int entries (the advanced ones). */
static cm_array *int_index(const ix_entry *e) { return cm_array_scalar_int(e->i, CM_INT32); }

/* ---- reading ---- */

/* v (a sliced, every axis kept) with the int entries' axes squeezed out
 * and the None entries' axes inserted.  Squeeze and ExpandDims, not a
 * Reshape to the traced shape, as MLX does: in a shapeless compile the
 * replay infers their shapes from the new inputs, where a Reshape would
 * keep the first call's shape (x[..., None] of a longer x then fails). */
static cm_array *drop_and_add_axes(cm_array *v, const ix_list *L) {
  int drop[CM_MAX_DIMS], add[CM_MAX_DIMS], nd = 0, na = 0, k = 0;
  for (int j = 0; j < L->n; j++) {
    ix_kind kind = L->e[j].kind;
    if (kind == IX_INT) drop[nd++] = L->e[j].axis;
    else if (kind == IX_NONE) add[na++] = k++;
    else k++;
  }
  cm_array *r = nd ? cm_squeeze(v, nd, drop, CM_STREAM_DEFAULT) : cm_retain(v);
  cm_release(v);
  if (r && na) {
    cm_array *t = cm_expand_dims(r, na, add, CM_STREAM_DEFAULT);
    cm_release(r);
    r = t;
  }
  return r;
}

static cm_array *get_basic(cm_array *a, const ix_list *L) {
  int32_t start[CM_MAX_DIMS], stop[CM_MAX_DIMS], step[CM_MAX_DIMS], T[CM_MAX_DIMS];
  int nt;
  if (target_shape(L, 0, NULL, &nt, T)) return NULL;
  slice_params(L, a, false, start, stop, step);
  cm_array *v = cm_slice(a, a->ndim, start, a->ndim, stop, a->ndim, step, CM_STREAM_DEFAULT);
  if (!v) return NULL;
  bool same = v->ndim == nt && !memcmp(v->shape, T, sizeof(int32_t) * (size_t)nt);
  if (same) return v;
  return drop_and_add_axes(v, L);
}

static cm_array *get_advanced(cm_array *a, const ix_list *L) {
  int nb, nt;
  int32_t B[CM_MAX_DIMS], T[CM_MAX_DIMS];
  if (adv_shape(L, &nb, B) || target_shape(L, nb, B, &nt, T)) return NULL;
  int64_t bsize = cm_shape_size(nb, B);
  int32_t start[CM_MAX_DIMS], stop[CM_MAX_DIMS], step[CM_MAX_DIMS];
  slice_params(L, a, true, start, stop, step);
  cm_array *v = cm_slice(a, a->ndim, start, a->ndim, stop, a->ndim, step, CM_STREAM_DEFAULT);
  if (!v) return NULL;
  cm_array *idx[CM_MAX_DIMS];
  int axes[CM_MAX_DIMS], n = 0, rc = 0;
  int32_t sizes[CM_MAX_DIMS];
  memcpy(sizes, v->shape, sizeof(int32_t) * (size_t)v->ndim);
  for (int j = 0; j < L->n && !rc; j++) {
    const ix_entry *e = &L->e[j];
    if (e->kind != IX_INT && e->kind != IX_ARRAY) continue;
    idx[n] = e->kind == IX_ARRAY ? cm_retain(e->arr) : int_index(e);
    if (!idx[n]) rc = -1;
    axes[n++] = e->axis;
    sizes[e->axis] = bsize > 0 ? 1 : 0;
  }
  cm_array *g = rc ? NULL : cm_gather(v, idx, n, axes, n, sizes, v->ndim, CM_STREAM_DEFAULT);
  for (int i = 0; i < n; i++) cm_release(idx[i]);
  cm_release(v);
  if (!g) return NULL;
  /* g: B + v's axes (advanced ones of length 1): drop those, then move B
   * to its NumPy place and add the None axes */
  int32_t shape[CM_MAX_DIMS];
  int k = 0;
  for (int i = 0; i < nb; i++) shape[k++] = B[i];
  int nslices = 0;
  for (int j = 0; j < L->n; j++)
    if (L->e[j].kind == IX_SLICE) shape[k++] = (int32_t)L->e[j].len, nslices++;
  cm_array *r = cm_reshape(g, k, shape, CM_STREAM_DEFAULT);
  cm_release(g);
  if (!r) return NULL;
  if (L->adjacent) {
    int before = 0; /* slices before the advanced group */
    for (int j = 0; j < L->first_adv; j++) before += L->e[j].kind == IX_SLICE;
    if (before) {
      int perm[CM_MAX_DIMS], p = 0;
      for (int i = 0; i < before; i++) perm[p++] = nb + i;
      for (int i = 0; i < nb; i++) perm[p++] = i;
      for (int i = nb + before; i < nb + nslices; i++) perm[p++] = i;
      cm_array *t = cm_transpose(r, p, perm, CM_STREAM_DEFAULT);
      cm_release(r);
      if (!(r = t)) return NULL;
    }
  }
  if (r->ndim != nt) { /* None axes: ExpandDims, shapeless-safe (drop_and_add_axes) */
    int pos[CM_MAX_DIMS];
    cm_array *t = cm_expand_dims(r, none_axes(L, nb, pos), pos, CM_STREAM_DEFAULT);
    cm_release(r);
    r = t;
  }
  return r;
}

static PyObject *pycm_array_getitem(PyObject *self, PyObject *key) {
  cm_array *a = ((PyCmArray *)self)->arr;
  if (PyBool_Check(key)) return index_type_error(), NULL;
  ix_list *L = PyMem_Malloc(sizeof *L);
  if (!L) return PyErr_NoMemory();
  PyObject *res = NULL;
  if (ix_parse(key, a, L) == 0) {
    cm_array *r = L->has_array ? get_advanced(a, L) : get_basic(a, L);
    res = r ? pycm_wrap(r) : (PyErr_Occurred() ? NULL : pycm_raise());
    ix_free(L);
  }
  PyMem_Free(L);
  return res;
}

/* ---- writing ---- */

/* value broadcast to T (NumPy's target shape), after dropping leading
 * length-1 axes it has beyond T's rank (MLX drops them too). */
static cm_array *fit_value(cm_array *v, int nt, const int32_t *T) {
  int drop = 0, nb;
  while (v->ndim - drop > nt && v->shape[drop] == 1) drop++;
  int32_t b[CM_MAX_DIMS];
  if (v->ndim - drop <= nt && cm_broadcast_shapes(v->ndim - drop, v->shape + drop, nt, T, &nb, b))
    return pycm_raise(), NULL; /* MLX's "[broadcast_shapes] Shapes ... cannot be broadcast." */
  if (v->ndim - drop > nt || memcmp(b, T, sizeof(int32_t) * (size_t)nt)) {
    char b1[256], b2[256];
    PyErr_Format(PyExc_ValueError, "Cannot broadcast array of shape %s into shape %s.",
                 cm_shape_str(b1, sizeof b1, v->ndim, v->shape),
                 cm_shape_str(b2, sizeof b2, nt, T));
    return NULL;
  }
  cm_array *x =
      drop ? cm_reshape(v, v->ndim - drop, v->shape + drop, CM_STREAM_DEFAULT) : cm_retain(v);
  cm_array *r = x ? cm_broadcast_to(x, nt, T, CM_STREAM_DEFAULT) : NULL;
  cm_release(x);
  return r;
}

static cm_array *set_basic(cm_array *a, const ix_list *L, cm_array *value, cm_scatter_op op) {
  int32_t T[CM_MAX_DIMS], W[CM_MAX_DIMS], start[CM_MAX_DIMS], stop[CM_MAX_DIMS], step[CM_MAX_DIMS];
  int nt;
  if (target_shape(L, 0, NULL, &nt, T)) return NULL;
  cm_array *u = fit_value(value, nt, T);
  if (!u) return NULL;
  for (int j = 0; j < L->n; j++) {
    const ix_entry *e = &L->e[j];
    if (e->kind == IX_SLICE) W[e->axis] = (int32_t)e->len;
    else if (e->kind == IX_INT) W[e->axis] = 1;
  }
  cm_array *uw = cm_reshape(u, a->ndim, W, CM_STREAM_DEFAULT);
  cm_release(u);
  if (!uw) return NULL;
  slice_params(L, a, false, start, stop, step);
  cm_array *r = cm_slice_update_reduce(a, uw, a->ndim, start, a->ndim, stop, a->ndim, step, op,
                                       CM_STREAM_DEFAULT);
  cm_release(uw);
  return r;
}

/* Scatter: every entry before the trailing run of whole slices becomes
 * an index array shaped to broadcast to T' (T without that run). */
static cm_array *set_advanced(cm_array *a, const ix_list *L, cm_array *value, cm_scatter_op op) {
  int nb, nt;
  int32_t B[CM_MAX_DIMS], T[CM_MAX_DIMS];
  if (adv_shape(L, &nb, B) || target_shape(L, nb, B, &nt, T)) return NULL;
  /* the trailing window: whole slices after the last advanced entry */
  int last = L->n - 1, nwin = 0;
  while (last >= 0 && full_slice(&L->e[last], a)) last--, nwin++;
  int ntp = nt - nwin; /* rank of T' */
  /* where each entry's dims sit in T' */
  int pos[IX_MAX], k = (L->adjacent ? 0 : nb), bpos = L->adjacent ? -1 : 0;
  for (int j = 0; j <= last; j++) {
    ix_kind kind = L->e[j].kind;
    if (kind == IX_INT || kind == IX_ARRAY) {
      if (bpos < 0) bpos = k, k += nb;
      continue;
    }
    pos[j] = k++;
  }
  cm_array *adv[CM_MAX_DIMS], *bc[CM_MAX_DIMS], *idx[CM_MAX_DIMS];
  int axes[CM_MAX_DIMS], na = 0, n = 0, rc = 0;
  for (int j = 0; j <= last && !rc; j++) {
    const ix_entry *e = &L->e[j];
    if (e->kind == IX_INT || e->kind == IX_ARRAY) {
      adv[na] = e->kind == IX_ARRAY ? cm_retain(e->arr) : int_index(e);
      if (!adv[na]) rc = -1;
      else na++;
    }
  }
  bool have_bc = !rc && cm_broadcast_arrays(adv, na, bc, CM_STREAM_DEFAULT) == 0;
  if (!have_bc) rc = -1;
  for (int i = 0; i < na; i++) cm_release(adv[i]);
  int b = 0;
  for (int j = 0; j <= last && !rc; j++) {
    const ix_entry *e = &L->e[j];
    int32_t shape[CM_MAX_DIMS];
    for (int d = 0; d < ntp; d++) shape[d] = 1;
    cm_array *x = NULL;
    if (e->kind == IX_NONE) continue;
    if (e->kind == IX_SLICE) {
      shape[pos[j]] = (int32_t)e->len;
      cm_array *r = cm_arange((double)e->start, (double)(e->start + e->len * e->step),
                              (double)e->step, CM_INT32, CM_STREAM_DEFAULT);
      x = r ? cm_reshape(r, ntp, shape, CM_STREAM_DEFAULT) : NULL;
      cm_release(r);
    } else {
      for (int d = 0; d < nb; d++) shape[bpos + d] = B[d];
      x = cm_reshape(bc[b++], ntp, shape, CM_STREAM_DEFAULT);
    }
    if (!x) rc = -1;
    else idx[n] = x, axes[n++] = e->axis;
  }
  for (int i = 0; have_bc && i < na; i++) cm_release(bc[i]);
  cm_array *r = NULL, *u = rc ? NULL : fit_value(value, nt, T);
  if (u) {
    /* updates: T' + (1 per indexed axis) + the window's axes */
    int32_t us[CM_MAX_DIMS];
    int m = 0;
    cm_array *up = NULL;
    if (ntp + a->ndim > CM_MAX_DIMS) {
      PyErr_Format(PyExc_ValueError, "[index] The update would have more than %d dimensions.",
                   CM_MAX_DIMS);
    } else {
      for (int d = 0; d < ntp; d++) us[m++] = T[d];
      for (int d = 0; d < a->ndim; d++) us[m++] = d < a->ndim - nwin ? 1 : a->shape[d];
      up = cm_reshape(u, m, us, CM_STREAM_DEFAULT);
    }
    r = up ? cm_scatter(a, idx, n, up, axes, n, op, CM_STREAM_DEFAULT) : NULL;
    cm_release(up);
  }
  cm_release(u);
  for (int i = 0; i < n; i++) cm_release(idx[i]);
  return r;
}

/* A boolean mask key: a bool array (MLX or NumPy), a Python bool or a
 * (nested) list of bools.  1 with *mask set, 0 if key is no mask, -1. */
static int mask_key(PyObject *key, cm_array **mask) {
  *mask = NULL;
  if (PyBool_Check(key)) {
    *mask = cm_array_scalar_int(key == Py_True, CM_BOOL);
    return *mask ? 1 : (pycm_raise(), -1);
  }
  if (PyTuple_Check(key) || !(PyCmArray_Check(key) || is_array_like(key))) return 0;
  if (PyCmArray_Check(key) && ((PyCmArray *)key)->arr->dtype != CM_BOOL) return 0;
  cm_array *x = pycm_to_array(key, -1);
  if (!x) return -1;
  if (x->dtype != CM_BOOL) {
    cm_release(x);
    return 0;
  }
  *mask = x;
  return 1;
}

cm_array *pycm_index_update(cm_array *a, PyObject *key, cm_array *value, cm_scatter_op op) {
  cm_array *v = cm_astype(value, a->dtype, CM_STREAM_DEFAULT);
  if (!v) return pycm_raise(), NULL;
  cm_array *mask, *r = NULL;
  int m = mask_key(key, &mask);
  if (m > 0) {
    if (op != CM_SCATTER_NONE)
      PyErr_SetString(PyExc_ValueError, "boolean indices are not yet supported");
    else r = cm_masked_scatter(a, mask, v, CM_STREAM_DEFAULT);
    cm_release(mask);
  } else if (m == 0) {
    ix_list *L = PyMem_Malloc(sizeof *L);
    if (!L) PyErr_NoMemory();
    else if (ix_parse(key, a, L) == 0) {
      r = L->has_array ? set_advanced(a, L, v, op) : set_basic(a, L, v, op);
      ix_free(L);
    }
    PyMem_Free(L);
  }
  cm_release(v);
  if (!r && !PyErr_Occurred()) pycm_raise();
  return r;
}

static int pycm_array_setitem(PyObject *self, PyObject *key, PyObject *value) {
  if (!value) {
    PyErr_SetString(PyExc_TypeError, "cannot delete array elements");
    return -1;
  }
  PyCmArray *o = (PyCmArray *)self;
  cm_array *v = pycm_to_array_weak(value, o->arr);
  if (!v) return -1;
  cm_array *r = pycm_index_update(o->arr, key, v, CM_SCATTER_NONE);
  cm_release(v);
  if (!r) return -1;
  /* MLX rebinds the array object to the result: every name bound to this
   * object sees the update; views and copies taken before do not. */
  cm_release(o->arr);
  o->arr = r;
  return 0;
}

PyMappingMethods pycm_array_mapping_methods = {
    .mp_subscript = pycm_array_getitem,
    .mp_ass_subscript = pycm_array_setitem,
};
