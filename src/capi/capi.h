/* Private helpers of the C API (src/capi/ *.c).  The C API is a thin
 * adapter over the core: it unwraps handles, calls the cm_ function, turns
 * a failure into a call of the error handler, and wraps the result.
 *
 * Handle representations: the ctx of each handle of the types listed in
 * handle.h is a checked cell (NULL = empty) whose object is
 *   mlx_array   cm_array* (one reference owned by the handle)
 *   mlx_stream  cm_stream* (heap copy)
 *   mlx_device  cm_device* (heap copy)
 *   mlx_string  the heap string (see string.c)
 *   vectors, maps, closures, io, ...: their own structs (vector.c, map.c,
 *               closure.c, io_types.c, ...)
 * Every handle type uses cells; code outside a type's file reads the
 * object through capi_obj after checking the handle. */
#ifndef CMLX_CAPI_CAPI_H
#define CMLX_CAPI_CAPI_H

#include <stddef.h>
#include <stdint.h>

#include "core/array.h"
#include "core/error.h"
#include "core/stream.h"
#include "capi/handle.h"
#include "mlx/c/mlx.h"

/* ---- errors ---- */
/* Call the current handler with msg (the default prints and exits). */
void capi_report(const char *msg);
/* Report the core's current error message; returns 1. */
int capi_fail(void);
/* Report a formatted message; returns 1. */
int capi_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "<name>: not implemented yet in cmlx"; returns 1. */
int capi_not_impl(const char *name);

/* ---- result pointers and streams ----
 * Every function that writes through a pointer checks it first, so a NULL
 * one is reported ("[fn] expected a non-NULL result pointer") where mlx-c
 * would crash dereferencing it; an empty mlx_stream is reported as mlx-c
 * does ("[fn] expected a non-empty mlx_stream").  The checks are inline:
 * a test of a register on the path every call takes. */
int capi_null_result(const char *fn);  /* reports; returns 1 */
int capi_empty_stream(const char *fn, const void *ctx); /* reports; returns 1 */
static inline int capi_out(const char *fn, const void *res) {
  return res ? 0 : capi_null_result(fn);
}
static inline int capi_need_stream(const char *fn, mlx_stream s) {
  return s.ctx && capi_live(s.ctx, CAPI_H_STREAM) ? 0 : capi_empty_stream(fn, s.ctx);
}
/* The prologue of an operation: its result pointer, then its stream. */
static inline int capi_op(const char *fn, const void *res, mlx_stream s) {
  return capi_out(fn, res) || capi_need_stream(fn, s);
}
/* A count passed as int or size_t that is negative (a size_t above
 * PTRDIFF_MAX is a negative int converted): mlx-c builds a std::vector from
 * (p, p + n) and reports std::length_error's message.  0 or 1 (reported). */
int capi_count(const char *fn, const char *what, long long n);
static inline int capi_count_size(const char *fn, const char *what, size_t n) {
  return n > (size_t)PTRDIFF_MAX ? capi_count(fn, what, (long long)(ptrdiff_t)n) : 0;
}

/* ---- arrays ---- */
/* The node of a checked array handle (NULL: empty, or freed). */
static inline cm_array *capi_arr(mlx_array a) { return (cm_array *)capi_obj(a.ctx); }
/* Put r (a new reference, or NULL after a core failure) into *res,
 * releasing what *res held.  Returns 0, or 1 after reporting the error
 * (leaving *res untouched; r is released when *res is a freed or invalid
 * handle). */
int capi_set(mlx_array *res, cm_array *r);
/* A new handle owning r (NULL: after a core failure, reported); empty
 * after reporting a failure.  r is released when no cell can be had. */
mlx_array capi_wrap(cm_array *r);
/* The node of an array handle capi_need has accepted (no NULL test). */
static inline cm_array *capi_arr_live(mlx_array a) { return (cm_array *)capi_obj_live(a.ctx); }
/* Require a live, non-empty array argument; reports and returns 1 if not. */
static inline int capi_need(const char *fn, mlx_array a) {
  return a.ctx && capi_live(a.ctx, CAPI_H_ARRAY) ? 0 : capi_need_handle(fn, a.ctx, CAPI_H_ARRAY);
}
/* An optional array argument: empty, or live; 0, or 1 after reporting. */
static inline int capi_opt(const char *fn, mlx_array a) {
  return capi_check(fn, a.ctx, CAPI_H_ARRAY);
}
/* Check a (shape, shape_num) argument; sets *ndim.  0, or 1 after
 * reporting (NULL shape with entries, more than CM_MAX_DIMS entries). */
int capi_shape(const char *fn, const int *shape, size_t num, int *ndim);
/* A (pointer, count) list argument: the count as an int; 0, or 1 after
 * reporting a NULL pointer with entries or a count past INT_MAX. */
int capi_list(const char *fn, const void *p, size_t num, int *n);
/* An mlx_dtype argument; reports and returns 1 if it is not one. */
int capi_dtype(const char *fn, mlx_dtype t);

/* ---- streams and devices ---- */
/* The core stream behind s, which the caller has checked is non-empty
 * (capi_op / capi_need_stream); an empty one would mean the default. */
static inline cm_stream capi_stream(mlx_stream s) {
  const cm_stream *p = capi_obj(s.ctx);
  return p ? *p : CM_STREAM_DEFAULT;
}
mlx_stream capi_stream_wrap(cm_stream s);
mlx_device capi_device_wrap(cm_device d);
/* The device behind d; reports and returns 1 if d is empty. */
int capi_device(const char *fn, mlx_device d, cm_device *out);

/* ---- vectors (vector.c) ---- */
/* The arrays of a vector (borrowed; n may be 0; an empty handle has
 * none): 0, or 1 after reporting a freed or invalid handle (as fn). */
int capi_vector_arrays(const char *fn, mlx_vector_array v, cm_array *const **items, size_t *n);
/* Replace *res's contents by arrays[0..n) (each retained).  0 or 1. */
int capi_vector_set_arrays(mlx_vector_array *res, cm_array *const *arrays, size_t n);

/* ---- closures (closure.c) ---- */
/* Call a plain closure (ctx of an mlx_closure) the core's way, as
 * cm_closure.call: *out is a malloc'd list of *nout new references.  A
 * nonzero status from the C function becomes a core error (-1), so the
 * caller reports it once. */
int capi_closure_call(void *ctx, cm_array *const *in, int nin, cm_array ***out, int *nout);
/* Mark a closure the API itself made (value_and_grad, custom_function,
 * checkpoint): its function fails by leaving a core error set (cm_error)
 * without reporting, and the apply functions (or the transform that
 * called it) report that message once, as mlx-c does for its own
 * closures, instead of a generic "non-zero value" one. */
void capi_closure_mark_native(void *ctx);

/* ---- strings (string.c) ---- */
/* Replace *str's contents by a copy of s; 0, or 1 after reporting. */
int capi_string_set(mlx_string *str, const char *s);
/* Take ownership of malloc'd s. */
int capi_string_adopt(mlx_string *str, char *s);

#endif
