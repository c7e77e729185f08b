/* FFT plans over KISS FFT (see fft_plan.h).
 *
 * A complex plan is either direct (one kissfft state; kissfft's states are
 * read-only while kiss_fft runs out of place, so threads share them) or
 * Bluestein's: with w_t = e^{-+ i pi t^2 / n},
 *     X_k = w_k * sum_j (x_j w_j) conj(w_{k-j}),
 * a convolution done as two transforms of a size m >= 2n - 1 with only
 * the factors 2, 3 and 5
 * and a product with the precomputed transform of conj(w) (scaled by
 * 1/m).  t^2 mod 2n is formed in integers and the chirp in double, so
 * the phases stay exact for any n.
 *
 * Real plans of even n = 2h hold the complex plan of h and the twiddles
 * e^{-2 pi i k/n}: the even and odd samples are the real and imaginary
 * parts of one complex signal of length h, split after its transform (and
 * joined before it, for the inverse).  kissfft's own kiss_fftr keeps
 * scratch inside its state, which would make it unsafe to share. */
#include "backend/cpu/fft_plan.h"

#include <kissfft/kiss_fft.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/fft_lanes.h"
#include "core/error.h"

_Static_assert(sizeof(kiss_fft_cpx) == sizeof(cm_complex64), "kissfft must be float32");

struct cm_fft_plan {
  atomic_int refs;
  int n;
  bool inverse;
  cm_fft_kind kind;
  /* C2C: direct, or Bluestein (m, fwd_m, inv_m, chirp, kernel) */
  kiss_fft_cfg direct;
  int m;
  kiss_fft_cfg fwd_m, inv_m;
  cm_complex64 *chirp;  /* n entries: w_k */
  cm_complex64 *kernel; /* m entries: FFT_m(conj(w)) / m */
  /* R2C / C2R: the complex plan of n/2 (even n) or of n (odd n) */
  cm_fft_plan *sub;
  cm_complex64 *twiddle; /* n/2 entries, even n: e^{-2 pi i k/n} */
  /* C2C of a large composite n: the four-step split n = n1 * n2 */
  int n1, n2;
  cm_fft_plan *p1, *p2;
  cm_complex64 *split_tw; /* n entries: e^{-+2 pi i m/n} */
  /* the same twiddles factored for lanes of 8 rows l = 8g + j:
   * w^{l k} = group[g n2 + k] * (lane_re, lane_im)[k LANES + j]; both read
   * in order (split_tw[l k] jumps through n entries, a cache miss each) */
  cm_complex64 *split_group;
  float *split_lane_re, *split_lane_im;
  /* C2C of a power of two in [4, LANES_MAX]: e^{-2 pi i k/n} for fft_lanes */
  float *lanes_re, *lanes_im;
  /* Bluestein in lanes: the plan (bluestein_lanes_size) and kernel of the convolution */
  cm_fft_plan *conv;
  cm_complex64 *conv_kernel;
  /* Bluestein of a long line: the plans of m (forward, inverse) whose
   * four-step splits let the kernel spread the convolution over threads */
  cm_fft_plan *blue_fwd, *blue_inv;
  size_t work;
};

static const double PI = 3.14159265358979323846;

static inline cm_complex64 cmul(cm_complex64 a, cm_complex64 b) {
  return (cm_complex64){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
static inline cm_complex64 cconj(cm_complex64 a) { return (cm_complex64){a.re, -a.im}; }

/* ---- choosing direct or Bluestein ---------------------------------------- */

/* Bluestein's transform size: the smallest 2^a 3^b 5^c >= 2n - 1 (sizes
 * kissfft runs with its fast radices). */
static int bluestein_size(int n) { return kiss_fft_next_fast_size(2 * n - 1); }

/* Rough operation counts: kissfft's radices 2-5 cost a few operations per
 * element and stage, its generic radix p about 4p; Bluestein is two
 * transforms of m plus three pointwise passes.  (Beyond 2^29 points m
 * would not fit an int: such lengths stay direct.) */
static bool use_bluestein(int n) {
  if (n > (1 << 29)) return false;
  double direct = 0;
  int r = n;
  for (int p = 2; r > 1; p++) {
    if ((int64_t)p * p > r) p = r;
    while (r % p == 0) {
      direct += p <= 5 ? 5.0 : 4.0 * p;
      r /= p;
    }
  }
  double m = bluestein_size(n);
  double blue = 2 * m * (2.5 * log2(m)) / n + 12.0 * m / n;
  return direct > 1.5 * blue;
}

/* ---- building ---------------------------------------------------------- */

/* Complex lengths from which a plan also holds the four-step split: from
 * 1024 points where both passes run in lanes (a single line of 4096 as
 * 64 x 64 in lanes over two threads takes a third of kissfft's time on
 * one), from 2^16 otherwise. */
#define SPLIT_MIN_LANES (1 << 10)
#define SPLIT_MIN (1 << 16)
/* The longest power of two run LANES lines at a time (4 x 1 MiB of
 * scratch per thread). */
#define LANES_MAX (1 << 15)

static void plan_free(cm_fft_plan *p) {
  if (!p) return;
  kiss_fft_free(p->direct);
  kiss_fft_free(p->fwd_m);
  kiss_fft_free(p->inv_m);
  free(p->chirp);
  free(p->kernel);
  free(p->twiddle);
  free(p->split_tw);
  free(p->split_group);
  free(p->split_lane_re);
  free(p->split_lane_im);
  free(p->lanes_re);
  free(p->lanes_im);
  free(p->conv_kernel);
  if (p->conv) cm_fft_plan_release(p->conv);
  if (p->blue_fwd) cm_fft_plan_release(p->blue_fwd);
  if (p->blue_inv) cm_fft_plan_release(p->blue_inv);
  if (p->sub) cm_fft_plan_release(p->sub);
  if (p->p1) cm_fft_plan_release(p->p1);
  if (p->p2) cm_fft_plan_release(p->p2);
  free(p);
}

/* The chirp's phase at t: +-pi (t^2 mod 2n) / n. */
static double chirp_angle(const cm_fft_plan *p, int64_t t) {
  int64_t q = (t * t) % (2 * (int64_t)p->n);
  return (p->inverse ? PI : -PI) * (double)q / p->n;
}

/* kernel = FFT_m of conj(w_t) at t and m - t, scaled by 1/m (the inverse
 * transform's normalisation), with the forward kissfft plan of m. */
static int bluestein_kernel(const cm_fft_plan *p, int m, kiss_fft_cfg fwd, cm_complex64 *kernel) {
  cm_complex64 *b = calloc((size_t)m, sizeof(cm_complex64));
  if (!b) return -1;
  for (int64_t t = 0; t < p->n; t++) {
    double ang = chirp_angle(p, t);
    cm_complex64 c = {(float)(cos(ang) / m), (float)(-sin(ang) / m)};
    b[t] = c;
    if (t) b[m - t] = c;
  }
  kiss_fft(fwd, (const kiss_fft_cpx *)b, (kiss_fft_cpx *)kernel);
  free(b);
  return 0;
}

/* Only the radices with their own lanes stages (fft_mixed_impl.h): 7
 * runs the generic O(R^2) butterfly, which cost a fifth of a batch of
 * primes' time for a 1% shorter length. */
static bool smooth5(int m) {
  for (int f = 2; f <= 5; f++)
    while (m % f == 0) m /= f;
  return m == 1;
}

/* The convolution length in lanes: the smallest 2^a 3^b 5^c >= 2n - 1
 * unless a power of two is about as short (radix 4 is the fastest stage).
 * The smooth length is up to 1.6x shorter, which counts twice: eight lanes
 * of 32768 points are 4 MiB of scratch, past a core's L2. */
static int bluestein_lanes_size(int n) {
  int pow2 = 1, smooth = 2 * n - 1;
  while (pow2 < 2 * n - 1) pow2 <<= 1;
  while (!smooth5(smooth)) smooth++;
  return smooth < 0.85 * pow2 ? smooth : pow2;
}

/* Batched lines convolve in lanes (fft_lanes.h) with bluestein_lanes_size's m,
 * when such an m is at most LANES_MAX. */
static int build_bluestein_lanes(cm_fft_plan *p) {
  int m = bluestein_lanes_size(p->n);
  if (m > LANES_MAX) return 0;
  if (!(p->conv = cm_fft_plan_get(m, false, CM_FFT_C2C))) return -1;
  if (!p->conv->direct || !p->conv->lanes_re) { /* not a plan lanes can run */
    cm_fft_plan_release(p->conv);
    p->conv = NULL;
    return 0;
  }
  if (!(p->conv_kernel = malloc(sizeof(cm_complex64) * (size_t)m))) return -1;
  return bluestein_kernel(p, m, p->conv->direct, p->conv_kernel);
}

static int build_bluestein(cm_fft_plan *p) {
  int n = p->n;
  int m = p->m = bluestein_size(n);
  p->fwd_m = kiss_fft_alloc(m, 0, NULL, NULL);
  p->inv_m = kiss_fft_alloc(m, 1, NULL, NULL);
  p->chirp = malloc(sizeof(cm_complex64) * (size_t)n);
  p->kernel = malloc(sizeof(cm_complex64) * (size_t)m);
  if (!p->fwd_m || !p->inv_m || !p->chirp || !p->kernel) return -1;
  for (int64_t t = 0; t < n; t++) {
    double ang = chirp_angle(p, t);
    p->chirp[t] = (cm_complex64){(float)cos(ang), (float)sin(ang)};
  }
  if (bluestein_kernel(p, m, p->fwd_m, p->kernel)) return -1;
  p->work = 2 * (size_t)m;
  if (m >= SPLIT_MIN_LANES) {
    if (!(p->blue_fwd = cm_fft_plan_get(m, false, CM_FFT_C2C))) return -1;
    if (!(p->blue_inv = cm_fft_plan_get(m, true, CM_FFT_C2C))) return -1;
    if (!p->blue_fwd->split_tw || !p->blue_inv->split_tw) {
      cm_fft_plan_release(p->blue_fwd), cm_fft_plan_release(p->blue_inv);
      p->blue_fwd = p->blue_inv = NULL;
    }
  }
  return build_bluestein_lanes(p);
}

/* The divisor of n nearest sqrt(n) from below, if it is at least least. */
static int split_factor(int n, int least) {
  int r = (int)sqrt((double)n);
  for (int d = r; d >= least; d--)
    if (n % d == 0) return d;
  return 0;
}

/* For the kernel's threaded four-step transform (cm_fft_plan_split). */
static int build_split(cm_fft_plan *p, int least) {
  int n = p->n, n1 = split_factor(n, least);
  if (!n1) return 0;
  p->n1 = n1;
  p->n2 = n / n1;
  p->p1 = cm_fft_plan_get(p->n1, p->inverse, CM_FFT_C2C);
  p->p2 = cm_fft_plan_get(p->n2, p->inverse, CM_FFT_C2C);
  p->split_tw = malloc(sizeof(cm_complex64) * (size_t)n);
  if (!p->p1 || !p->p2 || !p->split_tw) return -1;
  double sign = p->inverse ? 2 * PI : -2 * PI;
  for (int m = 0; m < n; m++) {
    double ang = sign * m / n;
    p->split_tw[m] = (cm_complex64){(float)cos(ang), (float)sin(ang)};
  }
  int n2 = p->n2, groups = (n1 + CM_FFT_LANES - 1) / CM_FFT_LANES;
  p->split_group = malloc(sizeof(cm_complex64) * (size_t)groups * n2);
  p->split_lane_re = malloc(sizeof(float) * CM_FFT_LANES * (size_t)n2);
  p->split_lane_im = malloc(sizeof(float) * CM_FFT_LANES * (size_t)n2);
  if (!p->split_group || !p->split_lane_re || !p->split_lane_im) return -1;
  /* exponents reduced mod n in integers, so the phases stay exact */
  for (int64_t g = 0; g < groups; g++)
    for (int64_t k = 0; k < n2; k++)
      p->split_group[g * n2 + k] = p->split_tw[(g * CM_FFT_LANES * k) % n];
  for (int64_t k = 0; k < n2; k++)
    for (int64_t j = 0; j < CM_FFT_LANES; j++) {
      cm_complex64 w = p->split_tw[(j * k) % n];
      p->split_lane_re[k * CM_FFT_LANES + j] = w.re;
      p->split_lane_im[k * CM_FFT_LANES + j] = w.im;
    }
  return 0;
}

static int build_lanes(cm_fft_plan *p) {
  int n = p->n;
  p->lanes_re = malloc(sizeof(float) * (size_t)n);
  p->lanes_im = malloc(sizeof(float) * (size_t)n);
  if (!p->lanes_re || !p->lanes_im) return -1;
  for (int k = 0; k < n; k++) {
    double ang = -2 * PI * k / n;
    p->lanes_re[k] = (float)cos(ang);
    p->lanes_im[k] = (float)sin(ang);
  }
  return 0;
}

static int build_c2c(cm_fft_plan *p) {
  int n = p->n;
  if (n > 1 && use_bluestein(n)) return build_bluestein(p);
  if (n > 1 && !(p->direct = kiss_fft_alloc(n, p->inverse, NULL, NULL))) return -1;
  bool lanes = (n & (n - 1)) == 0 ? n >= 4 : cm_fft_lanes_supported(n);
  if (lanes && n <= LANES_MAX && build_lanes(p)) return -1;
  bool split = n >= (lanes ? SPLIT_MIN_LANES : SPLIT_MIN);
  return split ? build_split(p, lanes ? 16 : 64) : 0;
}

static int build_real(cm_fft_plan *p) {
  int n = p->n;
  bool even = n % 2 == 0 && n > 2;
  if (!(p->sub = cm_fft_plan_get(even ? n / 2 : n, p->inverse, CM_FFT_C2C))) return -1;
  if (!even) {
    /* the signal and its transform, both n complex */
    p->work = 2 * (size_t)n + cm_fft_plan_work(p->sub);
    return 0;
  }
  int h = n / 2;
  if (!(p->twiddle = malloc(sizeof(cm_complex64) * (size_t)h))) return -1;
  for (int k = 0; k < h; k++) {
    double ang = -2 * PI * k / n;
    p->twiddle[k] = (cm_complex64){(float)cos(ang), (float)sin(ang)};
  }
  p->work = 2 * (size_t)h + cm_fft_plan_work(p->sub);
  return 0;
}

static cm_fft_plan *plan_build(int n, bool inverse, cm_fft_kind kind) {
  cm_fft_plan *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  atomic_init(&p->refs, 1);
  p->n = n;
  p->inverse = inverse;
  p->kind = kind;
  if ((kind == CM_FFT_C2C ? build_c2c(p) : build_real(p)) == 0) return p;
  plan_free(p);
  return NULL;
}

/* ---- the cache ----------------------------------------------------------- */

/* A transform holds a tree of plans (a Bluestein plan of a prime: the two
 * split plans of m, their four sub-plans and theirs): room for a few
 * such trees, so that one call does not evict the plan it started from. */
#define CACHE_SIZE 64

static struct {
  cm_fft_plan *plan;
  uint64_t used;
} cache[CACHE_SIZE];
static uint64_t clock_tick;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

void cm_fft_plan_release(cm_fft_plan *p) {
  if (p && atomic_fetch_sub(&p->refs, 1) == 1) plan_free(p);
}

static cm_fft_plan *cache_find(int n, bool inverse, cm_fft_kind kind) {
  for (int i = 0; i < CACHE_SIZE; i++) {
    cm_fft_plan *p = cache[i].plan;
    if (p && p->n == n && p->inverse == inverse && p->kind == kind) {
      cache[i].used = ++clock_tick;
      atomic_fetch_add(&p->refs, 1);
      return p;
    }
  }
  return NULL;
}

/* Keep p (one more reference) in the least recently used slot. */
static void cache_put(cm_fft_plan *p) {
  int victim = 0;
  for (int i = 1; i < CACHE_SIZE; i++)
    if (cache[i].used < cache[victim].used) victim = i;
  cm_fft_plan *old = cache[victim].plan;
  atomic_fetch_add(&p->refs, 1);
  cache[victim].plan = p;
  cache[victim].used = ++clock_tick;
  if (old) cm_fft_plan_release(old);
}

cm_fft_plan *cm_fft_plan_get(int n, bool inverse, cm_fft_kind kind) {
  pthread_mutex_lock(&cache_lock);
  cm_fft_plan *p = cache_find(n, inverse, kind);
  pthread_mutex_unlock(&cache_lock);
  if (p) return p;
  /* Built outside the lock (a real plan gets its complex plan from the
   * cache); two threads may both build one, and both are correct. */
  if (!(p = plan_build(n, inverse, kind))) {
    cm_error(CM_ERR_MEMORY, "[fft] Could not allocate a plan of length %d.", n);
    return NULL;
  }
  pthread_mutex_lock(&cache_lock);
  cache_put(p);
  pthread_mutex_unlock(&cache_lock);
  return p;
}

size_t cm_fft_plan_work(const cm_fft_plan *p) { return p->work; }

bool cm_fft_plan_has_lanes(const cm_fft_plan *p) {
  if (p->kind != CM_FFT_C2C) return p->twiddle && cm_fft_plan_has_lanes(p->sub);
  return p->lanes_re || p->conv;
}

size_t cm_fft_plan_lanes_len(const cm_fft_plan *p) {
  if (p->kind != CM_FFT_C2C) p = p->sub;
  return p->conv ? (size_t)p->conv->n : (size_t)p->n;
}

/* (xr, xi) *= w_k per element, k < n, on every lane. */
static void lanes_times(int n, const cm_complex64 *restrict w, float *restrict xr,
                        float *restrict xi) {
  /* w hoisted and the pointers restrict, so the lanes loop vectorises
   * (it was scalar: a store to xr could have changed w) */
  for (size_t k = 0; k < (size_t)n; k++) {
    float wr = w[k].re, wi = w[k].im;
    float *restrict r = xr + k * CM_FFT_LANES, *restrict i = xi + k * CM_FFT_LANES;
    for (int j = 0; j < CM_FFT_LANES; j++) {
      float a = r[j], b = i[j];
      r[j] = a * wr - b * wi;
      i[j] = a * wi + b * wr;
    }
  }
}

void cm_fft_plan_run_lanes(const cm_fft_plan *p, float *xr, float *xi, float *yr, float *yi) {
  if (p->kind != CM_FFT_C2C) p = p->sub;
  if (!p->conv) {
    cm_fft_lanes(p->n, p->lanes_re, p->lanes_im, xr, xi, yr, yi, p->inverse);
    return;
  }
  /* Bluestein (see the top of the file) with the lanes' m */
  const cm_fft_plan *c = p->conv;
  size_t n = (size_t)p->n, m = (size_t)c->n, L = CM_FFT_LANES;
  lanes_times(p->n, p->chirp, xr, xi);
  memset(xr + n * L, 0, sizeof(float) * (m - n) * L);
  memset(xi + n * L, 0, sizeof(float) * (m - n) * L);
  cm_fft_lanes(c->n, c->lanes_re, c->lanes_im, xr, xi, yr, yi, false);
  lanes_times(c->n, p->conv_kernel, xr, xi);
  cm_fft_lanes(c->n, c->lanes_re, c->lanes_im, xr, xi, yr, yi, true);
  lanes_times(p->n, p->chirp, xr, xi);
}

bool cm_fft_plan_split(const cm_fft_plan *p, int *n1, int *n2, const cm_fft_plan **p1,
                       const cm_fft_plan **p2, const cm_complex64 **twiddle) {
  if (!p->split_tw) return false;
  *n1 = p->n1;
  *n2 = p->n2;
  *p1 = p->p1;
  *p2 = p->p2;
  *twiddle = p->split_tw;
  return true;
}

bool cm_fft_plan_bluestein(const cm_fft_plan *p, int *m, const cm_complex64 **chirp,
                           const cm_complex64 **kernel, const cm_fft_plan **fwd,
                           const cm_fft_plan **inv) {
  if (!p->blue_fwd) return false;
  *m = p->m;
  *chirp = p->chirp;
  *kernel = p->kernel;
  *fwd = p->blue_fwd;
  *inv = p->blue_inv;
  return true;
}

const cm_fft_plan *cm_fft_plan_sub(const cm_fft_plan *p) { return p->sub; }

const cm_complex64 *cm_fft_plan_real_twiddle(const cm_fft_plan *p) { return p->twiddle; }

void cm_fft_plan_split_lanes_twiddle(const cm_fft_plan *p, const cm_complex64 **group,
                                     const float **lane_re, const float **lane_im) {
  *group = p->split_group;
  *lane_re = p->split_lane_re;
  *lane_im = p->split_lane_im;
}

/* ---- running ------------------------------------------------------------ */

static void run_bluestein(const cm_fft_plan *p, const cm_complex64 *in, cm_complex64 *out,
                          cm_complex64 *work) {
  int n = p->n, m = p->m;
  cm_complex64 *a = work, *A = work + m;
  for (int j = 0; j < n; j++) a[j] = cmul(in[j], p->chirp[j]);
  memset(a + n, 0, sizeof(cm_complex64) * (size_t)(m - n));
  kiss_fft(p->fwd_m, (const kiss_fft_cpx *)a, (kiss_fft_cpx *)A);
  for (int k = 0; k < m; k++) A[k] = cmul(A[k], p->kernel[k]);
  kiss_fft(p->inv_m, (const kiss_fft_cpx *)A, (kiss_fft_cpx *)a);
  for (int k = 0; k < n; k++) out[k] = cmul(a[k], p->chirp[k]);
}

static void run_c2c(const cm_fft_plan *p, const cm_complex64 *in, cm_complex64 *out,
                    cm_complex64 *work) {
  if (p->direct) kiss_fft(p->direct, (const kiss_fft_cpx *)in, (kiss_fft_cpx *)out);
  else if (p->chirp) run_bluestein(p, in, out, work);
  else out[0] = in[0]; /* n == 1 */
}

/* Even n = 2h: the n reals as h complex pairs z_j = x_2j + i x_2j+1; with
 * Z its transform, E_k = (Z_k + conj Z_h-k) / 2 and O_k = (Z_k - conj
 * Z_h-k) / 2i are the transforms of the even and odd samples, and
 * X_k = E_k + t_k O_k.  Z_k is (zr[k zs], zi[k zs]); X_k goes to
 * out[k os], times fct. */
void cm_fft_real_split(const cm_fft_plan *p, const float *zr, const float *zi, ptrdiff_t zs,
                       cm_complex64 *out, ptrdiff_t os, float fct) {
  cm_fft_real_split_range(p, zr, zi, zs, out, os, fct, 0, p->n / 2);
}

void cm_fft_real_split_range(const cm_fft_plan *p, const float *zr, const float *zi,
                             ptrdiff_t zs, cm_complex64 *out, ptrdiff_t os, float fct, int k0,
                             int k1) {
  int h = p->n / 2;
  if (k0 == 0) {
    out[0] = (cm_complex64){(zr[0] + zi[0]) * fct, 0};
    out[h * os] = (cm_complex64){(zr[0] - zi[0]) * fct, 0};
    k0 = 1;
  }
  for (int k = k0; k < k1; k++) {
    cm_complex64 a = {zr[k * zs], zi[k * zs]}, b = {zr[(h - k) * zs], -zi[(h - k) * zs]};
    cm_complex64 e = {0.5f * (a.re + b.re), 0.5f * (a.im + b.im)};
    /* (a - b) / 2i */
    cm_complex64 o = {0.5f * (a.im - b.im), -0.5f * (a.re - b.re)};
    cm_complex64 to = cmul(p->twiddle[k], o);
    out[k * os] = (cm_complex64){(e.re + to.re) * fct, (e.im + to.im) * fct};
  }
}

/* The inverse: E_k = X_k + conj X_h-k, O_k = (X_k - conj X_h-k) conj t_k,
 * Z_k = E_k + i O_k (into zr, zi with stride zs), whose inverse transform
 * holds n x as pairs. */
void cm_fft_real_join(const cm_fft_plan *p, const cm_complex64 *in, ptrdiff_t is, float *zr,
                      float *zi, ptrdiff_t zs) {
  cm_fft_real_join_range(p, in, is, zr, zi, zs, 0, p->n / 2);
}

void cm_fft_real_join_range(const cm_fft_plan *p, const cm_complex64 *in, ptrdiff_t is,
                            float *zr, float *zi, ptrdiff_t zs, int k0, int k1) {
  int h = p->n / 2;
  if (k0 == 0) {
    float a0 = in[0].re, ah = in[h * is].re;
    zr[0] = a0 + ah, zi[0] = a0 - ah;
    k0 = 1;
  }
  for (int k = k0; k < k1; k++) {
    cm_complex64 a = in[k * is], b = cconj(in[(h - k) * is]);
    cm_complex64 e = {a.re + b.re, a.im + b.im};
    cm_complex64 o = cmul((cm_complex64){a.re - b.re, a.im - b.im}, cconj(p->twiddle[k]));
    zr[k * zs] = e.re - o.im, zi[k * zs] = e.im + o.re;
  }
}

static void run_r2c_even(const cm_fft_plan *p, const float *in, cm_complex64 *out,
                         cm_complex64 *work) {
  int h = p->n / 2;
  cm_complex64 *Z = work;
  run_c2c(p->sub, (const cm_complex64 *)in, Z, work + 2 * h);
  cm_fft_real_split(p, &Z[0].re, &Z[0].im, 2, out, 1, 1.0f);
}

static void run_c2r_even(const cm_fft_plan *p, const cm_complex64 *in, float *out,
                         cm_complex64 *work) {
  int h = p->n / 2;
  cm_complex64 *Z = work;
  cm_fft_real_join(p, in, 1, &Z[0].re, &Z[0].im, 2);
  run_c2c(p->sub, Z, (cm_complex64 *)out, work + 2 * h);
}

static void run_r2c_odd(const cm_fft_plan *p, const float *in, cm_complex64 *out,
                        cm_complex64 *work) {
  int n = p->n;
  cm_complex64 *x = work, *X = work + n;
  for (int j = 0; j < n; j++) x[j] = (cm_complex64){in[j], 0};
  run_c2c(p->sub, x, X, work + 2 * n);
  memcpy(out, X, sizeof(cm_complex64) * (size_t)(n / 2 + 1));
}

static void run_c2r_odd(const cm_fft_plan *p, const cm_complex64 *in, float *out,
                        cm_complex64 *work) {
  int n = p->n, half = n / 2 + 1;
  cm_complex64 *X = work, *x = work + n;
  X[0] = (cm_complex64){in[0].re, 0};
  for (int k = 1; k < half; k++) X[k] = in[k];
  for (int k = half; k < n; k++) X[k] = cconj(in[n - k]);
  if (n == 2) X[1].im = 0; /* the Nyquist bin of n = 2 (handled here too) */
  run_c2c(p->sub, X, x, work + 2 * n);
  for (int j = 0; j < n; j++) out[j] = x[j].re;
}

void cm_fft_plan_run(const cm_fft_plan *p, const void *in, void *out, cm_complex64 *work) {
  bool even = p->n % 2 == 0 && p->n > 2;
  switch (p->kind) {
  case CM_FFT_C2C: run_c2c(p, in, out, work); break;
  case CM_FFT_R2C:
    if (even) run_r2c_even(p, in, out, work);
    else run_r2c_odd(p, in, out, work);
    break;
  case CM_FFT_C2R:
    if (even) run_c2r_even(p, in, out, work);
    else run_c2r_odd(p, in, out, work);
    break;
  }
}
