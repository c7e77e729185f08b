/* Quantize, FpQuantize, Dequantize and ConvertFP8 on the CPU.
 *
 * Affine quantization follows MLX's CPU kernel step for step (float32
 * arithmetic, the same order), and the fp modes follow the composition of
 * ops MLX's CPU build runs for them, rounding to the input's dtype where
 * each of those ops does, so packed words and scales are MLX's bit for
 * bit.  Dequantize likewise rounds where MLX's composition does (scale *
 * code in the scales' dtype, then + bias in the promoted dtype).  Groups
 * (quantize) and rows (dequantize) are spread over the thread pool. */
#include "backend/cpu/quantized.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/copy.h"
#include "backend/cpu/cpu_features.h"
#include "core/threadpool.h"

const float cm_fp4_values[16] = {+0.0f, +0.5f, +1.0f, +1.5f, +2.0f, +3.0f, +4.0f, +6.0f,
                                 -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

static float fp8_values[256];
static pthread_once_t fp8_once = PTHREAD_ONCE_INIT;

/* E4M3 read as MLX does: the 7 low bits placed in a float16's exponent
 * and mantissa, times 256. */
static void fp8_init(void) {
  for (int x = 0; x < 256; x++) {
    float v = cm_f16_to_f32((uint16_t)((x & 127) << 7)) * 256.0f;
    if ((x & 127) == 127) v = NAN; /* MLX's float16 route reads 0x7F as NaN */
    fp8_values[x] = (x & 128) ? -v : v;
  }
}

const float *cm_fp8_table(void) {
  pthread_once(&fp8_once, fp8_init);
  return fp8_values;
}

static uint32_t f2bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static float bits2f(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

uint8_t cm_fp8_encode(float f) {
  uint32_t fb = f2bits(f);
  uint32_t sign = fb & 0x80000000u;
  fb ^= sign;
  uint8_t r;
  if (fb >= (543u << 21)) {
    r = 0x7E; /* saturate (NaN and infinities too) */
  } else if (fb < (121u << 23)) {
    /* subnormal range: let the float adder round the value into place */
    const uint32_t denorm = 141u << 23;
    r = (uint8_t)(f2bits(bits2f(fb) + bits2f(denorm)) - denorm);
  } else {
    uint32_t odd = (fb >> 20) & 1u;
    uint32_t h = fb + (((uint32_t)(7 - 127)) << 23) + 0x7FFFFu + odd;
    r = (uint8_t)(h >> 20);
  }
  return (uint8_t)(r | (sign >> 24));
}

float cm_fp_scale(uint8_t s, int group_size) {
  if (group_size == 16) return cm_fp8_table()[s];
  return s == 0 ? ldexpf(1.0f, -127) : ldexpf(1.0f, (int)s - 127);
}

float cm_q_round(float v, cm_dtype t) {
  if (t == CM_FLOAT16) return cm_f16_to_f32(cm_f32_to_f16(v));
  if (t == CM_BFLOAT16) return cm_bf16_to_f32(cm_f32_to_bf16(v));
  return v;
}

void *cm_q_dense(const cm_array *a, cm_dtype t, bool *owned) {
  *owned = false;
  if (a->dtype == t && cm_row_contiguous(a)) return cm_data(a);
  size_t n = (size_t)(a->size > 0 ? a->size : 1);
  void *p = malloc(n * cm_dtype_size(t));
  if (!p) return cm_error(CM_ERR_MEMORY, "[quantize] Out of memory."), NULL;
  int64_t st[CM_MAX_DIMS];
  int64_t acc = 1;
  for (int i = a->ndim - 1; i >= 0; i--) {
    st[i] = acc;
    acc *= a->shape[i];
  }
  if (a->size > 0)
    cm_cpu_copy_strided(p, t, st, cm_data(a), a->dtype, a->strides, a->ndim, a->shape);
  *owned = true;
  return p;
}

/* Store float v as element i of a float-typed buffer. */
static void store_f(void *dst, int64_t i, cm_dtype t, float v) {
  switch (t) {
  case CM_FLOAT16: ((uint16_t *)dst)[i] = cm_f32_to_f16(v); break;
  case CM_BFLOAT16: ((uint16_t *)dst)[i] = cm_f32_to_bf16(v); break;
  case CM_FLOAT64: ((double *)dst)[i] = (double)v; break;
  default: ((float *)dst)[i] = v; break;
  }
}

/* Codes of one group into a little-endian bit stream (bytes). */
static void pack_codes(uint8_t *dst, const uint32_t *codes, int n, int bits) {
  uint64_t acc = 0;
  int have = 0;
  for (int j = 0; j < n; j++) {
    acc |= (uint64_t)codes[j] << have;
    have += bits;
    while (have >= 8) {
      *dst++ = (uint8_t)acc;
      acc >>= 8;
      have -= 8;
    }
  }
}

/* ---- Quantize (affine) ---- */

typedef struct q_job {
  const float *w;
  uint8_t *wq;
  void *scales, *biases;
  cm_dtype t;
  int gs, bits;
  const float *global;
} q_job;

/* One group, MLX's CPU kernel step by step.  Inlined into a baseline and
 * an AVX2 copy: the same operations (no FMA), only rint and the compares
 * become single instructions. */
/* scale and bias of one group, MLX's CPU kernel step by step */
static inline void affine_params(float w_min, float w_max, int bits, float *scale_out,
                                 float *bias_out) {
  float n_bins = (float)((1 << bits) - 1), eps = 1e-7f;
  bool mask = fabsf(w_min) > fabsf(w_max);
  float scale = (w_max - w_min) / n_bins;
  scale = scale < eps ? eps : scale;
  float bias = w_min; /* 1 bit: the two levels are the group's min and max */
  if (bits > 1) {
    /* put the edge of larger magnitude exactly on a level */
    scale = mask ? scale : -scale;
    float edge = mask ? w_min : w_max;
    float q0 = rintf(edge / scale);
    bias = 0;
    if (q0 != 0) {
      scale = edge / q0;
      bias = edge;
    }
  }
  *scale_out = scale;
  *bias_out = bias;
}

/* Pack a group's codes and store its scale and bias. */
static void finish_group(const q_job *j, int64_t g, const uint32_t *codes, float scale,
                         float bias) {
  pack_codes(j->wq + g * j->gs * j->bits / 8, codes, j->gs, j->bits);
  store_f(j->scales, g, j->t, scale);
  store_f(j->biases, g, j->t, bias);
}

static void affine_groups(void *ctx, int64_t begin, int64_t end) {
  const q_job *j = ctx;
  int gs = j->gs, bits = j->bits;
  float n_bins = (float)((1 << bits) - 1);
  uint32_t codes[128];
  for (int64_t g = begin; g < end; g++) {
    const float *w = j->w + g * gs;
    float w_min = INFINITY, w_max = -INFINITY, scale, bias;
    for (int k = 0; k < gs; k++) {
      w_max = w_max < w[k] ? w[k] : w_max; /* std::max's NaN handling */
      w_min = w[k] < w_min ? w[k] : w_min;
    }
    affine_params(w_min, w_max, bits, &scale, &bias);
    for (int k = 0; k < gs; k++) {
      float v = rintf((w[k] - bias) / scale);
      v = v < 0.0f ? 0.0f : v;
      v = v > n_bins ? n_bins : v;
      codes[k] = (uint32_t)v;
    }
    finish_group(j, g, codes, scale, bias);
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define AFFINE_AVX2 1
/* The same arithmetic eight lanes at a time: min/max ignore NaN as the
 * scalar compares do (the sign of a zero extreme cannot change a scale or
 * bias), divps and round-to-nearest-even are the scalar divide and rint. */
__attribute__((target("avx2"))) static void affine_groups_avx2(void *ctx, int64_t begin,
                                                               int64_t end) {
  const q_job *j = ctx;
  int gs = j->gs, bits = j->bits;
  float n_bins = (float)((1 << bits) - 1);
  uint32_t codes[128];
  for (int64_t g = begin; g < end; g++) {
    const float *w = j->w + g * gs;
    __m256 vmax = _mm256_set1_ps(-INFINITY), vmin = _mm256_set1_ps(INFINITY);
    for (int k = 0; k < gs; k += 8) {
      __m256 x = _mm256_loadu_ps(w + k);
      vmax = _mm256_max_ps(x, vmax);
      vmin = _mm256_min_ps(x, vmin);
    }
    float mx[8], mn[8], w_min = INFINITY, w_max = -INFINITY, scale, bias;
    _mm256_storeu_ps(mx, vmax);
    _mm256_storeu_ps(mn, vmin);
    for (int k = 0; k < 8; k++) {
      w_max = w_max < mx[k] ? mx[k] : w_max;
      w_min = mn[k] < w_min ? mn[k] : w_min;
    }
    affine_params(w_min, w_max, bits, &scale, &bias);
    __m256 vb = _mm256_set1_ps(bias), vs = _mm256_set1_ps(scale);
    __m256 zero = _mm256_setzero_ps(), top = _mm256_set1_ps(n_bins);
    for (int k = 0; k < gs; k += 8) {
      __m256 v = _mm256_div_ps(_mm256_sub_ps(_mm256_loadu_ps(w + k), vb), vs);
      v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      v = _mm256_min_ps(_mm256_max_ps(v, zero), top);
      _mm256_storeu_si256((__m256i *)(codes + k), _mm256_cvttps_epi32(v));
    }
    finish_group(j, g, codes, scale, bias);
  }
}
#else
#define AFFINE_AVX2 0
#endif

static int alloc_outputs(cm_array *out, int n) {
  for (int k = 0; k < n; k++)
    if (cm_alloc_output(cm_output(out, k))) return -1;
  return 0;
}

int cm_cpu_quantize(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_quant_params *qp = cm_quant_params_of(out);
  if (alloc_outputs(out, 3)) return -1;
  bool owned;
  float *w = cm_q_dense(in[0], CM_FLOAT32, &owned);
  if (!w) return -1;
  q_job j = {.w = w,
             .wq = cm_data(cm_output(out, 0)),
             .scales = cm_data(cm_output(out, 1)),
             .biases = cm_data(cm_output(out, 2)),
             .t = in[0]->dtype,
             .gs = qp->group_size,
             .bits = qp->bits};
  cm_range_fn fn = affine_groups;
#if AFFINE_AVX2
  if (cm_cpu_simd_enabled(CM_SIMD_UNARY)) fn = affine_groups_avx2; /* CMLX_UNARY_SIMD=0: baseline */
#endif
  cm_parallel_for(in[0]->size / qp->group_size, cm_grain(8 * qp->group_size), fn, &j);
  if (owned) free(w);
  return 0;
}

/* ---- FpQuantize: MLX's composition of ops, dtype by dtype ---- */

/* argmin over the E2M1 values of |v - value|, in dtype u (first minimum) */
static uint32_t nearest_fp4(float v, cm_dtype u) {
  uint32_t best = 0;
  float bd = fabsf(cm_q_round(v - cm_fp4_values[0], u));
  for (uint32_t i = 1; i < 16; i++) {
    float d = fabsf(cm_q_round(v - cm_fp4_values[i], u));
    if (d < bd) bd = d, best = i;
  }
  return best;
}

static void fp_groups(void *ctx, int64_t begin, int64_t end) {
  const q_job *j = ctx;
  int gs = j->gs, bits = j->bits;
  cm_dtype t = j->t;
  float maxval = bits == 4 ? 6.0f : 448.0f;
  uint32_t codes[32];
  uint8_t *scales = j->scales;
  for (int64_t g = begin; g < end; g++) {
    const float *w = j->w + g * gs;
    float amax = fabsf(w[0]);
    for (int k = 1; k < gs; k++) amax = fabsf(w[k]) > amax ? fabsf(w[k]) : amax;
    float sc = cm_q_round(amax / maxval, t);
    float v[32];
    cm_dtype u = t; /* the dtype the codes are chosen in */
    if (gs == 16) {
      float enc = j->global ? 2688.0f / *j->global : 1.0f;
      uint8_t code = cm_fp8_encode(sc * enc);
      float d = cm_fp8_table()[code];
      for (int k = 0; k < gs; k++) v[k] = cm_q_round(w[k] / d, t) * enc;
      scales[g] = code;
      u = CM_FLOAT32;
    } else {
      float e = sc == 0.0f ? 0.0f : (float)cm_f2i32(ceilf(log2f(sc)));
      float p2 = cm_q_round(powf(2.0f, e), t);
      for (int k = 0; k < gs; k++) v[k] = cm_q_round(w[k] / p2, t);
      scales[g] = cm_f2u8(cm_q_round(e + 127.0f, t));
    }
    uint8_t *dst = j->wq + g * gs * bits / 8;
    if (bits == 8) {
      for (int k = 0; k < gs; k++) dst[k] = cm_fp8_encode(v[k]);
    } else {
      for (int k = 0; k < gs; k++) codes[k] = nearest_fp4(v[k], u);
      pack_codes(dst, codes, gs, 4);
    }
  }
}

int cm_cpu_fp_quantize(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)p;
  const cm_quant_params *qp = cm_quant_params_of(out);
  if (alloc_outputs(out, 2)) return -1;
  bool owned, gowned = false;
  float *w = cm_q_dense(in[0], CM_FLOAT32, &owned);
  if (!w) return -1;
  float *gl = NULL;
  if (qp->has_global && nin > 1 && !(gl = cm_q_dense(in[1], CM_FLOAT32, &gowned))) {
    if (owned) free(w);
    return -1;
  }
  q_job j = {.w = w,
             .wq = cm_data(cm_output(out, 0)),
             .scales = cm_data(cm_output(out, 1)),
             .t = in[0]->dtype,
             .gs = qp->group_size,
             .bits = qp->bits,
             .global = gl};
  cm_parallel_for(in[0]->size / qp->group_size, cm_grain(40 * qp->group_size), fp_groups, &j);
  if (owned) free(w);
  if (gowned) free(gl);
  return 0;
}

/* ---- Dequantize ---- */

typedef struct dq_job {
  const uint8_t *w;
  const float *scales, *biases;
  const uint8_t *scodes; /* fp modes: the uint8 scales */
  void *out;
  cm_dtype ot;
  const cm_quant_params *qp;
  int64_t cols, row_bytes, groups;
  float inv_global; /* nvfp4 with a global scale: global / 2688 */
} dq_job;

static void dq_rows(void *ctx, int64_t begin, int64_t end) {
  const dq_job *j = ctx;
  const cm_quant_params *qp = j->qp;
  int gs = qp->group_size, bits = qp->bits;
  cm_dtype t1 = (cm_dtype)qp->t1, t2 = (cm_dtype)qp->t2, ot = j->ot;
  bool affine = qp->mode == CM_QMODE_AFFINE;
  /* float32 throughout: no rounding steps to emulate */
  bool plain = affine && t1 == CM_FLOAT32 && t2 == CM_FLOAT32 && ot == CM_FLOAT32;
  const float *lut = affine ? NULL : bits == 8 ? cm_fp8_table() : cm_fp4_values;
  float v[128];
  for (int64_t r = begin; r < end; r++) {
    const uint8_t *w = j->w + r * j->row_bytes;
    for (int64_t g = 0; g < j->groups; g++) {
      int64_t gi = r * j->groups + g, o = r * j->cols + g * gs;
      cm_q_decode(w + g * gs * bits / 8, gs, bits, lut, v);
      if (plain) {
        float s = j->scales[gi], b = j->biases[gi], *out = (float *)j->out + o;
        for (int k = 0; k < gs; k++) out[k] = v[k] * s + b; /* no FMA: MLX rounds the product */
        continue;
      }
      if (affine) {
        float s = j->scales[gi], b = j->biases[gi];
        for (int k = 0; k < gs; k++)
          store_f(j->out, o + k, ot, cm_q_round(cm_q_round(v[k] * s, t1) + b, t2));
        continue;
      }
      float sc = cm_q_round(cm_fp_scale(j->scodes[gi], gs), ot);
      if (qp->has_global) sc = sc * j->inv_global;
      for (int k = 0; k < gs; k++) store_f(j->out, o + k, ot, cm_q_round(v[k] * sc, ot));
    }
  }
}

int cm_cpu_dequantize(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)p;
  const cm_quant_params *qp = cm_quant_params_of(out);
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  bool affine = qp->mode == CM_QMODE_AFFINE;
  bool ow = false, os = false, ob = false, og = false;
  void *w = cm_q_dense(in[0], CM_UINT32, &ow);
  void *s = w ? cm_q_dense(in[1], affine ? CM_FLOAT32 : CM_UINT8, &os) : NULL;
  void *b = s && affine ? cm_q_dense(in[2], CM_FLOAT32, &ob) : NULL;
  float *gl = s && qp->has_global ? cm_q_dense(in[nin - 1], CM_FLOAT32, &og) : NULL;
  int rc = -1;
  if (s && (b || !affine) && (gl || !qp->has_global)) {
    int64_t cols = out->shape[out->ndim - 1];
    dq_job j = {.w = w,
                .scales = s,
                .biases = b,
                .scodes = s,
                .out = cm_data(out),
                .ot = out->dtype,
                .qp = qp,
                .cols = cols,
                .row_bytes = (int64_t)in[0]->shape[in[0]->ndim - 1] * 4,
                .groups = cols / qp->group_size,
                .inv_global = gl ? *gl / 2688.0f : 1.0f};
    cm_parallel_for(out->size / cols, cm_grain(12 * cols), dq_rows, &j);
    rc = 0;
  }
  if (ow) free(w);
  if (os) free(s);
  if (ob) free(b);
  if (og) free(gl);
  return rc;
}

/* ---- ConvertFP8 ---- */

typedef struct fp8_job {
  const void *src;
  void *dst;
  cm_dtype ot;
} fp8_job;

static void to_fp8_range(void *ctx, int64_t begin, int64_t end) {
  const fp8_job *j = ctx;
  const float *x = j->src;
  uint8_t *o = j->dst;
  for (int64_t i = begin; i < end; i++) o[i] = cm_fp8_encode(x[i]);
}

static void from_fp8_range(void *ctx, int64_t begin, int64_t end) {
  const fp8_job *j = ctx;
  const uint8_t *x = j->src;
  const float *tab = cm_fp8_table();
  for (int64_t i = begin; i < end; i++) store_f(j->dst, i, j->ot, tab[x[i]]);
}

int cm_cpu_convert_fp8(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_quant_params *qp = cm_quant_params_of(out);
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  bool owned;
  void *x = cm_q_dense(in[0], qp->to_fp8 ? CM_FLOAT32 : CM_UINT8, &owned);
  if (!x) return -1;
  fp8_job j = {.src = x, .dst = cm_data(out), .ot = out->dtype};
  cm_parallel_for(out->size, cm_grain(8), qp->to_fp8 ? to_fp8_range : from_fp8_range, &j);
  if (owned) free(x);
  return 0;
}
