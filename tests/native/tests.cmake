# tests/native: MPFR for the transcendental accuracy test (the cross-check at 256 bits).
target_link_libraries(test_native PRIVATE PkgConfig::MPFR)
