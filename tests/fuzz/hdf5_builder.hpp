// Structured HDF5 inputs for the fuzz targets: the fuzzer's bytes are a small program that writes a file
// of groups, datasets and attributes with the names a reader looks for, of any type and shape, holding
// any values (NaN, Inf, huge, negative). Mutating bytes of an HDF5 file would exercise libhdf5's own parser;
// this exercises what tokdyn does with whatever a valid HDF5 file may hold.
#pragma once

#include <hdf5.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "fuzz_support.hpp"

namespace tokdyn::fuzz {

// Closes every HDF5 object still open and returns how many there were. A reader that throws leaves its
// objects open on purpose (h5::Handle does not close while unwinding: a collective close could hang when
// the ranks disagree, and the run ends anyway); a reader that returns must leave none.
inline ssize_t close_hdf5_objects() {
  const ssize_t n = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
  if (n <= 0) return 0;
  std::vector<hid_t> ids(static_cast<std::size_t>(n));
  H5Fget_obj_ids(H5F_OBJ_ALL, H5F_OBJ_ALL, ids.size(), ids.data());
  for (hid_t id : ids) {  // objects first, files last
    switch (H5Iget_type(id)) {
      case H5I_DATASET: H5Dclose(id); break;
      case H5I_GROUP: H5Gclose(id); break;
      case H5I_ATTR: H5Aclose(id); break;
      case H5I_DATATYPE: H5Tclose(id); break;
      default: break;
    }
  }
  for (hid_t id : ids)
    if (H5Iget_type(id) == H5I_FILE) H5Fclose(id);
  return n;
}

class Hdf5Builder {
 public:
  // names: the paths of datasets and attributes the reader under test may look for.
  Hdf5Builder(Bytes& in, std::vector<std::string> dataset_names, std::vector<std::string> attribute_names,
              std::vector<std::string> texts)
      : in_(in), datasets_(std::move(dataset_names)), attributes_(std::move(attribute_names)), texts_(std::move(texts)) {}

  // Writes the file at path: up to 32 operations.
  void write(const std::string& path) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (file < 0) std::abort();
    for (int op = 0; op < 32 && !in_.empty(); ++op) {
      const std::uint8_t kind = in_.byte();
      const bool is_attribute = kind % 2 == 1;
      const std::vector<std::string>& names = is_attribute ? attributes_ : datasets_;
      object(file, names[in_.byte() % names.size()], is_attribute);
    }
    H5Fclose(file);
  }

 private:
  // A value: mostly small integers and halves, sometimes NaN, +-Inf, huge or a raw double.
  double value() {
    const std::uint8_t k = in_.byte();
    switch (k % 8) {
      case 0: return std::numeric_limits<double>::quiet_NaN();
      case 1: return (k & 8) ? INFINITY : -INFINITY;
      case 2: return (k & 8) ? 1e308 : -1e-310;
      case 3: {
        const std::uint64_t bits = in_.word(8);
        double v;
        std::memcpy(&v, &bits, 8);
        return v;
      }
      default: return static_cast<double>(static_cast<std::int8_t>(in_.byte())) / 2;
    }
  }

  // The parent group of path (created on the way) and the last name.
  hid_t parent_of(hid_t file, const std::string& path, std::string& leaf) {
    hid_t g = H5Gopen2(file, "/", H5P_DEFAULT);
    std::size_t k = path[0] == '/' ? 1 : 0;
    for (std::size_t slash; (slash = path.find('/', k)) != std::string::npos; k = slash + 1) {
      const std::string name = path.substr(k, slash - k);
      hid_t next = H5Lexists(g, name.c_str(), H5P_DEFAULT) > 0 ? H5Gopen2(g, name.c_str(), H5P_DEFAULT)
                                                               : H5Gcreate2(g, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      H5Gclose(g);
      if (next < 0) return -1;  // a dataset where a group was wanted
      g = next;
    }
    leaf = path.substr(k);
    return g;
  }

  // Type: float64, float32, int64, int32, uint8, a fixed-length or a variable-length string.
  hid_t type(std::uint8_t k) {
    switch (k % 7) {
      case 0: return H5Tcopy(H5T_NATIVE_DOUBLE);
      case 1: return H5Tcopy(H5T_NATIVE_FLOAT);
      case 2: return H5Tcopy(H5T_NATIVE_INT64);
      case 3: return H5Tcopy(H5T_NATIVE_INT32);
      case 4: return H5Tcopy(H5T_NATIVE_UINT8);
      case 5: {
        const hid_t t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, 8);
        return t;
      }
      default: {
        const hid_t t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, H5T_VARIABLE);
        return t;
      }
    }
  }

  // Values of n elements in memory type double (converted by HDF5 to the file type; strings get text).
  void fill(hid_t obj, hid_t t, hsize_t n, bool is_attribute) {
    if (H5Tis_variable_str(t) > 0) {
      std::vector<std::string> keep(n);
      std::vector<const char*> p(n);
      for (hsize_t i = 0; i < n; ++i) p[i] = (keep[i] = texts_[in_.byte() % texts_.size()]).c_str();
      is_attribute ? H5Awrite(obj, t, p.data()) : H5Dwrite(obj, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, p.data());
      return;
    }
    if (H5Tget_class(t) == H5T_STRING) {
      std::string all;
      for (hsize_t i = 0; i < n; ++i) {
        std::string s = texts_[in_.byte() % texts_.size()];
        s.resize(8, '\0');
        all += s;
      }
      is_attribute ? H5Awrite(obj, t, all.data()) : H5Dwrite(obj, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, all.data());
      return;
    }
    std::vector<double> v(n);
    for (double& x : v) x = value();
    // Out-of-range conversions (NaN to int) are HDF5's to clip: what a file can hold.
    is_attribute ? H5Awrite(obj, H5T_NATIVE_DOUBLE, v.data())
                 : H5Dwrite(obj, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
  }

  hid_t space(hsize_t& n) {
    const int rank = in_.byte() % 4;
    hsize_t dims[3];
    n = 1;
    for (int r = 0; r < rank; ++r) n *= (dims[r] = in_.byte() % 7);
    return rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims, nullptr);
  }

  // A dataset or an attribute at path, replacing one of that name.
  void object(hid_t file, const std::string& path, bool is_attribute) {
    std::string leaf;
    const hid_t g = parent_of(file, path, leaf);
    if (g < 0) return;
    const hid_t t = type(in_.byte());
    hsize_t n = 0;
    const hid_t s = space(n);
    if (is_attribute ? H5Aexists(g, leaf.c_str()) > 0 : H5Lexists(g, leaf.c_str(), H5P_DEFAULT) > 0)
      is_attribute ? H5Adelete(g, leaf.c_str()) : H5Ldelete(g, leaf.c_str(), H5P_DEFAULT);
    const hid_t o = is_attribute ? H5Acreate2(g, leaf.c_str(), t, s, H5P_DEFAULT, H5P_DEFAULT)
                                 : H5Dcreate2(g, leaf.c_str(), t, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (o >= 0) {
      fill(o, t, n, is_attribute);
      is_attribute ? H5Aclose(o) : H5Dclose(o);
    }
    H5Sclose(s), H5Tclose(t), H5Gclose(g);
  }

  Bytes& in_;
  std::vector<std::string> datasets_, attributes_, texts_;
};

}  // namespace tokdyn::fuzz
