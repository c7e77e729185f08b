/* tensordot, gather_mm, segmented_mm and block_masked_mm op constructors
 * (see ops/contract.h): MLX's checks, messages and dtype rules; the
 * products themselves are Matmul or the primitives of
 * primitives/gather_mm.h. */
#include "ops/contract.h"

#include <string.h>

#include "ops/creation.h"
#include "ops/matmul.h"
#include "ops/shape.h"
#include "primitives/matmul.h"
#include "primitives/gather_mm.h"
#include "primitives/rules_util.h"

/* ---- tensordot ---- */

cm_array *cm_tensordot(cm_array *a, cm_array *b, int naxes, const int *axes_a, const int *axes_b,
                       cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (!a || !b) return cm_error(CM_ERR_VALUE, "[tensordot] Got a null array."), NULL;
  int na = a->ndim, nb = b->ndim;
  bool ca[CM_MAX_DIMS] = {false}, cb[CM_MAX_DIMS] = {false};
  int64_t csize = 1;
  for (int i = 0; i < naxes; i++) {
    int x = axes_a[i] < 0 ? axes_a[i] + na : axes_a[i];
    int y = axes_b[i] < 0 ? axes_b[i] + nb : axes_b[i];
    if (x < 0 || x >= na || y < 0 || y >= nb)
      return cm_error(CM_ERR_INDEX,
                      "[tensordot] Axis %d is out of bounds for an array with %d "
                      "dimensions.",
                      x < 0 || x >= na ? axes_a[i] : axes_b[i], x < 0 || x >= na ? na : nb),
             NULL;
    if (a->shape[x] != b->shape[y])
      return cm_error(CM_ERR_VALUE,
                      "[tensordot] a and b must have the same shape on the contracted axes."),
             NULL;
    csize *= a->shape[x];
    ca[x] = cb[y] = true;
  }
  /* a -> (free_a, contracted), b -> (contracted, free_b); a repeated axis
   * gives transpose's error, as in MLX */
  int ta[2 * CM_MAX_DIMS], tb[2 * CM_MAX_DIMS], nta = 0, ntb = 0, nr = 0;
  int32_t rshape[2 * CM_MAX_DIMS];
  int64_t size1 = 1, size2 = 1;
  for (int i = 0; i < na; i++)
    if (!ca[i]) ta[nta++] = i, size1 *= a->shape[i], rshape[nr++] = a->shape[i];
  for (int i = 0; i < naxes; i++) ta[nta++] = axes_a[i], tb[ntb++] = axes_b[i];
  for (int i = 0; i < nb; i++)
    if (!cb[i]) tb[ntb++] = i, size2 *= b->shape[i], rshape[nr++] = b->shape[i];
  if (nr > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[tensordot] The result has more than %d dimensions.",
                    CM_MAX_DIMS),
           NULL;
  int32_t s1[2], s2[2];
  if (cm_shape_dim("tensordot", size1, &s1[0]) || cm_shape_dim("tensordot", csize, &s1[1]) ||
      cm_shape_dim("tensordot", size2, &s2[1]))
    return NULL;
  s2[0] = s1[1];
  cm_rt t = {0};
  cm_array *x = RT(&t, cm_transpose(a, nta, ta, s));
  cm_array *y = RT(&t, cm_transpose(b, ntb, tb, s));
  x = RT(&t, cm_reshape(x, 2, s1, s));
  y = RT(&t, cm_reshape(y, 2, s2, s));
  cm_array *p = RT(&t, cm_matmul(x, y, s));
  cm_array *r = RT(&t, cm_reshape(p, nr, rshape, s));
  cm_array *out = NULL;
  return cm_rt_done(&t, r, &out) ? NULL : out;
}

cm_array *cm_tensordot_axis(cm_array *a, cm_array *b, int axis, cm_stream s) {
  if (!a || !b) return cm_error(CM_ERR_VALUE, "[tensordot] Got a null array."), NULL;
  if (axis < 0)
    return cm_error(CM_ERR_VALUE, "[tensordot] axis must be greater or equal to 0."), NULL;
  if (axis > a->ndim || axis > b->ndim)
    return cm_error(CM_ERR_VALUE,
                    "[tensordot] axis must be less than the number of dimensions of a and b."),
           NULL;
  int xa[CM_MAX_DIMS], xb[CM_MAX_DIMS];
  for (int i = 0; i < axis; i++) xb[i] = i, xa[i] = i - axis;
  return cm_tensordot(a, b, axis, xa, xb, s);
}

/* ---- shared by the gathered and masked products ---- */

/* a and b after matmul's 1-D expansion, cast to their common real
 * floating type; the checks and messages of op. */
typedef struct mm_operands {
  cm_array *a, *b;
  cm_dtype t;
  bool a1d, b1d;
} mm_operands;

static int mm_prepare(const char *op, cm_array *a, cm_array *b, mm_operands *m, cm_rt *t,
                      cm_stream s) {
  if (!a || !b) return cm_error(CM_ERR_VALUE, "[%s] Got a null array.", op);
  if (a->ndim == 0 || b->ndim == 0)
    return cm_error(CM_ERR_VALUE,
                    "[%s] Got 0 dimension input. Inputs must have at least one dimension.", op);
  int first = 0, last = 1;
  m->a1d = a->ndim == 1, m->b1d = b->ndim == 1;
  cm_array *x = m->a1d ? RT(t, cm_expand_dims(a, 1, &first, s)) : a;
  cm_array *y = m->b1d ? RT(t, cm_expand_dims(b, 1, &last, s)) : b;
  if (t->fail) return -1;
  if (x->shape[x->ndim - 1] != y->shape[y->ndim - 2]) return cm_mm_shape_error(op, x, y);
  m->t = cm_promote_types(a->dtype, b->dtype);
  if (!cm_dtype_is_float(m->t))
    return cm_error(CM_ERR_VALUE,
                    "[%s] Only real floating point types are supported but %s and %s were "
                    "provided which results in %s, which is not a real floating point type.",
                    op, cm_dtype_name(a->dtype), cm_dtype_name(b->dtype), cm_dtype_name(m->t));
  m->a = RT(t, cm_astype(x, m->t, s));
  m->b = RT(t, cm_astype(y, m->t, s));
  return t->fail ? -1 : 0;
}

/* r without the axes a 1-D operand added (a new reference). */
static cm_array *mm_squeeze(cm_array *r, const mm_operands *m, cm_stream s) {
  int axes[2], n = 0;
  if (m->a1d) axes[n++] = r->ndim - 2;
  if (m->b1d) axes[n++] = r->ndim - 1;
  return n ? cm_squeeze(r, n, axes, s) : cm_retain(r);
}

/* ---- gather_mm ---- */

/* MLX's indices_or_default: the given indices as uint32, or every batch
 * element of x in order, shaped like x's batch. */
static cm_array *gather_indices(cm_array *idx, cm_array *x, cm_rt *t, cm_stream s) {
  if (idx) {
    if (!cm_dtype_is_integral(idx->dtype))
      return cm_error(CM_ERR_VALUE,
                      "[gather_mm] Got indices with invalid dtype. Indices must be integral."),
             NULL;
    return RT(t, cm_astype(idx, CM_UINT32, s));
  }
  int64_t total = 1;
  for (int i = 0; i < x->ndim - 2; i++) total *= x->shape[i];
  int32_t n32;
  if (cm_shape_dim("gather", total, &n32)) return NULL;
  cm_array *r = RT(t, cm_arange(0, (double)n32, 1, CM_UINT32, s));
  return RT(t, cm_reshape(r, x->ndim - 2, x->shape, s));
}

cm_array *cm_gather_mm(cm_array *a, cm_array *b, cm_array *lhs_indices, cm_array *rhs_indices,
                       bool sorted_indices, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (!lhs_indices && !rhs_indices) return cm_matmul(a, b, s);
  cm_rt t = {0};
  mm_operands m;
  cm_array *out = NULL;
  if (mm_prepare("gather_mm", a, b, &m, &t, s)) return cm_rt_done(&t, NULL, &out), NULL;
  cm_array *li = gather_indices(lhs_indices, m.a, &t, s);
  cm_array *ri = li ? gather_indices(rhs_indices, m.b, &t, s) : NULL;
  cm_array *bc[2] = {NULL, NULL};
  if (!ri || cm_broadcast_arrays((cm_array *[]){li, ri}, 2, bc, s))
    return cm_rt_done(&t, NULL, &out), NULL;
  RT(&t, bc[0]);
  RT(&t, bc[1]);
  int nd = bc[0]->ndim;
  if (nd + 2 > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[gather_mm] Too many dimensions."), cm_rt_done(&t, NULL, &out),
           NULL;
  int32_t shape[CM_MAX_DIMS];
  memcpy(shape, bc[0]->shape, sizeof(int32_t) * (size_t)nd);
  shape[nd] = m.a->shape[m.a->ndim - 2];
  shape[nd + 1] = m.b->shape[m.b->ndim - 1];
  cm_gather_mm_params p = {sorted_indices && !rhs_indices, sorted_indices && !lhs_indices};
  cm_array *in[4] = {m.a, m.b, bc[0], bc[1]};
  cm_array *r = RT(&t, cm_op_node(m.t, nd + 2, shape, &cm_prim_gather_mm, &p, sizeof p, in, 4, s));
  r = RT(&t, r ? mm_squeeze(r, &m, s) : NULL);
  return cm_rt_done(&t, r, &out) ? NULL : out;
}

/* ---- segmented_mm ---- */

cm_array *cm_segmented_mm(cm_array *a, cm_array *b, cm_array *segments, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (!a || !b || !segments)
    return cm_error(CM_ERR_VALUE, "[segmented_mm] Got a null array."), NULL;
  if (a->ndim != 2 || b->ndim != 2)
    return cm_error(CM_ERR_VALUE, "[segmented_mm] Batched matmul not supported"), NULL;
  if (segments->ndim < 1 || segments->shape[segments->ndim - 1] != 2) {
    char buf[256];
    return cm_error(CM_ERR_VALUE,
                    "[segmented_mm] The segments should have shape (..., 2) but %s was provided.",
                    cm_shape_str(buf, sizeof buf, segments->ndim, segments->shape)),
           NULL;
  }
  cm_dtype t = cm_promote_types(a->dtype, b->dtype);
  if (!cm_dtype_is_float(t))
    return cm_error(CM_ERR_VALUE,
                    "[segmented_mm] Only real floating point types are supported but %s and %s "
                    "were provided which results in %s, which is not a real floating point type.",
                    cm_dtype_name(a->dtype), cm_dtype_name(b->dtype), cm_dtype_name(t)),
           NULL;
  if (!cm_dtype_is_integral(segments->dtype))
    return cm_error(CM_ERR_VALUE, "[segmented_mm] Got segments with invalid dtype. Segments must "
                                  "be integral."),
           NULL;
  if (a->shape[1] != b->shape[0]) {
    char sa[256], sb[256];
    return cm_error(CM_ERR_VALUE,
                    "[segmented_mm] Last dimension of first input with shape %s must match second "
                    "to last dimension of second input with shape %s.",
                    cm_shape_str(sa, sizeof sa, 2, a->shape),
                    cm_shape_str(sb, sizeof sb, 2, b->shape)),
           NULL;
  }
  if (segments->ndim + 1 > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[segmented_mm] Too many dimensions."), NULL;
  cm_rt rt = {0};
  cm_array *x = RT(&rt, cm_astype(a, t, s));
  cm_array *y = RT(&rt, cm_astype(b, t, s));
  cm_array *g = RT(&rt, cm_astype(segments, CM_UINT32, s));
  int32_t shape[CM_MAX_DIMS];
  int nd = segments->ndim - 1;
  memcpy(shape, segments->shape, sizeof(int32_t) * (size_t)nd);
  shape[nd] = a->shape[0];
  shape[nd + 1] = b->shape[1];
  cm_array *r = NULL, *out = NULL;
  if (!rt.fail) {
    cm_array *in[3] = {x, y, g};
    r = RT(&rt, cm_op_node(t, nd + 2, shape, &cm_prim_segmented_mm, NULL, 0, in, 3, s));
  }
  return cm_rt_done(&rt, r, &out) ? NULL : out;
}

/* ---- block_masked_mm ---- */

/* mask cast to dtype and broadcast to batch + (y, x). */
static cm_array *place_mask(cm_array *mask, int nb, const int32_t *batch, int32_t y, int32_t x,
                            cm_dtype dtype, cm_rt *t, cm_stream s) {
  int32_t shape[CM_MAX_DIMS];
  memcpy(shape, batch, sizeof(int32_t) * (size_t)nb);
  shape[nb] = y, shape[nb + 1] = x;
  cm_array *m = RT(t, cm_astype(mask, dtype, s));
  return RT(t, cm_broadcast_to(m, nb + 2, shape, s));
}

static cm_array *expand_mask(cm_array *mask, bool at_m, bool at_n, cm_rt *t, cm_stream s) {
  int axes[2], n = 0;
  if (at_m) axes[n++] = -2;
  if (at_n) axes[n++] = -1;
  return n ? RT(t, cm_expand_dims(mask, n, axes, s)) : mask;
}

cm_array *cm_block_masked_mm(cm_array *a, cm_array *b, int block_size, cm_array *mask_out,
                             cm_array *mask_lhs, cm_array *mask_rhs, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (!mask_out && !mask_lhs && !mask_rhs) return cm_matmul(a, b, s);
  if (block_size != 32 && block_size != 64)
    return cm_error(CM_ERR_VALUE,
                    "[block_masked_mm] Only block_sizes 32, 64 are supported.Got block size %d.",
                    block_size),
           NULL;
  cm_rt t = {0};
  mm_operands m;
  cm_array *out = NULL;
  if (mm_prepare("block_masked_mm", a, b, &m, &t, s)) return cm_rt_done(&t, NULL, &out), NULL;
  int nb;
  int32_t batch[CM_MAX_DIMS];
  if (cm_broadcast_shapes(m.a->ndim - 2, m.a->shape, m.b->ndim - 2, m.b->shape, &nb, batch) ||
      nb + 2 > CM_MAX_DIMS)
    return cm_rt_done(&t, NULL, &out), NULL;
  int32_t M = m.a->shape[m.a->ndim - 2], K = m.a->shape[m.a->ndim - 1];
  int32_t N = m.b->shape[m.b->ndim - 1];
  int32_t tm = (M + block_size - 1) / block_size, tn = (N + block_size - 1) / block_size;
  int32_t tk = (K + block_size - 1) / block_size;
  int32_t shape[CM_MAX_DIMS];
  memcpy(shape, batch, sizeof(int32_t) * (size_t)nb);
  cm_array *in[5];
  int nin = 0;
  shape[nb] = M, shape[nb + 1] = K;
  in[nin++] = RT(&t, cm_broadcast_to(m.a, nb + 2, shape, s));
  shape[nb] = K, shape[nb + 1] = N;
  in[nin++] = RT(&t, cm_broadcast_to(m.b, nb + 2, shape, s));
  if (mask_out && !t.fail) {
    cm_array *mo = expand_mask(mask_out, m.a1d, m.b1d, &t, s);
    cm_dtype dt = mask_out->dtype == CM_BOOL ? CM_BOOL : m.t;
    in[nin++] = mo ? place_mask(mo, nb, batch, tm, tn, dt, &t, s) : NULL;
  }
  if ((mask_lhs || mask_rhs) && !t.fail) {
    bool all_true = true;
    cm_array *lhs = mask_lhs, *rhs = mask_rhs;
    if (!lhs) lhs = RT(&t, cm_array_scalar_int(1, CM_BOOL));
    if (!rhs) rhs = RT(&t, cm_array_scalar_int(1, CM_BOOL));
    if (t.fail) return cm_rt_done(&t, NULL, &out), NULL;
    all_true = lhs->dtype == CM_BOOL && rhs->dtype == CM_BOOL;
    cm_dtype dt = all_true ? CM_BOOL : m.t;
    lhs = expand_mask(lhs, m.a1d && lhs->ndim > 0, false, &t, s);
    rhs = expand_mask(rhs, false, m.b1d && rhs->ndim > 0, &t, s);
    in[nin++] = lhs ? place_mask(lhs, nb, batch, tm, tk, dt, &t, s) : NULL;
    in[nin++] = rhs ? place_mask(rhs, nb, batch, tk, tn, dt, &t, s) : NULL;
  }
  cm_array *r = NULL;
  if (!t.fail) {
    shape[nb] = M, shape[nb + 1] = N;
    cm_block_mm_params p = {block_size};
    r = RT(&t, cm_op_node(m.t, nb + 2, shape, &cm_prim_block_masked_mm, &p, sizeof p, in, nin, s));
    r = RT(&t, r ? mm_squeeze(r, &m, s) : NULL);
  }
  return cm_rt_done(&t, r, &out) ? NULL : out;
}
