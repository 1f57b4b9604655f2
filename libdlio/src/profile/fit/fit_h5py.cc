// Checkpoint files written by h5py (Keras' save_weights; h5py.File(path, 'w') and a
// create_dataset per tensor): the datasets that make checkpoint.type h5py_save write what the
// trace wrote. A save of h5py's is libhdf5's: the superblock at 0 when the file is created, each
// dataset's data as it is written, the metadata from right past the superblock on at close, the
// superblock again. The datasets come from the file when it can be read back (names, shapes and
// dtypes, ordered by the trace's data writes), else from the data writes' sizes; a candidate is
// kept only when format/hdf5/h5py_save.h's requests for it equal the trace's.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "dlio/str_cat.h"
#include "format/hdf5/h5py_save.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {
namespace {

using h5py_save::H5pyDataset;
using h5py_save::H5pyLayout;
using h5py_save::H5pyType;
using h5py_save::H5pyWrite;
using torch_save::TorchWrite;

constexpr uint64_t kMaxSuperblock = 512;
constexpr uint64_t kMaxReadBack = uint64_t{1} << 32;  // files fit reads back whole

// One save of h5py's in a file's writes: the superblock at 0 first and last, a write at or right
// past it (the metadata flushed at close, which begins with the root group's header, in one write
// with the superblock when they are contiguous), and the writes between the first and that one:
// each dataset's data. Empty when `writes` are not such a save.
struct H5pySaveWrites {
  std::vector<H5pyWrite> writes;
  std::vector<H5pyWrite> data;  // in the order written: the datasets' creation order
};

// The file's writes cut into saves: a superblock write followed by a write elsewhere begins one.
std::vector<std::vector<H5pyWrite>> SplitSaves(const std::vector<TorchWrite>& writes) {
  std::vector<std::vector<H5pyWrite>> saves;
  if (writes.empty() || writes.front().offset != 0) return saves;
  const uint64_t super = writes.front().size;
  for (size_t k = 0; k < writes.size(); ++k) {
    const bool begins = writes[k].offset == 0 && writes[k].size == super && k + 1 < writes.size() &&
                        writes[k + 1].offset != 0;
    if (saves.empty() || begins) saves.emplace_back();
    saves.back().push_back({writes[k].offset, writes[k].size});
  }
  return saves;
}

std::optional<H5pySaveWrites> AsH5pySave(std::vector<H5pyWrite> writes) {
  if (writes.size() < 3) return std::nullopt;
  const H5pyWrite super = writes.front();
  if (super.offset != 0 || super.size == 0 || super.size > kMaxSuperblock ||
      !(writes.back() == super)) {
    return std::nullopt;
  }
  const auto flush = std::find_if(writes.begin() + 1, writes.end(),
                                  [&](const H5pyWrite& w) { return w.offset <= super.size; });
  if (flush == writes.end()) return std::nullopt;
  H5pySaveWrites s;
  s.data.assign(writes.begin() + 1, flush);
  if (s.data.empty()) return std::nullopt;
  s.writes = std::move(writes);
  return s;
}

// The datasets read back from the file: each dataset's data is one of the data writes, in their
// order. NotFound-like failures when the file cannot be read or does not match.
// Whether the name of a dataset or attribute read back can be written in the key's items.
Status CheckItemName(const h5py_save::FoundDataset& f, const std::string& path) {
  if ((f.dataset.name + f.dataset.attribute).find_first_of(",@") == std::string::npos) {
    return Status::OK();
  }
  return Status::Unimplemented(Basename(path), ": the name '", f.dataset.name,
                               f.dataset.is_attribute() ? "@" + f.dataset.attribute : "",
                               "' holds ',' or '@'");
}

// The groups' attributes placed among the datasets (in the order of their data writes): the
// root's first, each group's before the first dataset inside it (Keras creates a layer's group,
// sets its attributes, then creates its weights); a group without datasets (a layer without
// weights) before the first group with datasets whose header lies past its own (groups are
// created in order and their headers allocated in turn), else at the end.
std::vector<H5pyDataset> PlaceAttributes(std::vector<H5pyDataset> datasets,
                                         const std::vector<h5py_save::FoundDataset>& attributes) {
  std::map<std::string, std::vector<H5pyDataset>> of;  // group -> its attributes, in order
  std::map<std::string, uint64_t> header;
  for (const auto& f : attributes) {
    of[f.dataset.name].push_back(f.dataset);
    header[f.dataset.name] = f.offset;
  }
  auto inside = [](const std::string& group, const std::string& name) {
    return group.empty() || name.rfind(group + "/", 0) == 0;
  };
  // Each attributed group's anchor: the index of the first dataset inside it.
  std::map<std::string, size_t> anchor;
  for (const auto& [group, attrs] : of) {
    for (size_t k = 0; k < datasets.size() && group.size() > 0; ++k) {
      if (inside(group, datasets[k].name)) {
        anchor[group] = k;
        break;
      }
    }
  }
  std::vector<std::pair<std::pair<size_t, uint64_t>, std::string>> order;  // (anchor, header)
  for (const auto& [group, attrs] : of) {
    size_t at = group.empty() ? 0 : datasets.size();
    if (group.empty() || anchor.count(group) != 0) {
      at = group.empty() ? 0 : anchor[group];
    } else {
      uint64_t best = UINT64_MAX;
      for (const auto& [other, k] : anchor) {
        if (header[other] > header[group] && header[other] < best) {
          best = header[other];
          at = k;
        }
      }
    }
    order.push_back({{at, group.empty() ? 0 : header[group]}, group});
  }
  std::sort(order.begin(), order.end());
  std::vector<H5pyDataset> out;
  size_t next = 0;
  for (size_t k = 0; k <= datasets.size(); ++k) {
    for (; next < order.size() && order[next].first.first == k; ++next) {
      for (const H5pyDataset& a : of[order[next].second]) out.push_back(a);
    }
    if (k < datasets.size()) out.push_back(std::move(datasets[k]));
  }
  return out;
}

// The datasets read back from the file, each one's data one of the writes before the close
// (others may be metadata libhdf5 wrote early: a large attribute's object header), in the order
// of those writes, and the groups' attributes among them (PlaceAttributes).
Result<H5pyLayout> LayoutFromFile(const FitOptions& options, const std::string& path,
                                  const H5pySaveWrites& save) {
  uint64_t end = 0;
  for (const H5pyWrite& w : save.writes) end = std::max(end, w.offset + w.size);
  if (end > kMaxReadBack) {
    return Status::Unimplemented(Basename(path), " is too large to read back");
  }
  DLIO_ASSIGN_OR_RETURN(std::string bytes, options.read_file(path, 0, end));
  DLIO_ASSIGN_OR_RETURN(auto found, h5py_save::ReadH5pyDatasets(bytes, Basename(path)));
  std::vector<std::pair<size_t, H5pyDataset>> placed;
  std::vector<h5py_save::FoundDataset> attributes;
  for (const auto& f : found) {
    DLIO_RETURN_NOT_OK(CheckItemName(f, path));
    if (f.dataset.is_attribute()) {
      attributes.push_back(f);
      continue;
    }
    const auto it = std::find_if(save.data.begin(), save.data.end(), [&](const H5pyWrite& w) {
      return f.offset == w.offset && f.dataset.bytes() == w.size;
    });
    if (it == save.data.end()) {
      return Status::NotFound(Basename(path), ": dataset ", f.dataset.name,
                              " was not written by the save (its data at offset ", f.offset, ")");
    }
    placed.emplace_back(static_cast<size_t>(it - save.data.begin()), f.dataset);
  }
  if (placed.empty()) return Status::NotFound(Basename(path), " holds no datasets");
  std::sort(placed.begin(), placed.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<H5pyDataset> datasets;
  for (auto& [at, d] : placed) datasets.push_back(std::move(d));
  H5pyLayout layout;
  layout.datasets = PlaceAttributes(std::move(datasets), attributes);
  return layout;
}

// Datasets of the data writes' sizes (fp32 vectors, or bytes when a size is not a multiple of 4),
// named as `grouped` says: each in a group of its own ("layer_<k>/kernel", Keras-style) or flat
// ("w<k>").
H5pyLayout LayoutFromSizes(const H5pySaveWrites& save, bool grouped) {
  H5pyLayout layout;
  for (size_t k = 0; k < save.data.size(); ++k) {
    H5pyDataset d;
    d.name = grouped ? StrCat("layer_", k, "/kernel") : StrCat("w", k);
    const uint64_t n = save.data[k].size;
    d.type = n % 4 == 0 ? H5pyType::kF32 : H5pyType::kU8;
    d.shape = {n % 4 == 0 ? n / 4 : n};
    layout.datasets.push_back(std::move(d));
  }
  return layout;
}

size_t SameWrites(const H5pyLayout& layout, const std::vector<H5pyWrite>& traced) {
  auto mine = h5py_save::H5pySaveWrites(layout);
  if (!mine.ok()) return 0;
  size_t same = 0;
  for (size_t k = 0; k < std::min(mine->size(), traced.size()); ++k)
    same += (*mine)[k] == traced[k];
  return mine->size() == traced.size() ? same : std::min(same, traced.size() - 1);
}

// The first save of h5py's among the checkpoint files (by their first write), and its file.
std::optional<std::pair<std::string, H5pySaveWrites>> FirstH5pySave(const CheckpointWrites& w) {
  std::vector<std::pair<int64_t, std::string>> order;
  for (const auto& [path, file] : w.per_file) order.emplace_back(file.first, path);
  std::sort(order.begin(), order.end());
  for (const auto& [first, path] : order) {
    for (auto& writes : SplitSaves(w.per_file.at(path).second)) {
      if (auto save = AsH5pySave(std::move(writes))) return std::make_pair(path, std::move(*save));
    }
  }
  return std::nullopt;
}

}  // namespace

bool FitH5pySave(const CheckpointWrites& w, const FitOptions& options, FitResult* out) {
  const auto first = FirstH5pySave(w);
  if (!first) return false;
  const auto& [path, save] = *first;
  std::string not_read;
  std::optional<H5pyLayout> layout;
  std::string how;
  if (options.read_file) {
    auto read = LayoutFromFile(options, path, save);
    if (read.ok()) {
      layout = std::move(*read);
      how = StrCat("read from ", Basename(path),
                   ": its datasets in the order the save wrote them, the groups' attributes among "
                   "them");
    } else {
      not_read = read.status().message();
    }
  }
  if (!layout) {
    H5pyLayout grouped = LayoutFromSizes(save, true), flat = LayoutFromSizes(save, false);
    const bool groups = SameWrites(grouped, save.writes) >= SameWrites(flat, save.writes);
    layout = groups ? std::move(grouped) : std::move(flat);
    how = StrCat("from the sizes of the ", save.data.size(),
                 " data writes (names, shapes and dtypes are not in the writes: ",
                 groups ? "a group per dataset" : "no groups",
                 " makes more of the metadata writes the trace's)",
                 not_read.empty() ? "" : StrCat("; not read: ", not_read));
  }
  const size_t same = SameWrites(*layout, save.writes);
  const bool exact = same == save.writes.size();
  Set(out, "checkpoint.type", "h5py_save", FitConfidence::kHigh,
      StrCat("HDF5 written as h5py writes it (the superblock at creation, each dataset's data, the "
             "metadata and superblock at close): ",
             same, " of the ", save.writes.size(), " writes of a save equal the emulation's"));
  Set(out, "checkpoint.h5py_datasets", h5py_save::ItemsText(layout->datasets, ", "),
      exact ? FitConfidence::kHigh : FitConfidence::kMedium, how);
  Set(out, "checkpoint.h5py_file_name", Basename(path), FitConfidence::kHigh, "the traced name");
  return true;
}

}  // namespace dlio::fit
