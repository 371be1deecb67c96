// Where a corpus's text comes from: the King James Bible dumped by Debian's `bible`
// program, or any text file.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "support/diagnostics.h"
#include "support/input_file.h"
#include "train/corpus.h"

namespace presk::train {
namespace {

constexpr const char* kInstallHint =
    "run scripts/install-deps (it installs Debian's bible-kjv), or pass --text FILE";

// The executable `program` found on the PATH, as `sh` would find it.
std::optional<std::string> find_on_path(std::string_view program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::stringstream folders{std::string(path)};
  std::string folder;
  while (std::getline(folders, folder, ':')) {
    std::string candidate = (folder.empty() ? "." : folder) + "/" + std::string(program);
    struct stat info;
    if (::stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

// `text` quoted for the POSIX shell.
std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// Runs `command` through the shell and returns what it printed on stdout, and its exit
// status (-1 when it did not exit normally).
std::pair<std::string, int> capture_output(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    user_error("E0701").hint(kInstallHint)
        << "cannot run `" << command << "`: " << std::strerror(errno);
  }
  std::string output;
  std::array<char, 1 << 16> buffer;
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    output.append(buffer.data(), n);
  int raw = ::pclose(pipe);
  int status = (raw != -1 && WIFEXITED(raw)) ? WEXITSTATUS(raw) : -1;
  return {std::move(output), status};
}

}  // namespace

std::string strip_verse_references(std::string_view text) {
  std::string stripped;
  stripped.reserve(text.size());
  size_t line_begin = 0;
  while (line_begin < text.size()) {
    size_t line_end = text.find('\n', line_begin);
    size_t next = line_end == std::string_view::npos ? text.size() : line_end + 1;
    std::string_view line = text.substr(line_begin, next - line_begin);
    size_t space = line.find(' ');
    // A space inside the line (not the newline) ends the reference.
    if (space != std::string_view::npos) line.remove_prefix(space + 1);
    stripped += line;
    line_begin = next;
  }
  return stripped;
}

CorpusText read_kjv() {
  std::optional<std::string> program = find_on_path(kKjvProgram);
  if (!program) {
    user_error("E0700").hint(kInstallHint)
        << "the King James Bible needs the `bible` program (Debian's bible-kjv), which is not "
           "installed (not on the PATH)";
  }
  std::string command = shell_quote(*program) + " " + std::string(kKjvArguments);
  auto [output, status] = capture_output(command + " 2>/dev/null");
  if (status != 0 || output.empty()) {
    user_error("E0701").hint(
        "reinstall it: run scripts/install-deps, or apt-get install --reinstall "
        "bible-kjv bible-kjv-text")
        << "`bible " << kKjvArguments << "` "
        << (status != 0 ? "failed (exit status " + std::to_string(status) + ")"
                        : std::string("printed nothing"));
  }
  return {strip_verse_references(output), "kjv"};
}

CorpusText read_text_file(const std::string& path) {
  CorpusText text{
      read_input_file(path, {"text file", "E0702", "check the path and its permissions", kTextFileLimit}), path};
  if (text.bytes.empty()) {
    user_error("E0703").hint("pass a file that holds the text to train on")
        << "the text file " << path << " is empty";
  }
  return text;
}

}  // namespace presk::train
