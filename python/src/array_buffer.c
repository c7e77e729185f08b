/* Arrays and foreign memory: import from buffer-protocol objects (NumPy
 * arrays and scalars, bytes, memoryview) and DLPack producers; export
 * through the buffer protocol (zero-copy, with the array's strides, as MLX
 * does), __array__ and __dlpack__; pickling state.  NumPy is optional: it
 * is imported only by the functions that return NumPy objects. */
#include "cmlx_py.h"
#include "init.h"

#include <stdlib.h>
#include <string.h>

/* ---- DLPack (the ABI of dlpack.h: v0.8 legacy capsules "dltensor", and
 * the versioned ones of 1.x, "dltensor_versioned") ------------------------ */

enum { DL_CPU = 1, DL_CUDA_HOST = 3, DL_CUDA_MANAGED = 13 };
enum { DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_BFLOAT = 4, DL_COMPLEX = 5, DL_BOOL = 6 };

typedef struct { int32_t device_type, device_id; } DLDevice;
typedef struct { uint8_t code, bits; uint16_t lanes; } DLDataType;
typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides; /* in elements; NULL: row-major */
  uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
typedef struct { uint32_t major, minor; } DLPackVersion;
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned *self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

/* ---- strided copies ------------------------------------------------------ */

/* Element conversions applied while copying foreign data in. */
typedef enum { CONV_NONE, CONV_C128_TO_C64, CONV_F64_TO_F32 } conv_kind;

static void copy_elems(char *dst, const char *src, int64_t n, int64_t src_step, size_t isz,
                       conv_kind conv) {
  if (conv == CONV_F64_TO_F32) { /* MLX's default for float64 input, in one pass */
    for (int64_t i = 0; i < n; i++, src += src_step, dst += 4) {
      double d;
      memcpy(&d, src, sizeof d);
      float f = (float)d;
      memcpy(dst, &f, sizeof f);
    }
  } else if (conv == CONV_C128_TO_C64) {
    for (int64_t i = 0; i < n; i++, src += src_step, dst += 8) {
      double z[2];
      memcpy(z, src, sizeof z);
      float f[2] = {(float)z[0], (float)z[1]};
      memcpy(dst, f, sizeof f);
    }
  } else if (src_step == (int64_t)isz) {
    memcpy(dst, src, (size_t)n * isz);
  } else {
    for (int64_t i = 0; i < n; i++, src += src_step, dst += isz) memcpy(dst, src, isz);
  }
}

/* Copy an n-d strided block (strides in bytes) into dense row-major dst,
 * one innermost row at a time. */
static void strided_copy(char *dst, const char *src, int ndim, const int64_t *shape,
                         const int64_t *strides, size_t src_isz, size_t dst_isz, conv_kind conv) {
  if (ndim == 0) {
    copy_elems(dst, src, 1, (int64_t)src_isz, src_isz, conv);
    return;
  }
  int64_t total = 1, expect = (int64_t)src_isz;
  bool dense = true;
  for (int i = ndim - 1; i >= 0; i--) {
    if (shape[i] == 0) return;
    if (shape[i] != 1 && strides[i] != expect) dense = false;
    expect *= shape[i];
    total *= shape[i];
  }
  if (dense) { /* row-major source: one flat run */
    copy_elems(dst, src, total, (int64_t)src_isz, src_isz, conv);
    return;
  }
  int64_t idx[CM_MAX_DIMS] = {0};
  int64_t inner = shape[ndim - 1], row_bytes = inner * (int64_t)dst_isz;
  for (;;) {
    const char *s = src;
    for (int i = 0; i < ndim - 1; i++) s += idx[i] * strides[i];
    copy_elems(dst, s, inner, strides[ndim - 1], src_isz, conv);
    dst += row_bytes;
    int d = ndim - 2;
    while (d >= 0 && ++idx[d] == shape[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

/* A new evaluated array of dtype dt holding the converted copy, then cast
 * to `dtype` if one is asked for by the core's astype, evaluated at once so
 * the intermediate copy does not outlive the call. */
static cm_array *import_block(const char *src, int ndim, const int64_t *shape,
                              const int64_t *strides, size_t src_isz, cm_dtype dt, conv_kind conv,
                              int dtype) {
  int32_t shp[CM_MAX_DIMS];
  for (int i = 0; i < ndim; i++) {
    /* MLX's check_shape_dim: an OverflowError without an op name */
    if (cm_shape_dim(NULL, shape[i], &shp[i])) return (cm_array *)pycm_raise();
  }
  cm_array *a = cm_array_from_data(NULL, ndim, shp, dt);
  if (!a) return (cm_array *)pycm_raise();
  if (a->size)
    strided_copy(cm_data(a), src, ndim, shape, strides, src_isz, cm_dtype_size(dt), conv);
  if (dtype < 0 || (cm_dtype)dtype == dt) return a;
  cm_array *r = cm_astype(a, (cm_dtype)dtype, CM_STREAM_DEFAULT);
  cm_release(a);
  if (!r) return (cm_array *)pycm_raise();
  if (pycm_eval(&r, 1)) {
    cm_release(r);
    return NULL;
  }
  return r;
}

/* ---- import: buffer protocol --------------------------------------------- */

/* PEP 3118 format -> dtype.  Returns 0, or -1 with a RuntimeError (the
 * type MLX raises for formats it cannot take). */
static int parse_format(const char *fmt, Py_ssize_t itemsize, cm_dtype *dt, conv_kind *conv) {
  *conv = CONV_NONE;
  if (!fmt) fmt = "B";
  if (*fmt == '@' || *fmt == '=' || *fmt == '<') fmt++;
  else if (*fmt == '>' || *fmt == '!') goto bad; /* big-endian data */
  if (fmt[0] && fmt[1] && !(fmt[0] == 'Z' && fmt[2] == 0)) goto bad;
  switch (fmt[0]) {
  case '?': *dt = CM_BOOL; return 0;
  case 'b': case 'h': case 'i': case 'l': case 'q': case 'n':
    switch (itemsize) {
    case 1: *dt = CM_INT8; return 0;
    case 2: *dt = CM_INT16; return 0;
    case 4: *dt = CM_INT32; return 0;
    case 8: *dt = CM_INT64; return 0;
    }
    goto bad;
  case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N':
    switch (itemsize) {
    case 1: *dt = CM_UINT8; return 0;
    case 2: *dt = CM_UINT16; return 0;
    case 4: *dt = CM_UINT32; return 0;
    case 8: *dt = CM_UINT64; return 0;
    }
    goto bad;
  case 'e': *dt = CM_FLOAT16; return 0;
  case 'f': *dt = CM_FLOAT32; return 0;
  case 'd': *dt = CM_FLOAT64; return 0;
  case 'Z':
    if (fmt[1] == 'f') { *dt = CM_COMPLEX64; return 0; }
    if (fmt[1] == 'd') { *dt = CM_COMPLEX64; *conv = CONV_C128_TO_C64; return 0; }
    goto bad;
  }
bad:
  PyErr_Format(PyExc_RuntimeError, "[array] Cannot convert buffer of format '%s' to an array.",
               fmt);
  return -1;
}

/* NumPy arrays of ml_dtypes' bfloat16 carry no standard buffer format:
 * read them as uint16 and relabel (what MLX does). */
static PyObject *bfloat16_as_uint16(PyObject *o) {
  PyObject *d = PyObject_GetAttrString(o, "dtype");
  if (!d) {
    PyErr_Clear();
    return NULL;
  }
  PyObject *s = PyObject_Str(d);
  Py_DECREF(d);
  bool is_bf16 = s && PyUnicode_CompareWithASCIIString(s, "bfloat16") == 0;
  Py_XDECREF(s);
  PyErr_Clear();
  return is_bf16 ? PyObject_CallMethod(o, "view", "s", "uint16") : NULL;
}

cm_array *pycm_from_buffer(PyObject *o, int dtype) {
  PyObject *u16 = bfloat16_as_uint16(o);
  if (PyErr_Occurred()) return NULL;
  Py_buffer view;
  if (PyObject_GetBuffer(u16 ? u16 : o, &view, PyBUF_RECORDS_RO)) {
    Py_XDECREF(u16);
    return NULL;
  }
  cm_array *out = NULL;
  cm_dtype dt;
  conv_kind conv;
  if (view.ndim > CM_MAX_DIMS) {
    PyErr_Format(PyExc_ValueError, "[array] Arrays may have at most %d dimensions.", CM_MAX_DIMS);
    goto done;
  }
  if (u16) {
    dt = CM_BFLOAT16;
    conv = CONV_NONE;
  } else if (parse_format(view.format, view.itemsize, &dt, &conv)) {
    goto done;
  }
  int64_t shape[CM_MAX_DIMS], strides[CM_MAX_DIMS];
  int64_t s = view.itemsize;
  for (int i = view.ndim - 1; i >= 0; i--) {
    shape[i] = view.shape ? view.shape[i] : view.len / view.itemsize;
    strides[i] = view.strides ? view.strides[i] : s;
    s *= shape[i];
  }
  /* MLX's default for float64 input is float32 (complex128 -> complex64). */
  int target = dtype >= 0 ? dtype : (dt == CM_FLOAT64 ? (int)CM_FLOAT32 : (int)dt);
  if (dt == CM_FLOAT64 && target == CM_FLOAT32) {
    dt = CM_FLOAT32;
    conv = CONV_F64_TO_F32;
  }
  out = import_block(view.buf, view.ndim, shape, strides, (size_t)view.itemsize, dt, conv, target);
done:
  PyBuffer_Release(&view);
  Py_XDECREF(u16);
  return out;
}

/* ---- import: DLPack ------------------------------------------------------ */

static int dl_dtype(DLDataType t, cm_dtype *dt, conv_kind *conv) {
  *conv = CONV_NONE;
  if (t.lanes != 1) return -1;
  switch (t.code) {
  case DL_BOOL: if (t.bits == 8) { *dt = CM_BOOL; return 0; } return -1;
  case DL_INT:
    switch (t.bits) {
    case 8: *dt = CM_INT8; return 0;
    case 16: *dt = CM_INT16; return 0;
    case 32: *dt = CM_INT32; return 0;
    case 64: *dt = CM_INT64; return 0;
    }
    return -1;
  case DL_UINT:
    switch (t.bits) {
    case 8: *dt = CM_UINT8; return 0;
    case 16: *dt = CM_UINT16; return 0;
    case 32: *dt = CM_UINT32; return 0;
    case 64: *dt = CM_UINT64; return 0;
    }
    return -1;
  case DL_FLOAT:
    switch (t.bits) {
    case 16: *dt = CM_FLOAT16; return 0;
    case 32: *dt = CM_FLOAT32; return 0;
    case 64: *dt = CM_FLOAT64; return 0;
    }
    return -1;
  case DL_BFLOAT: if (t.bits == 16) { *dt = CM_BFLOAT16; return 0; } return -1;
  case DL_COMPLEX:
    if (t.bits == 64) { *dt = CM_COMPLEX64; return 0; }
    if (t.bits == 128) { *dt = CM_COMPLEX64; *conv = CONV_C128_TO_C64; return 0; }
    return -1;
  }
  return -1;
}

/* A copy of the memory a strided tensor spans, viewed with the same
 * strides, as MLX 0.32 imports DLPack tensors (a transposed or stepped
 * source stays transposed or stepped).  Strides are in elements and not
 * negative; NULL with the error set. */
static cm_array *import_strided(const char *base, int ndim, const int64_t *shape,
                                const int64_t *estrides, cm_dtype dt) {
  int32_t shp[CM_MAX_DIMS];
  int64_t span = 1;
  for (int i = 0; i < ndim; i++) {
    if (cm_shape_dim(NULL, shape[i], &shp[i])) return (cm_array *)pycm_raise();
    span += (shape[i] - 1) * estrides[i];
  }
  size_t isz = cm_dtype_size(dt);
  cm_buffer *b = cm_buffer_alloc((size_t)span * isz);
  if (!b) return (cm_array *)pycm_raise();
  memcpy(b->ptr, base, (size_t)span * isz);
  cm_array *a = cm_array_from_buffer(b, 0, ndim, shp, estrides, dt);
  cm_buffer_release(b);
  return a ? a : (cm_array *)pycm_raise();
}

/* The tensor behind a capsule from __dlpack__: a versioned one when the
 * producer speaks DLPack 1.x (NumPy exports read-only arrays only that
 * way), else the legacy kind.  The caller owns it (the capsule is marked
 * used) and calls *deleter.  NULL with the error set. */
static DLTensor *dlpack_take(PyObject *o, void **owner, bool *versioned) {
  PyObject *args = PyTuple_New(0), *kw = Py_BuildValue("{s:(ii)}", "max_version", 1, 0);
  PyObject *cap = args && kw ? PyObject_Call(o, args, kw) : NULL;
  Py_XDECREF(args);
  Py_XDECREF(kw);
  if (!cap && PyErr_ExceptionMatches(PyExc_TypeError)) { /* no max_version: a legacy producer */
    PyErr_Clear();
    cap = PyObject_CallNoArgs(o);
  }
  if (!cap) return NULL;
  DLTensor *t = NULL;
  *versioned = PyCapsule_IsValid(cap, "dltensor_versioned");
  if (*versioned) {
    DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, "dltensor_versioned");
    PyCapsule_SetName(cap, "used_dltensor_versioned");
    *owner = m;
    t = &m->dl_tensor;
  } else if (PyCapsule_IsValid(cap, "dltensor")) {
    DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    PyCapsule_SetName(cap, "used_dltensor");
    *owner = m;
    t = &m->dl_tensor;
  } else {
    PyErr_SetString(PyExc_ValueError,
                    "[array] __dlpack__ did not return an unused DLPack capsule.");
  }
  Py_DECREF(cap);
  return t;
}

cm_array *pycm_from_dlpack(PyObject *o, int dtype) {
  PyObject *f = PyObject_GetAttrString(o, "__dlpack__");
  if (!f) return NULL;
  void *owner = NULL;
  bool versioned = false;
  DLTensor *t = dlpack_take(f, &owner, &versioned);
  Py_DECREF(f);
  if (!t) return NULL;
  cm_array *out = NULL;
  cm_dtype dt;
  conv_kind conv;
  int dev = t->device.device_type;
  bool negative = false;
  for (int i = 0; t->strides && i < t->ndim && i < CM_MAX_DIMS; i++)
    negative |= t->strides[i] < 0 && t->shape[i] > 1;
  if (dev != DL_CPU && dev != DL_CUDA_HOST && dev != DL_CUDA_MANAGED) {
    PyErr_Format(PyExc_ValueError, "[array] Cannot import a DLPack tensor from device type %d.",
                 dev);
  } else if (dl_dtype(t->dtype, &dt, &conv)) {
    PyErr_SetString(PyExc_ValueError, "[convert] Cannot convert array to mlx."); /* MLX's */
  } else if (t->ndim < 0 || t->ndim > CM_MAX_DIMS) {
    PyErr_Format(PyExc_ValueError, "[array] Arrays may have at most %d dimensions.", CM_MAX_DIMS);
  } else if (negative) {
    PyErr_SetString(PyExc_ValueError,
                    "Cannot convert DLPack arrays with negative strides to mlx array.");
  } else {
    size_t isz = (size_t)t->dtype.bits / 8;
    int64_t strides[CM_MAX_DIMS], estrides[CM_MAX_DIMS], s = 1, n = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
      estrides[i] = t->strides ? t->strides[i] : s;
      strides[i] = estrides[i] * (int64_t)isz;
      s *= t->shape[i];
      n *= t->shape[i];
    }
    int target = dtype >= 0 ? dtype : (dt == CM_FLOAT64 ? (int)CM_FLOAT32 : (int)dt);
    const char *base = (const char *)t->data + t->byte_offset;
    if (dt == CM_FLOAT64 && target == CM_FLOAT32) {
      dt = CM_FLOAT32;
      conv = CONV_F64_TO_F32;
    }
    if (conv == CONV_NONE && target == (int)dt && n > 0)
      out = import_strided(base, t->ndim, t->shape, estrides, dt);
    else
      out = import_block(base, t->ndim, t->shape, strides, isz, dt, conv, target);
  }
  if (versioned) {
    DLManagedTensorVersioned *m = owner;
    if (m->deleter) m->deleter(m);
  } else {
    DLManagedTensor *m = owner;
    if (m->deleter) m->deleter(m);
  }
  return out;
}

/* ---- export: buffer protocol --------------------------------------------- */

/* MLX's formats; bfloat16 has no PEP 3118 code, so it is exported under a
 * name NumPy rejects, exactly as MLX does. */
static const char *const buffer_formats[CM_NUM_DTYPES] = {
    "?", "B", "H", "I", "Q", "b", "h", "i", "q", "e", "f", "d", "bfloat16", "Zf"};

typedef struct {
  cm_array *held; /* the array whose memory the view shows */
  Py_ssize_t dims[]; /* shape then strides */
} view_state;

/* An evaluated array to expose for `flags`: a itself (any strides) unless
 * the consumer needs contiguous memory that a lacks. */
static cm_array *export_source(cm_array *a, int flags) {
  if (pycm_eval(&a, 1)) return NULL;
  bool want_c = !(flags & PyBUF_STRIDES) || (flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS ||
                (flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS;
  bool want_f = (flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS;
  if (want_f && !cm_col_contiguous(a) && a->ndim > 1) {
    PyErr_SetString(PyExc_BufferError, "cmlx array is not Fortran contiguous.");
    return NULL;
  }
  bool any_ok = (flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && cm_col_contiguous(a);
  if (!want_c || cm_row_contiguous(a) || any_ok) return cm_retain(a);
  cm_array *c = cm_contiguous(a, false, CM_STREAM_DEFAULT);
  if (!c) return (cm_array *)pycm_raise();
  if (pycm_eval(&c, 1)) {
    cm_release(c);
    return NULL;
  }
  return c;
}

static int array_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  cm_array *a = export_source(((PyCmArray *)self)->arr, flags);
  if (!a) return -1;
  view_state *st = malloc(sizeof *st + sizeof(Py_ssize_t) * 2 * (size_t)(a->ndim ? a->ndim : 1));
  if (!st) {
    cm_release(a);
    PyErr_NoMemory();
    return -1;
  }
  st->held = a;
  Py_ssize_t isz = (Py_ssize_t)cm_itemsize(a);
  for (int i = 0; i < a->ndim; i++) {
    st->dims[i] = a->shape[i];
    st->dims[a->ndim + i] = (Py_ssize_t)a->strides[i] * isz;
  }
  static char empty;
  view->buf = cm_data(a) ? cm_data(a) : &empty;
  view->obj = self;
  Py_INCREF(self);
  view->len = (Py_ssize_t)cm_nbytes(a);
  view->readonly = 0;
  view->itemsize = isz;
  view->format = (flags & PyBUF_FORMAT) ? (char *)buffer_formats[a->dtype] : NULL;
  view->ndim = a->ndim;
  view->shape = (flags & PyBUF_ND) ? st->dims : NULL;
  view->strides = (flags & PyBUF_STRIDES) ? st->dims + a->ndim : NULL;
  view->suboffsets = NULL;
  view->internal = st;
  return 0;
}

static void array_releasebuffer(PyObject *self, Py_buffer *view) {
  (void)self;
  view_state *st = view->internal;
  if (st) {
    cm_release(st->held);
    free(st);
  }
}

PyBufferProcs pycm_array_buffer_procs = {array_getbuffer, array_releasebuffer};

/* ---- export: __array__, __dlpack__ --------------------------------------- */

static PyObject *numpy_call(const char *fn, PyObject *arg, PyObject *kw) {
  PyObject *np = PyImport_ImportModule("numpy");
  if (!np) return NULL;
  PyObject *f = PyObject_GetAttrString(np, fn);
  Py_DECREF(np);
  if (!f) return NULL;
  PyObject *args = PyTuple_Pack(1, arg);
  PyObject *r = args ? PyObject_Call(f, args, kw) : NULL;
  Py_XDECREF(args);
  Py_DECREF(f);
  return r;
}

/* __array__(dtype=None, copy=None).  Like MLX, dtype is not applied here
 * (NumPy casts the result itself when it asked for one). */
PyObject *pycm_array_dunder_array(PyObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"dtype", "copy", NULL};
  PyObject *dtype = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:__array__", kwlist, &dtype, &copy)) return NULL;
  if (((PyCmArray *)self)->arr->dtype == CM_BFLOAT16) {
    PyErr_SetString(PyExc_TypeError, "bfloat16 arrays cannot be converted to NumPy.");
    return NULL;
  }
  PyObject *mv = PyMemoryView_FromObject(self);
  if (!mv) return NULL;
  PyObject *r = numpy_call(copy == Py_True ? "array" : "asarray", mv, NULL);
  Py_DECREF(mv);
  return r;
}

typedef struct {
  DLManagedTensor m;
  cm_array *a;
  int64_t dims[]; /* shape then strides */
} dl_export;

static void dl_export_deleter(DLManagedTensor *m) {
  dl_export *e = (dl_export *)m;
  cm_release(e->a);
  free(e);
}

static void dl_capsule_destructor(PyObject *cap) {
  /* Never consumed: the capsule still owns the tensor. */
  if (PyCapsule_IsValid(cap, "dltensor")) {
    DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    if (m && m->deleter) m->deleter(m);
  }
}

static const DLDataType dl_types[CM_NUM_DTYPES] = {
    {DL_BOOL, 8, 1},    {DL_UINT, 8, 1},     {DL_UINT, 16, 1},  {DL_UINT, 32, 1}, {DL_UINT, 64, 1},
    {DL_INT, 8, 1},     {DL_INT, 16, 1},     {DL_INT, 32, 1},   {DL_INT, 64, 1},  {DL_FLOAT, 16, 1},
    {DL_FLOAT, 32, 1},  {DL_FLOAT, 64, 1},   {DL_BFLOAT, 16, 1}, {DL_COMPLEX, 64, 1}};

PyObject *pycm_array_dlpack(PyObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOO:__dlpack__", kwlist, &stream, &max_version,
                                   &dl_device, &copy))
    return NULL;
  if (dl_device != Py_None) {
    int dt = -1, di = -1;
    if (!PyArg_ParseTuple(dl_device, "ii", &dt, &di)) return NULL;
    if (dt != DL_CPU || di != 0) {
      PyErr_SetString(PyExc_BufferError, "Cannot export cmlx array to requested DLPack device.");
      return NULL;
    }
  }
  cm_array *a = ((PyCmArray *)self)->arr;
  if (pycm_eval(&a, 1)) return NULL;
  cm_retain(a);
  if (copy == Py_True) { /* a private row-major copy */
    cm_array *c = cm_contiguous(a, false, CM_STREAM_DEFAULT);
    cm_release(a);
    if (!c || pycm_eval(&c, 1)) {
      if (c) cm_release(c);
      else pycm_raise();
      return NULL;
    }
    a = cm_array_from_data(cm_data(c), c->ndim, c->shape, c->dtype);
    cm_release(c);
    if (!a) return pycm_raise();
  }
  dl_export *e = calloc(1, sizeof *e + sizeof(int64_t) * 2 * (size_t)(a->ndim ? a->ndim : 1));
  if (!e) {
    cm_release(a);
    return PyErr_NoMemory();
  }
  e->a = a;
  for (int i = 0; i < a->ndim; i++) {
    e->dims[i] = a->shape[i];
    e->dims[a->ndim + i] = a->strides[i];
  }
  DLTensor *t = &e->m.dl_tensor;
  t->data = a->buf ? a->buf->ptr : NULL;
  t->byte_offset = (uint64_t)a->offset;
  t->device = (DLDevice){DL_CPU, 0};
  t->ndim = a->ndim;
  t->dtype = dl_types[a->dtype];
  t->shape = e->dims;
  t->strides = e->dims + a->ndim;
  e->m.manager_ctx = e;
  e->m.deleter = dl_export_deleter;
  PyObject *cap = PyCapsule_New(&e->m, "dltensor", dl_capsule_destructor);
  if (!cap) dl_export_deleter(&e->m);
  return cap;
}

PyObject *pycm_array_dlpack_device(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  return Py_BuildValue("(ii)", DL_CPU, 0);
}

/* ---- pickling ------------------------------------------------------------ */

/* (NumPy copy of the data, dtype value); bfloat16 travels as uint16. */
PyObject *pycm_array_getstate(PyObject *self, PyObject *unused) {
  (void)unused;
  cm_array *a = ((PyCmArray *)self)->arr;
  PyObject *np_arr;
  if (a->dtype == CM_BFLOAT16) {
    cm_array *c = cm_contiguous(a, false, CM_STREAM_DEFAULT);
    if (!c) return pycm_raise();
    if (pycm_eval(&c, 1)) {
      cm_release(c);
      return NULL;
    }
    PyObject *bytes =
        PyBytes_FromStringAndSize(cm_data(c) ? cm_data(c) : "", (Py_ssize_t)cm_nbytes(c));
    PyObject *shape = PyTuple_New(c->ndim);
    for (int i = 0; shape && i < c->ndim; i++)
      PyTuple_SET_ITEM(shape, i, PyLong_FromLong(c->shape[i]));
    cm_release(c);
    PyObject *kw = Py_BuildValue("{s:s}", "dtype", "uint16");
    PyObject *flat = bytes && kw ? numpy_call("frombuffer", bytes, kw) : NULL;
    np_arr = flat && shape ? PyObject_CallMethod(flat, "reshape", "O", shape) : NULL;
    Py_XDECREF(bytes);
    Py_XDECREF(kw);
    Py_XDECREF(shape);
    Py_XDECREF(flat);
    if (np_arr) {
      PyObject *owned = PyObject_CallMethod(np_arr, "copy", NULL);
      Py_DECREF(np_arr);
      np_arr = owned;
    }
  } else {
    PyObject *mv = PyMemoryView_FromObject(self);
    np_arr = mv ? numpy_call("array", mv, NULL) : NULL;
    Py_XDECREF(mv);
  }
  if (!np_arr) return NULL;
  return Py_BuildValue("(Ni)", np_arr, (int)a->dtype);
}

PyObject *pycm_array_setstate(PyObject *self, PyObject *state) {
  PyObject *data;
  int dt;
  if (!PyArg_ParseTuple(state, "Oi:__setstate__", &data, &dt)) return NULL;
  if (!cm_dtype_valid(dt)) {
    PyErr_SetString(PyExc_ValueError, "[array] Invalid dtype in pickled state.");
    return NULL;
  }
  cm_array *a = pycm_from_buffer(data, dt == CM_BFLOAT16 ? (int)CM_UINT16 : dt);
  if (!a) return NULL;
  if (dt == CM_BFLOAT16) { /* same bits, relabelled */
    cm_array *b =
        cm_array_from_buffer(a->buf, a->offset, a->ndim, a->shape, a->strides, CM_BFLOAT16);
    cm_release(a);
    if (!b) return pycm_raise();
    a = b;
  }
  cm_release(((PyCmArray *)self)->arr);
  ((PyCmArray *)self)->arr = a;
  Py_RETURN_NONE;
}
