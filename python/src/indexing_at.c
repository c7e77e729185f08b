/* array.at: x.at[idx].add(y) and friends return x with the indexed
 * elements combined with y, applying every update even where indices
 * repeat (x[idx] += y keeps only one).  As in MLX: subtract adds the
 * negated value, divide multiplies by the reciprocal (both after casting
 * the value to x's dtype), and the index rules are __setitem__'s. */
#include "cmlx_py.h"
#include "init.h"

#include "ops/indexing.h"
#include "ops/unary.h"

typedef struct {
  PyObject_HEAD
  cm_array *arr; /* the array as it was when .at was taken (as in MLX: a
                    later a[...] = v rebinds a, not this) */
  PyObject *key; /* NULL until indexed */
} PyCmArrayAt;

static PyTypeObject PyCmArrayAt_Type;

static PyObject *at_new(cm_array *arr, PyObject *key) {
  PyCmArrayAt *o = PyObject_New(PyCmArrayAt, &PyCmArrayAt_Type);
  if (!o) return NULL;
  Py_XINCREF(key);
  o->arr = cm_retain(arr);
  o->key = key;
  return (PyObject *)o;
}

PyObject *pycm_array_at(PyObject *self, void *closure) {
  (void)closure;
  return at_new(((PyCmArray *)self)->arr, NULL);
}

static void at_dealloc(PyObject *self) {
  PyCmArrayAt *o = (PyCmArrayAt *)self;
  cm_release(o->arr);
  Py_XDECREF(o->key);
  PyObject_Free(self);
}

static PyObject *at_getitem(PyObject *self, PyObject *key) {
  return at_new(((PyCmArrayAt *)self)->arr, key);
}

typedef enum { AT_ADD, AT_SUBTRACT, AT_MULTIPLY, AT_DIVIDE, AT_MAXIMUM, AT_MINIMUM } at_op;

static PyObject *at_apply(PyObject *self, PyObject *args, PyObject *kw, const char *name,
                          at_op op) {
  static char *kwlist[] = {"value", NULL};
  char fmt[32];
  PyOS_snprintf(fmt, sizeof fmt, "O:%s", name);
  PyObject *value;
  if (!PyArg_ParseTupleAndKeywords(args, kw, fmt, kwlist, &value)) return NULL;
  PyCmArrayAt *o = (PyCmArrayAt *)self;
  if (!o->key) {
    PyErr_SetString(PyExc_ValueError, "Must give indices to array.at (e.g. `x.at[0].add(4)`).");
    return NULL;
  }
  cm_array *a = o->arr;
  cm_array *v = pycm_to_array_weak(value, a);
  if (!v) return NULL;
  cm_array *u = cm_astype(v, a->dtype, CM_STREAM_DEFAULT);
  cm_release(v);
  cm_scatter_op sop = CM_SCATTER_SUM;
  if (u && op == AT_SUBTRACT) {
    cm_array *n = cm_negative(u, CM_STREAM_DEFAULT);
    cm_release(u);
    u = n;
  } else if (u && op == AT_DIVIDE) {
    cm_array *rcp = cm_reciprocal(u, CM_STREAM_DEFAULT);
    cm_release(u);
    u = rcp ? cm_astype(rcp, a->dtype, CM_STREAM_DEFAULT) : NULL; /* 1/2 is 0 for ints, as in MLX */
    cm_release(rcp);
  }
  if (!u) return pycm_raise();
  switch (op) {
  case AT_MULTIPLY:
  case AT_DIVIDE: sop = CM_SCATTER_PROD; break;
  case AT_MAXIMUM: sop = CM_SCATTER_MAX; break;
  case AT_MINIMUM: sop = CM_SCATTER_MIN; break;
  default: break;
  }
  cm_array *r = pycm_index_update(a, o->key, u, sop);
  cm_release(u);
  return r ? pycm_wrap(r) : NULL;
}

#define AT_METHOD(NAME, OP)                                                  \
  static PyObject *at_##NAME(PyObject *self, PyObject *args, PyObject *kw) { \
    return at_apply(self, args, kw, #NAME, OP);                              \
  }
AT_METHOD(add, AT_ADD)
AT_METHOD(subtract, AT_SUBTRACT)
AT_METHOD(multiply, AT_MULTIPLY)
AT_METHOD(divide, AT_DIVIDE)
AT_METHOD(maximum, AT_MAXIMUM)
AT_METHOD(minimum, AT_MINIMUM)

#define SIG(NAME) \
  #NAME "(self, value: bool | int | float | array | ndarray | complex) -> array\n\n"
#define KWM(f) PYCM_METH_KW(f)
static PyMethodDef at_methods[] = {
    {"add", KWM(at_add), SIG(add) "x with x[idx] += value, every repeated index applied."},
    {"subtract", KWM(at_subtract),
     SIG(subtract) "x with x[idx] -= value, every repeated index applied."},
    {"multiply", KWM(at_multiply),
     SIG(multiply) "x with x[idx] *= value, every repeated index applied."},
    {"divide", KWM(at_divide), SIG(divide) "x with x[idx] /= value, every repeated index applied."},
    {"maximum", KWM(at_maximum),
     SIG(maximum) "x with x[idx] = maximum(x[idx], value), accumulated."},
    {"minimum", KWM(at_minimum),
     SIG(minimum) "x with x[idx] = minimum(x[idx], value), accumulated."},
    {NULL, NULL, 0, NULL},
};

static PyMappingMethods at_mapping = {.mp_subscript = at_getitem};

static PyTypeObject PyCmArrayAt_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cmlx.core.ArrayAt",
    .tp_basicsize = sizeof(PyCmArrayAt),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A helper object to apply updates at specific indices.",
    .tp_dealloc = at_dealloc,
    .tp_as_mapping = &at_mapping,
    .tp_methods = at_methods,
};

int pycm_init_array_at(PyObject *m) {
  if (PyType_Ready(&PyCmArrayAt_Type)) return -1;
  Py_INCREF(&PyCmArrayAt_Type);
  if (PyModule_AddObject(m, "ArrayAt", (PyObject *)&PyCmArrayAt_Type)) {
    Py_DECREF(&PyCmArrayAt_Type);
    return -1;
  }
  return 0;
}
