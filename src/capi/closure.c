/* mlx/c/closure.h: closures are reference-counted holders of a C function
 * and its payload.  _set shares the holder (mlx-c shares the underlying
 * std::function), and the payload's dtor runs when the last handle is
 * freed.  _apply calls the function with a fresh result vector; a nonzero
 * status from the function is reported as an error.  ctx is a cell
 * (handle.h) of the closure's type holding the holder; each handle has its
 * own cell, so freeing one handle of a shared holder leaves the others
 * live, and a freed or wrongly typed handle is reported. */
#include <stdatomic.h>
#include <stdlib.h>

#include "capi/capi.h"

typedef enum kind {
  K_PLAIN,
  K_KWARGS,
  K_VALUE_AND_GRAD,
  K_CUSTOM,
  K_CUSTOM_JVP,
  K_CUSTOM_VMAP
} kind;

typedef int (*fn_plain)(mlx_vector_array *, const mlx_vector_array);
typedef int (*fn_plain_p)(mlx_vector_array *, const mlx_vector_array, void *);
typedef int (*fn_unary)(mlx_array *, const mlx_array);
typedef int (*fn_kwargs)(mlx_vector_array *, const mlx_vector_array, const mlx_map_string_to_array);
typedef int (*fn_kwargs_p)(mlx_vector_array *, const mlx_vector_array,
                           const mlx_map_string_to_array, void *);
typedef int (*fn_vag)(mlx_vector_array *, mlx_vector_array *, const mlx_vector_array);
typedef int (*fn_vag_p)(mlx_vector_array *, mlx_vector_array *, const mlx_vector_array, void *);
typedef int (*fn_custom)(mlx_vector_array *, const mlx_vector_array, const mlx_vector_array,
                         const mlx_vector_array);
typedef int (*fn_custom_p)(mlx_vector_array *, const mlx_vector_array, const mlx_vector_array,
                           const mlx_vector_array, void *);
typedef int (*fn_jvp)(mlx_vector_array *, const mlx_vector_array, const mlx_vector_array,
                      const int *, size_t);
typedef int (*fn_jvp_p)(mlx_vector_array *, const mlx_vector_array, const mlx_vector_array,
                        const int *, size_t, void *);
typedef int (*fn_vmap)(mlx_vector_array *, mlx_vector_int *, const mlx_vector_array, const int *,
                       size_t);
typedef int (*fn_vmap_p)(mlx_vector_array *, mlx_vector_int *, const mlx_vector_array, const int *,
                         size_t, void *);

typedef struct holder {
  atomic_long refs;
  kind k;
  bool with_payload;
  bool unary; /* K_PLAIN made by mlx_closure_new_unary */
  bool native; /* made by the API itself: see capi_closure_mark_native */
  union {
    fn_plain plain;
    fn_plain_p plain_p;
    fn_unary unary;
    fn_kwargs kwargs;
    fn_kwargs_p kwargs_p;
    fn_vag vag;
    fn_vag_p vag_p;
    fn_custom custom;
    fn_custom_p custom_p;
    fn_jvp jvp;
    fn_jvp_p jvp_p;
    fn_vmap vmap;
    fn_vmap_p vmap_p;
  } f;
  void *payload;
  void (*dtor)(void *);
} holder;

static holder *holder_new(kind k, bool with_payload, void *payload, void (*dtor)(void *)) {
  holder *h = calloc(1, sizeof *h);
  if (!h) {
    capi_errorf("[mlx_closure] Out of memory.");
    if (dtor) dtor(payload);
    return NULL;
  }
  atomic_init(&h->refs, 1);
  h->k = k;
  h->with_payload = with_payload;
  h->payload = payload;
  h->dtor = dtor;
  return h;
}

static void holder_release(holder *h) {
  if (!h || atomic_fetch_sub(&h->refs, 1) != 1) return;
  if (h->dtor) h->dtor(h->payload);
  free(h);
}

static const capi_htype htype_of[] = {
    [K_PLAIN] = CAPI_H_CLOSURE,
    [K_KWARGS] = CAPI_H_CLOSURE_KWARGS,
    [K_VALUE_AND_GRAD] = CAPI_H_CLOSURE_VALUE_AND_GRAD,
    [K_CUSTOM] = CAPI_H_CLOSURE_CUSTOM,
    [K_CUSTOM_JVP] = CAPI_H_CLOSURE_CUSTOM_JVP,
    [K_CUSTOM_VMAP] = CAPI_H_CLOSURE_CUSTOM_VMAP,
};

/* A new handle cell holding h (NULL: h was NULL, or after reporting, h
 * released). */
static void *wrap(holder *h) {
  if (!h) return NULL;
  void *c = capi_cell_new(htype_of[h->k], h);
  if (!c) holder_release(h);
  return c;
}

static int holder_free(const char *fn, void *ctx, kind k) {
  void *h;
  if (capi_cell_free(fn, ctx, htype_of[k], &h)) return 1;
  holder_release(h);
  return 0;
}

/* *dst shares src's holder (both checked, of kind k): a live *dst keeps
 * its cell, an empty src empties *dst. */
static int holder_set(const char *fn, void **dst, const void *src, kind k) {
  capi_htype t = htype_of[k];
  if (capi_out(fn, dst) || capi_check(fn, *dst, t) || capi_check(fn, src, t)) return 1;
  if (*dst == src) return 0;
  holder *h = capi_obj(src);
  if (!h) {
    if (holder_free(fn, *dst, k)) return 1;
    *dst = NULL;
    return 0;
  }
  atomic_fetch_add(&h->refs, 1);
  if (*dst) {
    holder *old = capi_obj(*dst);
    capi_obj_set(*dst, h);
    holder_release(old);
    return 0;
  }
  if (!(*dst = capi_cell_new(t, h))) {
    holder_release(h);
    return 1;
  }
  return 0;
}

static holder *need(const char *fn, void *ctx, kind k) {
  return capi_need_h(fn, ctx, htype_of[k]) ? NULL : capi_obj(ctx);
}

/* The function's status: nonzero becomes an error (it may have reported
 * its own already; mlx-c raises in that case too). */
static int check_status(const char *fn, int status) {
  return status ? capi_errorf("[%s] closure returned a non-zero value.", fn) : 0;
}

/* A failed native function left a core error unreported: report it now
 * (once, with its own message); other functions get the generic one. */
static int fail_status(const char *fn, const holder *h, int status) {
  if (!status) return 0;
  return h->native ? capi_fail() : check_status(fn, status);
}

void capi_closure_mark_native(void *ctx) {
  holder *h = capi_obj(ctx);
  if (h) h->native = true;
}

/* Move the vector `from` (a handle the closure's function filled, of type
 * t) into *res (checked), reporting one the function broke (freed,
 * replaced by something else): a live *res keeps its cell, taking from's
 * contents; `from` is freed either way.  0 or 1. */
static int take(const char *fn, void **res, void *from, capi_htype t, int (*free_h)(void *)) {
  if (capi_check(fn, from, t)) return 1;
  if (*res && from) {
    void *o = capi_obj(*res);
    capi_obj_set(*res, capi_obj(from));
    capi_obj_set(from, o);
    free_h(from);
    return 0;
  }
  free_h(*res);
  *res = from;
  return 0;
}
static int free_va(void *ctx) { return mlx_vector_array_free((mlx_vector_array){ctx}); }
static int free_vi(void *ctx) { return mlx_vector_int_free((mlx_vector_int){ctx}); }
#define VA_T CAPI_H_VECTOR_ARRAY
static int take_vector(const char *fn, mlx_vector_array *res, mlx_vector_array from) {
  return take(fn, &res->ctx, from.ctx, VA_T, free_va);
}

/* ============================ mlx_closure ============================ */

mlx_closure mlx_closure_new(void) { return (mlx_closure){NULL}; }
int mlx_closure_free(mlx_closure cls) {
  return holder_free("mlx_closure_free", cls.ctx, K_PLAIN);
}

mlx_closure mlx_closure_new_func(int (*fun)(mlx_vector_array *, const mlx_vector_array)) {
  holder *h = holder_new(K_PLAIN, false, NULL, NULL);
  if (h) h->f.plain = fun;
  return (mlx_closure){wrap(h)};
}

mlx_closure mlx_closure_new_func_payload(
    int (*fun)(mlx_vector_array *, const mlx_vector_array, void *), void *payload,
    void (*dtor)(void *)) {
  holder *h = holder_new(K_PLAIN, true, payload, dtor);
  if (h) h->f.plain_p = fun;
  return (mlx_closure){wrap(h)};
}

mlx_closure mlx_closure_new_unary(int (*fun)(mlx_array *, const mlx_array)) {
  holder *h = holder_new(K_PLAIN, false, NULL, NULL);
  if (h) {
    h->unary = true;
    h->f.unary = fun;
  }
  return (mlx_closure){wrap(h)};
}

int mlx_closure_set(mlx_closure *cls, const mlx_closure src) {
  return holder_set("mlx_closure_set", cls ? &cls->ctx : NULL, src.ctx, K_PLAIN);
}

static int call_unary(holder *h, mlx_vector_array *out, const mlx_vector_array input) {
  if (mlx_vector_array_size(input) != 1)
    return capi_errorf("[mlx_closure_apply] A unary closure takes exactly one array, got %zu.",
                       mlx_vector_array_size(input));
  mlx_array x = mlx_array_new(), y = mlx_array_new();
  int rc = mlx_vector_array_get(&x, input, 0);
  if (!rc) rc = check_status("mlx_closure_apply", h->f.unary(&y, x));
  if (!rc) rc = mlx_vector_array_set_value(out, y);
  mlx_array_free(x);
  mlx_array_free(y);
  return rc;
}

int mlx_closure_apply(mlx_vector_array *res, mlx_closure cls, const mlx_vector_array input) {
  const char *fn = "mlx_closure_apply";
  if (capi_out(fn, res) || capi_check(fn, res->ctx, VA_T)) return 1;
  holder *h = need(fn, cls.ctx, K_PLAIN);
  if (!h) return 1;
  mlx_vector_array out = mlx_vector_array_new();
  if (!out.ctx) return 1;
  int rc = h->unary ? call_unary(h, &out, input)
                    : fail_status(fn, h, h->with_payload ? h->f.plain_p(&out, input, h->payload)
                                                         : h->f.plain(&out, input));
  if (rc) {
    mlx_vector_array_free(out);
    return 1;
  }
  return take_vector(fn, res, out);
}

int capi_closure_call(void *ctx, cm_array *const *in, int nin, cm_array ***out, int *nout) {
  if (!ctx) return cm_error(CM_ERR_VALUE, "[closure] Expected a non-empty mlx_closure.");
  if (!capi_live(ctx, CAPI_H_CLOSURE) && capi_bad_handle("closure", ctx, CAPI_H_CLOSURE))
    return cm_error(CM_ERR_VALUE, "[closure] Invalid mlx_closure handle.");
  holder *h = capi_obj(ctx);
  mlx_vector_array input = mlx_vector_array_new(), res = mlx_vector_array_new();
  int rc = -1;
  if (!input.ctx || !res.ctx || capi_vector_set_arrays(&input, in, (size_t)nin)) {
    cm_error(CM_ERR_MEMORY, "[closure] Out of memory.");
    goto done;
  }
  int st;
  if (h->unary) {
    mlx_array x = nin == 1 ? capi_wrap(cm_retain(in[0])) : mlx_array_new(), y = mlx_array_new();
    st = x.ctx ? h->f.unary(&y, x) : -1;
    if (!st) st = mlx_vector_array_set_value(&res, y);
    mlx_array_free(x);
    mlx_array_free(y);
  } else {
    st = h->with_payload ? h->f.plain_p(&res, input, h->payload) : h->f.plain(&res, input);
  }
  if (st) {
    /* a native function's own error is already the pending core error */
    if (!h->native) cm_error(CM_ERR_RUNTIME, "[closure] The closure returned a non-zero value.");
    goto done;
  }
  size_t n;
  cm_array *const *items;
  if (capi_vector_arrays("closure", res, &items, &n)) {
    cm_error(CM_ERR_VALUE, "[closure] The closure's result vector is invalid.");
    goto done;
  }
  cm_array **list = malloc(sizeof *list * (n ? n : 1));
  if (!list) {
    cm_error(CM_ERR_MEMORY, "[closure] Out of memory.");
    goto done;
  }
  for (size_t i = 0; i < n; i++) list[i] = cm_retain(items[i]);
  *out = list;
  *nout = (int)n;
  rc = 0;
done:
  mlx_vector_array_free(input);
  mlx_vector_array_free(res);
  return rc;
}

/* ======================== mlx_closure_kwargs ======================== */

mlx_closure_kwargs mlx_closure_kwargs_new(void) { return (mlx_closure_kwargs){NULL}; }
int mlx_closure_kwargs_free(mlx_closure_kwargs cls) {
  return holder_free("mlx_closure_kwargs_free", cls.ctx, K_KWARGS);
}

mlx_closure_kwargs mlx_closure_kwargs_new_func(
    int (*fun)(mlx_vector_array *, const mlx_vector_array, const mlx_map_string_to_array)) {
  holder *h = holder_new(K_KWARGS, false, NULL, NULL);
  if (h) h->f.kwargs = fun;
  return (mlx_closure_kwargs){wrap(h)};
}

mlx_closure_kwargs mlx_closure_kwargs_new_func_payload(
    int (*fun)(mlx_vector_array *, const mlx_vector_array, const mlx_map_string_to_array, void *),
    void *payload, void (*dtor)(void *)) {
  holder *h = holder_new(K_KWARGS, true, payload, dtor);
  if (h) h->f.kwargs_p = fun;
  return (mlx_closure_kwargs){wrap(h)};
}

int mlx_closure_kwargs_set(mlx_closure_kwargs *cls, const mlx_closure_kwargs src) {
  return holder_set("mlx_closure_kwargs_set", cls ? &cls->ctx : NULL, src.ctx, K_KWARGS);
}

int mlx_closure_kwargs_apply(mlx_vector_array *res, mlx_closure_kwargs cls,
                             const mlx_vector_array input_0,
                             const mlx_map_string_to_array input_1) {
  const char *fn = "mlx_closure_kwargs_apply";
  if (capi_out(fn, res) || capi_check(fn, res->ctx, VA_T)) return 1;
  holder *h = need(fn, cls.ctx, K_KWARGS);
  if (!h) return 1;
  mlx_vector_array out = mlx_vector_array_new();
  if (!out.ctx) return 1;
  int st = h->with_payload ? h->f.kwargs_p(&out, input_0, input_1, h->payload)
                           : h->f.kwargs(&out, input_0, input_1);
  if (check_status(fn, st)) {
    mlx_vector_array_free(out);
    return 1;
  }
  return take_vector(fn, res, out);
}

/* ==================== mlx_closure_value_and_grad ==================== */

mlx_closure_value_and_grad mlx_closure_value_and_grad_new(void) {
  return (mlx_closure_value_and_grad){NULL};
}
int mlx_closure_value_and_grad_free(mlx_closure_value_and_grad cls) {
  return holder_free("mlx_closure_value_and_grad_free", cls.ctx, K_VALUE_AND_GRAD);
}

mlx_closure_value_and_grad mlx_closure_value_and_grad_new_func(
    int (*fun)(mlx_vector_array *, mlx_vector_array *, const mlx_vector_array)) {
  holder *h = holder_new(K_VALUE_AND_GRAD, false, NULL, NULL);
  if (h) h->f.vag = fun;
  return (mlx_closure_value_and_grad){wrap(h)};
}

mlx_closure_value_and_grad mlx_closure_value_and_grad_new_func_payload(
    int (*fun)(mlx_vector_array *, mlx_vector_array *, const mlx_vector_array, void *),
    void *payload, void (*dtor)(void *)) {
  holder *h = holder_new(K_VALUE_AND_GRAD, true, payload, dtor);
  if (h) h->f.vag_p = fun;
  return (mlx_closure_value_and_grad){wrap(h)};
}

int mlx_closure_value_and_grad_set(mlx_closure_value_and_grad *cls,
                                   const mlx_closure_value_and_grad src) {
  return holder_set("mlx_closure_value_and_grad_set", cls ? &cls->ctx : NULL, src.ctx, K_VALUE_AND_GRAD);
}

int mlx_closure_value_and_grad_apply(mlx_vector_array *res_0, mlx_vector_array *res_1,
                                     mlx_closure_value_and_grad cls, const mlx_vector_array input) {
  const char *fn = "mlx_closure_value_and_grad_apply";
  if (capi_out(fn, res_0) || capi_out(fn, res_1) || capi_check(fn, res_0->ctx, VA_T) ||
      capi_check(fn, res_1->ctx, VA_T))
    return 1;
  holder *h = need(fn, cls.ctx, K_VALUE_AND_GRAD);
  if (!h) return 1;
  mlx_vector_array o0 = mlx_vector_array_new(), o1 = mlx_vector_array_new();
  int st = 1;
  if (o0.ctx && o1.ctx)
    st = fail_status(fn, h,
                     h->with_payload ? h->f.vag_p(&o0, &o1, input, h->payload)
                                     : h->f.vag(&o0, &o1, input));
  if (st) {
    mlx_vector_array_free(o0);
    mlx_vector_array_free(o1);
    return 1;
  }
  if (take_vector(fn, res_0, o0)) {
    mlx_vector_array_free(o1);
    return 1;
  }
  return take_vector(fn, res_1, o1);
}

/* ======================== mlx_closure_custom ======================== */

mlx_closure_custom mlx_closure_custom_new(void) { return (mlx_closure_custom){NULL}; }
int mlx_closure_custom_free(mlx_closure_custom cls) {
  return holder_free("mlx_closure_custom_free", cls.ctx, K_CUSTOM);
}

mlx_closure_custom mlx_closure_custom_new_func(
    int (*fun)(mlx_vector_array *, const mlx_vector_array, const mlx_vector_array,
               const mlx_vector_array)) {
  holder *h = holder_new(K_CUSTOM, false, NULL, NULL);
  if (h) h->f.custom = fun;
  return (mlx_closure_custom){wrap(h)};
}

mlx_closure_custom mlx_closure_custom_new_func_payload(
    int (*fun)(mlx_vector_array *, const mlx_vector_array, const mlx_vector_array,
               const mlx_vector_array, void *),
    void *payload, void (*dtor)(void *)) {
  holder *h = holder_new(K_CUSTOM, true, payload, dtor);
  if (h) h->f.custom_p = fun;
  return (mlx_closure_custom){wrap(h)};
}

int mlx_closure_custom_set(mlx_closure_custom *cls, const mlx_closure_custom src) {
  return holder_set("mlx_closure_custom_set", cls ? &cls->ctx : NULL, src.ctx, K_CUSTOM);
}

int mlx_closure_custom_apply(mlx_vector_array *res, mlx_closure_custom cls,
                             const mlx_vector_array input_0, const mlx_vector_array input_1,
                             const mlx_vector_array input_2) {
  const char *fn = "mlx_closure_custom_apply";
  if (capi_out(fn, res) || capi_check(fn, res->ctx, VA_T)) return 1;
  holder *h = need(fn, cls.ctx, K_CUSTOM);
  if (!h) return 1;
  mlx_vector_array out = mlx_vector_array_new();
  if (!out.ctx) return 1;
  int st = h->with_payload ? h->f.custom_p(&out, input_0, input_1, input_2, h->payload)
                           : h->f.custom(&out, input_0, input_1, input_2);
  if (check_status(fn, st)) {
    mlx_vector_array_free(out);
    return 1;
  }
  return take_vector(fn, res, out);
}

/* ====================== mlx_closure_custom_jvp ====================== */

mlx_closure_custom_jvp mlx_closure_custom_jvp_new(void) { return (mlx_closure_custom_jvp){NULL}; }
int mlx_closure_custom_jvp_free(mlx_closure_custom_jvp cls) {
  return holder_free("mlx_closure_custom_jvp_free", cls.ctx, K_CUSTOM_JVP);
}

mlx_closure_custom_jvp mlx_closure_custom_jvp_new_func(
    int (*fun)(mlx_vector_array *, const mlx_vector_array, const mlx_vector_array, const int *,
               size_t _num)) {
  holder *h = holder_new(K_CUSTOM_JVP, false, NULL, NULL);
  if (h) h->f.jvp = fun;
  return (mlx_closure_custom_jvp){wrap(h)};
}

mlx_closure_custom_jvp mlx_closure_custom_jvp_new_func_payload(
    int (*fun)(mlx_vector_array *, const mlx_vector_array, const mlx_vector_array, const int *,
               size_t _num, void *),
    void *payload, void (*dtor)(void *)) {
  holder *h = holder_new(K_CUSTOM_JVP, true, payload, dtor);
  if (h) h->f.jvp_p = fun;
  return (mlx_closure_custom_jvp){wrap(h)};
}

int mlx_closure_custom_jvp_set(mlx_closure_custom_jvp *cls, const mlx_closure_custom_jvp src) {
  return holder_set("mlx_closure_custom_jvp_set", cls ? &cls->ctx : NULL, src.ctx, K_CUSTOM_JVP);
}

int mlx_closure_custom_jvp_apply(mlx_vector_array *res, mlx_closure_custom_jvp cls,
                                 const mlx_vector_array input_0, const mlx_vector_array input_1,
                                 const int *input_2, size_t input_2_num) {
  const char *fn = "mlx_closure_custom_jvp_apply";
  if (capi_out(fn, res) || capi_check(fn, res->ctx, VA_T)) return 1;
  holder *h = need(fn, cls.ctx, K_CUSTOM_JVP);
  if (!h) return 1;
  mlx_vector_array out = mlx_vector_array_new();
  if (!out.ctx) return 1;
  int st = h->with_payload ? h->f.jvp_p(&out, input_0, input_1, input_2, input_2_num, h->payload)
                           : h->f.jvp(&out, input_0, input_1, input_2, input_2_num);
  if (check_status(fn, st)) {
    mlx_vector_array_free(out);
    return 1;
  }
  return take_vector(fn, res, out);
}

/* ===================== mlx_closure_custom_vmap ===================== */

mlx_closure_custom_vmap mlx_closure_custom_vmap_new(void) {
  return (mlx_closure_custom_vmap){NULL};
}
int mlx_closure_custom_vmap_free(mlx_closure_custom_vmap cls) {
  return holder_free("mlx_closure_custom_vmap_free", cls.ctx, K_CUSTOM_VMAP);
}

mlx_closure_custom_vmap mlx_closure_custom_vmap_new_func(
    int (*fun)(mlx_vector_array *, mlx_vector_int *, const mlx_vector_array, const int *,
               size_t _num)) {
  holder *h = holder_new(K_CUSTOM_VMAP, false, NULL, NULL);
  if (h) h->f.vmap = fun;
  return (mlx_closure_custom_vmap){wrap(h)};
}

mlx_closure_custom_vmap mlx_closure_custom_vmap_new_func_payload(
    int (*fun)(mlx_vector_array *, mlx_vector_int *, const mlx_vector_array, const int *,
               size_t _num, void *),
    void *payload, void (*dtor)(void *)) {
  holder *h = holder_new(K_CUSTOM_VMAP, true, payload, dtor);
  if (h) h->f.vmap_p = fun;
  return (mlx_closure_custom_vmap){wrap(h)};
}

int mlx_closure_custom_vmap_set(mlx_closure_custom_vmap *cls, const mlx_closure_custom_vmap src) {
  return holder_set("mlx_closure_custom_vmap_set", cls ? &cls->ctx : NULL, src.ctx, K_CUSTOM_VMAP);
}

int mlx_closure_custom_vmap_apply(mlx_vector_array *res_0, mlx_vector_int *res_1,
                                  mlx_closure_custom_vmap cls, const mlx_vector_array input_0,
                                  const int *input_1, size_t input_1_num) {
  const char *fn = "mlx_closure_custom_vmap_apply";
  if (capi_out(fn, res_0) || capi_out(fn, res_1) || capi_check(fn, res_0->ctx, VA_T) ||
      capi_check(fn, res_1->ctx, CAPI_H_VECTOR_INT))
    return 1;
  holder *h = need(fn, cls.ctx, K_CUSTOM_VMAP);
  if (!h) return 1;
  mlx_vector_array o0 = mlx_vector_array_new();
  mlx_vector_int o1 = mlx_vector_int_new();
  int st = 1;
  if (o0.ctx && o1.ctx)
    st = check_status(fn, h->with_payload
                              ? h->f.vmap_p(&o0, &o1, input_0, input_1, input_1_num, h->payload)
                              : h->f.vmap(&o0, &o1, input_0, input_1, input_1_num));
  if (st) {
    mlx_vector_array_free(o0);
    mlx_vector_int_free(o1);
    return 1;
  }
  if (take_vector(fn, res_0, o0)) {
    mlx_vector_int_free(o1);
    return 1;
  }
  return take(fn, &res_1->ctx, o1.ctx, CAPI_H_VECTOR_INT, free_vi);
}
