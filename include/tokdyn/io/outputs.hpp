// What a run file (or a weight file) may hold, declared once: every dataset and every attribute tokdyn writes,
// with its type, units, axes and meaning. A table of declarations sits beside the code that fills it (a
// study's results in its study file, the shared header, tokens and diagnostics in io/run_file.cpp) and
// registers itself at start-up. The writers of io/run_file.hpp write only what is declared (anything else is
// an internal error, std::logic_error, in the tests as in a run), every dataset gets its declaration as the
// attributes `description`, `units` and `axes`, and `tokdyn --outputs` prints the tables (doc/run-files.md
// holds that listing; a test keeps it current).
#pragma once

#include <hdf5.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tokdyn {

enum class OutputType { real, integer, text };

struct OutputDecl {
  // "power/basis_first" for a dataset; "power@state" for an attribute of group (or dataset) power; "@seed" for
  // a root attribute. A trailing '*' matches any suffix ("diagnostics/mean_*", the numbered components).
  std::string_view path;
  OutputType type;
  std::string_view units;  // "1" when dimensionless, "" for text
  std::string_view axes;   // datasets: the dimensions in storage order, "row, bin"; attributes: ""
  std::string_view description;
};

// A namespace-scope object of this type registers a table (kept by reference: it must be static too).
// `owner` names the table in the listing: the command(s) whose files hold it.
class DeclaredOutputs {
 public:
  DeclaredOutputs(std::string_view owner, std::span<const OutputDecl> table);
};

// The declaration of a path (no leading '/'), nullptr when there is none: an exact path, else the longest
// matching pattern.
const OutputDecl* find_output(std::string_view path);
// The declaration a writer must have: std::logic_error when path is not declared or is declared with another type.
const OutputDecl& require_output(std::string_view path, OutputType type);

// Every registered declaration, table by table.
std::vector<const OutputDecl*> declared_outputs();
// Every registered table as text, in owner order (tokdyn --outputs).
std::string outputs_listing();

// Collective: every dataset of the open file without a `description` gets its declaration's three attributes,
// and the datasets of a group that holds a 1-D `layer` dataset get it attached as the dimension scale of their
// first axis when that axis has its name and length. Returns the paths nothing declares (left as they are).
std::vector<std::string> describe_datasets(hid_t file);

}  // namespace tokdyn
