/* Reading .mlxfn files and calling what they hold (see export.h; the
 * layout is described in export.c).  The whole file is checked when it
 * is read: every primitive is rebuilt once on placeholders of the
 * recorded inputs and its outputs compared with the recorded shapes and
 * dtypes, so a call can only fail where an op would. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ops/common.h"
#include "transforms/export_impl.h"
#include "transforms/ptrmap.h"

/* ---- importing ------------------------------------------------------------ */

typedef struct xnode {
  xloader load;
  size_t name_off, name_len; /* in the file's bytes */
  size_t state_off, state_len;
  int nin, nout;
  int *in;  /* slots */
  int *out; /* slots, one per output */
  cm_dtype *dt;
  int *nd;
  int32_t *sh; /* CM_MAX_DIMS per output */
  const int32_t **shp;
} xnode;

typedef struct xfunc {
  int nin, nkw;
  char **kw;
  cm_dtype *in_dt;
  int *in_nd;
  int32_t *in_sh; /* CM_MAX_DIMS per input */
  int nslots;
  cm_array **consts; /* slot -> constant (retained) or NULL */
  int consts_cap;    /* entries of consts: a bad file can stop with nslots beyond it */
  int nnodes;
  xnode *nodes;
  int nout;
  int *out; /* slots */
} xfunc;

struct cm_imported {
  cm_buffer *buf; /* owns data when set */
  unsigned char *data;
  size_t len;
  bool shapeless;
  char *metadata;
  size_t mlen;
  int nfun;
  xfunc *funs;
};

static void xfunc_free(xfunc *f) {
  for (int i = 0; i < f->nkw; i++) free(f->kw[i]);
  free(f->kw), free(f->in_dt), free(f->in_nd), free(f->in_sh);
  for (int i = 0; i < f->nslots && i < f->consts_cap; i++) cm_release(f->consts[i]);
  free(f->consts);
  for (int i = 0; i < f->nnodes; i++) {
    xnode *n = &f->nodes[i];
    free(n->in), free(n->out), free(n->dt), free(n->nd), free(n->sh), free(n->shp);
  }
  free(f->nodes);
  free(f->out);
}

void cm_imported_free(cm_imported *f) {
  if (!f) return;
  for (int i = 0; i < f->nfun; i++) xfunc_free(&f->funs[i]);
  free(f->funs);
  free(f->metadata);
  if (f->buf) cm_buffer_release(f->buf);
  else free(f->data);
  free(f);
}

const char *cm_imported_metadata(const cm_imported *f, size_t *len) {
  *len = f->mlen;
  return f->metadata ? f->metadata : "";
}

/* id -> slot + 1 */
typedef struct idmap {
  cm_ptrmap m;
} idmap;

static int slot_of(xr *r, idmap *ids, uint64_t id) {
  void **v = id ? cm_ptrmap_find(&ids->m, (void *)(uintptr_t)id) : NULL;
  if (!v) {
    xr_bad(r, "an array id that no earlier entry defines");
    return -1;
  }
  return (int)(intptr_t)*v - 1;
}

static int new_slot(xr *r, idmap *ids, uint64_t id, int *nslots) {
  if (!id) return xr_bad(r, "an array id of 0"), -1;
  if (cm_ptrmap_find(&ids->m, (void *)(uintptr_t)id))
    return xr_bad(r, "an array id defined twice"), -1;
  void **v = cm_ptrmap_insert(&ids->m, (void *)(uintptr_t)id);
  if (!v) return xr_bad(r, "out of memory"), -1;
  *v = (void *)(intptr_t)(*nslots + 1);
  return (*nslots)++;
}

static bool grow(void **p, int *cap, int need, size_t each) {
  if (need <= *cap) return true;
  int c = *cap ? *cap : 16;
  while (c < need) c *= 2;
  void *q = realloc(*p, each * (size_t)c);
  if (!q) return false;
  memset((char *)q + each * (size_t)*cap, 0, each * (size_t)(c - *cap));
  *p = q, *cap = c;
  return true;
}

static int64_t shape_elems(int nd, const int32_t *sh) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++) {
    if (sh[i] && n > INT64_MAX / sh[i]) return -1;
    n *= sh[i];
  }
  return n;
}

/* Constants are shared by the file's traces (by id). */
typedef struct constmap {
  cm_ptrmap m;    /* id -> constant array */
  cm_buffer *buf; /* the file's bytes, shared with the constants */
} constmap;

static int read_entry(xr *r, xfunc *f, idmap *ids, constmap *cs, int *slots_cap, int *nodes_cap) {
  uint64_t id = xr_u64(r);
  bool has_prim = xr_bool(r);
  if (r->fail) return -1;
  if (!has_prim) {
    bool is_const = xr_bool(r);
    if (r->fail) return -1;
    if (!is_const) { /* a function input, in the map already */
      slot_of(r, ids, id);
      return r->fail ? -1 : 0;
    }
    cm_array *c = NULL;
    void **found = id ? cm_ptrmap_find(&cs->m, (void *)(uintptr_t)id) : NULL;
    if (found) c = cm_retain(*found);
    else {
      int32_t sh[CM_MAX_DIMS];
      int nd = xr_shape(r, sh);
      cm_dtype t = xr_dtype(r);
      int64_t n = r->fail ? 0 : shape_elems(nd, sh);
      if (n < 0 || (uint64_t)n > (r->len - r->pos) / cm_dtype_size(t))
        xr_bad(r, "a constant's data is cut short");
      const unsigned char *p = r->fail ? NULL : xr_take(r, (size_t)n * cm_dtype_size(t));
      if (r->fail) return -1;
      /* aligned data is used where it lies in the file's buffer */
      size_t align = cm_dtype_size(t);
      if (cs->buf && n && (uintptr_t)p % align == 0)
        c = cm_array_from_buffer(cs->buf, (int64_t)(p - (const unsigned char *)cs->buf->ptr), nd,
                                 sh, NULL, t);
      else c = cm_array_from_data(p, nd, sh, t);
      if (!c) return xr_bad(r, "out of memory"), -1;
      void **v = id ? cm_ptrmap_insert(&cs->m, (void *)(uintptr_t)id) : NULL;
      if (!v) {
        cm_release(c);
        return xr_bad(r, id ? "out of memory" : "an array id of 0"), -1;
      }
      *v = cm_retain(c);
    }
    int s = new_slot(r, ids, id, &f->nslots);
    if (s < 0 || !grow((void **)&f->consts, slots_cap, f->nslots, sizeof *f->consts)) {
      cm_release(c);
      return xr_bad(r, "out of memory"), -1;
    }
    f->consts[s] = c;
    return 0;
  }
  if (!grow((void **)&f->nodes, nodes_cap, f->nnodes + 1, sizeof *f->nodes))
    return xr_bad(r, "out of memory"), -1;
  xnode *n = &f->nodes[f->nnodes++];
  uint64_t nin = xr_count(r, 1 << 20, 8);
  n->in = malloc(sizeof *n->in * (size_t)(nin + 1));
  if (!n->in) return xr_bad(r, "out of memory"), -1;
  for (uint64_t i = 0; i < nin && !r->fail; i++) n->in[n->nin++] = slot_of(r, ids, xr_u64(r));
  xr_i32(r), xr_i32(r), xr_i32(r); /* the stream: every node runs on the default one */
  size_t nlen;
  const char *name = xr_str(r, &nlen);
  if (r->fail) return -1;
  if (!(n->load = cm_export_find_loader(name, nlen)).load) {
    cm_error(CM_ERR_VALUE, "[import_function] Unable to deserialize primitive %.*s",
             (int)(nlen > 200 ? 200 : nlen), name);
    r->why = NULL;
    r->fail = true;
    return -1;
  }
  n->name_off = (size_t)(name - (const char *)r->p), n->name_len = nlen > 64 ? 64 : nlen;
  n->state_off = r->pos;
  /* the state has no length of its own: the loader reads it on a dry run
   * (see check_function); here it is skipped by the same loader */
  return 1;
}

/* The rest of a primitive entry, after its state (r->pos past it). */
static int read_outputs(xr *r, xfunc *f, xnode *n, idmap *ids, uint64_t id, int *slots_cap) {
  uint64_t nsib = xr_u64(r);
  if (r->fail) return -1;
  if (nsib > (1 << 16)) return xr_bad(r, "too many outputs"), -1;
  /* then, for a multi-output node, the ids of all its outputs */
  uint64_t nids = nsib ? xr_count(r, 1 << 16, 8) : 1;
  if (r->fail) return -1;
  if (!nids) return xr_bad(r, "a node without outputs"), -1;
  int m = (int)nids;
  n->nout = m;
  n->out = malloc(sizeof *n->out * (size_t)m);
  n->dt = malloc(sizeof *n->dt * (size_t)m);
  n->nd = malloc(sizeof *n->nd * (size_t)m);
  n->sh = malloc(sizeof *n->sh * CM_MAX_DIMS * (size_t)m);
  n->shp = malloc(sizeof *n->shp * (size_t)m);
  if (!n->out || !n->dt || !n->nd || !n->sh || !n->shp) return xr_bad(r, "out of memory"), -1;
  for (int k = 0; k < m; k++) n->shp[k] = n->sh + (size_t)k * CM_MAX_DIMS;
  if (!nsib) {
    n->nd[0] = xr_shape(r, n->sh);
    n->dt[0] = xr_dtype(r);
    n->out[0] = new_slot(r, ids, id, &f->nslots);
  } else {
    bool self = false;
    for (int k = 0; k < m && !r->fail; k++) {
      uint64_t sid = xr_u64(r);
      self = self || sid == id;
      n->out[k] = new_slot(r, ids, sid, &f->nslots);
    }
    if (!r->fail && !self) xr_bad(r, "a node whose id is none of its outputs'");
    if (xr_count(r, nids, 8) != nids) xr_bad(r, "output counts disagree");
    for (int k = 0; k < m && !r->fail; k++) n->nd[k] = xr_shape(r, n->sh + (size_t)k * CM_MAX_DIMS);
    if (xr_count(r, nids, 5) != nids) xr_bad(r, "output counts disagree");
    for (int k = 0; k < m && !r->fail; k++) n->dt[k] = xr_dtype(r);
  }
  if (!r->fail && !grow((void **)&f->consts, slots_cap, f->nslots, sizeof *f->consts))
    xr_bad(r, "out of memory");
  return r->fail ? -1 : 0;
}

static int placeholder_eval(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)out, (void)in, (void)nin, (void)p;
  return cm_error(CM_ERR_VALUE, "[import_function] A placeholder cannot be evaluated.");
}
static const cm_prim import_placeholder = {.name = "ImportPlaceholder", .eval = placeholder_eval};

/* Run node n's loader on vals (its state read from data). */
static int run_node(const unsigned char *data, const xnode *n, cm_array **vals, cm_stream s,
                    size_t *state_end) {
  cm_array *il[8], **ins = n->nin <= 8 ? il : malloc(sizeof *ins * (size_t)n->nin);
  cm_array **outs = calloc((size_t)n->nout, sizeof *outs);
  int rc = ins && outs ? 0 : cm_error(CM_ERR_MEMORY, "[import_function] Out of memory.");
  for (int i = 0; !rc && i < n->nin; i++) ins[i] = vals[n->in[i]];
  xr r = {.p = data + n->state_off, .len = n->state_len};
  xout o = {n->nout, n->dt, n->nd, n->shp};
  if (!rc) rc = n->load.load(&r, n->load.code, ins, n->nin, &o, outs, s);
  if (!rc && r.fail) {
    rc = cm_error(CM_ERR_VALUE, "[import_function] Invalid file: %s.", r.why ? r.why : "bad state");
  }
  if (state_end) *state_end = r.pos;
  for (int k = 0; k < n->nout; k++) {
    if (!rc) vals[n->out[k]] = outs[k];
    else cm_release(outs[k]);
  }
  free(outs);
  if (ins != il) free(ins);
  return rc;
}

static int read_function(cm_imported *im, xr *r, xfunc *f, constmap *cs) {
  uint64_t nkw = xr_count(r, 1 << 20, 8);
  f->kw = calloc((size_t)nkw + 1, sizeof *f->kw);
  if (!f->kw) return xr_bad(r, "out of memory"), -1;
  for (uint64_t i = 0; i < nkw && !r->fail; i++) {
    size_t len;
    const char *k = xr_str(r, &len);
    if (r->fail || !(f->kw[f->nkw] = malloc(len + 1))) return xr_bad(r, "out of memory"), -1;
    memcpy(f->kw[f->nkw], k, len);
    f->kw[f->nkw++][len] = 0;
  }
  idmap ids = {0};
  int nodes_cap = 0;
  uint64_t nin = xr_count(r, 1 << 20, 8);
  if (!r->fail && nin < nkw) xr_bad(r, "more keywords than inputs");
  uint64_t *in_ids = malloc(sizeof *in_ids * (size_t)(nin + 1));
  f->in_dt = malloc(sizeof *f->in_dt * (size_t)(nin + 1));
  f->in_nd = malloc(sizeof *f->in_nd * (size_t)(nin + 1));
  f->in_sh = malloc(sizeof *f->in_sh * CM_MAX_DIMS * (size_t)(nin + 1));
  if (!in_ids || !f->in_dt || !f->in_nd || !f->in_sh) xr_bad(r, "out of memory");
  for (uint64_t i = 0; i < nin && !r->fail; i++) in_ids[i] = xr_u64(r);
  if (!r->fail && xr_count(r, nin, 5) != nin) xr_bad(r, "input counts disagree");
  f->nin = r->fail ? 0 : (int)nin;
  for (int i = 0; i < f->nin && !r->fail; i++) {
    f->in_nd[i] = xr_shape(r, f->in_sh + (size_t)i * CM_MAX_DIMS);
    f->in_dt[i] = xr_dtype(r);
    new_slot(r, &ids, in_ids[i], &f->nslots);
  }
  free(in_ids);
  if (!r->fail && !grow((void **)&f->consts, &f->consts_cap, f->nslots, sizeof *f->consts))
    xr_bad(r, "out of memory");
  uint64_t nout = xr_count(r, 1 << 20, 8);
  uint64_t *out_ids = malloc(sizeof *out_ids * (size_t)(nout + 1));
  if (!out_ids) xr_bad(r, "out of memory");
  for (uint64_t i = 0; i < nout && !r->fail; i++) out_ids[i] = xr_u64(r);
  uint64_t ntape = xr_count(r, UINT64_MAX, 9);
  /* The dry run: every primitive built on placeholders (and the file's
   * constants), checking states, shapes and dtypes against the file. */
  cm_array **vals = NULL;
  int vals_cap = 0, rc = r->fail ? -1 : 0;
  for (int i = 0; !rc && i < f->nin; i++) {
    if (!grow((void **)&vals, &vals_cap, f->nslots, sizeof *vals))
      rc = -1, xr_bad(r, "out of memory");
    else if (!(vals[i] = cm_node_new(f->in_dt[i], f->in_nd[i], f->in_sh + (size_t)i * CM_MAX_DIMS,
                                     &import_placeholder, NULL, 0, NULL, 0, CM_STREAM_DEFAULT)))
      rc = -1;
  }
  cm_stream s = CM_STREAM_DEFAULT;
  if (!rc && cm_op_stream(&s)) rc = -1;
  for (uint64_t k = 0; !rc && k < ntape; k++) {
    size_t at = r->pos;
    uint64_t id = r->len - at >= 8 ? xr_u64(&(xr){.p = r->p + at, .len = 8}) : 0;
    int e = read_entry(r, f, &ids, cs, &f->consts_cap, &nodes_cap);
    if (e < 0) {
      rc = -1;
      break;
    }
    if (e == 0) {
      if (!grow((void **)&vals, &vals_cap, f->nslots, sizeof *vals))
        rc = -1, xr_bad(r, "out of memory");
      else if (f->consts[f->nslots - 1] && !vals[f->nslots - 1] && f->consts[f->nslots - 1])
        vals[f->nslots - 1] = cm_retain(f->consts[f->nslots - 1]);
      continue;
    }
    xnode *n = &f->nodes[f->nnodes - 1];
    for (int i = 0; i < n->nin; i++)
      if (!vals || !vals[n->in[i]]) rc = -1, xr_bad(r, "an input used before it is defined");
    if (rc) break;
    /* Measure: a loader called with o->n == 0 reads its state and
     * returns without building (see primitives/export_desc.h). */
    xr sr = {.p = r->p + n->state_off, .len = r->len - n->state_off};
    xout none = {0};
    if (n->load.load(&sr, n->load.code, NULL, 0, &none, NULL, s) || sr.fail) {
      rc = sr.fail ? cm_error(CM_ERR_VALUE, "[import_function] Invalid file: %s.",
                              sr.why ? sr.why : "a bad primitive state")
                   : -1;
      break;
    }
    n->state_len = sr.pos;
    r->pos = n->state_off + n->state_len;
    if (read_outputs(r, f, n, &ids, id, &f->consts_cap)) {
      rc = -1;
      break;
    }
    if (!grow((void **)&vals, &vals_cap, f->nslots, sizeof *vals)) {
      rc = -1, xr_bad(r, "out of memory");
      break;
    }
    if (run_node(im->data, n, vals, s, NULL)) {
      rc = -1;
      break;
    }
    for (int j = 0; j < n->nout; j++) {
      cm_array *a = vals[n->out[j]];
      if (a->dtype != n->dt[j] || !cm_shape_equal(a->ndim, a->shape, n->nd[j], n->shp[j])) {
        char got[256], want[256];
        rc =
            cm_error(CM_ERR_VALUE,
                     "[import_function] Invalid file: %.*s gives %s %s where the file records "
                     "%s %s.",
                     (int)n->name_len, (const char *)im->data + n->name_off,
                     cm_shape_str(got, sizeof got, a->ndim, a->shape), cm_dtype_name(a->dtype),
                     cm_shape_str(want, sizeof want, n->nd[j], n->shp[j]), cm_dtype_name(n->dt[j]));
        break;
      }
    }
  }
  if (!rc && !r->fail) {
    f->out = malloc(sizeof *f->out * (size_t)(nout + 1));
    if (!f->out) xr_bad(r, "out of memory");
    for (uint64_t i = 0; i < nout && !r->fail; i++) {
      int sl = slot_of(r, &ids, out_ids[i]);
      if (sl >= 0 && (!vals || !vals[sl])) xr_bad(r, "an output that is never defined");
      f->out[f->nout++] = sl;
    }
  }
  for (int i = 0; vals && i < f->nslots && i < vals_cap; i++) cm_release(vals[i]);
  free(vals);
  free(out_ids);
  cm_ptrmap_free(&ids.m);
  return rc || r->fail ? -1 : 0;
}

static cm_imported *parse(unsigned char *data, size_t len) {
  cm_imported *im = calloc(1, sizeof *im);
  if (!im) {
    free(data);
    return cm_error(CM_ERR_MEMORY, "[import_function] Out of memory."), NULL;
  }
  im->data = data, im->len = len;
  im->buf = cm_buffer_wrap(data, len ? len : 1, free, data); /* NULL: constants are copied */
  xr r = {.p = data, .len = len};
  size_t vlen;
  xr_str(&r, &vlen); /* MLX's version: MLX does not check it either */
  int32_t nfun = xr_i32(&r);
  im->shapeless = xr_bool(&r);
  size_t mlen;
  const char *meta = xr_str(&r, &mlen);
  if (!r.fail && (nfun < 0 || (size_t)nfun > len)) xr_bad(&r, "an invalid function count");
  if (!r.fail && mlen && (im->metadata = malloc(mlen))) memcpy(im->metadata, meta, mlen);
  im->mlen = im->metadata ? mlen : 0;
  if (!r.fail && nfun && !(im->funs = calloc((size_t)nfun, sizeof *im->funs)))
    xr_bad(&r, "out of memory");
  constmap cs = {.buf = im->buf};
  int rc = r.fail ? -1 : 0;
  for (int i = 0; !rc && i < nfun; i++) {
    im->nfun++;
    rc = read_function(im, &r, &im->funs[i], &cs);
  }
  for (size_t i = 0; i < cs.m.cap; i++)
    if (cs.m.keys[i]) cm_release((cm_array *)cs.m.vals[i]);
  cm_ptrmap_free(&cs.m);
  if (rc || r.fail) {
    if (r.fail && r.why)
      cm_error(CM_ERR_VALUE, "[import_function] Invalid or truncated file: %s.", r.why);
    else if (r.fail && !cm_error_message()[0])
      cm_error(CM_ERR_VALUE, "[import_function] Invalid file.");
    cm_imported_free(im);
    return NULL;
  }
  return im;
}

cm_imported *cm_import_function_bytes(const unsigned char *data, size_t len) {
  unsigned char *d = malloc(len ? len : 1);
  if (!d) return cm_error(CM_ERR_MEMORY, "[import_function] Out of memory."), NULL;
  if (len) memcpy(d, data, len);
  return parse(d, len);
}

cm_imported *cm_import_function(const char *file) {
  FILE *fp = fopen(file, "rb");
  if (!fp) return cm_error(CM_ERR_RUNTIME, "[import_function] Failed to open %s", file), NULL;
  long size = fseek(fp, 0, SEEK_END) ? -1 : ftell(fp);
  unsigned char *d = size >= 0 && !fseek(fp, 0, SEEK_SET) ? malloc((size_t)size + 1) : NULL;
  size_t len = d ? fread(d, 1, (size_t)size, fp) : 0;
  bool bad = !d || ferror(fp) || len != (size_t)size;
  fclose(fp);
  if (bad) {
    free(d);
    return cm_error(CM_ERR_RUNTIME, "[import_function] Failed to read %s", file), NULL;
  }
  return parse(d, len);
}

/* ---- calling -------------------------------------------------------------- */

static bool func_match(const cm_imported *im, const xfunc *f, cm_array *const *in, int nin,
                       const char *const *keys, int nkw) {
  xsig v = {f->nin, f->nkw, f->kw, f->in_dt, f->in_nd, f->in_sh};
  return xsig_match(&v, im->shapeless, in, nin, keys, nkw);
}

static size_t append(char *buf, size_t size, size_t at, const char *fmt, ...) {
  if (at >= size) return at;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + at, size - at, fmt, ap);
  va_end(ap);
  return n < 0 ? at : at + (size_t)n;
}

static size_t describe(char *buf, size_t size, size_t at, const char *lead, int idx,
                       const char *key, cm_dtype t, int nd, const int32_t *sh) {
  char s[256];
  if (key) at = append(buf, size, at, "%s\"%s\": ", lead, key);
  else at = append(buf, size, at, "%s%d: ", lead, idx);
  return append(buf, size, at, "%s %s\n", cm_shape_str(s, sizeof s, nd, sh), cm_dtype_name(t));
}

static int no_match(const cm_imported *im, cm_array *const *args, int nargs,
                    const char *const *keys, cm_array *const *kwargs, int nkw) {
  size_t size = 8192, at = 0;
  char *m = malloc(size);
  if (!m) return cm_error(CM_ERR_VALUE, "[import_function::call] No imported function found.");
  at = append(m, size, at,
              "[import_function::call] No imported function found which matches the given "
              "positional and keyword arguments. Possible functions include:\n");
  for (int i = 0; i < im->nfun; i++) {
    const xfunc *f = &im->funs[i];
    int npos = f->nin - f->nkw;
    at = append(m, size, at, " %d. Function with %d positional inputs and %d keyword inputs:\n",
                i + 1, npos, f->nkw);
    for (int j = 0; j < f->nin; j++)
      at = describe(m, size, at, "   ", j + 1, j < npos ? NULL : f->kw[j - npos], f->in_dt[j],
                    f->in_nd[j], f->in_sh + (size_t)j * CM_MAX_DIMS);
  }
  at = append(m, size, at, "\nCalled with %d positional inputs and %d keyword inputs:\n", nargs,
              nkw);
  for (int i = 0; i < nargs; i++)
    at = describe(m, size, at, "  ", i + 1, NULL, args[i]->dtype, args[i]->ndim, args[i]->shape);
  for (int i = 0; i < nkw; i++)
    at = describe(m, size, at, "  ", 0, keys[i], kwargs[i]->dtype, kwargs[i]->ndim,
                  kwargs[i]->shape);
  cm_error(CM_ERR_VALUE, "%s", m);
  free(m);
  return -1;
}

int cm_imported_call(const cm_imported *im, cm_array *const *args, int nargs,
                     const char *const *keys, cm_array *const *kwargs, int nkw, cm_array ***outs,
                     int *nout) {
  int *perm = malloc(sizeof *perm * (size_t)(nkw + 1));
  const char **skeys = malloc(sizeof *skeys * (size_t)(nkw + 1));
  cm_array **in = malloc(sizeof *in * (size_t)(nargs + nkw + 1));
  int rc = perm && skeys && in ? 0 : cm_error(CM_ERR_MEMORY, "[import_function] Out of memory.");
  if (!rc) rc = cm_export_sort_keys(keys, nkw, perm);
  for (int i = 0; !rc && i < nargs; i++) in[i] = args[i];
  for (int i = 0; !rc && i < nkw; i++) skeys[i] = keys[perm[i]], in[nargs + i] = kwargs[perm[i]];
  const xfunc *f = NULL;
  for (int i = 0; !rc && i < im->nfun && !f; i++)
    if (func_match(im, &im->funs[i], in, nargs + nkw, skeys, nkw)) f = &im->funs[i];
  if (!rc && !f) rc = no_match(im, args, nargs, keys, kwargs, nkw);
  cm_array **vals = NULL, **res = NULL;
  cm_stream s = CM_STREAM_DEFAULT;
  if (!rc && cm_op_stream(&s)) rc = -1;
  if (!rc && !(vals = calloc((size_t)f->nslots + 1, sizeof *vals)))
    rc = cm_error(CM_ERR_MEMORY, "[import_function] Out of memory.");
  for (int i = 0; !rc && i < f->nslots; i++)
    vals[i] = i < f->nin ? cm_retain(in[i]) : cm_retain(f->consts[i]);
  for (int k = 0; !rc && k < f->nnodes; k++) rc = run_node(im->data, &f->nodes[k], vals, s, NULL);
  if (!rc && !(res = calloc((size_t)f->nout + 1, sizeof *res)))
    rc = cm_error(CM_ERR_MEMORY, "[import_function] Out of memory.");
  for (int j = 0; !rc && j < f->nout; j++) res[j] = cm_retain(vals[f->out[j]]);
  for (int i = 0; vals && i < f->nslots; i++) cm_release(vals[i]);
  free(vals);
  free(perm), free(skeys), free(in);
  if (rc) return -1;
  *outs = res;
  *nout = f->nout;
  return 0;
}
