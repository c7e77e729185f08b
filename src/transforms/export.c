/* The .mlxfn writer and reader (see export.h).  The layout, as MLX 0.32's
 * export.cpp writes it (little-endian; a vector or string is a uint64
 * count then its entries; bool one byte; int and enums 4 bytes; a shape a
 * vector of int32; a dtype its int code then its uint8 size; a stream its
 * index, device type, device index as ints):
 *
 *   header:   version string, int count of traces, bool shapeless,
 *             metadata string
 *   a trace:  kwarg keys (vector of strings), input ids (vector of
 *             uint64), inputs (vector of (shape, dtype)), output ids,
 *             uint64 tape length, then per tape entry its uint64 id and
 *             bool has-primitive:
 *               true:  input ids, stream, primitive name, its state,
 *                      uint64 sibling count; 0: shape, dtype; else the
 *                      sibling ids, vector of shapes, vector of dtypes
 *               false: bool is-constant; true: unless the id was saved
 *                      before in the file, shape, dtype, raw data */
#include "transforms/export.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/export_tracing.h"
#include "ops/common.h"
#include "transforms/compile.h"
#include "transforms/eval.h"
#include "transforms/export_impl.h"
#include "transforms/ptrmap.h"

#define MLX_VERSION "0.32.4"

/* ---- writer primitives --------------------------------------------------- */

void xw_raw(xw *w, const void *p, size_t n) {
  if (w->fail || !n) return;
  if (w->b.len + n > w->b.cap) {
    size_t cap = w->b.cap ? w->b.cap : 256;
    while (cap < w->b.len + n) cap *= 2;
    unsigned char *d = realloc(w->b.data, cap);
    if (!d) {
      w->fail = true;
      return;
    }
    w->b.data = d, w->b.cap = cap;
  }
  memcpy(w->b.data + w->b.len, p, n);
  w->b.len += n;
}

static cm_state_item *xw_item(xw *w, cm_state_kind k) {
  if (!w->record || w->fail) return NULL;
  if (w->nitems == w->cap) {
    int cap = w->cap ? 2 * w->cap : 8;
    cm_state_item *it = realloc(w->items, sizeof *it * (size_t)cap);
    if (!it) {
      w->fail = true;
      return NULL;
    }
    w->items = it, w->cap = cap;
  }
  cm_state_item *it = &w->items[w->nitems++];
  memset(it, 0, sizeof *it);
  it->kind = k;
  return it;
}

void xw_u8(xw *w, uint8_t v) { xw_raw(w, &v, 1); }
void xw_u64(xw *w, uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
  xw_raw(w, b, 8);
}
static void put_i32(xw *w, int32_t v) {
  uint32_t u = (uint32_t)v;
  unsigned char b[4];
  for (int i = 0; i < 4; i++) b[i] = (unsigned char)(u >> (8 * i));
  xw_raw(w, b, 4);
}
void xw_i32(xw *w, int32_t v) {
  put_i32(w, v);
  cm_state_item *it = xw_item(w, CM_STATE_INT);
  if (it) it->i = v;
}
void xw_bool(xw *w, bool v) {
  xw_u8(w, v ? 1 : 0);
  cm_state_item *it = xw_item(w, CM_STATE_BOOL);
  if (it) it->i = v;
}
void xw_f32(xw *w, float v) {
  uint32_t u;
  memcpy(&u, &v, 4);
  put_i32(w, (int32_t)u);
  cm_state_item *it = xw_item(w, CM_STATE_FLOAT);
  if (it) it->f = v;
}
void xw_f64(xw *w, double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  xw_u64(w, u);
  cm_state_item *it = xw_item(w, CM_STATE_FLOAT);
  if (it) it->f = v;
}
static void put_dtype(xw *w, cm_dtype t) {
  put_i32(w, (int32_t)t);
  xw_u8(w, (uint8_t)cm_dtype_size(t));
}
void xw_dtype(xw *w, cm_dtype t) {
  put_dtype(w, t);
  cm_state_item *it = xw_item(w, CM_STATE_DTYPE);
  if (it) it->i = t;
}
static cm_state_item *ints_item(xw *w, int n) {
  cm_state_item *it = xw_item(w, CM_STATE_INTS);
  if (!it) return NULL;
  it->n = n;
  if (n && !(it->v = malloc(sizeof *it->v * (size_t)n))) w->fail = true;
  return it->v ? it : NULL;
}
static void put_shape(xw *w, int n, const int32_t *v) {
  xw_u64(w, (uint64_t)n);
  for (int i = 0; i < n; i++) put_i32(w, v[i]);
}
void xw_ints(xw *w, int n, const int32_t *v) {
  put_shape(w, n, v);
  cm_state_item *it = ints_item(w, n);
  for (int i = 0; it && i < n; i++) it->v[i] = v[i];
}
void xw_i64s(xw *w, int n, const int64_t *v) {
  xw_u64(w, (uint64_t)n);
  for (int i = 0; i < n; i++) xw_u64(w, (uint64_t)v[i]);
  cm_state_item *it = ints_item(w, n);
  for (int i = 0; it && i < n; i++) it->v[i] = v[i];
}
void xw_str(xw *w, const char *s, size_t n) {
  xw_u64(w, n);
  xw_raw(w, s, n);
}
void xw_state_str(xw *w, const char *s) {
  size_t n = strlen(s);
  xw_str(w, s, n);
  cm_state_item *it = xw_item(w, CM_STATE_STR);
  if (it && !(it->str = strdup(s))) w->fail = true;
  if (it) it->n = (int)n;
}
void xw_free(xw *w) {
  free(w->b.data);
  for (int i = 0; i < w->nitems; i++) free(w->items[i].v), free(w->items[i].str);
  free(w->items);
  memset(w, 0, sizeof *w);
}

/* ---- reader primitives --------------------------------------------------- */

void xr_bad(xr *r, const char *why) {
  if (!r->fail) r->why = why;
  r->fail = true;
}
const unsigned char *xr_take(xr *r, size_t n) {
  if (r->fail) return NULL;
  if (n > r->len - r->pos) {
    xr_bad(r, "the file ends early");
    return NULL;
  }
  const unsigned char *p = r->p + r->pos;
  r->pos += n;
  return p;
}
uint8_t xr_u8(xr *r) {
  const unsigned char *p = xr_take(r, 1);
  return p ? p[0] : 0;
}
uint64_t xr_u64(xr *r) {
  const unsigned char *p = xr_take(r, 8);
  uint64_t v = 0;
  for (int i = 0; p && i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}
int32_t xr_i32(xr *r) {
  const unsigned char *p = xr_take(r, 4);
  uint32_t v = 0;
  for (int i = 0; p && i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
  return (int32_t)v;
}
bool xr_bool(xr *r) {
  uint8_t v = xr_u8(r);
  if (v > 1) xr_bad(r, "a bool is neither 0 nor 1");
  return v == 1;
}
float xr_f32(xr *r) {
  uint32_t u = (uint32_t)xr_i32(r);
  float f;
  memcpy(&f, &u, 4);
  return f;
}
double xr_f64(xr *r) {
  uint64_t u = xr_u64(r);
  double d;
  memcpy(&d, &u, 8);
  return d;
}
cm_dtype xr_dtype(xr *r) {
  int32_t v = xr_i32(r);
  uint8_t size = xr_u8(r);
  if (r->fail) return CM_FLOAT32;
  if (v < 0 || v >= CM_NUM_DTYPES || cm_dtype_size((cm_dtype)v) != size) {
    xr_bad(r, "an invalid dtype");
    return CM_FLOAT32;
  }
  return (cm_dtype)v;
}
uint64_t xr_count(xr *r, uint64_t max, size_t each) {
  uint64_t n = xr_u64(r);
  if (r->fail) return 0;
  if (n > max) xr_bad(r, "a vector is too long");
  else if (n * each > r->len - r->pos) xr_bad(r, "the file ends early");
  return r->fail ? 0 : n;
}
int xr_ints(xr *r, int32_t *v, int max) {
  int n = (int)xr_count(r, (uint64_t)max, 4);
  for (int i = 0; i < n; i++) v[i] = xr_i32(r);
  return n;
}
int xr_i64s(xr *r, int64_t *v, int max) {
  int n = (int)xr_count(r, (uint64_t)max, 8);
  for (int i = 0; i < n; i++) v[i] = (int64_t)xr_u64(r);
  return n;
}
/* A shape: at most CM_MAX_DIMS non-negative dims. */
int xr_shape(xr *r, int32_t *shape) {
  int n = xr_ints(r, shape, CM_MAX_DIMS);
  for (int i = 0; i < n; i++)
    if (shape[i] < 0) xr_bad(r, "a negative dimension");
  return n;
}
/* A string as a pointer into the bytes (not terminated). */
const char *xr_str(xr *r, size_t *n) {
  uint64_t len = xr_count(r, SIZE_MAX, 1);
  *n = (size_t)len;
  const unsigned char *p = xr_take(r, (size_t)len);
  return p ? (const char *)p : "";
}

/* ---- exporting ------------------------------------------------------------ */

typedef struct sig {
  int nin, nkw;
  char **kw;
  cm_dtype *dt;
  int *nd;
  int32_t *sh; /* CM_MAX_DIMS per input */
} sig;

struct cm_exporter {
  FILE *f;
  bool visitor_mode, shapeless, closed;
  cm_export_visitor v;
  char *metadata;
  size_t mlen;
  int count;
  sig *sigs;
  int nsigs;
  cm_ptrmap constants; /* saved constant -> itself (retained) */
};

static int write_bytes(cm_exporter *x, const xw *w) {
  if (w->fail) return cm_error(CM_ERR_MEMORY, "[export_function] Out of memory.");
  if (w->b.len && fwrite(w->b.data, 1, w->b.len, x->f) != w->b.len)
    return cm_error(CM_ERR_RUNTIME, "[export_function] Failed to write the file: %s.",
                    strerror(errno));
  return 0;
}

static int write_header(cm_exporter *x) {
  xw w = {0};
  xw_str(&w, MLX_VERSION, strlen(MLX_VERSION));
  put_i32(&w, x->count);
  xw_u8(&w, x->shapeless);
  xw_str(&w, x->metadata ? x->metadata : "", x->mlen);
  long pos = ftell(x->f);
  int rc = fseek(x->f, 0, SEEK_SET) ? cm_error(CM_ERR_RUNTIME, "[export_function] Seek failed.")
                                    : write_bytes(x, &w);
  if (!rc && pos > 0 && fseek(x->f, pos, SEEK_SET))
    rc = cm_error(CM_ERR_RUNTIME, "[export_function] Seek failed.");
  xw_free(&w);
  return rc;
}

cm_exporter *cm_exporter_new(const char *file, bool shapeless, const char *metadata,
                             size_t metadata_len) {
  cm_exporter *x = calloc(1, sizeof *x);
  if (!x) return cm_error(CM_ERR_MEMORY, "[export_function] Out of memory."), NULL;
  x->shapeless = shapeless;
  if (metadata_len && !(x->metadata = malloc(metadata_len))) {
    free(x);
    return cm_error(CM_ERR_MEMORY, "[export_function] Out of memory."), NULL;
  }
  if (metadata_len) memcpy(x->metadata, metadata, metadata_len);
  x->mlen = metadata_len;
  if (!(x->f = fopen(file, "wb+"))) {
    cm_error(CM_ERR_RUNTIME, "[export_function] Failed to open %s", file);
    cm_exporter_free(x);
    return NULL;
  }
  if (write_header(x)) {
    cm_exporter_free(x);
    return NULL;
  }
  fflush(x->f);
  return x;
}

cm_exporter *cm_exporter_new_visitor(cm_export_visitor v, bool shapeless) {
  cm_exporter *x = calloc(1, sizeof *x);
  if (!x) return cm_error(CM_ERR_MEMORY, "[export_function] Out of memory."), NULL;
  x->visitor_mode = true;
  x->v = v;
  x->shapeless = shapeless;
  return x;
}

void cm_exporter_close(cm_exporter *x) {
  if (!x) return;
  x->closed = true;
  if (x->f) fflush(x->f);
}

static void sig_free(sig *s) {
  for (int i = 0; i < s->nkw; i++) free(s->kw[i]);
  free(s->kw), free(s->dt), free(s->nd), free(s->sh);
}

void cm_exporter_free(cm_exporter *x) {
  if (!x) return;
  if (x->f) fclose(x->f);
  for (int i = 0; i < x->nsigs; i++) sig_free(&x->sigs[i]);
  free(x->sigs);
  for (size_t i = 0; i < x->constants.cap; i++)
    if (x->constants.keys[i]) cm_release((cm_array *)x->constants.keys[i]);
  cm_ptrmap_free(&x->constants);
  free(x->metadata);
  free(x);
}

static int cmp_keys(const void *a, const void *b, void *ctx) {
  const char *const *k = ctx;
  return strcmp(k[*(const int *)a], k[*(const int *)b]);
}

int cm_export_sort_keys(const char *const *keys, int n, int *perm) {
  for (int i = 0; i < n; i++) perm[i] = i;
  /* insertion sort: a handful of keys */
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && cmp_keys(&perm[j - 1], &perm[j], (void *)keys) > 0; j--) {
      int t = perm[j];
      perm[j] = perm[j - 1], perm[j - 1] = t;
    }
  for (int i = 1; i < n; i++)
    if (!strcmp(keys[perm[i]], keys[perm[i - 1]]))
      return cm_error(CM_ERR_VALUE, "[export_function] Duplicate keyword argument %s.",
                      keys[perm[i]]);
  return 0;
}

bool xsig_match(const xsig *s, bool shapeless, cm_array *const *in, int nin,
                const char *const *keys, int nkw) {
  if (s->nin != nin) return false;
  for (int i = 0; i < s->nkw; i++) {
    bool found = false;
    for (int j = 0; j < nkw && !found; j++) found = !strcmp(s->kw[i], keys[j]);
    if (!found) return false;
  }
  for (int i = 0; i < nin; i++)
    if (in[i]->dtype != s->dt[i] || in[i]->ndim != s->nd[i] ||
        (!shapeless &&
         !cm_shape_equal(in[i]->ndim, in[i]->shape, s->nd[i], s->sh + (size_t)i * CM_MAX_DIMS)))
      return false;
  return true;
}

static bool sig_match(const sig *s, bool shapeless, cm_array *const *in, int nin,
                      const char *const *keys, int nkw) {
  xsig v = {s->nin, s->nkw, s->kw, s->dt, s->nd, s->sh};
  return xsig_match(&v, shapeless, in, nin, keys, nkw);
}

static int sig_add(cm_exporter *x, cm_array *const *in, int nin, const char *const *keys, int nkw) {
  sig *ns = realloc(x->sigs, sizeof *ns * (size_t)(x->nsigs + 1));
  if (!ns) return cm_error(CM_ERR_MEMORY, "[export_function] Out of memory.");
  x->sigs = ns;
  sig *s = &ns[x->nsigs];
  memset(s, 0, sizeof *s);
  s->nin = nin;
  s->kw = calloc((size_t)nkw + 1, sizeof *s->kw);
  s->dt = malloc(sizeof *s->dt * (size_t)(nin + 1));
  s->nd = malloc(sizeof *s->nd * (size_t)(nin + 1));
  s->sh = malloc(sizeof *s->sh * CM_MAX_DIMS * (size_t)(nin + 1));
  int rc = s->kw && s->dt && s->nd && s->sh ? 0 : -1;
  for (int i = 0; !rc && i < nkw; i++, s->nkw++)
    if (!(s->kw[i] = strdup(keys[i]))) rc = -1;
  for (int i = 0; !rc && i < nin; i++) {
    s->dt[i] = in[i]->dtype, s->nd[i] = in[i]->ndim;
    memcpy(s->sh + (size_t)i * CM_MAX_DIMS, in[i]->shape, sizeof(int32_t) * (size_t)in[i]->ndim);
  }
  x->nsigs++;
  return rc ? cm_error(CM_ERR_MEMORY, "[export_function] Out of memory.") : 0;
}

static uint64_t id_of(const cm_array *a) { return (uint64_t)(uintptr_t)a; }

static void put_ids(xw *w, cm_array *const *a, int n) {
  xw_u64(w, (uint64_t)n);
  for (int i = 0; i < n; i++) xw_u64(w, id_of(a[i]));
}

static void put_stream(xw *w, cm_stream s) {
  /* a GPU node is a CustomKernel on MLX's placeholder stream, index -1 */
  put_i32(w, s.index < 0 ? (s.device.type == CM_GPU ? -1 : 0) : s.index);
  put_i32(w, s.device.type == CM_CPU ? 0 : 1);
  put_i32(w, s.device.index);
}

/* A constant's bytes, row-major. */
static int put_constant(xw *w, cm_array *a) {
  cm_array *c = cm_row_contiguous(a) ? cm_retain(a) : cm_contiguous(a, false, CM_STREAM_DEFAULT);
  if (!c || cm_eval(&c, 1)) {
    cm_release(c);
    return -1;
  }
  put_shape(w, a->ndim, a->shape);
  put_dtype(w, a->dtype);
  xw_raw(w, cm_data(c), cm_nbytes(c));
  cm_release(c);
  return 0;
}

/* A single-output primitive entry with the given state bytes. */
static void put_single(xw *w, uint64_t id, const uint64_t *ins, int nin, cm_stream s,
                       const char *name, const xw *state, int ndim, const int32_t *shape,
                       cm_dtype t) {
  xw_u64(w, id);
  xw_u8(w, 1);
  xw_u64(w, (uint64_t)nin);
  for (int i = 0; i < nin; i++) xw_u64(w, ins[i]);
  put_stream(w, s);
  xw_str(w, name, strlen(name));
  xw_raw(w, state->b.data, state->b.len);
  xw_u64(w, 0);
  put_shape(w, ndim, shape);
  put_dtype(w, t);
}

/* The state [0] of ExpandDims and Squeeze on axis 0. */
static const unsigned char axis0_bytes[12] = {1};
static const xw axis0 = {.b = {(unsigned char *)axis0_bytes, 12, 12}};

/* A constant entry holding evaluated row-major c's data. */
static void put_constant_entry(xw *w, uint64_t id, const cm_array *c) {
  xw_u64(w, id);
  xw_u8(w, 0);
  xw_u8(w, 1);
  put_shape(w, c->ndim, c->shape);
  put_dtype(w, c->dtype);
  xw_raw(w, cm_data(c), cm_nbytes(c)); /* little-endian hosts only, as the rest */
}

static void put_scalar(xw *w, uint64_t id, float v) {
  cm_array *c = cm_array_scalar_double(v, CM_FLOAT32);
  if (c) put_constant_entry(w, id, c);
  else w->fail = true;
  cm_release(c);
}

/* After RandomBits (id me + 1, uint32): AsType, Divide by 2^32, Minimum
 * with upper, the last under the node's own id. */
static void put_unit(xw *w, const cm_array *a, uint64_t me, float upper) {
  xw st = {0};
  put_dtype(&st, CM_FLOAT32);
  put_single(w, me + 2, &(uint64_t){me + 1}, 1, a->stream, "AsType", &st, a->ndim, a->shape,
             CM_FLOAT32);
  xw_free(&st);
  put_shape(&st, a->ndim, a->shape);
  put_scalar(w, me + 3, 0x1p32f);
  put_single(w, me + 4, &(uint64_t){me + 3}, 1, a->stream, "Broadcast", &st, a->ndim, a->shape,
             CM_FLOAT32);
  put_single(w, me + 5, (uint64_t[]){me + 2, me + 4}, 2, a->stream, "Divide", &(xw){0}, a->ndim,
             a->shape, CM_FLOAT32);
  put_scalar(w, me + 6, upper);
  put_single(w, me + 7, &(uint64_t){me + 6}, 1, a->stream, "Broadcast", &st, a->ndim, a->shape,
             CM_FLOAT32);
  put_single(w, me, (uint64_t[]){me + 5, me + 7}, 2, a->stream, "Minimum", &(xw){0}, a->ndim,
             a->shape, CM_FLOAT32);
  xw_free(&st);
}

static int put_node(cm_exporter *x, xw *w, cm_array *a) {
  xw st = {.record = x->visitor_mode};
  xsave sv = {0};
  int rc = cm_export_save_node(a, &st, &sv);
  if (!rc && st.fail) rc = cm_error(CM_ERR_MEMORY, "[export_function] Out of memory.");
  if (!rc && x->visitor_mode && x->v.primitive) {
    cm_array *const *outs = a->sib ? a->sib->out : &a;
    rc = x->v.primitive(x->v.ctx, sv.name, a->in, a->nin, outs, cm_num_outputs(a), st.items,
                        st.nitems);
  }
  if (!rc && !x->visitor_mode) {
    /* MLX's node; one that differs from cmlx's is saved under derived
     * ids with the nodes that bridge it (ids are node addresses, at least
     * 16 apart, so address + 1..15 are free) */
    uint64_t me = id_of(a), main = sv.batch                           ? me + 8
                                   : sv.reshape || sv.real || sv.unit ? me + 1
                                                                      : me;
    uint64_t few[8], *ins = a->nin <= 6 ? few : malloc(sizeof *ins * ((size_t)a->nin + 2));
    if (!ins) {
      xw_free(&st);
      return cm_error(CM_ERR_MEMORY, "[export_function] Out of memory.");
    }
    int nin = a->nin;
    for (int i = 0; i < nin && sv.batch; i++) { /* MLX's leading batch axis */
      int32_t sh[CM_MAX_DIMS + 1] = {1};
      memcpy(sh + 1, a->in[i]->shape, sizeof *sh * (size_t)a->in[i]->ndim);
      ins[i] = me + 1 + (uint64_t)i;
      put_single(w, ins[i], &(uint64_t){id_of(a->in[i])}, 1, a->stream, "ExpandDims", &axis0,
                 a->in[i]->ndim + 1, sh, a->in[i]->dtype);
    }
    for (int i = 0; i < nin && !sv.batch; i++) ins[i] = id_of(a->in[i]);
    if (sv.self) ins[1] = ins[0], nin = 2; /* x op x */
    if (sv.scalar) {                       /* x op c, or c op x, with c a broadcast constant */
      const cm_array *x = a->in[0];
      cm_array *c = cm_array_scalar_double(sv.value, x->dtype);
      if (!c) {
        if (ins != few) free(ins);
        xw_free(&st);
        return -1;
      }
      put_constant_entry(w, me + 1, c);
      cm_release(c);
      xw shape = {0};
      put_shape(&shape, x->ndim, x->shape);
      put_single(w, me + 2, &(uint64_t){me + 1}, 1, a->stream, "Broadcast", &shape, x->ndim,
                 x->shape, x->dtype);
      xw_free(&shape);
      ins[sv.scalar_first ? 0 : 1] = me + 2, ins[sv.scalar_first ? 1 : 0] = id_of(x), nin = 2;
    }
    xw_u64(w, main);
    xw_u8(w, 1);
    xw_u64(w, (uint64_t)nin);
    for (int i = 0; i < nin; i++) xw_u64(w, ins[i]);
    if (ins != few) free(ins);
    put_stream(w, a->stream);
    xw_str(w, sv.name, strlen(sv.name));
    xw_raw(w, st.b.data, st.b.len);
    if (!a->sib || a->sib->n == 1) { /* one output: MLX has no siblings */
      xw_u64(w, 0);
      if (sv.reshape || sv.batch) put_shape(w, sv.mlx_ndim, sv.mlx_shape);
      else put_shape(w, a->ndim, a->shape);
      put_dtype(w, sv.real ? CM_COMPLEX64 : sv.unit ? CM_UINT32 : a->dtype);
    } else {
      int m = a->sib->n;
      xw_u64(w, (uint64_t)(m - 1)); /* MLX's siblings: the other outputs */
      put_ids(w, a->sib->out, m);
      xw_u64(w, (uint64_t)m);
      for (int k = 0; k < m; k++) put_shape(w, a->sib->out[k]->ndim, a->sib->out[k]->shape);
      xw_u64(w, (uint64_t)m);
      for (int k = 0; k < m; k++) put_dtype(w, a->sib->out[k]->dtype);
    }
    xw reshape = {0};
    if (sv.reshape) { /* Squeeze the axes MLX's reduction keeps (shapeless-safe) */
      int32_t ax[CM_MAX_DIMS];
      int n = 0;
      for (int i = 0; i < sv.mlx_ndim; i++)
        if (sv.squeeze >> i & 1) ax[n++] = i;
      put_shape(&reshape, n, ax);
    }
    if (sv.batch)
      put_single(w, me, &main, 1, a->stream, "Squeeze", &axis0, a->ndim, a->shape, a->dtype);
    else if (sv.real || sv.reshape)
      put_single(w, me, &main, 1, a->stream, sv.real ? "Real" : "Squeeze", &reshape, a->ndim,
                 a->shape, a->dtype);
    xw_free(&reshape);
    if (sv.unit) put_unit(w, a, me, sv.upper);
  }
  xw_free(&st);
  return rc;
}

static bool is_trace_input(const cm_compile_trace_result *t, const cm_array *a) {
  for (int i = 0; i < t->nin; i++)
    if (t->inputs[i] == a) return true;
  return false;
}

/* Replace the trace's tape by the entries MLX writes: constants (leaves
 * the walk leaves out) before their first use, and a multi-output node
 * once; every entry retained. */
static int add_entry(cm_array **tape, size_t *n, cm_ptrmap *seen, cm_array *a) {
  if (cm_ptrmap_find(seen, a)) return 0;
  int m = a->prim && a->sib ? a->sib->n : 1;
  for (int j = 0; j < m; j++)
    if (!cm_ptrmap_insert(seen, m > 1 ? a->sib->out[j] : a)) return -1;
  tape[(*n)++] = cm_retain(a);
  return 0;
}

/* A node MLX has no state for that does not depend on the inputs (Eye,
 * a window, ...) is evaluated now and saved as a constant. */
static int fold_constants(cm_compile_trace_result *t) {
  cm_ptrmap dep = {0}; /* nodes that depend on an input */
  int rc = 0;
  for (int i = 0; !rc && i < t->nin; i++)
    if (!cm_ptrmap_insert(&dep, t->inputs[i])) rc = -1;
  for (size_t k = 0; !rc && k < t->len; k++) {
    cm_array *a = t->tape[k];
    if (!a->prim || is_trace_input(t, a)) continue;
    bool d = false;
    for (int i = 0; i < a->nin && !d; i++) d = cm_ptrmap_find(&dep, a->in[i]) != NULL;
    if (d) {
      for (int j = 0; j < cm_num_outputs(a) && !rc; j++)
        if (!cm_ptrmap_insert(&dep, cm_output(a, j))) rc = -1;
      continue;
    }
    xw probe = {0};
    xsave sv;
    bool ok = !cm_export_save_node(a, &probe, &sv);
    xw_free(&probe);
    cm_error_clear();
    if (!ok && cm_eval(&a, 1)) {
      cm_ptrmap_free(&dep);
      return -1;
    }
  }
  cm_ptrmap_free(&dep);
  return rc ? cm_error(CM_ERR_MEMORY, "[export_function] Out of memory.") : 0;
}

static int mlx_tape(cm_compile_trace_result *t) {
  if (cm_export_lower(t) || fold_constants(t)) return -1;
  size_t cap = 0;
  for (size_t k = 0; k < t->len; k++) cap += 1 + (size_t)t->tape[k]->nin;
  cap += (size_t)t->nout + (size_t)t->nin + 1;
  cm_array **tape = malloc(sizeof *tape * cap);
  cm_ptrmap seen = {0};
  size_t n = 0;
  int rc = tape ? 0 : -1;
  for (int i = 0; !rc && i < t->nin; i++) rc = add_entry(tape, &n, &seen, t->inputs[i]);
  for (size_t k = 0; !rc && k < t->len; k++) {
    cm_array *a = t->tape[k];
    for (int i = 0; !rc && a->prim && !is_trace_input(t, a) && i < a->nin; i++)
      if (!a->in[i]->prim) rc = add_entry(tape, &n, &seen, a->in[i]);
    if (!rc) rc = add_entry(tape, &n, &seen, a);
  }
  for (int j = 0; !rc && j < t->nout; j++)
    if (!t->outputs[j]->prim) rc = add_entry(tape, &n, &seen, t->outputs[j]);
  cm_ptrmap_free(&seen);
  if (rc) {
    for (size_t k = 0; k < n; k++) cm_release(tape[k]);
    free(tape);
    return cm_error(CM_ERR_MEMORY, "[export_function] Out of memory.");
  }
  for (size_t k = 0; k < t->len; k++) cm_release(t->tape[k]);
  free(t->tape);
  t->tape = tape, t->len = n;
  return 0;
}

static int visit_trace(cm_exporter *x, const cm_compile_trace_result *t, const char *const *keys,
                       int nkw, const bool *keep) {
  const cm_export_visitor *v = &x->v;
  int rc = v->inputs ? v->inputs(v->ctx, t->inputs, t->nin, keys, nkw) : 0;
  if (!rc && v->outputs) rc = v->outputs(v->ctx, t->outputs, t->nout);
  cm_array **consts = malloc(sizeof *consts * (t->len + 1));
  int nc = 0;
  if (!consts) rc = cm_error(CM_ERR_MEMORY, "[export_function] Out of memory.");
  for (size_t k = 0; !rc && k < t->len; k++) {
    cm_array *a = t->tape[k];
    bool is_input = is_trace_input(t, a);
    if (a->prim || is_input || cm_ptrmap_find(&x->constants, a)) continue;
    if (!cm_ptrmap_insert(&x->constants, a)) rc = cm_error(CM_ERR_MEMORY, "Out of memory.");
    else consts[nc++] = cm_retain(cm_retain(a)); /* the map's, and the visitor's */
  }
  if (!rc && v->constants) rc = v->constants(v->ctx, consts, nc);
  free(consts);
  xw none = {0};
  for (size_t k = 0; !rc && k < t->len; k++)
    if (keep[k] && t->tape[k]->prim && !is_trace_input(t, t->tape[k]))
      rc = put_node(x, &none, t->tape[k]);
  xw_free(&none);
  return rc;
}

static int write_trace(cm_exporter *x, const cm_compile_trace_result *t, const char *const *keys,
                       int nkw, const bool *keep, size_t ntape) {
  xw w = {0};
  size_t nfresh = 0;
  cm_array **fresh = malloc(sizeof *fresh * (t->len + 1));
  int rc = fresh ? 0 : cm_error(CM_ERR_MEMORY, "[export_function] Out of memory.");
  xw_u64(&w, (uint64_t)nkw);
  for (int i = 0; i < nkw; i++) xw_str(&w, keys[i], strlen(keys[i]));
  put_ids(&w, t->inputs, t->nin);
  xw_u64(&w, (uint64_t)t->nin);
  for (int i = 0; i < t->nin; i++) {
    put_shape(&w, t->inputs[i]->ndim, t->inputs[i]->shape);
    put_dtype(&w, t->inputs[i]->dtype);
  }
  put_ids(&w, t->outputs, t->nout);
  size_t extra = 0; /* the entries that bridge MLX's primitives (see put_node) */
  for (size_t k = 0; k < t->len; k++) {
    xsave sv = {0};
    xw probe = {0};
    if (keep[k] && t->tape[k]->prim && !is_trace_input(t, t->tape[k]) &&
        !cm_export_save_node(t->tape[k], &probe, &sv))
      extra += sv.batch                ? (size_t)t->tape[k]->nin + 1
               : sv.unit               ? 7
               : sv.scalar             ? 2
               : sv.reshape || sv.real ? 1
                                       : 0;
    xw_free(&probe);
  }
  xw_u64(&w, (uint64_t)(ntape + extra));
  for (size_t k = 0; !rc && k < t->len; k++) {
    cm_array *a = t->tape[k];
    if (!keep[k]) continue;
    bool is_input = is_trace_input(t, a);
    if (a->prim && !is_input) {
      rc = put_node(x, &w, a);
      continue;
    }
    xw_u64(&w, id_of(a));
    xw_u8(&w, 0);
    xw_u8(&w, !is_input);
    if (is_input || cm_ptrmap_find(&x->constants, a)) continue;
    fresh[nfresh++] = a; /* saved in the file once this trace is written */
    rc = put_constant(&w, a);
  }
  if (!rc) rc = write_bytes(x, &w);
  xw_free(&w);
  for (size_t i = 0; !rc && i < nfresh; i++)
    if (!cm_ptrmap_insert(&x->constants, fresh[i])) rc = cm_error(CM_ERR_MEMORY, "Out of memory.");
    else cm_retain(fresh[i]);
  free(fresh);
  if (!rc) rc = write_header(x);
  if (!rc && fflush(x->f))
    rc = cm_error(CM_ERR_RUNTIME, "[export_function] Failed to write the file.");
  return rc;
}

int cm_exporter_add(cm_exporter *x, cm_closure f, cm_array *const *args, int nargs,
                    const char *const *keys, cm_array *const *kwargs, int nkw) {
  if (x->closed)
    return cm_error(CM_ERR_RUNTIME,
                    "[export_function] Attempting to write after exporting is closed.");
  int *perm = malloc(sizeof *perm * (size_t)(nkw + 1));
  const char **skeys = malloc(sizeof *skeys * (size_t)(nkw + 1));
  cm_array **in = malloc(sizeof *in * (size_t)(nargs + nkw + 1));
  int rc = perm && skeys && in ? 0 : cm_error(CM_ERR_MEMORY, "[export_function] Out of memory.");
  if (!rc) rc = cm_export_sort_keys(keys, nkw, perm);
  for (int i = 0; !rc && i < nargs; i++) in[i] = args[i];
  for (int i = 0; !rc && i < nkw; i++) skeys[i] = keys[perm[i]], in[nargs + i] = kwargs[perm[i]];
  int nin = nargs + nkw;
  for (int i = 0; !rc && i < x->nsigs; i++)
    if (sig_match(&x->sigs[i], x->shapeless, in, nin, skeys, nkw))
      rc = cm_error(CM_ERR_RUNTIME, "[export_function] Attempting to export a function twice "
                                    "with the same signature is not allowed.");
  cm_compile_trace_result t = {0};
  if (!rc) {
    cm_export_tracing_push(); /* MLX's in_export_tracing (mx.fast.metal_kernel) */
    rc = cm_compile_trace(f, in, nin, x->shapeless, &t);
    cm_export_tracing_pop();
  }
  if (!rc) rc = mlx_tape(&t);
  bool *keep = rc ? NULL : malloc(t.len + 1);
  if (!rc && !keep) rc = cm_error(CM_ERR_MEMORY, "[export_function] Out of memory.");
  if (!rc) {
    size_t ntape = t.len;
    memset(keep, 1, t.len + 1);
    x->count++;
    rc = x->visitor_mode ? visit_trace(x, &t, skeys, nkw, keep)
                         : write_trace(x, &t, skeys, nkw, keep, ntape);
    if (rc) x->count--; /* the trace was not written */
  }
  if (!rc) rc = sig_add(x, in, nin, skeys, nkw);
  free(keep);
  cm_compile_trace_result_free(&t);
  free(perm), free(skeys), free(in);
  return rc;
}
