/* The generic halves of primitives/export_desc.h: the field-list writer
 * and reader, and the helpers every loader shares. */
#include <string.h>

#include "primitives/export_desc.h"

int cm_export_unsupported(const cm_array *a) {
  char buf[64];
  return cm_error(CM_ERR_VALUE, "[export_function] Unable to serialize primitive %s",
                  cm_export_display_name(a, buf, sizeof buf));
}

int cm_export_save_node(const cm_array *node, xw *w, xsave *sv) {
  const cm_array *a = node->sib ? node->sib->out[0] : node;
  const cm_export_desc *d = a->prim ? a->prim->export : NULL;
  memset(sv, 0, sizeof *sv);
  if (!d || (!d->save && !d->make)) return cm_export_unsupported(a);
  return d->save ? d->save(a, w, sv) : cm_export_save_fields(a, w, sv);
}

/* A block's integer field of size bytes (enums and ints are 4, flags 1). */
static int64_t field_int(const unsigned char *p, size_t size) {
  switch (size) {
  case 1: return *p;
  case 2: {
    int16_t v;
    memcpy(&v, p, 2);
    return v;
  }
  case 4: {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
  }
  default: {
    int64_t v;
    memcpy(&v, p, 8);
    return v;
  }
  }
}

int cm_export_save_fields(const cm_array *a, xw *w, xsave *sv) {
  const cm_export_desc *d = a->prim->export;
  const unsigned char *p =
      d->params_size
          ? cm_params_checked(a->params, a->params_size, d->params_size, a->prim, d->params_type)
          : NULL;
  for (int i = 0; i < d->nfields; i++) {
    const cm_export_field *f = &d->fields[i];
    switch ((cm_export_kind)f->kind) {
    case CM_XF_I32: xw_i32(w, (int32_t)field_int(p + f->offset, f->size)); break;
    case CM_XF_BOOL: xw_bool(w, field_int(p + f->offset, f->size) != 0); break;
    case CM_XF_F32: {
      float v;
      memcpy(&v, p + f->offset, sizeof v);
      xw_f32(w, v);
      break;
    }
    case CM_XF_OUT_TYPE: xw_dtype(w, a->dtype); break;
    case CM_XF_FALSE: xw_bool(w, false); break;
    }
  }
  sv->name = d->name;
  return 0;
}

int cm_export_load_fields(xr *r, int code, cm_array *const *in, int nin, const xout *o,
                          cm_array **outs, cm_stream s) {
  const cm_export_desc *d = cm_export_prims[code]->export;
  cm_xval v[CM_EXPORT_MAX_FIELDS] = {{0}};
  for (int i = 0; i < d->nfields && i < CM_EXPORT_MAX_FIELDS; i++) {
    switch ((cm_export_kind)d->fields[i].kind) {
    case CM_XF_I32: v[i].i = xr_i32(r); break;
    case CM_XF_BOOL:
    case CM_XF_FALSE: v[i].b = xr_bool(r); break;
    case CM_XF_F32: v[i].f = xr_f32(r); break;
    case CM_XF_OUT_TYPE: v[i].t = xr_dtype(r); break;
    }
  }
  CM_XMEASURE;
  CM_XINPUTS(d->nin_lo, d->nin_hi);
  return d->make(v, in, nin, o, outs, s);
}

/* ---- loader helpers ---- */

int cm_xload_bad(const char *what) {
  return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: %s.", what);
}

int cm_xload_one(cm_array *x, const xout *o, cm_array **outs) {
  if (!x) return -1;
  if (o->n != 1) {
    cm_release(x);
    return cm_xload_bad("wrong output count");
  }
  outs[0] = x;
  return 0;
}

int cm_xload_results(cm_array **got, int n, const xout *o, cm_array **outs) {
  bool made = true;
  for (int i = 0; i < n; i++) made = made && got[i];
  if (!made || n != o->n) {
    for (int i = 0; i < n; i++) cm_release(got[i]);
    return made ? cm_xload_bad("wrong output count") : -1;
  }
  memcpy(outs, got, sizeof *outs * (size_t)n);
  return 0;
}

int cm_xload_need(int nin, int lo, int hi) {
  return nin < lo || nin > hi ? cm_xload_bad("wrong input count") : 0;
}

int cm_xload_check_axes(int n, const int32_t *ax, int ndim) {
  for (int i = 0; i < n; i++)
    if (ax[i] < 0 || ax[i] >= ndim) return cm_xload_bad("an axis out of range");
  return 0;
}

int cm_export_mask_axes(uint64_t mask, int ndim, int32_t *axes) {
  int n = 0;
  for (int i = 0; i < ndim && i < 64; i++)
    if (mask >> i & 1) axes[n++] = i;
  return n;
}

int cm_export_index_of(const int *table, int n, int v) {
  for (int i = 0; i < n; i++)
    if (table[i] == v) return i;
  return -1;
}
