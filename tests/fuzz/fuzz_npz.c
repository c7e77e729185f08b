/* libFuzzer target: the .npz parser (zip directory, stored and deflated
 * members, each member's .npy header). */
#include "fuzz_common.h"

static int load_npz(cm_reader *r, cm_stream s, cm_named_arrays *out, cm_metadata *meta) {
  (void)meta;
  return cm_load_npz(r, s, out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzz_named(data, size, load_npz);
}
