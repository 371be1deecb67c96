# The Python module's tests (tests/python/test_*.py): pytest run by the interpreter the module
# was built for, the package taken from the build folder (PYTHONPATH=<build>/python).
add_test(NAME python_module
         COMMAND ${Python3_EXECUTABLE} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_LIST_DIR})
set_tests_properties(python_module PROPERTIES LABELS python
  ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;PYTHONDONTWRITEBYTECODE=1;PRESK_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
