/* cmlx.core.linalg: MLX's mx.linalg (python/src/linalg.cpp in MLX) over
 * src/ops/linalg.h.  Functions with several results return tuples, as
 * MLX's do; svd(compute_uv=False) returns the singular values alone. */
#include "ops/linalg.h"
#include "init.h"
#include "argparse.h"
#include "ops_lists.h"

#define KW_S "*, stream: Stream = None"
#define SIG_S "*, stream: StreamOrDevice = None)"

/* a Python int or float (not bool-only types like str): 0, 1 if not */
static int ord_number(PyObject *o, double *out) {
  if (PyLong_Check(o) || PyFloat_Check(o)) {
    *out = PyFloat_AsDouble(o);
    return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
  }
  return 1;
}

/* norm(a, /, ord=None, axis=None, keepdims=False, *, stream=None) */
static PyObject *impl_norm(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_stream s = pa_stream(op, c);
  int axes[CM_MAX_DIMS];
  const int *ax = NULL;
  int n = 0;
  if (!v[2].none) {
    n = v[2].ndim;
    for (int i = 0; i < n; i++) axes[i] = v[2].shape[i];
    ax = axes;
  }
  bool kd = v[3].b;
  if (v[1].none) return pycm_wrap(cm_linalg_norm_l2(v[0].arr, ax, n, kd, s));
  if (PyUnicode_Check(v[1].obj)) {
    const char *o = PyUnicode_AsUTF8(v[1].obj);
    return o ? pycm_wrap(cm_linalg_norm_str(v[0].arr, o, ax, n, kd, s)) : NULL;
  }
  double ord;
  int r = ord_number(v[1].obj, &ord);
  if (r) return r > 0 ? pa_value_type_error(op, c) : NULL;
  return pycm_wrap(cm_linalg_norm_ord(v[0].arr, ord, ax, n, kd, s));
}

static PyObject *two(int rc, cm_array *x, cm_array *y) {
  cm_array *o[2] = {x, y};
  if (rc) return pycm_raise();
  return pa_wrap_arrays(o, 2, true);
}

static PyObject *impl_svd(const pycm_op *op, pa_call *c) {
  cm_array *o[3];
  int n;
  if (cm_linalg_svd_uv(c->v[0].arr, c->v[1].b, o, &n, pa_stream(op, c))) return pycm_raise();
  return n == 1 ? pycm_wrap(o[0]) : pa_wrap_arrays(o, 3, true);
}

static PyObject *impl_qr(const pycm_op *op, pa_call *c) {
  cm_array *q, *r;
  int rc = cm_linalg_qr(c->v[0].arr, &q, &r, pa_stream(op, c));
  return two(rc, q, r);
}

static PyObject *impl_eig(const pycm_op *op, pa_call *c) {
  cm_array *w, *v;
  int rc = cm_linalg_eig(c->v[0].arr, &w, &v, pa_stream(op, c));
  return two(rc, w, v);
}

/* UPLO: str = 'L' (given as object) */
static int uplo_arg(const pycm_op *op, const pa_call *c, const char **u) {
  int r = pa_str_arg(&c->v[1], "L", u);
  if (r > 0) pa_value_type_error(op, c);
  return r;
}

static PyObject *impl_eigh(const pycm_op *op, pa_call *c) {
  const char *u;
  cm_array *w, *v;
  if (uplo_arg(op, c, &u)) return NULL;
  int rc = cm_linalg_eigh(c->v[0].arr, u, &w, &v, pa_stream(op, c));
  return two(rc, w, v);
}

static PyObject *impl_eigvalsh(const pycm_op *op, pa_call *c) {
  const char *u;
  if (uplo_arg(op, c, &u)) return NULL;
  return pycm_wrap(cm_linalg_eigvalsh(c->v[0].arr, u, pa_stream(op, c)));
}

static PyObject *impl_lu(const pycm_op *op, pa_call *c) {
  cm_array *o[3];
  if (cm_linalg_lu(c->v[0].arr, o, pa_stream(op, c))) return pycm_raise();
  return pa_wrap_arrays(o, 3, true);
}

static PyObject *impl_lu_factor(const pycm_op *op, pa_call *c) {
  cm_array *lu, *p;
  int rc = cm_linalg_lu_factor(c->v[0].arr, &lu, &p, pa_stream(op, c));
  return two(rc, lu, p);
}

static PyObject *impl_slogdet(const pycm_op *op, pa_call *c) {
  cm_array *sg, *la;
  int rc = cm_linalg_slogdet(c->v[0].arr, &sg, &la, pa_stream(op, c));
  return two(rc, sg, la);
}

/* fn(a, upper: bool, s) */
static PyObject *impl_upper(const pycm_op *op, pa_call *c) {
  return pycm_wrap(op->fn.upper(c->v[0].arr, c->v[1].b, pa_stream(op, c)));
}
#define UPPER_ROW(name, fn)                              \
  PYCM_ROW(name, "a: array, upper: bool = False, " KW_S, \
           "(a: array, upper: bool = False, " SIG_S " -> array", impl_upper, upper, fn)

static PyObject *impl_solve_triangular(const pycm_op *op, pa_call *c) {
  return pycm_wrap(
      cm_linalg_solve_triangular(c->v[0].arr, c->v[1].arr, c->v[2].b, pa_stream(op, c)));
}

static PyObject *impl_cross(const pycm_op *op, pa_call *c) {
  return pycm_wrap(cm_linalg_cross(c->v[0].arr, c->v[1].arr, (int)c->v[2].i, pa_stream(op, c)));
}

#define A_SPEC "a: array, " KW_S
#define A_SIG "(a: array, " SIG_S
#define ARR " -> array"
#define UN(name, fn) PYCM_ROW(name, "a: array, " KW_S, A_SIG ARR, pa_impl_unary, unary, fn)

static pycm_op linalg_ops[] = {
    PYCM_CALL("norm",
              "a: array, /, ord: object | None = None, axis: axes | None = None, keepdims: bool "
              "= False, " KW_S,
              "(a: array, /, ord: None | int | float | str = None, axis: None | int | list[int] "
              "= None, keepdims: bool = False, " SIG_S ARR,
              impl_norm),
    PYCM_CALL("qr", A_SPEC, A_SIG " -> tuple[array, array]", impl_qr),
    PYCM_CALL("svd", "a: array, compute_uv: bool = True, " KW_S,
              "(a: array, compute_uv: bool = True, " SIG_S " -> tuple[array, array, array]",
              impl_svd),
    UN("inv", cm_linalg_inv),
    UPPER_ROW("tri_inv", cm_linalg_tri_inv),
    UPPER_ROW("cholesky", cm_linalg_cholesky),
    UPPER_ROW("cholesky_inv", cm_linalg_cholesky_inv),
    UN("pinv", cm_linalg_pinv),
    PYCM_CALL("cross", "a: array, b: array, axis: int = -1, " KW_S,
              "(a: array, b: array, axis: int = -1, " SIG_S ARR, impl_cross),
    PYCM_CALL("eig", A_SPEC, A_SIG " -> tuple[array, array]", impl_eig),
    UN("eigvals", cm_linalg_eigvals),
    PYCM_CALL("eigh", "a: array, UPLO: object | None = None, " KW_S,
              "(a: array, UPLO: str = 'L', " SIG_S " -> tuple[array, array]", impl_eigh),
    PYCM_CALL("eigvalsh", "a: array, UPLO: object | None = None, " KW_S,
              "(a: array, UPLO: str = 'L', " SIG_S ARR, impl_eigvalsh),
    PYCM_CALL("lu", A_SPEC, A_SIG " -> tuple[array, array, array]", impl_lu),
    PYCM_CALL("lu_factor", A_SPEC, A_SIG " -> tuple[array, array]", impl_lu_factor),
    PYCM_ROW("solve", "a: array, b: array, " KW_S, "(a: array, b: array, " SIG_S ARR,
             pa_impl_binary, binary, cm_linalg_solve),
    PYCM_CALL("solve_triangular",
              "a: array, b: array, *, upper: bool = False, stream: Stream = None",
              "(a: array, b: array, *, upper: bool = False, stream: StreamOrDevice = None)" ARR,
              impl_solve_triangular),
    UN("det", cm_linalg_det),
    PYCM_CALL("slogdet", A_SPEC, A_SIG " -> tuple[array, array]", impl_slogdet),
};
#define N_LINALG_OPS ((int)(sizeof linalg_ops / sizeof linalg_ops[0]))

int pycm_init_linalg(PyObject *m) {
  PyObject *l = pycm_add_submodule(m, "linalg", "mlx.core.linalg: linear algebra routines");
  if (!l || pa_add_functions(l, linalg_ops, N_LINALG_OPS)) return -1;
  /* MLX's Array API alias: mx.matrix_norm is mx.linalg.norm itself */
  PyObject *norm = PyObject_GetAttrString(l, "norm");
  int rc = norm ? PyModule_AddObjectRef(m, "matrix_norm", norm) : -1;
  Py_XDECREF(norm);
  return rc;
}
