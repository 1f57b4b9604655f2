#include "io_models/numpy_model_reader.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "format/io_util.h"
#include "io_models/pyio/buffered_reader.h"
#include "io_models/pyio/c_stdio.h"

namespace dlio::format_internal {
namespace {

// Contiguous sample i of `s` straight into `out`, the rest of the array into `scratch`.
pyio::ArrayTarget SampleTarget(const ArraySamples& s, uint64_t i, uint8_t* out,
                               AlignedBuffer* scratch) {
  pyio::ArrayTarget t;
  t.array = scratch;
  t.window = out;
  t.window_offset = s.offset(i);
  t.window_size = s.sample_size;
  return t;
}

// The arrays of reader.client_costs none: a few buffers per thread, reused by its next loads so
// that their bytes land in memory already touched. Per thread, so that no lock is held across a
// fork (the pytorch pipeline's workers start with a copy of the forking thread's).
class ArrayPool {
 public:
  static AlignedBuffer Take() {
    std::vector<AlignedBuffer>& free = List();
    if (free.empty()) return AlignedBuffer(64);
    AlignedBuffer b = std::move(free.back());
    free.pop_back();
    return b;
  }
  static void Give(AlignedBuffer b) {
    std::vector<AlignedBuffer>& free = List();
    if (b.capacity() > 0 && free.size() < kKeep) free.push_back(std::move(b));
  }

 private:
  static constexpr size_t kKeep = 2;  // the array being read and the one Open left pending
  static std::vector<AlignedBuffer>& List() {
    thread_local std::vector<AlignedBuffer> free;
    return free;
  }
};

// One np.load: open, load, close (the file is closed on every path). Where `into` chooses (the
// client costs none) when given.
Result<pyio::LoadedArray> LoadOnce(const NumpyModelSpec& spec, const std::string& key,
                                   const pyio::ArrayTargetFor* into = nullptr) {
  DLIO_ASSIGN_OR_RETURN(auto file,
                        spec.storage->Open(spec.path, OpenMode::kRead, spec.file_options));
  const pyio::NumpyBuffers buffers = NumpyBuffersFor(spec.storage, *file, spec.buffers);
  Result<pyio::LoadedArray> a = into != nullptr
                                    ? pyio::NumpyLoadInto(file.get(), key, buffers, *into)
                                    : pyio::NumpyLoad(file.get(), key, buffers);
  const Status closed = file->Close();
  DLIO_RETURN_NOT_OK(a.status());
  DLIO_RETURN_NOT_OK(closed);
  return a;
}

class NumpyModelReader final : public FormatReader {
 public:
  // `first_reused`: the first load's bytes without the client costs (spec.framework false),
  // unless that load served its sample (FormatOptions::first_read).
  NumpyModelReader(NumpyModelSpec spec, pyio::LoadedArray first,
                   std::optional<AlignedBuffer> first_reused, ArraySamples samples,
                   NativeReaderOpener native)
      : spec_(std::move(spec)),
        key_(std::move(first.member)),
        data_bytes_(first.header.data_bytes),
        samples_(std::move(samples)),
        native_opener_(std::move(native)) {
    if (spec_.framework) {
      pending_ = std::move(first.data);
    } else {
      reused_ = std::make_unique<Reused>();
      reused_->pending = std::move(first_reused);
    }
  }
  ~NumpyModelReader() override {
    if (reused_ && reused_->pending) ArrayPool::Give(std::move(*reused_->pending));
  }

  uint64_t num_samples() const override { return samples_.num_samples; }
  uint64_t sample_size(uint64_t) const override { return samples_.sample_size; }

  std::string DescribeJson() const override {
    std::lock_guard<std::mutex> lock(native_mu_);
    if (!native_) {
      Result<std::unique_ptr<FormatReader>> opened = native_opener_();
      if (!opened.ok()) {
        return "{\"path\":" + JsonString(spec_.path) +
               ",\"error\":" + JsonString(opened.status().ToString()) + "}";
      }
      native_ = std::move(*opened);
    }
    return native_->DescribeJson();
  }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(spec_.path, i, samples_.num_samples));
    DLIO_RETURN_NOT_OK(out->Resize(samples_.sample_size));
    if (!spec_.framework) return ReadReused(i, out);
    std::optional<pyio::ArrayBytes> first = TakePending();
    if (spec_.keep) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!kept_) {
        if (first) {
          kept_ = std::move(first);
        } else {
          DLIO_ASSIGN_OR_RETURN(pyio::LoadedArray a, Load());
          kept_ = std::move(a.data);
        }
      }
      Gather(i, kept_->data(), kept_->size(), out->data());
      return Status::OK();
    }
    if (first) return Deliver(i, std::move(*first), out);
    DLIO_ASSIGN_OR_RETURN(pyio::LoadedArray a, Load());
    return Deliver(i, std::move(a.data), out);
  }

 private:
  // ReadSample without the client costs: the same loads, into this thread's reused buffers.
  Status ReadReused(uint64_t i, SampleBuffer* out) {
    std::optional<AlignedBuffer> first;
    {
      std::lock_guard<std::mutex> lock(mu_);
      first.swap(reused_->pending);
    }
    if (spec_.keep) {
      std::lock_guard<std::mutex> lock(mu_);
      std::optional<AlignedBuffer>& kept = reused_->kept;
      if (!kept) {
        AlignedBuffer array = first ? std::move(*first) : ArrayPool::Take();
        if (!first) DLIO_RETURN_NOT_OK(Load(&array).status());
        kept = std::move(array);
      }
      Gather(i, kept->data(), kept->size(), out->data());
      return Status::OK();
    }
    AlignedBuffer array = first ? std::move(*first) : ArrayPool::Take();
    Status loaded;
    if (first) {
      Gather(i, array.data(), array.size(), out->data());
    } else if (samples_.strided()) {
      loaded = Load(&array).status();
      if (loaded.ok()) Gather(i, array.data(), array.size(), out->data());
    } else {
      loaded = LoadSampleInto(i, out->data(), &array);
    }
    ArrayPool::Give(std::move(array));
    return loaded;
  }

  // A load whose sample i (contiguous) is read straight into `out`, the rest of the array into
  // `scratch`.
  Status LoadSampleInto(uint64_t i, uint8_t* out, AlignedBuffer* scratch) const {
    const pyio::ArrayTargetFor target = [&](const NpyHeader& h, pyio::ArrayTarget* t) {
      DLIO_RETURN_NOT_OK(CheckUnchanged(h.data_bytes));
      *t = SampleTarget(samples_, i, out, scratch);
      return Status::OK();
    };
    return LoadOnce(spec_, key_, &target).status();
  }

  // The array Open loaded, once (nullopt after the first call).
  std::optional<pyio::ArrayBytes> TakePending() {
    std::lock_guard<std::mutex> lock(mu_);
    std::optional<pyio::ArrayBytes> out = std::move(pending_);
    pending_.reset();
    return out;
  }

  Result<pyio::LoadedArray> Load(AlignedBuffer* into = nullptr) const {
    const pyio::ArrayTargetFor whole = [into](const NpyHeader&, pyio::ArrayTarget* t) {
      t->array = into;
      return Status::OK();
    };
    DLIO_ASSIGN_OR_RETURN(pyio::LoadedArray a,
                          LoadOnce(spec_, key_, into != nullptr ? &whole : nullptr));
    DLIO_RETURN_NOT_OK(CheckUnchanged(a.header.data_bytes));
    return a;
  }

  Status CheckUnchanged(uint64_t data_bytes) const {
    if (data_bytes == data_bytes_) return Status::OK();
    return Status::Corruption(spec_.path, ": the array changed since the file was opened (",
                              data_bytes_, " data bytes then, ", data_bytes, " now)");
  }

  // The sample out of `array`, which `out` then holds as Python's code holds the array np.load
  // returned (SampleBuffer::Hold).
  Status Deliver(uint64_t i, pyio::ArrayBytes array, SampleBuffer* out) const {
    auto held = std::make_shared<const pyio::ArrayBytes>(std::move(array));
    Gather(i, held->data(), held->size(), out->data());
    out->Hold(std::move(held));
    return Status::OK();
  }

  void Gather(uint64_t i, const uint8_t* data, size_t size, uint8_t* out) const {
    const ArraySamples& s = samples_;
    if (s.axis == SampleAxis::kFirst) {
      if (s.sample_size > 0) CopyFrontToBack(out, data + s.offset(i), s.sample_size);
      return;
    }
    GatherSamplePiece(s, i, 0, data, size, out);
  }

  NumpyModelSpec spec_;
  std::string key_;  // npz: the member Open loaded
  uint64_t data_bytes_;
  ArraySamples samples_;
  NativeReaderOpener native_opener_;
  mutable std::mutex native_mu_;  // guards native_
  mutable std::unique_ptr<FormatReader> native_;
  std::mutex mu_;  // guards pending_, kept_ and reused_
  std::optional<pyio::ArrayBytes> pending_;
  std::optional<pyio::ArrayBytes> kept_;
  // Without the client costs (spec_.framework false), in place of pending_ and kept_: apart, so
  // that the framework model's objects keep the sizes glibc's heap decisions were measured with.
  struct Reused {
    std::optional<AlignedBuffer> pending, kept;
  };
  std::unique_ptr<Reused> reused_;
};

}  // namespace

Result<std::unique_ptr<FormatReader>> OpenNumpyModelReader(NumpyModelSpec spec,
                                                           const FormatOptions& options,
                                                           NativeReaderOpener native) {
  AlignedBuffer reused = spec.framework ? AlignedBuffer(64) : ArrayPool::Take();
  // Without the client costs the load Open makes reads the sample a DataSource opened the file
  // for straight into its buffer (a contiguous sample, and not under read_type memory, which keeps
  // the whole array); otherwise the whole array into `reused`, for the next ReadSample.
  FirstRead* first_read = spec.framework || spec.keep ? nullptr : options.first_read;
  bool serves = false;
  const pyio::ArrayTargetFor target = [&](const NpyHeader& h, pyio::ArrayTarget* t) {
    t->array = &reused;
    if (first_read == nullptr) return Status::OK();
    const ArraySamples s = ResolveArraySamples(h, std::nullopt, options);
    if (first_read->index >= s.num_samples || s.strided()) return Status::OK();
    DLIO_RETURN_NOT_OK(first_read->out->Resize(static_cast<size_t>(s.sample_size)));
    *t = SampleTarget(s, first_read->index, first_read->out->data(), &reused);
    serves = true;
    return Status::OK();
  };
  Result<pyio::LoadedArray> loaded = LoadOnce(spec, "", spec.framework ? nullptr : &target);
  if (!loaded.ok()) {
    ArrayPool::Give(std::move(reused));
    // A file np.load refuses: the native reader's diagnosis names the offset (and is what a
    // damaged file gets under native); np.load's own error when dlio's reader accepts the file.
    Result<std::unique_ptr<FormatReader>> diagnosed = native();
    if (!diagnosed.ok()) return diagnosed.status();
    return loaded.status();
  }
  pyio::LoadedArray first = std::move(*loaded);
  ArraySamples samples = ResolveArraySamples(first.header, std::nullopt, options);
  std::string where = spec.path;
  if (!first.member.empty()) where += " member '" + first.member + "'";
  Status checked =
      CheckZeroByteSamples(samples, first.file_bytes, where + " shape " + first.header.ShapeJson());
  if (!checked.ok()) {
    ArrayPool::Give(std::move(reused));
    return checked;
  }
  std::optional<AlignedBuffer> pending;
  if (serves) {
    first_read->served = true;
    ArrayPool::Give(std::move(reused));
  } else {
    pending = std::move(reused);
  }
  return std::unique_ptr<FormatReader>(new NumpyModelReader(std::move(spec), std::move(first),
                                                            std::move(pending), std::move(samples),
                                                            std::move(native)));
}

pyio::NumpyBuffers NumpyBuffersFor(Storage* storage, const File& file, pyio::NumpyBuffers base) {
  const uint64_t blksize = pyio::HostBlockSize(storage, file);
  base.python = pyio::PythonBufferSize(blksize);
  base.stdio = pyio::GlibcBufferSize(blksize);
  return base;
}

NumpyModelSpec NumpyModelSpecFor(Storage* storage, const std::string& path,
                                 const FormatOptions& options) {
  NumpyModelSpec spec;
  spec.storage = storage;
  spec.path = path;
  spec.file_options.direct = options.direct;
  spec.keep = options.read_type == ReadType::kMemory;
  spec.framework = options.framework_client_costs;
  return spec;
}

}  // namespace dlio::format_internal
