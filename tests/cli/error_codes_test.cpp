// Every error code presk can raise is documented in docs/errors.md, and every documented code
// is one that presk raises: the codes in the sources and the doc's table are the same set.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::set<std::string> matches(const std::string& text, const std::regex& pattern) {
  std::set<std::string> found;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern); it != std::sregex_iterator();
       ++it) {
    found.insert((*it)[1]);
  }
  return found;
}

// Codes written as string literals ("E0123") in src/.
std::set<std::string> codes_in_sources() {
  std::set<std::string> codes;
  std::regex literal("\"(E[0-9]{4})\"");
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(PRESK_SOURCE_DIR) / "src")) {
    std::string extension = entry.path().extension();
    if (extension != ".cpp" && extension != ".h") continue;
    std::set<std::string> found = matches(read_file(entry.path()), literal);
    codes.insert(found.begin(), found.end());
  }
  return codes;
}

// Codes that begin a row of a table in docs/errors.md.
std::set<std::string> codes_in_doc() {
  return matches(read_file(fs::path(PRESK_SOURCE_DIR) / "docs" / "errors.md"),
                 std::regex("\\n\\| *(E[0-9]{4}) *\\|"));
}

TEST(ErrorCodes, EveryRaisedCodeIsDocumented) {
  std::set<std::string> documented = codes_in_doc();
  for (const std::string& code : codes_in_sources()) {
    EXPECT_TRUE(documented.count(code)) << code << " is raised in src/ but not in docs/errors.md";
  }
}

TEST(ErrorCodes, EveryDocumentedCodeIsRaised) {
  std::set<std::string> raised = codes_in_sources();
  for (const std::string& code : codes_in_doc()) {
    EXPECT_TRUE(raised.count(code)) << code << " is in docs/errors.md but nothing raises it";
  }
}

}  // namespace
