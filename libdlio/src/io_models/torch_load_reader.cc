#include "io_models/torch_load_reader.h"

#include <cstring>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "dlio/str_cat.h"
#include "format/io_util.h"
#include "format/torch/pt_describe.h"
#include "io_models/io_model_table.h"
#include "io_models/pyio/torch_stream_reader.h"
#include "io_models/whole_file_reader.h"

namespace dlio::io_models {
namespace {

// Where one load puts the storages: `out` (resized to hold them all) straight, or under the
// framework's client costs each storage in memory of its own (fresh pages from torch's threshold
// up), then copied into `out`.
struct TorchLoadTarget {
  SampleBuffer* sample = nullptr;  // one of the two
  std::vector<uint8_t>* held = nullptr;
  bool framework = false;
};

// What one load learnt: the layout and the storages' bytes.
struct TorchLoaded {
  pyio::TorchZipLayout layout;
  uint64_t bytes = 0;
};

// One torch.load(path): open(path, "rb") (open and fstat), the calls of both halves, close (on
// every path).
Result<TorchLoaded> TorchLoadOnce(Storage* storage, const std::string& path,
                                  const FormatOptions& options, const TorchLoadTarget& target) {
  DLIO_ASSIGN_OR_RETURN(OpenedWholeFile f, OpenWholeFile(storage, path, options));
  pyio::BufferedReader fp(f.file.get(), f.buffer_size);
  fp.SetKnownSize(f.size);  // open's fstat: the BufferAdapter's seek to the end asks none
  std::vector<uint8_t> memory;
  TorchLoaded loaded;
  Status st = [&]() -> Status {
    DLIO_ASSIGN_OR_RETURN(loaded.layout, pyio::TorchLoadDirectory(&fp, f.size, &memory));
    std::vector<uint64_t> at;
    for (const pyio::TorchZipRecord& r : loaded.layout.storages) {
      at.push_back(loaded.bytes);
      loaded.bytes += r.size;
    }
    uint8_t* base = nullptr;
    if (target.sample != nullptr) {
      DLIO_RETURN_NOT_OK(target.sample->Resize(static_cast<size_t>(loaded.bytes)));
      base = target.sample->data();
    } else {
      target.held->resize(static_cast<size_t>(loaded.bytes));
      base = target.held->data();
    }
    pyio::TorchLoadCheck check;
    if (target.framework) {  // new memory per storage, then the sample's copy of it
      check.storage = [&](size_t key, const pyio::TorchZipRecord& r, const uint8_t* data) {
        std::memcpy(base + at[key], data, static_cast<size_t>(r.size));
        return Status::OK();
      };
    } else {
      check.destination = [&](size_t key, const pyio::TorchZipRecord&) { return base + at[key]; };
    }
    const uint64_t fresh =
        target.framework ? IoModelEntryFor(IoModel::kTorchLoad).python_import_threshold : 0;
    return pyio::TorchLoadRecords(&fp, &loaded.layout, &memory, check, fresh);
  }();
  const Status closed = f.file->Close();
  DLIO_RETURN_NOT_OK(st);
  DLIO_RETURN_NOT_OK(closed);
  return loaded;
}

class TorchLoadReader final : public FormatReader {
 public:
  TorchLoadReader(Storage* storage, std::string path, FormatOptions options, TorchLoaded first,
                  std::optional<std::vector<uint8_t>> pending)
      : storage_(storage),
        path_(std::move(path)),
        options_(std::move(options)),
        layout_(std::move(first.layout)),
        bytes_(first.bytes),
        pending_(std::move(pending)) {
    options_.first_read = nullptr;
  }

  uint64_t num_samples() const override { return 1; }
  uint64_t sample_size(uint64_t) const override { return bytes_; }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(format_internal::CheckSampleIndex(path_, i, 1));
    if (std::optional<std::vector<uint8_t>> held = TakePending()) {  // the open's load
      DLIO_RETURN_NOT_OK(out->Resize(held->size()));
      if (!held->empty()) std::memcpy(out->data(), held->data(), held->size());
      return Status::OK();
    }
    DLIO_ASSIGN_OR_RETURN(
        const TorchLoaded again,
        TorchLoadOnce(storage_, path_, options_, {out, nullptr, options_.framework_client_costs}));
    if (again.bytes != bytes_) {
      return Status::Corruption(path_, ": its storages hold ", again.bytes, " bytes, ", bytes_,
                                " when it was opened (the file changed)");
    }
    return Status::OK();
  }

  std::string DescribeJson() const override {
    std::vector<uint64_t> sizes;
    for (const pyio::TorchZipRecord& r : layout_.storages) sizes.push_back(r.size);
    return format_internal::DescribePt(path_, "torch_load", layout_.file_size, layout_.pickle.size,
                                       sizes);
  }

 private:
  std::optional<std::vector<uint8_t>> TakePending() {
    std::lock_guard<std::mutex> lock(mu_);
    std::optional<std::vector<uint8_t>> out = std::move(pending_);
    pending_.reset();
    return out;
  }

  Storage* storage_;
  std::string path_;
  FormatOptions options_;
  pyio::TorchZipLayout layout_;  // the open's load
  uint64_t bytes_;
  std::mutex mu_;
  std::optional<std::vector<uint8_t>> pending_;  // the open's load, until a ReadSample takes it
};

}  // namespace

Result<std::unique_ptr<FormatReader>> OpenTorchLoadReader(Storage* storage, const std::string& path,
                                                          const FormatOptions& options) {
  FirstRead* first = options.first_read;
  const bool framework = options.framework_client_costs;
  if (first != nullptr && first->index == 0 && first->out != nullptr && !framework) {
    DLIO_ASSIGN_OR_RETURN(TorchLoaded loaded, TorchLoadOnce(storage, path, options, {first->out}));
    first->served = true;
    return std::unique_ptr<FormatReader>(
        new TorchLoadReader(storage, path, options, std::move(loaded), std::nullopt));
  }
  std::vector<uint8_t> held;
  DLIO_ASSIGN_OR_RETURN(TorchLoaded loaded,
                        TorchLoadOnce(storage, path, options, {nullptr, &held, framework}));
  return std::unique_ptr<FormatReader>(
      new TorchLoadReader(storage, path, options, std::move(loaded), std::move(held)));
}

}  // namespace dlio::io_models
