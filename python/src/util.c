/* What every binding file shares: the bridge from the core's error state to
 * Python exceptions, eval with the GIL released, nanobind's "incompatible
 * function arguments" TypeError, and registration of submodules, types and
 * enums.  The bottom layer of python/src: it uses the core and CPython
 * only, no other file of the extension. */
#include "util.h"

#include <string.h>

/* ---- errors and eval ----------------------------------------------------- */

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

/* ---- "name(): incompatible function arguments ..." ------------------------
 * in the form nanobind prints for MLX, so a wrong argument type reads the
 * same in both. */

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

/* ---- registration -------------------------------------------------------- */

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

/* enum.Enum(name, [(member, value), ...], module=..., qualname=...): a real
 * Python enum, which is what MLX's DtypeCategory and DeviceType are. */
PyObject *pycm_make_enum(const char *name, const char *const *members, int n) {
  PyObject *enum_mod = PyImport_ImportModule("enum");
  if (!enum_mod) return NULL;
  PyObject *Enum = PyObject_GetAttrString(enum_mod, "Enum");
  Py_DECREF(enum_mod);
  if (!Enum) return NULL;
  PyObject *list = PyList_New(n), *args = NULL, *kw = NULL, *cls = NULL;
  if (!list) goto done;
  for (int i = 0; i < n; i++) {
    PyObject *item = Py_BuildValue("(si)", members[i], i);
    if (!item) goto done;
    PyList_SET_ITEM(list, i, item);
  }
  args = Py_BuildValue("(sO)", name, list);
  kw = Py_BuildValue("{s:s,s:s}", "module", "cmlx.core", "qualname", name);
  if (args && kw) cls = PyObject_Call(Enum, args, kw);
  /* nanobind's enums print as "DtypeCategory.floating" in repr too. */
  if (cls) {
    PyObject *str = PyObject_GetAttrString(Enum, "__str__");
    if (!str || PyObject_SetAttrString(cls, "__repr__", str)) Py_CLEAR(cls);
    Py_XDECREF(str);
  }
done:
  Py_XDECREF(list);
  Py_XDECREF(args);
  Py_XDECREF(kw);
  Py_DECREF(Enum);
  return cls;
}

int pycm_add_type(PyObject *m, const char *name, PyTypeObject *t) {
  if (PyType_Ready(t)) return -1;
  Py_INCREF(t);
  if (PyModule_AddObject(m, name, (PyObject *)t)) { Py_DECREF(t); return -1; }
  return 0;
}

/* The enum class and each member stay referenced by the caller's tables
 * forever, so every object handed to the module gets its own reference. */
PyObject *pycm_add_enum(PyObject *m, const char *name, const char *const *members, int n,
                        PyObject **member_objs) {
  PyObject *cls = pycm_make_enum(name, members, n);
  if (!cls) return NULL;
  for (int i = 0; i < n; i++) {
    member_objs[i] = PyObject_GetAttrString(cls, members[i]);
    if (!member_objs[i]) return NULL;
    Py_INCREF(member_objs[i]);
    if (PyModule_AddObject(m, members[i], member_objs[i])) {
      Py_DECREF(member_objs[i]);
      return NULL;
    }
  }
  Py_INCREF(cls);
  if (PyModule_AddObject(m, name, cls)) { Py_DECREF(cls); return NULL; }
  return cls;
}
