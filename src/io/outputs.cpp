#include "tokdyn/io/outputs.hpp"

#include <hdf5_hl.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "tokdyn/io/hdf5.hpp"

namespace tokdyn {
namespace {

struct Table {
  std::string_view owner;
  std::span<const OutputDecl> entries;
};

// Function-local: the tables register during static initialisation, in any order.
std::vector<Table>& tables() {
  static std::vector<Table> list;
  return list;
}

std::string group_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// text cut at spaces into lines of at most `width` characters, each after `indent`.
std::string wrapped(std::string_view text, std::size_t width, const std::string& indent) {
  std::string out, line;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(at, end - at);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + std::string(word);
    at = end + 1;
  }
  return line.empty() ? out : out + indent + line + "\n";
}

const char* type_name(OutputType t) {
  switch (t) {
    case OutputType::real: return "float64";
    case OutputType::integer: return "int64";
    case OutputType::text: return "string";
  }
  return "?";
}

}  // namespace

DeclaredOutputs::DeclaredOutputs(std::string_view owner, std::span<const OutputDecl> table) {
  tables().push_back({owner, table});
}

const OutputDecl* find_output(std::string_view path) {
  const OutputDecl* best = nullptr;
  for (const Table& t : tables())
    for (const OutputDecl& d : t.entries) {
      if (d.path == path) return &d;
      // The longest matching pattern wins ("diagnostics/mean_*" over "diagnostics/*").
      const std::string_view stem = d.path.substr(0, d.path.empty() ? 0 : d.path.size() - 1);
      if (!d.path.empty() && d.path.back() == '*' && path.size() > stem.size() && path.substr(0, stem.size()) == stem &&
          (!best || d.path.size() > best->path.size()))
        best = &d;
    }
  return best;
}

const OutputDecl& require_output(std::string_view path, OutputType type) {
  const OutputDecl* d = find_output(path);
  // A tokdyn bug, not the user's: found by the first test that writes the path.
  if (!d)
    throw std::logic_error("run file: '" + std::string(path) +
                           "' is written but not declared (io/outputs.hpp: declare it beside the code that writes it)");
  if (d->type != type)
    throw std::logic_error("run file: '" + std::string(path) + "' is declared " + type_name(d->type) +
                           " but written as " + type_name(type));
  return *d;
}

std::vector<const OutputDecl*> declared_outputs() {
  std::vector<const OutputDecl*> all;
  for (const Table& t : tables())
    for (const OutputDecl& d : t.entries) all.push_back(&d);
  return all;
}

std::string outputs_listing() {
  std::vector<Table> sorted = tables();
  std::stable_sort(sorted.begin(), sorted.end(), [](const Table& a, const Table& b) { return a.owner < b.owner; });
  std::string text;
  for (const Table& t : sorted) {
    text += std::string(t.owner) + ":\n";
    for (const OutputDecl& d : t.entries) {
      std::string head = "  " + std::string(d.path) + "  " + type_name(d.type);
      if (!d.axes.empty()) head += " [" + std::string(d.axes) + "]";
      if (!d.units.empty() && d.units != "1") head += ", " + std::string(d.units);
      text += head + "\n" + wrapped(d.description, 104, "      ");
    }
    text += "\n";
  }
  return text;
}

std::vector<std::string> describe_datasets(hid_t file) {
  // Collected first (the file is not changed while it is visited), in name order: the same calls on every rank.
  const std::vector<std::string> paths = h5::dataset_paths(file);
  std::vector<std::string> missing;
  std::map<std::string, std::pair<std::string, std::string>> scales;  // group -> its layer series, their axis
  for (const std::string& path : paths) {
    const OutputDecl* d = find_output(path);
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
      const OutputDecl* d = find_output(path);
      if (!d || d->axes.substr(0, d->axes.find(',')) != axis) continue;
      h5::Handle set = h5::open_dataset(file, path);
      if (h5::dims(set).empty() || h5::dims(set)[0] != rows) continue;
      if (TOKDYN_H5(H5DSis_attached(set, layer, 0)) <= 0) TOKDYN_H5(H5DSattach_scale(set, layer, 0));
    }
  }
  return missing;
}

}  // namespace tokdyn
