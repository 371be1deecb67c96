# The independent check of the reference interpreter against a plain mpmath evaluator.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME reference_mpmath_agreement
           COMMAND ${Python3_EXECUTABLE} ${folder}/mpmath_check.py $<TARGET_FILE:presk> ${PROJECT_SOURCE_DIR})
  set_tests_properties(reference_mpmath_agreement PROPERTIES LABELS reference TIMEOUT 120)
endif()
