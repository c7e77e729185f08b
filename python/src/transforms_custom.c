/* custom_function's core half and the _gc_func type.
 *
 * _custom_function(fun, vjp, jvp, vmap, inputs) applies the core's
 * cm_custom_function with rules that call back into Python.  Every callable
 * works on flat lists of arrays (cmlx/_transforms.py rebuilds the user's
 * trees around them); vjp, jvp and vmap may be None for the default rule:
 *   fun(*inputs) -> array | list of arrays
 *   vjp(primals, cotangents, outputs) -> list of arrays, one per primal
 *   jvp(primals, tangents, argnums) -> list of arrays, one per output
 *   vmap(inputs, axes) -> (outputs, out_axes); axes use None for unbatched
 *
 * The rules run on the thread of the transform that reaches the node,
 * which holds the GIL in Python; they take it anyway.  The state is
 * released when the last node of the call goes, possibly on a stream
 * worker that must never wait for the GIL (the main thread may hold it
 * while waiting on that worker), so references are dropped later there.
 *
 * _gc_func(call, wrapped) is what grad, vmap and friends return, as in
 * MLX: calling it calls `call`; attributes (__name__, __doc__, ...) come
 * from the wrapped function. */
#include "init.h"
#include "transforms_util.h"

#include <pthread.h>
#include <stdlib.h>

#include "transforms/custom.h"

/* ---- the Python state of one call ----------------------------------------- */

typedef struct py_rules {
  PyObject *fun, *vjp, *jvp, *vmap; /* vjp/jvp/vmap may be NULL */
  struct py_rules *next;            /* on the deferred-release list */
} py_rules;

static pthread_mutex_t deferred_lock = PTHREAD_MUTEX_INITIALIZER;
static py_rules *deferred;

static void rules_free_now(py_rules *r) {
  Py_XDECREF(r->fun);
  Py_XDECREF(r->vjp);
  Py_XDECREF(r->jvp);
  Py_XDECREF(r->vmap);
  free(r);
}

/* With the GIL: drop what workers left behind. */
static int drain_deferred(void *unused) {
  (void)unused;
  pthread_mutex_lock(&deferred_lock);
  py_rules *r = deferred;
  deferred = NULL;
  pthread_mutex_unlock(&deferred_lock);
  while (r) {
    py_rules *next = r->next;
    rules_free_now(r);
    r = next;
  }
  return 0;
}

static void rules_destroy(void *ctx) {
  py_rules *r = ctx;
  if (Py_IsInitialized() && PyGILState_Check()) {
    rules_free_now(r);
    return;
  }
  pthread_mutex_lock(&deferred_lock);
  r->next = deferred;
  deferred = r;
  pthread_mutex_unlock(&deferred_lock);
  /* Best effort; the list is drained at the next custom call too. */
  if (Py_IsInitialized()) Py_AddPendingCall(drain_deferred, NULL);
}

/* ---- calling back into Python ----------------------------------------------- */

/* A result that must be a sequence of arrays (n >= 0 of them). */
static int take_arrays(PyObject *r, const char *what, cm_array ***out, int *n) {
  int rc = pytr_array_seq(r, out, n);
  if (rc < 0) return pytr_stash_exception();
  if (rc > 0)
    return cm_error(CM_ERR_VALUE, "[custom_function] The %s function must return arrays, not %s.",
                    what, pycm_short_type_name(r));
  return 0;
}

static PyObject *call3(PyObject *f, PyObject *a, PyObject *b, PyObject *c) {
  if (!a || !b || (c == NULL)) {
    Py_XDECREF(a);
    Py_XDECREF(b);
    Py_XDECREF(c);
    return NULL;
  }
  PyObject *r = c == Py_None ? PyObject_CallFunctionObjArgs(f, a, b, NULL)
                             : PyObject_CallFunctionObjArgs(f, a, b, c, NULL);
  Py_DECREF(a);
  Py_DECREF(b);
  Py_DECREF(c);
  return r;
}

static int fun_call(void *ctx, cm_array *const *in, int nin, cm_array ***out, int *nout) {
  PyGILState_STATE g = PyGILState_Ensure();
  int rc = pytr_call(((py_rules *)ctx)->fun, in, nin, out, nout, "custom_function");
  PyGILState_Release(g);
  return rc;
}

static int rule_vjp(void *ctx, cm_array *const *primals, int np, cm_array *const *cots,
                    cm_array *const *outs, int nout, cm_array ***grads, int *ngrads) {
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *r = call3(((py_rules *)ctx)->vjp, pytr_list(primals, np), pytr_list(cots, nout),
                      pytr_list(outs, nout));
  int rc = r ? take_arrays(r, "vjp", grads, ngrads) : pytr_stash_exception();
  Py_XDECREF(r);
  PyGILState_Release(g);
  return rc;
}

static int rule_jvp(void *ctx, cm_array *const *primals, int np, cm_array *const *tangents,
                    const int *argnums, int nt, cm_array ***out, int *nout) {
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *idx = PyList_New(nt);
  for (int i = 0; idx && i < nt; i++) {
    PyObject *v = PyLong_FromLong(argnums[i]);
    if (!v) Py_CLEAR(idx);
    else PyList_SET_ITEM(idx, i, v);
  }
  PyObject *r = call3(((py_rules *)ctx)->jvp, pytr_list(primals, np), pytr_list(tangents, nt), idx);
  int rc = r ? take_arrays(r, "jvp", out, nout) : pytr_stash_exception();
  Py_XDECREF(r);
  PyGILState_Release(g);
  return rc;
}

static PyObject *axes_list(const int *axes, int n) {
  PyObject *l = PyList_New(n);
  for (int i = 0; l && i < n; i++) {
    PyObject *v = axes[i] < 0 ? Py_NewRef(Py_None) : PyLong_FromLong(axes[i]);
    if (!v) Py_CLEAR(l);
    else PyList_SET_ITEM(l, i, v);
  }
  return l;
}

static int rule_vmap(void *ctx, cm_array *const *in, int nin, const int *axes, cm_array ***out,
                     int **out_axes, int *nout) {
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *r =
      call3(((py_rules *)ctx)->vmap, pytr_list(in, nin), axes_list(axes, nin), Py_NewRef(Py_None));
  int rc = r ? 0 : pytr_stash_exception();
  if (!rc && !(PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 2))
    rc = cm_error(CM_ERR_VALUE, "[custom vmap] Vmap function should return a tuple with 2 items.");
  if (!rc) rc = take_arrays(PyTuple_GET_ITEM(r, 0), "vmap", out, nout);
  PyObject *seq = NULL;
  if (!rc && !(seq = PySequence_Fast(PyTuple_GET_ITEM(r, 1), ""))) {
    PyErr_Clear();
    rc = cm_error(CM_ERR_VALUE, "[custom vmap] The vmap function must return a list of axes.");
  }
  if (!rc && PySequence_Fast_GET_SIZE(seq) != *nout)
    rc = cm_error(CM_ERR_VALUE, "[custom vmap] The vmap function returned %d outputs and %d axes.",
                  *nout, (int)PySequence_Fast_GET_SIZE(seq));
  if (!rc && !(*out_axes = malloc(sizeof(int) * (size_t)(*nout ? *nout : 1))))
    rc = cm_error(CM_ERR_MEMORY, "[custom vmap] Out of memory.");
  for (int i = 0; !rc && i < *nout; i++) {
    PyObject *it = PySequence_Fast_GET_ITEM(seq, i);
    long v = it == Py_None ? -1 : PyLong_AsLong(it);
    if (v == -1 && PyErr_Occurred()) rc = pytr_stash_exception();
    (*out_axes)[i] = (int)v;
  }
  if (rc && *out) {
    cm_array_list_free(*out, *nout);
    *out = NULL;
  }
  if (rc && *out_axes) {
    free(*out_axes);
    *out_axes = NULL;
  }
  Py_XDECREF(seq);
  Py_XDECREF(r);
  PyGILState_Release(g);
  return rc;
}

/* _custom_function(fun, vjp, jvp, vmap, inputs) -> list of arrays */
static PyObject *py_custom_function(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *fun, *vjp, *jvp, *vmap, *io;
  if (!PyArg_ParseTuple(args, "OOOOO", &fun, &vjp, &jvp, &vmap, &io)) return NULL;
  drain_deferred(NULL);
  cm_array **in = NULL, **outs = NULL;
  int n = 0, nout = 0;
  int rc = pytr_array_seq(io, &in, &n);
  if (rc) {
    if (rc > 0)
      PyErr_SetString(PyExc_TypeError, "[custom_function] inputs must be a list of arrays.");
    return NULL;
  }
  py_rules *r = calloc(1, sizeof *r);
  if (!r) {
    cm_array_list_free(in, n);
    return PyErr_NoMemory();
  }
  r->fun = Py_NewRef(fun);
  r->vjp = vjp == Py_None ? NULL : Py_NewRef(vjp);
  r->jvp = jvp == Py_None ? NULL : Py_NewRef(jvp);
  r->vmap = vmap == Py_None ? NULL : Py_NewRef(vmap);
  cm_custom_rules rules = {
      .vjp = r->vjp ? rule_vjp : NULL,
      .jvp = r->jvp ? rule_jvp : NULL,
      .vmap = r->vmap ? rule_vmap : NULL,
      .ctx = r,
      .destroy = rules_destroy,
  };
  cm_closure f = {fun_call, r};
  PyObject *res = NULL;
  if (cm_custom_function(f, &rules, in, n, &outs, &nout)) {
    pytr_raise();
  } else {
    res = pytr_list(outs, nout);
    cm_array_list_free(outs, nout);
  }
  cm_array_list_free(in, n);
  return res;
}

/* ---- _gc_func ----------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  PyObject *call, *wrapped;
  vectorcallfunc vectorcall;
} GcFunc;

static PyObject *gc_func_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                    PyObject *kwnames) {
  return PyObject_Vectorcall(((GcFunc *)self)->call, args, nargsf, kwnames);
}

static PyObject *gc_func_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *call, *wrapped;
  if (kw && PyDict_Size(kw)) {
    PyErr_SetString(PyExc_TypeError, "_gc_func() takes no keyword arguments");
    return NULL;
  }
  if (!PyArg_ParseTuple(args, "OO:_gc_func", &call, &wrapped)) return NULL;
  GcFunc *o = (GcFunc *)type->tp_alloc(type, 0);
  if (!o) return NULL;
  o->call = Py_NewRef(call);
  o->wrapped = Py_NewRef(wrapped);
  o->vectorcall = gc_func_vectorcall;
  return (PyObject *)o;
}

static int gc_func_traverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(((GcFunc *)self)->call);
  Py_VISIT(((GcFunc *)self)->wrapped);
  return 0;
}

static int gc_func_clear(PyObject *self) {
  Py_CLEAR(((GcFunc *)self)->call);
  Py_CLEAR(((GcFunc *)self)->wrapped);
  return 0;
}

static void gc_func_dealloc(PyObject *self) {
  PyObject_GC_UnTrack(self);
  gc_func_clear(self);
  Py_TYPE(self)->tp_free(self);
}

/* The wrapped function's attributes first (MLX forwards __name__, __doc__,
 * __module__, __code__, ... so that inspect and functools see the
 * function), then the object's own. */
static PyObject *gc_func_getattro(PyObject *self, PyObject *name) {
  GcFunc *g = (GcFunc *)self;
  if (g->wrapped && PyUnicode_Check(name) &&
      PyUnicode_CompareWithASCIIString(name, "__class__") != 0 &&
      PyUnicode_CompareWithASCIIString(name, "__call__") != 0) {
    PyObject *r = PyObject_GetAttr(g->wrapped, name);
    if (r || !PyErr_ExceptionMatches(PyExc_AttributeError)) return r;
    PyErr_Clear();
  }
  return PyObject_GenericGetAttr(self, name);
}

static PyTypeObject GcFunc_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cmlx.core._gc_func",
    .tp_basicsize = sizeof(GcFunc),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A function returned by a transformation (grad, vmap, ...).",
    .tp_new = gc_func_new,
    .tp_dealloc = gc_func_dealloc,
    .tp_traverse = gc_func_traverse,
    .tp_clear = gc_func_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(GcFunc, vectorcall),
    .tp_getattro = gc_func_getattro,
};

static PyMethodDef custom_methods[] = {
    {"_custom_function", py_custom_function, METH_VARARGS,
     "Internal: apply fun with custom vjp/jvp/vmap rules (flat lists of arrays)."},
    {NULL, NULL, 0, NULL},
};

int pytr_init_custom(PyObject *m) {
  if (PyType_Ready(&GcFunc_Type)) return -1;
  Py_INCREF(&GcFunc_Type);
  if (PyModule_AddObject(m, "_gc_func", (PyObject *)&GcFunc_Type)) {
    Py_DECREF(&GcFunc_Type);
    return -1;
  }
  return PyModule_AddFunctions(m, custom_methods);
}
