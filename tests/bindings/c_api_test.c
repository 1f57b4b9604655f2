/* The C API from plain C11 (compiled with -std=c11 -Wpedantic -Werror, so the header is C):
 * generate a tiny npz dataset in a temp dir, read it through the loader (one rank, then two),
 * run the workload, and check the error paths. */
#define _XOPEN_SOURCE 700

#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dlio/dlio_c.h"

enum { kFiles = 4, kSamplesPerFile = 3, kRecord = 1024, kBatch = 2 };

static int failures = 0;

#define CHECK(cond)                                                                            \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond, \
              dlio_last_error());                                                              \
      ++failures;                                                                              \
    }                                                                                          \
  } while (0)

#define CHECK_OK(call)                                                                    \
  do {                                                                                    \
    int rc_ = (call);                                                                     \
    if (rc_ != DLIO_OK) {                                                                 \
      fprintf(stderr, "%s:%d: %s returned %d (%s): %s\n", __FILE__, __LINE__, #call, rc_, \
              dlio_status_name(rc_), dlio_last_error());                                  \
      ++failures;                                                                         \
    }                                                                                     \
  } while (0)

static int RemoveEntry(const char* path, const struct stat* st, int flag, struct FTW* ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

/* out = dir + suffix; a path that does not fit ends the test (it is never silently cut). */
static void JoinPath(char* out, size_t size, const char* dir, const char* suffix) {
  const int n = snprintf(out, size, "%s%s", dir, suffix);
  if (n < 0 || (size_t)n >= size) {
    fprintf(stderr, "path too long: %s%s\n", dir, suffix);
    exit(1);
  }
}

static int FileExists(const char* path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* A config for the tiny dataset under `dir`. */
static dlio_config* MakeConfig(const char* dir) {
  dlio_config* cfg = NULL;
  char value[4096];
  CHECK_OK(dlio_config_load(NULL, "default", &cfg));
  if (cfg == NULL) return NULL;
  JoinPath(value, sizeof value, dir, "/data");
  CHECK_OK(dlio_config_set(cfg, "dataset.data_folder", value));
  JoinPath(value, sizeof value, dir, "/out");
  CHECK_OK(dlio_config_set(cfg, "output.folder", value));
  JoinPath(value, sizeof value, dir, "/out/checkpoints");
  CHECK_OK(dlio_config_set(cfg, "checkpoint.checkpoint_folder", value));
  CHECK_OK(dlio_config_set(cfg, "dataset.num_files_train", "4"));
  CHECK_OK(dlio_config_set(cfg, "dataset.num_samples_per_file", "3"));
  CHECK_OK(dlio_config_set(cfg, "dataset.record_length_bytes", "1024"));
  CHECK_OK(dlio_config_set(cfg, "reader.batch_size", "2"));
  CHECK_OK(dlio_config_set(cfg, "reader.read_threads", "2"));
  CHECK_OK(dlio_config_set(cfg, "train.computation_time", "0.001"));
  /* The Hydra form, as on dlio-run's command line. */
  CHECK_OK(dlio_config_set(cfg, "++workload.train.epochs=2", NULL));
  CHECK_OK(dlio_config_set(cfg, "workflow.checkpoint", "false"));
  CHECK_OK(dlio_config_validate(cfg));
  return cfg;
}

/* Reads `epochs` epochs as rank `rank` of `world`; counts every (file, index) into seen[epoch]. */
static void ReadEpochs(const dlio_config* cfg, int rank, int world, int epochs,
                       int seen[][kFiles][kSamplesPerFile], uint64_t* bytes) {
  dlio_loader* loader = NULL;
  CHECK_OK(dlio_loader_create(cfg, rank, world, &loader));
  if (loader == NULL) return;
  uint64_t files = 0;
  CHECK_OK(dlio_loader_num_files(loader, &files));
  CHECK(files == kFiles);
  const char* path = NULL;
  CHECK_OK(dlio_loader_file_path(loader, 0, &path));
  CHECK(path != NULL && strstr(path, "/data/train/img_0_of_4.npz") != NULL);
  CHECK(dlio_loader_file_path(loader, kFiles, &path) == DLIO_OUT_OF_RANGE);

  for (int e = 0; e < epochs; ++e) {
    uint64_t num_batches = 0;
    CHECK_OK(dlio_loader_start_epoch(loader, (uint64_t)e, &num_batches));
    CHECK(num_batches == (uint64_t)(kFiles * kSamplesPerFile / world / kBatch));
    uint64_t got = 0;
    for (;;) {
      dlio_batch batch;
      int end = 0;
      int rc = dlio_loader_next(loader, &batch, &end);
      CHECK_OK(rc);
      if (rc != DLIO_OK || end) break;
      CHECK(batch.epoch == (uint64_t)e);
      CHECK(batch.index == (int64_t)got);
      CHECK(batch.num_samples == kBatch);
      CHECK(batch.bytes == kBatch * kRecord);
      for (uint64_t i = 0; i < batch.num_samples; ++i) {
        const dlio_sample* s = &batch.samples[i];
        CHECK(s->size == kRecord);
        CHECK(s->data != NULL);
        if (s->file < kFiles && s->index < kSamplesPerFile) ++seen[e][s->file][s->index];
        *bytes += s->size;
      }
      double seconds = 0;
      CHECK_OK(dlio_loader_compute(loader, (int64_t)got, &seconds));
      CHECK(seconds > 0.0005 && seconds < 0.0015);
      ++got;
    }
    CHECK(got == num_batches);
  }
  dlio_stats stats;
  CHECK_OK(dlio_loader_stats(loader, &stats));
  const uint64_t samples = (uint64_t)epochs * kFiles * kSamplesPerFile / (uint64_t)world;
  CHECK(stats.epochs == (uint64_t)epochs);
  CHECK(stats.samples == samples);
  CHECK(stats.bytes == samples * kRecord);
  CHECK(stats.batches == samples / kBatch);
  CHECK(stats.read_bytes >= samples * kRecord); /* plus the npz/npy headers */
  CHECK(stats.compute_s > 0);
  CHECK_OK(dlio_loader_stop(loader));
  dlio_batch batch;
  int end = 0;
  CHECK(dlio_loader_next(loader, &batch, &end) == DLIO_CANCELLED);
  dlio_loader_free(loader);
}

static void TestLoader(const char* dir) {
  dlio_config* cfg = MakeConfig(dir);
  if (cfg == NULL) return;
  char path[4096];
  CHECK_OK(dlio_generate(cfg, 0));
  JoinPath(path, sizeof path, dir, "/data/train/img_3_of_4.npz");
  CHECK(FileExists(path));
  JoinPath(path, sizeof path, dir, "/out/summary.json");
  CHECK(!FileExists(path));        /* generate writes no outputs */
  CHECK_OK(dlio_generate(cfg, 0)); /* again: the files are kept */

  /* next before start_epoch is refused. */
  dlio_loader* early = NULL;
  CHECK_OK(dlio_loader_create(cfg, 0, 1, &early));
  if (early != NULL) {
    dlio_batch batch;
    int end = 0;
    CHECK(dlio_loader_next(early, &batch, &end) == DLIO_FAILED_PRECONDITION);
    dlio_loader_free(early);
  }

  /* One rank, two shuffled epochs: every sample once per epoch. */
  static int seen[2][kFiles][kSamplesPerFile];
  uint64_t bytes = 0;
  ReadEpochs(cfg, 0, 1, 2, seen, &bytes);
  for (int e = 0; e < 2; ++e)
    for (int f = 0; f < kFiles; ++f)
      for (int s = 0; s < kSamplesPerFile; ++s) CHECK(seen[e][f][s] == 1);
  CHECK(bytes == 2u * kFiles * kSamplesPerFile * kRecord);

  /* Two ranks of one epoch: disjoint shards that cover the dataset. */
  static int shared[1][kFiles][kSamplesPerFile];
  bytes = 0;
  ReadEpochs(cfg, 0, 2, 1, shared, &bytes);
  ReadEpochs(cfg, 1, 2, 1, shared, &bytes);
  for (int f = 0; f < kFiles; ++f)
    for (int s = 0; s < kSamplesPerFile; ++s) CHECK(shared[0][f][s] == 1);

  /* A whole run: dlio-run's files and summary. */
  char* summary = NULL;
  JoinPath(path, sizeof path, dir, "/run");
  CHECK_OK(dlio_run(cfg, path, &summary));
  CHECK(summary != NULL && strstr(summary, "\"train_au_percentage\"") != NULL);
  dlio_free_string(summary);
  JoinPath(path, sizeof path, dir, "/run/summary.json");
  CHECK(FileExists(path));
  JoinPath(path, sizeof path, dir, "/run/dlio.log");
  CHECK(FileExists(path));

  char* json = NULL;
  CHECK_OK(dlio_config_to_json(cfg, &json));
  CHECK(json != NULL && strstr(json, "\"num_files_train\": 4") != NULL);
  dlio_free_string(json);
  dlio_config_free(cfg);
}

static void TestErrors(const char* dir) {
  dlio_config* cfg = NULL;
  CHECK(dlio_config_load("/nonexistent/dlio.yaml", NULL, &cfg) == DLIO_NOT_FOUND);
  CHECK(strstr(dlio_last_error(), "/nonexistent/dlio.yaml") != NULL);
  CHECK(cfg == NULL);
  CHECK(dlio_config_load(NULL, "no_such_workload", &cfg) == DLIO_NOT_FOUND);
  CHECK(strstr(dlio_last_error(), "no_such_workload") != NULL);
  CHECK(dlio_config_load("x.yaml", "default", &cfg) == DLIO_INVALID_ARGUMENT);

  CHECK_OK(dlio_config_load(NULL, NULL, &cfg));
  CHECK(strcmp(dlio_last_error(), "") == 0);
  char value[4096];
  JoinPath(value, sizeof value, dir, "/errors-out"); /* nothing lands in the working dir */
  CHECK_OK(dlio_config_set(cfg, "output.folder", value));
  CHECK(dlio_config_set(cfg, "dataset.num_files_trian", "8") == DLIO_INVALID_ARGUMENT);
  CHECK(strstr(dlio_last_error(), "dataset.num_files_trian") != NULL);
  CHECK(strstr(dlio_last_error(), "dataset.num_files_train") != NULL); /* did you mean */
  CHECK(dlio_config_set(cfg, "reader.batch_size", "many") == DLIO_INVALID_ARGUMENT);
  CHECK(strstr(dlio_last_error(), "reader.batch_size") != NULL);
  CHECK(dlio_config_set(NULL, "reader.batch_size", "1") == DLIO_INVALID_ARGUMENT);
  CHECK(strstr(dlio_last_error(), "config is NULL") != NULL);
  dlio_loader* loader = NULL;
  CHECK(dlio_loader_create(cfg, 2, 2, &loader) == DLIO_INVALID_ARGUMENT);
  CHECK(strstr(dlio_last_error(), "rank 2") != NULL);
  CHECK(loader == NULL);

  /* A dataset that is not there: the loader lists the folder when it is made (as the Python DLIO
     does), so making it fails, naming the folder and the key. */
  JoinPath(value, sizeof value, dir, "/missing");
  CHECK_OK(dlio_config_set(cfg, "dataset.data_folder", value));
  CHECK_OK(dlio_config_set(cfg, "reader.file_shuffle", "off"));
  CHECK_OK(dlio_config_set(cfg, "reader.sample_shuffle", "off"));
  CHECK(dlio_loader_create(cfg, 0, 1, &loader) == DLIO_NOT_FOUND);
  CHECK(loader == NULL);
  CHECK(strstr(dlio_last_error(), value) != NULL);
  CHECK(strstr(dlio_last_error(), "dataset.num_files_train is 32") != NULL);

  /* random shuffles over several ranks need an agreed seed. */
  CHECK_OK(dlio_config_set(cfg, "reader.file_shuffle", "random"));
  CHECK(dlio_loader_create(cfg, 0, 2, &loader) == DLIO_INVALID_ARGUMENT);
  CHECK(strstr(dlio_last_error(), "reader.file_shuffle") != NULL);
  const uint64_t seed = 42;
  CHECK_OK(dlio_config_set(cfg, "dataset.format", "synthetic")); /* no files to list */
  CHECK_OK(dlio_loader_create_ex(cfg, 0, 2, DLIO_SPLIT_TRAIN, &seed, &loader));
  dlio_loader_free(loader);

  /* Cross-key rules are checked by validate and before anything runs. */
  CHECK_OK(dlio_config_set(cfg, "workflow.evaluation", "true"));
  CHECK_OK(dlio_config_set(cfg, "dataset.num_files_eval", "0"));
  CHECK(dlio_config_validate(cfg) == DLIO_INVALID_ARGUMENT);
  CHECK(strstr(dlio_last_error(), "dataset.num_files_eval") != NULL);
  JoinPath(value, sizeof value, dir, "/never");
  CHECK(dlio_run(cfg, value, NULL) == DLIO_INVALID_ARGUMENT);
  CHECK(strstr(dlio_last_error(), "dataset.num_files_eval") != NULL);
  CHECK(!FileExists(value));
  CHECK(dlio_loader_create(cfg, 0, 1, &loader) == DLIO_INVALID_ARGUMENT);
  CHECK(dlio_generate(cfg, 0) == DLIO_INVALID_ARGUMENT);
  dlio_config_free(cfg);

  CHECK(strcmp(dlio_status_name(DLIO_NOT_FOUND), "NotFound") == 0);
  CHECK(strcmp(dlio_status_name(99), "Unknown") == 0);
  CHECK(strcmp(dlio_version(), "") != 0);
}

int main(void) {
  const char* tmp = getenv("TMPDIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/dlio-c-api-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  TestLoader(dir);
  TestErrors(dir);
  nftw(dir, RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
  if (failures) {
    fprintf(stderr, "c_api_test: %d failure(s)\n", failures);
    return 1;
  }
  printf("c_api_test: ok (dlio %s)\n", dlio_version());
  return 0;
}
