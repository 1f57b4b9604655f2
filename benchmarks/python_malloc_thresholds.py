#!/usr/bin/python3
"""glibc's dynamic mmap threshold in a Python process after each import: the figures
io_models/pyio/python_heap.cc uses (docs/io_models.md, "glibc's thresholds").

  /usr/bin/python3 benchmarks/python_malloc_thresholds.py [MODULE ...]   (default: numpy torch pandas h5py)

For each module, a fresh interpreter imports it, then forked children ask which malloc sizes glibc
maps (the IS_MMAPPED bit of the chunk's size field, the word before the block); a child's probe
cannot move the parent's thresholds. Prints the largest request served from the heap and the
threshold (the mapped chunk size, a page multiple) it implies. glibc only (x86-64 layout).
"""
import subprocess
import sys

PROBE = r'''
import ctypes, os, sys
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
def mapped(n):
    pid = os.fork()
    if pid == 0:
        p = libc.malloc(n)
        os._exit(1 if ctypes.c_size_t.from_address(p - 8).value & 2 else 0)
    return os.WEXITSTATUS(os.waitpid(pid, 0)[1]) == 1
if sys.argv[1] != "-":
    __import__(sys.argv[1])
lo, hi = 4096, 40 << 20
while hi - lo > 16:
    mid = (lo + hi) // 2
    lo, hi = (lo, mid) if mapped(mid) else (mid, hi)
chunk = (lo + 8 + 15) & ~15        # request -> chunk size: the largest heap chunk
print(lo, (chunk + 4095) // 4096 * 4096)
'''

def main():
    modules = sys.argv[1:] or ["numpy", "torch", "pandas", "h5py"]
    print("| after | largest heap request | mmap threshold | trim threshold |")
    print("|---|---|---|---|")
    for m in ["-"] + modules:
        out = subprocess.run([sys.executable, "-c", PROBE, m], capture_output=True, text=True)
        if out.returncode != 0:
            print("| import %s | failed: %s | | |" % (m, out.stderr.strip().splitlines()[-1:]))
            continue
        heap, threshold = map(int, out.stdout.split())
        print("| %s | %d | %d | %d |" % ("start" if m == "-" else "import " + m, heap, threshold,
                                        2 * threshold if m != "-" else threshold))

if __name__ == "__main__":
    main()
