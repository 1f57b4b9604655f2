"""An independent reader of TFRecord files that issues the requests TensorFlow's
TFRecordDataset issues (TensorFlow itself is not installable here). Written from TF's source:

- tensorflow/core/kernels/data/tf_record_dataset_op.cc: one SequentialRecordReader per file,
  records read until ReadRecord says OutOfRange, then the next file;
- xla/tsl/lib/io/record_reader.cc: ReadRecord = ReadChecksummed(8) (12 bytes: length + CRC),
  then ReadChecksummed(length) (payload + 4-byte CRC), both through the input stream;
- xla/tsl/lib/io/buffered_inputstream.cc: ReadNBytes copies from a buffer of buffer_size bytes,
  refilled (FillBuffer) with one ReadNBytes(buffer_size) of the underlying stream when empty; a
  fill that fails (short: OutOfRange) is remembered, and no request follows it;
- xla/tsl/lib/io/random_inputstream.cc + xla/tsl/platform/default/posix_file_system.cc: a
  ReadNBytes(n) is one RandomAccessFile::Read(pos, n): pread(fd, n, pos), repeated for the rest
  when short (the repeat at the end of the file returns 0 bytes). One os.pread here stands for
  one Read: dlio's storage log records a ReadAt the same way, and both issue the zero-byte
  repeat at the system-call level.
- xla/tsl/lib/io/zlib_inputstream.cc (compression_type GZIP or ZLIB; RecordReader puts it on
  top of the BufferedInputStream): ReadNBytes hands out inflated bytes; when inflate makes no
  progress, ReadFromStream asks the buffered stream for input_buffer_size (256 KiB) minus the
  input not yet consumed; output_buffer_size is 256 KiB too (ZlibCompressionOptions); after the
  end of a gzip member the inflater is reset (members may follow one another).
- python/data/ops/readers.py: num_parallel_reads = k > 1 is a deterministic parallel
  interleave of the files with cycle_length k and block_length 1.

Usage: tfdata_reference.py BUFFER_SIZE CYCLE COMPRESSION FILE...  (CYCLE 0 or 1: one file after
another; COMPRESSION none, gzip or zlib).
Prints one line per record: "<file index> <record index> <payload length>".
"""
import os
import struct
import sys
import zlib

ZLIB_BUFFER = 256 * 1024  # ZlibCompressionOptions input_buffer_size and output_buffer_size


class BufferedStream:
    def __init__(self, path, buffer_size):
        self.fd = os.open(path, os.O_RDONLY)
        self.size = buffer_size
        self.buf = b""
        self.pos = 0
        self.fill_at = 0
        self.failed = False  # a fill came back short: file_status_ keeps OutOfRange

    def fill(self):
        if self.failed:
            self.buf, self.pos = b"", 0
            return
        self.buf = os.pread(self.fd, self.size, self.fill_at)
        self.pos = 0
        self.fill_at += len(self.buf)
        if len(self.buf) < self.size:
            self.failed = True

    def read_n(self, n):
        out = bytearray()
        while len(out) < n:
            if self.pos == len(self.buf):
                if self.failed:
                    break
                self.fill()
                if not self.buf:
                    break
            k = min(n - len(out), len(self.buf) - self.pos)
            out += self.buf[self.pos:self.pos + k]
            self.pos += k
        return bytes(out)

    def close(self):
        os.close(self.fd)


class ZlibStream:
    def __init__(self, inner, gzip):
        self.inner = inner
        self.wbits = 31 if gzip else 15
        self.gzip = gzip
        self.inflater = zlib.decompressobj(self.wbits)
        self.pending = b""  # input read from the buffered stream, not yet inflated
        self.out = b""
        self.pos = 0

    def read_n(self, n):
        out = bytearray()
        while len(out) < n:
            if self.pos < len(self.out):
                k = min(n - len(out), len(self.out) - self.pos)
                out += self.out[self.pos:self.pos + k]
                self.pos += k
                continue
            self.out = self.inflater.decompress(self.pending, ZLIB_BUFFER)
            self.pending = self.inflater.unconsumed_tail
            self.pos = 0
            if self.inflater.eof and self.gzip:  # the next gzip member, if any
                self.pending = self.inflater.unused_data + self.pending
                self.inflater = zlib.decompressobj(self.wbits)
            if self.out:
                continue
            data = self.inner.read_n(ZLIB_BUFFER - len(self.pending))
            if not data:
                break
            self.pending += data
        return bytes(out)

    def close(self):
        self.inner.close()


def open_stream(path, buffer_size, compression):
    stream = BufferedStream(path, buffer_size)
    if compression == "none":
        return stream
    return ZlibStream(stream, compression == "gzip")


def read_record(stream):
    header = stream.read_n(12)
    if not header:
        return None
    if len(header) < 12:
        raise ValueError("truncated header")
    (length,) = struct.unpack("<Q", header[:8])
    data = stream.read_n(length + 4)
    if len(data) != length + 4:
        raise ValueError("truncated record")
    return length


def main():
    buffer_size = int(sys.argv[1])
    cycle = max(1, int(sys.argv[2]))
    compression = sys.argv[3]
    files = sys.argv[4:]
    pending = list(range(len(files)))
    active = []  # [file index, stream, records read]
    while len(active) < cycle and pending:
        f = pending.pop(0)
        active.append([f, open_stream(files[f], buffer_size, compression), 0])
    slot = 0
    while active:
        entry = active[slot]
        length = read_record(entry[1])
        if length is None:  # end of this file: the next file takes its place
            entry[1].close()
            if pending:
                f = pending.pop(0)
                active[slot] = [f, open_stream(files[f], buffer_size, compression), 0]
            else:
                active.pop(slot)
                if active:
                    slot %= len(active)
            continue
        print(entry[0], entry[2], length)
        entry[2] += 1
        slot = (slot + 1) % len(active)


if __name__ == "__main__":
    main()
