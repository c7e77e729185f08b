/* mlx/c/io_types.h: readers, writers and GGUF containers.
 * Every function not written out below reports "<function>: not
 * implemented yet in cmlx" through the error handler and returns 1 (an
 * empty handle, or false, where the function returns one); none computes
 * anything.  Freeing an (empty) handle succeeds. */
#include <stdlib.h>

#include "capi/capi.h"

/* Each function below reports that it is not implemented yet and ignores
 * its arguments: it never computes a result. */
#pragma GCC diagnostic ignored "-Wunused-parameter"


/* Readers and writers are a descriptor plus the caller's vtable; they are
 * complete here (only io.h's loaders that would use them are missing).
 * Freeing one calls vtable.free(desc). */
typedef struct io_obj {
  void *desc;
  mlx_io_vtable vt;
} io_obj;

static void *io_new(void *desc, mlx_io_vtable vt) {
  io_obj *o = malloc(sizeof *o);
  if (!o) {
    capi_errorf("[mlx_io] Out of memory.");
    return NULL;
  }
  o->desc = desc;
  o->vt = vt;
  return o;
}

static int io_descriptor(void **desc_, void *ctx) {
  io_obj *o = ctx;
  if (!o) return capi_errorf("[mlx_io] expected a non-empty reader or writer");
  *desc_ = o->desc;
  return 0;
}

static int io_tostring(mlx_string *str_, void *ctx) {
  io_obj *o = ctx;
  if (capi_out("mlx_io_tostring", str_)) return 1;
  if (!o) return capi_errorf("[mlx_io] expected a non-empty reader or writer");
  return capi_string_set(str_, o->vt.label ? o->vt.label(o->desc) : "");
}

static int io_free(void *ctx) {
  io_obj *o = ctx;
  if (!o) return 0;
  if (o->vt.free) o->vt.free(o->desc);
  free(o);
  return 0;
}

mlx_io_reader mlx_io_reader_new(void *desc, mlx_io_vtable vtable) {
  return (mlx_io_reader){io_new(desc, vtable)};
}
int mlx_io_reader_descriptor(void **desc_, mlx_io_reader io) {
  if (capi_out("mlx_io_reader_descriptor", desc_)) return 1;
  return io_descriptor(desc_, io.ctx);
}
int mlx_io_reader_tostring(mlx_string *str_, mlx_io_reader io) { return io_tostring(str_, io.ctx); }
int mlx_io_reader_free(mlx_io_reader io) { return io_free(io.ctx); }

mlx_io_writer mlx_io_writer_new(void *desc, mlx_io_vtable vtable) {
  return (mlx_io_writer){io_new(desc, vtable)};
}
int mlx_io_writer_descriptor(void **desc_, mlx_io_writer io) {
  if (capi_out("mlx_io_writer_descriptor", desc_)) return 1;
  return io_descriptor(desc_, io.ctx);
}
int mlx_io_writer_tostring(mlx_string *str_, mlx_io_writer io) { return io_tostring(str_, io.ctx); }
int mlx_io_writer_free(mlx_io_writer io) { return io_free(io.ctx); }

/* ---- GGUF containers ---- */

mlx_io_gguf mlx_io_gguf_new(void) {
  return (mlx_io_gguf){0};
}

int mlx_io_gguf_free(mlx_io_gguf io) {
  return 0;
}

int mlx_io_gguf_get_keys(mlx_vector_string* keys, mlx_io_gguf io) {
  return capi_not_impl(__func__);
}

int mlx_io_gguf_get_array(mlx_array* arr, mlx_io_gguf io, const char* key) {
  return capi_not_impl(__func__);
}

int mlx_io_gguf_get_metadata_array(mlx_array* arr, mlx_io_gguf io, const char* key) {
  return capi_not_impl(__func__);
}

int mlx_io_gguf_get_metadata_string(mlx_string* str, mlx_io_gguf io, const char* key) {
  return capi_not_impl(__func__);
}

int mlx_io_gguf_get_metadata_vector_string(mlx_vector_string *vstr, mlx_io_gguf io,
                                           const char *key) {
  return capi_not_impl(__func__);
}

int mlx_io_gguf_has_metadata_array(bool* flag, mlx_io_gguf io, const char* key) {
  return capi_not_impl(__func__);
}

int mlx_io_gguf_has_metadata_string(bool* flag, mlx_io_gguf io, const char* key) {
  return capi_not_impl(__func__);
}

int mlx_io_gguf_has_metadata_vector_string(bool* flag, mlx_io_gguf io, const char* key) {
  return capi_not_impl(__func__);
}

int mlx_io_gguf_set_array(mlx_io_gguf io, const char* key, const mlx_array arr) {
  return capi_not_impl(__func__);
}

int mlx_io_gguf_set_metadata_array(mlx_io_gguf io, const char* key, const mlx_array marr) {
  return capi_not_impl(__func__);
}

int mlx_io_gguf_set_metadata_string(mlx_io_gguf io, const char* key, const char* mstr) {
  return capi_not_impl(__func__);
}

int mlx_io_gguf_set_metadata_vector_string(mlx_io_gguf io, const char *key,
                                           const mlx_vector_string mvstr) {
  return capi_not_impl(__func__);
}
