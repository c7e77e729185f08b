/* .mlxfn states of the primitives that make arrays (creation.c, random.c,
 * custom_kernel.c; the contract is export_desc.h). */
#include <stdlib.h>
#include <string.h>

#include "ops/metal_kernel.h"
#include "ops/ops.h"
#include "ops/random.h"
#include "primitives/creation.h"
#include "primitives/custom_kernel.h"
#include "primitives/export_desc.h"
#include "primitives/random.h"

/* ---- Arange: MLX's (start, stop, step) ---- */

static int save_arange(const cm_array *a, xw *w, xsave *sv) {
  const cm_arange_params *r = cm_arange_params_of(a);
  xw_f64(w, r->start), xw_f64(w, r->start + r->step * (double)a->shape[0]), xw_f64(w, r->step);
  return sv->name = "Arange", 0;
}
CM_XLOAD(load_arange) {
  double a = xr_f64(r), b = xr_f64(r), st = xr_f64(r);
  CM_XMEASURE;
  CM_XINPUTS(0, 0);
  (void)in;
  if (o->n != 1) return cm_xload_one(NULL, o, outs);
  return cm_xload_one(cm_arange(a, b, st, o->dtypes[0], s), o, outs);
}
const cm_export_desc cm_export_arange = {.save = save_arange,
                                         CM_EXPORT_NAMES({"Arange", load_arange, 0})};

/* ---- RandomBits: (shape, width); the unit form as MLX's uniform
 * composition after the bits (the writer's unit bridge) ---- */

static int save_random_bits(const cm_array *a, xw *w, xsave *sv) {
  const cm_random_bits_params *r = cm_random_bits_params_of(a);
  xw_ints(w, a->ndim, a->shape), xw_i32(w, r->width);
  sv->unit = r->unit != 0, sv->upper = r->upper;
  return sv->name = "RandomBits", 0;
}
CM_XLOAD(load_random_bits) {
  int32_t sh[CM_MAX_DIMS];
  int n = xr_ints(r, sh, CM_MAX_DIMS);
  int32_t width = xr_i32(r);
  CM_XMEASURE;
  CM_XINPUTS(1, 1);
  return cm_xload_one(cm_random_bits(n, sh, width, in[0], s), o, outs);
}
const cm_export_desc cm_export_random_bits = {.save = save_random_bits,
                                              CM_EXPORT_NAMES({"RandomBits", load_random_bits, 0})};

/* ---- CustomKernel: MLX's CustomKernel::state() (its scalar arguments
 * must be empty: MLX's CPU build records none) ---- */

static int save_custom_kernel(const cm_array *a, xw *w, xsave *sv) {
  const cm_custom_kernel_params *k = cm_custom_kernel_params_of(a);
  const uint8_t *infos = cm_custom_kernel_infos(k);
  xw_str(w, cm_custom_kernel_name(k), k->name_len);
  xw_str(w, cm_custom_kernel_source(k), k->source_len);
  for (int i = 0; i < 3; i++) xw_i32(w, k->grid[i]);
  for (int i = 0; i < 3; i++) xw_i32(w, k->threadgroup[i]);
  xw_u64(w, k->ninfos);
  for (size_t i = 0; i < 3 * (size_t)k->ninfos; i++) xw_u8(w, infos[i] != 0);
  xw_bool(w, k->ensure_row_contiguous);
  xw_u8(w, k->has_init);
  if (k->has_init) xw_f32(w, k->init_value);
  xw_u64(w, 0); /* scalar arguments */
  xw_bool(w, k->is_precompiled), xw_i32(w, k->shared_memory), xw_i32(w, k->compile_options);
  return sv->name = "CustomKernel", 0;
}
CM_XLOAD(load_custom_kernel) {
  cm_custom_kernel_params h = {0};
  size_t nlen, slen;
  const char *name = xr_str(r, &nlen), *src = xr_str(r, &slen);
  for (int i = 0; i < 3; i++) h.grid[i] = xr_i32(r);
  for (int i = 0; i < 3; i++) h.threadgroup[i] = xr_i32(r);
  uint64_t ninfos = xr_count(r, UINT32_MAX, 3);
  const unsigned char *infos = xr_take(r, 3 * (size_t)ninfos);
  h.ensure_row_contiguous = xr_bool(r);
  if ((h.has_init = xr_bool(r))) h.init_value = xr_f32(r);
  if (xr_u64(r) && !r->fail)
    return cm_error(CM_ERR_VALUE, "[import_function] CustomKernel scalar arguments are not "
                                  "supported.");
  h.is_precompiled = xr_bool(r);
  h.shared_memory = xr_i32(r), h.compile_options = xr_i32(r);
  CM_XMEASURE;
  if (nlen > UINT32_MAX || slen > UINT32_MAX)
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: CustomKernel state.");
  h.name_len = (uint32_t)nlen, h.source_len = (uint32_t)slen, h.ninfos = (uint32_t)ninfos;
  size_t size = sizeof h + 3 * (size_t)ninfos + nlen + slen;
  unsigned char *p = malloc(size);
  if (!p) return cm_error(CM_ERR_MEMORY, "[import_function] Out of memory.");
  memcpy(p, &h, sizeof h);
  for (size_t i = 0; i < 3 * (size_t)ninfos; i++) p[sizeof h + i] = infos[i] != 0;
  memcpy(p + sizeof h + 3 * (size_t)ninfos, name, nlen);
  memcpy(p + sizeof h + 3 * (size_t)ninfos + nlen, src, slen);
  int rc = cm_custom_kernel(p, size, in, nin, o->ndims, o->shapes, o->dtypes, o->n, s, outs);
  free(p);
  return rc;
}
const cm_export_desc cm_export_custom_kernel = {
    .save = save_custom_kernel, CM_EXPORT_NAMES({"CustomKernel", load_custom_kernel, 0})};
