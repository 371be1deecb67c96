# tests/transcendentals: the native transcendentals against MPFR on every compiled SIMD target
# (10⁶ inputs per function and type; its own label, a few tens of seconds on 2 cores).
target_link_libraries(test_transcendentals PRIVATE PkgConfig::MPFR Arb::arb)
