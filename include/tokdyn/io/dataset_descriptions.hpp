// What each dataset of a run file holds: a description, its units and its axes, written as the attributes
// `description`, `units` and `axes` of the dataset, so that a file read years later (or by h5dump, h5py,
// HDFView) explains itself. One table (src/io/dataset_description_table.inc), keyed by the dataset's path.
#pragma once

#include <hdf5.h>

#include <string>
#include <string_view>
#include <vector>

namespace tokdyn {

struct DatasetDescription {
  std::string_view path;         // "diagnostics/energy"; a trailing '*' matches any suffix ("diagnostics/mean_*")
  std::string_view description;  // what the values are
  std::string_view units;        // "1" for dimensionless
  std::string_view axes;         // storage order, "row, bin"; "scalar" for one value
};

// The entry for a dataset path (no leading '/'), nullptr when the table has none.
const DatasetDescription* find_dataset_description(std::string_view path);

// Collective: every dataset of the open file without a `description` gets its entry's three attributes, and
// the datasets of a group that holds a 1-D `layer` dataset get it attached as the dimension scale of their
// first axis when that axis has its name and length.
// Returns the paths the table does not describe (they are left without attributes).
std::vector<std::string> describe_datasets(hid_t file);

}  // namespace tokdyn
