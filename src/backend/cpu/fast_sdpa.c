/* Scaled dot-product attention, softmax(scale * Q K^T + mask) V, fused.
 *
 * The queries of one key/value head (the R = Hq / Hkv query heads that
 * share it, grouped-query attention) are one row block, so every key and
 * value row is read once for all of them.  Two paths:
 *
 *  - few queries (decode: qL <= DECODE_QL): tasks of (batch, kv head,
 *    chunk of keys) on the pool; scores by dot products as each key row
 *    streams past, then the values accumulated row by row, and the chunks
 *    combined as an online softmax.  K and V are read once: the path runs
 *    at memory speed, on every thread even for one kv head.
 *  - otherwise: blocks of query rows in turn; the scores of a block are one
 *    sgemm (OpenBLAS threads it), the masked softmax runs on the pool, and
 *    the output is a second sgemm.  Under a causal mask a block stops at
 *    its last row's last visible key, which skips about half the work.
 *
 * Scores never exist for the whole problem (the composition materialises
 * B x Hq x qL x kL of them).  float16/bfloat16 are widened to float32
 * (keys and values per block, in scratch) and accumulate in float32.
 * Masked scores are the dtype's lowest value, as MLX's where(mask, scores,
 * finfo.min), so a fully masked row averages the values (no NaN); sinks
 * are one more logit per head in the softmax. */
#include <cblas.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/fast.h"
#include "backend/cpu/unary_impl.h"
#include "core/threadpool.h"
#include "primitives/fast.h"

#define DECODE_QL 4
#define DECODE_CHUNK 4096
#define BLOCK_ROWS 128
#define SCORES_MAX (1 << 22)

typedef struct sdpa_job {
  cm_dtype dt;
  int B, Hq, Hkv, R, qL, kL, D, Dv;
  const cm_array *q, *k, *v, *mask, *sinks;
  float scale, lowest;
  bool causal;
  char *out;
  cm_unary_row_fn exp;
  cm_unary_params exp_params;
  atomic_int oom;
  /* the decode path's chunks of keys and their partial results */
  int nchunk, chunk;
  float *part_m, *part_l, *part_o;
  /* the current block of the gemm path */
  int b, g, q0, qb, kLe;
  float *S;
} sdpa_job;

static const char *elem(const cm_array *a, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  const int64_t *s = a->strides;
  return (const char *)cm_data(a) +
         (i0 * s[0] + i1 * s[1] + i2 * s[2] + i3 * s[3]) * (int64_t)cm_dtype_size(a->dtype);
}

static float load1(const char *p, cm_dtype dt) {
  float f;
  cm_fast_load(&f, p, 1, 1, dt);
  return f;
}

/* The mask and the causal limit on the scores s[0..n) of query (b, h, i)
 * against keys c0 .. c0 + n - 1: masked scores become the lowest value. */
static void mask_row(const sdpa_job *j, float *s, int64_t c0, int n, int b, int h, int i) {
  const cm_array *m = j->mask;
  if (m) {
    int64_t ms = m->strides[3];
    const char *mp = elem(m, b, h, i, c0);
    if (m->dtype == CM_BOOL) {
      for (int c = 0; c < n; c++)
        if (!mp[c * ms]) s[c] = j->lowest;
    } else {
      size_t isz = cm_dtype_size(m->dtype);
      for (int c = 0; c < n; c++) s[c] += load1(mp + c * ms * (int64_t)isz, m->dtype);
    }
  }
  if (j->causal) {
    int64_t lim = (int64_t)i + j->kL - j->qL - c0; /* last visible key, from c0 */
    for (int64_t c = lim < 0 ? 0 : lim + 1; c < n; c++) s[c] = j->lowest;
  }
}

/* Head h's sink logit (-inf without sinks). */
static float sink_of(const sdpa_job *j, int h) {
  if (!j->sinks) return -INFINITY;
  return load1((const char *)cm_data(j->sinks) +
                   h * j->sinks->strides[0] * (int64_t)cm_dtype_size(j->dt),
               j->dt);
}

/* s = exp(s - mx) in place, mx the largest of s and floor (NaN wins);
 * returns mx and the sum of the exponentials in *sum. */
static float exp_row(const sdpa_job *j, float *s, int n, float floor, float *sum) {
  float mx = floor;
  for (int c = 0; c < n; c++)
    if (s[c] > mx || s[c] != s[c]) mx = s[c];
  for (int c = 0; c < n; c++) s[c] -= mx;
  j->exp(s, 1, s, 1, n, &j->exp_params);
  *sum = cm_fast_sum(s, n);
  return mx;
}

/* The masked softmax of one score row of query (b, h, i) over every key
 * (the sink, if any, takes its share of the denominator). */
static void softmax_row(const sdpa_job *j, float *s, int n, int b, int h, int i) {
  mask_row(j, s, 0, n, b, h, i);
  float sink = sink_of(j, h), sum, mx = exp_row(j, s, n, sink, &sum);
  if (j->sinks) sum += expf(sink - mx);
  float inv = 1.0f / sum;
  for (int c = 0; c < n; c++) s[c] *= inv;
}

/* Row r (of R * rows) of a block: its head and query position. */
static inline void row_of(const sdpa_job *j, int g, int q0, int rows, int r, int *h, int *i) {
  *h = g * j->R + r / rows;
  *i = q0 + r % rows;
}

/* A (n x d) slice of k or v for batch b, kv head g, rows [0, n), as float
 * rows: in place when it is float32 with unit columns (*ld its row
 * stride), else converted into buf (ld = d). */
static const float *kv_rows(const cm_array *a, int b, int g, int n, int d, float *buf, int *ld) {
  const int64_t *s = a->strides;
  if (a->dtype == CM_FLOAT32 && (s[3] == 1 || d == 1) && s[2] >= d && s[2] <= INT_MAX) {
    *ld = (int)s[2];
    return (const float *)elem(a, b, g, 0, 0);
  }
  for (int r = 0; r < n; r++)
    cm_fast_load(buf + (int64_t)r * d, elem(a, b, g, r, 0), s[3], d, a->dtype);
  *ld = d;
  return buf;
}

static void store_row(const sdpa_job *j, int b, int h, int i, const float *o) {
  size_t isz = cm_dtype_size(j->dt);
  int64_t row = (((int64_t)b * j->Hq + h) * j->qL + i) * j->Dv;
  cm_fast_store(j->out + row * (int64_t)isz, o, j->Dv, j->dt);
}

/* ---- few queries: tasks of (batch, kv head, chunk of keys) ----
 * Each task leaves, per query row, the max of its scores, the sum of
 * their exponentials and the exponential-weighted sum of its values; the
 * chunks of a row are then combined (the split-key form of the online
 * softmax), so a long cache is spread over every thread and the scores
 * of one task stay small. */

static void decode_tasks(void *ctx, int64_t t0, int64_t t1) {
  sdpa_job *j = ctx;
  int M = j->R * j->qL, D = j->D, Dv = j->Dv, chunk = j->chunk;
  float *buf = malloc(((size_t)M * D + (size_t)M * chunk + D + Dv) * 4);
  if (!buf) {
    atomic_store(&j->oom, 1);
    return;
  }
  float *Q = buf, *S = Q + (int64_t)M * D, *kr = S + (int64_t)M * chunk, *vr = kr + D;
  const cm_array *k = j->k, *v = j->v;
  bool direct_k = k->dtype == CM_FLOAT32 && k->strides[3] == 1;
  bool direct_v = v->dtype == CM_FLOAT32 && v->strides[3] == 1;
  for (int64_t t = t0; t < t1; t++) {
    int64_t bg = t / j->nchunk, c0 = (t % j->nchunk) * chunk;
    int b = (int)(bg / j->Hkv), g = (int)(bg % j->Hkv), h, i;
    int n = (int)(j->kL - c0 < chunk ? j->kL - c0 : chunk);
    for (int r = 0; r < M; r++) {
      row_of(j, g, 0, j->qL, r, &h, &i);
      float *qr = Q + (int64_t)r * D;
      cm_fast_load(qr, elem(j->q, b, h, i, 0), j->q->strides[3], D, j->dt);
      for (int c = 0; c < D; c++) qr[c] *= j->scale;
    }
    for (int c = 0; c < n; c++) {
      const float *kc = kr;
      if (direct_k) kc = (const float *)elem(k, b, g, c0 + c, 0);
      else cm_fast_load(kr, elem(k, b, g, c0 + c, 0), k->strides[3], D, k->dtype);
      for (int r = 0; r < M; r++) S[(int64_t)r * n + c] = cm_fast_dot(Q + (int64_t)r * D, kc, D);
    }
    float *pm = j->part_m + t * M, *pl = j->part_l + t * M, *O = j->part_o + t * M * Dv;
    for (int r = 0; r < M; r++) {
      row_of(j, g, 0, j->qL, r, &h, &i);
      mask_row(j, S + (int64_t)r * n, c0, n, b, h, i);
      pm[r] = exp_row(j, S + (int64_t)r * n, n, -INFINITY, &pl[r]);
    }
    memset(O, 0, (size_t)M * Dv * 4);
    for (int c = 0; c < n; c++) {
      const float *vc = vr;
      if (direct_v) vc = (const float *)elem(v, b, g, c0 + c, 0);
      else cm_fast_load(vr, elem(v, b, g, c0 + c, 0), v->strides[3], Dv, v->dtype);
      for (int r = 0; r < M; r++) cm_fast_axpy(O + (int64_t)r * Dv, S[(int64_t)r * n + c], vc, Dv);
    }
  }
  free(buf);
}

/* Combine the chunks of rows [r0, r1) of all (batch, kv head) blocks. */
static void decode_combine(void *ctx, int64_t r0, int64_t r1) {
  sdpa_job *j = ctx;
  int M = j->R * j->qL, Dv = j->Dv, nc = j->nchunk;
  float *o = malloc((size_t)Dv * 4);
  if (!o) {
    atomic_store(&j->oom, 1);
    return;
  }
  for (int64_t row = r0; row < r1; row++) {
    int64_t bg = row / M;
    int r = (int)(row % M), b = (int)(bg / j->Hkv), g = (int)(bg % j->Hkv), h, i;
    row_of(j, g, 0, j->qL, r, &h, &i);
    int64_t t0 = bg * nc;
    float sink = sink_of(j, h), mx = sink;
    for (int c = 0; c < nc; c++) {
      float m = j->part_m[(t0 + c) * M + r];
      if (m > mx || m != m) mx = m;
    }
    float sum = j->sinks ? expf(sink - mx) : 0.0f;
    memset(o, 0, (size_t)Dv * 4);
    for (int c = 0; c < nc; c++) {
      int64_t t = t0 + c;
      float w = expf(j->part_m[t * M + r] - mx);
      sum += w * j->part_l[t * M + r];
      cm_fast_axpy(o, w, j->part_o + (t * M + r) * Dv, Dv);
    }
    float inv = 1.0f / sum;
    for (int c = 0; c < Dv; c++) o[c] *= inv;
    store_row(j, b, h, i, o);
  }
  free(o);
}

static int decode_path(sdpa_job *j) {
  int64_t bgs = (int64_t)j->B * j->Hkv, M = (int64_t)j->R * j->qL;
  int64_t nc = (j->kL + DECODE_CHUNK - 1) / DECODE_CHUNK; /* bounds the scores per task */
  int64_t want = 2 * (int64_t)cm_num_threads();           /* enough tasks for the pool */
  if (bgs * nc < want) {
    int64_t most = j->kL / 256 > 1 ? j->kL / 256 : 1;
    nc = (want + bgs - 1) / bgs < most ? (want + bgs - 1) / bgs : most;
  }
  j->nchunk = (int)nc;
  j->chunk = (int)((j->kL + nc - 1) / nc);
  int64_t tasks = bgs * nc;
  j->part_m = malloc((size_t)(tasks * M) * 4);
  j->part_l = malloc((size_t)(tasks * M) * 4);
  j->part_o = malloc((size_t)(tasks * M * j->Dv) * 4 + 4);
  if (j->part_m && j->part_l && j->part_o) {
    cm_parallel_for(tasks, 1, decode_tasks, j);
    if (!atomic_load(&j->oom))
      cm_parallel_for(bgs * M, cm_grain((int64_t)nc * j->Dv * 2), decode_combine, j);
  } else {
    atomic_store(&j->oom, 1);
  }
  free(j->part_m);
  free(j->part_l);
  free(j->part_o);
  if (atomic_load(&j->oom))
    return cm_error(CM_ERR_MEMORY, "[scaled_dot_product_attention] Out of memory.");
  return 0;
}

/* ---- many queries: blocks of rows through sgemm ---- */

static void block_softmax(void *ctx, int64_t r0, int64_t r1) {
  sdpa_job *j = ctx;
  for (int64_t r = r0; r < r1; r++) {
    int h, i;
    row_of(j, j->g, j->q0, j->qb, (int)r, &h, &i);
    softmax_row(j, j->S + r * j->kLe, j->kLe, j->b, h, i);
  }
}

static int gemm_path(sdpa_job *j) {
  int D = j->D, Dv = j->Dv, kL = j->kL;
  /* Causal blocks stay small (each stops at its own last key); otherwise
   * a block is as many rows as keep the scores within SCORES_MAX floats,
   * so that sgemm gets large products. */
  int64_t target = BLOCK_ROWS;
  if (!j->causal && (int64_t)SCORES_MAX / kL > target) target = (int64_t)SCORES_MAX / kL;
  int qb_max = target / j->R > 0 ? (int)(target / j->R) : 1;
  if (qb_max > j->qL) qb_max = j->qL;
  int64_t M = (int64_t)j->R * qb_max;
  float *Q = malloc((size_t)(M * D) * 4), *S = malloc((size_t)(M * kL) * 4),
        *O = malloc((size_t)(M * Dv) * 4), *K = malloc((size_t)kL * D * 4),
        *V = malloc((size_t)kL * Dv * 4);
  int rc = 0;
  if (!Q || !S || !O || !K || !V) {
    rc = cm_error(CM_ERR_MEMORY, "[scaled_dot_product_attention] Out of memory.");
    goto done;
  }
  j->S = S;
  for (int b = 0; b < j->B; b++)
    for (int g = 0; g < j->Hkv; g++)
      for (int q0 = 0; q0 < j->qL; q0 += qb_max) {
        int qb = j->qL - q0 < qb_max ? j->qL - q0 : qb_max, rows = j->R * qb, h, i;
        int kLe = kL;
        if (j->causal) { /* keys past the block's last row are masked for all of it */
          int64_t first = (int64_t)q0 + kL - j->qL, last = first + qb - 1;
          if (first >= 0) kLe = (int)(last + 1 < kL ? last + 1 : kL);
        }
        for (int r = 0; r < rows; r++) {
          row_of(j, g, q0, qb, r, &h, &i);
          cm_fast_load(Q + (int64_t)r * D, elem(j->q, b, h, i, 0), j->q->strides[3], D, j->dt);
        }
        int ldk, ldv;
        const float *Kp = kv_rows(j->k, b, g, kLe, D, K, &ldk);
        const float *Vp = kv_rows(j->v, b, g, kLe, Dv, V, &ldv);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, kLe, D, j->scale, Q, D, Kp, ldk,
                    0.0f, S, kLe);
        j->b = b, j->g = g, j->q0 = q0, j->qb = qb, j->kLe = kLe;
        cm_parallel_for(rows, cm_grain((int64_t)kLe * 12), block_softmax, j);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, Dv, kLe, 1.0f, S, kLe, Vp, ldv,
                    0.0f, O, Dv);
        for (int r = 0; r < rows; r++) {
          row_of(j, g, q0, qb, r, &h, &i);
          store_row(j, b, h, i, O + (int64_t)r * Dv);
        }
      }
done:
  free(Q);
  free(S);
  free(O);
  free(K);
  free(V);
  return rc;
}

int cm_cpu_sdpa(cm_array *out, cm_array *const *in, int nin, const cm_params *pp) {
  const cm_sdpa_params *p = (const cm_sdpa_params *)pp;
  cm_array *q = in[0], *k = in[1], *v = in[2];
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  sdpa_job j = {.dt = q->dtype,
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
                .scale = p->scale,
                .causal = p->causal,
                .out = cm_data(out)};
  j.R = j.Hq / j.Hkv;
  j.mask = p->has_mask ? in[3] : NULL;
  j.sinks = p->has_sinks ? in[nin - 1] : NULL;
  j.lowest = j.dt == CM_FLOAT16 ? -65504.0f : -FLT_MAX;
  if (j.dt == CM_BFLOAT16) j.lowest = cm_bf16_to_f32(0xff7f);
  j.exp = cm_unary_simd(CM_UNARY_EXP, CM_FLOAT32);
  if (!j.exp) j.exp = cm_unary_row(CM_UNARY_EXP, CM_FLOAT32);
  memset(&j.exp_params, 0, sizeof j.exp_params);
  j.exp_params.op = CM_UNARY_EXP;
  if (j.kL == 0) { /* no keys: the composition's empty product, zeros */
    memset(j.out, 0, cm_nbytes(out));
    return 0;
  }
  return j.qL <= DECODE_QL ? decode_path(&j) : gemm_path(&j);
}
