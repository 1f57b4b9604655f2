/* A program whose output depends on every descriptor number, close() result and errno it sees,
 * run plain and under libdlio_preload.so and libdlio_cache_preload.so by preload_fd_test.cc:
 * the outputs must be byte-identical (the interposers keep their own descriptors out of the way).
 *   fd_program fds DATA REPORT   opens, dups, sockets and pipes; closes twice; dup2 onto 900,
 *                                1023 and onto every descriptor it did not open itself (listed
 *                                in REPORT, which differs between runs: the interposers'); writes
 *                                through fd 1 reopened on a file; closefrom and close_range, then
 *                                a pipe at the freed numbers; then execl with 5000 arguments
 *   fd_program raw DATA REPORT   replaces the interposers' descriptors (listed in REPORT) with a
 *                                socket of its own by raw system calls (no hook sees them), reads
 *                                on, then prints what the socket received (nothing of theirs)
 *                                and whether its descriptors stayed open
 *   fd_program fallback DATA     closefrom on a kernel without close_range (a seccomp filter
 *                                makes it ENOSYS): glibc's closefrom, and the interposers',
 *                                close what /proc/self/fd lists; then a pipe, and reads on
 *   fd_program execv DATA        execv with 5000 arguments
 *   fd_program args DATA X...    (the exec'ed image) prints its argument count, reads DATA/in.bin
 * DATA holds in.bin (at least 4096 bytes). Any surprise exits 2. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define R10(x) x, x, x, x, x, x, x, x, x, x
#define R1000(x) R10(R10(R10(x)))
#define R5000(x) R1000(x), R1000(x), R1000(x), R1000(x), R1000(x)

static char buf[8192];
static char self[4096];
static int inherited[64]; /* open when main started (before any interposer opened one) */
static int n_inherited = 0;

static void Say(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  fflush(stdout);
}

static void Check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "fd_program: unexpected result of %s (errno %d)\n", what, errno);
    exit(2);
  }
}

static char* Join(const char* dir, const char* name) {
  static char paths[4][4096];
  static int next = 0;
  char* p = paths[next++ % 4];
  snprintf(p, 4096, "%s/%s", dir, name);
  return p;
}

/* An open, a read and a close of DATA/in.bin: traced, served by the cache. */
static void ReadIn(const char* data, size_t n) {
  int fd = open(Join(data, "in.bin"), O_RDONLY);
  Check(fd >= 0 && read(fd, buf, n) == (ssize_t)n, "read in.bin");
  Say("read %zu through fd %d, close %d\n", n, fd, close(fd));
}

static void CloseTwice(const char* name, int fd) {
  int first = close(fd);
  int second = close(fd);
  Say("close %s twice: %d, then %d errno %d\n", name, first, second, second < 0 ? errno : 0);
}

/* dup2 onto `target`, read through it, close it: the number is the program's for that time. */
static int Borrow(int from, int target) {
  if (dup2(from, target) != target) return 0;
  char a[10];
  char b[10];
  int ok =
      pread(target, a, 10, 100) == 10 && pread(from, b, 10, 100) == 10 && memcmp(a, b, 10) == 0;
  return ok && close(target) == 0 && close(target) == -1 && errno == EBADF;
}

/* The descriptors open now, as close() or fcntl() see them (an interposer's are hidden). */
static void SayOpenFds(const char* when) {
  Say("open fds %s:", when);
  for (int fd = 0; fd < 65536; ++fd) {
    if (fcntl(fd, F_GETFD) != -1) Say(" %d", fd);
  }
  Say("\n");
}

/* Calls fn(fd) for every descriptor /proc/self/fd lists (but its own). */
static void ForEachListed(void (*fn)(int)) {
  DIR* d = opendir("/proc/self/fd");
  Check(d != NULL, "opendir /proc/self/fd");
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d)) fn(atoi(e->d_name));
  }
  closedir(d);
}

static void AddInherited(int fd) {
  if (n_inherited < 64) inherited[n_inherited++] = fd;
}

static const int* g_known;
static int g_n_known;
static int foreign[64];
static int n_foreign = 0;

static void AddIfForeign(int fd) {
  int mine = 0;
  for (int i = 0; i < n_inherited; ++i) mine = mine || fd == inherited[i];
  for (int i = 0; i < g_n_known; ++i) mine = mine || fd == g_known[i];
  if (!mine && n_foreign < 64) foreign[n_foreign++] = fd;
}

/* Every descriptor /proc/self/fd lists that the program neither inherited nor opened: the
 * interposers' (written to REPORT), each borrowed with dup2. */
static void BorrowForeign(int from, const int* known, int n_known, const char* report) {
  g_known = known;
  g_n_known = n_known;
  ForEachListed(AddIfForeign);
  int n = n_foreign;
  FILE* out = fopen(report, "w");
  Check(out != NULL, "fopen REPORT");
  int ok = 1;
  for (int i = 0; i < n; ++i) {
    fprintf(out, "%d\n", foreign[i]);
    ok = ok && Borrow(from, foreign[i]);
  }
  Check(fclose(out) == 0, "fclose REPORT");
  Say("dup2 onto every foreign descriptor: %s\n", ok ? "ok" : "failed");
}

/* With stdout closed, a file opened next is fd 1, and write(1) goes into it. */
static void StdoutOnFile(const char* data) {
  int saved = dup(1);
  Check(saved >= 0 && close(1) == 0, "close stdout");
  int fd = open(Join(data, "stdout.txt"), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  int wrote = (int)write(1, "through fd 1\n", 13);
  int closed = close(1);
  Check(dup2(saved, 1) == 1 && close(saved) == 0, "restore stdout");
  FILE* f = fopen(Join(data, "stdout.txt"), "r");
  size_t n = f != NULL ? fread(buf, 1, sizeof buf - 1, f) : 0;
  buf[n] = '\0';
  Check(f != NULL && fclose(f) == 0, "read stdout.txt");
  Say("file opened with stdout closed: fd %d, write %d, close %d, holds \"%s\"\n", fd, wrote,
      closed, buf);
}

/* After closefrom (or close_range) a pipe takes the freed numbers: its reads are no file's. */
static void PipeAfterClosing(const char* how) {
  int p[2];
  Check(pipe(p) == 0, "pipe");
  Check(write(p[1], "abc", 3) == 3 && read(p[0], buf, 3) == 3, "pipe I/O");
  Say("after %s: pipe %d %d\n", how, p[0], p[1]);
  Check(close(p[0]) == 0 && close(p[1]) == 0, "close pipe");
}

static int Fds(const char* data, const char* report) {
  ReadIn(data, 100); /* the tracer's file and the cache's connection exist from here on */
  int a = open(Join(data, "in.bin"), O_RDONLY);
  int b = open(Join(data, "in.bin"), O_RDONLY);
  int c = dup(a);
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  int p[2];
  Check(a >= 0 && b >= 0 && c >= 0 && s >= 0 && pipe(p) == 0, "opens");
  Say("open %d %d, dup %d, socket %d, pipe %d %d\n", a, b, c, s, p[0], p[1]);
  CloseTwice("b", b);
  int never = close(700);
  Say("close of a never-opened 700: %d errno %d\n", never, errno);
  int at_900 = Borrow(a, 900);
  int at_1023 = Borrow(a, 1023);
  Say("dup2 onto 900: %d, onto 1023: %d\n", at_900, at_1023);
  int known[] = {a, c, s, p[0], p[1]};
  BorrowForeign(a, known, 5, report);
  SayOpenFds("before stdout");
  StdoutOnFile(data);
  ReadIn(data, 200); /* still traced and cached after its descriptors were borrowed */

  closefrom(3);
  PipeAfterClosing("closefrom(3)");
  SayOpenFds("after closefrom");
  int x = open(Join(data, "in.bin"), O_RDONLY);
  Check(x >= 0, "open after closefrom");
  Check(close_range(3, ~0u, 0) == 0, "close_range");
  PipeAfterClosing("close_range(3, ~0)");
  ReadIn(data, 300); /* still traced and cached after closefrom and close_range */
  fflush(stdout);
  execl(self, self, "args", data, R5000("x"), (char*)NULL);
  Say("execl failed: errno %d\n", errno);
  return 3;
}

static int Raw(const char* data, const char* report) {
  ReadIn(data, 100);
  int pair[2];
  Check(socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0, "socketpair");
  int known[] = {pair[0], pair[1]};
  g_known = known;
  g_n_known = 2;
  ForEachListed(AddIfForeign);
  FILE* out = fopen(report, "w");
  Check(out != NULL, "fopen REPORT");
  for (int i = 0; i < n_foreign; ++i) {
    fprintf(out, "%d\n", foreign[i]);
    Check(syscall(SYS_dup3, pair[0], foreign[i], 0) == foreign[i], "raw dup3");
  }
  Check(fclose(out) == 0, "fclose REPORT");
  ReadIn(data, 200);
  ReadIn(data, 300);
  int open_still = 1;
  for (int i = 0; i < n_foreign; ++i) {
    open_still = open_still && syscall(SYS_fcntl, foreign[i], F_GETFD) >= 0;
    syscall(SYS_close, foreign[i]);
  }
  ssize_t got = recv(pair[1], buf, sizeof buf, MSG_DONTWAIT);
  Say("the program's socket received %zd bytes (errno %d); its descriptors %s\n", got,
      got < 0 ? errno : 0, open_still ? "stayed open" : "were closed");
  return 0;
}

/* From here on close_range fails with ENOSYS, as on kernels before 5.9. */
static int WithoutCloseRange(void) {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_close_range, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

static int Fallback(const char* data) {
  if (!WithoutCloseRange()) {
    Say("no seccomp filter: skipped\n");
    return 0;
  }
  Check(close_range(3, ~0u, 0) == -1 && errno == ENOSYS, "close_range is ENOSYS");
  ReadIn(data, 100);
  int a = open(Join(data, "in.bin"), O_RDONLY);
  int b = dup(a);
  Check(a >= 0 && b >= 0, "opens");
  closefrom(3);
  PipeAfterClosing("closefrom(3) without close_range");
  SayOpenFds("after closefrom");
  ReadIn(data, 200);
  return 0;
}

static int Execv(const char* data) {
  static char* argv[5004];
  argv[0] = self;
  argv[1] = (char*)"args";
  argv[2] = (char*)data;
  for (int i = 3; i < 5003; ++i) argv[i] = (char*)"y";
  argv[5003] = NULL;
  execv(self, argv);
  Say("execv failed: errno %d\n", errno);
  return 3;
}

static int Args(int argc, char** argv) {
  Say("exec'ed with %d arguments, the last %s\n", argc, argv[argc - 1]);
  ReadIn(argv[2], 7);
  return 0;
}

int main(int argc, char** argv) {
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  Check(n > 0, "readlink /proc/self/exe");
  self[n] = '\0';
  ForEachListed(AddInherited);
  if (argc == 4 && strcmp(argv[1], "fds") == 0) return Fds(argv[2], argv[3]);
  if (argc == 4 && strcmp(argv[1], "raw") == 0) return Raw(argv[2], argv[3]);
  if (argc == 3 && strcmp(argv[1], "execv") == 0) return Execv(argv[2]);
  if (argc == 3 && strcmp(argv[1], "fallback") == 0) return Fallback(argv[2]);
  if (argc > 3 && strcmp(argv[1], "args") == 0) return Args(argc, argv);
  fprintf(stderr, "usage: fd_program fds|raw DATA REPORT | execv DATA\n");
  return 1;
}
