/* The array type's behaviour: construction, properties, conversions to
 * Python values, printing, len/iter/bool, copying and pickling.  Operators
 * and the methods that are ops come from the op bindings
 * (pycm_array_number_methods, pycm_array_richcompare,
 * pycm_array_op_methods, declared in init.h) and are plugged in at init;
 * buffer/DLPack export lives in array_buffer.c, the type object itself in
 * array_object.c. */
#include "cmlx_py.h"
#include "init.h"

#include <stdlib.h>
#include <string.h>

#include "core/format.h"
#include "ops/shape.h"

/* What `array.__new__` holds until __init__ (or __setstate__) replaces it:
 * a shared 0-d float32 zero, so no instance is ever without an array. */
static cm_array *placeholder;

/* ---- lifecycle ----------------------------------------------------------- */

static PyObject *array_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  (void)args, (void)kw;
  PyCmArray *o = (PyCmArray *)type->tp_alloc(type, 0);
  if (o) o->arr = cm_retain(placeholder);
  return (PyObject *)o;
}

#define ARRAY_INIT_SIG                                                          \
  "__init__(self: array, val: scalar | list | tuple | DLPackCompatible | array, " \
  "dtype: Dtype | None = None)"

static int array_init(PyObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"val", "dtype", NULL};
  PyObject *val = NULL, *dtype_obj = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:array", kwlist, &val, &dtype_obj) || !val ||
      val == Py_None || (dtype_obj != Py_None && !PyObject_TypeCheck(dtype_obj, &PyCmDtype_Type))) {
    PyErr_Clear();
    pycm_signature_error("__init__", ARRAY_INIT_SIG, self, args, kw);
    return -1;
  }
  int dtype = -1;
  if (dtype_obj != Py_None) {
    cm_dtype t;
    if (pycm_dtype_arg(dtype_obj, &t)) return -1;
    dtype = (int)t;
  }
  cm_array *a = pycm_to_array(val, dtype);
  if (!a) return -1;
  cm_release(((PyCmArray *)self)->arr);
  ((PyCmArray *)self)->arr = a;
  return 0;
}

/* ---- properties ---------------------------------------------------------- */

#define ARR(self) (((PyCmArray *)(self))->arr)

static PyObject *get_shape(PyObject *self, void *c) {
  (void)c;
  cm_array *a = ARR(self);
  PyObject *t = PyTuple_New(a->ndim);
  for (int i = 0; t && i < a->ndim; i++) {
    PyObject *d = PyLong_FromLong(a->shape[i]);
    if (!d) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SET_ITEM(t, i, d);
  }
  return t;
}

static PyObject *get_ndim(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(ARR(self)->ndim);
}

static PyObject *get_size(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLongLong(ARR(self)->size);
}

static PyObject *get_dtype(PyObject *self, void *c) {
  (void)c;
  PyObject *d = pycm_dtype_object(ARR(self)->dtype);
  Py_XINCREF(d);
  return d;
}

static PyObject *get_itemsize(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromSize_t(cm_itemsize(ARR(self)));
}

static PyObject *get_nbytes(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromSize_t(cm_nbytes(ARR(self)));
}

static PyObject *get_T(PyObject *self, void *c) {
  (void)c;
  return pycm_wrap(cm_transpose(ARR(self), 0, NULL, CM_STREAM_DEFAULT));
}

/* The last two axes swapped (a batch of matrices transposed). */
static PyObject *get_mT(PyObject *self, void *c) {
  (void)c;
  if (ARR(self)->ndim < 2) {
    PyErr_SetString(PyExc_ValueError,
                    "[matrix_transpose] Input array must have at least 2 dimensions.");
    return NULL;
  }
  return pycm_wrap(cm_swapaxes(ARR(self), -1, -2, CM_STREAM_DEFAULT));
}

static PyObject *get_real(PyObject *self, void *c) {
  (void)c;
  return pycm_wrap(cm_real(ARR(self), CM_STREAM_DEFAULT));
}

static PyObject *get_imag(PyObject *self, void *c) {
  (void)c;
  return pycm_wrap(cm_imag(ARR(self), CM_STREAM_DEFAULT));
}

static PyGetSetDef array_getset[] = {
    {"shape", get_shape, NULL, "The shape of the array as a Python tuple.", NULL},
    {"ndim", get_ndim, NULL, "The array's dimension.", NULL},
    {"size", get_size, NULL, "Number of elements in the array.", NULL},
    {"dtype", get_dtype, NULL, "The array's Dtype.", NULL},
    {"itemsize", get_itemsize, NULL, "The size of the array's datatype in bytes.", NULL},
    {"nbytes", get_nbytes, NULL, "The number of bytes in the array.", NULL},
    {"T", get_T, NULL, "Equivalent to calling self.transpose() with no arguments.", NULL},
    {"mT", get_mT, NULL, "The array with its last two axes swapped.", NULL},
    {"real", get_real, NULL, "The real part of a complex array.", NULL},
    {"imag", get_imag, NULL, "The imaginary part of a complex array.", NULL},
    {"at", pycm_array_at, NULL, "Used to apply updates at the given indices.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- printing ------------------------------------------------------------ */

static PyObject *array_repr(PyObject *self) {
  cm_array *a = ARR(self);
  if (pycm_eval(&a, 1)) return NULL;
  char *s = cm_array_format(a);
  if (!s) return pycm_raise();
  PyObject *r = PyUnicode_FromString(s);
  free(s);
  return r;
}

/* ---- len, iteration, truth ----------------------------------------------- */

static Py_ssize_t array_len(PyObject *self) {
  cm_array *a = ARR(self);
  if (a->ndim == 0) {
    PyErr_SetString(PyExc_TypeError, "len() 0-dimensional array.");
    return -1;
  }
  return a->shape[0];
}

/* Row i of a (i in range): a[i:i+1] without its first axis, a lazy view
 * like MLX's a[i]. */
static cm_array *take_row(cm_array *a, int32_t i) {
  int32_t start[CM_MAX_DIMS] = {0}, stop[CM_MAX_DIMS];
  memcpy(stop, a->shape, sizeof(int32_t) * (size_t)a->ndim);
  start[0] = i;
  stop[0] = i + 1;
  cm_array *sl = cm_slice(a, a->ndim, start, a->ndim, stop, 0, NULL, CM_STREAM_DEFAULT);
  if (!sl) return NULL;
  int axis = 0;
  cm_array *r = cm_squeeze(sl, 1, &axis, CM_STREAM_DEFAULT);
  cm_release(sl);
  return r;
}

typedef struct {
  PyObject_HEAD
  PyObject *array;
  int32_t index, n;
} PyCmArrayIterator;

static void iter_dealloc(PyObject *self) {
  Py_XDECREF(((PyCmArrayIterator *)self)->array);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *iter_next(PyObject *self) {
  PyCmArrayIterator *it = (PyCmArrayIterator *)self;
  if (it->index >= it->n) return NULL; /* StopIteration */
  return pycm_wrap(take_row(ARR(it->array), it->index++));
}

static PyTypeObject PyCmArrayIterator_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cmlx.core.ArrayIterator",
    .tp_basicsize = sizeof(PyCmArrayIterator),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = iter_dealloc,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = iter_next,
};

static PyObject *array_iter(PyObject *self) {
  cm_array *a = ARR(self);
  if (a->ndim == 0) {
    PyErr_SetString(PyExc_TypeError, "iter() 0-dimensional array.");
    return NULL;
  }
  PyCmArrayIterator *it = PyObject_New(PyCmArrayIterator, &PyCmArrayIterator_Type);
  if (!it) return NULL;
  Py_INCREF(self);
  it->array = self;
  it->index = 0;
  it->n = a->shape[0];
  return (PyObject *)it;
}

static int array_bool(PyObject *self) {
  PyObject *v = pycm_array_item(ARR(self));
  if (!v) return -1;
  int r = PyObject_IsTrue(v);
  Py_DECREF(v);
  return r;
}

static PyObject *array_int(PyObject *self) {
  PyObject *v = pycm_array_item(ARR(self));
  if (!v) return NULL;
  PyObject *r = PyNumber_Long(v);
  Py_DECREF(v);
  return r;
}

static PyObject *array_float(PyObject *self) {
  PyObject *v = pycm_array_item(ARR(self));
  if (!v) return NULL;
  PyObject *r = PyNumber_Float(v);
  Py_DECREF(v);
  return r;
}

static PyObject *array_index(PyObject *self) {
  cm_array *a = ARR(self);
  if (a->ndim != 0 || !cm_dtype_is_integral(a->dtype)) {
    PyErr_SetString(PyExc_TypeError,
                    "Only 0-dimensional integer arrays can be converted to an index.");
    return NULL;
  }
  return pycm_array_item(a);
}

static PySequenceMethods array_as_sequence = {.sq_length = array_len};

/* ---- methods ------------------------------------------------------------- */

static PyObject *m_item(PyObject *self, PyObject *unused) {
  (void)unused;
  return pycm_array_item(ARR(self));
}

static PyObject *m_tolist(PyObject *self, PyObject *unused) {
  (void)unused;
  return pycm_array_tolist(ARR(self));
}

static PyObject *m_complex(PyObject *self, PyObject *unused) {
  (void)unused;
  PyObject *v = pycm_array_item(ARR(self));
  if (!v) return NULL;
  Py_complex c = PyComplex_AsCComplex(v);
  Py_DECREF(v);
  if (c.real == -1.0 && PyErr_Occurred()) return NULL;
  return PyComplex_FromCComplex(c);
}

#define ASTYPE_SIG                                                                                 \
  "astype(self, dtype: cmlx.core.Dtype, stream: cmlx.core.Stream | cmlx.core.ThreadLocalStream | " \
  "cmlx.core.Device | cmlx.core.DeviceType | None = None) -> cmlx.core.array"

static PyObject *m_astype(PyObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"dtype", "stream", NULL};
  PyObject *d = NULL, *s = Py_None;
  cm_dtype t;
  cm_stream st;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:astype", kwlist, &d, &s) ||
      !PyObject_TypeCheck(d, &PyCmDtype_Type) || pycm_stream_arg(s, &st)) {
    PyErr_Clear();
    return pycm_signature_error("astype", ASTYPE_SIG, self, args, kw);
  }
  if (pycm_dtype_arg(d, &t)) return NULL;
  return pycm_wrap(cm_astype(ARR(self), t, st));
}

static PyObject *m_copy(PyObject *self, PyObject *unused) {
  (void)unused;
  return pycm_wrap(cm_retain(ARR(self)));
}

static PyObject *m_deepcopy(PyObject *self, PyObject *memo) {
  (void)memo;
  return pycm_wrap(cm_retain(ARR(self)));
}

/* MLX's __format__: a 0-d array formats its Python scalar with the spec
 * (f"{loss:.3f}"), any array with an empty spec prints as repr does, and
 * a spec on an array with dimensions is a TypeError. */
static PyObject *m_format(PyObject *self, PyObject *spec) {
  cm_array *a = ARR(self);
  if (!PyUnicode_Check(spec)) {
    PyObject *args = PyTuple_Pack(1, spec);
    if (args)
      pycm_signature_error("__format__", "__format__(self, format_spec: object) -> str", self,
                           args, NULL);
    Py_XDECREF(args);
    return NULL;
  }
  if (a->ndim == 0) {
    PyObject *v = pycm_array_item(a);
    PyObject *r = v ? PyObject_Format(v, spec) : NULL;
    Py_XDECREF(v);
    return r;
  }
  if (PyUnicode_GetLength(spec) > 0) {
    PyErr_SetString(PyExc_TypeError, "unsupported format string passed to mx.array.__format__");
    return NULL;
  }
  return array_repr(self);
}

/* The array API namespace is the module itself, as in MLX. */
static PyObject *core_module;

static PyObject *m_array_namespace(PyObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"api_version", NULL};
  PyObject *version = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:__array_namespace__", kwlist, &version)) {
    return pycm_signature_error(
        "__array_namespace__",
        "__array_namespace__(self, api_version: str | None = None) -> types.ModuleType", self,
        args, kw);
  }
  if (version != Py_None && !PyUnicode_Check(version))
    return pycm_signature_error(
        "__array_namespace__",
        "__array_namespace__(self, api_version: str | None = None) -> types.ModuleType", self,
        args, kw);
  if (version != Py_None) {
    PyErr_SetString(PyExc_ValueError, "Explicitly specifying api_version is not yet implemented.");
    return NULL;
  }
  return Py_NewRef(core_module);
}

/* The bytes of the array in row-major order (a copy), as MLX's
 * __bytes__. */
static PyObject *m_bytes(PyObject *self, PyObject *unused) {
  (void)unused;
  cm_array *c = cm_contiguous(ARR(self), false, CM_STREAM_DEFAULT);
  if (!c) return pycm_raise();
  PyObject *r = NULL;
  if (pycm_eval(&c, 1) == 0)
    r = PyBytes_FromStringAndSize(cm_data(c), (Py_ssize_t)(c->size * (int64_t)cm_itemsize(c)));
  cm_release(c);
  return r;
}

/* Python 2's names for true division, which MLX's array still has. */
static PyObject *m_div(PyObject *self, PyObject *other) {
  return PyNumber_TrueDivide(self, other);
}

static PyObject *m_rdiv(PyObject *self, PyObject *other) {
  return PyNumber_TrueDivide(other, self);
}

#define KW(f) PYCM_METH_KW(f)

static PyMethodDef core_methods[] = {
    {"__format__", m_format, METH_O, "__format__(self, format_spec: object) -> str"},
    {"__array_namespace__", KW(m_array_namespace),
     "__array_namespace__(self, api_version: str | None = None) -> types.ModuleType\n\n"
     "Returns an object that has all the array API functions on it."},
    {"__bytes__", m_bytes, METH_NOARGS, "__bytes__(self) -> bytes"},
    {"__div__", m_div, METH_O, "__div__(self, other) -> array"},
    {"__rdiv__", m_rdiv, METH_O, "__rdiv__(self, other) -> array"},
    {"item", m_item, METH_NOARGS, "item(self) -> scalar\n\nAccess the value of a scalar array."},
    {"tolist", m_tolist, METH_NOARGS,
     "tolist(self) -> list_or_scalar\n\nConvert the array to a (nested) Python list."},
    {"astype", KW(m_astype),
     "astype(self, dtype: Dtype, stream: Stream | Device | None = None) -> array"},
    {"__complex__", m_complex, METH_NOARGS, NULL},
    {"__copy__", m_copy, METH_NOARGS, NULL},
    {"__deepcopy__", m_deepcopy, METH_O, NULL},
    {"__getstate__", pycm_array_getstate, METH_NOARGS, NULL},
    {"__setstate__", pycm_array_setstate, METH_O, NULL},
    {"__array__", KW(pycm_array_dunder_array),
     "__array__(self, dtype=None, copy=None) -> numpy.ndarray"},
    {"__dlpack__", KW(pycm_array_dlpack),
     "__dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None) -> PyCapsule"},
    {"__dlpack_device__", pycm_array_dlpack_device, METH_NOARGS,
     "__dlpack_device__(self) -> tuple[int, int]"},
    {NULL, NULL, 0, NULL},
};

/* The op bindings' methods first, then ours for names they do not define;
 * built once at init (CPython keeps the first definition of a name). */
static PyMethodDef *merge_methods(void) {
  size_t nops = 0, nmine = sizeof core_methods / sizeof core_methods[0] - 1;
  while (pycm_array_op_methods[nops].ml_name) nops++;
  PyMethodDef *all = calloc(nops + nmine + 1, sizeof *all);
  if (!all) return NULL;
  memcpy(all, pycm_array_op_methods, nops * sizeof *all);
  size_t n = nops;
  for (size_t i = 0; i < nmine; i++) {
    bool dup = false;
    for (size_t j = 0; j < nops && !dup; j++)
      dup = strcmp(all[j].ml_name, core_methods[i].ml_name) == 0;
    if (!dup) all[n++] = core_methods[i];
  }
  return all;
}

#define FROM_DLPACK_SIG "from_dlpack(x: DLPackCompatible, /, *, copy: bool | None = None) -> array"

/* from_dlpack(x, /, *, copy=None): a copy of x's data (an array passes
 * through unless copy=True). */
static PyObject *py_from_dlpack(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  static char *kwlist[] = {"", "copy", NULL};
  PyObject *x, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$O:from_dlpack", kwlist, &x, &copy) ||
      (copy != Py_None && !PyBool_Check(copy)))
    return pycm_signature_error("from_dlpack", FROM_DLPACK_SIG, NULL, args, kw);
  /* MLX 0.32 always copies foreign memory, and says so for copy=False */
  if (copy == Py_False) {
    PyErr_SetString(PyExc_ValueError, "[convert] Cannot import a CPU array without a copy.");
    return NULL;
  }
  if (PyCmArray_Check(x) && copy != Py_True) return pycm_wrap(cm_retain(ARR(x)));
  if (!PyCmArray_Check(x)) {
    PyObject *f = PyObject_GetAttrString(x, "__dlpack__");
    if (!f) return pycm_signature_error("from_dlpack", FROM_DLPACK_SIG, NULL, args, kw);
    Py_DECREF(f);
  }
  return pycm_wrap(pycm_from_dlpack(x, -1));
}

#define ASARRAY_SIG                                                                             \
  "asarray(a: scalar | array | Sequence | DLPackCompatible, dtype: Dtype | None = None, *, copy: " \
  "bool | None = None) -> array"

static bool is_foreign_array(PyObject *o) {
  if (PyCmArray_Check(o) || PyLong_Check(o) || PyFloat_CheckExact(o) || PyComplex_Check(o) ||
      PyList_Check(o) || PyTuple_Check(o) || PyUnicode_Check(o))
    return false;
  if (PyObject_CheckBuffer(o)) return true;
  PyObject *f = PyObject_GetAttrString(o, "__dlpack__");
  if (!f) PyErr_Clear();
  Py_XDECREF(f);
  return f != NULL;
}

/* asarray(a, dtype=None, *, copy=None): array(a, dtype), plus MLX's copy
 * rules.  copy=False cannot be honoured for anything on the CPU (MLX
 * refuses it with these messages); copy=True gives an array with its own
 * buffer. */
static PyObject *py_asarray(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  static char *kwlist[] = {"a", "dtype", "copy", NULL};
  PyObject *a = NULL, *dobj = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO$O:asarray", kwlist, &a, &dobj, &copy) || !a ||
      a == Py_None || (dobj != Py_None && !PyObject_TypeCheck(dobj, &PyCmDtype_Type)) ||
      (copy != Py_None && !PyBool_Check(copy)))
    return pycm_signature_error("asarray", ASARRAY_SIG, NULL, args, kw);
  int dtype = -1;
  if (dobj != Py_None) {
    cm_dtype t;
    if (pycm_dtype_arg(dobj, &t)) return NULL;
    dtype = (int)t;
  }
  if (copy == Py_False) {
    if (is_foreign_array(a)) {
      cm_array *probe = pycm_to_array(a, -1);
      if (!probe) return NULL;
      bool same = dtype < 0 || probe->dtype == (cm_dtype)dtype;
      cm_release(probe);
      PyErr_SetString(
          PyExc_ValueError,
          same ? "[convert] Cannot import a CPU array without a copy."
               : "[convert] Cannot convert array to the requested dtype without a copy.");
    } else {
      PyErr_SetString(PyExc_ValueError,
                      "Unable to avoid copy while creating an array as requested.");
    }
    return NULL;
  }
  cm_array *r = pycm_to_array(a, dtype);
  if (r && copy == Py_True && PyCmArray_Check(a) && r == ARR(a)) {
    /* Same node: give the copy a buffer of its own. */
    cm_array *c = cm_contiguous(r, false, CM_STREAM_DEFAULT);
    cm_release(r);
    r = NULL;
    if (!c) return pycm_raise();
    if (pycm_eval(&c, 1) == 0) r = cm_array_from_data(cm_data(c), c->ndim, c->shape, c->dtype);
    cm_release(c);
    if (!r && !PyErr_Occurred()) return pycm_raise();
  }
  return r ? pycm_wrap(r) : NULL;
}

static PyMethodDef array_functions[] = {
    {"asarray", KW(py_asarray), ASARRAY_SIG "\n\nConvert the input to an array."},
    {"from_dlpack", KW(py_from_dlpack),
     FROM_DLPACK_SIG "\n\nCreate an array from an object that supports DLPack."},
    {NULL, NULL, 0, NULL},
};

int pycm_init_array(PyObject *m) {
  core_module = Py_NewRef(m); /* held for the life of the process */
  /* static memory, so an idle process holds no active memory (as MLX) */
  static float zero = 0.0f;
  cm_buffer *buf = cm_buffer_wrap(&zero, sizeof zero, NULL, NULL);
  placeholder = buf ? cm_array_from_buffer(buf, 0, 0, NULL, NULL, CM_FLOAT32) : NULL;
  cm_buffer_release(buf);
  if (!placeholder) {
    pycm_raise();
    return -1;
  }
  PyMethodDef *methods = merge_methods();
  if (!methods) {
    PyErr_NoMemory();
    return -1;
  }
  /* Conversions to Python numbers belong with item(); the op bindings own
   * the rest of the number protocol. */
  PyNumberMethods *nb = &pycm_array_number_methods;
  if (!nb->nb_bool) nb->nb_bool = array_bool;
  if (!nb->nb_int) nb->nb_int = array_int;
  if (!nb->nb_float) nb->nb_float = array_float;
  if (!nb->nb_index) nb->nb_index = array_index;
  /* array_object.c owns the type's storage and lifetime; the behaviour is
   * filled in here, from this file and from the bindings below it. */
  PyTypeObject *t = &PyCmArray_Type;
  t->tp_new = array_new;
  t->tp_init = array_init;
  t->tp_repr = array_repr;
  t->tp_str = array_repr;
  t->tp_iter = array_iter;
  t->tp_getset = array_getset;
  t->tp_as_sequence = &array_as_sequence;
  t->tp_as_mapping = &pycm_array_mapping_methods;
  t->tp_as_number = nb;
  t->tp_richcompare = pycm_array_richcompare;
  /* Arrays hash by identity, as in MLX (a richcompare would otherwise make
   * the type unhashable). */
  t->tp_hash = PyBaseObject_Type.tp_hash;
  t->tp_methods = methods;
  t->tp_as_buffer = &pycm_array_buffer_procs;
  if (PyType_Ready(&PyCmArray_Type) || PyType_Ready(&PyCmArrayIterator_Type)) return -1;
  Py_INCREF(&PyCmArray_Type);
  if (PyModule_AddObject(m, "array", (PyObject *)&PyCmArray_Type)) {
    Py_DECREF(&PyCmArray_Type);
    return -1;
  }
  Py_INCREF(&PyCmArrayIterator_Type);
  if (PyModule_AddObject(m, "ArrayIterator", (PyObject *)&PyCmArrayIterator_Type)) {
    Py_DECREF(&PyCmArrayIterator_Type);
    return -1;
  }
  return PyModule_AddFunctions(m, array_functions);
}
