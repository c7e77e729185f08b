/* The printed form of an array, exactly as MLX prints it (repr and str are
 * the same): "array([1, 2, 3], dtype=int32)".  Numbers use C's %g (MLX
 * streams them with C++'s default precision of 6), bool is True/False,
 * complex is "1+2j", and any axis longer than 6 shows its first three and
 * last three entries around "...".  Shared by the C API (tostring) and the
 * Python extension (repr/str). */
#ifndef CMLX_CORE_FORMAT_H
#define CMLX_CORE_FORMAT_H

#include <stddef.h>

#include "core/array.h"

/* a must be evaluated (the caller runs eval first).  Returns a malloc'd
 * NUL-terminated string, or NULL with the error set. */
char *cm_array_format(const cm_array *a);

/* One element (at address p, of dtype t) as MLX prints it inside an
 * array; writes at most cap bytes, returns the length. */
size_t cm_format_scalar(char *buf, size_t cap, const void *p, cm_dtype t);

/* The precision numbers print with (MLX's mx.set_printoptions): -1, the
 * default, is C++'s stream default (%g); otherwise fixed notation with
 * that many decimals.  Process-wide, as in MLX. */
void cm_set_print_precision(int precision);
int cm_print_precision(void);

#endif
