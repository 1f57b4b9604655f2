"""A pure-C loader (c_pread_loader.c): 20 flat files of 1.5 MiB with no header, read front to back
by 2 pthreads with pread in 256 KiB requests, 3 epochs, a 3 ms step per file. `dlio-run fit`
finds no format in the suffix (.dat) or the bytes: dataset.format raw.

  c_pread_loader.py make DIR   writes DIR/data/f<i>.dat and compiles the loader to DIR/c_pread_loader
  c_pread_loader.py run DIR    execs the loader (the traced loop)
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def make(data):
    os.makedirs(os.path.join(data, 'data'), exist_ok=True)
    for i in range(20):
        with open(os.path.join(data, 'data', 'f%03d.dat' % i), 'wb') as f:
            f.write(os.urandom(1536 * 1024))
    subprocess.check_call(['cc', '-O2', '-pthread', '-o', os.path.join(data, 'c_pread_loader'),
                           os.path.join(HERE, 'c_pread_loader.c')])


def run(data):
    binary = os.path.join(data, 'c_pread_loader')
    os.execv(binary, [binary, data])


if __name__ == '__main__':
    (make if sys.argv[1] == 'make' else run)(sys.argv[2])
