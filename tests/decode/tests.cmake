# The decode step's twin sites (src/generate/twins.h): a realization solved on loss/logits mapped
# onto the decode entry.
target_link_libraries(test_decode PRIVATE presk_generate)
