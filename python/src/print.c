/* MLX's print options (python/src/print.cpp in MLX): PrintOptions, the
 * _PrintOptionsContext that printoptions() returns, set_printoptions and
 * get_printoptions.  The one option, precision, lives in the core
 * (src/core/format.c) so that repr, str and the C API's tostring all
 * print with it. */
#include "cmlx_py.h"
#include "init.h"

#include <limits.h>

#include "core/format.h"

/* nanobind's int caster: an int (bool included) or an object with
 * __index__, within int's range; anything else is a TypeError naming the
 * signature (raised by the caller).  0, or -1 with no exception set. */
static int int_value(PyObject *o, int *out) {
  if (PyFloat_Check(o) || !PyIndex_Check(o)) return -1;
  int overflow;
  PyObject *i = PyNumber_Index(o);
  long long v = i ? PyLong_AsLongLongAndOverflow(i, &overflow) : -1;
  Py_XDECREF(i);
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return -1;
  }
  if (overflow || v < INT_MIN || v > INT_MAX) return -1;
  *out = (int)v;
  return 0;
}

/* The optional `precision` argument of a call (default -1).  -1 with the
 * signature TypeError raised. */
static int precision_arg(const char *fn, const char *sig, PyObject *self, PyObject *args,
                         PyObject *kw, int *out) {
  Py_ssize_t n = PyTuple_GET_SIZE(args), nk = kw ? PyDict_Size(kw) : 0;
  PyObject *o = NULL;
  bool ok = true;
  if (n == 1 && nk == 0) o = PyTuple_GET_ITEM(args, 0);
  else if (n == 0 && nk == 1) ok = (o = PyDict_GetItemString(kw, "precision")) != NULL;
  else ok = n == 0 && nk == 0;
  *out = -1;
  if (ok && (!o || int_value(o, out) == 0)) return 0;
  pycm_signature_error(fn, sig, self, args, kw);
  return -1;
}

/* ---- PrintOptions ---------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  int precision;
} PyCmPrintOptions;

static PyTypeObject PyCmPrintOptions_Type;

static int options_init(PyObject *self, PyObject *args, PyObject *kw) {
  return precision_arg("__init__", "__init__(self, precision: int = -1) -> None", self, args, kw,
                       &((PyCmPrintOptions *)self)->precision);
}

static PyObject *options_get_precision(PyObject *self, void *closure) {
  (void)closure;
  return PyLong_FromLong(((PyCmPrintOptions *)self)->precision);
}

static int options_set_precision(PyObject *self, PyObject *value, void *closure) {
  (void)closure;
  int v;
  if (value && int_value(value, &v) == 0) {
    ((PyCmPrintOptions *)self)->precision = v;
    return 0;
  }
  PyObject *args = value ? PyTuple_Pack(1, value) : PyTuple_New(0);
  if (args) pycm_signature_error("", "(self, arg: int, /) -> None", self, args, NULL);
  Py_XDECREF(args);
  return -1;
}

static PyGetSetDef options_getset[] = {
    {"precision", options_get_precision, options_set_precision, "Number of decimal places.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject PyCmPrintOptions_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cmlx.core.PrintOptions",
    .tp_basicsize = sizeof(PyCmPrintOptions),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "PrintOptions(precision: int = -1)\n\nThe options arrays print with.",
    .tp_getset = options_getset,
    .tp_init = options_init,
    .tp_new = PyType_GenericNew,
};

static PyObject *new_options(int precision) {
  PyCmPrintOptions *o = PyObject_New(PyCmPrintOptions, &PyCmPrintOptions_Type);
  if (o) o->precision = precision;
  return (PyObject *)o;
}

/* ---- _PrintOptionsContext -------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  int new_precision, old_precision;
} PyCmPrintContext;

static PyTypeObject PyCmPrintContext_Type;

static int context_init(PyObject *self, PyObject *args, PyObject *kw) {
  PyObject *o = PyTuple_GET_SIZE(args) == 1 && (!kw || PyDict_Size(kw) == 0)
                    ? PyTuple_GET_ITEM(args, 0)
                    : NULL;
  if (!o || !PyObject_TypeCheck(o, &PyCmPrintOptions_Type)) {
    pycm_signature_error("__init__", "__init__(self, arg: cmlx.core.PrintOptions, /) -> None",
                         self, args, kw);
    return -1;
  }
  PyCmPrintContext *c = (PyCmPrintContext *)self;
  c->new_precision = ((PyCmPrintOptions *)o)->precision;
  c->old_precision = cm_print_precision();
  return 0;
}

/* Entering installs the options and remembers the ones in force, which
 * exiting puts back, whatever the with-block raised. */
static PyObject *context_enter(PyObject *self, PyObject *unused) {
  (void)unused;
  PyCmPrintContext *c = (PyCmPrintContext *)self;
  c->old_precision = cm_print_precision();
  cm_set_print_precision(c->new_precision);
  return Py_NewRef(self);
}

static PyObject *context_exit(PyObject *self, PyObject *args) {
  (void)args;
  cm_set_print_precision(((PyCmPrintContext *)self)->old_precision);
  Py_RETURN_NONE;
}

static PyMethodDef context_methods[] = {
    {"__enter__", context_enter, METH_NOARGS, "__enter__(self) -> _PrintOptionsContext"},
    {"__exit__", context_exit, METH_VARARGS, "__exit__(self, *args) -> None"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PyCmPrintContext_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cmlx.core._PrintOptionsContext",
    .tp_basicsize = sizeof(PyCmPrintContext),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = context_methods,
    .tp_init = context_init,
    .tp_new = PyType_GenericNew,
};

/* ---- module functions ------------------------------------------------------ */

static PyObject *set_printoptions(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  int p;
  if (precision_arg("set_printoptions", "set_printoptions(precision: int = -1) -> None", NULL,
                    args, kw, &p))
    return NULL;
  cm_set_print_precision(p);
  Py_RETURN_NONE;
}

static PyObject *get_printoptions(PyObject *m, PyObject *unused) {
  (void)m, (void)unused;
  return new_options(cm_print_precision());
}

static PyObject *printoptions(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  int p;
  if (precision_arg("printoptions",
                    "printoptions(precision: int = -1) -> cmlx.core._PrintOptionsContext", NULL,
                    args, kw, &p))
    return NULL;
  PyCmPrintContext *c = PyObject_New(PyCmPrintContext, &PyCmPrintContext_Type);
  if (!c) return NULL;
  c->new_precision = p;
  c->old_precision = cm_print_precision();
  return (PyObject *)c;
}

static PyMethodDef print_functions[] = {
    {"set_printoptions", PYCM_METH_KW(set_printoptions),
     "set_printoptions(precision: int = -1) -> None\n\n"
     "Set global printing precision for array formatting.\n\n"
     "Args:\n    precision (int): Number of decimal places."},
    {"get_printoptions", get_printoptions, METH_NOARGS,
     "get_printoptions() -> cmlx.core.PrintOptions\n\n"
     "Get global printing precision for array formatting.\n\n"
     "Returns:\nPrintOptions: The format options used for printing arrays."},
    {"printoptions", PYCM_METH_KW(printoptions),
     "printoptions(precision: int = -1) -> cmlx.core._PrintOptionsContext\n\n"
     "Context manager for setting print options temporarily.\n\n"
     "Args:\n    precision (int): Number of decimal places. Use -1 for default"},
    {NULL, NULL, 0, NULL},
};

int pycm_init_print(PyObject *m) {
  if (pycm_add_type(m, "PrintOptions", &PyCmPrintOptions_Type) ||
      pycm_add_type(m, "_PrintOptionsContext", &PyCmPrintContext_Type))
    return -1;
  return PyModule_AddFunctions(m, print_functions);
}
