# Fuzzing inside the test command: a clang build of fuzz/ (set up once, as a fixture), then
# each libFuzzer target for PRESK_FUZZ_SECONDS (default 20: the suite stays within its budget
# on 2 cores; each run still executes tens of thousands of inputs mutated from the seeds) without
# a crash, leak or internal_assert. The corpus of each run starts from tests/fuzz/corpus/<target>
# if present. A longer hunt: cmake --preset release -DPRESK_FUZZ_SECONDS=600, then ctest -L fuzz.
set(PRESK_FUZZ_SECONDS 20 CACHE STRING "Seconds each fuzz target runs inside the test suite")
set(fuzz_build ${PROJECT_BINARY_DIR}/fuzz-build)
add_test(NAME fuzz.build
  COMMAND ${CMAKE_COMMAND} -E env CXX=clang++
          ${PROJECT_SOURCE_DIR}/scripts/build-fuzzers ${PROJECT_SOURCE_DIR} ${fuzz_build})
set_tests_properties(fuzz.build PROPERTIES FIXTURES_SETUP fuzzers LABELS fuzz TIMEOUT 1200
                     SKIP_RETURN_CODE 77)  # no libFuzzer: skipped (CI refuses it)
file(GLOB fuzz_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/fuzz/fuzz_*.cpp)
foreach(source ${fuzz_sources})
  get_filename_component(name ${source} NAME_WE)
  add_test(NAME fuzz.${name}
    COMMAND ${PROJECT_SOURCE_DIR}/scripts/run-fuzzer ${fuzz_build}/fuzz/${name}
            ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/${name} ${PRESK_FUZZ_SECONDS})
  set_tests_properties(fuzz.${name} PROPERTIES FIXTURES_REQUIRED fuzzers LABELS fuzz
                       TIMEOUT 900 SKIP_RETURN_CODE 77)
endforeach()
