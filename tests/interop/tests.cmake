dlio_add_test(interop_numpy_test LIBS dlio_format dlio_storage dlio_trace ZLIB::ZLIB
  SOURCES interop/numpy_interop_test.cc)
dlio_add_test(interop_pandas_test LIBS dlio_format dlio_storage dlio_trace
  SOURCES interop/pandas_interop_test.cc)
dlio_add_test(interop_image_test LIBS dlio_format dlio_storage dlio_trace ZLIB::ZLIB
  SOURCES interop/image_interop_test.cc)
if(DLIO_WITH_HDF5)
  dlio_add_test(interop_hdf5_test LIBS dlio_format dlio_storage dlio_trace ZLIB::ZLIB
    nlohmann_json::nlohmann_json
    SOURCES interop/hdf5_interop_test.cc)
endif()

# The Python module of tf.train.Example, generated from the library's .proto into the build tree.
set(DLIO_TFRECORD_PY_DIR ${CMAKE_CURRENT_BINARY_DIR}/tfrecord_py)
set(DLIO_TFRECORD_PY ${DLIO_TFRECORD_PY_DIR}/format/tfrecord/example_pb2.py)
add_custom_command(
  OUTPUT ${DLIO_TFRECORD_PY}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${DLIO_TFRECORD_PY_DIR}
  COMMAND protobuf::protoc --python_out=${DLIO_TFRECORD_PY_DIR} -I ${PROJECT_SOURCE_DIR}/libdlio/src
          ${PROJECT_SOURCE_DIR}/libdlio/src/format/tfrecord/example.proto
  DEPENDS ${PROJECT_SOURCE_DIR}/libdlio/src/format/tfrecord/example.proto protobuf::protoc
  COMMENT "protoc: tf.train.Example Python module for the tfrecord interop test"
  VERBATIM)
add_custom_target(dlio_tfrecord_py DEPENDS ${DLIO_TFRECORD_PY})
dlio_add_test(interop_tfrecord_test LIBS dlio_format dlio_storage dlio_trace ZLIB::ZLIB
  SOURCES interop/tfrecord_interop_test.cc)
add_dependencies(interop_tfrecord_test dlio_tfrecord_py)
target_compile_definitions(interop_tfrecord_test PRIVATE
  DLIO_TFRECORD_PY_DIR="${DLIO_TFRECORD_PY_DIR}/format/tfrecord")
# dlio-run on datasets laid out as the Python DLIO's, and h5py/numpy on dlio-run's (end to end:
# dlio-run and python processes, so not under the sanitizers).
if(DLIO_WITH_HDF5 AND NOT DLIO_SANITIZE)
  dlio_add_test(interop_dlio_datasets_test SOURCES interop/dlio_datasets_test.cc
    PROPERTIES TIMEOUT 300)
  add_dependencies(interop_dlio_datasets_test dlio-run dlio_tfrecord_py)
  target_compile_definitions(interop_dlio_datasets_test PRIVATE
    DLIO_TFRECORD_PY_DIR="${DLIO_TFRECORD_PY_DIR}/format/tfrecord")
endif()
