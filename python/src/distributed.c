/* cmlx.core.distributed: MLX's mx.distributed (python/src/distributed.cpp)
 * over src/distributed/group.h and src/ops/distributed.h. */
#include "ops/distributed.h"
#include "init.h"
#include "argparse.h"
#include "distributed/group.h"
#include "ops_lists.h"

/* ---- Group ---------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  cm_group *g; /* groups live until exit */
} PyCmGroup;

static PyTypeObject PyCmGroup_Type;

static PyObject *wrap_group(cm_group *g) {
  if (!g) return pycm_raise();
  PyCmGroup *o = PyObject_New(PyCmGroup, &PyCmGroup_Type);
  if (o) o->g = g;
  return (PyObject *)o;
}

static PyObject *group_rank(PyObject *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromLong(((PyCmGroup *)self)->g->rank);
}

static PyObject *group_size(PyObject *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromLong(((PyCmGroup *)self)->g->size);
}

static PyObject *group_split(PyObject *self, PyObject *args, PyObject *kw) {
  static char *names[] = {"color", "key", NULL};
  int color, key = -1;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "i|i:split", names, &color, &key)) return NULL;
  cm_group *r;
  Py_BEGIN_ALLOW_THREADS
  r = cm_group_split(((PyCmGroup *)self)->g, color, key);
  Py_END_ALLOW_THREADS
  return wrap_group(r);
}

static PyMethodDef group_methods[] = {
    {"rank", group_rank, METH_NOARGS, "rank(self) -> int\n\nGet the rank of this process"},
    {"size", group_size, METH_NOARGS, "size(self) -> int\n\nGet the size of the group"},
    {"split", (PyCFunction)(void (*)(void))group_split, METH_VARARGS | METH_KEYWORDS,
     "split(self, color: int, key: int = -1) -> Group\n\n"
     "Split the group to subgroups based on the provided color."},
    {NULL, NULL, 0, NULL},
};

static PyObject *group_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  (void)args, (void)kw;
  PyErr_Format(PyExc_TypeError, "%s: no constructor defined!", type->tp_name);
  return NULL;
}

static PyTypeObject PyCmGroup_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cmlx.core.distributed.Group",
    .tp_basicsize = sizeof(PyCmGroup),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An :class:`mlx.core.distributed.Group` represents a group of independent mlx\n"
              "processes that can communicate.",
    .tp_new = group_new,
    .tp_methods = group_methods,
};

/* ---- is_available and init ------------------------------------------------- */

static PyObject *dist_is_available(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *names[] = {"backend", NULL};
  const char *bk = "any";
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|s:is_available", names, &bk)) return NULL;
  return PyBool_FromLong(cm_dist_is_available(bk));
}

static PyObject *dist_init(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  static char *names[] = {"strict", "backend", "all_gather_factory", NULL};
  int strict = 0;
  const char *bk = "any";
  PyObject *factory = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|ps$O:init", names, &strict, &bk, &factory))
    return NULL;
  if (factory != Py_None) {
    if (!PyCallable_Check(factory))
      return PyErr_Format(PyExc_TypeError,
                          "init(): incompatible function arguments: all_gather_factory must be "
                          "a callable or None, not %s",
                          Py_TYPE(factory)->tp_name);
    if (strcmp(bk, "jaccl"))
      return PyErr_Format(PyExc_ValueError,
                          "all_gather_factory is only supported with backend='jaccl'.");
  }
  cm_group *g;
  Py_BEGIN_ALLOW_THREADS
  g = cm_dist_init(strict, bk);
  Py_END_ALLOW_THREADS
  return wrap_group(g);
}

static PyMethodDef dist_functions[] = {
    {"is_available", (PyCFunction)(void (*)(void))dist_is_available, METH_VARARGS | METH_KEYWORDS,
     "is_available(backend: str = 'any') -> bool\n\n"
     "Check if a communication backend is available."},
    {"init", (PyCFunction)(void (*)(void))dist_init, METH_VARARGS | METH_KEYWORDS,
     "init(strict: bool = False, backend: str = 'any', *, all_gather_factory: Callable[[int, "
     "int], Callable[[bytes, int], bytes]] | None = None) -> Group\n\n"
     "Initialize the communication backend and create the global communication group."},
    {NULL, NULL, 0, NULL},
};

/* ---- the collectives ---------------------------------------------------------- */

/* the group argument at v: 0 and *g (NULL for None), 1 if it is no Group */
static int group_arg(const pa_value *v, cm_group **g) {
  *g = NULL;
  if (v->none) return 0;
  if (!PyObject_TypeCheck(v->obj, &PyCmGroup_Type)) return 1;
  *g = ((PyCmGroup *)v->obj)->g;
  return 0;
}

typedef cm_array *(*collective_fn)(cm_array *x, cm_group *g, cm_stream s);
#define PYCM_COLL(name_, fn_)                                                                   \
  PYCM_ROW(name_, "x: arraylike, *, group: object | None = None, stream: Stream = None",        \
           "(x: array, *, group: Group | None = None, stream: StreamOrDevice = None) -> array", \
           impl_collective, unary_group, fn_)

static PyObject *call_x(const pycm_op *op, pa_call *c, int gi,
                        cm_array *(*fn)(cm_array *, const pa_call *, cm_group *, cm_stream,
                                        const pycm_op *)) {
  cm_group *g;
  if (group_arg(&c->v[gi], &g)) return pa_value_type_error(op, c);
  cm_array *x = pa_to_array(c->v[0].obj, -1);
  if (!x) return NULL;
  cm_array *r = fn(x, c, g, pa_stream(op, c), op);
  cm_release(x);
  return pycm_wrap(r);
}

static cm_array *run_collective(cm_array *x, const pa_call *c, cm_group *g, cm_stream s,
                                const pycm_op *op) {
  (void)c;
  return op->fn.unary_group(x, g, s);
}

static PyObject *impl_collective(const pycm_op *op, pa_call *c) {
  return call_x(op, c, 1, run_collective);
}

static cm_array *run_send(cm_array *x, const pa_call *c, cm_group *g, cm_stream s,
                          const pycm_op *op) {
  (void)op;
  return cm_dist_send(x, (int)c->v[1].i, g, s);
}

static PyObject *impl_send(const pycm_op *op, pa_call *c) { return call_x(op, c, 2, run_send); }

static cm_array *run_recv_like(cm_array *x, const pa_call *c, cm_group *g, cm_stream s,
                               const pycm_op *op) {
  (void)op;
  return cm_dist_recv_like(x, (int)c->v[1].i, g, s);
}

static PyObject *impl_recv_like(const pycm_op *op, pa_call *c) {
  return call_x(op, c, 2, run_recv_like);
}

static PyObject *impl_recv(const pycm_op *op, pa_call *c) {
  cm_group *g;
  if (group_arg(&c->v[3], &g)) return pa_value_type_error(op, c);
  const pa_value *v = c->v;
  return pycm_wrap(
      cm_dist_recv(v[0].ndim, v[0].shape, v[1].dtype, (int)v[2].i, g, pa_stream(op, c)));
}

static pycm_op dist_ops[] = {
    PYCM_COLL("all_sum", cm_dist_all_sum),
    PYCM_COLL("all_max", cm_dist_all_max),
    PYCM_COLL("all_min", cm_dist_all_min),
    PYCM_COLL("all_gather", cm_dist_all_gather),
    PYCM_COLL("sum_scatter", cm_dist_sum_scatter),
    PYCM_CALL("send",
              "x: arraylike, dst: int, *, group: object | None = None, stream: Stream = None",
              "(x: array, dst: int, *, group: Group | None = None, stream: StreamOrDevice = None)"
              " -> array",
              impl_send),
    PYCM_CALL("recv",
              "shape: shapeseq, dtype: Dtype, src: int, *, group: object | None = None, "
              "stream: Stream = None",
              "(shape: Sequence[int], dtype: Dtype, src: int, *, group: Group | None = None, "
              "stream: StreamOrDevice = None) -> array",
              impl_recv),
    PYCM_CALL("recv_like",
              "x: arraylike, src: int, *, group: object | None = None, stream: Stream = None",
              "(x: array, src: int, *, group: Group | None = None, stream: StreamOrDevice = None)"
              " -> array",
              impl_recv_like),
};

int pycm_init_distributed(PyObject *m) {
  PyObject *d =
      pycm_add_submodule(m, "distributed", "mlx.core.distributed: Communication operations");
  if (!d || pycm_add_type(d, "Group", &PyCmGroup_Type) || PyModule_AddFunctions(d, dist_functions))
    return -1;
  return pa_add_functions(d, dist_ops, (int)(sizeof dist_ops / sizeof dist_ops[0]));
}
