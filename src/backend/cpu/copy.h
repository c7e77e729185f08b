/* The general copy kernel: any layout and dtype to any layout and dtype,
 * elementwise over a shared shape.  astype, contiguous, full and the
 * slow paths of many kernels use it. */
#ifndef CMLX_BACKEND_CPU_COPY_H
#define CMLX_BACKEND_CPU_COPY_H

#include "core/array.h"

/* Copy src (with src's strides and data) into dst's buffer, laid out by
 * dst->strides, converting dtypes.  Shapes must match (broadcast src first
 * by giving it zero strides). */
void cm_cpu_copy_strided(void *dst, cm_dtype dt, const int64_t *dst_strides, const void *src,
                         cm_dtype st, const int64_t *src_strides, int ndim, const int32_t *shape);
/* One strided run of n elements converted from st to dt (steps in
 * elements): the row astype runs. */
typedef void (*cm_convert_row_fn)(void *dst, int64_t ds, const void *src, int64_t ss, int64_t n);
cm_convert_row_fn cm_cpu_convert_row(cm_dtype st, cm_dtype dt);
/* Convert n contiguous elements. */
void cm_cpu_convert(void *dst, cm_dtype dt, const void *src, cm_dtype st, int64_t n);

#endif
