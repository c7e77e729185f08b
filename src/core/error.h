/* Error state.  Internal functions report failure by returning -1 (or NULL)
 * after recording a kind and message in thread-local storage; the front
 * doors turn the kind into Python's exception type or mlx-c's handler call.
 * User input never aborts the process. */
#ifndef CMLX_CORE_ERROR_H
#define CMLX_CORE_ERROR_H

typedef enum cm_error_kind {
  CM_OK = 0,
  CM_ERR_VALUE,          /* ValueError: bad shapes, dtypes, sizes, axes */
  CM_ERR_TYPE,           /* TypeError: wrong argument types */
  CM_ERR_INDEX,          /* IndexError */
  CM_ERR_RUNTIME,        /* RuntimeError: everything else */
  CM_ERR_MEMORY,         /* MemoryError: allocation failed or limit hit */
  CM_ERR_NOT_IMPLEMENTED, /* NotImplementedError: names the missing piece */
  CM_ERR_OVERFLOW         /* OverflowError: a value outside 32-bit shape range */
} cm_error_kind;

/* Record an error and return -1, so call sites can `return cm_error(...)`. */
int cm_error(cm_error_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
cm_error_kind cm_error_kind_get(void);
const char *cm_error_message(void);
void cm_error_clear(void);

/* Carry an error raised on a worker thread over to the thread that waits. */
typedef struct cm_error_record { cm_error_kind kind; char message[512]; } cm_error_record;
void cm_error_save(cm_error_record *rec);
void cm_error_restore(const cm_error_record *rec);

#endif
