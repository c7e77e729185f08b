/* Export lowering (see export_impl.h): before a trace is written, nodes
 * that cmlx has as one primitive where MLX builds a graph of its own
 * primitives are replaced by that graph, which the node's descriptor
 * builds (its export desc's lower hook, primitives/export_desc.h) through
 * cmlx's op constructors on the node's inputs, so that MLX reads the
 * file: the convolution's weight gradient, the elementwise ops MLX
 * composes (isinf, isfinite, nan_to_num, round with decimals,
 * logical_xor, the float predicates on integers), diagonal, median,
 * affine dequantize, and Identity (which the transforms put on traced
 * inputs, grad's too), replaced by its input.
 *
 * The replacement takes the node's place in the tape (its new nodes just
 * before it) and in every later node's inputs and the outputs. */
#include <stdlib.h>
#include <string.h>

#include "primitives/export_desc.h"
#include "transforms/compile.h"
#include "transforms/export_impl.h"
#include "transforms/ptrmap.h"

/* The replacement for a (a new reference) its descriptor's lower hook
 * builds; NULL with *err 0 for none. */
static cm_array *lowered(const cm_array *a, int *err) {
  const cm_export_desc *d = a->prim->export;
  *err = 0;
  if (!d || !d->lower) return NULL;
  cm_error_clear(); /* NULL without an error: no lowering */
  cm_array *r = d->lower(a);
  *err = !r && cm_error_kind_get() != CM_OK ? -1 : 0;
  return r;
}

/* Append to list the nodes of c's graph not in known, inputs first. */
static int collect(cm_array *c, cm_ptrmap *known, cm_array ***list, size_t *n, size_t *cap) {
  if (!c->prim || cm_ptrmap_find(known, c)) return 0;
  for (int i = 0; i < c->nin; i++)
    if (collect(c->in[i], known, list, n, cap)) return -1;
  if (!cm_ptrmap_insert(known, c)) return -1;
  if (*n == *cap) {
    size_t nc = *cap ? 2 * *cap : 16;
    cm_array **l = realloc(*list, sizeof *l * nc);
    if (!l) return -1;
    *list = l, *cap = nc;
  }
  (*list)[(*n)++] = cm_retain(c);
  return 0;
}

/* Put c where a was: in the tape (after its new nodes) and in every later
 * reference. */
static int splice(cm_compile_trace_result *t, size_t k, cm_array *c, cm_ptrmap *known,
                  cm_array **replaced) {
  cm_array **list = NULL;
  size_t n = 0, cap = 0;
  if (collect(c, known, &list, &n, &cap)) {
    for (size_t i = 0; i < n; i++) cm_release(list[i]);
    free(list);
    return cm_error(CM_ERR_MEMORY, "[export_function] Out of memory.");
  }
  cm_array **tape = malloc(sizeof *tape * (t->len + n));
  if (!tape) {
    for (size_t i = 0; i < n; i++) cm_release(list[i]);
    free(list);
    return cm_error(CM_ERR_MEMORY, "[export_function] Out of memory.");
  }
  cm_array *a = t->tape[k];
  memcpy(tape, t->tape, sizeof *tape * k);
  if (n) memcpy(tape + k, list, sizeof *tape * n);
  memcpy(tape + k + n, t->tape + k + 1, sizeof *tape * (t->len - k - 1));
  free(list);
  free(t->tape);
  t->tape = tape, t->len += n - 1;
  for (size_t j = k + n; j < t->len; j++)
    for (int i = 0; i < tape[j]->nin; i++)
      if (tape[j]->in[i] == a) {
        tape[j]->in[i] = cm_retain(c);
        cm_release(a);
      }
  for (int j = 0; j < t->nout; j++)
    if (t->outputs[j] == a) {
      t->outputs[j] = cm_retain(c);
      cm_release(a);
    }
  *replaced = a; /* the tape's reference, released after the walk (known holds its address) */
  return 0;
}

int cm_export_lower(cm_compile_trace_result *t) {
  cm_ptrmap known = {0};
  cm_array **gone = malloc(sizeof *gone * (t->len + 1));
  size_t ngone = 0;
  int rc = gone ? 0 : -1;
  for (size_t k = 0; !rc && k < t->len; k++)
    if (!cm_ptrmap_insert(&known, t->tape[k])) rc = -1;
  for (int i = 0; !rc && i < t->nin; i++)
    if (!cm_ptrmap_insert(&known, t->inputs[i])) rc = -1;
  if (rc) rc = cm_error(CM_ERR_MEMORY, "[export_function] Out of memory.");
  for (size_t k = 0; !rc && k < t->len; k++) {
    cm_array *a = t->tape[k];
    if (!a->prim || (a->sib && a->sib->n > 1)) continue;
    bool input = false;
    for (int i = 0; i < t->nin && !input; i++) input = t->inputs[i] == a;
    if (input) continue;
    int err;
    cm_array *c = lowered(a, &err);
    if (err) rc = -1;
    if (!c) continue;
    size_t before = t->len;
    rc = splice(t, k, c, &known, &gone[ngone]);
    cm_release(c);
    if (!rc) k += t->len - before, ngone++; /* past the new nodes, at c */
  }
  for (size_t i = 0; i < ngone; i++) cm_release(gone[i]);
  free(gone);
  cm_ptrmap_free(&known);
  return rc;
}
