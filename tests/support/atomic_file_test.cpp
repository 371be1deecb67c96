// Atomic writes: replace, error codes, and a writer killed at varying moments, after which
// the file is exactly the old or the new content and at most one temporary remains.
#include "support/atomic_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/diagnostics.h"
#include "support/temp_folder.h"

namespace presk {
namespace {

using testing_support::TempFolder;

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<std::string> names_in(const std::string& folder) {
  std::vector<std::string> names;
  for (const auto& item : std::filesystem::directory_iterator(folder)) {
    names.push_back(item.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string code_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const UserError& e) {
    return e.code();
  }
  return "no error";
}

TEST(AtomicFile, WritesAndReplaces) {
  TempFolder folder;
  std::string path = folder.file("out.bin");
  write_file_atomically(path, "first");
  EXPECT_EQ(read_all(path), "first");
  write_file_atomically(path, "second, longer");
  EXPECT_EQ(read_all(path), "second, longer");
  EXPECT_EQ(names_in(folder.path()), std::vector<std::string>{"out.bin"});
}

TEST(AtomicFile, AbandonedWriterLeavesTheOldFile) {
  TempFolder folder;
  std::string path = folder.file("out.bin");
  write_file_atomically(path, "old");
  {
    AtomicFileWriter writer(path);
    writer.write("half of a new");
  }
  EXPECT_EQ(read_all(path), "old");
  EXPECT_EQ(names_in(folder.path()), std::vector<std::string>{"out.bin"});
}

TEST(AtomicFile, ErrorsAreCoded) {
  TempFolder folder;
  EXPECT_EQ(code_of([&] { write_file_atomically(folder.file("missing/out.bin"), "x"); }), "E0130");
  std::filesystem::create_directory(folder.file("a_folder"));
  EXPECT_EQ(code_of([&] { write_file_atomically(folder.file("a_folder"), "x"); }), "E0133");
  EXPECT_FALSE(std::filesystem::exists(atomic_temporary_path(folder.file("a_folder"))));
  {
    // A file-size limit of 4 KiB: writes past it fail (EFBIG), as on a full disk. (A link
    // planted at the temporary's name is refused, E0141, so /dev/full cannot stand in.)
    std::string path = folder.file("full.bin");
    struct rlimit old {};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
    struct rlimit small = old;
    small.rlim_cur = 4096;
    auto previous = ::signal(SIGXFSZ, SIG_IGN);
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    std::string code = "none", message;
    try {
      write_file_atomically(path, std::string(1 << 16, 'x'));
    } catch (const UserError& e) {
      code = e.code();
      message = e.what();
    }
    ::setrlimit(RLIMIT_FSIZE, &old);
    ::signal(SIGXFSZ, previous);
    EXPECT_EQ(code, "E0131");
    EXPECT_NE(message.find("writing failed"), std::string::npos) << message;
    EXPECT_FALSE(std::filesystem::exists(path));
  }
  std::filesystem::create_symlink("/dev/null", atomic_temporary_path(folder.file("linked.bin")));
  EXPECT_EQ(code_of([&] { write_file_atomically(folder.file("linked.bin"), "x"); }), "E0141");
}

// Two contents of 3 MB that differ everywhere, so any mix of them is detected.
std::string content(char fill) {
  std::string text(3 << 20, fill);
  text.replace(0, 6, std::string("begin") + fill);
  return text;
}

// The child rewrites `path` forever, alternating the two contents.
[[noreturn]] void rewrite_forever(const std::string& path, const std::string& a,
                                  const std::string& b) {
  for (uint64_t i = 0;; ++i) {
    try {
      write_file_atomically(path, i % 2 == 0 ? b : a);
    } catch (...) {
      _exit(2);
    }
  }
}

TEST(AtomicFile, KilledWriterLeavesOldOrNewAndAtMostOneTemporary) {
  TempFolder folder;
  std::string path = folder.file("weights.bin");
  const std::string a = content('a'), b = content('b');
  write_file_atomically(path, a);
  int seen_a = 0, seen_b = 0, left_temporary = 0;
  for (int round = 0; round < 16; ++round) {
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) rewrite_forever(path, a, b);
    // Read while it writes, then kill it at a moment that varies from round to round.
    for (int look = 0; look < 3; ++look) {
      std::string now = read_all(path);
      ASSERT_TRUE(now == a || now == b) << "a torn file while writing, round " << round;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(700 * round + 137 * (round % 5)));
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer stopped by itself (status " << status << ")";
    std::string after = read_all(path);
    ASSERT_TRUE(after == a || after == b) << "a torn file after the kill, round " << round;
    (after == a ? seen_a : seen_b)++;
    std::vector<std::string> names = names_in(folder.path());
    ASSERT_LE(names.size(), 2u);
    if (names.size() == 2) {
      EXPECT_EQ(names[1], "weights.bin.presk-tmp");
      ++left_temporary;  // killed mid-write
    }
  }
  // The next write takes the leftover temporary over and leaves only the file.
  write_file_atomically(path, a);
  EXPECT_EQ(names_in(folder.path()), std::vector<std::string>{"weights.bin"});
  EXPECT_EQ(read_all(path), a);
  RecordProperty("killed_with_old", seen_a);
  RecordProperty("killed_with_new", seen_b);
  RecordProperty("killed_mid_write", left_temporary);
}

}  // namespace
}  // namespace presk
