# Included by the top-level CMakeLists.txt when GPUPOOL_BUILD_FUZZERS is ON, before any target is
# defined: every library is compiled with libFuzzer's coverage instrumentation (fuzzer-no-link)
# and AddressSanitizer + UndefinedBehaviorSanitizer, so that the fuzz targets of tests/fuzz see
# (and trap on) what happens inside the libraries. Only the fuzz targets link libFuzzer itself
# (-fsanitize=fuzzer, added in tests/fuzz/CMakeLists.txt). See tests/fuzz/README.md.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "GPUPOOL_BUILD_FUZZERS needs clang (libFuzzer); use `cmake --preset fuzz`")
endif()
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                    -fno-omit-frame-pointer -gline-tables-only)
add_link_options(-fsanitize=address,undefined)
