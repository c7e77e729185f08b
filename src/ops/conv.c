/* Convolution op constructors: MLX's checks and messages, in MLX's order
 * (see ops/conv.h), then one Convolution node (primitives/conv.h). */
#include "ops/conv.h"

#include <stdio.h>
#include <string.h>

#include "ops/shape.h"
#include "primitives/conv.h"

#define NSP CM_CONV_MAX_SPATIAL

/* A list as MLX prints a std::vector<int>: "(1,2)". */
static const char *list_str(char *buf, size_t cap, int n, const int *v) {
  int32_t t[NSP + 8];
  if (n > (int)(sizeof t / sizeof t[0])) n = (int)(sizeof t / sizeof t[0]);
  for (int i = 0; i < n; i++) t[i] = v[i];
  return cm_shape_str(buf, cap, n, t);
}

/* The lists of one convolution, each with n entries once expanded. */
typedef struct conv_lists {
  int n[5]; /* stride, pad_lo, pad_hi, kdil, idil */
  int v[5][NSP + 8];
} conv_lists;

enum { L_STRIDE, L_LO, L_HI, L_KDIL, L_IDIL };

/* Expand a list of at most one entry to nsp copies of it (or of dflt).
 * Longer lists are kept (their length is checked with the shapes); those
 * too long to be right are kept long enough to be refused. */
static void expand(conv_lists *l, int k, cm_conv_list a, int dflt, int nsp) {
  if (a.n <= 1) {
    int x = a.n ? a.v[0] : dflt;
    l->n[k] = nsp;
    for (int i = 0; i < nsp; i++) l->v[k][i] = x;
    return;
  }
  int keep = a.n < NSP + 8 ? a.n : NSP + 8;
  l->n[k] = a.n;
  memcpy(l->v[k], a.v, sizeof(int) * (size_t)keep);
}

static int check_arrays(cm_array *in, cm_array *wt, int nsp, int groups) {
  char a[256], b[256];
  if (!cm_dtype_is_float(in->dtype))
    return cm_error(CM_ERR_VALUE,
                    "[conv] Invalid input array with type %s. Convolution currently only "
                    "supports floating point types",
                    cm_dtype_name(in->dtype));
  if (wt->ndim != nsp + 2)
    return cm_error(CM_ERR_VALUE,
                    "[conv] Invalid weight array with %d dimensions for %dD convolution. Expected "
                    "an array with %d dimensions following the format [C_out, ..., C_in].",
                    wt->ndim, nsp, nsp + 2);
  int32_t c = in->shape[nsp + 1], wc = wt->shape[nsp + 1], o = wt->shape[0];
  if (groups == 0)
    return cm_error(CM_ERR_VALUE, "[conv] The number of groups must be positive. Got 0 groups.");
  if (c % groups != 0)
    return cm_error(CM_ERR_VALUE,
                    "[conv] The input channels must be divisible by the number of groups. Got "
                    "input with shape %s and %d groups.",
                    cm_shape_str(a, sizeof a, in->ndim, in->shape), groups);
  if (groups > 1 && o % groups != 0)
    return cm_error(CM_ERR_VALUE,
                    "[conv] If groups > 1, the output channels must be divisible by the number of "
                    "groups. Got %d output channels and %d groups.",
                    o, groups);
  if ((int64_t)c != (int64_t)groups * wc) {
    if (groups == 1)
      return cm_error(CM_ERR_VALUE,
                      "[conv] Expect the input channels in the input and weight array to match "
                      "but got shapes - input: %s and weight: %s",
                      cm_shape_str(a, sizeof a, in->ndim, in->shape),
                      cm_shape_str(b, sizeof b, wt->ndim, wt->shape));
    return cm_error(CM_ERR_VALUE,
                    "Given groups=%d and weights of shape %s, expected to have %lld input channels "
                    "but got %d input channels instead.",
                    groups, cm_shape_str(b, sizeof b, wt->ndim, wt->shape), (long long)groups * wc,
                    c);
  }
  return 0;
}

/* Negative padding crops the input (MLX clamps such entries to 0 first,
 * so its later messages print the clamped lists).  Returns a new
 * reference. */
static cm_array *crop(cm_array *in, conv_lists *l, int nsp, cm_stream s) {
  int32_t start[NSP + 2] = {0}, stop[NSP + 2];
  bool any = false;
  for (int i = 0; i < in->ndim; i++) stop[i] = in->shape[i];
  for (int i = 0; i < nsp; i++) {
    if (i < l->n[L_LO] && l->v[L_LO][i] < 0) {
      start[i + 1] = -l->v[L_LO][i];
      l->v[L_LO][i] = 0;
      any = true;
    }
    if (i < l->n[L_HI] && l->v[L_HI][i] < 0) {
      stop[i + 1] = (int32_t)((int64_t)stop[i + 1] + l->v[L_HI][i]);
      l->v[L_HI][i] = 0;
      any = true;
    }
  }
  if (!any) return cm_retain(in);
  return cm_slice(in, in->ndim, start, in->ndim, stop, 0, NULL, s);
}

static int check_lists(const conv_lists *l, int nsp) {
  char a[128], b[128];
  if (l->n[L_STRIDE] != nsp)
    return cm_error(CM_ERR_VALUE, "[conv] Invalid strides %s for %dD convolution.",
                    list_str(a, sizeof a, l->n[L_STRIDE], l->v[L_STRIDE]), nsp);
  if (l->n[L_LO] != nsp || l->n[L_HI] != nsp)
    return cm_error(CM_ERR_VALUE, "[conv] Invalid padding %s | %s for %dD convolution.",
                    list_str(a, sizeof a, l->n[L_LO], l->v[L_LO]),
                    list_str(b, sizeof b, l->n[L_HI], l->v[L_HI]), nsp);
  if (l->n[L_KDIL] != nsp)
    return cm_error(CM_ERR_VALUE, "[conv] Invalid kernel dilation %s for %dD convolution.",
                    list_str(a, sizeof a, l->n[L_KDIL], l->v[L_KDIL]), nsp);
  if (l->n[L_IDIL] != nsp)
    return cm_error(CM_ERR_VALUE, "[conv] Invalid input dilation %s for %dD convolution.",
                    list_str(a, sizeof a, l->n[L_IDIL], l->v[L_IDIL]), nsp);
  return 0;
}

/* The output shape (MLX's Convolution::conv_out_shape). */
static int out_shape(cm_array *in, cm_array *wt, const conv_lists *l, int nsp, int32_t *shape) {
  if (check_lists(l, nsp)) return -1;
  char a[128], b[128], c[256], d[256];
  shape[0] = in->shape[0];
  shape[nsp + 1] = wt->shape[0];
  for (int i = 0; i < nsp; i++) {
    if (l->v[L_KDIL][i] <= 0)
      return cm_error(CM_ERR_VALUE,
                      "[conv] Kernel dilation sizes must be positive. Got kernel dilation %s.",
                      list_str(a, sizeof a, nsp, l->v[L_KDIL]));
    if (l->v[L_IDIL][i] <= 0)
      return cm_error(CM_ERR_VALUE,
                      "[conv] Input dilation sizes must be positive. Got input dilation %s.",
                      list_str(a, sizeof a, nsp, l->v[L_IDIL]));
    if (l->v[L_STRIDE][i] <= 0)
      return cm_error(CM_ERR_VALUE, "[conv] Stride sizes must be positive. Got strides %s.",
                      list_str(a, sizeof a, nsp, l->v[L_STRIDE]));
    cm_conv_axis ax = {l->v[L_STRIDE][i], l->v[L_LO][i], l->v[L_HI][i], l->v[L_KDIL][i],
                       l->v[L_IDIL][i]};
    int64_t len = cm_conv_out_len(in->shape[i + 1], wt->shape[i + 1], &ax);
    if (len <= 0)
      return cm_error(CM_ERR_VALUE,
                      "[conv] Spatial dimensions of input after padding cannot be smaller than "
                      "weight spatial dimensions. Got error at axis %d for input with shape %s, "
                      "padding low %s, padding high %s, and weight of shape %s.",
                      i + 1, cm_shape_str(c, sizeof c, in->ndim, in->shape),
                      list_str(a, sizeof a, nsp, l->v[L_LO]),
                      list_str(b, sizeof b, nsp, l->v[L_HI]),
                      cm_shape_str(d, sizeof d, wt->ndim, wt->shape));
    if (cm_shape_dim("conv", len, &shape[i + 1])) return -1;
  }
  return 0;
}

/* in and b (the weight, or the cotangent) promoted to one dtype, then the
 * node. */
static cm_array *node(cm_array *in, cm_array *b, int ndim, const int32_t *shape,
                      const cm_conv_params *p, cm_stream s) {
  cm_dtype t = cm_promote_types(in->dtype, b->dtype);
  cm_array *x = cm_astype(in, t, s), *y = x ? cm_astype(b, t, s) : NULL;
  cm_array *ins[2] = {x, y};
  cm_array *r = y ? cm_op_node(t, ndim, shape, &cm_prim_conv, p,
                               cm_conv_params_size((const cm_params *)(const void *)p), ins, 2, s)
                  : NULL;
  cm_release(x);
  cm_release(y);
  return r;
}

static int operands(cm_array *in, cm_array *b, const cm_conv_params *p) {
  int nsp = p->ndim;
  if (!in || !b || nsp < 1 || nsp > NSP || in->ndim != nsp + 2 || b->ndim != nsp + 2)
    return cm_error(CM_ERR_VALUE, "[conv] Invalid convolution operands.");
  return 0;
}

cm_array *cm_conv_weight_grad(cm_array *in, cm_array *cotan, const int32_t *kshape,
                              const cm_conv_params *p, cm_stream s) {
  if (cm_op_stream(&s) || operands(in, cotan, p)) return NULL;
  int nsp = p->ndim;
  int32_t shape[NSP + 2];
  shape[0] = cotan->shape[nsp + 1];
  shape[nsp + 1] = in->shape[nsp + 1] / p->groups;
  memcpy(shape + 1, kshape, sizeof(int32_t) * (size_t)nsp);
  cm_conv_params q = cm_conv_params_copy(p);
  q.kind = CM_CONV_WEIGHT_GRAD;
  return node(in, cotan, nsp + 2, shape, &q, s);
}

cm_array *cm_conv_from_params(cm_array *in, cm_array *wt, const cm_conv_params *p, cm_stream s) {
  if (cm_op_stream(&s) || operands(in, wt, p)) return NULL;
  int nsp = p->ndim;
  int32_t shape[NSP + 2];
  shape[0] = in->shape[0];
  shape[nsp + 1] = wt->shape[0];
  for (int i = 0; i < nsp; i++) {
    int64_t len = cm_conv_out_len(in->shape[i + 1], wt->shape[i + 1], &p->ax[i]);
    if (len <= 0)
      return cm_error(CM_ERR_VALUE, "[conv] Empty output axis %d in a convolution.", i + 1), NULL;
    if (cm_shape_dim("conv", len, &shape[i + 1])) return NULL;
  }
  cm_conv_params q = cm_conv_params_copy(p);
  q.kind = CM_CONV_FORWARD;
  return node(in, wt, nsp + 2, shape, &q, s);
}

static cm_array *conv_node(cm_array *in, cm_array *wt, const conv_lists *l, int nsp, int groups,
                           bool flip, cm_stream s) {
  int32_t shape[NSP + 2];
  if (out_shape(in, wt, l, nsp, shape)) return NULL;
  cm_conv_params p;
  memset(&p, 0, sizeof p);
  p.ndim = nsp;
  p.groups = groups;
  p.flip = flip;
  for (int i = 0; i < nsp; i++)
    p.ax[i] = (cm_conv_axis){l->v[L_STRIDE][i], l->v[L_LO][i], l->v[L_HI][i], l->v[L_KDIL][i],
                             l->v[L_IDIL][i]};
  return cm_conv_from_params(in, wt, &p, s);
}

cm_array *cm_conv_general(cm_array *in, cm_array *wt, cm_conv_list stride, cm_conv_list pad_lo,
                          cm_conv_list pad_hi, cm_conv_list kernel_dilation,
                          cm_conv_list input_dilation, int groups, bool flip, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (!in || !wt) return cm_error(CM_ERR_VALUE, "[conv] Got a null array."), NULL;
  if (groups != 1 && in->ndim != 3 && in->ndim != 4)
    return cm_error(CM_ERR_VALUE, "[conv] Can only handle groups != 1 in 1D or 2D convolutions."),
           NULL;
  int nsp = in->ndim - 2;
  if (nsp < 1 || nsp > NSP)
    return cm_error(CM_ERR_VALUE, "[conv] Only works for inputs with 1-3 spatial dimensions. The "
                                  "inputs must be in the format [N, ..., C_in]"),
           NULL;
  if (check_arrays(in, wt, nsp, groups)) return NULL;
  cm_dtype t = cm_promote_types(in->dtype, wt->dtype);
  conv_lists l;
  expand(&l, L_STRIDE, stride, 1, nsp);
  expand(&l, L_LO, pad_lo, 0, nsp);
  expand(&l, L_HI, pad_hi, 0, nsp);
  expand(&l, L_KDIL, kernel_dilation, 1, nsp);
  expand(&l, L_IDIL, input_dilation, 1, nsp);
  cm_array *x = cm_astype(in, t, s), *w = x ? cm_astype(wt, t, s) : NULL;
  cm_array *xc = w ? crop(x, &l, nsp, s) : NULL;
  cm_array *r = xc ? conv_node(xc, w, &l, nsp, groups, flip, s) : NULL;
  cm_release(x);
  cm_release(w);
  cm_release(xc);
  return r;
}

static cm_conv_list list(int n, const int *v) { return (cm_conv_list){n, v}; }

cm_array *cm_conv_nd(cm_array *in, cm_array *wt, int n, const int *stride, const int *padding,
                     const int *dilation, int groups, cm_stream s) {
  static const int unit[NSP] = {1, 1, 1};
  return cm_conv_general(in, wt, list(n, stride), list(n, padding), list(n, padding),
                         list(n, dilation), list(n, unit), groups, false, s);
}

cm_array *cm_conv1d(cm_array *in, cm_array *wt, int stride, int padding, int dilation, int groups,
                    cm_stream s) {
  return cm_conv_nd(in, wt, 1, &stride, &padding, &dilation, groups, s);
}

/* MLX's conv_transpose_general.  It reads the spatial sizes before any
 * check; missing axes count as size 1 here (the convolution then reports
 * the bad rank). */
cm_array *cm_conv_transpose_nd(cm_array *in, cm_array *wt, int n, const int *stride,
                               const int *padding, const int *dilation, const int *output_padding,
                               int groups, cm_stream s) {
  if (!in || !wt) return cm_error(CM_ERR_VALUE, "[conv] Got a null array."), NULL;
  int lo[NSP], hi[NSP];
  for (int i = 0; i < n; i++) {
    int64_t k = i + 1 < wt->ndim ? wt->shape[i + 1] : 1;
    int64_t len = i + 1 < in->ndim ? in->shape[i + 1] : 1;
    int64_t wsize = 1 + (int64_t)dilation[i] * (k - 1);
    int32_t v;
    if (cm_shape_dim("conv", wsize - padding[i] - 1, &v)) return NULL;
    lo[i] = v;
    int64_t conv_len = (len - 1) * stride[i] - 2 * (int64_t)padding[i] + wsize;
    int64_t dilated = 1 + (int64_t)stride[i] * (len - 1);
    if (cm_shape_dim("conv", conv_len - dilated + padding[i] + output_padding[i], &v)) return NULL;
    hi[i] = v;
  }
  static const int unit[NSP] = {1, 1, 1};
  return cm_conv_general(in, wt, list(n, unit), list(n, lo), list(n, hi), list(n, dilation),
                         list(n, stride), groups, true, s);
}

/* MLX's convolve (python/src/ops.cpp): the longer operand is the input,
 * the shorter the reversed kernel, one 1-D convolution. */
cm_array *cm_convolve(cm_array *a, cm_array *v, const char *mode, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (!a || !v) return cm_error(CM_ERR_VALUE, "[convolve] Got a null array."), NULL;
  if (a->ndim != 1 || v->ndim != 1)
    return cm_error(CM_ERR_VALUE, "[convolve] Inputs must be 1D."), NULL;
  if (a->size == 0 || v->size == 0)
    return cm_error(CM_ERR_VALUE, "[convolve] Inputs cannot be empty."), NULL;
  bool swap = a->size < v->size;
  cm_array *in = swap ? v : a, *k = swap ? a : v;
  int32_t klen = k->shape[0];
  int padding = 0, pad_l = 0, pad_r = 0;
  if (!mode) mode = "";
  if (!strcmp(mode, "full")) {
    padding = klen - 1;
  } else if (!strcmp(mode, "same")) {
    if (klen % 2) {
      padding = klen / 2;
    } else {
      pad_l = klen / 2;
      pad_r = pad_l - 1 > 0 ? pad_l - 1 : 0;
    }
  } else if (strcmp(mode, "valid")) {
    return cm_error(CM_ERR_VALUE, "[convolve] Invalid mode."), NULL;
  }
  int32_t start = klen - 1, stop = -klen - 1, step = -1;
  int32_t shp[3] = {1, -1, 1}, flat = -1;
  cm_array *kr = cm_slice(k, 1, &start, 1, &stop, 1, &step, s);
  cm_array *w = kr ? cm_reshape(kr, 3, shp, s) : NULL;
  cm_array *x = w ? cm_reshape(in, 3, shp, s) : NULL;
  cm_array *xp = NULL, *out = NULL, *r = NULL;
  if (x && (pad_l || pad_r)) {
    int axis = 1;
    xp = cm_pad(x, 1, &axis, 1, &pad_l, 1, &pad_r, NULL, "constant", s);
  } else if (x) {
    xp = cm_retain(x);
  }
  static const int unit = 1;
  if (xp) out = cm_conv1d(xp, w, unit, padding, unit, 1, s);
  if (out) r = cm_reshape(out, 1, &flat, s);
  cm_release(kr);
  cm_release(w);
  cm_release(x);
  cm_release(xp);
  cm_release(out);
  return r;
}
