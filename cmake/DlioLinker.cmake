# Which linker dlio's own programs link with. The build links about a hundred programs (tests,
# benchmarks, examples, fuzz targets) against the static modules; GNU ld takes 2-4x as long as
# lld on each (docs/testing.md, "Build time"), which CI pays in every stage.
#   DLIO_LINKER=auto     lld when the compiler can use it, else gold, else the toolchain's default
#   DLIO_LINKER=lld|gold that linker (an error when the compiler cannot use it)
#   DLIO_LINKER=default  the toolchain's default (GNU ld on Debian)
include(CheckLinkerFlag)

set(DLIO_LINKER "auto" CACHE STRING "Linker for dlio's programs: auto, lld, gold or default")
set_property(CACHE DLIO_LINKER PROPERTY STRINGS auto lld gold default)

function(dlio_pick_linker out)
  if(DLIO_LINKER STREQUAL "default")
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  if(DLIO_LINKER STREQUAL "auto")
    set(candidates lld gold)
  elseif(DLIO_LINKER MATCHES "^(lld|gold)$")
    set(candidates ${DLIO_LINKER})
  else()
    message(FATAL_ERROR "DLIO_LINKER='${DLIO_LINKER}': expected auto, lld, gold or default")
  endif()
  foreach(linker IN LISTS candidates)
    check_linker_flag(CXX "-fuse-ld=${linker}" DLIO_LINKER_HAS_${linker})
    if(DLIO_LINKER_HAS_${linker})
      set(${out} ${linker} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  if(NOT DLIO_LINKER STREQUAL "auto")
    message(FATAL_ERROR "DLIO_LINKER=${DLIO_LINKER}: ${CMAKE_CXX_COMPILER} cannot link with "
                        "-fuse-ld=${DLIO_LINKER} (Debian: install lld or binutils)")
  endif()
  set(${out} "" PARENT_SCOPE)
endfunction()

dlio_pick_linker(dlio_linker)
if(dlio_linker)
  add_link_options(-fuse-ld=${dlio_linker})
  message(STATUS "dlio: linking with ${dlio_linker} (DLIO_LINKER=${DLIO_LINKER})")
else()
  message(STATUS "dlio: linking with the toolchain's default linker (DLIO_LINKER=${DLIO_LINKER})")
endif()
