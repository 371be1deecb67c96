// OpenMPI's transport and the start of a distributed run (launch.h).
#include "dist/launch.h"

#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "support/diagnostics.h"
#include "support/ranks.h"

namespace presk::dist {
namespace {

// Calls into MPI return their error (MPI_ERRORS_RETURN): a failure is E1742.
void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  user_error("E1742").hint("check the launcher's messages (a rank that died, a network that failed); run again: "
                           "the exact outputs already cached are reused")
      << "the MPI call " << call << " failed during `" << ranks::current_phase() << "`: " << std::string(text, length);
}

class MpiTransport final : public ranks::Transport {
 public:
  MpiTransport() {
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  // The sizes first, then each rank's bytes broadcast from it in pieces of at most 1 GiB
  // (MPI counts are ints).
  std::vector<std::string> all_gather(const std::string& mine) override {
    std::vector<int64_t> sizes(static_cast<size_t>(size_));
    const auto own = static_cast<int64_t>(mine.size());
    check(MPI_Allgather(&own, 1, MPI_INT64_T, sizes.data(), 1, MPI_INT64_T, MPI_COMM_WORLD), "MPI_Allgather");
    std::vector<std::string> all(static_cast<size_t>(size_));
    constexpr int64_t kPiece = int64_t{1} << 30;
    for (int r = 0; r < size_; ++r) {
      all[r] = r == rank_ ? mine : std::string(static_cast<size_t>(sizes[r]), '\0');
      for (int64_t offset = 0; offset < sizes[r]; offset += kPiece) {
        const int count = static_cast<int>(std::min(kPiece, sizes[r] - offset));
        check(MPI_Bcast(all[r].data() + offset, count, MPI_BYTE, r, MPI_COMM_WORLD), "MPI_Bcast");
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
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // every thread started from here on inherits it
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::cerr << format_diagnostic({"E1742", "MPI_Init failed: the launcher's environment is not usable",
                                    "run presk without mpirun, or check the MPI installation", {}})
              << std::endl;
    std::exit(1);
  }
  started_ = true;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  auto transport = std::make_unique<MpiTransport>();
  const int rank = transport->rank();
  share_peers(*transport);
  ranks::install(std::move(transport));
  std::thread(watch_for_termination, rank).detach();
  if (rank != 0) silence_output();
}

Launch::~Launch() {
  if (!started_) return;
  std::cout.flush();
  MPI_Finalize();
}

}  // namespace presk::dist
