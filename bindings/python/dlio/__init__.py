"""dlio for Python: DLIO workload configs, whole runs, and the dlio data loader driven by a Python
training loop. A thin ctypes layer over libdlio_c.so (the C API, bindings/c/include/dlio/dlio_c.h);
no compiled extension, no dependency beyond the standard library (numpy is used when present).

    import dlio
    cfg = dlio.Config(workload="default")
    cfg.set("dataset.data_folder", "/tmp/data")
    dlio.generate(cfg)
    with dlio.Loader(cfg) as loader:
        for epoch in range(2):
            for step, batch in enumerate(loader.epoch(epoch)):
                loader.compute(step)          # or the real model, on batch.samples

The library is found through $DLIO_C_LIBRARY, then next to this package, then the install lib dir,
then the dynamic loader's path. See docs/bindings.md.
"""

import ctypes
import json

from . import _capi
from ._capi import encode as _encode, lib as _lib, take_string as _take_string

__all__ = ["Config", "Loader", "Batch", "generate", "run", "version", "Error",
           "InvalidArgumentError", "NotFoundError", "AlreadyExistsError", "IOError",
           "CorruptionError", "OutOfRangeError", "UnimplementedError", "FailedPreconditionError",
           "CancelledError", "ResourceExhaustedError", "InternalError"]


class Error(Exception):
    """A dlio error: `code` is the dlio status code (an int), `code_name` its name
    ("InvalidArgument", ...), `message` the library's message naming the key, file or offset."""

    def __init__(self, code, message):
        self.code = code
        self.code_name = _lib.dlio_status_name(code).decode()
        self.message = message
        super().__init__("%s: %s" % (self.code_name, message))


class InvalidArgumentError(Error):
    """Bad config key or value, bad argument."""


class NotFoundError(Error):
    """A file, key or name that does not exist."""


class AlreadyExistsError(Error):
    """Refusing to overwrite something dlio did not create."""


class IOError(Error):  # noqa: A001 - dlio.IOError, the status code's name; not the builtin alias
    """The OS refused an I/O call (the message holds errno's text)."""


class CorruptionError(Error):
    """A file's bytes do not parse (the message names the file and offset)."""


class OutOfRangeError(Error):
    """An index past the end."""


class UnimplementedError(Error):
    """A known name whose backend was not compiled in."""


class FailedPreconditionError(Error):
    """A call made in the wrong state."""


class CancelledError(Error):
    """Stopped while waiting."""


class ResourceExhaustedError(Error):
    """Disk full, out of memory."""


class InternalError(Error):
    """A bug in dlio."""


_ERRORS = {1: InvalidArgumentError, 2: NotFoundError, 3: AlreadyExistsError, 4: IOError,
           5: CorruptionError, 6: OutOfRangeError, 7: UnimplementedError,
           8: FailedPreconditionError, 9: CancelledError, 10: ResourceExhaustedError,
           11: InternalError}


def _check(code):
    """Raises the Error for a nonzero status of the call just made (on this thread)."""
    if code != 0:
        message = _lib.dlio_last_error().decode("utf-8", "replace")
        raise _ERRORS.get(code, Error)(code, message)


def version():
    """libdlio's version, e.g. "0.1.0"."""
    return _lib.dlio_version().decode()


def _yaml_value(value):
    """A Python value as the YAML text of an override (JSON is YAML)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value)
    return str(value)


class Config:
    """A DLIO workload config (the YAML schema), loaded as dlio-run loads it.

    Config()                       the built-in "default" workload
    Config(workload="default")     a built-in preset
    Config(path="unet3d.yaml")     a DLIO YAML or JSON file
    Config.from_text(yaml_text)    text, over the built-in defaults
    Not thread-safe while being changed (set); may be shared by readers otherwise."""

    def __init__(self, path=None, workload=None, *, _handle=None):
        self._handle = None
        if _handle is None:
            handle = ctypes.c_void_p()
            _check(_lib.dlio_config_load(_encode(path), _encode(workload), ctypes.byref(handle)))
            _handle = handle.value
        self._handle = _handle

    @classmethod
    def from_text(cls, text, source_name=None):
        handle = ctypes.c_void_p()
        _check(_lib.dlio_config_parse(_encode(text), _encode(source_name), ctypes.byref(handle)))
        return cls(_handle=handle.value)

    def _ptr(self):
        if not self._handle:
            raise FailedPreconditionError(8, "the Config was closed")
        return self._handle

    def set(self, key, value=None):
        """Overrides one key as `dlio-run --set key=value` does: set("reader.batch_size", 4),
        set("train.computation_time", {"mean": 0.01, "stdev": 0.001}); with value None, key is a
        whole assignment: set("++workload.train.epochs=2"). Returns self."""
        v = None if value is None else _yaml_value(value)
        _check(_lib.dlio_config_set(self._ptr(), _encode(key), _encode(v)))
        return self

    def validate(self):
        """Raises InvalidArgumentError naming the key when a value or cross-key rule fails."""
        _check(_lib.dlio_config_validate(self._ptr()))

    def to_json(self):
        out = ctypes.c_void_p()
        _check(_lib.dlio_config_to_json(self._ptr(), ctypes.byref(out)))
        return _take_string(out)

    def to_dict(self):
        """Every key and its value, as dlio-run's config.json holds them."""
        return json.loads(self.to_json())

    @property
    def warnings(self):
        """DLIO keys accepted but not emulated, one message each."""
        out = ctypes.c_void_p()
        _check(_lib.dlio_config_warnings(self._ptr(), ctypes.byref(out)))
        text = _take_string(out)
        return text.split("\n") if text else []

    def close(self):
        if self._handle:
            _lib.dlio_config_free(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


def generate(config, force=False):
    """Generates the config's dataset (rank 0 of 1), keeping files already there; refuses a
    non-empty folder that is not a dlio dataset unless force (nothing is ever overwritten)."""
    _check(_lib.dlio_generate(config._ptr(), 1 if force else 0))


def run(config, output_dir=None):
    """Runs the workload as dlio-run does and returns summary.json as a dict (DLIO's keys:
    "metric" with train_au_percentage, ..., "start", "end", "num_accelerators", ...). The output
    files land in output_dir (default: the config's output.folder)."""
    out = ctypes.c_void_p()
    _check(_lib.dlio_run(config._ptr(), _encode(output_dir), ctypes.byref(out)))
    return json.loads(_take_string(out))


from .loader import Batch, Loader  # noqa: E402  (needs _check and the errors above)
