/* What the transform bindings share (transforms.c and its parts
 * transforms_custom.c, transforms_compile.c, transforms_export.c): Python
 * exceptions carried across the engines, lists of arrays in and out, and
 * calling the user's function.  Uses the core, util.c and the array object
 * only. */
#include "transforms_util.h"

#include <stdlib.h>

/* ---- Python exceptions across the engines -------------------------------- */

/* One per thread: the engines run on the thread that called them. */
static _Thread_local PyObject *stash_type, *stash_value, *stash_tb;

int pytr_stash_exception(void) {
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  Py_XDECREF(stash_type);
  Py_XDECREF(stash_value);
  Py_XDECREF(stash_tb);
  stash_type = t, stash_value = v, stash_tb = tb;
  return cm_error(CM_ERR_RUNTIME,
                  "[transforms] A Python exception was raised inside the function.");
}

PyObject *pytr_raise(void) {
  if (stash_type) {
    PyErr_Restore(stash_type, stash_value, stash_tb);
    stash_type = stash_value = stash_tb = NULL;
    cm_error_clear();
    return NULL;
  }
  return pycm_raise();
}

/* ---- lists of arrays ------------------------------------------------------ */

PyObject *pytr_list(cm_array *const *arrays, int n) {
  PyObject *l = PyList_New(n);
  for (int i = 0; l && i < n; i++) {
    PyObject *o = pycm_wrap(cm_retain(arrays[i]));
    if (!o) Py_CLEAR(l);
    else PyList_SET_ITEM(l, i, o);
  }
  return l;
}

/* A sequence (not str/bytes/dict) whose items are all arrays, as borrowed
 * node pointers in a malloc'd vector; 1 if o is not one (no error set). */
int pytr_array_seq(PyObject *o, cm_array ***out, int *n) {
  *out = NULL;
  *n = 0;
  /* An array counts as the sequence of its rows, as nanobind's list
   * caster takes it in MLX. */
  if (PyUnicode_Check(o) || PyBytes_Check(o) || PyDict_Check(o) ||
      (!PySequence_Check(o) && !PyCmArray_Check(o)))
    return 1;
  PyObject *seq = PySequence_Fast(o, "");
  if (!seq) {
    PyErr_Clear();
    return 1;
  }
  Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
  cm_array **v = malloc(sizeof *v * (size_t)(len ? len : 1));
  if (!v) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < len; i++) {
    PyObject *it = PySequence_Fast_GET_ITEM(seq, i);
    if (!PyCmArray_Check(it)) {
      free(v);
      Py_DECREF(seq);
      return 1;
    }
    v[i] = ((PyCmArray *)it)->arr; /* kept alive by the caller's argument */
  }
  /* Arrays from a fresh sequence (an array iterated into rows) would die
   * with seq: retain every item and let the caller release them. */
  for (Py_ssize_t i = 0; i < len; i++) cm_retain(v[i]);
  Py_DECREF(seq);
  *out = v;
  *n = (int)len;
  return 0;
}

/* Call fun(*in) and take its result: an array, or a list or tuple of
 * arrays.  Errors are core errors (Python's are stashed). */
int pytr_call(PyObject *fun, cm_array *const *in, int nin, cm_array ***out, int *nout,
              const char *who) {
  PyObject *args = PyTuple_New(nin);
  for (int i = 0; args && i < nin; i++) {
    PyObject *o = pycm_wrap(cm_retain(in[i]));
    if (!o) Py_CLEAR(args);
    else PyTuple_SET_ITEM(args, i, o);
  }
  PyObject *r = args ? PyObject_Call(fun, args, NULL) : NULL;
  Py_XDECREF(args);
  if (!r) return pytr_stash_exception();
  int rc = 0;
  if (PyCmArray_Check(r)) {
    *out = malloc(sizeof **out);
    if (!*out) rc = cm_error(CM_ERR_MEMORY, "[%s] Out of memory.", who);
    else (*out)[0] = cm_retain(((PyCmArray *)r)->arr), *nout = 1;
  } else if (PyList_Check(r) || PyTuple_Check(r)) {
    cm_array **v = NULL;
    int n = 0;
    rc = pytr_array_seq(r, &v, &n);
    if (rc < 0) rc = pytr_stash_exception();
    else if (rc > 0)
      rc = cm_error(CM_ERR_RUNTIME, "[%s] The function must return an array or a list of arrays.",
                    who);
    else *out = v, *nout = n;
  } else {
    rc = cm_error(CM_ERR_RUNTIME,
                  "[%s] The function must return an array or a list of arrays, not %s.", who,
                  pycm_short_type_name(r));
  }
  Py_DECREF(r);
  return rc;
}
