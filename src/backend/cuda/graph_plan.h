/* The host-side bookkeeping of a CUDA graph under construction: which
 * earlier nodes each new node must wait for, and the key that says when
 * two graphs have the same topology (so an instantiated graph can be
 * updated in place instead of instantiated again).  Pure C, no CUDA: the
 * encoder (encoder.c) mirrors each plan node with a graph node, and the
 * unit tests run it on any machine.
 *
 * Dependencies come from the buffers a node reads and writes:
 *   - a node that reads or writes a buffer waits for its last writer
 *     (read after write, write after write);
 *   - a node that writes a buffer also waits for every node that read it
 *     since that write (write after read: a kernel writing over a donated
 *     input must not overtake an earlier reader of the same buffer).
 * Buffers are identified by address.  The encoder keeps every buffer of a
 * graph alive until the graph has run, so within one graph an address
 * names one buffer. */
#ifndef CMLX_BACKEND_CUDA_GRAPH_PLAN_H
#define CMLX_BACKEND_CUDA_GRAPH_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a node is, for the topology key: kernels of the same function with
 * the same launch shape can be updated in place; any other node (a child
 * graph of a library call) makes the graph not updatable. */
typedef enum cm_graph_node_kind { CM_GRAPH_KERNEL = 0, CM_GRAPH_CHILD = 1 } cm_graph_node_kind;

typedef struct cm_graph_plan {
  /* buffer -> last writer / readers since then (open addressing) */
  struct cm_plan_slot *slots;
  size_t slot_cap, slot_used;
  /* edges (from, to), in the order they were found */
  int *edge_from, *edge_to;
  size_t n_edges, edge_cap;
  int n_nodes;
  size_t bytes; /* bytes the nodes touch (the commit threshold in MB) */
  uint64_t key; /* hash of the kinds, kernel ids and edges so far */
  bool updatable;
} cm_graph_plan;

void cm_graph_plan_init(cm_graph_plan *p);
void cm_graph_plan_free(cm_graph_plan *p);
/* Forget every node (after a commit); keeps the storage. */
void cm_graph_plan_reset(cm_graph_plan *p);

/* Add node number p->n_nodes (returned) of the given kind; kernel_id names
 * the function and launch shape (0 for a child graph).  Reads and writes
 * are buffer addresses with their byte sizes.  The new node's edges are
 * appended to edge_from/edge_to (from an earlier node to this one, each
 * pair once).  -1 on out of memory, with the plan unchanged. */
int cm_graph_plan_add(cm_graph_plan *p, cm_graph_node_kind kind, uint64_t kernel_id,
                      const void *const *reads, const size_t *read_bytes, int nreads,
                      const void *const *writes, const size_t *write_bytes, int nwrites);

/* Whether the plan has grown past max_nodes nodes or max_mb megabytes
 * touched: the encoder commits then (MLX_MAX_OPS_PER_BUFFER,
 * MLX_MAX_MB_PER_BUFFER). */
bool cm_graph_plan_full(const cm_graph_plan *p, int max_nodes, size_t max_mb);

/* ---- a small LRU map from topology keys to instantiated graphs ---- */
typedef struct cm_graph_lru {
  struct cm_lru_entry *entries; /* most recently used first */
  size_t n, cap;
  void (*destroy)(void *value); /* called on eviction and in free */
} cm_graph_lru;

void cm_graph_lru_init(cm_graph_lru *c, size_t capacity, void (*destroy)(void *value));
void cm_graph_lru_free(cm_graph_lru *c);
/* The value stored for key (moved to the front), or NULL. */
void *cm_graph_lru_get(cm_graph_lru *c, uint64_t key);
/* Store value for key (replacing and destroying an older value), evicting
 * the least recently used entry when full.  A capacity of 0 stores
 * nothing: value is destroyed at once.  -1 on out of memory (value not
 * stored and not destroyed). */
int cm_graph_lru_put(cm_graph_lru *c, uint64_t key, void *value);
/* Remove key's entry without destroying its value; returns the value. */
void *cm_graph_lru_take(cm_graph_lru *c, uint64_t key);

#endif
