# presk_stage_library(NAME DEPS ...): one static library per pipeline stage, built from
# every .cpp in the calling folder. DEPS must be stages further down the pipeline.
function(presk_stage_library name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  if(sources)
    add_library(${name} STATIC)
    presk_unity(${name} ${sources})
    # Position-independent: the Python module (src/python), a shared object, links them too.
    set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  else()  # a stage with no code yet
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(${name} INTERFACE ${ARG_DEPS})
  endif()
endfunction()

# Unity build: the sources of a target compile in batches, each batch one translation unit (a
# generated file that #includes its sources). Most of a presk object's compile time is the
# front end reading the standard library, fmt and nlohmann::json, so a batch of N files costs
# little more than one: a fresh build is several times cheaper. The bits do not change: every
# fma is explicit and -ffp-contract=off holds in every translation unit.
# cmake/unity_batches.py forms the batches, keeping apart two files that define the same
# internal name (an anonymous namespace's function, a static) or where one's macro would reach
# the other. The batch files include their sources by a path relative to the project (found
# with -I<source dir>), not an absolute one, so that clones in different folders share ccache.
# PRESK_UNITY_BATCH=1 compiles every file alone (a developer editing one file of a folder).
# Batched: the stage libraries, the CLI (the `presk` target), the Python module and the test
# executables (PRESK_UNITY_TEST_BATCH files a batch, fewer: editing one test recompiles its
# batch), and the clang fuzz build (ASan, -O1, line tables; 2026-12-04, idle, -j2, no ccache:
# 91 s wall and 174 s CPU in batches of 8 against 127 s and 247 s file by file).
set(PRESK_UNITY_BATCH 8 CACHE STRING "Source files per unity translation unit (1: no unity build)")
set(PRESK_UNITY_TEST_BATCH 6 CACHE STRING "Test sources per unity translation unit (1: no unity build)")
# Files that compile alone: Highway's dynamic dispatch re-includes its file once per SIMD target
# (foreach_target.h), and the files with the git revision in their definitions change each commit.
set(PRESK_UNITY_ALONE
  src/exec/native/convert.cpp src/exec/native/kernels_f32.cpp src/exec/native/kernels_f64.cpp
  src/exec/native/kernels_rows.cpp src/exec/native/kernels_stream.cpp
  src/numerics/scheme/kernels_int8.cpp
  src/cli/cmd_version.cpp src/cli/main.cpp src/cli/envelope_run.cpp)
# Internal names that many files define, renamed file by file in a batch (unity_batches.py):
# each command's `registration`, the commands' printers. None may appear in a header.
set(PRESK_UNITY_RENAME registration print_table print_json report_json type_string type_json)

# presk_unity_sources(OUT NAME SIZE SOURCE…): OUT is the SOURCEs with each batch (of at most
# SIZE files) replaced by its generated file, <current binary dir>/unity/NAME_<i>.cpp.
function(presk_unity_sources out name size)
  set(result)
  set(batched)
  foreach(source ${ARGN})
    file(RELATIVE_PATH relative ${PROJECT_SOURCE_DIR} ${source})
    if(relative IN_LIST PRESK_UNITY_ALONE OR size LESS 2)
      list(APPEND result ${source})
    else()
      list(APPEND batched ${relative})
    endif()
  endforeach()
  if(batched)
    string(REPLACE ";" "," renamed "${PRESK_UNITY_RENAME}")
    execute_process(COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/cmake/unity_batches.py
                            ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/unity ${name}
                            ${size} "${renamed}" ${batched}
                    OUTPUT_VARIABLE generated OUTPUT_STRIP_TRAILING_WHITESPACE
                    COMMAND_ERROR_IS_FATAL ANY)
    string(REPLACE "\n" ";" generated "${generated}")
    # g++ warns of a type with internal linkage inside another's when the file is not the main
    # one (a header's concern); in a batch every source is an included file.
    foreach(file ${generated})
      if(file MATCHES "/unity/")
        set_source_files_properties(${file} PROPERTIES
          COMPILE_OPTIONS "$<$<CXX_COMPILER_ID:GNU>:-Wno-subobject-linkage>")
      endif()
    endforeach()
    list(APPEND result ${generated})
  endif()
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# presk_unity(TARGET SOURCE… [BATCH SIZE]): adds the SOURCEs to TARGET, batched
# (presk_unity_sources) SIZE files a batch (default PRESK_UNITY_BATCH).
function(presk_unity target)
  cmake_parse_arguments(ARG "" "BATCH" "" ${ARGN})
  if(NOT ARG_BATCH OR PRESK_UNITY_BATCH LESS 2)  # PRESK_UNITY_BATCH=1: every target file by file
    set(ARG_BATCH ${PRESK_UNITY_BATCH})
  endif()
  presk_unity_sources(sources ${target} ${ARG_BATCH} ${ARG_UNPARSED_ARGUMENTS})
  target_sources(${target} PRIVATE ${sources})
  if(ARG_BATCH GREATER 1)  # the batch files' #include "src/…"
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR})
  endif()
endfunction()
