/* GatherMM, SegmentedMM and BlockMaskedMM: descriptors and MLX's vjp
 * rules (see primitives/gather_mm.h).  Rules build graphs from op
 * constructors only. */
#include "primitives/gather_mm.h"
#include "primitives/export_desc.h"

#include <string.h>

#include "ops/binary.h"
#include "ops/contract.h"
#include "ops/creation.h"
#include "ops/indexing.h"
#include "ops/reduce.h"
#include "ops/scan.h"
#include "ops/shape.h"
#include "primitives/matmul.h"
#include "primitives/rules_util.h"

static int no_grad(const char *prim, const char *what) {
  return cm_error(CM_ERR_VALUE,
                  "[%s] Cannot calculate VJP with respect to %s. Use stop_gradient on %s to stop "
                  "gradients from being computed.",
                  prim, what, what);
}

static void release_grads(cm_array **grads, int n) {
  for (int i = 0; i < n; i++) cm_release(grads[i]), grads[i] = NULL;
}

/* zeros (n, R, C) with updates (I.., R, C) added at rows idx (I..). */
static cm_array *scatter_rows(int32_t n, cm_array *idx, cm_array *updates, cm_rt *t, cm_stream s) {
  int nd = updates->ndim;
  int32_t zs[3] = {n, updates->shape[nd - 2], updates->shape[nd - 1]};
  int ax = -3, zero = 0;
  cm_array *z = RT(t, cm_zeros(3, zs, updates->dtype, s));
  cm_array *u = RT(t, cm_expand_dims(updates, 1, &ax, s));
  return t->fail ? NULL : RT(t, cm_scatter(z, &idx, 1, u, &zero, 1, CM_SCATTER_SUM, s));
}

/* MLX's gather_mm_grad: the gradient of gather_mm(x, w^T, lhs, rhs) with
 * respect to w^T, shaped batch + (N, K). */
static cm_array *gather_mm_grad(cm_array *x, cm_array *dy, cm_array *lhs, cm_array *rhs,
                                bool sorted, int nbatch, const int32_t *batch, cm_rt *t,
                                cm_stream s) {
  int64_t nseg = 1;
  for (int i = 0; i < nbatch; i++) nseg *= batch[i];
  int32_t shape[CM_MAX_DIMS];
  memcpy(shape, batch, sizeof(int32_t) * (size_t)nbatch);
  shape[nbatch] = dy->shape[dy->ndim - 1];
  shape[nbatch + 1] = x->shape[x->ndim - 1];
  cm_array *r;
  if (sorted) {
    /* segment e of the rows of dy (and x) is where rhs == e: the
     * cumulative counts of the sorted indices, M rows each */
    int32_t M = x->shape[x->ndim - 2], ns = (int32_t)nseg, two[2] = {ns, 2};
    int64_t st[2] = {1, 1};
    cm_array *counts = RT(t, cm_zeros(1, &ns, CM_UINT32, s));
    cm_array *flat = RT(t, cm_flatten(rhs, 0, -1, s));
    cm_array *m = RT(t, cm_array_scalar_int(M, CM_UINT32));
    cm_array *mb = flat && m ? RT(t, cm_broadcast_to(m, 1, flat->shape, s)) : NULL;
    counts = t->fail ? NULL : RT(t, cm_scatter_add_axis(counts, flat, mb, 0, s));
    counts = t->fail ? NULL : RT(t, cm_cumsum(counts, 0, false, true, s));
    int32_t one = 1;
    cm_array *z = RT(t, cm_zeros(1, &one, CM_UINT32, s));
    cm_array *cat = t->fail ? NULL : RT(t, cm_concatenate((cm_array *[]){z, counts}, 2, 0, s));
    cm_array *seg = t->fail ? NULL : RT(t, cm_as_strided(cat, 2, two, 2, st, 0, s));
    /* x broadcast to dy's batch, so its rows line up with dy's */
    int32_t xs[CM_MAX_DIMS];
    memcpy(xs, dy->shape, sizeof(int32_t) * (size_t)dy->ndim);
    xs[dy->ndim - 1] = x->shape[x->ndim - 1];
    cm_array *xb = t->fail ? NULL : RT(t, cm_broadcast_to(x, dy->ndim, xs, s));
    cm_array *dyf = t->fail ? NULL : RT(t, cm_flatten(dy, 0, -2, s));
    cm_array *dyt = t->fail ? NULL : RT(t, cm_swapaxes(dyf, 0, 1, s));
    cm_array *xf = t->fail ? NULL : RT(t, cm_flatten(xb, 0, -2, s));
    r = t->fail ? NULL : RT(t, cm_segmented_mm(dyt, xf, seg, s));
  } else {
    cm_array *dyt = RT(t, cm_swapaxes(dy, -1, -2, s));
    cm_array *dw = t->fail ? NULL : RT(t, cm_gather_mm(dyt, x, NULL, lhs, false, s));
    r = t->fail ? NULL : scatter_rows((int32_t)nseg, rhs, dw, t, s);
  }
  return t->fail ? NULL : RT(t, cm_reshape(r, nbatch + 2, shape, s));
}

static int gmm_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p, cm_array *cotan,
                   const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  (void)nin, (void)p;
  const cm_gather_mm_params *gp = cm_gather_mm_params_of(out);
  cm_array *a = in[0], *b = in[1], *lhs = in[2], *rhs = in[3];
  bool sorted = gp->left_sorted || gp->right_sorted;
  int64_t M = cotan->shape[cotan->ndim - 2], K = a->shape[a->ndim - 1];
  bool no_broadcast = rhs->size * M * K == a->size;
  for (int i = 0; i < nargs; i++) grads[i] = NULL;
  for (int i = 0; i < nargs; i++) {
    if (argnums[i] > 1) return release_grads(grads, i), no_grad("GatherMM", "indices");
    cm_rt t = {0};
    cm_array *g = NULL;
    if (argnums[i] == 0) {
      cm_array *bt = RT(&t, cm_swapaxes(b, -1, -2, s));
      cm_array *d = t.fail ? NULL : RT(&t, cm_gather_mm(cotan, bt, NULL, rhs, sorted, s));
      if (!t.fail && sorted && no_broadcast) {
        g = RT(&t, cm_reshape(d, a->ndim, a->shape, s));
      } else if (!t.fail) {
        int64_t na = 1;
        for (int j = 0; j < a->ndim - 2; j++) na *= a->shape[j];
        cm_array *sc = scatter_rows((int32_t)na, lhs, d, &t, s);
        g = t.fail ? NULL : RT(&t, cm_reshape(sc, a->ndim, a->shape, s));
      }
    } else {
      cm_array *w = gather_mm_grad(a, cotan, lhs, rhs, sorted, b->ndim - 2, b->shape, &t, s);
      g = t.fail ? NULL : RT(&t, cm_swapaxes(w, -1, -2, s));
    }
    if (cm_rt_done(&t, g, &grads[i])) return release_grads(grads, i), -1;
  }
  return 0;
}

/* ---- BlockMaskedMM ---- */

static cm_array *bmm_t(cm_array *x, cm_rt *t, cm_stream s) {
  return x ? RT(t, cm_swapaxes(x, -1, -2, s)) : NULL;
}

/* The block sums of p * q: tiles of bs x bs over the last two axes (padded
 * with zeros to whole tiles). */
static cm_array *tile_sums(cm_array *p, cm_array *q, int bs, cm_rt *t, cm_stream s) {
  cm_array *r = RT(t, cm_multiply(p, q, s));
  if (t->fail) return NULL;
  int nd = r->ndim;
  int32_t Y = r->shape[nd - 2], X = r->shape[nd - 1];
  int32_t ty = (Y + bs - 1) / bs, tx = (X + bs - 1) / bs;
  if (ty * bs != Y || tx * bs != X) {
    int axes[2] = {-2, -1};
    int32_t lo[2] = {0, 0}, hi[2] = {ty * bs - Y, tx * bs - X};
    r = RT(t, cm_pad(r, 2, axes, 2, lo, 2, hi, NULL, "constant", s));
    if (t->fail) return NULL;
  }
  int32_t shape[CM_MAX_DIMS + 2];
  memcpy(shape, r->shape, sizeof(int32_t) * (size_t)(nd - 2));
  shape[nd - 2] = ty, shape[nd - 1] = bs, shape[nd] = tx, shape[nd + 1] = bs;
  if (nd + 2 > CM_MAX_DIMS)
    return cm_error(CM_ERR_VALUE, "[BlockMaskedMM] Too many dimensions."), t->fail = true, NULL;
  r = RT(t, cm_reshape(r, nd + 2, shape, s));
  int sum_axes[2] = {-3, -1};
  return t->fail ? NULL : RT(t, cm_sum(r, cm_axes_list(sum_axes, 2), false, s));
}

static int bmm_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p, cm_array *cotan,
                   const int *argnums, int nargs, cm_array **grads, cm_stream s) {
  (void)p;
  int bs = cm_block_mm_params_of(out)->block_size;
  bool has_op = nin > 3, has_out = nin == 3 || nin == 5;
  int op_idx = has_out ? 3 : 2;
  cm_array *a = in[0], *b = in[1], *mo = has_out ? in[2] : NULL;
  cm_array *ml = has_op ? in[op_idx] : NULL, *mr = has_op ? in[op_idx + 1] : NULL;
  for (int i = 0; i < nargs; i++) grads[i] = NULL;
  for (int i = 0; i < nargs; i++) {
    int arg = argnums[i];
    cm_rt t = {0};
    cm_array *g = NULL;
    if (arg == 0) { /* cotan @ b^T, masked as the forward product was */
      cm_array *bt = bmm_t(b, &t, s), *mrt = bmm_t(mr, &t, s);
      g = t.fail ? NULL : RT(&t, cm_block_masked_mm(cotan, bt, bs, ml, mo, mrt, s));
    } else if (arg == 1) { /* a^T @ cotan */
      cm_array *at = bmm_t(a, &t, s), *mlt = bmm_t(ml, &t, s);
      g = t.fail ? NULL : RT(&t, cm_block_masked_mm(at, cotan, bs, mr, mlt, mo, s));
    } else if (arg == 2 && has_out) { /* MLX's: the masked product, per tile */
      cm_array *c = RT(&t, cm_block_masked_mm(a, b, bs, mo, ml, mr, s));
      g = t.fail ? NULL : tile_sums(cotan, c, bs, &t, s);
    } else if (has_op && (arg == op_idx || arg == op_idx + 1)) {
      cm_array *mask = arg == op_idx ? ml : mr;
      if (mask->dtype == CM_BOOL) {
        cm_rt_done(&t, NULL, &g);
        release_grads(grads, i);
        return cm_error(CM_ERR_VALUE,
                        "[BlockMaskedMM] Cannot calculate VJP with respect to boolean masks. Use "
                        "stop_gradient on masks to stop gradients from being computed.");
      }
      cm_array *d;
      if (arg == op_idx) { /* the unmasked d(a): cotan @ (masked b)^T */
        cm_array *bt = bmm_t(b, &t, s), *mrt = bmm_t(mr, &t, s);
        d = t.fail ? NULL : RT(&t, cm_block_masked_mm(cotan, bt, bs, NULL, mo, mrt, s));
      } else {
        cm_array *at = bmm_t(a, &t, s), *mlt = bmm_t(ml, &t, s);
        d = t.fail ? NULL : RT(&t, cm_block_masked_mm(at, cotan, bs, NULL, mlt, mo, s));
      }
      g = t.fail ? NULL : tile_sums(arg == op_idx ? a : b, d, bs, &t, s);
    } else {
      cm_rt_done(&t, NULL, &g);
      release_grads(grads, i);
      return no_grad("BlockMaskedMM", "masks");
    }
    if (cm_rt_done(&t, g, &grads[i])) return release_grads(grads, i), -1;
  }
  return 0;
}

/* Shapeless compile (MLX's): the indices' shape, then a's rows and b's
 * columns. */
static int gmm_shape(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                     int *ndim, int32_t *shape) {
  (void)node, (void)nin, (void)p;
  const cm_array *a = in[0], *b = in[1], *li = in[2];
  if (li->ndim + 2 > CM_MAX_DIMS || a->shape[a->ndim - 1] != b->shape[b->ndim - 2])
    return cm_mm_shape_error("gather_mm", a, b);
  if (li->ndim) memcpy(shape, li->shape, sizeof *shape * (size_t)li->ndim);
  shape[li->ndim] = a->shape[a->ndim - 2];
  shape[li->ndim + 1] = b->shape[b->ndim - 1];
  *ndim = li->ndim + 2;
  return 0;
}

const cm_prim cm_prim_gather_mm = {
    .name = "GatherMM",
    .export = &cm_export_gather_mm,
    CM_PARAMS_OF(cm_gather_mm_params),
    .output_shape = gmm_shape,
    .vjp = gmm_vjp,
};

const cm_prim cm_prim_segmented_mm = {
    .name = "SegmentedMM",
    .export = &cm_export_segmented_mm,
    .params_size = 0,
};

const cm_prim cm_prim_block_masked_mm = {
    .name = "BlockMaskedMM",
    .export = &cm_export_block_masked_mm,
    CM_PARAMS_OF(cm_block_mm_params),
    .vjp = bmm_vjp,
};
