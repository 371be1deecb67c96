# presk report's HTML, parsed by Python's standard html.parser (Debian's interpreter, named
# explicitly: the `python3` on PATH may be another one).
set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "the Python that has Debian's numpy, pytest, onnx")
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME report.html
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_report.py $<TARGET_FILE:presk> ${PROJECT_SOURCE_DIR})
  set_tests_properties(report.html PROPERTIES LABELS report TIMEOUT 120)
endif()
