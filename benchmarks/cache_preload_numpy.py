"""The program of benchmarks/cache_preload_numpy.sh: a plain numpy training loop that knows nothing
of dlio's cache (np.load of one .npy file per sample, a seeded shuffle per epoch, a pause per
sample as compute). Run under libdlio_cache_preload.so it reads through the cache server.

  cache_preload_numpy.py make DIR FILES BYTES     writes DIR/sample_NNNN.npy (float32, seeded)
  cache_preload_numpy.py order DIR EPOCHS SEED    prints every epoch's file order, one absolute
                                                  path per line (the clairvoyant future)
  cache_preload_numpy.py train DIR EPOCHS SEED COMPUTE_S [STATS_SOCKET]
                                                  prints one JSON line per epoch: its seconds and,
                                                  with STATS_SOCKET, the server's statistics of
                                                  the epoch (kTakeStats, outside the timed loop)
"""
import json
import os
import socket
import struct
import sys
import time

import numpy as np

MAGIC, VERSION = 0x31434C44, 1
OP_HELLO, OP_TAKE_STATS = 1, 7


def files(directory):
    return sorted(os.path.join(os.path.abspath(directory), f)
                  for f in os.listdir(directory) if f.endswith(".npy"))


def order(directory, epoch, seed):
    names = files(directory)
    return [names[i] for i in np.random.default_rng(seed + epoch).permutation(len(names))]


def recv_exactly(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise ConnectionError("cache server closed the connection")
        data += chunk
    return data


def request(conn, op, payload=b""):
    conn.sendall(struct.pack("<IHHQ", MAGIC, VERSION, op, len(payload)) + payload)
    _, _, _, size = struct.unpack("<IHHQ", recv_exactly(conn, 16))
    return recv_exactly(conn, size)


def take_stats(conn):
    reply = request(conn, OP_TAKE_STATS)
    error, _ = struct.unpack("<iI", reply[:8])
    if error:
        raise RuntimeError(reply[8:].decode())
    return json.loads(reply[8:])


def train(directory, epochs, seed, compute_s, stats_socket):
    conn = None
    if stats_socket:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(stats_socket)
        request(conn, OP_HELLO, b"cache_preload_numpy stats")
        take_stats(conn)  # from here on: the loop's opens only
    total = 0.0
    for epoch in range(epochs):
        start = time.perf_counter()
        for path in order(directory, epoch, seed):
            total += float(np.load(path)[0])
            time.sleep(compute_s)
        line = {"epoch": epoch + 1, "seconds": round(time.perf_counter() - start, 3)}
        if conn is not None:
            line["cache"] = take_stats(conn)
        print(json.dumps(line), flush=True)
    print(json.dumps({"checksum": total}), flush=True)


def main(argv):
    if argv[1] == "make":
        directory, count, size = argv[2], int(argv[3]), int(argv[4])
        os.makedirs(directory, exist_ok=True)
        rng = np.random.default_rng(0)
        for i in range(count):
            np.save(os.path.join(directory, "sample_%04d.npy" % i),
                    rng.random(size // 4, dtype=np.float32))
    elif argv[1] == "order":
        for epoch in range(int(argv[3])):
            print("\n".join(order(argv[2], epoch, int(argv[4]))))
    elif argv[1] == "train":
        train(argv[2], int(argv[3]), int(argv[4]), float(argv[5]),
              argv[6] if len(argv) > 6 else None)
    else:
        sys.exit("unknown mode " + argv[1])


if __name__ == "__main__":
    main(sys.argv)
