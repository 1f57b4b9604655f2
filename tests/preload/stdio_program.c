/* stdio reads and writes whose system calls the tracer derives (preload/trace/stdio_kernel.h):
 * `stdio_program DIR` writes DIR/w-*.bin through fwrite and reads them back through fread and
 * fseek with the default buffer, a 64 KiB and a 300-byte setvbuf buffer and none (_IONBF).
 * Exits non-zero on any unexpected result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char data[1 << 20];
enum { kFileSize = 10 + 100 + 5000 + 70000 + 4096 + 1 + 200000 + 3 };

static void Fail(const char* what, const char* path) {
  fprintf(stderr, "stdio_program: %s failed on %s\n", what, path);
  exit(1);
}

/* mode: 0 default buffer, 1 64 KiB, 2 300 bytes, 3 unbuffered. */
static void SetBuffer(FILE* f, int mode, char* buf) {
  if (mode == 1) setvbuf(f, buf, _IOFBF, 65536);
  if (mode == 2) setvbuf(f, buf, _IOFBF, 300);
  if (mode == 3) setvbuf(f, NULL, _IONBF, 0);
}

static void Write(const char* path, int mode) {
  static char buf[65536];
  static const size_t sizes[] = {10, 100, 5000, 70000, 4096, 1, 200000, 3};
  FILE* f = fopen(path, "wb");
  if (f == NULL) Fail("fopen w", path);
  SetBuffer(f, mode, buf);
  size_t at = 0;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    if (fwrite(data + at, 1, sizes[i], f) != sizes[i]) Fail("fwrite", path);
    at += sizes[i];
  }
  if (fseek(f, 1000, SEEK_SET) != 0) Fail("fseek w", path); /* flushes what is buffered */
  if (fwrite(data, 10, 7, f) != 7) Fail("fwrite", path);
  if (fclose(f) != 0) Fail("fclose w", path);
}

static void Read(const char* path, int mode) {
  static char buf[65536];
  static char out[1 << 20];
  static const size_t sizes[] = {10, 100, 5000, 70000, 4096, 1, 8192, 190000};
  FILE* f = fopen(path, "rb");
  if (f == NULL) Fail("fopen r", path);
  SetBuffer(f, mode, buf);
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    if (fread(out, 1, sizes[i], f) != sizes[i]) Fail("fread", path);
  }
  if (fseek(f, 123, SEEK_SET) != 0) Fail("fseek", path); /* not in the buffer: a read */
  if (fread(out, 1, 50, f) != 50) Fail("fread", path);   /* from the buffer */
  if (fseek(f, 150, SEEK_SET) != 0) Fail("fseek", path); /* in the buffer */
  if (fread(out, 4, 3000, f) != 3000) Fail("fread", path);
  if (fseek(f, 40000, SEEK_CUR) != 0) Fail("fseek", path);
  if (fread(out, 1, 9000, f) != 9000) Fail("fread", path);
  if (fseek(f, -10, SEEK_END) != 0) Fail("fseek", path);
  if (fread(out, 1, 100000, f) != 10) Fail("fread at the end", path); /* short, then EOF */
  if (fread(out, 1, 10, f) != 0) Fail("fread past the end", path);    /* EOF is sticky */
  if (fseek(f, 8192, SEEK_SET) != 0) Fail("fseek", path); /* a block boundary: no read */
  if (fread(out, 1, 300000, f) != kFileSize - 8192) Fail("fread to the end", path);
  if (fclose(f) != 0) Fail("fclose r", path);
}

/* An update stream: writes, then a seek back (the flush, then a read from the block boundary),
 * reads, a seek to the end and more writes, and a seek past the end of the file. */
static void Update(const char* path) {
  static char out[8192];
  FILE* f = fopen(path, "w+");
  if (f == NULL) Fail("fopen w+", path);
  if (fwrite(data, 10, 7, f) != 7) Fail("fwrite", path);
  if (fseek(f, 5, SEEK_SET) != 0) Fail("fseek", path);
  if (fread(out, 1, 20, f) != 20) Fail("fread", path);
  if (fread(out, 100, 1, f) != 0) Fail("fread past the end", path);
  if (fseek(f, 0, SEEK_END) != 0) Fail("fseek end", path);
  if (fwrite(data, 1, 5000, f) != 5000) Fail("fwrite", path);
  if (fseek(f, 6000, SEEK_SET) != 0) Fail("fseek past the end", path);
  if (fread(out, 1, 10, f) != 0) Fail("fread past the end", path);
  if (fclose(f) != 0) Fail("fclose w+", path);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: stdio_program DIR\n");
    return 2;
  }
  for (size_t i = 0; i < sizeof data; ++i) data[i] = (char)(i * 7 + 3);
  char path[4096];
  for (int mode = 0; mode < 4; ++mode) {
    snprintf(path, sizeof path, "%s/w-%d.bin", argv[1], mode);
    Write(path, mode);
    Read(path, mode);
  }
  snprintf(path, sizeof path, "%s/update.bin", argv[1]);
  Update(path);
  return 0;
}
