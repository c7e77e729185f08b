/* Process groups: the backend registry of mlx/distributed/distributed.cpp
 * (see group.h). */
#include "distributed/group.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

enum { BK_ANY, BK_RING, BK_MPI, BK_NCCL, BK_JACCL, BK_COUNT };
static const char *const backend_names[BK_COUNT] = {"any", "ring", "mpi", "nccl", "jaccl"};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static cm_group *registry[BK_COUNT]; /* the group each name returns once set */
static cm_group singleton = {NULL, 0, 1};

static int backend_index(const char *name) {
  for (int i = 0; name && i < BK_COUNT; i++)
    if (!strcmp(name, backend_names[i])) return i;
  return -1;
}

bool cm_dist_is_available(const char *backend) {
  switch (backend_index(backend)) {
  case BK_ANY: return cm_ring_available() || cm_mpi_available();
  case BK_RING: return cm_ring_available();
  case BK_MPI: return cm_mpi_available();
  default: return false; /* nccl needs CUDA, jaccl macOS */
  }
}

static cm_group *wrap(cm_comm *c) {
  cm_group *g = malloc(sizeof *g);
  if (!g) return cm_error(CM_ERR_MEMORY, "[distributed] Out of memory."), NULL;
  *g = (cm_group){c, c->rank, c->size};
  return g;
}

static int unavailable(bool strict, const char *name, cm_comm **out) {
  *out = NULL;
  if (strict) return cm_error(CM_ERR_RUNTIME, "Cannot initialize %s distributed backend.", name);
  return 0;
}

/* Bring up one backend: 0 and *out (NULL when it is not usable and strict
 * is false), or -1 with the error set. */
static int start(int bk, bool strict, cm_comm **out) {
  switch (bk) {
  case BK_RING: return cm_ring_init(strict, out);
  case BK_MPI: return cm_mpi_init(strict, out);
  default: return unavailable(strict, backend_names[bk], out);
  }
}

static cm_group *init_locked(bool strict, int bk) {
  if (registry[bk]) return registry[bk];
  cm_comm *c = NULL;
  int used = bk;
  if (bk == BK_ANY) {
    static const int order[] = {BK_RING, BK_MPI, BK_JACCL};
    for (int i = 0; i < 3 && !c; i++) {
      used = order[i];
      if (start(used, false, &c)) return NULL;
    }
    if (!c && strict)
      return cm_error(CM_ERR_RUNTIME, "[distributed] Couldn't initialize any backend"), NULL;
  } else if (start(bk, strict, &c)) {
    return NULL;
  }
  if (!c) {
    /* as MLX: the singleton group is remembered under the last name tried */
    registry[used] = &singleton;
    return &singleton;
  }
  cm_group *g = wrap(c);
  if (!g) {
    c->ops->free(c);
    return NULL;
  }
  registry[used] = g;
  if (!registry[BK_ANY]) registry[BK_ANY] = g;
  return g;
}

cm_group *cm_dist_init(bool strict, const char *backend) {
  int bk = backend_index(backend);
  if (bk < 0)
    return cm_error(CM_ERR_VALUE,
                    "[distributed] The only valid values for backend are 'any', 'mpi', 'nccl', "
                    "'jaccl' and 'ring' but '%s' was provided.",
                    backend ? backend : ""),
           NULL;
  pthread_mutex_lock(&registry_lock);
  cm_group *g = init_locked(strict, bk);
  pthread_mutex_unlock(&registry_lock);
  return g;
}

cm_group *cm_dist_world(void) { return cm_dist_init(false, "any"); }

cm_group *cm_group_split(cm_group *g, int color, int key) {
  if (!g) return cm_error(CM_ERR_VALUE, "[distributed] Got a null group."), NULL;
  if (!g->comm)
    return cm_error(CM_ERR_RUNTIME, "Cannot split the distributed group further."), NULL;
  cm_comm *c = NULL;
  if (g->comm->ops->split(g->comm, color, key, &c)) return NULL;
  cm_group *r = wrap(c);
  if (!r) c->ops->free(c);
  return r;
}
