/* MLX's memory API over the allocator's counters (src/core/allocator.h). */
#include "cmlx_py.h"
#include "init.h"

static PyObject *get_active_memory(PyObject *m, PyObject *unused) {
  (void)m, (void)unused;
  return PyLong_FromSize_t(cm_memory_active());
}

static PyObject *get_peak_memory(PyObject *m, PyObject *unused) {
  (void)m, (void)unused;
  return PyLong_FromSize_t(cm_memory_peak());
}

static PyObject *reset_peak_memory(PyObject *m, PyObject *unused) {
  (void)m, (void)unused;
  cm_memory_reset_peak();
  Py_RETURN_NONE;
}

static PyObject *get_cache_memory(PyObject *m, PyObject *unused) {
  (void)m, (void)unused;
  return PyLong_FromSize_t(cm_memory_cache());
}

static PyObject *clear_cache(PyObject *m, PyObject *unused) {
  (void)m, (void)unused;
  cm_memory_clear_cache();
  Py_RETURN_NONE;
}

/* One non-negative int argument named `limit`; a negative or non-int value
 * is a TypeError, as nanobind's size_t conversion makes it in MLX. */
static int limit_arg(const char *fn, PyObject *args, PyObject *kw, size_t *out) {
  PyObject *o = NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  Py_ssize_t nk = kw ? PyDict_Size(kw) : 0;
  if (n == 1 && nk == 0) o = PyTuple_GET_ITEM(args, 0);
  else if (n == 0 && nk == 1) o = PyDict_GetItemString(kw, "limit");
  if (o && PyLong_Check(o) && !PyBool_Check(o)) {
    size_t v = PyLong_AsSize_t(o);
    if (!(v == (size_t)-1 && PyErr_Occurred())) {
      *out = v;
      return 0;
    }
    PyErr_Clear();
  }
  char sig[96];
  snprintf(sig, sizeof sig, "%s(limit: int) -> int", fn);
  pycm_signature_error(fn, sig, NULL, args, kw);
  return -1;
}

/* set_memory_limit(limit, *, relaxed=True): MLX's signature until 0.24,
 * whose relaxed=False makes the limit enforced (core/allocator.h); MLX
 * 0.32 takes the limit alone, and an error names that signature, so a
 * call MLX accepts gets MLX's messages. */
static PyObject *set_memory_limit(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  size_t v;
  int relaxed = 1;
  PyObject *r = kw ? PyDict_GetItemString(kw, "relaxed") : NULL;
  PyObject *rest = NULL;
  if (r) {
    if (!PyBool_Check(r)) {
      pycm_signature_error("set_memory_limit", "set_memory_limit(limit: int) -> int", NULL, args,
                           kw);
      return NULL;
    }
    relaxed = r == Py_True;
    if (!(rest = PyDict_Copy(kw)) || PyDict_DelItemString(rest, "relaxed")) {
      Py_XDECREF(rest);
      return NULL;
    }
    kw = rest;
  }
  int bad = limit_arg("set_memory_limit", args, kw, &v);
  Py_XDECREF(rest);
  if (bad) return NULL;
  return PyLong_FromSize_t(cm_memory_set_limit_relaxed(v, relaxed));
}

static PyObject *get_memory_limit(PyObject *m, PyObject *unused) {
  (void)m, (void)unused;
  return PyLong_FromSize_t(cm_memory_limit());
}

static PyObject *set_cache_limit(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  size_t v;
  if (limit_arg("set_cache_limit", args, kw, &v)) return NULL;
  return PyLong_FromSize_t(cm_memory_set_cache_limit(v));
}

static PyObject *set_wired_limit(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  size_t v;
  if (limit_arg("set_wired_limit", args, kw, &v)) return NULL;
  return PyLong_FromSize_t(cm_memory_set_wired_limit(v));
}

#define KW(f) PYCM_METH_KW(f)

static PyMethodDef memory_functions[] = {
    {"get_active_memory", get_active_memory, METH_NOARGS,
     "get_active_memory() -> int\n\nBytes held by arrays (not counting the cache)."},
    {"get_peak_memory", get_peak_memory, METH_NOARGS,
     "get_peak_memory() -> int\n\nThe largest active memory seen since start or the last reset."},
    {"reset_peak_memory", reset_peak_memory, METH_NOARGS, "reset_peak_memory() -> None"},
    {"get_cache_memory", get_cache_memory, METH_NOARGS,
     "get_cache_memory() -> int\n\nBytes held in the allocator's cache for reuse."},
    {"clear_cache", clear_cache, METH_NOARGS,
     "clear_cache() -> None\n\nFree the allocator's cache."},
    {"set_memory_limit", KW(set_memory_limit),
     "set_memory_limit(limit: int, *, relaxed: bool = True) -> int\n\n"
     "Set the memory limit; returns the previous one.\n\n"
     "New memory that would take active plus cache memory over the limit is\n"
     "first taken from the cache.  With ``relaxed=False`` an allocation that\n"
     "still exceeds the limit waits for scheduled tasks to complete, then\n"
     "raises MemoryError; with ``relaxed=True`` (the default) it proceeds."},
    {"get_memory_limit", get_memory_limit, METH_NOARGS, "get_memory_limit() -> int"},
    {"set_cache_limit", KW(set_cache_limit),
     "set_cache_limit(limit: int) -> int\n\nSet the cache limit; returns the previous one."},
    {"set_wired_limit", KW(set_wired_limit),
     "set_wired_limit(limit: int) -> int\n\n"
     "Set the wired limit (recorded only on CPU); returns the previous one."},
    {NULL, NULL, 0, NULL},
};

int pycm_init_memory(PyObject *m) { return PyModule_AddFunctions(m, memory_functions); }
