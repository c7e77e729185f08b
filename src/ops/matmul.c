/* matmul and addmm op constructors: MLX's shape, broadcasting and dtype
 * rules (see ops/matmul.h).  The batch axes are broadcast as views and
 * the 1-D cases are handled by adding and later dropping an axis. */
#include "ops/matmul.h"

#include <string.h>

#include "ops/shape.h"
#include "primitives/matmul.h"

/* a and b after the 1-D expansion, checked, cast and batch-broadcast. */
typedef struct mm_args {
  cm_array *a, *b;
  int ndim;                   /* of the product */
  int32_t shape[CM_MAX_DIMS]; /* the product's shape (before dropping 1-D axes) */
  int nfinal;                 /* the result's shape after dropping them */
  int32_t final[CM_MAX_DIMS];
} mm_args;

static void mm_args_free(mm_args *m) {
  cm_release(m->a);
  cm_release(m->b);
  m->a = m->b = NULL;
}

/* Expand 1-D operands and check the inner dimension. */
static int expand(const char *op, cm_array *a, cm_array *b, mm_args *m, cm_stream s) {
  m->a = m->b = NULL;
  if (!a || !b) return cm_error(CM_ERR_VALUE, "[%s] Got a null array.", op);
  if (a->ndim == 0 || b->ndim == 0)
    return cm_error(CM_ERR_VALUE,
                    "[%s] Got 0 dimension input. Inputs must have at least one dimension.", op);
  int first = 0, last = -1;
  m->a = a->ndim == 1 ? cm_expand_dims(a, 1, &first, s) : cm_retain(a);
  m->b = b->ndim == 1 ? cm_expand_dims(b, 1, &last, s) : cm_retain(b);
  if (!m->a || !m->b) return mm_args_free(m), -1;
  cm_array *x = m->a, *y = m->b;
  if (x->shape[x->ndim - 1] != y->shape[y->ndim - 2])
    return cm_mm_shape_error(op, x, y), mm_args_free(m), -1;
  return 0;
}

/* Cast to t, broadcast the batch axes, and work out the result shapes. */
static int batch(mm_args *m, cm_dtype t, bool a1d, bool b1d, cm_stream s) {
  cm_array *x = m->a, *y = m->b;
  int nb;
  int32_t bs[CM_MAX_DIMS];
  if (cm_broadcast_shapes(x->ndim - 2, x->shape, y->ndim - 2, y->shape, &nb, bs)) return -1;
  int32_t M = x->shape[x->ndim - 2], N = y->shape[y->ndim - 1];
  memcpy(m->shape, bs, sizeof(int32_t) * (size_t)nb);
  m->shape[nb] = M, m->shape[nb + 1] = N;
  m->ndim = nb + 2;
  cm_array *c[2] = {cm_astype(x, t, s), NULL}, *bc[2] = {NULL, NULL};
  c[1] = c[0] ? cm_astype(y, t, s) : NULL;
  /* the batch axes broadcast against each other (BroadcastAxes nodes in
   * a shapeless trace, so that a replay broadcasts the new shapes) */
  int rc = -1;
  if (c[1] && nb) rc = cm_broadcast_axes(c, 2, 2, bc, s);
  else if (c[1]) bc[0] = c[0], bc[1] = c[1], c[0] = c[1] = NULL, rc = 0;
  cm_release(c[0]);
  cm_release(c[1]);
  if (rc) return -1;
  mm_args_free(m);
  m->a = bc[0], m->b = bc[1];
  /* the result drops the row axis a 1-D a added and the column axis of
   * a 1-D b */
  m->nfinal = 0;
  for (int i = 0; i < m->ndim; i++) {
    if ((i == m->ndim - 2 && a1d) || (i == m->ndim - 1 && b1d)) continue;
    m->final[m->nfinal++] = m->shape[i];
  }
  return 0;
}

/* MLX's fold of a batched a against a matrix b: a (..., M, K) becomes one
 * tall (rows, K) operand, so the product is one GEMM and, more to the
 * point, b's gradient a^T @ cotangent is one GEMM over every row instead
 * of a batch of small ones summed afterwards.  Returns whether it folded
 * (m->a replaced by the flattened view); -1 on error. */
static int fold_rows(mm_args *m, cm_stream s) {
  if (m->a->ndim <= 2 || m->b->ndim != 2) return 0;
  cm_array *f = cm_flatten(m->a, 0, -2, s);
  if (!f) return -1;
  cm_release(m->a);
  m->a = f;
  return 1;
}

/* The folded product (rows, N), or (rows) for a 1-D b, back to a's batch
 * shape. */
static cm_array *unfold_rows(cm_array *r, const cm_array *a, bool b1d, int32_t N, cm_stream s) {
  if (!r) return NULL;
  int32_t shape[CM_MAX_DIMS];
  int nd = a->ndim - 1;
  memcpy(shape, a->shape, sizeof(int32_t) * (size_t)nd);
  if (!b1d) shape[nd++] = N;
  cm_array *u = cm_reshape(r, nd, shape, s);
  cm_release(r);
  return u;
}

/* Drop the axes that 1-D operands added (a squeeze, as MLX's). */
static cm_array *finish(cm_array *r, const mm_args *m, bool a1d, bool b1d, cm_stream s) {
  if (!r || m->nfinal == m->ndim) return r;
  int axes[2], n = 0;
  if (a1d) axes[n++] = m->ndim - 2;
  if (b1d) axes[n++] = m->ndim - 1;
  cm_array *f = cm_squeeze(r, n, axes, s);
  cm_release(r);
  return f;
}

cm_array *cm_matmul(cm_array *a, cm_array *b, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  mm_args m;
  if (expand("matmul", a, b, &m, s)) return NULL;
  cm_dtype t = cm_promote_types(a->dtype, b->dtype);
  if (!cm_dtype_is_inexact(t)) {
    mm_args_free(&m);
    return cm_error(CM_ERR_VALUE,
                    "[matmul] Only inexact types are supported but %s and %s were provided which "
                    "results in %s, which is not a floating point type.",
                    cm_dtype_name(a->dtype), cm_dtype_name(b->dtype), cm_dtype_name(t)),
           NULL;
  }
  /* as MLX, not while a shapeless trace records: the fold would fix the
   * traced batch shape into the graph */
  int folded = cm_dynamic_shapes() || b->ndim > 2 ? 0 : fold_rows(&m, s);
  if (folded < 0 || batch(&m, t, a->ndim == 1, b->ndim == 1, s)) return mm_args_free(&m), NULL;
  cm_matmul_params p;
  memset(&p, 0, sizeof p);
  p.alpha = 1.0f;
  cm_array *in[2] = {m.a, m.b};
  cm_array *r = cm_op_node(t, m.ndim, m.shape, &cm_prim_matmul, &p, sizeof p, in, 2, s);
  r = finish(r, &m, a->ndim == 1, b->ndim == 1, s);
  if (folded) r = unfold_rows(r, a, b->ndim == 1, m.shape[1], s);
  mm_args_free(&m);
  return r;
}

/* c broadcast to the product's shape, MLX's way: against the result
 * shape (1-D axes dropped), which c may not grow, then with the dropped
 * axes put back as size 1. */
static cm_array *place_c(cm_array *c, const mm_args *m, cm_stream s) {
  int nb;
  int32_t bs[CM_MAX_DIMS];
  if (cm_broadcast_shapes(c->ndim, c->shape, m->nfinal, m->final, &nb, bs)) return NULL;
  if (nb != m->nfinal || memcmp(bs, m->final, sizeof(int32_t) * (size_t)nb))
    return cm_error(CM_ERR_VALUE, "[addmm] input c must broadcast to the output shape"), NULL;
  cm_array *x = cm_broadcast_to(c, nb, bs, s);
  if (x && m->nfinal != m->ndim) {
    cm_array *y = cm_reshape(x, m->ndim, m->shape, s);
    cm_release(x);
    x = y;
  }
  return x;
}

cm_array *cm_addmm(cm_array *c, cm_array *a, cm_array *b, float alpha, float beta, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (!c) return cm_error(CM_ERR_VALUE, "[addmm] Got a null array."), NULL;
  mm_args m;
  if (expand("addmm", a, b, &m, s)) return NULL;
  cm_dtype t = cm_promote_types(cm_promote_types(c->dtype, a->dtype), b->dtype);
  if (!cm_dtype_is_inexact(t)) {
    mm_args_free(&m);
    return cm_error(CM_ERR_VALUE,
                    "[addmm] Only real floating point types are supported but %s, %s and %s were "
                    "provided which results in %s, which is not a real floating point type.",
                    cm_dtype_name(c->dtype), cm_dtype_name(a->dtype), cm_dtype_name(b->dtype),
                    cm_dtype_name(t)),
           NULL;
  }
  bool a1d = a->ndim == 1, b1d = b->ndim == 1;
  /* MLX folds a batched a against a 2-D b into one tall product and
   * broadcasts a 0-d/1-d c against it, so its error names that shape */
  bool fold = m.a->ndim > 2 && m.b->ndim == 2 && c->ndim <= 1;
  if (fold) {
    int64_t rows = 1;
    for (int i = 0; i < m.a->ndim - 1; i++) rows *= m.a->shape[i];
    int32_t tall[2] = {(int32_t)rows, m.b->shape[1]};
    int nb;
    int32_t bs[CM_MAX_DIMS];
    if (cm_broadcast_shapes(c->ndim, c->shape, 2, tall, &nb, bs)) return mm_args_free(&m), NULL;
  }
  if ((fold && fold_rows(&m, s) < 0) || batch(&m, t, a1d, b1d, s)) return mm_args_free(&m), NULL;
  cm_array *cc = cm_astype(c, t, s);
  cm_array *cb = cc ? place_c(cc, &m, s) : NULL;
  cm_release(cc);
  if (!cb) return mm_args_free(&m), NULL;
  cm_matmul_params p;
  memset(&p, 0, sizeof p);
  p.alpha = alpha;
  p.beta = beta;
  cm_array *in[3] = {m.a, m.b, cb};
  cm_array *r = cm_op_node(t, m.ndim, m.shape, &cm_prim_addmm, &p, sizeof p, in, 3, s);
  cm_release(cb);
  r = finish(r, &m, a1d, b1d, s);
  if (fold) r = unfold_rows(r, a, b1d, m.shape[1], s);
  mm_args_free(&m);
  return r;
}
