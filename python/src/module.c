/* The cmlx.core module: creation, the error bridge, and a few module
 * constants.  Each concern (dtypes, arrays, devices, memory, eval, ops)
 * adds its own names through its pycm_init_* function. */
#include "cmlx_py.h"

#include <math.h>
#include <string.h>

#define CMLX_PY_VERSION "0.1.0"

/* ---- errors -------------------------------------------------------------- */

PyObject *pycm_raise(void) {
  PyObject *type;
  switch (cm_error_kind_get()) {
  case CM_ERR_VALUE: type = PyExc_ValueError; break;
  case CM_ERR_TYPE: type = PyExc_TypeError; break;
  case CM_ERR_INDEX: type = PyExc_IndexError; break;
  case CM_ERR_MEMORY: type = PyExc_MemoryError; break;
  case CM_ERR_NOT_IMPLEMENTED: type = PyExc_NotImplementedError; break;
  case CM_ERR_RUNTIME: type = PyExc_RuntimeError; break;
  case CM_ERR_OVERFLOW: type = PyExc_OverflowError; break;
  default:
    /* A core function failed without recording why: still raise, never
     * return NULL without an exception. */
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "[cmlx] Unknown error.");
    return NULL;
  }
  PyErr_SetString(type, cm_error_message());
  cm_error_clear();
  return NULL;
}

int pycm_eval(cm_array *const *arrays, int n) {
  int rc;
  if (n <= 0) return 0;
  /* Fast path: nothing to compute, keep the GIL. */
  bool all_done = true;
  for (int i = 0; i < n && all_done; i++)
    if (!cm_is_evaluated(arrays[i]) || arrays[i]->error) all_done = false;
  if (all_done) return 0;
  Py_BEGIN_ALLOW_THREADS
  rc = cm_eval(arrays, n);
  Py_END_ALLOW_THREADS
  if (rc) pycm_raise();
  return rc;
}

/* "name(): incompatible function arguments ..." in the form nanobind prints
 * for MLX, so a wrong argument type reads the same in both. */
/* A type's name as nanobind prints it: "int", "numpy.ndarray",
 * "cmlx.core.DtypeCategory" (module-qualified unless a builtin). */
static PyObject *type_display_name(PyTypeObject *t) {
  if (strchr(t->tp_name, '.') || !(t->tp_flags & Py_TPFLAGS_HEAPTYPE))
    return PyUnicode_FromString(t->tp_name);
  PyObject *mod = PyObject_GetAttrString((PyObject *)t, "__module__");
  PyObject *qual = PyObject_GetAttrString((PyObject *)t, "__qualname__");
  PyObject *r = NULL;
  if (mod && qual && PyUnicode_Check(mod) && PyUnicode_CompareWithASCIIString(mod, "builtins") != 0)
    r = PyUnicode_FromFormat("%U.%U", mod, qual);
  else if (qual && PyUnicode_Check(qual))
    r = Py_NewRef(qual);
  Py_XDECREF(mod);
  Py_XDECREF(qual);
  if (!r) {
    PyErr_Clear();
    r = PyUnicode_FromString(t->tp_name);
  }
  return r;
}

/* self may also be a type object: the type being constructed. */
static int append_type_name(PyObject *list, PyObject *key, PyObject *o, bool is_self) {
  PyTypeObject *t = is_self && PyType_Check(o) ? (PyTypeObject *)o : Py_TYPE(o);
  PyObject *name = type_display_name(t);
  if (!name) return -1;
  PyObject *s = key ? PyUnicode_FromFormat("%U: %U", key, name) : Py_NewRef(name);
  Py_DECREF(name);
  int rc = s ? PyList_Append(list, s) : -1;
  Py_XDECREF(s);
  return rc;
}

static PyObject *join_list(PyObject *list) {
  PyObject *sep = PyUnicode_FromString(", ");
  PyObject *r = sep ? PyUnicode_Join(sep, list) : NULL;
  Py_XDECREF(sep);
  return r;
}

PyObject *pycm_signature_error(const char *name, const char *signature, PyObject *self,
                               PyObject *args, PyObject *kwargs) {
  PyErr_Clear(); /* replaced by the signature error */
  PyObject *types = PyList_New(0), *kw = NULL, *joined = NULL;
  if (!types) return NULL;
  if (self && append_type_name(types, NULL, self, true)) goto done;
  for (Py_ssize_t i = 0, n = args ? PyTuple_GET_SIZE(args) : 0; i < n; i++)
    if (append_type_name(types, NULL, PyTuple_GET_ITEM(args, i), false)) goto done;
  if (kwargs && PyDict_Size(kwargs) > 0) {
    PyObject *key, *value, *kwlist = PyList_New(0);
    Py_ssize_t pos = 0;
    if (!kwlist) goto done;
    while (PyDict_Next(kwargs, &pos, &key, &value))
      if (append_type_name(kwlist, key, value, false)) { Py_DECREF(kwlist); goto done; }
    PyObject *inner = join_list(kwlist);
    Py_DECREF(kwlist);
    if (!inner) goto done;
    kw = PyUnicode_FromFormat("kwargs = { %U }", inner);
    Py_DECREF(inner);
    if (!kw || PyList_Append(types, kw)) goto done;
  }
  joined = join_list(types);
  if (joined)
    PyErr_Format(PyExc_TypeError,
                 "%s(): incompatible function arguments. The following argument types are "
                 "supported:\n    1. %s\n\nInvoked with types: %U",
                 name, signature, joined);
done:
  Py_XDECREF(kw);
  Py_XDECREF(joined);
  Py_DECREF(types);
  return NULL;
}

/* ---- the module ---------------------------------------------------------- */

PyObject *pycm_add_submodule(PyObject *parent, const char *name, const char *doc) {
  const char *parent_name = PyModule_GetName(parent);
  PyObject *full = parent_name ? PyUnicode_FromFormat("%s.%s", parent_name, name) : NULL;
  PyObject *sub = full ? PyModule_NewObject(full) : NULL;
  /* In sys.modules as nanobind's def_submodule puts it, so that
   * `import cmlx.core.metal` finds the module without a file. */
  int rc = !sub || PyModule_SetDocString(sub, doc) ||
           PyDict_SetItem(PyImport_GetModuleDict(), full, sub) ||
           PyModule_AddObjectRef(parent, name, sub);
  Py_XDECREF(full);
  Py_XDECREF(sub); /* parent and sys.modules hold it */
  return rc ? NULL : sub;
}

static int add_constants(PyObject *m) {
  if (PyModule_AddObject(m, "pi", PyFloat_FromDouble(3.141592653589793)) ||
      PyModule_AddObject(m, "e", PyFloat_FromDouble(2.718281828459045)) ||
      PyModule_AddObject(m, "euler_gamma", PyFloat_FromDouble(0.5772156649015329)) ||
      PyModule_AddObject(m, "inf", PyFloat_FromDouble(INFINITY)) ||
      PyModule_AddObject(m, "nan", PyFloat_FromDouble(NAN)))
    return -1;
  Py_INCREF(Py_None);
  if (PyModule_AddObject(m, "newaxis", Py_None)) { Py_DECREF(Py_None); return -1; }
  return PyModule_AddStringConstant(m, "__version__", CMLX_PY_VERSION);
}

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "cmlx.core",
    .m_doc = "cmlx: MLX's array framework in C.",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit_core(void) {
  PyObject *m = PyModule_Create(&core_module);
  if (!m) return NULL;
  /* Order matters: arrays refer to dtypes and devices; the op bindings come
   * last so they may replace nothing but add to everything. */
  if (add_constants(m) || pycm_init_dtype(m) || pycm_init_device(m) || pycm_init_array(m) ||
      pycm_init_memory(m) || pycm_init_eval(m) || pycm_init_ops(m) ||
      pycm_init_transforms(m) || pycm_init_backends(m) || pycm_init_print(m) ||
      pycm_init_random(m) || pycm_init_io(m) || pycm_init_linalg(m) || pycm_init_fast(m) ||
      pycm_init_fft(m) || pycm_init_hadamard(m) || pycm_init_distributed(m)) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
