// How a failed command ends, on every rank and within seconds, with one line and an exit code.
// Every rank that catches an error calls exit_on_error. When every rank has failed (an error they all
// see), they agree within milliseconds: rank 0 prints the line and each rank exits with the code, no
// collective call entered. When some rank has not (it waits in a collective call for the failing one),
// the failing rank waits a few seconds for the others, then prints its line and aborts the job.
#pragma once

#include <mpi.h>

#include <exception>
#include <functional>
#include <string>

namespace tokdyn {

// Exit codes: 2 for input and environment (a bad deck, a damaged file, a full disk), 3 for internal errors.
constexpr int kExitInput = 2;
constexpr int kExitInternal = 3;

// Once, after MPI_Init: duplicates world for the agreement, so that it never matches another call.
// open_objects() counts what a finalize would have to close collectively (open HDF5 files); when every
// rank failed and the counts agree, finalize() ends MPI cleanly, else the ranks exit without it.
void init_error_exit(MPI_Comm world, std::function<int()> open_objects, std::function<void()> finalize);
[[noreturn]] void exit_on_error(int code, const std::string& message);
// exit_on_error for a caught exception, classified: InputError, bad_alloc and a failed library call on a
// full disk are the user's to fix (kExitInput); anything else is internal (kExitInternal).
[[noreturn]] void exit_on_exception(std::exception_ptr error);

// Work a failing rank does before it exits (removing its lock and temporary files): no MPI calls.
int add_exit_cleanup(std::function<void()> cleanup);
void remove_exit_cleanup(int id);

// Directories whose file system is checked when an I/O call fails: a full one turns the failure into
// "no space left on the device of DIR". Returns that message, or "" when every watched one has room.
void watch_directory(const std::string& dir);
std::string full_disk_message();
// Free bytes on the file system of dir (statvfs); -1 when it cannot be asked.
double free_bytes(const std::string& dir);

// Bytes as "1.5 GB" (powers of 1024).
std::string format_bytes(double bytes);

}  // namespace tokdyn
