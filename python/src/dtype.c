/* Dtype objects (mx.float32, ...), the DtypeCategory enum (mx.floating,
 * ...), issubdtype, finfo and iinfo.  Dtypes are 14 immortal-in-practice
 * singletons: identity, equality and hashing all follow the enum value. */
#include "cmlx_py.h"
#include "init.h"

#include <float.h>
#include <structmember.h>

typedef struct {
  PyObject_HEAD
  cm_dtype t;
} PyCmDtype;

static PyObject *dtype_objs[CM_NUM_DTYPES];
static PyObject *category_type;                   /* the Enum class */
static PyObject *category_objs[CM_NUM_CATEGORIES]; /* its members, by cm_category */

/* ---- Dtype --------------------------------------------------------------- */

static PyObject *dtype_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  (void)type, (void)args, (void)kw;
  PyErr_SetString(PyExc_TypeError, "cmlx.core.Dtype: no constructor defined!");
  return NULL;
}

/* A dtype prints with the name programs import the package under: MLX
 * code compares str(dtype) with "mlx.core.float32", so when this module
 * also serves as mlx.core (an import alias running MLX programs on cmlx,
 * as the conformance run does) it prints MLX's name; otherwise its own. */
static const char *printed_module(void) {
  PyObject *mods = PyImport_GetModuleDict();
  PyObject *mlx = PyDict_GetItemString(mods, "mlx.core");
  PyObject *own = PyDict_GetItemString(mods, "cmlx.core");
  return mlx && mlx == own ? "mlx.core" : "cmlx.core";
}

static PyObject *dtype_repr(PyObject *self) {
  return PyUnicode_FromFormat("%s.%s", printed_module(), cm_dtype_name(((PyCmDtype *)self)->t));
}

static Py_hash_t dtype_hash(PyObject *self) {
  /* Distinct small values; never -1. */
  return (Py_hash_t)0x636d6c78 + (Py_hash_t)((PyCmDtype *)self)->t;
}

static PyObject *dtype_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(a, &PyCmDtype_Type) ||
      !PyObject_TypeCheck(b, &PyCmDtype_Type)) {
    if (op == Py_EQ) Py_RETURN_FALSE;
    if (op == Py_NE) Py_RETURN_TRUE;
    Py_RETURN_NOTIMPLEMENTED;
  }
  bool eq = ((PyCmDtype *)a)->t == ((PyCmDtype *)b)->t;
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyObject *dtype_get_size(PyObject *self, void *closure) {
  (void)closure;
  return PyLong_FromSize_t(cm_dtype_size(((PyCmDtype *)self)->t));
}

static PyGetSetDef dtype_getset[] = {
    {"size", dtype_get_size, NULL, "Size of the type in bytes.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject PyCmDtype_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cmlx.core.Dtype",
    .tp_basicsize = sizeof(PyCmDtype),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An object to hold the type of a :class:`array`.",
    .tp_new = dtype_new,
    .tp_repr = dtype_repr,
    .tp_hash = dtype_hash,
    .tp_richcompare = dtype_richcompare,
    .tp_getset = dtype_getset,
};

PyObject *pycm_dtype_object(cm_dtype t) { return cm_dtype_valid((int)t) ? dtype_objs[t] : NULL; }

int pycm_dtype_arg(PyObject *o, cm_dtype *out) {
  if (!PyObject_TypeCheck(o, &PyCmDtype_Type)) {
    PyErr_Format(PyExc_TypeError, "Expected a cmlx.core.Dtype but got %s.", Py_TYPE(o)->tp_name);
    return -1;
  }
  *out = ((PyCmDtype *)o)->t;
  return 0;
}

/* ---- DtypeCategory ------------------------------------------------------- */

int pycm_category_arg(PyObject *o, cm_category *out) {
  if (!category_type) return -1;
  int r = PyObject_IsInstance(o, category_type);
  if (r <= 0) {
    if (r == 0)
      PyErr_Format(PyExc_TypeError, "Expected a cmlx.core.DtypeCategory but got %s.",
                   Py_TYPE(o)->tp_name);
    return -1;
  }
  for (int c = 0; c < CM_NUM_CATEGORIES; c++)
    if (category_objs[c] == o) { *out = (cm_category)c; return 0; }
  PyErr_SetString(PyExc_TypeError, "Unknown DtypeCategory.");
  return -1;
}

/* ---- issubdtype ---------------------------------------------------------- */

static PyObject *issubdtype(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 2) {
    PyErr_Format(PyExc_TypeError, "issubdtype() takes 2 positional arguments but %zd were given",
                 nargs);
    return NULL;
  }
  cm_dtype_or_category x[2];
  for (int i = 0; i < 2; i++) {
    if (PyObject_TypeCheck(args[i], &PyCmDtype_Type)) {
      x[i] = (cm_dtype_or_category){false, (int)((PyCmDtype *)args[i])->t};
      continue;
    }
    cm_category c;
    if (pycm_category_arg(args[i], &c)) {
      PyErr_Clear();
      PyErr_Format(PyExc_ValueError, "[issubdtype] Received invalid type for %s input.",
                   i == 0 ? "first" : "second");
      return NULL;
    }
    x[i] = (cm_dtype_or_category){true, (int)c};
  }
  return PyBool_FromLong(cm_issubdtype_any(x[0], x[1]));
}

/* ---- finfo / iinfo ------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  PyObject *min, *max, *eps, *smallest_normal, *bits, *dtype;
} PyCmInfo;

static void info_dealloc(PyObject *self) {
  PyCmInfo *f = (PyCmInfo *)self;
  Py_XDECREF(f->min);
  Py_XDECREF(f->max);
  Py_XDECREF(f->eps);
  Py_XDECREF(f->smallest_normal);
  Py_XDECREF(f->bits);
  Py_XDECREF(f->dtype);
  Py_TYPE(self)->tp_free(self);
}

static int info_dtype_arg(PyTypeObject *type, PyObject *args, PyObject *kw, cm_dtype *t) {
  PyObject *o;
  if (kw && PyDict_Size(kw) > 0) goto bad;
  if (PyTuple_GET_SIZE(args) != 1) goto bad;
  o = PyTuple_GET_ITEM(args, 0);
  if (!PyObject_TypeCheck(o, &PyCmDtype_Type)) goto bad;
  *t = ((PyCmDtype *)o)->t;
  return 0;
bad:
  /* Name the type being constructed first, as nanobind does. */
  pycm_signature_error("__init__", "__init__(self, arg: cmlx.core.Dtype, /) -> None",
                       (PyObject *)type, args, kw);
  return -1;
}

static PyObject *finfo_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  cm_dtype t;
  if (info_dtype_arg(type, args, kw, &t)) return NULL;
  if (!cm_dtype_is_inexact(t)) {
    PyErr_Format(PyExc_ValueError, "[finfo] dtype %s is not inexact.", cm_dtype_name(t));
    return NULL;
  }
  double max, eps, tiny;
  int bits;
  cm_dtype shown = t;
  switch (t) {
  case CM_FLOAT16: max = 65504.0; eps = 0x1p-10; tiny = 0x1p-14; bits = 16; break;
  case CM_BFLOAT16: max = 0x1.fep127; eps = 0x1p-7; tiny = 0x1p-126; bits = 16; break;
  case CM_FLOAT64: max = DBL_MAX; eps = DBL_EPSILON; tiny = DBL_MIN; bits = 64; break;
  default: /* float32; complex64 reports its float32 components */
    max = FLT_MAX; eps = FLT_EPSILON; tiny = FLT_MIN; bits = 32; shown = CM_FLOAT32; break;
  }
  PyCmInfo *f = (PyCmInfo *)type->tp_alloc(type, 0);
  if (!f) return NULL;
  f->min = PyFloat_FromDouble(-max);
  f->max = PyFloat_FromDouble(max);
  f->eps = PyFloat_FromDouble(eps);
  f->smallest_normal = PyFloat_FromDouble(tiny);
  f->bits = PyLong_FromLong(bits);
  f->dtype = dtype_objs[shown];
  Py_INCREF(f->dtype);
  if (!f->min || !f->max || !f->eps || !f->smallest_normal || !f->bits) {
    Py_DECREF(f);
    return NULL;
  }
  return (PyObject *)f;
}

static PyObject *finfo_repr(PyObject *self) {
  PyCmInfo *f = (PyCmInfo *)self;
  char buf[160];
  snprintf(buf, sizeof buf, "finfo(min=%g, max=%g, dtype=%s)", PyFloat_AsDouble(f->min),
           PyFloat_AsDouble(f->max), cm_dtype_name(((PyCmDtype *)f->dtype)->t));
  return PyUnicode_FromString(buf);
}

static PyMemberDef finfo_members[] = {
    {"min", T_OBJECT_EX, offsetof(PyCmInfo, min), READONLY, "The smallest representable number."},
    {"max", T_OBJECT_EX, offsetof(PyCmInfo, max), READONLY, "The largest representable number."},
    {"eps", T_OBJECT_EX, offsetof(PyCmInfo, eps), READONLY,
     "The difference between 1.0 and the next smallest representable number larger than 1.0."},
    {"smallest_normal", T_OBJECT_EX, offsetof(PyCmInfo, smallest_normal), READONLY,
     "The smallest positive normal number."},
    {"bits", T_OBJECT_EX, offsetof(PyCmInfo, bits), READONLY, "The number of bits in the type."},
    {"dtype", T_OBJECT_EX, offsetof(PyCmInfo, dtype), READONLY, "The dtype."},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject PyCmFinfo_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cmlx.core.finfo",
    .tp_basicsize = sizeof(PyCmInfo),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Get information on floating-point types.",
    .tp_new = finfo_new,
    .tp_dealloc = info_dealloc,
    .tp_repr = finfo_repr,
    .tp_members = finfo_members,
};

static PyObject *iinfo_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  cm_dtype t;
  if (info_dtype_arg(type, args, kw, &t)) return NULL;
  if (!cm_dtype_is_integral(t)) {
    PyErr_Format(PyExc_ValueError, "[iinfo] Only integer types supported but %s was provided",
                 cm_dtype_name(t));
    return NULL;
  }
  PyCmInfo *f = (PyCmInfo *)type->tp_alloc(type, 0);
  if (!f) return NULL;
  int bits = (int)cm_dtype_size(t) * 8;
  if (cm_dtype_kind(t) == CM_KIND_UINT) {
    f->min = PyLong_FromLong(0);
    f->max = PyLong_FromUnsignedLongLong(bits == 64 ? UINT64_MAX : (1ULL << bits) - 1);
  } else {
    f->min = PyLong_FromLongLong(bits == 64 ? INT64_MIN : -(1LL << (bits - 1)));
    f->max = PyLong_FromLongLong(bits == 64 ? INT64_MAX : (1LL << (bits - 1)) - 1);
  }
  f->dtype = dtype_objs[t];
  Py_INCREF(f->dtype);
  if (!f->min || !f->max) {
    Py_DECREF(f);
    return NULL;
  }
  return (PyObject *)f;
}

static PyObject *iinfo_repr(PyObject *self) {
  PyCmInfo *f = (PyCmInfo *)self;
  return PyUnicode_FromFormat("iinfo(min=%S, max=%S, dtype=%s)", f->min, f->max,
                              cm_dtype_name(((PyCmDtype *)f->dtype)->t));
}

static PyMemberDef iinfo_members[] = {
    {"min", T_OBJECT_EX, offsetof(PyCmInfo, min), READONLY, "The smallest representable number."},
    {"max", T_OBJECT_EX, offsetof(PyCmInfo, max), READONLY, "The largest representable number."},
    {"dtype", T_OBJECT_EX, offsetof(PyCmInfo, dtype), READONLY, "The dtype."},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject PyCmIinfo_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cmlx.core.iinfo",
    .tp_basicsize = sizeof(PyCmInfo),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Get information on integer types.",
    .tp_new = iinfo_new,
    .tp_dealloc = info_dealloc,
    .tp_repr = iinfo_repr,
    .tp_members = iinfo_members,
};

/* ---- init ---------------------------------------------------------------- */

static PyMethodDef dtype_functions[] = {
    {"issubdtype", PYCM_METH_FAST(issubdtype),
     "issubdtype(arg1: Dtype | DtypeCategory, arg2: Dtype | DtypeCategory) -> bool\n\n"
     "Check if a Dtype or DtypeCategory is a subtype of another."},
    {NULL, NULL, 0, NULL},
};

int pycm_init_dtype(PyObject *m) {
  if (pycm_add_type(m, "Dtype", &PyCmDtype_Type) || pycm_add_type(m, "finfo", &PyCmFinfo_Type) ||
      pycm_add_type(m, "iinfo", &PyCmIinfo_Type))
    return -1;
  /* The Python names: bool is bool_, the rest as printed. */
  for (int t = 0; t < CM_NUM_DTYPES; t++) {
    PyCmDtype *d = PyObject_New(PyCmDtype, &PyCmDtype_Type);
    if (!d) return -1;
    d->t = (cm_dtype)t;
    dtype_objs[t] = (PyObject *)d; /* the table keeps one reference forever */
    const char *name = t == CM_BOOL ? "bool_" : cm_dtype_name((cm_dtype)t);
    Py_INCREF(d);
    if (PyModule_AddObject(m, name, (PyObject *)d)) { Py_DECREF(d); return -1; }
  }
  const char *names[CM_NUM_CATEGORIES];
  for (int c = 0; c < CM_NUM_CATEGORIES; c++) names[c] = cm_category_name((cm_category)c);
  category_type = pycm_add_enum(m, "DtypeCategory", names, CM_NUM_CATEGORIES, category_objs);
  if (!category_type) return -1;
  return PyModule_AddFunctions(m, dtype_functions);
}
