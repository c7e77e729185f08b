/* Mixed-radix Stockham stages for fft_lanes.c (radix 4, 2, 3, 5 and a
 * generic butterfly for the primes up to CM_FFT_LANES_MAX_PRIME), in the
 * layout and stage order described there.  fft_lanes.c includes this
 * file twice, with MIXED_SUFFIX naming the instance: once for the
 * baseline and once inside a target("avx2,fma") region, so the two can
 * never disagree on the algorithm.  Every inner loop runs over the
 * CM_FFT_LANES lanes of one element (a constant trip count), which the
 * compiler turns into vector code. */

#define MIXED_CAT2(a, b) a##b
#define MIXED_CAT(a, b) MIXED_CAT2(a, b)
#define MF(name) MIXED_CAT(name, MIXED_SUFFIX)

/* One element's LANES lanes as one vector (GNU vector extensions: two
 * SSE registers in the baseline instance, one AVX register in the other). */
typedef float MF(vlanes) __attribute__((vector_size(CM_FFT_LANES * sizeof(float))));
#define V MF(vlanes)
static inline V MF(ld)(const float *p) {
  V v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void MF(st)(float *p, V v) { memcpy(p, &v, sizeof v); }
#define LD(p) MF(ld)(p)
#define ST(p, v) MF(st)((p), (v))

/* The loop head every radix shares: sub-transform p of m, its twiddles
 * w_k = w_ncur^{p k} (k < R) in wr/wi, inputs j at ar/ai + j * ms + t,
 * outputs k at outr/outi + k * span + t, a vector of lanes per t. */
#define MIXED_LOOP(R, ...)                                                      \
  int m = ncur / (R), stride = n / ncur;                                        \
  size_t span = (size_t)s * CM_FFT_LANES, ms = (size_t)m * span;                \
  for (int p = 0; p < m; p++) {                                                 \
    float wr[CM_FFT_LANES_MAX_PRIME], wi[CM_FFT_LANES_MAX_PRIME];               \
    for (int k = 0; k < (R); k++) {                                             \
      size_t e = (size_t)k * p * stride;                                        \
      wr[k] = twr[e], wi[k] = twi[e];                                           \
    }                                                                           \
    const float *ar = xr + p * span, *ai = xi + p * span;                       \
    float *outr = yr + (size_t)(R)*p * span, *outi = yi + (size_t)(R)*p * span; \
    for (size_t t = 0; t < span; t += CM_FFT_LANES) __VA_ARGS__                 \
  }

/* out_k = v_k times w_k */
#define MIXED_PUT(k, vr_, vi_)                          \
  do {                                                  \
    V pr_ = (vr_), pi_ = (vi_);                         \
    ST(outr + (k)*span + t, pr_ * wr[k] - pi_ * wi[k]); \
    ST(outi + (k)*span + t, pr_ * wi[k] + pi_ * wr[k]); \
  } while (0)
#define IN_R(j) LD(ar + (j)*ms + t)
#define IN_I(j) LD(ai + (j)*ms + t)

static void MF(stage2)(int n, int ncur, int s, const float *twr, const float *twi, const float *xr,
                       const float *xi, float *yr, float *yi) {
  MIXED_LOOP(2, {
    V a_r = IN_R(0), a_i = IN_I(0), b_r = IN_R(1), b_i = IN_I(1);
    ST(outr + t, a_r + b_r), ST(outi + t, a_i + b_i);
    MIXED_PUT(1, a_r - b_r, a_i - b_i);
  })
}

static void MF(stage4)(int n, int ncur, int s, const float *twr, const float *twi, const float *xr,
                       const float *xi, float *yr, float *yi) {
  MIXED_LOOP(4, {
    V a_r = IN_R(0), a_i = IN_I(0), b_r = IN_R(1), b_i = IN_I(1);
    V c_r = IN_R(2), c_i = IN_I(2), d_r = IN_R(3), d_i = IN_I(3);
    V apcr = a_r + c_r, apci = a_i + c_i, amcr = a_r - c_r, amci = a_i - c_i;
    V bpdr = b_r + d_r, bpdi = b_i + d_i;
    V jr = d_i - b_i, ji = b_r - d_r; /* i (b - d) */
    ST(outr + t, apcr + bpdr), ST(outi + t, apci + bpdi);
    MIXED_PUT(1, amcr - jr, amci - ji);
    MIXED_PUT(2, apcr - bpdr, apci - bpdi);
    MIXED_PUT(3, amcr + jr, amci + ji);
  })
}

/* y_k = sum_j x_j e^{-2 pi i jk/3}: with t1 = x1 + x2, t2 = x0 - t1/2 and
 * t3 = sin(2 pi/3) (x1 - x2), y1 = t2 - i t3 and y2 = t2 + i t3. */
static void MF(stage3)(int n, int ncur, int s, const float *twr, const float *twi, const float *xr,
                       const float *xi, float *yr, float *yi) {
  const float s3 = 0.866025403784438647f;
  MIXED_LOOP(3, {
    V x0r = IN_R(0), x0i = IN_I(0), x1r = IN_R(1), x1i = IN_I(1), x2r = IN_R(2), x2i = IN_I(2);
    V t1r = x1r + x2r, t1i = x1i + x2i;
    V t2r = x0r - 0.5f * t1r, t2i = x0i - 0.5f * t1i;
    V t3r = s3 * (x1r - x2r), t3i = s3 * (x1i - x2i);
    ST(outr + t, x0r + t1r), ST(outi + t, x0i + t1i);
    MIXED_PUT(1, t2r + t3i, t2i - t3r);
    MIXED_PUT(2, t2r - t3i, t2i + t3r);
  })
}

/* From the sums and differences of x1, x4 and of x2, x3 (c_k =
 * cos(2 pi k/5), s_k = sin(2 pi k/5)): y1 = r1 - i i1, y4 = r1 + i i1,
 * y2 = r2 - i i2, y3 = r2 + i i2. */
static void MF(stage5)(int n, int ncur, int s, const float *twr, const float *twi, const float *xr,
                       const float *xi, float *yr, float *yi) {
  const float c1 = 0.309016994374947424f, c2 = -0.809016994374947424f;
  const float s1 = 0.951056516295153572f, s2 = 0.587785252292473129f;
  MIXED_LOOP(5, {
    V x0r = IN_R(0), x0i = IN_I(0);
    V x1r = IN_R(1), x1i = IN_I(1), x4r = IN_R(4), x4i = IN_I(4);
    V x2r = IN_R(2), x2i = IN_I(2), x3r = IN_R(3), x3i = IN_I(3);
    V a1r = x1r + x4r, a1i = x1i + x4i, b1r = x1r - x4r, b1i = x1i - x4i;
    V a2r = x2r + x3r, a2i = x2i + x3i, b2r = x2r - x3r, b2i = x2i - x3i;
    V r1r = x0r + c1 * a1r + c2 * a2r, r1i = x0i + c1 * a1i + c2 * a2i;
    V r2r = x0r + c2 * a1r + c1 * a2r, r2i = x0i + c2 * a1i + c1 * a2i;
    V i1r = s1 * b1r + s2 * b2r, i1i = s1 * b1i + s2 * b2i;
    V i2r = s2 * b1r - s1 * b2r, i2i = s2 * b1i - s1 * b2i;
    ST(outr + t, x0r + a1r + a2r), ST(outi + t, x0i + a1i + a2i);
    MIXED_PUT(1, r1r + i1i, r1i - i1r);
    MIXED_PUT(4, r1r - i1i, r1i + i1r);
    MIXED_PUT(2, r2r + i2i, r2i - i2r);
    MIXED_PUT(3, r2r - i2i, r2i + i2r);
  })
}

/* Any radix R up to CM_FFT_LANES_MAX_PRIME: the plain DFT, with
 * e^{-2 pi i k/R} = twiddle k n/R. */
static void MF(stage_any)(int R, int n, int ncur, int s, const float *twr, const float *twi,
                          const float *xr, const float *xi, float *yr, float *yi) {
  float cr[CM_FFT_LANES_MAX_PRIME], ci[CM_FFT_LANES_MAX_PRIME];
  for (int k = 0; k < R; k++) cr[k] = twr[(size_t)k * (n / R)], ci[k] = twi[(size_t)k * (n / R)];
  MIXED_LOOP(R, {
    V vr[CM_FFT_LANES_MAX_PRIME], vi[CM_FFT_LANES_MAX_PRIME];
    for (int j = 0; j < R; j++) vr[j] = IN_R(j), vi[j] = IN_I(j);
    for (int k = 0; k < R; k++) {
      V sr = vr[0], si = vi[0];
      for (int j = 1, e = k; j < R; j++, e = e + k >= R ? e + k - R : e + k) {
        sr += vr[j] * cr[e] - vi[j] * ci[e];
        si += vr[j] * ci[e] + vi[j] * cr[e];
      }
      MIXED_PUT(k, sr, si);
    }
  })
}

/* An odd prime R (7, 11, 13) by its symmetry: with s_j = x_j + x_R-j and
 * d_j = x_j - x_R-j (j <= R/2), A_k = x_0 + sum s_j cos(2 pi jk/R) and
 * B_k = sum d_j sin(2 pi jk/R) give X_k = A_k - i B_k and X_R-k = A_k +
 * i B_k: a quarter of the generic butterfly's multiplications. */
static void MF(stage_odd)(int R, int n, int ncur, int s, const float *twr, const float *twi,
                          const float *xr, const float *xi, float *yr, float *yi) {
  enum { H = CM_FFT_LANES_MAX_PRIME / 2 + 1 };
  float cs[CM_FFT_LANES_MAX_PRIME], sn[CM_FFT_LANES_MAX_PRIME];
  for (int k = 0; k < R; k++) /* twr + i twi = e^{-2 pi i k/R} */
    cs[k] = twr[(size_t)k * (n / R)], sn[k] = -twi[(size_t)k * (n / R)];
  int h = R / 2;
  MIXED_LOOP(R, {
    V sr[H], si[H], dr[H], di[H];
    V x0r = IN_R(0), x0i = IN_I(0), tr = x0r, ti = x0i;
    for (int j = 1; j <= h; j++) {
      V ur = IN_R(j), ui = IN_I(j), vr = IN_R(R - j), vi = IN_I(R - j);
      sr[j] = ur + vr, si[j] = ui + vi, dr[j] = ur - vr, di[j] = ui - vi;
      tr += sr[j], ti += si[j];
    }
    ST(outr + t, tr), ST(outi + t, ti);
    for (int k = 1; k <= h; k++) {
      V a_r = x0r, a_i = x0i, b_r = x0r - x0r, b_i = b_r;
      for (int j = 1, e = k; j <= h; j++, e = e + k >= R ? e + k - R : e + k) {
        a_r += sr[j] * cs[e], a_i += si[j] * cs[e];
        b_r += dr[j] * sn[e], b_i += di[j] * sn[e];
      }
      MIXED_PUT(k, a_r + b_i, a_i - b_r);
      MIXED_PUT(R - k, a_r - b_i, a_i + b_r);
    }
  })
}

static void MF(mixed_stage)(int R, int n, int ncur, int s, const float *twr, const float *twi,
                            const float *xr, const float *xi, float *yr, float *yi) {
  switch (R) {
  case 2: MF(stage2)(n, ncur, s, twr, twi, xr, xi, yr, yi); break;
  case 3: MF(stage3)(n, ncur, s, twr, twi, xr, xi, yr, yi); break;
  case 4: MF(stage4)(n, ncur, s, twr, twi, xr, xi, yr, yi); break;
  case 5: MF(stage5)(n, ncur, s, twr, twi, xr, xi, yr, yi); break;
  default:
    if (R % 2) MF(stage_odd)(R, n, ncur, s, twr, twi, xr, xi, yr, yi);
    else MF(stage_any)(R, n, ncur, s, twr, twi, xr, xi, yr, yi);
    break;
  }
}

/* Every stage (radices r[0..nr)), the result back in (xr, xi). */
static void MF(mixed_run)(int n, const int *r, int nr, const float *twr, const float *twi,
                          float *xr, float *xi, float *yr, float *yi) {
  float *x0r = xr, *x0i = xi;
  int s = 1;
  for (int i = 0, ncur = n; i < nr; ncur /= r[i], s *= r[i], i++) {
    /* The last stage (one sub-transform, no twiddles) writes where it
     * reads, each butterfly loading all its inputs first: in place when
     * the stage count is odd, so the result ends in x without a copy. */
    if (i == nr - 1 && nr % 2 == 1) {
      MF(mixed_stage)(r[i], n, ncur, s, twr, twi, xr, xi, xr, xi);
      break;
    }
    MF(mixed_stage)(r[i], n, ncur, s, twr, twi, xr, xi, yr, yi);
    float *t0 = xr, *t1 = xi;
    xr = yr, xi = yi, yr = t0, yi = t1;
  }
  if (xr != x0r) { /* the result is in the scratch */
    memcpy(x0r, xr, sizeof(float) * (size_t)n * CM_FFT_LANES);
    memcpy(x0i, xi, sizeof(float) * (size_t)n * CM_FFT_LANES);
  }
}

#undef MF
#undef MIXED_CAT
#undef MIXED_CAT2
#undef MIXED_LOOP
#undef MIXED_PUT
#undef IN_R
#undef IN_I
#undef LD
#undef ST
#undef V
