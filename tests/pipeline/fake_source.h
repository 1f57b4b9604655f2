// An in-memory DataSource for pipeline tests: N files x M samples with known bytes, counters,
// an optional injected failure and an optional per-read delay.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dlio/data_source.h"

namespace dlio::testing {

class FakeSource : public DataSource {
 public:
  // Sample sizes vary per sample unless `fixed_size` is set.
  FakeSource(size_t files, uint64_t samples_per_file, uint64_t fixed_size = 0)
      : samples_(files, samples_per_file), fixed_size_(fixed_size) {
    for (size_t f = 0; f < files; ++f) paths_.push_back("data/file_" + std::to_string(f) + ".bin");
  }

  size_t num_files() const override { return paths_.size(); }
  const std::string& file_path(uint32_t file) const override { return paths_.at(file); }
  const std::vector<uint64_t>& samples_per_file() const override { return samples_; }

  Status Read(SampleRef ref, SampleBuffer* out) override {
    reads_.fetch_add(1);
    const int64_t delay = delay_us_.load();
    if (delay > 0) std::this_thread::sleep_for(std::chrono::microseconds(delay));
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (fail_ && ref == fail_ref_) {
        return Status::IOError("injected failure at offset " + std::to_string(ref.index * 100));
      }
    }
    if (ref.file >= paths_.size() || ref.index >= samples_[ref.file]) {
      return Status::OutOfRange("no sample " + std::to_string(ref.index));
    }
    DLIO_RETURN_NOT_OK(out->Resize(SizeOf(ref)));
    for (uint64_t i = 0; i < out->size(); ++i) out->data()[i] = ByteAt(ref, i);
    return Status::OK();
  }

  uint64_t SizeOf(const SampleRef& ref) const {
    return fixed_size_ ? fixed_size_ : 16 + (ref.file * 7 + ref.index * 3) % 40;
  }
  static uint8_t ByteAt(const SampleRef& ref, uint64_t i) {
    return static_cast<uint8_t>(ref.file * 31 + ref.index * 7 + i);
  }
  // True when `data`/`size` are exactly the bytes of `ref`.
  bool Matches(const SampleRef& ref, const uint8_t* data, uint64_t size) const {
    if (size != SizeOf(ref) || data == nullptr) return false;
    for (uint64_t i = 0; i < size; ++i) {
      if (data[i] != ByteAt(ref, i)) return false;
    }
    return true;
  }

  void FailAt(SampleRef ref) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_ = true;
    fail_ref_ = ref;
  }
  void ClearFailure() {
    std::lock_guard<std::mutex> lock(mu_);
    fail_ = false;
  }
  void CloseAll() override { close_alls_.fetch_add(1); }
  uint64_t close_alls() const { return close_alls_.load(); }
  void set_delay_us(int64_t us) { delay_us_.store(us); }
  uint64_t reads() const { return reads_.load(); }

 private:
  std::vector<uint64_t> samples_;
  std::vector<std::string> paths_;
  uint64_t fixed_size_;
  std::atomic<uint64_t> reads_{0};
  std::atomic<uint64_t> close_alls_{0};
  std::atomic<int64_t> delay_us_{0};
  std::mutex mu_;
  bool fail_ = false;
  SampleRef fail_ref_;
};

}  // namespace dlio::testing
