/* The MPI transport over Open MPI, loaded at run time.
 *
 * libmpi is opened with dlopen (MLX_MPI_LIBNAME or MPI_LIBNAME, else
 * libmpi.so.40, else libmpi.so), so cmlx neither links with MPI nor needs
 * mpi.h to build.  The few handles used are declared here by Open MPI's ABI:
 * MPI_Comm, MPI_Datatype, MPI_Op and MPI_Errhandler are pointers, and the
 * predefined ones (MPI_COMM_WORLD, MPI_FLOAT, MPI_SUM, ...) are the addresses
 * of exported objects (ompi_mpi_comm_world, ompi_mpi_float, ompi_mpi_op_sum).
 *
 * Reductions use MPI's own operations where MPI defines them for the type and
 * user-defined commutative operations elsewhere, as MLX does: float16 and
 * bfloat16 (2-byte contiguous types, summed in float and rounded per step),
 * the max and min of complex64 (real part first, then imaginary) and bool
 * (sum and max are "or", min is "and").  Counts above INT_MAX elements are
 * sent in pieces.  Errors are returned (MPI_ERRORS_RETURN), never fatal. */
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "distributed/comm.h"

/* ---- Open MPI's ABI ----------------------------------------------------- */

typedef void *MPI_Comm;
typedef void *MPI_Datatype;
typedef void *MPI_Op;
typedef void *MPI_Errhandler;
typedef void MPI_User_function(void *in, void *inout, int *len, MPI_Datatype *dt);

#define CM_MPI_SUCCESS 0
#define CM_MPI_IN_PLACE ((void *)1)
#define CM_MPI_STATUS_IGNORE NULL
#define CM_MPI_THREAD_SERIALIZED 2
#define CM_MPI_MAX_LIBRARY_VERSION_STRING 256
#define CM_MPI_MAX_ERROR_STRING 256
#define CM_MPI_TAG 0

static struct {
  void *lib;
  bool tried, loaded, initialized, finalized;
  int (*get_library_version)(char *, int *);
  int (*init_thread)(int *, char ***, int, int *);
  int (*initialized_fn)(int *);
  int (*finalized_fn)(int *);
  int (*finalize)(void);
  int (*comm_rank)(MPI_Comm, int *);
  int (*comm_size)(MPI_Comm, int *);
  int (*comm_split)(MPI_Comm, int, int, MPI_Comm *);
  int (*comm_free)(MPI_Comm *);
  int (*comm_set_errhandler)(MPI_Comm, MPI_Errhandler);
  int (*error_string)(int, char *, int *);
  int (*allreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
  int (*allgather)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);
  int (*reduce_scatter_block)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
  int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
  int (*recv)(void *, int, MPI_Datatype, int, int, MPI_Comm, void *);
  int (*type_contiguous)(int, MPI_Datatype, MPI_Datatype *);
  int (*type_commit)(MPI_Datatype *);
  int (*op_create)(MPI_User_function *, int, MPI_Op *);
  MPI_Comm world;
  MPI_Errhandler errors_return;
  MPI_Op sum, max, min;
  MPI_Datatype byte, types[CM_NUM_DTYPES];
  MPI_Op user_ops[CM_NUM_DTYPES][CM_REDUCE_NUM_OPS]; /* NULL: MPI's own op serves */
} M;

static const struct {
  const char *name;
  size_t offset;
} api_symbols[] = {
#define SYM(name, field) \
  { #name, offsetof(__typeof__(M), field) }
    SYM(MPI_Get_library_version, get_library_version),
    SYM(MPI_Init_thread, init_thread),
    SYM(MPI_Initialized, initialized_fn),
    SYM(MPI_Finalized, finalized_fn),
    SYM(MPI_Finalize, finalize),
    SYM(MPI_Comm_rank, comm_rank),
    SYM(MPI_Comm_size, comm_size),
    SYM(MPI_Comm_split, comm_split),
    SYM(MPI_Comm_free, comm_free),
    SYM(MPI_Comm_set_errhandler, comm_set_errhandler),
    SYM(MPI_Error_string, error_string),
    SYM(MPI_Allreduce, allreduce),
    SYM(MPI_Allgather, allgather),
    SYM(MPI_Reduce_scatter_block, reduce_scatter_block),
    SYM(MPI_Send, send),
    SYM(MPI_Recv, recv),
    SYM(MPI_Type_contiguous, type_contiguous),
    SYM(MPI_Type_commit, type_commit),
    SYM(MPI_Op_create, op_create),
    /* objects: the handle is the symbol's address */
    SYM(ompi_mpi_comm_world, world),
    SYM(ompi_mpi_errors_return, errors_return),
    SYM(ompi_mpi_op_sum, sum),
    SYM(ompi_mpi_op_max, max),
    SYM(ompi_mpi_op_min, min),
    SYM(ompi_mpi_byte, byte),
    SYM(ompi_mpi_c_bool, types[CM_BOOL]),
    SYM(ompi_mpi_uint8_t, types[CM_UINT8]),
    SYM(ompi_mpi_uint16_t, types[CM_UINT16]),
    SYM(ompi_mpi_uint32_t, types[CM_UINT32]),
    SYM(ompi_mpi_uint64_t, types[CM_UINT64]),
    SYM(ompi_mpi_int8_t, types[CM_INT8]),
    SYM(ompi_mpi_int16_t, types[CM_INT16]),
    SYM(ompi_mpi_int32_t, types[CM_INT32]),
    SYM(ompi_mpi_int64_t, types[CM_INT64]),
    SYM(ompi_mpi_float, types[CM_FLOAT32]),
    SYM(ompi_mpi_double, types[CM_FLOAT64]),
    SYM(ompi_mpi_c_float_complex, types[CM_COMPLEX64]),
#undef SYM
};

/* ---- user-defined reductions -------------------------------------------- */

/* Each one reduces with the transports' reduction (cm_comm_reduce_into),
 * so MPI and the ring combine every dtype alike; MPI counts len in elements of the op's
 * datatype (the 16-bit float types are 2-byte contiguous ones). */
#define USER_OP(NAME, DT, OP)                                        \
  static void NAME(void *in, void *io, int *len, MPI_Datatype *dt) { \
    (void)dt;                                                        \
    cm_comm_reduce_into(io, in, (size_t)*len, DT, OP);               \
  }
USER_OP(f16_sum, CM_FLOAT16, CM_REDUCE_SUM)
USER_OP(f16_max, CM_FLOAT16, CM_REDUCE_MAX)
USER_OP(f16_min, CM_FLOAT16, CM_REDUCE_MIN)
USER_OP(bf16_sum, CM_BFLOAT16, CM_REDUCE_SUM)
USER_OP(bf16_max, CM_BFLOAT16, CM_REDUCE_MAX)
USER_OP(bf16_min, CM_BFLOAT16, CM_REDUCE_MIN)
USER_OP(c64_max, CM_COMPLEX64, CM_REDUCE_MAX)
USER_OP(c64_min, CM_COMPLEX64, CM_REDUCE_MIN)
USER_OP(bool_sum, CM_BOOL, CM_REDUCE_SUM)
USER_OP(bool_max, CM_BOOL, CM_REDUCE_MAX)
USER_OP(bool_min, CM_BOOL, CM_REDUCE_MIN)
#undef USER_OP

/* ---- loading and initialising ------------------------------------------- */

static void unload(void) {
  if (M.lib) dlclose(M.lib);
  M.lib = NULL;
  M.loaded = false;
}

/* Open libmpi and resolve every symbol; false (quietly) when anything lacks. */
static bool load(void) {
  if (M.tried) return M.loaded;
  M.tried = true;
  const char *name = getenv("MLX_MPI_LIBNAME");
  if (!name || !*name) name = getenv("MPI_LIBNAME");
  if (name && !*name) name = NULL;
  if (name) {
    M.lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
  } else {
    M.lib = dlopen("libmpi.so.40", RTLD_NOW | RTLD_GLOBAL);
    if (!M.lib) M.lib = dlopen("libmpi.so", RTLD_NOW | RTLD_GLOBAL);
  }
  if (!M.lib) return false;
  for (size_t i = 0; i < sizeof api_symbols / sizeof api_symbols[0]; i++) {
    void *p = dlsym(M.lib, api_symbols[i].name);
    if (!p) {
      unload();
      return false;
    }
    memcpy((char *)&M + api_symbols[i].offset, &p, sizeof p);
  }
  char version[CM_MPI_MAX_LIBRARY_VERSION_STRING + 1] = {0};
  int n = 0;
  if (M.get_library_version(version, &n) != CM_MPI_SUCCESS || !strstr(version, "Open MPI")) {
    unload();
    return false;
  }
  M.loaded = true;
  return true;
}

/* Whether a launcher (mpirun / mpiexec, or a PMI/PMIx server) started us. */
static bool launched_by_mpirun(void) {
  static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    if (getenv(vars[i])) return true;
  return false;
}

bool cm_mpi_available(void) { return launched_by_mpirun() && load(); }

static int mpi_fail(int rc, const char *what) {
  char msg[CM_MPI_MAX_ERROR_STRING + 1] = {0};
  int n = 0;
  if (!M.error_string || M.error_string(rc, msg, &n) != CM_MPI_SUCCESS)
    snprintf(msg, sizeof msg, "error %d", rc);
  return cm_error(CM_ERR_RUNTIME, "[mpi] %s failed: %s", what, msg);
}

static void finalize_at_exit(void) {
  int done = 1;
  if (M.initialized && !M.finalized && M.finalized_fn(&done) == CM_MPI_SUCCESS && !done)
    M.finalize();
  M.finalized = true;
}

static int make_user_ops(void) {
  MPI_Datatype u8 = M.types[CM_UINT8];
  MPI_Datatype *f16 = &M.types[CM_FLOAT16], *bf16 = &M.types[CM_BFLOAT16];
  if (M.type_contiguous(2, u8, f16) || M.type_commit(f16) || M.type_contiguous(2, u8, bf16) ||
      M.type_commit(bf16))
    return cm_error(CM_ERR_RUNTIME, "[mpi] could not create the 16-bit float types");
  static const struct {
    cm_dtype dt;
    cm_reduce_op op;
    MPI_User_function *fn;
  } user[] = {
      {CM_FLOAT16, CM_REDUCE_SUM, f16_sum},   {CM_FLOAT16, CM_REDUCE_MAX, f16_max},
      {CM_FLOAT16, CM_REDUCE_MIN, f16_min},   {CM_BFLOAT16, CM_REDUCE_SUM, bf16_sum},
      {CM_BFLOAT16, CM_REDUCE_MAX, bf16_max}, {CM_BFLOAT16, CM_REDUCE_MIN, bf16_min},
      {CM_COMPLEX64, CM_REDUCE_MAX, c64_max}, {CM_COMPLEX64, CM_REDUCE_MIN, c64_min},
      {CM_BOOL, CM_REDUCE_SUM, bool_sum},     {CM_BOOL, CM_REDUCE_MAX, bool_max},
      {CM_BOOL, CM_REDUCE_MIN, bool_min},
  };
  for (size_t i = 0; i < sizeof user / sizeof user[0]; i++)
    if (M.op_create(user[i].fn, 1, &M.user_ops[user[i].dt][user[i].op]) != CM_MPI_SUCCESS)
      return cm_error(CM_ERR_RUNTIME, "[mpi] could not create a reduction operation");
  return 0;
}

static int init_library(void) {
  if (M.initialized) return 0;
  if (M.finalized) return cm_error(CM_ERR_RUNTIME, "[mpi] MPI was already finalized");
  int flag = 0, provided = 0;
  M.initialized_fn(&flag);
  if (!flag) {
    int rc = M.init_thread(NULL, NULL, CM_MPI_THREAD_SERIALIZED, &provided);
    if (rc != CM_MPI_SUCCESS) return mpi_fail(rc, "MPI_Init_thread");
    atexit(finalize_at_exit);
  }
  M.initialized = true;
  M.comm_set_errhandler(M.world, M.errors_return);
  return make_user_ops();
}

/* ---- the transport ------------------------------------------------------ */

static const cm_comm_ops mpi_ops;

static MPI_Comm comm_of(cm_comm *c) { return c->impl; }

static cm_comm *wrap(MPI_Comm comm) {
  int rank = 0, size = 0;
  if (M.comm_rank(comm, &rank) != CM_MPI_SUCCESS || M.comm_size(comm, &size) != CM_MPI_SUCCESS) {
    cm_error(CM_ERR_RUNTIME, "[mpi] could not query the communicator");
    return NULL;
  }
  cm_comm *c = calloc(1, sizeof *c);
  if (!c) {
    cm_error(CM_ERR_MEMORY, "[mpi] out of memory");
    return NULL;
  }
  c->ops = &mpi_ops;
  c->rank = rank;
  c->size = size;
  c->impl = comm;
  return c;
}

static MPI_Op op_for(cm_dtype dt, cm_reduce_op op) {
  if (M.user_ops[dt][op]) return M.user_ops[dt][op];
  return op == CM_REDUCE_SUM ? M.sum : op == CM_REDUCE_MAX ? M.max : M.min;
}

static int check_args(cm_dtype dt, cm_reduce_op op) {
  if (!cm_dtype_valid((int)dt) || !M.types[dt])
    return cm_error(CM_ERR_VALUE, "[mpi] unsupported dtype");
  if (op != CM_REDUCE_SUM && op != CM_REDUCE_MAX && op != CM_REDUCE_MIN)
    return cm_error(CM_ERR_VALUE, "[mpi] only sum, max and min reductions are supported");
  return 0;
}

static int mpi_all_reduce(cm_comm *c, const void *in, void *out, size_t count, cm_dtype dt,
                          cm_reduce_op op) {
  if (check_args(dt, op)) return -1;
  size_t esize = cm_dtype_size(dt);
  for (size_t done = 0; done < count;) {
    int n = count - done > INT_MAX ? INT_MAX : (int)(count - done);
    char *o = (char *)out + done * esize;
    const void *i = in == out ? CM_MPI_IN_PLACE : (const char *)in + done * esize;
    int rc = M.allreduce(i, o, n, M.types[dt], op_for(dt, op), comm_of(c));
    if (rc != CM_MPI_SUCCESS) return mpi_fail(rc, "MPI_Allreduce");
    done += (size_t)n;
  }
  return 0;
}

static int mpi_all_gather(cm_comm *c, const void *in, void *out, size_t bytes) {
  if (bytes > INT_MAX)
    return cm_error(CM_ERR_VALUE, "[mpi] all_gather of more than %d bytes per rank", INT_MAX);
  if (bytes == 0) return 0;
  int rc = M.allgather(in, (int)bytes, M.byte, out, (int)bytes, M.byte, comm_of(c));
  return rc == CM_MPI_SUCCESS ? 0 : mpi_fail(rc, "MPI_Allgather");
}

static int mpi_reduce_scatter(cm_comm *c, const void *in, void *out, size_t count, cm_dtype dt,
                              cm_reduce_op op) {
  if (check_args(dt, op)) return -1;
  if (count > INT_MAX)
    return cm_error(CM_ERR_VALUE, "[mpi] reduce_scatter of more than %d elements per rank",
                    INT_MAX);
  if (count == 0) return 0;
  int rc = M.reduce_scatter_block(in, out, (int)count, M.types[dt], op_for(dt, op), comm_of(c));
  return rc == CM_MPI_SUCCESS ? 0 : mpi_fail(rc, "MPI_Reduce_scatter_block");
}

static int check_peer(cm_comm *c, int peer, const char *what) {
  if (peer < 0 || peer >= c->size || peer == c->rank)
    return cm_error(CM_ERR_VALUE, "[mpi] %s: invalid peer rank %d in a group of size %d", what,
                    peer, c->size);
  return 0;
}

static int mpi_send(cm_comm *c, const void *buf, size_t bytes, int dst) {
  if (check_peer(c, dst, "send")) return -1;
  size_t done = 0;
  do {
    int n = bytes - done > INT_MAX ? INT_MAX : (int)(bytes - done);
    int rc = M.send((const char *)buf + done, n, M.byte, dst, CM_MPI_TAG, comm_of(c));
    if (rc != CM_MPI_SUCCESS) return mpi_fail(rc, "MPI_Send");
    done += (size_t)n;
  } while (done < bytes);
  return 0;
}

static int mpi_recv(cm_comm *c, void *buf, size_t bytes, int src) {
  if (check_peer(c, src, "recv")) return -1;
  size_t done = 0;
  do {
    int n = bytes - done > INT_MAX ? INT_MAX : (int)(bytes - done);
    int rc =
        M.recv((char *)buf + done, n, M.byte, src, CM_MPI_TAG, comm_of(c), CM_MPI_STATUS_IGNORE);
    if (rc != CM_MPI_SUCCESS) return mpi_fail(rc, "MPI_Recv");
    done += (size_t)n;
  } while (done < bytes);
  return 0;
}

static int mpi_split(cm_comm *c, int color, int key, cm_comm **out) {
  *out = NULL;
  if (color < 0) return cm_error(CM_ERR_VALUE, "[mpi] split: color must be non-negative");
  MPI_Comm comm = NULL;
  int rc = M.comm_split(comm_of(c), color, key < 0 ? c->rank : key, &comm);
  if (rc != CM_MPI_SUCCESS) return mpi_fail(rc, "MPI_Comm_split");
  *out = wrap(comm);
  if (!*out) {
    M.comm_free(&comm);
    return -1;
  }
  return 0;
}

/* The world communicator stays until exit (MPI_Finalize runs at exit, since
 * MPI cannot be initialised again); split ones are freed. */
static void mpi_free(cm_comm *c) {
  if (!c) return;
  MPI_Comm comm = c->impl;
  if (comm != M.world && !M.finalized) M.comm_free(&comm);
  free(c);
}

static const cm_comm_ops mpi_ops = {
    .name = "mpi",
    .all_reduce = mpi_all_reduce,
    .all_gather = mpi_all_gather,
    .reduce_scatter = mpi_reduce_scatter,
    .send = mpi_send,
    .recv = mpi_recv,
    .split = mpi_split,
    .free = mpi_free,
};

int cm_mpi_init(bool strict, cm_comm **out) {
  static const char single[] =
      "[mpi] The world has a single process. Launch with mpirun to initialize the mpi backend.";
  *out = NULL;
  /* Outside mpirun nothing is loaded unless a strict init asks why. */
  if (!launched_by_mpirun() && !strict) return 0;
  if (!load()) {
    if (!strict) return 0;
    return cm_error(CM_ERR_RUNTIME,
                    "[mpi] Cannot initialize MPI: Open MPI's libmpi could not be loaded (set "
                    "MPI_LIBNAME to its path, e.g. libmpi.so.40)");
  }
  if (!launched_by_mpirun()) return cm_error(CM_ERR_RUNTIME, "%s", single);
  if (init_library()) return strict ? -1 : (cm_error_clear(), 0);
  int size = 0;
  M.comm_size(M.world, &size);
  if (size <= 1) return strict ? cm_error(CM_ERR_RUNTIME, "%s", single) : 0;
  *out = wrap(M.world);
  return *out ? 0 : -1;
}
