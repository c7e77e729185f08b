/* The ring over TCP transport: not written yet.  It reports itself unavailable, and a
 * strict init names what is missing. */
#include "distributed/comm.h"

#include "core/error.h"

bool cm_ring_available(void) { return false; }

int cm_ring_init(bool strict, cm_comm **out) {
  *out = NULL;
  if (strict)
    return cm_error(CM_ERR_RUNTIME,
                    "[distributed] The ring backend is not implemented yet in cmlx.");
  return 0;
}
