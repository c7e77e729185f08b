/* Python values to arrays and back: scalars, nested lists/tuples (MLX's
 * shape and type inference, messages included), other arrays, buffer and
 * DLPack objects (array_buffer.c), weak scalars for binary ops, and
 * item()/tolist(). */
#include "cmlx_py.h"

#include "ops/shape.h"

#include <stdlib.h>
#include <string.h>

/* Python scalar kinds in MLX's inference order: a list's type is the
 * largest of its elements' (bool < int < float < complex). */
typedef enum { PK_BOOL = 0, PK_INT = 1, PK_FLOAT = 2, PK_COMPLEX = 3 } pykind;

static int scalar_kind(PyObject *o) {
  if (PyBool_Check(o)) return PK_BOOL;
  if (PyLong_Check(o)) return PK_INT;
  if (PyFloat_Check(o)) return PK_FLOAT;
  if (PyComplex_Check(o)) return PK_COMPLEX;
  return -1;
}

/* A type's name as MLX's messages print it (nanobind's rule): a static
 * type by its name alone ("numpy.int64" -> "int64", "OrderedDict"), a heap
 * type (a class written in Python) as module.name ("__main__.F",
 * "fractions.Fraction").  The result lives in a small per-thread ring of
 * buffers, enough for the two names one message prints. */
const char *pycm_short_type_name(PyObject *o) {
  PyTypeObject *t = Py_TYPE(o);
  const char *n = t->tp_name;
  const char *dot = strrchr(n, '.');
  if (dot) n = dot + 1;
  if (!(t->tp_flags & Py_TPFLAGS_HEAPTYPE)) return n;
  static _Thread_local char ring[4][160];
  static _Thread_local int next;
  char *buf = ring[next++ & 3];
  PyObject *mod = PyObject_GetAttrString((PyObject *)t, "__module__");
  const char *m = mod && PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : NULL;
  if (m && strcmp(m, "builtins")) snprintf(buf, sizeof ring[0], "%s.%s", m, n);
  else snprintf(buf, sizeof ring[0], "%s", n);
  Py_XDECREF(mod);
  PyErr_Clear(); /* a type without a usable __module__ is shown by name */
  return buf;
}

static bool has_attr(PyObject *o, const char *name);
static int invalid_type(PyObject *o);

bool pycm_complex_like(PyObject *o, Py_complex *out) {
  PyTypeObject *t = Py_TYPE(o);
  bool slots = t->tp_as_number && (t->tp_as_number->nb_float || t->tp_as_number->nb_index);
  if (!slots) {
    PyObject *m = PyObject_GetAttrString(o, "__complex__");
    if (!m) {
      PyErr_Clear();
      return false;
    }
    Py_DECREF(m);
  }
  Py_complex c = PyComplex_AsCComplex(o);
  if (c.real == -1.0 && PyErr_Occurred()) {
    PyErr_Clear(); /* MLX: not an operand ("Cannot perform ...") */
    return false;
  }
  if (out) *out = c;
  return true;
}

/* A complex-like object as the complex64 scalar MLX makes of it. */
static cm_array *complex_like_to_array(PyObject *o, int dtype) {
  Py_complex c;
  if (!pycm_complex_like(o, &c)) return invalid_type(o), NULL;
  cm_complex64 v = {(float)c.real, (float)c.imag};
  cm_array *a = cm_array_scalar(&v, CM_COMPLEX64, CM_COMPLEX64);
  if (!a) return pycm_raise(), NULL;
  if (dtype < 0 || dtype == CM_COMPLEX64) return a;
  cm_array *r = cm_astype(a, (cm_dtype)dtype, CM_STREAM_DEFAULT);
  cm_release(a);
  return r ? r : (pycm_raise(), NULL);
}


static int invalid_type(PyObject *o) {
  PyErr_Format(PyExc_ValueError, "Invalid type %s received in array initialization.",
               pycm_short_type_name(o));
  return -1;
}

/* Python ints must fit int64.  MLX fails the same values with a C++
 * bad_cast (a RuntimeError); cmlx says what is wrong, as an OverflowError. */
static int py_int64(PyObject *o, int64_t *out) {
  int overflow;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow) {
    PyErr_Format(PyExc_OverflowError, "[array] Python int %R does not fit in int64.", o);
    return -1;
  }
  if (v == -1 && PyErr_Occurred()) return -1;
  *out = v;
  return 0;
}

static bool fits_int32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

static cm_array *checked(cm_array *a) {
  if (!a) pycm_raise();
  return a;
}

/* ---- scalars ------------------------------------------------------------- */

static cm_array *scalar_to_array(PyObject *o, int kind, int dtype) {
  switch (kind) {
  case PK_BOOL: {
    bool b = o == Py_True;
    return checked(cm_array_scalar(&b, CM_BOOL, dtype >= 0 ? (cm_dtype)dtype : CM_BOOL));
  }
  case PK_INT: {
    int64_t v;
    if (py_int64(o, &v)) return NULL;
    cm_dtype d = dtype >= 0 ? (cm_dtype)dtype : fits_int32(v) ? CM_INT32 : CM_INT64;
    return checked(cm_array_scalar(&v, CM_INT64, d));
  }
  case PK_FLOAT: {
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) return NULL;
    /* MLX converts a float for an integer or float64 dtype from the double
     * (4294967301.0 stays exact in int64), for the other floats through
     * float32 */
    if (dtype == CM_FLOAT64 || (dtype >= 0 && !cm_dtype_is_inexact((cm_dtype)dtype)))
      return checked(cm_array_scalar(&v, CM_FLOAT64, (cm_dtype)dtype));
    float f = (float)v;
    return checked(cm_array_scalar(&f, CM_FLOAT32, dtype >= 0 ? (cm_dtype)dtype : CM_FLOAT32));
  }
  default: {
    Py_complex c = PyComplex_AsCComplex(o);
    if (c.real == -1.0 && PyErr_Occurred()) return NULL;
    cm_complex64 z = {(float)c.real, (float)c.imag};
    return checked(cm_array_scalar(&z, CM_COMPLEX64, dtype >= 0 ? (cm_dtype)dtype : CM_COMPLEX64));
  }
  }
}

/* ---- nested lists -------------------------------------------------------- */

typedef struct {
  int ndim;
  int32_t shape[CM_MAX_DIMS];
  int kind;          /* pykind of the whole list */
  bool all_scalars;  /* no arrays inside */
  bool wide_int;     /* an int outside int32's range */
} list_info;

/* The shape follows the first element at each level, as MLX does. */
static int list_shape(PyObject *o, list_info *li) {
  for (;;) {
    if (li->ndim >= CM_MAX_DIMS) {
      PyErr_Format(PyExc_ValueError, "[array] Arrays may have at most %d dimensions.", CM_MAX_DIMS);
      return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    if (cm_shape_dim(NULL, n, &li->shape[li->ndim])) return pycm_raise(), -1;
    li->ndim++;
    if (n == 0) return 0;
    PyObject *first = PySequence_Fast_ITEMS(o)[0];
    if (PyList_Check(first) || PyTuple_Check(first)) {
      o = first;
      continue;
    }
    if (PyCmArray_Check(first)) {
      cm_array *a = ((PyCmArray *)first)->arr;
      if (li->ndim + a->ndim > CM_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "[array] Arrays may have at most %d dimensions.",
                     CM_MAX_DIMS);
        return -1;
      }
      for (int i = 0; i < a->ndim; i++) li->shape[li->ndim++] = a->shape[i];
    }
    return 0;
  }
}

static int nonuniform(void) {
  PyErr_SetString(PyExc_ValueError, "Initialization encountered non-uniform length.");
  return -1;
}

/* Check every element against the shape and find the list's kind.  Returns
 * the kind, or -1 with an exception. */
static int list_validate(PyObject *o, int idx, list_info *li) {
  if (idx >= li->ndim) {
    PyErr_SetString(PyExc_ValueError, "Initialization encountered extra dimension.");
    return -1;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  if (n != li->shape[idx]) return nonuniform();
  if (n == 0) return PK_FLOAT; /* empty lists count as float */
  PyObject **items = PySequence_Fast_ITEMS(o);
  /* MLX recurses into tuples only when the first element is one. */
  bool tuples = PyTuple_Check(items[0]);
  int kind = PK_BOOL;
  if (Py_EnterRecursiveCall(" while converting a list to an array")) return -1;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *l = items[i];
    int k;
    if (PyList_Check(l) || (tuples && PyTuple_Check(l))) {
      PyObject *seq = PySequence_Fast(l, "");
      k = seq ? list_validate(seq, idx + 1, li) : -1;
      Py_XDECREF(seq);
    } else if (PyCmArray_Check(l)) {
      li->all_scalars = false;
      cm_array *a = ((PyCmArray *)l)->arr;
      k = PK_BOOL;
      if (a->ndim + idx + 1 != li->ndim) k = nonuniform();
      for (int d = 0; k >= 0 && d < a->ndim; d++)
        if (a->shape[d] != li->shape[idx + 1 + d]) k = nonuniform();
    } else {
      k = scalar_kind(l);
      if (k < 0) k = invalid_type(l);
      else if (k == PK_INT) {
        int64_t v;
        if (py_int64(l, &v)) k = -1;
        else if (!fits_int32(v)) li->wide_int = true;
      }
      if (k >= 0 && idx + 1 != li->ndim) k = nonuniform();
    }
    if (k < 0) {
      Py_LeaveRecursiveCall();
      return -1;
    }
    if (k > kind) kind = k;
  }
  Py_LeaveRecursiveCall();
  return kind;
}

/* Write one leaf of a list whose kind is `kind` into dst as dtype dt,
 * converting as MLX does: ints pass through int64 (int64/uint64/uint32 and
 * inexact targets) or int32 (the others, so they wrap); floats through
 * float unless dt is float64; complex through complex64. */
static int write_leaf(PyObject *l, int kind, cm_dtype dt, void *dst) {
  switch (kind) {
  case PK_BOOL: {
    bool b = l == Py_True;
    cm_convert_scalar(dst, dt, &b, CM_BOOL);
    return 0;
  }
  case PK_INT: {
    int64_t v;
    if (py_int64(l, &v)) return -1;
    bool ok = true;
    if (dt == CM_UINT64) ok = v >= 0;
    else if (dt == CM_UINT32) ok = v >= 0 && v <= (int64_t)UINT32_MAX;
    else if (dt != CM_INT64 && !cm_dtype_is_inexact(dt)) ok = fits_int32(v);
    if (!ok) {
      PyErr_Format(PyExc_OverflowError, "[array] Python int %lld does not fit in %s.", (long long)v,
                   dt == CM_UINT64 || dt == CM_UINT32 ? cm_dtype_name(dt) : "int32");
      return -1;
    }
    if (dt == CM_UINT64) {
      *(uint64_t *)dst = (uint64_t)v;
      return 0;
    }
    cm_convert_scalar(dst, dt, &v, CM_INT64);
    return 0;
  }
  case PK_FLOAT: {
    double v = PyFloat_AsDouble(l); /* bools and ints too */
    if (v == -1.0 && PyErr_Occurred()) {
      if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_OverflowError, "[array] Python int %R does not fit in float.", l);
      }
      return -1;
    }
    if (dt == CM_FLOAT64) {
      *(double *)dst = v;
    } else if (!cm_dtype_is_inexact(dt)) {
      cm_store_double(dst, dt, v); /* from the double, as MLX converts */
    } else {
      float f = (float)v;
      cm_convert_scalar(dst, dt, &f, CM_FLOAT32);
    }
    return 0;
  }
  default: {
    Py_complex c = PyComplex_AsCComplex(l);
    if (c.real == -1.0 && PyErr_Occurred()) return -1;
    cm_complex64 z = {(float)c.real, (float)c.imag};
    cm_convert_scalar(dst, dt, &z, CM_COMPLEX64);
    return 0;
  }
  }
}

static int list_fill(PyObject *o, int depth, const list_info *li, cm_dtype dt, char **dst) {
  PyObject **items = PySequence_Fast_ITEMS(o);
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  size_t isz = cm_dtype_size(dt);
  if (depth == li->ndim - 1) {
    for (Py_ssize_t i = 0; i < n; i++, *dst += isz)
      if (write_leaf(items[i], li->kind, dt, *dst)) return -1;
    return 0;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *seq = PySequence_Fast(items[i], "");
    int rc = seq ? list_fill(seq, depth + 1, li, dt, dst) : -1;
    Py_XDECREF(seq);
    if (rc) return -1;
  }
  return 0;
}

/* Stack same-shape arrays along a new first axis (the stack op promotes
 * their dtypes; with dtype given they were converted already). */
static cm_array *stack_arrays(cm_array **parts, Py_ssize_t n) {
  if (n > INT32_MAX) {
    PyErr_SetString(PyExc_ValueError, "[array] Too many arrays.");
    return NULL;
  }
  return checked(cm_stack(parts, (int)n, 0, CM_STREAM_DEFAULT));
}

static cm_array *list_to_array(PyObject *o, int dtype) {
  PyObject *seq = PySequence_Fast(o, "");
  if (!seq) return NULL;
  list_info li = {.all_scalars = true};
  cm_array *out = NULL;
  if (list_shape(seq, &li)) goto done;
  li.kind = list_validate(seq, 0, &li);
  if (li.kind < 0) goto done;
  if (li.all_scalars) {
    cm_dtype dt;
    if (dtype >= 0) dt = (cm_dtype)dtype;
    else if (li.kind == PK_BOOL) dt = CM_BOOL;
    else if (li.kind == PK_INT) dt = li.wide_int ? CM_INT64 : CM_INT32;
    else if (li.kind == PK_FLOAT) dt = CM_FLOAT32;
    else dt = CM_COMPLEX64;
    out = checked(cm_array_from_data(NULL, li.ndim, li.shape, dt));
    char *p = out ? cm_data(out) : NULL;
    if (out && out->size && list_fill(seq, 0, &li, dt, &p)) {
      cm_release(out);
      out = NULL;
    }
    goto done;
  }
  /* Arrays inside: convert each top-level element and stack them. */
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  cm_array **parts = calloc((size_t)n, sizeof *parts);
  if (!parts) {
    PyErr_NoMemory();
    goto done;
  }
  Py_ssize_t got = 0;
  for (; got < n; got++) {
    parts[got] = pycm_to_array(PySequence_Fast_ITEMS(seq)[got], dtype);
    if (!parts[got]) break;
  }
  if (got == n) out = stack_arrays(parts, n);
  for (Py_ssize_t i = 0; i < got; i++) cm_release(parts[i]);
  free(parts);
done:
  Py_DECREF(seq);
  return out;
}

/* ---- any object ---------------------------------------------------------- */

static PyObject *call_method0(PyObject *o, const char *name) {
  PyObject *f = PyObject_GetAttrString(o, name);
  if (!f) return NULL;
  PyObject *r = PyObject_CallNoArgs(f);
  Py_DECREF(f);
  return r;
}

static bool has_attr(PyObject *o, const char *name) {
  PyObject *a = PyObject_GetAttrString(o, name);
  if (!a) {
    PyErr_Clear();
    return false;
  }
  Py_DECREF(a);
  return true;
}

static cm_array *as_dtype(cm_array *a, int dtype) {
  if (dtype < 0 || a->dtype == (cm_dtype)dtype) return a;
  cm_array *r = cm_astype(a, (cm_dtype)dtype, CM_STREAM_DEFAULT);
  cm_release(a);
  return checked(r);
}

/* The result of __mlx_array__ (must be an array), or of __array__ (any
 * buffer object). */
static cm_array *from_accessor(PyObject *o, const char *name, int dtype) {
  PyObject *r = call_method0(o, name);
  if (!r) return NULL;
  cm_array *a = NULL;
  if (PyCmArray_Check(r)) a = as_dtype(cm_retain(((PyCmArray *)r)->arr), dtype);
  else if (name[2] == 'a' && PyObject_CheckBuffer(r)) a = pycm_from_buffer(r, dtype);
  else
    PyErr_Format(PyExc_TypeError, "%s.%s() returned %s, not an array.", pycm_short_type_name(o),
                 name, pycm_short_type_name(r));
  Py_DECREF(r);
  return a;
}

/* pycm_to_array, and with complex_ok pycm_to_operand. */
static cm_array *to_array(PyObject *o, int dtype, bool complex_ok) {
  if (dtype >= 0 && !cm_dtype_valid(dtype)) {
    PyErr_SetString(PyExc_ValueError, "[array] Invalid dtype.");
    return NULL;
  }
  if (PyCmArray_Check(o)) return as_dtype(cm_retain(((PyCmArray *)o)->arr), dtype);
  int kind = scalar_kind(o);
  /* Buffer objects first, as MLX checks for them first: a NumPy float64
   * scalar keeps its exact value when dtype=float64 is asked for. */
  if (kind < 0 || (kind == PK_FLOAT && !PyFloat_CheckExact(o)))
    if (!PyUnicode_Check(o) && PyObject_CheckBuffer(o)) return pycm_from_buffer(o, dtype);
  if (kind >= 0) return scalar_to_array(o, kind, dtype);
  if (PyList_Check(o) || PyTuple_Check(o)) return list_to_array(o, dtype);
  if (o == Py_None || PyUnicode_Check(o) || PyDict_Check(o)) return invalid_type(o), NULL;
  if (has_attr(o, "__dlpack__")) return pycm_from_dlpack(o, dtype);
  if (has_attr(o, "__mlx_array__")) return from_accessor(o, "__mlx_array__", dtype);
  if (has_attr(o, "__array__")) return from_accessor(o, "__array__", dtype);
  if (complex_ok) return complex_like_to_array(o, dtype);
  invalid_type(o);
  return NULL;
}

cm_array *pycm_to_array(PyObject *o, int dtype) { return to_array(o, dtype, false); }
cm_array *pycm_to_operand(PyObject *o, int dtype) { return to_array(o, dtype, true); }

/* ---- weak scalars -------------------------------------------------------- */

cm_array *pycm_to_array_weak(PyObject *o, const cm_array *other) {
  if (PyCmArray_Check(o)) return cm_retain(((PyCmArray *)o)->arr);
  int kind = scalar_kind(o);
  if (kind < 0) {
    if (o == Py_None) {
      PyErr_SetString(PyExc_TypeError, "Invalid type NoneType received in array initialization.");
      return NULL;
    }
    if (PyList_Check(o) || PyTuple_Check(o) || PyUnicode_Check(o) || PyDict_Check(o))
      return invalid_type(o), NULL;
    if (has_attr(o, "__mlx_array__")) return from_accessor(o, "__mlx_array__", -1);
    if (pycm_complex_like(o, NULL)) return pycm_to_operand(o, -1); /* complex64 */
    /* NumPy arrays and scalars take the array's dtype too. */
    return pycm_to_array(o, (int)other->dtype);
  }
  cm_dtype dt = cm_weak_scalar_dtype(other->dtype, kind);
  if (kind == PK_INT) {
    int64_t v;
    if (py_int64(o, &v)) return NULL;
    /* Narrow integer arrays refuse values they cannot hold; int64 and
     * uint64 wrap, and so does the int32 a bool array takes (as in MLX). */
    if (cm_dtype_is_integral(other->dtype) && cm_dtype_size(dt) < 8) {
      int bits = (int)cm_dtype_size(dt) * 8;
      bool is_unsigned = cm_dtype_kind(dt) == CM_KIND_UINT;
      int64_t lo = is_unsigned ? 0 : -(1LL << (bits - 1));
      int64_t hi = is_unsigned ? (1LL << bits) - 1 : (1LL << (bits - 1)) - 1;
      if (v < lo || v > hi) {
        PyErr_Format(PyExc_ValueError, "Converting %lld to %s would result in overflow.",
                     (long long)v, cm_dtype_name(dt));
        return NULL;
      }
    }
    return checked(cm_array_scalar(&v, CM_INT64, dt));
  }
  if (kind == PK_FLOAT) {
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) return NULL;
    return checked(cm_array_scalar(&v, CM_FLOAT64, dt));
  }
  return scalar_to_array(o, kind, (int)dt);
}

static bool is_array_like(PyObject *o) {
  return PyCmArray_Check(o) || (scalar_kind(o) < 0 && o != Py_None && has_attr(o, "__mlx_array__"));
}

/* Non-weak conversion for an operand of a binary op: lists are not
 * accepted there, as in MLX. */
static cm_array *operand(PyObject *o) {
  if (PyList_Check(o) || PyTuple_Check(o)) return invalid_type(o), NULL;
  if (o == Py_None) {
    PyErr_SetString(PyExc_TypeError, "Invalid type NoneType received in array initialization.");
    return NULL;
  }
  return pycm_to_operand(o, -1);
}

int pycm_binary_operands(PyObject *a, PyObject *b, cm_array **xa, cm_array **xb) {
  *xa = *xb = NULL;
  if (is_array_like(a)) {
    *xa = operand(a);
    if (!*xa) return -1;
    *xb = pycm_to_array_weak(b, *xa);
  } else if (is_array_like(b)) {
    *xb = operand(b);
    if (!*xb) return -1;
    *xa = pycm_to_array_weak(a, *xb);
  } else {
    *xa = operand(a);
    if (*xa) *xb = operand(b);
  }
  if (*xa && *xb) return 0;
  cm_release(*xa);
  cm_release(*xb);
  *xa = *xb = NULL;
  return -1;
}

/* ---- back to Python ------------------------------------------------------ */

static PyObject *element(const void *p, cm_dtype t) {
  switch (t) {
  case CM_BOOL: return PyBool_FromLong(*(const uint8_t *)p != 0);
  case CM_UINT8: return PyLong_FromUnsignedLong(*(const uint8_t *)p);
  case CM_UINT16: return PyLong_FromUnsignedLong(*(const uint16_t *)p);
  case CM_UINT32: return PyLong_FromUnsignedLong(*(const uint32_t *)p);
  case CM_UINT64: return PyLong_FromUnsignedLongLong(*(const uint64_t *)p);
  case CM_INT8: return PyLong_FromLong(*(const int8_t *)p);
  case CM_INT16: return PyLong_FromLong(*(const int16_t *)p);
  case CM_INT32: return PyLong_FromLong(*(const int32_t *)p);
  case CM_INT64: return PyLong_FromLongLong(*(const int64_t *)p);
  case CM_FLOAT16: return PyFloat_FromDouble(cm_f16_to_f32(*(const uint16_t *)p));
  case CM_BFLOAT16: return PyFloat_FromDouble(cm_bf16_to_f32(*(const uint16_t *)p));
  case CM_FLOAT32: return PyFloat_FromDouble(*(const float *)p);
  case CM_FLOAT64: return PyFloat_FromDouble(*(const double *)p);
  case CM_COMPLEX64: {
    const cm_complex64 *z = p;
    return PyComplex_FromDoubles(z->re, z->im);
  }
  default:
    PyErr_SetString(PyExc_TypeError, "type cannot be converted to Python scalar.");
    return NULL;
  }
}

PyObject *pycm_array_item(cm_array *a) {
  if (a->size != 1) {
    PyErr_SetString(PyExc_ValueError,
                    "[convert] Only length-1 arrays can be converted to Python scalars.");
    return NULL;
  }
  if (pycm_eval(&a, 1)) return NULL;
  return element(cm_data(a), a->dtype);
}

static PyObject *tolist_rec(const cm_array *a, const char *p, int dim) {
  PyObject *list = PyList_New(a->shape[dim]);
  if (!list) return NULL;
  int64_t step = a->strides[dim] * (int64_t)cm_itemsize(a);
  for (int32_t i = 0; i < a->shape[dim]; i++, p += step) {
    PyObject *v = dim == a->ndim - 1 ? element(p, a->dtype) : tolist_rec(a, p, dim + 1);
    if (!v) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, i, v);
  }
  return list;
}

PyObject *pycm_array_tolist(cm_array *a) {
  if (a->ndim == 0) return pycm_array_item(a);
  if (pycm_eval(&a, 1)) return NULL;
  return tolist_rec(a, cm_data(a), 0);
}
