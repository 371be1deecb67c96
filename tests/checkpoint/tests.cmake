# A sharded checkpoint written by `presk checkpoint synth`, read back by an independent,
# standard-library Python reader (names, shapes, the index, the bf16 values' distribution).
set(checkpoint_synth_folder ${CMAKE_CURRENT_BINARY_DIR}/checkpoint_synth)
add_test(NAME checkpoint.synth_sharded
         COMMAND presk checkpoint synth ${PROJECT_SOURCE_DIR}/examples/llama.psk --dim T=4
                 --out ${checkpoint_synth_folder} --seed 11 --dtype bf16 --shard-size 64KB)
set_tests_properties(checkpoint.synth_sharded PROPERTIES FIXTURES_SETUP checkpoint_synth LABELS checkpoint)
add_test(NAME checkpoint.python_reads_hf_layout
         COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/check_hf_layout.py ${checkpoint_synth_folder})
set_tests_properties(checkpoint.python_reads_hf_layout PROPERTIES
                     FIXTURES_REQUIRED checkpoint_synth LABELS checkpoint)
# SIGTERM and SIGINT during `presk checkpoint synth` remove the file being written.
add_test(NAME checkpoint.synth_signal_leaves_no_temporary
         COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/check_synth_signal.py $<TARGET_FILE:presk>
                 ${PROJECT_SOURCE_DIR}/examples/llama.psk ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(checkpoint.synth_signal_leaves_no_temporary PROPERTIES LABELS checkpoint)
