/* A program with known file I/O, run under libdlio_preload.so by preload_test.cc.
 *   io_program basic DATA OTHER   reads, writes, seeks and dups in DATA (traced) and OTHER
 *                                 (outside the data directories); exits normally
 *   io_program fork DATA          a reader thread, then a forked child that reads and ends with
 *                                 _exit; prints "parent PID child PID"
 *   io_program more DATA          vectored I/O, stat, mmap, stdio and unlink in DATA
 *   io_program closeall DATA      closes every descriptor (the tracer's too), then writes a file
 *   io_program exec DATA          reads, then execs itself (same pid) to read again
 *   io_program execl DATA         the same through execl (variadic)
 *   io_program position DATA      reads whose file position the tracer follows (lseek, preadv2
 *                                 with offset -1, sendfile, O_APPEND), then close_range
 *   io_program vfork DATA         a vfork child closes a traced fd, fails to exec and _exits;
 *                                 the parent reads on
 *   io_program term DATA          reads, then dies of SIGTERM with a file still open
 *   io_program wait DATA READY    reads, creates READY, then sleeps (up to 60 s) with the file
 *                                 open: for a signal sent from outside
 *   io_program scratch DATA WORK  two passes reading DATA/f0.bin..f3.bin whole (4 KiB each),
 *                                 each started by a scratch file in WORK: created, 4 bytes
 *                                 written, closed, unlinked (Python's tempfile probe)
 *   io_program faults DATA        writes DATA/pages.bin (256 KiB), reads it whole 3 times into
 *                                 fresh mappings, then 3 times into one buffer touched first,
 *                                 then 4 KiB of it (page faults inside the reads: 64, 0, absent),
 *                                 16 KiB into a fresh mapping (4), 12 KiB (absent), then freads
 *                                 it whole into a fresh mapping (64)
 * Every call's result is checked: any surprise exits 2, so the test knows the calls happened. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static char buf[8192];

static void Check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "io_program: unexpected result of %s\n", what);
    exit(2);
  }
}

static char* Join(const char* dir, const char* name) {
  static char paths[8][4096];
  static int next = 0;
  char* p = paths[next++ % 8];
  snprintf(p, 4096, "%s/%s", dir, name);
  return p;
}

static int Basic(const char* data, const char* other) {
  memset(buf, 'x', sizeof buf);
  int fd = open(Join(data, "a.bin"), O_CREAT | O_RDWR | O_TRUNC, 0644);
  Check(fd >= 0, "open a.bin");
  Check(write(fd, buf, 1000) == 1000, "write 1000");
  Check(pwrite(fd, buf, 500, 2000) == 500, "pwrite 500 at 2000");
  Check(lseek(fd, 100, SEEK_SET) == 100, "lseek 100");
  Check(read(fd, buf, 300) == 300, "read 300");
  int fd2 = dup(fd);
  Check(fd2 >= 0, "dup");
  Check(read(fd2, buf, 200) == 200, "read 200 through dup");
  Check(dup2(fd, 40) == 40, "dup2");
  Check(lseek(40, 0, SEEK_END) == 2500, "lseek end");
  Check(read(40, buf, 100) == 0, "read at end");
  Check(pread(fd2, buf, 1000, 2000) == 500, "pread 1000 at 2000");
  int fd3 = fcntl(fd, F_DUPFD_CLOEXEC, 50);
  Check(fd3 >= 50, "fcntl F_DUPFD_CLOEXEC");
  Check(lseek(fd3, 7, SEEK_SET) == 7, "lseek 7 through fcntl dup");
  Check(write(fd, buf, 3) == 3, "write 3 at 7");
  Check(fsync(fd) == 0, "fsync");
  Check(fdatasync(fd) == 0, "fdatasync");
  Check(close(fd3) == 0 && close(fd2) == 0 && close(40) == 0, "close dups");
  Check(close(fd) == 0, "close a.bin");

  int dir = open(data, O_RDONLY | O_DIRECTORY);
  Check(dir >= 0, "open data dir");
  fd = openat(dir, "b.bin", O_CREAT | O_WRONLY | O_TRUNC, 0644);
  Check(fd >= 0, "openat b.bin");
  Check(write(fd, buf, 42) == 42, "write 42");
  Check(close(fd) == 0 && close(dir) == 0, "close b.bin");
  fd = creat(Join(data, "c.bin"), 0644);
  Check(fd >= 0, "creat c.bin");
  Check(pwrite64(fd, buf, 7, 70) == 7, "pwrite64 7 at 70");
  Check(close(fd) == 0, "close c.bin");
  Check(open(Join(data, "missing.bin"), O_RDONLY) == -1, "open missing");

  /* Not traced: code files and files outside the data directories. */
  fd = open(Join(data, "module.py"), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  Check(fd >= 0 && write(fd, buf, 5) == 5 && close(fd) == 0, "module.py");
  fd = open(Join(other, "outside.bin"), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  Check(fd >= 0 && write(fd, buf, 6) == 6 && close(fd) == 0, "outside.bin");
  Check(unlink(Join(data, "module.py")) == 0 && unlink(Join(other, "outside.bin")) == 0,
        "unlink untraced files");
  return 0;
}

static int g_fd;

static void* Reader(void* arg) {
  (void)arg;
  Check(pread(g_fd, buf + 4096, 10, 3000) == 10, "thread pread 10 at 3000");
  return NULL;
}

static int Fork(const char* data) {
  g_fd = open(Join(data, "in.bin"), O_RDONLY);
  Check(g_fd >= 0, "open in.bin");
  pthread_t thread;
  Check(pthread_create(&thread, NULL, Reader, NULL) == 0, "pthread_create");
  Check(pthread_join(thread, NULL) == 0, "pthread_join");
  Check(read(g_fd, buf, 100) == 100, "parent read 100");
  pid_t child = fork();
  Check(child >= 0, "fork");
  if (child == 0) {
    /* The child shares the parent's file offset (100). */
    if (read(g_fd, buf, 200) != 200 || pread(g_fd, buf, 50, 1000) != 50) _exit(3);
    _exit(0);
  }
  int status = 0;
  Check(waitpid(child, &status, 0) == child, "waitpid");
  Check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exit status");
  Check(read(g_fd, buf, 300) == 300, "parent read 300 after the child's");
  Check(close(g_fd) == 0, "close in.bin");
  printf("parent %d child %d\n", (int)getpid(), (int)child);
  return 0;
}

static int More(const char* data) {
  memset(buf, 'z', sizeof buf);
  int fd = open(Join(data, "d.bin"), O_CREAT | O_RDWR | O_TRUNC, 0644);
  Check(fd >= 0, "open d.bin");
  struct iovec two[2] = {{buf, 100}, {buf + 100, 200}};
  Check(writev(fd, two, 2) == 300, "writev 100+200");
  struct iovec one[1] = {{buf, 50}};
  Check(pwritev(fd, one, 1, 1000) == 50, "pwritev 50 at 1000");
  Check(lseek(fd, 10, SEEK_SET) == 10, "lseek 10");
  struct iovec parts[2] = {{buf, 20}, {buf + 20, 30}};
  Check(readv(fd, parts, 2) == 50, "readv 20+30");
  struct iovec big[1] = {{buf, 100}};
  Check(preadv(fd, big, 1, 1000) == 50, "preadv 100 at 1000");
  struct stat st;
  Check(fstat(fd, &st) == 0 && st.st_size == 1050, "fstat");
  void* p = mmap(NULL, 1050, PROT_READ, MAP_SHARED, fd, 0);
  Check(p != MAP_FAILED, "mmap");
  Check(munmap(p, 1050) == 0, "munmap");
  Check(close(fd) == 0, "close d.bin");
  Check(stat(Join(data, "d.bin"), &st) == 0, "stat d.bin");
  Check(lstat(Join(data, "missing.bin"), &st) == -1, "lstat missing");
  Check(unlink(Join(data, "d.bin")) == 0, "unlink d.bin");
  Check(unlink(Join(data, "missing.bin")) == -1, "unlink missing");

  FILE* f = fopen(Join(data, "e.bin"), "w+");
  Check(f != NULL, "fopen e.bin");
  Check(fwrite(buf, 10, 7, f) == 7, "fwrite 7 x 10");
  Check(fseek(f, 5, SEEK_SET) == 0, "fseek 5");
  Check(fread(buf, 1, 20, f) == 20, "fread 20 at 5");
  Check(fread(buf, 100, 1, f) == 0, "fread 100 at 25");
  Check(fclose(f) == 0, "fclose");
  Check(remove(Join(data, "e.bin")) == 0, "remove e.bin");
  Check(mkdir(Join(data, "sub"), 0755) == 0, "mkdir sub");
  int dir = open(data, O_RDONLY | O_DIRECTORY);
  Check(dir >= 0 && unlinkat(dir, "sub", AT_REMOVEDIR) == 0 && close(dir) == 0, "unlinkat sub");
  return 0;
}

static int CloseAll(const char* data) {
  int fd = open(Join(data, "in.bin"), O_RDONLY);
  Check(fd >= 0 && read(fd, buf, 10) == 10 && close(fd) == 0, "read in.bin");
  for (int i = 3; i < 256; ++i) close(i);
  fd = open(Join(data, "out.bin"), O_CREAT | O_RDWR | O_TRUNC, 0644);
  Check(fd >= 0 && write(fd, "hello", 5) == 5 && close(fd) == 0, "write out.bin");
  return 0;
}

static int ReadAt(const char* data, off_t offset, size_t n) {
  int fd = open(Join(data, "in.bin"), O_RDONLY);
  Check(fd >= 0 && pread(fd, buf, n, offset) == (ssize_t)n && close(fd) == 0, "pread in.bin");
  return 0;
}

static int Exec(const char* self, const char* data, int variadic) {
  int fd = open(Join(data, "in.bin"), O_RDONLY | O_CLOEXEC); /* left open: exec must flush */
  Check(fd >= 0 && pread(fd, buf, 11, 0) == 11, "pread before exec");
  char* args[] = {(char*)self, (char*)"after-exec", (char*)data, NULL};
  if (variadic) {
    execl(self, self, "after-exec", data, (char*)NULL);
  } else {
    execv(self, args);
  }
  return 4;
}

static int Position(const char* data) {
  Check(mkdir(Join(data, "sub"), 0755) == 0, "mkdir sub");
  int fd = open(Join(data, "sub/.././/in.bin"), O_RDONLY); /* recorded as DATA/in.bin */
  Check(fd >= 0 && read(fd, buf, 10) == 10, "read 10");
  Check(lseek(fd, 50, SEEK_SET) == 50 && read(fd, buf, 10) == 10, "lseek, read");
  struct iovec iov = {buf, 5};
  Check(preadv2(fd, &iov, 1, -1, 0) == 5, "preadv2 at the position");
  Check(preadv2(fd, &iov, 1, 7, 0) == 5, "preadv2 at 7");
  Check(read(fd, buf, 5) == 5, "read 5");
  int null_fd = open("/dev/null", O_WRONLY);
  Check(null_fd >= 0 && sendfile(null_fd, fd, NULL, 30) == 30, "sendfile 30");
  Check(read(fd, buf, 10) == 10 && close(fd) == 0 && close(null_fd) == 0, "read after sendfile");
  int app = open(Join(data, "app.bin"), O_WRONLY | O_APPEND);
  Check(app >= 0 && write(app, buf, 7) == 7 && write(app, buf, 3) == 3 && close(app) == 0,
        "appends");
  /* close_range forgets the descriptor: a pipe given its number is not in.bin. */
  int again = open(Join(data, "in.bin"), O_RDONLY);
  int p[2];
  Check(again >= 0 && close_range(again, again, 0) == 0 && pipe(p) == 0 && p[0] == again,
        "close_range, pipe");
  Check(write(p[1], "abc", 3) == 3 && read(p[0], buf, 3) == 3, "pipe I/O");
  /* DATA/../escaped.bin is outside DATA: not traced. */
  int out = open(Join(data, "../escaped.bin"), O_WRONLY | O_CREAT, 0644);
  Check(out >= 0 && write(out, buf, 4) == 4 && close(out) == 0, "escaped.bin");
  return 0;
}

static int VforkExec(const char* data) {
  int fd = open(Join(data, "in.bin"), O_RDONLY);
  Check(fd >= 0 && read(fd, buf, 10) == 10, "read 10 before vfork");
  pid_t child = vfork();
  Check(child >= 0, "vfork");
  if (child == 0) {
    char* args[] = {(char*)"/nonexistent/program", NULL};
    close(fd);
    execv(args[0], args);
    _exit(0);
  }
  int status = 0;
  Check(waitpid(child, &status, 0) == child, "waitpid vfork child");
  Check(read(fd, buf, 20) == 20 && close(fd) == 0, "read 20 after vfork");
  return 0;
}

static int Term(const char* data) {
  int fd = open(Join(data, "in.bin"), O_RDONLY);
  Check(fd >= 0 && read(fd, buf, 64) == 64, "read 64 before SIGTERM");
  kill(getpid(), SIGTERM);
  return 0; /* not reached */
}

static int Wait(const char* data, const char* ready) {
  int fd = open(Join(data, "in.bin"), O_RDONLY);
  Check(fd >= 0 && read(fd, buf, 64) == 64, "read 64 before waiting");
  int r = open(ready, O_CREAT | O_WRONLY, 0644);
  Check(r >= 0 && close(r) == 0, "create READY");
  sleep(60);
  return 0;
}

static int Scratch(const char* data, const char* work) {
  for (int pass = 0; pass < 2; ++pass) {
    int fd = open(Join(work, "tmpprobe"), O_CREAT | O_EXCL | O_RDWR, 0600);
    Check(fd >= 0 && write(fd, "blat", 4) == 4 && close(fd) == 0, "write the scratch file");
    Check(unlink(Join(work, "tmpprobe")) == 0, "unlink the scratch file");
    for (int i = 0; i < 4; ++i) {
      char name[16];
      snprintf(name, sizeof name, "f%d.bin", i);
      fd = open(Join(data, name), O_RDONLY);
      Check(fd >= 0 && read(fd, buf, 4096) == 4096 && close(fd) == 0, "read a data file");
    }
  }
  return 0;
}

/* The tracer counts the page faults inside a read of 16 KiB or more: every page of a fresh
 * mapping, none of a buffer already touched. */
static int Faults(const char* data) {
  enum { kBytes = 256 << 10 };
  const char* path = Join(data, "pages.bin");
  char* touched = malloc(kBytes);
  Check(touched != NULL, "malloc");
  memset(touched, 'p', kBytes);
  int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
  Check(fd >= 0 && pwrite(fd, touched, kBytes, 0) == kBytes, "write pages.bin");
  for (int i = 0; i < 3; ++i) {
    char* fresh = mmap(NULL, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    Check(fresh != MAP_FAILED, "mmap");
    Check(pread(fd, fresh, kBytes, 0) == kBytes, "pread into a fresh mapping");
    Check(munmap(fresh, kBytes) == 0, "munmap");
  }
  for (int i = 0; i < 3; ++i) Check(pread(fd, touched, kBytes, 0) == kBytes, "pread again");
  Check(pread(fd, touched, 4096, 0) == 4096, "pread 4 KiB");
  /* The smallest counted read, 16 KiB, into a fresh mapping (4 pages), and 12 KiB (not counted). */
  char* small = mmap(NULL, 16 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  Check(small != MAP_FAILED, "mmap 16 KiB");
  Check(pread(fd, small, 16 << 10, 0) == 16 << 10, "pread 16 KiB into a fresh mapping");
  Check(munmap(small, 16 << 10) == 0, "munmap 16 KiB");
  Check(pread(fd, touched, 12 << 10, 0) == 12 << 10, "pread 12 KiB");
  Check(close(fd) == 0, "close pages.bin");
  FILE* stream = fopen(path, "rb");
  char* fresh = mmap(NULL, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  Check(stream != NULL && fresh != MAP_FAILED, "fopen and mmap");
  Check(fread(fresh, 1, kBytes, stream) == kBytes, "fread into a fresh mapping");
  Check(fclose(stream) == 0 && munmap(fresh, kBytes) == 0, "fclose and munmap");
  free(touched);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "basic") == 0) return Basic(argv[2], argv[3]);
  if (argc == 3 && strcmp(argv[1], "fork") == 0) return Fork(argv[2]);
  if (argc == 3 && strcmp(argv[1], "term") == 0) return Term(argv[2]);
  if (argc == 4 && strcmp(argv[1], "wait") == 0) return Wait(argv[2], argv[3]);
  if (argc == 3 && strcmp(argv[1], "more") == 0) return More(argv[2]);
  if (argc == 3 && strcmp(argv[1], "vfork") == 0) return VforkExec(argv[2]);
  if (argc == 3 && strcmp(argv[1], "exec") == 0) return Exec(argv[0], argv[2], 0);
  if (argc == 3 && strcmp(argv[1], "execl") == 0) return Exec(argv[0], argv[2], 1);
  if (argc == 3 && strcmp(argv[1], "position") == 0) return Position(argv[2]);
  if (argc == 3 && strcmp(argv[1], "after-exec") == 0) return ReadAt(argv[2], 22, 33);
  if (argc == 3 && strcmp(argv[1], "closeall") == 0) return CloseAll(argv[2]);
  if (argc == 4 && strcmp(argv[1], "scratch") == 0) return Scratch(argv[2], argv[3]);
  if (argc == 3 && strcmp(argv[1], "faults") == 0) return Faults(argv[2]);
  fprintf(stderr, "usage: io_program basic DATA OTHER | fork DATA\n");
  return 1;
}
