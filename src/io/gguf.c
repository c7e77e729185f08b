/* GGUF (versions 2 and 3): header, metadata key/values, tensor infos, then
 * the aligned data section.  Reading follows MLX's loader (gguflib plus
 * mlx/io/gguf.cpp): which tensor types load and as what, metadata as
 * arrays and strings, its errors for values and tensors past the end of
 * the file.  Every count, length and offset is checked against the file
 * before anything is allocated or read.  Writing is MLX's save_gguf:
 * version 3, alignment 32, metadata then tensor infos then data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/gguf.h"
#include "ops/common.h"
#include "transforms/eval.h"

#define CORRUPT " Perhaps an incomplete download or corrupt file?"

enum {
  V_U8 = 0,
  V_I8,
  V_U16,
  V_I16,
  V_U32,
  V_I32,
  V_F32,
  V_BOOL,
  V_STRING,
  V_ARRAY,
  V_U64,
  V_I64,
  V_F64
};

static size_t value_size(uint32_t t) {
  static const unsigned char sz[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
  return t < sizeof sz ? sz[t] : 0;
}

/* The array dtype MLX gives a numeric GGUF value (float64 -> float32). */
static cm_dtype value_dtype(uint32_t t) {
  static const cm_dtype d[] = {CM_UINT8,  CM_INT8,    CM_UINT16, CM_INT16, CM_UINT32,
                               CM_INT32,  CM_FLOAT32, CM_BOOL,   CM_BOOL,  CM_BOOL,
                               CM_UINT64, CM_INT64,   CM_FLOAT64};
  return d[t];
}

/* ---- a bounds-checked cursor over the reader ---- */
typedef struct cursor {
  cm_reader *r;
  uint64_t pos, size;
  unsigned char buf[1 << 16];
  uint64_t buf_off;
  size_t buf_len;
} cursor;

static int cur_read(cursor *c, void *dst, uint64_t n, const char *what) {
  if (c->pos > c->size || n > c->size - c->pos)
    return cm_error(CM_ERR_RUNTIME, "[load_gguf] %s extends past the end of the file." CORRUPT,
                    what);
  unsigned char *d = dst;
  while (n) {
    if (c->pos >= c->buf_off && c->pos < c->buf_off + c->buf_len) {
      size_t k = (size_t)(c->buf_off + c->buf_len - c->pos);
      if (k > n) k = (size_t)n;
      memcpy(d, c->buf + (c->pos - c->buf_off), k);
      d += k, n -= k, c->pos += k;
      continue;
    }
    if (n >= sizeof c->buf) {
      if (cm_reader_read(c->r, d, (size_t)n, c->pos)) return -1;
      c->pos += n;
      return 0;
    }
    uint64_t left = c->size - c->pos;
    c->buf_len = (size_t)(left < sizeof c->buf ? left : sizeof c->buf);
    c->buf_off = c->pos;
    if (cm_reader_read(c->r, c->buf, c->buf_len, c->pos)) {
      c->buf_len = 0;
      return -1;
    }
  }
  return 0;
}

static int cur_u32(cursor *c, uint32_t *v, const char *what) {
  unsigned char b[4];
  if (cur_read(c, b, 4, what)) return -1;
  *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
  return 0;
}

static int cur_u64(cursor *c, uint64_t *v, const char *what) {
  unsigned char b[8];
  if (cur_read(c, b, 8, what)) return -1;
  *v = 0;
  for (int i = 7; i >= 0; i--) *v = *v << 8 | b[i];
  return 0;
}

/* A GGUF string: malloc'd, NUL-terminated. */
static int cur_string(cursor *c, char **s, uint64_t *len, const char *what) {
  if (cur_u64(c, len, what)) return -1;
  if (*len > c->size - c->pos)
    return cm_error(CM_ERR_RUNTIME, "[load_gguf] %s extends past the end of the file." CORRUPT,
                    what);
  *s = malloc(*len + 1);
  if (!*s) return cm_error(CM_ERR_MEMORY, "[load_gguf] Out of memory.");
  if (cur_read(c, *s, *len, what)) {
    free(*s);
    return -1;
  }
  (*s)[*len] = 0;
  return 0;
}

static int read_value(cursor *c, cm_metadata *meta, const char *key, uint32_t type,
                      uint32_t *alignment) {
  if (type == V_STRING) {
    char *s;
    uint64_t len;
    if (cur_string(c, &s, &len, "String metadata value")) return -1;
    int rc = cm_metadata_set_string(meta, key, s, len);
    free(s);
    return rc;
  }
  if (type == V_ARRAY) {
    uint32_t et;
    uint64_t len;
    if (cur_u32(c, &et, "Metadata value") || cur_u64(c, &len, "Metadata value")) return -1;
    if (et == V_ARRAY)
      return cm_error(CM_ERR_VALUE, "[load_gguf] Only supports loading 1-layer of nested arrays.");
    if (et == V_STRING) {
      if (len > (c->size - c->pos) / 8)
        return cm_error(CM_ERR_RUNTIME, "[load_gguf] Array metadata value extends past the end "
                                        "of the file." CORRUPT);
      char **strs = calloc(len ? len : 1, sizeof *strs);
      size_t *lens = calloc(len ? len : 1, sizeof *lens);
      int rc = strs && lens ? 0 : cm_error(CM_ERR_MEMORY, "[load_gguf] Out of memory.");
      uint64_t got = 0;
      for (; !rc && got < len; got++) {
        uint64_t l;
        rc = cur_string(c, &strs[got], &l, "Array metadata value");
        lens[got] = (size_t)l;
      }
      if (!rc) rc = cm_metadata_set_strings(meta, key, (const char *const *)strs, lens, len);
      for (uint64_t i = 0; strs && i < got; i++) free(strs[i]);
      free(strs), free(lens);
      return rc;
    }
    size_t es = value_size(et);
    if (!es) return cm_error(CM_ERR_RUNTIME, "[load_gguf] Received unexpected type.");
    if (len > (c->size - c->pos) / es)
      return cm_error(CM_ERR_RUNTIME, "[load_gguf] Array metadata value extends past the end of "
                                      "the file." CORRUPT);
    if (len > INT32_MAX)
      return cm_error(CM_ERR_RUNTIME, "[load_gguf] Array metadata value is too long.");
    int32_t n = (int32_t)len;
    cm_array *a = cm_array_from_data(NULL, 1, &n, value_dtype(et));
    if (!a) return -1;
    int rc = cur_read(c, cm_data(a), len * es, "Array metadata value");
    if (!rc && et == V_BOOL)
      for (uint64_t i = 0; i < len; i++)
        ((unsigned char *)cm_data(a))[i] = ((unsigned char *)cm_data(a))[i] != 0;
    if (!rc && et == V_F64) {
      cm_array *f = cm_astype(a, CM_FLOAT32, CM_STREAM_DEFAULT);
      cm_release(a);
      a = f;
      rc = a ? cm_eval1(a) : -1;
    }
    if (!rc) rc = cm_metadata_set_array(meta, key, a);
    if (a) cm_release(a);
    return rc;
  }
  size_t es = value_size(type);
  if (!es) return cm_error(CM_ERR_RUNTIME, "[load_gguf] Received unexpected type.");
  unsigned char v[8];
  if (cur_read(c, v, es, "Metadata value")) return -1;
  if (type == V_BOOL) v[0] = v[0] != 0;
  if (type == V_U32 && !strcmp(key, "general.alignment")) {
    uint32_t al =
        (uint32_t)v[0] | (uint32_t)v[1] << 8 | (uint32_t)v[2] << 16 | (uint32_t)v[3] << 24;
    if (al == 0 || al > (1u << 24))
      return cm_error(CM_ERR_RUNTIME, "[load_gguf] Invalid general.alignment %u." CORRUPT, al);
    *alignment = al;
  }
  cm_array *a =
      cm_array_scalar(v, value_dtype(type), type == V_F64 ? CM_FLOAT32 : value_dtype(type));
  if (!a) return -1;
  int rc = cm_metadata_set_array(meta, key, a);
  cm_release(a);
  return rc;
}

cm_array *cm_gguf_read_array(cm_reader *r, uint64_t off, cm_dtype dtype, int ndim,
                             const int32_t *shape) {
  size_t nbytes = (size_t)cm_shape_size(ndim, shape) * cm_dtype_size(dtype);
  cm_buffer *buf = cm_buffer_alloc(nbytes);
  if (!buf) return NULL;
  cm_array *a = NULL;
  if (!cm_reader_read(r, buf->ptr, nbytes, off))
    a = cm_array_from_buffer(buf, 0, ndim, shape, NULL, dtype);
  cm_buffer_release(buf);
  return a;
}

typedef struct tinfo {
  char *name;
  uint64_t namelen;
  uint32_t ndim, type;
  uint64_t dims[8];
  uint64_t rel;
} tinfo;

static int load_tensor(cm_reader *r, const tinfo *t, uint64_t data_off, uint64_t size,
                       cm_named_arrays *out) {
  cm_dtype dt = CM_FLOAT32;
  uint64_t block = 1, bbytes = 4;
  bool quant = false, bf16 = false, kq = false;
  switch (t->type) {
  case GGUF_T_F32: dt = CM_FLOAT32, bbytes = 4; break;
  case GGUF_T_F16: dt = CM_FLOAT16, bbytes = 2; break;
  case GGUF_T_I8: dt = CM_INT8, bbytes = 1; break;
  case GGUF_T_I16: dt = CM_INT16, bbytes = 2; break;
  case GGUF_T_I32: dt = CM_INT32, bbytes = 4; break;
  case GGUF_T_BF16: dt = CM_FLOAT16, bbytes = 2, bf16 = true; break;
  case GGUF_T_Q4_0: block = 32, bbytes = 18, quant = true; break;
  case GGUF_T_Q4_1: block = 32, bbytes = 20, quant = true; break;
  case GGUF_T_Q8_0: block = 32, bbytes = 34, quant = true; break;
  case GGUF_T_Q2_K:
  case GGUF_T_Q4_K:
  case GGUF_T_Q6_K: block = 256, bbytes = (uint64_t)cm_gguf_kquant_bytes(t->type), kq = true; break;
  default:
    return cm_error(
        CM_ERR_RUNTIME,
        "[load_gguf] Tensor '%s' has GGML type %u, which cmlx does "
        "not load (F32, F16, BF16, I8, I16, I32, Q4_0, Q4_1, Q8_0, Q2_K, Q4_K and Q6_K load).",
        t->name, t->type);
  }
  int64_t dims[8];
  int32_t shape[8];
  for (uint32_t i = 0; i < t->ndim; i++) {
    if (t->dims[t->ndim - 1 - i] > INT32_MAX)
      return cm_error(CM_ERR_RUNTIME,
                      "[load_gguf] Tensor '%s' has a dimension %llu outside the "
                      "supported range.",
                      t->name, (unsigned long long)t->dims[t->ndim - 1 - i]);
    dims[i] = (int64_t)t->dims[t->ndim - 1 - i];
    shape[i] = (int32_t)dims[i];
  }
  uint64_t nbytes;
  if (cm_io_check_shape("load_gguf", (int)t->ndim, dims, 1, &nbytes)) return -1;
  uint64_t nw = nbytes; /* elements */
  if (nw / block > UINT64_MAX / bbytes - 1)
    return cm_error(CM_ERR_RUNTIME, "[load_gguf] Tensor '%s' is too large.", t->name);
  uint64_t bsize = (nw + block - 1) / block * bbytes;
  uint64_t off = data_off + t->rel;
  if (off < data_off)
    return cm_error(CM_ERR_RUNTIME,
                    "[load_gguf] Tensor '%s' has a data offset that overflows "
                    "the data section." CORRUPT,
                    t->name);
  if (off > size)
    return cm_error(CM_ERR_RUNTIME,
                    "[load_gguf] Tensor '%s' has a data offset past the end of "
                    "the file." CORRUPT,
                    t->name);
  if (bsize > size - off)
    return cm_error(CM_ERR_RUNTIME,
                    "[load_gguf] Tensor '%s' extends past the end of the file." CORRUPT, t->name);
  if (quant)
    return cm_gguf_load_quantized(r, off, t->type, t->name, t->namelen, (int)t->ndim, shape, out);
  cm_array *a = NULL;
  if (kq) {
    if (cm_gguf_load_kquant(r, off, t->type, (int)t->ndim, shape, &a)) return -1;
  } else if (bf16) {
    /* gguflib's to_half: round to nearest even, NaN as 0x7E00 with its sign */
    a = cm_gguf_read_array(r, off, CM_FLOAT16, (int)t->ndim, shape);
    uint16_t *h = a ? cm_data(a) : NULL;
    for (int64_t i = 0; a && i < a->size; i++) {
      float f = cm_bf16_to_f32(h[i]);
      h[i] = f != f ? (uint16_t)((h[i] & 0x8000) | 0x7E00) : cm_f32_to_f16(f);
    }
  } else {
    a = cm_gguf_read_array(r, off, dt, (int)t->ndim, shape);
  }
  if (!a) return -1;
  return cm_named_arrays_put(out, t->name, t->namelen, a, false, "load_gguf");
}

int cm_load_gguf(cm_reader *r, cm_stream s, cm_named_arrays *out, cm_metadata *meta) {
  (void)s;
  cursor *c = calloc(1, sizeof *c);
  if (!c) return cm_error(CM_ERR_MEMORY, "[load_gguf] Out of memory.");
  c->r = r;
  int rc = cm_reader_size(r, &c->size);
  unsigned char magic[4];
  uint32_t version = 0;
  uint64_t ntensors = 0, nkv = 0;
  if (!rc && (c->size < 24 || cur_read(c, magic, 4, "Header") || memcmp(magic, "GGUF", 4)))
    rc = cm_error(CM_ERR_RUNTIME, "[load_gguf] gguf_init failed: %s is not a GGUF file.", r->label);
  if (!rc) rc = cur_u32(c, &version, "Header");
  if (!rc && version != 2 && version != 3)
    rc = cm_error(CM_ERR_RUNTIME, "[load_gguf] Unsupported GGUF version %u in %s.", version,
                  r->label);
  if (!rc) rc = cur_u64(c, &ntensors, "Header");
  if (!rc) rc = cur_u64(c, &nkv, "Header");
  cm_metadata got = {0};
  uint32_t alignment = 32;
  for (uint64_t i = 0; !rc && i < nkv; i++) {
    char *key;
    uint64_t kl;
    uint32_t type;
    if ((rc = cur_string(c, &key, &kl, "Metadata key"))) break;
    rc = cur_u32(c, &type, "Metadata value");
    if (!rc) rc = read_value(c, &got, key, type, &alignment);
    free(key);
  }
  /* tensor infos: each takes at least 24 bytes */
  tinfo *ti = NULL;
  uint64_t nt = 0;
  if (!rc && ntensors > (c->size - c->pos) / 24)
    rc = cm_error(CM_ERR_RUNTIME,
                  "[load_gguf] The file declares %llu tensors, more than it can "
                  "hold." CORRUPT,
                  (unsigned long long)ntensors);
  if (!rc && !(ti = calloc(ntensors ? ntensors : 1, sizeof *ti)))
    rc = cm_error(CM_ERR_MEMORY, "[load_gguf] Out of memory.");
  for (; !rc && nt < ntensors; nt++) {
    tinfo *t = &ti[nt];
    if ((rc = cur_string(c, &t->name, &t->namelen, "Tensor info"))) break;
    rc = cur_u32(c, &t->ndim, "Tensor info");
    if (!rc && t->ndim > 8)
      rc =
          cm_error(CM_ERR_RUNTIME, "[load_gguf] Tensor '%s' has %u dimensions (at most 8)." CORRUPT,
                   t->name, t->ndim);
    for (uint32_t d = 0; !rc && d < t->ndim; d++) rc = cur_u64(c, &t->dims[d], "Tensor info");
    if (!rc) rc = cur_u32(c, &t->type, "Tensor info");
    if (!rc) rc = cur_u64(c, &t->rel, "Tensor info");
  }
  uint64_t data_off = c->pos + (alignment - c->pos % alignment) % alignment;
  cm_named_arrays arrs = {0};
  for (uint64_t i = 0; !rc && i < nt; i++) rc = load_tensor(r, &ti[i], data_off, c->size, &arrs);
  for (uint64_t i = 0; ti && i < ntensors; i++) free(ti[i].name);
  free(ti);
  for (size_t i = 0; !rc && i < arrs.n; i++)
    rc = cm_named_arrays_put(out, arrs.keys[i], strlen(arrs.keys[i]), cm_retain(arrs.arrs[i]), true,
                             "load_gguf");
  for (size_t i = 0; !rc && meta && i < got.n; i++) {
    const cm_meta_value *v = &got.vals[i];
    if (v->kind == CM_META_STRING) rc = cm_metadata_set_string(meta, got.keys[i], v->str, v->len);
    else if (v->kind == CM_META_ARRAY) rc = cm_metadata_set_array(meta, got.keys[i], v->arr);
    else
      rc = cm_metadata_set_strings(meta, got.keys[i], (const char *const *)v->strs, v->lens,
                                   v->nstrs);
  }
  cm_named_arrays_clear(&arrs);
  cm_metadata_clear(&got);
  free(c);
  return rc;
}

/* ---- writing ---- */

static int put_u32(cm_writer *w, uint32_t v) {
  unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                        (unsigned char)(v >> 24)};
  return cm_writer_put(w, b, 4);
}

static int put_u64(cm_writer *w, uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
  return cm_writer_put(w, b, 8);
}

static int put_str(cm_writer *w, const char *s, size_t n) {
  return put_u64(w, n) || cm_writer_put(w, s, n) ? -1 : 0;
}

static int meta_type(cm_dtype t, uint32_t *out) {
  switch (t) {
  case CM_FLOAT32: *out = V_F32; return 0;
  case CM_INT64: *out = V_I64; return 0;
  case CM_INT32: *out = V_I32; return 0;
  case CM_INT16: *out = V_I16; return 0;
  case CM_INT8: *out = V_I8; return 0;
  case CM_UINT64: *out = V_U64; return 0;
  case CM_UINT32: *out = V_U32; return 0;
  case CM_UINT16: *out = V_U16; return 0;
  case CM_UINT8: *out = V_U8; return 0;
  case CM_BOOL: *out = V_BOOL; return 0;
  default:
    return cm_error(CM_ERR_VALUE, "[save_gguf] array type %s not support for metadata.",
                    cm_dtype_name(t));
  }
}

static int tensor_type(cm_dtype t, uint32_t *out) {
  switch (t) {
  case CM_FLOAT32: *out = GGUF_T_F32; return 0;
  case CM_FLOAT16: *out = GGUF_T_F16; return 0;
  case CM_INT8: *out = GGUF_T_I8; return 0;
  case CM_INT16: *out = GGUF_T_I16; return 0;
  case CM_INT32: *out = GGUF_T_I32; return 0;
  default:
    return cm_error(CM_ERR_RUNTIME, "[save_gguf] dtype %s is not supported", cm_dtype_name(t));
  }
}

static int put_meta(cm_writer *w, const char *key, const cm_meta_value *v) {
  if (put_str(w, key, strlen(key))) return -1;
  if (v->kind == CM_META_STRING) return put_u32(w, V_STRING) || put_str(w, v->str, v->len) ? -1 : 0;
  if (v->kind == CM_META_STRINGS) {
    if (put_u32(w, V_ARRAY) || put_u32(w, V_STRING) || put_u64(w, v->nstrs)) return -1;
    for (size_t i = 0; i < v->nstrs; i++)
      if (put_str(w, v->strs[i], v->lens[i])) return -1;
    return 0;
  }
  return 0;
}

/* Check a metadata array as MLX does and give its row-contiguous copy. */
static cm_array *meta_array(const cm_meta_value *v, uint32_t *t) {
  cm_array *a = v->arr;
  if (a->ndim > 1) {
    cm_error(CM_ERR_RUNTIME, "[save_gguf] Cannot save arrays with more than one dimension.");
    return NULL;
  }
  if (a->size == 0) {
    cm_error(CM_ERR_RUNTIME, "[save_gguf] Cannot save empty arrays.");
    return NULL;
  }
  if (meta_type(a->dtype, t)) return NULL;
  return cm_io_row_contiguous(a, "save_gguf");
}

static int save_gguf(cm_writer *w, const cm_named_arrays *arrays, const cm_metadata *meta) {
  size_t nm = meta ? meta->n : 0, n = arrays->n;
  cm_array **ma = calloc(nm ? nm : 1, sizeof *ma), **c = calloc(n ? n : 1, sizeof *c);
  uint32_t *mt = calloc(nm ? nm : 1, sizeof *mt), *tt = calloc(n ? n : 1, sizeof *tt);
  int rc = ma && c && mt && tt ? 0 : cm_error(CM_ERR_MEMORY, "[save_gguf] Out of memory.");
  /* validate everything before the first byte is written */
  for (size_t i = 0; !rc && i < nm; i++)
    if (meta->vals[i].kind == CM_META_ARRAY && !(ma[i] = meta_array(&meta->vals[i], &mt[i])))
      rc = -1;
  for (size_t i = 0; !rc && i < n; i++) {
    if (tensor_type(arrays->arrs[i]->dtype, &tt[i])) rc = -1;
    else if (!(c[i] = cm_io_row_contiguous(arrays->arrs[i], "save_gguf"))) rc = -1;
  }
  if (!rc) {
    rc = cm_writer_put(w, "GGUF", 4) || put_u32(w, 3) || put_u64(w, n) || put_u64(w, nm) ? -1 : 0;
  }
  for (size_t i = 0; !rc && i < nm; i++) {
    const cm_meta_value *v = &meta->vals[i];
    if (v->kind != CM_META_ARRAY) {
      rc = put_meta(w, meta->keys[i], v);
      continue;
    }
    cm_array *a = ma[i];
    rc = put_str(w, meta->keys[i], strlen(meta->keys[i]));
    if (!rc && a->ndim == 1)
      rc = put_u32(w, V_ARRAY) || put_u32(w, mt[i]) || put_u64(w, a->size) ? -1 : 0;
    else if (!rc) rc = put_u32(w, mt[i]);
    if (!rc) rc = cm_writer_put(w, cm_data(a), cm_nbytes(a));
  }
  uint64_t off = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    cm_array *a = c[i];
    off += (32 - off % 32) % 32;
    rc = put_str(w, arrays->keys[i], strlen(arrays->keys[i])) || put_u32(w, (uint32_t)a->ndim) ? -1
                                                                                               : 0;
    for (int d = a->ndim - 1; !rc && d >= 0; d--) rc = put_u64(w, (uint64_t)a->shape[d]);
    if (!rc) rc = put_u32(w, tt[i]) || put_u64(w, off) ? -1 : 0;
    off += cm_nbytes(a);
  }
  static const unsigned char zeros[32] = {0};
  uint64_t base = 0;
  if (!rc) {
    rc = cm_writer_put(w, zeros, (32 - w->pos % 32) % 32);
    base = w->pos;
  }
  for (size_t i = 0; !rc && i < n; i++) {
    rc = cm_writer_put(w, zeros, (32 - (w->pos - base) % 32) % 32);
    if (!rc) rc = cm_writer_put(w, cm_data(c[i]), cm_nbytes(c[i]));
  }
  for (size_t i = 0; ma && i < nm; i++)
    if (ma[i]) cm_release(ma[i]);
  for (size_t i = 0; c && i < n; i++)
    if (c[i]) cm_release(c[i]);
  free(ma), free(c), free(mt), free(tt);
  return rc;
}

/* Metadata and tensors go in MLX's order (its std::unordered_map's:
 * key_order.c), as in the files MLX writes. */
int cm_save_gguf(cm_writer *w, const cm_named_arrays *arrays, const cm_metadata *meta) {
  cm_named_arrays ordered;
  cm_metadata ordered_meta;
  if (cm_named_arrays_map_order(arrays, &ordered)) return -1;
  if (cm_metadata_map_order(meta, &ordered_meta)) {
    cm_map_order_view_free(ordered.keys, ordered.arrs);
    return -1;
  }
  int rc = save_gguf(w, &ordered, &ordered_meta);
  cm_map_order_view_free(ordered.keys, ordered.arrs);
  cm_map_order_view_free(ordered_meta.keys, ordered_meta.vals);
  return rc;
}

int cm_save_gguf_path(const char *path, const cm_named_arrays *arrays, const cm_metadata *meta) {
  cm_writer w;
  if (cm_writer_path("save_gguf", path, ".gguf", &w)) return -1;
  return cm_writer_finish(&w, cm_save_gguf(&w, arrays, meta));
}
