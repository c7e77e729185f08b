/* Scaled dot-product attention, softmax(scale * Q K^T + mask) V, fused,
 * blocked as flash attention.
 *
 * The work is cut into tasks of (batch, kv head, block of query rows,
 * range of keys) that run on the pool.  The queries of one key/value head
 * (the R = Hq / Hkv query heads that share it, grouped-query attention)
 * are one block of rows, so every key and value row is read once for all
 * of them.  A task walks its keys a block at a time: the scores of its
 * rows against the block are one sgemm (sgemv for a single row), then
 * mask and online softmax (running max and sum per row; the output so far
 * is rescaled when the max grows), then the output gains P V by a second
 * sgemm.  BLAS runs single-threaded inside the tasks (blas_single.h); the
 * blocks are sized for one core's cache.
 *
 * Under a causal mask a task stops at its last row's last visible key, so
 * the blocks above the diagonal are never computed, and only the keys
 * past each row's limit are cleared.  When there are fewer (batch, head,
 * query block) units than threads (decode: one query against a long
 * cache), the keys are split across tasks as well, each leaving its rows'
 * max, sum and unnormalised output, and a second pass combines them (the
 * split-key form of the online softmax).
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

#include "backend/cpu/blas_single.h"
#include "backend/cpu/fast.h"
#include "backend/cpu/fast_sdpa.h"
#include "core/threadpool.h"
#include "primitives/fast.h"

/* A task's block: this many query rows (all R heads of a group; causal
 * blocks are smaller, as the diagonal block is half wasted) against keys
 * this many at a time, so that its scores, keys and values stay in one
 * core's cache; blocks with fewer rows take more keys at a time. */
#define BLOCK_ROWS 256
#define BLOCK_ROWS_CAUSAL 128
#define BLOCK_KEYS 512
#define SPLIT_MIN_KEYS 256 /* fewest keys a split task gets */
/* blocks of at most this many rows (a decode step's heads of a group) take
 * the vector dot and axpy loops, row by row: sgemm would spend more
 * packing the keys than multiplying */
#define GEMV_ROWS 8
#define TINY_BLOCK 8192      /* rows x keys x head size below which BLAS calls cost more */
#define SMALL_WORK (1 << 20) /* multiply-adds below which one thread does all */

typedef struct sdpa_job {
  cm_dtype dt;
  int B, Hq, Hkv, R, qL, kL, D, Dv;
  const cm_array *q, *k, *v, *mask, *sinks;
  float scale, lowest;
  bool causal;
  char *out;
  atomic_int oom;
  /* tasks: units of (batch, kv head, query block), each split nsplit ways */
  int qb_max, nqb, kb, nsplit, split;
  /* the partial results of split tasks: per row max, sum, output */
  float *part_m, *part_l, *part_o;
} sdpa_job;

const char *cm_sdpa_elem(const cm_array *a, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  const int64_t *s = a->strides;
  return (const char *)cm_data(a) +
         (i0 * s[0] + i1 * s[1] + i2 * s[2] + i3 * s[3]) * (int64_t)cm_dtype_size(a->dtype);
}

static float load1(const char *p, cm_dtype dt) {
  float f;
  cm_fast_load(&f, p, 1, 1, dt);
  return f;
}

/* The array mask on the scores s[0..n) of query (b, h, i) against keys
 * c0 .. c0 + n - 1: masked scores become the lowest value, additive masks
 * are added. */
static void apply_mask(const sdpa_job *j, float *s, int64_t c0, int n, int b, int h, int i) {
  const cm_array *m = j->mask;
  if (!m) return;
  int64_t ms = m->strides[3];
  const char *mp = cm_sdpa_elem(m, b, h, i, c0);
  if (m->dtype == CM_BOOL) {
    for (int c = 0; c < n; c++)
      if (!mp[c * ms]) s[c] = j->lowest;
  } else {
    size_t isz = cm_dtype_size(m->dtype);
    for (int c = 0; c < n; c++) s[c] += load1(mp + c * ms * (int64_t)isz, m->dtype);
  }
}

/* Head h's sink logit (-inf without sinks). */
static float sink_of(const sdpa_job *j, int h) {
  if (!j->sinks) return -INFINITY;
  return load1((const char *)cm_data(j->sinks) +
                   h * j->sinks->strides[0] * (int64_t)cm_dtype_size(j->dt),
               j->dt);
}

/* Row r (of R * rows) of a block: its head and query position. */
static inline void row_of(const sdpa_job *j, int g, int q0, int rows, int r, int *h, int *i) {
  *h = g * j->R + r / rows;
  *i = q0 + r % rows;
}

float cm_sdpa_lowest(cm_dtype dt) {
  if (dt == CM_FLOAT16) return -65504.0f;
  return dt == CM_BFLOAT16 ? cm_bf16_to_f32(0xff7f) : -FLT_MAX;
}

/* Rows [c0, c0 + n) of k or v (d columns) for batch b, kv head g, as
 * float rows: in place when float32 with unit columns (*ld its row
 * stride), else converted into buf (ld = d). */
const float *cm_sdpa_kv_rows(const cm_array *a, int b, int g, int64_t c0, int n, int d, float *buf,
                             int *ld) {
  const int64_t *s = a->strides;
  if (a->dtype == CM_FLOAT32 && (s[3] == 1 || d == 1) && s[2] >= d && s[2] <= INT_MAX) {
    *ld = (int)s[2];
    return (const float *)cm_sdpa_elem(a, b, g, c0, 0);
  }
  if ((s[3] == 1 || d == 1) && s[2] == d) /* the rows lie end to end: one conversion */
    cm_fast_load(buf, cm_sdpa_elem(a, b, g, c0, 0), 1, (int64_t)n * d, a->dtype);
  else
    for (int r = 0; r < n; r++)
      cm_fast_load(buf + (int64_t)r * d, cm_sdpa_elem(a, b, g, c0 + r, 0), s[3], d, a->dtype);
  *ld = d;
  return buf;
}

/* Whether k or v (d columns) is float16 or bfloat16 with unit columns,
 * which the row loops read in place. */
static bool half_rows(const cm_array *a, int d) {
  return (a->dtype == CM_FLOAT16 || a->dtype == CM_BFLOAT16) && (a->strides[3] == 1 || d == 1);
}

static void store_row(const sdpa_job *j, int b, int h, int i, const float *o) {
  size_t isz = cm_dtype_size(j->dt);
  int64_t row = (((int64_t)b * j->Hq + h) * j->qL + i) * j->Dv;
  cm_fast_store(j->out + row * (int64_t)isz, o, j->Dv, j->dt);
}

/* One online-softmax step of a row: s[0..n) (scores) become their
 * exponentials against the new running max; *m and *l are updated and
 * the factor the row's output so far must be scaled by is returned.
 * NaN wins the max, as in the composition.  While every score seen is
 * -inf the row stays empty (its exponentials 0), so a later finite score
 * is not poisoned by exp(-inf - -inf). */
static float online_row(float *s, int n, float *m, float *l) {
  float mx = cm_sdpa_row_max(s, n, *m);
  if (mx == -INFINITY) {
    for (int c = 0; c < n; c++)
      if (s[c] != s[c]) mx = s[c];
    if (mx == -INFINITY) {
      memset(s, 0, (size_t)n * 4);
      return 1.0f;
    }
  }
  /* a NaN score is no max here, but its exponential is NaN and so is the
   * row's sum, as in the composition */
  float alpha = expf(*m - mx);
  *l = *l * alpha + cm_sdpa_row_exp(s, n, mx);
  *m = mx;
  return alpha;
}

/* Task scratch: the block's query rows, scores, output, row state and
 * widened keys and values. */
typedef struct sdpa_scratch {
  float *Q, *S, *O, *m, *l, *alpha, *K, *V;
} sdpa_scratch;

static float *scratch_alloc(const sdpa_job *j, sdpa_scratch *w) {
  int64_t M = (int64_t)j->R * j->qb_max, kb = j->kb;
  int64_t n = M * (j->D + kb + j->Dv + 3) + kb * (j->D + j->Dv);
  float *p = malloc((size_t)n * 4);
  if (!p) return NULL;
  w->Q = p;
  w->S = w->Q + M * j->D;
  w->O = w->S + M * kb;
  w->m = w->O + M * j->Dv;
  w->l = w->m + M;
  w->alpha = w->l + M;
  w->K = w->alpha + M;
  w->V = w->K + kb * j->D;
  return p;
}

/* Task t: unit t / nsplit (batch, kv head, query block), key range
 * t % nsplit. */
static void attend(const sdpa_job *j, sdpa_scratch *w, int64_t t) {
  int D = j->D, Dv = j->Dv, kL = j->kL, kb = j->kb;
  int64_t unit = t / j->nsplit, bg = unit / j->nqb;
  int sp = (int)(t % j->nsplit), b = (int)(bg / j->Hkv), g = (int)(bg % j->Hkv);
  int q0 = (int)(unit % j->nqb) * j->qb_max, h, i;
  int qb = j->qL - q0 < j->qb_max ? j->qL - q0 : j->qb_max, rows = j->R * qb;
  /* causal: keys past the last row's limit are masked for the whole block;
   * when even the first row sees a key, each row's keys are a prefix and
   * the rest is cleared, else the generic masked path runs over all keys */
  int64_t off = (int64_t)kL - j->qL; /* row i sees keys <= i + off */
  bool prefix = j->causal && q0 + off >= 0;
  int64_t kend = kL;
  if (prefix && q0 + qb - 1 + off + 1 < kL) kend = q0 + qb - 1 + off + 1;
  int64_t k0 = (int64_t)sp * j->split, k1 = k0 + j->split < kend ? k0 + j->split : kend;
  bool split = j->nsplit > 1;
  for (int r = 0; r < rows; r++) {
    row_of(j, g, q0, qb, r, &h, &i);
    cm_fast_load(w->Q + (int64_t)r * D, cm_sdpa_elem(j->q, b, h, i, 0), j->q->strides[3], D, j->dt);
    float sink = split ? -INFINITY : sink_of(j, h);
    w->m[r] = sink;
    w->l[r] = sink == -INFINITY ? 0.0f : 1.0f; /* exp(sink - m) with m = sink */
  }
  bool first = true;
  for (int64_t c0 = k0; c0 < k1; c0 += kb) {
    int n = (int)(k1 - c0 < kb ? k1 - c0 : kb), ldk, ldv;
    /* a decode step's few rows take the vector loops too: BLAS's gemv
     * woke OpenBLAS's threads, which then spun against the pool's for
     * the rest of the step (0.7 ms a token on two cores); half keys and
     * values are then widened row by row as they are read */
    bool tiny = rows <= GEMV_ROWS || (int64_t)rows * n * (D > Dv ? D : Dv) <= TINY_BLOCK;
    bool half_k = tiny && half_rows(j->k, D), half_v = tiny && half_rows(j->v, Dv);
    const float *Kp = NULL;
    if (!half_k ||
        !cm_fast_dot_rows_half(w->S, w->Q, rows, D, (const uint16_t *)cm_sdpa_elem(j->k, b, g, c0, 0),
                               j->k->strides[2], n, j->scale, j->k->dtype)) {
      half_v = false;
      Kp = cm_sdpa_kv_rows(j->k, b, g, c0, n, D, w->K, &ldk);
    }
    if (Kp && tiny)
      cm_fast_dot_rows(w->S, w->Q, rows, D, Kp, ldk, n, j->scale);
    else if (Kp)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n, D, j->scale, w->Q, D, Kp, ldk,
                  0.0f, w->S, n);
    for (int r = 0; r < rows; r++) {
      row_of(j, g, q0, qb, r, &h, &i);
      float *s = w->S + (int64_t)r * n;
      int vis = n;
      if (prefix) { /* keys c0 .. i + off are visible */
        int64_t lim = i + off - c0 + 1;
        vis = lim < 0 ? 0 : lim < n ? (int)lim : n;
        memset(s + vis, 0, (size_t)(n - vis) * 4);
      } else if (j->causal) {
        for (int64_t c = i + off - c0 + 1 < 0 ? 0 : i + off - c0 + 1; c < n; c++) s[c] = j->lowest;
      }
      apply_mask(j, s, c0, vis, b, h, i);
      w->alpha[r] = online_row(s, vis, &w->m[r], &w->l[r]);
    }
    if (!first)
      for (int r = 0; r < rows; r++)
        if (w->alpha[r] != 1.0f) {
          cm_sdpa_row_scale(w->O + (int64_t)r * Dv, w->alpha[r], Dv);
        }
    float beta = first ? 0.0f : 1.0f;
    if (tiny && first) memset(w->O, 0, (size_t)rows * Dv * 4);
    if (half_v && cm_fast_axpy_rows_half(w->O, rows, Dv, w->S,
                                         (const uint16_t *)cm_sdpa_elem(j->v, b, g, c0, 0),
                                         j->v->strides[2], n, j->v->dtype)) {
      first = false;
      continue;
    }
    const float *Vp = cm_sdpa_kv_rows(j->v, b, g, c0, n, Dv, w->V, &ldv);
    if (tiny)
      cm_fast_axpy_rows(w->O, rows, Dv, w->S, Vp, ldv, n);
    else
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, Dv, n, 1.0f, w->S, n, Vp, ldv,
                  beta, w->O, Dv);
    first = false;
  }
  if (first) memset(w->O, 0, (size_t)rows * Dv * 4); /* no keys in range */
  if (split) {
    int64_t M = (int64_t)j->R * j->qb_max, base = t * M;
    memcpy(j->part_m + base, w->m, (size_t)rows * 4);
    memcpy(j->part_l + base, w->l, (size_t)rows * 4);
    memcpy(j->part_o + base * Dv, w->O, (size_t)rows * Dv * 4);
    return;
  }
  for (int r = 0; r < rows; r++) {
    float *o = w->O + (int64_t)r * Dv;
    cm_sdpa_row_scale(o, 1.0f / w->l[r], Dv);
    row_of(j, g, q0, qb, r, &h, &i);
    store_row(j, b, h, i, o);
  }
}

static void attend_tasks(void *ctx, int64_t t0, int64_t t1) {
  sdpa_job *j = ctx;
  sdpa_scratch w;
  float *buf = scratch_alloc(j, &w);
  if (!buf) {
    atomic_store(&j->oom, 1);
    return;
  }
  for (int64_t t = t0; t < t1; t++) attend(j, &w, t);
  free(buf);
}

/* Combine the split tasks of rows [r0, r1) (unit * R * qb_max + row). */
static void combine_rows(void *ctx, int64_t r0, int64_t r1) {
  sdpa_job *j = ctx;
  int M = j->R * j->qb_max, Dv = j->Dv, nc = j->nsplit;
  float *o = malloc((size_t)Dv * 4);
  if (!o) {
    atomic_store(&j->oom, 1);
    return;
  }
  for (int64_t row = r0; row < r1; row++) {
    int64_t unit = row / M, bg = unit / j->nqb;
    int r = (int)(row % M), b = (int)(bg / j->Hkv), g = (int)(bg % j->Hkv), h, i;
    int q0 = (int)(unit % j->nqb) * j->qb_max;
    int qb = j->qL - q0 < j->qb_max ? j->qL - q0 : j->qb_max;
    if (r >= j->R * qb) continue;
    row_of(j, g, q0, qb, r, &h, &i);
    int64_t t0 = unit * nc;
    float sink = sink_of(j, h), mx = sink;
    for (int c = 0; c < nc; c++) {
      float m = j->part_m[(t0 + c) * M + r];
      if (m > mx || m != m) mx = m;
    }
    float sum = j->sinks ? expf(sink - mx) : 0.0f;
    memset(o, 0, (size_t)Dv * 4);
    for (int c = 0; c < nc; c++) {
      int64_t t = t0 + c;
      float m = j->part_m[t * M + r];
      if (m == -INFINITY) continue; /* an empty range */
      float wgt = expf(m - mx);
      sum += wgt * j->part_l[t * M + r];
      cm_fast_axpy(o, wgt, j->part_o + (t * M + r) * Dv, Dv);
    }
    float inv = 1.0f / sum;
    for (int c = 0; c < Dv; c++) o[c] *= inv;
    store_row(j, b, h, i, o);
  }
  free(o);
}

static int run_tasks(sdpa_job *j) {
  int nt = cm_num_threads();
  int target = j->causal ? BLOCK_ROWS_CAUSAL : BLOCK_ROWS;
  j->qb_max = target / j->R > 0 ? target / j->R : 1;
  if (j->qb_max > j->qL) j->qb_max = j->qL;
  j->nqb = (j->qL + j->qb_max - 1) / j->qb_max;
  int64_t M = (int64_t)j->R * j->qb_max;
  int64_t kb = (int64_t)BLOCK_KEYS * target / M;
  if (kb < 64) kb = 64;
  if (kb > 4096) kb = 4096;
  if (M <= GEMV_ROWS && kb > 1024) kb = 1024; /* read again per row: from cache */
  j->kb = (int)(kb < j->kL ? kb : j->kL);
  /* too few units for the pool: split the keys too */
  int64_t units = (int64_t)j->B * j->Hkv * j->nqb, nsplit = 1;
  if (units < 2 * (int64_t)nt) {
    int64_t most = j->kL / SPLIT_MIN_KEYS > 1 ? j->kL / SPLIT_MIN_KEYS : 1;
    nsplit = (2 * nt + units - 1) / units;
    if (nsplit > most) nsplit = most;
  }
  j->nsplit = (int)nsplit;
  j->split = (int)((j->kL + nsplit - 1) / nsplit);
  int64_t tasks = units * nsplit;
  if (nsplit > 1) {
    j->part_m = malloc((size_t)(tasks * M) * 4);
    j->part_l = malloc((size_t)(tasks * M) * 4);
    j->part_o = malloc((size_t)(tasks * M * j->Dv) * 4 + 4);
    if (!j->part_m || !j->part_l || !j->part_o) atomic_store(&j->oom, 1);
  }
  if (!atomic_load(&j->oom)) {
    /* small problems run on the caller; else BLAS stays on each task's thread */
    int64_t work = (int64_t)j->B * j->Hq * j->qL * j->kL * (j->D + j->Dv);
    if (tasks > 1 && nt > 1 && work >= SMALL_WORK) {
      cm_blas_single_begin();
      cm_parallel_for(tasks, 1, attend_tasks, j);
      cm_blas_single_end();
    } else {
      attend_tasks(j, 0, tasks);
    }
  }
  if (nsplit > 1 && !atomic_load(&j->oom))
    cm_parallel_for(units * M, cm_grain(nsplit * j->Dv * 2), combine_rows, j);
  free(j->part_m);
  free(j->part_l);
  free(j->part_o);
  if (atomic_load(&j->oom))
    return cm_error(CM_ERR_MEMORY, "[scaled_dot_product_attention] Out of memory.");
  return 0;
}

int cm_cpu_sdpa(cm_array *out, cm_array *const *in, int nin, const cm_params *pp) {
  (void)pp;
  const cm_sdpa_params *p = cm_sdpa_params_of(out);
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
  j.lowest = cm_sdpa_lowest(j.dt);
  if (j.kL == 0) { /* no keys: the composition's empty product, zeros */
    memset(j.out, 0, cm_nbytes(out));
    return 0;
  }
  return run_tasks(&j);
}
