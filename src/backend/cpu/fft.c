/* The FFT kernel: an n-dimensional transform as one pass per axis.
 *
 * A forward real transform runs its real-to-complex pass first (on the
 * last axis of the list) and complex passes on the others in the
 * output; an inverse real transform runs the complex passes in a scratch
 * copy and the complex-to-real pass last, into the output.  The first
 * pass reads the input in whatever layout it has (transposed, sliced,
 * broadcast), so nothing is copied first.
 *
 * A pass treats every other axis as a batch of lines and spreads the
 * lines over the thread pool.  A line that is contiguous is transformed
 * where it lies; strided lines are gathered in blocks of neighbouring
 * lines (reading BLOCK adjacent elements per step, so a pass down the
 * columns of a matrix reads whole cache lines) into per-thread scratch,
 * transformed there and scattered back.  Batches whose plan allows it
 * run CM_FFT_LANES lines at a time instead (fft_lanes.h: gathered by
 * element, one vector per butterfly; contiguous rows and side-by-side
 * columns move by vector transposes and shuffles).  A few long lines, or
 * lines too long for lanes, run one at a time spread over the pool
 * (run_long): four-step transforms in lanes, Bluestein's convolution
 * over them for primes, real lines over their complex signal.  As
 * MLX's, the inverse transforms are normalised (each inverse pass divides
 * by its length). */
#include "backend/cpu/fft.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/fft_lanes.h"
#include "backend/cpu/fft_plan.h"
#include "core/allocator.h"
#include "core/threadpool.h"
#include "primitives/fft.h"

#define BLOCK 16
/* Long lines fewer than this many per thread run as four-step
 * transforms (fft_plan.h), each spread over the pool (see run_long). */
#define SPLIT_LINES 2
/* Batches of at least this many lines whose plans run in lanes (powers
 * of two, mixed radix lengths, real lines of twice such a length) run
 * CM_FFT_LANES at a time. */
#define LANES_MIN_LINES 4

typedef struct pass {
  const cm_fft_plan *plan;
  cm_fft_kind kind;
  const char *src;
  char *dst;
  size_t src_esz, dst_esz;     /* bytes per element: 4 (float32) or 8 (complex64) */
  int n_in, n_out;             /* line lengths */
  int64_t s_in, s_out;         /* strides along the axis, in elements */
  bool in_place;               /* src and dst are the same buffer */
  float fct;                   /* 1/n for an inverse pass (MLX's inverses are normalised) */
  const cm_complex64 *twiddle; /* if set, element k of line l is first times twiddle[l k] */
  /* the same factored for lanes (cm_fft_plan_split_lanes_twiddle) */
  const cm_complex64 *tw_group;
  const float *tw_lane_re, *tw_lane_im;
  bool lanes;                  /* lines run CM_FFT_LANES at a time (fft_lanes.h) */
  int64_t lines;               /* how many (exec_pass sets it) */
  int nother;                  /* the other axes: their sizes and strides */
  int32_t oshape[CM_MAX_DIMS];
  int64_t ostr_in[CM_MAX_DIMS], ostr_out[CM_MAX_DIMS];
  atomic_bool failed;
} pass;

/* Per-thread scratch, kept between calls (the lanes buffers reach 4 MiB,
 * which malloc would map and fault in afresh on every call); requests
 * past SCRATCH_KEEP are allocated and freed each time. */
#define SCRATCH_KEEP ((size_t)16 << 20)
static _Thread_local void *kept;
static _Thread_local size_t kept_size;

static void *scratch_get(size_t bytes) {
  if (bytes > SCRATCH_KEEP) return malloc(bytes);
  if (kept_size < bytes) {
    free(kept);
    kept_size = 0;
    if (!(kept = malloc(bytes))) return NULL;
    kept_size = bytes;
  }
  return kept;
}

static void scratch_put(void *p) {
  if (p != kept) free(p);
}

/* Offsets (elements) of line l in the source and the destination. */
static void line_offsets(const pass *p, int64_t l, int64_t *in, int64_t *out) {
  int64_t oi = 0, oo = 0;
  for (int d = p->nother - 1; d >= 0; d--) {
    int64_t i = l % p->oshape[d];
    l /= p->oshape[d];
    oi += i * p->ostr_in[d];
    oo += i * p->ostr_out[d];
  }
  *in = oi;
  *out = oo;
}

/* buf[j * n + k] = src[off[j] + k * stride], for j < nb. */
static void gather(char *buf, const char *src, size_t esz, const int64_t *off, int nb, int n,
                   int64_t stride) {
  if (esz == 8) {
    uint64_t *b = (uint64_t *)buf;
    const uint64_t *s = (const uint64_t *)src;
    for (int k = 0; k < n; k++)
      for (int j = 0; j < nb; j++) b[(size_t)j * n + k] = s[off[j] + k * stride];
  } else {
    uint32_t *b = (uint32_t *)buf;
    const uint32_t *s = (const uint32_t *)src;
    for (int k = 0; k < n; k++)
      for (int j = 0; j < nb; j++) b[(size_t)j * n + k] = s[off[j] + k * stride];
  }
}

static void scatter(char *dst, const char *buf, size_t esz, const int64_t *off, int nb, int n,
                    int64_t stride) {
  if (esz == 8) {
    uint64_t *d = (uint64_t *)dst;
    const uint64_t *b = (const uint64_t *)buf;
    for (int k = 0; k < n; k++)
      for (int j = 0; j < nb; j++) d[off[j] + k * stride] = b[(size_t)j * n + k];
  } else {
    uint32_t *d = (uint32_t *)dst;
    const uint32_t *b = (const uint32_t *)buf;
    for (int k = 0; k < n; k++)
      for (int j = 0; j < nb; j++) d[off[j] + k * stride] = b[(size_t)j * n + k];
  }
}

static void twiddle_lines(const pass *p, cm_complex64 *buf, int64_t l0, int nb) {
  for (int j = 0; j < nb; j++) {
    cm_complex64 *x = buf + (size_t)j * p->n_in;
    const cm_complex64 *t = p->twiddle;
    int64_t step = l0 + j;
    for (int64_t k = 0, m = 0; k < p->n_in; k++, m += step) {
      cm_complex64 a = x[k], w = t[m];
      x[k] = (cm_complex64){a.re * w.re - a.im * w.im, a.re * w.im + a.im * w.re};
    }
  }
}

/* Lanes of the rows 8g..8g+7 of a four-step's second pass times their
 * twiddles w^{lk} = g[k] lane[k][l % 8], across the lanes. */
static void lanes_twiddle(const pass *p, const cm_complex64 *g, size_t h, float *restrict xr,
                          float *restrict xi) {
  enum { LN = CM_FFT_LANES };
  for (size_t k = 0; k < h; k++) {
    const float *lr = p->tw_lane_re + k * LN, *li = p->tw_lane_im + k * LN;
    float gr = g[k].re, gi = g[k].im, *or = xr + k * LN, *oi = xi + k * LN;
    for (int j = 0; j < LN; j++) {
      float wr = gr * lr[j] - gi * li[j], wi = gr * li[j] + gi * lr[j];
      float a = or[j], b = oi[j];
      or[j] = a * wr - b * wi, oi[j] = a * wi + b * wr;
    }
  }
}

/* Complex lines into lanes, twiddled in a four-step's second pass.  The
 * source lines are far apart (a column pass reads one cache line per
 * element from rows thousands of bytes apart, out of the prefetchers'
 * reach), so the rows a few elements ahead are prefetched. */
static void lanes_gather_c2c(const pass *p, const int64_t *off, int64_t l, int nb, size_t h,
                             float *restrict xr, float *restrict xi) {
  enum { LN = CM_FFT_LANES, AHEAD = 8 };
  const cm_complex64 *src = (const cm_complex64 *)(const void *)p->src;
  const cm_complex64 *g = p->tw_group ? p->tw_group + (size_t)(l / LN) * h : NULL;
  int64_t s = p->s_in;
  if (s == 1 && nb == LN) { /* rows: transposed in blocks, then twiddled across the lanes */
    const cm_complex64 *rows[LN];
    for (int j = 0; j < LN; j++) rows[j] = src + off[j];
    cm_fft_lanes_from_rows(rows, h, xr, xi);
    if (g) {
      lanes_twiddle(p, g, h, xr, xi);
      return;
    }
    if (!p->twiddle) return;
    for (size_t k = 0; k < h; k++)
      for (int j = 0; j < LN; j++) {
        cm_complex64 w = p->twiddle[(size_t)(l + j) * k];
        float a = xr[k * LN + j], b = xi[k * LN + j];
        xr[k * LN + j] = a * w.re - b * w.im, xi[k * LN + j] = a * w.im + b * w.re;
      }
    return;
  }
  if (nb == LN && off[LN - 1] - off[0] == LN - 1 && (g || !p->twiddle)) {
    cm_fft_lanes_from_adjacent(src + off[0], s, h, xr, xi);
    if (g) lanes_twiddle(p, g, h, xr, xi);
    return;
  }
  for (size_t k = 0; k < h; k++) {
    if (k + AHEAD < h) {
      __builtin_prefetch(src + off[0] + (int64_t)(k + AHEAD) * s);
      __builtin_prefetch(src + off[nb - 1] + (int64_t)(k + AHEAD) * s);
    }
    float *restrict or = xr + k * LN, *restrict oi = xi + k * LN;
    int j = 0;
    if (g) {
      const float *lr = p->tw_lane_re + k * LN, *li = p->tw_lane_im + k * LN;
      float gr = g[k].re, gi = g[k].im;
      for (; j < nb; j++) {
        cm_complex64 v = src[off[j] + (int64_t)k * s];
        float wr = gr * lr[j] - gi * li[j], wi = gr * li[j] + gi * lr[j];
        or[j] = v.re * wr - v.im * wi, oi[j] = v.re * wi + v.im * wr;
      }
    } else if (p->twiddle) {
      for (; j < nb; j++) {
        cm_complex64 v = src[off[j] + (int64_t)k * s], w = p->twiddle[(size_t)(l + j) * k];
        or[j] = v.re * w.re - v.im * w.im, oi[j] = v.re * w.im + v.im * w.re;
      }
    } else {
      for (; j < nb; j++) {
        cm_complex64 v = src[off[j] + (int64_t)k * s];
        or[j] = v.re, oi[j] = v.im;
      }
    }
    for (; j < LN; j++) or[j] = oi[j] = 0;
  }
}

/* cm_fft_real_join of nb spectra at once into lanes (zero lanes past
 * nb): the spectra are read one bin at a time into vectors of LANES, so
 * the arithmetic runs across the lanes. */
static void lanes_join(const pass *p, const int64_t *off, int nb, size_t h, float *restrict xr,
                       float *restrict xi, float *restrict yr, float *restrict yi) {
  enum { LN = CM_FFT_LANES };
  const cm_complex64 *src = (const cm_complex64 *)(const void *)p->src;
  const cm_complex64 *tw = cm_fft_plan_real_twiddle(p->plan);
  int64_t s = p->s_in;
  if (s == 1 && nb == LN) { /* bins 0..h-1 of the rows into (yr, yi) by transposes */
    const cm_complex64 *rows[LN];
    float hr[LN];
    for (int j = 0; j < LN; j++) rows[j] = src + off[j], hr[j] = src[off[j] + (int64_t)h].re;
    cm_fft_lanes_from_rows(rows, h, yr, yi);
    for (int j = 0; j < LN; j++) xr[j] = yr[j] + hr[j], xi[j] = yr[j] - hr[j];
    for (size_t k = 1; k < h; k++) {
      const float *ar = yr + k * LN, *ai = yi + k * LN;
      const float *br = yr + (h - k) * LN, *bi = yi + (h - k) * LN;
      float tr = tw[k].re, ti = -tw[k].im; /* conj t_k */
      for (int j = 0; j < LN; j++) {
        /* b = conj X_{h-k}: (br, -bi) */
        float er = ar[j] + br[j], ei = ai[j] - bi[j];
        float dr = ar[j] - br[j], di = ai[j] + bi[j];
        float orr = dr * tr - di * ti, oi = dr * ti + di * tr;
        xr[k * LN + j] = er - oi, xi[k * LN + j] = ei + orr;
      }
    }
    return;
  }
  float ar[LN] = {0}, ai[LN] = {0}, br[LN] = {0}, bi[LN] = {0};
  for (int j = 0; j < nb; j++) ar[j] = src[off[j]].re, br[j] = src[off[j] + (int64_t)h * s].re;
  for (int j = 0; j < LN; j++) xr[j] = ar[j] + br[j], xi[j] = ar[j] - br[j];
  for (size_t k = 1; k < h; k++) {
    for (int j = 0; j < nb; j++) {
      cm_complex64 a = src[off[j] + (int64_t)k * s], b = src[off[j] + (int64_t)(h - k) * s];
      ar[j] = a.re, ai[j] = a.im, br[j] = b.re, bi[j] = -b.im;
    }
    float tr = tw[k].re, ti = -tw[k].im; /* conj t_k */
    for (int j = 0; j < LN; j++) {
      float er = ar[j] + br[j], ei = ai[j] + bi[j];
      float dr = ar[j] - br[j], di = ai[j] - bi[j];
      float orr = dr * tr - di * ti, oi = dr * ti + di * tr;
      xr[k * LN + j] = er - oi, xi[k * LN + j] = ei + orr;
    }
  }
}

/* cm_fft_real_split of nb transformed lanes at once, to their lines. */
static void lanes_split(const pass *p, const int64_t *off, int nb, size_t h,
                        const float *restrict xr, const float *restrict xi, float *restrict yr,
                        float *restrict yi) {
  enum { LN = CM_FFT_LANES };
  cm_complex64 *dst = (cm_complex64 *)(void *)p->dst;
  const cm_complex64 *tw = cm_fft_plan_real_twiddle(p->plan);
  int64_t s = p->s_out;
  float f = p->fct;
  for (int j = 0; j < nb; j++) {
    dst[off[j]] = (cm_complex64){(xr[j] + xi[j]) * f, 0};
    dst[off[j] + (int64_t)h * s] = (cm_complex64){(xr[j] - xi[j]) * f, 0};
  }
  if (s == 1 && nb == LN) { /* bins 1..h-1 across the lanes into (yr, yi), then to the rows */
    for (size_t k = 1; k < h; k++) {
      const float *ar = xr + k * LN, *ai = xi + k * LN;
      const float *br = xr + (h - k) * LN, *bi = xi + (h - k) * LN;
      float tr = tw[k].re, ti = tw[k].im, *outr = yr + k * LN, *outi = yi + k * LN;
      for (int j = 0; j < LN; j++) {
        float er = 0.5f * (ar[j] + br[j]), ei = 0.5f * (ai[j] - bi[j]);
        float orr = 0.5f * (ai[j] + bi[j]), oi = -0.5f * (ar[j] - br[j]);
        outr[j] = er + orr * tr - oi * ti, outi[j] = ei + orr * ti + oi * tr;
      }
    }
    cm_complex64 *rows[LN];
    for (int j = 0; j < LN; j++) rows[j] = dst + off[j] + 1;
    cm_fft_lanes_to_rows(rows, h - 1, yr + LN, yi + LN, f);
    return;
  }
  for (size_t k = 1; k < h; k++) {
    const float *ar = xr + k * LN, *ai = xi + k * LN;
    const float *br = xr + (h - k) * LN, *bi = xi + (h - k) * LN;
    float tr = tw[k].re, ti = tw[k].im, outr[LN], outi[LN];
    for (int j = 0; j < LN; j++) {
      /* E = (a + conj b) / 2, O = (a - conj b) / 2i, X = E + t O */
      float er = 0.5f * (ar[j] + br[j]), ei = 0.5f * (ai[j] - bi[j]);
      float orr = 0.5f * (ai[j] + bi[j]), oi = -0.5f * (ar[j] - br[j]);
      outr[j] = (er + orr * tr - oi * ti) * f;
      outi[j] = (ei + orr * ti + oi * tr) * f;
    }
    for (int j = 0; j < nb; j++) dst[off[j] + (int64_t)k * s] = (cm_complex64){outr[j], outi[j]};
  }
}

/* Gather LANES lines (nb of them real, the others zero) by element into
 * (xr, xi): complex lines as they are (twiddled in a four-step), real
 * ones as the pairs x_2j + i x_2j+1, spectra joined for the inverse. */
static void lanes_gather(const pass *p, const int64_t *off, int64_t l, int nb, size_t h, float *xr,
                         float *xi, float *yr, float *yi) {
  enum { LN = CM_FFT_LANES };
  if (p->kind == CM_FFT_C2R) {
    lanes_join(p, off, nb, h, xr, xi, yr, yi);
    return;
  }
  if (p->kind == CM_FFT_C2C) {
    lanes_gather_c2c(p, off, l, nb, h, xr, xi);
    return;
  }
  if (p->s_in == 1 && nb == LN) { /* real rows read as complex pairs */
    const float *src = (const float *)(const void *)p->src;
    const cm_complex64 *rows[LN];
    for (int j = 0; j < LN; j++) rows[j] = (const cm_complex64 *)(const void *)(src + off[j]);
    cm_fft_lanes_from_rows(rows, h, xr, xi);
    return;
  }
  for (size_t k = 0; k < h; k++) {
    int j = 0;
    for (; j < nb; j++) {
      cm_complex64 v;
      if (p->kind == CM_FFT_R2C) {
        const float *src = (const float *)(const void *)p->src;
        v = (cm_complex64){src[off[j] + (int64_t)(2 * k) * p->s_in],
                           src[off[j] + (int64_t)(2 * k + 1) * p->s_in]};
      } else {
        v = ((const cm_complex64 *)(const void *)p->src)[off[j] + (int64_t)k * p->s_in];
      }
      if (p->twiddle) {
        cm_complex64 w = p->twiddle[(size_t)(l + j) * k];
        v = (cm_complex64){v.re * w.re - v.im * w.im, v.re * w.im + v.im * w.re};
      }
      xr[k * LN + j] = v.re, xi[k * LN + j] = v.im;
    }
    for (; j < LN; j++) xr[k * LN + j] = xi[k * LN + j] = 0;
  }
}

/* The transformed lanes to the destination, times fct. */
static void lanes_scatter(const pass *p, const int64_t *off, int nb, size_t h, const float *xr,
                          const float *xi, float *yr, float *yi) {
  enum { LN = CM_FFT_LANES };
  float f = p->fct;
  if (p->kind == CM_FFT_R2C) {
    lanes_split(p, off, nb, h, xr, xi, yr, yi);
  } else if (p->s_out == 1 && nb == LN) { /* rows (real ones as complex pairs) */
    cm_complex64 *rows[LN];
    for (int j = 0; j < LN; j++)
      rows[j] = (cm_complex64 *)(void *)(p->dst + off[j] * (int64_t)p->dst_esz);
    cm_fft_lanes_to_rows(rows, h, xr, xi, f);
  } else if (p->kind == CM_FFT_C2R) {
    float *dst = (float *)(void *)p->dst;
    for (size_t k = 0; k < h; k++)
      for (int j = 0; j < nb; j++) {
        dst[off[j] + (int64_t)(2 * k) * p->s_out] = xr[k * LN + j] * f;
        dst[off[j] + (int64_t)(2 * k + 1) * p->s_out] = xi[k * LN + j] * f;
      }
  } else {
    /* strided like the gather: the rows ahead are prefetched for writing,
     * so more than a store buffer's worth of lines is in flight */
    enum { AHEAD = 16 };
    cm_complex64 *dst = (cm_complex64 *)(void *)p->dst;
    int64_t s = p->s_out;
    if (nb == LN && off[LN - 1] - off[0] == LN - 1) {
      cm_fft_lanes_to_adjacent(dst + off[0], s, h, xr, xi, f);
      return;
    }
    for (size_t k = 0; k < h; k++) {
      if (k + AHEAD < h) {
        __builtin_prefetch(dst + off[0] + (int64_t)(k + AHEAD) * s, 1);
        __builtin_prefetch(dst + off[nb - 1] + (int64_t)(k + AHEAD) * s, 1);
      }
      for (int j = 0; j < nb; j++)
        dst[off[j] + (int64_t)k * s] =
            (cm_complex64){xr[k * LN + j] * f, xi[k * LN + j] * f};
    }
  }
}

/* The lanes form of run_lines: LANES lines at a time through
 * fft_lanes.h (a real line as its half-length complex signal). */
static void run_lanes(pass *p, int64_t begin, int64_t end) {
  enum { LN = CM_FFT_LANES };
  size_t h = p->kind == CM_FFT_C2C   ? (size_t)p->n_in
             : p->kind == CM_FFT_R2C ? (size_t)p->n_in / 2
                                     : (size_t)p->n_out / 2;
  size_t len = cm_fft_plan_lanes_len(p->plan);
  float *x = scratch_get(sizeof(float) * 4 * len * LN);
  if (!x) {
    atomic_store(&p->failed, true);
    return;
  }
  float *xr = x, *xi = x + len * LN, *yr = x + 2 * len * LN, *yi = x + 3 * len * LN;
  int64_t off_in[LN], off_out[LN];
  for (int64_t l = begin; l < end; l += LN) {
    int nb = end - l < LN ? (int)(end - l) : LN;
    for (int j = 0; j < nb; j++) line_offsets(p, l + j, &off_in[j], &off_out[j]);
    lanes_gather(p, off_in, l, nb, h, xr, xi, yr, yi);
    cm_fft_plan_run_lanes(p->plan, xr, xi, yr, yi);
    lanes_scatter(p, off_out, nb, h, xr, xi, yr, yi);
  }
  scratch_put(x);
}

static void run_lines(void *ctx, int64_t begin, int64_t end) {
  pass *p = ctx;
  if (p->lanes) { /* the range counts blocks of LANES lines */
    end *= CM_FFT_LANES;
    run_lanes(p, begin * CM_FFT_LANES, end < p->lines ? end : p->lines);
    return;
  }
  bool gather_in = p->s_in != 1 || p->in_place || p->twiddle, scatter_out = p->s_out != 1;
  int B = gather_in || scatter_out ? BLOCK : 1;
  size_t in_bytes = gather_in ? (size_t)B * p->n_in * p->src_esz : 0;
  size_t out_bytes = scatter_out ? (size_t)B * p->n_out * p->dst_esz : 0;
  in_bytes = (in_bytes + 63) & ~(size_t)63;
  out_bytes = (out_bytes + 63) & ~(size_t)63;
  size_t work = cm_fft_plan_work(p->plan) * sizeof(cm_complex64);
  char *scratch = scratch_get(in_bytes + out_bytes + work + 64);
  if (!scratch) {
    atomic_store(&p->failed, true);
    return;
  }
  char *buf_in = scratch, *buf_out = scratch + in_bytes;
  cm_complex64 *wk = (cm_complex64 *)(scratch + in_bytes + out_bytes);
  int64_t off_in[BLOCK], off_out[BLOCK];
  for (int64_t l = begin; l < end; l += B) {
    int nb = end - l < B ? (int)(end - l) : B;
    for (int j = 0; j < nb; j++) line_offsets(p, l + j, &off_in[j], &off_out[j]);
    if (gather_in) gather(buf_in, p->src, p->src_esz, off_in, nb, p->n_in, p->s_in);
    if (p->twiddle) twiddle_lines(p, (cm_complex64 *)buf_in, l, nb);
    for (int j = 0; j < nb; j++) {
      const char *li = gather_in ? buf_in + (size_t)j * p->n_in * p->src_esz
                                 : p->src + off_in[j] * (int64_t)p->src_esz;
      char *lo = scatter_out ? buf_out + (size_t)j * p->n_out * p->dst_esz
                             : p->dst + off_out[j] * (int64_t)p->dst_esz;
      cm_fft_plan_run(p->plan, li, lo, wk);
      if (p->fct != 1.0f) {
        float *f = (float *)lo;
        for (size_t e = 0, ne = (size_t)p->n_out * (p->dst_esz / sizeof(float)); e < ne; e++)
          f[e] *= p->fct;
      }
    }
    if (scatter_out) scatter(p->dst, buf_out, p->dst_esz, off_out, nb, p->n_out, p->s_out);
  }
  scratch_put(scratch);
}

/* One side of a pass: data, element size, shape and strides. */
typedef struct side {
  const void *data;
  size_t esz;
  const int32_t *shape;
  const int64_t *strides;
} side;

/* Run the lines of p over the pool; -1 (MemoryError) if scratch failed. */
static int exec_pass(pass *p, int64_t lines) {
  int64_t n = p->n_in > p->n_out ? p->n_in : p->n_out, log2n = 1;
  while ((1LL << log2n) < n) log2n++;
  atomic_init(&p->failed, false);
  p->lines = lines;
  if (p->lanes)
    cm_parallel_for((lines + CM_FFT_LANES - 1) / CM_FFT_LANES,
                    cm_grain(5 * CM_FFT_LANES * n * log2n), run_lines, p);
  else cm_parallel_for(lines, cm_grain(5 * n * log2n), run_lines, p);
  return atomic_load(&p->failed) ? cm_error(CM_ERR_MEMORY, "[fft] Out of memory.") : 0;
}

/* One long complex line as a four-step transform (fft_plan.h), each step
 * a pass over the pool: n2 columns of n1 from the line into tmp (n1 x n2,
 * row-major), then n1 rows of n2, twiddled, into the line's output with
 * stride n1. */
static int four_step(const pass *base, int64_t off_in, int64_t off_out, cm_complex64 *tmp) {
  int n1, n2;
  const cm_fft_plan *p1, *p2;
  const cm_complex64 *tw;
  cm_fft_plan_split(base->plan, &n1, &n2, &p1, &p2, &tw);
  pass a = {.plan = p1,
            .src = base->src + off_in * 8,
            .dst = (char *)tmp,
            .src_esz = 8,
            .dst_esz = 8,
            .n_in = n1,
            .n_out = n1,
            .s_in = (int64_t)n2 * base->s_in,
            .s_out = n2,
            .fct = 1.0f,
            .nother = 1};
  a.oshape[0] = n2;
  a.ostr_in[0] = base->s_in;
  a.ostr_out[0] = 1;
  a.lanes = cm_fft_plan_has_lanes(p1);
  if (exec_pass(&a, n2)) return -1;
  pass b = {.plan = p2,
            .src = (const char *)tmp,
            .dst = base->dst + off_out * 8,
            .src_esz = 8,
            .dst_esz = 8,
            .n_in = n2,
            .n_out = n2,
            .s_in = 1,
            .s_out = (int64_t)n1 * base->s_out,
            .fct = base->fct,
            .twiddle = tw,
            .nother = 1};
  b.oshape[0] = n1;
  b.ostr_in[0] = n2;
  b.ostr_out[0] = base->s_out;
  b.lanes = cm_fft_plan_has_lanes(p2);
  if (b.lanes) cm_fft_plan_split_lanes_twiddle(base->plan, &b.tw_group, &b.tw_lane_re, &b.tw_lane_im);
  return exec_pass(&b, n1);
}

/* ---- few long lines ------------------------------------------------------
 *
 * A line too long for one thread is not run by its plan (one thread,
 * kissfft) but as passes over the pool: the four-step transform of a
 * complex plan that splits, Bluestein's convolution over the split plans
 * of its length m, and for real lines the same on the half-length complex
 * signal (even n) or on the line made complex (odd n), with the
 * pointwise steps between them spread over the pool too. */

typedef enum ew_op {
  EW_CHIRP_PAD, /* dst[k] = src[k ss] w[k] for k < n, 0 up to m */
  EW_TIMES,     /* dst[k] *= w[k], k < m */
  EW_CHIRP_OUT, /* dst[k ds] = src[k] w[k] fct, k < n */
  EW_REAL_IN,   /* dst[k] = (src[k ss], 0), real src */
  EW_HERM_IN,   /* dst[k] = the full spectrum of the odd n from the half src[k ss] */
  EW_REAL_OUT,  /* dst[k ds] = re src[k] fct, real dst */
  EW_COPY_OUT,  /* dst[k ds] = src[k] fct */
  EW_SPLIT,     /* cm_fft_real_split over bins [b, e) */
  EW_JOIN,      /* cm_fft_real_join over bins [b, e) */
} ew_op;

typedef struct ew {
  ew_op op;
  const cm_fft_plan *plan; /* the real plan of EW_SPLIT / EW_JOIN */
  const void *src;
  void *dst;
  int64_t ss, ds; /* strides in elements */
  const cm_complex64 *w;
  int64_t n; /* the line's length (EW_HERM_IN) */
  float fct;
} ew;

static inline cm_complex64 cmul(cm_complex64 a, cm_complex64 b) {
  return (cm_complex64){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

static void ew_run(void *ctx, int64_t b, int64_t e) {
  const ew *o = ctx;
  const cm_complex64 *sc = o->src;
  const float *sf = o->src;
  cm_complex64 *dc = o->dst;
  float *df = o->dst;
  switch (o->op) {
  case EW_CHIRP_PAD:
    for (int64_t k = b; k < e; k++)
      dc[k] = k < o->n ? cmul(sc[k * o->ss], o->w[k]) : (cm_complex64){0, 0};
    break;
  case EW_TIMES:
    for (int64_t k = b; k < e; k++) dc[k] = cmul(dc[k], o->w[k]);
    break;
  case EW_CHIRP_OUT:
    for (int64_t k = b; k < e; k++) {
      cm_complex64 v = cmul(sc[k], o->w[k]);
      dc[k * o->ds] = (cm_complex64){v.re * o->fct, v.im * o->fct};
    }
    break;
  case EW_REAL_IN:
    for (int64_t k = b; k < e; k++) dc[k] = (cm_complex64){sf[k * o->ss], 0};
    break;
  case EW_HERM_IN:
    for (int64_t k = b; k < e; k++) {
      if (k == 0) dc[0] = (cm_complex64){sc[0].re, 0};
      else if (k <= o->n / 2) dc[k] = sc[k * o->ss];
      else dc[k] = (cm_complex64){sc[(o->n - k) * o->ss].re, -sc[(o->n - k) * o->ss].im};
    }
    break;
  case EW_REAL_OUT:
    for (int64_t k = b; k < e; k++) df[k * o->ds] = sc[k].re * o->fct;
    break;
  case EW_COPY_OUT:
    for (int64_t k = b; k < e; k++)
      dc[k * o->ds] = (cm_complex64){sc[k].re * o->fct, sc[k].im * o->fct};
    break;
  case EW_SPLIT:
    cm_fft_real_split_range(o->plan, &sc[0].re, &sc[0].im, 2, dc, o->ds, o->fct, (int)b, (int)e);
    break;
  case EW_JOIN:
    cm_fft_real_join_range(o->plan, sc, o->ss, &dc[0].re, &dc[0].im, 2, (int)b, (int)e);
    break;
  }
}

static void ew_pass(ew o, int64_t count) { cm_parallel_for(count, cm_grain(16), ew_run, &o); }

/* Whether complex plan c runs long lines over the pool, and the complex
 * scratch it needs. */
static size_t long_c2c_work(const cm_fft_plan *c) {
  int n1, n2, m;
  const cm_fft_plan *p1, *p2;
  const cm_complex64 *tw, *chirp, *kernel;
  if (cm_fft_plan_split(c, &n1, &n2, &p1, &p2, &tw)) return (size_t)n1 * n2;
  if (cm_fft_plan_bluestein(c, &m, &chirp, &kernel, &p1, &p2)) return 3 * (size_t)m;
  return 0;
}

/* out[k so] = fct * the transform of in[j si] by the complex plan c (of
 * length n), in and out possibly the same; work: long_c2c_work(c). */
static int long_c2c(const cm_fft_plan *c, int64_t n, const cm_complex64 *in, int64_t si,
                    cm_complex64 *out, int64_t so, float fct, cm_complex64 *work) {
  int n1, n2, m;
  const cm_fft_plan *p1, *p2, *fwd, *inv;
  const cm_complex64 *tw, *chirp, *kernel;
  if (cm_fft_plan_split(c, &n1, &n2, &p1, &p2, &tw)) {
    pass base = {.plan = c, .src = (const char *)in, .dst = (char *)out, .s_in = si,
                 .s_out = so, .fct = fct};
    return four_step(&base, 0, 0, work);
  }
  cm_fft_plan_bluestein(c, &m, &chirp, &kernel, &fwd, &inv);
  cm_complex64 *a = work, *t = work + m, *tmp = work + 2 * (size_t)m;
  ew_pass((ew){.op = EW_CHIRP_PAD, .src = in, .ss = si, .dst = a, .w = chirp, .n = n}, m);
  pass f = {.plan = fwd, .src = (const char *)a, .dst = (char *)t, .s_in = 1, .s_out = 1,
            .fct = 1.0f};
  if (four_step(&f, 0, 0, tmp)) return -1;
  ew_pass((ew){.op = EW_TIMES, .dst = t, .w = kernel}, m);
  pass i = {.plan = inv, .src = (const char *)t, .dst = (char *)a, .s_in = 1, .s_out = 1,
            .fct = 1.0f};
  if (four_step(&i, 0, 0, tmp)) return -1;
  ew_pass((ew){.op = EW_CHIRP_OUT, .src = a, .dst = out, .ds = so, .w = chirp, .fct = fct}, n);
  return 0;
}

/* The complex plan a long line of p runs on (NULL: p's lines stay whole),
 * and the complex elements of scratch before that plan's own. */
static const cm_fft_plan *long_plan(const pass *p, size_t *extra) {
  int n = p->kind == CM_FFT_C2R ? p->n_out : p->n_in;
  bool even = n % 2 == 0 && n > 2;
  const cm_fft_plan *c = p->kind == CM_FFT_C2C ? p->plan : cm_fft_plan_sub(p->plan);
  *extra = p->kind == CM_FFT_C2C ? 0 : even ? (size_t)n / 2 : (size_t)n;
  /* an even real line is read (written) as complex pairs in place */
  if (even && p->kind == CM_FFT_R2C && p->s_in != 1) return NULL;
  if (even && p->kind == CM_FFT_C2R && p->s_out != 1) return NULL;
  return n >= 1024 && long_c2c_work(c) ? c : NULL;
}

static int run_long(pass *p, const cm_fft_plan *c, size_t extra, int64_t lines) {
  /* from the array allocator: its big blocks are cached and on huge
   * pages, and a column pass touches a new 4 KiB page per element */
  cm_buffer *buf = cm_buffer_alloc(sizeof(cm_complex64) * (extra + long_c2c_work(c)));
  if (!buf) return -1;
  cm_complex64 *x = buf->ptr, *work = x + extra;
  int n = p->kind == CM_FFT_C2R ? p->n_out : p->n_in;
  bool even = n % 2 == 0 && n > 2;
  int rc = 0;
  for (int64_t l = 0; l < lines && !rc; l++) {
    int64_t oi, oo;
    line_offsets(p, l, &oi, &oo);
    const char *src = p->src + oi * (int64_t)p->src_esz;
    char *dst = p->dst + oo * (int64_t)p->dst_esz;
    if (p->kind == CM_FFT_C2C) {
      rc = long_c2c(c, n, (const cm_complex64 *)(const void *)src, p->s_in,
                    (cm_complex64 *)(void *)dst, p->s_out, p->fct, work);
    } else if (p->kind == CM_FFT_R2C && even) {
      rc = long_c2c(c, n / 2, (const cm_complex64 *)(const void *)src, 1, x, 1, 1.0f, work);
      if (!rc)
        ew_pass((ew){.op = EW_SPLIT, .plan = p->plan, .src = x, .dst = dst, .ds = p->s_out,
                     .fct = 1.0f},
                n / 2);
    } else if (p->kind == CM_FFT_C2R && even) {
      ew_pass((ew){.op = EW_JOIN, .plan = p->plan, .src = src, .ss = p->s_in, .dst = x}, n / 2);
      rc = long_c2c(c, n / 2, x, 1, (cm_complex64 *)(void *)dst, 1, p->fct, work);
    } else if (p->kind == CM_FFT_R2C) {
      ew_pass((ew){.op = EW_REAL_IN, .src = src, .ss = p->s_in, .dst = x}, n);
      rc = long_c2c(c, n, x, 1, x, 1, 1.0f, work);
      if (!rc)
        ew_pass((ew){.op = EW_COPY_OUT, .src = x, .dst = dst, .ds = p->s_out, .fct = 1.0f},
                n / 2 + 1);
    } else {
      ew_pass((ew){.op = EW_HERM_IN, .src = src, .ss = p->s_in, .dst = x, .n = n}, n);
      rc = long_c2c(c, n, x, 1, x, 1, 1.0f, work);
      if (!rc)
        ew_pass((ew){.op = EW_REAL_OUT, .src = x, .dst = dst, .ds = p->s_out, .fct = p->fct}, n);
    }
  }
  cm_buffer_release(buf);
  return rc;
}

static int run_pass(cm_fft_kind kind, bool inverse, int axis, int ndim, side in, side out) {
  int n = kind == CM_FFT_C2R ? out.shape[axis] : in.shape[axis];
  pass *p = calloc(1, sizeof *p);
  cm_fft_plan *plan = p ? cm_fft_plan_get(n, inverse, kind) : NULL;
  if (!plan) {
    free(p);
    return p ? -1 : cm_error(CM_ERR_MEMORY, "[fft] Out of memory.");
  }
  p->plan = plan;
  p->kind = kind;
  p->src = in.data;
  p->dst = (char *)out.data;
  p->src_esz = in.esz;
  p->dst_esz = out.esz;
  p->n_in = in.shape[axis];
  p->n_out = out.shape[axis];
  p->s_in = in.strides[axis];
  p->s_out = out.strides[axis];
  p->in_place = in.data == out.data;
  p->fct = inverse ? (float)(1.0 / n) : 1.0f;
  int64_t lines = 1;
  for (int d = 0; d < ndim; d++) {
    if (d == axis) continue;
    p->oshape[p->nother] = out.shape[d];
    p->ostr_in[p->nother] = in.strides[d];
    p->ostr_out[p->nother] = out.strides[d];
    p->nother++;
    lines *= out.shape[d];
  }
  size_t extra = 0;
  p->lanes = lines >= LANES_MIN_LINES && cm_fft_plan_has_lanes(plan);
  /* few lines, or lines too long for lanes (whose plans would run one
   * line per thread, kissfft's radices or Bluestein over it) */
  bool few = lines < SPLIT_LINES * (int64_t)cm_num_threads();
  const cm_fft_plan *c = few || !p->lanes ? long_plan(p, &extra) : NULL;
  int rc = c ? run_long(p, c, extra, lines) : exec_pass(p, lines);
  cm_fft_plan_release(plan);
  free(p);
  return rc;
}

int cm_cpu_fft(cm_array *out, cm_array *const *in, int nin, const cm_params *params) {
  (void)nin, (void)params;
  const cm_fft_params *fp = cm_fft_params_of(out);
  const cm_array *x = in[0];
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0 || x->size == 0) return 0;
  int k = fp->naxes, nd = out->ndim;
  bool inv = fp->inverse;
  side sx = {cm_data(x), cm_itemsize(x), x->shape, x->strides};
  side so = {cm_data(out), cm_itemsize(out), out->shape, out->strides};
  if (!fp->real) {
    for (int i = 0; i < k; i++)
      if (run_pass(CM_FFT_C2C, inv, fp->axes[i], nd, i ? so : sx, so)) return -1;
    return 0;
  }
  if (!inv) {
    if (run_pass(CM_FFT_R2C, false, fp->axes[k - 1], nd, sx, so)) return -1;
    for (int i = 0; i < k - 1; i++)
      if (run_pass(CM_FFT_C2C, false, fp->axes[i], nd, so, so)) return -1;
    return 0;
  }
  if (k == 1) return run_pass(CM_FFT_C2R, true, fp->axes[0], nd, sx, so);
  /* the complex passes in a row-contiguous scratch of the input's shape */
  int64_t strides[CM_MAX_DIMS];
  cm_row_major_strides(nd, x->shape, strides);
  /* from the array allocator: cached (malloc would map and fault in
   * megabytes afresh on every call) and on huge pages */
  cm_buffer *tmp = cm_buffer_alloc((size_t)x->size * sizeof(cm_complex64));
  if (!tmp) return -1;
  side st = {tmp->ptr, sizeof(cm_complex64), x->shape, strides};
  int rc = 0;
  for (int i = 0; i < k - 1 && !rc; i++)
    rc = run_pass(CM_FFT_C2C, true, fp->axes[i], nd, i ? st : sx, st);
  if (!rc) rc = run_pass(CM_FFT_C2R, true, fp->axes[k - 1], nd, st, so);
  cm_buffer_release(tmp);
  return rc;
}
