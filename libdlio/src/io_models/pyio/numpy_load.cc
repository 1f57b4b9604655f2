#include "io_models/pyio/numpy_load.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

#include "io_models/pyio/buffered_reader.h"
#include "io_models/pyio/c_stdio.h"
#include "io_models/pyio/zipfile.h"

namespace dlio::pyio {
namespace {

using format_internal::NpyHeader;
using format_internal::ParseNpyHeader;

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kMagicPrefix = 6, kMagicLen = 8;
// Deflate expands at most 1032:1 (zlib's documented maximum).
constexpr uint64_t kMaxDeflateRatio = 1032;

// A Python file-like object's read(n), appending to `out`.
using PyRead = std::function<Status(size_t n, std::vector<uint8_t>* out)>;

// format._read_bytes: read(size - len(data)) until `size` bytes or an empty read.
Status ReadBytes(const PyRead& read, size_t size, const std::string& what, const std::string& where,
                 std::vector<uint8_t>* out) {
  const size_t base = out->size();
  for (;;) {
    const size_t before = out->size();
    DLIO_RETURN_NOT_OK(read(size - (before - base), out));
    if (out->size() == before || out->size() - base == size) break;
  }
  if (out->size() - base != size) {
    return Status::Corruption(where, ": EOF reading ", what, ", expected ", size, " bytes got ",
                              out->size() - base);
  }
  return Status::OK();
}

// format.read_array's magic, header length and header: the parsed header.
Result<NpyHeader> ReadArrayHeader(const PyRead& read, const std::string& where) {
  std::vector<uint8_t> head;
  DLIO_RETURN_NOT_OK(ReadBytes(read, kMagicLen, "magic string", where, &head));
  if (std::memcmp(head.data(), kNpyMagic, kMagicPrefix) != 0) {
    return Status::Corruption(where, ": the magic string is not correct (expected \\x93NUMPY)");
  }
  const int major = head[6];
  if (major < 1 || major > 3 || head[7] != 0) {
    return Status::Corruption(where, ": unsupported npy version ", major, ".", head[7]);
  }
  const size_t len_bytes = major == 1 ? 2 : 4;
  DLIO_RETURN_NOT_OK(ReadBytes(read, len_bytes, "array header length", where, &head));
  const uint64_t hlen = len_bytes == 2 ? (head[8] | (head[9] << 8))
                                       : (uint64_t{head[8]} | (uint64_t{head[9]} << 8) |
                                          (uint64_t{head[10]} << 16) | (uint64_t{head[11]} << 24));
  if (hlen > format_internal::kMaxNpyHeaderBytes) {
    return Status::Corruption(where, ": npy header claims ", hlen, " bytes; dlio accepts at most ",
                              format_internal::kMaxNpyHeaderBytes);
  }
  DLIO_RETURN_NOT_OK(ReadBytes(read, static_cast<size_t>(hlen), "array header", where, &head));
  return ParseNpyHeader(head.data(), head.size(), where, 0);
}

// format._read_bytes over a zip member as bytes objects: read(size - len(data)) until `size`
// bytes or an empty read, `data += r` after each.
Result<PythonBytes> ReadBytesObject(ZipExtFile* member, size_t size, const std::string& where) {
  PythonBytes data;
  for (;;) {
    DLIO_ASSIGN_OR_RETURN(PythonBytes r, member->ReadObject(size - data.size()));
    const size_t got = r.size();
    data = PythonBytes::Concat(std::move(data), std::move(r));
    if (got == 0 || data.size() == size) break;
  }
  if (data.size() != size) {
    return Status::Corruption(where, ": EOF reading array data, expected ", size, " bytes got ",
                              data.size());
  }
  return data;
}

// read_array for a zip member: the data in pieces of NumpyPieceBytes, each a bytes object
// copied into the array. As in Python, a piece's object lives until the next piece has been
// read (`data = _read_bytes(...)` rebinds only then), so the next read lands in new memory:
// that, and the array allocated before the first piece, decides which reads fault pages in.
Status ReadArrayPieces(ZipExtFile* member, const NpyHeader& h, const std::string& where,
                       ArrayBytes* array) {
  array->reserve(static_cast<size_t>(h.data_bytes));  // numpy.ndarray(count): not touched yet
  if (h.itemsize == 0) return Status::OK();
  const uint64_t piece = NumpyPieceBytes(h.itemsize);
  PythonBytes data;
  for (uint64_t pos = 0; pos < h.data_bytes; pos += piece) {
    const size_t n = static_cast<size_t>(std::min(piece, h.data_bytes - pos));
    DLIO_ASSIGN_OR_RETURN(PythonBytes next, ReadBytesObject(member, n, where));
    data = std::move(next);
    array->insert(array->end(), data.data(), data.data() + data.size());
  }
  return Status::OK();
}

// Where each read of an array's data lands (an ArrayTarget, see numpy_load.h).
class Landing {
 public:
  // `max_read`: the most bytes one read asks for.
  static Result<Landing> Make(const ArrayTarget& t, uint64_t data_bytes, uint64_t max_read,
                              const std::string& where) {
    Landing l(t);
    if (t.window == nullptr) {
      DLIO_RETURN_NOT_OK(t.array->Resize(static_cast<size_t>(data_bytes)));
      return l;
    }
    if (t.window_offset > data_bytes || t.window_size > data_bytes - t.window_offset) {
      return Status::Internal(where, ": a sample's bytes [", t.window_offset, ", ",
                              t.window_offset + t.window_size, ") outside the array's ",
                              data_bytes);
    }
    if (t.window_offset > 0 || t.window_size < data_bytes) {
      DLIO_RETURN_NOT_OK(t.array->Resize(static_cast<size_t>(std::min(max_read, data_bytes))));
    }
    return l;
  }

  // The memory a read of the array's bytes [pos, pos + n) goes to.
  uint8_t* For(uint64_t pos, size_t n) const {
    if (t_.window == nullptr) return t_.array->data() + pos;
    return Inside(pos, n) ? t_.window + (pos - t_.window_offset) : t_.array->data();
  }

  // After that read returned `got` bytes: the window's part of a read made outside it, copied.
  void Landed(uint64_t pos, size_t n, size_t got) const {
    if (t_.window == nullptr || Inside(pos, n)) return;
    const uint64_t lo = std::max(pos, t_.window_offset);
    const uint64_t hi = std::min(pos + got, t_.window_offset + t_.window_size);
    if (lo < hi) {
      std::memcpy(t_.window + (lo - t_.window_offset), t_.array->data() + (lo - pos), hi - lo);
    }
  }

 private:
  explicit Landing(const ArrayTarget& t) : t_(t) {}
  bool Inside(uint64_t pos, size_t n) const {
    return pos >= t_.window_offset && pos + n <= t_.window_offset + t_.window_size;
  }
  ArrayTarget t_;
};

// ReadArrayPieces' requests, each piece read straight into its place (no bytes object, no copy
// when it lies in the target's window or the target is the whole array): the loop of
// format._read_bytes, read(size - len(data)) until the piece is whole or a read returns nothing.
Status ReadArrayPiecesInto(ZipExtFile* member, const NpyHeader& h, const std::string& where,
                           const ArrayTarget& target) {
  const uint64_t piece = NumpyPieceBytes(h.itemsize);
  DLIO_ASSIGN_OR_RETURN(Landing landing, Landing::Make(target, h.data_bytes, piece, where));
  if (h.itemsize == 0) return Status::OK();
  for (uint64_t pos = 0; pos < h.data_bytes; pos += piece) {
    const size_t n = static_cast<size_t>(std::min(piece, h.data_bytes - pos));
    size_t have = 0;
    while (have < n) {
      const uint64_t at = pos + have;
      DLIO_ASSIGN_OR_RETURN(size_t got, member->ReadInto(n - have, landing.For(at, n - have)));
      landing.Landed(at, n - have, got);
      if (got == 0) break;
      have += got;
    }
    if (have != n) {
      return Status::Corruption(where, ": EOF reading array data, expected ", n, " bytes got ",
                                have);
    }
  }
  return Status::OK();
}

// The target `choose` picks for header `h`.
Result<ArrayTarget> TargetFor(const ArrayTargetFor& choose, const NpyHeader& h) {
  ArrayTarget t;
  DLIO_RETURN_NOT_OK(choose(h, &t));
  if (t.array == nullptr) return Status::Internal("np.load: no buffer for the array's bytes");
  return t;
}

// The member NpzFile[key] names (`key` with or without ".npy"), PickSampleMember's for an empty
// key; nullptr when there is none.
const ZipInfo* FindMember(const ZipFile& zip, const std::string& key) {
  if (!key.empty()) {
    const ZipInfo* info = zip.GetInfo(key);
    return info != nullptr ? info : zip.GetInfo(key + ".npy");
  }
  std::vector<std::string> names;
  for (const ZipInfo& m : zip.infolist()) names.push_back(m.filename);
  return names.empty() ? nullptr : &zip.infolist()[PickSampleMember(names)];
}

// NpzFile[name] of the member `info` of the open archive: the member opened for its magic and
// closed, opened again for read_array; the bytes where `into` chooses when it is given
// (NumpyLoadInto).
Result<LoadedArray> LoadMember(BufferedReader* fid, ZipFile* zip, const ZipInfo& info,
                               bool check_crc, const ArrayTargetFor* into) {
  const std::string where = fid->file()->path() + " member '" + info.filename + "'";
  // Without the client costs (`into`) only a deflated member's CRC-32 is computed, and only to
  // be checked, as the native reader checks it (reader.verify_checksums).
  const bool compute_crc = into == nullptr || (check_crc && info.compress_type != 0);
  {
    DLIO_ASSIGN_OR_RETURN(auto member, zip->Open(info, check_crc, compute_crc));
    std::vector<uint8_t> magic;
    DLIO_RETURN_NOT_OK(member->Read(kMagicPrefix, &magic));
    if (magic.size() != kMagicPrefix || std::memcmp(magic.data(), kNpyMagic, kMagicPrefix) != 0) {
      return Status::Unimplemented(where, ": not an npy array (np.load returns its bytes)");
    }
  }
  DLIO_ASSIGN_OR_RETURN(auto member, zip->Open(info, check_crc, compute_crc));
  const PyRead read = [&](size_t n, std::vector<uint8_t>* out) { return member->Read(n, out); };
  LoadedArray a;
  a.member = info.filename;
  DLIO_ASSIGN_OR_RETURN(a.header, ReadArrayHeader(read, where));
  // Bounds before anything is allocated from the header (np.load would fail reading).
  if (a.header.data_bytes > info.file_size ||
      (info.compress_type != 0 && info.file_size / kMaxDeflateRatio > info.compress_size + 1)) {
    return Status::Corruption(where, ": npy header claims ", a.header.data_bytes,
                              " data bytes; the member holds ", info.file_size,
                              " uncompressed bytes from ", info.compress_size, " compressed ones");
  }
  if (into != nullptr) {
    DLIO_ASSIGN_OR_RETURN(ArrayTarget target, TargetFor(*into, a.header));
    DLIO_RETURN_NOT_OK(ReadArrayPiecesInto(member.get(), a.header, where, target));
  } else {
    DLIO_RETURN_NOT_OK(ReadArrayPieces(member.get(), a.header, where, &a.data));
  }
  return a;
}

// The members buffers.npz_members names, in order, each one found in `zip` (NotFound naming the
// file and the name otherwise), `sample` among them (InvalidArgument otherwise).
Result<std::vector<const ZipInfo*>> MembersRead(const ZipFile& zip, const ZipInfo* sample,
                                                const NumpyBuffers& buffers,
                                                const std::string& path) {
  std::vector<const ZipInfo*> members;
  for (const std::string& name : buffers.npz_members) {
    const ZipInfo* info = name.empty() ? nullptr : FindMember(zip, name);
    if (info == nullptr) {
      return Status::NotFound(path, ": reader.npz_members names '", name,
                              "', which is not a member of the archive");
    }
    members.push_back(info);
  }
  if (std::find(members.begin(), members.end(), sample) == members.end()) {
    return Status::InvalidArgument(path, ": reader.npz_members does not name the member holding ",
                                   "the samples, '", sample->filename, "'");
  }
  return members;
}

// z[name] for each member buffers.npz_members names (MembersRead): the array of `sample`'s first
// read (its bytes where `into` chooses when it is given), the others read and dropped.
Result<LoadedArray> LoadListedMembers(BufferedReader* fid, ZipFile* zip, const ZipInfo* sample,
                                      const NumpyBuffers& buffers, const ArrayTargetFor* into) {
  DLIO_ASSIGN_OR_RETURN(const std::vector<const ZipInfo*> members,
                        MembersRead(*zip, sample, buffers, fid->file()->path()));
  std::optional<LoadedArray> kept;
  AlignedBuffer dropped;  // the others' bytes, without the client costs
  const ArrayTargetFor into_dropped = [&dropped](const NpyHeader&, ArrayTarget* t) {
    t->array = &dropped;
    return Status::OK();
  };
  for (const ZipInfo* info : members) {
    const bool keep = info == sample && !kept.has_value();
    const ArrayTargetFor* target = into == nullptr ? nullptr : keep ? into : &into_dropped;
    DLIO_ASSIGN_OR_RETURN(LoadedArray a, LoadMember(fid, zip, *info, buffers.check_crc, target));
    if (keep) kept = std::move(a);
  }
  return std::move(*kept);
}

// z = NpzFile(fid), then z[key] (the key's member only, the default), or each member
// buffers.npz_members names (LoadListedMembers).
Result<LoadedArray> LoadNpzMember(BufferedReader* fid, const std::string& key,
                                  const NumpyBuffers& buffers, const ArrayTargetFor* into) {
  DLIO_ASSIGN_OR_RETURN(ZipFile zip, ZipFile::Read(fid));
  const std::string& path = fid->file()->path();
  if (key.empty() && zip.infolist().empty()) {
    return Status::Corruption(path, ": npz archive has no members");
  }
  const ZipInfo* sample = FindMember(zip, key);
  if (sample == nullptr) {
    return Status::NotFound(path, " member '", key, "': is not a file in the archive");
  }
  DLIO_ASSIGN_OR_RETURN(LoadedArray a, buffers.npz_members.empty()
                                           ? LoadMember(fid, &zip, *sample, buffers.check_crc, into)
                                           : LoadListedMembers(fid, &zip, sample, buffers, into));
  DLIO_ASSIGN_OR_RETURN(a.file_bytes, fid->FileSize());  // cached by zipfile's seek to the end
  return a;
}

// read_array(fid) of an .npy: the header through Python's buffer, the data by numpy.fromfile on a
// dup of the descriptor (fseek to Python's position, fseek(0, SEEK_CUR), fread).
Result<LoadedArray> LoadNpy(BufferedReader* fid, size_t stdio_buffer, const ArrayTargetFor* into) {
  const std::string& where = fid->file()->path();
  LoadedArray a;
  DLIO_ASSIGN_OR_RETURN(a.header, ReadNpyArrayHeader(fid));
  DLIO_ASSIGN_OR_RETURN(uint64_t size, fid->FileSize());  // FileIO's fstat at open (Load)
  const uint64_t header_end = fid->Position();
  if (a.header.data_bytes > size - std::min(size, header_end)) {
    return Status::Corruption(where, ": EOF reading array data, expected ", a.header.data_bytes,
                              " bytes, the file holds ", size - std::min(size, header_end),
                              " after its header");
  }
  const auto n = static_cast<size_t>(a.header.data_bytes);
  std::optional<Landing> landing;
  if (into != nullptr) {
    DLIO_ASSIGN_OR_RETURN(ArrayTarget target, TargetFor(*into, a.header));
    DLIO_ASSIGN_OR_RETURN(landing, Landing::Make(target, n, n, where));
  } else {
    a.data.resize(n);  // numpy.fromfile's array: allocated, not touched before the fread
  }
  a.file_bytes = size;
  if (n == 0) return a;
  // npy_PyFile_Dup2: the new FILE's ftell (the raw offset), the file's tell(), fseek there;
  // array_fromfile: fseek(0, SEEK_CUR), fread.
  CStdioReader stream(fid->file(), stdio_buffer);
  const uint64_t raw_at = fid->RawPosition();
  DLIO_RETURN_NOT_OK(stream.Tell().status());
  DLIO_ASSIGN_OR_RETURN(const uint64_t pos, fid->Tell());
  DLIO_RETURN_NOT_OK(stream.Seek(static_cast<int64_t>(pos), /*from_current=*/false));
  DLIO_RETURN_NOT_OK(stream.Seek(0, /*from_current=*/true));
  DLIO_ASSIGN_OR_RETURN(size_t got, stream.Read(n, landing ? landing->For(0, n) : a.data.data()));
  if (landing) landing->Landed(0, n, got);
  if (got != n) {
    return Status::Corruption(where, ": EOF reading array data, expected ", n, " bytes got ", got);
  }
  // npy_PyFile_DupClose2: the FILE's ftell, the raw descriptor back to where Python left it,
  // then file.seek(position) (served from Python's buffer when the data ends inside it).
  DLIO_ASSIGN_OR_RETURN(const uint64_t position, stream.Tell());
  DLIO_RETURN_NOT_OK(fid->file()->Seek(static_cast<int64_t>(raw_at), SEEK_SET).status());
  DLIO_RETURN_NOT_OK(fid->Seek(static_cast<int64_t>(position), 0).status());
  return a;
}

}  // namespace

size_t PickSampleMember(const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "x.npy") return i;
  }
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& n = names[i];
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".npy") == 0) return i;
  }
  return 0;
}

uint64_t NumpyPieceBytes(uint64_t itemsize) {
  if (itemsize == 0) return kNumpyBufferSize;
  return kNumpyBufferSize / std::min(kNumpyBufferSize, itemsize) * itemsize;
}

namespace {

Result<LoadedArray> Load(File* file, const std::string& key, const NumpyBuffers& buffers,
                         const ArrayTargetFor* into) {
  // open(path, "rb"): FileIO's fstat (on posix the one the open made), then the buffer's lseek. A
  // read() of the rest (zipfile's end record) makes an fstat of its own, as FileIO.readall does.
  DLIO_ASSIGN_OR_RETURN(const uint64_t size, file->Size());
  BufferedReader fid(file, buffers.python);
  fid.SetKnownSize(size);
  uint8_t magic[kMagicPrefix];
  DLIO_ASSIGN_OR_RETURN(size_t got, fid.Read(sizeof(magic), magic));
  DLIO_RETURN_NOT_OK(fid.Seek(-static_cast<int64_t>(got), 1).status());
  if (got >= 4 &&
      (std::memcmp(magic, "PK\x03\x04", 4) == 0 || std::memcmp(magic, "PK\x05\x06", 4) == 0)) {
    return LoadNpzMember(&fid, key, buffers, into);
  }
  if (got == kMagicPrefix && std::memcmp(magic, kNpyMagic, kMagicPrefix) == 0) {
    return LoadNpy(&fid, buffers.stdio, into);
  }
  return Status::Unimplemented(file->path(),
                               ": neither npy nor npz (np.load would try a pickle, which needs "
                               "allow_pickle)");
}

}  // namespace

Result<NpyHeader> ReadNpyArrayHeader(BufferedReader* fid) {
  const PyRead read = [fid](size_t n, std::vector<uint8_t>* out) -> Status {
    const size_t base = out->size();
    out->resize(base + n);
    DLIO_ASSIGN_OR_RETURN(size_t got, fid->Read(n, out->data() + base));
    out->resize(base + got);
    return Status::OK();
  };
  return ReadArrayHeader(read, fid->file()->path());
}

Result<LoadedArray> NumpyLoad(File* file, const std::string& key, const NumpyBuffers& buffers) {
  return Load(file, key, buffers, nullptr);
}

Result<LoadedArray> NumpyLoadInto(File* file, const std::string& key, const NumpyBuffers& buffers,
                                  const ArrayTargetFor& target) {
  return Load(file, key, buffers, &target);
}

Result<LoadedArray> NumpyLoadInto(File* file, const std::string& key, const NumpyBuffers& buffers,
                                  AlignedBuffer* array) {
  const ArrayTargetFor whole = [array](const NpyHeader&, ArrayTarget* t) {
    t->array = array;
    return Status::OK();
  };
  return Load(file, key, buffers, &whole);
}

}  // namespace dlio::pyio
