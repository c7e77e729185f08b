/* Devices and streams.  A stream is an ordered queue of work on one device;
 * each stream owns a worker thread.  Ops take a cm_stream; CM_STREAM_DEFAULT
 * (index -1) means "the default stream of the default device", and a stream
 * with index -1 and a device set means "that device's default stream".
 *
 * Streams belong to threads, as in MLX 0.32: a stream made by cm_new_stream
 * can only be evaluated on the thread that made it (eval elsewhere is MLX's
 * RuntimeError "There is no Stream(cpu, N) in current thread."); each thread
 * has its own default stream per device, made on its first use there; a
 * thread-unsafe stream may be used anywhere; a thread-local stream is a
 * handle that names a separate stream in each thread that uses it; and
 * cm_clear_streams destroys the streams the calling thread made.  The default
 * device is one for the process. */
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

/* A stream that is a different stream in each thread (MLX's
 * ThreadLocalStream); cm_stream_from_thread_local finds the calling
 * thread's, making it on first use. */
typedef struct cm_thread_local_stream {
  int index;
  cm_device device;
} cm_thread_local_stream;

#define CM_STREAM_DEFAULT ((cm_stream){-1, {CM_CPU, 0}, false})
static inline cm_stream cm_stream_of_device(cm_device d) { return (cm_stream){-1, d, true}; }

bool cm_device_available(cm_device d);
int cm_device_count(cm_device_type t);
cm_device cm_default_device(void);
int cm_set_default_device(cm_device d);
/* The calling thread's default stream of device d (made on first use);
 * -1 with ValueError if d is not available. */
int cm_default_stream(cm_device d, cm_stream *out);
/* Make s the calling thread's default stream for its device. */
int cm_set_default_stream(cm_stream s);
/* A new stream that only the calling thread may evaluate on. */
int cm_new_stream(cm_device d, cm_stream *out);
/* A new stream that any thread may evaluate on. */
int cm_new_thread_unsafe_stream(cm_device d, cm_stream *out);
int cm_new_thread_local_stream(cm_device d, cm_thread_local_stream *out);
int cm_stream_from_thread_local(cm_thread_local_stream t, cm_stream *out);
/* Destroy every stream the calling thread made (its default streams and
 * thread-local streams included): evaluating on them fails afterwards. */
void cm_clear_streams(void);
/* Turn a possibly-default stream into a concrete one; -1 if unusable.
 * Resolving a default is a thread-local read (no lock): every op does it. */
int cm_stream_resolve(cm_stream in, cm_stream *out);
bool cm_stream_equal(cm_stream a, cm_stream b);
/* Wait until every task queued on s so far has finished; -1 with the first
 * error a task queued by async_eval met there, if no one reported it yet. */
int cm_synchronize(cm_stream s);
const char *cm_device_type_name(cm_device_type t);

#endif
