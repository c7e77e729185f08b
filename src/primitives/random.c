#include "primitives/random.h"
#include "primitives/export_desc.h"

#include "ops/shape.h"

/* The batch of keys becomes leading output axes.  The key pair is always
 * the keys' last axis: a batch on that axis is first swapped with the one
 * before it (MLX does the same), so the pair stays last. */
static int bits_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                     const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin, (void)p;
  cm_array *key = cm_retain(in[0]);
  int kax = axes[0];
  if (kax == key->ndim - 1) {
    cm_array *t = cm_swapaxes(key, kax, kax - 1, s);
    cm_release(key);
    if (!(key = t)) return -1;
    kax--;
  }
  int32_t shape[CM_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < node->ndim + 1; d++) {
    if (d == kax) shape[nd++] = key->shape[kax];
    if (d < node->ndim) shape[nd++] = node->shape[d];
  }
  const cm_random_bits_params *q = cm_random_bits_params_of(node);
  *out = cm_node_new(cm_random_bits_dtype(q), nd, shape, &cm_prim_random_bits, q, sizeof *q, &key,
                     1, s);
  cm_release(key);
  *out_axis = kax;
  return *out ? 0 : -1;
}

const cm_prim cm_prim_random_bits = {
    .name = "RandomBits",
    .export = &cm_export_random_bits,
    CM_PARAMS_OF(cm_random_bits_params),
    .vmap = bits_vmap,
};
