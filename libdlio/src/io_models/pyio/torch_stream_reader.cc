// The calls of torch/serialization.py (load, _is_zipfile, _load), the pybind BufferAdapter and
// caffe2/serialize/inline_container.cc (PyTorchStreamReader::init, getRecord) with its miniz
// (mz_zip_reader_read_central_dir, mz_zip_reader_locate_header_sig, mz_zip_reader_extract_to_mem).
#include "io_models/pyio/torch_stream_reader.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "dlio/clock.h"
#include "dlio/str_cat.h"
#include "format/io_util.h"
#include "format/torch/torch_records.h"
#include "format/zip.h"
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
  // `learn`: offsets come from the bytes read (and every signature is checked), not a layout.
  TorchLoader(BufferedReader* fp, std::vector<uint8_t>* memory, const TorchLoadCheck* check,
              bool learn = false)
      : fp_(fp), memory_(memory), check_(check), learn_(learn) {}

  // _is_zipfile, torch.load's tell of the original position, then the BufferAdapter's
  // constructor (which learns the size: tell, seek(current, SEEK_END), tell, seek(current)).
  Status Open() {
    DLIO_ASSIGN_OR_RETURN(const uint64_t start, fp_->Tell());
    uint8_t byte = 0;
    for (int i = 0; i < 4; ++i) {
      DLIO_ASSIGN_OR_RETURN(size_t got, fp_->Read(1, &byte));
      if (got == 0) break;
    }
    DLIO_RETURN_NOT_OK(fp_->Seek(static_cast<int64_t>(start), 0).status());
    DLIO_RETURN_NOT_OK(fp_->Tell().status());  // orig_position = opened_file.tell()
    DLIO_ASSIGN_OR_RETURN(const uint64_t current, fp_->Tell());
    DLIO_RETURN_NOT_OK(fp_->Seek(static_cast<int64_t>(current), 2).status());
    DLIO_RETURN_NOT_OK(fp_->Tell().status());
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

  // PyTorchStreamReader::init up to the central directory, each offset learnt from the bytes
  // read before it (a TorchLoader made with `learn`).
  Result<TorchZipLayout> LearnDirectory(uint64_t size) {
    TorchZipLayout z;
    z.file_size = size;
    if (size > kTlMagic) DLIO_RETURN_NOT_OK(Read(0, kTlMagic, nullptr, "magic"));
    const uint64_t search = size > kTlSearch ? size - kTlSearch : 0;
    DLIO_RETURN_NOT_OK(Read(search, size - search, nullptr, "end record search"));
    DLIO_ASSIGN_OR_RETURN(z.end_record, FindEndRecord(search, size - search));
    DLIO_RETURN_NOT_OK(Read(z.end_record, kTlEndRecord, kTlEndSig, "end record"));
    uint64_t entries = format_internal::Le16(data() + 10);
    z.central_directory_size = format_internal::Le32(data() + 12);
    z.central_directory = format_internal::Le32(data() + 16);
    z.zip64 = false;
    uint64_t limit = z.end_record;  // the directory ends before it
    if (z.end_record >= kTlZip64Locator + kTlZip64EndRecord) {
      DLIO_RETURN_NOT_OK(
          Read(z.end_record - kTlZip64Locator, kTlZip64Locator, nullptr, "zip64 locator"));
      if (std::memcmp(data(), kTlLocatorSig, 4) == 0) {
        z.zip64 = true;
        z.zip64_end_record = format_internal::Le64(data() + 8);
        if (z.zip64_end_record > z.end_record - kTlZip64Locator - kTlZip64EndRecord) {
          return Bad(z.end_record - kTlZip64Locator,
                     StrCat("the zip64 locator points at offset ", z.zip64_end_record,
                            ", past the records before it"));
        }
        DLIO_RETURN_NOT_OK(
            Read(z.zip64_end_record, kTlZip64EndRecord, kTlZip64EndSig, "zip64 end record"));
        entries = format_internal::Le64(data() + 32);
        z.central_directory_size = format_internal::Le64(data() + 40);
        z.central_directory = format_internal::Le64(data() + 48);
        limit = z.zip64_end_record;
      }
    }
    if (z.central_directory > limit || z.central_directory_size > limit - z.central_directory ||
        entries > z.central_directory_size / 46) {
      return Bad(z.end_record,
                 StrCat("a central directory of ", entries, " entries in ",
                        z.central_directory_size, " bytes at offset ", z.central_directory,
                        " (its end records begin at ", limit, ")"));
    }
    if (z.central_directory_size > 0) {
      DLIO_RETURN_NOT_OK(
          Read(z.central_directory, z.central_directory_size, nullptr, "central directory"));
    }
    DLIO_RETURN_NOT_OK(Records(entries, &z));
    return z;
  }

  // getRecord: the local header, then the stored data (into `into` when given). Learning, the
  // data's offset comes from the header's name and extra field lengths.
  Status Record(TorchZipRecord* r, const char* what, uint64_t data_end, uint8_t* into = nullptr) {
    if (r->size == 0) return Status::OK();
    DLIO_RETURN_NOT_OK(Read(r->header_offset, kTlLocalHeader, kTlLocalSig, what));
    if (learn_) {
      r->data_offset = r->header_offset + kTlLocalHeader + format_internal::Le16(data() + 26) +
                       format_internal::Le16(data() + 28);
      if (r->data_offset > data_end || r->size > data_end - r->data_offset) {
        return Bad(r->header_offset,
                   StrCat("the ", what, "'s ", r->size, " bytes at offset ", r->data_offset,
                          " run past the central directory at offset ", data_end));
      }
    }
    return Read(r->data_offset, r->size, nullptr, what, into);
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
    if ((check_ != nullptr || learn_) && sig != nullptr && std::memcmp(dst, sig, 4) != 0) {
      return Status::Corruption(fp_->file()->path(), ": no ", what, " signature at offset ", pos,
                                " (not the zip torch.save writes)");
    }
    return Status::OK();
  }

  Status Bad(uint64_t offset, const std::string& why) const {
    return Status::Corruption(fp_->file()->path(), ": offset ", offset, ": ", why,
                              " (not the zip torch.save writes)");
  }

  // The last end-record signature of the `n` bytes read at `at` (in memory_), as miniz's
  // mz_zip_reader_locate_header_sig finds it.
  Result<uint64_t> FindEndRecord(uint64_t at, uint64_t n) const {
    for (uint64_t i = n >= kTlEndRecord ? n - kTlEndRecord + 1 : 0; i-- > 0;) {
      if (std::memcmp(data() + i, kTlEndSig, 4) == 0) return at + i;
    }
    return Bad(at, StrCat("no end of central directory record in the last ", n, " bytes"));
  }

  // The records of the central directory read last (in memory_): "version", "data.pkl" and the
  // storages "data/<key>" in key order (format/torch/torch_records.h).
  Status Records(uint64_t entries, TorchZipLayout* z) const {
    format_internal::ZipDirectory dir;
    dir.cd_offset = z->central_directory;
    const std::vector<uint8_t> cd(data(), data() + z->central_directory_size);
    DLIO_RETURN_NOT_OK(format_internal::ParseZipCentralDirectory(fp_->file(), cd, entries, &dir));
    DLIO_ASSIGN_OR_RETURN(const format_internal::TorchRecords found,
                          format_internal::FindTorchRecords(fp_->file()->path(), dir));
    auto record = [&](const format_internal::ZipMember* m) -> Result<TorchZipRecord> {
      if (m == nullptr) return TorchZipRecord{};
      if (m->local_offset > z->central_directory) {
        return Bad(m->local_offset, StrCat("record '", m->name, "' begins past the directory"));
      }
      return TorchZipRecord{m->local_offset, 0, m->compressed_size};
    };
    DLIO_ASSIGN_OR_RETURN(z->version, record(found.version));
    DLIO_ASSIGN_OR_RETURN(z->pickle, record(found.pickle));
    for (const format_internal::ZipMember* m : found.storages) {
      DLIO_ASSIGN_OR_RETURN(TorchZipRecord r, record(m));
      z->storages.push_back(r);
    }
    return Status::OK();
  }

  BufferedReader* fp_;
  std::vector<uint8_t>* memory_;
  const TorchLoadCheck* check_;
  bool learn_;
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

namespace {

// getRecord("version"), getRecord("data.pkl"), then the storages in the unpickler's order.
Status LoadTorchRecords(TorchLoader* load, TorchZipLayout* layout, const TorchLoadCheck* check,
                        uint64_t fresh_storage_bytes) {
  const uint64_t end = layout->central_directory;
  DLIO_RETURN_NOT_OK(load->Record(&layout->version, "version record", end));
  DLIO_RETURN_NOT_OK(load->Record(&layout->pickle, "data.pkl record", end));
  for (size_t key = 0; key < layout->storages.size(); ++key) {
    TorchZipRecord* r = &layout->storages[key];
    uint8_t* into = check != nullptr && check->destination ? check->destination(key, *r) : nullptr;
    std::unique_ptr<FreshPages> fresh;
    if (into == nullptr && fresh_storage_bytes > 0 && r->size >= fresh_storage_bytes) {
      fresh = std::make_unique<FreshPages>(static_cast<size_t>(r->size));
      if (fresh->data() == nullptr) {
        return Status::FromErrno(errno, "mmap of a torch.load storage");
      }
      into = fresh->data();
    }
    DLIO_RETURN_NOT_OK(load->Record(r, "storage record", end, into));
    if (check != nullptr && check->storage && r->size > 0) {
      DLIO_RETURN_NOT_OK(check->storage(key, *r, into != nullptr ? into : load->data()));
    }
  }
  return Status::OK();
}

}  // namespace

Status TorchLoadCalls(BufferedReader* fp, const TorchZipLayout& layout,
                      std::vector<uint8_t>* memory, const TorchLoadCheck* check,
                      uint64_t fresh_storage_bytes) {
  TorchLoader load(fp, memory, check);
  DLIO_RETURN_NOT_OK(load.Open());
  DLIO_RETURN_NOT_OK(load.Directory(layout));
  TorchZipLayout records = layout;
  return LoadTorchRecords(&load, &records, check, fresh_storage_bytes);
}

Result<TorchZipLayout> TorchLoadDirectory(BufferedReader* fp, uint64_t file_size,
                                          std::vector<uint8_t>* memory) {
  TorchLoader load(fp, memory, nullptr, true);
  DLIO_RETURN_NOT_OK(load.Open());
  return load.LearnDirectory(file_size);
}

Status TorchLoadRecords(BufferedReader* fp, TorchZipLayout* layout, std::vector<uint8_t>* memory,
                        const TorchLoadCheck& check, uint64_t fresh_storage_bytes) {
  TorchLoader load(fp, memory, &check, true);
  return LoadTorchRecords(&load, layout, &check, fresh_storage_bytes);
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
