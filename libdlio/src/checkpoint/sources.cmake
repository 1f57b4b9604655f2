# Sources of the checkpoint module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
  src/checkpoint/checkpoint_folders.cc
  src/checkpoint/checkpoint_layout.cc
  src/checkpoint/dlio_benchmark_plan.cc
  src/checkpoint/file_checkpointer.cc
  src/checkpoint/file_checkpointer_types.cc
  src/checkpoint/folder_name.cc
  src/checkpoint/h5py_save_plan.cc
  src/checkpoint/per_save_names.cc
  src/checkpoint/register.cc
  src/checkpoint/torch_load.cc
  src/checkpoint/torch_load_zip.cc
  src/checkpoint/torch_save_plan.cc
  src/checkpoint/transformer_plan.cc
)
