# tests/import: ONNX models built with Debian's python3-onnx, imported, run natively (f32) and
# exactly, and compared with ONNX Runtime (npm onnxruntime-node, installed by scripts/install-deps
# into PRESK_ORT_DIR; the ORT groups are skipped, exit 77, when it is absent). One test per group.
find_package(Python3 COMPONENTS Interpreter)
if(DEFINED ENV{XDG_CACHE_HOME})
  set(presk_cache_home $ENV{XDG_CACHE_HOME})
else()
  set(presk_cache_home $ENV{HOME}/.cache)
endif()
set(PRESK_ORT_DIR ${presk_cache_home}/presk/onnxruntime-node-1.20.1 CACHE PATH
    "The folder scripts/install-deps installed npm's onnxruntime-node into")
foreach(group elementwise contraction layout models shapes conv activation reduce cnn quant select math integers integer_ops fix_input indexing qlinear external errors hostile integer_exact solve solve_cnn)
  add_test(NAME import.${group}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_import.py --presk $<TARGET_FILE:presk>
            --ort ${PRESK_ORT_DIR} --work ${PROJECT_BINARY_DIR}/tests/import/${group} --group ${group})
  set_tests_properties(import.${group} PROPERTIES LABELS import SKIP_RETURN_CODE 77 TIMEOUT 300)
endforeach()
# The real exports of tests/import/exports/ (torch's, made by scripts/export-models; no torch needed).
foreach(group exports exports_solve)
  add_test(NAME import.${group}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_exports.py --presk $<TARGET_FILE:presk>
            --ort ${PRESK_ORT_DIR} --work ${PROJECT_BINARY_DIR}/tests/import/${group} --group ${group})
  set_tests_properties(import.${group} PROPERTIES LABELS import SKIP_RETURN_CODE 77 TIMEOUT 600)
endforeach()
# The GoogleTest units of this folder (test_import) test the import library itself.
if(TARGET test_import)
  target_link_libraries(test_import PRIVATE presk_import)
endif()

# ONNX's own backend tests (Debian's libonnx-testdata: data/node, pytorch-operator,
# pytorch-converted) against conformance_expected.txt; skipped, exit 77, when it is absent.
# `conformance.py --presk build/release/src/cli/presk --update` rewrites the lists.
add_test(NAME import.conformance
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/conformance.py --presk $<TARGET_FILE:presk> --jobs 2)
set_tests_properties(import.conformance PROPERTIES LABELS "import;conformance" SKIP_RETURN_CODE 77 TIMEOUT 900
                     COST 1000)  # the longest test: started first, not last (a fresh clone has no timings)
