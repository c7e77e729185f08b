/* Fused elementwise kernels: the process-wide table of built kernels and
 * the driver of the Compiled primitive (see fused.h).
 *
 * Table: a kernel per distinct source, built the first time a node of a
 * program with that source is evaluated, kept until the process exits
 * (its call-outs' parameters point into the interned program that first
 * asked for it, which lives as long).  A map from program to kernel makes
 * every later lookup one probe.  A kernel being built is marked so: other
 * threads asking for it wait instead of building it again.
 *
 * Driver: when every input that is not a broadcast scalar is dense with
 * one shared layout (row-major, transposed, ...), the outputs take that
 * layout too (an output may take over a dead input's buffer) and the
 * kernel runs over the flat buffers in chunks spread over the pool.
 * Anything else (broadcasts, slices, mixed layouts) gets row-major
 * outputs and a walk over the rows of the collapsed shape, each input
 * with its own (possibly zero) stride; a few long rows are cut in pieces. */
#include "backend/cpu/fused.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "primitives/compiled.h"

typedef enum { PENDING, BUILDING, DONE } build_state;

typedef struct kernel {
  struct kernel *next;
  char *source;                 /* names the program, call-outs included */
  const cm_fused_program *prog; /* the first program with this source */
  build_state state;
  cm_fused_main_fn fn; /* DONE: the kernel, or NULL (interpreted) */
  uint64_t cc;         /* a failed build: the compiler it was tried with */
  cm_fused_calls calls;
} kernel;

static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t table_cv = PTHREAD_COND_INITIALIZER;
static kernel *table; /* never freed: runs use their call tables */

/* program -> kernel: open addressing on the (interned, immortal) pointer */
static const cm_fused_program **map_key;
static kernel **map_val;
static size_t map_cap, map_len;

static size_t map_slot(const cm_fused_program *p) {
  size_t i = (size_t)(p->hash ^ (p->hash >> 29)) & (map_cap - 1);
  while (map_key[i] && map_key[i] != p) i = (i + 1) & (map_cap - 1);
  return i;
}

static kernel *map_find(const cm_fused_program *p) { return map_cap ? map_val[map_slot(p)] : NULL; }

/* Under the lock; -1 when out of memory (the map stays as it was). */
static int map_put(const cm_fused_program *p, kernel *k) {
  if (2 * (map_len + 1) > map_cap) {
    size_t cap = map_cap ? 2 * map_cap : 64;
    const cm_fused_program **keys = calloc(cap, sizeof *keys);
    kernel **vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) return free(keys), free(vals), -1;
    const cm_fused_program **ok = map_key;
    kernel **ov = map_val;
    size_t ocap = map_cap;
    map_key = keys, map_val = vals, map_cap = cap;
    for (size_t i = 0; i < ocap; i++)
      if (ok[i]) {
        size_t j = map_slot(ok[i]);
        map_key[j] = ok[i], map_val[j] = ov[i];
      }
    free(ok), free(ov);
  }
  size_t i = map_slot(p);
  if (!map_key[i]) map_len++;
  map_key[i] = p, map_val[i] = k;
  return 0;
}

static uint64_t compiler_id(void) {
  const char *cc = getenv("CMLX_CC");
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char *s = cc ? cc : ""; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

static kernel *kernel_new(const cm_fused_program *p, char *source, int ncalls) {
  kernel *k = calloc(1, sizeof *k);
  if (!k) return NULL;
  k->source = source;
  k->prog = p;
  k->calls.fn = calloc((size_t)ncalls + 1, sizeof(void *));
  k->calls.params = calloc((size_t)ncalls + 1, sizeof(void *));
  if (k->calls.fn && k->calls.params && !cm_fused_calls_for(p, &k->calls) && k->calls.n == ncalls)
    return k;
  free(k->calls.fn), free(k->calls.params), free(k);
  return NULL;
}

/* Under the lock: k for p, found by source or added (taking src). */
static kernel *kernel_of_source(const cm_fused_program *p, char *src, int ncalls) {
  kernel *k = table;
  while (k && strcmp(k->source, src)) k = k->next;
  if (k) {
    free(src);
    return k;
  }
  if (!(k = kernel_new(p, src, ncalls))) return free(src), NULL;
  k->next = table;
  table = k;
  return k;
}

int cm_fused_exec_for(const cm_fused_program *p, cm_fused_exec *x) {
  pthread_mutex_lock(&table_mu);
  kernel *k = map_find(p);
  pthread_mutex_unlock(&table_mu);
  if (!k) {
    /* the source is made outside the lock; a racing thread's copy is
     * dropped in kernel_of_source */
    int ncalls = 0;
    char *src = cm_fused_source(p, &ncalls);
    if (!src) return cm_error(CM_ERR_MEMORY, "[Compiled] Out of memory.");
    pthread_mutex_lock(&table_mu);
    k = kernel_of_source(p, src, ncalls);
    if (k && map_put(p, k)) k = NULL;
    pthread_mutex_unlock(&table_mu);
    if (!k) return cm_error(CM_ERR_MEMORY, "[Compiled] Out of memory.");
  }
  pthread_mutex_lock(&table_mu);
  uint64_t cc = compiler_id();
  if (k->state == DONE && !k->fn && k->cc != cc) k->state = PENDING; /* another compiler now */
  while (k->state == BUILDING) pthread_cond_wait(&table_cv, &table_mu);
  if (k->state == PENDING) {
    k->state = BUILDING;
    pthread_mutex_unlock(&table_mu);
    cm_fused_main_fn fn = cm_jit_load(k->source);
    pthread_mutex_lock(&table_mu);
    k->fn = fn, k->cc = cc, k->state = DONE;
    pthread_cond_broadcast(&table_cv);
  }
  /* the kernel's call-outs hold the first program's parameters; p has
   * the same ones (equal sources name them) */
  *x = (cm_fused_exec){.prog = p, .main = k->fn, .fn = k->calls.fn, .pp = k->calls.params};
  pthread_mutex_unlock(&table_mu);
  return 0;
}

/* ---- the driver ---------------------------------------------------------- */
#define CHUNK 4096 /* elements per flat work item */

typedef struct job {
  const cm_fused_exec *x;
  int nin, nout;
  const char **in;   /* element 0 of each input */
  char **out;        /* element 0 of each output */
  const size_t *isz; /* item sizes */
  const size_t *osz;
  const int64_t *ist; /* flat: 1, or 0 for scalars */
  int64_t n;
  /* row walk */
  int nd;
  int64_t shape[CM_MAX_DIMS];
  int64_t *st; /* st[d * nops + k]: operand k's stride on axis d (inputs then outputs) */
  int64_t split;
} job;

static void run_piece(const job *j, const int64_t *in_off, const int64_t *out_off,
                      const int64_t *strides, int64_t n) {
  const char *ip[64];
  char *op[64];
  const char **ipp = j->nin <= 64 ? ip : malloc(sizeof(char *) * (size_t)j->nin);
  char **opp = j->nout <= 64 ? op : malloc(sizeof(char *) * (size_t)j->nout);
  if (!ipp || !opp) abort(); /* a few pointers: nothing sane to do */
  for (int k = 0; k < j->nin; k++) ipp[k] = j->in[k] + in_off[k] * (int64_t)j->isz[k];
  for (int k = 0; k < j->nout; k++) opp[k] = j->out[k] + out_off[k] * (int64_t)j->osz[k];
  cm_fused_exec_run(j->x, n, ipp, strides, opp);
  if (ipp != ip) free(ipp);
  if (opp != op) free(opp);
}

static void flat_range(void *ctx, int64_t b, int64_t e) {
  const job *j = ctx;
  int64_t lo = b * CHUNK, hi = e * CHUNK < j->n ? e * CHUNK : j->n;
  int64_t ioff[64], ooff[64];
  int64_t *io = j->nin <= 64 ? ioff : malloc(sizeof(int64_t) * (size_t)j->nin);
  int64_t *oo = j->nout <= 64 ? ooff : malloc(sizeof(int64_t) * (size_t)j->nout);
  if (!io || !oo) abort();
  for (int k = 0; k < j->nin; k++) io[k] = lo * j->ist[k];
  for (int k = 0; k < j->nout; k++) oo[k] = lo;
  run_piece(j, io, oo, j->ist, hi - lo);
  if (io != ioff) free(io);
  if (oo != ooff) free(oo);
}

static void rows_range(void *ctx, int64_t b, int64_t e) {
  const job *j = ctx;
  int nops = j->nin + j->nout, last = j->nd - 1;
  int64_t len = j->shape[last];
  int64_t buf[3 * 64];
  int64_t *off = nops <= 64 ? buf : malloc(sizeof(int64_t) * 3 * (size_t)nops);
  if (!off) abort();
  int64_t *inner = off + nops, *idx = off + 2 * nops; /* idx: nd <= 64 */
  for (int k = 0; k < nops; k++) inner[k] = j->st[last * nops + k];
  for (int64_t u = b; u < e; u++) {
    int64_t row = u / j->split, piece = u % j->split;
    int64_t lo = len * piece / j->split, hi = len * (piece + 1) / j->split;
    int64_t r = row;
    for (int d = last - 1; d >= 0; d--) idx[d] = r % j->shape[d], r /= j->shape[d];
    for (int k = 0; k < nops; k++) {
      int64_t o = lo * inner[k];
      for (int d = 0; d < last; d++) o += idx[d] * j->st[d * nops + k];
      off[k] = o;
    }
    run_piece(j, off, off + j->nin, inner, hi - lo);
  }
  if (off != buf) free(off);
}

/* dense with the same strides as like on every axis longer than 1 */
static bool same_dense(const cm_array *a, const cm_array *like) {
  if (!cm_is_contiguous(a) || !cm_same_shape(a, like)) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] > 1 && a->strides[d] != like->strides[d]) return false;
  return true;
}

/* The row walk over shape: strides per axis (zero where an input is
 * broadcast; the outputs row-major), axes of length 1 dropped, neighbours
 * that are contiguous in every operand merged. */
int cm_fused_collapse(int ndim, const int32_t *shape, cm_array *const *in, int nin, int nout,
                      int64_t *cshape, int64_t *st) {
  int nd = 0, nops = nin + nout;
  int64_t ostr[CM_MAX_DIMS];
  cm_row_major_strides(ndim, shape, ostr);
  for (int d = 0; d < ndim; d++) {
    if (shape[d] == 1) continue;
    int64_t *row = st + (size_t)nd * (size_t)nops;
    for (int i = 0; i < nin; i++) {
      int e = d - (ndim - in[i]->ndim); /* the input's axis, right-aligned */
      row[i] = e >= 0 && in[i]->shape[e] != 1 ? in[i]->strides[e] : 0;
    }
    for (int o = 0; o < nout; o++) row[nin + o] = ostr[d];
    bool merge = nd > 0;
    for (int q = 0; merge && q < nops; q++)
      if (st[(size_t)(nd - 1) * nops + q] != row[q] * shape[d]) merge = false;
    if (merge) {
      cshape[nd - 1] *= shape[d];
      memcpy(st + (size_t)(nd - 1) * nops, row, sizeof *row * (size_t)nops);
    } else {
      cshape[nd++] = shape[d];
    }
  }
  if (nd == 0) { /* one element */
    cshape[0] = 1;
    for (int q = 0; q < nops; q++) st[q] = 0;
    nd = 1;
  }
  return nd;
}

int cm_cpu_fused(cm_array *out, cm_array *const *in, int nin, const cm_params *params) {
  const cm_fused_program *prog = cm_compiled_params_of(out)->program;
  if (prog->red_op) return cm_cpu_fused_reduce(out, in, nin, params);
  int nout = cm_num_outputs(out), nops = nin + nout;
  if (nin != prog->nin || nout != prog->nout)
    return cm_error(CM_ERR_RUNTIME, "[Compiled] Wrong number of inputs or outputs.");
  cm_fused_exec x;
  if (cm_fused_exec_for(prog, &x)) return -1;
  const char **ip = calloc((size_t)nin + 1, sizeof *ip);
  char **op = calloc((size_t)nout + 1, sizeof *op);
  size_t *isz = calloc((size_t)nin + 1, sizeof *isz), *osz = calloc((size_t)nout + 1, sizeof *osz);
  int64_t *ist = calloc((size_t)nin + 1, sizeof *ist);
  int64_t *st = calloc((size_t)nops * (size_t)(out->ndim + 1), sizeof *st);
  bool *given = calloc((size_t)nin + 1, sizeof *given);
  int rc = ip && op && isz && osz && ist && st && given
               ? 0
               : cm_error(CM_ERR_MEMORY, "[Compiled] Out of memory.");
  /* flat: the inputs that are not scalars share one dense layout */
  const cm_array *like = NULL;
  bool flat = true;
  for (int i = 0; !rc && i < nin; i++) {
    ip[i] = cm_data(in[i]); /* before any donation */
    isz[i] = cm_itemsize(in[i]);
    if (in[i]->size == 1) continue;
    if (!like) like = in[i];
    if (!same_dense(in[i], like) || !cm_same_shape(in[i], out)) flat = false;
  }
  for (int i = 0; !rc && i < nin; i++) ist[i] = in[i]->size == 1 ? 0 : 1;
  for (int o = 0; !rc && o < nout; o++) {
    cm_array *y = cm_output(out, o);
    osz[o] = cm_itemsize(y);
    bool done = false;
    /* an input read at the index its output writes: every input in the
     * flat walk, a row-major one of the full shape in the row walk */
    for (int i = 0; !done && i < nin; i++)
      if (!given[i] && in[i]->size == y->size && isz[i] == osz[o] &&
          ((flat && like) || (cm_row_contiguous(in[i]) && cm_same_shape(in[i], y))) &&
          cm_try_donate(y, in[i]))
        given[i] = done = true;
    if (!done) rc = flat && like ? cm_alloc_output_like(y, like) : cm_alloc_output(y);
    if (!rc) op[o] = cm_data(y);
  }
  if (rc || out->size == 0) goto done;
  job j = {.x = &x,
           .nin = nin,
           .nout = nout,
           .in = ip,
           .out = op,
           .isz = isz,
           .osz = osz,
           .ist = ist,
           .n = out->size,
           .st = st,
           .split = 1};
  int64_t grain = cm_grain(2 * (int64_t)prog->nops);
  if (flat) {
    cm_parallel_for((j.n + CHUNK - 1) / CHUNK, grain / CHUNK + 1, flat_range, &j);
    goto done;
  }
  int nd = cm_fused_collapse(out->ndim, out->shape, in, nin, nout, j.shape, st);
  j.nd = nd;
  int64_t len = j.shape[nd - 1], rows = out->size / len;
  if (rows < 2 * (int64_t)cm_num_threads() && len >= 2 * grain) {
    j.split = len / grain;
    if (j.split > 4 * (int64_t)cm_num_threads()) j.split = 4 * (int64_t)cm_num_threads();
  }
  int64_t per = len / j.split;
  cm_parallel_for(rows * j.split, per >= grain ? 1 : grain / (per ? per : 1) + 1, rows_range, &j);
done:
  free(ip), free(op), free(isz), free(osz), free(ist), free(st), free(given);
  return rc;
}
