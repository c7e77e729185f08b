/* Devices and streams: the DeviceType enum (mx.cpu, mx.gpu), Device,
 * Stream, ThreadLocalStream, the `with mx.stream(s):` context, and the
 * functions over the core's stream registry.  Semantics (which devices
 * exist, error messages for an absent GPU) come from src/core/stream.c. */
#include "cmlx_py.h"
#include "init.h"

#include "core/backend.h"

static PyObject *devtype_enum;
static PyObject *devtype_objs[2]; /* DeviceType.cpu, DeviceType.gpu */

typedef struct {
  PyObject_HEAD
  cm_device d;
} PyCmDevice;

typedef struct {
  PyObject_HEAD
  cm_stream s;
} PyCmStream;

/* A stream that each thread resolves to its own stream, made on first use. */
typedef struct {
  PyObject_HEAD
  cm_thread_local_stream t;
} PyCmTLStream;

typedef struct {
  PyObject_HEAD
  PyObject *target;
  cm_device prev_device;
  cm_stream prev_stream;
  bool entered;
} PyCmStreamContext;

static PyTypeObject PyCmDevice_Type, PyCmStream_Type, PyCmTLStream_Type, PyCmStreamContext_Type;

/* ---- conversions --------------------------------------------------------- */

static int devtype_arg(PyObject *o, cm_device_type *out) {
  for (int i = 0; i < 2; i++)
    if (o == devtype_objs[i]) { *out = (cm_device_type)i; return 0; }
  /* nanobind lets an int stand for an enum member; so do we. */
  if (PyLong_Check(o) && !PyBool_Check(o)) {
    long v = PyLong_AsLong(o);
    if (v == 0 || v == 1) { *out = (cm_device_type)v; return 0; }
    if (v == -1 && PyErr_Occurred()) PyErr_Clear();
  }
  return -1;
}

/* Device or DeviceType; -1 without an exception if o is neither. */
static int device_arg_noraise(PyObject *o, cm_device *out) {
  if (PyObject_TypeCheck(o, &PyCmDevice_Type)) {
    *out = ((PyCmDevice *)o)->d;
    return 0;
  }
  cm_device_type t;
  if (devtype_arg(o, &t) == 0) {
    *out = (cm_device){t, 0};
    return 0;
  }
  return -1;
}

PyObject *pycm_device_object(cm_device d) {
  PyCmDevice *o = PyObject_New(PyCmDevice, &PyCmDevice_Type);
  if (o) o->d = d;
  return (PyObject *)o;
}

PyObject *pycm_stream_object(cm_stream s) {
  PyCmStream *o = PyObject_New(PyCmStream, &PyCmStream_Type);
  if (o) o->s = s;
  return (PyObject *)o;
}

/* The calling thread's stream for a ThreadLocalStream (the core makes it
 * on the thread's first use). */
static int tls_resolve(PyCmTLStream *tl, cm_stream *out) {
  if (cm_stream_from_thread_local(tl->t, out)) {
    pycm_raise();
    return -1;
  }
  return 0;
}

int pycm_stream_arg(PyObject *o, cm_stream *out) {
  if (!o || o == Py_None) { *out = CM_STREAM_DEFAULT; return 0; }
  if (PyObject_TypeCheck(o, &PyCmStream_Type)) { *out = ((PyCmStream *)o)->s; return 0; }
  if (PyObject_TypeCheck(o, &PyCmTLStream_Type)) return tls_resolve((PyCmTLStream *)o, out);
  cm_device d;
  if (device_arg_noraise(o, &d) == 0) { *out = cm_stream_of_device(d); return 0; }
  PyErr_Format(PyExc_TypeError,
               "Expected a Stream, ThreadLocalStream, Device, DeviceType or None as the stream "
               "but got %s.",
               Py_TYPE(o)->tp_name);
  return -1;
}

/* ---- Device -------------------------------------------------------------- */

static PyObject *device_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"type", "index", NULL};
  PyObject *t = NULL;
  int index = 0;
  cm_device_type dt;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|i:Device", kwlist, &t, &index) ||
      devtype_arg(t, &dt))
    return pycm_signature_error(
        "__init__", "__init__(self, type: cmlx.core.DeviceType, index: int = 0) -> None",
        (PyObject *)type, args, kw);
  PyCmDevice *o = (PyCmDevice *)type->tp_alloc(type, 0);
  if (o) o->d = (cm_device){dt, index};
  return (PyObject *)o;
}

static PyObject *device_repr(PyObject *self) {
  cm_device d = ((PyCmDevice *)self)->d;
  return PyUnicode_FromFormat("Device(%s, %d)", cm_device_type_name(d.type), d.index);
}

static Py_hash_t device_hash(PyObject *self) {
  cm_device d = ((PyCmDevice *)self)->d;
  Py_hash_t h = (Py_hash_t)d.type * 1000003 + (Py_hash_t)d.index + 0x5eed;
  return h == -1 ? -2 : h;
}

static PyObject *device_richcompare(PyObject *a, PyObject *b, int op) {
  cm_device x, y;
  if ((op != Py_EQ && op != Py_NE) || device_arg_noraise(a, &x) || device_arg_noraise(b, &y)) {
    if (PyErr_Occurred()) PyErr_Clear();
    if (op == Py_EQ) Py_RETURN_FALSE;
    if (op == Py_NE) Py_RETURN_TRUE;
    Py_RETURN_NOTIMPLEMENTED;
  }
  bool eq = x.type == y.type && x.index == y.index;
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyObject *device_get_type(PyObject *self, void *closure) {
  (void)closure;
  PyObject *t = devtype_objs[((PyCmDevice *)self)->d.type];
  Py_INCREF(t);
  return t;
}

static PyGetSetDef device_getset[] = {
    {"type", device_get_type, NULL, "The device type.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject PyCmDevice_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cmlx.core.Device",
    .tp_basicsize = sizeof(PyCmDevice),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A device to run operations on.",
    .tp_new = device_new,
    .tp_repr = device_repr,
    .tp_hash = device_hash,
    .tp_richcompare = device_richcompare,
    .tp_getset = device_getset,
};

/* ---- Stream and ThreadLocalStream ---------------------------------------- */

static PyObject *no_constructor(PyTypeObject *type, PyObject *args, PyObject *kw) {
  (void)args, (void)kw;
  PyErr_Format(PyExc_TypeError, "%s: no constructor defined!", type->tp_name);
  return NULL;
}

static PyObject *stream_repr(PyObject *self) {
  cm_stream s = ((PyCmStream *)self)->s;
  return PyUnicode_FromFormat("Stream(Device(%s, %d), %d)", cm_device_type_name(s.device.type),
                              s.device.index, s.index);
}

static Py_hash_t stream_hash(PyObject *self) {
  cm_stream s = ((PyCmStream *)self)->s;
  Py_hash_t h = ((Py_hash_t)s.index * 31 + (Py_hash_t)s.device.type) * 1000003 + s.device.index;
  return h == -1 ? -2 : h;
}

static PyObject *stream_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(a, &PyCmStream_Type) ||
      !PyObject_TypeCheck(b, &PyCmStream_Type)) {
    if (op == Py_EQ) Py_RETURN_FALSE;
    if (op == Py_NE) Py_RETURN_TRUE;
    Py_RETURN_NOTIMPLEMENTED;
  }
  bool eq = cm_stream_equal(((PyCmStream *)a)->s, ((PyCmStream *)b)->s);
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyObject *stream_get_device(PyObject *self, void *closure) {
  (void)closure;
  return pycm_device_object(((PyCmStream *)self)->s.device);
}

static PyGetSetDef stream_getset[] = {
    {"device", stream_get_device, NULL, "The device of the stream.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject PyCmStream_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cmlx.core.Stream",
    .tp_basicsize = sizeof(PyCmStream),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A stream for running operations on a given device.",
    .tp_new = no_constructor,
    .tp_repr = stream_repr,
    .tp_hash = stream_hash,
    .tp_richcompare = stream_richcompare,
    .tp_getset = stream_getset,
};

static PyObject *tls_repr(PyObject *self) {
  cm_thread_local_stream t = ((PyCmTLStream *)self)->t;
  return PyUnicode_FromFormat("ThreadLocalStream(Device(%s, %d), %d)",
                              cm_device_type_name(t.device.type), t.device.index, t.index);
}

static Py_hash_t tls_hash(PyObject *self) {
  cm_thread_local_stream t = ((PyCmTLStream *)self)->t;
  Py_hash_t h = ((Py_hash_t)t.index * 31 + (Py_hash_t)t.device.type) * 1000003 + t.device.index;
  return h == -1 ? -2 : h;
}

/* Equal when they name the same thread-local stream, as MLX compares them. */
static PyObject *tls_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(a, &PyCmTLStream_Type) ||
      !PyObject_TypeCheck(b, &PyCmTLStream_Type)) {
    if (op == Py_EQ) Py_RETURN_FALSE;
    if (op == Py_NE) Py_RETURN_TRUE;
    Py_RETURN_NOTIMPLEMENTED;
  }
  cm_thread_local_stream x = ((PyCmTLStream *)a)->t, y = ((PyCmTLStream *)b)->t;
  bool eq = x.index == y.index && x.device.type == y.device.type &&
            x.device.index == y.device.index;
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyObject *tls_get_device(PyObject *self, void *closure) {
  (void)closure;
  return pycm_device_object(((PyCmTLStream *)self)->t.device);
}

static PyGetSetDef tls_getset[] = {
    {"device", tls_get_device, NULL, "The device of the stream.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject PyCmTLStream_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cmlx.core.ThreadLocalStream",
    .tp_basicsize = sizeof(PyCmTLStream),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A stream that resolves to a separate stream in each thread that uses it.",
    .tp_new = no_constructor,
    .tp_repr = tls_repr,
    .tp_hash = tls_hash,
    .tp_richcompare = tls_richcompare,
    .tp_getset = tls_getset,
};

/* ---- StreamContext ------------------------------------------------------- */

static void ctx_dealloc(PyObject *self) {
  Py_XDECREF(((PyCmStreamContext *)self)->target);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *ctx_enter(PyObject *self, PyObject *unused) {
  (void)unused;
  PyCmStreamContext *c = (PyCmStreamContext *)self;
  cm_stream s;
  if (pycm_stream_arg(c->target, &s)) return NULL;
  /* A device means its default stream (an error for an absent GPU). */
  if (cm_stream_resolve(s, &s)) return pycm_raise();
  c->prev_device = cm_default_device();
  if (cm_default_stream(c->prev_device, &c->prev_stream)) return pycm_raise();
  if (cm_set_default_device(s.device) || cm_set_default_stream(s)) {
    cm_error_record rec;
    cm_error_save(&rec);
    cm_set_default_device(c->prev_device);
    cm_set_default_stream(c->prev_stream);
    cm_error_restore(&rec);
    return pycm_raise();
  }
  c->entered = true;
  Py_RETURN_NONE;
}

static PyObject *ctx_exit(PyObject *self, PyObject *args) {
  (void)args;
  PyCmStreamContext *c = (PyCmStreamContext *)self;
  if (c->entered) {
    c->entered = false;
    if (cm_set_default_device(c->prev_device) || cm_set_default_stream(c->prev_stream))
      return pycm_raise();
  }
  Py_RETURN_NONE;
}

static PyMethodDef ctx_methods[] = {
    {"__enter__", ctx_enter, METH_NOARGS, NULL},
    {"__exit__", ctx_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject PyCmStreamContext_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cmlx.core.StreamContext",
    .tp_basicsize = sizeof(PyCmStreamContext),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A context manager for setting the current device and stream.",
    .tp_new = no_constructor,
    .tp_dealloc = ctx_dealloc,
    .tp_methods = ctx_methods,
};

/* ---- functions ----------------------------------------------------------- */

#define DEV_SIG(fn, ret) fn "(device: Device | DeviceType) -> " ret

static int one_device(const char *fn, const char *sig, PyObject *args, cm_device *d) {
  if (PyTuple_GET_SIZE(args) == 1 && device_arg_noraise(PyTuple_GET_ITEM(args, 0), d) == 0)
    return 0;
  pycm_signature_error(fn, sig, NULL, args, NULL);
  return -1;
}

static PyObject *py_default_device(PyObject *m, PyObject *unused) {
  (void)m, (void)unused;
  return pycm_device_object(cm_default_device());
}

static PyObject *py_set_default_device(PyObject *m, PyObject *args) {
  (void)m;
  cm_device d;
  if (one_device("set_default_device", DEV_SIG("set_default_device", "None"), args, &d))
    return NULL;
  if (cm_set_default_device(d)) return pycm_raise();
  Py_RETURN_NONE;
}

static PyObject *py_default_stream(PyObject *m, PyObject *args) {
  (void)m;
  cm_device d;
  cm_stream s;
  if (one_device("default_stream", DEV_SIG("default_stream", "Stream"), args, &d)) return NULL;
  if (cm_default_stream(d, &s)) return pycm_raise();
  return pycm_stream_object(s);
}

static PyObject *py_set_default_stream(PyObject *m, PyObject *args) {
  (void)m;
  if (PyTuple_GET_SIZE(args) != 1 ||
      !PyObject_TypeCheck(PyTuple_GET_ITEM(args, 0), &PyCmStream_Type))
    return pycm_signature_error("set_default_stream",
                                "set_default_stream(stream: cmlx.core.Stream) -> None", NULL, args,
                                NULL);
  /* The calling thread's default for the stream's device; as in MLX the
   * default device stays as it is. */
  if (cm_set_default_stream(((PyCmStream *)PyTuple_GET_ITEM(args, 0))->s)) return pycm_raise();
  Py_RETURN_NONE;
}

static PyObject *py_new_stream(PyObject *m, PyObject *args) {
  (void)m;
  cm_device d;
  cm_stream s;
  if (one_device("new_stream", DEV_SIG("new_stream", "Stream"), args, &d)) return NULL;
  if (cm_new_stream(d, &s)) return pycm_raise();
  return pycm_stream_object(s);
}

/* A stream any thread may evaluate on (new_stream's belongs to its maker). */
static PyObject *py_new_thread_unsafe_stream(PyObject *m, PyObject *args) {
  (void)m;
  cm_device d;
  cm_stream s;
  if (one_device("new_thread_unsafe_stream", DEV_SIG("new_thread_unsafe_stream", "Stream"), args,
                 &d))
    return NULL;
  if (cm_new_thread_unsafe_stream(d, &s)) return pycm_raise();
  return pycm_stream_object(s);
}

static PyObject *py_new_thread_local_stream(PyObject *m, PyObject *args) {
  (void)m;
  cm_device d;
  cm_thread_local_stream t;
  if (one_device("new_thread_local_stream", DEV_SIG("new_thread_local_stream", "ThreadLocalStream"),
                 args, &d))
    return NULL;
  if (cm_new_thread_local_stream(d, &t)) return pycm_raise();
  PyCmTLStream *o = PyObject_New(PyCmTLStream, &PyCmTLStream_Type);
  if (o) o->t = t;
  return (PyObject *)o;
}

/* Destroys the streams the calling thread made (the core keeps the
 * semantics: they stay its defaults, and evaluating on them fails). */
static PyObject *py_clear_streams(PyObject *m, PyObject *unused) {
  (void)m, (void)unused;
  cm_clear_streams();
  Py_RETURN_NONE;
}

static PyObject *py_stream(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  static char *kwlist[] = {"s", NULL};
  PyObject *o;
  cm_device d;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O:stream", kwlist, &o)) return NULL;
  if (!PyObject_TypeCheck(o, &PyCmStream_Type) && !PyObject_TypeCheck(o, &PyCmTLStream_Type) &&
      device_arg_noraise(o, &d))
    return pycm_signature_error(
        "stream",
        "stream(s: cmlx.core.Stream | cmlx.core.ThreadLocalStream | cmlx.core.Device | "
        "cmlx.core.DeviceType) -> cmlx.core.StreamContext",
        NULL, args, kw);
  PyCmStreamContext *c = PyObject_New(PyCmStreamContext, &PyCmStreamContext_Type);
  if (!c) return NULL;
  Py_INCREF(o);
  c->target = o;
  c->entered = false;
  return (PyObject *)c;
}

static PyObject *py_synchronize(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  static char *kwlist[] = {"stream", NULL};
  PyObject *o = Py_None;
  cm_stream s;
  int rc;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:synchronize", kwlist, &o)) return NULL;
  if (pycm_stream_arg(o, &s)) return NULL;
  if (cm_stream_resolve(s, &s)) return pycm_raise();
  Py_BEGIN_ALLOW_THREADS
  rc = cm_synchronize(s);
  Py_END_ALLOW_THREADS
  if (rc) return pycm_raise();
  Py_RETURN_NONE;
}

static PyObject *py_is_available(PyObject *m, PyObject *args) {
  (void)m;
  cm_device d;
  if (one_device("is_available", DEV_SIG("is_available", "bool"), args, &d)) return NULL;
  return PyBool_FromLong(cm_device_available(d));
}

static PyObject *py_device_count(PyObject *m, PyObject *args) {
  (void)m;
  cm_device_type t;
  if (PyTuple_GET_SIZE(args) != 1 || devtype_arg(PyTuple_GET_ITEM(args, 0), &t))
    return pycm_signature_error(
        "device_count", "device_count(device_type: cmlx.core.DeviceType) -> int", NULL, args, NULL);
  return PyLong_FromLong(cm_device_count(t));
}

static PyObject *py_device_info(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  static char *kwlist[] = {"d", NULL};
  PyObject *o = Py_None;
  cm_device d;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:device_info", kwlist, &o)) return NULL;
  if (o == Py_None) d = cm_default_device();
  else if (device_arg_noraise(o, &d))
    return pycm_signature_error(
        "device_info", "device_info(d: None | Device | DeviceType = None) -> dict[str, str | int]",
        NULL, args, kw);
  PyObject *dict = PyDict_New();
  cm_device_info_entry facts[CM_DEVICE_INFO_MAX];
  int n = dict ? cm_device_info(d, facts) : 0;
  for (int i = 0; i < n; i++) {
    const cm_device_info_entry *f = &facts[i];
    PyObject *v = f->is_string ? PyUnicode_FromString(f->str ? f->str : "")
                               : PyLong_FromLongLong((long long)f->num);
    int rc = v ? PyDict_SetItemString(dict, f->key, v) : -1;
    Py_XDECREF(v);
    if (rc) {
      Py_CLEAR(dict);
      break;
    }
  }
  return dict;
}

static PyMethodDef device_functions[] = {
    {"default_device", py_default_device, METH_NOARGS,
     "default_device() -> Device\n\nGet the default device."},
    {"set_default_device", py_set_default_device, METH_VARARGS,
     "set_default_device(device: Device | DeviceType) -> None\n\nSet the default device."},
    {"default_stream", py_default_stream, METH_VARARGS,
     "default_stream(device: Device | DeviceType) -> Stream\n\nGet the device's default stream."},
    {"set_default_stream", py_set_default_stream, METH_VARARGS,
     "set_default_stream(stream: Stream) -> None\n\nSet the default stream.\n\n"
     "This makes the given stream the calling thread's default for the stream's device. It does "
     "not change the default device."},
    {"new_stream", py_new_stream, METH_VARARGS,
     "new_stream(device: Device | DeviceType) -> Stream\n\n"
     "Make a new stream on the given device.\n\n"
     "The stream can only be used on the thread that created it; using it in any other thread "
     "is an error."},
    {"new_thread_unsafe_stream", py_new_thread_unsafe_stream, METH_VARARGS,
     "new_thread_unsafe_stream(device: Device | DeviceType) -> Stream\n\n"
     "Make a new stream that can be used in any thread."},
    {"new_thread_local_stream", py_new_thread_local_stream, METH_VARARGS,
     "new_thread_local_stream(device: Device | DeviceType) -> ThreadLocalStream\n\n"
     "Make a stream that is a separate stream in each thread that uses it."},
    {"clear_streams", py_clear_streams, METH_NOARGS,
     "clear_streams() -> None\n\nDestroy all streams created in current thread."},
    {"stream", PYCM_METH_KW(py_stream),
     "stream(s: Stream | ThreadLocalStream | Device | DeviceType) -> StreamContext\n\n"
     "Context manager that makes s the default device and stream inside its block."},
    {"synchronize", PYCM_METH_KW(py_synchronize),
     "synchronize(stream: Stream | None = None) -> None\n\n"
     "Wait until every task queued on the stream (default: the default stream) is done."},
    {"is_available", py_is_available, METH_VARARGS,
     "is_available(device: Device | DeviceType) -> bool"},
    {"device_count", py_device_count, METH_VARARGS, "device_count(device_type: DeviceType) -> int"},
    {"device_info", PYCM_METH_KW(py_device_info),
     "device_info(d: None | Device | DeviceType = None) -> dict[str, str | int]"},
    {NULL, NULL, 0, NULL},
};

int pycm_init_device(PyObject *m) {
  static const char *const names[2] = {"cpu", "gpu"};
  devtype_enum = pycm_add_enum(m, "DeviceType", names, 2, devtype_objs);
  if (!devtype_enum) return -1;
  if (pycm_add_type(m, "Device", &PyCmDevice_Type) ||
      pycm_add_type(m, "Stream", &PyCmStream_Type) ||
      pycm_add_type(m, "ThreadLocalStream", &PyCmTLStream_Type) ||
      pycm_add_type(m, "StreamContext", &PyCmStreamContext_Type))
    return -1;
  return PyModule_AddFunctions(m, device_functions);
}
