// The C interface of presk-mpi.so (mpi_module.cpp), which presk loads with dlopen only under a
// launcher (launch.cpp). Every function returns MPI's error code (0: success), on
// MPI_COMM_WORLD.
#pragma once

#include <cstdint>

extern "C" {

// MPI_Init_thread (funneled: only the main thread calls MPI), errors returned, not fatal.
int presk_mpi_init(int* argc, char*** argv, int* rank, int* size);
// Every rank's one int64 to every rank, by rank.
int presk_mpi_allgather_i64(const int64_t* mine, int64_t* all);
// `count` bytes of `data` from rank `root` to every rank.
int presk_mpi_bcast(void* data, int count, int root);
// MPI's text of an error code, at most capacity − 1 characters and a NUL.
void presk_mpi_error_string(int code, char* text, int capacity);
int presk_mpi_finalize();
}
