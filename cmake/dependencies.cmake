# Every dependency is a Debian package installed by scripts/install-deps.
find_package(PkgConfig REQUIRED)
pkg_check_modules(MPFR REQUIRED IMPORTED_TARGET mpfr)
pkg_check_modules(GMP REQUIRED IMPORTED_TARGET gmp)
pkg_check_modules(GMPXX REQUIRED IMPORTED_TARGET gmpxx)  # libgmp-dev: exact rationals (src/numerics)
find_package(nlohmann_json 3 CONFIG REQUIRED)
find_package(fmt CONFIG REQUIRED)
find_package(TBB CONFIG REQUIRED)
find_package(Threads REQUIRED)
find_package(hwy CONFIG REQUIRED)

# Arb (libflint-arb-dev) has neither a .pc file nor a CMake config on bookworm.
find_path(ARB_INCLUDE_DIR arb.h REQUIRED)
find_library(ARB_LIBRARY NAMES flint-arb arb REQUIRED)
find_library(FLINT_LIBRARY NAMES flint REQUIRED)
add_library(Arb::arb INTERFACE IMPORTED)
target_include_directories(Arb::arb INTERFACE ${ARB_INCLUDE_DIR})
target_link_libraries(Arb::arb INTERFACE ${ARB_LIBRARY} ${FLINT_LIBRARY} PkgConfig::MPFR PkgConfig::GMP)

if(NOT PRESK_FUZZ)
  find_package(CLI11 CONFIG REQUIRED)
  find_package(GTest CONFIG REQUIRED)
  pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)  # presk serve (src/serve)
endif()
