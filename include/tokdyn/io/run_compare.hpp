// Two run files compared byte for byte, as `tokdyn rerun --check` certifies a rerun: every dataset (type,
// shape, bytes) and every attribute of every group and dataset below the root. Timings are the one thing two
// runs of a deck do not share and are not compared: datasets with the attribute `timing`, attributes named
// *seconds or *_per_second. The root's attributes are the run's identity (id, times, output) and differ.
#pragma once

#include <cstddef>
#include <string>

namespace tokdyn {

struct RunComparison {
  std::string difference;  // "" when the files agree, else the first difference
  std::size_t datasets = 0, attributes = 0, timings = 0;  // compared, and timings left out
};
// Serial (one rank reads both files). InputError when a file cannot be opened as HDF5.
RunComparison compare_run_files(const std::string& original, const std::string& rerun);

}  // namespace tokdyn
