/* Convolutions as module functions: conv1d/2d/3d, conv_transpose1d/2d/3d,
 * conv_general and convolve.  Inputs are arrays only (as in MLX).  The
 * per-axis arguments of conv2d/conv3d are an int (every axis) or a
 * sequence of exactly 2/3 ints, those of conv_general an int or any
 * sequence of ints, and its padding also a pair of such sequences (low,
 * high); anything else is nanobind's TypeError. */
#include "ops/conv.h"
#include "ops_tables.h"

#include <string.h>

#include "ops_lists.h"

/* An `axes | None = None` argument as n ints: an int fills every entry,
 * a sequence must have exactly n (n == 0: any length, its own).  dflt
 * when not given.  1: the wrong type. */
static int per_axis(const pa_value *v, int n, int dflt, int *out, int *count) {
  if (!v->given) {
    for (int i = 0; i < (n ? n : 1); i++) out[i] = dflt;
    *count = n ? n : 1;
    return 0;
  }
  if (v->none) return 1;
  bool scalar = PyLong_Check(v->obj) || (PyIndex_Check(v->obj) && !PySequence_Check(v->obj));
  if (scalar) {
    for (int i = 0; i < (n ? n : 1); i++) out[i] = v->shape[0];
    *count = n ? n : 1;
    return 0;
  }
  if (n == 1 || (n && v->ndim != n)) return 1; /* conv1d's are plain ints */
  for (int i = 0; i < v->ndim; i++) out[i] = v->shape[i];
  *count = v->ndim;
  return 0;
}

/* The spatial axes of conv1d ... conv_transpose3d: the digit in the name. */
static int spatial_of(const pycm_op *op) { return op->name[strlen(op->name) - 2] - '0'; }

static PyObject *impl_conv_nd(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  int n = spatial_of(op), st[3], pd[3], dl[3], k;
  if (per_axis(&v[2], n, 1, st, &k) || per_axis(&v[3], n, 0, pd, &k) ||
      per_axis(&v[4], n, 1, dl, &k))
    return pa_value_type_error(op, c);
  return pycm_wrap(cm_conv_nd(v[0].arr, v[1].arr, n, st, pd, dl, (int)v[5].i, pa_stream(op, c)));
}

static PyObject *impl_conv_transpose_nd(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  int n = spatial_of(op), st[3], pd[3], dl[3], op_[3], k;
  if (per_axis(&v[2], n, 1, st, &k) || per_axis(&v[3], n, 0, pd, &k) ||
      per_axis(&v[4], n, 1, dl, &k) || per_axis(&v[5], n, 0, op_, &k))
    return pa_value_type_error(op, c);
  return pycm_wrap(
      cm_conv_transpose_nd(v[0].arr, v[1].arr, n, st, pd, dl, op_, (int)v[6].i, pa_stream(op, c)));
}

/* conv_general's padding: int, Sequence[int], or a pair of them. */
typedef struct pad_arg {
  int32_t *lo, *hi; /* PyMem; hi may alias lo */
  int nlo, nhi;
  int32_t one;
} pad_arg;

static void pad_free(pad_arg *p) {
  if (p->lo != &p->one) PyMem_Free(p->lo);
  if (p->hi != p->lo && p->hi != &p->one) PyMem_Free(p->hi);
}

static int pad_parse(const pa_value *v, pad_arg *p) {
  p->lo = p->hi = &p->one;
  p->nlo = p->nhi = 1;
  p->one = 0;
  if (!v->given) return 0;
  if (v->none) return 1;
  PyObject *o = v->obj;
  if (PyLong_Check(o) || (PyIndex_Check(o) && !PySequence_Check(o))) {
    int64_t x = PyLong_AsLongLong(o);
    if (x == -1 && PyErr_Occurred()) return PyErr_Clear(), 1;
    if (x < INT32_MIN || x > INT32_MAX) return 1;
    p->one = (int32_t)x;
    return 0;
  }
  int32_t *l;
  int n, r = pa_seq_ints32(o, &l, &n);
  if (r <= 0) {
    if (r < 0) return -1;
    p->lo = p->hi = l;
    p->nlo = p->nhi = n;
    return 0;
  }
  if (!pa_is_seq(o) || PySequence_Size(o) != 2) return PyErr_Clear(), 1;
  PyObject *a = PySequence_GetItem(o, 0), *b = a ? PySequence_GetItem(o, 1) : NULL;
  int ra = b ? pa_seq_ints32(a, &p->lo, &p->nlo) : -1;
  int rb = ra == 0 ? pa_seq_ints32(b, &p->hi, &p->nhi) : 1;
  Py_XDECREF(a);
  Py_XDECREF(b);
  if (ra == 0 && rb == 0) return 0;
  if (ra == 0) PyMem_Free(p->lo);
  p->lo = p->hi = &p->one;
  return ra < 0 || rb < 0 ? -1 : 1;
}

static PyObject *impl_conv_general(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  int st[CM_MAX_DIMS], kd[CM_MAX_DIMS], id[CM_MAX_DIMS], nst, nkd, nid;
  if (per_axis(&v[2], 0, 1, st, &nst) || per_axis(&v[4], 0, 1, kd, &nkd) ||
      per_axis(&v[5], 0, 1, id, &nid))
    return pa_value_type_error(op, c);
  pad_arg p;
  int r = pad_parse(&v[3], &p);
  if (r) return r < 0 ? NULL : pa_value_type_error(op, c);
  cm_array *res =
      cm_conv_general(v[0].arr, v[1].arr, (cm_conv_list){nst, st}, (cm_conv_list){p.nlo, p.lo},
                      (cm_conv_list){p.nhi, p.hi}, (cm_conv_list){nkd, kd}, (cm_conv_list){nid, id},
                      (int)v[6].i, v[7].b, pa_stream(op, c));
  pad_free(&p);
  return pycm_wrap(res);
}

static PyObject *impl_convolve(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  const char *mode;
  if (pa_str_arg(&v[2], "full", &mode)) return pa_value_type_error(op, c);
  return pycm_wrap(cm_convolve(v[0].arr, v[1].arr, mode, pa_stream(op, c)));
}

#define AX "axes | None = None"
#define CONV_SPEC                                                                  \
  "input: array, weight: array, /, stride: " AX ", padding: " AX ", dilation: " AX \
  ", groups: int = 1, *, stream: Stream = None"
#define CONVT_SPEC                                                                 \
  "input: array, weight: array, /, stride: " AX ", padding: " AX ", dilation: " AX \
  ", output_padding: " AX ", groups: int = 1, *, stream: Stream = None"
#define T2 "int | tuple[int, int]"
#define T3 "int | tuple[int, int, int]"

pycm_op pycm_ops_conv[] = {
    PYCM_CALL("conv1d", CONV_SPEC,
              "(input: array, weight: array, /, stride: int = 1, padding: int = 0, dilation: int = "
              "1, groups: int = 1, *, stream: StreamOrDevice = None) -> array",
              impl_conv_nd),
    PYCM_CALL("conv2d", CONV_SPEC,
              "(input: array, weight: array, /, stride: " T2 " = 1, padding: " T2
              " = 0, dilation: " T2 " = 1, groups: int = 1, *, stream: StreamOrDevice = None) -> "
              "array",
              impl_conv_nd),
    PYCM_CALL("conv3d", CONV_SPEC,
              "(input: array, weight: array, /, stride: " T3 " = 1, padding: " T3
              " = 0, dilation: " T3 " = 1, groups: int = 1, *, stream: StreamOrDevice = None) -> "
              "array",
              impl_conv_nd),
    PYCM_CALL("conv_transpose1d", CONVT_SPEC,
              "(input: array, weight: array, /, stride: int = 1, padding: int = 0, dilation: int = "
              "1, output_padding: int = 0, groups: int = 1, *, stream: StreamOrDevice = None) -> "
              "array",
              impl_conv_transpose_nd),
    PYCM_CALL("conv_transpose2d", CONVT_SPEC,
              "(input: array, weight: array, /, stride: " T2 " = 1, padding: " T2
              " = 0, dilation: " T2 " = 1, output_padding: " T2
              " = 0, groups: int = 1, *, stream: StreamOrDevice = None) -> array",
              impl_conv_transpose_nd),
    PYCM_CALL("conv_transpose3d", CONVT_SPEC,
              "(input: array, weight: array, /, stride: " T3 " = 1, padding: " T3
              " = 0, dilation: " T3 " = 1, output_padding: " T3
              " = 0, groups: int = 1, *, stream: StreamOrDevice = None) -> array",
              impl_conv_transpose_nd),
    PYCM_CALL("conv_general",
              "input: array, weight: array, /, stride: " AX ", padding: object | None = None, "
              "kernel_dilation: " AX ", input_dilation: " AX
              ", groups: int = 1, flip: bool = False, *, stream: Stream = None",
              "(input: array, weight: array, /, stride: int | Sequence[int] = 1, padding: int | "
              "Sequence[int] | tuple[Sequence[int], Sequence[int]] = 0, kernel_dilation: int | "
              "Sequence[int] = 1, input_dilation: int | Sequence[int] = 1, groups: int = 1, flip: "
              "bool = False, *, stream: StreamOrDevice = None) -> array",
              impl_conv_general),
    PYCM_CALL("convolve",
              "a: array, v: array, /, mode: object | None = None, *, stream: Stream = None",
              "(a: array, v: array, /, mode: str = \"full\", *, stream: StreamOrDevice = None) -> "
              "array",
              impl_convolve),
};
const int pycm_ops_conv_count = sizeof pycm_ops_conv / sizeof pycm_ops_conv[0];
