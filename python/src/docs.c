/* Docstrings: puts the texts of python/docs/<family>.txt (embedded at build time
 * as pycm_doc_text, see CMakeLists.txt) on the public callables and classes
 * of cmlx.core and its submodules, once the module is built.
 *
 * Why one pass at the end instead of a doc in each binding: the texts are
 * prose, kept out of the C tables so they read and diff as text; the
 * bindings keep MLX's signature line(s), which stay first in __doc__ (the
 * tests, api_diff and gen_stubs read them), and the pass appends the text
 * after a blank line.
 *
 * Text format: a line "== <key>" opens an entry, <key> being the name under
 * cmlx.core: "exp", "linalg.norm", "array.reshape", "Stream.device".  The
 * lines up to the next "== " are its text (trailing blank lines dropped).
 * Lines before a file's first entry are that file's comment.  An array
 * method with no entry of its own ("array.exp") borrows the function's
 * ("exp"), since the method is the function with self as first argument.
 *
 * The parsed entries are also cmlx.core._docs (a dict), for the docstring
 * test and scripts/gen_stubs.py. */
#include "argparse.h"
#include "init.h"

#include <structmember.h>
#include <string.h>

extern const char pycm_doc_text[];

/* key -> text, from the embedded files */
static PyObject *parse_entries(void) {
  PyObject *d = PyDict_New();
  if (!d) return NULL;
  const char *p = pycm_doc_text, *key = NULL, *body = NULL;
  size_t keylen = 0;
  for (;;) {
    int at_end = !*p, header = !strncmp(p, "== ", 3);
    if ((at_end || header) && key) {
      /* close the open entry: [body, p) without its trailing blank lines */
      const char *e = p;
      while (e > body && (e[-1] == '\n' || e[-1] == ' ')) e--;
      PyObject *k = PyUnicode_FromStringAndSize(key, (Py_ssize_t)keylen);
      PyObject *v = PyUnicode_FromStringAndSize(body, e - body);
      int bad = !k || !v || PyDict_SetItem(d, k, v);
      Py_XDECREF(k);
      Py_XDECREF(v);
      if (bad) { Py_DECREF(d); return NULL; }
      key = NULL;
    }
    if (at_end) break;
    const char *nl = strchr(p, '\n');
    const char *next = nl ? nl + 1 : p + strlen(p);
    if (header) {
      key = p + 3;
      keylen = (size_t)((nl ? nl : next) - key);
      while (keylen && key[keylen - 1] == ' ') keylen--;
      body = next;
    }
    p = next;
  }
  return d;
}

/* The leading lines of an existing doc that are name's signature
 * ("exp(a: array, ...) -> array", one per overload); length in bytes. */
static size_t signature_prefix(const char *doc, const char *name) {
  size_t n = strlen(name), end = 0;
  const char *p = doc;
  while (*p) {
    const char *q = p;
    while (*q == ' ') q++;
    if (strncmp(q, name, n) || q[n] != '(') break;
    const char *nl = strchr(q, '\n');
    end = (size_t)((nl ? nl : q + strlen(q)) - doc);
    if (!nl) break;
    p = nl + 1;
  }
  return end;
}

/* The new doc for an object now documented as old (may be NULL), or NULL
 * when there is no entry for it (old stays).  Kept for the process's life:
 * PyMethodDef and PyGetSetDef point at it, and they are static. */
static const char *compose(PyObject *docs, const char *key, const char *name, const char *old,
                           const char *borrowed_from) {
  PyObject *t = PyDict_GetItemString(docs, key);
  const char *fallback = NULL;
  if (!t && borrowed_from) {
    t = PyDict_GetItemString(docs, borrowed_from);
    fallback = "Method form of cmlx.core.";
  }
  if (!t) return NULL;
  const char *text = PyUnicode_AsUTF8(t);
  if (!text) return NULL;
  size_t sig = old ? signature_prefix(old, name) : 0;
  size_t len = sig + strlen(text) + (fallback ? strlen(fallback) + strlen(borrowed_from) + 64 : 0) + 4;
  char *doc = PyMem_RawMalloc(len), *w = doc;
  if (!doc) return NULL;
  if (sig) {
    memcpy(w, old, sig);
    w += sig;
    w += sprintf(w, "\n\n");
  }
  if (fallback) w += sprintf(w, "%s%s, with this array as its first argument.\n\n", fallback, borrowed_from);
  strcpy(w, text);
  return doc;
}

/* Where o's doc is kept, when o is a builtin callable or descriptor whose
 * doc can be replaced; NULL otherwise (Python functions have their own). */
static const char **doc_slot(PyObject *o) {
  if (PyCFunction_Check(o)) return &((PyCFunctionObject *)o)->m_ml->ml_doc;
  if (Py_IS_TYPE(o, &PyMethodDescr_Type) || Py_IS_TYPE(o, &PyClassMethodDescr_Type))
    return &((PyMethodDescrObject *)o)->d_method->ml_doc;
  if (Py_IS_TYPE(o, &PyGetSetDescr_Type)) return &((PyGetSetDescrObject *)o)->d_getset->doc;
  if (Py_IS_TYPE(o, &PyMemberDescr_Type)) return &((PyMemberDescrObject *)o)->d_member->doc;
  return pa_opfunc_doc_slot(o);
}

static void apply_callable(PyObject *docs, PyObject *o, const char *key, const char *name,
                           const char *borrowed_from) {
  if (Py_IS_TYPE(o, &PyStaticMethod_Type) || Py_IS_TYPE(o, &PyClassMethod_Type)) {
    PyObject *f = PyObject_GetAttrString(o, "__func__");
    if (f) apply_callable(docs, f, key, name, borrowed_from);
    Py_XDECREF(f);
    PyErr_Clear();
    return;
  }
  const char **slot = doc_slot(o);
  if (!slot) return;
  const char *doc = compose(docs, key, name, *slot, borrowed_from);
  if (doc) *slot = doc;
  PyErr_Clear();
}

/* The class's own doc, then its methods and properties ("Stream.device"). */
static int apply_type(PyObject *docs, PyTypeObject *t, const char *key) {
  const char *name = strrchr(key, '.') ? strrchr(key, '.') + 1 : key;
  PyObject *d = PyObject_GetAttrString((PyObject *)t, "__doc__");
  const char *old = d && PyUnicode_Check(d) ? PyUnicode_AsUTF8(d) : NULL;
  PyErr_Clear();
  const char *doc = compose(docs, key, name, old, NULL);
  Py_XDECREF(d);
  if (doc) {
    PyObject *s = PyUnicode_FromString(doc);
    /* a static type's __doc__ cannot be assigned from Python, and reading
     * it returns tp_doc; so set tp_doc (kept for the process's life, like
     * the type) and the dict entry, and tell the attribute cache */
    int heap = (t->tp_flags & Py_TPFLAGS_HEAPTYPE) != 0;
    int bad = !s || (heap ? PyObject_SetAttrString((PyObject *)t, "__doc__", s)
                          : PyDict_SetItemString(t->tp_dict, "__doc__", s));
    Py_XDECREF(s);
    if (heap) PyMem_RawFree((void *)doc);
    else t->tp_doc = doc;
    if (bad) return -1;
    PyType_Modified(t);
  }
  int is_array = !strcmp(key, "array");
  PyObject *k, *v;
  Py_ssize_t pos = 0;
  while (PyDict_Next(t->tp_dict, &pos, &k, &v)) {
    const char *m = PyUnicode_AsUTF8(k);
    if (!m || m[0] == '_') continue;
    char sub[512];
    snprintf(sub, sizeof sub, "%s.%s", key, m);
    /* only methods borrow: array.real, a property, is not mx.real */
    int method = Py_IS_TYPE(v, &PyMethodDescr_Type);
    apply_callable(docs, v, sub, m, is_array && method ? m : NULL);
  }
  return 0;
}

/* Our classes only: a module attribute may be a builtin type (an alias). */
static int is_ours(PyTypeObject *t) {
  if (!strncmp(t->tp_name, "cmlx.", 5)) return 1;
  PyObject *mod = PyObject_GetAttrString((PyObject *)t, "__module__");
  const char *m = mod && PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : NULL;
  int r = m && !strncmp(m, "cmlx.core", 9);
  Py_XDECREF(mod);
  PyErr_Clear();
  return r;
}

static int apply_module(PyObject *docs, PyObject *mod, const char *prefix) {
  PyObject *k, *v;
  Py_ssize_t pos = 0;
  PyObject *dict = PyModule_GetDict(mod);
  while (PyDict_Next(dict, &pos, &k, &v)) {
    const char *name = PyUnicode_AsUTF8(k);
    if (!name || name[0] == '_') continue;
    char key[256];
    snprintf(key, sizeof key, "%s%s", prefix, name);
    if (PyModule_Check(v)) {
      /* submodules one level down: cmlx.core.linalg, cmlx.core.random, ... */
      const char *mn = PyModule_GetName(v);
      if (!*prefix && mn && !strncmp(mn, "cmlx.core.", 10)) {
        char sub[256];
        snprintf(sub, sizeof sub, "%s.", mn + 10);
        if (apply_module(docs, v, sub)) return -1;
      }
      PyErr_Clear();
    } else if (PyType_Check(v)) {
      if (is_ours((PyTypeObject *)v) && apply_type(docs, (PyTypeObject *)v, key)) return -1;
    } else {
      apply_callable(docs, v, key, name, NULL);
    }
  }
  return 0;
}

int pycm_init_docs(PyObject *m) {
  PyObject *docs = parse_entries();
  if (!docs) return -1;
  if (apply_module(docs, m, "")) {
    Py_DECREF(docs);
    return -1;
  }
  return PyModule_AddObject(m, "_docs", docs) ? (Py_DECREF(docs), -1) : 0;
}
