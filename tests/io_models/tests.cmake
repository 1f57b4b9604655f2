# I/O models (reader.io_model) held against the real Python libraries request by request: the
# real program runs under libdlio_preload.so (request_log.h), dlio's reader under a MemoryTracer.
dlio_add_test(request_log_test SOURCES io_models/request_log_test.cc)
add_dependencies(request_log_test dlio_preload)
target_compile_definitions(request_log_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
dlio_add_test(numpy_test SOURCES io_models/numpy_test.cc io_models/numpy_strace_test.cc)
add_dependencies(numpy_test dlio_preload)
target_compile_definitions(numpy_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
dlio_add_test(mmap_test SOURCES io_models/mmap_test.cc PROPERTIES SKIP_RETURN_CODE 77)
add_dependencies(mmap_test dlio_preload)
target_compile_definitions(mmap_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# tf.data (tfrecord): dlio's streams against tfdata_reference.py, a reader written from TF's source.
dlio_add_test(tfdata_test SOURCES io_models/tfdata_test.cc)
add_dependencies(tfdata_test dlio_preload)
target_compile_definitions(tfdata_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# reader.io_model pytorch against a real DataLoader (skips with 77 without torch).
dlio_add_test(pytorch_io_model_test SOURCES io_models/pytorch_test.cc
  PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
add_dependencies(pytorch_io_model_test dlio_preload dlio-run)
target_compile_definitions(pytorch_io_model_test PRIVATE
  DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# reader.io_model pandas (csv) against pandas.read_csv; skipped (exit 77) without pandas.
dlio_add_test(pandas_test SOURCES io_models/pandas_test.cc PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
add_dependencies(pandas_test dlio_preload)
target_compile_definitions(pandas_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# reader.io_model pil (jpeg) against Pillow's Image.open and load; skipped (exit 77) without PIL.
dlio_add_test(pil_test SOURCES io_models/pil_test.cc PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
add_dependencies(pil_test dlio_preload)
target_compile_definitions(pil_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# reader.io_model pil (png) against Pillow's PngImagePlugin; skipped (exit 77) without PIL.
dlio_add_test(pil_png_test SOURCES io_models/pil_png_test.cc LIBS dlio::dlio ZLIB::ZLIB
              PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
add_dependencies(pil_png_test dlio_preload)
target_compile_definitions(pil_png_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# reader.io_model pyio (npy, jpeg; png in pil_png_test) against CPython's buffered file reads.
dlio_add_test(npy_mmap_test SOURCES io_models/npy_mmap_test.cc PROPERTIES SKIP_RETURN_CODE 77)
add_dependencies(npy_mmap_test dlio_preload)
target_compile_definitions(npy_mmap_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
dlio_add_test(pyio_test SOURCES io_models/pyio_test.cc io_models/pyio_records_test.cc
              PROPERTIES TIMEOUT 300)
add_dependencies(pyio_test dlio_preload)
target_compile_definitions(pyio_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# checkpoint.type torch_save against torch.save; skipped (exit 77) without torch.
dlio_add_test(torch_save_test SOURCES io_models/torch_save_test.cc PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
add_dependencies(torch_save_test dlio_preload)
target_compile_definitions(torch_save_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
dlio_add_test(h5py_test SOURCES io_models/h5py_test.cc io_models/h5_groups_test.cc
              io_models/h5_datasets_test.cc)
add_dependencies(h5py_test dlio_preload)
target_compile_definitions(h5py_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# reader.client_costs none and framework: the same requests from every process of dlio-run.
dlio_add_test(client_costs_test SOURCES io_models/client_costs_test.cc PROPERTIES TIMEOUT 300)
add_dependencies(client_costs_test dlio_preload dlio-run)
target_compile_definitions(client_costs_test PRIVATE
  DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# The I/O-model table: one entry per reader.io_model value, each format's registered readers equal
# to its declared models (libdlio/src/io_models/io_model_table.h, model_readers.h).
dlio_add_test(io_model_table_test SOURCES io_models/io_model_table_test.cc)
# reader.client_costs none: the numpy model's sample bytes land straight in the caller's buffer.
dlio_add_test(direct_read_test SOURCES io_models/direct_read_test.cc)
# reader.io_model pyarrow, pyarrow_read fork: dlio's row-group reads against Python's own.
dlio_add_test(pyarrow_fork_test SOURCES io_models/pyarrow_fork_test.cc)
add_dependencies(pyarrow_fork_test dlio_preload)
target_compile_definitions(pyarrow_fork_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# checkpoint.type torch_save read back with torch.load's requests, against torch.load under strace;
# skipped (exit 77) without strace, ptrace or torch.
dlio_add_test(torch_load_strace_test SOURCES io_models/torch_load_strace_test.cc
  PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
target_compile_definitions(torch_load_strace_test PRIVATE  # request_log.h names it; not preloaded
  DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# The 256 KiB ring a reader thread reads streaming samples into (pipeline/read_scratch.h): every
# streaming reader's samples pass through it intact, a deflated member's CRC checked there.
dlio_add_test(reader_ring_test SOURCES io_models/reader_ring_test.cc)
# Under the native model a reader thread's parquet row groups land in the one buffer its
# ReadScratch lends (SampleBuffer::landing), with the same requests.
dlio_add_test(parquet_landing_test SOURCES io_models/parquet_landing_test.cc)
# pyio's f.read() of a whole file: FileIO.readall's requests into a bytes object of fresh pages.
dlio_add_test(pyio_bytes_test SOURCES io_models/pyio_bytes_test.cc)
# reader.io_model tarfile_index (webdataset) against CPython's tarfile random access.
dlio_add_test(tarfile_index_test SOURCES io_models/tarfile_index_test.cc PROPERTIES TIMEOUT 300)
add_dependencies(tarfile_index_test dlio_preload)
target_compile_definitions(tarfile_index_test PRIVATE
  DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# The sqlite format's page reads (libsqlite3 through dlio's VFS) against Python's sqlite3 module.
dlio_add_test(sqlite_test SOURCES io_models/sqlite_test.cc PROPERTIES TIMEOUT 300)
add_dependencies(sqlite_test dlio_preload)
target_compile_definitions(sqlite_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# reader.io_model zipfile (the zip format) against CPython's zipfile.ZipFile and read(name); zips
# dlio writes checked by Python's zipfile.
dlio_add_test(zipfile_test SOURCES io_models/zipfile_test.cc PROPERTIES TIMEOUT 300)
add_dependencies(zipfile_test dlio_preload)
target_compile_definitions(zipfile_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# format pt and reader.io_model torch_load against torch.load per file; pt files dlio writes
# loaded by torch.load.
dlio_add_test(pt_format_test SOURCES io_models/pt_format_test.cc PROPERTIES TIMEOUT 300)
add_dependencies(pt_format_test dlio_preload)
target_compile_definitions(pt_format_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# reader.npz_members: several members per np.load, against numpy under the interposer.
dlio_add_test(npz_members_test SOURCES io_models/npz_members_test.cc)
add_dependencies(npz_members_test dlio_preload)
target_compile_definitions(npz_members_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# Pillow's raw TIFF load (a head read, then the file mapped) against raw's mmap reader with
# reader.mmap_head_bytes.
dlio_add_test(pil_mmap_test SOURCES io_models/pil_mmap_test.cc PROPERTIES SKIP_RETURN_CODE 77)
add_dependencies(pil_mmap_test dlio_preload)
target_compile_definitions(pil_mmap_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# checkpoint.type h5py_save against h5py under libdlio_preload.so (it writes through libhdf5).
if(DLIO_WITH_HDF5)
  dlio_add_test(h5py_save_test SOURCES io_models/h5py_save_test.cc)
  add_dependencies(h5py_save_test dlio_preload)
  target_compile_definitions(h5py_save_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
endif()
