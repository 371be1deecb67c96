# The export's library calls (export_c's refusals) beside the end-to-end tests through `presk`.
target_link_libraries(test_export PRIVATE presk_export)
