dlio_add_test(checkpoint_test LIBS dlio_checkpoint dlio_storage dlio_trace
  SOURCES checkpoint/checkpointer_test.cc)
dlio_add_test(transformer_checkpoint_test LIBS dlio_checkpoint dlio_builtins dlio_storage dlio_trace
  SOURCES checkpoint/transformer_checkpoint_test.cc)
dlio_add_test(checkpoint_recovery_test LIBS dlio_runner dlio_checkpoint dlio_comm dlio_storage
  dlio_trace SOURCES checkpoint/checkpoint_recovery_test.cc)
# checkpoint.folder_name: the template's names, its validation, saves and the newest by step.
dlio_add_test(checkpoint_folder_name_test LIBS dlio_checkpoint dlio_storage dlio_trace
  SOURCES checkpoint/folder_name_test.cc checkpoint/torch_file_name_test.cc
          checkpoint/epoch_name_test.cc)
dlio_add_test(torch_load_test LIBS dlio_checkpoint dlio_storage dlio_trace
  SOURCES checkpoint/torch_load_test.cc)
# dlio-run under strace: checkpoints and side_io files written in place, summary.json via a rename.
dlio_add_test(checkpoint_write_path_e2e_test LIBS dlio_core
  SOURCES checkpoint/write_path_e2e_test.cc PROPERTIES TIMEOUT 120)
add_dependencies(checkpoint_write_path_e2e_test dlio-run)
# torch.load's requests: a hand-worked layout, TorchSaveLayout against the bytes, the read-back.
dlio_add_test(torch_load_requests_test LIBS dlio_checkpoint dlio_storage dlio_trace
  SOURCES checkpoint/torch_load_requests_test.cc)
# Nested containers (DeepSpeed's model and optimizer states): hand-worked and straced writes.
dlio_add_test(torch_save_nested_test LIBS dlio_checkpoint dlio_builtins dlio_storage dlio_trace
  SOURCES checkpoint/torch_save_nested_test.cc)
# dlio-run under strace: checkpoint.resume loads the generated checkpoint before the data.
dlio_add_test(checkpoint_resume_e2e_test LIBS dlio_core
  SOURCES checkpoint/resume_e2e_test.cc PROPERTIES TIMEOUT 120)
add_dependencies(checkpoint_resume_e2e_test dlio-run)
