/* eval and async_eval over any nesting of lists, tuples and dicts.  Leaves
 * that are not arrays are ignored, as in MLX.  The GIL is released while
 * the core computes. */
#include "cmlx_py.h"
#include "init.h"

#include <stdlib.h>

typedef struct {
  cm_array **items;
  size_t len, cap;
} array_list;

/* Retained, so that another thread dropping the Python objects while the
 * GIL is released cannot free a node under the scheduler. */
static int list_push(array_list *l, cm_array *a) {
  if (l->len == l->cap) {
    size_t ncap = l->cap ? l->cap * 2 : 16;
    cm_array **n = realloc(l->items, ncap * sizeof *n);
    if (!n) {
      PyErr_NoMemory();
      return -1;
    }
    l->items = n;
    l->cap = ncap;
  }
  l->items[l->len++] = cm_retain(a);
  return 0;
}

static void list_free(array_list *l) {
  for (size_t i = 0; i < l->len; i++) cm_release(l->items[i]);
  free(l->items);
}

static int collect(PyObject *o, array_list *out) {
  if (PyCmArray_Check(o)) return list_push(out, ((PyCmArray *)o)->arr);
  bool is_seq = PyList_Check(o) || PyTuple_Check(o), is_dict = PyDict_Check(o);
  if (!is_seq && !is_dict) return 0;
  if (Py_EnterRecursiveCall(" while collecting arrays to evaluate")) return -1;
  int rc = 0;
  if (is_dict) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (!rc && PyDict_Next(o, &pos, &key, &value)) rc = collect(value, out);
  } else {
    /* A snapshot: the list may be mutated by code collect() never runs,
     * but PySequence_Fast keeps the items alive while we walk them. */
    PyObject *seq = PySequence_Fast(o, "");
    if (!seq) rc = -1;
    for (Py_ssize_t i = 0; seq && !rc && i < PySequence_Fast_GET_SIZE(seq); i++)
      rc = collect(PySequence_Fast_GET_ITEM(seq, i), out);
    Py_XDECREF(seq);
  }
  Py_LeaveRecursiveCall();
  return rc;
}

static PyObject *do_eval(PyObject *args, bool async) {
  array_list l = {0};
  if (collect(args, &l)) {
    list_free(&l);
    return NULL;
  }
  int rc = 0;
  if (l.len > (size_t)INT32_MAX) {
    PyErr_SetString(PyExc_ValueError, "[eval] Too many arrays.");
    rc = -1;
  } else if (l.len) {
    Py_BEGIN_ALLOW_THREADS
    rc = async ? cm_async_eval(l.items, (int)l.len) : cm_eval(l.items, (int)l.len);
    Py_END_ALLOW_THREADS
    if (rc) pycm_raise();
  }
  list_free(&l);
  if (rc) return NULL;
  Py_RETURN_NONE;
}

static PyObject *py_eval(PyObject *m, PyObject *args) {
  (void)m;
  return do_eval(args, false);
}

static PyObject *py_async_eval(PyObject *m, PyObject *args) {
  (void)m;
  return do_eval(args, true);
}

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
  return x < y ? -1 : x > y;
}

/* Bytes of the unique buffers behind the arrays (each counted once, at the
 * allocator's full block size); as in MLX, every array must be evaluated. */
static PyObject *py_get_array_buffer_size(PyObject *m, PyObject *args) {
  (void)m;
  array_list l = {0};
  if (collect(args, &l)) {
    list_free(&l);
    return NULL;
  }
  cm_buffer **bufs = malloc((l.len ? l.len : 1) * sizeof *bufs);
  if (!bufs) {
    list_free(&l);
    return PyErr_NoMemory();
  }
  size_t nb = 0, total = 0;
  for (size_t i = 0; i < l.len; i++) {
    if (!cm_is_evaluated(l.items[i])) {
      free(bufs);
      list_free(&l);
      PyErr_SetString(PyExc_ValueError, "[get_array_buffer_size] Arrays must be evaluated before "
                                        "querying buffer size.");
      return NULL;
    }
    if (l.items[i]->buf) bufs[nb++] = l.items[i]->buf;
  }
  qsort(bufs, nb, sizeof *bufs, cmp_ptr);
  for (size_t i = 0; i < nb; i++)
    if (i == 0 || bufs[i] != bufs[i - 1])
      total += bufs[i]->wrapped ? bufs[i]->nbytes : bufs[i]->size;
  free(bufs);
  list_free(&l);
  return PyLong_FromSize_t(total);
}

static PyMethodDef eval_functions[] = {
    {"eval", py_eval, METH_VARARGS,
     "eval(*args) -> None\n\nEvaluate each array in args.  args may be arrays or trees "
     "(lists, tuples, dicts) of arrays; other leaves are ignored."},
    {"async_eval", py_async_eval, METH_VARARGS,
     "async_eval(*args) -> None\n\nStart evaluating the arrays in args and return at once."},
    {"get_array_buffer_size", py_get_array_buffer_size, METH_VARARGS,
     "get_array_buffer_size(*args) -> int\n\nSize in bytes of the unique buffers backing the "
     "arrays in args (trees allowed; other leaves ignored)."},
    {NULL, NULL, 0, NULL},
};

int pycm_init_eval(PyObject *m) { return PyModule_AddFunctions(m, eval_functions); }
