/* Function transformations: the C bindings of the engines.
 *
 * vjp and jvp are MLX's flat functions (lists of arrays in and out) and are
 * bound here completely.  vmap is split in two (_vmap_trace and
 * _vmap_replace) because the Python front end flattens the out_axes tree
 * against the traced outputs; grad, value_and_grad, vmap, checkpoint and
 * custom_function themselves are in cmlx/_transforms.py (pytree plumbing).
 *
 * The engines call a cm_closure synchronously on the calling thread, so the
 * Python function is called with the GIL that the binding already holds.
 * A Python exception raised inside the function is kept aside while the
 * engine unwinds and re-raised unchanged afterwards. */
#include "init.h"
#include "transforms_util.h"

#include <stdlib.h>

#include "primitives/unary.h"
#include "transforms/autodiff.h"
#include "transforms/vmap.h"

/* (list of a, list of b), what vjp, jvp and the vmap trace hand back. */
static PyObject *list_pair(cm_array *const *a, int na, cm_array *const *b, int nb) {
  PyObject *la = pytr_list(a, na), *lb = la ? pytr_list(b, nb) : NULL;
  PyObject *r = lb ? PyTuple_Pack(2, la, lb) : NULL;
  Py_XDECREF(la);
  Py_XDECREF(lb);
  return r;
}

/* ---- vjp and jvp ------------------------------------------------------------ */

/* The closure of vjp: fun's outputs that are stop_gradient nodes get no
 * cotangent (MLX's rule), so the engine is shown the outputs matched with
 * the cotangents, and a cotangent left over is matched with itself (a
 * constant: it contributes nothing). */
typedef struct vjp_ctx {
  PyObject *fun;
  cm_array *const *cots;
  int ncots;
  cm_array **outs; /* everything fun returned */
  int nout;
} vjp_ctx;

static int vjp_call(void *vctx, cm_array *const *in, int nin, cm_array ***out, int *nout) {
  vjp_ctx *c = vctx;
  cm_array_list_free(c->outs, c->nout);
  c->outs = NULL;
  c->nout = 0;
  if (pytr_call(c->fun, in, nin, &c->outs, &c->nout, "vjp")) return -1;
  cm_array **shown = malloc(sizeof *shown * (size_t)(c->ncots ? c->ncots : 1));
  if (!shown) return cm_error(CM_ERR_MEMORY, "[vjp] Out of memory.");
  int k = 0;
  for (int i = 0; i < c->nout; i++) {
    cm_array *o = c->outs[i];
    if (o->prim == &cm_prim_stop_gradient) continue;
    if (k >= c->ncots) {
      cm_array_list_free(shown, k);
      return cm_error(CM_ERR_VALUE,
                      "[vjp] Number of outputs to compute gradients for (%d) does not match number "
                      "of cotangents (%d).",
                      c->nout, c->ncots);
    }
    const cm_array *ct = c->cots[k];
    bool same = o->ndim == ct->ndim;
    for (int d = 0; same && d < o->ndim; d++) same = o->shape[d] == ct->shape[d];
    if (!same) {
      char sa[256], sb[256];
      cm_array_list_free(shown, k);
      return cm_error(CM_ERR_VALUE, "[vjp] Output shape %s does not match cotangent shape %s.%s",
                      cm_shape_str(sa, sizeof sa, o->ndim, o->shape),
                      cm_shape_str(sb, sizeof sb, ct->ndim, ct->shape),
                      c->nout == 1 && o->size == 1
                          ? " If you are using grad your function must return a scalar."
                          : "");
    }
    shown[k++] = cm_retain(o);
  }
  for (; k < c->ncots; k++) shown[k] = cm_retain(c->cots[k]);
  *out = shown;
  *nout = c->ncots;
  return 0;
}

static const char VJP_SIG[] = "vjp(fun: Callable, primals: list[array], cotangents: list[array]) "
                              "-> tuple[list[array], list[array]]";
static const char JVP_SIG[] = "jvp(fun: Callable, primals: list[array], tangents: list[array]) "
                              "-> tuple[list[array], list[array]]";

/* Parse (fun, primals, seeds) as MLX's nanobind signature does. */
static int parse_flat(const char *name, const char *sig, const char *seedname, PyObject *args,
                      PyObject *kw, PyObject **fun, cm_array ***p, int *np, cm_array ***sd,
                      int *ns) {
  char *kwlist[] = {"fun", "primals", (char *)seedname, NULL};
  PyObject *f, *po, *so;
  *p = *sd = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO", kwlist, &f, &po, &so)) {
    pycm_signature_error(name, sig, NULL, args, kw);
    return -1;
  }
  int rc = PyCallable_Check(f) ? pytr_array_seq(po, p, np) : 1;
  if (!rc) rc = pytr_array_seq(so, sd, ns);
  if (rc) {
    if (*p) cm_array_list_free(*p, *np);
    *p = NULL;
    if (rc > 0) pycm_signature_error(name, sig, NULL, args, kw);
    return -1;
  }
  *fun = f;
  return 0;
}

static PyObject *py_vjp(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  PyObject *fun;
  cm_array **p, **ct;
  int np, nc;
  if (parse_flat("vjp", VJP_SIG, "cotangents", args, kw, &fun, &p, &np, &ct, &nc)) return NULL;
  vjp_ctx c = {fun, ct, nc, NULL, 0};
  cm_closure f = {vjp_call, &c};
  cm_array **shown = NULL, **grads = NULL;
  int nshown = 0;
  int rc = cm_vjp(f, p, np, ct, nc, &shown, &nshown, &grads);
  PyObject *r = NULL;
  if (!rc) {
    r = list_pair(c.outs, c.nout, grads, np);
  } else {
    pytr_raise();
  }
  cm_array_list_free(shown, nshown);
  if (!rc) cm_array_list_free(grads, np);
  cm_array_list_free(c.outs, c.nout);
  cm_array_list_free(p, np);
  cm_array_list_free(ct, nc);
  return r;
}

typedef struct fun_ctx {
  PyObject *fun;
  const char *who;
} fun_ctx;

static int fun_call(void *vctx, cm_array *const *in, int nin, cm_array ***out, int *nout) {
  fun_ctx *c = vctx;
  return pytr_call(c->fun, in, nin, out, nout, c->who);
}

static PyObject *py_jvp(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  PyObject *fun, *r = NULL;
  cm_array **p, **t;
  int np, nt;
  if (parse_flat("jvp", JVP_SIG, "tangents", args, kw, &fun, &p, &np, &t, &nt)) return NULL;
  /* MLX's messages for these two checks (the engine words them longer). */
  if (np != nt) {
    PyErr_SetString(PyExc_ValueError, "[jvp] Number of inputs does not match number of tangents.");
    goto done;
  }
  for (int i = 0; i < np; i++) {
    bool same = p[i]->ndim == t[i]->ndim;
    for (int d = 0; same && d < p[i]->ndim; d++) same = p[i]->shape[d] == t[i]->shape[d];
    if (!same) {
      PyErr_SetString(PyExc_ValueError, "[jvp] Input shape does not match shape of tangent.");
      goto done;
    }
  }
  fun_ctx c = {fun, "jvp"};
  cm_closure f = {fun_call, &c};
  cm_array **outs = NULL, **tans = NULL;
  int nout = 0;
  if (cm_jvp(f, p, np, t, nt, &outs, &nout, &tans)) {
    pytr_raise();
    goto done;
  }
  r = list_pair(outs, nout, tans, nout);
  cm_array_list_free(outs, nout);
  cm_array_list_free(tans, nout);
done:
  cm_array_list_free(p, np);
  cm_array_list_free(t, nt);
  return r;
}

/* ---- vmap halves ------------------------------------------------------------ */

/* A list of ints / None (None -> CM_VMAP_NONE) of length n. */
static int parse_axes(PyObject *o, int n, int **axes) {
  PyObject *seq = PySequence_Fast(o, "[vmap] axes must be a list.");
  if (!seq) return -1;
  if (PySequence_Fast_GET_SIZE(seq) != n && !(n == 0 && PySequence_Fast_GET_SIZE(seq) == 0)) {
    Py_DECREF(seq);
    PyErr_Format(PyExc_ValueError, "[vmap] Expected %d axes.", n);
    return -1;
  }
  *axes = malloc(sizeof(int) * (size_t)(n ? n : 1));
  if (!*axes) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return -1;
  }
  for (int i = 0; i < n; i++) {
    PyObject *it = PySequence_Fast_GET_ITEM(seq, i);
    long v = it == Py_None ? 0 : PyLong_AsLong(it);
    if (v == -1 && PyErr_Occurred()) {
      free(*axes);
      Py_DECREF(seq);
      return -1;
    }
    (*axes)[i] = it == Py_None ? CM_VMAP_NONE : (int)v;
  }
  Py_DECREF(seq);
  return 0;
}

static int arrays_arg(PyObject *o, cm_array ***v, int *n, const char *what) {
  int rc = pytr_array_seq(o, v, n);
  if (rc > 0) PyErr_Format(PyExc_TypeError, "[vmap] %s must be a list of arrays.", what);
  return rc ? -1 : 0;
}

/* _vmap_trace(fun, inputs, in_axes) -> (s_inputs, s_outputs) */
static PyObject *py_vmap_trace(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *fun, *io, *ao, *r = NULL;
  if (!PyArg_ParseTuple(args, "OOO", &fun, &io, &ao)) return NULL;
  cm_array **in = NULL, **s_in = NULL, **s_out = NULL;
  int n = 0, nout = 0, *axes = NULL;
  if (arrays_arg(io, &in, &n, "inputs") || parse_axes(ao, n, &axes)) goto done;
  fun_ctx c = {fun, "vmap"};
  cm_closure f = {fun_call, &c};
  if (cm_vmap_trace(f, in, n, axes, &s_in, &s_out, &nout)) {
    pytr_raise();
    goto done;
  }
  r = list_pair(s_in, n, s_out, nout);
  cm_array_list_free(s_in, n);
  cm_array_list_free(s_out, nout);
done:
  if (in) cm_array_list_free(in, n);
  free(axes);
  return r;
}

/* _vmap_replace(inputs, s_inputs, s_outputs, in_axes, out_axes) -> outputs */
static PyObject *py_vmap_replace(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *io, *sio, *soo, *ao, *oo, *r = NULL;
  if (!PyArg_ParseTuple(args, "OOOOO", &io, &sio, &soo, &ao, &oo)) return NULL;
  cm_array **in = NULL, **s_in = NULL, **s_out = NULL, **res = NULL;
  int n = 0, ns = 0, nout = 0, *axes = NULL, *oaxes = NULL;
  if (arrays_arg(io, &in, &n, "inputs") || arrays_arg(sio, &s_in, &ns, "inputs") ||
      arrays_arg(soo, &s_out, &nout, "outputs") || parse_axes(ao, n, &axes) ||
      parse_axes(oo, nout, &oaxes))
    goto done;
  if (ns != n) {
    PyErr_SetString(PyExc_ValueError, "[vmap] The traced inputs do not match the inputs.");
    goto done;
  }
  if (cm_vmap_replace(in, s_in, n, s_out, nout, axes, oaxes, nout, &res)) {
    pytr_raise();
    goto done;
  }
  r = pytr_list(res, nout);
  cm_array_list_free(res, nout);
done:
  if (in) cm_array_list_free(in, n);
  if (s_in) cm_array_list_free(s_in, ns);
  if (s_out) cm_array_list_free(s_out, nout);
  free(axes);
  free(oaxes);
  return r;
}

static PyObject *py_signature_error(PyObject *self, PyObject *args) {
  (void)self;
  const char *name, *sig;
  PyObject *a, *kw;
  if (!PyArg_ParseTuple(args, "ssOO", &name, &sig, &a, &kw)) return NULL;
  return pycm_signature_error(name, sig, NULL, PyTuple_Check(a) ? a : NULL,
                              PyDict_Check(kw) ? kw : NULL);
}

static PyMethodDef transforms_methods[] = {
    {"vjp", PYCM_METH_KW(py_vjp),
     "vjp(fun: Callable, primals: list[array], cotangents: list[array]) -> tuple[list[array], "
     "list[array]]\n\n"
     "Compute the vector-Jacobian product: the outputs of ``fun(*primals)`` and\n"
     "the products of the ``cotangents`` with its Jacobian (one per primal)."},
    {"jvp", PYCM_METH_KW(py_jvp),
     "jvp(fun: Callable, primals: list[array], tangents: list[array]) -> tuple[list[array], "
     "list[array]]\n\n"
     "Compute the Jacobian-vector product: the outputs of ``fun(*primals)`` and\n"
     "the products of its Jacobian with the ``tangents`` (one per output)."},
    {"_vmap_trace", py_vmap_trace, METH_VARARGS, "Internal: trace fun on vmap placeholders."},
    {"_vmap_replace", py_vmap_replace, METH_VARARGS,
     "Internal: replay a vmap trace on batched inputs."},
    {"_signature_error", py_signature_error, METH_VARARGS,
     "Internal: raise MLX's argument TypeError."},
    {NULL, NULL, 0, NULL},
};

int pycm_init_transforms(PyObject *m) {
  if (PyModule_AddFunctions(m, transforms_methods)) return -1;
  return pytr_init_custom(m) || pytr_init_compile(m) || pytr_init_export(m) ? -1 : 0;
}
