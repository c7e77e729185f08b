/* libFuzzer target: the safetensors parser (header JSON, dtypes, offsets),
 * and valid files of fuzzer-chosen tensors (every dtype but float64, which
 * MLX's safetensors lacks), which must load back exactly. */
#include "fuzz_roundtrip.h"

static int save(cm_writer *w, const cm_named_arrays *arrays, bool flag) {
  (void)flag;
  return cm_save_safetensors(w, arrays, NULL);
}

static int load(cm_reader *r, cm_stream s, cm_named_arrays *out) {
  return cm_load_safetensors(r, s, out, NULL);
}

static const fuzz_format st = {
    .name = "safetensors",
    .dtypes = FUZZ_ALL_DTYPES & ~(1u << CM_FLOAT64),
    .save = save,
    .load = load,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_named(data, size, cm_load_safetensors);
  fuzz_round_trip(data, size, &st);
  return 0;
}
