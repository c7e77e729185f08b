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

#define ST_FAIL(...) (cm_error(CM_ERR_RUNTIME, __VA_ARGS__), -1)

static int load_tensors(cm_reader *r, const cm_json *root, uint64_t base, uint64_t size,
                        cm_stream s, cm_named_arrays *out, cm_metadata *meta) {
  span *spans = calloc(root->n ? root->n : 1, sizeof *spans);
  if (!spans) return cm_error(CM_ERR_MEMORY, "[load_safetensors] Out of memory.");
  size_t nspans = 0;
  int rc = 0;
  for (size_t i = 0; i < root->n && !rc; i++) {
    const char *key = root->keys[i];
    const cm_json *v = &root->items[i];
    if (!strcmp(key, "__metadata__")) {
      if (v->kind == CM_JSON_NULL) continue;
      if (v->kind != CM_JSON_OBJECT) {
        rc = ST_FAIL("[load_safetensors] __metadata__ must be an object of strings.");
        break;
      }
      for (size_t k = 0; k < v->n && !rc; k++) {
        if (v->items[k].kind != CM_JSON_STRING)
          rc = ST_FAIL("[load_safetensors] Metadata value '%s' is not a string.", v->keys[k]);
        else if (meta && !cm_metadata_get(meta, v->keys[k]))
          rc = cm_metadata_set_string(meta, v->keys[k], v->items[k].s, v->items[k].slen);
      }
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

int cm_save_safetensors(cm_writer *w, const cm_named_arrays *arrays, const cm_metadata *meta) {
  size_t n = arrays->n;
  cm_array **c = calloc(n ? n : 1, sizeof *c);
  if (!c) return cm_error(CM_ERR_MEMORY, "[save_safetensors] Out of memory.");
  int rc = 0;
  cm_strbuf h = {0};
  for (size_t i = 0; i < n && !rc; i++) {
    if (!st_name(arrays->arrs[i]->dtype))
      rc = ST_FAIL("[save_safetensors] received invalid dtype.");
    else if (!(c[i] = cm_io_row_contiguous(arrays->arrs[i], "save_safetensors"))) rc = -1;
  }
  bool oom = !rc && cm_strbuf_add(&h, "{", 1);
  if (!rc && meta && meta->n) {
    oom |= cm_strbuf_add(&h, "\"__metadata__\":{", 16) != 0;
    for (size_t i = 0; i < meta->n && !rc; i++) {
      const cm_meta_value *v = &meta->vals[i];
      if (v->kind != CM_META_STRING) {
        rc = cm_error(CM_ERR_VALUE, "[save_safetensors] Metadata must be a dictionary with string "
                                    "keys and values");
        break;
      }
      oom |= (i && cm_strbuf_add(&h, ",", 1)) ||
             cm_json_add_string(&h, meta->keys[i], strlen(meta->keys[i])) ||
             cm_strbuf_add(&h, ":", 1) || cm_json_add_string(&h, v->str, v->len);
    }
    oom |= cm_strbuf_add(&h, "}", 1) != 0;
  }
  uint64_t off = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    oom |= ((i || (meta && meta->n)) && cm_strbuf_add(&h, ",", 1)) ||
           cm_json_add_string(&h, arrays->keys[i], strlen(arrays->keys[i])) ||
           cm_strbuf_addf(&h, ":{\"dtype\":\"%s\",\"shape\":[", st_name(c[i]->dtype));
    for (int d = 0; d < c[i]->ndim; d++)
      oom |= cm_strbuf_addf(&h, d ? ",%d" : "%d", c[i]->shape[d]) != 0;
    uint64_t nb = cm_nbytes(c[i]);
    oom |= cm_strbuf_addf(&h, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off,
                          (unsigned long long)(off + nb)) != 0;
    off += nb;
  }
  oom |= !rc && cm_strbuf_add(&h, "}", 1);
  while (!rc && !oom && h.len % 8) oom |= cm_strbuf_add(&h, " ", 1) != 0;
  if (!rc && oom) rc = cm_error(CM_ERR_MEMORY, "[save_safetensors] Out of memory.");
  if (!rc) {
    unsigned char lb[8];
    for (int i = 0; i < 8; i++) lb[i] = (unsigned char)((uint64_t)h.len >> (8 * i));
    rc = cm_writer_put(w, lb, 8) || cm_writer_put(w, h.p, h.len) ? -1 : 0;
  }
  for (size_t i = 0; i < n && !rc; i++)
    if (cm_nbytes(c[i])) rc = cm_writer_put(w, cm_data(c[i]), cm_nbytes(c[i]));
  for (size_t i = 0; i < n; i++)
    if (c[i]) cm_release(c[i]);
  free(c);
  free(h.p);
  return rc;
}

int cm_save_safetensors_path(const char *path, const cm_named_arrays *arrays,
                             const cm_metadata *meta) {
  cm_writer w;
  if (cm_writer_path("save_safetensors", path, ".safetensors", &w)) return -1;
  return cm_writer_finish(&w, cm_save_safetensors(&w, arrays, meta));
}
