// A fresh temporary folder per test, removed with everything in it at the end. With
// PRESK_KEEP_TEST_FILES=DIR set, it is first copied to DIR/<Suite.Test>/<n> (to compare what a
// test group writes before and after a refactor).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace presk::testing_support {

class TempFolder {
 public:
  TempFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "presk-test-XXXXXX").string();
    char* made = ::mkdtemp(pattern.data());
    if (made == nullptr) ADD_FAILURE() << "mkdtemp failed";
    path_ = pattern;
  }
  ~TempFolder() {
    std::error_code ignored;
    if (const char* keep = std::getenv("PRESK_KEEP_TEST_FILES"); keep != nullptr && *keep != 0) {
      const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
      const std::string name = test ? std::string(test->test_suite_name()) + "." + test->name() : "outside";
      std::filesystem::path to = std::filesystem::path(keep) / name / "0";
      for (int n = 1; std::filesystem::exists(to, ignored); ++n) to.replace_filename(std::to_string(n));
      std::filesystem::create_directories(to, ignored);
      std::filesystem::copy(path_, to, std::filesystem::copy_options::recursive, ignored);
    }
    std::filesystem::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace presk::testing_support
