// Safetensors reader and writer. The header is untrusted input: every rule of the format is checked
// before a byte of data is read, and each failure is one line naming the file and the tensor or offset.
#include "tokdyn/io/safetensors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <unordered_set>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/half.hpp"

namespace tokdyn {
namespace {

using json = nlohmann::json;

constexpr std::uint64_t max_header_bytes = 100'000'000;  // the reference implementation's limit

// Names in messages: printable ASCII kept, anything else as \xNN, so a message stays one line.
std::string printable(const std::string& text) {
  std::string out = "'";
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out + "'";
}

std::string range_text(std::uint64_t begin, std::uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

// A JSON value for messages: one line, at most about 60 characters, and never a recursive dump (a
// hostile header may nest arrays millions deep: nested containers are shown as [...] / {...}).
std::string json_text(const json& value, int depth = 0) {
  std::string s;
  if (value.is_array()) {
    if (depth > 0) return "[...]";
    s = "[";
    for (std::size_t i = 0; i < value.size() && s.size() < 60; ++i) s += (i ? "," : "") + json_text(value[i], 1);
    s += "]";
  } else if (value.is_object()) {
    s = value.empty() ? "{}" : "{...}";
  } else {
    s = value.dump(-1, ' ', true, json::error_handler_t::replace);
  }
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

bool readable_dtype(const std::string& dtype) {
  return dtype == "F64" || dtype == "F32" || dtype == "F16" || dtype == "BF16";
}

std::uint64_t load_le(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void store_le(unsigned char* p, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

double decode(const std::string& dtype, const unsigned char* p) {
  if (dtype == "F64") {
    const std::uint64_t bits = load_le(p, 8);
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  if (dtype == "F32") {
    const auto bits = static_cast<std::uint32_t>(load_le(p, 4));
    float v;
    std::memcpy(&v, &bits, 4);
    return v;
  }
  const auto bits = static_cast<std::uint16_t>(load_le(p, 2));
  return dtype == "F16" ? f16_to_double(bits) : bf16_to_double(bits);
}

void encode(const std::string& dtype, double value, unsigned char* p) {
  if (dtype == "F64") {
    std::uint64_t bits;
    std::memcpy(&bits, &value, 8);
    store_le(p, bits, 8);
  } else if (dtype == "F32") {
    const float f = static_cast<float>(value);
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    store_le(p, bits, 4);
  } else {
    store_le(p, dtype == "F16" ? double_to_f16(value) : double_to_bf16(value), 2);
  }
}

// Reads exactly size bytes at offset; false at end of file.
bool pread_all(int fd, void* out, std::uint64_t size, std::uint64_t offset) {
  auto* p = static_cast<unsigned char*>(out);
  while (size > 0) {
    const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(size, 1u << 30));
    const ssize_t got = ::pread(fd, p, chunk, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw SystemError(std::string("pread failed: ") + std::strerror(errno));
    if (got == 0) return false;
    p += got;
    size -= static_cast<std::uint64_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
  return true;
}

// A JSON number that is a non-negative integer (not 2.0, not -1), as uint64.
bool non_negative_integer(const json& v, std::uint64_t& out) {
  if (v.is_number_unsigned()) {
    out = v.get<std::uint64_t>();
    return true;
  }
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) {
    out = static_cast<std::uint64_t>(v.get<std::int64_t>());
    return true;
  }
  return false;
}

// The first key repeated within one object of valid JSON (nlohmann's DOM keeps the last one silently), by
// a SAX pass that hashes the keys of each open object. Linear in the header size: nlohmann's parser
// callback would see the keys in the same pass as the DOM, but its callback parser rescans the parent
// object after each child object ends, which made 4 10^4 tensors take 15 s and 10^5 minutes.
class RepeatedKey final : public json::json_sax_t {
 public:
  std::string key_name;  // empty: none
  bool in_top_level = false;  // a tensor name repeated, not a key inside one entry

  bool start_object(std::size_t) override {
    open_.emplace_back();
    return true;
  }
  bool end_object() override {
    open_.pop_back();
    return true;
  }
  bool key(string_t& k) override {
    if (open_.back().insert(k).second) return true;
    key_name = k;
    in_top_level = open_.size() == 1;
    return false;  // the first one is enough: stop
  }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const json::exception&) override { return false; }

 private:
  std::vector<std::unordered_set<std::string>> open_;  // keys seen in each object being parsed
};

// Parses the header, rejecting a key repeated in any object.
json parse_header(const std::string& text, const std::string& where) {
  json header;
  try {
    header = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number that overflows
    std::string message = e.what();
    const auto cut = message.find("] ");
    if (cut != std::string::npos) message = message.substr(cut + 2);
    std::replace(message.begin(), message.end(), '\n', ' ');
    throw InputError(where + ": header (bytes 8 to " + std::to_string(8 + text.size()) + ") is not valid JSON: " +
                     message);
  }
  RepeatedKey repeated;
  json::sax_parse(text, &repeated);
  if (!repeated.key_name.empty())
    throw InputError(where + ": " + (repeated.in_top_level ? "tensor " : "key ") + printable(repeated.key_name) +
                     " appears twice in the header" + (repeated.in_top_level ? "" : " (in one entry)"));
  return header;
}

}  // namespace

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}


int safetensors_dtype_size(const std::string& dtype) {
  static const std::map<std::string, int> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2},  {"U16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"I64", 8},     {"U64", 8}, {"F64", 8}};
  const auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

std::int64_t TensorInfo::elements() const {
  // open() checked that the product fits unless an extent is 0 (then it is never formed).
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return n;
}

std::string SafetensorsFile::where() const { return "safetensors " + printable(path_); }

SafetensorsFile::SafetensorsFile(SafetensorsFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(other.fd_),
      data_start_(other.data_start_),
      data_size_(other.data_size_),
      tensors_(std::move(other.tensors_)),
      metadata_(std::move(other.metadata_)) {
  other.fd_ = -1;
}

SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    data_start_ = other.data_start_;
    data_size_ = other.data_size_;
    tensors_ = std::move(other.tensors_);
    metadata_ = std::move(other.metadata_);
    other.fd_ = -1;
  }
  return *this;
}

SafetensorsFile::~SafetensorsFile() {
  if (fd_ >= 0) ::close(fd_);
}

// The header rules, in the order they are checked:
//  1. the file has at least 8 bytes (the header length n);
//  2. n <= 100 MB and n <= file size - 8 (the header lies inside the file);
//  3. the header is valid JSON, no object repeats a key (a tensor named twice), and it is an object;
//  4. "__metadata__", when present, maps strings to strings;
//  5. every other entry is an object with "dtype" (a safetensors dtype name), "shape" (array of
//     non-negative integers whose product fits in int64) and "data_offsets" (two non-negative integers);
//  6. begin <= end, end <= data size (file size - 8 - n), end - begin = product(shape) * dtype size;
//  7. sorted by begin, the tensors tile [0, data size): no gap, no overlap, nothing after the last.
SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile f;
  f.path_ = path;
  const std::string where = f.where();
  f.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd_ < 0) throw InputError(where + ": cannot open (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(f.fd_, &st) != 0) throw SystemError(where + ": fstat failed: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw InputError(where + ": not a regular file");
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  if (file_size < 8)
    throw InputError(where + ": file has " + std::to_string(file_size) +
                     " bytes, fewer than the 8 of the header length");
  unsigned char length_bytes[8];
  if (!pread_all(f.fd_, length_bytes, 8, 0)) throw SystemError(where + ": file shrank while being opened");
  const std::uint64_t n = load_le(length_bytes, 8);
  if (n > max_header_bytes)
    throw InputError(where + ": header length " + std::to_string(n) + " (bytes 0-7) exceeds the limit of " +
                     std::to_string(max_header_bytes) + " bytes");
  if (n > file_size - 8)
    throw InputError(where + ": header length " + std::to_string(n) + " (bytes 0-7) runs past the end of the file (" +
                     std::to_string(file_size) + " bytes): truncated inside the header?");
  std::string text(static_cast<std::size_t>(n), '\0');
  if (!pread_all(f.fd_, text.data(), n, 8)) throw SystemError(where + ": file shrank while being opened");
  f.data_start_ = 8 + n;
  f.data_size_ = file_size - 8 - n;

  const json header = parse_header(text, where);
  if (!header.is_object())
    throw InputError(where + ": header is a JSON " + std::string(header.type_name()) + ", not an object");

  struct Span {
    std::uint64_t begin, end;
    const std::string* name;
  };
  std::vector<Span> spans;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) throw InputError(where + ": \"__metadata__\" is not an object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string())
          throw InputError(where + ": \"__metadata__\" value of " + printable(key) + " is not a string");
        f.metadata_[key] = value.get<std::string>();
      }
      continue;
    }
    const std::string tensor = where + ": tensor " + printable(name);
    if (!entry.is_object()) throw InputError(tensor + ": entry is not a JSON object: " + json_text(entry));
    for (const char* key : {"dtype", "shape", "data_offsets"})
      if (!entry.contains(key)) throw InputError(tensor + ": no \"" + key + "\"");
    TensorInfo info;
    const json& dtype = entry["dtype"];
    if (!dtype.is_string()) throw InputError(tensor + ": \"dtype\" is not a string: " + json_text(dtype));
    info.dtype = dtype.get<std::string>();
    const int size = safetensors_dtype_size(info.dtype);
    if (size == 0) throw InputError(tensor + ": unknown dtype " + printable(info.dtype));

    const json& shape = entry["shape"];
    if (!shape.is_array()) throw InputError(tensor + ": \"shape\" is not an array: " + json_text(shape));
    // Extents fit int64 each; their product is checked only when no extent is 0 (then it is empty).
    constexpr auto int64_max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    bool overflow = false, empty = false;
    std::uint64_t elements = 1;
    for (const json& s : shape) {
      std::uint64_t extent = 0;
      if (!non_negative_integer(s, extent))
        throw InputError(tensor + ": shape " + json_text(shape) + " has an entry that is not a non-negative integer");
      if (extent > int64_max) throw InputError(tensor + ": shape " + json_text(shape) + " has an entry above 2^63 - 1");
      info.shape.push_back(static_cast<std::int64_t>(extent));
      if (extent == 0) empty = true;
      if (extent && elements > int64_max / extent) overflow = true;
      if (!overflow) elements *= extent;
    }
    if (empty) elements = 0;
    if (overflow && !empty)
      throw InputError(tensor + ": shape " + json_text(shape) + " has more than 2^63 elements");

    const json& offsets = entry["data_offsets"];
    std::uint64_t begin = 0, end = 0;
    if (!offsets.is_array() || offsets.size() != 2 || !non_negative_integer(offsets[0], begin) ||
        !non_negative_integer(offsets[1], end))
      throw InputError(tensor + ": \"data_offsets\" " + json_text(offsets) + " is not two non-negative integers");
    const std::string span = "data_offsets " + range_text(begin, end);
    if (end < begin) throw InputError(tensor + ": " + span + " ends before it begins");
    if (end > f.data_size_)
      throw InputError(tensor + ": " + span + " end beyond the data section (size " + std::to_string(f.data_size_) +
                       ")");
    const unsigned __int128 needed = static_cast<unsigned __int128>(elements) * static_cast<unsigned>(size);
    if (needed != end - begin)
      throw InputError(tensor + ": " + span + " holds " + std::to_string(end - begin) + " bytes but shape " +
                       shape_text(info.shape) + " of " + info.dtype + " needs " +
                       (needed > std::numeric_limits<std::uint64_t>::max()
                            ? std::string("more than 2^64")
                            : std::to_string(static_cast<std::uint64_t>(needed))));
    info.begin = begin;
    info.end = end;
    auto [it, fresh] = f.tensors_.emplace(name, std::move(info));
    spans.push_back({begin, end, &it->first});
  }

  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t covered = 0;
  const std::string* previous = nullptr;
  for (const Span& s : spans) {
    const std::string tensor = where + ": tensor " + printable(*s.name) + ": data_offsets " + range_text(s.begin, s.end);
    if (s.begin < covered)
      throw InputError(tensor + " overlap tensor " + printable(*previous) + " (which ends at " + std::to_string(covered) +
                       ")");
    if (s.begin > covered)
      throw InputError(tensor + " leave a gap: data bytes " + range_text(covered, s.begin) + " belong to no tensor");
    covered = s.end;
    previous = s.name;
  }
  if (covered != f.data_size_)
    throw InputError(where + ": data bytes " + range_text(covered, f.data_size_) +
                     " after the last tensor belong to no tensor");
  return f;
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> out;
  for (const auto& [name, info] : tensors_) out.push_back(name);
  return out;
}

const TensorInfo& SafetensorsFile::info(const std::string& name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) throw InputError(where() + ": no tensor " + printable(name));
  return it->second;
}

void SafetensorsFile::read_elements(const std::string& name, const TensorInfo& t, std::uint64_t first,
                                    std::uint64_t count, double* out) const {
  if (!readable_dtype(t.dtype))
    throw InputError(where() + ": tensor " + printable(name) + " has dtype " + t.dtype +
                     ", which cannot be read as weights (F64, F32, F16, BF16)");
  const std::uint64_t size = static_cast<std::uint64_t>(safetensors_dtype_size(t.dtype));
  // The validated header bounds every read: [first, first + count) lies inside the tensor.
  if (first > static_cast<std::uint64_t>(t.elements()) || count > static_cast<std::uint64_t>(t.elements()) - first)
    throw std::out_of_range(where() + ": elements past the end of tensor " + printable(name));
  std::vector<unsigned char> buffer;
  constexpr std::uint64_t chunk = 1u << 20;  // elements per read: bounds the raw buffer
  for (std::uint64_t done = 0; done < count;) {
    const std::uint64_t m = std::min(chunk, count - done);
    buffer.resize(static_cast<std::size_t>(m * size));
    if (!pread_all(fd_, buffer.data(), m * size, data_start_ + t.begin + (first + done) * size))
      throw SystemError(where() + ": end of file inside tensor " + printable(name) + " (was the file changed?)");
    for (std::uint64_t i = 0; i < m; ++i) out[done + i] = decode(t.dtype, buffer.data() + i * size);
    done += m;
  }
}

std::vector<double> SafetensorsFile::read(const std::string& name) const {
  const TensorInfo& t = info(name);
  std::vector<double> out(static_cast<std::size_t>(t.elements()));
  read_elements(name, t, 0, out.size(), out.data());
  return out;
}

std::vector<double> SafetensorsFile::read_rows(const std::string& name, std::int64_t row_begin,
                                               std::int64_t row_end) const {
  const TensorInfo& t = info(name);
  if (t.shape.size() != 2)
    throw InputError(where() + ": tensor " + printable(name) + " has shape " + shape_text(t.shape) + ", not a matrix");
  return read_block(name, row_begin, row_end, 0, t.shape[1]);
}

std::vector<double> SafetensorsFile::read_block(const std::string& name, std::int64_t row_begin, std::int64_t row_end,
                                                std::int64_t col_begin, std::int64_t col_end) const {
  const TensorInfo& t = info(name);
  if (t.shape.size() != 2)
    throw InputError(where() + ": tensor " + printable(name) + " has shape " + shape_text(t.shape) + ", not a matrix");
  const std::int64_t rows = t.shape[0], cols = t.shape[1];
  if (row_begin < 0 || row_begin > row_end || row_end > rows || col_begin < 0 || col_begin > col_end || col_end > cols)
    throw std::out_of_range(where() + ": block rows " + range_text(row_begin, row_end) + " x columns " +
                            range_text(col_begin, col_end) + " outside tensor " + printable(name) + " " +
                            shape_text(t.shape));
  const std::int64_t width = col_end - col_begin;
  std::vector<double> out(static_cast<std::size_t>((row_end - row_begin) * width));
  if (out.empty()) return out;
  if (width == cols) {
    read_elements(name, t, static_cast<std::uint64_t>(row_begin * cols), out.size(), out.data());
  } else {
    for (std::int64_t r = row_begin; r < row_end; ++r)
      read_elements(name, t, static_cast<std::uint64_t>(r * cols + col_begin), static_cast<std::uint64_t>(width),
                    out.data() + (r - row_begin) * width);
  }
  return out;
}

double round_to_dtype(double value, const std::string& dtype) {
  unsigned char bytes[8];
  if (!readable_dtype(dtype)) throw std::invalid_argument("round_to_dtype: dtype " + dtype + " is not F64/F32/F16/BF16");
  encode(dtype, value, bytes);
  return decode(dtype, bytes);
}

void write_safetensors(const std::string& path, const std::vector<SafetensorsEntry>& entries,
                       const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (const auto& e : entries) {
    const int size = readable_dtype(e.dtype) ? safetensors_dtype_size(e.dtype) : 0;
    if (size == 0) throw std::invalid_argument("write_safetensors: " + e.name + ": dtype " + e.dtype);
    std::uint64_t n = 1;
    for (std::int64_t s : e.shape) n *= static_cast<std::uint64_t>(s);
    if (n != e.values.size() || header.contains(e.name))
      throw std::invalid_argument("write_safetensors: " + e.name + ": " + std::to_string(e.values.size()) +
                                  " values for shape " + shape_text(e.shape) + ", or a repeated name");
    header[e.name] = {{"dtype", e.dtype}, {"shape", e.shape}, {"data_offsets", {offset, offset + n * size}}};
    offset += n * size;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the reference writer pads the header to 8 bytes
  const std::string partial = path + ".part";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    unsigned char length[8];
    store_le(length, text.size(), 8);
    out.write(reinterpret_cast<const char*>(length), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    std::vector<unsigned char> bytes;
    for (const auto& e : entries) {
      const int size = safetensors_dtype_size(e.dtype);
      bytes.resize(e.values.size() * size);
      for (std::size_t i = 0; i < e.values.size(); ++i) encode(e.dtype, e.values[i], bytes.data() + i * size);
      out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
    out.close();
    if (!out) throw SystemError("write_safetensors: cannot write '" + partial + "'");
  }
  std::error_code ec;
  std::filesystem::rename(partial, path, ec);
  if (ec) throw SystemError("write_safetensors: cannot rename '" + partial + "' to '" + path + "': " + ec.message());
}

}  // namespace tokdyn
