#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local cm_error_record current;

int cm_error(cm_error_kind kind, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(current.message, sizeof current.message, fmt, ap);
  va_end(ap);
  current.kind = kind;
  return -1;
}

cm_error_kind cm_error_kind_get(void) { return current.kind; }
const char *cm_error_message(void) { return current.kind ? current.message : ""; }
void cm_error_clear(void) { current.kind = CM_OK; current.message[0] = 0; }
void cm_error_save(cm_error_record *rec) { *rec = current; }
void cm_error_restore(const cm_error_record *rec) { current = *rec; }
