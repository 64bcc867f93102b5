// Model weights from safetensors files (GPT-2, BERT, ALBERT, GPT-Neo in every dtype) against the stored
// tensors: F = O V by the formulas of doc/science.md section 7.5, row reads, Q/K orientation, embeddings, the
// HDF5 layout round trip, and the deck's errors on every rank.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "model_files.hpp"
#include "reference.hpp"
#include "tokdyn/studies/keys.hpp"
#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/spectral/dense_eigen.hpp"
#include "tokdyn/spectral/distributed_layer_matrix.hpp"
#include "tokdyn/spectral/eigensolver.hpp"
#include "tokdyn/weights/hdf5_weights.hpp"
#include "tokdyn/spectral/layer_matrix.hpp"
#include "tokdyn/weights/model_weights.hpp"

using namespace tokdyn;
using tokdyn::test::ModelFile;

namespace {

namespace fs = std::filesystem;

// A scratch directory made by rank 0 and shared; removed when the test ends.
class SharedDir {
 public:
  SharedDir() {
    std::string path;
    if (comm_.root()) {
      path = (fs::temp_directory_path() / "tokdyn-weights-XXXXXX").string();
      if (!mkdtemp(path.data())) path.clear();
    }
    int n = static_cast<int>(path.size());
    MPI_Bcast(&n, 1, MPI_INT, 0, comm_.get());
    path.resize(n);
    MPI_Bcast(path.data(), n, MPI_CHAR, 0, comm_.get());
    dir_ = path;
  }
  ~SharedDir() {
    comm_.barrier();
    if (comm_.root()) fs::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Rank 0 writes the file; every rank returns once it exists.
  std::string write(const std::string& name, const ModelFile& m) const {
    const std::string p = path(name);
    if (comm_.root()) test::write_model_file(p, m);
    comm_.barrier();
    return p;
  }

 private:
  Comm comm_;
  fs::path dir_;
};

// F_t by doc/science.md section 7.5 straight from the stored tensors, summed in long double.
std::vector<double> f_from_tensors(const ModelFile& m, std::int64_t stored_layer) {
  const int d = m.d;
  const std::string l = std::to_string(stored_layer);
  std::vector<double> f(static_cast<std::size_t>(d) * d);
  if (m.model == "gpt2") {
    // F = (W_v P)^T: W_v = c_attn[:, 2d:3d] [d, d], P = c_proj [d, d], both [in, out].
    const auto& c_attn = m.tensor("h." + l + ".attn.c_attn.weight").values;
    const auto& c_proj = m.tensor("h." + l + ".attn.c_proj.weight").values;
    for (int i = 0; i < d; ++i)
      for (int a = 0; a < d; ++a) {
        long double s = 0;
        for (int k = 0; k < d; ++k) s += static_cast<long double>(c_attn[i * 3 * d + 2 * d + k]) * c_proj[k * d + a];
        f[a * d + i] = static_cast<double>(s);
      }
    return f;
  }
  std::string out, value;
  if (m.model == "bert") {
    out = "encoder.layer." + l + ".attention.output.dense.weight";
    value = "encoder.layer." + l + ".attention.self.value.weight";
  } else if (m.model == "albert") {
    out = "encoder.albert_layer_groups.0.albert_layers.0.attention.dense.weight";
    value = "encoder.albert_layer_groups.0.albert_layers.0.attention.value.weight";
  } else {
    out = "h." + l + ".attn.attention.out_proj.weight";
    value = "h." + l + ".attn.attention.v_proj.weight";
  }
  // F = dense . value, both [out, in].
  const auto& o = m.tensor(out).values;
  const auto& v = m.tensor(value).values;
  for (int a = 0; a < d; ++a)
    for (int b = 0; b < d; ++b) {
      long double s = 0;
      for (int k = 0; k < d; ++k) s += static_cast<long double>(o[a * d + k]) * v[k * d + b];
      f[a * d + b] = static_cast<double>(s);
    }
  return f;
}

// Q x and K x by each model's own convention on its stored tensors (Conv1D x W for GPT-2, W x otherwise).
std::vector<double> projected(const ModelFile& m, std::int64_t stored_layer, bool query, const std::vector<double>& x) {
  const int d = m.d;
  const std::string l = std::to_string(stored_layer);
  std::vector<double> y(d, 0.0);
  if (m.model == "gpt2") {
    const auto& c_attn = m.tensor("h." + l + ".attn.c_attn.weight").values;
    for (int o = 0; o < d; ++o)
      for (int i = 0; i < d; ++i) y[o] += x[i] * c_attn[i * 3 * d + (query ? 0 : d) + o];
    return y;
  }
  std::string name;
  if (m.model == "bert")
    name = "encoder.layer." + l + ".attention.self." + (query ? "query" : "key") + ".weight";
  else if (m.model == "albert")
    name = std::string("encoder.albert_layer_groups.0.albert_layers.0.attention.") + (query ? "query" : "key") + ".weight";
  else
    name = "h." + l + ".attn.attention." + (query ? "q_proj" : "k_proj") + ".weight";
  const auto& w = m.tensor(name).values;
  for (int o = 0; o < d; ++o)
    for (int i = 0; i < d; ++i) y[o] += w[o * d + i] * x[i];
  return y;
}

std::vector<double> mat_vec(const std::vector<double>& a, int rows, int cols, const std::vector<double>& x) {
  std::vector<double> y(rows, 0.0);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) y[r] += a[r * cols + c] * x[c];
  return y;
}

// Every check of a source against the file it was made from.
void expect_matches(const WeightSource& s, const ModelFile& m, const std::string& what) {
  SCOPED_TRACE(what);
  const Comm comm;
  const int d = m.d;
  ASSERT_EQ(s.d(), d);
  ASSERT_EQ(s.heads(), m.heads);
  ASSERT_EQ(s.head_dim(), d / m.heads);
  EXPECT_EQ(s.shared(), m.model == "albert");
  EXPECT_EQ(s.layers(), m.model == "albert" ? 12 : 2);
  EXPECT_EQ(s.score_scale(), m.model == "gpt-neo" ? 1.0 : 0.5);  // 1/sqrt(d_h), d_h = 4
  const Partition rows(d, comm.size());
  const std::int64_t begin = rows.begin(comm.rank()), end = begin + rows.count(comm.rank());
  for (std::int64_t t = 0; t < s.layers(); ++t) {
    const std::int64_t stored = m.model == "albert" ? 0 : t;
    const LayerWeights w = s.layer(t);
    const LayerWeights& ref = m.layers[stored];
    EXPECT_EQ(w.query, ref.query);
    EXPECT_EQ(w.key, ref.key);
    EXPECT_EQ(w.value, ref.value);
    EXPECT_EQ(w.output, ref.output);
    EXPECT_EQ(w.score_scale, s.score_scale());
    // F = O V through the library's product against the formula of doc/science.md section 7.5 on the raw
    // tensors. Both sum 12 products of stored values; long double vs BLAS double leaves a few ulps of max |F|.
    EXPECT_LT(test::relative_error(layer_matrix(w), f_from_tensors(m, stored)), 1e-14) << "layer " << t;
    // Q x, K x by the model's own convention.
    std::vector<double> x(d);
    RandomStream(9, Purpose::test).normals(static_cast<std::uint64_t>(t), 0, x.data(), d);
    EXPECT_LT(test::relative_error(mat_vec(w.query, d, d, x), projected(m, stored, true, x)), 1e-14);
    EXPECT_LT(test::relative_error(mat_vec(w.key, d, d, x), projected(m, stored, false, x)), 1e-14);
    // Row reads: this rank's block, plus empty, single and interior ranges.
    for (const auto& [b, e] : std::vector<std::pair<std::int64_t, std::int64_t>>{{begin, end}, {0, 0}, {d - 1, d}, {3, 8}, {0, d}}) {
      const auto o = s.output_rows(t, b, e), v = s.value_rows(t, b, e);
      EXPECT_EQ(o, std::vector<double>(w.output.begin() + b * d, w.output.begin() + e * d)) << b << ".." << e;
      EXPECT_EQ(v, std::vector<double>(w.value.begin() + b * d, w.value.begin() + e * d)) << b << ".." << e;
    }
  }
  ASSERT_TRUE(s.has_embedding());
  EXPECT_EQ(s.vocab_size(), m.vocab);
  const std::vector<std::int64_t> ids = {0, 7, 19, 3, 7};
  std::vector<double> expected;
  for (auto id : ids) expected.insert(expected.end(), m.embedding.begin() + id * d, m.embedding.begin() + (id + 1) * d);
  // Rows as stored: exact; ALBERT's W e + b: BLAS double against long double, a few ulps.
  EXPECT_LE(test::relative_error(s.embedding(ids), expected), m.model == "albert" ? 1e-14 : 0.0);
  EXPECT_THROW(s.embedding({20}), InputError);
  EXPECT_THROW(s.embedding({-1}), InputError);
}

std::unique_ptr<WeightSource> open_model(const std::string& path, const std::string& model,
                                         const std::string& prefix = "auto", int heads = 3, std::int64_t layers = 0) {
  ModelWeightsOptions o;
  o.model = model;
  o.path = path;
  o.prefix = prefix;
  o.heads = heads;
  o.layers = layers;
  return open_model_weights(o);
}

// The prefix of the test file of (model, dtype): the model's usual one for F32 and BF16 files.
std::string prefix_for(const std::string& model, const std::string& dtype) {
  return dtype == "F32" || dtype == "BF16" ? test::usual_prefix(model) : "";
}

}  // namespace

TEST(ModelWeights, LayersEqualTheStoredTensors) {
  SharedDir dir;
  for (const auto& model : test::model_names())
    for (const auto& dtype : test::model_dtypes()) {
      const ModelFile m = test::make_model_file(model, dtype, prefix_for(model, dtype));
      const std::string path = dir.write(model + "-" + dtype + ".safetensors", m);
      const auto source = open_model(path, model);  // prefix auto-detected
      expect_matches(*source, m, model + " " + dtype);
      EXPECT_NE(source->describe().find(model), std::string::npos);
      EXPECT_NE(source->describe().find(dtype), std::string::npos);
      // The prefix given explicitly finds the same tensors.
      const auto explicit_prefix = open_model(path, model, m.prefix);
      EXPECT_EQ(explicit_prefix->layer(1).output, source->layer(1).output);
    }
}

TEST(ModelWeights, LayerCountFollowsTheDeck) {
  SharedDir dir;
  const ModelFile g = test::make_model_file("gpt2", "F32", "");
  const std::string gpt2 = dir.write("gpt2.safetensors", g);
  EXPECT_EQ(open_model(gpt2, "gpt2", "auto", 3, 1)->layers(), 1);
  EXPECT_THROW(open_model(gpt2, "gpt2", "auto", 3, 3), InputError);
  const ModelFile a = test::make_model_file("albert", "F32", "");
  const std::string albert = dir.write("albert.safetensors", a);
  const auto many = open_model(albert, "albert", "auto", 3, 40);
  EXPECT_EQ(many->layers(), 40);
  EXPECT_EQ(many->layer(39).value, a.layers[0].value);
  EXPECT_EQ(open_model(albert, "albert", "auto", 4)->head_dim(), 3);
}

TEST(ModelWeights, Hdf5LayoutRoundTrip) {
  SharedDir dir;
  const Comm comm;
  for (const auto& model : test::model_names())
    for (const std::string dtype : {"F64", "BF16"}) {
      const ModelFile m = test::make_model_file(model, dtype, prefix_for(model, dtype));
      const auto source = open_model(dir.write(model + "-" + dtype + ".safetensors", m), model);
      const std::string h5 = dir.path(model + "-" + dtype + ".h5");
      write_hdf5_weights(h5, *source, comm.get());
      EXPECT_FALSE(fs::exists(h5 + ".part"));
      const auto back = open_hdf5_weights(h5);
      expect_matches(*back, m, "hdf5 of " + model + " " + dtype);
      EXPECT_NE(back->describe().find(source->describe()), std::string::npos);
      // And once more through the HDF5 writer from an HDF5 source.
      const std::string again = dir.path(model + "-" + dtype + "-again.h5");
      write_hdf5_weights(again, *back, comm.get());
      expect_matches(*open_hdf5_weights(again, 3, 0), m, "hdf5 of hdf5 of " + model);
      EXPECT_THROW(open_hdf5_weights(h5, 4), InputError);  // not the file's heads
    }
}

namespace {

DeckSchema weights_schema_for_tests() {
  DeckSchema s;
  add_weight_keys(s);
  return s;
}

// The InputError weights_from_deck throws (the same on every rank), or "" when it succeeds.
std::string deck_error(const std::vector<std::string>& overrides) {
  const DeckSchema schema = weights_schema_for_tests();
  const Deck deck = Deck::parse(schema, "", overrides);
  try {
    weights_from_deck(deck, MPI_COMM_WORLD);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ModelWeights, WeightsFromDeckAndItsErrors) {
  SharedDir dir;
  const ModelFile m = test::make_model_file("gpt2", "F16", "transformer.");
  const std::string path = dir.write("gpt2.safetensors", m);
  const DeckSchema schema = weights_schema_for_tests();
  const Deck deck = Deck::parse(schema, "", {"--weights.format=gpt2", "--weights.file=" + path, "--weights.heads=3"});
  expect_matches(*weights_from_deck(deck, MPI_COMM_WORLD), m, "from the deck");

  const std::string f = "--weights.file=" + path;
  auto contains = [](const std::string& message, const std::string& part) {
    return message.find(part) != std::string::npos;
  };
  EXPECT_PRED2(contains, deck_error({"--weights.format=gpt2", f}), "weights.heads = 0: safetensors files do not store");
  EXPECT_PRED2(contains, deck_error({"--weights.format=gpt2", f, "--weights.heads=5"}),
               "weights.heads = 5 does not divide the model width d = 12");
  EXPECT_PRED2(contains, deck_error({"--weights.format=gpt2", f, "--weights.heads=3", "--weights.layers=3"}),
               "weights.layers = 3 but safetensors '" + path + "' has 2 gpt2 layers");
  EXPECT_PRED2(contains, deck_error({"--weights.format=gpt2", f, "--weights.heads=3", "--weights.prefix="}),
               "no tensor 'h.0.attn.c_attn.weight' (weights.prefix = ''");
  EXPECT_PRED2(contains, deck_error({"--weights.format=bert", f, "--weights.heads=3"}),
               "no tensor 'encoder.layer.0.attention.self.value.weight' nor 'bert.encoder.layer.0.attention.self.value.weight'");
  EXPECT_PRED2(contains, deck_error({"--weights.format=gpt2", "--weights.heads=3"}), "weights.format = gpt2 needs weights.file");
  EXPECT_PRED2(contains, deck_error({"--weights.format=gpt2", "--weights.file=" + dir.path("none.safetensors")}),
               "weights file '" + dir.path("none.safetensors") + "' (weights.file) does not exist");
  EXPECT_PRED2(contains, deck_error({"--weights.format=gpt3", f}), "unknown weight format 'gpt3' (known: gpt2, bert");
  EXPECT_PRED2(contains, deck_error({"--weights.format=hdf5", f}), "is missing or not an HDF5 file");

  // A gap in the layer indices (layers 0 and 2), and a tensor of the wrong shape.
  ModelFile gap = m;
  for (auto& e : gap.tensors)
    if (e.name.rfind("transformer.h.1.", 0) == 0) e.name.replace(0, 16, "transformer.h.2.");
  const std::string gap_path = dir.write("gap.safetensors", gap);
  EXPECT_PRED2(contains, deck_error({"--weights.format=gpt2", "--weights.file=" + gap_path, "--weights.heads=3"}),
               "tensor 'transformer.h.1.attn.c_attn.weight' is missing (the file has tensors of layers up to 2)");
  ModelFile bad = m;
  for (auto& e : bad.tensors)
    if (e.name == "transformer.h.1.attn.c_proj.weight") {
      e.shape = {12, 11};
      e.values.resize(132);
    }
  const std::string bad_path = dir.write("bad.safetensors", bad);
  EXPECT_PRED2(contains, deck_error({"--weights.format=gpt2", "--weights.file=" + bad_path, "--weights.heads=3"}),
               "tensor 'transformer.h.1.attn.c_proj.weight' has shape [12, 11], expected [12, 12] (gpt2, d = 12)");
}

// Issue 5's check: the eigenvalues SLEPc's Krylov–Schur finds for F_t read from each model file (every
// dtype, F16 and BF16 included) equal LAPACK's of F computed directly from the stored tensors, to 1e-10
// relative, on the matrix-free operator and on the distributed dense matrix alike.
TEST(ModelWeights, SlepcEigenvaluesEqualLapackOfTheStoredTensors) {
  SharedDir dir;
  const Comm comm;
  for (const auto& model : test::model_names())
    for (const auto& dtype : test::model_dtypes()) {
      const ModelFile m = test::make_model_file(model, dtype, prefix_for(model, dtype));
      const std::string path = dir.write(model + "-" + dtype + ".safetensors", m);
      const auto source = open_model(path, model);
      for (std::int64_t t = 0; t < static_cast<std::int64_t>(m.layers.size()); ++t) {
        const std::vector<double> f = layer_matrix(m.layers[t]);
        const DenseEigen want = dense_eigen(m.d, f.data());
        EigenSettings s;
        s.nev = 5;
        s.tol = 1e-13;
        const Partition rows(m.d, comm.size());
        const EigenResult shell = eigen_operator(comm.get(), LayerOperator(comm.get(), *source, t, false), s);
        const EigenResult dense = eigen_dense(comm.get(), rows, distributed_layer_rows(comm.get(), *source, t), s);
        for (const EigenResult* r : {&shell, &dense}) {
          ASSERT_GE(r->converged, s.nev - 1) << model << " " << dtype << " layer " << t;
          for (int k = 0; k < r->converged; ++k) {
            const double scale = std::hypot(want.re[k], want.im[k]);
            EXPECT_LT(std::hypot(r->re[k] - want.re[k], r->im[k] - want.im[k]), 1e-10 * scale)
                << model << " " << dtype << " layer " << t << " eigenvalue " << k;
          }
        }
      }
    }
}
