"""What reading a cached file costs depending on how it got into the page cache.

  /usr/bin/python3 benchmarks/page_cache_state.py [WORKDIR] [--mib N] [--read-kib K]

Writes one N MiB file (default 64) per write size (4 KiB, 64 KiB, 4 MiB) under WORKDIR (default
/tmp/dlio-page-cache-state, created; only the files it writes are removed, at the end), then
times K KiB preads (default 256) of each file front to back into one reused buffer, three passes,
median per read:
  - "as written": the file cached by the writes that made it;
  - "settled": after tests/fidelity/settle_cache.py's step (fsync, posix_fadvise DONTNEED, one
    read front to back in 1 MiB reads, as `cat`), so readahead decided how it is cached.
On kernels whose page cache keeps large folios for the file system (ext4 on Linux 6.x), the
first column depends on the write size and the second does not: what the closed loop
(tests/fidelity/closed_loop.sh) settles before each traced run (docs/fidelity.md, "How the data
was written").
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'tests', 'fidelity'))
import settle_cache  # noqa: E402

WRITE_SIZES = (4 << 10, 64 << 10, 4 << 20)


def write_file(path, total, write_size):
    block = os.urandom(write_size)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        sys.exit('page_cache_state.py: %s exists (left by another run?): remove it or give another '
                 'WORKDIR' % path)
    try:
        for _ in range(total // write_size):
            os.write(fd, block)
    finally:
        os.close(fd)


def median_pread_us(path, read_size, passes=3):
    buf = bytearray(read_size)
    times = []
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        for _ in range(passes):
            for offset in range(0, size, read_size):
                start = time.perf_counter_ns()
                os.preadv(fd, [buf], offset)
                times.append(time.perf_counter_ns() - start)
    finally:
        os.close(fd)
    return statistics.median(times) / 1000.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('workdir', nargs='?', default='/tmp/dlio-page-cache-state')
    parser.add_argument('--mib', type=int, default=64)
    parser.add_argument('--read-kib', type=int, default=256)
    args = parser.parse_args()
    if args.mib < 4 or args.read_kib < 1:
        sys.exit('--mib must be >= 4 and --read-kib >= 1')
    os.makedirs(args.workdir, exist_ok=True)
    total = args.mib << 20
    read_size = args.read_kib << 10
    print('| written in | %d KiB pread, as written (us) | settled (us) |' % args.read_kib)
    print('|---|---|---|')
    for write_size in WRITE_SIZES:
        path = os.path.join(args.workdir, 'written-in-%d.bin' % write_size)
        write_file(path, total, write_size)
        try:
            as_written = median_pread_us(path, read_size)
            settle_cache.settle(path)
            settled = median_pread_us(path, read_size)
        finally:
            os.remove(path)
        print('| %d KiB writes | %.1f | %.1f |' % (write_size >> 10, as_written, settled))


if __name__ == '__main__':
    main()
