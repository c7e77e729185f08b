/* Building generated kernels: the system C compiler, a disk cache, dlopen.
 *
 * A kernel's file is named by a 64-bit FNV-1a hash of its source, the
 * compiler flags and the machine (not the compiler: any C compiler gives
 * the same results, since the kernels use exact operations only), under $CMLX_CACHE_DIR, else
 * $XDG_CACHE_HOME/cmlx, else ~/.cache/cmlx.  A missing file is compiled
 * to a private temporary name and renamed into place, so a reader never
 * sees half a file and concurrent builders (threads, processes) agree.
 * The compiler is $CMLX_CC, else "cc", run without a shell; when it is
 * missing or fails, cm_jit_load returns NULL and the program runs
 * interpreted (fused_interp.c), with the same bits (CMLX_COMPILE_FUSE=0
 * keeps compile from fusing at all).
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

static int mkdirs(char *path) {
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    int rc = mkdir(path, 0755);
    *p = '/';
    if (rc && errno != EEXIST) return -1;
  }
  return mkdir(path, 0755) && errno != EEXIST ? -1 : 0;
}

/* The cache directory (created), or -1. */
static int cache_dir(char *out, size_t cap) {
  const char *d = getenv("CMLX_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
  int n;
  if (d && *d) n = snprintf(out, cap, "%s", d);
  else if (x && *x) n = snprintf(out, cap, "%s/cmlx", x);
  else if (h && *h) n = snprintf(out, cap, "%s/.cache/cmlx", h);
  else n = snprintf(out, cap, "/tmp/cmlx-cache-%d", (int)getuid());
  if (n < 0 || (size_t)n >= cap) return -1;
  return mkdirs(out);
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

/* ---- eviction -------------------------------------------------------------- */
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

/* Remove the least recently used kernels of dir until they fit the cap;
 * keep (the file just built) stays. */
static void evict(const char *dir, const char *keep) {
  double cap = cap_bytes();
  if (!(cap > 0)) return;
  DIR *d = opendir(dir);
  if (!d) return;
  cached *list = NULL;
  size_t n = 0, room = 0;
  double total = 0;
  time_t now = time(NULL);
  struct dirent *e;
  char path[4096];
  while ((e = readdir(d))) {
    bool kernel = !strncmp(e->d_name, "fused-", 6), tmp = !strncmp(e->d_name, "tmp-", 4);
    if ((!kernel && !tmp) || strlen(e->d_name) >= sizeof list->name) continue;
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (stat(path, &st) || !S_ISREG(st.st_mode)) continue;
    if (tmp) {
      if (now - st.st_mtime > 3600) unlink(path);
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
  closedir(d);
  if (list) qsort(list, n, sizeof *list, older_first);
  for (size_t i = 0; i < n && total > cap; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, list[i].name);
    if (unlink(path) == 0 || errno == ENOENT) total -= (double)list[i].size;
  }
  free(list);
}

static atomic_uint serial;

/* CMLX_JIT_LOG=path appends one line per kernel this process loads:
 * "disk <hash>" (from the cache), "built <hash>", or "failed <hash>". */
static void note(const char *what, uint64_t h) {
  const char *path = getenv("CMLX_JIT_LOG");
  if (!path || !*path) return;
  FILE *f = fopen(path, "a");
  if (!f) return;
  fprintf(f, "%s %016llx\n", what, (unsigned long long)h);
  fclose(f);
}

cm_fused_main_fn cm_jit_load(const char *source) {
  uint64_t h = fnv(0xcbf29ce484222325ull, JIT_TAG);
  h = fnv(h, source);
  for (size_t i = 0; i < NFLAGS; i++) h = fnv(h, flags[i]);
  h = fnv(h, cm_cpu_arch());
  char dir[3072], path[4096], tmp_c[4096], tmp_so[4096];
  if (cache_dir(dir, sizeof dir)) return NULL;
  snprintf(path, sizeof path, "%s/fused-%016llx.so", dir, (unsigned long long)h);
  cm_fused_main_fn fn = access(path, R_OK) == 0 ? open_kernel(path) : NULL;
  if (fn) {
    utimensat(AT_FDCWD, path, NULL, 0); /* recently used: last to be evicted */
    note("disk", h);
    return fn;
  }
  unsigned k = atomic_fetch_add(&serial, 1);
  snprintf(tmp_c, sizeof tmp_c, "%s/tmp-%016llx-%d-%u.c", dir, (unsigned long long)h, (int)getpid(),
           k);
  snprintf(tmp_so, sizeof tmp_so, "%s/tmp-%016llx-%d-%u.so", dir, (unsigned long long)h,
           (int)getpid(), k);
  FILE *f = fopen(tmp_c, "w");
  if (!f) return NULL;
  bool ok = fputs(source, f) >= 0;
  ok = fclose(f) == 0 && ok;
  ok = ok && run_compiler(tmp_c, tmp_so) == 0 && rename(tmp_so, path) == 0;
  unlink(tmp_c);
  fn = ok ? open_kernel(path) : NULL;
  if (!fn) unlink(tmp_so);
  if (fn) evict(dir, strrchr(path, '/') + 1);
  note(fn ? "built" : "failed", h);
  return fn;
}
