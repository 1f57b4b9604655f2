"""settle_cache.py reads only: every regular file under the folders is visited once (symlinks
skipped, nested folders walked), and no file's bytes, size, inode or modification time changes;
a path that is not a folder is refused by name."""
import hashlib
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'settle_cache.py')


def snapshot(folder):
    out = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            st = os.lstat(path)
            digest = None
            if not os.path.islink(path):
                with open(path, 'rb') as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
            out[path] = (st.st_size, st.st_ino, st.st_mtime_ns, digest)
    return out


def main():
    with tempfile.TemporaryDirectory() as top:
        data = os.path.join(top, 'data')
        os.makedirs(os.path.join(data, 'train', 'deep'))
        sizes = {'a.bin': 3 << 20, 'train/b.npz': 1, 'train/deep/c.tar': 70000, 'empty': 0}
        for rel, size in sizes.items():
            with open(os.path.join(data, rel), 'wb') as f:  # left dirty: settle writes it back
                f.write(os.urandom(size))
        os.symlink(os.path.join(data, 'a.bin'), os.path.join(data, 'train', 'link'))
        before = snapshot(data)
        run = subprocess.run([sys.executable, SCRIPT, data], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == 'settled %d files' % len(sizes), run.stdout
        assert snapshot(data) == before, 'a file changed'

        missing = os.path.join(top, 'missing')
        run = subprocess.run([sys.executable, SCRIPT, missing], capture_output=True, text=True)
        assert run.returncode != 0 and missing in run.stderr, run.stderr
        run = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True)
        assert run.returncode != 0 and 'usage' in run.stderr, run.stderr
    print('settle_cache: ok')


if __name__ == '__main__':
    main()
