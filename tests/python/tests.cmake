# The Python module's tests (tests/python/test_*.py): pytest run by the interpreter the module
# was built for, the package taken from the build folder (PYTHONPATH=<build>/python).
add_test(NAME python_module
         COMMAND ${Python3_EXECUTABLE} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_LIST_DIR})
set_tests_properties(python_module PROPERTIES LABELS python
  ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;PYTHONDONTWRITEBYTECODE=1;PRESK_SOURCE_DIR=${PROJECT_SOURCE_DIR}")

# The package installed with pip into a scratch venv (setup.py; docs/python.md), imported there
# without PYTHONPATH. It reuses this build's extension (PRESK_BUILD_DIR).
add_test(NAME python_package
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_package.py ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR})
set_tests_properties(python_package PROPERTIES LABELS python TIMEOUT 300
  ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
