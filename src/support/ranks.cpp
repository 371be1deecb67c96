// The ranks of a distributed run (ranks.h).
#include "support/ranks.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <optional>

#include "support/diagnostics.h"

namespace presk::ranks {
namespace {

std::unique_ptr<Transport>& installed() {
  static std::unique_ptr<Transport> transport;
  return transport;
}

std::atomic<const char*> phase{"starting"};

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "an unknown host";
  return name;
}

}  // namespace

void install(std::unique_ptr<Transport> transport) { installed() = std::move(transport); }

int rank() { return installed() ? installed()->rank() : 0; }
int size() { return installed() ? installed()->size() : 1; }
bool distributed() { return size() > 1; }
bool writes_outputs() { return rank() == 0; }

const char* current_phase() { return phase.load(); }
void set_phase(const char* name) { phase.store(name); }

void agree(const char* what, const std::function<void()>& work) {
  if (!distributed()) {
    work();
    return;
  }
  set_phase(what);
  std::optional<UserError> failure;
  try {
    work();
  } catch (const UserError& error) {
    failure = error;
  }
  Packer status;
  status.put<uint8_t>(failure ? 1 : 0).put_string(host_name()).put_string(failure ? failure->what() : "");
  const std::vector<std::string> all = installed()->all_gather(status.take());
  if (failure && rank() == 0) throw *failure;
  for (int r = 0; r < size(); ++r) {
    Unpacker reader(all[r]);
    if (reader.get<uint8_t>() == 0) continue;
    const std::string host(reader.get_string()), message(reader.get_string());
    if (r == 0) throw UserError({Diagnostic{"E1740", "rank 0 failed " + std::string(what), "see rank 0's error", {}}});
    user_error("E1740").hint("every rank needs the program, the weights and the data at the paths given (the same "
                             "path on every node, or a per-node copy there): docs/distributed.md")
        << "rank " << r << " of " << size() << " (on " << host << ") failed " << what
        << " before any work started; nothing was computed or written. Its error:\n" << message;
  }
}

std::string from_rank0(const std::string& bytes) {
  if (!distributed()) return bytes;
  return installed()->all_gather(rank() == 0 ? bytes : std::string())[0];
}

SampleShare::SampleShare(const char* phase_name, int64_t count)
    : phase_(phase_name), count_(count), start_(now_seconds()) {
  const int64_t step = size();
  for (int64_t k = rank(); k < count; k += step) mine_.push_back(k);
  if (distributed()) set_phase(phase_name);
}

void SampleShare::exchange(const std::function<std::string(int64_t)>& encode,
                           const std::function<void(int64_t, std::string_view)>& decode) {
  if (!distributed()) return;
  const double seconds = now_seconds() - start_;  // this rank's own samples, before any waiting
  Packer mine;
  mine.put<int64_t>(static_cast<int64_t>(mine_.size())).put<double>(seconds);
  for (int64_t k : mine_) mine.put<int64_t>(k).put_string(encode(k));
  const std::vector<std::string> all = installed()->all_gather(mine.take());
  std::string report = fmt::format("ranks: {}:", phase_);
  for (int r = 0; r < size(); ++r) {
    Unpacker reader(all[r]);
    const auto done = reader.get<int64_t>();
    report += fmt::format(" rank {} {} window{} in {:.2f} s;", r, done, done == 1 ? "" : "s", reader.get<double>());
    for (int64_t i = 0; i < done; ++i) {
      const auto k = reader.get<int64_t>();
      const std::string_view bytes = reader.get_string();
      internal_assert(k >= 0 && k < count_ && k % size() == r);
      if (r != rank()) decode(k, bytes);
    }
  }
  report.pop_back();
  if (rank() == 0) std::cerr << report << std::endl;
  set_phase("combining in sample order");
}

std::string_view Unpacker::take(size_t n) {
  internal_assert(n <= bytes_.size());
  std::string_view part = bytes_.substr(0, n);
  bytes_.remove_prefix(n);
  return part;
}

}  // namespace presk::ranks
