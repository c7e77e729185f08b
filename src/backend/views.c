/* The view primitives' layouts (see views.h).  Negative strides (from
 * slices with negative steps) are ordinary strides here: element 0 sits at
 * `offset`, and the other elements may lie below it. */
#include "backend/views.h"

#include <string.h>

/* Elements between the lowest and the highest address a layout touches
 * (0 when empty): a view's data_size. */
static int64_t span(int ndim, const int32_t *shape, const int64_t *strides) {
  int64_t lo = 0, hi = 0;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] == 0) return 0;
    int64_t ext = strides[i] * (shape[i] - 1);
    if (ext > 0) hi += ext;
    else lo += ext;
  }
  return hi - lo + 1;
}

/* True when the axes, ordered by stride, tile memory exactly: each stride
 * is the product of the sizes of the axes with smaller strides.
 * cm_update_flags only compares the span with the size, which as_strided
 * can fool with overlapping elements (shape (3,3), strides (2,2) spans 9
 * elements but visits some twice), so views re-check before keeping the
 * CONTIGUOUS flag that lets kernels run one flat loop. */
static bool dense_permutation(const cm_array *a) {
  int64_t st[CM_MAX_DIMS], sh[CM_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < a->ndim; i++) {
    if (a->shape[i] == 0) return true;
    if (a->shape[i] == 1) continue;
    if (a->strides[i] <= 0) return false;
    int j = n++;
    for (; j > 0 && st[j - 1] > a->strides[i]; j--) {
      st[j] = st[j - 1];
      sh[j] = sh[j - 1];
    }
    st[j] = a->strides[i];
    sh[j] = a->shape[i];
  }
  int64_t expect = 1;
  for (int i = 0; i < n; i++) {
    if (st[i] != expect) return false;
    expect *= sh[i];
  }
  return true;
}

void cm_view_share(cm_array *out, const cm_array *src, const int64_t *strides, int64_t offset) {
  cm_share_layout(out, src, strides, offset, span(out->ndim, out->shape, strides));
  if (cm_is_contiguous(out) && !cm_row_contiguous(out) && !cm_col_contiguous(out) &&
      !dense_permutation(out))
    out->flags &= ~CM_FLAG_CONTIGUOUS;
}

/* The old and new axes (size-1 axes dropped from the old) are cut into
 * groups of equal element count; each old group must be one evenly strided
 * run, and that run's stride then continues through the new group.
 * Transposed, broadcast and negatively strided inputs all work when the
 * groups allow. */
bool cm_view_reshape_strides(const cm_array *a, int ndim, const int32_t *shape, int64_t *strides) {
  int64_t od[CM_MAX_DIMS], os[CM_MAX_DIMS];
  int on = 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != 1) {
      od[on] = a->shape[i];
      os[on++] = a->strides[i];
    }
  int oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < ndim && oi < on) {
    int64_t np = shape[ni], op = od[oi];
    while (np != op) {
      if (np < op) {
        if (nj >= ndim) return false;
        np *= shape[nj++];
      } else {
        if (oj >= on) return false;
        op *= od[oj++];
      }
    }
    for (int k = oi; k < oj - 1; k++)
      if (os[k] != od[k + 1] * os[k + 1]) return false;
    strides[nj - 1] = os[oj - 1];
    for (int k = nj - 1; k > ni; k--) strides[k - 1] = strides[k] * shape[k];
    ni = nj++;
    oi = oj++;
  }
  /* what is left are size-1 axes: any stride will do */
  for (; ni < ndim; ni++) strides[ni] = 1;
  return true;
}

bool cm_view_reshape(cm_array *out, const cm_array *a) {
  int64_t strides[CM_MAX_DIMS];
  if (a->size == 0 || cm_row_contiguous(a)) cm_row_major_strides(out->ndim, out->shape, strides);
  else if (!cm_view_reshape_strides(a, out->ndim, out->shape, strides)) return false;
  cm_view_share(out, a, strides, a->offset);
  return true;
}

/* Each listed axis starts at start[k] and steps by step[k]. */
int64_t cm_view_slice_layout(const cm_array *base, const cm_slice_params *sp, int64_t *strides) {
  memcpy(strides, base->strides, sizeof(int64_t) * (size_t)base->ndim);
  int64_t off = 0;
  for (int k = 0; k < sp->n; k++) {
    const cm_slice_axis *x = &sp->ax[k];
    off += (int64_t)x->start * base->strides[x->axis];
    strides[x->axis] *= x->step;
  }
  return off * (int64_t)cm_itemsize(base);
}

void cm_view_broadcast_strides(const cm_array *out, const cm_array *in, int64_t *strides) {
  int lead = out->ndim - in->ndim;
  for (int i = 0; i < out->ndim; i++) {
    int j = i - lead;
    strides[i] = (j < 0 || in->shape[j] == 1) ? 0 : in->strides[j];
  }
}

/* Every stride but the last must be a whole number of output elements,
 * and unless the item sizes match the last axis must be unit-stride (its
 * elements are split or merged).  The byte offset must be aligned too. */
bool cm_view_dtype_strides(const cm_array *in, const cm_array *out, int64_t *strides) {
  int64_t ib = (int64_t)cm_itemsize(in), ob = (int64_t)cm_itemsize(out);
  if (in->offset % ob) return false;
  for (int i = 0; i < in->ndim - 1; i++) {
    if ((in->strides[i] * ib) % ob) return false;
    strides[i] = in->strides[i] * ib / ob;
  }
  if (in->ndim == 0) return true;
  int last = in->ndim - 1;
  if (ib == ob) strides[last] = in->strides[last];
  else if (in->strides[last] == 1 || in->shape[last] == 1) strides[last] = 1;
  else return false;
  return true;
}

int64_t cm_batch_offset(int64_t bi, int nb, const int32_t *bshape, const int64_t *bstrides) {
  int64_t off = 0;
  for (int i = nb - 1; i >= 0; i--) {
    int64_t idx = bi % bshape[i];
    bi /= bshape[i];
    off += idx * bstrides[i];
  }
  return off;
}

/* ---- the pure views ---- */

int cm_view_transpose(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_transpose_params *tp = cm_transpose_params_of(out);
  int64_t strides[CM_MAX_DIMS];
  for (int i = 0; i < out->ndim; i++) strides[i] = in[0]->strides[tp->perm[i]];
  cm_view_share(out, in[0], strides, in[0]->offset);
  return 0;
}

int cm_view_slice(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  int64_t strides[CM_MAX_DIMS];
  int64_t off = cm_view_slice_layout(in[0], cm_slice_params_of(out), strides);
  /* an empty window may start one past the end: keep the base offset */
  cm_view_share(out, in[0], strides, in[0]->offset + (out->size ? off : 0));
  return 0;
}

int cm_view_diagonal(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_diagonal_params *dp = cm_diagonal_params_of(out);
  cm_array *a = in[0];
  int64_t strides[CM_MAX_DIMS];
  int k = 0;
  for (int i = 0; i < a->ndim; i++)
    if (i != dp->axis1 && i != dp->axis2) strides[k++] = a->strides[i];
  int64_t s1 = a->strides[dp->axis1], s2 = a->strides[dp->axis2];
  strides[k] = s1 + s2;
  int64_t off = 0;
  if (out->size) /* the first diagonal element: (max(-offset,0), max(offset,0)) */
    off = (dp->offset < 0 ? -(int64_t)dp->offset * s1 : (int64_t)dp->offset * s2) *
          (int64_t)cm_itemsize(a);
  cm_view_share(out, a, strides, a->offset + off);
  return 0;
}

int cm_view_broadcast(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  int64_t strides[CM_MAX_DIMS];
  cm_view_broadcast_strides(out, in[0], strides);
  cm_share_layout(out, in[0], strides, in[0]->offset, in[0]->data_size);
  return 0;
}

int cm_view_identity(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  cm_share_layout(out, in[0], in[0]->strides, in[0]->offset, in[0]->data_size);
  return 0;
}

int cm_view_depends(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  for (int k = 0; k < cm_num_outputs(out); k++) {
    cm_array *o = cm_output(out, k);
    cm_share_layout(o, in[k], in[k]->strides, in[k]->offset, in[k]->data_size);
  }
  return 0;
}
