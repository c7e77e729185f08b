/* A growable NUL-terminated string (the printer's and metal_kernel's
 * source writer): a failed allocation sets failed and later appends do
 * nothing. */
#ifndef CMLX_CORE_STRBUF_H
#define CMLX_CORE_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cm_strbuf {
  char *s;
  size_t len, cap;
  bool failed;
} cm_strbuf;

static inline void cm_strbuf_put(cm_strbuf *b, const char *s, size_t n) {
  if (b->failed) return;
  if (b->len + n + 1 > b->cap) {
    size_t ncap = b->cap ? b->cap : 256;
    while (ncap < b->len + n + 1) ncap *= 2;
    char *ns = realloc(b->s, ncap);
    if (!ns) {
      b->failed = true;
      return;
    }
    b->s = ns;
    b->cap = ncap;
  }
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = 0;
}

static inline void cm_strbuf_str(cm_strbuf *b, const char *s) { cm_strbuf_put(b, s, strlen(s)); }

/* Append printf-formatted text (measured first, then written in place). */
__attribute__((format(printf, 2, 3))) static inline void cm_strbuf_printf(cm_strbuf *b,
                                                                          const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->failed = true;
    return;
  }
  size_t len = b->len;
  cm_strbuf_put(b, "", 0); /* an allocated buffer, even when n is 0 */
  if (b->failed) return;
  if (len + (size_t)n + 1 > b->cap) {
    size_t ncap = b->cap;
    while (ncap < len + (size_t)n + 1) ncap *= 2;
    char *ns = realloc(b->s, ncap);
    if (!ns) {
      b->failed = true;
      return;
    }
    b->s = ns;
    b->cap = ncap;
  }
  va_start(ap, fmt);
  vsnprintf(b->s + len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len = len + (size_t)n;
}

#endif
