/* The array object: PyCmArray_Type's storage, its lifetime, and pycm_wrap,
 * which every binding uses to hand a result back.
 *
 * Only what needs nothing above util.h is here.  The type's behaviour
 * (construction, properties, methods, operators, indexing, the buffer
 * protocol) comes from files that themselves wrap arrays, so array.c fills
 * those slots in at init, before PyType_Ready; defined here, the type
 * object is below all of them and no file depends on one above it. */
#include "cmlx_py.h"

PyObject *pycm_wrap(cm_array *a) {
  if (!a) return PyErr_Occurred() ? NULL : pycm_raise();
  PyCmArray *o = (PyCmArray *)PyCmArray_Type.tp_alloc(&PyCmArray_Type, 0);
  if (!o) {
    cm_release(a);
    return NULL;
  }
  o->arr = a;
  return (PyObject *)o;
}

static void array_dealloc(PyObject *self) {
  PyCmArray *o = (PyCmArray *)self;
  if (o->weakreflist) PyObject_ClearWeakRefs(self);
  cm_release(o->arr);
  Py_TYPE(self)->tp_free(self);
}

PyTypeObject PyCmArray_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cmlx.core.array",
    .tp_basicsize = sizeof(PyCmArray),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "An N-dimensional array object.",
    .tp_dealloc = array_dealloc,
    .tp_weaklistoffset = offsetof(PyCmArray, weakreflist),
};
