# presk under mpirun on localhost (docs/distributed.md): calibrate (and with --sweep f64), run --exact, margins and solve
# as 2 and 3 ranks (calibrate --step as 3), byte for byte against one process; a rank without the weights (E1740); a rank
# killed mid-run (E1741) and the rerun that resumes from the exact outputs' cache. They need
# OpenMPI's mpirun (scripts/install-deps installs openmpi-bin) and fail without it.
foreach(mpi_case calibrate-2 calibrate-3 calibrate-sweep-2 calibrate-sweep-3 run-2 run-3 margins-2 margins-3 solve-2 solve-3 step-3 weights-missing killed-rank)
  add_test(NAME mpi.${mpi_case}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_mpi.py $<TARGET_FILE:presk>
                   ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/mpi ${mpi_case})
  set_tests_properties(mpi.${mpi_case} PROPERTIES LABELS mpi TIMEOUT 300)
endforeach()
