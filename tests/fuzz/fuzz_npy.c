/* libFuzzer target: the .npy parser (magic, version, header dict, shape,
 * dtype, byte order), and valid .npy files of a fuzzer-chosen array (any
 * dtype, 0-d, empty, fortran_order), which must load back exactly. */
#include "fuzz_roundtrip.h"

static int save(cm_writer *w, const cm_named_arrays *arrays, bool flag) {
  (void)flag;
  return cm_save_npy(w, arrays->arrs[0]);
}

static int load(cm_reader *r, cm_stream s, cm_named_arrays *out) {
  cm_array *a = cm_load_npy(r, s);
  return a ? cm_named_arrays_put(out, "a0", 2, a, false, "fuzz") : -1;
}

static const fuzz_format npy = {
    .name = "npy", .dtypes = FUZZ_ALL_DTYPES, .single = true, .save = save, .load = load};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cm_reader *r = fuzz_reader(data, size);
  if (r) {
    cm_array *a = cm_load_npy(r, fuzz_stream());
    if (a && cm_eval(&a, 1)) cm_error_clear();
    if (a) cm_release(a);
    cm_reader_release(r);
  }
  cm_error_clear();
  fuzz_round_trip(data, size, &npy);
  return 0;
}
