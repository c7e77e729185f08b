/* cmlx.core.random: MLX's mx.random (python/src/random.cpp in MLX) over
 * src/ops/random.h.
 *
 * As in MLX's bindings, a call without key= first advances the calling
 * thread's global key (before its arguments are converted, so a call that
 * then fails has still used a key, as in MLX), and scalars become arrays
 * with MLX's to_array rules.  mx.random.state is the process-wide
 * sentinel MLX exposes: state[0] is the calling thread's current key.
 * bits() is MLX's C++ random::bits, which MLX's Python module does not
 * expose; cmlx adds it (and mlx-c has it as mlx_random_bits). */
#include "ops/random.h"
#include "init.h"
#include "argparse.h"

/* key: array | None; None draws from the global key.  A new reference, or
 * NULL with the Python error set. */
static cm_array *key_arg(const pa_value *v) {
  cm_array *k = v->none ? cm_random_next_key() : cm_retain(v->arr);
  return k ? k : (cm_array *)pycm_raise();
}

/* A "scalar | array" argument with its default as MLX's to_array makes
 * it (an int is int32, a float float32). */
static cm_array *scalar_arg(const pa_value *v) {
  if (v->given) return pa_to_array(v->obj, -1);
  cm_array *r = v->kind == PA_KIND_FLOAT ? cm_array_scalar_double(v->f, CM_FLOAT32)
                                         : cm_array_scalar_int(v->i, CM_INT32);
  return r ? r : (cm_array *)pycm_raise();
}

/* to_array(x, dtype): arrays as they are, scalars converted to dtype. */
static cm_array *scalar_arg_as(const pa_value *v, cm_dtype dtype) {
  if (PyCmArray_Check(v->obj)) return cm_retain(((PyCmArray *)v->obj)->arr);
  return pa_to_array(v->obj, (int)dtype);
}

static cm_dtype dtype_or(const pa_value *v, cm_dtype dflt) { return v->none ? dflt : v->dtype; }

/* Releases up to four arrays and wraps r (NULL: raises the core's error,
 * or keeps the Python error already set). */
static PyObject *done(cm_array *r, cm_array *a, cm_array *b, cm_array *c, cm_array *d) {
  cm_release(a);
  cm_release(b);
  cm_release(c);
  cm_release(d);
  return pycm_wrap(r);
}

/* ---- the functions ------------------------------------------------------ */

static PyObject *impl_seed(const pycm_op *op, pa_call *c) {
  (void)op;
  cm_random_seed(c->v[0].u);
  Py_RETURN_NONE;
}

static PyObject *impl_key(const pycm_op *op, pa_call *c) {
  (void)op;
  return pycm_wrap(cm_random_key(c->v[0].u));
}

/* split(key, num=2, stream=None) */
static PyObject *impl_split(const pycm_op *op, pa_call *c) {
  return pycm_wrap(cm_random_split_num(c->v[0].arr, (int)c->v[1].i, pa_stream(op, c)));
}

/* bits(shape=[], width=4, key=None, stream=None) */
static PyObject *impl_bits(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array *key = key_arg(&v[2]);
  if (!key) return NULL;
  cm_array *r = cm_random_bits(v[0].ndim, v[0].shape, (int)v[1].i, key, pa_stream(op, c));
  return done(r, key, NULL, NULL, NULL);
}

/* The bounded family: name(low, high, shape, dtype, key, stream) for
 * uniform (bounds default to 0 and 1), randint and truncated_normal (shape
 * None: the bounds' broadcast shape).  dtype None is the row's default. */
static PyObject *impl_bounded(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array *key = key_arg(&v[4]), *lo = NULL, *hi = NULL;
  if (!key) return NULL;
  /* uniform's defaults as NULL: the core then skips range * u + 0 */
  bool defaults = !v[0].given && !v[1].given;
  if (!defaults && (!(lo = scalar_arg(&v[0])) || !(hi = scalar_arg(&v[1]))))
    return done(NULL, key, lo, hi, NULL);
  cm_dtype dt = dtype_or(&v[3], op->compiled.p[3].def_dtype);
  cm_array *r =
      op->fn.bounded(lo, hi, v[2].none ? -1 : v[2].ndim, v[2].shape, dt, key, pa_stream(op, c));
  return done(r, key, lo, hi, NULL);
}
#define BOUNDED_ROW(name, spec, sig, fn) PYCM_ROW(name, spec, sig, impl_bounded, bounded, fn)

/* normal(shape=[], dtype=float32, loc=None, scale=None, key=None, stream) */
static PyObject *impl_normal(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_dtype dt = dtype_or(&v[1], CM_FLOAT32);
  cm_array *key = key_arg(&v[4]), *loc = NULL, *scale = NULL;
  if (!key) return NULL;
  if ((!v[2].none && !(loc = scalar_arg_as(&v[2], dt))) ||
      (!v[3].none && !(scale = scalar_arg_as(&v[3], dt))))
    return done(NULL, key, loc, scale, NULL);
  cm_array *r = cm_random_normal(v[0].ndim, v[0].shape, dt, loc, scale, key, pa_stream(op, c));
  return done(r, key, loc, scale, NULL);
}

/* multivariate_normal(mean, cov, shape=[], dtype=float32, key, stream) */
static PyObject *impl_mvn(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array *key = key_arg(&v[4]);
  if (!key) return NULL;
  cm_array *r = cm_random_multivariate_normal(v[0].arr, v[1].arr, v[2].ndim, v[2].shape,
                                              dtype_or(&v[3], CM_FLOAT32), key, pa_stream(op, c));
  return done(r, key, NULL, NULL, NULL);
}

/* bernoulli(p=0.5, shape=None, key=None, stream=None) */
static PyObject *impl_bernoulli(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array *key = key_arg(&v[2]), *p = NULL;
  if (!key) return NULL;
  if (!(p = scalar_arg(&v[0]))) return done(NULL, key, NULL, NULL, NULL);
  cm_array *r =
      cm_random_bernoulli(p, v[1].none ? -1 : v[1].ndim, v[1].shape, key, pa_stream(op, c));
  return done(r, key, p, NULL, NULL);
}

/* gumbel(shape=[], dtype=float32, key=None, stream=None) */
static PyObject *impl_gumbel(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array *key = key_arg(&v[2]);
  if (!key) return NULL;
  cm_array *r =
      cm_random_gumbel(v[0].ndim, v[0].shape, dtype_or(&v[1], CM_FLOAT32), key, pa_stream(op, c));
  return done(r, key, NULL, NULL, NULL);
}

/* categorical(logits, axis=-1, shape=None, num_samples=None, key, stream) */
static PyObject *impl_categorical(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array *key = key_arg(&v[4]), *r;
  if (!key) return NULL;
  cm_stream s = pa_stream(op, c);
  int axis = (int)v[1].i;
  if (!v[2].none && !v[3].none) {
    cm_release(key);
    PyErr_SetString(PyExc_ValueError,
                    "[categorical] At most one of shape or num_samples can be specified.");
    return NULL;
  }
  if (!v[2].none) r = cm_random_categorical_shape(v[0].arr, axis, v[2].ndim, v[2].shape, key, s);
  else if (!v[3].none) r = cm_random_categorical_num_samples(v[0].arr, axis, (int)v[3].i, key, s);
  else r = cm_random_categorical(v[0].arr, axis, key, s);
  return done(r, key, NULL, NULL, NULL);
}

/* laplace(shape=[], dtype=float32, loc=0.0, scale=1.0, key, stream):
 * loc and scale are C floats in MLX's binding. */
static PyObject *impl_laplace(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array *key = key_arg(&v[4]);
  if (!key) return NULL;
  cm_array *r = cm_random_laplace(v[0].ndim, v[0].shape, dtype_or(&v[1], CM_FLOAT32), (float)v[2].f,
                                  (float)v[3].f, key, pa_stream(op, c));
  return done(r, key, NULL, NULL, NULL);
}

/* permutation(x: int | array, axis=0, key=None, stream=None) */
static PyObject *impl_permutation(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array *key = key_arg(&v[2]), *r;
  if (!key) return NULL;
  cm_stream s = pa_stream(op, c);
  if (PyCmArray_Check(v[0].obj)) {
    r = cm_random_permutation(((PyCmArray *)v[0].obj)->arr, (int)v[1].i, key, s);
  } else {
    int overflow;
    long long n = PyLong_AsLongLongAndOverflow(v[0].obj, &overflow);
    if (overflow || n < INT32_MIN || n > INT32_MAX) {
      /* MLX's nb::cast<int> of an int out of range */
      cm_release(key);
      PyErr_SetString(PyExc_RuntimeError, "std::bad_cast");
      return NULL;
    }
    r = cm_random_permutation_arange((int)n, key, s);
  }
  return done(r, key, NULL, NULL, NULL);
}

/* ---- the table ---------------------------------------------------------- */

#define KEY_STREAM "key: array | None = None, stream: Stream = None"
#define SIG_KEY_STREAM "key: array | None = None, stream: StreamOrDevice = None) -> array"

static pycm_op random_ops[] = {
    PYCM_CALL("seed", "seed: uint64", "(seed: int) -> None", impl_seed),
    PYCM_CALL("key", "seed: uint64", "(seed: int) -> mlx.core.array", impl_key),
    PYCM_CALL("split", "key: array, num: int = 2, stream: Stream = None",
              "(key: array, num: int = 2, stream: StreamOrDevice = None) -> array", impl_split),
    BOUNDED_ROW("uniform",
                "low: arraylike = 0, high: arraylike = 1, shape: shapeseq = [], "
                "dtype: Dtype | None = float32, " KEY_STREAM,
                "(low: scalar | array = 0, high: scalar | array = 1, shape: Sequence[int] = [], "
                "dtype: Dtype | None = float32, " SIG_KEY_STREAM,
                cm_random_uniform),
    PYCM_CALL("normal",
              "shape: shapeseq = [], dtype: Dtype | None = float32, loc: arraylike | None = None, "
              "scale: arraylike | None = None, " KEY_STREAM,
              "(shape: Sequence[int] = [], dtype: Dtype | None = float32, loc: scalar | array | "
              "None = None, scale: scalar | array | None = None, " SIG_KEY_STREAM,
              impl_normal),
    PYCM_CALL(
        "multivariate_normal",
        "mean: array, cov: array, shape: shapeseq = [], dtype: Dtype | None = float32, " KEY_STREAM,
        "(mean: array, cov: array, shape: Sequence[int] = [], dtype: Dtype | None = "
        "float32, " SIG_KEY_STREAM,
        impl_mvn),
    BOUNDED_ROW("randint",
                "low: arraylike, high: arraylike, shape: shapeseq = [], "
                "dtype: Dtype | None = int32, " KEY_STREAM,
                "(low: scalar | array, high: scalar | array, shape: Sequence[int] = [], "
                "dtype: Dtype | None = int32, " SIG_KEY_STREAM,
                cm_random_randint),
    PYCM_CALL("bernoulli", "p: arraylike = 0.5, shape: shapeseq | None = None, " KEY_STREAM,
              "(p: scalar | array = 0.5, shape: Sequence[int] | None = None, " SIG_KEY_STREAM,
              impl_bernoulli),
    BOUNDED_ROW("truncated_normal",
                "lower: arraylike, upper: arraylike, shape: shapeseq | None = None, "
                "dtype: Dtype | None = float32, " KEY_STREAM,
                "(lower: scalar | array, upper: scalar | array, shape: Sequence[int] | None = "
                "None, dtype: Dtype | None = float32, " SIG_KEY_STREAM,
                cm_random_truncated_normal),
    PYCM_CALL("gumbel", "shape: shapeseq = [], dtype: Dtype | None = float32, " KEY_STREAM,
              "(shape: Sequence[int] = [], dtype: Dtype | None = float32, " SIG_KEY_STREAM,
              impl_gumbel),
    PYCM_CALL("categorical",
              "logits: array, axis: int = -1, shape: shapeseq | None = None, "
              "num_samples: int | None = None, " KEY_STREAM,
              "(logits: array, axis: int = -1, shape: Sequence[int] | None = None, num_samples: "
              "int | None = None, " SIG_KEY_STREAM,
              impl_categorical),
    PYCM_CALL("laplace",
              "shape: shapeseq = [], dtype: Dtype | None = float32, loc: float = 0.0, "
              "scale: float = 1.0, " KEY_STREAM,
              "(shape: Sequence[int] = [], dtype: Dtype | None = float32, loc: float = 0.0, "
              "scale: float = 1.0, " SIG_KEY_STREAM,
              impl_laplace),
    PYCM_CALL("permutation", "x: intorarray, axis: int = 0, " KEY_STREAM,
              "(x: int | array, axis: int = 0, " SIG_KEY_STREAM, impl_permutation),
    PYCM_CALL("bits", "shape: shapeseq = [], width: int = 4, " KEY_STREAM,
              "(shape: Sequence[int] = [], width: int = 4, " SIG_KEY_STREAM, impl_bits),
};
#define N_RANDOM_OPS ((int)(sizeof random_ops / sizeof random_ops[0]))

/* ---- mx.random.state ------------------------------------------------------ */

/* One object for every thread (so a transform can capture it once); its
 * item 0 is the calling thread's key. */
typedef struct {
  PyObject_HEAD
} random_state;

static Py_ssize_t state_len(PyObject *self) {
  (void)self;
  return 1;
}

static PyObject *state_item(PyObject *self, Py_ssize_t i) {
  (void)self;
  if (i != 0 && i != -1) {
    PyErr_SetString(PyExc_IndexError, "random state index out of range");
    return NULL;
  }
  return pycm_wrap(cm_random_state());
}

static PyObject *state_iter(PyObject *self) {
  PyObject *k = state_item(self, 0);
  PyObject *list = k ? PyList_New(1) : NULL;
  if (!list) {
    Py_XDECREF(k);
    return NULL;
  }
  PyList_SET_ITEM(list, 0, k);
  PyObject *it = PyObject_GetIter(list);
  Py_DECREF(list);
  return it;
}

/* state[0] = key sets the calling thread's key (compile's captured
 * outputs write the advanced key back this way). */
static int state_ass_item(PyObject *self, Py_ssize_t i, PyObject *v) {
  (void)self;
  if (i != 0 && i != -1) {
    PyErr_SetString(PyExc_IndexError, "random state index out of range");
    return -1;
  }
  if (!v || !PyCmArray_Check(v)) {
    PyErr_SetString(PyExc_TypeError, "random state items must be arrays");
    return -1;
  }
  return cm_random_set_state(((PyCmArray *)v)->arr) ? (pycm_raise(), -1) : 0;
}

static PySequenceMethods state_seq = {
    .sq_length = state_len, .sq_item = state_item, .sq_ass_item = state_ass_item};

static PyTypeObject random_state_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cmlx.core.random._RandomState",
    .tp_basicsize = sizeof(random_state),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_as_sequence = &state_seq,
    .tp_iter = state_iter,
};

static PyObject *state_sentinel;

/* Module __getattr__: `state` is made on first use, as in MLX. */
static PyObject *random_getattr(PyObject *m, PyObject *name) {
  (void)m;
  if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "state") == 0) {
    if (!state_sentinel && !(state_sentinel = PyObject_CallNoArgs((PyObject *)&random_state_type)))
      return NULL;
    return Py_NewRef(state_sentinel);
  }
  return PyErr_Format(PyExc_AttributeError, "Module 'random' has no attribute %R", name);
}

static PyMethodDef getattr_def = {"__getattr__", (PyCFunction)random_getattr, METH_O, NULL};

static PyObject *new_state(PyTypeObject *t, PyObject *args, PyObject *kw) {
  (void)args, (void)kw;
  return t->tp_alloc(t, 0);
}

int pycm_init_random(PyObject *m) {
  PyObject *r = pycm_add_submodule(
      m, "random", "mlx.core.random: functionality related to random number generation");
  if (!r || pa_add_functions(r, random_ops, N_RANDOM_OPS)) return -1;
  random_state_type.tp_new = new_state;
  if (pycm_add_type(r, "_RandomState", &random_state_type)) return -1;
  PyObject *modname = PyModule_GetNameObject(r);
  PyObject *ga = modname ? PyCFunction_NewEx(&getattr_def, NULL, modname) : NULL;
  Py_XDECREF(modname);
  if (!ga || PyModule_AddObject(r, "__getattr__", ga)) {
    Py_XDECREF(ga);
    return -1;
  }
  /* the main thread's key goes with the interpreter, as MLX's atexit hook */
  return Py_AtExit(cm_random_reset) ? -1 : 0;
}
