// The start and end of a distributed run (docs/distributed.md). `Launch` at the top of main():
// when a launcher started the process (mpirun sets OMPI_COMM_WORLD_SIZE, Slurm's srun PMI_SIZE
// or PMIX_RANK), it loads presk-mpi.so beside the binary (mpi_module.h: the only code that links
// OpenMPI), initializes MPI, installs its transport for support/ranks.h, sends the stdout and
// stderr of every rank but 0 to /dev/null, and watches for the launcher's SIGTERM; its
// destructor finalizes MPI. Without a launcher it does nothing: libmpi is never even loaded.
//
// A rank that dies (killed, out of memory) makes mpirun stop the others with SIGTERM. Rank 0
// then reports E1741, naming the phase (ranks::current_phase) and the rank that is gone (a rank
// of rank 0's node whose process no longer exists; the others wait a moment before they exit so
// that only the dead one is missing), and exits without writing anything: outputs are written
// only at the end, atomically.
#pragma once

namespace presk::dist {

class Launch {
 public:
  Launch(int& argc, char**& argv);
  ~Launch();
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;

 private:
  bool started_ = false;
};

// Whether the environment says a launcher started this process.
bool launched();

}  // namespace presk::dist
