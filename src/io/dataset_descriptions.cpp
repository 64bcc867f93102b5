#include "tokdyn/io/dataset_descriptions.hpp"

#include <hdf5_hl.h>

#include <algorithm>
#include <map>

#include "tokdyn/io/hdf5.hpp"

namespace tokdyn {
namespace {

constexpr DatasetDescription kTable[] = {
#include "dataset_description_table.inc"
};

std::string group_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

}  // namespace

const DatasetDescription* find_dataset_description(std::string_view path) {
  const DatasetDescription* best = nullptr;
  for (const DatasetDescription& d : kTable) {
    if (d.path == path) return &d;
    // The longest matching pattern wins ("diagnostics/mean_*" over "diagnostics/*").
    if (!d.path.empty() && d.path.back() == '*' && path.substr(0, d.path.size() - 1) == d.path.substr(0, d.path.size() - 1) &&
        (!best || d.path.size() > best->path.size()))
      best = &d;
  }
  return best;
}

std::vector<std::string> describe_datasets(hid_t file) {
  // Collected first (the file is not changed while it is visited), in name order: the same calls on every rank.
  const std::vector<std::string> paths = h5::dataset_paths(file);
  std::vector<std::string> missing;
  std::map<std::string, std::pair<std::string, std::string>> scales;  // group -> its layer series, their axis
  for (const std::string& path : paths) {
    const DatasetDescription* d = find_dataset_description(path);
    if (!d) {
      missing.push_back(path);
      continue;
    }
    if (path.size() >= 6 && path.compare(path.size() - 6, 6, "/layer") == 0 && d->axes.find(',') == std::string_view::npos)
      scales[group_of(path)] = {path, std::string(d->axes)};
    h5::Handle set = h5::open_dataset(file, path);
    if (h5::has_attribute(set, "description")) continue;
    h5::write_attribute(set, "description", std::string(d->description));
    h5::write_attribute(set, "units", std::string(d->units));
    h5::write_attribute(set, "axes", std::string(d->axes));
  }
  // A group's layer series labels the first axis of the group's datasets that share its axis (diagnostics'
  // "row", tokens' "snapshot") and its length: an HDF5 dimension scale (h5py: ds.dims[0][0]).
  for (const auto& [group, scale] : scales) {
    const auto& [layer_path, axis] = scale;
    h5::Handle layer = h5::open_dataset(file, layer_path);
    if (TOKDYN_H5(H5DSis_scale(layer)) <= 0) TOKDYN_H5(H5DSset_scale(layer, "layer"));
    const hsize_t rows = h5::dims(layer)[0];
    for (const std::string& path : paths) {
      if (path == layer_path || group_of(path) != group) continue;
      const DatasetDescription* d = find_dataset_description(path);
      if (!d || d->axes.substr(0, d->axes.find(',')) != axis) continue;
      h5::Handle set = h5::open_dataset(file, path);
      if (h5::dims(set).empty() || h5::dims(set)[0] != rows) continue;
      if (TOKDYN_H5(H5DSis_attached(set, layer, 0)) <= 0) TOKDYN_H5(H5DSattach_scale(set, layer, 0));
    }
  }
  return missing;
}

}  // namespace tokdyn
