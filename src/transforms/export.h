/* Exported functions (mx.export_function, mx.import_function, mx.exporter)
 * in MLX's .mlxfn format, and graph printing (mx.export_to_dot).
 *
 * An exporter traces a function (with compile's tracer, transforms/
 * compile.h) once per call and appends the trace to its file: the inputs'
 * shapes and dtypes, the tape of primitives with their state as MLX's
 * primitive_state serialises it, and the data of every constant (saved
 * once per file).  Primitive names and states are MLX 0.32's, so files go
 * both ways between cmlx and MLX; a primitive MLX cannot express is an
 * error naming it.  An imported function checks the whole file when it is
 * read (a truncated or hostile file is a ValueError, never a crash) and
 * rebuilds each primitive through cmlx's op constructors on every call,
 * so shapes are checked as any op checks them and a shapeless function
 * takes new shapes wherever the ops accept them.
 *
 * The export writer and reader are transforms/export.c and
 * export_import.c, graph printing transforms/export_dot.c; each
 * primitive's state is its descriptor's (primitives/export_desc.h). */
#ifndef CMLX_TRANSFORMS_EXPORT_H
#define CMLX_TRANSFORMS_EXPORT_H

#include <stdio.h>

#include "transforms/autodiff.h"

/* ---- callbacks: the trace as MLX's export callback sees it ---- */

/* One value of a primitive's state (MLX's StateT): ints, floats, bools,
 * dtypes and int vectors; tuples are flattened. */
typedef enum cm_state_kind {
  CM_STATE_INT,
  CM_STATE_FLOAT,
  CM_STATE_BOOL,
  CM_STATE_DTYPE,
  CM_STATE_INTS,
  CM_STATE_STR,
} cm_state_kind;
typedef struct cm_state_item {
  cm_state_kind kind;
  int64_t i; /* INT, BOOL, DTYPE (a cm_dtype) */
  double f;
  int n;      /* INTS; STR: its length */
  int64_t *v; /* INTS */
  char *str;  /* STR */
} cm_state_item;

typedef struct cm_export_visitor {
  void *ctx;
  /* inputs (placeholders), then keyword names of the last nkw inputs */
  int (*inputs)(void *ctx, cm_array *const *in, int nin, const char *const *kw, int nkw);
  int (*outputs)(void *ctx, cm_array *const *out, int nout);
  int (*constants)(void *ctx, cm_array *const *c, int n);
  int (*primitive)(void *ctx, const char *name, cm_array *const *in, int nin, cm_array *const *out,
                   int nout, const cm_state_item *state, int nstate);
} cm_export_visitor;

/* ---- exporting ---- */

typedef struct cm_exporter cm_exporter;

/* Writes file's header now (RuntimeError when it cannot be opened). */
cm_exporter *cm_exporter_new(const char *file, bool shapeless, const char *metadata,
                             size_t metadata_len);
/* An exporter that hands each trace to a visitor instead of a file. */
cm_exporter *cm_exporter_new_visitor(cm_export_visitor v, bool shapeless);
/* Trace f on args then the keyword arrays (in the order of their sorted
 * keys, as f receives them) and append it.  A second trace with the same
 * signature, or a call after close, is a RuntimeError. */
int cm_exporter_add(cm_exporter *x, cm_closure f, cm_array *const *args, int nargs,
                    const char *const *keys, cm_array *const *kwargs, int nkw);
/* The order in which cm_exporter_add hands keyword arrays to f. */
int cm_export_sort_keys(const char *const *keys, int n, int *perm);
void cm_exporter_close(cm_exporter *x);
void cm_exporter_free(cm_exporter *x);

/* ---- importing ---- */

typedef struct cm_imported cm_imported;

cm_imported *cm_import_function(const char *file);
/* The same from bytes in memory (copied). */
cm_imported *cm_import_function_bytes(const unsigned char *data, size_t len);
const char *cm_imported_metadata(const cm_imported *f, size_t *len);
/* Outputs of the trace matching args and kwargs (by key); none matching
 * is a ValueError listing the traces, as MLX's. */
int cm_imported_call(const cm_imported *f, cm_array *const *args, int nargs,
                     const char *const *keys, cm_array *const *kwargs, int nkw, cm_array ***outs,
                     int *nout);
void cm_imported_free(cm_imported *f);

/* ---- graph printing (export_dot.c) ---- */

/* Names of nodes: set ones, then A, B, ..., Z, AA, ... in order of first
 * request, as MLX's NodeNamer. */
typedef struct cm_node_namer cm_node_namer;
cm_node_namer *cm_node_namer_new(void);
void cm_node_namer_free(cm_node_namer *n);
int cm_node_namer_set(cm_node_namer *n, const cm_array *a, const char *name);
/* Borrowed, valid while the namer lives; NULL when out of memory. */
const char *cm_node_namer_get(cm_node_namer *n, const cm_array *a);

/* Write MLX's dot graph (or print_graph's listing) of outputs to a
 * callback sink. */
typedef int (*cm_text_sink)(void *ctx, const char *text, size_t len);
int cm_export_to_dot(cm_text_sink sink, void *ctx, cm_node_namer *namer, cm_array *const *outs,
                     int n);
int cm_print_graph(cm_text_sink sink, void *ctx, cm_node_namer *namer, cm_array *const *outs,
                   int n);
/* A node's primitive name as MLX prints it ("Add", "Scatter Sum", ...). */
const char *cm_export_display_name(const cm_array *a, char *buf, size_t size);

#endif
