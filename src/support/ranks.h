// The ranks of a distributed run (docs/distributed.md): the same `presk` runs as one process, or
// as N ranks under a launcher (mpirun, srun). Every rank runs the whole command on the same
// inputs (one program, many processes); the expensive loops over samples (windows) split their
// samples across the ranks and exchange each sample's result, so that every rank holds every
// result, placed by sample index, and combines them exactly as one process does: outputs are
// byte-identical to one process whatever the number of ranks and threads. Rank 0 writes every
// output file (AtomicFileWriter discards the writes of the others) and prints; the others'
// stdout and stderr go to /dev/null.
//
// This interface knows nothing of MPI: src/dist installs OpenMPI's transport when the process was
// started by a launcher. Without one (a plain `presk …`) there is one rank, every sample is its
// own and nothing is exchanged, copied or encoded.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace presk::ranks {

// What moves bytes between the ranks (src/dist/mpi_transport.cpp). Every call is collective:
// every rank makes it, in the same order. A failure is a UserError (E1742).
class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every rank's `mine`, indexed by rank, on every rank.
  virtual std::vector<std::string> all_gather(const std::string& mine) = 0;
};

// Installs the transport of a distributed run (once, at start; src/dist).
void install(std::unique_ptr<Transport> transport);

int rank();                // 0 … size() − 1; 0 without a launcher
int size();                // 1 without a launcher
bool distributed();        // size() > 1
bool writes_outputs();     // rank 0: the one that writes files and prints

// What the ranks are doing now ("calibrate: samples"), for the message that names the phase in
// which a rank died (src/dist). Set by SampleShare and agree.
const char* current_phase();
void set_phase(const char* phase);

// Runs `work` on every rank and checks that it succeeded on all of them: a UserError on rank 0
// is rethrown as it is (every rank failed the same way, or rank 0 alone); one on another rank
// only is E1740 on every rank, naming that rank, its host and its message (a weights file missing
// on one node). `what` says what was done ("reading the program, weights and data").
void agree(const char* what, const std::function<void()>& work);

// Rank 0's `bytes` on every rank (collective; one process: returned as is).
std::string from_rank0(const std::string& bytes);

// The samples 0 … count − 1 of one loop, split cyclically (sample k on rank k mod size):
//   ranks::SampleShare share("calibrate: samples", count);
//   for k in share.mine(): results[k] = compute(k);        (in parallel, as before)
//   share.exchange(encode, decode);                      (no-op with one process)
// after which every rank has every sample's result in `results`. Each rank's windows done and
// seconds are printed on rank 0's stderr (docs/distributed.md, load balance).
class SampleShare {
 public:
  SampleShare(const char* phase, int64_t count);
  const std::vector<int64_t>& mine() const { return mine_; }
  int64_t count() const { return count_; }

  // Sends encode(k) for each of this rank's samples; calls decode(k, bytes) for every other
  // rank's. Collective; does nothing with one process.
  void exchange(const std::function<std::string(int64_t)>& encode,
                const std::function<void(int64_t, std::string_view)>& decode);

 private:
  const char* phase_;
  int64_t count_;
  std::vector<int64_t> mine_;
  double start_;
};

// A byte string built from and read back into numbers and strings: what SampleShare moves.
class Packer {
 public:
  template <class T>
  Packer& put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
    return *this;
  }
  Packer& put_string(std::string_view text) {
    put<uint64_t>(text.size());
    bytes_.append(text);
    return *this;
  }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class Unpacker {
 public:
  explicit Unpacker(std::string_view bytes) : bytes_(bytes) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, take(sizeof value).data(), sizeof value);
    return value;
  }
  std::string_view get_string() { return take(get<uint64_t>()); }
  bool done() const { return bytes_.empty(); }

 private:
  std::string_view take(size_t n);
  std::string_view bytes_;
};

}  // namespace presk::ranks
