#include "transforms/graph.h"

#include <stdlib.h>

#include "primitives/unary.h"

int cm_graph_add_input(cm_graph_walk *w, cm_array *a, int index) {
  void **slot = cm_ptrmap_insert(&w->inputs, a);
  if (!slot) return cm_error(CM_ERR_MEMORY, "[transforms] Out of memory.");
  *slot = (void *)(intptr_t)(index + 1);
  return 0;
}

int cm_graph_input_index(const cm_graph_walk *w, const cm_array *a) {
  void **slot = cm_ptrmap_find(&w->inputs, a);
  return slot ? (int)(intptr_t)*slot - 1 : -1;
}

/* Marks kept per node during a walk. */
#define MARK_VISITED ((void *)1)
#define MARK_ON_PATH ((void *)2) /* depends on a traced input */

static int order_push(cm_graph_walk *w, cm_array *a) {
  if (w->len == w->cap) {
    size_t ncap = w->cap ? w->cap * 2 : 64;
    cm_array **n = realloc(w->order, ncap * sizeof *n);
    if (!n) return cm_error(CM_ERR_MEMORY, "[transforms] Out of memory.");
    w->order = n;
    w->cap = ncap;
  }
  w->order[w->len++] = a;
  return 0;
}

/* Iterative post-order DFS from the outputs through nodes that still have
 * their graph, stopping at the traced inputs.  A node is on the path when
 * it is a traced input or one of its inputs is. */
int cm_graph_sort(cm_graph_walk *w, cm_array *const *outs, int nout) {
  typedef struct {
    cm_array *node;
    int next;
  } frame;
  frame *stack = NULL;
  size_t top = 0, cap = 0;
  int rc = 0;
  for (int r = 0; r < nout && !rc; r++) {
    if (cm_ptrmap_find(&w->marks, outs[r])) continue;
    void **slot = cm_ptrmap_insert(&w->marks, outs[r]);
    if (!slot) {
      rc = cm_error(CM_ERR_MEMORY, "[transforms] Out of memory.");
      break;
    }
    *slot = MARK_VISITED;
    if (top == cap) {
      cap = cap ? cap * 2 : 64;
      frame *ns = realloc(stack, cap * sizeof *ns);
      if (!ns) {
        rc = cm_error(CM_ERR_MEMORY, "[transforms] Out of memory.");
        break;
      }
      stack = ns;
    }
    stack[top++] = (frame){outs[r], 0};
    while (top && !rc) {
      frame *f = &stack[top - 1];
      cm_array *a = f->node;
      bool is_input = cm_ptrmap_find(&w->inputs, a) != NULL;
      if (!is_input && cm_has_graph(a) && f->next < a->nin) {
        cm_array *x = a->in[f->next++];
        if (cm_ptrmap_find(&w->marks, x)) continue;
        void **s = cm_ptrmap_insert(&w->marks, x);
        if (!s) {
          rc = cm_error(CM_ERR_MEMORY, "[transforms] Out of memory.");
          break;
        }
        *s = MARK_VISITED;
        if (top == cap) {
          cap *= 2;
          frame *ns = realloc(stack, cap * sizeof *ns);
          if (!ns) {
            rc = cm_error(CM_ERR_MEMORY, "[transforms] Out of memory.");
            break;
          }
          stack = ns;
        }
        stack[top++] = (frame){x, 0};
        continue;
      }
      bool on_path = is_input;
      bool cut = w->stop_gradients && a->prim == &cm_prim_stop_gradient;
      for (int i = 0; !on_path && !is_input && !cut && cm_has_graph(a) && i < a->nin; i++)
        on_path = *cm_ptrmap_find(&w->marks, a->in[i]) == MARK_ON_PATH;
      if (on_path) *cm_ptrmap_find(&w->marks, a) = MARK_ON_PATH;
      rc = order_push(w, a);
      top--;
      /* The other outputs of a multi-output node follow it at once, so a
       * group is contiguous in the order and every consumer of any of its
       * outputs comes after all of them (a vjp sees every cotangent when
       * it reaches the group). */
      for (int k = 0; !rc && !is_input && cm_has_graph(a) && k < cm_num_outputs(a); k++) {
        cm_array *sib = cm_output(a, k);
        if (sib == a || cm_ptrmap_find(&w->marks, sib)) continue;
        void **s = cm_ptrmap_insert(&w->marks, sib);
        if (!s) {
          rc = cm_error(CM_ERR_MEMORY, "[transforms] Out of memory.");
          break;
        }
        *s = on_path ? MARK_ON_PATH : MARK_VISITED;
        rc = order_push(w, sib);
      }
    }
  }
  free(stack);
  return rc;
}

bool cm_graph_on_path(const cm_graph_walk *w, const cm_array *a) {
  void **m = cm_ptrmap_find(&w->marks, a);
  return m && *m == MARK_ON_PATH;
}

void cm_graph_walk_free(cm_graph_walk *w) {
  free(w->order);
  cm_ptrmap_free(&w->marks);
  cm_ptrmap_free(&w->inputs);
}
