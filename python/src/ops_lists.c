/* List-shaped arguments and results of the op bindings (see ops_lists.h).
 * Sequences follow nanobind's casters: any sequence (NumPy and cmlx arrays
 * included) whose items are ints or have __index__; floats and strings are
 * refused; an int out of range does not fit the type. */
#include "ops_lists.h"

PyObject *pa_value_type_error(const pycm_op *op, const pa_call *c) {
  /* the first row of the name holds the overload count */
  const pycm_op *first = op;
  while (first->noverloads == 0) first--;
  PyObject *parts = pa_overloads_message(op->name, first, first->noverloads);
  if (!parts) return NULL;
  int bad = 0;
  const pa_sig *g = &op->compiled;
  int shown = 0;
  for (int j = 0; !bad && j <= g->n; j++) {
    if (j == g->varargs)
      for (Py_ssize_t i = 0; !bad && i < c->nvarargs; i++)
        bad = pa_append(parts, PyUnicode_FromFormat("%s%s", shown++ ? ", " : "",
                                                 pa_type_name(c->varargs[i])));
    if (j < g->n && !bad && c->v[j].given && c->v[j].obj)
      bad = pa_append(parts, PyUnicode_FromFormat("%s%s", shown++ ? ", " : "",
                                               pa_type_name(c->v[j].obj)));
  }
  return pa_raise_parts(parts, bad);
}

bool pa_is_seq(PyObject *o) {
  if (PyUnicode_Check(o) || PyBytes_Check(o) || PyByteArray_Check(o)) return false;
  /* cmlx arrays iterate without the sequence slots: 0-d ones are scalars */
  if (PyCmArray_Check(o)) return ((PyCmArray *)o)->arr->ndim > 0;
  return PySequence_Check(o);
}

int pa_seq_ints64(PyObject *o, int64_t lo, int64_t hi, int64_t **out, Py_ssize_t *n) {
  *out = NULL;
  *n = 0;
  if (!pa_is_seq(o)) return 1;
  PyObject *seq = PySequence_Fast(o, "ints");
  if (!seq) {
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      return 1;
    }
    return -1;
  }
  Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
  int64_t *v = NULL;
  if (len && !(v = PyMem_Malloc(sizeof(int64_t) * (size_t)len))) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return -1;
  }
  int r = 0;
  for (Py_ssize_t i = 0; !r && i < len; i++)
    r = pa_int_in_range(PySequence_Fast_GET_ITEM(seq, i), lo, hi, &v[i]);
  Py_DECREF(seq);
  if (r) {
    PyMem_Free(v);
    return r;
  }
  *out = v;
  *n = len;
  return 0;
}

int pa_seq_ints32(PyObject *o, int32_t **out, int *n) {
  int64_t *v;
  Py_ssize_t len;
  *out = NULL;
  *n = 0;
  int r = pa_seq_ints64(o, INT32_MIN, INT32_MAX, &v, &len);
  if (r) return r;
  if (len > INT32_MAX / 2) {
    PyMem_Free(v);
    PyErr_SetString(PyExc_ValueError, "Too many entries.");
    return -1;
  }
  int32_t *w = len ? PyMem_Malloc(sizeof(int32_t) * (size_t)len) : NULL;
  if (len && !w) {
    PyMem_Free(v);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < len; i++) w[i] = (int32_t)v[i];
  PyMem_Free(v);
  *out = w;
  *n = (int)len;
  return 0;
}

void pa_release_arrays(cm_array **arrs, Py_ssize_t n) {
  for (Py_ssize_t i = 0; i < n; i++) cm_release(arrs[i]);
  PyMem_Free(arrs);
}

/* Items of a fast sequence (or a vector of objects) as retained arrays. */
static int collect_arrays(PyObject *const *items, Py_ssize_t len, cm_array ***arrs,
                          Py_ssize_t *n) {
  cm_array **v = PyMem_Malloc(sizeof(cm_array *) * (size_t)(len ? len : 1));
  if (!v) {
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < len; i++) {
    if (!PyCmArray_Check(items[i])) {
      pa_release_arrays(v, i);
      return 1;
    }
    v[i] = cm_retain(((PyCmArray *)items[i])->arr);
  }
  *arrs = v;
  *n = len;
  return 0;
}

int pa_seq_arrays(PyObject *o, cm_array ***arrs, Py_ssize_t *n) {
  *arrs = NULL;
  *n = 0;
  if (!pa_is_seq(o)) return 1;
  PyObject *seq = PySequence_Fast(o, "arrays");
  if (!seq) {
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      return 1;
    }
    return -1;
  }
  int r = collect_arrays(PySequence_Fast_ITEMS(seq), PySequence_Fast_GET_SIZE(seq), arrs, n);
  Py_DECREF(seq);
  return r;
}

int pa_varargs_arrays(const pa_call *c, cm_array ***arrs, Py_ssize_t *n) {
  return collect_arrays(c->varargs, c->nvarargs, arrs, n);
}

PyObject *pa_wrap_arrays(cm_array **outs, int n, bool tuple) {
  PyObject *res = tuple ? PyTuple_New(n) : PyList_New(n);
  for (int i = 0; i < n; i++) {
    PyObject *o = res ? pycm_wrap(outs[i]) : NULL; /* consumes outs[i] */
    if (!o) {
      for (int j = i + (res ? 1 : 0); j < n; j++)
        if (outs[j]) cm_release(outs[j]);
      Py_CLEAR(res);
      break;
    }
    if (tuple) PyTuple_SET_ITEM(res, i, o);
    else PyList_SET_ITEM(res, i, o);
  }
  return res;
}

int pa_str_arg(const pa_value *v, const char *dflt, const char **s) {
  if (!v->given) {
    *s = dflt;
    return 0;
  }
  if (v->none || !PyUnicode_Check(v->obj)) return 1;
  *s = PyUnicode_AsUTF8(v->obj);
  return *s ? 0 : -1;
}
