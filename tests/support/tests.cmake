# A file written by presk, read back by an independent reader: a small tool writes every
# dtype with known values, then a standard-library Python script decodes and compares them.
add_executable(support_write_sample ${CMAKE_CURRENT_LIST_DIR}/tools/write_sample.cpp)
target_link_libraries(support_write_sample PRIVATE presk_support)
set(support_sample ${CMAKE_CURRENT_BINARY_DIR}/support_sample.safetensors)
add_test(NAME support.write_sample COMMAND support_write_sample ${support_sample})
set_tests_properties(support.write_sample PROPERTIES FIXTURES_SETUP support_sample
                     LABELS support)
add_test(NAME support.python_reads_safetensors
         COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/check_safetensors.py ${support_sample})
set_tests_properties(support.python_reads_safetensors PROPERTIES
                     FIXTURES_REQUIRED support_sample LABELS support)
