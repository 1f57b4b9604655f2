"""Loading libdlio_c.so and declaring its functions for ctypes (private to the package)."""

import ctypes
import ctypes.util
import os

_LIBRARY_NAMES = ("libdlio_c.so", "libdlio_c.so.0")


def _candidates():
    """Where libdlio_c is looked for, in order."""
    here = os.path.dirname(os.path.abspath(__file__))
    places = [here, os.path.dirname(here)]  # next to the package
    try:
        from . import _install_paths  # written by `cmake --install`

        libdir = _install_paths.LIBDIR
        places.append(libdir if os.path.isabs(libdir) else os.path.normpath(os.path.join(here, libdir)))
    except ImportError:
        pass
    found = []
    for place in places:
        for name in _LIBRARY_NAMES:
            found.append(os.path.join(place, name))
    return found


def load_library():
    """The loaded libdlio_c: $DLIO_C_LIBRARY, else next to the package, else the install lib dir,
    else wherever the dynamic loader finds it (LD_LIBRARY_PATH, ldconfig)."""
    explicit = os.environ.get("DLIO_C_LIBRARY")
    if explicit:
        try:
            return ctypes.CDLL(explicit)
        except OSError as e:
            raise ImportError("dlio: cannot load DLIO_C_LIBRARY=%s: %s" % (explicit, e)) from e
    tried = []
    for path in _candidates():
        if os.path.exists(path):
            try:
                return ctypes.CDLL(path)
            except OSError as e:
                tried.append("%s (%s)" % (path, e))
        else:
            tried.append(path)
    system = ctypes.util.find_library("dlio_c")
    for name in ([system] if system else []) + list(_LIBRARY_NAMES):
        try:
            return ctypes.CDLL(name)
        except OSError:
            tried.append(name)
    raise ImportError(
        "dlio: libdlio_c.so not found; build it (target dlio_c) and set DLIO_C_LIBRARY to its "
        "path, or install dlio. Tried: " + ", ".join(tried))


class Sample(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("size", ctypes.c_uint64),
                ("index", ctypes.c_uint64), ("file", ctypes.c_uint32)]


class Batch(ctypes.Structure):
    _fields_ = [("epoch", ctypes.c_uint64), ("index", ctypes.c_int64),
                ("num_samples", ctypes.c_uint64), ("bytes", ctypes.c_uint64),
                ("samples", ctypes.POINTER(Sample))]


class LoaderStats(ctypes.Structure):
    _fields_ = [("epochs", ctypes.c_uint64), ("batches", ctypes.c_uint64),
                ("samples", ctypes.c_uint64), ("bytes", ctypes.c_uint64),
                ("wait_s", ctypes.c_double), ("compute_s", ctypes.c_double),
                ("read_ops", ctypes.c_uint64), ("read_bytes", ctypes.c_uint64),
                ("opens", ctypes.c_uint64)]


lib = load_library()

_c_int, _c_char_p, _c_void_p = ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p
_p_void_p = ctypes.POINTER(ctypes.c_void_p)
_p_char_p = ctypes.POINTER(ctypes.c_void_p)  # char** filled by the C side; freed with free_string

_SIGNATURES = {
    "dlio_version": (_c_char_p, []),
    "dlio_last_error": (_c_char_p, []),
    "dlio_status_name": (_c_char_p, [_c_int]),
    "dlio_free_string": (None, [_c_void_p]),
    "dlio_config_load": (_c_int, [_c_char_p, _c_char_p, _p_void_p]),
    "dlio_config_parse": (_c_int, [_c_char_p, _c_char_p, _p_void_p]),
    "dlio_config_set": (_c_int, [_c_void_p, _c_char_p, _c_char_p]),
    "dlio_config_validate": (_c_int, [_c_void_p]),
    "dlio_config_to_json": (_c_int, [_c_void_p, _p_char_p]),
    "dlio_config_warnings": (_c_int, [_c_void_p, _p_char_p]),
    "dlio_config_free": (None, [_c_void_p]),
    "dlio_generate": (_c_int, [_c_void_p, _c_int]),
    "dlio_run": (_c_int, [_c_void_p, _c_char_p, _p_char_p]),
    "dlio_loader_create": (_c_int, [_c_void_p, _c_int, _c_int, _p_void_p]),
    "dlio_loader_create_ex": (_c_int, [_c_void_p, _c_int, _c_int, _c_int,
                                       ctypes.POINTER(ctypes.c_uint64), _p_void_p]),
    "dlio_loader_num_files": (_c_int, [_c_void_p, ctypes.POINTER(ctypes.c_uint64)]),
    "dlio_loader_file_path": (_c_int, [_c_void_p, ctypes.c_uint64, ctypes.POINTER(_c_char_p)]),
    "dlio_loader_start_epoch": (_c_int, [_c_void_p, ctypes.c_uint64,
                                         ctypes.POINTER(ctypes.c_uint64)]),
    "dlio_loader_next": (_c_int, [_c_void_p, ctypes.POINTER(Batch), ctypes.POINTER(_c_int)]),
    "dlio_loader_release": (_c_int, [_c_void_p]),
    "dlio_loader_compute": (_c_int, [_c_void_p, ctypes.c_int64, ctypes.POINTER(ctypes.c_double)]),
    "dlio_loader_stats": (_c_int, [_c_void_p, ctypes.POINTER(LoaderStats)]),
    "dlio_loader_stop": (_c_int, [_c_void_p]),
    "dlio_loader_free": (None, [_c_void_p]),
}

for _name, (_restype, _argtypes) in _SIGNATURES.items():
    _fn = getattr(lib, _name)
    _fn.restype = _restype
    _fn.argtypes = _argtypes


def encode(s):
    """A str (or None) as the char* the C API takes."""
    return None if s is None else os.fsencode(s) if isinstance(s, os.PathLike) else str(s).encode()


def take_string(pointer):
    """The text of a char* returned through a char** (then freed)."""
    if not pointer.value:
        return ""
    try:
        return ctypes.string_at(pointer.value).decode("utf-8", "replace")
    finally:
        lib.dlio_free_string(pointer.value)
