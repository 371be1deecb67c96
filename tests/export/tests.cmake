# The export's library calls (export_c's refusals) beside the end-to-end tests through `presk`.
target_link_libraries(test_export PRIVATE presk_export)
# generate.c (presk export c --entry decode) against presk generate on a tiny trained GPT.
add_test(NAME export.generate_c_test
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/generate_c_test.py $<TARGET_FILE:presk> ${PROJECT_SOURCE_DIR})
set_tests_properties(export.generate_c_test PROPERTIES LABELS export TIMEOUT 300 ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
