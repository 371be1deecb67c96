# presk report's HTML, parsed by Python's standard html.parser (Debian's interpreter, named
# explicitly: the `python3` on PATH may be another one).
set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "the Python that has Debian's numpy, pytest, onnx")
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME report.html
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_report.py $<TARGET_FILE:presk> ${PROJECT_SOURCE_DIR})
  set_tests_properties(report.html PROPERTIES LABELS report TIMEOUT 120)
endif()
# The same page in Debian's headless chromium (scripts/install-deps installs it): laid out, linked,
# offline, painted; and a page with an empty type map fails the same checks. Exit 77 without it.
if(Python3_Interpreter_FOUND)
  add_test(NAME report.browser
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_browser.py $<TARGET_FILE:presk> ${PROJECT_SOURCE_DIR})
  set_tests_properties(report.browser PROPERTIES LABELS report TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()
