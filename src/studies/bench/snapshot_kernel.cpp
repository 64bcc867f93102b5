// bench snapshot: the token snapshot of a run (RunFile::write_snapshot of [N, d] to a new run file, closed and
// synced) beside the same bytes written by one process (dd bs=4M conv=fdatasync), in the same run: bytes/s.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "kernel.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/io/run_file.hpp"

namespace tokdyn {
namespace {

// Flush a closed file's pages to the disk: on one node fdatasync through any descriptor writes the pages
// that every rank's MPI-IO left in the page cache.
void sync_file(const Comm& comm, const std::string& path) {
  TOKDYN_MPI_CHECK(MPI_Barrier(comm.get()));
  if (comm.rank() == 0) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0 || ::fdatasync(fd) != 0) throw SystemError("bench: cannot sync '" + path + "': " + std::strerror(errno));
    ::close(fd);
  }
}

// The token snapshot of a run, by the run's own path: a run file created for N x d tokens (its header as a run
// writes it), one RunFile::write_snapshot (row 0 of /tokens/X, layer and time), the file closed and synced
// (fdatasync) so the time is the disk's, then removed.
void write_snapshot_file(const Comm& comm, const std::string& path, const Partition& partition, int d,
                         const double* x) {
  RunInfo info;
  info.command = "bench";
  info.n = partition.n_global;
  info.d = d;
  RunFile file = RunFile::create(path, comm.get(), info);
  file.write_snapshot(0, 0.0, x, partition.begin(comm.rank()), partition.count(comm.rank()));
  file.close();
  sync_file(comm, path);
  TOKDYN_MPI_CHECK(MPI_Barrier(comm.get()));
  if (comm.rank() == 0) std::remove(path.c_str());
}

// What the disk does without HDF5 or MPI-IO (dd bs=4M conv=fdatasync): rank 0 writes the same number of
// bytes in 4 MiB blocks and syncs; the other ranks wait.
void write_plain_file(const Comm& comm, const std::string& path, std::int64_t bytes) {
  if (comm.rank() == 0) {
    std::vector<char> block(std::size_t(4) << 20, 1);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) throw SystemError("bench: cannot create '" + path + "': " + std::strerror(errno));
    for (std::int64_t done = 0; done < bytes;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::int64_t>(block.size(), bytes - done));
      const ssize_t w = ::write(fd, block.data(), n);
      if (w <= 0) {
        ::close(fd);
        throw SystemError("bench: cannot write '" + path + "': " + std::strerror(errno));
      }
      done += w;
    }
    if (::fdatasync(fd) != 0) {
      ::close(fd);
      throw SystemError("bench: cannot sync '" + path + "': " + std::strerror(errno));
    }
    ::close(fd);
    std::remove(path.c_str());
  }
  TOKDYN_MPI_CHECK(MPI_Barrier(comm.get()));
}

class SnapshotBench : public BenchKernel {
 public:
  explicit SnapshotBench(BenchInput& in) : BenchKernel(in), dir_(in.deck.get_text("bench.dir")) {
    work = static_cast<double>(in.partition.n_global) * in.d * 8;
    unit = "bytes";
  }
  void once() override {
    write_snapshot_file(in_.comm, dir_ + "/bench-snapshot.h5.tmp", in_.partition, in_.d, in_.x.data());
  }
  // The disk's own rate for the same bytes, best of the same repeats, in the same run.
  std::vector<std::string> report(double best) const override {
    const int repeats = static_cast<int>(in_.deck.get_int("bench.repeats"));
    double plain = 1e300;
    for (int r = 0; r < repeats; ++r) {
      TOKDYN_MPI_CHECK(MPI_Barrier(in_.comm.get()));
      const double t0 = MPI_Wtime();
      write_plain_file(in_.comm, dir_ + "/bench-plain.tmp", static_cast<std::int64_t>(work));
      plain = std::min(plain, MPI_Wtime() - t0);
    }
    char line[320];
    std::snprintf(line, sizeof line,
                  "  = %.3g GB/s; the same %.3g GB written by one process in 4 MiB blocks and synced (dd bs=4M "
                  "conv=fdatasync): %.4f s, %.3g GB/s; HDF5 snapshot / plain = %.2f",
                  work / best * 1e-9, work * 1e-9, plain, work / plain * 1e-9, plain / best);
    return {line};
  }

 protected:
  std::string what() const override { return "snapshot"; }

 private:
  std::string dir_;
};

}  // namespace

std::unique_ptr<BenchKernel> make_snapshot_kernel(BenchInput& in) { return std::make_unique<SnapshotBench>(in); }

}  // namespace tokdyn
