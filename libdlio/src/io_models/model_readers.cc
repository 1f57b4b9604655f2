#include "io_models/model_readers.h"

namespace dlio::io_models {

ModelReaders& ModelReaders::Add(IoModel model, OpenModelReader open) {
  if (Find(model) == nullptr) readers_.emplace_back(model, std::move(open));
  return *this;
}

std::vector<IoModel> ModelReaders::models() const {
  std::vector<IoModel> out;
  out.reserve(readers_.size());
  for (const auto& [model, open] : readers_) out.push_back(model);
  return out;
}

const OpenModelReader* ModelReaders::Find(IoModel model) const {
  for (const auto& [m, open] : readers_) {
    if (m == model) return &open;
  }
  return nullptr;
}

Result<std::unique_ptr<FormatReader>> ModelReaders::Open(const FormatCapabilities& capabilities,
                                                         Storage* storage, const std::string& path,
                                                         const FormatOptions& options) const {
  const OpenModelReader* open = Find(ResolveIoModel(options.io_model, capabilities));
  if (open == nullptr) open = Find(IoModel::kNative);
  if (open == nullptr) {
    return Status::Internal(path + ": the format registered no reader for reader.io_model '" +
                            std::string(EnumName(options.io_model)) + "' nor a native one");
  }
  return (*open)(storage, path, options);
}

}  // namespace dlio::io_models
