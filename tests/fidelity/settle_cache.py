"""Puts every regular file under the given folders into one page-cache state, whatever wrote it:
written back (fsync), dropped from the page cache (posix_fadvise DONTNEED), then read once front
to back in 1 MiB reads, as `cat` does, so that the kernel's readahead, not the writer, decides how
the file's pages are cached.

  settle_cache.py DIR...

Why (docs/fidelity.md, "How the data was written"): on this kernel (6.x, ext4 with large folios)
a file cached by the writes that made it keeps the folio sizes of those writes, and reading it
costs that: 256 KiB preads of a 64 MiB file took 70 us when the file was written in 4 KiB
writes (Python's buffered writers, `head`), 30-32 us when written in 64 KiB or 4 MiB writes
(dlio's generator) and 30 us for all three once settled (benchmarks/page_cache_state.py); on
another host of the same kind 39-53, 15-16 and 11-12 us as written, 10-14 us settled. The
closed loop compares a program's reads of the data its `make` step wrote with dlio's reads of
the data dlio generated; without this step, part of the time difference is how each dataset was
written, which neither trace shows.

Reads only: no file is opened for writing, renamed or removed; content and times stay as they are.
"""
import os
import sys

CHUNK = 1 << 20


def settle(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)  # dirty pages cannot be dropped
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        buf = bytearray(CHUNK)
        while os.readv(fd, [buf]) > 0:
            pass
    finally:
        os.close(fd)


def main(folders):
    if not folders:
        sys.exit('usage: settle_cache.py DIR...')
    count = 0
    for folder in folders:
        if not os.path.isdir(folder):
            sys.exit('settle_cache.py: %s is not a folder' % folder)
        for root, _, names in os.walk(folder):
            for name in sorted(names):
                path = os.path.join(root, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    settle(path)
                    count += 1
    print('settled %d files' % count)


if __name__ == '__main__':
    main(sys.argv[1:])
