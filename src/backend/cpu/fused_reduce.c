/* The Compiled kernel of a region feeding a reduction (transforms/fuse.c):
 * the region's root values are never stored whole.  The reduction asks
 * for them block by block (cm_reduce_rows_produced: the Reduce kernel's
 * own blocks, kernels and combining tree over a row-major input), and
 * each block is computed by the region's kernel into the reduction's
 * buffer, walking the inputs with their own (possibly zero) strides.  The
 * region's other outputs (values also used elsewhere) are stored
 * row-major in the same pass.  The reduced axes are the trailing ones, so
 * the root's row-major order is the reduction's order and the result has
 * the bits of the unfused Reduce on the unfused (row-major) values. */
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/fused.h"
#include "backend/cpu/reduce.h"
#include "primitives/compiled.h"

#define SMALL 64

typedef struct rjob {
  const cm_fused_exec *x;
  int nin, nout; /* the kernel's; output nout - 1 is the reduced one */
  const char **in;
  const size_t *isz;
  char **out; /* element 0 of the stored outputs */
  const size_t *osz;
  int nd;
  int64_t shape[CM_MAX_DIMS];
  const int64_t *st; /* st[d * (nin + nout) + k] */
} rjob;

/* Elements [start, start + n) of the root, row-major, into buf; the other
 * outputs at their places. */
static void produce(void *ctx, int64_t start, int64_t n, void *buf) {
  const rjob *j = ctx;
  int nops = j->nin + j->nout, last = j->nd - 1;
  int64_t len = j->shape[last];
  const char *ipb[SMALL];
  char *opb[SMALL];
  int64_t isb[SMALL];
  const char **ip = j->nin <= SMALL ? ipb : malloc(sizeof *ip * (size_t)j->nin);
  char **op = j->nout <= SMALL ? opb : malloc(sizeof *op * (size_t)j->nout);
  int64_t *is = j->nin <= SMALL ? isb : malloc(sizeof *is * (size_t)j->nin);
  if (!ip || !op || !is) abort(); /* a few pointers: nothing sane to do */
  for (int k = 0; k < j->nin; k++) is[k] = j->st[(size_t)last * nops + k];
  for (int64_t pos = start, end = start + n; pos < end;) {
    int64_t row = pos / len, col = pos % len;
    int64_t m = len - col < end - pos ? len - col : end - pos;
    for (int k = 0; k < j->nin; k++) {
      int64_t off = col * is[k], r = row;
      for (int d = last - 1; d >= 0; d--) {
        off += r % j->shape[d] * j->st[(size_t)d * nops + k];
        r /= j->shape[d];
      }
      ip[k] = j->in[k] + off * (int64_t)j->isz[k];
    }
    for (int o = 0; o + 1 < j->nout; o++) op[o] = j->out[o] + pos * (int64_t)j->osz[o];
    op[j->nout - 1] = (char *)buf + (pos - start) * (int64_t)j->osz[j->nout - 1];
    cm_fused_exec_run(j->x, m, ip, is, op);
    pos += m;
  }
  if (ip != ipb) free(ip);
  if (op != opb) free(op);
  if (is != isb) free(is);
}

int cm_cpu_fused_reduce(cm_array *out, cm_array *const *in, int nin, const cm_params *params) {
  const cm_compiled_params *cp = cm_compiled_params_of(out);
  const cm_fused_program *prog = cp->program;
  int nout = cm_num_outputs(out);
  (void)params;
  if (prog->nin != nin || prog->nout != nout || !prog->red_op)
    return cm_error(CM_ERR_RUNTIME, "[Compiled] Wrong number of inputs or outputs.");
  cm_fused_exec x;
  if (cm_fused_exec_for(prog, &x)) return -1;
  /* the reduction's input: the root's values, op outs[nout - 1] */
  cm_dtype red_dtype = (cm_dtype)prog->ops[prog->outs[nout - 1]].dtype;
  cm_array *red = cm_output(out, nout - 1);
  const char **ip = calloc((size_t)nin + 1, sizeof *ip);
  char **op = calloc((size_t)nout + 1, sizeof *op);
  size_t *isz = calloc((size_t)nin + 1, sizeof *isz), *osz = calloc((size_t)nout + 1, sizeof *osz);
  int64_t *st = calloc((size_t)(nin + nout) * (size_t)(cp->full_ndim + 1), sizeof *st);
  bool *given = calloc((size_t)nin + 1, sizeof *given);
  int rc = ip && op && isz && osz && st && given
               ? 0
               : cm_error(CM_ERR_MEMORY, "[Compiled] Out of memory.");
  int64_t total = 1;
  for (int d = 0; d < cp->full_ndim; d++) total *= cp->full_shape[d];
  for (int i = 0; !rc && i < nin; i++) {
    ip[i] = cm_data(in[i]); /* before any donation */
    isz[i] = cm_itemsize(in[i]);
  }
  for (int o = 0; !rc && o + 1 < nout; o++) {
    cm_array *y = cm_output(out, o);
    osz[o] = cm_itemsize(y);
    bool done = false;
    /* a row-major input of the full shape is read where the output writes */
    for (int i = 0; !done && i < nin; i++)
      if (!given[i] && isz[i] == osz[o] && cm_row_contiguous(in[i]) && cm_same_shape(in[i], y) &&
          cm_try_donate(y, in[i]))
        given[i] = done = true;
    if (!done) rc = cm_alloc_output(y);
    if (!rc) op[o] = cm_data(y);
  }
  if (!rc) rc = cm_alloc_output(red);
  if (!rc) {
    osz[nout - 1] = cm_dtype_size(red_dtype);
    rjob j = {
        .x = &x, .nin = nin, .nout = nout, .in = ip, .isz = isz, .out = op, .osz = osz, .st = st};
    if (total > 0)
      j.nd = cm_fused_collapse(cp->full_ndim, cp->full_shape, in, nin, nout, j.shape, st);
    int64_t nred = red->size ? total / red->size : 0;
    rc = cm_reduce_rows_produced(prog->red_op - 1, red_dtype, red->size, nred, produce, &j,
                                 cm_data(red), red->dtype);
  }
  free(ip), free(op), free(isz), free(osz), free(st), free(given);
  return rc;
}
