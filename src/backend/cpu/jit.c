/* Building generated kernels: the system C compiler, a disk cache, dlopen.
 *
 * A kernel's file is named by a 64-bit FNV-1a hash of its source, the
 * compiler flags and the machine (not the compiler: any C compiler gives
 * the same results, since the kernels use exact operations only), under
 * $CMLX_CACHE_DIR, else $XDG_CACHE_HOME/cmlx, else ~/.cache/cmlx, else
 * (no HOME) ${TMPDIR:-/tmp}/cmlx-cache-<euid>.  A missing file is compiled
 * to a private temporary name and renamed into place, so a reader never
 * sees half a file and concurrent builders (threads, processes) agree.
 * The compiler is $CMLX_CC, else "cc", run without a shell; when it is
 * missing or fails, cm_jit_load returns NULL and the program runs
 * interpreted (fused_interp.c), with the same bits (CMLX_COMPILE_FUSE=0
 * keeps compile from fusing at all).
 *
 * What is loaded is code this process runs, so the cache is trusted only
 * as far as it is private (docs/guide.md, "The kernel cache"):
 * - The directory is created 0700.  Before use it is opened without
 *   following a symlink and checked on the open descriptor: it must be a
 *   directory owned by the effective uid that neither group nor others can
 *   write; the /tmp fallback, where anyone may create the name first, must
 *   be exactly 0700.  A refused directory is never read or written: the
 *   process builds its kernels in a fresh private directory (mkdtemp),
 *   removing each file once loaded.
 * - Every entry ends in a trailer holding a SHA-256 of what it was built
 *   from (tag, source, flags, machine) and of the library bytes written at
 *   build time.  A file is read and both digests checked before dlopen: an
 *   entry copied from another kernel, truncated or damaged is rebuilt, not
 *   run.  The loader ignores bytes past an ELF file's tables, so the
 *   trailer costs nothing.
 *
 * The cache is capped at $CMLX_CACHE_MAX_MB megabytes (default 256; 0 or
 * less: no cap): after each build, the least recently used kernels go
 * (by modification time, which a load from the cache refreshes) until the
 * rest fit, the new one always kept.  Temporary files over an hour old
 * (a build that died) go too.  Concurrent processes may evict the same
 * file (the second unlink simply fails) or one another's kernels: a
 * process that loaded a kernel keeps its mapping, and one that finds a
 * file gone between looking and loading builds it again. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/cpu/fused.h"
#include "backend/cpu/cpu_features.h"
#include "core/sha256.h"

extern char **environ;

#define JIT_TAG "cmlx-fused-1"
static const char *const flags[] = {"-O3",
                                    "-march=native",
                                    "-ffp-contract=off",
                                    "-fno-math-errno",
                                    "-std=gnu11",
                                    "-shared",
                                    "-fPIC",
                                    "-w"};
#define NFLAGS (sizeof flags / sizeof flags[0])

static uint64_t fnv(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return (h ^ 0xff) * 0x100000001b3ull; /* a separator */
}

static const char *compiler(void) {
  const char *cc = getenv("CMLX_CC");
  return cc && *cc ? cc : "cc";
}

/* ---- the directory ------------------------------------------------------- */

typedef struct cache_dir {
  int fd;          /* the checked directory, opened without following a link */
  char path[3072]; /* its name, for the compiler and dlopen, which take names */
  bool ephemeral;  /* the process's own fallback: each file goes once loaded */
} cache_dir;

/* Create the missing directories of path, 0700 (XDG's mode for a user's
 * cache); whether they may be used is open_checked's decision. */
static void mkdirs(char *path) {
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    mkdir(path, 0700);
    *p = '/';
  }
  mkdir(path, 0700);
}

/* path opened as a cache directory, or -1 when it may not be one: a
 * symlink, not a directory, not the effective uid's, or writable by group
 * or others (exact: any mode but 0700).  Checked on the open descriptor,
 * and used through it from then on, so a rename or a link planted after
 * the check is never followed. */
static int open_checked(const char *path, bool exact) {
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
            (exact ? (st.st_mode & 07777) == 0700 : !(st.st_mode & 022));
  if (!ok) {
    close(fd);
    return -1;
  }
  return fd;
}

/* The process's fallback: one fresh directory from mkdtemp (0700, a name
 * nobody could have made first), removed at exit (empty by then: every
 * file in it goes once loaded). */
static pthread_mutex_t private_mu = PTHREAD_MUTEX_INITIALIZER;
static char private_path[3072];

static void remove_private(void) { rmdir(private_path); }

static int open_private(cache_dir *d) {
  pthread_mutex_lock(&private_mu);
  if (!private_path[0]) {
    const char *t = getenv("TMPDIR");
    const char *roots[] = {t && *t ? t : "/tmp", "/tmp"};
    for (int i = 0; i < 2 && !private_path[0]; i++) {
      char tmpl[sizeof private_path];
      int n = snprintf(tmpl, sizeof tmpl, "%s/cmlx-private-XXXXXX", roots[i]);
      if (n > 0 && (size_t)n < sizeof tmpl && mkdtemp(tmpl)) {
        memcpy(private_path, tmpl, (size_t)n + 1);
        atexit(remove_private);
      }
    }
  }
  d->fd = private_path[0] ? open_checked(private_path, true) : -1;
  snprintf(d->path, sizeof d->path, "%s", private_path);
  pthread_mutex_unlock(&private_mu);
  d->ephemeral = true;
  return d->fd < 0 ? -1 : 0;
}

static void note(const char *what, uint64_t h);

/* The cache directory for kernel h (created, checked and open), else the
 * private fallback; -1 when neither can be had. */
static int cache_dir_open(cache_dir *d, uint64_t h) {
  const char *c = getenv("CMLX_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  const char *t = getenv("TMPDIR");
  bool shared_root = false; /* a name anyone could have created first */
  int n;
  if (c && *c) n = snprintf(d->path, sizeof d->path, "%s", c);
  else if (x && *x) n = snprintf(d->path, sizeof d->path, "%s/cmlx", x);
  else if (home && *home) n = snprintf(d->path, sizeof d->path, "%s/.cache/cmlx", home);
  else {
    n = snprintf(d->path, sizeof d->path, "%s/cmlx-cache-%d", t && *t ? t : "/tmp", (int)geteuid());
    shared_root = true;
  }
  if (n > 0 && (size_t)n < sizeof d->path) {
    while (n > 1 && d->path[n - 1] == '/') d->path[--n] = 0;
    mkdirs(d->path);
    d->fd = open_checked(d->path, shared_root);
    d->ephemeral = false;
    if (d->fd >= 0) return 0;
  }
  note("refused", h);
  return open_private(d);
}

/* ---- entries: a shared library and its trailer -------------------------- */

/* The last bytes of every entry.  All chars: no padding, one layout on
 * every machine. */
#define TRAILER_MAGIC "CMLXJIT1"
typedef struct trailer {
  char magic[8];
  unsigned char built_from[CM_SHA256_BYTES]; /* key_digest of the kernel */
  unsigned char library[CM_SHA256_BYTES];    /* the bytes before the trailer */
  unsigned char length[8];                   /* their count, little-endian */
} trailer;
#define MAX_ENTRY ((off_t)64 << 20) /* kernels are tens of KB: refuse a giant */

/* Everything the file name's hash covers, each part ended by a NUL so no
 * two different lists of parts give the same bytes. */
static void key_digest(const char *source, unsigned char out[CM_SHA256_BYTES]) {
  cm_sha256 s;
  cm_sha256_init(&s);
  cm_sha256_update(&s, JIT_TAG, sizeof JIT_TAG);
  cm_sha256_update(&s, source, strlen(source) + 1);
  for (size_t i = 0; i < NFLAGS; i++) cm_sha256_update(&s, flags[i], strlen(flags[i]) + 1);
  const char *arch = cm_cpu_arch();
  cm_sha256_update(&s, arch, strlen(arch) + 1);
  cm_sha256_final(&s, out);
}

/* The n bytes of the regular file at fd, or NULL. */
static unsigned char *read_all(int fd, size_t n) {
  unsigned char *buf = malloc(n ? n : 1);
  for (size_t got = 0; buf && got < n;) {
    ssize_t r = pread(fd, buf + got, n - got, (off_t)got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      free(buf);
      return NULL;
    }
    got += (size_t)r;
  }
  return buf;
}

/* The size of fd if it is a file this process may trust: regular, ours,
 * writable by nobody else, not absurdly large; else -1. */
static off_t trusted_size(int fd) {
  struct stat st;
  if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) ||
      st.st_size > MAX_ENTRY)
    return -1;
  return st.st_size;
}

/* Whether the entry open at fd was built from key, byte for byte as it was
 * written then. */
static bool entry_valid(int fd, const unsigned char key[CM_SHA256_BYTES]) {
  off_t size = trusted_size(fd);
  if (size < (off_t)sizeof(trailer)) return false;
  unsigned char *buf = read_all(fd, (size_t)size);
  if (!buf) return false;
  size_t len = (size_t)size - sizeof(trailer);
  trailer t;
  memcpy(&t, buf + len, sizeof t);
  uint64_t stated = 0;
  for (int i = 7; i >= 0; i--) stated = stated << 8 | t.length[i];
  unsigned char d[CM_SHA256_BYTES];
  bool ok = !memcmp(t.magic, TRAILER_MAGIC, sizeof t.magic) && stated == len &&
            !memcmp(t.built_from, key, CM_SHA256_BYTES);
  if (ok) {
    cm_sha256_of(buf, len, d);
    ok = !memcmp(d, t.library, CM_SHA256_BYTES);
  }
  free(buf);
  return ok;
}

/* Append the trailer to the library the compiler just wrote at fd, and
 * make it the owner's alone (the compiler's mode follows the umask). */
static bool seal(int fd, const unsigned char key[CM_SHA256_BYTES]) {
  if (fchmod(fd, 0700)) return false;
  off_t size = trusted_size(fd);
  if (size < 0) return false;
  unsigned char *buf = read_all(fd, (size_t)size);
  if (!buf) return false;
  trailer t;
  memcpy(t.magic, TRAILER_MAGIC, sizeof t.magic);
  memcpy(t.built_from, key, CM_SHA256_BYTES);
  cm_sha256_of(buf, (size_t)size, t.library);
  free(buf);
  for (int i = 0; i < 8; i++) t.length[i] = (unsigned char)((uint64_t)size >> (8 * i));
  return pwrite(fd, &t, sizeof t, size) == (ssize_t)sizeof t;
}

static bool write_all(int fd, const char *s, size_t n) {
  while (n) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    s += w, n -= (size_t)w;
  }
  return true;
}

/* Run the compiler on src into so; 0 when it succeeded. */
static int run_compiler(const char *src, const char *so) {
  const char *argv[NFLAGS + 8];
  int a = 0;
  argv[a++] = compiler();
  for (size_t i = 0; i < NFLAGS; i++) argv[a++] = flags[i];
  argv[a++] = "-o";
  argv[a++] = so;
  argv[a++] = src;
  argv[a++] = "-lm";
  argv[a] = NULL;
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa)) return -1;
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  /* the compiler does not get this process's preloads (a sanitizer's
   * runtime would make it report its own leaks and fail) */
  size_t ne = 0;
  while (environ[ne]) ne++;
  char **env = malloc(sizeof *env * (ne + 1));
  if (!env) {
    posix_spawn_file_actions_destroy(&fa);
    return -1;
  }
  size_t k = 0;
  for (size_t i = 0; i < ne; i++)
    if (strncmp(environ[i], "LD_PRELOAD=", 11)) env[k++] = environ[i];
  env[k] = NULL;
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, env);
  posix_spawn_file_actions_destroy(&fa);
  free(env);
  if (rc) return -1;
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static cm_fused_main_fn open_kernel(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) return NULL;
  cm_fused_main_fn fn;
  void *sym = dlsym(h, "cm_fused_main");
  memcpy(&fn, &sym, sizeof fn);
  if (!fn) dlclose(h);
  return fn;
}

/* ---- eviction ------------------------------------------------------------ */
#define DEFAULT_CAP_MB 256.0

typedef struct cached {
  char name[64];
  off_t size;
  time_t mtime;
} cached;

static int older_first(const void *a, const void *b) {
  const cached *x = a, *y = b;
  if (x->mtime != y->mtime) return x->mtime < y->mtime ? -1 : 1;
  return strcmp(x->name, y->name);
}

static double cap_bytes(void) {
  const char *e = getenv("CMLX_CACHE_MAX_MB");
  char *end;
  double mb = e && *e ? strtod(e, &end) : DEFAULT_CAP_MB;
  if (e && *e && *end) mb = DEFAULT_CAP_MB; /* not a number */
  return mb * 1024.0 * 1024.0;
}

/* Remove the least recently used kernels of d until they fit the cap;
 * keep (the file just built) stays. */
static void evict(const cache_dir *d, const char *keep) {
  double cap = cap_bytes();
  if (!(cap > 0)) return;
  int fd = dup(d->fd);
  DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
  if (!dir) {
    if (fd >= 0) close(fd);
    return;
  }
  cached *list = NULL;
  size_t n = 0, room = 0;
  double total = 0;
  time_t now = time(NULL);
  struct dirent *e;
  while ((e = readdir(dir))) {
    bool kernel = !strncmp(e->d_name, "fused-", 6), tmp = !strncmp(e->d_name, "tmp-", 4);
    if ((!kernel && !tmp) || strlen(e->d_name) >= sizeof list->name) continue;
    struct stat st;
    if (fstatat(d->fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode)) continue;
    if (tmp) {
      if (now - st.st_mtime > 3600) unlinkat(d->fd, e->d_name, 0);
      continue;
    }
    total += (double)st.st_size;
    if (!strcmp(e->d_name, keep)) continue;
    if (n == room) {
      room = room ? 2 * room : 64;
      cached *l = realloc(list, sizeof *l * room);
      if (!l) break;
      list = l;
    }
    snprintf(list[n].name, sizeof list[n].name, "%s", e->d_name);
    list[n].size = st.st_size, list[n].mtime = st.st_mtime;
    n++;
  }
  closedir(dir);
  if (list) qsort(list, n, sizeof *list, older_first);
  for (size_t i = 0; i < n && total > cap; i++)
    if (unlinkat(d->fd, list[i].name, 0) == 0 || errno == ENOENT) total -= (double)list[i].size;
  free(list);
}

static atomic_uint serial;

/* CMLX_JIT_LOG=path appends one line per event of a kernel this process
 * loads: "disk <hash>" (from the cache), "built <hash>", "failed <hash>",
 * "rejected <hash>" (an entry that did not verify: rebuilt) and
 * "refused <hash>" (a cache directory not private enough: not used). */
static void note(const char *what, uint64_t h) {
  const char *path = getenv("CMLX_JIT_LOG");
  if (!path || !*path) return;
  FILE *f = fopen(path, "a");
  if (!f) return;
  fprintf(f, "%s %016llx\n", what, (unsigned long long)h);
  fclose(f);
}

/* The verified entry name of d, loaded; NULL when it is missing or (with
 * *rejected set) does not verify. */
static cm_fused_main_fn load_entry(const cache_dir *d, const char *name,
                                   const unsigned char key[CM_SHA256_BYTES], bool *rejected) {
  int fd = openat(d->fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    *rejected = errno != ENOENT; /* there, but not a file to open: a link */
    return NULL;
  }
  bool ok = entry_valid(fd, key);
  if (ok) futimens(fd, NULL); /* recently used: last to be evicted */
  close(fd);
  *rejected = !ok;
  if (!ok) return NULL;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", d->path, name);
  return open_kernel(path);
}

/* Compile source into entry name of d (through private temporaries,
 * sealed, renamed into place) and load it; NULL when that fails. */
static cm_fused_main_fn build_entry(const cache_dir *d, const char *source, uint64_t h,
                                    const unsigned char key[CM_SHA256_BYTES], const char *name) {
  unsigned k = atomic_fetch_add(&serial, 1);
  char tmp_c[96], tmp_so[96], path_c[4096], path_so[4096], path[4096];
  snprintf(tmp_c, sizeof tmp_c, "tmp-%016llx-%d-%u.c", (unsigned long long)h, (int)getpid(), k);
  snprintf(tmp_so, sizeof tmp_so, "tmp-%016llx-%d-%u.so", (unsigned long long)h, (int)getpid(), k);
  snprintf(path_c, sizeof path_c, "%s/%s", d->path, tmp_c);
  snprintf(path_so, sizeof path_so, "%s/%s", d->path, tmp_so);
  snprintf(path, sizeof path, "%s/%s", d->path, name);
  int fd = openat(d->fd, tmp_c, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return NULL;
  bool ok = write_all(fd, source, strlen(source));
  ok = close(fd) == 0 && ok;
  ok = ok && run_compiler(path_c, path_so) == 0;
  unlinkat(d->fd, tmp_c, 0);
  if (ok) {
    int so = openat(d->fd, tmp_so, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    ok = so >= 0 && seal(so, key);
    if (so >= 0) close(so);
  }
  ok = ok && renameat(d->fd, tmp_so, d->fd, name) == 0;
  if (!ok) unlinkat(d->fd, tmp_so, 0);
  cm_fused_main_fn fn = ok ? open_kernel(path) : NULL;
  /* a library that will not load is no entry; the fallback directory
   * keeps nothing (the mapping outlives the name) */
  if (ok && (!fn || d->ephemeral)) unlinkat(d->fd, name, 0);
  return fn;
}

cm_fused_main_fn cm_jit_load(const char *source) {
  uint64_t h = fnv(0xcbf29ce484222325ull, JIT_TAG);
  h = fnv(h, source);
  for (size_t i = 0; i < NFLAGS; i++) h = fnv(h, flags[i]);
  h = fnv(h, cm_cpu_arch());
  unsigned char key[CM_SHA256_BYTES];
  key_digest(source, key);
  char name[64];
  snprintf(name, sizeof name, "fused-%016llx.so", (unsigned long long)h);
  cache_dir d;
  if (cache_dir_open(&d, h)) {
    note("failed", h);
    return NULL;
  }
  bool rejected = false;
  cm_fused_main_fn fn = d.ephemeral ? NULL : load_entry(&d, name, key, &rejected);
  if (fn) {
    note("disk", h);
    close(d.fd);
    return fn;
  }
  if (rejected) note("rejected", h);
  fn = build_entry(&d, source, h, key, name);
  if (fn && !d.ephemeral) evict(&d, name);
  note(fn ? "built" : "failed", h);
  close(d.fd);
  return fn;
}
