"""A two-thread TFRecord streaming reader, as tf.data.TFRecordDataset(files, buffer_size=256 KiB,
num_parallel_reads=2) reads (TensorFlow is not installable here): each thread streams its files
front to back through a 256 KiB buffer filled by pread at consecutive offsets (RecordReader over
BufferedInputStream), parses the records, and hands them to the training loop (batch 8, 3 ms
emulated step, 2 epochs).

  tfrecord_stream.py make DIR   writes DIR/train/img_<i>_of_8.tfrecord (records of ~100 KiB)
  tfrecord_stream.py run DIR    reads them
"""
import os
import queue
import struct
import sys
import threading
import time

import numpy as np

FILES = 8
BUFFER = 256 * 1024
_TABLE = []


def crc32c(data):
    if not _TABLE:
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            _TABLE.append(c)
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def varint(n):
    out = b''
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(number, payload):
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def example(image, label):
    """A tf.train.Example {image: bytes_list, label: int64_list}, encoded by hand."""
    image_feature = field(1, field(1, image))            # Feature.bytes_list.value
    label_feature = field(3, field(1, varint(label)))    # Feature.int64_list.value (packed)
    features = (field(1, field(1, b'image') + field(2, image_feature)) +
                field(1, field(1, b'label') + field(2, label_feature)))
    return field(1, features)


def paths(data):
    return [os.path.join(data, 'train', 'img_%d_of_%d.tfrecord' % (i, FILES)) for i in range(FILES)]


def make(data):
    os.makedirs(os.path.join(data, 'train'), exist_ok=True)
    rng = np.random.default_rng(4)
    for p in paths(data):
        with open(p, 'wb') as f:
            for _ in range(10):
                n = int(max(1024, rng.normal(100 * 1024, 20 * 1024)))
                payload = example(rng.integers(0, 255, n, dtype=np.uint8).tobytes(), 1)
                length = struct.pack('<Q', len(payload))
                f.write(length + struct.pack('<I', masked(crc32c(length))) + payload +
                        struct.pack('<I', masked(crc32c(payload))))


class Stream:
    """BufferedInputStream: reads of exactly BUFFER bytes at consecutive offsets."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDONLY)
        self.pos = 0
        self.buf = b''

    def read(self, n):
        out = b''
        while len(out) < n:
            if not self.buf:
                self.buf = os.pread(self.fd, BUFFER, self.pos)
                self.pos += len(self.buf)
                if not self.buf:
                    return None
            take = min(n - len(out), len(self.buf))
            out += self.buf[:take]
            self.buf = self.buf[take:]
        return out

    def close(self):
        os.close(self.fd)


def stream_files(files, out):
    for p in files:
        s = Stream(p)
        while True:
            header = s.read(12)
            if header is None:
                break
            (n,) = struct.unpack('<Q', header[:8])
            out.put(s.read(n))
            s.read(4)
        s.close()
    out.put(None)


def run(data):
    files = paths(data)
    for _ in range(2):
        q = queue.Queue(maxsize=16)
        threads = [threading.Thread(target=stream_files, args=(files[t::2], q)) for t in range(2)]
        for t in threads:
            t.start()
        done, batch = 0, 0
        while done < len(threads):
            record = q.get()
            if record is None:
                done += 1
                continue
            batch += 1
            if batch == 8:
                time.sleep(0.003)
                batch = 0
        for t in threads:
            t.join()


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
