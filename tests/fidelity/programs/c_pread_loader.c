/* A pure-C input loop (c_pread_loader.py builds and runs it): 2 pthreads, thread t takes files t,
 * t + 2, ...; each file is opened and read front to back with pread in 256 KiB requests into the
 * thread's buffer, then closed; 3 epochs, a 3 ms step after every file. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { kFiles = 20, kThreads = 2, kEpochs = 3, kBlock = 256 << 10 };
static const char* dir;

static void* worker(void* arg) {
  const long t = (long)arg;
  char path[4096];
  char* buf = malloc(kBlock);
  for (int e = 0; e < kEpochs; ++e) {
    for (int i = (int)t; i < kFiles; i += kThreads) {
      snprintf(path, sizeof path, "%s/data/f%03d.dat", dir, i);
      const int fd = open(path, O_RDONLY);
      struct stat st;
      if (fd < 0 || fstat(fd, &st) != 0) exit(1);
      for (off_t o = 0; o < st.st_size; o += kBlock) {
        if (pread(fd, buf, kBlock, o) <= 0) exit(1);
      }
      close(fd);
      const struct timespec step = {0, 3000000};
      nanosleep(&step, NULL);
    }
  }
  free(buf);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  dir = argv[1];
  pthread_t threads[kThreads];
  for (long t = 0; t < kThreads; ++t) pthread_create(&threads[t], NULL, worker, (void*)t);
  for (int t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);
  return 0;
}
