// The declared outputs of io/outputs.hpp: lookup by path and pattern, every registered table complete and
// without duplicates, and RunGroup writing what is declared (read back) and refusing what is not.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "tokdyn/io/hdf5.hpp"
#include "tokdyn/io/outputs.hpp"
#include "tokdyn/io/run_file.hpp"

namespace tokdyn {
namespace {

// A group only this test writes: its table registers like any study's.
constexpr OutputDecl kProbeOutputs[] = {
    {"probe/values", OutputType::real, "1", "value", "test: values written whole"},
    {"probe/counts", OutputType::integer, "1", "row, bin", "test: integer rows"},
    {"probe/values@unit", OutputType::text, "", "", "test: an attribute of a dataset"},
    {"probe@size", OutputType::integer, "1", "", "test: an attribute of the group"},
};
const DeclaredOutputs kProbeDeclared("test", kProbeOutputs);

TEST(Outputs, ExactPathsPatternsAndUnknown) {
  const OutputDecl* e = find_output("diagnostics/energy");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->path, "diagnostics/energy");
  EXPECT_EQ(e->axes, "row");
  // A numbered family through its pattern; a prefix alone, or the pattern's stem, is not a match.
  const OutputDecl* m = find_output("diagnostics/mean_2");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->path, "diagnostics/mean_*");
  EXPECT_EQ(find_output("diagnostics/mean_"), nullptr);
  EXPECT_EQ(find_output("diagnostics/nonexistent"), nullptr);
  EXPECT_EQ(find_output("diagnostics/energ"), nullptr);
  EXPECT_EQ(find_output("tokens/X")->axes, "snapshot, token, coordinate");
  EXPECT_EQ(find_output("@seed")->type, OutputType::integer);
}

TEST(Outputs, RequireRefusesUndeclaredAndWrongType) {
  EXPECT_EQ(&require_output("probe/values", OutputType::real), find_output("probe/values"));
  EXPECT_THROW(require_output("probe/nothing", OutputType::real), std::logic_error);
  EXPECT_THROW(require_output("probe/values", OutputType::integer), std::logic_error);
  EXPECT_THROW(require_output("probe@size", OutputType::text), std::logic_error);
}

TEST(Outputs, EveryDeclarationCompleteAndUnique) {
  // Every registered table: a description; a dataset has units and axes; an attribute has no axes; text has no
  // units; and no path is declared twice (the first would hide the second).
  std::set<std::string> seen;
  const std::vector<const OutputDecl*> all = declared_outputs();
  ASSERT_GT(all.size(), 40u);
  for (const OutputDecl* d : all) {
    const std::string path(d->path);
    EXPECT_TRUE(seen.insert(path).second) << path << " declared twice";
    EXPECT_FALSE(d->description.empty()) << path;
    EXPECT_EQ(d->description.find("TODO"), std::string_view::npos) << path;
    const bool attribute = path.find('@') != std::string::npos;
    EXPECT_EQ(d->axes.empty(), attribute) << path;
    if (d->type == OutputType::text) EXPECT_TRUE(d->units.empty()) << path;
    else EXPECT_FALSE(d->units.empty()) << path;
  }
  // The listing names each path once.
  const std::string listing = outputs_listing();
  for (const OutputDecl* d : all) EXPECT_NE(listing.find("  " + std::string(d->path) + "  "), std::string::npos);
}

TEST(Outputs, RunGroupWritesDeclaredPathsOnly) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("tokdyn-outputs-" + std::to_string(getpid()) + ".h5")).string();
  RunInfo info;
  info.command = "test";
  {
    RunFile file = RunFile::create(path, MPI_COMM_SELF, info);
    RunGroup g = file.group("probe");
    g.write("values", {1.5, -2.0, 3.25});
    g.attribute("values@unit", std::string("radian"));
    g.attribute("size", std::int64_t(3));
    const std::int64_t row0[2] = {4, 5}, row1[2] = {6, 7};
    g.write_row("counts", {2}, 0, row0, 0, 2);
    g.write_row("counts", {2}, 1, row1, 0, 2);
    EXPECT_EQ(g.rows("counts"), 2u);
    // Undeclared names, a declared name with another type, an undeclared attribute: refused before any write.
    EXPECT_THROW(g.write("other", {1.0}), std::logic_error);
    EXPECT_THROW(g.write_integers("values", {1}), std::logic_error);
    EXPECT_THROW(g.attribute("colour", std::string("red")), std::logic_error);
    EXPECT_THROW(file.group("elsewhere").write("values", {1.0}), std::logic_error);
    file.set_status("complete");  // describes every dataset from its declaration
    file.close();
  }
  h5::Handle f = h5::open_file(path, MPI_COMM_SELF, false);
  EXPECT_FALSE(h5::exists(f, "probe/other"));
  EXPECT_FALSE(h5::exists(f, "elsewhere"));
  h5::Handle values = h5::open_dataset(f, "probe/values");
  std::vector<double> v(3);
  h5::read_slab(values, H5T_NATIVE_DOUBLE, v.data(), 0, 3);
  EXPECT_EQ(v, (std::vector<double>{1.5, -2.0, 3.25}));
  EXPECT_EQ(h5::read_string_attribute(values, "unit"), "radian");
  EXPECT_EQ(h5::read_string_attribute(values, "description"), "test: values written whole");
  EXPECT_EQ(h5::read_int_attribute(h5::open_group(f, "probe"), "size"), 3);
  h5::Handle counts = h5::open_dataset(f, "probe/counts");
  EXPECT_EQ(h5::dims(counts), (std::vector<hsize_t>{2, 2}));
  std::vector<std::int64_t> c(4);
  h5::read_slab(counts, H5T_NATIVE_INT64, c.data(), 0, 2);
  EXPECT_EQ(c, (std::vector<std::int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(h5::read_string_attribute(counts, "axes"), "row, bin");
  f.close();
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tokdyn
