// numpy 1.24's np.load(path) of an .npy, and np.load(path)[key] of an .npz, emulated over a dlio
// File so the requests are the ones the real stack issues on Python 3.11 and glibc:
// numpy/lib/npyio.py (load: read(6) of the magic and a seek back; NpzFile.__getitem__: open the
// member, read its magic, close, open again), numpy/lib/format.py (read_array: magic, header
// length and header through _read_bytes, then for a non-file object the data in pieces of
// BUFFER_SIZE = 2**18 bytes, for a real file numpy.fromfile through a C stdio stream), over
// zipfile.h, buffered_reader.h and c_stdio.h. The data read is real (the caller gets the array),
// and so is the CPU zipfile spends (inflate, CRC-32).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/unset_bytes.h"
#include "dlio/status.h"
#include "dlio/storage.h"
#include "format/npy_header.h"

namespace dlio::pyio {

class BufferedReader;  // buffered_reader.h

// format.BUFFER_SIZE: read_array's piece size for file-like objects (zip members).
inline constexpr uint64_t kNumpyBufferSize = uint64_t{1} << 18;

// The buffers of the streams np.load reads through (see PythonBufferSize, GlibcBufferSize).
struct NumpyBuffers {
  size_t python = 4096;  // io.BufferedReader's buffer (the file's st_blksize)
  size_t stdio = 4096;   // glibc's FILE buffer under numpy.fromfile
  // A member's CRC-32 is always computed (zipfile's CPU time); false only stops a mismatch from
  // failing the load (reader.verify_checksums: false).
  bool check_crc = true;
  // npz (reader.npz_members): the members the load reads, in order, as `z = np.load(path)` then
  // z[name] for each (the archive's directory read once); the array returned is the key's
  // member's, which must be among them; the others are read and dropped. Empty: the key's only.
  std::vector<std::string> npz_members;
};

// An array's bytes as numpy holds them: allocated, not cleared, so that their pages fault in
// where they are first written, within the read that fills them, as numpy.fromfile's do.
using ArrayBytes = UnsetBytes;

// An array as np.load returned it.
struct LoadedArray {
  format_internal::NpyHeader header;
  ArrayBytes data;          // header.data_bytes bytes, C or Fortran order as stored
  std::string member;       // npz: the member loaded, as ZipFile.namelist() names it
  uint64_t file_bytes = 0;  // the file's size
};

// np.load(file) when the file is an .npy, np.load(file)[key] when it is an .npz (`key` is a member
// name as ZipFile.namelist() gives it, e.g. "x.npy", or that name without ".npy"; empty: the
// member PickSampleMember chooses from the archive's directory, as read by zipfile, so choosing
// costs no request). Reads through `file` from offset 0, as a freshly opened Python file.
// Corruption naming the file (and member) for what np.load would refuse; Unimplemented for object
// arrays and pickles.
Result<LoadedArray> NumpyLoad(File* file, const std::string& key, const NumpyBuffers& buffers);

// format.read_array's magic, header length and header (read_magic, _read_array_header), read
// through `fid` from where it stands with read(n) calls: the parsed header. Corruption naming
// the file for a wrong magic, version, or a header cut short or too long.
Result<format_internal::NpyHeader> ReadNpyArrayHeader(BufferedReader* fid);

// Where NumpyLoadInto puts an array's bytes. Without a window, the whole array in `array`
// (resized to it). With one, bytes [window_offset, window_offset + window_size) of the array go
// straight to `window` (a sample's place in the caller's buffer): a read that falls inside the
// window is made into it, any other read into `array` (then sized for one read: a zip member's
// piece, an .npy's whole data) and the window's part of it copied over. The reads are the same
// calls whatever the target.
struct ArrayTarget {
  AlignedBuffer* array = nullptr;  // required
  uint8_t* window = nullptr;
  uint64_t window_offset = 0, window_size = 0;  // within the array's data bytes
};

// Chooses the target once the array's header has been read, before any of its data (an error
// ends the load there).
using ArrayTargetFor = std::function<Status(const format_internal::NpyHeader&, ArrayTarget*)>;

// NumpyLoad's requests, call for call, without its client costs (reader.client_costs none): the
// array's bytes are read straight into the memory `target` chooses (memory a buffer already has
// is reused, so a reused buffer takes no page fault), through no bytes object, and no CRC-32 is
// computed but a deflated member's with buffers.check_crc, as the native reader checks it (a
// damaged stored member is not noticed). The result's `data` stays empty.
Result<LoadedArray> NumpyLoadInto(File* file, const std::string& key, const NumpyBuffers& buffers,
                                  const ArrayTargetFor& target);
// The whole array into `array`.
Result<LoadedArray> NumpyLoadInto(File* file, const std::string& key, const NumpyBuffers& buffers,
                                  AlignedBuffer* array);

// The member of an npz whose array holds dlio's samples: "x.npy", else the first ".npy" member,
// else the first member. `names` in directory order, not empty.
size_t PickSampleMember(const std::vector<std::string>& names);

// The size of each read read_array makes of a zip member's data: BUFFER_SIZE // min(BUFFER_SIZE,
// itemsize) items at a time.
uint64_t NumpyPieceBytes(uint64_t itemsize);

}  // namespace dlio::pyio
