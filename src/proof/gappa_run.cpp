// gappa_run.h: fork and exec `gappa`, its stdout and stderr into one temporary file, polled
// against the time limit; the output read back exactly with MPFR.
#include "proof/gappa_run.h"

#include <fcntl.h>
#include <mpfr.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/diagnostics.h"

namespace presk::proof {
namespace {

constexpr double kWallFactor = 20;  // wall clock allowed per second of the CPU limit

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream folders(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string folder; std::getline(folders, folder, ':');) {
    if (!folder.empty() && ::access((folder + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

// "1051958674788358579b-76" or "7": the number, rounded up to binary64.
double exact_number_up(const std::string& text) {
  const size_t b = text.find('b');
  mpfr_t x;
  mpfr_init2(x, 512);
  const std::string mantissa = text.substr(0, b);
  const int failed = mpfr_set_str(x, mantissa.c_str(), 10, MPFR_RNDU);
  if (b != std::string::npos)
    mpfr_mul_2si(x, x, std::strtol(text.c_str() + b + 1, nullptr, 10), MPFR_RNDU);
  const double value = failed != 0 ? -1 : mpfr_get_d(x, MPFR_RNDU);
  mpfr_clear(x);
  return value;
}

// The upper end of "… in [lo {…}, hi {…}]": -1 when the line has none.
double upper_end(const std::string& line) {
  size_t at = line.find(" in [");
  if (at == std::string::npos) return -1;
  at += 5;
  while (at < line.size() && line[at] != ',' && line[at] != '{') ++at;  // the lower end
  if (at < line.size() && line[at] == '{') at = line.find('}', at);
  at = line.find(", ", at);
  if (at == std::string::npos) return -1;
  at += 2;
  const size_t end = line.find_first_of(" ]", at);
  return end == std::string::npos ? -1 : exact_number_up(line.substr(at, end - at));
}

// Gappa's first `count` lines but its notes on renamed identifiers (two definitions alike).
std::string first_lines(const std::string& text, int count) {
  std::string out;
  std::stringstream lines(text);
  for (std::string line; count > 0 && std::getline(lines, line);) {
    if (line.rfind("Warning: renaming", 0) == 0) continue;
    out += (out.empty() ? "" : " | ") + line;
    --count;
  }
  return out;
}

}  // namespace

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::proved:
      return "proved";
    case Outcome::not_proved:
      return "not proved";
    case Outcome::contradictory:
      return "not proved (the hypotheses contradict each other)";
    case Outcome::timed_out:
      return "not proved (timed out)";
  }
  return "";
}

GappaResult read_gappa_output(const std::string& output, int exit_status, int goals) {
  GappaResult result;
  if (output.find("anything can be proved") != std::string::npos) {
    result.outcome = Outcome::contradictory;
    result.message = "Gappa: anything can be proved from them";
    return result;
  }
  if (exit_status != 0 || output.find("Error") != std::string::npos) {
    result.message = first_lines(output, 4);
    return result;
  }
  std::stringstream lines(output.substr(std::min(output.size(), output.find("Results:"))));
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" in [") == std::string::npos) continue;
    const double hi = upper_end(line);
    if (!(hi >= 0)) {
      result.message = "unreadable enclosure: " + line;
      return result;
    }
    result.bound = std::max(result.bound, hi);
    ++result.goals;
  }
  if (result.goals < goals) {
    result.message = first_lines(output, 4);
    return result;
  }
  result.outcome = Outcome::proved;
  return result;
}

GappaResult run_gappa(const std::string& script_path, int goals, double timeout_seconds) {
  if (!on_path("gappa")) {
    user_error("E1602").hint("scripts/install-deps installs Debian's gappa (apt-get install gappa)")
        << "no `gappa` on the PATH: --run needs Gappa to prove the script " << script_path;
  }
  char log[] = "/tmp/presk-gappa-XXXXXX";
  const int fd = ::mkstemp(log);
  if (fd < 0) user_error("E1602") << "cannot create a temporary file for Gappa's output in /tmp";
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    // The limit is Gappa's CPU time (SIGXCPU past it), so a loaded machine does not cut it short.
    const auto seconds = static_cast<rlim_t>(std::ceil(timeout_seconds));
    const rlimit cpu{seconds, seconds + 1};
    ::setrlimit(RLIMIT_CPU, &cpu);
    ::execlp("gappa", "gappa", script_path.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fd);
  int status = 0;
  rusage usage{};
  bool timed_out = false;
  while (::wait4(pid, &status, WNOHANG, &usage) == 0) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > kWallFactor * timeout_seconds + 60) {  // waiting for a CPU that never comes
      ::kill(pid, SIGKILL);
      ::wait4(pid, &status, 0, &usage);
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  timed_out = timed_out ||
              (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL));
  const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                     1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  ::unlink(log);
  GappaResult result;
  if (timed_out) {
    result.outcome = Outcome::timed_out;
    result.message = "Gappa ran past the limit of " +
                     std::to_string(static_cast<int64_t>(timeout_seconds)) + " s of CPU time";
  } else {
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    result = read_gappa_output(text.str(), code, goals);
  }
  result.seconds = seconds;
  result.cpu_seconds = cpu;
  return result;
}

}  // namespace presk::proof
