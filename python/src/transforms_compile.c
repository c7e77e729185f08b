/* mx.compile's engine binding: the _Compiled type holds one function's
 * cache of traces (transforms/compile.h).  The pytree side (flattening
 * the arguments, the constants key, captured state, rebuilding the
 * outputs) is cmlx/_compile.py.
 *
 *   _Compiled(shapeless)
 *   c.call(fun, inputs, constants, structure) -> (outputs, extra)
 *       fun(*arrays) -> list of arrays runs only when no trace matches;
 *       structure() is then called once and its result kept with the new
 *       trace; extra is the kept object of the trace used.
 *   c.clear()
 *   _set_compile_mode(int), _compile_mode() -> int */
#include "init.h"
#include "transforms_util.h"

#include <stdlib.h>

#include "transforms/compile.h"

typedef struct {
  PyObject_HEAD
  cm_compiled *c;
} PyCompiled;

static void extra_free(void *p) { Py_XDECREF((PyObject *)p); }

static int compiled_init(PyObject *self, PyObject *args, PyObject *kw) {
  int shapeless = 0;
  static char *kwlist[] = {"shapeless", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|p", kwlist, &shapeless)) return -1;
  PyCompiled *c = (PyCompiled *)self;
  cm_compiled_free(c->c);
  if (!(c->c = cm_compiled_new(shapeless, extra_free))) return pycm_raise(), -1;
  return 0;
}

static void compiled_dealloc(PyObject *self) {
  cm_compiled_free(((PyCompiled *)self)->c);
  Py_TYPE(self)->tp_free(self);
}

typedef struct {
  PyObject *fun;
} call_ctx;

static int call_fun(void *vctx, cm_array *const *in, int nin, cm_array ***out, int *nout) {
  return pytr_call(((call_ctx *)vctx)->fun, in, nin, out, nout, "compile");
}

/* The constants key: Python ints, taken modulo 2**64. */
static int constants_of(PyObject *o, uint64_t **out, int *n) {
  PyObject *seq = PySequence_Fast(o, "constants must be a sequence of ints");
  if (!seq) return -1;
  Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
  uint64_t *v = malloc(sizeof *v * (size_t)(len ? len : 1));
  if (!v) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < len; i++) {
    v[i] = PyLong_AsUnsignedLongLongMask(PySequence_Fast_GET_ITEM(seq, i));
    if (v[i] == (uint64_t)-1 && PyErr_Occurred()) {
      free(v);
      Py_DECREF(seq);
      return -1;
    }
  }
  Py_DECREF(seq);
  *out = v;
  *n = (int)len;
  return 0;
}

static PyObject *compiled_call(PyObject *self, PyObject *args) {
  PyObject *fun, *inputs, *consts, *structure;
  if (!PyArg_ParseTuple(args, "OOOO:call", &fun, &inputs, &consts, &structure)) return NULL;
  cm_array **in = NULL, **outs = NULL;
  int nin = 0, nout = 0, nconst = 0;
  uint64_t *cv = NULL;
  int rc = pytr_array_seq(inputs, &in, &nin);
  if (rc > 0) PyErr_SetString(PyExc_TypeError, "[compile] inputs must be a list of arrays.");
  if (rc) return NULL;
  if (constants_of(consts, &cv, &nconst)) {
    cm_array_list_free(in, nin);
    return NULL;
  }
  call_ctx ctx = {fun};
  void **extra = NULL;
  rc = cm_compiled_call(((PyCompiled *)self)->c, (cm_closure){call_fun, &ctx}, in, nin, cv, nconst,
                        &outs, &nout, &extra);
  cm_array_list_free(in, nin);
  free(cv);
  if (rc) return pytr_raise();
  /* structure() is kept with a new trace; without a trace (f ran inside
   * another transform's trace) it is only returned. */
  PyObject *st = extra && *extra ? Py_NewRef((PyObject *)*extra) : PyObject_CallNoArgs(structure);
  if (st && extra && !*extra) *extra = Py_NewRef(st);
  PyObject *l = st ? pytr_list(outs, nout) : NULL;
  cm_array_list_free(outs, nout);
  PyObject *r = l ? PyTuple_Pack(2, l, st) : NULL;
  Py_XDECREF(l);
  Py_XDECREF(st);
  return r;
}

static PyObject *compiled_clear(PyObject *self, PyObject *unused) {
  (void)unused;
  cm_compiled_clear(((PyCompiled *)self)->c);
  Py_RETURN_NONE;
}

static PyMethodDef compiled_methods[] = {
    {"call", compiled_call, METH_VARARGS, "Replay a matching trace, tracing fun first if none."},
    {"clear", compiled_clear, METH_NOARGS, "Forget every trace."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject Compiled_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cmlx.core._Compiled",
    .tp_basicsize = sizeof(PyCompiled),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Internal: the trace cache of one compiled function.",
    .tp_new = PyType_GenericNew,
    .tp_init = compiled_init,
    .tp_dealloc = compiled_dealloc,
    .tp_methods = compiled_methods,
};

static PyObject *py_set_compile_mode(PyObject *self, PyObject *arg) {
  (void)self;
  long m = PyLong_AsLong(arg);
  if (m == -1 && PyErr_Occurred()) return NULL;
  if (m < CM_COMPILE_DISABLED || m > CM_COMPILE_ENABLED)
    return PyErr_Format(PyExc_ValueError, "[compile] Invalid compile mode %ld.", m);
  cm_set_compile_mode((cm_compile_mode)m);
  Py_RETURN_NONE;
}

static PyObject *py_compile_mode(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  return PyLong_FromLong(cm_get_compile_mode());
}

static PyMethodDef compile_functions[] = {
    {"_set_compile_mode", py_set_compile_mode, METH_O, "Internal: set MLX's compile mode."},
    {"_compile_mode", py_compile_mode, METH_NOARGS, "Internal: the compile mode."},
    {NULL, NULL, 0, NULL},
};

int pytr_init_compile(PyObject *m) {
  if (PyType_Ready(&Compiled_Type)) return -1;
  Py_INCREF(&Compiled_Type);
  if (PyModule_AddObject(m, "_Compiled", (PyObject *)&Compiled_Type)) {
    Py_DECREF(&Compiled_Type);
    return -1;
  }
  return PyModule_AddFunctions(m, compile_functions);
}
