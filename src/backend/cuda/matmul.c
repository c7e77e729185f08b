/* Batched matrix products through cuBLASLt.
 *
 * cuBLASLt is column-major; a row-major product D = A B is the
 * column-major product D^T = B^T A^T over the same memory, so B is passed
 * as cuBLASLt's first operand and A as its second, with m = N and n = M.
 * An operand with a unit column stride is row-major (no transpose in
 * cuBLASLt's terms); one with a unit row stride is column-major (a
 * transpose): transposed views are multiplied without a copy.  Any other
 * layout is first copied row-contiguous.  Batches whose strides fold into
 * one (contiguous batches, a broadcast operand with stride 0) are one
 * strided-batched call; others are one call per batch.
 *
 * float32 runs with CUBLAS_COMPUTE_32F: TF32 stays off, as in MLX.
 * float16 and bfloat16 accumulate in float32. */
#include "backend/cuda/matmul.h"

#include <pthread.h>
#include <string.h>

#include "backend/cuda/device.h"
#include "backend/cuda/elementwise.h"
#include "backend/cuda/encoder.h"
#include "backend/cuda/libs.h"
#include "backend/views.h"
#include "primitives/matmul.h"

#define WORKSPACE_BYTES (32u << 20)

static int lt_check(const cm_cublaslt_api *lt, cublasStatus_t st, const char *what) {
  if (st == CUBLAS_STATUS_SUCCESS) return 0;
  return cm_error(CM_ERR_RUNTIME, "[cuda] %s failed: %s.", what, lt->status_string(st));
}

/* One handle per device, shared: calls are serialised by a lock. */
static cublasLtHandle_t handles[64];
static pthread_mutex_t handle_mu = PTHREAD_MUTEX_INITIALIZER;

static cublasLtHandle_t handle_for(const cm_cublaslt_api *lt, int device) {
  if (device < 0 || device >= 64) return NULL;
  pthread_mutex_lock(&handle_mu);
  if (!handles[device] && lt_check(lt, lt->create(&handles[device]), "cublasLtCreate"))
    handles[device] = NULL;
  cublasLtHandle_t h = handles[device];
  pthread_mutex_unlock(&handle_mu);
  return h;
}

typedef struct lt_types {
  cudaDataType_t data;
  cublasComputeType_t compute;
  cudaDataType_t scale;
} lt_types;

static bool types_for(cm_dtype t, lt_types *out) {
  switch (t) {
  case CM_FLOAT32: *out = (lt_types){CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F}; return true;
  case CM_FLOAT16: *out = (lt_types){CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F}; return true;
  case CM_BFLOAT16: *out = (lt_types){CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F}; return true;
  case CM_FLOAT64: *out = (lt_types){CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F}; return true;
  case CM_COMPLEX64: *out = (lt_types){CUDA_C_32F, CUBLAS_COMPUTE_32F, CUDA_C_32F}; return true;
  default: return false;
  }
}

/* One operand in cuBLASLt's column-major terms. */
typedef struct lt_operand {
  const void *ptr;
  cublasOperation_t op;
  uint64_t rows, cols;
  int64_t ld;
  int64_t batch_stride; /* elements; 0: broadcast */
} lt_operand;

/* A row-major view X (r x c, strides rs, cs) as cuBLASLt's operand for
 * X^T: false when neither stride is unit (the caller copies). */
static bool as_operand(const void *ptr, int64_t r, int64_t c, int64_t rs, int64_t cs,
                       lt_operand *o) {
  o->ptr = ptr;
  if (cs == 1 || c == 1) { /* row-major: X^T is column-major (c x r) */
    o->op = CUBLAS_OP_N, o->rows = (uint64_t)c, o->cols = (uint64_t)r;
    o->ld = r == 1 ? (c > 0 ? c : 1) : rs;
    return o->ld >= (int64_t)(c > 0 ? c : 1);
  }
  if (rs == 1 || r == 1) { /* column-major X (r x c): transpose it */
    o->op = CUBLAS_OP_T, o->rows = (uint64_t)r, o->cols = (uint64_t)c;
    o->ld = c == 1 ? (r > 0 ? r : 1) : cs;
    return o->ld >= (int64_t)(r > 0 ? r : 1);
  }
  return false;
}

/* The stride between batches when an operand's batch axes fold into one
 * (every axis steps by the next's extent, broadcast axes by 0). */
static bool folded_batch_stride(const cm_array *a, int nb, int64_t *stride) {
  int64_t s = -1;
  for (int d = nb - 1; d >= 0; d--) {
    if (a->shape[d] == 1) continue;
    if (s < 0) {
      s = a->strides[d];
      continue;
    }
    int64_t inner = 1;
    for (int e = d + 1; e < nb; e++) inner *= a->shape[e];
    if (a->strides[d] != s * inner) return false;
  }
  *stride = s < 0 ? 0 : s;
  return true;
}

typedef struct mm_call {
  const cm_cublaslt_api *lt;
  cublasLtHandle_t handle;
  lt_types types;
  lt_operand A, B; /* cuBLASLt's A (our b) and B (our a) */
  void *D;
  uint64_t m, n, k;
  int64_t batches, d_stride;
  double alpha, beta;
  void *workspace;
} mm_call;

/* Set a matrix layout's batch attributes. */
static int set_batch(const cm_cublaslt_api *lt, cublasLtMatrixLayout_t l, int64_t batches,
                     int64_t stride) {
  int32_t count = (int32_t)batches;
  if (lt_check(lt, lt->layout_set(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
               "cublasLtMatrixLayoutSetAttribute"))
    return -1;
  return lt_check(lt, lt->layout_set(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                     sizeof stride),
                  "cublasLtMatrixLayoutSetAttribute");
}

/* The cuBLASLt call, issued on stream (captured into a graph node by the
 * encoder). */
static int run_matmul(cudaStream_t stream, void *ctx) {
  mm_call *c = ctx;
  const cm_cublaslt_api *lt = c->lt;
  cublasLtMatmulDesc_t desc = NULL;
  cublasLtMatrixLayout_t la = NULL, lb = NULL, ld = NULL;
  cublasLtMatmulPreference_t pref = NULL;
  int rc = lt_check(lt, lt->desc_create(&desc, c->types.compute, c->types.scale),
                    "cublasLtMatmulDescCreate");
  if (!rc) rc = lt_check(lt, lt->desc_set(desc, CUBLASLT_MATMUL_DESC_TRANSA, &c->A.op, sizeof c->A.op),
                         "cublasLtMatmulDescSetAttribute");
  if (!rc) rc = lt_check(lt, lt->desc_set(desc, CUBLASLT_MATMUL_DESC_TRANSB, &c->B.op, sizeof c->B.op),
                         "cublasLtMatmulDescSetAttribute");
  if (!rc) rc = lt_check(lt, lt->layout_create(&la, c->types.data, c->A.rows, c->A.cols, c->A.ld),
                         "cublasLtMatrixLayoutCreate");
  if (!rc) rc = lt_check(lt, lt->layout_create(&lb, c->types.data, c->B.rows, c->B.cols, c->B.ld),
                         "cublasLtMatrixLayoutCreate");
  if (!rc) rc = lt_check(lt, lt->layout_create(&ld, c->types.data, c->m, c->n, (int64_t)c->m),
                         "cublasLtMatrixLayoutCreate");
  if (!rc && c->batches > 1) {
    rc = set_batch(lt, la, c->batches, c->A.batch_stride);
    if (!rc) rc = set_batch(lt, lb, c->batches, c->B.batch_stride);
    if (!rc) rc = set_batch(lt, ld, c->batches, c->d_stride);
  }
  uint64_t ws = WORKSPACE_BYTES;
  if (!rc) rc = lt_check(lt, lt->pref_create(&pref), "cublasLtMatmulPreferenceCreate");
  if (!rc)
    rc = lt_check(lt, lt->pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
                  "cublasLtMatmulPreferenceSetAttribute");
  cublasLtMatmulHeuristicResult_t heur;
  int found = 0;
  if (!rc) {
    rc = lt_check(lt, lt->heuristic(c->handle, desc, la, lb, ld, ld, pref, 1, &heur, &found),
                  "cublasLtMatmulAlgoGetHeuristic");
    if (!rc && !found)
      rc = cm_error(CM_ERR_RUNTIME, "[matmul] cuBLASLt has no algorithm for this product.");
  }
  /* alpha and beta in the scale type */
  float af[2] = {(float)c->alpha, 0}, bf[2] = {(float)c->beta, 0};
  double ad = c->alpha, bd = c->beta;
  const void *alpha = c->types.scale == CUDA_R_64F ? (const void *)&ad : (const void *)af;
  const void *beta = c->types.scale == CUDA_R_64F ? (const void *)&bd : (const void *)bf;
  if (!rc)
    rc = lt_check(lt, lt->matmul(c->handle, desc, alpha, c->A.ptr, la, c->B.ptr, lb, beta, c->D,
                                 ld, c->D, ld, &heur.algo, c->workspace, WORKSPACE_BYTES, stream),
                  "cublasLtMatmul");
  if (pref) lt->pref_destroy(pref);
  if (ld) lt->layout_destroy(ld);
  if (lb) lt->layout_destroy(lb);
  if (la) lt->layout_destroy(la);
  if (desc) lt->desc_destroy(desc);
  return rc;
}

/* a as an operand, copied row-contiguous into *copy first when its
 * layout has no unit stride. */
static int operand_of(cm_array *out, cm_array *a, int64_t r, int64_t c, cm_array **copy,
                      lt_operand *o) {
  int nd = a->ndim;
  const void *p = cm_cuda_input_ptr(out->stream, a);
  if (!p) return -1;
  if (as_operand(p, r, c, a->strides[nd - 2], a->strides[nd - 1], o)) return 0;
  cm_buffer *b = cm_buffer_alloc_on(CM_GPU, cm_nbytes(a));
  if (!b) return -1;
  *copy = cm_array_from_buffer(b, 0, a->ndim, a->shape, NULL, a->dtype);
  cm_buffer_release(b);
  if (!*copy) return -1;
  (*copy)->stream = out->stream;
  int64_t rows[CM_MAX_DIMS];
  cm_row_major_strides(a->ndim, a->shape, rows);
  if (cm_cuda_copy_strided(*copy, 0, rows, a->ndim, a->shape, a)) return -1;
  as_operand(cm_data(*copy), r, c, c, 1, o);
  return 0;
}

int cm_cuda_matmul(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)p;
  const cm_matmul_params *mp = cm_matmul_params_of(out);
  cm_array *a = in[0], *b = in[1], *cin = nin > 2 ? in[2] : NULL;
  double beta = cin ? mp->beta : 0.0;
  mm_call call = {.alpha = mp->alpha};
  if (!types_for(out->dtype, &call.types))
    return cm_error(CM_ERR_VALUE, "[matmul] %s is not supported on the GPU.",
                    cm_dtype_name(out->dtype));
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  int nd = out->ndim, nb = nd - 2;
  int64_t M = out->shape[nd - 2], N = out->shape[nd - 1], K = a->shape[nd - 1];
  bool have_c = cin && beta != 0.0;
  if (have_c) { /* out = c (broadcast), scaled by beta in the product */
    if (cm_cuda_copy_strided(out, out->offset, out->strides, out->ndim, out->shape, cin)) return -1;
  } else {
    beta = 0.0;
  }
  if (K == 0) {
    if (have_c && beta != 1.0)
      return cm_error(CM_ERR_RUNTIME, "[addmm] An empty inner dimension with beta != 1 has no GPU "
                                      "implementation.");
    if (!have_c) { /* a sum of nothing: zeros */
      cm_array *zero = cm_array_scalar_double(0.0, out->dtype);
      if (!zero) return -1;
      int rc = cm_cuda_copy_strided(out, out->offset, out->strides, out->ndim, out->shape, zero);
      cm_release(zero);
      return rc;
    }
    return 0;
  }
  call.lt = cm_cublaslt();
  if (!call.lt) return -1;
  call.handle = handle_for(call.lt, out->stream.device.index);
  if (!call.handle) return -1;
  cm_array *ca = NULL, *cb = NULL;
  int rc = operand_of(out, b, K, N, &cb, &call.A);
  if (!rc) rc = operand_of(out, a, M, K, &ca, &call.B);
  call.m = (uint64_t)N, call.n = (uint64_t)M, call.k = (uint64_t)K;
  call.beta = beta;
  int64_t batches = out->size / (M * N), sa = 0, sb = 0;
  bool folded = nb == 0 || (folded_batch_stride(ca ? ca : a, nb, &sa) &&
                            folded_batch_stride(cb ? cb : b, nb, &sb));
  cm_buffer *ws = rc ? NULL : cm_buffer_alloc_on(CM_GPU, WORKSPACE_BYTES);
  if (!rc && !ws) rc = -1;
  if (!rc) {
    call.workspace = ws->ptr;
    rc = cm_cuda_hold(out->stream, ws);
  }
  cm_array *reads[3] = {ca ? ca : a, cb ? cb : b, out};
  size_t dsz = cm_itemsize(out);
  for (int64_t bi = 0; !rc && bi < (folded ? 1 : batches); bi++) {
    mm_call one = call;
    if (folded) {
      one.batches = batches;
      one.A.batch_stride = sb, one.B.batch_stride = sa;
      one.d_stride = M * N;
      one.D = cm_data(out);
    } else {
      one.batches = 1;
      one.A.ptr = (const char *)call.A.ptr +
                  cm_batch_offset(bi, nb, reads[1]->shape, reads[1]->strides) * (int64_t)dsz;
      one.B.ptr = (const char *)call.B.ptr +
                  cm_batch_offset(bi, nb, reads[0]->shape, reads[0]->strides) * (int64_t)dsz;
      one.D = (char *)cm_data(out) + bi * M * N * (int64_t)dsz;
    }
    rc = cm_cuda_library_call(out->stream, run_matmul, &one, reads, 3, &out, 1);
  }
  if (ws) cm_buffer_release(ws);
  if (ca) cm_release(ca);
  if (cb) cm_release(cb);
  return rc;
}
