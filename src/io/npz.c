/* .npz: a zip archive of .npy members, as NumPy's savez and MLX's write it
 * (MLX goes through Python's zipfile; this is a zip reader and writer of
 * our own).  Members are stored or deflated (zlib); ZIP64 sizes and
 * offsets are read, and written when a member or the archive needs them.
 *
 * Loading: a stored member is a window of the archive's reader, so its
 * array is loaded lazily like a .npy file; a deflated member is inflated
 * now into memory (growing only as data actually decompresses, never past
 * its declared size) and its CRC-32 checked.  Saving: each member is
 * written twice through a sink, once to learn its CRC-32 (and its deflated
 * bytes), once for real, so nothing but the compressed bytes is held. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"
#include "transforms/eval.h"

#ifdef CMLX_HAVE_ZLIB
#include <zlib.h>
#endif

/* ---- CRC-32 (zlib's when present) ---- */
static uint32_t crc_update(uint32_t crc, const void *p, size_t n) {
#ifdef CMLX_HAVE_ZLIB
  const unsigned char *b = p;
  while (n) {
    uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
    crc = (uint32_t)crc32(crc, b, chunk);
    b += chunk, n -= chunk;
  }
  return crc;
#else
  static uint32_t table[256];
  static int init;
  if (!init) {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    init = 1;
  }
  const unsigned char *b = p;
  crc = ~crc;
  while (n--) crc = table[(crc ^ *b++) & 0xFF] ^ (crc >> 8);
  return ~crc;
#endif
}

static uint64_t rd(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static void wr(unsigned char *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

#define ZFAIL(...) cm_error(CM_ERR_RUNTIME, __VA_ARGS__)
#define CORRUPT " Perhaps an incomplete download or corrupt file?"
/* MLX asks zipfile.is_zipfile first and raises ValueError with this. */
#define NOT_ZIP                                                                        \
  "[load_npz] Input must be a zip file or a file-like object that can be opened with " \
  "zipfile.ZipFile"

typedef struct zentry {
  char *name;
  size_t namelen;
  uint16_t method, flags;
  uint32_t crc;
  uint64_t csize, usize, local;
} zentry;

/* The end of central directory record (and its ZIP64 form): the central
 * directory's offset, size and entry count. */
static int find_directory(cm_reader *r, uint64_t size, uint64_t *cd_off, uint64_t *cd_size,
                          uint64_t *count) {
  if (size < 22) return cm_error(CM_ERR_VALUE, NOT_ZIP " (%s is too short)." CORRUPT, r->label);
  uint64_t span = size < 22 + 65535 ? size : 22 + 65535;
  unsigned char *tail = malloc(span);
  if (!tail) return cm_error(CM_ERR_MEMORY, "[load_npz] Out of memory.");
  int rc = cm_reader_read(r, tail, span, size - span);
  int64_t at = -1;
  for (int64_t i = (int64_t)span - 22; !rc && i >= 0; i--)
    if (rd(tail + i, 4) == 0x06054b50 && (uint64_t)i + 22 + rd(tail + i + 20, 2) <= span) {
      at = i;
      break;
    }
  if (!rc && at < 0)
    rc = cm_error(CM_ERR_VALUE, NOT_ZIP " (no end of central directory in %s)." CORRUPT, r->label);
  if (!rc) {
    const unsigned char *e = tail + at;
    *count = rd(e + 10, 2);
    *cd_size = rd(e + 12, 4);
    *cd_off = rd(e + 16, 4);
    uint64_t eocd = size - span + (uint64_t)at;
    if ((*count == 0xFFFF || *cd_size == 0xFFFFFFFF || *cd_off == 0xFFFFFFFF) && eocd >= 20) {
      unsigned char loc[20], z[56];
      rc = cm_reader_read(r, loc, 20, eocd - 20);
      if (!rc && rd(loc, 4) == 0x07064b50) {
        uint64_t zoff = rd(loc + 8, 8);
        rc = cm_io_read_checked(r, z, 56, zoff, size, "load_npz");
        if (!rc && rd(z, 4) != 0x06064b50)
          rc = ZFAIL("[load_npz] Bad ZIP64 record in %s." CORRUPT, r->label);
        if (!rc) {
          *count = rd(z + 32, 8);
          *cd_size = rd(z + 40, 8);
          *cd_off = rd(z + 48, 8);
        }
      }
    }
  }
  free(tail);
  if (!rc && (*cd_off > size || *cd_size > size - *cd_off || *count > *cd_size / 46 + 1))
    rc = ZFAIL("[load_npz] The central directory of %s lies outside the file." CORRUPT, r->label);
  return rc;
}

static void free_entries(zentry *e, size_t n) {
  for (size_t i = 0; i < n; i++) free(e[i].name);
  free(e);
}

static int read_directory(cm_reader *r, uint64_t size, zentry **out, size_t *nout) {
  uint64_t cd_off = 0, cd_size = 0, count = 0;
  if (find_directory(r, size, &cd_off, &cd_size, &count)) return -1;
  unsigned char *cd = malloc(cd_size ? cd_size : 1);
  zentry *e = calloc(count ? count : 1, sizeof *e);
  if (!cd || !e) {
    free(cd), free(e);
    return cm_error(CM_ERR_MEMORY, "[load_npz] Out of memory.");
  }
  int rc = cm_reader_read(r, cd, cd_size, cd_off);
  size_t pos = 0, n = 0;
  for (; !rc && n < count; n++) {
    if (cd_size - pos < 46 || rd(cd + pos, 4) != 0x02014b50) {
      rc = ZFAIL("[load_npz] Bad central directory entry in %s." CORRUPT, r->label);
      break;
    }
    const unsigned char *c = cd + pos;
    size_t nl = rd(c + 28, 2), xl = rd(c + 30, 2), cl = rd(c + 32, 2);
    if (cd_size - pos - 46 < nl + xl + cl) {
      rc = ZFAIL("[load_npz] Bad central directory entry in %s." CORRUPT, r->label);
      break;
    }
    zentry *z = &e[n];
    z->flags = (uint16_t)rd(c + 8, 2);
    z->method = (uint16_t)rd(c + 10, 2);
    z->crc = (uint32_t)rd(c + 16, 4);
    z->csize = rd(c + 20, 4);
    z->usize = rd(c + 24, 4);
    z->local = rd(c + 42, 4);
    z->name = malloc(nl + 1);
    if (!z->name) {
      rc = cm_error(CM_ERR_MEMORY, "[load_npz] Out of memory.");
      break;
    }
    memcpy(z->name, c + 46, nl);
    z->name[nl] = 0;
    z->namelen = nl;
    /* ZIP64 extra field: the 0xFFFFFFFF fields, in order */
    const unsigned char *x = c + 46 + nl, *xe = x + xl;
    while (xe - x >= 4) {
      size_t id = rd(x, 2), len = rd(x + 2, 2);
      if ((size_t)(xe - x - 4) < len) break;
      if (id == 1) {
        const unsigned char *f = x + 4, *fe = x + 4 + len;
        if (z->usize == 0xFFFFFFFF && fe - f >= 8) z->usize = rd(f, 8), f += 8;
        if (z->csize == 0xFFFFFFFF && fe - f >= 8) z->csize = rd(f, 8), f += 8;
        if (z->local == 0xFFFFFFFF && fe - f >= 8) z->local = rd(f, 8), f += 8;
      }
      x += 4 + len;
    }
    pos += 46 + nl + xl + cl;
  }
  /* A damaged count must not drop members silently: the entries fill the
   * directory exactly. */
  if (!rc && pos != cd_size)
    rc = ZFAIL("[load_npz] The central directory of %s holds more than its %llu entries." CORRUPT,
               r->label, (unsigned long long)count);
  free(cd);
  if (rc) {
    free_entries(e, count);
    return -1;
  }
  *out = e;
  *nout = n;
  return 0;
}

/* Offset of a member's data, from its local header.  The local header
 * must name the same member, method and (unless a data descriptor follows
 * the data, flag bit 3) CRC-32 as the central directory: a damaged one is
 * an error, as in zipfile, not silently passed over. */
static int member_data(cm_reader *r, uint64_t size, const zentry *z, uint64_t *off) {
  unsigned char lh[30];
  if (cm_io_read_checked(r, lh, 30, z->local, size, "load_npz")) return -1;
  if (rd(lh, 4) != 0x04034b50)
    return ZFAIL("[load_npz] Bad local header for '%s' in %s." CORRUPT, z->name, r->label);
  uint64_t nl = rd(lh + 26, 2), d = z->local + 30 + nl + rd(lh + 28, 2);
  if (d > size || z->csize > size - d)
    return ZFAIL("[load_npz] Member '%s' extends past the end of %s." CORRUPT, z->name, r->label);
  char name[256];
  bool same = nl == z->namelen;
  for (uint64_t at = 0; same && at < nl; at += sizeof name) {
    size_t k = nl - at < sizeof name ? (size_t)(nl - at) : sizeof name;
    if (cm_reader_read(r, name, k, z->local + 30 + at)) return -1;
    same = !memcmp(name, z->name + at, k);
  }
  if (!same)
    return ZFAIL("[load_npz] The local header of '%s' in %s names another member." CORRUPT, z->name,
                 r->label);
  if (rd(lh + 8, 2) != z->method || (!(rd(lh + 6, 2) & 8) && rd(lh + 14, 4) != z->crc))
    return ZFAIL("[load_npz] The local header of '%s' in %s disagrees with the central "
                 "directory (compression method or CRC-32)." CORRUPT,
                 z->name, r->label);
  *off = d;
  return 0;
}

/* ---- stored members: CRC-32 checked when their bytes are read ---- */

/* CRC-32 of n bytes of r at off, read through a small buffer. */
static int crc_of(cm_reader *r, uint64_t off, uint64_t n, uint32_t *crc) {
  unsigned char buf[1 << 14];
  uint32_t c = 0;
  while (n) {
    size_t k = n < sizeof buf ? (size_t)n : sizeof buf;
    if (cm_reader_read(r, buf, k, off)) return -1;
    c = crc_update(c, buf, k);
    off += k, n -= k;
  }
  *crc = c;
  return 0;
}

typedef struct crc_window {
  cm_reader *base;
  uint64_t off, n;
  uint32_t crc;
  char name[160], archive[160];
} crc_window;

/* A window over a stored member that checks the member's CRC-32 on every
 * read reaching its end: the read's own bytes plus the ones before them
 * (re-read: for an array that is its .npy header).  The array's Load node
 * reads its bytes in one piece that ends the member, so a lazily loaded
 * array costs one small extra read and never yields unchecked data; the
 * loader checks at once the members whose data ends elsewhere. */
static int cw_read_at(void *ctx, void *dst, size_t n, uint64_t off) {
  crc_window *w = ctx;
  if (off > w->n || n > w->n - off)
    return cm_error(CM_ERR_RUNTIME, "[read] Unable to read %zu bytes at offset %llu.", n,
                    (unsigned long long)off);
  if (cm_reader_read(w->base, dst, n, w->off + off)) return -1;
  if (off + n != w->n) return 0;
  uint32_t c;
  if (crc_of(w->base, w->off, off, &c)) return -1;
  if (crc_update(c, dst, n) != w->crc)
    return ZFAIL("[load_npz] Bad CRC-32 for member '%s' of %s." CORRUPT, w->name, w->archive);
  return 0;
}

static int cw_size(void *ctx, uint64_t *out) {
  *out = ((crc_window *)ctx)->n;
  return 0;
}

static void cw_close(void *ctx) {
  crc_window *w = ctx;
  cm_reader_release(w->base);
  free(w);
}

static cm_reader *stored_member(cm_reader *r, const zentry *z, uint64_t off, const char *label) {
  crc_window *w = malloc(sizeof *w);
  if (!w) {
    cm_error(CM_ERR_MEMORY, "[load_npz] Out of memory.");
    return NULL;
  }
  *w = (crc_window){cm_reader_retain(r), off, z->csize, z->crc, "", ""};
  snprintf(w->name, sizeof w->name, "%.150s", z->name);
  snprintf(w->archive, sizeof w->archive, "%.150s", r->label);
  static const cm_reader_ops ops = {cw_read_at, cw_size, cw_close};
  return cm_reader_new(&ops, w, false, label);
}

/* The member's array.  A stored member whose array's bytes do not end it
 * (an empty array, bytes after the array) is checked now, by reading its
 * last byte through the checking window; the others when read. */
static cm_array *load_member(cm_reader *m, const zentry *z, bool stored, cm_stream s) {
  uint64_t end = 0;
  cm_array *a = cm_load_npy_span(m, s, &end);
  if (!a || !stored || z->csize == 0 || (a->size > 0 && end == z->csize)) return a;
  unsigned char last;
  if (cm_reader_read(m, &last, 1, z->csize - 1)) {
    cm_release(a);
    return NULL;
  }
  return a;
}

#ifdef CMLX_HAVE_ZLIB
/* Inflate a member into a buffer of exactly its declared size, growing it
 * only as output really arrives (a zip bomb's claim allocates nothing).
 * The loop runs until zlib reports the end of the stream, not until the
 * input is used up: the last input chunk can leave much output pending
 * (a run of zeros deflates about 1000:1).  Once the declared size is
 * reached, output goes to a scratch buffer, so a member that inflates
 * past it is caught instead of being cut short. */
static int inflate_member(cm_reader *r, const zentry *z, uint64_t off, unsigned char **out) {
  size_t cap = z->usize < (1u << 20) ? (size_t)z->usize : (1u << 20);
  unsigned char *dst = malloc(cap ? cap : 1), in[1 << 16], spill[64];
  if (!dst) return cm_error(CM_ERR_MEMORY, "[load_npz] Out of memory.");
  z_stream zs = {0};
  if (inflateInit2(&zs, -15) != Z_OK) {
    free(dst);
    return cm_error(CM_ERR_MEMORY, "[load_npz] Out of memory.");
  }
  uint64_t consumed = 0, produced = 0;
  int rc = 0, zr = Z_OK;
  while (!rc && zr != Z_STREAM_END) {
    if (zs.avail_in == 0 && consumed < z->csize) {
      size_t k = z->csize - consumed < sizeof in ? (size_t)(z->csize - consumed) : sizeof in;
      if ((rc = cm_reader_read(r, in, k, off + consumed))) break;
      consumed += k;
      zs.next_in = in;
      zs.avail_in = (uInt)k;
    }
    bool full = produced == z->usize;
    if (!full && produced == cap) {
      size_t nc = cap * 2 < z->usize ? cap * 2 : (size_t)z->usize;
      unsigned char *nd = realloc(dst, nc);
      if (!nd) {
        rc = cm_error(CM_ERR_MEMORY, "[load_npz] Out of memory.");
        break;
      }
      dst = nd, cap = nc;
    }
    size_t room = full ? sizeof spill : cap - produced < (1u << 30) ? cap - produced : (1u << 30);
    uInt had = zs.avail_in;
    zs.next_out = full ? spill : dst + produced;
    zs.avail_out = (uInt)room;
    zr = inflate(&zs, Z_NO_FLUSH);
    size_t got = room - zs.avail_out;
    if (full && got) {
      rc = ZFAIL("[load_npz] Member '%s' of %s inflates past its declared size." CORRUPT, z->name,
                 r->label);
      break;
    }
    produced += got;
    if (zr == Z_STREAM_END) break;
    if ((zr == Z_OK || zr == Z_BUF_ERROR) && (got || zs.avail_in != had)) continue;
    if ((zr == Z_OK || zr == Z_BUF_ERROR) && zs.avail_in == 0 && consumed < z->csize) continue;
    /* no progress: the input is used up before the stream's end, or bad */
    rc = (zr == Z_OK || zr == Z_BUF_ERROR) && zs.avail_in == 0
             ? ZFAIL("[load_npz] Member '%s' of %s is truncated." CORRUPT, z->name, r->label)
             : ZFAIL("[load_npz] Member '%s' of %s is not valid deflate data." CORRUPT, z->name,
                     r->label);
  }
  inflateEnd(&zs);
  if (!rc && produced != z->usize)
    rc = ZFAIL("[load_npz] Member '%s' of %s inflates to %llu bytes, not %llu." CORRUPT, z->name,
               r->label, (unsigned long long)produced, (unsigned long long)z->usize);
  if (!rc && (zs.avail_in || consumed != z->csize))
    rc = ZFAIL("[load_npz] Member '%s' of %s has bytes after its deflate stream." CORRUPT, z->name,
               r->label);
  if (!rc && crc_update(0, dst, produced) != z->crc)
    rc = ZFAIL("[load_npz] Bad CRC-32 for member '%s' of %s." CORRUPT, z->name, r->label);
  if (rc) {
    free(dst);
    return -1;
  }
  *out = dst;
  return 0;
}
#endif

/* A reader over the member's .npy bytes: a checking window of the archive
 * when stored, the inflated bytes when deflated; NULL with the error set. */
static cm_reader *open_member(cm_reader *r, uint64_t size, const zentry *z) {
  if (z->flags & 1) {
    ZFAIL("[load_npz] Member '%s' of %s is encrypted.", z->name, r->label);
    return NULL;
  }
  if (z->method != 0 && z->method != 8) {
    ZFAIL("[load_npz] Member '%s' of %s uses unsupported compression method %u.", z->name, r->label,
          z->method);
    return NULL;
  }
  uint64_t off = 0;
  if (member_data(r, size, z, &off)) return NULL;
  char label[320];
  snprintf(label, sizeof label, "member %.150s of %.150s", z->name, r->label);
  if (z->method == 0) {
    if (z->csize != z->usize) {
      ZFAIL("[load_npz] Stored member '%s' of %s has two sizes." CORRUPT, z->name, r->label);
      return NULL;
    }
    return stored_member(r, z, off, label);
  }
#ifdef CMLX_HAVE_ZLIB
  unsigned char *data;
  if (inflate_member(r, z, off, &data)) return NULL;
  return cm_reader_memory(data, (size_t)z->usize, free, label);
#else
  cm_error(CM_ERR_NOT_IMPLEMENTED,
           "[load_npz] Member '%s' is deflated and cmlx was built without zlib.", z->name);
  return NULL;
#endif
}

int cm_load_npz(cm_reader *r, cm_stream s, cm_named_arrays *out) {
  uint64_t size;
  if (cm_reader_size(r, &size)) return -1;
  zentry *e = NULL;
  size_t n = 0;
  if (read_directory(r, size, &e, &n)) return -1;
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    zentry *z = &e[i];
    cm_reader *m = open_member(r, size, z);
    cm_array *a = m ? load_member(m, z, z->method == 0, s) : NULL;
    cm_reader_release(m);
    if (!a) {
      rc = -1;
      break;
    }
    size_t kl = z->namelen;
    if (kl > 4 && !memcmp(z->name + kl - 4, ".npy", 4)) kl -= 4;
    rc = cm_named_arrays_put(out, z->name, kl, a, true, "load_npz");
  }
  free_entries(e, n);
  return rc;
}

/* ---- writing ---- */

typedef struct sink {
  uint32_t crc;
  uint64_t n;
  bool deflate;
  unsigned char *buf; /* the deflated bytes */
  size_t len, cap;
#ifdef CMLX_HAVE_ZLIB
  z_stream zs;
#endif
  int failed;
} sink;

#ifdef CMLX_HAVE_ZLIB
static int sink_deflate(sink *k, const void *src, size_t n, int flush) {
  k->zs.next_in = (Bytef *)src;
  k->zs.avail_in = (uInt)n;
  do {
    if (k->cap - k->len < (1u << 16)) {
      size_t nc = k->cap ? k->cap * 2 : (1u << 20);
      unsigned char *nb = realloc(k->buf, nc);
      if (!nb) return cm_error(CM_ERR_MEMORY, "[savez_compressed] Out of memory.");
      k->buf = nb, k->cap = nc;
    }
    size_t room = k->cap - k->len < (1u << 30) ? k->cap - k->len : (1u << 30);
    k->zs.next_out = k->buf + k->len;
    k->zs.avail_out = (uInt)room;
    int zr = deflate(&k->zs, flush);
    k->len += room - k->zs.avail_out;
    if (zr == Z_STREAM_ERROR) return ZFAIL("[savez_compressed] deflate failed.");
    if (flush == Z_FINISH && zr == Z_STREAM_END) return 0;
  } while (k->zs.avail_in || k->zs.avail_out == 0 || flush == Z_FINISH);
  return 0;
}
#endif

static int sink_write(void *ctx, const void *src, size_t n) {
  sink *k = ctx;
  k->crc = crc_update(k->crc, src, n);
  k->n += n;
#ifdef CMLX_HAVE_ZLIB
  const unsigned char *p = src;
  while (k->deflate && n) {
    size_t chunk = n < (1u << 30) ? n : (1u << 30);
    if (sink_deflate(k, p, chunk, Z_NO_FLUSH)) return -1;
    p += chunk, n -= chunk;
  }
#endif
  return 0;
}

typedef struct central {
  uint32_t crc;
  uint64_t csize, usize, local;
  uint16_t method;
} central;

static int put_local(cm_writer *w, const char *name, size_t nl, const central *c) {
  bool z64 = c->usize >= 0xFFFFFFFF || c->csize >= 0xFFFFFFFF;
  unsigned char h[30 + 20];
  memset(h, 0, sizeof h);
  wr(h, 0x04034b50, 4);
  wr(h + 4, z64 ? 45 : 20, 2);
  wr(h + 8, c->method, 2);
  wr(h + 10, 0, 2);    /* time */
  wr(h + 12, 0x21, 2); /* date: 1980-01-01 */
  wr(h + 14, c->crc, 4);
  wr(h + 18, z64 ? 0xFFFFFFFF : c->csize, 4);
  wr(h + 22, z64 ? 0xFFFFFFFF : c->usize, 4);
  wr(h + 26, nl, 2);
  wr(h + 28, z64 ? 20 : 0, 2);
  unsigned char x[20];
  wr(x, 1, 2);
  wr(x + 2, 16, 2);
  wr(x + 4, c->usize, 8);
  wr(x + 12, c->csize, 8);
  if (cm_writer_put(w, h, 30) || cm_writer_put(w, name, nl)) return -1;
  return z64 ? cm_writer_put(w, x, 20) : 0;
}

static int put_central(cm_writer *w, const char *name, size_t nl, const central *c) {
  unsigned char h[46], x[28];
  size_t xl = 4;
  memset(h, 0, sizeof h);
  if (c->usize >= 0xFFFFFFFF) wr(x + xl, c->usize, 8), xl += 8;
  if (c->csize >= 0xFFFFFFFF) wr(x + xl, c->csize, 8), xl += 8;
  if (c->local >= 0xFFFFFFFF) wr(x + xl, c->local, 8), xl += 8;
  wr(x, 1, 2);
  wr(x + 2, xl - 4, 2);
  if (xl == 4) xl = 0;
  wr(h, 0x02014b50, 4);
  wr(h + 4, 0x0300 | (xl ? 45 : 20), 2); /* made by: Unix */
  wr(h + 6, xl ? 45 : 20, 2);
  wr(h + 10, c->method, 2);
  wr(h + 14, 0x21, 2);
  wr(h + 16, c->crc, 4);
  wr(h + 20, c->csize >= 0xFFFFFFFF ? 0xFFFFFFFF : c->csize, 4);
  wr(h + 24, c->usize >= 0xFFFFFFFF ? 0xFFFFFFFF : c->usize, 4);
  wr(h + 28, nl, 2);
  wr(h + 30, xl, 2);
  wr(h + 38, 0644u << 16, 4);
  wr(h + 42, c->local >= 0xFFFFFFFF ? 0xFFFFFFFF : c->local, 4);
  if (cm_writer_put(w, h, 46) || cm_writer_put(w, name, nl)) return -1;
  return xl ? cm_writer_put(w, x, xl) : 0;
}

static int put_end(cm_writer *w, uint64_t count, uint64_t cd_off, uint64_t cd_size) {
  bool z64 = count >= 0xFFFF || cd_off >= 0xFFFFFFFF || cd_size >= 0xFFFFFFFF;
  if (z64) {
    unsigned char z[56], loc[20];
    memset(z, 0, sizeof z);
    memset(loc, 0, sizeof loc);
    uint64_t zoff = w->pos;
    wr(z, 0x06064b50, 4);
    wr(z + 4, 44, 8);
    wr(z + 12, 45, 2);
    wr(z + 14, 45, 2);
    wr(z + 24, count, 8);
    wr(z + 32, count, 8);
    wr(z + 40, cd_size, 8);
    wr(z + 48, cd_off, 8);
    wr(loc, 0x07064b50, 4);
    wr(loc + 8, zoff, 8);
    wr(loc + 16, 1, 4);
    if (cm_writer_put(w, z, 56) || cm_writer_put(w, loc, 20)) return -1;
  }
  unsigned char e[22];
  memset(e, 0, sizeof e);
  wr(e, 0x06054b50, 4);
  wr(e + 8, z64 ? 0xFFFF : count, 2);
  wr(e + 10, z64 ? 0xFFFF : count, 2);
  wr(e + 12, z64 ? 0xFFFFFFFF : cd_size, 4);
  wr(e + 16, z64 ? 0xFFFFFFFF : cd_off, 4);
  return cm_writer_put(w, e, 22);
}

static int save_npz(cm_writer *w, const cm_named_arrays *arrays, bool compressed) {
  const char *fn = compressed ? "savez_compressed" : "savez";
#ifndef CMLX_HAVE_ZLIB
  if (compressed)
    return cm_error(CM_ERR_NOT_IMPLEMENTED, "[savez_compressed] cmlx was built without zlib.");
#endif
  size_t n = arrays->n;
  central *cs = calloc(n ? n : 1, sizeof *cs);
  cm_array **c = calloc(n ? n : 1, sizeof *c);
  char **names = calloc(n ? n : 1, sizeof *names);
  int rc = cs && c && names ? 0 : cm_error(CM_ERR_MEMORY, "[%s] Out of memory.", fn);
  uint64_t base = w->pos;
  for (size_t i = 0; i < n && !rc; i++) {
    size_t kl = strlen(arrays->keys[i]);
    if (kl + 4 > 0xFFFF) {
      rc = cm_error(CM_ERR_VALUE, "[%s] Name too long: %.64s...", fn, arrays->keys[i]);
      break;
    }
    if (!(names[i] = malloc(kl + 5))) {
      rc = cm_error(CM_ERR_MEMORY, "[%s] Out of memory.", fn);
      break;
    }
    memcpy(names[i], arrays->keys[i], kl);
    memcpy(names[i] + kl, ".npy", 5);
    /* once, so both passes write the same bytes from one buffer */
    cm_array *a = arrays->arrs[i];
    if (cm_eval1(a)) {
      rc = -1;
      break;
    }
    c[i] = a->ndim > 1 && !cm_row_contiguous(a) && cm_col_contiguous(a)
               ? cm_retain(a)
               : cm_io_row_contiguous(a, fn);
    if (!c[i]) {
      rc = -1;
      break;
    }
    sink k = {.deflate = compressed};
#ifdef CMLX_HAVE_ZLIB
    if (compressed && deflateInit2(&k.zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8,
                                   Z_DEFAULT_STRATEGY) != Z_OK) {
      rc = cm_error(CM_ERR_MEMORY, "[%s] Out of memory.", fn);
      break;
    }
#endif
    cm_writer kw = {sink_write, &k, 0, "sink"};
    rc = cm_save_npy(&kw, c[i]);
#ifdef CMLX_HAVE_ZLIB
    if (compressed) {
      if (!rc) rc = sink_deflate(&k, NULL, 0, Z_FINISH);
      deflateEnd(&k.zs);
    }
#endif
    cs[i] = (central){k.crc, compressed ? k.len : k.n, k.n, w->pos - base, compressed ? 8 : 0};
    if (!rc) rc = put_local(w, names[i], kl + 4, &cs[i]);
    if (!rc) rc = compressed ? cm_writer_put(w, k.buf, k.len) : cm_save_npy(w, c[i]);
    free(k.buf);
  }
  uint64_t cd_off = w->pos - base;
  for (size_t i = 0; i < n && !rc; i++) rc = put_central(w, names[i], strlen(names[i]), &cs[i]);
  if (!rc) rc = put_end(w, n, cd_off, w->pos - base - cd_off);
  for (size_t i = 0; i < n && c && names; i++) {
    if (c[i]) cm_release(c[i]);
    free(names[i]);
  }
  free(cs), free(c), free(names);
  return rc;
}

/* The members go in MLX's order (its std::unordered_map's: key_order.c),
 * so that a reader listing them sees what it sees in MLX's files. */
int cm_save_npz(cm_writer *w, const cm_named_arrays *arrays, bool compressed) {
  cm_named_arrays ordered;
  if (cm_named_arrays_map_order(arrays, &ordered)) return -1;
  int rc = save_npz(w, &ordered, compressed);
  cm_map_order_view_free(ordered.keys, ordered.arrs);
  return rc;
}
