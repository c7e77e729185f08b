/* The descriptors export can load, and the index import finds a loader
 * in by MLX name, built from their export descs (export_desc.h).  A
 * descriptor with an export desc belongs in this list: export writes it
 * through its desc, and only listed descriptors are read back
 * (test_export_fixtures.py checks the list against the sources). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "primitives/binary.h"
#include "primitives/conv.h"
#include "primitives/count.h"
#include "primitives/creation.h"
#include "primitives/custom_kernel.h"
#include "primitives/divmod.h"
#include "primitives/export_desc.h"
#include "primitives/fast.h"
#include "primitives/fft.h"
#include "primitives/gather_mm.h"
#include "primitives/hadamard.h"
#include "primitives/indexing.h"
#include "primitives/layout.h"
#include "primitives/linalg.h"
#include "primitives/matmul.h"
#include "primitives/quantized.h"
#include "primitives/random.h"
#include "primitives/reduce.h"
#include "primitives/scan.h"
#include "primitives/shape.h"
#include "primitives/sort.h"
#include "primitives/ternary.h"
#include "primitives/unary.h"

const cm_prim *const cm_export_prims[] = {
    &cm_prim_unary,
    &cm_prim_stop_gradient,
    &cm_prim_binary,
    &cm_prim_select,
    &cm_prim_divmod,
    &cm_prim_broadcast,
    &cm_prim_broadcast_axes,
    &cm_prim_astype,
    &cm_prim_copy,
    &cm_prim_full,
    &cm_prim_identity,
    &cm_prim_depends,
    &cm_prim_number_of_elements,
    &cm_prim_reshape,
    &cm_prim_flatten,
    &cm_prim_unflatten,
    &cm_prim_squeeze,
    &cm_prim_expand_dims,
    &cm_prim_transpose,
    &cm_prim_slice,
    &cm_prim_slice_update,
    &cm_prim_pad,
    &cm_prim_dynamic_slice,
    &cm_prim_dynamic_slice_update,
    &cm_prim_as_strided,
    &cm_prim_view,
    &cm_prim_diagonal,
    &cm_prim_concatenate,
    &cm_prim_gather,
    &cm_prim_scatter,
    &cm_prim_gather_axis,
    &cm_prim_scatter_axis,
    &cm_prim_masked_scatter,
    &cm_prim_reduce,
    &cm_prim_arg_reduce,
    &cm_prim_logsumexp,
    &cm_prim_softmax,
    &cm_prim_median,
    &cm_prim_scan,
    &cm_prim_sort,
    &cm_prim_matmul,
    &cm_prim_addmm,
    &cm_prim_gather_mm,
    &cm_prim_segmented_mm,
    &cm_prim_block_masked_mm,
    &cm_prim_conv,
    &cm_prim_fft,
    &cm_prim_hadamard,
    &cm_prim_rms_norm,
    &cm_prim_layer_norm,
    &cm_prim_rope,
    &cm_prim_svd,
    &cm_prim_qrf,
    &cm_prim_luf,
    &cm_prim_cholesky,
    &cm_prim_inverse,
    &cm_prim_solve,
    &cm_prim_eig,
    &cm_prim_eigh,
    &cm_prim_quantize,
    &cm_prim_fp_quantize,
    &cm_prim_dequantize,
    &cm_prim_quantized_matmul,
    &cm_prim_gather_qmm,
    &cm_prim_convert_fp8,
    &cm_prim_arange,
    &cm_prim_random_bits,
    &cm_prim_custom_kernel,
    NULL,
};

/* ---- the index: every declared name, sorted ---- */

#define MAX_NAMES 256

static cm_export_name names[MAX_NAMES];
static int nnames;
static pthread_once_t built = PTHREAD_ONCE_INIT;

static void add(cm_export_name e) {
  if (nnames == MAX_NAMES) abort(); /* a bug: raise MAX_NAMES */
  names[nnames++] = e;
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const cm_export_name *)a)->name, ((const cm_export_name *)b)->name);
}

static void build(void) {
  for (int i = 0; cm_export_prims[i]; i++) {
    const cm_export_desc *d = cm_export_prims[i]->export;
    /* bugs: a listed descriptor without its desc, a field list longer
     * than the loader reads */
    if (!d || d->nfields > CM_EXPORT_MAX_FIELDS) abort();
    if (d->make) add((cm_export_name){d->name, cm_export_load_fields, i});
    for (int k = 0; k < d->nnames; k++) add(d->names[k]);
    if (d->op_names) nnames += d->op_names(names + nnames, MAX_NAMES - nnames);
  }
  qsort(names, (size_t)nnames, sizeof *names, by_name);
  for (int i = 1; i < nnames; i++)
    if (!strcmp(names[i - 1].name, names[i].name)) abort(); /* a bug: a name read twice */
}

/* name (len bytes, from the file: it may hold NULs) against an entry, in
 * strcmp's order. */
static int compare(const char *name, size_t len, const char *entry) {
  size_t n = strlen(entry);
  int c = memcmp(name, entry, len < n ? len : n);
  return c ? c : len < n ? -1 : len > n;
}

xloader cm_export_find_loader(const char *name, size_t len) {
  pthread_once(&built, build);
  int lo = 0, hi = nnames - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2, c = compare(name, len, names[mid].name);
    if (!c) return (xloader){names[mid].load, names[mid].code};
    if (c < 0) hi = mid - 1;
    else lo = mid + 1;
  }
  return (xloader){NULL, 0};
}
