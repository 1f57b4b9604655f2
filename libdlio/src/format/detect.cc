#include <algorithm>
#include <cctype>
#include <cstring>

#include "dlio/format.h"
#include "format/io_util.h"

namespace dlio {
namespace {

std::string Extension(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// The format the first bytes announce, or "" when they announce none we know.
std::string FromMagic(const uint8_t* p, size_t n) {
  if (n >= 6 && std::memcmp(p, "\x93NUMPY", 6) == 0) return "npy";
  if (n >= 4 && (std::memcmp(p, "PK\x03\x04", 4) == 0 || std::memcmp(p, "PK\x05\x06", 4) == 0)) {
    return "npz";
  }
  if (n >= 8 && std::memcmp(p, "\x89HDF\r\n\x1a\n", 8) == 0) return "hdf5";
  if (n >= 3 && std::memcmp(p, "\xFF\xD8\xFF", 3) == 0) return "jpeg";
  if (n >= 8 && std::memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0) return "png";
  if (n >= 4 && std::memcmp(p, "PAR1", 4) == 0) return "parquet";
  return "";
}

}  // namespace

Result<std::string> DetectFormat(Storage* storage, const std::string& path) {
  const std::string ext = Extension(path);
  DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kRead));
  DLIO_ASSIGN_OR_RETURN(uint64_t size, file->Size());
  uint8_t head[8] = {};
  const size_t n = static_cast<size_t>(std::min<uint64_t>(size, sizeof head));
  if (n > 0) DLIO_RETURN_NOT_OK(file->ReadExactAt(0, n, head));
  const std::string magic = FromMagic(head, n);

  if (ext == "npy" || ext == "npz" || ext == "h5" || ext == "hdf5" || ext == "jpg" ||
      ext == "jpeg" || ext == "png" || ext == "parquet") {
    const std::string expected = ext == "npy"                    ? "npy"
                                 : ext == "npz"                  ? "npz"
                                 : ext == "png"                  ? "png"
                                 : ext == "parquet"              ? "parquet"
                                 : ext == "jpg" || ext == "jpeg" ? "jpeg"
                                                                 : "hdf5";
    if (magic != expected) {
      return Status::Corruption(path + ": extension says " + expected +
                                " but the magic bytes at offset 0 do not match");
    }
    return expected;
  }
  if (ext == "indexed_binary") return std::string("indexed_binary");
  if (ext == "mmap_indexed_binary") return std::string("mmap_indexed_binary");
  if (ext == "tfrecord" || ext == "tfrecords") return std::string("tfrecord");
  if (ext == "csv") return std::string("csv");
  if (ext == "tar") return std::string("webdataset");
  if (!magic.empty()) return magic;
  DLIO_ASSIGN_OR_RETURN(bool has_index, storage->Exists(path + ".off.idx"));
  if (has_index) return std::string("indexed_binary");
  return Status::InvalidArgument(path + ": cannot tell the format from the extension '" + ext +
                                 "' or the first bytes; name it explicitly");
}

}  // namespace dlio
