# Warnings and sanitizers applied to dlio's own targets (never to dependencies).
function(dlio_target_defaults target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-unused-parameter)
  if(DLIO_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${DLIO_SANITIZE} -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=${DLIO_SANITIZE})
  endif()
endfunction()
