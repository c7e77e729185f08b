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

/* Append printf-formatted text. */
__attribute__((format(printf, 2, 3))) static inline void cm_strbuf_printf(cm_strbuf *b,
                                                                          const char *fmt, ...) {
  char small[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->failed = true;
    return;
  }
  if ((size_t)n < sizeof small) {
    cm_strbuf_put(b, small, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big) {
    b->failed = true;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  cm_strbuf_put(b, big, (size_t)n);
  free(big);
}

#endif
