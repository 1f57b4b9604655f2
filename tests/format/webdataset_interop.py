"""Python's tarfile on the webdataset tests' shards (tests/format/webdataset_interop_test.cc).

  stream PATH            the members as a WebDataset-style loader streams them (tarfile r|):
                         JSON [[name, size, hex], ...]
  rewrite SRC DST        DST = SRC's members written again by tarfile (its default PAX format)
                         with WebDataset TarWriter's metadata (mode 0o444, bigdata, mtime 0)
  write DIR FORMAT       shards written by tarfile in FORMAT (pax, gnu, ustar): long names, a
                         directory, a member without a key; JSON [[sample hex, ...] per shard]
  header NAME SIZE       hex of tarfile's header blocks for a member NAME of SIZE bytes
"""
import io
import json
import sys
import tarfile


def info(name, size):
    ti = tarfile.TarInfo(name)
    ti.size, ti.mode, ti.mtime, ti.uname, ti.gname = size, 0o444, 0, "bigdata", "bigdata"
    return ti


def stream(path):
    out = []
    with tarfile.open(path, mode="r|") as t:
        for ti in t:
            data = t.extractfile(ti).read() if ti.isreg() else b""
            out.append([ti.name, ti.size, data.hex()])
    print(json.dumps(out))


def rewrite(src, dst):
    with tarfile.open(src, mode="r|") as t, tarfile.open(dst, mode="w") as w:
        for ti in t:
            data = t.extractfile(ti).read()
            w.addfile(info(ti.name, len(data)), io.BytesIO(data))


def write(folder, fmt):
    formats = {"pax": tarfile.PAX_FORMAT, "gnu": tarfile.GNU_FORMAT, "ustar": tarfile.USTAR_FORMAT}
    shards = []
    for s in range(2):
        samples = []
        with tarfile.open("%s/img_%d_of_2.tar" % (folder, s), mode="w", format=formats[fmt]) as w:
            d = tarfile.TarInfo("d" * 40 if fmt == "ustar" else "d" * 120)
            d.type = tarfile.DIRTYPE
            w.addfile(d)
            for i in range(5):
                key = "%s/s%d_%04d" % (d.name, s, i)
                parts = [bytes((i * 31 + k + s) % 256 for k in range(700 * i + 3)), b"%d" % i]
                for ext, data in zip(("jpg", "cls"), parts):
                    w.addfile(info("%s.%s" % (key, ext), len(data)), io.BytesIO(data))
                samples.append((parts[0] + parts[1]).hex())
            w.addfile(info("README", 2), io.BytesIO(b"hi"))  # no key: WebDataset skips it
        shards.append(samples)
    print(json.dumps(shards))


def header(name, size):
    print(info(name, int(size)).tobuf(tarfile.PAX_FORMAT).hex())


if __name__ == "__main__":
    {"stream": stream, "rewrite": rewrite, "write": write, "header": header}[sys.argv[1]](
        *sys.argv[2:])
