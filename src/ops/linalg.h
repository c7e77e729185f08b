/* mx.linalg (MLX 0.32's mlx/linalg.h): the factorisations, built as
 * primitive nodes (ops/linalg.c), and the functions composed from them
 * and from other ops (ops/linalg_compose.c, ops/linalg_norm.c).
 *
 * As in MLX the factorisations run on a CPU stream only (a GPU stream is
 * MLX's ValueError "... This op is not yet supported on the GPU.
 * Explicitly pass a CPU stream to run it.") and take float32 or float64
 * (svd, eig, eigvals, eigh and eigvalsh also complex64); other dtypes, too
 * few dimensions or non-square input are MLX's ValueErrors.  Singular
 * input to inv, tri_inv, solve and solve_triangular, and a matrix that is
 * not positive definite given to cholesky, fail at evaluation with a
 * RuntimeError (MLX's message where it has one).  Every result is a new
 * reference (0 / -1 for the functions with several results; outs are
 * then NULL). */
#ifndef CMLX_OPS_LINALG_H
#define CMLX_OPS_LINALG_H

#include <stdbool.h>

#include "ops/common.h"

/* a (..., M, N) = U diag(S) Vt: outs[0] = U (..., M, M), outs[1] = S
 * (..., min(M, N)), descending (real: float32 for complex64 input),
 * outs[2] = Vt (..., N, N). */
int cm_linalg_svd(cm_array *a, cm_array **outs, cm_stream s);
/* compute_uv false: outs[0] = S only; *nout gets 3 or 1. */
int cm_linalg_svd_uv(cm_array *a, bool compute_uv, cm_array **outs, int *nout, cm_stream s);
/* Q (..., M, K), R (..., K, N), K = min(M, N). */
int cm_linalg_qr(cm_array *a, cm_array **q, cm_array **r, cm_stream s);
cm_array *cm_linalg_inv(cm_array *a, cm_stream s);
/* inverse of a's lower (upper) triangle; the other triangle of the result
 * is zero */
cm_array *cm_linalg_tri_inv(cm_array *a, bool upper, cm_stream s);
/* L with a = L L^T (upper: U with a = U^T U); reads one triangle */
cm_array *cm_linalg_cholesky(cm_array *a, bool upper, cm_stream s);
/* eigenvalues (..., N) and eigenvectors (..., N, N), complex64 */
int cm_linalg_eig(cm_array *a, cm_array **w, cm_array **v, cm_stream s);
cm_array *cm_linalg_eigvals(cm_array *a, cm_stream s);
/* ascending real eigenvalues and eigenvectors of a Hermitian matrix whose
 * UPLO triangle is read ("L", or anything else for the upper one, as in
 * MLX) */
int cm_linalg_eigh(cm_array *a, const char *uplo, cm_array **w, cm_array **v, cm_stream s);
cm_array *cm_linalg_eigvalsh(cm_array *a, const char *uplo, cm_stream s);
/* LU (..., M, N) packed (unit L below the diagonal), pivots (..., K)
 * uint32 (LAPACK's row swaps, 0-based) */
int cm_linalg_lu_factor(cm_array *a, cm_array **lu, cm_array **pivots, cm_stream s);
/* outs[0] = row order P (..., M) uint32, outs[1] = L (..., M, K),
 * outs[2] = U (..., K, N), with L[P] @ U = a */
int cm_linalg_lu(cm_array *a, cm_array **outs, cm_stream s);
/* The LUF node itself: outs[0..2] = LU, pivots, row order (the import of
 * an exported lu_factor). */
int cm_linalg_luf(cm_array *a, cm_array **outs, cm_stream s);
/* x with a x = b: a (..., N, N), b (..., N, K) or (N,) (batches
 * broadcast); the inputs promote to float32 or float64 */
cm_array *cm_linalg_solve(cm_array *a, cm_array *b, cm_stream s);
cm_array *cm_linalg_solve_triangular(cm_array *a, cm_array *b, bool upper, cm_stream s);

/* composed (ops/linalg_compose.c) */
cm_array *cm_linalg_cholesky_inv(cm_array *l, bool upper, cm_stream s);
cm_array *cm_linalg_pinv(cm_array *a, cm_stream s);
cm_array *cm_linalg_cross(cm_array *a, cm_array *b, int axis, cm_stream s);
/* integer and bool input promote to float32; complex is a ValueError */
cm_array *cm_linalg_det(cm_array *a, cm_stream s);
int cm_linalg_slogdet(cm_array *a, cm_array **sign, cm_array **logabsdet, cm_stream s);

/* norms (ops/linalg_norm.c): axes NULL is MLX's axis=None.  norm_l2 is
 * ord=None (the 2-norm of the flattened array, or over one or two axes),
 * norm_ord a number (vector: any p, 0, +-inf; matrix: +-1, +-2, +-inf),
 * norm_str "fro"/"f" or "nuc" (matrices). */
cm_array *cm_linalg_norm_l2(cm_array *a, const int *axes, int naxes, bool keepdims, cm_stream s);
cm_array *cm_linalg_norm_ord(cm_array *a, double ord, const int *axes, int naxes, bool keepdims,
                             cm_stream s);
cm_array *cm_linalg_norm_str(cm_array *a, const char *ord, const int *axes, int naxes,
                             bool keepdims, cm_stream s);

/* shared by the linalg op files: MLX's stream and dtype checks */
int cm_linalg_check_cpu(cm_stream *s, const char *fn);
int cm_linalg_check_float(cm_dtype t, const char *fn, bool complex_ok);
/* release a rule-temporaries list: 0, or -1 if a step failed */
struct cm_rt;
int cm_linalg_rt_end(struct cm_rt *t);
/* release the temporaries; a new reference to r, or NULL if a step failed */
cm_array *cm_linalg_finish(struct cm_rt *t, cm_array *r);
/* MLX's at_least_float: integers and bool promote with float32 */
cm_dtype cm_linalg_at_least_float(cm_dtype d);

#endif
