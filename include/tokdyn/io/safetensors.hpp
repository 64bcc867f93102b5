// Safetensors files (HuggingFace model weights): the header is checked in full when the file is opened,
// tensors are read on demand and converted to double, and a block of rows or columns is read alone.
//
// Format: 8-byte little-endian header length n, n bytes of JSON {name: {"dtype", "shape",
// "data_offsets": [begin, end]}, optional "__metadata__": {string: string}}, then the data section:
// raw little-endian row-major tensors, offsets relative to its start, tiling it without gaps or overlaps.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tokdyn {

struct TensorInfo {
  // F64, F32, F16, BF16 can be read; the other safetensors dtypes (BOOL, U8, I8, F8_E5M2, F8_E4M3, I16,
  // U16, I32, U32, I64, U64) are accepted in the header (a model file may hold integer buffers) but
  // reading one is an InputError naming the tensor and its dtype.
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0, end = 0;  // byte offsets [begin, end) in the data section
  std::int64_t elements() const;
};

// An open safetensors file. open() validates every rule of the header (see safetensors.cpp) and
// throws InputError with one line naming the file and the tensor or byte offset at fault; afterwards
// no read can leave the file's data section whatever the file said. Reads use pread: a const
// SafetensorsFile can be read from several places. Move-only (owns the file descriptor).
class SafetensorsFile {
 public:
  static SafetensorsFile open(const std::string& path);
  SafetensorsFile(SafetensorsFile&& other) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&& other) noexcept;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;
  ~SafetensorsFile();

  const std::string& path() const { return path_; }
  std::vector<std::string> names() const;  // sorted
  bool has(const std::string& name) const { return tensors_.count(name) != 0; }
  // InputError naming the file and the tensor when it is absent.
  const TensorInfo& info(const std::string& name) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // The whole tensor, converted to double (row-major, as stored).
  std::vector<double> read(const std::string& name) const;
  // Rows [row_begin, row_end) of a rank-2 tensor [rows, cols] -> [row_end - row_begin, cols]: one read.
  std::vector<double> read_rows(const std::string& name, std::int64_t row_begin, std::int64_t row_end) const;
  // Block rows [row_begin, row_end) x columns [col_begin, col_end) of a rank-2 tensor, row-major
  // [rows, cols]: one read per row when the columns are not all of them (only their bytes are read).
  std::vector<double> read_block(const std::string& name, std::int64_t row_begin, std::int64_t row_end,
                                 std::int64_t col_begin, std::int64_t col_end) const;

 private:
  SafetensorsFile() = default;
  // count elements of tensor t from element `first`, converted into out.
  void read_elements(const std::string& name, const TensorInfo& t, std::uint64_t first, std::uint64_t count,
                     double* out) const;
  std::string where() const;  // "safetensors 'PATH'"

  std::string path_;
  int fd_ = -1;
  std::uint64_t data_start_ = 0, data_size_ = 0;
  std::map<std::string, TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
};

// A tensor shape for messages: "[2, 3]".
std::string shape_text(const std::vector<std::int64_t>& shape);

// Bytes per element of a safetensors dtype; 0 when the name is not one.
int safetensors_dtype_size(const std::string& dtype);

struct SafetensorsEntry {
  std::string name;
  std::string dtype;  // F64, F32, F16 or BF16
  std::vector<std::int64_t> shape;
  std::vector<double> values;  // row-major, product(shape) of them
};

// Writes entries (in order, contiguous) to PATH.part and renames it to path. F32 rounds like a C++
// cast, F16/BF16 round to nearest-even (core/numerics/half.hpp). Used by tests and by converters.
void write_safetensors(const std::string& path, const std::vector<SafetensorsEntry>& entries,
                       const std::map<std::string, std::string>& metadata = {});

// The double a value becomes when stored as dtype and read back (for tests: the exact stored weights).
double round_to_dtype(double value, const std::string& dtype);

}  // namespace tokdyn
