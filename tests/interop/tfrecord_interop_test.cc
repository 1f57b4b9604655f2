// Python reads the TFRecord files we write, and we read what Python writes as TensorFlow's
// TFRecordWriter would. The Python side has its own framing code and CRC-32C and decodes the
// Example with google.protobuf (Debian's python3-protobuf) through a module protoc generated from
// our .proto at build time (DLIO_TFRECORD_PY_DIR). Fails loudly when protobuf is missing.
#include <zlib.h>

#include <catch2/catch.hpp>

#include "format/format_test_util.h"
#include "format/formats.h"
#include "format/io_util.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

// Framing, CRC-32C and masking written from the TFRecord description, independent of dlio.
const char* const kPythonTfRecord = R"(
import struct, sys, zlib
sys.path.insert(0, sys.argv[1])
import example_pb2

POLY = 0x82F63B78
TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ POLY if c & 1 else c >> 1
    TABLE.append(c)

def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF

def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF

assert crc32c(b'123456789') == 0xE3069283

def read_records(path):
    data = open(path, 'rb').read()
    pos, out = 0, []
    while pos < len(data):
        header = data[pos:pos + 12]
        assert len(header) == 12, 'truncated header at %d' % pos
        length, length_crc = struct.unpack('<QI', header)
        assert length_crc == masked(header[:8]), 'length crc at %d' % pos
        payload = data[pos + 12:pos + 12 + length]
        (data_crc,) = struct.unpack('<I', data[pos + 12 + length:pos + 16 + length])
        assert data_crc == masked(payload), 'data crc at %d' % pos
        out.append((pos, 16 + length, payload))
        pos += 16 + length
    return out

def frame(payload):
    header = struct.pack('<Q', len(payload))
    return header + struct.pack('<I', masked(header)) + payload + struct.pack('<I', masked(payload))
)";

void RequireProtobuf() {
  const CommandResult r = RunCommand(
      SystemPython() + " -c 'import google.protobuf; print(google.protobuf.__version__)'");
  INFO("interop tests need google.protobuf in "
       << SystemPython() << " (apt-get install python3-protobuf): " << r.output);
  REQUIRE(r.exit_code == 0);
}

CommandResult RunPython(const TempDir& tmp, const std::string& body, const std::string& args) {
  const std::string path = tmp / "script.py";
  WriteTextFile(path, std::string(kPythonTfRecord) + body);
  return RunCommand(SystemPython() + " " + path + " " + DLIO_TFRECORD_PY_DIR + " " + args);
}

TEST_CASE("python with google.protobuf reads the tfrecord files we write", "[interop][tfrecord]") {
  RequireProtobuf();
  TempDir tmp;
  auto storage = BoundPosixStorage();
  FileSpec spec;
  spec.seed = 21;
  spec.sample_sizes = {0, 1, 700, 4096, 33000, 5};
  REQUIRE(MakeFormatByName("tfrecord")->Write(storage.get(), tmp / "ours.tfrecord", spec, {}).ok());

  const std::string script = R"(
path = sys.argv[2]
records = read_records(path)
index = ''.join('%d %d\n' % (off, size) for off, size, _ in records)
print('index', 'ok' if open(path + '.idx').read() == index else 'MISMATCH')
for i, (_, _, payload) in enumerate(records):
    ex = example_pb2.Example()
    ex.ParseFromString(payload)
    f = ex.features.feature
    image = f['image'].bytes_list.value
    label = f['label'].int64_list.value
    print('record', i, sorted(f.keys()), len(image), len(image[0]), zlib.crc32(image[0]),
          list(label))
)";
  const CommandResult r = RunPython(tmp, script, tmp / "ours.tfrecord");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.output.find("index ok") != std::string::npos);
  for (uint64_t i = 0; i < spec.sample_sizes.size(); ++i) {
    const std::string sample = ExpectedSample(spec, i);
    const unsigned long crc =
        crc32(0, reinterpret_cast<const Bytef*>(sample.data()), static_cast<uInt>(sample.size()));
    const std::string line = "record " + std::to_string(i) + " ['image', 'label'] 1 " +
                             std::to_string(sample.size()) + " " + std::to_string(crc) + " [" +
                             std::to_string(format_internal::SampleLabel(spec.seed, i)) + "]";
    INFO(line);
    REQUIRE(r.output.find(line + "\n") != std::string::npos);
  }
}

TEST_CASE("we read tfrecord files python writes as TensorFlow would", "[interop][tfrecord]") {
  RequireProtobuf();
  TempDir tmp;
  // Each <name>.tfrecord comes with <name>.samples: per record, uint64 LE size + the bytes our
  // reader must return.
  const std::string script = R"(
import gzip
import random
d = sys.argv[2]
rng = random.Random(5)

def write(name, examples, expect, index=False):
    records = [frame(ex.SerializeToString()) for ex in examples]
    open('%s/%s.tfrecord' % (d, name), 'wb').write(b''.join(records))
    # TFRecordWriter(options='GZIP'): one gzip member around the records.
    open('%s/%s.gz.tfrecord' % (d, name), 'wb').write(gzip.compress(b''.join(records)))
    open('%s/%s.samples' % (d, name), 'wb').write(
        b''.join(struct.pack('<Q', len(s)) + s for s in expect))
    if index:  # DALI's tfrecord2idx
        lines, pos = [], 0
        for r in records:
            lines.append('%d %d\n' % (pos, len(r)))
            pos += len(r)
        open('%s/%s.tfrecord.idx' % (d, name), 'w').write(''.join(lines))

def blob(n):
    return bytes(rng.getrandbits(8) for _ in range(n))

# Like DLIO / TF: image bytes + int64 label; no index file (TensorFlow writes none).
exs, expect = [], []
for i, n in enumerate([10, 0, 5000, 70000, 3, 300000]):  # >= 64 KiB: sample read direct
    ex = example_pb2.Example()
    img = blob(n)
    ex.features.feature['image'].bytes_list.value.append(img)
    ex.features.feature['label'].int64_list.value.append(i * 3)
    exs.append(ex)
    expect.append(img)
write('plain', exs, expect)

# No label, the image under another key among int64 and float features; with a DALI index.
exs, expect = [], []
for i, n in enumerate([1234, 1, 20000, 90000]):
    ex = example_pb2.Example()
    img = blob(n)
    ex.features.feature['img_raw'].bytes_list.value.append(img)
    ex.features.feature['height'].int64_list.value.append(32)
    ex.features.feature['width'].int64_list.value.append(i)
    ex.features.feature['score'].float_list.value.extend([0.5, 1.5])
    exs.append(ex)
    expect.append(img)
write('other_key', exs, expect, index=True)

# "image" wins over an earlier bytes feature ("caption" sorts first).
ex = example_pb2.Example()
ex.features.feature['caption'].bytes_list.value.append(b'a cat')
ex.features.feature['image'].bytes_list.value.append(b'\x89PNG pixels')
write('prefer_image', [ex], [b'\x89PNG pixels'])
print('written')
)";
  const CommandResult r = RunPython(tmp, script, tmp.path());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);

  auto storage = BoundPosixStorage();
  auto format = MakeFormatByName("tfrecord");
  for (const std::string name : {"plain", "other_key", "prefer_image"}) {
    INFO(name);
    const std::string path = tmp / (name + ".tfrecord");
    REQUIRE(*DetectBuiltinFormat(storage.get(), path) == "tfrecord");
    const std::string raw = ReadTextFile(tmp / (name + ".samples"));
    std::vector<std::string> expect;
    for (size_t pos = 0; pos < raw.size();) {
      const uint64_t n = format_internal::Le64(reinterpret_cast<const uint8_t*>(raw.data()) + pos);
      expect.push_back(raw.substr(pos + 8, n));
      pos += 8 + n;
    }
    for (uint64_t transfer : {uint64_t{0}, uint64_t{100}}) {
      FormatOptions options;
      options.io_model = IoModel::kNative;  // the index and inspect's description
      options.transfer_size = transfer;
      auto reader = format->Open(storage.get(), path, options);
      INFO(reader.status().ToString());
      REQUIRE(reader.ok());
      REQUIRE((*reader)->num_samples() == expect.size());
      const std::string json = (*reader)->DescribeJson();
      REQUIRE(json.find("\"crc_check\":{\"ok\":true") != std::string::npos);
      REQUIRE(json.find(name == "other_key" ? "\"found\":true,\"used\":true" : "\"found\":false") !=
              std::string::npos);
      SampleBuffer buf;
      for (uint64_t i = 0; i < expect.size(); ++i) {  // in order: the streaming path
        REQUIRE((*reader)->sample_size(i) == expect[i].size());
        REQUIRE((*reader)->ReadSample(i, &buf).ok());
        REQUIRE(BufferString(buf) == expect[i]);
      }
      for (uint64_t i = expect.size(); i-- > 0;) {  // backwards: the random-access path
        REQUIRE((*reader)->ReadSample(i, &buf).ok());
        REQUIRE(BufferString(buf) == expect[i]);
      }
    }
    // tf.data, the default: the file and its gzip twin as TFRecordDataset streams them, with
    // and without a trusted count.
    for (const char* compression : {"none", "gzip"}) {
      for (uint64_t count : {uint64_t{0}, uint64_t{expect.size()}}) {
        INFO(compression << " count " << count);
        FormatOptions options;
        options.transfer_size = 100;
        options.compression = compression;
        options.samples_per_file = count;
        auto reader = format->Open(
            storage.get(),
            std::string(compression) == "none" ? path : tmp / (name + ".gz.tfrecord"), options);
        INFO(reader.status().ToString());
        REQUIRE(reader.ok());
        REQUIRE((*reader)->num_samples() == expect.size());
        SampleBuffer buf;
        for (uint64_t i : {uint64_t{0}, expect.size() - 1, uint64_t{0}}) {  // with a restart
          Status st = (*reader)->ReadSample(i, &buf);
          INFO(st.ToString());
          REQUIRE(st.ok());
          REQUIRE(BufferString(buf) == expect[i]);
        }
      }
    }
  }
}

}  // namespace
}  // namespace dlio::testing
