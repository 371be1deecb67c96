// Where a GoogleTest binary finds the repository and the presk binary, at run time: the
// environment (PRESK_SOURCE_DIR, PRESK_BINARY; CTest sets both), else from the test binary's own
// path (build/<preset>/tests/test_x: the source is the first folder above it holding
// examples/gpt.psk and CMakePresets.json; presk is build/<preset>/src/cli/presk). Not compiled
// in as string literals: then every worktree and clone compiled its own tests, and ccache shared
// nothing between them. Force-included into every test unit (tests/CMakeLists.txt).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace presk::test_paths {

inline std::filesystem::path own_folder() {
  std::error_code error;
  return std::filesystem::read_symlink("/proc/self/exe", error).parent_path();
}

inline const std::string& source_dir() {
  static const std::string dir = [] {
    if (const char* value = std::getenv("PRESK_SOURCE_DIR"); value != nullptr && *value != 0) return std::string(value);
    std::error_code error;
    for (std::filesystem::path d = own_folder(); !d.empty() && d != d.parent_path(); d = d.parent_path()) {
      if (std::filesystem::exists(d / "examples" / "gpt.psk", error) && std::filesystem::exists(d / "CMakePresets.json", error)) {
        return d.string();
      }
    }
    return std::string(".");
  }();
  return dir;
}

inline const std::string& binary() {
  static const std::string path = [] {
    if (const char* value = std::getenv("PRESK_BINARY"); value != nullptr && *value != 0) return std::string(value);
    return (own_folder().parent_path() / "src" / "cli" / "presk").string();
  }();
  return path;
}

}  // namespace presk::test_paths

#define PRESK_SOURCE_DIR (::presk::test_paths::source_dir().c_str())
#define PRESK_BINARY (::presk::test_paths::binary().c_str())
