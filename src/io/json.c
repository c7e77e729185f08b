/* JSON reader and string writer (json.h). */
#include "io/json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define JSON_MAX_DEPTH 64

typedef struct jp {
  const char *p, *end, *start;
  const char *fn;
  int err;
} jp;

static int jfail(jp *j, const char *what) {
  if (!j->err)
    cm_error(CM_ERR_RUNTIME, "[%s] Invalid JSON header: %s at byte %zu.", j->fn, what,
             (size_t)(j->p - j->start));
  j->err = 1;
  return -1;
}

static void ws(jp *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static int sb_grow(cm_strbuf *b, size_t extra) {
  if (b->len + extra + 1 <= b->cap) return 0;
  size_t nc = b->cap ? b->cap : 64;
  while (nc < b->len + extra + 1) nc *= 2;
  char *np = realloc(b->p, nc);
  if (!np) return -1;
  b->p = np;
  b->cap = nc;
  return 0;
}

int cm_strbuf_add(cm_strbuf *b, const char *s, size_t n) {
  if (sb_grow(b, n)) return -1;
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
  return 0;
}

int cm_strbuf_addf(cm_strbuf *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof tmp) return -1;
  return cm_strbuf_add(b, tmp, (size_t)n);
}

static void put_utf8(cm_strbuf *b, uint32_t c, int *oom) {
  char u[4];
  size_t n;
  if (c < 0x80) u[0] = (char)c, n = 1;
  else if (c < 0x800) u[0] = (char)(0xC0 | c >> 6), u[1] = (char)(0x80 | (c & 63)), n = 2;
  else if (c < 0x10000)
    u[0] = (char)(0xE0 | c >> 12), u[1] = (char)(0x80 | (c >> 6 & 63)),
    u[2] = (char)(0x80 | (c & 63)), n = 3;
  else
    u[0] = (char)(0xF0 | c >> 18), u[1] = (char)(0x80 | (c >> 12 & 63)),
    u[2] = (char)(0x80 | (c >> 6 & 63)), u[3] = (char)(0x80 | (c & 63)), n = 4;
  if (cm_strbuf_add(b, u, n)) *oom = 1;
}

/* Length of the valid UTF-8 sequence at p (0 if invalid). */
static size_t utf8_len(const unsigned char *p, const unsigned char *end) {
  unsigned c = p[0];
  size_t n;
  uint32_t cp;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) n = 2, cp = c & 31;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, cp = c & 15;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, cp = c & 7;
  else return 0;
  if ((size_t)(end - p) < n) return 0;
  for (size_t i = 1; i < n; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (p[i] & 63);
  }
  if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
      (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
    return 0;
  return n;
}

static int hex4(jp *j, uint32_t *out) {
  if (j->end - j->p < 4) return jfail(j, "truncated \\u escape");
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    char c = *j->p++;
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
    else return jfail(j, "bad \\u escape");
  }
  *out = v;
  return 0;
}

static int parse_string(jp *j, char **out, size_t *olen) {
  j->p++; /* opening quote */
  cm_strbuf b = {0};
  int oom = 0;
  while (1) {
    if (j->p >= j->end) {
      free(b.p);
      return jfail(j, "unterminated string");
    }
    unsigned char c = (unsigned char)*j->p;
    if (c == '"') {
      j->p++;
      break;
    }
    if (c < 0x20) {
      free(b.p);
      return jfail(j, "control character in string");
    }
    if (c == '\\') {
      j->p++;
      if (j->p >= j->end) {
        free(b.p);
        return jfail(j, "unterminated string");
      }
      char e = *j->p++;
      const char *map = "\"\\/bfnrt", *rep = "\"\\/\b\f\n\r\t";
      const char *f = e ? strchr(map, e) : NULL;
      if (f) {
        if (cm_strbuf_add(&b, rep + (f - map), 1)) oom = 1;
      } else if (e == 'u') {
        uint32_t cp;
        if (hex4(j, &cp)) {
          free(b.p);
          return -1;
        }
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t lo;
          if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u') {
            free(b.p);
            return jfail(j, "unpaired surrogate");
          }
          j->p += 2;
          if (hex4(j, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
            free(b.p);
            return jfail(j, "unpaired surrogate");
          }
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          free(b.p);
          return jfail(j, "unpaired surrogate");
        }
        put_utf8(&b, cp, &oom);
      } else {
        free(b.p);
        return jfail(j, "bad escape");
      }
    } else {
      size_t n = utf8_len((const unsigned char *)j->p, (const unsigned char *)j->end);
      if (!n) {
        free(b.p);
        return jfail(j, "invalid UTF-8 in string");
      }
      if (cm_strbuf_add(&b, j->p, n)) oom = 1;
      j->p += n;
    }
    if (oom) {
      free(b.p);
      j->err = 1;
      return cm_error(CM_ERR_MEMORY, "[%s] Out of memory.", j->fn);
    }
  }
  if (!b.p && cm_strbuf_add(&b, "", 0)) {
    j->err = 1;
    return cm_error(CM_ERR_MEMORY, "[%s] Out of memory.", j->fn);
  }
  *out = b.p;
  *olen = b.len;
  return 0;
}

static int parse_number(jp *j, cm_json *v) {
  const char *st = j->p;
  if (j->p < j->end && *j->p == '-') j->p++;
  if (j->p >= j->end || *j->p < '0' || *j->p > '9') return jfail(j, "bad number");
  bool integral = true;
  while (j->p < j->end && ((*j->p >= '0' && *j->p <= '9') || *j->p == '.' || *j->p == 'e' ||
                           *j->p == 'E' || *j->p == '+' || *j->p == '-')) {
    if (*j->p == '.' || *j->p == 'e' || *j->p == 'E') integral = false;
    j->p++;
  }
  char tmp[64];
  size_t n = (size_t)(j->p - st);
  if (n >= sizeof tmp) return jfail(j, "number too long");
  memcpy(tmp, st, n);
  tmp[n] = 0;
  char *endp;
  v->kind = CM_JSON_NUMBER;
  v->d = strtod(tmp, &endp);
  if (endp != tmp + n) return jfail(j, "bad number");
  if (integral && tmp[0] != '-') {
    uint64_t u = 0;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
      unsigned dgt = (unsigned)(tmp[i] - '0');
      if (u > (UINT64_MAX - dgt) / 10) ok = false;
      u = u * 10 + dgt;
    }
    v->is_uint = ok;
    v->u = u;
  }
  return 0;
}

static int parse_value(jp *j, cm_json *v, int depth);

static int parse_container(jp *j, cm_json *v, int depth, bool object) {
  if (depth >= JSON_MAX_DEPTH) return jfail(j, "nesting too deep");
  j->p++;
  v->kind = object ? CM_JSON_OBJECT : CM_JSON_ARRAY;
  size_t cap = 0;
  ws(j);
  if (j->p < j->end && *j->p == (object ? '}' : ']')) {
    j->p++;
    return 0;
  }
  while (1) {
    if (v->n == cap) {
      size_t nc = cap ? cap * 2 : 4;
      cm_json *ni = realloc(v->items, nc * sizeof *ni);
      if (ni) v->items = ni;
      char **nk = object ? realloc(v->keys, nc * sizeof *nk) : NULL;
      if (nk) v->keys = nk;
      size_t *nl = object ? realloc(v->klens, nc * sizeof *nl) : NULL;
      if (nl) v->klens = nl;
      if (!ni || (object && (!nk || !nl))) {
        j->err = 1;
        return cm_error(CM_ERR_MEMORY, "[%s] Out of memory.", j->fn);
      }
      cap = nc;
    }
    ws(j);
    if (object) {
      if (j->p >= j->end || *j->p != '"') return jfail(j, "expected a key");
      if (parse_string(j, &v->keys[v->n], &v->klens[v->n])) return -1;
      ws(j);
      if (j->p >= j->end || *j->p != ':') {
        free(v->keys[v->n]);
        return jfail(j, "expected ':'");
      }
      j->p++;
    }
    memset(&v->items[v->n], 0, sizeof v->items[0]);
    v->n++;
    if (parse_value(j, &v->items[v->n - 1], depth + 1)) return -1;
    ws(j);
    if (j->p < j->end && *j->p == ',') {
      j->p++;
      continue;
    }
    if (j->p < j->end && *j->p == (object ? '}' : ']')) {
      j->p++;
      return 0;
    }
    return jfail(j, object ? "expected ',' or '}'" : "expected ',' or ']'");
  }
}

static int parse_value(jp *j, cm_json *v, int depth) {
  ws(j);
  if (j->p >= j->end) return jfail(j, "unexpected end");
  char c = *j->p;
  if (c == '{' || c == '[') return parse_container(j, v, depth, c == '{');
  if (c == '"') {
    v->kind = CM_JSON_STRING;
    return parse_string(j, &v->s, &v->slen);
  }
  if (c == '-' || (c >= '0' && c <= '9')) return parse_number(j, v);
  struct {
    const char *w;
    cm_json_kind k;
    bool b;
  } lits[] = {
      {"true", CM_JSON_BOOL, true}, {"false", CM_JSON_BOOL, false}, {"null", CM_JSON_NULL, false}};
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(lits[i].w);
    if ((size_t)(j->end - j->p) >= n && !memcmp(j->p, lits[i].w, n)) {
      j->p += n;
      v->kind = lits[i].k;
      v->b = lits[i].b;
      return 0;
    }
  }
  return jfail(j, "unexpected character");
}

static void json_free_inner(cm_json *v) {
  free(v->s);
  for (size_t i = 0; i < v->n; i++) {
    json_free_inner(&v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->klens);
}

void cm_json_free(cm_json *v) {
  if (!v) return;
  json_free_inner(v);
  free(v);
}

cm_json *cm_json_parse(const char *text, size_t len, const char *fn) {
  jp j = {text, text + len, text, fn, 0};
  cm_json *v = calloc(1, sizeof *v);
  if (!v) {
    cm_error(CM_ERR_MEMORY, "[%s] Out of memory.", fn);
    return NULL;
  }
  int rc = parse_value(&j, v, 0);
  if (!rc) {
    ws(&j);
    if (j.p != j.end) rc = jfail(&j, "trailing characters");
  }
  if (rc) {
    cm_json_free(v);
    return NULL;
  }
  return v;
}

const cm_json *cm_json_get(const cm_json *obj, const char *key) {
  if (!obj || obj->kind != CM_JSON_OBJECT) return NULL;
  size_t kl = strlen(key);
  for (size_t i = 0; i < obj->n; i++)
    if (obj->klens[i] == kl && !memcmp(obj->keys[i], key, kl)) return &obj->items[i];
  return NULL;
}

int cm_json_add_string(cm_strbuf *b, const char *s, size_t n) {
  if (cm_strbuf_add(b, "\"", 1)) return -1;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    int rc;
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      rc = cm_strbuf_add(b, e, 2);
    } else if (c < 0x20) {
      /* the short forms where JSON has them, as nlohmann::json (MLX) writes */
      const char *sh = c == '\b'   ? "\\b"
                       : c == '\f' ? "\\f"
                       : c == '\n' ? "\\n"
                       : c == '\r' ? "\\r"
                       : c == '\t' ? "\\t"
                                   : NULL;
      rc = sh ? cm_strbuf_add(b, sh, 2) : cm_strbuf_addf(b, "\\u%04x", c);
    } else {
      rc = cm_strbuf_add(b, (const char *)&c, 1);
    }
    if (rc) return -1;
  }
  return cm_strbuf_add(b, "\"", 1);
}
