/* Batched power-of-two FFTs (see fft_lanes.h): Stockham's autosort
 * algorithm, radix 4 with one radix-2 stage when log2 n is odd.  Stage
 * by stage, with ncur points left per sub-transform and s = n / ncur
 * sub-transforms, element q + s (p + j m) (m = ncur / 4) of the input
 * goes into the butterfly that writes q + s (4p + r), r < 4, twiddled
 * by w_ncur^{p r}; the LANES lines of one element are adjacent, so the
 * loop over (q, lane) is one contiguous run of s * LANES floats.  The
 * inverse is the forward transform with real and imaginary parts
 * exchanged on the way in and out (swap(FFT(swap(x))) = IFFT(x)). */
#include "backend/cpu/fft_lanes.h"

#include <stddef.h>
#include <string.h>

#include "core/cpu.h"

#define L CM_FFT_LANES

/* The body, compiled once portably and once for AVX2 + FMA. */
#define LANES_BODY                                                                           \
  {                                                                                          \
    int s = 1;                                                                               \
    bool swapped = false;                                                                    \
    for (int ncur = n; ncur >= 4; ncur /= 4, s *= 4) {                                       \
      int m = ncur / 4, stride = n / ncur;                                                   \
      size_t span = (size_t)s * L;                                                           \
      for (int p = 0; p < m; p++) {                                                          \
        float w1r = twr[p * stride], w1i = twi[p * stride];                                  \
        float w2r = twr[2 * p * stride], w2i = twi[2 * p * stride];                          \
        float w3r = twr[3 * p * stride], w3i = twi[3 * p * stride];                          \
        const float *ar = xr + p * span, *ai = xi + p * span;                                \
        const float *br = ar + m * span, *bi = ai + m * span;                                \
        const float *cr = br + m * span, *ci = bi + m * span;                                \
        const float *dr = cr + m * span, *di = ci + m * span;                                \
        float *y0r = yr + 4 * p * span, *y0i = yi + 4 * p * span;                            \
        float *y1r = y0r + span, *y1i = y0i + span, *y2r = y1r + span, *y2i = y1i + span;   \
        float *y3r = y2r + span, *y3i = y2i + span;                                          \
        for (size_t t = 0; t < span; t++) {                                                  \
          float apcr = ar[t] + cr[t], apci = ai[t] + ci[t];                                  \
          float amcr = ar[t] - cr[t], amci = ai[t] - ci[t];                                  \
          float bpdr = br[t] + dr[t], bpdi = bi[t] + di[t];                                  \
          /* i (b - d) */                                                                    \
          float jr = di[t] - bi[t], ji = br[t] - dr[t];                                      \
          y0r[t] = apcr + bpdr, y0i[t] = apci + bpdi;                                        \
          float u1r = amcr - jr, u1i = amci - ji;                                            \
          float u2r = apcr - bpdr, u2i = apci - bpdi;                                        \
          float u3r = amcr + jr, u3i = amci + ji;                                            \
          y1r[t] = u1r * w1r - u1i * w1i, y1i[t] = u1r * w1i + u1i * w1r;                    \
          y2r[t] = u2r * w2r - u2i * w2i, y2i[t] = u2r * w2i + u2i * w2r;                    \
          y3r[t] = u3r * w3r - u3i * w3i, y3i[t] = u3r * w3i + u3i * w3r;                    \
        }                                                                                    \
      }                                                                                      \
      float *t0 = xr, *t1 = xi;                                                              \
      xr = yr, xi = yi, yr = t0, yi = t1;                                                    \
      swapped = !swapped;                                                                    \
    }                                                                                        \
    if (s < n) { /* one radix-2 stage: ncur = 2, no twiddles */                              \
      size_t span = (size_t)s * L;                                                           \
      for (size_t t = 0; t < span; t++) {                                                    \
        float ar = xr[t], ai = xi[t], br = xr[span + t], bi = xi[span + t];                  \
        yr[t] = ar + br, yi[t] = ai + bi;                                                    \
        yr[span + t] = ar - br, yi[span + t] = ai - bi;                                      \
      }                                                                                      \
      float *t0 = xr, *t1 = xi;                                                              \
      xr = yr, xi = yi, yr = t0, yi = t1;                                                    \
      swapped = !swapped;                                                                    \
    }                                                                                        \
    if (swapped) { /* the result is in the scratch: back into the caller's arrays */         \
      memcpy(yr, xr, sizeof(float) * (size_t)n * L);                                         \
      memcpy(yi, xi, sizeof(float) * (size_t)n * L);                                         \
    }                                                                                        \
  }

static void lanes_portable(int n, const float *twr, const float *twi, float *xr, float *xi,
                           float *yr, float *yi) LANES_BODY

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_AVX2 1
__attribute__((target("avx2,fma"))) static void lanes_avx2(int n, const float *twr,
                                                           const float *twi, float *xr, float *xi,
                                                           float *yr, float *yi) LANES_BODY
#endif

void cm_fft_lanes(int n, const float *twr, const float *twi, float *xr, float *xi, float *yr,
                  float *yi, bool inverse) {
  if (inverse) { /* exchange the parts: the forward transform then gives the inverse */
    float *t = xr;
    xr = xi, xi = t;
    t = yr, yr = yi, yi = t;
  }
#ifdef HAVE_AVX2
  const cm_cpu_flags *f = cm_cpu_features();
  if (f->avx2 && f->fma) {
    lanes_avx2(n, twr, twi, xr, xi, yr, yi);
    return;
  }
#endif
  lanes_portable(n, twr, twi, xr, xi, yr, yi);
}
