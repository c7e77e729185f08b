/* Load: read the array's bytes from its reader, then swap byte order if
 * the file's differs.  A source too short for the array is an error before
 * anything is allocated, so a hostile shape cannot make it allocate. */
#include "backend/cpu/load.h"

#include <string.h>

#include "core/error.h"
#include "primitives/load.h"

static void swap_bytes(unsigned char *p, size_t n, size_t item) {
  if (item == 8 || item == 4 || item == 2) {
    for (size_t i = 0; i + item <= n; i += item)
      for (size_t a = 0, b = item - 1; a < b; a++, b--) {
        unsigned char t = p[i + a];
        p[i + a] = p[i + b];
        p[i + b] = t;
      }
  }
}

int cm_cpu_load(cm_array *out, cm_array *const *in, int nin, const cm_params *params) {
  (void)in, (void)nin, (void)params;
  const cm_load_params *p = cm_load_params_of(out);
  size_t n = cm_nbytes(out);
  uint64_t have;
  if (cm_reader_size(p->reader, &have)) return -1;
  if (p->offset > have || n > have - p->offset)
    return cm_error(CM_ERR_RUNTIME,
                    "[load] Unable to read %zu bytes from %s (it holds %llu bytes "
                    "from offset %llu).",
                    n, p->reader->label,
                    (unsigned long long)(have > p->offset ? have - p->offset : 0),
                    (unsigned long long)p->offset);
  if (cm_alloc_output(out)) return -1;
  if (n == 0) return 0;
  if (cm_reader_read(p->reader, cm_data(out), n, p->offset)) return -1;
  if (p->swap) {
    size_t item = cm_itemsize(out);
    /* complex64 swaps each float of the pair */
    swap_bytes(cm_data(out), n, out->dtype == CM_COMPLEX64 ? 4 : item);
  }
  return 0;
}
