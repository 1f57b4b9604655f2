"""Prints benchmarks/side_by_side.sh's Markdown tables from its results file (tab-separated:
case, label, round, value), with issue 23's ratios computed within each round (the tools of a
round ran back to back, so a ratio is read within a round, never across rounds).

  side_by_side_table.py RESULTS.tsv MEM_ACCELERATORS
"""
import collections
import sys

NAMES = {
    'default': 'dlio default', 'native': 'dlio io_model=native',
    'framework': 'dlio client_costs=framework', 'real': 'real PyTorch DataLoader',
    'pydlio': 'Python DLIO', 'fio': 'fio',
    'realresize': 'real DataLoader collating 2 MiB a sample',
    'prefetch4': 'dlio default, reader.prefetch_size 4 (PyTorch prefetch_factor 2)',
    'threads': 'dlio io_model=numpy (the default requests on reader threads)',
}
CASES = {
    'fio': ('384 x 1 MiB npz, pytorch loader, 2 read threads, batch 4', 'MiB/s'),
    'cosmo': ('cosmoflow-like npz, 1024 x 2.8 MB, batch 1, 4 read threads', 'samples/s'),
    'h5': ('cosmoflow-like hdf5 (h5py model), 256 x 2.8 MB, batch 1, 4 read threads', 'samples/s'),
    'unet': ('unet3d-like npz, 32 x 146.6 MB, batch 4, 4 read threads', 'samples/s'),
}
# (case, numerator, denominator, target): issue 23's targets. framework / real >= 1: the emulated
# client costs are never more than the real stack's (the calibration).
RATIOS = [
    ('fio', 'default', 'fio', 0.9), ('fio', 'native', 'fio', None),
    ('fio', 'prefetch4', 'fio', None), ('fio', 'threads', 'fio', None),
    ('cosmo', 'default', 'real', 4), ('cosmo', 'default', 'native', 0.8),
    ('cosmo', 'default', 'pydlio', 10), ('cosmo', 'framework', 'real', 1),
    ('h5', 'default', 'real', 4), ('h5', 'default', 'native', 0.8),
    ('h5', 'framework', 'real', 1), ('h5', 'default', 'pydlio', None),
    ('unet', 'default', 'real', 4), ('unet', 'default', 'native', 0.8),
    ('unet', 'default', 'pydlio', 4), ('unet', 'framework', 'real', 1),
    ('unet', 'default', 'realresize', None), ('unet', 'framework', 'realresize', 1),
]


def span(xs, fmt):
    xs = sorted(xs)
    if not xs:
        return ''
    return fmt % xs[0] if len(xs) == 1 or fmt % xs[0] == fmt % xs[-1] else \
        (fmt + ' - ' + fmt) % (xs[0], xs[-1])


def main():
    path, accelerators = sys.argv[1], sys.argv[2]
    vals = collections.defaultdict(dict)  # (case, label) -> round -> value
    loads = []
    for line in open(path):
        fields = line.rstrip('\n').split('\t')
        if len(fields) != 4:
            continue  # not a record (a stray line of a failed run's message)
        case, label, rnd, value = fields
        if case == 'load':
            loads.append(value)
            continue
        vals[(case, label)][rnd] = value

    def floats(case, label):
        out = {}
        for r, v in vals.get((case, label), {}).items():
            try:
                out[r] = float(v)
            except ValueError:
                pass
        return out

    print('load average (1 min) at the start of each round: %s' % ', '.join(loads))
    print()
    print('| case | tool | unit | each round | range |')
    print('|---|---|---|---|---|')
    for case, (what, unit) in CASES.items():
        for label in NAMES:
            runs = vals.get((case, label))
            if not runs:
                continue
            each = ', '.join(runs[r] for r in sorted(runs, key=int))
            print('| %s | %s | %s | %s | %s |' % (
                what, NAMES[label], unit, each, span(floats(case, label).values(), '%.1f')))
    print()
    print('| case | ratio | each round | range | target | met |')
    print('|---|---|---|---|---|---|')
    for case, num, den, target in RATIOS:
        a, b = floats(case, num), floats(case, den)
        rs = sorted((r for r in a if r in b and b[r] > 0), key=int)
        if not rs:
            continue
        ratios = [a[r] / b[r] for r in rs]
        met = '' if target is None else ('yes' if min(ratios) >= target else
                                         ('in some rounds' if max(ratios) >= target else 'no'))
        print('| %s | %s / %s | %s | %s | %s | %s |' % (
            case, NAMES[num], NAMES[den], ', '.join('%.2f' % x for x in ratios),
            span(ratios, '%.2f'), '' if target is None else '>= %g' % target, met))
    mem = {label: vals.get(('memory', label), {}) for label in ('dlio', 'pydlio')}
    if any(mem.values()):
        print()
        print('Memory, cosmoflow-like npz with 5.51 ms compute (A100), peak over the whole process '
              'tree (PSS: shared pages split among their sharers; RSS: summed):')
        print()
        print('| tool | accelerators | PSS per accelerator (MiB) | RSS per accelerator (MiB) | '
              'largest process RSS (MiB) | processes | AU |')
        print('|---|---|---|---|---|---|---|')
        for label, runs in mem.items():
            name = ('dlio default, train.accelerators_per_process=%s, 1 read thread' % accelerators
                    if label == 'dlio' else 'Python DLIO, 1 rank, 4 read threads')
            for r in sorted(runs, key=int):
                print('| %s (round %s) | %s |' % (name, r, runs[r].replace('|', ' | ')))


if __name__ == '__main__':
    main()
