/* The engine side of mx.export_function, mx.import_function, mx.exporter
 * and mx.export_to_dot (transforms/export.h).  Argument handling and the
 * public functions are cmlx/_export.py.
 *
 *   _Exporter(file, shapeless, metadata)      .add(fun, args, keys, kwvals), .close()
 *   _export_visit(callback, fun, args, keys, kwvals, shapeless)
 *   _Imported(file)                           .call(args, keys, kwvals) -> list, .metadata
 *   _export_to_dot(arrays, names) -> str      names: list of (array, str)
 *
 * fun(*arrays) returns a list of arrays (the flat inputs: args then the
 * keyword arrays in sorted key order). */
#include "init.h"
#include "transforms_util.h"

#include <stdlib.h>
#include <string.h>

#include "transforms/export.h"

typedef struct {
  PyObject *fun;
} call_ctx;

static int call_fun(void *vctx, cm_array *const *in, int nin, cm_array ***out, int *nout) {
  return pytr_call(((call_ctx *)vctx)->fun, in, nin, out, nout, "export_function");
}

/* keys (list of str) and values (list of arrays) of the keyword inputs. */
typedef struct flat_in {
  cm_array **args, **kw;
  int nargs, nkw;
  const char **keys;
} flat_in;

static void flat_free(flat_in *f) {
  cm_array_list_free(f->args, f->nargs);
  cm_array_list_free(f->kw, f->nkw);
  free(f->keys);
}

static int flat_parse(PyObject *args, PyObject *keys, PyObject *kwvals, flat_in *f) {
  memset(f, 0, sizeof *f);
  if (pytr_array_seq(args, &f->args, &f->nargs) || pytr_array_seq(kwvals, &f->kw, &f->nkw)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "expected lists of arrays");
    flat_free(f);
    return -1;
  }
  Py_ssize_t nk = PyList_Check(keys) ? PyList_GET_SIZE(keys) : -1;
  if (nk != f->nkw || !(f->keys = malloc(sizeof *f->keys * (size_t)(nk + 1)))) {
    PyErr_SetString(PyExc_TypeError, "keys must be a list of str, one per keyword array");
    flat_free(f);
    return -1;
  }
  for (Py_ssize_t i = 0; i < nk; i++)
    if (!(f->keys[i] = PyUnicode_AsUTF8(PyList_GET_ITEM(keys, i)))) {
      flat_free(f);
      return -1;
    }
  return 0;
}

/* ---- _Exporter ---- */

typedef struct {
  PyObject_HEAD
  cm_exporter *x;
} PyExporter;

static int exporter_init(PyObject *self, PyObject *args, PyObject *kw) {
  const char *file, *meta = "";
  Py_ssize_t mlen = 0;
  int shapeless = 0;
  static char *kwlist[] = {"file", "shapeless", "metadata", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "s|ps#", kwlist, &file, &shapeless, &meta, &mlen))
    return -1;
  PyExporter *e = (PyExporter *)self;
  cm_exporter_free(e->x);
  if (!(e->x = cm_exporter_new(file, shapeless, meta, (size_t)mlen))) return pycm_raise(), -1;
  return 0;
}

static void exporter_dealloc(PyObject *self) {
  cm_exporter_free(((PyExporter *)self)->x);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *exporter_add(PyObject *self, PyObject *a) {
  PyObject *fun, *args, *keys, *kwvals;
  if (!PyArg_ParseTuple(a, "OOOO:add", &fun, &args, &keys, &kwvals)) return NULL;
  flat_in f;
  if (flat_parse(args, keys, kwvals, &f)) return NULL;
  call_ctx ctx = {fun};
  int rc = cm_exporter_add(((PyExporter *)self)->x, (cm_closure){call_fun, &ctx}, f.args, f.nargs,
                           f.keys, f.kw, f.nkw);
  flat_free(&f);
  if (rc) return pytr_raise();
  Py_RETURN_NONE;
}

static PyObject *exporter_close(PyObject *self, PyObject *unused) {
  (void)unused;
  cm_exporter_close(((PyExporter *)self)->x);
  Py_RETURN_NONE;
}

static PyMethodDef exporter_methods[] = {
    {"add", exporter_add, METH_VARARGS, "Trace fun on the inputs and append the trace."},
    {"close", exporter_close, METH_NOARGS, "Refuse further traces."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject Exporter_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cmlx.core._Exporter",
    .tp_basicsize = sizeof(PyExporter),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Internal: an .mlxfn file being written.",
    .tp_new = PyType_GenericNew,
    .tp_init = exporter_init,
    .tp_dealloc = exporter_dealloc,
    .tp_methods = exporter_methods,
};

/* ---- the callback form ---- */

typedef struct visit_ctx {
  PyObject *callback;
  cm_node_namer *namer;
} visit_ctx;

static PyObject *shape_list(const cm_array *a) {
  PyObject *l = PyList_New(a->ndim);
  for (int i = 0; l && i < a->ndim; i++) PyList_SET_ITEM(l, i, PyLong_FromLong(a->shape[i]));
  return l;
}

static PyObject *describe(visit_ctx *v, cm_array *const *a, int n) {
  PyObject *l = PyList_New(n);
  for (int i = 0; l && i < n; i++) {
    const char *name = cm_node_namer_get(v->namer, a[i]);
    PyObject *t =
        name ? Py_BuildValue("(sNO)", name, shape_list(a[i]), pycm_dtype_object(a[i]->dtype))
             : NULL;
    if (!t) {
      Py_DECREF(l);
      return NULL;
    }
    PyList_SET_ITEM(l, i, t);
  }
  return l;
}

static int emit(visit_ctx *v, const char *type, const char *key, PyObject *value) {
  if (!value) return pytr_stash_exception();
  PyObject *d = Py_BuildValue("{s:s,s:N}", "type", type, key, value);
  PyObject *r = d ? PyObject_CallOneArg(v->callback, d) : NULL;
  Py_XDECREF(d);
  if (!r) return pytr_stash_exception();
  Py_DECREF(r);
  return 0;
}

static int v_inputs(void *ctx, cm_array *const *in, int nin, const char *const *kw, int nkw) {
  visit_ctx *v = ctx;
  if (emit(v, "inputs", "inputs", describe(v, in, nin))) return -1;
  PyObject *l = PyList_New(nkw);
  for (int j = 0; l && j < nkw; j++) {
    const char *name = cm_node_namer_get(v->namer, in[nin - nkw + j]);
    PyObject *t = Py_BuildValue("(ss)", kw[j], name ? name : "");
    if (!t) Py_CLEAR(l);
    else PyList_SET_ITEM(l, j, t);
  }
  return emit(v, "keyword_inputs", "keywords", l);
}

static int v_outputs(void *ctx, cm_array *const *out, int nout) {
  visit_ctx *v = ctx;
  return emit(v, "outputs", "outputs", describe(v, out, nout));
}

static int v_constants(void *ctx, cm_array *const *c, int n) {
  visit_ctx *v = ctx;
  PyObject *l = PyList_New(n);
  for (int i = 0; l && i < n; i++) {
    const char *name = cm_node_namer_get(v->namer, c[i]);
    PyObject *t = Py_BuildValue("(sN)", name ? name : "", pycm_wrap(cm_retain(c[i])));
    if (!t) Py_CLEAR(l);
    else PyList_SET_ITEM(l, i, t);
  }
  for (int i = 0; i < n; i++) cm_release(c[i]); /* handed over retained */
  return emit(v, "constants", "constants", l);
}

static PyObject *state_item(const cm_state_item *it) {
  switch (it->kind) {
  case CM_STATE_INT: return PyLong_FromLongLong(it->i);
  case CM_STATE_FLOAT: return PyFloat_FromDouble(it->f);
  case CM_STATE_BOOL: return PyBool_FromLong((long)it->i);
  case CM_STATE_DTYPE: return Py_NewRef(pycm_dtype_object((cm_dtype)it->i));
  case CM_STATE_STR: return PyUnicode_FromStringAndSize(it->str, it->n);
  case CM_STATE_INTS: {
    PyObject *l = PyList_New(it->n);
    for (int i = 0; l && i < it->n; i++) PyList_SET_ITEM(l, i, PyLong_FromLongLong(it->v[i]));
    return l;
  }
  }
  return Py_NewRef(Py_None);
}

static int v_primitive(void *ctx, const char *name, cm_array *const *in, int nin,
                       cm_array *const *out, int nout, const cm_state_item *st, int nst) {
  visit_ctx *v = ctx;
  PyObject *args = PyList_New(nst);
  for (int i = 0; args && i < nst; i++) {
    PyObject *x = state_item(&st[i]);
    if (!x) Py_CLEAR(args);
    else PyList_SET_ITEM(args, i, x);
  }
  PyObject *ins = args ? describe(v, in, nin) : NULL;
  PyObject *outs = ins ? describe(v, out, nout) : NULL;
  PyObject *d = outs ? Py_BuildValue("{s:s,s:N,s:N,s:s,s:N}", "type", "primitive", "inputs", ins,
                                     "outputs", outs, "name", name, "arguments", args)
                     : NULL;
  if (!outs) Py_XDECREF(ins), Py_XDECREF(args);
  PyObject *r = d ? PyObject_CallOneArg(v->callback, d) : NULL;
  Py_XDECREF(d);
  if (!r) return pytr_stash_exception();
  Py_DECREF(r);
  return 0;
}

static PyObject *py_export_visit(PyObject *self, PyObject *a) {
  (void)self;
  PyObject *callback, *fun, *args, *keys, *kwvals;
  int shapeless = 0;
  if (!PyArg_ParseTuple(a, "OOOOOp:_export_visit", &callback, &fun, &args, &keys, &kwvals,
                        &shapeless))
    return NULL;
  flat_in f;
  if (flat_parse(args, keys, kwvals, &f)) return NULL;
  visit_ctx v = {callback, cm_node_namer_new()};
  cm_export_visitor vis = {&v, v_inputs, v_outputs, v_constants, v_primitive};
  cm_exporter *x = v.namer ? cm_exporter_new_visitor(vis, shapeless) : NULL;
  call_ctx ctx = {fun};
  int rc =
      x ? cm_exporter_add(x, (cm_closure){call_fun, &ctx}, f.args, f.nargs, f.keys, f.kw, f.nkw)
        : -1;
  cm_exporter_free(x);
  cm_node_namer_free(v.namer);
  flat_free(&f);
  if (rc) return pytr_raise();
  Py_RETURN_NONE;
}

/* ---- _Imported ---- */

typedef struct {
  PyObject_HEAD
  cm_imported *f;
} PyImported;

static int imported_init(PyObject *self, PyObject *args, PyObject *kw) {
  const char *file;
  static char *kwlist[] = {"file", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "s", kwlist, &file)) return -1;
  PyImported *im = (PyImported *)self;
  cm_imported_free(im->f);
  Py_BEGIN_ALLOW_THREADS
  im->f = cm_import_function(file);
  Py_END_ALLOW_THREADS
  if (!im->f) return pycm_raise(), -1;
  return 0;
}

static void imported_dealloc(PyObject *self) {
  cm_imported_free(((PyImported *)self)->f);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *imported_call(PyObject *self, PyObject *a) {
  PyObject *args, *keys, *kwvals;
  if (!PyArg_ParseTuple(a, "OOO:call", &args, &keys, &kwvals)) return NULL;
  flat_in f;
  if (flat_parse(args, keys, kwvals, &f)) return NULL;
  cm_array **outs = NULL;
  int nout = 0;
  int rc =
      cm_imported_call(((PyImported *)self)->f, f.args, f.nargs, f.keys, f.kw, f.nkw, &outs, &nout);
  flat_free(&f);
  if (rc) return pycm_raise();
  PyObject *l = pytr_list(outs, nout);
  cm_array_list_free(outs, nout);
  return l;
}

static PyObject *imported_metadata(PyObject *self, void *closure) {
  (void)closure;
  size_t len;
  const char *m = cm_imported_metadata(((PyImported *)self)->f, &len);
  return PyUnicode_DecodeUTF8(m, (Py_ssize_t)len, "replace");
}

static PyMethodDef imported_methods[] = {
    {"call", imported_call, METH_VARARGS, "Run the trace matching the inputs."},
    {NULL, NULL, 0, NULL},
};
static PyGetSetDef imported_getset[] = {
    {"metadata", imported_metadata, NULL, "The file's metadata string.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject Imported_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cmlx.core._Imported",
    .tp_basicsize = sizeof(PyImported),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Internal: a function read from an .mlxfn file.",
    .tp_new = PyType_GenericNew,
    .tp_init = imported_init,
    .tp_dealloc = imported_dealloc,
    .tp_methods = imported_methods,
    .tp_getset = imported_getset,
};

/* ---- dot ---- */

typedef struct strbuf {
  char *p;
  size_t len, cap;
} strbuf;

static int sb_sink(void *ctx, const char *text, size_t len) {
  strbuf *b = ctx;
  if (b->len + len + 1 > b->cap) {
    size_t c = b->cap ? b->cap : 1024;
    while (c < b->len + len + 1) c *= 2;
    char *n = realloc(b->p, c);
    if (!n) return cm_error(CM_ERR_MEMORY, "[export_to_dot] Out of memory.");
    b->p = n, b->cap = c;
  }
  memcpy(b->p + b->len, text, len);
  b->len += len;
  return 0;
}

static PyObject *py_export_to_dot(PyObject *self, PyObject *a) {
  (void)self;
  PyObject *arrays, *names;
  int print = 0;
  if (!PyArg_ParseTuple(a, "OO|p:_export_to_dot", &arrays, &names, &print)) return NULL;
  cm_array **outs = NULL;
  int n = 0;
  if (pytr_array_seq(arrays, &outs, &n)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "expected a list of arrays");
    return NULL;
  }
  cm_node_namer *nm = cm_node_namer_new();
  int rc = nm ? 0 : -1;
  Py_ssize_t nn = PyList_Check(names) ? PyList_GET_SIZE(names) : 0;
  for (Py_ssize_t i = 0; !rc && i < nn; i++) {
    PyObject *t = PyList_GET_ITEM(names, i);
    cm_array *x = NULL;
    const char *s = PyTuple_Check(t) && PyTuple_GET_SIZE(t) == 2
                        ? PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, 1))
                        : NULL;
    if (!s || !(x = pycm_to_array(PyTuple_GET_ITEM(t, 0), -1))) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "names must be (array, str) pairs");
      cm_node_namer_free(nm);
      cm_array_list_free(outs, n);
      return NULL;
    }
    rc = cm_node_namer_set(nm, x, s);
    cm_release(x);
  }
  strbuf b = {0};
  if (!rc)
    rc = print ? cm_print_graph(sb_sink, &b, nm, outs, n)
               : cm_export_to_dot(sb_sink, &b, nm, outs, n);
  cm_node_namer_free(nm);
  cm_array_list_free(outs, n);
  PyObject *r = rc ? pycm_raise() : PyUnicode_FromStringAndSize(b.p ? b.p : "", (Py_ssize_t)b.len);
  free(b.p);
  return r;
}

static PyMethodDef export_functions[] = {
    {"_export_visit", py_export_visit, METH_VARARGS, "Internal: export to a callback."},
    {"_export_to_dot", py_export_to_dot, METH_VARARGS, "Internal: the dot text of a graph."},
    {NULL, NULL, 0, NULL},
};

int pytr_init_export(PyObject *m) {
  PyTypeObject *types[] = {&Exporter_Type, &Imported_Type};
  const char *names[] = {"_Exporter", "_Imported"};
  for (int i = 0; i < 2; i++) {
    if (PyType_Ready(types[i])) return -1;
    Py_INCREF(types[i]);
    if (PyModule_AddObject(m, names[i], (PyObject *)types[i])) {
      Py_DECREF(types[i]);
      return -1;
    }
  }
  return PyModule_AddFunctions(m, export_functions);
}
