"""dlio.Loader: the runner's data pipeline (reader threads, prefetch, the config's sampler) driven
by a Python training loop."""

import ctypes

from . import _check, FailedPreconditionError, InvalidArgumentError
from ._capi import Batch as _CBatch, LoaderStats as _CStats, encode as _encode, lib as _lib

try:
    import numpy as _np
except ImportError:  # memoryviews then
    _np = None

_SPLITS = {"train": 0, "eval": 1}


class Batch:
    """One batch of an epoch. `samples[i]` holds the bytes of sample `refs[i]` = (file, index) as
    a uint8 numpy array (or a memoryview without numpy, or when asked).

    Zero-copy views (the default) point into the loader's buffers and are valid only until the
    loop asks for the next batch (or the loader is closed): the memoryviews are released then (a
    later access raises ValueError), numpy arrays cannot be, so copy what you keep
    (`arr.copy()`, or `loader.epoch(e, copy=True)`)."""

    __slots__ = ("epoch", "index", "bytes", "samples", "refs", "_views")

    def __init__(self, epoch, index, nbytes, samples, refs, views):
        self.epoch = epoch
        self.index = index
        self.bytes = nbytes
        self.samples = samples
        self.refs = refs
        self._views = views

    def __len__(self):
        return len(self.samples)

    def __iter__(self):
        return iter(self.samples)

    def __getitem__(self, i):
        return self.samples[i]

    def _invalidate(self):
        for v in self._views:
            try:
                v.release()
            except BufferError:  # something (np.frombuffer) still exports it: cannot invalidate
                pass
        self._views = []


def _sample_view(address, size, as_numpy, copy):
    if size == 0:
        data = b""
        return (_np.frombuffer(data, dtype=_np.uint8) if as_numpy else memoryview(data)), None
    raw = (ctypes.c_ubyte * size).from_address(address)
    if as_numpy:
        array = _np.frombuffer(raw, dtype=_np.uint8)
        return (array.copy() if copy else array), None
    if copy:
        return memoryview(bytes(raw)), None
    view = memoryview(raw).cast("B")
    return view, view


class Loader:
    """Reads the config's dataset for rank `rank` of `world`, exactly as dlio-run's runner does
    (format, storage, sampler, shuffle seeds, read threads, prefetch, preprocessing time).

        with dlio.Loader(cfg) as loader:
            for batch in loader.epoch(0):
                ...

    split: "train" or "eval". random_seed: the entropy of "random" shuffle modes; give the same
    value on every rank when world > 1 (None draws one, which only a single rank may do).
    One thread at a time; stop() may come from another thread."""

    def __init__(self, config, rank=0, world=1, split="train", random_seed=None):
        self._handle = None
        if split not in _SPLITS:
            raise InvalidArgumentError(1, "split '%s' is neither 'train' nor 'eval'" % split)
        handle = ctypes.c_void_p()
        seed = None if random_seed is None else ctypes.byref(ctypes.c_uint64(random_seed))
        _check(_lib.dlio_loader_create_ex(config._ptr(), rank, world, _SPLITS[split], seed,
                                          ctypes.byref(handle)))
        self._handle = handle.value
        self._batch = _CBatch()
        self._end = ctypes.c_int()
        self._current = None

    def _ptr(self):
        if not self._handle:
            raise FailedPreconditionError(8, "the Loader was closed")
        return self._handle

    @property
    def num_files(self):
        n = ctypes.c_uint64()
        _check(_lib.dlio_loader_num_files(self._ptr(), ctypes.byref(n)))
        return n.value

    def file_path(self, file):
        out = ctypes.c_char_p()
        _check(_lib.dlio_loader_file_path(self._ptr(), file, ctypes.byref(out)))
        return out.value.decode()

    def start_epoch(self, epoch):
        """Plans epoch `epoch` (0-based) and starts reading ahead; returns the number of batches."""
        self._drop_current()
        n = ctypes.c_uint64()
        _check(_lib.dlio_loader_start_epoch(self._ptr(), epoch, ctypes.byref(n)))
        return n.value

    def next(self, copy=False, numpy=None):
        """The next Batch of the epoch, or None at its end. Invalidates the previous batch's views.
        numpy: True/False forces numpy arrays or memoryviews (default: numpy when importable)."""
        self._drop_current()
        _check(_lib.dlio_loader_next(self._ptr(), ctypes.byref(self._batch),
                                     ctypes.byref(self._end)))
        if self._end.value:
            return None
        as_numpy = (_np is not None) if numpy is None else bool(numpy)
        if as_numpy and _np is None:
            raise ImportError("dlio.Loader.next(numpy=True): numpy is not importable")
        b = self._batch
        samples, refs, views = [], [], []
        for i in range(b.num_samples):
            s = b.samples[i]
            data, view = _sample_view(s.data, s.size, as_numpy, copy)
            samples.append(data)
            refs.append((s.file, s.index))
            if view is not None:
                views.append(view)
        batch = Batch(b.epoch, b.index, b.bytes, samples, refs, views)
        self._current = batch
        return batch

    def epoch(self, epoch, copy=False, numpy=None):
        """Iterates over the batches of epoch `epoch` (see next() for copy and numpy)."""
        self.start_epoch(epoch)
        try:
            while True:
                batch = self.next(copy=copy, numpy=numpy)
                if batch is None:
                    return
                yield batch
        finally:
            if self._handle:
                self.release()

    def release(self):
        """Gives the current batch back to the pipeline early (its views become invalid)."""
        self._drop_current()
        _check(_lib.dlio_loader_release(self._ptr()))

    def compute(self, step):
        """Takes one step's emulated compute time (train.computation_time, sleep or spin);
        returns the seconds drawn."""
        seconds = ctypes.c_double()
        _check(_lib.dlio_loader_compute(self._ptr(), step, ctypes.byref(seconds)))
        return seconds.value

    def stats(self):
        """Counters since creation: epochs, batches, samples, bytes (delivered), wait_s (blocked
        in next), compute_s, read_ops, read_bytes, opens (storage)."""
        s = _CStats()
        _check(_lib.dlio_loader_stats(self._ptr(), ctypes.byref(s)))
        return {name: getattr(s, name) for name, _ in _CStats._fields_}

    def stop(self):
        """Cancels reading (a next() blocked in another thread raises CancelledError) and writes
        out the trace. Safe from another thread."""
        _check(_lib.dlio_loader_stop(self._ptr()))

    def close(self):
        """Stops the loader, joins its threads and frees it. Views into its batches die here."""
        if self._handle:
            self._drop_current()
            _lib.dlio_loader_free(self._handle)
            self._handle = None

    def _drop_current(self):
        if self._current is not None:
            self._current._invalidate()
            self._current = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()
