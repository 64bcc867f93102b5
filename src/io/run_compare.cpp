#include "tokdyn/io/run_compare.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/io/hdf5.hpp"

namespace tokdyn {
namespace {

// The stored bytes of a dataset, in its file type.
std::vector<unsigned char> dataset_bytes(hid_t file, const std::string& path, std::string& type_text) {
  h5::Handle set = h5::open_dataset(file, path);
  h5::Handle type = h5::make_type_handle(TOKDYN_H5(H5Dget_type(set)));
  if (TOKDYN_H5(H5Tis_variable_str(type)) > 0 || H5Tget_class(type) == H5T_VLEN)
    throw SystemError("comparing run files: dataset '" + path + "' has variable-length elements");
  hsize_t elements = 1;
  for (hsize_t n : h5::dims(set)) elements *= n;
  std::vector<unsigned char> bytes(elements * H5Tget_size(type));
  type_text = std::to_string(H5Tget_class(type)) + ":" + std::to_string(H5Tget_size(type));
  for (hsize_t n : h5::dims(set)) type_text += " " + std::to_string(n);
  if (!bytes.empty()) TOKDYN_H5(H5Dread(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()));
  return bytes;
}

// Timings among attributes: names ending in "seconds" or "_per_second" (/train@tokens_per_second). The
// dimension-scale links are object references, equal in meaning, not in bytes.
bool skipped_attribute(const std::string& name) {
  auto ends = [&](const std::string& s) { return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0; };
  return ends("seconds") || ends("_per_second") || name == "DIMENSION_LIST" || name == "REFERENCE_LIST";
}

// "" when every group and dataset below the root carries the same attributes with the same bytes (results
// such as /markov@t_I live there); the root's are the run's identity (its id, times, output) and differ.
std::string compare_attributes(hid_t a, hid_t b, std::size_t& attributes) {
  for (const std::string& p : h5::object_paths(a)) {
    if (!h5::exists(b, p)) return "'" + p + "' is missing from the rerun";
    h5::Handle x(TOKDYN_H5(H5Oopen(a, p.c_str(), H5P_DEFAULT)), H5Oclose), y(TOKDYN_H5(H5Oopen(b, p.c_str(), H5P_DEFAULT)), H5Oclose);
    std::vector<std::string> in_x = h5::attribute_names(x), in_y = h5::attribute_names(y);
    std::erase_if(in_x, skipped_attribute);
    std::erase_if(in_y, skipped_attribute);
    for (const std::string& n : in_y)
      if (std::find(in_x.begin(), in_x.end(), n) == in_x.end()) return "attribute '" + p + "@" + n + "' is new in the rerun";
    for (const std::string& n : in_x) {
      if (std::find(in_y.begin(), in_y.end(), n) == in_y.end())
        return "attribute '" + p + "@" + n + "' is missing from the rerun";
      if (h5::attribute_bytes(x, n) != h5::attribute_bytes(y, n)) return "attribute '" + p + "@" + n + "' differs";
      ++attributes;
    }
  }
  return "";
}

}  // namespace

// Every dataset of a must be in b with the same type, shape and bytes, and b have no other. Timings
// (datasets with the attribute `timing`, e.g. spectrum/seconds) are present in both, not compared.
RunComparison compare_run_files(const std::string& a_path, const std::string& b_path) {
  RunComparison c;
  auto differs = [&c](std::string why) {
    c.difference = std::move(why);
    return c;
  };
  h5::Handle a = h5::open_input_file_here(a_path, "run file"), b = h5::open_input_file_here(b_path, "run file");
  const std::vector<std::string> in_a = h5::dataset_paths(a), in_b = h5::dataset_paths(b);
  for (const std::string& p : in_b)
    if (std::find(in_a.begin(), in_a.end(), p) == in_a.end())
      return differs("dataset '" + p + "' is new in the rerun");
  for (const std::string& p : in_a) {
    if (std::find(in_b.begin(), in_b.end(), p) == in_b.end())
      return differs("dataset '" + p + "' is missing from the rerun");
    if (h5::has_attribute(h5::open_dataset(a, p), "timing")) {
      ++c.timings;
      continue;
    }
    std::string ta, tb;
    const std::vector<unsigned char> x = dataset_bytes(a, p, ta), y = dataset_bytes(b, p, tb);
    if (ta != tb) return differs("dataset '" + p + "' has another type or shape (" + ta + " against " + tb + ")");
    std::size_t differ = 0, first = 0;
    for (std::size_t k = x.size(); k-- > 0;)
      if (x[k] != y[k]) ++differ, first = k;
    if (differ > 0)
      return differs("dataset '" + p + "' differs in " + std::to_string(differ) + " of " + std::to_string(x.size()) +
                     " bytes (first at byte " + std::to_string(first) + ")");
    ++c.datasets;
  }
  return differs(compare_attributes(a, b, c.attributes));
}

}  // namespace tokdyn
