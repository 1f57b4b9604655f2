"""Runs a command and samples the memory of its whole process tree (it and every descendant, e.g.
pytorch DataLoader workers) until it ends; GNU time's max RSS is only the largest single process.

  tree_rss.py OUT.json [--interval S] -- COMMAND [ARG...]

Writes OUT.json: peak of the tree's summed RSS and summed PSS (shared pages split among their
sharers, so fork's copy-on-write pages and shared-memory batches count once), the largest single
RSS, the most processes seen. Exits with the command's status.
"""
import json
import os
import subprocess
import sys
import time

import psutil


def rollup(pid):
    """Rss and Pss in KiB from /proc/PID/smaps_rollup (0, 0 when the process is gone)."""
    rss = pss = 0
    try:
        with open('/proc/%d/smaps_rollup' % pid) as f:
            for line in f:
                if line.startswith('Rss:'):
                    rss = int(line.split()[1])
                elif line.startswith('Pss:'):
                    pss = int(line.split()[1])
    except OSError:
        pass
    return rss, pss


def main():
    argv = sys.argv[1:]
    if '--' not in argv or argv.index('--') == 0:
        sys.exit(__doc__)
    sep = argv.index('--')
    out, opts, cmd = argv[0], argv[1:sep], argv[sep + 1:]
    interval = float(opts[opts.index('--interval') + 1]) if '--interval' in opts else 0.1
    child = subprocess.Popen(cmd)
    root = psutil.Process(child.pid)
    peak = {'rss_sum_kib': 0, 'pss_sum_kib': 0, 'rss_max_kib': 0, 'processes': 0}
    try:
        while child.poll() is None:
            try:
                procs = [root] + root.children(recursive=True)
            except psutil.Error:
                procs = [root]
            sizes = [rollup(p.pid) for p in procs]
            peak['rss_sum_kib'] = max(peak['rss_sum_kib'], sum(r for r, _ in sizes))
            peak['pss_sum_kib'] = max(peak['pss_sum_kib'], sum(p for _, p in sizes))
            peak['rss_max_kib'] = max([peak['rss_max_kib']] + [r for r, _ in sizes])
            peak['processes'] = max(peak['processes'], sum(1 for r, _ in sizes if r))
            time.sleep(interval)
    except KeyboardInterrupt:
        child.terminate()
    rc = child.wait()
    with open(out + '.tmp', 'w') as f:
        json.dump(peak, f)
    os.replace(out + '.tmp', out)
    sys.exit(rc if rc >= 0 else 128 - rc)


if __name__ == '__main__':
    main()
