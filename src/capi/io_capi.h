/* Private to io.c and io_types.c: what mlx-c's reader, writer and GGUF
 * handles hold, and their adapters to the core's readers and writers. */
#ifndef CMLX_CAPI_IO_CAPI_H
#define CMLX_CAPI_IO_CAPI_H

#include "capi/capi.h"
#include "io/io.h"

/* The object in the cell (handle.h) of an mlx_io_reader / mlx_io_writer */
typedef struct capi_io_obj {
  void *desc;
  mlx_io_vtable vt;
} capi_io_obj;

/* The object in the cell of an mlx_io_gguf: tensors and metadata, in insertion order */
typedef struct capi_gguf {
  cm_named_arrays arrays;
  cm_metadata meta;
} capi_gguf;

/* A core reader over an mlx-c reader (it does not own the handle: arrays
 * loaded from it are evaluated before the call returns).  NULL after
 * reporting "[fn] Failed to open <label>" for a closed or bad stream. */
cm_reader *capi_reader(mlx_io_reader in, const char *fn);
/* A core writer over an mlx-c writer; 0, or 1 after reporting. */
int capi_writer(mlx_io_writer out, const char *fn, cm_writer *w);
/* Free a GGUF container (NULL fine). */
void capi_gguf_destroy(capi_gguf *g);
/* Make *res (checked: empty or live) hold g, which it takes: a live
 * handle keeps its cell.  0, or 1 after reporting (g freed). */
int capi_gguf_put(mlx_io_gguf *res, capi_gguf *g);

#endif
