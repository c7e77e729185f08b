/* Handle cells: what the ctx of every mlx-c handle points at.
 *
 * mlx-c hands out structs holding one pointer, passed by value, so a
 * freed or never-made handle looks like any other.  To catch those, a
 * handle's ctx is a cell from the store in handle.c, not the object
 * itself: the cell holds a tag naming its type (live) or its type freed
 * (dead), and a pointer to the object (an cm_array, a vector, ...).  Every
 * entry point checks the tag of each handle it takes, one load and one
 * compare; *_free checks it too, so a double free is reported instead of
 * done.  A freed cell keeps its dead tag and a NULL object while it waits
 * in a per-thread quarantine (reused only after CAPI_QUARANTINE later
 * frees), so a use of a freed handle finds the dead tag, and code that
 * skips a check reads an empty handle, not freed memory.
 *
 * What is caught:
 *   always     NULL where a value is needed, a ctx not aligned to a cell,
 *              a freed handle until its cell is reused, a handle of
 *              another type, a double free (same window);
 *   CMLX_CHECK_HANDLES=1 (read once at load)  also any ctx that is not a
 *              cell of the store (arbitrary garbage, a stack address), and
 *              freed cells are never reused, so every use of a freed
 *              handle is caught, at the price of a lock per check and 32
 *              bytes per handle ever made.
 * An aligned garbage pointer into unmapped memory still faults without
 * CMLX_CHECK_HANDLES: the store cannot tell it from a cell without the
 * registry's lookup.
 *
 * What it costs (x86-64, gcc -O2, callgrind, steady state of
 * benchmarks/bench_capi_handles.c: mlx_array_new + mlx_add + mlx_array_free
 * on 0-d arrays, graph building only, where a check weighs most): making a
 * cell is 8 instructions and freeing one 14, both inline, no call; with
 * the checks of the three arguments (4 each) and the extra indirections,
 * the whole op is 1207 instructions against 1169 in a build without cells
 * (CMLX_MEASURE_NO_CELLS below): 38, 3.2%.  The cells' own part (make and
 * free) is 22, 1.8%.  Under 1% is out of reach this way: a quarantine
 * needs a store and a step on each side, a TLS address, the tag written
 * and tested; the cell functions were 81 instructions (plus calls) and
 * the op 1313 before the ring. */
/* CMLX_MEASURE_NO_CELLS (a compile definition, only for measuring what
 * cells cost with benchmarks/bench_capi_handles.c): ctx is the object
 * itself and nothing is checked, as before cells.  Not a configuration to
 * use: a freed or garbage handle is undefined behaviour again. */
#ifndef CMLX_CAPI_HANDLE_H
#define CMLX_CAPI_HANDLE_H

#include <stdbool.h>
#include <stdint.h>

typedef enum capi_htype {
  CAPI_H_ARRAY = 1,
  CAPI_H_STREAM,
  CAPI_H_DEVICE,
  CAPI_H_DEVICE_INFO,
  CAPI_H_STRING,
  CAPI_H_VECTOR_ARRAY,
  CAPI_H_VECTOR_VECTOR_ARRAY,
  CAPI_H_VECTOR_INT,
  CAPI_H_VECTOR_STRING,
  CAPI_H_MAP_ARRAY,
  CAPI_H_MAP_STRING,
  CAPI_H_CLOSURE,
  CAPI_H_MAP_ARRAY_ITER,
  CAPI_H_MAP_STRING_ITER,
  CAPI_H_CLOSURE_KWARGS,
  CAPI_H_CLOSURE_VALUE_AND_GRAD,
  CAPI_H_CLOSURE_CUSTOM,
  CAPI_H_CLOSURE_CUSTOM_JVP,
  CAPI_H_CLOSURE_CUSTOM_VMAP,
  CAPI_H_IO_READER,
  CAPI_H_IO_WRITER,
  CAPI_H_IO_GGUF,
  CAPI_H_FUNCTION_EXPORTER,
  CAPI_H_IMPORTED_FUNCTION,
  CAPI_H_DISTRIBUTED_GROUP,
  CAPI_H_NODE_NAMER,
  CAPI_H_FAST_KERNEL_CONFIG,
  CAPI_H_FAST_KERNEL,
  CAPI_H_COUNT
} capi_htype;

/* 32 bytes, 32-aligned in its chunk: the alignment check rejects most
 * small integers and interior pointers before anything is loaded. */
typedef struct capi_cell {
  uint32_t tag;
  uint32_t spare;
  void *obj;
  struct capi_cell *next; /* spill-stack link while dead (handle.c) */
  void *pad;
} capi_cell;

#define CAPI_CELL_ALIGN 32u
#define CAPI_TAG_LIVE(t) (0x4d4c5800u | (uint32_t)(t)) /* "MLX" + type */
#define CAPI_TAG_DEAD(t) (0xdead0000u | (uint32_t)(t))
/* Live in registry mode: never equal to CAPI_TAG_LIVE, so the inline test
 * fails for every handle and the registry's slow path decides, without
 * the inline test reading a flag. */
#define CAPI_TAG_LIVE_REG(t) (0x4d4c5900u | (uint32_t)(t))

/* Set once before main from CMLX_CHECK_HANDLES. */
extern bool capi_check_all;

/* ---- the per-thread quarantine ring (handle.c has the slow paths) ----
 * Each thread's freed cells wait in a ring of CAPI_RING slot pointers;
 * wp is the next slot a free writes, and what that slot holds is the
 * oldest dead cell, the one a new handle takes.  So in the common rhythm
 * (make, free, make, free) new takes *wp and clears it, free refills it
 * and steps on: 8 and 14 instructions, no call, no counter.
 * A slot holding NULL (taken) or 1 (the sentinel past the ring's end, and
 * the one-slot ring every thread starts with) sends new to the slow path;
 * any non-NULL slot sends free there (an untaken old cell is moved to a
 * spill stack, the sentinel wraps wp).  Registry mode never enters the
 * ring: its live tag fails free's inline test, so the ring stays empty
 * and new always takes the slow path, which writes CAPI_TAG_LIVE_REG. */
typedef struct capi_tcache {
  capi_cell **wp;
} capi_tcache;
/* initial-exec: one %fs-relative access instead of a __tls_get_addr call
 * (the library is linked, not dlopen'd late, in every use). */
extern _Thread_local capi_tcache capi_tc
    __attribute__((tls_model("initial-exec"), visibility("hidden")));
#define CAPI_SLOT_END ((capi_cell *)1)

void *capi_cell_new_slow(capi_htype t, void *obj);
int capi_cell_free_slow(const char *fn, void *ctx, capi_htype t, void **obj);

/* The fast path of capi_cell_new alone: a live cell holding obj taken
 * from the ring, or NULL (nothing changed) when the slow path must make it. */
static inline void *capi_cell_try_new(capi_htype t, void *obj) {
#ifdef CMLX_MEASURE_NO_CELLS
  (void)t;
  return obj;
#endif
  capi_cell **wp = capi_tc.wp, *c = *wp;
  if ((uintptr_t)c <= (uintptr_t)CAPI_SLOT_END) return NULL;
  *wp = NULL;
  c->tag = CAPI_TAG_LIVE(t);
  c->obj = obj;
  return c;
}
/* A new live cell holding obj; NULL after reporting out of memory. */
static inline void *capi_cell_new(capi_htype t, void *obj) {
#ifdef CMLX_MEASURE_NO_CELLS
  (void)t;
  return obj;
#endif
  void *c = capi_cell_try_new(t, obj);
  return c ? c : capi_cell_new_slow(t, obj);
}

/* Report why ctx (non-NULL) is not a live handle of type t; returns 1,
 * or 0 when the slow path (CMLX_CHECK_HANDLES) finds it is one after all. */
int capi_bad_handle(const char *fn, const void *ctx, capi_htype t);

/* The fast test: aligned and tagged live as t (false for every handle in
 * registry mode, see CAPI_TAG_LIVE_REG). */
static inline bool capi_live(const void *ctx, capi_htype t) {
#ifdef CMLX_MEASURE_NO_CELLS
  (void)ctx, (void)t;
  return true;
#endif
  return ((uintptr_t)ctx & (CAPI_CELL_ALIGN - 1)) == 0 &&
         ((const capi_cell *)ctx)->tag == CAPI_TAG_LIVE(t);
}
/* capi_cell_free's fast path alone, for a hot *_free: the object of the
 * live cell ctx, now killed, or CAPI_TAKE_SLOW when capi_cell_free must
 * decide (empty, not live, ring slot taken), having changed nothing.  The
 * object comes back in a register, not through a pointer. */
#define CAPI_TAKE_SLOW ((void *)1)
static inline void *capi_cell_take(void *ctx, capi_htype t) {
#ifdef CMLX_MEASURE_NO_CELLS
  (void)t;
  return ctx ? ctx : CAPI_TAKE_SLOW;
#endif
  if (!ctx || !capi_live(ctx, t)) return CAPI_TAKE_SLOW;
  capi_cell *c = ctx, **wp = capi_tc.wp;
  if (*wp) return CAPI_TAKE_SLOW;
  void *obj = c->obj;
  if (obj == CAPI_TAKE_SLOW) __builtin_unreachable(); /* no object is at address 1 */
  c->tag = CAPI_TAG_DEAD(t);
  c->obj = NULL;
  *wp = c;
  capi_tc.wp = wp + 1;
  return obj;
}
/* Free the cell ctx of type t: NULL is fine (0, *obj = NULL); a live one
 * is killed (dead tag, no object) and *obj is what it held; anything else
 * (double free, wrong type, garbage) is reported and 1 returned with
 * *obj = NULL.  Objects are never (void *)1, so CAPI_TAKE_SLOW is free. */
static inline int capi_cell_free(const char *fn, void *ctx, capi_htype t, void **obj) {
#ifdef CMLX_MEASURE_NO_CELLS
  (void)fn, (void)t;
  *obj = ctx;
  return 0;
#endif
  void *o = capi_cell_take(ctx, t);
  if (o == CAPI_TAKE_SLOW) return capi_cell_free_slow(fn, ctx, t, obj);
  *obj = o;
  return 0;
}
/* ctx is NULL (empty) or a live handle of type t: 0; else reported, 1. */
static inline int capi_check(const char *fn, const void *ctx, capi_htype t) {
  return !ctx || capi_live(ctx, t) ? 0 : capi_bad_handle(fn, ctx, t);
}
/* ctx is a live handle of type t (non-empty): 0; else reported, 1. */
int capi_need_handle(const char *fn, const void *ctx, capi_htype t);
static inline int capi_need_h(const char *fn, const void *ctx, capi_htype t) {
  return ctx && capi_live(ctx, t) ? 0 : capi_need_handle(fn, ctx, t);
}
/* The object of a checked handle (NULL for an empty or dead one). */
static inline void *capi_obj(const void *ctx) {
#ifdef CMLX_MEASURE_NO_CELLS
  return (void *)ctx;
#endif
  return ctx ? ((const capi_cell *)ctx)->obj : NULL;
}
static inline void capi_obj_set(void *ctx, void *obj) { ((capi_cell *)ctx)->obj = obj; }
/* The object of a handle already found live (no NULL test). */
static inline void *capi_obj_live(const void *ctx) {
#ifdef CMLX_MEASURE_NO_CELLS
  return (void *)ctx;
#endif
  return ((const capi_cell *)ctx)->obj;
}

#endif
