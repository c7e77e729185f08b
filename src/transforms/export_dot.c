/* Graph printing as MLX's graph_utils: the node namer, export_to_dot and
 * print_graph (see export.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "primitives/export_desc.h"
#include "transforms/export.h"
#include "transforms/ptrmap.h"

struct cm_node_namer {
  cm_ptrmap names; /* node -> malloc'd name */
  size_t count;    /* names handed out or set, for the next letter name */
};

cm_node_namer *cm_node_namer_new(void) {
  cm_node_namer *n = calloc(1, sizeof *n);
  if (!n) cm_error(CM_ERR_MEMORY, "[NodeNamer] Out of memory.");
  return n;
}

void cm_node_namer_free(cm_node_namer *n) {
  if (!n) return;
  for (size_t i = 0; i < n->names.cap; i++)
    if (n->names.keys[i]) free(n->names.vals[i]);
  cm_ptrmap_free(&n->names);
  free(n);
}

int cm_node_namer_set(cm_node_namer *n, const cm_array *a, const char *name) {
  char *copy = strdup(name);
  void **slot = copy ? cm_ptrmap_insert(&n->names, a) : NULL;
  if (!slot) {
    free(copy);
    return cm_error(CM_ERR_MEMORY, "[NodeNamer] Out of memory.");
  }
  free(*slot);
  *slot = copy;
  return 0;
}

const char *cm_node_namer_get(cm_node_namer *n, const cm_array *a) {
  void **slot = cm_ptrmap_find(&n->names, a);
  if (slot) return *slot;
  /* the next name in A, B, ..., Z, AA, AB, ... (MLX counts every name) */
  char rev[32], name[32];
  size_t k = 0, v = n->names.len + 1;
  while (v > 0 && k < sizeof rev) {
    rev[k++] = (char)('A' + (v - 1) % 26);
    v = (v - 1) / 26;
  }
  for (size_t i = 0; i < k; i++) name[i] = rev[k - 1 - i];
  name[k] = 0;
  if (cm_node_namer_set(n, a, name)) return NULL;
  return *cm_ptrmap_find(&n->names, a);
}

const char *cm_export_display_name(const cm_array *a, char *buf, size_t size) {
  const cm_array *f = a->sib ? a->sib->out[0] : a;
  if (!f->prim) return "";
  const cm_export_desc *d = f->prim->export;
  if (d && d->display) return d->display(f, buf, size);
  return cm_prim_name(f->prim, f->params, f->params_size);
}

/* ---- walks ---------------------------------------------------------------- */

/* MLX's depth_first_traversal: post-order from the outputs, each node (a
 * multi-output node by all of its outputs) once; iterative. */
typedef struct dfs {
  cm_array **order;
  size_t len, cap;
} dfs;

static int dfs_run(dfs *d, cm_array *const *outs, int n) {
  cm_ptrmap seen = {0};
  size_t scap = 64, sp = 0;
  struct frame {
    cm_array *a;
    int next;
  } *stack = malloc(sizeof *stack * scap);
  int rc = stack ? 0 : -1;
  for (int o = 0; !rc && o < n; o++) {
    if (cm_ptrmap_find(&seen, outs[o])) continue;
    stack[sp++] = (struct frame){outs[o], 0};
    while (!rc && sp) {
      struct frame *f = &stack[sp - 1];
      if (f->next == 0) {
        if (cm_ptrmap_find(&seen, f->a)) {
          sp--;
          continue;
        }
        int m = f->a->sib && f->a->prim ? f->a->sib->n : 1;
        for (int k = 0; k < m && !rc; k++) {
          cm_array *s = m > 1 ? f->a->sib->out[k] : f->a;
          if (!cm_ptrmap_insert(&seen, s)) rc = -1;
        }
        if (!cm_ptrmap_insert(&seen, f->a)) rc = -1;
      }
      const cm_array *a = f->a;
      int nin = a->prim ? a->nin : 0;
      if (f->next < nin) {
        cm_array *in = a->in[f->next++];
        if (cm_ptrmap_find(&seen, in)) continue;
        if (sp == scap) {
          struct frame *ns = realloc(stack, sizeof *ns * scap * 2);
          if (!ns) {
            rc = -1;
            break;
          }
          stack = ns, scap *= 2;
        }
        stack[sp++] = (struct frame){in, 0};
        continue;
      }
      if (d->len == d->cap) {
        size_t c = d->cap ? d->cap * 2 : 64;
        cm_array **no = realloc(d->order, sizeof *no * c);
        if (!no) {
          rc = -1;
          break;
        }
        d->order = no, d->cap = c;
      }
      d->order[d->len++] = f->a;
      sp--;
    }
  }
  free(stack);
  cm_ptrmap_free(&seen);
  return rc ? cm_error(CM_ERR_MEMORY, "[export_to_dot] Out of memory.") : 0;
}

typedef struct out {
  cm_text_sink sink;
  void *ctx;
  int rc;
} out;

static void put(out *o, const char *fmt, ...) {
  if (o->rc) return;
  char small[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) {
    o->rc = cm_error(CM_ERR_RUNTIME, "[export_to_dot] Formatting failed.");
    return;
  }
  char *big = (size_t)n < sizeof small ? small : malloc((size_t)n + 1);
  if (!big) {
    o->rc = cm_error(CM_ERR_MEMORY, "[export_to_dot] Out of memory.");
    return;
  }
  if (big != small) {
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  o->rc = o->sink(o->ctx, big, (size_t)n);
  if (big != small) free(big);
}

static const char *name_of(out *o, cm_node_namer *nm, const cm_array *a) {
  const char *s = o->rc ? NULL : cm_node_namer_get(nm, a);
  if (!s && !o->rc) o->rc = -1;
  return s ? s : "";
}

int cm_export_to_dot(cm_text_sink sink, void *ctx, cm_node_namer *nm, cm_array *const *outs,
                     int n) {
  dfs d = {0};
  if (dfs_run(&d, outs, n)) return -1;
  cm_ptrmap inter = {0}; /* inputs of some primitive */
  out o = {sink, ctx, 0};
  for (size_t k = 0; k < d.len && !o.rc; k++) {
    const cm_array *a = d.order[k];
    for (int i = 0; a->prim && i < a->nin; i++)
      if (!cm_ptrmap_insert(&inter, a->in[i]))
        o.rc = cm_error(CM_ERR_MEMORY, "[export_to_dot] Out of memory.");
  }
  put(&o, "digraph {\n");
  char buf[64];
  for (size_t k = 0; k < d.len && !o.rc; k++) {
    const cm_array *a = d.order[k];
    if (!a->prim) {
      put(&o, "{ rank=source; \"%s\"; }\n", name_of(&o, nm, a));
      continue;
    }
    const cm_array *first = a->sib ? a->sib->out[0] : a;
    unsigned long long pid = (unsigned long long)(uintptr_t)first;
    put(&o, "{ %llu [label =\"%s\", shape=rectangle]; }\n", pid,
        cm_export_display_name(a, buf, sizeof buf));
    for (int i = 0; i < a->nin; i++) put(&o, "\"%s\" -> %llu\n", name_of(&o, nm, a->in[i]), pid);
    int m = cm_num_outputs(a);
    for (int j = 0; j < m; j++) {
      const cm_array *s = cm_output(a, j);
      put(&o, "{ %s\"%s\"; }\n", cm_ptrmap_find(&inter, s) ? "" : "rank=sink; ",
          name_of(&o, nm, s));
      put(&o, "%llu -> \"%s\"\n", pid, name_of(&o, nm, s));
    }
  }
  put(&o, "}");
  cm_ptrmap_free(&inter);
  free(d.order);
  return o.rc ? -1 : 0;
}

static void put_arrays(out *o, cm_node_namer *nm, cm_array *const *a, int n) {
  char s[256];
  for (int i = 0; i < n; i++)
    put(o, "%s [%s, %s]%s", name_of(o, nm, a[i]),
        cm_shape_str(s, sizeof s, a[i]->ndim, a[i]->shape), cm_dtype_name(a[i]->dtype),
        i + 1 < n ? ", " : "");
}

int cm_print_graph(cm_text_sink sink, void *ctx, cm_node_namer *nm, cm_array *const *outs, int n) {
  dfs d = {0};
  if (dfs_run(&d, outs, n)) return -1;
  out o = {sink, ctx, 0};
  cm_array **leaves = malloc(sizeof *leaves * (d.len + 1));
  int nl = 0;
  if (!leaves) o.rc = cm_error(CM_ERR_MEMORY, "[print_graph] Out of memory.");
  for (size_t k = 0; !o.rc && k < d.len; k++)
    if (!d.order[k]->prim) leaves[nl++] = d.order[k];
  put(&o, "Inputs: ");
  if (!o.rc) put_arrays(&o, nm, leaves, nl);
  put(&o, "\nOutputs: ");
  put_arrays(&o, nm, outs, n);
  put(&o, "\n");
  char buf[64];
  for (size_t k = 0; !o.rc && k < d.len; k++) {
    const cm_array *a = d.order[k];
    if (!a->prim) continue;
    put(&o, "%s ", cm_export_display_name(a, buf, sizeof buf));
    put_arrays(&o, nm, a->in, a->nin);
    put(&o, " -> ");
    cm_array *self = (cm_array *)a;
    put_arrays(&o, nm, a->sib ? a->sib->out : &self, cm_num_outputs(a));
    put(&o, "\n");
  }
  free(leaves);
  free(d.order);
  return o.rc ? -1 : 0;
}
