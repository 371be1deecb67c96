// presk-mpi.so: the few MPI calls a distributed run makes, behind a C interface (mpi_module.h).
// It is the only code that links OpenMPI, and presk loads it (dlopen, launch.cpp) only when a
// launcher started the process: a plain `presk …` never loads libmpi and its libraries.
#include "dist/mpi_module.h"

#include <mpi.h>

extern "C" {

int presk_mpi_init(int* argc, char*** argv, int* rank, int* size) {
  int provided = 0;
  int code = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  if (code != MPI_SUCCESS) return code;
  // Every call returns its error (the caller's E1742) instead of aborting the job.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  code = MPI_Comm_rank(MPI_COMM_WORLD, rank);
  return code != MPI_SUCCESS ? code : MPI_Comm_size(MPI_COMM_WORLD, size);
}

int presk_mpi_allgather_i64(const int64_t* mine, int64_t* all) {
  return MPI_Allgather(mine, 1, MPI_INT64_T, all, 1, MPI_INT64_T, MPI_COMM_WORLD);
}

int presk_mpi_bcast(void* data, int count, int root) {
  return MPI_Bcast(data, count, MPI_BYTE, root, MPI_COMM_WORLD);
}

void presk_mpi_error_string(int code, char* text, int capacity) {
  char message[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, message, &length);
  int i = 0;
  for (; i < length && i + 1 < capacity; ++i) text[i] = message[i];
  if (capacity > 0) text[i] = '\0';
}

int presk_mpi_finalize() { return MPI_Finalize(); }

}  // extern "C"
