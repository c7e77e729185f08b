/* mx.fft.stft and mx.fft.istft (MLX 0.32.4), composed of ops so that they
 * differentiate, vmap and compile through the ops' own rules.
 *
 * stft: the last axis, padded by n_fft / 2 on both sides when centred
 * (mx.pad's modes and errors), is cut into frames of n_fft every hop
 * samples (a take of frame * hop + offset), each multiplied by the window
 * and transformed (rfft when onesided, else fft), giving
 * (..., n_freq, n_frames), always complex64.  The window (default ones of
 * win_length) is centred in n_fft with zeros.
 *
 * istft inverts it: each frame's inverse transform (irfft, or the real
 * part of ifft), times the window, is added at frame * hop (one
 * scatter-add over all frames), and the sum is divided by the summed
 * squared window (at least 1e-8, so where no window covers a sample the
 * result is 0).  The centring pad is then dropped; length trims the
 * result or pads it with zeros. */
#include "ops/fft.h"
#include "ops/ops.h"
#include "primitives/rules_util.h"

#define T(e) RT(&t, (e))

static cm_array *finish(cm_rt *t, cm_array *r) {
  cm_array *out;
  cm_rt_done(t, r, &out);
  return out;
}

/* The window, centred in n_fft with zeros. */
static cm_array *prepare_window(cm_array *window, int win_length, int n_fft, const char *op,
                                cm_stream s) {
  int32_t wl = win_length;
  cm_array *win = window ? cm_retain(window) : cm_ones(1, &wl, CM_FLOAT32, s);
  if (!win) return NULL;
  if (win->ndim != 1) {
    cm_release(win);
    return cm_error(CM_ERR_VALUE, "[%s] window must be a one-dimensional array.", op), NULL;
  }
  int n = win->shape[0];
  if (n > n_fft) {
    cm_release(win);
    return cm_error(CM_ERR_VALUE, "[%s] window length must not exceed n_fft.", op), NULL;
  }
  if (n == n_fft) return win;
  int axis = 0;
  int32_t lo = (n_fft - n) / 2, hi = n_fft - n - lo;
  cm_array *r = cm_pad(win, 1, &axis, 1, &lo, 1, &hi, NULL, "constant", s);
  cm_release(win);
  return r;
}

/* (n_frames, n_fft) int32 positions frame * hop + offset. */
static cm_array *frame_positions(int n_frames, int n_fft, int hop, cm_stream s) {
  cm_rt t = {.n = 0};
  int col = 1, row = 0;
  cm_array *starts = T(cm_arange(0, (double)n_frames * hop, hop, CM_INT32, s));
  cm_array *offs = T(cm_arange(0, n_fft, 1, CM_INT32, s));
  cm_array *sc = T(cm_expand_dims(starts, 1, &col, s));
  cm_array *orow = T(cm_expand_dims(offs, 1, &row, s));
  return finish(&t, T(cm_add(sc, orow, s)));
}

/* The shape of a without its last k axes, with tail appended. */
static int lead_shape(const cm_array *a, int k, int ntail, const int32_t *tail, int32_t *out) {
  int n = a->ndim - k;
  for (int i = 0; i < n; i++) out[i] = a->shape[i];
  for (int i = 0; i < ntail; i++) out[n + i] = tail[i];
  return n + ntail;
}

cm_array *cm_stft(cm_array *x, int n_fft, int hop, int win_length, cm_array *window, bool center,
                  const char *pad_mode, cm_fft_norm norm, int onesided, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (n_fft <= 0) return cm_error(CM_ERR_VALUE, "[stft] n_fft must be positive."), NULL;
  if (x->ndim < 1)
    return cm_error(CM_ERR_VALUE, "[stft] Input must have at least one dimension."), NULL;
  if (hop < 0) hop = n_fft / 4;
  if (win_length < 0) win_length = n_fft;
  if (hop <= 0) return cm_error(CM_ERR_VALUE, "[stft] hop_length must be positive."), NULL;
  bool one = onesided < 0 ? x->dtype != CM_COMPLEX64 : onesided != 0;
  cm_rt t = {.n = 0};
  cm_array *win = T(prepare_window(window, win_length, n_fft, "stft", s));
  int32_t flat[2] = {-1, x->shape[x->ndim - 1]};
  cm_array *x2 = T(cm_reshape(x, 2, flat, s));
  if (center && !t.fail) {
    int axis = 1;
    int32_t w = n_fft / 2;
    x2 = T(cm_pad(x2, 1, &axis, 1, &w, 1, &w, NULL, pad_mode, s));
  }
  if (t.fail) return finish(&t, NULL);
  int tp = x2->shape[1];
  if (tp < n_fft) {
    cm_error(CM_ERR_VALUE, "[stft] Input is too short for the given n_fft.");
    return finish(&t, NULL);
  }
  int n_frames = 1 + (tp - n_fft) / hop;
  cm_array *pos = T(frame_positions(n_frames, n_fft, hop, s));
  cm_array *frames = T(cm_take(x2, pos, 1, s)); /* (b, n_frames, n_fft) */
  cm_array *windowed = T(cm_multiply(frames, win, s));
  cm_array *spec = T(cm_fft_1d(windowed, true, n_fft, -1, one, false, norm, s));
  cm_array *swapped = T(cm_swapaxes(spec, -1, -2, s));
  if (t.fail) return finish(&t, NULL);
  int32_t shape[CM_MAX_DIMS + 1], tail[2] = {swapped->shape[1], n_frames};
  int n = lead_shape(x, 1, 2, tail, shape);
  return finish(&t, T(cm_reshape(swapped, n, shape, s)));
}

/* Frames (b, n_frames, n_fft) added at frame * hop into (b, sig_len). */
static cm_array *overlap_add(cm_array *frames, int hop, int sig_len, cm_stream s) {
  cm_rt t = {.n = 0};
  int b = frames->shape[0], n_frames = frames->shape[1], n_fft = frames->shape[2];
  int32_t flat[2] = {b, n_frames * n_fft}, one_row[2] = {1, n_frames * n_fft};
  int32_t out[2] = {b, sig_len};
  cm_array *pos = T(frame_positions(n_frames, n_fft, hop, s));
  cm_array *prow = T(cm_reshape(pos, 2, one_row, s));
  cm_array *idx = T(cm_broadcast_to(prow, 2, flat, s));
  cm_array *vals = T(cm_reshape(frames, 2, flat, s));
  cm_array *zeros = T(cm_zeros(2, out, frames->dtype, s));
  return finish(&t, T(cm_scatter_add_axis(zeros, idx, vals, 1, s)));
}

cm_array *cm_istft(cm_array *z, int n_fft, int hop, int win_length, cm_array *window, bool center,
                   cm_fft_norm norm, int onesided, int length, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (z->ndim < 2)
    return cm_error(CM_ERR_VALUE,
                    "[istft] Input must have at least two dimensions (freq, frames)."),
           NULL;
  bool one = onesided < 0 || onesided;
  int n_freq = z->shape[z->ndim - 2], n_frames = z->shape[z->ndim - 1];
  if (n_fft < 0) n_fft = one ? (n_freq - 1) * 2 : n_freq;
  if (n_fft <= 0) return cm_error(CM_ERR_VALUE, "[istft] n_fft must be positive."), NULL;
  if (hop < 0) hop = n_fft / 4;
  if (win_length < 0) win_length = n_fft;
  if (hop <= 0) return cm_error(CM_ERR_VALUE, "[istft] hop_length must be positive."), NULL;
  cm_rt t = {.n = 0};
  cm_array *win = T(prepare_window(window, win_length, n_fft, "istft", s));
  int32_t flat[3] = {-1, n_freq, n_frames};
  cm_array *z3 = T(cm_reshape(z, 3, flat, s));
  cm_array *zt = T(cm_swapaxes(z3, -1, -2, s)); /* (b, n_frames, n_freq) */
  cm_array *inv = T(cm_fft_1d(zt, true, n_fft, -1, one, true, norm, s));
  cm_array *frames = one ? inv : T(cm_real(inv, s));
  cm_array *windowed = T(cm_multiply(frames, win, s));
  int sig_len = n_fft + (n_frames - 1) * hop;
  cm_array *signal = T(overlap_add(windowed, hop, sig_len, s));
  /* the envelope: the squared window added the same way */
  cm_array *wsq = T(cm_square(win, s));
  int32_t wshape[3] = {1, n_frames, n_fft};
  cm_array *wall = T(cm_broadcast_to(wsq, 3, wshape, s));
  cm_array *env = T(overlap_add(wall, hop, sig_len, s));
  cm_array *tiny = T(t.fail ? NULL : cm_array_scalar_double(1e-8, env->dtype));
  cm_array *floor = T(cm_maximum(env, tiny, s));
  cm_array *out = T(cm_divide(signal, floor, s));
  if (t.fail) return finish(&t, NULL);
  int b = out->shape[0];
  int32_t lo[2] = {0, center ? n_fft / 2 : 0}, hi[2] = {b, 0};
  if (length >= 0) {
    hi[1] = sig_len < lo[1] + length ? sig_len : lo[1] + length;
  } else {
    hi[1] = center ? sig_len - n_fft / 2 : sig_len;
  }
  if (hi[1] < lo[1]) hi[1] = lo[1];
  out = T(cm_slice(out, 2, lo, 2, hi, 0, NULL, s));
  if (!t.fail && length >= 0 && out->shape[1] < length) {
    int axis = 1;
    int32_t zero = 0, more = length - out->shape[1];
    out = T(cm_pad(out, 1, &axis, 1, &zero, 1, &more, NULL, "constant", s));
  }
  if (t.fail) return finish(&t, NULL);
  int32_t shape[CM_MAX_DIMS + 1], tail[1] = {out->shape[1]};
  int n = lead_shape(z, 2, 1, tail, shape);
  return finish(&t, T(cm_reshape(out, n, shape, s)));
}
