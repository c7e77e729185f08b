/* .npy: NumPy's array format, version 1 and 2 headers (MLX reads both and
 * writes version 1 unless the header needs 2).  The header is a Python
 * dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)}; it is
 * parsed strictly here (MLX reads fixed positions of it), so a wrong dtype
 * string, shape or length is an error, never a misread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"
#include "ops/common.h"
#include "ops/shape.h"
#include "transforms/eval.h"

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* MLX's dtype_from_array_protocol: 2 or 3 characters, the last two being
 * the kind and the size ("V2" is bfloat16).  Big-endian when it starts
 * with '>'. */
static int npy_dtype(const char *t, size_t len, cm_dtype *out, bool *big) {
  const char *r = len == 3 ? t + 1 : t;
  *big = len == 3 && t[0] == '>';
  if (len == 2 || len == 3) {
    char kind = r[0], size = r[1];
    struct {
      char k, s;
      cm_dtype d;
    } table[] = {
        {'V', '2', CM_BFLOAT16}, {'b', '1', CM_BOOL},      {'i', '1', CM_INT8},
        {'i', '2', CM_INT16},    {'i', '4', CM_INT32},     {'i', '8', CM_INT64},
        {'u', '1', CM_UINT8},    {'u', '2', CM_UINT16},    {'u', '4', CM_UINT32},
        {'u', '8', CM_UINT64},   {'f', '2', CM_FLOAT16},   {'f', '4', CM_FLOAT32},
        {'f', '8', CM_FLOAT64},  {'c', '8', CM_COMPLEX64},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
      if (table[i].k == kind && table[i].s == size) {
        *out = table[i].d;
        return 0;
      }
  }
  return cm_error(CM_ERR_VALUE, "[from_str] Unsupported array protocol type-string: %.*s",
                  (int)(len < 64 ? len : 64), t);
}

static char npy_kind(cm_dtype t) {
  switch (t) {
  case CM_BOOL: return 'b';
  case CM_UINT8:
  case CM_UINT16:
  case CM_UINT32:
  case CM_UINT64: return 'u';
  case CM_INT8:
  case CM_INT16:
  case CM_INT32:
  case CM_INT64: return 'i';
  case CM_BFLOAT16: return 'V';
  case CM_COMPLEX64: return 'c';
  default: return 'f';
  }
}

/* ---- the header dict ---- */

typedef struct hdr_parser {
  const char *p, *end;
} hdr_parser;

static void skip_ws(hdr_parser *h) {
  while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r')) h->p++;
}

static bool accept(hdr_parser *h, char c) {
  skip_ws(h);
  if (h->p < h->end && *h->p == c) {
    h->p++;
    return true;
  }
  return false;
}

/* A quoted string: start and length (no escapes: NumPy writes none). */
static bool quoted(hdr_parser *h, const char **s, size_t *len) {
  skip_ws(h);
  if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) return false;
  char q = *h->p++;
  const char *st = h->p;
  while (h->p < h->end && *h->p != q) h->p++;
  if (h->p >= h->end) return false;
  *s = st;
  *len = (size_t)(h->p - st);
  h->p++;
  return true;
}

static bool word(hdr_parser *h, const char *w) {
  skip_ws(h);
  size_t n = strlen(w);
  if ((size_t)(h->end - h->p) >= n && memcmp(h->p, w, n) == 0) {
    h->p += n;
    return true;
  }
  return false;
}

static bool integer(hdr_parser *h, int64_t *v) {
  skip_ws(h);
  const char *st = h->p;
  int64_t x = 0;
  while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
    if (x > (INT64_MAX - 9) / 10) return false;
    x = x * 10 + (*h->p++ - '0');
  }
  if (h->p < h->end && *h->p == 'L') h->p++; /* Python 2 longs */
  *v = x;
  return h->p > st;
}

typedef struct npy_header {
  cm_dtype dtype;
  bool big, fortran;
  int ndim;
  int64_t dims[CM_MAX_DIMS];
} npy_header;

static int parse_header(const char *txt, size_t len, const char *label, npy_header *out) {
  hdr_parser h = {txt, txt + len};
  bool have_descr = false, have_order = false, have_shape = false;
  if (!accept(&h, '{')) goto bad;
  while (!accept(&h, '}')) {
    const char *k;
    size_t kl;
    if (!quoted(&h, &k, &kl) || !accept(&h, ':')) goto bad;
    if (kl == 5 && !memcmp(k, "descr", 5) && !have_descr) {
      const char *d;
      size_t dl;
      if (!quoted(&h, &d, &dl)) goto bad;
      if (npy_dtype(d, dl, &out->dtype, &out->big)) return -1;
      have_descr = true;
    } else if (kl == 13 && !memcmp(k, "fortran_order", 13) && !have_order) {
      if (word(&h, "True")) out->fortran = true;
      else if (word(&h, "False")) out->fortran = false;
      else goto bad;
      have_order = true;
    } else if (kl == 5 && !memcmp(k, "shape", 5) && !have_shape) {
      if (!accept(&h, '(')) goto bad;
      out->ndim = 0;
      while (!accept(&h, ')')) {
        if (out->ndim == CM_MAX_DIMS) {
          return cm_error(CM_ERR_RUNTIME, "[load] Too many dimensions in the header of %s.", label);
        }
        if (!integer(&h, &out->dims[out->ndim++])) goto bad;
        if (!accept(&h, ',')) {
          if (!accept(&h, ')')) goto bad;
          break;
        }
      }
      have_shape = true;
    } else {
      goto bad;
    }
    if (!accept(&h, ',')) {
      if (!accept(&h, '}')) goto bad;
      break;
    }
  }
  if (have_descr && have_order && have_shape) return 0;
bad:
  return cm_error(CM_ERR_RUNTIME, "[load] Unknown error while parsing header in %s", label);
}

cm_array *cm_load_npy_span(cm_reader *r, cm_stream s, uint64_t *data_end) {
  uint64_t size;
  if (cm_reader_size(r, &size)) return NULL;
  unsigned char pre[12];
  if (size < 10 || cm_reader_read(r, pre, 10, 0) || memcmp(pre, npy_magic, 6) != 0) {
    cm_error(CM_ERR_RUNTIME, "[load] Invalid header in %s", r->label);
    return NULL;
  }
  if (pre[6] != 1 && pre[6] != 2) {
    cm_error(CM_ERR_RUNTIME, "[load] Unsupported npy format version in %s", r->label);
    return NULL;
  }
  size_t lensz = pre[6] == 1 ? 2 : 4;
  if (lensz == 4 && cm_io_read_checked(r, pre + 10, 2, 10, size, "load")) return NULL;
  uint64_t hlen = lensz == 2 ? (uint64_t)pre[8] | (uint64_t)pre[9] << 8
                             : (uint64_t)pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 |
                                   (uint64_t)pre[11] << 24;
  uint64_t hoff = 8 + lensz;
  if (hlen > size - hoff) {
    cm_error(CM_ERR_RUNTIME,
             "[load] The header of %s is %llu bytes long but the file holds %llu bytes after "
             "its prefix. Perhaps an incomplete download or corrupt file?",
             r->label, (unsigned long long)hlen, (unsigned long long)(size - hoff));
    return NULL;
  }
  char *txt = malloc(hlen ? hlen : 1);
  if (!txt) {
    cm_error(CM_ERR_MEMORY, "[load] Out of memory.");
    return NULL;
  }
  npy_header h = {0};
  int rc = cm_reader_read(r, txt, hlen, hoff);
  if (!rc) rc = parse_header(txt, hlen, r->label, &h);
  free(txt);
  uint64_t nbytes;
  if (rc || cm_io_check_shape("load", h.ndim, h.dims, cm_dtype_size(h.dtype), &nbytes)) return NULL;
  int32_t shape[CM_MAX_DIMS];
  for (int i = 0; i < h.ndim; i++) shape[i] = (int32_t)h.dims[h.fortran ? h.ndim - 1 - i : i];
  bool swap = h.big && cm_dtype_size(h.dtype) > 1;
  if (data_end) *data_end = hoff + hlen + nbytes;
  cm_array *a = cm_io_load_node(r, hoff + hlen, swap, h.dtype, h.ndim, shape, s);
  if (a && h.fortran && h.ndim > 1) {
    cm_array *t = cm_transpose(a, 0, NULL, s);
    cm_release(a);
    a = t;
  }
  return a;
}

cm_array *cm_load_npy(cm_reader *r, cm_stream s) { return cm_load_npy_span(r, s, NULL); }

cm_array *cm_load_npy_path(const char *path, cm_stream s) {
  cm_reader *r = cm_reader_file("load", path);
  if (!r) return NULL;
  cm_array *a = cm_load_npy(r, s);
  cm_reader_release(r);
  return a;
}

/* The header NumPy writes: the dict, spaces and a newline, padded so the
 * data starts at a multiple of 64 bytes. */
static size_t format_header(const cm_array *a, bool fortran, char *buf, size_t cap,
                            size_t *prefix) {
  size_t item = cm_itemsize(a);
  char descr[8];
  snprintf(descr, sizeof descr, "%c%c%zu", item > 1 ? '<' : '|', npy_kind(a->dtype), item);
  int n = snprintf(buf, cap, "{'descr': '%s', 'fortran_order': %s, 'shape': (", descr,
                   fortran ? "True" : "False");
  for (int i = 0; i < a->ndim && (size_t)n < cap; i++)
    n += snprintf(buf + n, cap - (size_t)n,
                  i + 1 < a->ndim ? "%d, "
                  : a->ndim == 1  ? "%d,"
                                  : "%d",
                  a->shape[i]);
  if ((size_t)n < cap) n += snprintf(buf + n, cap - (size_t)n, "), }");
  size_t len = (size_t)n;
  *prefix = len + 64 + 10 > 65535 ? 12 : 10;
  size_t total = *prefix + len + 1;
  size_t pad = (64 - total % 64) % 64;
  if (len + pad + 1 > cap) return 0;
  memset(buf + len, ' ', pad);
  buf[len + pad] = '\n';
  return len + pad + 1;
}

int cm_save_npy(cm_writer *w, cm_array *a) {
  if (cm_eval1(a)) return -1;
  bool fortran = a->ndim > 1 && !cm_row_contiguous(a) && cm_col_contiguous(a);
  cm_array *c = fortran ? cm_retain(a) : cm_io_row_contiguous(a, "save");
  if (!c) return -1;
  size_t cap = 64 + 24 * (size_t)c->ndim + 128;
  char *buf = malloc(cap + 12);
  if (!buf) {
    cm_release(c);
    return cm_error(CM_ERR_MEMORY, "[save] Out of memory.");
  }
  size_t prefix;
  size_t hl = format_header(c, fortran, buf + 12, cap, &prefix);
  int rc = -1;
  if (hl) {
    unsigned char *pre = (unsigned char *)buf + 12 - prefix;
    memcpy(pre, npy_magic, 6);
    pre[6] = prefix == 10 ? 1 : 2;
    pre[7] = 0;
    for (size_t i = 0; i < prefix - 8; i++) pre[8 + i] = (unsigned char)(hl >> (8 * i));
    rc = cm_writer_put(w, pre, prefix + hl);
    if (!rc && cm_nbytes(c)) rc = cm_writer_put(w, cm_data(c), cm_nbytes(c));
  } else {
    cm_error(CM_ERR_RUNTIME, "[save] Header too long.");
  }
  free(buf);
  cm_release(c);
  return rc;
}

int cm_save_npy_path(const char *path, cm_array *a) {
  cm_writer w;
  if (cm_writer_path("save", path, ".npy", &w)) return -1;
  return cm_writer_finish(&w, cm_save_npy(&w, a));
}
