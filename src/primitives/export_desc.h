/* How a primitive is written to and read from .mlxfn files (MLX's
 * export_function format; the file format itself is src/transforms/
 * export*.c).  Each descriptor that export supports points at one
 * cm_export_desc (cm_prim.export) that says:
 *
 *   - the MLX primitive names it reads, each with its loader and a code
 *     the loader gets (a family's op code, or which of several names);
 *   - how a node's state is written: either a field list, a declarative
 *     list of MLX's state fields and where each comes from (the parameter
 *     block, the node), or a save hook that writes the state itself.
 *
 * A field-list primitive has one name; its loader reads the fields in
 * order and hands their values to make, which rebuilds the node through
 * the op constructors (they check every argument: a hostile state is an
 * error, never a bad kernel call).
 *
 * A desc may also lower the node (replace it before it is written by the
 * graph MLX builds of its own primitives).
 *
 * Import finds a loader by name through the index of primitives/all.c,
 * built from these declarations; a descriptor with an export desc must be
 * listed there (test_export_fixtures.py checks). */
#ifndef CMLX_PRIMITIVES_EXPORT_DESC_H
#define CMLX_PRIMITIVES_EXPORT_DESC_H

#include "primitives/primitive.h"
#include "transforms/export_impl.h"

/* Save: write node's state (node is a multi-output node's first output)
 * and set sv->name to MLX's name; 0, or -1 with the error set.  The
 * bridges in sv (export_impl.h) say where MLX's node differs. */
typedef int (*cm_export_save_fn)(const cm_array *node, xw *w, xsave *sv);

/* A name import reads, its loader, and the code the loader gets. */
typedef struct cm_export_name {
  const char *name;
  xload_fn load;
  int code;
} cm_export_name;

/* A state field of a field list: its MLX type and where it comes from. */
typedef enum cm_export_kind {
  CM_XF_I32,      /* an int or enum of the parameter block */
  CM_XF_BOOL,     /* a bool (any width) of the parameter block */
  CM_XF_F32,      /* a float of the parameter block */
  CM_XF_OUT_TYPE, /* the node's dtype (AsType, View) */
  CM_XF_FALSE,    /* a bool cmlx always writes false (read back as it is) */
} cm_export_kind;

typedef struct cm_export_field {
  uint8_t kind, size; /* cm_export_kind; bytes of the block's field */
  uint16_t offset;    /* of the field in the block */
} cm_export_field;

#define CM_XF(kind, T, f) \
  { kind, sizeof(((T *)0)->f), offsetof(T, f) }
#define CM_XF_NODE(kind) \
  { kind, 0, 0 }

/* A field's value as read back. */
typedef union cm_xval {
  int32_t i;
  bool b;
  float f;
  cm_dtype t;
} cm_xval;

/* Rebuild a field-list node from its state's values (in field order). */
typedef int (*cm_export_make_fn)(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                                 cm_array **outs, cm_stream s);

#define CM_EXPORT_MAX_FIELDS 6

struct cm_export_desc {
  /* ---- a field list ---- */
  const char *name; /* MLX's name */
  const cm_export_field *fields;
  int nfields;
  const char *params_type; /* the block's struct (checked as the accessors do) */
  size_t params_size;
  int nin_lo, nin_hi; /* the inputs make accepts */
  cm_export_make_fn make;
  /* ---- or hooks ---- */
  cm_export_save_fn save;
  const cm_export_name *names; /* the names its loaders read */
  int nnames;
  /* names generated from an op table (Unary, Binary): fills out with at
   * most max entries, returns the count */
  int (*op_names)(cm_export_name *out, int max);
  /* ---- lowering (export_lower.c), before the trace is written ---- */
  /* The node as the graph MLX builds of its own primitives, through the
   * op constructors on the node's inputs (a new reference); NULL without
   * an error: the node is written as it is; NULL with one: the export
   * fails.  A desc with only this hook (Identity) is never written. */
  cm_array *(*lower)(const cm_array *node);
  /* MLX's printed name of node (export_to_dot, print_graph, the export
   * errors) where it is not cm_prim_name's: written into buf. */
  const char *(*display)(const cm_array *node, char *buf, size_t size);
};

/* In a desc: the field list of struct T. */
#define CM_EXPORT_FIELDS(T, ...)                                                              \
  .fields = (const cm_export_field[]){__VA_ARGS__},                                           \
  .nfields = (int)(sizeof((const cm_export_field[]){__VA_ARGS__}) / sizeof(cm_export_field)), \
  .params_type = #T, .params_size = sizeof(T)
#define CM_EXPORT_NAMES(...)                      \
  .names = (const cm_export_name[]){__VA_ARGS__}, \
  .nnames = (int)(sizeof((const cm_export_name[]){__VA_ARGS__}) / sizeof(cm_export_name))

/* ---- what the generic writer and reader call (primitives/all.c,
 * export_util.c) ---- */

/* cm_export_save_node and cm_export_find_loader (export_impl.h) are
 * export_util.c's and all.c's. */
/* The descriptors that can be loaded (all.c), NULL-terminated. */
extern const cm_prim *const cm_export_prims[];
/* The field-list loader (export_util.c): code is the desc's index in
 * cm_export_prims. */
int cm_export_load_fields(xr *r, int code, cm_array *const *in, int nin, const xout *o,
                          cm_array **outs, cm_stream s);
int cm_export_save_fields(const cm_array *node, xw *w, xsave *sv);

/* ---- helpers for the loaders (export_util.c) ---- */

/* The shape every loader has: state reads first, then MEASURE (a loader
 * called with o->n == 0 only reads its state: the reader finds where the
 * state ends that way), then the node built. */
#define CM_XLOAD(fn)                                                                           \
  static int fn(xr *r, int code, cm_array *const *in, int nin, const xout *o, cm_array **outs, \
                cm_stream s)
#define CM_XMEASURE                                   \
  do {                                                \
    (void)code;                                       \
    if (r->fail) return 0;                            \
    if (!o->n) return 0; /* reading the state only */ \
  } while (0)
#define CM_XINPUTS(lo, hi) \
  if (cm_xload_need(nin, lo, hi)) return -1

/* One output from op result x (NULL: the op's error). */
int cm_xload_one(cm_array *x, const xout *o, cm_array **outs);
/* n results of an op (NULL entries: its error) as the node's outputs. */
int cm_xload_results(cm_array **got, int n, const xout *o, cm_array **outs);
/* An input count outside lo..hi: the file's error. */
int cm_xload_need(int nin, int lo, int hi);
/* The file's error: "Invalid file: what." */
int cm_xload_bad(const char *what);
/* Axes out of 0..ndim-1: the file's error. */
int cm_xload_check_axes(int n, const int32_t *ax, int ndim);
/* The set bits of mask below ndim, as axes; their count. */
int cm_export_mask_axes(uint64_t mask, int ndim, int32_t *axes);
/* The index of v in table (-1: none). */
int cm_export_index_of(const int *table, int n, int v);
/* "[export_function] Unable to serialize primitive X". */
int cm_export_unsupported(const cm_array *node);

#define CM_XCOUNT(t) ((int)(sizeof(t) / sizeof(t)[0]))
#define CM_XINDEX_OF(t, v) cm_export_index_of((const int *)(t), CM_XCOUNT(t), (int)(v))

/* ---- the descriptors' export descs ---- */
extern const cm_export_desc cm_export_unary, cm_export_stop_gradient, cm_export_binary,
    cm_export_select, cm_export_divmod;
extern const cm_export_desc cm_export_broadcast, cm_export_broadcast_axes, cm_export_astype,
    cm_export_copy, cm_export_full, cm_export_identity, cm_export_depends,
    cm_export_number_of_elements;
extern const cm_export_desc cm_export_reshape, cm_export_flatten, cm_export_unflatten,
    cm_export_squeeze, cm_export_expand_dims, cm_export_transpose, cm_export_slice,
    cm_export_slice_update, cm_export_pad, cm_export_dynamic_slice, cm_export_dynamic_slice_update,
    cm_export_as_strided, cm_export_view, cm_export_diagonal, cm_export_concatenate;
extern const cm_export_desc cm_export_gather, cm_export_scatter, cm_export_gather_axis,
    cm_export_scatter_axis, cm_export_masked_scatter;
extern const cm_export_desc cm_export_reduce, cm_export_arg_reduce, cm_export_logsumexp,
    cm_export_softmax, cm_export_median, cm_export_scan, cm_export_sort;
extern const cm_export_desc cm_export_matmul, cm_export_addmm, cm_export_gather_mm,
    cm_export_segmented_mm, cm_export_block_masked_mm, cm_export_conv, cm_export_fft,
    cm_export_hadamard, cm_export_rms_norm, cm_export_layer_norm, cm_export_rope;
extern const cm_export_desc cm_export_svd, cm_export_qrf, cm_export_luf, cm_export_cholesky,
    cm_export_inverse, cm_export_solve, cm_export_eig, cm_export_eigh;
extern const cm_export_desc cm_export_quantize, cm_export_fp_quantize, cm_export_dequantize,
    cm_export_quantized_matmul, cm_export_gather_qmm, cm_export_convert_fp8;
extern const cm_export_desc cm_export_arange, cm_export_random_bits, cm_export_custom_kernel;

#endif
