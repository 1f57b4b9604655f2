# Fuzz targets (docs/testing.md). Every build: the harness and a replay program that ctest runs
# over each committed regression input (one entry per file: fuzz_regression:<target>/<file>) and
# over each target's seed corpus (fuzz_corpus:<target>). Inputs under crashes/<target>/ reproduce
# bugs not fixed yet: listed as disabled entries (fuzz_open:<target>/<file>) until their fix moves
# them to regressions/. With DLIO_FUZZ (clang): one libFuzzer binary per target,
# dlio_fuzz_<target>, run by setup.sh's fuzz stage.
set(DLIO_FUZZ_TARGETS npy npz csv indexed_binary tfrecord jpeg png)
if(DLIO_WITH_HDF5)
  list(APPEND DLIO_FUZZ_TARGETS hdf5)
endif()
list(APPEND DLIO_FUZZ_TARGETS parquet webdataset sqlite zip pt config trace cache_wire)

add_library(dlio_fuzz_harness STATIC fuzz/fuzz_targets.cc fuzz/format_fuzz.cc fuzz/config_fuzz.cc
            fuzz/trace_fuzz.cc fuzz/cache_wire_fuzz.cc)
dlio_target_defaults(dlio_fuzz_harness)
target_include_directories(dlio_fuzz_harness PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/fuzz
                           PRIVATE ${PROJECT_SOURCE_DIR}/libdlio/src)
target_link_libraries(dlio_fuzz_harness PUBLIC dlio::dlio
                      PRIVATE nlohmann_json::nlohmann_json protobuf::libprotobuf)

if(DLIO_WITH_HDF5)  # the harness checks that readers close every HDF5 object they open
  dlio_use_hdf5(dlio_fuzz_harness)
  target_compile_definitions(dlio_fuzz_harness PRIVATE DLIO_FUZZ_HDF5=1)
endif()

add_executable(dlio_fuzz_replay fuzz/replay_main.cc)
dlio_target_defaults(dlio_fuzz_replay)
target_link_libraries(dlio_fuzz_replay PRIVATE dlio_fuzz_harness)

# Writes the seed corpus with dlio's writers; built on request only (see make_seeds.cc).
add_executable(dlio_fuzz_seeds EXCLUDE_FROM_ALL fuzz/make_seeds.cc)
dlio_target_defaults(dlio_fuzz_seeds)
target_include_directories(dlio_fuzz_seeds PRIVATE ${PROJECT_SOURCE_DIR}/libdlio/src)
target_link_libraries(dlio_fuzz_seeds PRIVATE dlio_fuzz_harness)

add_test(NAME fuzz:targets COMMAND dlio_fuzz_replay --list)
list(JOIN DLIO_FUZZ_TARGETS " " _fuzz_names)
set_tests_properties(fuzz:targets PROPERTIES TIMEOUT 30 LABELS fuzz
                     PASS_REGULAR_EXPRESSION "targets: ${_fuzz_names}\n")
foreach(target ${DLIO_FUZZ_TARGETS})
  set(dir ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
  add_test(NAME fuzz_corpus:${target} COMMAND dlio_fuzz_replay ${target} ${dir}/corpus/${target})
  set_tests_properties(fuzz_corpus:${target} PROPERTIES TIMEOUT 120 LABELS fuzz
                       ENVIRONMENT "${DLIO_LSAN_ENV}")
  file(GLOB inputs CONFIGURE_DEPENDS ${dir}/regressions/${target}/*)
  foreach(input ${inputs})
    get_filename_component(input_name ${input} NAME)
    add_test(NAME fuzz_regression:${target}/${input_name}
             COMMAND dlio_fuzz_replay ${target} ${input})
    set_tests_properties(fuzz_regression:${target}/${input_name} PROPERTIES TIMEOUT 60
                         LABELS fuzz ENVIRONMENT "${DLIO_LSAN_ENV}")
  endforeach()
  file(GLOB inputs CONFIGURE_DEPENDS ${dir}/crashes/${target}/*)
  foreach(input ${inputs})
    get_filename_component(input_name ${input} NAME)
    add_test(NAME fuzz_open:${target}/${input_name} COMMAND dlio_fuzz_replay ${target} ${input})
    set_tests_properties(fuzz_open:${target}/${input_name} PROPERTIES DISABLED ON LABELS fuzz
                         ENVIRONMENT "${DLIO_LSAN_ENV}")
  endforeach()
  if(DLIO_FUZZ)
    add_executable(dlio_fuzz_${target} fuzz/libfuzzer_main.cc)
    dlio_target_defaults(dlio_fuzz_${target})
    target_compile_definitions(dlio_fuzz_${target} PRIVATE DLIO_FUZZ_TARGET="${target}")
    target_link_options(dlio_fuzz_${target} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(dlio_fuzz_${target} PRIVATE dlio_fuzz_harness)
  endif()
endforeach()
