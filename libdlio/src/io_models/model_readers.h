// A format's readers, one per request model it serves (reader.io_model; io_model_table.h). A
// format registers them once, one line per model, and its Open dispatches through them:
//
//   readers_.Add(IoModel::kNative, OpenNative).Add(IoModel::kNumpy, OpenNumpyModel);
//   ...
//   return readers_.Open(capabilities(), storage, path, options);
//
// instead of comparing the resolved model with each one in turn.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dlio/format.h"

namespace dlio::io_models {

// Opens `path` for reading the way one request model reads it.
using OpenModelReader = std::function<Result<std::unique_ptr<FormatReader>>(
    Storage* storage, const std::string& path, const FormatOptions& options)>;

class ModelReaders {
 public:
  // Registers `open` as the reader of request model `model` (a model registered twice keeps the
  // first). Returns *this, so a format lists its models in one statement.
  ModelReaders& Add(IoModel model, OpenModelReader open);

  // The models registered, in registration order (Format::reader_models).
  std::vector<IoModel> models() const;

  // Opens `path` with the reader of the request model options.io_model resolves to for a format
  // declaring `capabilities` (ResolveIoModel). A model without a reader gets native's: config
  // validation refused the models the format does not declare (FormatOptions::io_model).
  Result<std::unique_ptr<FormatReader>> Open(const FormatCapabilities& capabilities,
                                             Storage* storage, const std::string& path,
                                             const FormatOptions& options) const;

 private:
  const OpenModelReader* Find(IoModel model) const;

  std::vector<std::pair<IoModel, OpenModelReader>> readers_;
};

}  // namespace dlio::io_models
