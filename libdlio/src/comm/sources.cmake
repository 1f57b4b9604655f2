# Sources of the comm module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
  src/comm/serial_comm.cc
  src/comm/mpi_comm.cc
  src/comm/make_comm.cc
  src/comm/thread_group_comm.cc
)
