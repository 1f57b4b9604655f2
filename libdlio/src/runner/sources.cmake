# Sources of the runner module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
  src/runner/accelerators.cc
  src/runner/aggregate.cc
  src/runner/checkpoint_options.cc
  src/runner/checkpoint_phase.cc
  src/runner/checkpoint_select.cc
  src/runner/epoch_stats.cc
  src/runner/generate_phase.cc
  src/runner/host_resources.cc
  src/runner/io_model_steps.cc
  src/runner/iostat_profiler.cc
  src/runner/loop_parts.cc
  src/runner/metrics.cc
  src/runner/options_for.cc
  src/runner/preflight.cc
  src/runner/preflight_run.cc
  src/runner/remove_generated.cc
  src/runner/report.cc
  src/runner/run_context.cc
  src/runner/run_storage.cc
  src/runner/runner.cc
  src/runner/side_io.cc
  src/runner/storage_rules.cc
  src/runner/summary_hosts.cc
  src/runner/training.cc
  src/runner/workloads.cc
)

# Workload presets: the DLIO YAML files in workloads/, embedded at build time so
# `dlio-run --workload NAME` and `dlio-run --config workloads/NAME.yaml` run the same text.
set(DLIO_WORKLOAD_YAMLS
  bert_v100
  cosmoflow_a100
  cosmoflow_h100
  dlrm
  llama3_1t
  llama3_405b
  llama3_70b
  llama3_8b
  resnet50_a100
  resnet50_h100
  unet3d_a100
  unet3d_h100
  unet3d_v100
  # The DLIO paper's eight scientific workloads (docs/workloads.md).
  candle
  climate_seg
  cosmic_tagger
  cosmoflow
  dffn
  frnn
  imagenet
  l2hmc
  # DLIO's other workload configs (argonne-lcf/dlio_benchmark configs/workload/), restated.
  cosmoflow_v100
  dlio_default
  llama_1t
  llama_405b
  llama_70b
  llama_70b_zero3
  llama_7b
  llama_7b_zero3
  llama_8b_zero3
  megatron_deepspeed_LLNL
  resnet50_tf
  resnet50_v100
  unet3d_a100_s3
  unet3d_h100_s3
  unet3d_v100_s3
  # MLPerf Storage's datagen configs and v3.0's accelerators, retinanet, dlrm and flux, restated.
  cosmoflow_datagen
  dlrm_a100
  dlrm_b200
  dlrm_h100
  dlrm_mi355
  flux_a100
  flux_b200
  flux_h100
  flux_mi355
  resnet50_datagen
  retinanet_a100
  retinanet_b200
  retinanet_datagen
  retinanet_h100
  retinanet_mi355
  unet3d_b200
  unet3d_datagen
)
set(DLIO_WORKLOAD_YAML_FILES "")
foreach(name ${DLIO_WORKLOAD_YAMLS})
  list(APPEND DLIO_WORKLOAD_YAML_FILES ${CMAKE_CURRENT_SOURCE_DIR}/workloads/${name}.yaml)
endforeach()
string(REPLACE ";" "," DLIO_WORKLOAD_NAMES_ARG "${DLIO_WORKLOAD_YAMLS}")
add_custom_command(
  OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/embedded_workloads.cc
  COMMAND ${CMAKE_COMMAND} -DDIR=${CMAKE_CURRENT_SOURCE_DIR}/workloads
          -DNAMES=${DLIO_WORKLOAD_NAMES_ARG} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/embedded_workloads.cc
          -P ${PROJECT_SOURCE_DIR}/cmake/EmbedWorkloads.cmake
  DEPENDS ${DLIO_WORKLOAD_YAML_FILES} ${PROJECT_SOURCE_DIR}/cmake/EmbedWorkloads.cmake
  COMMENT "Embedding workload presets"
  VERBATIM)
list(APPEND DLIO_SOURCES ${CMAKE_CURRENT_BINARY_DIR}/embedded_workloads.cc)
install(FILES ${DLIO_WORKLOAD_YAML_FILES} DESTINATION ${CMAKE_INSTALL_DATADIR}/dlio/workloads)
