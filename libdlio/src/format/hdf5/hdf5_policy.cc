// The writer's filter and chunk policy: which filters a config asks for and the chunk shapes of
// /records and /data.
#include <algorithm>
#include <cmath>

#include "format/hdf5/hdf5_internal.h"

namespace dlio::format_internal::hdf5 {
namespace {

// h5py's guess_chunk (h5py/_hl/filters.py): halve dimensions in turn until a chunk is near a
// target that grows with the dataset (8 KiB..1 MiB). Used when chunking is on (or implied by a
// filter) and neither chunk_size nor chunk_samples says how big, so files match h5py's.
std::vector<hsize_t> GuessChunk(const std::vector<hsize_t>& shape, size_t typesize) {
  constexpr double kBase = 16 * 1024, kMin = 8 * 1024, kMax = 1024 * 1024;
  std::vector<double> chunks;
  for (hsize_t d : shape) chunks.push_back(d == 0 ? 1024.0 : static_cast<double>(d));
  auto product = [&] {
    double p = 1;
    for (double c : chunks) p *= c;
    return p;
  };
  const double dset_size = product() * static_cast<double>(typesize);
  double target = kBase * std::pow(2.0, std::log10(dset_size / (1024.0 * 1024)));
  target = std::clamp(target, kMin, kMax);
  for (size_t idx = 0;; ++idx) {
    const double bytes = product() * static_cast<double>(typesize);
    if ((bytes < target || std::fabs(bytes - target) / target < 0.5) && bytes < kMax) break;
    if (product() == 1) break;
    double& c = chunks[idx % chunks.size()];
    c = std::ceil(c / 2.0);
  }
  std::vector<hsize_t> out;
  for (size_t k = 0; k < chunks.size(); ++k) {
    out.push_back(
        std::clamp<hsize_t>(static_cast<hsize_t>(chunks[k]), 1, std::max<hsize_t>(shape[k], 1)));
  }
  return out;
}

bool WantChunks(const FormatOptions& o, const Filters& f) {
  return Hdf5Of(o.formats).enable_chunking || f.any();
}

}  // namespace

// Call inside an Hdf5Call (szip availability is a library query).
Result<Filters> ParseFilters(const FormatOptions& o) {
  Filters f;
  f.shuffle = Hdf5Of(o.formats).shuffle_filter;
  f.level = o.compression_level;
  const std::string c = Lower(o.compression);
  if (c.empty() || c == "none") return f;
  if (c == "gzip" || c == "zlib" || c == "deflate") {
    if (f.level < 0 || f.level > 9) {
      return Status::InvalidArgument("dataset.compression_level: ", f.level,
                                     " is not in 0-9 (gzip)");
    }
    f.codec = Codec::kDeflate;
    return f;
  }
  if (c == "szip") {
    unsigned config = 0;
    if (H5Zfilter_avail(H5Z_FILTER_SZIP) <= 0 || H5Zget_filter_info(H5Z_FILTER_SZIP, &config) < 0 ||
        (config & H5Z_FILTER_CONFIG_ENCODE_ENABLED) == 0) {
      return Status::InvalidArgument(
          "dataset.compression: szip cannot encode in this HDF5 build (use gzip)");
    }
    f.codec = Codec::kSzip;
    return f;
  }
  if (c == "lzf") {
    return Status::InvalidArgument(
        "dataset.compression: lzf is h5py's own filter, not part of libhdf5, so dlio cannot "
        "write it (use gzip or szip for hdf5)");
  }
  return Status::InvalidArgument("dataset.compression: '" + o.compression +
                                 "' is not supported by hdf5 (use none, gzip, zlib, deflate or "
                                 "szip)");
}

// Chunk dims of /records [n, s] ({} = contiguous). Filters need chunks, so they imply chunking;
// an empty dataset stays contiguous (and unfiltered: there is nothing to compress).
std::vector<hsize_t> RecordsChunk(uint64_t n, uint64_t s, const FormatOptions& o,
                                  const Filters& f) {
  if (!WantChunks(o, f) || n == 0 || s == 0) return {};
  const Hdf5Options& hdf5 = Hdf5Of(o.formats);
  if (hdf5.chunk_samples > 0) return {std::min<hsize_t>(hdf5.chunk_samples, n), s};
  if (hdf5.chunk_size > 0) {
    if (hdf5.chunk_size >= s) return {std::clamp<hsize_t>(hdf5.chunk_size / s, 1, n), s};
    // A chunk smaller than one sample splits rows too, so a 2 KB chunk really is 2 KB.
    return {1, hdf5.chunk_size};
  }
  return GuessChunk({n, s}, 1);
}

// Chunk length of /data [total] ({} = contiguous).
std::vector<hsize_t> DataChunk(uint64_t n, uint64_t total, const FormatOptions& o,
                               const Filters& f) {
  if (!WantChunks(o, f) || total == 0) return {};
  uint64_t c = 0;
  const Hdf5Options& hdf5 = Hdf5Of(o.formats);
  if (hdf5.chunk_samples > 0) {
    c = hdf5.chunk_samples * ((total + n - 1) / n);  // samples of the mean size
  } else if (hdf5.chunk_size > 0) {
    c = hdf5.chunk_size;
  } else {
    c = GuessChunk({total}, 1)[0];
  }
  return {std::clamp<hsize_t>(c, 1, total)};
}

}  // namespace dlio::format_internal::hdf5
