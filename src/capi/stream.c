/* mlx/c/stream.h: stream handles (ctx = a cell holding a heap cm_stream).  As in mlx-c an
 * empty handle (mlx_stream_new()) is no stream: every function that uses
 * one reports "expected a non-empty mlx_stream"; programs pass
 * mlx_default_cpu_stream_new() or a stream they made. */
#include <stdio.h>
#include <stdlib.h>

#include "capi/capi.h"

mlx_stream capi_stream_wrap(cm_stream s) {
  cm_stream *p = malloc(sizeof *p);
  if (!p) {
    capi_errorf("[mlx_stream] Out of memory.");
    return (mlx_stream){NULL};
  }
  *p = s;
  void *cell = capi_cell_new(CAPI_H_STREAM, p);
  if (!cell) free(p);
  return (mlx_stream){cell};
}

/* Replace *dst with a new handle for s. */
static int put_stream(mlx_stream *dst, cm_stream s) {
  if (capi_check("mlx_stream", dst->ctx, CAPI_H_STREAM)) return 1;
  mlx_stream n = capi_stream_wrap(s);
  if (!n.ctx) return 1;
  mlx_stream_free(*dst);
  *dst = n;
  return 0;
}

mlx_stream mlx_stream_new(void) { return (mlx_stream){NULL}; }

mlx_stream mlx_stream_new_device(mlx_device dev) {
  cm_device d = {CM_CPU, 0};
  cm_stream s;
  if (capi_device("mlx_stream_new_device", dev, &d)) return mlx_stream_new();
  if (cm_new_stream(d, &s)) {
    capi_fail();
    return mlx_stream_new();
  }
  return capi_stream_wrap(s);
}

int mlx_stream_set(mlx_stream *stream, const mlx_stream src) {
  if (capi_op("mlx_stream_set", stream, src)) return 1;
  if (stream->ctx == src.ctx) return 0;
  return put_stream(stream, capi_stream(src));
}

int mlx_stream_free(mlx_stream stream) {
  void *p;
  if (capi_cell_free("mlx_stream_free", stream.ctx, CAPI_H_STREAM, &p)) return 1;
  free(p);
  return 0;
}

int mlx_stream_tostring(mlx_string *str, mlx_stream stream) {
  if (capi_op("mlx_stream_tostring", str, stream)) return 1;
  cm_stream s = capi_stream(stream);
  char buf[96];
  snprintf(buf, sizeof buf, "Stream(Device(%s, %d), %d)", cm_device_type_name(s.device.type),
           s.device.index, s.index);
  return capi_string_set(str, buf);
}

/* mlx-c throws out of this bool function on an empty stream; here it is
 * reported and the answer is false. */
bool mlx_stream_equal(mlx_stream lhs, mlx_stream rhs) {
  if (capi_need_stream("mlx_stream_equal", lhs) || capi_need_stream("mlx_stream_equal", rhs))
    return false;
  return cm_stream_equal(capi_stream(lhs), capi_stream(rhs));
}

int mlx_stream_get_device(mlx_device *dev, mlx_stream stream) {
  if (capi_op("mlx_stream_get_device", dev, stream)) return 1;
  mlx_device d = capi_device_wrap(capi_stream(stream).device);
  if (!d.ctx) return 1;
  mlx_device_free(*dev);
  *dev = d;
  return 0;
}

int mlx_stream_get_index(int *index, mlx_stream stream) {
  if (capi_op("mlx_stream_get_index", index, stream)) return 1;
  *index = capi_stream(stream).index;
  return 0;
}

int mlx_synchronize(mlx_stream stream) {
  if (capi_need_stream("mlx_synchronize", stream)) return 1;
  cm_stream s;
  if (cm_stream_resolve(capi_stream(stream), &s) || cm_synchronize(s)) return capi_fail();
  return 0;
}

int mlx_get_default_stream(mlx_stream *stream, mlx_device dev) {
  if (capi_out("mlx_get_default_stream", stream)) return 1;
  cm_device d = {CM_CPU, 0};
  cm_stream s;
  if (capi_device("mlx_get_default_stream", dev, &d)) return 1;
  if (cm_default_stream(d, &s)) return capi_fail();
  return put_stream(stream, s);
}

int mlx_set_default_stream(mlx_stream stream) {
  if (capi_need_stream("mlx_set_default_stream", stream)) return 1;
  return cm_set_default_stream(capi_stream(stream)) ? capi_fail() : 0;
}

static mlx_stream default_of(cm_device_type t) {
  cm_stream s;
  if (cm_default_stream((cm_device){t, 0}, &s)) {
    capi_fail();
    return mlx_stream_new();
  }
  return capi_stream_wrap(s);
}

mlx_stream mlx_default_cpu_stream_new(void) { return default_of(CM_CPU); }
/* No GPU backend yet: reports "[default_stream] Cannot get gpu stream
 * without gpu backend." and returns an empty stream, as mlx-c does on a
 * CPU-only MLX. */
mlx_stream mlx_default_gpu_stream_new(void) { return default_of(CM_GPU); }
