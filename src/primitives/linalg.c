/* The linear algebra primitives.  As in MLX none has a derivative (a vjp
 * or jvp through one is the transform's error naming it); the batching
 * rules move the batch axis in front, where the factorisations batch
 * natively, and build the same op again (MLX's SVD, Inverse, Cholesky,
 * Eig and Eigh vmap rules; Solve's is cmlx's own). */
#include "primitives/linalg.h"
#include "primitives/export_desc.h"

#include "ops/linalg.h"
#include "ops/shape.h"

static cm_array *batch_front(cm_array *x, int axis, cm_stream s) {
  return axis > 0 ? cm_moveaxis(x, axis, 0, s) : cm_retain(x);
}

/* One batched input a (batch on axes[0]) through the op of prim again;
 * outs[k] and their axes (0) set.  *nout is the count it made. */
static int rebuild(const cm_array *node, cm_array *in, int axis, cm_array **outs, int *out_axes,
                   int nout, cm_stream s) {
  const cm_prim *prim = node->prim;
  cm_array *a = batch_front(in, axis, s);
  if (!a) return -1;
  int rc = 0, n = 1;
  if (prim == &cm_prim_svd) {
    rc = cm_linalg_svd_uv(a, cm_svd_params_of(node)->compute_uv, outs, &n, s);
  } else if (prim == &cm_prim_inverse) {
    const cm_inverse_params *ip = cm_inverse_params_of(node);
    outs[0] = ip->tri ? cm_linalg_tri_inv(a, ip->upper, s) : cm_linalg_inv(a, s);
    rc = outs[0] ? 0 : -1;
  } else if (prim == &cm_prim_cholesky) {
    outs[0] = cm_linalg_cholesky(a, cm_upper_params_of(node)->upper, s);
    rc = outs[0] ? 0 : -1;
  } else if (prim == &cm_prim_eig) {
    if (nout == 2) {
      rc = cm_linalg_eig(a, &outs[0], &outs[1], s), n = 2;
    } else {
      outs[0] = cm_linalg_eigvals(a, s);
      rc = outs[0] ? 0 : -1;
    }
  } else {
    const char *uplo = cm_eigh_params_of(node)->upper ? "U" : "L";
    if (nout == 2) {
      rc = cm_linalg_eigh(a, uplo, &outs[0], &outs[1], s), n = 2;
    } else {
      outs[0] = cm_linalg_eigvalsh(a, uplo, s);
      rc = outs[0] ? 0 : -1;
    }
  }
  cm_release(a);
  for (int k = 0; k < n; k++) out_axes[k] = 0;
  return rc;
}

static int lin_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                    const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin, (void)p;
  return rebuild(node, in[0], axes[0], out, out_axis, 1, s);
}

static int lin_vmap_multi(cm_array *const *outs, int nout, cm_array *const *in, int nin,
                          const cm_params *p, const int *axes, cm_array **outs_b, int *out_axes,
                          cm_stream s) {
  (void)nin, (void)p;
  return rebuild(outs[0], in[0], axes[0], outs_b, out_axes, nout, s);
}

/* Solve: both operands hold full batches; an unbatched one broadcasts */
static int solve_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                      const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)node, (void)nin, (void)p;
  cm_array *a = axes[0] >= 0 ? batch_front(in[0], axes[0], s) : cm_retain(in[0]);
  cm_array *b = axes[1] >= 0 ? batch_front(in[1], axes[1], s) : cm_retain(in[1]);
  /* an unbatched operand needs a leading axis of size 1 to line up */
  int zero = 0;
  cm_array *a1 = a && axes[0] < 0 ? cm_expand_dims(a, 1, &zero, s) : (a ? cm_retain(a) : NULL);
  cm_array *b1 = b && axes[1] < 0 ? cm_expand_dims(b, 1, &zero, s) : (b ? cm_retain(b) : NULL);
  *out = a1 && b1 ? cm_linalg_solve(a1, b1, s) : NULL;
  *out_axis = 0;
  cm_release(a), cm_release(b), cm_release(a1), cm_release(b1);
  return *out ? 0 : -1;
}

const cm_prim cm_prim_svd = {.name = "SVD",
                             .export = &cm_export_svd,
                             CM_PARAMS_OF(cm_svd_params),
                             .vmap = lin_vmap,
                             .vmap_multi = lin_vmap_multi};
const cm_prim cm_prim_qrf = {.name = "QRF", .export = &cm_export_qrf};
const cm_prim cm_prim_luf = {.name = "LUF", .export = &cm_export_luf};
const cm_prim cm_prim_cholesky = {.name = "Cholesky",
                                  .export = &cm_export_cholesky,
                                  CM_PARAMS_OF(cm_upper_params),
                                  .vmap = lin_vmap};
const cm_prim cm_prim_inverse = {.name = "Inverse",
                                 .export = &cm_export_inverse,
                                 CM_PARAMS_OF(cm_inverse_params),
                                 .vmap = lin_vmap};
const cm_prim cm_prim_solve = {.name = "Solve", .export = &cm_export_solve, .vmap = solve_vmap};
const cm_prim cm_prim_eig = {.name = "Eig",
                             .export = &cm_export_eig,
                             CM_PARAMS_OF(cm_eig_params),
                             .vmap = lin_vmap,
                             .vmap_multi = lin_vmap_multi};
const cm_prim cm_prim_eigh = {.name = "Eigh",
                              .export = &cm_export_eigh,
                              CM_PARAMS_OF(cm_eigh_params),
                              .vmap = lin_vmap,
                              .vmap_multi = lin_vmap_multi};
