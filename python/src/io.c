/* mx.load, mx.save, mx.savez, mx.savez_compressed, mx.save_safetensors,
 * mx.save_gguf: argument handling as MLX's python/src/load.cpp does it
 * (paths, pathlib.Path, file objects with readinto/write + seek + tell +
 * closed; format from the extension; arrays from file objects evaluated
 * at once), over the core's readers and writers (src/io).  A Python
 * exception raised by a file object's method is re-raised as it is. */
#include "io/io.h"
#include "cmlx_py.h"
#include "init.h"

/* ---- Python file objects as readers and writers ---- */

typedef struct pyfile {
  PyObject *file;
  long long base;                   /* the position at creation: offsets count from it */
  PyObject *exc, *exc_val, *exc_tb; /* the first Python exception a method raised */
} pyfile;

static void pyfile_stash(pyfile *f) {
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  if (!f->exc) {
    f->exc = t, f->exc_val = v, f->exc_tb = tb;
  } else {
    Py_XDECREF(t), Py_XDECREF(v), Py_XDECREF(tb);
  }
}

static int py_seek(pyfile *f, long long pos, int whence) {
  PyObject *r = PyObject_CallMethod(f->file, "seek", "Li", pos, whence);
  if (!r) return -1;
  Py_DECREF(r);
  return 0;
}

static int py_tell(pyfile *f, long long *out) {
  PyObject *r = PyObject_CallMethod(f->file, "tell", NULL);
  if (!r) return -1;
  *out = PyLong_AsLongLong(r);
  Py_DECREF(r);
  return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

static int pyreader_read_at(void *ctx, void *dst, size_t n, uint64_t off) {
  pyfile *f = ctx;
  PyGILState_STATE g = PyGILState_Ensure();
  int rc = py_seek(f, f->base + (long long)off, 0);
  size_t got = 0;
  while (!rc && got < n) {
    size_t chunk = n - got < ((size_t)1 << 30) ? n - got : ((size_t)1 << 30);
    PyObject *mv = PyMemoryView_FromMemory((char *)dst + got, (Py_ssize_t)chunk, PyBUF_WRITE);
    PyObject *r = mv ? PyObject_CallMethod(f->file, "readinto", "O", mv) : NULL;
    if (mv) {
      PyObject *rel = PyObject_CallMethod(mv, "release", NULL);
      Py_XDECREF(rel);
      if (!rel) PyErr_Clear();
      Py_DECREF(mv);
    }
    if (!r) {
      rc = -1;
      break;
    }
    long long k = r == Py_None ? 0 : PyLong_AsLongLong(r);
    Py_DECREF(r);
    if (k <= 0) break;
    got += (size_t)k;
  }
  if (rc) pyfile_stash(f);
  PyGILState_Release(g);
  if (rc || got < n) return cm_error(CM_ERR_RUNTIME, "[load] Failed to read from python stream");
  return 0;
}

static int pyreader_size(void *ctx, uint64_t *out) {
  pyfile *f = ctx;
  PyGILState_STATE g = PyGILState_Ensure();
  long long end = 0;
  int rc = py_seek(f, 0, 2) || py_tell(f, &end) || py_seek(f, f->base, 0) ? -1 : 0;
  if (rc) pyfile_stash(f);
  PyGILState_Release(g);
  if (rc) return cm_error(CM_ERR_RUNTIME, "[load] Failed to read from python stream");
  *out = end > f->base ? (uint64_t)(end - f->base) : 0;
  return 0;
}

static void pyfile_close(void *ctx) {
  pyfile *f = ctx;
  PyGILState_STATE g = PyGILState_Ensure();
  Py_DECREF(f->file);
  Py_XDECREF(f->exc), Py_XDECREF(f->exc_val), Py_XDECREF(f->exc_tb);
  PyGILState_Release(g);
  PyMem_RawFree(f);
}

static int pywriter_write(void *ctx, const void *src, size_t n) {
  pyfile *f = ctx;
  PyGILState_STATE g = PyGILState_Ensure();
  int rc = 0;
  for (size_t done = 0; !rc && done < n;) {
    size_t chunk = n - done < ((size_t)1 << 30) ? n - done : ((size_t)1 << 30);
    PyObject *mv = PyMemoryView_FromMemory((char *)src + done, (Py_ssize_t)chunk, PyBUF_READ);
    PyObject *r = mv ? PyObject_CallMethod(f->file, "write", "O", mv) : NULL;
    Py_XDECREF(mv);
    if (!r) {
      pyfile_stash(f);
      rc = -1;
      break;
    }
    long long k = r == Py_None ? -1 : PyLong_AsLongLong(r);
    Py_DECREF(r);
    if (k < (long long)chunk) {
      if (PyErr_Occurred()) pyfile_stash(f);
      rc = cm_error(CM_ERR_RUNTIME, "[load] Failed to write to python stream");
      break;
    }
    done += chunk;
  }
  PyGILState_Release(g);
  return rc ? cm_error(CM_ERR_RUNTIME, "[load] Failed to write to python stream") : 0;
}

static bool has_attrs(PyObject *o, const char *a) {
  return PyObject_HasAttrString(o, a) && PyObject_HasAttrString(o, "seek") &&
         PyObject_HasAttrString(o, "tell") && PyObject_HasAttrString(o, "closed");
}
static bool is_istream(PyObject *o) { return has_attrs(o, "readinto"); }
static bool is_ostream(PyObject *o) { return has_attrs(o, "write"); }

/* A path: str, or pathlib.Path (any os.PathLike giving str); a new str. */
static PyObject *path_of(PyObject *o) {
  if (PyUnicode_Check(o)) return Py_NewRef(o);
  if (PyObject_HasAttrString(o, "__fspath__")) {
    PyObject *p = PyOS_FSPath(o);
    if (p && PyUnicode_Check(p)) return p;
    Py_XDECREF(p);
    PyErr_Clear();
  }
  return NULL;
}

static int check_open(PyObject *file, const char *fn) {
  PyObject *c = PyObject_GetAttrString(file, "closed");
  if (!c) return -1;
  int closed = PyObject_IsTrue(c);
  Py_DECREF(c);
  if (closed < 0) return -1;
  if (closed) {
    PyErr_Format(PyExc_RuntimeError, "[%s] Failed to open python file object", fn);
    return -1;
  }
  return 0;
}

static pyfile *pyfile_new(PyObject *file) {
  long long base = 0;
  pyfile tmp = {file, 0, NULL, NULL, NULL};
  if (py_tell(&tmp, &base)) return NULL;
  pyfile *f = PyMem_RawMalloc(sizeof *f);
  if (!f) {
    PyErr_NoMemory();
    return NULL;
  }
  *f = (pyfile){Py_NewRef(file), base, NULL, NULL, NULL};
  return f;
}

static cm_reader *pyreader_new(PyObject *file, const char *fn) {
  if (check_open(file, fn)) return NULL;
  pyfile *f = pyfile_new(file);
  if (!f) return NULL;
  static const cm_reader_ops ops = {pyreader_read_at, pyreader_size, pyfile_close};
  cm_reader *r = cm_reader_new(&ops, f, true, "python file object");
  if (!r) pycm_raise();
  return r;
}

/* Raise the error of a failed core call: a Python exception a file
 * object's method raised wins over the core's message. */
static PyObject *io_raise(pyfile *f) {
  if (f && f->exc) {
    cm_error_clear();
    PyErr_Restore(f->exc, f->exc_val, f->exc_tb);
    f->exc = f->exc_val = f->exc_tb = NULL;
    return NULL;
  }
  return pycm_raise();
}

/* ---- conversions ---- */

static PyObject *str_from(const char *s, size_t n) {
  return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "strict");
}

/* The dicts list the entries in MLX's order, its std::unordered_map's
 * (io/key_order.c), over the loaders' insertion order. */
static PyObject *arrays_dict(const cm_named_arrays *m) {
  size_t *order = cm_hash_map_order(m->keys, sizeof *m->keys, m->n);
  if (!order) return pycm_raise();
  PyObject *d = PyDict_New();
  for (size_t k = 0; d && k < m->n; k++) {
    size_t i = order[k];
    PyObject *k = str_from(m->keys[i], strlen(m->keys[i]));
    PyObject *v = k ? pycm_wrap(cm_retain(m->arrs[i])) : NULL;
    if (!v || PyDict_SetItem(d, k, v)) Py_CLEAR(d);
    Py_XDECREF(k);
    Py_XDECREF(v);
  }
  free(order);
  return d;
}

static PyObject *meta_dict(const cm_metadata *m) {
  size_t *order = cm_hash_map_order(m->keys, sizeof *m->keys, m->n);
  if (!order) return pycm_raise();
  PyObject *d = PyDict_New();
  for (size_t n = 0; d && n < m->n; n++) {
    size_t i = order[n];
    const cm_meta_value *v = &m->vals[i];
    PyObject *k = str_from(m->keys[i], strlen(m->keys[i])), *val = NULL;
    if (k && v->kind == CM_META_STRING) val = str_from(v->str, v->len);
    else if (k && v->kind == CM_META_ARRAY) val = pycm_wrap(cm_retain(v->arr));
    else if (k) {
      val = PyList_New((Py_ssize_t)v->nstrs);
      for (size_t j = 0; val && j < v->nstrs; j++) {
        PyObject *s = str_from(v->strs[j], v->lens[j]);
        if (!s) Py_CLEAR(val);
        else PyList_SET_ITEM(val, (Py_ssize_t)j, s);
      }
    }
    if (!val || PyDict_SetItem(d, k, val)) Py_CLEAR(d);
    Py_XDECREF(k);
    Py_XDECREF(val);
  }
  free(order);
  return d;
}

/* str key (UTF-8, no NUL) -> new C string; NULL with TypeError. */
static const char *key_of(PyObject *k, Py_ssize_t *len) {
  if (!PyUnicode_Check(k)) {
    PyErr_SetString(PyExc_TypeError, "dictionary keys must be str");
    return NULL;
  }
  const char *s = PyUnicode_AsUTF8AndSize(k, len);
  if (s && (Py_ssize_t)strlen(s) != *len) {
    PyErr_SetString(PyExc_ValueError, "names must not contain NUL characters");
    return NULL;
  }
  return s;
}

static int dict_to_arrays(PyObject *d, cm_named_arrays *out, const char *fn) {
  if (!PyDict_Check(d)) {
    PyErr_Format(PyExc_TypeError, "%s(): arrays must be a dict of str to array", fn);
    return -1;
  }
  Py_ssize_t pos = 0;
  PyObject *k, *v;
  while (PyDict_Next(d, &pos, &k, &v)) {
    Py_ssize_t kl;
    const char *ks = key_of(k, &kl);
    if (!ks) return -1;
    cm_array *a = pycm_to_array(v, -1);
    if (!a) return -1;
    if (cm_named_arrays_put(out, ks, (size_t)kl, a, true, fn)) {
      pycm_raise();
      return -1;
    }
  }
  return 0;
}

/* ---- load ---- */

static PyObject *load_result(cm_named_arrays *arrays, cm_metadata *meta, bool with_meta) {
  PyObject *d = arrays_dict(arrays);
  if (!d || !with_meta) return d;
  PyObject *m = meta_dict(meta);
  if (!m) {
    Py_DECREF(d);
    return NULL;
  }
  PyObject *t = PyTuple_Pack(2, d, m);
  Py_DECREF(d);
  Py_DECREF(m);
  return t;
}

static int eval_all(cm_named_arrays *m) { return m->n ? pycm_eval(m->arrs, (int)m->n) : 0; }

static PyObject *do_load(PyObject *file, const char *fmt, bool with_meta, cm_stream s) {
  PyObject *path = path_of(file);
  bool istream = !path && is_istream(file);
  if (!path && !istream) {
    PyErr_SetString(PyExc_ValueError,
                    "[load] Input must be a file-like object opened in binary mode, or string");
    return NULL;
  }
  PyObject *name = NULL;
  if (!fmt) {
    name = path ? Py_NewRef(path) : PyObject_GetAttrString(file, "name");
    if (!name) return NULL;
    if (!PyUnicode_Check(name)) {
      PyObject *sn = PyObject_Str(name);
      Py_DECREF(name);
      if (!(name = sn)) {
        Py_XDECREF(path);
        return NULL;
      }
    }
    const char *ns = PyUnicode_AsUTF8(name);
    const char *dot = ns ? strrchr(ns, '.') : NULL;
    if (!dot) {
      Py_DECREF(name);
      Py_XDECREF(path);
      if (ns)
        PyErr_SetString(PyExc_ValueError, "[load] Could not infer file format from extension");
      return NULL;
    }
    fmt = dot + 1;
  }
  PyObject *res = NULL;
  bool npy = !strcmp(fmt, "npy"), npz = !strcmp(fmt, "npz"), st = !strcmp(fmt, "safetensors"),
       gguf = !strcmp(fmt, "gguf");
  if (with_meta && (npy || npz)) {
    PyErr_Format(PyExc_ValueError, "[load] metadata not supported for format %s", fmt);
    goto done;
  }
  if (!npy && !npz && !st && !gguf) {
    PyErr_Format(PyExc_ValueError, "[load] Unknown file format %s", fmt);
    goto done;
  }
  if (gguf && !path) {
    PyErr_SetString(PyExc_ValueError, "[load_gguf] Input must be a string");
    goto done;
  }
  const char *fn = npy ? "load" : npz ? "load_npz" : st ? "load_safetensors" : "load_gguf";
  cm_reader *r;
  if (path) {
    const char *ps = PyUnicode_AsUTF8(path);
    if (!ps) goto done;
    if (gguf) {
      FILE *probe = fopen(ps, "rb");
      if (!probe) {
        PyErr_Format(PyExc_ValueError, "[load_gguf] Failed to open %s", ps);
        goto done;
      }
      fclose(probe);
    }
    r = cm_reader_file(fn, ps);
    if (!r) {
      pycm_raise();
      goto done;
    }
  } else if (!(r = pyreader_new(file, fn))) {
    goto done;
  }
  pyfile *pf = path ? NULL : r->ctx;
  cm_named_arrays arrays = {0};
  cm_metadata meta = {0};
  int rc;
  cm_array *one = NULL;
  Py_BEGIN_ALLOW_THREADS
  if (npy) rc = (one = cm_load_npy(r, s)) ? 0 : -1;
  else if (npz) rc = cm_load_npz(r, s, &arrays);
  else if (st) rc = cm_load_safetensors(r, s, &arrays, &meta);
  else rc = cm_load_gguf(r, s, &arrays, &meta);
  Py_END_ALLOW_THREADS
  if (rc) {
    io_raise(pf);
  } else if (!path && (one ? pycm_eval(&one, 1) : eval_all(&arrays))) {
    if (pf && pf->exc) {
      PyErr_Clear();
      io_raise(pf);
    }
  } else {
    res = one ? pycm_wrap(cm_retain(one)) : load_result(&arrays, &meta, with_meta);
  }
  if (one) cm_release(one);
  cm_named_arrays_clear(&arrays);
  cm_metadata_clear(&meta);
  cm_reader_release(r);
done:
  Py_XDECREF(name);
  Py_XDECREF(path);
  return res;
}

static PyObject *py_load(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  static char *kwlist[] = {"", "format", "return_metadata", "stream", NULL};
  PyObject *file, *stream = Py_None;
  const char *fmt = NULL;
  int with_meta = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|zp$O:load", kwlist, &file, &fmt, &with_meta,
                                   &stream))
    return NULL;
  cm_stream s;
  if (pycm_stream_arg(stream, &s)) return NULL;
  return do_load(file, fmt, with_meta, s);
}

/* ---- save ---- */

/* A writer over a path (ext appended unless present) or a file object. */
typedef struct out_target {
  cm_writer w;
  pyfile *pf;
  bool is_file;
} out_target;

static int open_target(PyObject *file, const char *ext, const char *fn, bool paths_only,
                       out_target *t) {
  *t = (out_target){0};
  PyObject *path = path_of(file);
  if (path) {
    const char *ps = PyUnicode_AsUTF8(path);
    int rc = ps ? cm_writer_path(fn, ps, ext, &t->w) : -1;
    Py_DECREF(path);
    if (rc) {
      if (ps) pycm_raise();
      return -1;
    }
    t->is_file = true;
    return 0;
  }
  if (paths_only || !is_ostream(file)) {
    PyErr_Format(PyExc_ValueError,
                 paths_only ? "[%s] Input must be a string"
                            : "[%s] Input must be a file-like "
                              "object, or string",
                 fn);
    return -1;
  }
  if (check_open(file, fn) || !(t->pf = pyfile_new(file))) return -1;
  t->w = (cm_writer){pywriter_write, t->pf, 0, "python file object"};
  return 0;
}

/* Close the target; raise if rc or the close failed.  Returns None/NULL. */
static PyObject *close_target(out_target *t, int rc) {
  int rc2 = t->is_file ? cm_writer_finish(&t->w, 0) : 0;
  PyObject *res = NULL;
  if (rc) io_raise(t->pf);
  else if (rc2) pycm_raise();
  else res = Py_NewRef(Py_None);
  if (t->pf) pyfile_close(t->pf);
  return res;
}

static PyObject *py_save(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  static char *kwlist[] = {"file", "arr", NULL};
  PyObject *file, *arr;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO:save", kwlist, &file, &arr)) return NULL;
  cm_array *a = pycm_to_array(arr, -1);
  if (!a) return NULL;
  out_target t;
  if (open_target(file, ".npy", "save", false, &t)) {
    cm_release(a);
    return NULL;
  }
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = cm_save_npy(&t.w, a);
  Py_END_ALLOW_THREADS
  cm_release(a);
  return close_target(&t, rc);
}

static PyObject *savez_impl(PyObject *args, PyObject *kw, bool compressed) {
  const char *fn = compressed ? "savez_compressed" : "savez";
  if (PyTuple_GET_SIZE(args) < 1) {
    PyErr_Format(PyExc_TypeError, "%s() missing required argument 'file'", fn);
    return NULL;
  }
  PyObject *file = PyTuple_GET_ITEM(args, 0);
  cm_named_arrays arrays = {0};
  int rc = 0;
  for (Py_ssize_t i = 1; !rc && i < PyTuple_GET_SIZE(args); i++) {
    char name[32];
    snprintf(name, sizeof name, "arr_%zd", i - 1);
    if (kw && PyDict_GetItemString(kw, name)) {
      PyErr_Format(PyExc_ValueError, "[%s] Cannot use un-named variables and keyword %s", fn, name);
      rc = -1;
      break;
    }
    cm_array *a = pycm_to_array(PyTuple_GET_ITEM(args, i), -1);
    if (!a || cm_named_arrays_put(&arrays, name, strlen(name), a, true, fn)) {
      if (a) pycm_raise();
      rc = -1;
    }
  }
  if (!rc && kw && dict_to_arrays(kw, &arrays, fn)) rc = -1;
  out_target t;
  if (!rc && open_target(file, ".npz", fn, false, &t)) rc = -1;
  PyObject *res = NULL;
  if (!rc) {
    Py_BEGIN_ALLOW_THREADS
    rc = cm_save_npz(&t.w, &arrays, compressed);
    Py_END_ALLOW_THREADS
    res = close_target(&t, rc);
  }
  cm_named_arrays_clear(&arrays);
  return res;
}

static PyObject *py_savez(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  return savez_impl(args, kw, false);
}

static PyObject *py_savez_compressed(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  return savez_impl(args, kw, true);
}

static PyObject *py_save_safetensors(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  static char *kwlist[] = {"file", "arrays", "metadata", NULL};
  PyObject *file, *arrs, *md = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O:save_safetensors", kwlist, &file, &arrs, &md))
    return NULL;
  cm_named_arrays arrays = {0};
  cm_metadata meta = {0};
  PyObject *res = NULL;
  if (md != Py_None) {
    bool ok = PyDict_Check(md);
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (ok && PyDict_Next(md, &pos, &k, &v)) {
      Py_ssize_t kl, vl;
      const char *ks =
          PyUnicode_Check(k) && PyUnicode_Check(v) ? PyUnicode_AsUTF8AndSize(k, &kl) : NULL;
      const char *vs = ks ? PyUnicode_AsUTF8AndSize(v, &vl) : NULL;
      if (!vs) ok = false;
      else if (cm_metadata_set_string(&meta, ks, vs, (size_t)vl)) goto out_core;
    }
    if (!ok) {
      PyErr_Clear();
      PyErr_SetString(PyExc_ValueError, "[save_safetensors] Metadata must be a dictionary with "
                                        "string keys and values");
      goto out;
    }
  }
  if (dict_to_arrays(arrs, &arrays, "save_safetensors")) goto out;
  out_target t;
  if (open_target(file, ".safetensors", "save_safetensors", false, &t)) goto out;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = cm_save_safetensors(&t.w, &arrays, &meta);
  Py_END_ALLOW_THREADS
  res = close_target(&t, rc);
  goto out;
out_core:
  pycm_raise();
out:
  cm_named_arrays_clear(&arrays);
  cm_metadata_clear(&meta);
  return res;
}

static int gguf_meta(PyObject *md, cm_metadata *meta) {
  if (!PyDict_Check(md)) {
    PyErr_SetString(PyExc_TypeError, "save_gguf(): metadata must be a dict");
    return -1;
  }
  Py_ssize_t pos = 0;
  PyObject *k, *v;
  while (PyDict_Next(md, &pos, &k, &v)) {
    Py_ssize_t kl;
    const char *ks = key_of(k, &kl);
    if (!ks) return -1;
    int rc;
    if (PyUnicode_Check(v)) {
      Py_ssize_t vl;
      const char *vs = PyUnicode_AsUTF8AndSize(v, &vl);
      if (!vs) return -1;
      rc = cm_metadata_set_string(meta, ks, vs, (size_t)vl);
    } else if (PyList_Check(v) && PyList_GET_SIZE(v) > 0 &&
               PyUnicode_Check(PyList_GET_ITEM(v, 0))) {
      Py_ssize_t n = PyList_GET_SIZE(v);
      const char **strs = PyMem_Malloc(sizeof(char *) * (size_t)n);
      size_t *lens = PyMem_Malloc(sizeof(size_t) * (size_t)n);
      rc = strs && lens ? 0 : -1;
      for (Py_ssize_t i = 0; !rc && i < n; i++) {
        PyObject *it = PyList_GET_ITEM(v, i);
        Py_ssize_t l;
        if (!PyUnicode_Check(it) || !(strs[i] = PyUnicode_AsUTF8AndSize(it, &l))) {
          if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "save_gguf(): a metadata list must hold only str");
          PyMem_Free(strs), PyMem_Free(lens);
          return -1;
        }
        lens[i] = (size_t)l;
      }
      if (!rc) rc = cm_metadata_set_strings(meta, ks, strs, lens, (size_t)n);
      PyMem_Free(strs), PyMem_Free(lens);
      if (!strs || !lens) return PyErr_NoMemory(), -1;
    } else {
      cm_array *a = pycm_to_array(v, -1);
      if (!a) return -1;
      rc = cm_metadata_set_array(meta, ks, a);
      cm_release(a);
    }
    if (rc) {
      pycm_raise();
      return -1;
    }
  }
  return 0;
}

static PyObject *py_save_gguf(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  static char *kwlist[] = {"file", "arrays", "metadata", NULL};
  PyObject *file, *arrs, *md = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O:save_gguf", kwlist, &file, &arrs, &md))
    return NULL;
  cm_named_arrays arrays = {0};
  cm_metadata meta = {0};
  PyObject *res = NULL;
  out_target t;
  if ((md == Py_None || !gguf_meta(md, &meta)) && !dict_to_arrays(arrs, &arrays, "save_gguf") &&
      !open_target(file, ".gguf", "save_gguf", true, &t)) {
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = cm_save_gguf(&t.w, &arrays, &meta);
    Py_END_ALLOW_THREADS
    res = close_target(&t, rc);
  }
  cm_named_arrays_clear(&arrays);
  cm_metadata_clear(&meta);
  return res;
}

#define KW(f) PYCM_METH_KW(f)

static PyMethodDef io_functions[] = {
    {"load", KW(py_load),
     "load(file: file | str | pathlib.Path, /, format: str | None = None, return_metadata: bool "
     "= False, *, stream: StreamOrDevice = None) -> array | dict[str, array] | "
     "tuple[dict[str, array], dict[str, Any]]\n\nLoad array(s) from a binary file (.npy, .npz, "
     ".safetensors or .gguf)."},
    {"save", KW(py_save),
     "save(file: file | str | pathlib.Path, arr: array) -> None\n\nSave the array to a binary "
     "file in .npy format."},
    {"savez", KW(py_savez),
     "savez(file: file | str | pathlib.Path, *args, **kwargs)\n\nSave several arrays to a "
     "binary file in uncompressed .npz format."},
    {"savez_compressed", KW(py_savez_compressed),
     "savez_compressed(file: file | str | pathlib.Path, *args, **kwargs)\n\nSave several arrays "
     "to a binary file in compressed .npz format."},
    {"save_safetensors", KW(py_save_safetensors),
     "save_safetensors(file: file | str | pathlib.Path, arrays: dict[str, array], metadata: "
     "dict[str, str] | None = None)\n\nSave array(s) to a binary file in .safetensors format."},
    {"save_gguf", KW(py_save_gguf),
     "save_gguf(file: file | str | pathlib.Path, arrays: dict[str, array], metadata: dict[str, "
     "array | str | list[str]])\n\nSave array(s) to a binary file in .gguf format."},
    {NULL, NULL, 0, NULL},
};

int pycm_init_io(PyObject *m) { return PyModule_AddFunctions(m, io_functions); }
