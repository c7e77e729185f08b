/* The gradient of scaled dot-product attention (SdpaVJP), fused.
 *
 * Inputs q, k, v[, mask][, sinks], dO (the output's cotangent); outputs
 * dq, dk, dv.  With P = softmax(scale Q K^T + mask) and O = P V:
 *
 *   dV = P^T dO,  dP = dO V^T,  dS = P (dP - rowsum(P dP)),
 *   dQ = scale dS K,  dK = scale dS^T Q.
 *
 * Tasks on the pool are (batch, kv head) units, each walking its blocks of
 * query rows (the R = Hq / Hkv query heads sharing the kv head together,
 * so dK and dV sum over the group by the product itself).  A block holds
 * its rows' scores against every visible key at once: the softmax is then
 * exact and nothing is recomputed, and the five products are one
 * single-threaded sgemm each.  dK and dV accumulate in the task's own
 * float32 buffers, so there are no races; when there are fewer units than
 * threads the query blocks of a unit are dealt to several tasks, each with
 * partial dK and dV that a second pass sums in a fixed order (the result
 * does not depend on the thread count).
 *
 * Masks as the composition differentiates them: a boolean mask (and the
 * causal one) sets the scores it hides to the dtype's lowest value and
 * zeroes their dS, so a fully masked row spreads P evenly (its dV share)
 * with no dQ or dK; an additive mask is added; sinks are one more logit
 * per head in the softmax's sum.  Under a causal mask whose every row sees
 * a key, a block stops at its last row's last visible key.  float16 and
 * bfloat16 are widened and computed in float32. */
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/blas_single.h"
#include "backend/cpu/fast.h"
#include "backend/cpu/fast_sdpa.h"
#include "core/threadpool.h"
#include "primitives/fast.h"

#define BLOCK_ROWS 128       /* query rows (all heads of a group) per block */
#define BLOCK_SCORES 65536   /* rows x keys of a block's scores, at most */
#define SMALL_WORK (1 << 20) /* multiply-adds below which one thread does all */
#define PART_MAX (1 << 24)   /* floats of partial dK, dV at most (64 MiB) */

typedef struct bwd_job {
  cm_dtype dt;
  int B, Hq, Hkv, R, qL, kL, D, Dv;
  const cm_array *q, *k, *v, *mask, *sinks, *g;
  float scale, lowest;
  bool causal;
  char *dq, *dk, *dv;
  int qb_max, nqb, nchunk;
  float *part; /* per task kL x (D + Dv) partial dK, dV when nchunk > 1 */
  atomic_int oom;
} bwd_job;

typedef struct bwd_scratch {
  float *K, *V, *Q, *G, *S, *dP, *dQ, *row;
} bwd_scratch;

static float *scratch_alloc(const bwd_job *j, bwd_scratch *w) {
  int64_t M = (int64_t)j->R * j->qb_max, kL = j->kL;
  int64_t n = kL * (j->D + j->Dv) + M * (2 * j->D + j->Dv) + 2 * M * kL + kL;
  float *p = malloc((size_t)n * 4);
  if (!p) return NULL;
  w->K = p;
  w->V = w->K + kL * j->D;
  w->Q = w->V + kL * j->Dv;
  w->G = w->Q + M * j->D;
  w->dQ = w->G + M * j->Dv;
  w->S = w->dQ + M * j->D;
  w->dP = w->S + M * kL;
  w->row = w->dP + M * kL;
  return p;
}

static float sink_of(const bwd_job *j, int h) {
  if (!j->sinks) return -INFINITY;
  float f;
  cm_fast_load(&f,
               (const char *)cm_data(j->sinks) +
                   h * j->sinks->strides[0] * (int64_t)cm_dtype_size(j->sinks->dtype),
               1, 1, j->sinks->dtype);
  return f;
}

/* Scores s[0..n) of row (b, h, i) to probabilities, in place; hidden[c]
 * (when hidden is not NULL) says which keys the boolean or causal mask
 * hides.  n is the row's key count: in prefix mode the keys past it are
 * causal-masked and not in s. */
static void softmax_row(const bwd_job *j, float *s, int n, int b, int h, int i, int64_t lim,
                        float *tmp) {
  const cm_array *m = j->mask;
  if (m && m->dtype == CM_BOOL) {
    const char *mp = cm_sdpa_elem(m, b, h, i, 0);
    int64_t ms = m->strides[3];
    for (int c = 0; c < n; c++)
      if (!mp[c * ms]) s[c] = j->lowest;
  } else if (m) {
    cm_fast_load(tmp, cm_sdpa_elem(m, b, h, i, 0), m->strides[3], n, m->dtype);
    for (int c = 0; c < n; c++) s[c] += tmp[c];
  }
  if (lim < n) /* causal, generic path: keys past lim are hidden */
    for (int64_t c = lim < 0 ? 0 : lim; c < n; c++) s[c] = j->lowest;
  float sink = sink_of(j, h);
  float mx = cm_sdpa_row_max(s, n, sink);
  float sum = cm_sdpa_row_exp(s, n, mx);
  if (j->sinks) sum += expf(sink - mx);
  cm_sdpa_row_scale(s, 1.0f / sum, n);
}

/* dS = P (dP - rowsum(P dP)) over dp[0..n), zero where the mask hides. */
static void ds_row(const bwd_job *j, const float *p, float *dp, int n, int b, int h, int i,
                   int64_t lim) {
  float d = cm_fast_dot(p, dp, n);
  for (int c = 0; c < n; c++) dp[c] = p[c] * (dp[c] - d);
  const cm_array *m = j->mask;
  if (m && m->dtype == CM_BOOL) {
    const char *mp = cm_sdpa_elem(m, b, h, i, 0);
    int64_t ms = m->strides[3];
    for (int c = 0; c < n; c++)
      if (!mp[c * ms]) dp[c] = 0.0f;
  }
  if (lim < n)
    for (int64_t c = lim < 0 ? 0 : lim; c < n; c++) dp[c] = 0.0f;
}

/* Rows q0 .. q0 + qb - 1 of the R heads of group g (head-major) of q or
 * dO (d columns) as a float matrix with row stride *ld. */
static const float *block_rows(const bwd_job *j, const cm_array *a, int b, int g, int q0, int qb,
                               int d, float *buf, int *ld) {
  const int64_t *s = a->strides;
  bool uniform = j->R == 1 || s[1] == (int64_t)qb * s[2];
  if (a->dtype == CM_FLOAT32 && s[3] == 1 && uniform && s[2] >= d && s[2] <= INT_MAX) {
    *ld = (int)s[2];
    return (const float *)cm_sdpa_elem(a, b, g * j->R, q0, 0);
  }
  for (int r = 0; r < j->R * qb; r++)
    cm_fast_load(buf + (int64_t)r * d, cm_sdpa_elem(a, b, g * j->R + r / qb, q0 + r % qb, 0), s[3],
                 d, a->dtype);
  *ld = d;
  return buf;
}

/* One block of query rows q0 .. q0 + qb - 1 of batch b, kv head g. */
static void block(const bwd_job *j, bwd_scratch *w, int b, int g, int q0, const float *K, int ldk,
                  const float *V, int ldv, float *accK, float *accV) {
  int D = j->D, Dv = j->Dv, kL = j->kL, qb = j->qL - q0 < j->qb_max ? j->qL - q0 : j->qb_max;
  int rows = j->R * qb;
  int64_t off = (int64_t)kL - j->qL; /* row i sees keys <= i + off */
  bool prefix = j->causal && q0 + off >= 0;
  int n = kL;
  if (prefix && q0 + qb + off < kL) n = (int)(q0 + qb + off);
  /* the block's rows as one strided float matrix: in place when they are
   * (one head, or whole heads laid out one after another), else copied */
  int ldq, ldg;
  const float *Q = block_rows(j, j->q, b, g, q0, qb, D, w->Q, &ldq);
  const float *G = block_rows(j, j->g, b, g, q0, qb, Dv, w->G, &ldg);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n, D, j->scale, Q, ldq, K, ldk, 0.0f,
              w->S, n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n, Dv, 1.0f, G, ldg, V, ldv, 0.0f,
              w->dP, n);
  for (int r = 0; r < rows; r++) {
    int h = g * j->R + r / qb, i = q0 + r % qb;
    float *s = w->S + (int64_t)r * n, *dp = w->dP + (int64_t)r * n;
    int64_t lim = j->causal ? i + off + 1 : n; /* keys [0, lim) visible */
    if (prefix) {                              /* only [0, vis) are scored */
      int vis = lim < n ? (int)lim : n;
      softmax_row(j, s, vis, b, h, i, vis, w->row);
      ds_row(j, s, dp, vis, b, h, i, vis);
      memset(s + vis, 0, (size_t)(n - vis) * 4);
      memset(dp + vis, 0, (size_t)(n - vis) * 4);
    } else {
      softmax_row(j, s, n, b, h, i, lim, w->row);
      ds_row(j, s, dp, n, b, h, i, lim);
    }
  }
  /* dV += P^T dO, dK += scale dS^T Q, dQ = scale dS K */
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, Dv, rows, 1.0f, w->S, n, G, ldg, 1.0f,
              accV, Dv);
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, D, rows, j->scale, w->dP, n, Q, ldq, 1.0f,
              accK, D);
  /* dQ straight into the output when float32 (its rows are uniformly
   * strided as the block's are: one head, or whole heads) */
  size_t isz = cm_dtype_size(j->dt);
  int64_t o0 = (((int64_t)b * j->Hq + g * j->R) * j->qL + q0) * D;
  bool direct = j->dt == CM_FLOAT32 && (j->R == 1 || qb == j->qL);
  float *dQ = direct ? (float *)j->dq + o0 : w->dQ;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, D, n, j->scale, w->dP, n, K, ldk,
              0.0f, dQ, D);
  if (direct) return;
  for (int r = 0; r < rows; r++) {
    int h = g * j->R + r / qb, i = q0 + r % qb;
    int64_t o = (((int64_t)b * j->Hq + h) * j->qL + i) * D;
    cm_fast_store(j->dq + o * (int64_t)isz, w->dQ + (int64_t)r * D, D, j->dt);
  }
}

static void store_head(const bwd_job *j, int b, int g, const float *accK, const float *accV) {
  size_t isz = cm_dtype_size(j->dt);
  int64_t hk = (int64_t)b * j->Hkv + g, kL = j->kL;
  cm_fast_store(j->dk + hk * kL * j->D * (int64_t)isz, accK, kL * j->D, j->dt);
  cm_fast_store(j->dv + hk * kL * j->Dv * (int64_t)isz, accV, kL * j->Dv, j->dt);
}

/* Task t: unit t / nchunk (batch, kv head), query blocks t % nchunk,
 * t % nchunk + nchunk, ... (dealt round-robin so causal chunks balance). */
static void task(const bwd_job *j, bwd_scratch *w, float *acc, int64_t t) {
  int64_t unit = t / j->nchunk, kL = j->kL;
  int chunk = (int)(t % j->nchunk), b = (int)(unit / j->Hkv), g = (int)(unit % j->Hkv);
  float *accK = j->nchunk > 1 ? j->part + t * kL * (j->D + j->Dv) : acc;
  float *accV = accK + kL * j->D;
  memset(accK, 0, (size_t)(kL * (j->D + j->Dv)) * 4);
  int ldk, ldv;
  const float *K = cm_sdpa_kv_rows(j->k, b, g, 0, j->kL, j->D, w->K, &ldk);
  const float *V = cm_sdpa_kv_rows(j->v, b, g, 0, j->kL, j->Dv, w->V, &ldv);
  for (int blk = chunk; blk < j->nqb; blk += j->nchunk)
    block(j, w, b, g, blk * j->qb_max, K, ldk, V, ldv, accK, accV);
  if (j->nchunk == 1) store_head(j, b, g, accK, accV);
}

static void tasks(void *ctx, int64_t t0, int64_t t1) {
  bwd_job *j = ctx;
  bwd_scratch w;
  float *buf = scratch_alloc(j, &w);
  float *acc = j->nchunk > 1 ? NULL : malloc((size_t)((int64_t)j->kL * (j->D + j->Dv)) * 4);
  if (!buf || (j->nchunk == 1 && !acc)) {
    atomic_store(&j->oom, 1);
  } else {
    for (int64_t t = t0; t < t1; t++) task(j, &w, acc, t);
  }
  free(buf);
  free(acc);
}

/* Sum the chunks' partial dK, dV of units [u0, u1), in chunk order. */
static void combine(void *ctx, int64_t u0, int64_t u1) {
  bwd_job *j = ctx;
  int64_t per = (int64_t)j->kL * (j->D + j->Dv);
  for (int64_t u = u0; u < u1; u++) {
    float *dst = j->part + u * j->nchunk * per;
    for (int c = 1; c < j->nchunk; c++) cm_fast_axpy(dst, 1.0f, dst + c * per, per);
    store_head(j, (int)(u / j->Hkv), (int)(u % j->Hkv), dst, dst + (int64_t)j->kL * j->D);
  }
}

static int run(bwd_job *j) {
  int nt = cm_num_threads();
  int rows = BLOCK_ROWS;
  if ((int64_t)rows * j->kL > BLOCK_SCORES) rows = BLOCK_SCORES / j->kL;
  if (rows < 16) rows = 16;
  j->qb_max = rows / j->R > 0 ? rows / j->R : 1;
  if (j->qb_max > j->qL) j->qb_max = j->qL;
  j->nqb = (j->qL + j->qb_max - 1) / j->qb_max;
  int64_t units = (int64_t)j->B * j->Hkv, nchunk = 1;
  if (units < 2 * (int64_t)nt) {
    nchunk = (2 * nt + units - 1) / units;
    if (nchunk > j->nqb) nchunk = j->nqb;
    while (nchunk > 1 && units * nchunk * j->kL * (j->D + j->Dv) > PART_MAX) nchunk--;
  }
  j->nchunk = (int)nchunk;
  int64_t ntasks = units * nchunk;
  if (nchunk > 1) {
    j->part = malloc((size_t)(ntasks * j->kL * (j->D + j->Dv)) * 4);
    if (!j->part) atomic_store(&j->oom, 1);
  }
  if (!atomic_load(&j->oom)) {
    int64_t work = (int64_t)j->B * j->Hq * j->qL * j->kL * (j->D + j->Dv);
    /* BLAS stays on each task's thread (the products are small), unless
     * there is one task */
    if (ntasks > 1) cm_blas_single_begin();
    if (ntasks > 1 && nt > 1 && work >= SMALL_WORK) cm_parallel_for(ntasks, 1, tasks, j);
    else tasks(j, 0, ntasks);
    if (ntasks > 1) cm_blas_single_end();
  }
  if (nchunk > 1 && !atomic_load(&j->oom)) cm_parallel_for(units, 1, combine, j);
  free(j->part);
  if (atomic_load(&j->oom))
    return cm_error(CM_ERR_MEMORY, "[scaled_dot_product_attention] Out of memory.");
  return 0;
}

int cm_cpu_sdpa_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *pp) {
  (void)pp;
  const cm_sdpa_params *p = cm_sdpa_params_of(out);
  cm_array *q = in[0], *k = in[1], *v = in[2];
  cm_array *outs[3] = {out, cm_output(out, 1), cm_output(out, 2)};
  for (int i = 0; i < 3; i++)
    if (cm_alloc_output(outs[i])) return -1;
  bwd_job j = {.dt = q->dtype,
               .B = q->shape[0],
               .Hq = q->shape[1],
               .Hkv = k->shape[1],
               .qL = q->shape[2],
               .kL = k->shape[2],
               .D = q->shape[3],
               .Dv = v->shape[3],
               .q = q,
               .k = k,
               .v = v,
               .g = in[nin - 1],
               .scale = p->scale,
               .causal = p->causal,
               .dq = cm_data(outs[0]),
               .dk = cm_data(outs[1]),
               .dv = cm_data(outs[2])};
  j.R = j.Hq / j.Hkv;
  j.mask = p->has_mask ? in[3] : NULL;
  j.sinks = p->has_sinks ? in[nin - 2] : NULL;
  j.lowest = cm_sdpa_lowest(j.dt);
  if (q->size == 0 || k->size == 0 || v->size == 0) { /* the rules build no node for these */
    for (int i = 0; i < 3; i++) memset(cm_data(outs[i]), 0, cm_nbytes(outs[i]));
    return 0;
  }
  return run(&j);
}
