/* libFuzzer target: the .npz parser (zip directory, stored and deflated
 * members, each member's .npy header), and valid archives of fuzzer-chosen
 * arrays, stored or deflated, which must load back exactly. */
#include "fuzz_roundtrip.h"

static int load_npz(cm_reader *r, cm_stream s, cm_named_arrays *out, cm_metadata *meta) {
  (void)meta;
  return cm_load_npz(r, s, out);
}

static int save(cm_writer *w, const cm_named_arrays *arrays, bool deflate) {
  return cm_save_npz(w, arrays, deflate);
}

static int load(cm_reader *r, cm_stream s, cm_named_arrays *out) { return cm_load_npz(r, s, out); }

static const fuzz_format npz = {
    .name = "npz", .dtypes = FUZZ_ALL_DTYPES, .save = save, .load = load};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_named(data, size, load_npz);
  fuzz_round_trip(data, size, &npz);
  return 0;
}
