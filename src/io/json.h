/* A small JSON reader for safetensors headers: a tree of values with an
 * explicit depth limit (no recursion blow-up on hostile input), strings
 * decoded to UTF-8 (escapes, surrogate pairs) and checked to be valid
 * UTF-8, integers kept exactly up to 2^64 - 1. */
#ifndef CMLX_IO_JSON_H
#define CMLX_IO_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum cm_json_kind {
  CM_JSON_NULL,
  CM_JSON_BOOL,
  CM_JSON_NUMBER,
  CM_JSON_STRING,
  CM_JSON_ARRAY,
  CM_JSON_OBJECT
} cm_json_kind;

typedef struct cm_json cm_json;
struct cm_json {
  cm_json_kind kind;
  bool b;
  bool is_uint; /* a number that is a non-negative integer < 2^64 */
  uint64_t u;
  double d;
  char *s; /* STRING: decoded bytes, NUL-terminated */
  size_t slen;
  size_t n; /* ARRAY / OBJECT: entries */
  cm_json *items;
  char **keys; /* OBJECT */
  size_t *klens;
};

/* Parse text[0..len); NULL with a RuntimeError "[fn] ..." on bad input. */
cm_json *cm_json_parse(const char *text, size_t len, const char *fn);
void cm_json_free(cm_json *v);
/* The member named key of an object, or NULL. */
const cm_json *cm_json_get(const cm_json *obj, const char *key);

/* Append s as a JSON string literal (quotes, escapes) to a growable
 * buffer; -1 on out of memory. */
typedef struct cm_strbuf {
  char *p;
  size_t len, cap;
} cm_strbuf;
int cm_strbuf_add(cm_strbuf *b, const char *s, size_t n);
int cm_strbuf_addf(cm_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cm_json_add_string(cm_strbuf *b, const char *s, size_t n);

#endif
