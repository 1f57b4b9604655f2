// The pyio I/O model's config keys (reader.pyio_*; docs/io_models.md "pyio"): declared here,
// beside the model's reader, and parsed straight into its PyioOptions in the config's
// DatasetConfig::formats. The config module compiles this file into its key table
// (config/sources.cmake), as it parses a config before any registry exists; the model's entry in
// the I/O-model table names the keys' prefix (io_models/io_model_table.cc).
#include "config/key_builders.h"
#include "io_models/pyio_options.h"

#define PYIO_FIELD(T, member) DLIO_FORMAT_FIELD(PyioOptions, T, member)

namespace dlio::config_internal {

void AddPyioKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };
  add(Uint("reader.pyio_head_bytes", PYIO_FIELD(uint64_t, head_bytes), {0, uint64_t{1} << 30},
           "io_model pyio: bytes the program reads first with f.read(n) (a header parse; up to "
           "st_blksize costs one 4 KiB fill); 0 = no head",
           kSizeUnits));
  add(Uint("reader.pyio_read_size", PYIO_FIELD(uint64_t, read_size), {0, uint64_t{1} << 30},
           "io_model pyio: bytes per later call, repeated until one returns nothing; 0 = one call "
           "for the rest of the file (f.read(), or f.readinto of a buffer holding the rest)",
           kSizeUnits));
  add(Enum("reader.pyio_call", DLIO_FORMAT_ENUM_FIELD(PyioOptions, PyioCall, call),
           "io_model pyio: the call after the head: read (a new bytes object per call), "
           "readinto (into a buffer the program keeps) or read1 (at most one read(2) a call: "
           "a text file's 8192-byte chunks for `for line in open(path)`; needs pyio_read_size > "
           "0); their requests differ; a raw file of records reads each with f.seek and one read "
           "or readinto call"));
  add(Uint("reader.pyio_tail_bytes", PYIO_FIELD(uint64_t, tail_bytes), {0, uint64_t{1} << 30},
           "io_model pyio: with pyio_read_size 0, the call for the rest stops this many bytes "
           "short of the end and a last f.read(n) reads them (a pickle's opcodes after its "
           "array); 0 = none",
           kSizeUnits));
  add(Uint("reader.pyio_tail_read_size", PYIO_FIELD(uint64_t, tail_read_size),
           {0, uint64_t{1} << 30},
           "io_model pyio: with pyio_tail_bytes, the tail is read in calls of this many bytes "
           "(a pickle's many small opcodes after its array, a list of labels or names: a buffer "
           "fill each time the buffer runs out); 0 = one call",
           kSizeUnits));
  add(Uint("reader.pyio_crop_bytes", PYIO_FIELD(uint64_t, crop_bytes), {0, uint64_t{1} << 30},
           "io_model pyio: after the head, f.seek to a random offset and one call of this many "
           "bytes (a random crop: the wave module's setpos and readframes); the rest of the file "
           "is not read, nor the format's bytes checked; 0 = the whole file",
           kSizeUnits));
  add(Uint("reader.pyio_end_reads", PYIO_FIELD(uint64_t, end_reads), {0, 64},
           "io_model pyio: after the calls, this many f.read(1) at the file's end, each a 4 KiB "
           "buffer fill that returns nothing (a reader looking for another variable or member: "
           "scipy.io.loadmat, gzip.open); not with pyio_crop_bytes; 0 = none"));
}

}  // namespace dlio::config_internal

#undef PYIO_FIELD
