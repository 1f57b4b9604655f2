/* A program that reads files every way a framework does, run with and without
 * libdlio_cache_preload.so by cache_preload_test.cc; each line names the way, the file, the
 * FNV-1a hash of the bytes read and their count, so two runs compare line by line.
 *   cache_read_program sum PATH...      each file through read, pread, mmap, fread, fgets,
 *                                       getline, readv and dup/dup2/fcntl(F_DUPFD) copies of
 *                                       one fd
 *   cache_read_program write PATH       writes PATH (O_WRONLY|O_CREAT|O_TRUNC), reads it back
 *   cache_read_program fork PATH...     a forked child reads every file, then the parent
 *   cache_read_program timed PATH...    reads each file in 4 KiB read() calls; prints the time
 *                                       those calls took (ns) and how many there were
 *   cache_read_program passes N PATH... N passes of read() over the files
 *   cache_read_program threads PATH...  4 threads read every file at once (pread), then print
 * Every call's result is checked: any surprise exits 2. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void Check(int ok, const char* what, const char* path) {
  if (!ok) {
    fprintf(stderr, "cache_read_program: unexpected result of %s on %s\n", what, path);
    exit(2);
  }
}

typedef struct {
  uint64_t hash;
  uint64_t bytes;
  int fd; /* the descriptor the open returned: the same number with and without the cache */
} Sum;

static void Add(Sum* s, const void* data, size_t n) {
  const unsigned char* p = data;
  for (size_t i = 0; i < n; ++i) {
    s->hash ^= p[i];
    s->hash *= 1099511628211ull;
  }
  s->bytes += n;
}

static Sum NewSum(void) {
  Sum s = {14695981039346656037ull, 0, -1};
  return s;
}

static void Print(const char* way, const char* path, Sum s) {
  printf("%s %s %016llx %llu fd %d\n", way, path, (unsigned long long)s.hash,
         (unsigned long long)s.bytes, s.fd);
}

static char buf[1 << 16];

static Sum ByRead(const char* path) {
  Sum s = NewSum();
  int fd = open(path, O_RDONLY);
  Check(fd >= 0, "open", path);
  s.fd = fd;
  ssize_t r;
  while ((r = read(fd, buf, 4096)) > 0) Add(&s, buf, (size_t)r);
  Check(r == 0 && close(fd) == 0, "read", path);
  return s;
}

static Sum ByPread(const char* path) {
  Sum s = NewSum();
  int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  Check(fd >= 0, "openat", path);
  s.fd = fd;
  Check((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0, "O_CLOEXEC kept", path);
  ssize_t r;
  off_t off = 0;
  while ((r = pread(fd, buf, 3000, off)) > 0) {
    Add(&s, buf, (size_t)r);
    off += r;
  }
  Check(r == 0 && close(fd) == 0, "pread", path);
  return s;
}

static Sum ByMmap(const char* path) {
  Sum s = NewSum();
  int fd = open(path, O_RDONLY);
  Check(fd >= 0, "open", path);
  s.fd = fd;
  Check((fcntl(fd, F_GETFD) & FD_CLOEXEC) == 0, "no O_CLOEXEC", path);
  struct stat st;
  Check(fstat(fd, &st) == 0, "fstat", path);
  if (st.st_size > 0) {
    void* p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    Check(p != MAP_FAILED, "mmap", path);
    Add(&s, p, (size_t)st.st_size);
    munmap(p, (size_t)st.st_size);
  }
  Check(close(fd) == 0, "close", path);
  return s;
}

static Sum ByFread(const char* path) {
  Sum s = NewSum();
  FILE* f = fopen(path, "rb");
  Check(f != NULL, "fopen", path);
  s.fd = fileno(f);
  size_t n;
  while ((n = fread(buf, 1, 1000, f)) > 0) Add(&s, buf, n);
  Check(!ferror(f) && fclose(f) == 0, "fread", path);
  return s;
}

static Sum ByFgets(const char* path) {
  Sum s = NewSum();
  FILE* f = fopen(path, "re");
  Check(f != NULL, "fopen", path);
  s.fd = fileno(f);
  char line[256];
  /* Bytes after a NUL in a line would be lost to strlen: the test files have none. */
  while (fgets(line, sizeof line, f) != NULL) Add(&s, line, strlen(line));
  Check(!ferror(f) && fclose(f) == 0, "fgets", path);
  return s;
}

/* Built with optimization, glibc's getline is an inline call of __getdelim. */
static Sum ByGetline(const char* path) {
  Sum s = NewSum();
  FILE* f = fopen(path, "r");
  Check(f != NULL, "fopen", path);
  s.fd = fileno(f);
  char* line = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&line, &cap, f)) > 0) Add(&s, line, (size_t)n);
  free(line);
  Check(!ferror(f) && fclose(f) == 0, "getline", path);
  return s;
}

static Sum ByReadv(const char* path) {
  Sum s = NewSum();
  int fd = open(path, O_RDONLY);
  Check(fd >= 0, "open", path);
  s.fd = fd;
  ssize_t r;
  for (;;) {
    struct iovec iov[2] = {{buf, 1000}, {buf + 1000, 3000}};
    r = readv(fd, iov, 2);
    if (r <= 0) break;
    Add(&s, buf, (size_t)r);
  }
  Check(r == 0 && close(fd) == 0, "readv", path);
  return s;
}

/* A third of the file through the fd, a third through dup, the rest through dup2 and F_DUPFD
 * copies; the original closed first. */
static Sum ByDups(const char* path) {
  Sum s = NewSum();
  struct stat st;
  Check(stat(path, &st) == 0, "stat", path);
  const size_t third = (size_t)st.st_size / 3;
  int fd = open(path, O_RDONLY);
  Check(fd >= 0, "open", path);
  s.fd = fd;
  Check(read(fd, buf, third) == (ssize_t)third, "read", path);
  Add(&s, buf, third);
  int d = dup(fd);
  Check(d >= 0 && close(fd) == 0, "dup", path);
  Check(read(d, buf, third) == (ssize_t)third, "read dup", path);
  Add(&s, buf, third);
  Check(dup2(d, 60) == 60, "dup2", path);
  int f = fcntl(60, F_DUPFD, 70);
  Check(f >= 70 && close(d) == 0 && close(60) == 0, "F_DUPFD", path);
  ssize_t r;
  while ((r = read(f, buf, 4096)) > 0) Add(&s, buf, (size_t)r);
  Check(r == 0 && close(f) == 0, "read F_DUPFD", path);
  return s;
}

static int SumAll(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    Print("read", argv[i], ByRead(argv[i]));
    Print("pread", argv[i], ByPread(argv[i]));
    Print("mmap", argv[i], ByMmap(argv[i]));
    Print("fread", argv[i], ByFread(argv[i]));
    Print("fgets", argv[i], ByFgets(argv[i]));
    Print("getline", argv[i], ByGetline(argv[i]));
    Print("readv", argv[i], ByReadv(argv[i]));
    Print("dups", argv[i], ByDups(argv[i]));
  }
  return 0;
}

static int Write(const char* path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  Check(fd >= 0, "open for writing", path);
  for (int i = 0; i < 100; ++i) Check(write(fd, "written line\n", 13) == 13, "write", path);
  Check(close(fd) == 0, "close", path);
  fd = open(path, O_RDWR);
  Check(fd >= 0, "open O_RDWR", path);
  Sum s = NewSum();
  ssize_t r;
  while ((r = read(fd, buf, 4096)) > 0) Add(&s, buf, (size_t)r);
  Check(r == 0 && close(fd) == 0, "read back", path);
  Print("write", path, s);
  return 0;
}

static int Fork(int argc, char** argv) {
  fflush(stdout);
  pid_t child = fork();
  Check(child >= 0, "fork", "-");
  if (child == 0) {
    for (int i = 0; i < argc; ++i) Print("child", argv[i], ByRead(argv[i]));
    fflush(stdout);
    _exit(0);
  }
  int status = 0;
  Check(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "child", "-");
  for (int i = 0; i < argc; ++i) Print("parent", argv[i], ByRead(argv[i]));
  return 0;
}

static int64_t Now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int Timed(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    int fd = open(argv[i], O_RDONLY);
    Check(fd >= 0, "open", argv[i]);
    int calls = 0;
    ssize_t r;
    uint64_t bytes = 0;
    const int64_t t0 = Now();
    do {
      r = read(fd, buf, 4096);
      ++calls;
      if (r > 0) bytes += (uint64_t)r;
    } while (r > 0);
    const int64_t t1 = Now();
    Check(r == 0 && close(fd) == 0, "read", argv[i]);
    printf("timed %s %lld %d %llu\n", argv[i], (long long)(t1 - t0), calls,
           (unsigned long long)bytes);
  }
  return 0;
}

enum { kThreads = 4, kMaxThreadFiles = 16 };
typedef struct {
  char** paths;
  int count;
  Sum sums[kMaxThreadFiles];
} ThreadWork;

/* pread only: the threads share nothing but the files (and the preload's connection). */
static void* ReadAllFiles(void* arg) {
  ThreadWork* w = arg;
  char* local = malloc(8192);
  Check(local != NULL, "malloc", "-");
  for (int i = 0; i < w->count; ++i) {
    Sum s = NewSum();
    int fd = open(w->paths[i], O_RDONLY);
    Check(fd >= 0, "open", w->paths[i]);
    ssize_t r;
    off_t off = 0;
    while ((r = pread(fd, local, 8192, off)) > 0) {
      Add(&s, local, (size_t)r);
      off += r;
    }
    Check(r == 0 && close(fd) == 0, "pread", w->paths[i]);
    w->sums[i] = s;
  }
  free(local);
  return NULL;
}

static int Threads(int argc, char** argv) {
  Check(argc <= kMaxThreadFiles, "file count", "-");
  ThreadWork work[kThreads];
  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    work[t].paths = argv;
    work[t].count = argc;
    Check(pthread_create(&threads[t], NULL, ReadAllFiles, &work[t]) == 0, "pthread_create", "-");
  }
  for (int t = 0; t < kThreads; ++t) Check(pthread_join(threads[t], NULL) == 0, "join", "-");
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < argc; ++i) {
      work[t].sums[i].fd = -1; /* the numbers depend on the threads' interleaving */
      Print("thread", argv[i], work[t].sums[i]);
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: cache_read_program sum|write|fork|timed|passes ... PATH...\n");
    return 2;
  }
  const char* mode = argv[1];
  if (strcmp(mode, "sum") == 0) return SumAll(argc - 2, argv + 2);
  if (strcmp(mode, "write") == 0) return Write(argv[2]);
  if (strcmp(mode, "fork") == 0) return Fork(argc - 2, argv + 2);
  if (strcmp(mode, "timed") == 0) return Timed(argc - 2, argv + 2);
  if (strcmp(mode, "threads") == 0) return Threads(argc - 2, argv + 2);
  if (strcmp(mode, "passes") == 0 && argc > 3) {
    const int passes = atoi(argv[2]);
    for (int p = 0; p < passes; ++p) {
      for (int i = 3; i < argc; ++i) Print("pass", argv[i], ByRead(argv[i]));
    }
    return 0;
  }
  fprintf(stderr, "cache_read_program: unknown mode %s\n", mode);
  return 2;
}
