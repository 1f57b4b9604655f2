#include "storage/s3/s3_file.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "dlio/str_cat.h"

namespace dlio::s3 {
namespace {

class S3ReadFile final : public File {
 public:
  S3ReadFile(std::string path, std::shared_ptr<S3Client> client, ObjectName name, uint64_t size)
      : File(std::move(path), 1), client_(std::move(client)), name_(std::move(name)), size_(size) {}
  ~S3ReadFile() override { (void)Close(); }

 protected:
  Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
    if (offset >= size_ || n == 0) return size_t{0};
    const size_t want = static_cast<size_t>(std::min<uint64_t>(n, size_ - offset));
    return client_->GetRange(name_.bucket, name_.key, offset, want, buf, size_);
  }
  Status DoWriteAt(uint64_t, const void*, size_t) override {
    return Status::IOError("write s3://" + name_.bucket + "/" + name_.key + ": opened for reading");
  }
  Result<uint64_t> DoSize() override { return size_; }
  Status DoSync() override { return Status::OK(); }
  Status DoClose() override { return Status::OK(); }

 private:
  std::shared_ptr<S3Client> client_;
  ObjectName name_;
  const uint64_t size_;
};

// Bytes [0, part_size) stay in head_ until Close (formats patch headers at the start); the bytes
// after them are in tail_ from tail_start_ on. Once the tail holds two parts, its first part is
// uploaded (part 2, 3, ...), keeping one part of slack for writes that go back a little; a write
// into an uploaded part is an error naming the object and the offset.
class S3WriteFile final : public File {
 public:
  S3WriteFile(std::string path, std::shared_ptr<S3Client> client, ObjectName name,
              uint64_t part_size, std::string initial)
      : File(std::move(path), 1),
        client_(std::move(client)),
        name_(std::move(name)),
        part_size_(part_size),
        tail_start_(part_size) {
    size_ = initial.size();
    dirty_ = true;  // an opened write file makes the object even when nothing is written
    if (!initial.empty()) (void)Store(0, initial.data(), initial.size());
  }
  ~S3WriteFile() override { (void)Close(); }

 protected:
  Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (offset >= size_ || n == 0) return size_t{0};
    const size_t want = static_cast<size_t>(std::min<uint64_t>(n, size_ - offset));
    auto* out = static_cast<char*>(buf);
    for (size_t done = 0; done < want;) {
      const uint64_t at = offset + done;
      if (at < part_size_) {
        const size_t take = static_cast<size_t>(std::min<uint64_t>(want - done, part_size_ - at));
        CopyFrom(head_, at, take, out + done);
        done += take;
      } else if (at >= tail_start_) {
        CopyFrom(tail_, at - tail_start_, want - done, out + done);
        done = want;
      } else {
        return Status::Unimplemented(
            StrCat("read ", Where(), " at offset ", at, ": that part is already uploaded"));
      }
    }
    return want;
  }

  Status DoWriteAt(uint64_t offset, const void* buf, size_t n) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!upload_error_.ok()) return upload_error_;
    DLIO_RETURN_NOT_OK(Store(offset, static_cast<const char*>(buf), n));
    size_ = std::max<uint64_t>(size_, offset + n);
    dirty_ = true;
    while (tail_.size() >= 2 * part_size_) {
      Status st = UploadPart(std::string_view(tail_).substr(0, part_size_));
      if (!st.ok()) {
        upload_error_ = st;
        return st;
      }
      tail_.erase(0, part_size_);
      tail_start_ += part_size_;
    }
    return Status::OK();
  }

  Result<uint64_t> DoSize() override {
    std::lock_guard<std::mutex> lock(mu_);
    return size_;
  }

  // Makes the object hold what was written: a PUT; during a multipart upload (parts already out)
  // nothing until Close completes it.
  Status DoSync() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!upload_error_.ok()) return upload_error_;
    if (!upload_id_.empty() || size_ > part_size_) return Status::OK();
    return PutWhole();
  }

  Status DoClose() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!upload_error_.ok()) {
      Abort();
      return upload_error_;
    }
    if (upload_id_.empty() && size_ <= part_size_) return dirty_ ? PutWhole() : Status::OK();
    Status st = FinishMultipart();
    if (!st.ok()) Abort();
    return st;
  }

 private:
  std::string Where() const { return "s3://" + name_.bucket + "/" + name_.key; }

  static void CopyFrom(const std::string& from, uint64_t at, size_t n, char* out) {
    const size_t have =
        at < from.size() ? static_cast<size_t>(std::min<uint64_t>(n, from.size() - at)) : 0;
    if (have > 0) std::memcpy(out, from.data() + at, have);
    if (have < n) std::memset(out + have, 0, n - have);  // a hole reads as zeros
  }

  static void Place(std::string* to, uint64_t at, const char* data, size_t n) {
    if (to->size() < at + n) to->resize(static_cast<size_t>(at + n), '\0');
    std::memcpy(to->data() + at, data, n);
  }

  Status Store(uint64_t offset, const char* data, size_t n) {
    if (n == 0) return Status::OK();
    if (offset < part_size_) {
      const size_t take = static_cast<size_t>(std::min<uint64_t>(n, part_size_ - offset));
      Place(&head_, offset, data, take);
      offset += take;
      data += take;
      n -= take;
      if (n == 0) return Status::OK();
    }
    if (offset < tail_start_) {
      return Status::Unimplemented(StrCat("write ", Where(), " at offset ", offset,
                                          ": that part is already uploaded (s3 uploads parts of ",
                                          part_size_, " bytes as the file grows)"));
    }
    if (head_.size() < part_size_) head_.resize(static_cast<size_t>(part_size_), '\0');
    Place(&tail_, offset - tail_start_, data, n);
    return Status::OK();
  }

  Status PutWhole() {
    std::string body = head_;
    body.resize(static_cast<size_t>(size_), '\0');
    DLIO_RETURN_NOT_OK(client_->Put(name_.bucket, name_.key, body));
    dirty_ = false;
    return Status::OK();
  }

  // Uploads the next middle part (numbered from 2: part 1 is the head, sent at Close).
  Status UploadPart(std::string_view bytes) {
    if (upload_id_.empty()) {
      DLIO_ASSIGN_OR_RETURN(upload_id_, client_->CreateMultipart(name_.bucket, name_.key));
      etags_.assign(1, "");
    }
    DLIO_ASSIGN_OR_RETURN(std::string etag,
                          client_->UploadPart(name_.bucket, name_.key, upload_id_,
                                              static_cast<int>(etags_.size() + 1), bytes));
    etags_.push_back(std::move(etag));
    return Status::OK();
  }

  Status FinishMultipart() {
    tail_.resize(static_cast<size_t>(size_ - tail_start_), '\0');
    for (size_t at = 0; at < tail_.size(); at += part_size_) {
      DLIO_RETURN_NOT_OK(UploadPart(std::string_view(tail_).substr(at, part_size_)));
    }
    if (upload_id_.empty()) {  // size_ <= part_size_ never gets here; keep the compiler honest
      return PutWhole();
    }
    DLIO_ASSIGN_OR_RETURN(etags_[0],
                          client_->UploadPart(name_.bucket, name_.key, upload_id_, 1, head_));
    DLIO_RETURN_NOT_OK(client_->CompleteMultipart(name_.bucket, name_.key, upload_id_, etags_));
    upload_id_.clear();
    dirty_ = false;
    return Status::OK();
  }

  void Abort() {
    if (!upload_id_.empty()) (void)client_->AbortMultipart(name_.bucket, name_.key, upload_id_);
    upload_id_.clear();
  }

  std::shared_ptr<S3Client> client_;
  ObjectName name_;
  const uint64_t part_size_;
  std::mutex mu_;
  std::string head_, tail_;
  uint64_t tail_start_;
  uint64_t size_ = 0;
  bool dirty_ = false;
  std::string upload_id_;
  std::vector<std::string> etags_;  // [0] is part 1's, filled at Close
  Status upload_error_;
};

}  // namespace

std::unique_ptr<File> NewS3ReadFile(std::string path, std::shared_ptr<S3Client> client,
                                    ObjectName name, uint64_t size) {
  return std::make_unique<S3ReadFile>(std::move(path), std::move(client), std::move(name), size);
}

std::unique_ptr<File> NewS3WriteFile(std::string path, std::shared_ptr<S3Client> client,
                                     ObjectName name, uint64_t part_size, std::string initial) {
  return std::make_unique<S3WriteFile>(std::move(path), std::move(client), std::move(name),
                                       part_size, std::move(initial));
}

}  // namespace dlio::s3
