/* The generic argument parser behind the signature tables (see argparse.h).
 * Specs are compiled once at import; a call then walks the compiled
 * parameters: positionals, keywords, defaults, one conversion per type.
 * Anything that does not fit a signature is a TypeError in nanobind's words,
 * so code written against MLX sees the same exception. */
#include "argparse.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Spec compilation                                                          */
/* ------------------------------------------------------------------------ */

static const struct { const char *name; pa_type type; } type_names[] = {
    {"array", PA_ARRAY},   {"arraylike", PA_ARRAYLIKE}, {"int", PA_INT},
    {"float", PA_FLOAT},   {"bool", PA_BOOL},           {"number", PA_NUMBER},
    {"Dtype", PA_DTYPE},   {"shape", PA_SHAPE},         {"axes", PA_AXES},
    {"Stream", PA_STREAM},
    {"object", PA_OBJECT}, {"shapeseq", PA_SHAPESEQ}, {"uint64", PA_UINT64},
    {"intorarray", PA_INT_OR_ARRAY},
};

static int spec_error(const pycm_op *op, const char *what, const char *item) {
  PyErr_Format(PyExc_SystemError, "cmlx: bad signature spec for %s (%s): '%s'", op->name, what,
               item);
  return -1;
}

/* Copy s[0..n) trimmed into buf. */
static void trim_copy(char *buf, size_t cap, const char *s, size_t n) {
  while (n && isspace((unsigned char)*s)) s++, n--;
  while (n && isspace((unsigned char)s[n - 1])) n--;
  if (n >= cap) n = cap - 1;
  memcpy(buf, s, n);
  buf[n] = 0;
}

static int parse_type(pa_param *p, const char *t) {
  /* "T", "T | None" or "None | T" */
  char base[64] = "";
  p->optional = false;
  while (*t) {
    const char *bar = strchr(t, '|');
    size_t n = bar ? (size_t)(bar - t) : strlen(t);
    char part[64];
    trim_copy(part, sizeof part, t, n);
    if (!strcmp(part, "None")) p->optional = true;
    else if (!base[0]) strcpy(base, part);
    else return -1;
    t += n + (bar ? 1 : 0);
  }
  for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
    if (!strcmp(base, type_names[i].name)) {
      p->type = type_names[i].type;
      return 0;
    }
  return -1;
}

static int dtype_from_name(const char *s, cm_dtype *out) {
  if (!strcmp(s, "bool_")) s = "bool";
  for (int t = 0; t < CM_NUM_DTYPES; t++)
    if (!strcmp(s, cm_dtype_name((cm_dtype)t))) {
      *out = (cm_dtype)t;
      return 0;
    }
  return -1;
}

static int parse_default(pa_param *p, const char *d) {
  char *end;
  p->has_default = true;
  if (!strcmp(d, "None")) {
    if (!p->optional && p->type != PA_STREAM) return -1;
    p->default_none = true;
    return 0;
  }
  switch (p->type) {
  case PA_BOOL:
    if (!strcmp(d, "True")) p->def_i = 1;
    else if (!strcmp(d, "False")) p->def_i = 0;
    else return -1;
    return 0;
  case PA_INT:
    p->def_i = strtoll(d, &end, 10);
    return *end ? -1 : 0;
  case PA_FLOAT:
  case PA_NUMBER:
    p->def_f = strtod(d, &end);
    p->def_i = (int64_t)p->def_f;
    p->def_kind = strpbrk(d, ".eEn") ? PA_KIND_FLOAT : PA_KIND_INT;
    return *end ? -1 : 0;
  case PA_ARRAYLIKE: /* a scalar the family converts (v.given is false) */
    p->def_f = strtod(d, &end);
    p->def_i = (int64_t)p->def_f;
    p->def_kind = strpbrk(d, ".eEn") ? PA_KIND_FLOAT : PA_KIND_INT;
    return *end ? -1 : 0;
  case PA_DTYPE:
    return dtype_from_name(d, &p->def_dtype);
  case PA_SHAPE:
  case PA_SHAPESEQ:
    return strcmp(d, "[]") && strcmp(d, "()") ? -1 : 0; /* the empty shape */
  default:
    return -1; /* arrays, objects default only to None */
  }
}

static int compile_spec(pycm_op *op) {
  pa_sig *g = &op->compiled;
  memset(g, 0, sizeof *g);
  g->varargs = -1;
  g->kw_start = -1;
  size_t used = 0;
  const char *s = op->spec;
  while (*s) {
    const char *comma = strchr(s, ',');
    size_t n = comma ? (size_t)(comma - s) : strlen(s);
    char item[160];
    trim_copy(item, sizeof item, s, n);
    s += n + (comma ? 1 : 0);
    if (!item[0]) continue;
    if (!strcmp(item, "/")) {
      g->npos_only = g->n;
      continue;
    }
    if (!strcmp(item, "*")) {
      g->kw_start = g->n;
      continue;
    }
    bool star = item[0] == '*';
    char *colon = strchr(item, ':');
    if (!colon) return spec_error(op, "no type", item);
    *colon = 0;
    char name[64], type[96], def[64] = "";
    trim_copy(name, sizeof name, item + star, strlen(item + star));
    char *eq = strchr(colon + 1, '=');
    if (eq) {
      *eq = 0;
      trim_copy(def, sizeof def, eq + 1, strlen(eq + 1));
    }
    trim_copy(type, sizeof type, colon + 1, strlen(colon + 1));
    if (star) {
      if (g->varargs >= 0) return spec_error(op, "two *args", item);
      g->varargs = g->n;
      g->kw_start = g->n;
      continue;
    }
    if (g->n == PA_MAX_PARAMS) return spec_error(op, "too many parameters", item);
    pa_param *p = &g->p[g->n];
    memset(p, 0, sizeof *p);
    size_t len = strlen(name);
    if (used + len + 1 > sizeof g->names) return spec_error(op, "names too long", item);
    memcpy(g->names + used, name, len + 1);
    p->name = g->names + used;
    used += len + 1;
    if (parse_type(p, type)) return spec_error(op, "unknown type", type);
    if (def[0] && parse_default(p, def)) return spec_error(op, "bad default", def);
    if (!def[0] && g->n > 0 && g->p[g->n - 1].has_default && g->kw_start < 0)
      return spec_error(op, "required after default", item);
    g->n++;
  }
  if (g->kw_start < 0) g->kw_start = g->n;
  return 0;
}

int pa_compile_table(pycm_op *ops, int n) {
  for (int i = 0; i < n; i++)
    if (compile_spec(&ops[i])) return -1;
  for (int i = 0; i < n;) {
    int j = i + 1;
    while (j < n && !strcmp(ops[j].name, ops[i].name)) ops[j++].noverloads = 0;
    ops[i].noverloads = j - i;
    i = j;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Conversions: 0 fits, 1 does not fit (no error), -1 Python error           */
/* ------------------------------------------------------------------------ */

int pa_int_in_range(PyObject *o, int64_t lo, int64_t hi, int64_t *out) {
  if (PyFloat_Check(o) || PyComplex_Check(o)) return 1;
  if (!PyLong_Check(o) && !PyIndex_Check(o)) return 1;
  PyObject *n = PyNumber_Index(o);
  if (!n) {
    PyErr_Clear();
    return 1;
  }
  int overflow;
  long long v = PyLong_AsLongLongAndOverflow(n, &overflow);
  Py_DECREF(n);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return 1;
  }
  if (overflow || v < lo || v > hi) return 1;
  *out = v;
  return 0;
}

static int conv_int(PyObject *o, int64_t *out) {
  if (PyLong_CheckExact(o)) { /* the common case, without PyNumber_Index */
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || v < INT32_MIN || v > INT32_MAX) return 1;
    *out = v;
    return 0;
  }
  return pa_int_in_range(o, INT32_MIN, INT32_MAX, out); /* nanobind: a cast out of range fails */
}

/* nanobind's uint64_t caster: an int (or __index__) in [0, 2^64). */
static int conv_uint64(PyObject *o, uint64_t *out) {
  if (PyFloat_Check(o) || (!PyLong_Check(o) && !PyIndex_Check(o))) return 1;
  PyObject *n = PyNumber_Index(o);
  if (!n) {
    PyErr_Clear();
    return 1;
  }
  unsigned long long v = PyLong_AsUnsignedLongLong(n);
  Py_DECREF(n);
  if (v == (unsigned long long)-1 && PyErr_Occurred()) {
    PyErr_Clear();
    return 1;
  }
  *out = v;
  return 0;
}

static int conv_float(PyObject *o, double *out) {
  if (PyFloat_Check(o)) {
    *out = PyFloat_AS_DOUBLE(o);
    return 0;
  }
  PyNumberMethods *nb = Py_TYPE(o)->tp_as_number;
  if (!PyLong_Check(o) && !(nb && (nb->nb_float || nb->nb_index))) return 1;
  double v = PyFloat_AsDouble(o);
  if (v == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    return 1;
  }
  *out = v;
  return 0;
}

/* Python's True and False only: MLX refuses 0, None and numpy.bool_. */
static int conv_bool(PyObject *o, bool *out) {
  if (o != Py_True && o != Py_False) return 1;
  *out = o == Py_True;
  return 0;
}

static int shape_dim(PyObject *o, int32_t *out, bool scalar_form) {
  if (PyFloat_Check(o) || (!PyLong_Check(o) && !PyIndex_Check(o))) return 1;
  PyObject *n = PyNumber_Index(o);
  if (!n) {
    PyErr_Clear();
    return 1;
  }
  int overflow;
  long long v = PyLong_AsLongLongAndOverflow(n, &overflow);
  if (overflow || v < INT32_MIN || v > INT32_MAX) {
    /* MLX's words (OverflowError) */
    if (scalar_form)
      PyErr_Format(PyExc_OverflowError,
                   "Shape dimension %S is outside the supported range [-2147483648, "
                   "2147483647]. MLX currently uses 32-bit integers for shape dimensions.",
                   n);
    else
      PyErr_Format(PyExc_OverflowError,
                   "Integer value %S is outside the supported range [-2147483648, 2147483647].",
                   n);
    Py_DECREF(n);
    return -1;
  }
  Py_DECREF(n);
  *out = (int32_t)v;
  return 0;
}

/* A cmlx array of rank >= 1: a sequence of its rows to nanobind. */
static bool is_array_sequence(PyObject *o) {
  return PyCmArray_Check(o) && ((PyCmArray *)o)->arr->ndim > 0;
}

static int conv_shape(PyObject *o, pa_value *v) {
  if (!is_array_sequence(o) && (PyLong_Check(o) || (PyIndex_Check(o) && !PySequence_Check(o)))) {
    v->ndim = 1;
    return shape_dim(o, &v->shape[0], true);
  }
  if (PyUnicode_Check(o) || PyBytes_Check(o) || (!PySequence_Check(o) && !is_array_sequence(o)))
    return 1;
  PyObject *seq = PySequence_Fast(o, "shape");
  if (!seq) {
    PyErr_Clear();
    return 1;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  int r = 0;
  if (n > CM_MAX_DIMS) {
    PyErr_Format(PyExc_ValueError, "[shape] At most %d dimensions are supported, got %zd.",
                 CM_MAX_DIMS, n);
    r = -1;
  }
  for (Py_ssize_t i = 0; !r && i < n; i++)
    r = shape_dim(PySequence_Fast_GET_ITEM(seq, i), &v->shape[i], false);
  Py_DECREF(seq);
  v->ndim = (int)n;
  return r;
}

/* Axes: an int or a sequence of ints (no overflow message: an axis that
 * does not fit is just the wrong type, as in nanobind). */
_Static_assert(sizeof(int32_t) == sizeof(int), "axes are read as int");

static int conv_axes(PyObject *o, pa_value *v) {
  int64_t x;
  if (PyLong_Check(o) || (PyIndex_Check(o) && !PySequence_Check(o))) {
    if (conv_int(o, &x)) return 1;
    v->ndim = 1;
    v->shape[0] = (int32_t)x;
    return 0;
  }
  if (PyUnicode_Check(o) || PyBytes_Check(o) || !PySequence_Check(o)) return 1;
  PyObject *seq = PySequence_Fast(o, "axes");
  if (!seq) {
    PyErr_Clear();
    return 1;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  int r = n > CM_MAX_DIMS;
  for (Py_ssize_t i = 0; !r && i < n; i++) {
    r = conv_int(PySequence_Fast_GET_ITEM(seq, i), &x);
    v->shape[i] = (int32_t)x;
  }
  Py_DECREF(seq);
  v->ndim = (int)n;
  return r;
}

static int conv_stream(PyObject *o, cm_stream *out) {
  if (o == Py_None) {
    *out = CM_STREAM_DEFAULT;
    return 0;
  }
  if (pycm_stream_arg(o, out) == 0) return 0;
  if (PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    return 1;
  }
  return -1;
}

static int convert(const pa_param *p, PyObject *o, pa_value *v) {
  v->obj = o;
  v->given = true;
  v->none = o == Py_None;
  if (v->none) {
    if (p->type == PA_STREAM) {
      v->stream = CM_STREAM_DEFAULT;
      return 0;
    }
    return p->optional ? 0 : 1;
  }
  switch (p->type) {
  case PA_ARRAY:
    if (!PyCmArray_Check(o)) return 1;
    v->arr = ((PyCmArray *)o)->arr;
    return 0;
  case PA_ARRAYLIKE:
  case PA_OBJECT:
    return 0;
  case PA_INT:
    return conv_int(o, &v->i);
  case PA_FLOAT:
    return conv_float(o, &v->f);
  case PA_BOOL:
    return conv_bool(o, &v->b);
  case PA_NUMBER:
    if (PyBool_Check(o)) {
      v->kind = PA_KIND_BOOL;
      v->i = o == Py_True;
      v->f = (double)v->i;
    } else if (PyLong_Check(o)) {
      int overflow;
      v->kind = PA_KIND_INT;
      v->f = PyLong_AsDouble(o);
      if (v->f == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return 1;
      }
      v->i = PyLong_AsLongLongAndOverflow(o, &overflow);
      if (overflow) return 1; /* beyond int64: nanobind's Scalar refuses it */
    } else if (PyFloat_Check(o)) {
      v->kind = PA_KIND_FLOAT;
      v->f = PyFloat_AS_DOUBLE(o);
      v->i = (int64_t)v->f;
    } else {
      return 1;
    }
    return 0;
  case PA_DTYPE:
    if (!PyObject_TypeCheck(o, &PyCmDtype_Type)) return 1;
    return pycm_dtype_arg(o, &v->dtype) ? -1 : 0;
  case PA_SHAPE:
    return conv_shape(o, v);
  case PA_SHAPESEQ: /* a sequence only: a bare int is the wrong type */
    if (!is_array_sequence(o) && (PyLong_Check(o) || (PyIndex_Check(o) && !PySequence_Check(o))))
      return 1;
    return conv_shape(o, v);
  case PA_UINT64:
    return conv_uint64(o, &v->u);
  case PA_INT_OR_ARRAY: /* nanobind's int_ (int and bool, no __index__) or an array */
    return PyLong_Check(o) || PyCmArray_Check(o) ? 0 : 1;
  case PA_AXES:
    return conv_axes(o, v);
  case PA_STREAM:
    return conv_stream(o, &v->stream);
  }
  return 1;
}

static void set_default(const pa_param *p, pa_value *v) {
  v->given = false;
  v->obj = NULL;
  v->none = p->default_none;
  v->i = p->def_i;
  v->f = p->def_f;
  v->b = p->def_i != 0;
  v->kind = p->def_kind;
  v->dtype = p->def_dtype;
  v->stream = CM_STREAM_DEFAULT;
  v->ndim = 0;
}

/* ------------------------------------------------------------------------ */
/* Parsing                                                                   */
/* ------------------------------------------------------------------------ */

/* Parse a call against one row.  0: parsed; 1: the arguments do not fit this
 * signature (no Python error set); -1: a Python error was raised. */
static int pa_parse(const pycm_op *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                    pa_call *c) {
  const pa_sig *g = &op->compiled;
  PyObject *assigned[PA_MAX_PARAMS] = {0};
  int npos = g->varargs >= 0 ? g->varargs : g->kw_start;
  c->varargs = NULL;
  c->nvarargs = 0;
  if (nargs > npos) {
    if (g->varargs < 0) return 1;
    c->varargs = args + npos;
    c->nvarargs = nargs - npos;
    nargs = npos;
  }
  for (Py_ssize_t i = 0; i < nargs; i++) assigned[i] = args[i];
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; k++) {
    PyObject *key = PyTuple_GET_ITEM(kwnames, k);
    int j = g->npos_only;
    while (j < g->n && PyUnicode_CompareWithASCIIString(key, g->p[j].name) != 0) j++;
    if (j == g->n || assigned[j]) return 1;
    /* the values follow the positionals in a vectorcall's args */
    assigned[j] = args[nargs + c->nvarargs + k];
  }
  for (int j = 0; j < g->n; j++) {
    if (!assigned[j]) {
      if (!g->p[j].has_default) return 1;
      set_default(&g->p[j], &c->v[j]);
      continue;
    }
    int r = convert(&g->p[j], assigned[j], &c->v[j]);
    if (r) return r;
  }
  return 0;
}

/* Parse against a row and its overloads and call the matching family; the
 * nanobind-style TypeError when none matches. */
static PyObject *pa_dispatch(const pycm_op *op, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  pa_call c;
  for (int k = 0; k < op->noverloads; k++) {
    int r = pa_parse(op + k, args, nargs, kwnames, &c);
    if (r == 0) return op[k].impl(op + k, &c);
    if (r < 0) return NULL;
  }
  return pa_type_error(op, args, nargs, kwnames);
}

PyObject *pa_dispatch_method(const pycm_op *op, PyObject *self, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames) {
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  PyObject *small[2 * PA_MAX_PARAMS + 2], **stack = small;
  if (nargs + nkw + 1 > (Py_ssize_t)(sizeof small / sizeof small[0]) &&
      !(stack = PyMem_Malloc(sizeof(PyObject *) * (size_t)(nargs + nkw + 1))))
    return PyErr_NoMemory();
  stack[0] = self;
  for (Py_ssize_t i = 0; i < nargs + nkw; i++) stack[i + 1] = args[i];
  PyObject *r = pa_dispatch(op, stack, nargs + 1, kwnames);
  if (stack != small) PyMem_Free(stack);
  return r;
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

const char *pa_type_name(PyObject *o) {
  const char *n = Py_TYPE(o)->tp_name;
  if (!strncmp(n, "cmlx.", 5)) return n;
  return pycm_short_type_name(o);
}

int pa_append(PyObject *parts, PyObject *s) {
  if (!s) return -1;
  int r = PyList_Append(parts, s);
  Py_DECREF(s);
  return r;
}

PyObject *pa_overloads_message(const char *name, const pycm_op *rows, int n) {
  PyObject *parts = PyList_New(0);
  if (!parts) return NULL;
  int bad = pa_append(parts, PyUnicode_FromFormat(
                                 "%s(): incompatible function arguments. The following argument "
                                 "types are supported:\n",
                                 name));
  for (int k = 0; !bad && k < n; k++)
    bad =
        pa_append(parts, PyUnicode_FromFormat("    %d. %s%s\n", k + 1, rows[k].name, rows[k].sig));
  if (!bad) bad = pa_append(parts, PyUnicode_FromString("\nInvoked with types: "));
  if (bad) Py_CLEAR(parts);
  return parts;
}

PyObject *pa_raise_parts(PyObject *parts, int bad) {
  if (!bad) {
    PyObject *empty = PyUnicode_FromString("");
    PyObject *msg = empty ? PyUnicode_Join(empty, parts) : NULL;
    Py_XDECREF(empty);
    if (msg) {
      PyErr_SetObject(PyExc_TypeError, msg);
      Py_DECREF(msg);
    }
  }
  Py_DECREF(parts);
  return NULL;
}

/* A type in nanobind's list of argument types: pa_type_name, except that a
 * class the Python side of cmlx.core defines (the enums: DeviceType, ...)
 * is module-qualified, as nanobind shows mlx.core.DeviceType. */
static PyObject *signature_type_name(PyObject *o) {
  PyTypeObject *t = Py_TYPE(o);
  if (t->tp_flags & Py_TPFLAGS_HEAPTYPE && !strchr(t->tp_name, '.')) {
    PyObject *mod = PyObject_GetAttrString((PyObject *)t, "__module__");
    const char *m = mod && PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : NULL;
    PyObject *r = m && !strncmp(m, "cmlx", 4) ? PyUnicode_FromFormat("%s.%s", m, t->tp_name) : NULL;
    Py_XDECREF(mod);
    PyErr_Clear();
    if (r) return r;
  }
  return PyUnicode_FromString(pa_type_name(o));
}

/* "<sep><type>" or "<sep><key>: <type>" */
static PyObject *typed_item(const char *sep, PyObject *key, PyObject *o) {
  PyObject *name = signature_type_name(o);
  if (!name) return NULL;
  PyObject *r = key ? PyUnicode_FromFormat("%s%U: %U", sep, key, name)
                    : PyUnicode_FromFormat("%s%U", sep, name);
  Py_DECREF(name);
  return r;
}

PyObject *pa_type_error(const pycm_op *op, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames) {
  PyObject *parts = pa_overloads_message(op->name, op, op->noverloads > 0 ? op->noverloads : 1);
  if (!parts) return NULL;
  int bad = 0;
  for (Py_ssize_t i = 0; !bad && i < nargs; i++)
    bad = pa_append(parts, typed_item(i ? ", " : "", NULL, args[i]));
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (!bad && nkw)
    bad = pa_append(parts, PyUnicode_FromString(nargs ? ", kwargs = { " : "kwargs = { "));
  for (Py_ssize_t k = 0; !bad && k < nkw; k++)
    bad = pa_append(parts, typed_item(k ? ", " : "", PyTuple_GET_ITEM(kwnames, k),
                                      args[nargs + k]));
  if (!bad && nkw) bad = pa_append(parts, PyUnicode_FromString(" }"));
  return pa_raise_parts(parts, bad);
}

/* ------------------------------------------------------------------------ */
/* Module functions                                                          */
/* ------------------------------------------------------------------------ */

/* The module functions are objects of one small callable type holding
 * their table row: vectorcall straight into the parser, a real __module__
 * and __qualname__ (so pickle finds them by name), and the signature lines
 * as __doc__. */
typedef struct {
  PyObject_HEAD
  const pycm_op *op;
  PyObject *module; /* the module's name */
  const char *doc;
  vectorcallfunc vectorcall;
} PyCmOpFunc;

static PyObject *opfunc_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames) {
  return pa_dispatch(((PyCmOpFunc *)self)->op, args, PyVectorcall_NARGS(nargsf), kwnames);
}

static void opfunc_dealloc(PyObject *self) {
  Py_XDECREF(((PyCmOpFunc *)self)->module);
  PyObject_Free(self);
}

static PyObject *opfunc_repr(PyObject *self) {
  return PyUnicode_FromFormat("<built-in function %s>", ((PyCmOpFunc *)self)->op->name);
}

static PyObject *opfunc_name(PyObject *self, void *closure) {
  (void)closure;
  return PyUnicode_FromString(((PyCmOpFunc *)self)->op->name);
}

static PyObject *opfunc_module(PyObject *self, void *closure) {
  (void)closure;
  return Py_NewRef(((PyCmOpFunc *)self)->module);
}

static PyObject *opfunc_doc(PyObject *self, void *closure) {
  (void)closure;
  const char *doc = ((PyCmOpFunc *)self)->doc;
  return doc ? PyUnicode_FromString(doc) : Py_NewRef(Py_None);
}

/* pickle: a global looked up by __module__ and this name */
static PyObject *opfunc_reduce(PyObject *self, PyObject *unused) {
  (void)unused;
  return opfunc_name(self, NULL);
}

static PyGetSetDef opfunc_getset[] = {
    {"__name__", opfunc_name, NULL, NULL, NULL},
    {"__qualname__", opfunc_name, NULL, NULL, NULL},
    {"__module__", opfunc_module, NULL, NULL, NULL},
    {"__doc__", opfunc_doc, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef opfunc_methods[] = {
    {"__reduce__", opfunc_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PyCmOpFunc_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cmlx.core.builtin_function",
    .tp_basicsize = sizeof(PyCmOpFunc),
    .tp_dealloc = opfunc_dealloc,
    .tp_vectorcall_offset = offsetof(PyCmOpFunc, vectorcall),
    .tp_repr = opfunc_repr,
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A cmlx.core op (its table row parses the arguments).",
    .tp_methods = opfunc_methods,
    .tp_getset = opfunc_getset,
};

static PyObject *opfunc_new(const pycm_op *op, PyObject *modname, const char *doc) {
  if (PyType_Ready(&PyCmOpFunc_Type)) return NULL;
  PyCmOpFunc *f = PyObject_New(PyCmOpFunc, &PyCmOpFunc_Type);
  if (!f) return NULL;
  f->op = op;
  f->module = Py_NewRef(modname);
  f->doc = doc;
  f->vectorcall = opfunc_vectorcall;
  return (PyObject *)f;
}

const char **pa_opfunc_doc_slot(PyObject *f) {
  return Py_IS_TYPE(f, &PyCmOpFunc_Type) ? &((PyCmOpFunc *)f)->doc : NULL;
}

int pa_register_signatures(PyObject *m, const pycm_op *ops, int n, const char *prefix) {
  PyObject *list = PyObject_GetAttrString(m, "_signatures");
  if (!list) {
    PyErr_Clear();
    list = PyList_New(0);
    if (!list || PyModule_AddObjectRef(m, "_signatures", list)) {
      Py_XDECREF(list);
      return -1;
    }
  }
  int r = 0;
  for (int i = 0; !r && i < n; i++) {
    PyObject *name = PyUnicode_FromFormat("%s%s", prefix, ops[i].name);
    r = pa_append(list, name ? Py_BuildValue("(Nss)", name, ops[i].sig, ops[i].spec) : NULL);
  }
  Py_DECREF(list);
  return r;
}

/* __doc__: MLX's signature line for each overload, kept for the process's
 * life like the table itself. */
static const char *make_doc(const pycm_op *op) {
  size_t len = 1;
  for (int k = 0; k < op->noverloads; k++) len += strlen(op[k].name) + strlen(op[k].sig) + 1;
  char *doc = PyMem_RawMalloc(len), *p = doc;
  if (!doc) return NULL;
  for (int k = 0; k < op->noverloads; k++)
    p += sprintf(p, "%s%s%s", k ? "\n" : "", op[k].name, op[k].sig);
  *p = 0;
  return doc;
}

int pa_add_functions(PyObject *m, pycm_op *ops, int n) {
  if (pa_compile_table(ops, n)) return -1;
  PyObject *modname = PyModule_GetNameObject(m);
  if (!modname) return -1;
  int r = 0;
  for (int i = 0; !r && i < n; i += ops[i].noverloads) {
    pycm_op *op = &ops[i];
    PyObject *f = opfunc_new(op, modname, make_doc(op));
    if (!f) {
      r = -1;
      break;
    }
    r = PyModule_AddObject(m, op->name, f);
    if (r) Py_DECREF(f);
  }
  Py_DECREF(modname);
  if (!r) r = pa_register_signatures(m, ops, n, "");
  return r;
}
