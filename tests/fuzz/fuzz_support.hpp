// What every fuzz target shares: MPI once per process, the input's bytes as a file (the readers take paths)
// and a reader of the bytes one field at a time. Included once per target.
#pragma once

#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tokdyn::fuzz {


// FUZZ_VERBOSE=1 prints each refusal (to see what a seed reaches).
inline void refusal(const char* what) {
  if (std::getenv("FUZZ_VERBOSE")) std::fprintf(stderr, "refused: %s\n", what);
}

// The bytes as a file of its own, removed when it goes out of scope.
class TempFile {
 public:
  TempFile(const void* data, std::size_t size, const char* suffix = "") {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/tokdyn-fuzz-" + std::to_string(::getpid()) + suffix;
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (!f || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) std::abort();
  }
  explicit TempFile(const std::string& text, const char* suffix = "") : TempFile(text.data(), text.size(), suffix) {}
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Reads the fuzzer's bytes in order; past the end every read gives 0.
class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  std::uint64_t word(int n) {
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= std::uint64_t(byte()) << (8 * i);
    return v;
  }
  bool empty() const { return pos_ >= size_; }
  // A short string: a length byte (at most max) and that many bytes.
  std::string text(std::size_t max = 32) {
    const std::size_t n = byte() % (max + 1);
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += static_cast<char>(byte());
    return s;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_, pos_ = 0;
};

}  // namespace tokdyn::fuzz

// MPI once per process: the readers are collective (here on MPI_COMM_SELF).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  int done = 0;
  MPI_Initialized(&done);
  if (!done) MPI_Init(nullptr, nullptr);
  return 0;
}
