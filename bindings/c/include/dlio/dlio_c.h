/* The C API of dlio (libdlio_c.so): configs, whole runs, and a data loader that a training loop
 * written in C, Python (ctypes), Fortran, Julia ... drives itself.
 *
 * Plain C (C99 and later, also valid C++). No C++ type or exception crosses this boundary: objects
 * are opaque handles, every fallible function returns an int status, DLIO_OK (0) on success or a
 * dlio_status_code, and leaves a message for dlio_last_error().
 *
 * Errors: the message is the library's own Status message, naming the config key, file or byte
 * offset it is about (e.g. "unknown key 'dataset.num_files_trian' (did you mean
 * 'dataset.num_files_train'?)"). It is kept per thread: dlio_last_error() describes the last call
 * that returned a status on the calling thread, and is "" after a success.
 *
 * Thread safety is stated on each function. In short: a dlio_config may be read (to_json, generate,
 * run, loader_create) from many threads at once but must not be changed (set, free) while it is
 * read; a dlio_loader is used by one thread at a time (like a framework's data-loader iterator),
 * except dlio_loader_stop, which may come from any thread; different handles are independent.
 *
 * Ownership: handles are freed with their dlio_*_free function; strings returned through a
 * char** are malloc'ed and freed with dlio_free_string. Pointers into a batch are owned by the
 * loader (see dlio_loader_next for how long they stay valid).
 *
 * See docs/bindings.md for a walk-through. */
#ifndef DLIO_DLIO_C_H_
#define DLIO_DLIO_C_H_

#include <stdint.h>

#if defined(DLIO_C_BUILDING) && defined(__GNUC__)
#define DLIO_C_API __attribute__((visibility("default")))
#else
#define DLIO_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The status codes: the same numbers as dlio::StatusCode. */
typedef enum dlio_status_code {
  DLIO_OK = 0,
  DLIO_INVALID_ARGUMENT = 1,    /* bad config value, bad call argument */
  DLIO_NOT_FOUND = 2,           /* file, key or registry name that does not exist */
  DLIO_ALREADY_EXISTS = 3,      /* refusing to overwrite something dlio did not create */
  DLIO_IO_ERROR = 4,            /* the OS said no (errno text in the message) */
  DLIO_CORRUPTION = 5,          /* a file's bytes do not parse (message names file and offset) */
  DLIO_OUT_OF_RANGE = 6,        /* index past the end */
  DLIO_UNIMPLEMENTED = 7,       /* known name whose backend was not compiled in */
  DLIO_FAILED_PRECONDITION = 8, /* call made in the wrong state */
  DLIO_CANCELLED = 9,           /* stopped while waiting (dlio_loader_stop) */
  DLIO_RESOURCE_EXHAUSTED = 10, /* disk full, out of memory */
  DLIO_INTERNAL = 11            /* a bug in dlio */
} dlio_status_code;

/* Which files a loader reads: dataset.num_files_train or dataset.num_files_eval. */
typedef enum dlio_split { DLIO_SPLIT_TRAIN = 0, DLIO_SPLIT_EVAL = 1 } dlio_split;

typedef struct dlio_config dlio_config;
typedef struct dlio_loader dlio_loader;

/* ---- Library ----------------------------------------------------------------------------- */

/* "0.1.0". Static string. Thread-safe. */
DLIO_C_API const char* dlio_version(void);

/* The message of the last call on this thread that returned a status; "" after a success. Valid
 * until the next dlio call on this thread. Never NULL. Thread-safe (per-thread storage). */
DLIO_C_API const char* dlio_last_error(void);

/* "OK", "InvalidArgument", "NotFound", ... for a status code; "Unknown" otherwise. Static string.
 * Thread-safe. */
DLIO_C_API const char* dlio_status_name(int code);

/* Frees a string returned by this API. NULL is ignored. Thread-safe. */
DLIO_C_API void dlio_free_string(char* s);

/* ---- Config ------------------------------------------------------------------------------ */

/* Loads a config as dlio-run does: the DLIO YAML/JSON file `path` when not NULL, else the
 * built-in preset `workload` ("default" when NULL). Giving both is DLIO_INVALID_ARGUMENT. Errors
 * name the file and the key (unknown keys get a did-you-mean). DLIO keys accepted but not emulated
 * add warnings (dlio_config_warnings). *out is set only on success. Thread-safe. */
DLIO_C_API int dlio_config_load(const char* path, const char* workload, dlio_config** out);

/* Parses DLIO YAML or JSON text over the built-in defaults; `source_name` (may be NULL) names the
 * text in messages. Thread-safe. */
DLIO_C_API int dlio_config_parse(const char* text, const char* source_name, dlio_config** out);

/* Overrides one key, exactly as `dlio-run --set key=value`: dlio_config_set(c,
 * "dataset.num_files_train", "8"). The value is YAML ("{mean: 0.1, stdev: 0.01}" works). With
 * value NULL, `key` is a whole assignment, also in DLIO's Hydra form:
 * dlio_config_set(c, "++workload.train.epochs=2", NULL). Unknown keys and bad values are
 * DLIO_INVALID_ARGUMENT naming the key; on error the config may hold a partially applied map value
 * (reload it). Cross-key rules are checked by dlio_config_validate (and by generate/run/loader).
 * Not thread-safe: no other call may use `config` meanwhile. */
DLIO_C_API int dlio_config_set(dlio_config* config, const char* key, const char* value);

/* Checks every value and cross-key rule; the message names the offending key. Thread-safe. */
DLIO_C_API int dlio_config_validate(const dlio_config* config);

/* The config as a JSON document with every key (what dlio-run writes as config.json). Free *out
 * with dlio_free_string. Thread-safe. */
DLIO_C_API int dlio_config_to_json(const dlio_config* config, char** out);

/* The warnings collected while loading and overriding (one per line, "" when none). Free *out with
 * dlio_free_string. Thread-safe. */
DLIO_C_API int dlio_config_warnings(const dlio_config* config, char** out);

/* NULL is ignored. Not thread-safe: nothing may use `config` meanwhile. Loaders made from the
 * config keep their own copy and stay valid. */
DLIO_C_API void dlio_config_free(dlio_config* config);

/* ---- Whole runs (what dlio-run does) ------------------------------------------------------ */

/* Generates the dataset the config describes (train and eval files, the .dlio-dataset.json marker)
 * on one rank, like `dlio-run --generate --no-train` but writing no output files and no trace.
 * Files already there with the right size are kept; a non-empty folder without the marker is
 * DLIO_ALREADY_EXISTS unless `force` (even then nothing is overwritten or deleted). Blocks until
 * done. Thread-safe (concurrent calls must use different data folders). */
DLIO_C_API int dlio_generate(const dlio_config* config, int force);

/* Runs the workload on one rank exactly as dlio-run does (generate when workflow.generate_data,
 * train, evaluate, checkpoint) and writes the same files into the output folder: summary.json,
 * 0_per_epoch_stats.json, 0_output.json, config.json, the log file (output.log_file) and, when
 * output.trace, trace-0-of-1.pfw. `output_dir` (may be NULL) overrides output.folder. On success
 * *summary_json (when summary_json is not NULL) receives summary.json's text; free it with
 * dlio_free_string. Blocks until done. Thread-safe (concurrent calls must use different folders).
 */
DLIO_C_API int dlio_run(const dlio_config* config, const char* output_dir, char** summary_json);

/* ---- Loader: the runner's data pipeline, driven by the caller's training loop -------------- */

/* One sample of a batch. `data` points at `size` bytes owned by the loader. */
typedef struct dlio_sample {
  const uint8_t* data;
  uint64_t size;
  uint64_t index; /* sample within its file */
  uint32_t file;  /* index into the split's file list (dlio_loader_file_path) */
} dlio_sample;

/* A batch as dlio_loader_next hands it out: `samples` holds `num_samples` entries in the sampler's
 * order. Everything it points to stays valid until the next dlio_loader_next, dlio_loader_release,
 * dlio_loader_start_epoch, dlio_loader_stop or dlio_loader_free on the same loader (like a
 * dlio::BatchLease: the batch's buffers then return to the pipeline's pool and are reused). Copy
 * what must outlive that. */
typedef struct dlio_batch {
  uint64_t epoch; /* as given to dlio_loader_start_epoch */
  int64_t index;  /* batch number within the epoch, from 0 */
  uint64_t num_samples;
  uint64_t bytes; /* sum of the sample sizes */
  const dlio_sample* samples;
} dlio_batch;

typedef struct dlio_stats {
  uint64_t epochs;     /* dlio_loader_start_epoch calls that succeeded */
  uint64_t batches;    /* batches delivered by dlio_loader_next */
  uint64_t samples;    /* samples in those batches */
  uint64_t bytes;      /* sample bytes in those batches */
  double wait_s;       /* time the caller spent blocked in dlio_loader_next */
  double compute_s;    /* emulated compute time drawn by dlio_loader_compute */
  uint64_t read_ops;   /* storage reads made by the format readers (headers included) */
  uint64_t read_bytes; /* bytes those reads returned */
  uint64_t opens;      /* files opened */
} dlio_stats;

/* Builds, for rank `rank` of `world`, the train split's DataSource, Sampler, Pipeline and
 * ComputeEmulator exactly as dlio-run's runner does (storage.*, dataset.*, reader.*,
 * train.computation_time, train.seed; storage.storage_root applied; output.trace writes
 * output.folder/trace-<rank>-of-<world>.pfw when the loader is freed). The config is validated and
 * copied. The pipeline's threads start here. With a "random" file or sample shuffle and world > 1
 * use dlio_loader_create_ex (every rank must use the same random seed). The split's folder is
 * listed here, as the Python DLIO finds its files (the first dataset.num_files_* by name): too few
 * files is DLIO_NOT_FOUND naming the folder and the key. Files are not opened until the first
 * read: one that cannot be read surfaces from dlio_loader_next, naming it.
 * Thread-safe (with respect to `config`). */
DLIO_C_API int dlio_loader_create(const dlio_config* config, int rank, int world,
                                  dlio_loader** out);

/* As dlio_loader_create, for `split` (DLIO_SPLIT_EVAL: dataset.num_files_eval,
 * reader.batch_size_eval, evaluation.eval_time), with *random_seed as the entropy of "random"
 * shuffle modes (ignored otherwise; pass the same value on every rank). A NULL random_seed draws
 * one as dlio_loader_create does (DLIO_INVALID_ARGUMENT with a random mode and world > 1). */
DLIO_C_API int dlio_loader_create_ex(const dlio_config* config, int rank, int world, int split,
                                     const uint64_t* random_seed, dlio_loader** out);

/* Files in the loader's split, and the path of file i (owned by the loader, valid until
 * dlio_loader_free). Not thread-safe with respect to other calls on the loader. */
DLIO_C_API int dlio_loader_num_files(const dlio_loader* loader, uint64_t* out);
DLIO_C_API int dlio_loader_file_path(const dlio_loader* loader, uint64_t file, const char** out);

/* Plans epoch `epoch` (0-based; with train.seed_change_epoch each epoch has its own order) for this
 * rank and starts reading ahead. An epoch still running is cancelled first. *num_batches (may be
 * NULL) receives the batches dlio_loader_next will deliver: this rank's samples / batch size
 * (rounded up unless reader.drop_last), capped by train.total_training_steps for the train split.
 * Ranks may differ by one batch when the samples do not divide evenly: a loop with a per-step
 * collective should run the minimum over ranks. Not thread-safe with respect to the loader. */
DLIO_C_API int dlio_loader_start_epoch(dlio_loader* loader, uint64_t epoch, uint64_t* num_batches);

/* Fills *out with the next batch of the epoch, blocking until it is read (the time blocked counts
 * as wait_s). First gives back the previous batch (its pointers become invalid). At the end of the
 * epoch returns DLIO_OK with *end_of_epoch = 1 and an empty batch. A read error (naming the file
 * and sample) is returned for the batch it belongs to, in order, and again by later calls until
 * the next dlio_loader_start_epoch. DLIO_FAILED_PRECONDITION before the first start_epoch,
 * DLIO_CANCELLED after dlio_loader_stop. The steady state allocates nothing.
 * Not thread-safe with respect to the loader. */
DLIO_C_API int dlio_loader_next(dlio_loader* loader, dlio_batch* out, int* end_of_epoch);

/* Gives the current batch back to the pipeline early (its pointers become invalid), so the
 * prefetch can use its buffers while the caller computes. No-op without a batch.
 * Not thread-safe with respect to the loader. */
DLIO_C_API int dlio_loader_release(dlio_loader* loader);

/* Takes one training step's emulated compute time, drawn from train.computation_time (or
 * evaluation.eval_time for an eval loader) with the runner's seed, sleeping or spinning as
 * train.compute_emulator says. *seconds (may be NULL) receives the time drawn.
 * Not thread-safe with respect to the loader. */
DLIO_C_API int dlio_loader_compute(dlio_loader* loader, int64_t step, double* seconds);

/* Counters since the loader was created. Not thread-safe with respect to the loader. */
DLIO_C_API int dlio_loader_stats(const dlio_loader* loader, dlio_stats* out);

/* Cancels reading, joins the pipeline's threads and writes out the trace (output.trace); a
 * dlio_loader_next blocked in another thread returns DLIO_CANCELLED, and so do later calls.
 * Returns a trace write error. Idempotent. Thread-safe: may be called from any thread while
 * another uses the loader (the caller must still not free it concurrently). */
DLIO_C_API int dlio_loader_stop(dlio_loader* loader);

/* Stops the loader as dlio_loader_stop does (whose status it cannot return: call that first to see
 * a trace write error) and frees it. The current batch's pointers become invalid. NULL is ignored.
 * Not thread-safe: nothing may use the loader meanwhile. */
DLIO_C_API void dlio_loader_free(dlio_loader* loader);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLIO_DLIO_C_H_ */
