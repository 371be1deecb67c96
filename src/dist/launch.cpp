// OpenMPI's transport and the start of a distributed run (launch.h), over presk-mpi.so.
#include "dist/launch.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "dist/mpi_module.h"
#include "support/diagnostics.h"
#include "support/ranks.h"

namespace presk::dist {
namespace {

// The module's functions (mpi_module.h), resolved once it is loaded.
struct Module {
  decltype(&presk_mpi_init) init = nullptr;
  decltype(&presk_mpi_allgather_i64) allgather_i64 = nullptr;
  decltype(&presk_mpi_bcast) bcast = nullptr;
  decltype(&presk_mpi_error_string) error_string = nullptr;
  decltype(&presk_mpi_finalize) finalize = nullptr;
};

Module& module() {
  static Module functions;
  return functions;
}

[[noreturn]] void cannot_start(const std::string& why) {
  std::cerr << format_diagnostic({"E1742", "a launcher (mpirun, srun) started presk, but MPI cannot start: " + why,
                                  "install OpenMPI (scripts/install-deps: libopenmpi-dev, openmpi-bin) and keep "
                                  "presk-mpi.so beside the presk binary, or run presk without a launcher", {}})
            << std::endl;
  std::exit(1);
}

// presk-mpi.so beside the running binary; its functions into module().
void load_module() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  const std::string path = (self.parent_path() / "presk-mpi.so").string();
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) cannot_start(std::string("loading ") + path + ": " + ::dlerror());
  Module& m = module();
  auto resolve = [&](auto& function, const char* name) {
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(::dlsym(handle, name));
    if (function == nullptr) cannot_start(path + " has no " + name);
  };
  resolve(m.init, "presk_mpi_init");
  resolve(m.allgather_i64, "presk_mpi_allgather_i64");
  resolve(m.bcast, "presk_mpi_bcast");
  resolve(m.error_string, "presk_mpi_error_string");
  resolve(m.finalize, "presk_mpi_finalize");
}

// Calls into MPI return their error (MPI_ERRORS_RETURN): a failure is E1742.
void check(int code, const char* call) {
  if (code == 0) return;
  char text[512] = {};
  module().error_string(code, text, sizeof text);
  user_error("E1742").hint("check the launcher's messages (a rank that died, a network that failed); run again: "
                           "the exact outputs already cached are reused")
      << "the MPI call " << call << " failed during `" << ranks::current_phase() << "`: " << text;
}

class MpiTransport final : public ranks::Transport {
 public:
  MpiTransport(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  // The sizes first, then each rank's bytes broadcast from it in pieces of at most 1 GiB
  // (MPI counts are ints).
  std::vector<std::string> all_gather(const std::string& mine) override {
    std::vector<int64_t> sizes(static_cast<size_t>(size_));
    const auto own = static_cast<int64_t>(mine.size());
    check(module().allgather_i64(&own, sizes.data()), "MPI_Allgather");
    std::vector<std::string> all(static_cast<size_t>(size_));
    constexpr int64_t kPiece = int64_t{1} << 30;
    for (int r = 0; r < size_; ++r) {
      all[r] = r == rank_ ? mine : std::string(static_cast<size_t>(sizes[r]), '\0');
      for (int64_t offset = 0; offset < sizes[r]; offset += kPiece) {
        const int count = static_cast<int>(std::min(kPiece, sizes[r] - offset));
        check(module().bcast(all[r].data() + offset, count, r), "MPI_Bcast");
      }
    }
    return all;
  }

 private:
  int rank_ = 0, size_ = 1;
};

struct Peer {
  pid_t pid;
  char host[256];
};

std::vector<Peer>& peers() {
  static std::vector<Peer> list;
  return list;
}

// Rank 0, on the launcher's SIGTERM: the ranks of this node whose process is gone.
std::string missing_ranks() {
  const Peer& self = peers().at(0);
  std::string names;
  bool remote = false;
  for (size_t r = 1; r < peers().size(); ++r) {
    if (std::string(peers()[r].host) != self.host) {
      remote = true;
      continue;
    }
    if (::kill(peers()[r].pid, 0) != 0 && errno == ESRCH) {
      names += (names.empty() ? "rank " : ", rank ") + std::to_string(r) + " (pid " + std::to_string(peers()[r].pid) +
               " on " + self.host + ")";
    }
  }
  if (!names.empty()) return names + " died";
  return remote ? "a rank on another node died, or the launcher was stopped (its message names the rank)"
                : "no rank is missing on this node: the launcher was stopped (a signal, a time limit)";
}

// Waits for SIGTERM (blocked in every thread since before MPI started).
void watch_for_termination(int rank) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  int signal = 0;
  if (sigwait(&set, &signal) != 0) return;
  if (rank != 0) {
    ::usleep(500 * 1000);  // stay visible while rank 0 looks for the dead rank
    ::_exit(128 + SIGTERM);
  }
  const Diagnostic diagnostic{
      "E1741",
      "the distributed run was stopped during `" + std::string(ranks::current_phase()) + "`: " + missing_ranks() +
          "; no output was written",
      "run the same command again (solve and check --measure resume from the exact outputs already cached beside the "
      "envelope); a rank that runs out of memory needs fewer threads per rank or a larger node (docs/distributed.md)",
      {}};
  std::cerr << format_diagnostic(diagnostic) << std::endl;
  ::_exit(1);
}

void share_peers(ranks::Transport& transport) {
  Peer self{};
  self.pid = ::getpid();
  ::gethostname(self.host, sizeof self.host - 1);
  const std::string bytes(reinterpret_cast<const char*>(&self), sizeof self);
  for (const std::string& other : transport.all_gather(bytes)) {
    internal_assert(other.size() == sizeof(Peer));
    Peer peer{};
    std::copy(other.begin(), other.end(), reinterpret_cast<char*>(&peer));
    peers().push_back(peer);
  }
}

void silence_output() {
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null < 0) return;
  std::cout.flush();
  ::dup2(null, STDOUT_FILENO);
  ::dup2(null, STDERR_FILENO);
  ::close(null);
}

}  // namespace

bool launched() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

Launch::Launch(int& argc, char**& argv) {
  if (!launched()) return;
  load_module();
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // every thread started from here on inherits it
  int rank = 0, size = 1;
  if (const int code = module().init(&argc, &argv, &rank, &size); code != 0) {
    char text[512] = {};
    module().error_string(code, text, sizeof text);
    cannot_start(std::string("MPI_Init failed: ") + text);
  }
  started_ = true;
  auto transport = std::make_unique<MpiTransport>(rank, size);
  share_peers(*transport);
  ranks::install(std::move(transport));
  std::thread(watch_for_termination, rank).detach();
  if (rank != 0) silence_output();
}

Launch::~Launch() {
  if (!started_) return;
  std::cout.flush();
  module().finalize();
}

}  // namespace presk::dist
