// Format: a file layout, with a writer (data generation) and a reader (behind a DataSource).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dlio/config_enums.h"
#include "dlio/option_sections.h"
#include "dlio/registry.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio {

class Comm;

// The bytes of one sample. Reused across reads so the hot path allocates nothing in steady
// state: Resize() grows capacity only. Not thread-safe (one owner at a time).
class SampleBuffer {
 public:
  explicit SampleBuffer(size_t alignment = 64) : buf_(alignment) {}
  Status Resize(size_t n) {
    DropView();
    return buf_.Resize(n);
  }
  // Caller-owned memory instead of the heap until a Resize needs more (AlignedBuffer::Borrow).
  void Borrow(uint8_t* data, size_t capacity) {
    DropView();
    buf_.Borrow(data, capacity);
  }
  // A view's bytes (SetView) are the reader's and must not be written through data().
  uint8_t* data() { return has_view_ ? const_cast<uint8_t*>(view_) : buf_.data(); }
  const uint8_t* data() const { return has_view_ ? view_ : buf_.data(); }
  size_t size() const { return has_view_ ? view_size_ : buf_.size(); }
  size_t capacity() const { return buf_.capacity(); }

  // Set by the owner of a buffer whose reader reads no byte of the sample, only its size (a
  // pipeline's ReadScratch, PipelineOptions::deliver_sample_bytes false): a format may then serve
  // a sample it already holds in memory as a view (SetView) instead of copying it in. Default
  // false; stays across reads.
  void set_views_allowed(bool allowed) { views_allowed_ = allowed; }
  bool views_allowed() const { return views_allowed_; }
  // Memory the owner of a buffer that allows views lends the formats to read into bytes they
  // only hand out as views or skip (a parquet row group's column chunks): the same memory for
  // every read through this buffer, so those reads land in pages already mapped and warm in the
  // CPU's caches rather than in fresh ones (a pipeline reader thread's ReadScratch). Bytes read
  // there last only until the next read there, by whichever reader: a view of them may then show
  // other bytes of the same size, which a caller that reads no byte never looks at. Null (the
  // default): formats read into memory of their own.
  void set_landing(std::shared_ptr<AlignedBuffer> landing) { landing_ = std::move(landing); }
  const std::shared_ptr<AlignedBuffer>& landing() const { return landing_; }
  // Serves the sample as the `size` bytes at `data`, in memory `keep` keeps alive, until the next
  // Resize, Borrow or SetView (which let `keep` go). The buffer's own memory stays as it was.
  void SetView(const uint8_t* data, size_t size, std::shared_ptr<const void> keep) {
    view_ = data;
    view_size_ = size;
    view_keep_ = std::move(keep);
    has_view_ = true;
  }
  bool has_view() const { return has_view_; }
  // The object keeping the view's bytes alive (SetView's `keep`; null without a view), so a
  // format can tell that the buffer already holds what it would keep and move the view within
  // it (MoveView) without touching `keep`'s count.
  const void* view_keeper() const { return has_view_ ? view_keep_.get() : nullptr; }
  // Serves other bytes kept alive by the same object as the current view. Requires has_view().
  void MoveView(const uint8_t* data, size_t size) {
    view_ = data;
    view_size_ = size;
  }

  // The object a framework model read the sample out of (the numpy model's array). By default
  // Hold frees it at once, as a loop that drops the array once it has the sample does. With
  // KeepHeld(true) it stays until the next Hold has the next one (a Python name rebound to the
  // next array) or until TakeHeld hands it over: a DataLoader worker keeps its batch's arrays
  // until it collates them. Where the memory is freed decides whether the next large read lands
  // in fresh or warm pages (docs/io_models.md, "glibc's thresholds").
  void KeepHeld(bool keep) { keep_held_ = keep; }
  void Hold(std::shared_ptr<const void> object) {
    if (keep_held_) held_ = std::move(object);
  }
  std::shared_ptr<const void> TakeHeld() { return std::move(held_); }

 private:
  void DropView() {
    if (!has_view_) return;
    has_view_ = false;
    view_keep_.reset();
  }

  AlignedBuffer buf_;
  bool keep_held_ = false;
  std::shared_ptr<const void> held_;
  bool views_allowed_ = false;
  std::shared_ptr<AlignedBuffer> landing_;
  bool has_view_ = false;
  const uint8_t* view_ = nullptr;
  size_t view_size_ = 0;
  std::shared_ptr<const void> view_keep_;
};

// One sample served as a view (FormatReader::ViewsOfHeld): its `size` bytes at `data`.
struct SampleSpan {
  const uint8_t* data = nullptr;
  uint64_t size = 0;
};

// What a writer puts in one file.
struct FileSpec {
  std::vector<uint64_t> sample_sizes;  // bytes of each sample, in order
  uint64_t seed = 0;                   // content and labels derive from it
};

// The default of FormatOptions::max_decoded_bytes (reader.max_decoded_bytes): 1 GiB.
inline constexpr uint64_t kDefaultMaxDecodedBytes = uint64_t{1} << 30;

// A sample read that opening its file may serve: a DataSource opening a file to read sample
// `index` into `out` says so, and a reader whose open reads the data anyway (the numpy model
// without client costs: a file's open is its first np.load) reads that sample straight into
// `out` during the open and sets `served`; the DataSource then skips ReadSample. Other readers
// ignore it.
struct FirstRead {
  uint64_t index = 0;
  SampleBuffer* out = nullptr;
  bool served = false;
};

// Format-level knobs (from dataset.* and reader.*): what every format may read, and the sections
// formats declare and parse themselves (`formats`: a format reads its own and ignores the
// others'). Plain data; copy freely.
struct FormatOptions {
  std::string compression = "none";  // none, gzip (alias zlib, deflate); hdf5 also lzf, szip
  int compression_level = 4;         // 0-9 (gzip/deflate)
  // Writers of FormatCapabilities::compression_ratio: each compressed unit (an hdf5 chunk, an npz
  // member) is stored this many times smaller than its bytes, drawn per unit (normal of this mean
  // and stdev, at least 1) as a deflate stream of that length: its first bytes random, the rest
  // zeros. 1 with stdev 0: dlio's random bytes, which do not compress.
  double compression_ratio = 1.0;
  double compression_ratio_stdev = 0.0;
  bool decode = false;  // pipelines call Format::Decode on each sample
  // With decode: image readers (jpeg, png) refuse at Open, from the header, an image whose
  // decoded pixels would exceed this many bytes (a decompression bomb), naming the file.
  uint64_t max_decoded_bytes = kDefaultMaxDecodedBytes;
  uint64_t transfer_size = 262144;  // bytes per read request for streaming readers (0 = whole)
  // Samples each file should hold (dataset.num_samples_per_file; 0 = unknown). webdataset trusts
  // it, as WebDataset never counts (0: the reader counts a shard's samples at open, one 512-byte
  // read per header); raw splits a file of S bytes into samples of S / samples_per_file bytes (0:
  // the file is one sample; a size that does not divide is Corruption naming the file); each of
  // synthetic's virtual files holds that many samples (0: one).
  uint64_t samples_per_file = 0;
  // Bytes per sample (dataset.record_length_bytes): the synthetic format's virtual samples.
  uint64_t record_length_bytes = 65536;
  // DLIO's record shape (dataset.record_dims; dataset.record_element_type, a numpy name,
  // core/element_type.h). npy, npz and hdf5 writers produce arrays of these dimensions and type
  // when a sample's size matches (empty dims: flat uint8 rows); a csv row holds the product of
  // the dimensions (0 counted as 1; without them, one float32 value per 4 bytes of the record).
  std::vector<uint64_t> record_dims;
  std::string record_element_type = "uint8";
  // reader.read_type: memory loads the dataset before training, and a reader may keep what it
  // read of a file while it is open (npy and npz: np.load's array, as DLIO's read_type memory).
  ReadType read_type = ReadType::kOnDemand;
  bool direct = false;  // open with FileOptions::direct
  bool verify = true;   // check checksums where the format has them
  // reader.io_model: whose requests the reader issues. kAuto: the format's default (the first of
  // FormatCapabilities::io_models, else native); kPytorch: the format's default model (the
  // worker processes are the pipeline's part). Config validation has refused a model the format
  // does not declare, so a reader may treat any other value as kNative.
  IoModel io_model = IoModel::kAuto;
  // reader.client_costs framework: a framework model also does the framework's client work
  // (np.load's fresh array and copies, zipfile's CRC-32). false (none): the same requests, read
  // into reused buffers, with none of that work.
  bool framework_client_costs = false;
  // Set only for the duration of one Format::Open by the DataSource that opens a file to read a
  // sample of it (nullptr otherwise); a reader must not keep it past Open.
  FirstRead* first_read = nullptr;

  // The options of the formats that declare their own keys and parse them into their own type
  // (parquet's ParquetOptions, format/parquet/parquet_options.h; webdataset's WebdatasetOptions,
  // format/webdataset/webdataset_options.h; hdf5's Hdf5Options, format/hdf5/hdf5_options.h;
  // npy and npz's NpyOptions, format/npy_options.h; tfrecord's TfrecordOptions,
  // format/tfrecord/tfrecord_options.h; csv's CsvOptions, format/csv/csv_options.h; jpeg's and
  // png's ImageOptions, format/image/image_options.h; the pyio I/O model's PyioOptions,
  // io_models/pyio_options.h, which every format's pyio reader reads), as the config holds them
  // (DatasetConfig::formats); a format reads its own (`formats.Value<ParquetOptions>()`).
  OptionSections formats;
};

// One open file of a format. ReadSample is safe for concurrent use from many threads (readers are
// built on File::ReadAt); implementations with state (a decompression stream) lock internally.
class FormatReader {
 public:
  virtual ~FormatReader() = default;
  virtual uint64_t num_samples() const = 0;
  // Stored size of sample i in bytes (what ReadSample returns).
  virtual uint64_t sample_size(uint64_t i) const = 0;
  // Reads sample i into `out` (resized to the sample's size). OutOfRange past the end;
  // Corruption naming the file and offset when the bytes do not parse.
  virtual Status ReadSample(uint64_t i, SampleBuffer* out) = 0;
  // Samples first, first + 1, ... (at most n) as views of what `out` already holds of this
  // reader's (SampleBuffer::view_keeper, from an earlier ReadSample into it), with no request,
  // lock or count: their bytes and sizes into spans[0..), and `out` left holding the last one as
  // its view, as ReadSample of each in turn would leave it (which would serve them the same way,
  // from what the buffer holds). Returns how many from `first` it served; 0 when it serves none
  // (the buffer holds nothing of this reader's that has them, or the format keeps no views), and
  // the caller reads the rest with ReadSample.
  virtual uint64_t ViewsOfHeld(uint64_t first, uint64_t n, SampleBuffer* out, SampleSpan* spans) {
    (void)first, (void)n, (void)out, (void)spans;
    return 0;
  }
  // A JSON object describing the file for `dlio-run inspect` (format-specific keys).
  virtual std::string DescribeJson() const = 0;
  // What a program that opens the file only to learn about it reads besides the open (a
  // Dataset's __init__ counting samples: reader.open_files_at_start): nothing by default; the
  // h5py model's root attributes under reader.h5py_read_attributes (dict(f.attrs)).
  virtual Status ReadOpenedFileFacts() { return Status::OK(); }
};

// The ranks that write one shared file together (Format::WriteShared).
struct SharedWrite {
  int rank = 0;
  int world = 1;
  // All ranks, for barriers and agreeing on errors; its mpi_comm_handle() for MPI-IO writers.
  Comm* comm = nullptr;
};

// What a format can do, so config validation asks instead of listing format names. Every field
// defaults to false: a format that declares nothing gets no special treatment.
struct FormatCapabilities {
  // Reading sample i issues the same calls, of sizes that depend only on the sample sizes, on
  // every rank (npy, npz, indexed_binary; hdf5 through parallel HDF5), so storage.mpiio_collective
  // may read its files collectively (docs/scaling.md).
  bool collective_reads = false;
  // With dataset.metadata_file the reader looks every sample up in a separate file (hdf5): reads
  // that are independent per rank, so collective reads refuse that combination.
  bool per_sample_metadata_file = false;
  // The framework I/O models (reader.io_model) the reader reproduces besides native; the first is
  // the format's default under `auto` (and its reader under `pytorch`) unless native_under_auto.
  // Empty: native only.
  std::vector<IoModel> io_models;
  // `auto` (and `pytorch`) read with native although io_models is not empty: the models are
  // there to be asked for by name (jpeg's and png's pil; `dlio-run fit` picks jpeg's from a
  // trace).
  bool native_under_auto = false;
  // Every reader (every I/O model) writes a sample's bytes into the caller's buffer front to back
  // and reads none of them back once 256 KiB more were written (npy, npz: reads, a CRC over each
  // inflate call's output of at most 256 KiB, zlib's 32 KiB window), so the pytorch workers may
  // read into a buffer that keeps only a sample's first bytes (PipelineFacts::bounded_read_bytes,
  // PytorchLoaderOptions::bounded_read_bytes).
  bool streams_samples = false;
  // A file holds one sample whatever dataset.num_samples_per_file says (jpeg, png: one image per
  // file, as DLIO's generators write them), so config validation refuses any other value.
  bool one_sample_per_file = false;
  // Reads dataset.hdf5_lookup_rows (hdf5: rows of a small lookup table read per sample); config
  // validation refuses the key with a format that would ignore it.
  bool lookup_rows = false;
  // Lays each sample out as a group of member datasets (hdf5: dataset.hdf5_sample_groups); config
  // validation refuses the key with a format that would ignore it.
  bool sample_groups = false;
  // Writes attributes on each file's root and reads them after each sample (hdf5:
  // dataset.hdf5_root_attributes, reader.h5py_read_attributes); config validation refuses the
  // keys with a format that would ignore them.
  bool root_attributes = false;
  // Writes compressible records of a chosen compression ratio (FormatOptions::compression_ratio:
  // hdf5's gzip chunks, npz's deflated members); config validation refuses
  // dataset.compression_ratio with a format that would ignore it.
  bool compression_ratio = false;
  // Splits a record over dataset.hdf5.num_dset_per_record datasets (hdf5: record_dims[0] across
  // /records_0..N-1), which needs dataset.record_dims and no dataset.metadata_file when N > 1.
  bool datasets_per_record = false;
  // Files are shards streamed whole by one reader (webdataset): samples are split over ranks by
  // shard (Sharding::kShard), each shard read in order, and shuffled only through an in-memory
  // buffer after the reads (AdaptSamplerToFormat in dlio/loop.h).
  bool shard_streams = false;
  // A file is an archive of named arrays a load may read several of (npz: reader.npz_members);
  // config validation refuses that key with another format.
  bool member_loads = false;
  // A record is uint8 pixels whatever dataset.record_element_type says (jpeg, png: DLIO resets
  // the element type of images to uint8), so a record of dataset.record_dims holds one byte per
  // element (ApplyFormatRecordShapes, dlio/registries.h).
  bool uint8_records = false;
  // Where samples begin is not stored in a file but given by the config (raw: bytes back to back,
  // split by dataset.num_samples_per_file), so a reader opened without that key sees one sample
  // per file: `dlio-run fit` then takes the samples from the trace's reads, not from the file.
  bool samples_from_config = false;
  // The mmap reader honours reader.mmap_head_bytes (raw: a head read through Python's buffer on a
  // first open, then the file mapped, as PIL loads a raw image); config validation refuses the
  // key with a format whose mmap reader would ignore it.
  bool mmap_head = false;
  // The pyio reader reads a file of several samples as records (raw: `f.seek(i * size)`, then one
  // call, on a Python file kept open, io_models/pyio_records_reader.h); without it pyio reads a
  // file whole as its one sample and config validation refuses dataset.num_samples_per_file > 1.
  bool pyio_records = false;
};

// The request model a reader of a format declaring `capabilities` uses for the reader.io_model
// value `requested`: a request model itself; the aliases auto and pytorch (whose request model is
// auto's, I/O-model table) become the format's default (native when it declares none or
// native_under_auto).
IoModel ResolveIoModel(IoModel requested, const FormatCapabilities& capabilities);

// Whether request model `model`'s readers do the framework's own client work under
// reader.client_costs framework (numpy: a fresh array per load; pil, pyio: new bytes per read;
// pandas: a new bytes object per chunk), as the I/O-model table says. false: client_costs changes
// no reader of it (native, h5py, tf.data, mmap, tarfile, pyarrow; a loader's worker processes
// still honour it).
bool IoModelDoesClientWork(IoModel model);

// The read requests (offset, size), in order, that reader.io_model pyio makes for a file of
// `file_size` bytes read through a Python buffer of `buffer_size` bytes with the calls
// reader.pyio_head_bytes `head_bytes`, reader.pyio_read_size `read_size`, reader.pyio_call
// `call`, reader.pyio_tail_bytes `tail_bytes`, reader.pyio_tail_read_size `tail_read_size` and
// reader.pyio_crop_bytes `crop_bytes`, the crop beginning at `crop_at`, and
// reader.pyio_end_reads `end_reads` (io_models/pyio_reader.h): what `dlio-run fit` holds a trace's
// reads against.
Result<std::vector<std::pair<uint64_t, uint64_t>>> PyioReadRequests(
    uint64_t file_size, size_t buffer_size, uint64_t head_bytes, uint64_t read_size, PyioCall call,
    uint64_t tail_bytes = 0, uint64_t tail_read_size = 0, uint64_t crop_bytes = 0,
    uint64_t crop_at = 0, uint64_t end_reads = 0);
// Where reader.pyio_crop_bytes' crop number `draw` (0, 1, ...) of the file at `path` begins: drawn
// from the path and the draw over [head_bytes, file_size - crop_bytes] (head_bytes when the crop
// does not fit, where the reader reads from the head to the file's end). The same offsets each
// run; a reader opened anew (each epoch under reader.reopen_files_each_epoch) draws from 0 again.
uint64_t PyioCropOffset(const std::string& path, uint64_t draw, uint64_t file_size,
                        uint64_t head_bytes, uint64_t crop_bytes);

class Format {
 public:
  virtual ~Format() = default;
  virtual std::string name() const = 0;
  // File name extension without the dot ("npz"); "" for formats without files (synthetic). The
  // generator names its files with it, as the Python DLIO names them (hdf5: "hdf5").
  virtual std::string extension() const = 0;
  // Every extension a dataset's files of this format may carry when they are listed (the first is
  // extension()): hdf5 also takes "h5", which h5py programs write. Default: extension() alone.
  virtual std::vector<std::string> read_extensions() const { return {extension()}; }
  // Whether samples within one file may differ in size (false: the generator draws one size per
  // file, as DLIO does for npz/npy).
  virtual bool variable_sample_sizes() const = 0;
  // Whether a written sample stores exactly FileSpec::sample_sizes[i] bytes. False for formats
  // whose stored bytes are an encoding of the sample (csv text, jpeg/png images): their writers
  // aim at the requested size and readers report the stored size.
  virtual bool exact_sample_sizes() const { return true; }
  // About how many bytes the writer stores per byte of dataset.record_length_bytes (csv text:
  // ~2.65) when it writes images of `image_channels` channels (dataset.image_channels; other
  // formats ignore it); `dlio-run fit` divides stored sample sizes by it to get a record length.
  virtual double stored_bytes_per_record_byte(uint32_t image_channels) const {
    (void)image_channels;
    return 1.0;
  }
  // Whether the format touches storage at all (false for synthetic).
  virtual bool uses_files() const { return true; }
  // What the format can do (see FormatCapabilities). Default: nothing special.
  virtual FormatCapabilities capabilities() const { return {}; }
  // The request models (reader.io_model) the format has a reader registered for: native and
  // every model of capabilities().io_models (tests hold the two against each other). Default:
  // native only, the reader Open builds.
  virtual std::vector<IoModel> reader_models() const { return {IoModel::kNative}; }
  // The bytes its reader (with `options`) reads at once into a caller's landing buffer
  // (SampleBuffer::landing) in files this format writes with `options`: what a pipeline reader
  // thread's landing buffer gets, and touches, when the pipeline is built, so the first epoch does
  // not pay its page faults (PipelineOptions::reserve_landing_bytes). A file whose reads need
  // more still gets a larger buffer then. Default 0: the format lands nothing.
  virtual uint64_t landing_bytes(const FormatOptions& options) const {
    (void)options;
    return 0;
  }

  // Writes `spec` to `path`, creating it (OpenMode::kCreateNew: never overwrites).
  virtual Status Write(Storage* storage, const std::string& path, const FileSpec& spec,
                       const FormatOptions& options) const = 0;
  // Opens `path` for reading. The reader keeps its File open until destroyed.
  virtual Result<std::unique_ptr<FormatReader>> Open(Storage* storage, const std::string& path,
                                                     const FormatOptions& options) const = 0;

  // Decoding (reader.decode): turns a sample's stored bytes into what a training step consumes
  // (pixels for jpeg/png, float32 values for csv). Pipelines call it on their preprocessing
  // threads, so its CPU time counts as preprocessing. Safe for concurrent use; `out` is resized.
  // Formats whose stored bytes are the sample return false from has_decoder().
  virtual bool has_decoder() const { return false; }
  virtual Status Decode(const uint8_t* data, size_t size, SampleBuffer* out) const {
    (void)data;
    (void)size;
    (void)out;
    return Status::Unimplemented("format " + name() + " has no decoder (reader.decode)");
  }
  // Decode with a limit: formats whose decoded size can exceed the stored size by far (jpeg,
  // png) read the decoded size from the header first and refuse, before allocating anything, a
  // sample that would decode to more than `max_decoded_bytes` (ResourceExhausted naming the
  // dimensions and reader.max_decoded_bytes); their Decode applies kDefaultMaxDecodedBytes.
  // Default: Decode (a decoded size bounded by the stored size needs no limit).
  virtual Status DecodeWithLimit(const uint8_t* data, size_t size, uint64_t max_decoded_bytes,
                                 SampleBuffer* out) const {
    (void)max_decoded_bytes;
    return Decode(data, size, out);
  }
  // Shared files written by all ranks (a one-file dataset under MPI, docs/scaling.md). Whether
  // WriteShared can write a file on `storage` with `options` for the ranks of `shared`; false (the
  // default) leaves the file to rank 0's Write.
  virtual bool CanWriteShared(const Storage& storage, const FormatOptions& options,
                              const SharedWrite& shared) const {
    (void)storage;
    (void)options;
    (void)shared;
    return false;
  }
  // Collective: every rank calls it with the same arguments. Writes `path` (and its companions)
  // with the same bytes Write would, each rank writing its share of the samples; returns OK on
  // every rank or an error on every rank (Cancelled on ranks whose own part succeeded), and on
  // error removes what it created. Only called when CanWriteShared is true.
  virtual Status WriteShared(Storage* storage, const std::string& path, const FileSpec& spec,
                             const FormatOptions& options, const SharedWrite& shared) const {
    (void)storage;
    (void)path;
    (void)spec;
    (void)options;
    (void)shared;
    return Status::Unimplemented("format " + name() + " cannot write a shared file");
  }
  // Files a writer creates beside `path` (indexes, metadata files), so generation can account
  // for them and `inspect` can find them. Default: none.
  virtual std::vector<std::string> CompanionFiles(const std::string& path,
                                                  const FormatOptions& options) const {
    (void)path;
    (void)options;
    return {};
  }
};

using FormatFactory = std::function<Result<std::unique_ptr<Format>>()>;

// How a file of a format is recognised when it is met outside a dataset listing (`dlio-run
// inspect`, `dlio-run fit`): what the format registry holds of each format beside its factory
// (the entry's `capabilities`), so it is known without building the format, even one that was not
// compiled in (hdf5). Plain data; a format that declares nothing is never detected.
struct FormatHints {
  // File name suffixes, lower case and without the dot, that name the format ("jpg", "jpeg").
  // Wider than Format::read_extensions(), which a dataset listing keeps to.
  std::vector<std::string> suffixes;
  // The bytes a file of the format starts with, one of them (npz: a zip's local header or an
  // empty zip's end record). A file whose suffix names a format declaring some must start so.
  std::vector<std::string> magics;
  // A file that beside it has one of its name plus this suffix (indexed_binary: ".off.idx") is of
  // the format when its suffix and first bytes name none ("" = no such companion).
  std::string index_suffix;
  // The suffixes are generic names (raw: bin, dat) rather than the format's own: a file so named
  // that starts with another format's magic bytes, or has its index companion, is of that format.
  bool generic_suffixes = false;
};

// The formats by name (Registries::formats), each entry with its FormatHints.
using FormatRegistry = Registry<FormatFactory, FormatHints>;
// Registers the built-in formats; called by RegisterBuiltins.
Status RegisterBuiltinFormats(FormatRegistry* formats);

// The first format, by name, of `formats` whose hints list `suffix` (compared as given: lower-case
// it first); "" when none does.
std::string FormatOfSuffix(const FormatRegistry& formats, std::string_view suffix);

// Guesses a file's format from its suffix and first bytes as the hints of `formats` describe
// them, for `dlio-run inspect` and `dlio-run fit`: the format the suffix (any case) names, which
// must start with one of its magic bytes when it declares some (else Corruption naming the file);
// else the format whose magic bytes the file starts with; else one whose index companion exists;
// else the format whose generic suffixes name it (FormatHints::generic_suffixes, checked after
// the magic bytes and companions); else InvalidArgument naming the file and its suffix.
Result<std::string> DetectFormat(const FormatRegistry& formats, Storage* storage,
                                 const std::string& path);

}  // namespace dlio
