#include "primitives/compiled.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "primitives/rules_util.h"

/* ---- interned programs -----------------------------------------------------
 * A chained hash table of programs, each one allocation (header, then its
 * arrays), never freed: nodes and backend kernel caches point at them.
 * The number of distinct programs of a process is the number of distinct
 * fused regions it traced, so the table stays small. */
typedef struct interned {
  struct interned *next;
  cm_fused_program p;
} interned;

#define NBUCKETS 256
static pthread_mutex_t intern_mu = PTHREAD_MUTEX_INITIALIZER;
static interned *buckets[NBUCKETS];

static uint64_t fnv_bytes(uint64_t h, const void *data, size_t n) {
  const unsigned char *s = data;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ull;
  return h;
}

/* Op j in canonical form: every field copied, nothing else (no padding
 * exists, but a caller's unused arguments and parameters may hold
 * anything). */
static cm_fused_op canonical_op(const cm_fused_op *o) {
  cm_fused_op c;
  memset(&c, 0, sizeof c);
  c.kind = o->kind, c.op = o->op, c.dtype = o->dtype, c.nargs = o->nargs;
  for (int a = 0; a < o->nargs && a < 3; a++) c.arg[a] = o->arg[a];
  if (o->kind == CM_FUSED_UNARY) c.up = o->up;
  return c;
}

static int check_program(const cm_fused_program *p) {
  if (p->nin < 0 || p->nops < 1 || p->nout < 1 || p->red_op < 0)
    return cm_error(CM_ERR_VALUE, "[Compiled] Invalid fused program.");
  for (int j = 0; j < p->nops; j++) {
    const cm_fused_op *o = &p->ops[j];
    if (o->nargs < 1 || o->nargs > 3 || o->kind < CM_FUSED_UNARY || o->kind > CM_FUSED_CAST)
      return cm_error(CM_ERR_VALUE, "[Compiled] Invalid fused program.");
    for (int a = 0; a < o->nargs; a++)
      if (o->arg[a] < 0 || o->arg[a] >= p->nin + j)
        return cm_error(CM_ERR_VALUE, "[Compiled] Invalid fused program.");
  }
  for (int k = 0; k < p->nout; k++)
    if (p->outs[k] < 0 || p->outs[k] >= p->nops)
      return cm_error(CM_ERR_VALUE, "[Compiled] Invalid fused program.");
  return 0;
}

static uint64_t program_hash(const cm_fused_program *p, const cm_fused_op *ops) {
  int32_t head[4] = {p->nin, p->nops, p->nout, p->red_op};
  uint64_t h = fnv_bytes(0xcbf29ce484222325ull, head, sizeof head);
  for (int i = 0; i < p->nin; i++) {
    int32_t in[3] = {(int32_t)p->in_dtype[i], p->in_scalar[i], p->in_rowconst[i]};
    h = fnv_bytes(h, in, sizeof in);
  }
  h = fnv_bytes(h, ops, sizeof *ops * (size_t)p->nops);
  return fnv_bytes(h, p->outs, sizeof *p->outs * (size_t)p->nout);
}

/* Whether interned program q is p (whose ops are canonical). */
static bool same_program(const cm_fused_program *q, const cm_fused_program *p,
                         const cm_fused_op *ops, uint64_t h) {
  if (q->hash != h || q->nin != p->nin || q->nops != p->nops || q->nout != p->nout ||
      q->red_op != p->red_op)
    return false;
  for (int i = 0; i < p->nin; i++)
    if (q->in_dtype[i] != p->in_dtype[i] || q->in_scalar[i] != p->in_scalar[i] ||
        q->in_rowconst[i] != p->in_rowconst[i])
      return false;
  return !memcmp(q->ops, ops, sizeof *ops * (size_t)p->nops) &&
         !memcmp(q->outs, p->outs, sizeof *p->outs * (size_t)p->nout);
}

/* One allocation: the entry, then ops, outs, dtypes, the two flag rows. */
static interned *copy_program(const cm_fused_program *p, const cm_fused_op *ops, uint64_t h) {
  size_t nops = (size_t)p->nops, nin = (size_t)p->nin, nout = (size_t)p->nout;
  size_t size = sizeof(interned) + sizeof(cm_fused_op) * nops + sizeof(int32_t) * nout +
                sizeof(cm_dtype) * nin + 2 * nin;
  interned *e = calloc(1, size);
  if (!e) return NULL;
  char *at = (char *)(e + 1);
  cm_fused_op *o = (cm_fused_op *)at;
  at += sizeof *o * nops;
  int32_t *outs = (int32_t *)at;
  at += sizeof *outs * nout;
  cm_dtype *dt = (cm_dtype *)at;
  at += sizeof *dt * nin;
  bool *scalar = (bool *)at, *rowconst = scalar + nin;
  memcpy(o, ops, sizeof *o * nops);
  memcpy(outs, p->outs, sizeof *outs * nout);
  for (size_t i = 0; i < nin; i++)
    dt[i] = p->in_dtype[i], scalar[i] = p->in_scalar[i], rowconst[i] = p->in_rowconst[i];
  e->p = (cm_fused_program){.nin = p->nin,
                            .nops = p->nops,
                            .nout = p->nout,
                            .red_op = p->red_op,
                            .in_dtype = dt,
                            .in_scalar = scalar,
                            .in_rowconst = rowconst,
                            .ops = o,
                            .outs = outs,
                            .hash = h};
  return e;
}

const cm_fused_program *cm_fused_program_intern(const cm_fused_program *p) {
  if (check_program(p)) return NULL;
  cm_fused_op *ops = malloc(sizeof *ops * (size_t)p->nops);
  if (!ops) return cm_error(CM_ERR_MEMORY, "[Compiled] Out of memory."), NULL;
  for (int j = 0; j < p->nops; j++) ops[j] = canonical_op(&p->ops[j]);
  uint64_t h = program_hash(p, ops);
  interned **slot = &buckets[h % NBUCKETS];
  pthread_mutex_lock(&intern_mu);
  interned *e = *slot;
  while (e && !same_program(&e->p, p, ops, h)) e = e->next;
  if (!e && (e = copy_program(p, ops, h))) {
    e->next = *slot;
    *slot = e;
  }
  pthread_mutex_unlock(&intern_mu);
  free(ops);
  if (!e) return cm_error(CM_ERR_MEMORY, "[Compiled] Out of memory."), NULL;
  return &e->p;
}

/* ---- the descriptor -------------------------------------------------------- */

/* The block points at this process's copy of the program: it cannot be
 * exported (saving the program itself would be the way). */
static int compiled_save(const cm_params *p, size_t size, cm_bytes *out) {
  (void)p, (void)size, (void)out;
  return cm_error(CM_ERR_VALUE, "[Compiled] A fused kernel cannot be exported.");
}

static const char *compiled_name(const cm_params *p, size_t size) {
  const cm_compiled_params *c = cm_compiled_params_of_block(p, size);
  return c->label[0] ? c->label : "Compiled";
}

/* Shapeless compile: the inputs' common shape (fuse.c checked that it is
 * the region's); a region feeding a reduction is never in such a trace. */
static int compiled_shape(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                          int *ndim, int32_t *shape) {
  if (cm_compiled_params_of(node)->program->red_op)
    return cm_error(CM_ERR_VALUE, "[Compiled] Cannot infer the shape of a fused reduction.");
  return cm_shape_of_broadcast(node, in, nin, p, ndim, shape);
}

/* No kernel here: each backend registers its own (the CPU's is
 * backend/cpu/fused.c's cm_cpu_fused). */
const cm_prim cm_prim_compiled = {.name = "Compiled",
                                  .output_shape = compiled_shape,
                                  .op_name = compiled_name,
                                  CM_PARAMS_OF(cm_compiled_params),
                                  .params_save = compiled_save};
