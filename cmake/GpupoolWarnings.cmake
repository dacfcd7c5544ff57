# gpupool_set_warnings(target): the project's warning flags, as errors when
# GPUPOOL_WARNINGS_AS_ERRORS is on. Applied to gpupool's own targets only.
function(gpupool_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                         -Wnon-virtual-dtor -Wimplicit-fallthrough
                         # Designated initializers that leave fields at their defaults are the
                         # idiom for our option structs.
                         -Wno-missing-field-initializers)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC 12 reports false -Wrestrict positives inside std::string (GCC bug 105329).
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(GPUPOOL_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
