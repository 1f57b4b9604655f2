# Warnings and sanitizers applied to dlio's own targets (never to dependencies).
#   DLIO_WERROR    warnings are errors (setup.sh test turns it on; normal builds tolerate them)
#   DLIO_SANITIZE  e.g. "address,undefined" or "thread"; UBSan findings halt the program
#   DLIO_FUZZ      clang: coverage for libFuzzer (-fsanitize=fuzzer-no-link) on every dlio target,
#                  and the fuzz targets of tests/fuzz/ are built
set(_dlio_sanitizers ${DLIO_SANITIZE})
if(DLIO_FUZZ)
  list(APPEND _dlio_sanitizers fuzzer-no-link)
endif()
list(JOIN _dlio_sanitizers "," DLIO_SANITIZE_FLAGS)

# clang links its sanitizer runtimes statically into executables only, so a shared library
# (libdlio_c.so, linked with --no-undefined) cannot resolve them: it and whatever links it use
# the shared runtime, found through an rpath. (GCC uses shared runtimes by default.)
set(DLIO_SANITIZE_SHARED_LINK_FLAGS "")
if(DLIO_SANITIZE_FLAGS AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libclang_rt.asan-x86_64.so
                  OUTPUT_VARIABLE _dlio_asan_rt OUTPUT_STRIP_TRAILING_WHITESPACE)
  get_filename_component(_dlio_asan_rt_dir "${_dlio_asan_rt}" DIRECTORY)
  set(DLIO_SANITIZE_SHARED_LINK_FLAGS -shared-libsan -Wl,-rpath,${_dlio_asan_rt_dir})
endif()

# dlio_target_defaults(target [NO_SANITIZE]): warnings, and the sanitizer of DLIO_SANITIZE unless
# NO_SANITIZE (libdlio_preload.so is loaded into programs that carry no sanitizer runtime).
function(dlio_target_defaults target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "NO_SANITIZE" "" "")
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-unused-parameter)
  if(DLIO_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(DLIO_SANITIZE_FLAGS AND NOT arg_NO_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${DLIO_SANITIZE_FLAGS} -fno-omit-frame-pointer)
    if(DLIO_SANITIZE MATCHES "undefined")
      target_compile_options(${target} PRIVATE -fno-sanitize-recover=undefined)
    endif()
    # Static libraries pass the runtime on to whatever links them (tests, the installed
    # package's consumers), a shared library also its kind of runtime; executables link it.
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "STATIC_LIBRARY")
      target_link_options(${target} INTERFACE -fsanitize=${DLIO_SANITIZE_FLAGS})
    elseif(type STREQUAL "SHARED_LIBRARY")
      target_link_options(${target} PUBLIC -fsanitize=${DLIO_SANITIZE_FLAGS}
                          ${DLIO_SANITIZE_SHARED_LINK_FLAGS})
    else()
      target_link_options(${target} PRIVATE -fsanitize=${DLIO_SANITIZE_FLAGS})
    endif()
  endif()
endfunction()

# DLIO_UNITY_BUILD (top-level CMakeLists.txt): `target` compiles its files in batches. A source
# with compile options of its own (protobuf's generated code, built with -w) stays on its own.
function(dlio_unity_build target)
  if(DLIO_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON
                                               UNITY_BUILD_BATCH_SIZE ${DLIO_UNITY_BATCH})
  endif()
endfunction()
