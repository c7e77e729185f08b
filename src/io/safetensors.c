/* safetensors: an 8-byte little-endian header length, a JSON header
 * {"__metadata__": {str: str}, name: {"dtype", "shape", "data_offsets"}}
 * and the tensors' bytes.  MLX's checks (header length below 10^8 and
 * within the file, offsets consistent with dtype and shape and inside the
 * file) plus: shapes in int32 range, no two tensors overlapping, no
 * duplicate names, valid UTF-8. */
#include <stdlib.h>
#include <string.h>

#include "io/io.h"
#include "io/json.h"

static const struct {
  const char *name;
  cm_dtype dtype;
} st_types[] = {
    {"F32", CM_FLOAT32},   {"F16", CM_FLOAT16},   {"BF16", CM_BFLOAT16}, {"I64", CM_INT64},
    {"I32", CM_INT32},     {"I16", CM_INT16},     {"I8", CM_INT8},       {"U64", CM_UINT64},
    {"U32", CM_UINT32},    {"U16", CM_UINT16},    {"U8", CM_UINT8},      {"BOOL", CM_BOOL},
    {"C64", CM_COMPLEX64}, {"F8_E4M3", CM_UINT8}, {"F8_E8M0", CM_UINT8},
};

static const char *st_name(cm_dtype t) {
  for (size_t i = 0; i < 13; i++)
    if (st_types[i].dtype == t) return st_types[i].name;
  return NULL;
}

typedef struct span {
  uint64_t a, b;
  size_t idx;
} span;

static int span_cmp(const void *x, const void *y) {
  const span *p = x, *q = y;
  return p->a < q->a ? -1 : p->a > q->a ? 1 : (p->b > q->b) - (p->b < q->b);
}

static _Thread_local const char *const *sort_keys; /* what str_index_cmp compares */

static int str_index_cmp(const void *x, const void *y) {
  return strcmp(sort_keys[*(const size_t *)x], sort_keys[*(const size_t *)y]);
}

/* 0..n-1 ordered by keys[i] (bytewise, as std::string's <); NULL on OOM. */
static size_t *sorted_indices(char *const *keys, size_t n) {
  size_t *ix = malloc(sizeof *ix * (n ? n : 1));
  if (!ix) return NULL;
  for (size_t i = 0; i < n; i++) ix[i] = i;
  sort_keys = (const char *const *)keys; /* qsort has no context argument in C11 */
  qsort(ix, n, sizeof *ix, str_index_cmp);
  return ix;
}

#define ST_FAIL(...) (cm_error(CM_ERR_RUNTIME, __VA_ARGS__), -1)

static int load_tensors(cm_reader *r, const cm_json *root, uint64_t base, uint64_t size,
                        cm_stream s, cm_named_arrays *out, cm_metadata *meta) {
  /* in key order, as MLX fills its map from nlohmann's sorted objects, so
   * that the map's order (key_order.c) is MLX's */
  span *spans = calloc(root->n ? root->n : 1, sizeof *spans);
  size_t *sorted = sorted_indices(root->keys, root->n);
  if (!spans || !sorted) {
    free(spans), free(sorted);
    return cm_error(CM_ERR_MEMORY, "[load_safetensors] Out of memory.");
  }
  size_t nspans = 0;
  int rc = 0;
  for (size_t si = 0; si < root->n && !rc; si++) {
    size_t i = sorted[si];
    const char *key = root->keys[i];
    const cm_json *v = &root->items[i];
    if (!strcmp(key, "__metadata__")) {
      if (v->kind == CM_JSON_NULL) continue;
      if (v->kind != CM_JSON_OBJECT) {
        rc = ST_FAIL("[load_safetensors] __metadata__ must be an object of strings.");
        break;
      }
      size_t *msorted = sorted_indices(v->keys, v->n);
      if (!msorted) rc = cm_error(CM_ERR_MEMORY, "[load_safetensors] Out of memory.");
      for (size_t mk = 0; mk < v->n && !rc; mk++) {
        size_t k = msorted[mk];
        if (v->items[k].kind != CM_JSON_STRING)
          rc = ST_FAIL("[load_safetensors] Metadata value '%s' is not a string.", v->keys[k]);
        else if (meta && !cm_metadata_get(meta, v->keys[k]))
          rc = cm_metadata_set_string(meta, v->keys[k], v->items[k].s, v->items[k].slen);
      }
      free(msorted);
      continue;
    }
    const cm_json *dt = cm_json_get(v, "dtype"), *sh = cm_json_get(v, "shape"),
                  *off = cm_json_get(v, "data_offsets");
    if (!dt || dt->kind != CM_JSON_STRING || !sh || sh->kind != CM_JSON_ARRAY || !off ||
        off->kind != CM_JSON_ARRAY) {
      rc = ST_FAIL("[load_safetensors] Tensor '%s' needs a string \"dtype\" and arrays \"shape\" "
                   "and \"data_offsets\".",
                   key);
      break;
    }
    int t = -1;
    for (size_t k = 0; k < sizeof st_types / sizeof st_types[0]; k++)
      if (!strcmp(dt->s, st_types[k].name)) t = (int)st_types[k].dtype;
    if (t < 0) {
      rc = ST_FAIL("[safetensor] unsupported dtype %.64s", dt->s);
      break;
    }
    if (off->n != 2) {
      rc = ST_FAIL("[load_safetensors] Tensor '%s' data_offsets must have exactly 2 entries but "
                   "has %zu",
                   key, off->n);
      break;
    }
    int64_t dims[CM_MAX_DIMS];
    if (sh->n > CM_MAX_DIMS) {
      rc = ST_FAIL("[load_safetensors] Tensor '%s' has %zu dimensions (at most %d).", key, sh->n,
                   CM_MAX_DIMS);
      break;
    }
    for (size_t k = 0; k < sh->n && !rc; k++) {
      const cm_json *d = &sh->items[k];
      if (d->kind != CM_JSON_NUMBER || !d->is_uint || d->u > INT32_MAX)
        rc = ST_FAIL("[load_safetensors] Tensor '%s' has an invalid shape.", key);
      else dims[k] = (int64_t)d->u;
    }
    for (int k = 0; k < 2 && !rc; k++)
      if (off->items[k].kind != CM_JSON_NUMBER || !off->items[k].is_uint)
        rc = ST_FAIL("[load_safetensors] Tensor '%s' has invalid data offsets.", key);
    uint64_t nbytes;
    if (rc || cm_io_check_shape("load_safetensors", (int)sh->n, dims, cm_dtype_size((cm_dtype)t),
                                &nbytes)) {
      rc = -1;
      break;
    }
    uint64_t a = off->items[0].u, b = off->items[1].u;
    if (b < a || b - a != nbytes) {
      rc = ST_FAIL("[load_safetensors] Tensor '%s' invalid data offsets (%llu, %llu). Expecting "
                   "%llu bytes.",
                   key, (unsigned long long)a, (unsigned long long)b, (unsigned long long)nbytes);
      break;
    }
    if (b > size - base) {
      rc = ST_FAIL("[load_safetensors] Tensor '%s' invalid data offsets (%llu, %llu) exceeding "
                   "the size of the file. Perhaps an incomplete download or corrupt file?",
                   key, (unsigned long long)a, (unsigned long long)b);
      break;
    }
    spans[nspans++] = (span){a, b, i};
    int32_t shape[CM_MAX_DIMS];
    for (size_t k = 0; k < sh->n; k++) shape[k] = (int32_t)dims[k];
    cm_array *arr = cm_io_load_node(r, base + a, false, (cm_dtype)t, (int)sh->n, shape, s);
    if (!arr) rc = -1;
    else rc = cm_named_arrays_put(out, key, strlen(key), arr, false, "load_safetensors");
  }
  if (!rc) {
    qsort(spans, nspans, sizeof *spans, span_cmp);
    for (size_t k = 1; k < nspans && !rc; k++)
      if (spans[k].a < spans[k - 1].b)
        rc = ST_FAIL("[load_safetensors] Tensors '%s' and '%s' overlap in the file.",
                     root->keys[spans[k - 1].idx], root->keys[spans[k].idx]);
  }
  free(spans);
  free(sorted);
  return rc;
}

int cm_load_safetensors(cm_reader *r, cm_stream s, cm_named_arrays *out, cm_metadata *meta) {
  uint64_t size;
  if (cm_reader_size(r, &size)) return -1;
  unsigned char lb[8];
  if (size < 8)
    return ST_FAIL("[load_safetensors] Invalid json header length %s (the file holds %llu "
                   "bytes).",
                   r->label, (unsigned long long)size);
  if (cm_reader_read(r, lb, 8, 0)) return -1;
  uint64_t hlen = 0;
  for (int i = 7; i >= 0; i--) hlen = hlen << 8 | lb[i];
  if (hlen == 0 || hlen >= 100000000)
    return ST_FAIL("[load_safetensors] Invalid json header length %s", r->label);
  if (size - 8 < hlen)
    return ST_FAIL("[load_safetensors] The JSON header is %llu bytes long but the file is only "
                   "%llu bytes. Perhaps an incomplete download or corrupt file?",
                   (unsigned long long)hlen, (unsigned long long)size);
  char *txt = malloc(hlen);
  if (!txt) return cm_error(CM_ERR_MEMORY, "[load_safetensors] Out of memory.");
  cm_json *root = NULL;
  if (!cm_reader_read(r, txt, hlen, 8)) root = cm_json_parse(txt, hlen, "load_safetensors");
  free(txt);
  if (!root) return -1;
  int rc;
  if (root->kind != CM_JSON_OBJECT) {
    rc = ST_FAIL("[load_safetensors] Invalid json metadata %s", r->label);
  } else {
    cm_named_arrays got = {0};
    cm_metadata gm = {0};
    rc = load_tensors(r, root, 8 + hlen, size, s, &got, &gm);
    for (size_t i = 0; !rc && i < got.n; i++)
      rc = cm_named_arrays_put(out, got.keys[i], strlen(got.keys[i]), cm_retain(got.arrs[i]), true,
                               "load_safetensors");
    for (size_t i = 0; !rc && meta && i < gm.n; i++)
      rc = cm_metadata_set_string(meta, gm.keys[i], gm.vals[i].str, gm.vals[i].len);
    cm_named_arrays_clear(&got);
    cm_metadata_clear(&gm);
  }
  cm_json_free(root);
  return rc;
}

#define META_KEY "__metadata__"

/* The header "__metadata__": null, or its entries sorted. */
static bool put_metadata(cm_strbuf *h, const cm_metadata *meta, size_t *ix, int *rc) {
  bool oom = cm_strbuf_add(h, "\"" META_KEY "\":", 15) != 0;
  if (!meta || !meta->n) return oom || cm_strbuf_add(h, "null", 4);
  oom |= cm_strbuf_add(h, "{", 1) != 0;
  for (size_t k = 0; k < meta->n && !*rc; k++) {
    const cm_meta_value *v = &meta->vals[ix[k]];
    if (v->kind != CM_META_STRING) {
      *rc = cm_error(CM_ERR_VALUE, "[save_safetensors] Metadata must be a dictionary with string "
                                   "keys and values");
      break;
    }
    const char *key = meta->keys[ix[k]];
    oom |= (k && cm_strbuf_add(h, ",", 1)) || cm_json_add_string(h, key, strlen(key)) ||
           cm_strbuf_add(h, ":", 1) || cm_json_add_string(h, v->str, v->len);
  }
  return oom || cm_strbuf_add(h, "}", 1);
}

/* What MLX writes, byte for byte: the arrays' data in its map's order
 * (arrays is that view), and the header as nlohmann::json prints it, with
 * every object's keys sorted, "__metadata__" (null when empty) among the
 * tensors' and no padding. */
static int save_ordered(cm_writer *w, const cm_named_arrays *arrays, const cm_metadata *meta) {
  size_t n = arrays->n, nm = meta ? meta->n : 0;
  cm_array **c = calloc(n ? n : 1, sizeof *c);
  uint64_t *off = calloc(n + 1, sizeof *off);
  /* the header's keys: the arrays', then "__metadata__" unless a tensor has that name */
  char **keys = calloc(n + 1, sizeof *keys);
  size_t *ix = NULL, *mix = NULL;
  int rc = c && off && keys ? 0 : cm_error(CM_ERR_MEMORY, "[save_safetensors] Out of memory.");
  for (size_t i = 0; i < n && !rc; i++) {
    if (!st_name(arrays->arrs[i]->dtype))
      rc = ST_FAIL("[save_safetensors] received invalid dtype.");
    else if (!(c[i] = cm_io_row_contiguous(arrays->arrs[i], "save_safetensors"))) rc = -1;
    else off[i + 1] = off[i] + cm_nbytes(c[i]);
  }
  size_t nk = n;
  bool meta_named = false;
  for (size_t i = 0; !rc && i < n; i++) {
    keys[i] = arrays->keys[i];
    meta_named |= !strcmp(keys[i], META_KEY);
  }
  if (!rc && !meta_named) keys[nk++] = META_KEY;
  if (!rc &&
      (!(ix = sorted_indices(keys, nk)) || !(mix = sorted_indices(meta ? meta->keys : NULL, nm))))
    rc = cm_error(CM_ERR_MEMORY, "[save_safetensors] Out of memory.");
  cm_strbuf h = {0};
  bool oom = !rc && cm_strbuf_add(&h, "{", 1);
  for (size_t k = 0; k < nk && !rc; k++) {
    size_t i = ix[k];
    if (k) oom |= cm_strbuf_add(&h, ",", 1) != 0;
    if (i == n) {
      oom |= put_metadata(&h, meta, mix, &rc);
      continue;
    }
    oom |= cm_json_add_string(&h, keys[i], strlen(keys[i])) ||
           cm_strbuf_addf(&h, ":{\"data_offsets\":[%llu,%llu],\"dtype\":\"%s\",\"shape\":[",
                          (unsigned long long)off[i], (unsigned long long)off[i + 1],
                          st_name(c[i]->dtype));
    for (int d = 0; d < c[i]->ndim; d++)
      oom |= cm_strbuf_addf(&h, d ? ",%d" : "%d", c[i]->shape[d]) != 0;
    oom |= cm_strbuf_add(&h, "]}", 2) != 0;
  }
  oom |= !rc && cm_strbuf_add(&h, "}", 1);
  if (!rc && oom) rc = cm_error(CM_ERR_MEMORY, "[save_safetensors] Out of memory.");
  if (!rc) {
    unsigned char lb[8];
    for (int i = 0; i < 8; i++) lb[i] = (unsigned char)((uint64_t)h.len >> (8 * i));
    rc = cm_writer_put(w, lb, 8) || cm_writer_put(w, h.p, h.len) ? -1 : 0;
  }
  for (size_t i = 0; i < n && !rc; i++)
    if (cm_nbytes(c[i])) rc = cm_writer_put(w, cm_data(c[i]), cm_nbytes(c[i]));
  for (size_t i = 0; c && i < n; i++)
    if (c[i]) cm_release(c[i]);
  free(c), free(off), free(keys), free(ix), free(mix);
  free(h.p);
  return rc;
}

int cm_save_safetensors(cm_writer *w, const cm_named_arrays *arrays, const cm_metadata *meta) {
  cm_named_arrays ordered;
  if (cm_named_arrays_map_order(arrays, &ordered)) return -1;
  int rc = save_ordered(w, &ordered, meta);
  cm_map_order_view_free(ordered.keys, ordered.arrs);
  return rc;
}

int cm_save_safetensors_path(const char *path, const cm_named_arrays *arrays,
                             const cm_metadata *meta) {
  cm_writer w;
  if (cm_writer_path("save_safetensors", path, ".safetensors", &w)) return -1;
  return cm_writer_finish(&w, cm_save_safetensors(&w, arrays, meta));
}
