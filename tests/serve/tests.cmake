# presk generate and presk serve against a tiny trained GPT (examples/gpt.psk with small consts,
# trained for a few steps on a small text): generate's determinism and --compare, and the
# server driven by a real HTTP client (Python's http.client) on a free loopback port.
foreach(script generate_test serve_test)
  add_test(NAME serve.${script}
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/${script}.py $<TARGET_FILE:presk> ${PROJECT_SOURCE_DIR})
  set_tests_properties(serve.${script} PROPERTIES LABELS serve TIMEOUT 300
    ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
endforeach()
