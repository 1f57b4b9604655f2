#include "format/npy_samples.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/element_type.h"
#include "format/content.h"
#include "format/io_util.h"

namespace dlio::format_internal {
namespace {

ArraySamples Along(SampleAxis axis, const NpyHeader& h, std::string basis) {
  ArraySamples s;
  s.axis = axis;
  s.basis = std::move(basis);
  s.itemsize = h.itemsize;
  if (axis == SampleAxis::kWhole) {
    s.num_samples = 1;
    s.sample_size = h.data_bytes;
  } else if (axis == SampleAxis::kFirst) {
    s.num_samples = h.shape[0];
    s.sample_size = h.first_axis_slice_bytes;
  } else {
    s.num_samples = h.shape.back();
    s.sample_size = h.last_axis_slice_bytes;
  }
  return s;
}

// The axis `count` names when it equals exactly one of the first and last dimensions.
std::optional<SampleAxis> AxisWithLength(const NpyHeader& h, std::optional<uint64_t> count) {
  if (!count) return std::nullopt;
  const bool first = h.shape[0] == *count, last = h.shape.back() == *count;
  if (first == last) return std::nullopt;
  return first ? SampleAxis::kFirst : SampleAxis::kLast;
}

uint64_t IntSqrt(uint64_t v) {
  uint64_t r = static_cast<uint64_t>(std::sqrt(static_cast<double>(v)));
  while (r > 0 && r > v / r) --r;  // r * r > v without overflow
  while ((r + 1) <= v / (r + 1)) ++r;
  return r;
}

}  // namespace

const char* ArraySamples::layout_name() const {
  switch (axis) {
    case SampleAxis::kFirst:
      return "first_axis";
    case SampleAxis::kLast:
      return "last_axis";
    case SampleAxis::kWhole:
      break;
  }
  return "whole_array";
}

ArraySamples ResolveArraySamples(const NpyHeader& h, std::optional<uint64_t> labels,
                                 const FormatOptions& options) {
  if (h.shape.empty() || h.fortran_order) return Along(SampleAxis::kWhole, h, "shape");
  if (h.shape.size() == 1) return Along(SampleAxis::kFirst, h, "shape");
  if (auto axis = AxisWithLength(h, labels)) return Along(*axis, h, "labels");
  if (options.samples_per_file > 0) {
    if (auto axis = AxisWithLength(h, options.samples_per_file)) {
      return Along(*axis, h, "expected_samples");
    }
  }
  return Along(NpyOf(options.formats).sample_layout == SampleLayout::kLastAxis ? SampleAxis::kLast
                                                                               : SampleAxis::kFirst,
               h, "sample_layout");
}

Status CheckZeroByteSamples(const ArraySamples& s, uint64_t file_size, const std::string& where) {
  if (s.sample_size > 0 || s.num_samples <= std::max<uint64_t>(1, file_size)) return Status::OK();
  return Status::Corruption(
      where, ": the array claims ", s.num_samples, " samples of 0 bytes (", s.layout_name(),
      "); a file holds at most one 0-byte sample per byte it stores (", file_size, ")");
}

void GatherSamplePiece(const ArraySamples& s, uint64_t i, uint64_t pos, const uint8_t* piece,
                       uint64_t n, uint8_t* out) {
  if (!s.strided()) {  // the sample is the whole array
    if (s.sample_size > 0) CopyFrontToBack(out + pos, piece, n);
    return;
  }
  const uint64_t item = s.itemsize, stride = s.num_samples * s.itemsize;
  const uint64_t first = i * item;  // data offset of the sample's item 0
  const uint64_t items = s.sample_size / item;
  const uint64_t end = pos + n;
  if (end <= first) return;
  // Items j whose bytes [first + j * stride, + item) meet [pos, end).
  uint64_t j = pos > first ? (pos - first) / stride : 0;
  const uint64_t j_end = std::min(items, (end - first + stride - 1) / stride);
  for (; j < j_end; ++j) {
    const uint64_t at = first + j * stride;
    const uint64_t lo = std::max(at, pos), hi = std::min(at + item, end);
    if (lo < hi) std::memcpy(out + j * item + (lo - at), piece + (lo - pos), hi - lo);
  }
}

Status LastAxisSampleReader::Read(uint64_t i, const ArrayDataReader& read, uint8_t* out) {
  const uint64_t step = piece_ == 0 ? std::max<uint64_t>(data_bytes_, 1) : piece_;
  auto read_all = [&](uint8_t* dst) -> Status {
    for (uint64_t pos = 0; pos < data_bytes_; pos += step) {
      DLIO_RETURN_NOT_OK(read(pos, std::min(step, data_bytes_ - pos), dst + pos));
    }
    return Status::OK();
  };
  if (keep_) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!have_array_) {
      array_.resize(data_bytes_);
      DLIO_RETURN_NOT_OK(read_all(array_.data()));
      have_array_ = true;
    }
    GatherSamplePiece(s_, i, 0, array_.data(), data_bytes_, out);
    return Status::OK();
  }
  if (!s_.strided()) return read_all(out);  // one sample: the whole array, in place
  std::vector<uint8_t> buf(std::min(step, data_bytes_));
  for (uint64_t pos = 0; pos < data_bytes_; pos += step) {
    const uint64_t len = std::min(step, data_bytes_ - pos);
    DLIO_RETURN_NOT_OK(read(pos, len, buf.data()));
    GatherSamplePiece(s_, i, pos, buf.data(), len, out);
  }
  return Status::OK();
}

std::string ArraySamplesJson(const ArraySamples& s, std::optional<uint64_t> labels) {
  std::string out = ",\"sample_layout\":\"";
  out += s.layout_name();
  out += "\",\"layout_basis\":\"";
  out += s.basis;
  out += '"';
  if (labels) {
    out += ",\"labels\":";
    out += std::to_string(*labels);
  }
  return out;
}

std::vector<uint64_t> ArrayShape(SampleLayout layout, uint64_t n, uint64_t record,
                                 const std::vector<uint64_t>& dims, uint64_t itemsize) {
  itemsize = std::max<uint64_t>(1, itemsize);
  const uint64_t items = record / itemsize;
  if (!dims.empty()) {
    uint64_t product = 1;
    for (uint64_t d : dims) product *= d;  // config validation bounds it by 1 TiB
    if (product == items) {
      std::vector<uint64_t> shape;
      if (layout == SampleLayout::kFirstAxis) shape.push_back(n);
      shape.insert(shape.end(), dims.begin(), dims.end());
      if (layout != SampleLayout::kFirstAxis) shape.push_back(n);
      return shape;
    }
  }
  if (layout == SampleLayout::kFirstAxis) return {n, items};
  uint64_t a = IntSqrt(items);
  while (a > 1 && items % a != 0) --a;
  return {a, a == 0 ? 0 : items / a, n};
}

WrittenArray ArrayToWrite(const FormatOptions& o, uint64_t n, uint64_t record) {
  WrittenArray w;
  // An element type numpy does not know: flat uint8 rows.
  const ElementType* type = FindElementType(o.record_element_type);
  const bool typed = type != nullptr && record % type->itemsize == 0;
  w.descr = typed ? std::string(type->descr) : "|u1";
  w.itemsize = typed ? type->itemsize : 1;
  w.shape = ArrayShape(NpyOf(o.formats).sample_layout, n, record,
                       typed ? o.record_dims : std::vector<uint64_t>{}, w.itemsize);
  return w;
}

Status ForEachArrayChunk(const FileSpec& spec, SampleLayout layout, uint64_t itemsize, size_t chunk,
                         const std::function<Status(const uint8_t*, size_t)>& sink) {
  const uint64_t n = spec.sample_sizes.size();
  if (layout == SampleLayout::kFirstAxis || n <= 1) return ForEachDataChunk(spec, chunk, sink);
  // Item j of sample i goes to j * n + i: generate a block of items of every sample, then
  // interleave them.
  const uint64_t record = spec.sample_sizes[0];
  const uint64_t k = std::max<uint64_t>(1, itemsize);
  const uint64_t block = k * std::max<uint64_t>(1, std::min<uint64_t>(record / k, chunk / (n * k)));
  std::vector<uint8_t> items(block), out(block * n);
  for (uint64_t j0 = 0; j0 < record; j0 += block) {
    const uint64_t len = std::min(block, record - j0);
    for (uint64_t i = 0; i < n; ++i) {
      FillSampleBytes(spec.seed, i, j0, items.data(), len);
      for (uint64_t e = 0; e < len / k; ++e) {
        std::memcpy(&out[(e * n + i) * k], &items[e * k], k);
      }
    }
    DLIO_RETURN_NOT_OK(sink(out.data(), len * n));
  }
  return Status::OK();
}

}  // namespace dlio::format_internal
