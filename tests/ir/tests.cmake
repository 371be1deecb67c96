# The IR's golden tests: lit + FileCheck over tests/ir/lit (hand-written .pir files and the
# printed IR of every example), run against the presk binary of this build.
find_program(PRESK_LIT NAMES lit lit.py llvm-lit
             PATHS /usr/lib/llvm-14/build/utils/lit /usr/lib/llvm-14/bin NO_DEFAULT_PATH)
find_program(PRESK_LIT NAMES lit lit.py llvm-lit)
find_program(PRESK_FILECHECK NAMES FileCheck FileCheck-14 PATHS /usr/lib/llvm-14/bin)
find_package(Python3 COMPONENTS Interpreter)
if(PRESK_LIT AND PRESK_FILECHECK AND Python3_Interpreter_FOUND)
  get_filename_component(presk_llvm_bin ${PRESK_FILECHECK} DIRECTORY)
  add_test(NAME ir.lit
    COMMAND ${Python3_EXECUTABLE} ${PRESK_LIT} -sv
            --param presk=$<TARGET_FILE:presk>
            --param exec_root=${PROJECT_BINARY_DIR}/tests/ir/lit
            --param llvm_bin=${presk_llvm_bin}
            ${CMAKE_CURRENT_LIST_DIR}/lit)
  set_tests_properties(ir.lit PROPERTIES LABELS ir TIMEOUT 300)
else()
  message(WARNING "lit or FileCheck not found (Debian: llvm-14-tools); the IR golden tests are skipped")
endif()
