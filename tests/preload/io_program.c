/* A program with known file I/O, run under libdlio_preload.so by preload_test.cc.
 *   io_program basic DATA OTHER   reads, writes, seeks and dups in DATA (traced) and OTHER
 *                                 (outside the data directories); exits normally
 *   io_program fork DATA          a reader thread, then a forked child that reads and ends with
 *                                 _exit; prints "parent PID child PID"
 *   io_program term DATA          reads, then dies of SIGTERM with a file still open
 * Every call's result is checked: any surprise exits 2, so the test knows the calls happened. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int Term(const char* data) {
  int fd = open(Join(data, "in.bin"), O_RDONLY);
  Check(fd >= 0 && read(fd, buf, 64) == 64, "read 64 before SIGTERM");
  kill(getpid(), SIGTERM);
  return 0; /* not reached */
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "basic") == 0) return Basic(argv[2], argv[3]);
  if (argc == 3 && strcmp(argv[1], "fork") == 0) return Fork(argv[2]);
  if (argc == 3 && strcmp(argv[1], "term") == 0) return Term(argv[2]);
  fprintf(stderr, "usage: io_program basic DATA OTHER | fork DATA\n");
  return 1;
}
