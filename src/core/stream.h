/* Devices and streams.  A stream is an ordered queue of work on one device;
 * each stream owns a worker thread.  Ops take a cm_stream; CM_STREAM_DEFAULT
 * (index -1) means "the default stream of the default device", and a stream
 * with index -1 and a device set means "that device's default stream". */
#ifndef CMLX_CORE_STREAM_H
#define CMLX_CORE_STREAM_H

#include <stdbool.h>

typedef enum cm_device_type { CM_CPU = 0, CM_GPU = 1 } cm_device_type;

typedef struct cm_device {
  cm_device_type type;
  int index;
} cm_device;

typedef struct cm_stream {
  int index; /* -1: a default, resolved by cm_stream_resolve */
  cm_device device;
  bool device_given; /* with index -1: "default stream of this device" */
} cm_stream;

#define CM_STREAM_DEFAULT ((cm_stream){-1, {CM_CPU, 0}, false})
static inline cm_stream cm_stream_of_device(cm_device d) { return (cm_stream){-1, d, true}; }

bool cm_device_available(cm_device d);
int cm_device_count(cm_device_type t);
cm_device cm_default_device(void);
int cm_set_default_device(cm_device d);
/* The default stream of device d; -1 with ValueError if d is not available. */
int cm_default_stream(cm_device d, cm_stream *out);
int cm_set_default_stream(cm_stream s);
int cm_new_stream(cm_device d, cm_stream *out);
/* Turn a possibly-default stream into a concrete one; -1 if unusable. */
int cm_stream_resolve(cm_stream in, cm_stream *out);
bool cm_stream_equal(cm_stream a, cm_stream b);
/* Wait until every task queued on s so far has finished. */
int cm_synchronize(cm_stream s);
const char *cm_device_type_name(cm_device_type t);

#endif
