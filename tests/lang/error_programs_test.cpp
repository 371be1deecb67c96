// Runs every malformed program of tests/lang/errors/: each states what it expects inline,
//   # expect error E0312            (a diagnostic with this code)
//   # expect error E0312 at 4:9     (… at line 4, column 9)
//   # options --dim T=4 --const D=8 --entry loss --training
// and must fail with a UserError holding exactly the expected codes: no other code, no
// InternalError, no crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "lang_test_util.h"

namespace presk::lang::testing {
namespace {

struct Expectation {
  std::string code;
  int line = 0;    // 0: anywhere
  int column = 0;
};

struct ErrorProgram {
  FrontendOptions options;
  std::vector<Expectation> expected;
};

Binding parse_binding(const std::string& text) {
  size_t equals = text.find('=');
  return Binding{text.substr(0, equals), std::stoll(text.substr(equals + 1))};
}

ErrorProgram read_expectations(const std::string& text) {
  ErrorProgram program;
  std::istringstream lines(text);
  std::string line;
  std::regex expect(R"(# expect error (E\d{4})(?: at (\d+):(\d+))?)");
  while (std::getline(lines, line)) {
    std::smatch match;
    if (std::regex_search(line, match, expect)) {
      Expectation e{match[1], 0, 0};
      if (match[2].matched) e.line = std::stoi(match[2]), e.column = std::stoi(match[3]);
      program.expected.push_back(e);
    }
    if (line.rfind("# options", 0) == 0) {
      std::istringstream words(line.substr(9));
      std::string flag, value;
      while (words >> flag) {
        if (flag == "--training") {
          program.options.training = true;
          continue;
        }
        words >> value;
        if (flag == "--dim") program.options.dims.push_back(parse_binding(value));
        if (flag == "--const") program.options.consts.push_back(parse_binding(value));
        if (flag == "--entry") program.options.entry = value;
      }
    }
  }
  return program;
}

std::pair<int, int> line_column(const Diagnostic& d) {
  int line = 1, column = 1;
  for (uint32_t i = 0; i < d.span.begin && i < d.span.file->text.size(); ++i) {
    if (d.span.file->text[i] == '\n') line++, column = 1;
    else column++;
  }
  return {line, column};
}

void check_program(const std::filesystem::path& path) {
  auto source = read_source(path.string());
  ErrorProgram program = read_expectations(source->text);
  ASSERT_FALSE(program.expected.empty()) << "no `# expect error` line";
  try {
    compile(source, program.options);
    ADD_FAILURE() << "compiled without error";
  } catch (const UserError& error) {
    std::set<std::string> expected_codes;
    for (const Expectation& e : program.expected) {
      expected_codes.insert(e.code);
      bool found = false;
      for (const Diagnostic& d : error.diagnostics()) {
        if (d.code != e.code) continue;
        if (e.line == 0) found = true;
        else if (d.span.known() && line_column(d) == std::make_pair(e.line, e.column)) found = true;
      }
      EXPECT_TRUE(found) << "expected " << e.code << (e.line ? " at " + std::to_string(e.line) + ":" + std::to_string(e.column) : "")
                         << "; got:\n" << error.what();
    }
    for (const Diagnostic& d : error.diagnostics()) {
      EXPECT_TRUE(expected_codes.count(d.code)) << "unexpected diagnostic:\n" << format_diagnostic(d);
    }
  }
}

TEST(ErrorPrograms, EachFailsWithItsExpectedCodes) {
  std::filesystem::path folder = repo_path("tests/lang/errors");
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() == ".psk") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  EXPECT_GE(files.size(), 40u);
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    check_program(file);
  }
}

// Together the programs cover every front-end code that a source file can produce (E0003
// and E0207 are tested in hostile_input_test.cpp).
TEST(ErrorPrograms, CoverEveryFrontEndCode) {
  std::set<std::string> covered;
  for (const auto& entry : std::filesystem::directory_iterator(repo_path("tests/lang/errors"))) {
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    for (const Expectation& e : read_expectations(text.str()).expected) covered.insert(e.code);
  }
  std::ifstream doc(repo_path("docs/errors.md"));
  std::stringstream text;
  text << doc.rdbuf();
  std::regex row(R"(\| (E\d{4}) \|)");
  std::string doc_text = text.str();
  int documented = 0;
  for (std::sregex_iterator it(doc_text.begin(), doc_text.end(), row), end; it != end; ++it) {
    std::string code = (*it)[1];
    if (code < "E0200" || code >= "E0400") continue;  // the front end's range
    documented++;
    if (code == "E0003" || code == "E0207") continue;
    EXPECT_TRUE(covered.count(code)) << code << " is documented but no error program covers it";
  }
  EXPECT_GT(documented, 40);
}

}  // namespace
}  // namespace presk::lang::testing
