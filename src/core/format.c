#include "core/format.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"

/* Axes longer than this are elided to EDGE entries at each end. */
#define ELIDE_ABOVE 6
#define EDGE 3

typedef cm_strbuf strbuf;
#define sb_put cm_strbuf_put
#define sb_str cm_strbuf_str

static void sb_spaces(strbuf *b, int n) {
  for (int i = 0; i < n; i++) sb_put(b, " ", 1);
}

/* MLX's global print precision (mx.set_printoptions): -1 streams numbers
 * with C++'s defaults, any other value in fixed notation with that many
 * decimals (a negative one other than -1 means 6, as std::setprecision
 * with std::fixed does).  One value for the process, as in MLX. */
static _Atomic int print_precision = -1;

void cm_set_print_precision(int precision) { print_precision = precision; }

int cm_print_precision(void) { return print_precision; }

/* One real number: %g as C++'s ostream prints it by default (precision 6),
 * or fixed with the precision set.  printf reads a negative precision as
 * none given, which is C++'s 6 for fixed. */
static size_t fmt_real_prec(char *buf, size_t cap, double v, int precision) {
  if (precision == -1) return (size_t)snprintf(buf, cap, "%g", v);
  return (size_t)snprintf(buf, cap, "%.*f", precision, v);
}

static size_t fmt_real(char *buf, size_t cap, double v) {
  return fmt_real_prec(buf, cap, v, print_precision);
}

size_t cm_format_scalar(char *buf, size_t cap, const void *p, cm_dtype t) {
  switch (t) {
  case CM_BOOL: return (size_t)snprintf(buf, cap, "%s", *(const uint8_t *)p ? "True" : "False");
  case CM_UINT8: return (size_t)snprintf(buf, cap, "%u", (unsigned)*(const uint8_t *)p);
  case CM_UINT16: return (size_t)snprintf(buf, cap, "%u", (unsigned)*(const uint16_t *)p);
  case CM_UINT32: return (size_t)snprintf(buf, cap, "%" PRIu32, *(const uint32_t *)p);
  case CM_UINT64: return (size_t)snprintf(buf, cap, "%" PRIu64, *(const uint64_t *)p);
  case CM_INT8: return (size_t)snprintf(buf, cap, "%d", (int)*(const int8_t *)p);
  case CM_INT16: return (size_t)snprintf(buf, cap, "%d", (int)*(const int16_t *)p);
  case CM_INT32: return (size_t)snprintf(buf, cap, "%" PRId32, *(const int32_t *)p);
  case CM_INT64: return (size_t)snprintf(buf, cap, "%" PRId64, *(const int64_t *)p);
  case CM_FLOAT16: return fmt_real(buf, cap, cm_f16_to_f32(*(const uint16_t *)p));
  case CM_BFLOAT16: return fmt_real(buf, cap, cm_bf16_to_f32(*(const uint16_t *)p));
  case CM_FLOAT32: return fmt_real(buf, cap, *(const float *)p);
  case CM_FLOAT64: return fmt_real(buf, cap, *(const double *)p);
  case CM_COMPLEX64: {
    /* MLX writes the imaginary part's sign itself only when it is below
     * zero: 1-2j, but 0+-0j and inf+nanj. */
    const cm_complex64 *c = p;
    int prec = print_precision;
    /* lengths add up even when cap is too small, as snprintf's do */
    size_t n = fmt_real_prec(buf, cap, c->re, prec);
    n += (size_t)snprintf(buf + (n < cap ? n : cap), n < cap ? cap - n : 0, "%c",
                          c->im < 0 ? '-' : '+');
    n += fmt_real_prec(buf + (n < cap ? n : cap), n < cap ? cap - n : 0,
                       c->im < 0 ? -(double)c->im : (double)c->im, prec);
    n += (size_t)snprintf(buf + (n < cap ? n : cap), n < cap ? cap - n : 0, "j");
    return n;
  }
  default: return (size_t)snprintf(buf, cap, "?");
  }
}

/* Append one element: a stack buffer fits every default-precision number;
 * fixed notation of a large double with many decimals may need more. */
static void sb_scalar(strbuf *b, const void *p, cm_dtype t) {
  char small[96];
  size_t len = cm_format_scalar(small, sizeof small, p, t);
  if (len < sizeof small) {
    sb_put(b, small, len);
    return;
  }
  char *big = malloc(len + 1);
  if (!big) {
    b->failed = true;
    return;
  }
  cm_format_scalar(big, len + 1, p, t);
  sb_put(b, big, len);
  free(big);
}

typedef struct printer {
  const cm_array *a;
  const char *base;
  size_t isz;
  strbuf out;
} printer;

/* Print the sub-array at axis `dim` whose first element is at element
 * offset `off`.  `indent` is the column where this axis' '[' sits. */
static void print_axis(printer *pr, int dim, int64_t off, int indent) {
  const cm_array *a = pr->a;
  int64_t n = a->shape[dim];
  bool elide = n > ELIDE_ABOVE;
  bool last_axis = dim == a->ndim - 1;
  sb_put(&pr->out, "[", 1);
  for (int64_t i = 0; i < n; i++) {
    if (elide && i == EDGE) {
      /* the elision marker takes one slot, then jump to the last EDGE */
      if (last_axis) {
        sb_str(&pr->out, "..., ");
      } else {
        sb_str(&pr->out, "...,\n");
        sb_spaces(&pr->out, indent + 1);
      }
      i = n - EDGE;
    }
    int64_t at = off + i * a->strides[dim];
    if (last_axis) {
      sb_scalar(&pr->out, pr->base + at * (int64_t)pr->isz, a->dtype);
      if (i + 1 < n) sb_str(&pr->out, ", ");
    } else {
      print_axis(pr, dim + 1, at, indent + 1);
      if (i + 1 < n) {
        sb_str(&pr->out, ",\n");
        sb_spaces(&pr->out, indent + 1);
      }
    }
  }
  sb_put(&pr->out, "]", 1);
}

char *cm_array_format(const cm_array *a) {
  if (!cm_is_evaluated(a)) {
    cm_error(CM_ERR_RUNTIME, "[array_format] The array must be evaluated first.");
    return NULL;
  }
  printer pr = {.a = a, .base = cm_data(a), .isz = cm_itemsize(a)};
  sb_str(&pr.out, "array(");
  if (a->ndim == 0) {
    sb_scalar(&pr.out, pr.base, a->dtype);
  } else if (a->size == 0 && a->shape[0] == 0) {
    sb_str(&pr.out, "[]");
  } else {
    print_axis(&pr, 0, 0, 6 /* strlen("array(") */);
  }
  sb_str(&pr.out, ", dtype=");
  sb_str(&pr.out, cm_dtype_name(a->dtype));
  sb_str(&pr.out, ")");
  if (pr.out.failed) {
    free(pr.out.s);
    cm_error(CM_ERR_MEMORY, "[array_format] Out of memory.");
    return NULL;
  }
  return pr.out.s;
}
