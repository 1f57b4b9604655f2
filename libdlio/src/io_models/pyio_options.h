// The pyio I/O model's own options (reader.pyio_*; docs/io_models.md "pyio"), declared as config
// keys by io_models/pyio_keys.cc and parsed straight into this type, which the config holds in
// DatasetConfig::formats (beside the formats' own: every format's pyio reader reads it) and the
// pyio reader reads from FormatOptions::formats.
#pragma once

#include <cstdint>

#include "dlio/config_enums.h"
#include "dlio/option_sections.h"

namespace dlio {

// How the program the pyio model emulates reads each file through Python's buffered file,
// `open(path, "rb")` (io_models/pyio_reader.h).
struct PyioOptions {
  uint64_t head_bytes = 0;  // reader.pyio_head_bytes: f.read(head_bytes) first (0: none)
  uint64_t read_size = 0;   // reader.pyio_read_size: each later call's size (0: one call, the rest)
  // reader.pyio_call: read (a new bytes object per call) or readinto (into a buffer the program
  // keeps)
  PyioCall call = PyioCall::kRead;
  // reader.pyio_tail_bytes: with read_size 0, the one call for the rest stops this many bytes
  // short of the end, and a last f.read(tail_bytes) reads them through the buffer (pickle's
  // opcodes after a large array); no call then finds the end. 0: none.
  uint64_t tail_bytes = 0;
  // reader.pyio_tail_read_size: the tail is read in calls of this many bytes instead of one
  // (pickle's many small opcodes after the array: a list of labels or names); 0: one call.
  uint64_t tail_read_size = 0;
  // reader.pyio_crop_bytes: after the head, f.seek(o) to an offset drawn in [head, size - crop]
  // and one call (read or readinto) of this many bytes: a random crop of the file (the wave
  // module's setpos and readframes); the rest of the file is not read. 0: the whole file.
  uint64_t crop_bytes = 0;
  // reader.pyio_end_reads: after the calls, this many f.read(1) at the end, each a buffer fill
  // that returns nothing (scipy.io.loadmat looking for another variable, gzip for another member,
  // a text layer's retries). 0: none.
  uint64_t end_reads = 0;
};

// The first reader.pyio_* key `formats` (DatasetConfig::formats) holds at other than its default
// ("pyio_head_bytes", "pyio_read_size", "pyio_call", "pyio_tail_bytes", "pyio_tail_read_size",
// "pyio_crop_bytes", "pyio_end_reads"),
// or nullptr: the keys are read by io_model pyio only (ValidateCapabilities refuses them under
// another model).
inline const char* PyioKeySet(const OptionSections& formats) {
  const PyioOptions* set = formats.Find<PyioOptions>();
  const PyioOptions defaults;
  if (set == nullptr) return nullptr;
  return set->head_bytes != defaults.head_bytes           ? "pyio_head_bytes"
         : set->read_size != defaults.read_size           ? "pyio_read_size"
         : set->call != defaults.call                     ? "pyio_call"
         : set->tail_bytes != defaults.tail_bytes         ? "pyio_tail_bytes"
         : set->tail_read_size != defaults.tail_read_size ? "pyio_tail_read_size"
         : set->crop_bytes != defaults.crop_bytes         ? "pyio_crop_bytes"
         : set->end_reads != defaults.end_reads           ? "pyio_end_reads"
                                                          : nullptr;
}

// The first reader.pyio_* key of `pyio` that describes a whole-file load ("pyio_head_bytes",
// "pyio_read_size", "pyio_tail_bytes", "pyio_tail_read_size", "pyio_crop_bytes",
// "pyio_end_reads") at other than its default, or nullptr: what a file of records read with
// f.seek and one call (io_models/pyio_records_reader.h) cannot honour.
inline const char* PyioWholeFileKey(const PyioOptions& pyio) {
  return pyio.head_bytes != 0       ? "pyio_head_bytes"
         : pyio.read_size != 0      ? "pyio_read_size"
         : pyio.tail_bytes != 0     ? "pyio_tail_bytes"
         : pyio.tail_read_size != 0 ? "pyio_tail_read_size"
         : pyio.crop_bytes != 0     ? "pyio_crop_bytes"
         : pyio.end_reads != 0      ? "pyio_end_reads"
                                    : nullptr;
}

}  // namespace dlio
