// The calls of torch/serialization.py (load, _is_zipfile, _load), the pybind BufferAdapter and
// caffe2/serialize/inline_container.cc (PyTorchStreamReader::init, getRecord) with its miniz
// (mz_zip_reader_read_central_dir, mz_zip_reader_locate_header_sig, mz_zip_reader_extract_to_mem).
#include "io_models/pyio/torch_stream_reader.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "dlio/clock.h"
#include "io_models/pyio/request_storage.h"

namespace dlio::pyio {
namespace {

constexpr uint64_t kTlMagic = 8;            // "PYTORCH1": the preview release's format
constexpr uint64_t kTlSearch = 4096;        // mz_zip_reader_locate_header_sig's buffer
constexpr uint64_t kTlEndRecord = 22;       // MZ_ZIP_END_OF_CENTRAL_DIR_HEADER_SIZE
constexpr uint64_t kTlZip64Locator = 20;    // MZ_ZIP64_END_OF_CENTRAL_DIR_LOCATOR_SIZE
constexpr uint64_t kTlZip64EndRecord = 56;  // MZ_ZIP64_END_OF_CENTRAL_DIR_HEADER_SIZE
constexpr uint64_t kTlLocalHeader = 30;     // MZ_ZIP_LOCAL_DIR_HEADER_SIZE
constexpr char kTlEndSig[] = "PK\x05\x06";
constexpr char kTlLocatorSig[] = "PK\x06\x07";
constexpr char kTlZip64EndSig[] = "PK\x06\x06";
constexpr char kTlLocalSig[] = "PK\x03\x04";

class TorchLoader {
 public:
  TorchLoader(BufferedReader* fp, std::vector<uint8_t>* memory, const TorchLoadCheck* check)
      : fp_(fp), memory_(memory), check_(check) {}

  // _is_zipfile, then the BufferAdapter's constructor (which learns the size).
  Status Open() {
    const uint64_t start = fp_->Tell();
    uint8_t byte = 0;
    for (int i = 0; i < 4; ++i) {
      DLIO_ASSIGN_OR_RETURN(size_t got, fp_->Read(1, &byte));
      if (got == 0) break;
    }
    DLIO_RETURN_NOT_OK(fp_->Seek(static_cast<int64_t>(start), 0).status());
    const uint64_t current = fp_->Tell();
    DLIO_RETURN_NOT_OK(fp_->Seek(0, 2).status());
    (void)fp_->Tell();
    return fp_->Seek(static_cast<int64_t>(current), 0).status();
  }

  // PyTorchStreamReader::init up to the central directory.
  Status Directory(const TorchZipLayout& z) {
    if (z.file_size > kTlMagic) DLIO_RETURN_NOT_OK(Read(0, kTlMagic, nullptr, "magic"));
    const uint64_t search = z.file_size > kTlSearch ? z.file_size - kTlSearch : 0;
    DLIO_RETURN_NOT_OK(Read(search, z.file_size - search, nullptr, "end record search"));
    DLIO_RETURN_NOT_OK(Read(z.end_record, kTlEndRecord, kTlEndSig, "end record"));
    if (z.zip64 && z.end_record >= kTlZip64Locator + kTlZip64EndRecord) {
      DLIO_RETURN_NOT_OK(
          Read(z.end_record - kTlZip64Locator, kTlZip64Locator, kTlLocatorSig, "zip64 locator"));
      DLIO_RETURN_NOT_OK(Read(z.zip64_end_record, kTlZip64EndRecord, kTlZip64EndSig, "zip64 end"));
    }
    if (z.central_directory_size == 0) return Status::OK();
    return Read(z.central_directory, z.central_directory_size, nullptr, "central directory");
  }

  // getRecord: the local header, then the stored data (into `into` when given).
  Status Record(const TorchZipRecord& r, const char* what, uint8_t* into = nullptr) {
    if (r.size == 0) return Status::OK();
    DLIO_RETURN_NOT_OK(Read(r.header_offset, kTlLocalHeader, kTlLocalSig, what));
    return Read(r.data_offset, r.size, nullptr, what, into);
  }

  const uint8_t* data() const { return memory_->data(); }

 private:
  // The BufferAdapter's read: seek(pos), readinto(n) into `into` or memory_; with a check, `sig`
  // must start the bytes.
  Status Read(uint64_t pos, uint64_t n, const char* sig, const char* what,
              uint8_t* into = nullptr) {
    if (into == nullptr && memory_->size() < n) memory_->resize(static_cast<size_t>(n));
    uint8_t* dst = into != nullptr ? into : memory_->data();
    DLIO_RETURN_NOT_OK(fp_->Seek(static_cast<int64_t>(pos), 0).status());
    DLIO_ASSIGN_OR_RETURN(size_t got, fp_->Readinto(static_cast<size_t>(n), dst));
    if (got < n) {
      return Status::Corruption(fp_->file()->path(), ": torch.load's read of the ", what,
                                " at offset ", pos, " got ", got, " of ", n,
                                " bytes (a short file)");
    }
    if (check_ != nullptr && sig != nullptr && std::memcmp(dst, sig, 4) != 0) {
      return Status::Corruption(fp_->file()->path(), ": no ", what, " signature at offset ", pos,
                                " (not the zip torch.save writes)");
    }
    return Status::OK();
  }

  BufferedReader* fp_;
  std::vector<uint8_t>* memory_;
  const TorchLoadCheck* check_;
};

}  // namespace

namespace {

// An anonymous private mapping of `n` bytes whose pages are not touched yet; unmapped on
// destruction (munmap, not free: glibc's thresholds do not move).
class FreshPages {
 public:
  explicit FreshPages(size_t n) : n_(n) {
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) p_ = static_cast<uint8_t*>(p);
  }
  ~FreshPages() {
    if (p_ != nullptr) munmap(p_, n_);
  }
  FreshPages(const FreshPages&) = delete;
  FreshPages& operator=(const FreshPages&) = delete;
  uint8_t* data() const { return p_; }

 private:
  size_t n_;
  uint8_t* p_ = nullptr;
};

}  // namespace

Status TorchLoadCalls(BufferedReader* fp, const TorchZipLayout& layout,
                      std::vector<uint8_t>* memory, const TorchLoadCheck* check,
                      uint64_t fresh_storage_bytes) {
  TorchLoader load(fp, memory, check);
  DLIO_RETURN_NOT_OK(load.Open());
  DLIO_RETURN_NOT_OK(load.Directory(layout));
  DLIO_RETURN_NOT_OK(load.Record(layout.version, "version record"));
  DLIO_RETURN_NOT_OK(load.Record(layout.pickle, "data.pkl record"));
  for (size_t key = 0; key < layout.storages.size(); ++key) {
    const TorchZipRecord& r = layout.storages[key];
    std::unique_ptr<FreshPages> fresh;
    if (fresh_storage_bytes > 0 && r.size >= fresh_storage_bytes) {
      fresh = std::make_unique<FreshPages>(static_cast<size_t>(r.size));
      if (fresh->data() == nullptr) {
        return Status::FromErrno(errno, "mmap of a torch.load storage");
      }
    }
    DLIO_RETURN_NOT_OK(load.Record(r, "storage record", fresh ? fresh->data() : nullptr));
    if (check != nullptr && check->storage && r.size > 0) {
      DLIO_RETURN_NOT_OK(check->storage(key, r, fresh ? fresh->data() : load.data()));
    }
  }
  return Status::OK();
}

Result<std::vector<std::pair<uint64_t, uint64_t>>> TorchLoadRequests(const TorchZipLayout& layout,
                                                                     size_t buffer_size) {
  auto storage = NewSizedFileStorage(layout.file_size);
  ReadRecorder recorder;
  storage->Bind(SystemClock(), &recorder);
  DLIO_ASSIGN_OR_RETURN(auto file, storage->Open("/torch_load", OpenMode::kRead));
  BufferedReader fp(file.get(), buffer_size);
  std::vector<uint8_t> memory;
  DLIO_RETURN_NOT_OK(TorchLoadCalls(&fp, layout, &memory, nullptr));
  return std::move(recorder.reads);
}

}  // namespace dlio::pyio
