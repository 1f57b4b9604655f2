// The zip PyTorchStreamWriter writes (caffe2/serialize/inline_container.cc: writeRecord,
// getPadding, writeEndOfFile; its miniz: mz_zip_writer_add_mem_ex_v2 with a data descriptor,
// mz_zip_writer_finalize_archive with MZ_ZIP_FLAG_WRITE_ZIP64) and the std::ofstream those
// writes pass through (libstdc++ basic_filebuf::xsputn and overflow, BUFSIZ buffer).
#include "format/torch/torch_save_file.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "dlio/str_cat.h"
#include "format/torch/zip_records.h"

namespace dlio::torch_save {
namespace {

constexpr uint64_t kAlignment = 64;           // kFieldAlignment
constexpr size_t kFilebufSize = 8192;         // BUFSIZ: basic_filebuf's buffer
constexpr size_t kFilebufChunk = 1024;        // xsputn's __chunk
constexpr uint64_t kZip32Limit = 0xFFFFFFFF;  // past it miniz adds zip64 fields (not modelled)
constexpr char kVersionRecord[] = "3\n";      // kProducedFileFormatVersion 3

void Le16(std::string* s, uint64_t v) {
  for (int i = 0; i < 2; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void Le32(std::string* s, uint64_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void Le64(std::string* s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// libstdc++'s basic_filebuf<char> in output mode over `file`: writes leave as whole requests.
// Without a file (a dry run) it only records the requests in `requests`.
class Filebuf {
 public:
  Filebuf(File* file, std::vector<TorchWrite>* requests) : file_(file), requests_(requests) {
    if (file_ != nullptr) buffer_.reserve(kFilebufSize);
  }

  // ostream::write of `n` bytes, which the caller placed at data[kFilebufSize, +n): the room
  // before them takes the buffered bytes when both leave as one writev. A dry run reads no data.
  Status Write(std::vector<char>* data, size_t n) {
    const size_t avail = kFilebufSize - 1 - buffered_;
    if (n >= std::min(kFilebufChunk, avail)) {  // writev(buffer, data)
      const size_t total = buffered_ + n;
      if (file_ != nullptr) {
        char* start = data->data() + kFilebufSize - buffered_;
        std::memcpy(start, buffer_.data(), buffered_);
        DLIO_RETURN_NOT_OK(file_->WriteAt(pos_, start, total));
      }
      Sent(total);
      return Status::OK();
    }
    if (file_ != nullptr) {
      buffer_.insert(buffer_.end(), data->data() + kFilebufSize, data->data() + kFilebufSize + n);
    }
    buffered_ += n;
    return Status::OK();
  }

  Status Write(const std::string& s) {
    scratch_.resize(kFilebufSize + s.size());
    std::memcpy(scratch_.data() + kFilebufSize, s.data(), s.size());
    return Write(&scratch_, s.size());
  }

  // The close: what is still buffered, in one write.
  Status Flush() {
    if (buffered_ == 0) return Status::OK();
    if (file_ != nullptr) DLIO_RETURN_NOT_OK(file_->WriteAt(pos_, buffer_.data(), buffered_));
    Sent(buffered_);
    return Status::OK();
  }

 private:
  void Sent(size_t total) {
    if (requests_ != nullptr) requests_->push_back({pos_, total});
    pos_ += total;
    buffered_ = 0;
    buffer_.clear();
  }

  File* file_;
  std::vector<TorchWrite>* requests_;
  uint64_t pos_ = 0;
  size_t buffered_ = 0;
  std::vector<char> buffer_;
  std::vector<char> scratch_;
};

struct Record {
  std::string name;  // archive/<name>
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t crc = 0;
};

// The "FB" extra field that aligns a record's data (getPadding).
std::string PaddingExtra(uint64_t cursor, size_t name_size) {
  const uint64_t start = cursor + kLocalHeader + name_size + 4;
  const uint64_t pad = (kAlignment - start % kAlignment) % kAlignment;
  std::string extra = "FB";
  Le16(&extra, pad);
  extra.append(static_cast<size_t>(pad), 'Z');
  return extra;
}

std::string LocalHeader(size_t name_size, size_t extra_size) {
  std::string h = "PK\x03\x04";
  Le16(&h, 0);       // version needed
  Le16(&h, 0x0808);  // data descriptor, UTF-8 name
  Le16(&h, 0);       // stored
  Le32(&h, 0);       // DOS time and date
  Le32(&h, 0);       // crc, sizes: in the data descriptor
  Le32(&h, 0);
  Le32(&h, 0);
  Le16(&h, name_size);
  Le16(&h, extra_size);
  return h;
}

std::string Descriptor(const Record& r) {
  std::string d = "PK\x07\x08";
  Le32(&d, r.crc);
  Le32(&d, r.size);
  Le32(&d, r.size);
  return d;
}

std::string CentralDirectory(const std::vector<Record>& records) {
  std::string cd;
  for (const Record& r : records) {
    cd += "PK\x01\x02";
    Le16(&cd, 0);       // made by
    Le16(&cd, 0);       // needed
    Le16(&cd, 0x0808);  // flags
    Le16(&cd, 0);       // stored
    Le32(&cd, 0);       // time, date
    Le32(&cd, r.crc);
    Le32(&cd, r.size);
    Le32(&cd, r.size);
    Le16(&cd, r.name.size());
    Le16(&cd, 0);  // extra
    Le16(&cd, 0);  // comment
    Le16(&cd, 0);  // disk
    Le16(&cd, 0);  // internal attributes
    Le32(&cd, 0);  // external attributes
    Le32(&cd, r.offset);
    cd += r.name;
  }
  return cd;
}

// The zip64 end record, its locator and the end record (finalize with WRITE_ZIP64).
std::vector<std::string> EndRecords(uint64_t entries, uint64_t cd_offset, uint64_t cd_size) {
  std::string z64 = "PK\x06\x06";
  Le64(&z64, 44);
  Le16(&z64, 0x031e);
  Le16(&z64, 0x002d);
  Le32(&z64, 0);
  Le32(&z64, 0);
  Le64(&z64, entries);
  Le64(&z64, entries);
  Le64(&z64, cd_size);
  Le64(&z64, cd_offset);
  std::string locator = "PK\x06\x07";
  Le32(&locator, 0);
  Le64(&locator, cd_offset + cd_size);
  Le32(&locator, 1);
  std::string end = "PK\x05\x06";
  Le16(&end, 0);
  Le16(&end, 0);
  Le16(&end, entries);
  Le16(&end, entries);
  Le32(&end, cd_size);
  Le32(&end, cd_offset);
  Le16(&end, 0);
  return {z64, locator, end};
}

// Walks the records of the file: `record(name, size)` for each, in order.
template <typename F>
void ForEachRecord(const TorchStateDict& sd, const std::string& pickle, F&& record) {
  record("data.pkl", pickle.size(), -1);
  for (size_t i : StorageOrder(sd.tensors.size())) {
    record("data/" + std::to_string(i), sd.tensors[i].bytes(), static_cast<int64_t>(i));
  }
  record("version", sizeof(kVersionRecord) - 1, -1);
}

}  // namespace

std::vector<size_t> StorageOrder(size_t n) {
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [](size_t a, size_t b) { return std::to_string(a) < std::to_string(b); });
  return order;
}

std::string TorchArchiveName(const std::string& file_name) {
  std::string base = file_name.substr(file_name.find_last_of('/') + 1);
  const size_t dot = base.find_last_of('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

uint64_t TorchSaveFileSize(const std::string& archive_name, const TorchStateDict& sd) {
  return TorchSaveLayout(archive_name, sd).file_size;
}

pyio::TorchZipLayout TorchSaveLayout(const std::string& archive_name, const TorchStateDict& sd) {
  const std::string pickle = TorchPickle(sd);
  pyio::TorchZipLayout z;
  z.storages.resize(sd.tensors.size());
  uint64_t cursor = 0, cd = 0;
  ForEachRecord(sd, pickle, [&](const std::string& name, uint64_t size, int64_t tensor) {
    const size_t name_size = archive_name.size() + 1 + name.size();
    pyio::TorchZipRecord r;
    r.header_offset = cursor;
    r.data_offset = cursor + kLocalHeader + name_size + PaddingExtra(cursor, name_size).size();
    r.size = size;
    cursor = r.data_offset + size + 16;  // the data descriptor after the data
    cd += kCentralHeader + name_size;
    if (tensor >= 0) {
      z.storages[static_cast<size_t>(tensor)] = r;
    } else {
      (name == "data.pkl" ? z.pickle : z.version) = r;
    }
  });
  z.central_directory = cursor;
  z.central_directory_size = cd;
  z.zip64_end_record = cursor + cd;
  z.end_record = z.zip64_end_record + 56 + 20;  // after the zip64 end record and its locator
  z.file_size = z.end_record + kEndRecord;
  return z;
}

namespace {

// WriteTorchSave without a file (`file` null) records the requests only.
Status EmitTorchSave(File* file, const std::string& archive_name, const TorchStateDict& sd,
                     const TorchDataFill& fill, std::vector<char>* tensor_memory,
                     std::vector<TorchWrite>* requests) {
  const uint64_t total = TorchSaveFileSize(archive_name, sd);
  if (total >= kZip32Limit) {
    return Status::InvalidArgument(
        "checkpoint type 'torch_save': a file of ", total,
        " bytes needs zip64 records, which dlio does not model (use files under 4 GiB)");
  }
  const std::string pickle = TorchPickle(sd);
  Filebuf out(file, requests);
  std::vector<Record> records;
  std::vector<char> local;
  std::vector<char>& data = tensor_memory != nullptr ? *tensor_memory : local;
  if (file != nullptr) {  // one allocation for the largest record, never a smaller one first
    uint64_t largest = 0;
    ForEachRecord(sd, pickle, [&](const std::string&, uint64_t size, int64_t) {
      largest = std::max(largest, size);
    });
    data.reserve(kFilebufSize + static_cast<size_t>(largest));
  }
  uint64_t cursor = 0;
  Status st;
  ForEachRecord(sd, pickle, [&](const std::string& name, uint64_t size, int64_t tensor) {
    if (!st.ok()) return;
    Record r{archive_name + "/" + name, cursor, size, 0};
    const std::string extra = PaddingExtra(cursor, r.name.size());
    const uint64_t data_at = cursor + kLocalHeader + r.name.size() + extra.size();
    if (file != nullptr) {
      data.resize(kFilebufSize + static_cast<size_t>(size));
      char* bytes = data.data() + kFilebufSize;
      if (tensor >= 0) {
        fill(data_at, static_cast<size_t>(size), bytes);
      } else {
        std::memcpy(bytes, name == "data.pkl" ? pickle.data() : kVersionRecord, size);
      }
      r.crc = static_cast<uint32_t>(
          crc32_z(0, reinterpret_cast<const Bytef*>(bytes), static_cast<z_size_t>(size)));
    }
    for (const std::string& piece : {LocalHeader(r.name.size(), extra.size()), r.name, extra}) {
      if (st.ok()) st = out.Write(piece);
    }
    if (st.ok()) st = out.Write(&data, static_cast<size_t>(size));
    if (st.ok()) st = out.Write(Descriptor(r));
    cursor = data_at + size + 16;
    records.push_back(std::move(r));
  });
  DLIO_RETURN_NOT_OK(st);
  const std::string cd = CentralDirectory(records);
  DLIO_RETURN_NOT_OK(out.Write(cd));
  for (const std::string& end : EndRecords(records.size(), cursor, cd.size())) {
    DLIO_RETURN_NOT_OK(out.Write(end));
  }
  return out.Flush();
}

}  // namespace

Status WriteTorchSave(File* file, const std::string& archive_name, const TorchStateDict& sd,
                      const TorchDataFill& fill, std::vector<char>* tensor_memory) {
  return EmitTorchSave(file, archive_name, sd, fill, tensor_memory, nullptr);
}

Status LoadTorchSave(File* file, const std::string& archive_name, const TorchStateDict& sd,
                     size_t buffer_size, const TorchDataCheck& check, std::vector<uint8_t>* memory,
                     uint64_t fresh_storage_bytes) {
  pyio::TorchLoadCheck load_check;
  load_check.storage = [&](size_t, const pyio::TorchZipRecord& r, const uint8_t* data) {
    return check(r.data_offset, data, static_cast<size_t>(r.size));
  };
  pyio::BufferedReader fp(file, buffer_size);
  return pyio::TorchLoadCalls(&fp, TorchSaveLayout(archive_name, sd), memory, &load_check,
                              fresh_storage_bytes);
}

Result<std::vector<TorchWrite>> TorchSaveRequests(const std::string& archive_name,
                                                  const TorchStateDict& sd) {
  std::vector<TorchWrite> requests;
  DLIO_RETURN_NOT_OK(EmitTorchSave(nullptr, archive_name, sd, nullptr, nullptr, &requests));
  return requests;
}

}  // namespace dlio::torch_save
