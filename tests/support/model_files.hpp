// Small GPT-2-, BERT-, ALBERT- and GPT-Neo-shaped safetensors files for the tests, with the exact weights
// they store (after rounding to the file's dtype), so a test can compute F = O V and embeddings directly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokdyn/io/safetensors.hpp"
#include "tokdyn/weights/layer_weights.hpp"

namespace tokdyn::test {

// One model file: d = 12, H = 3 (d_h = 4), 2 layers (ALBERT: its one shared layer), vocab 20, ALBERT's
// embedding size E = 8. Weights are N(0, 1/d) draws of RandomStream(seed, Purpose::test) rounded to dtype.
struct ModelFile {
  std::string model, dtype, prefix;
  int d = 12, heads = 3, vocab = 20, embedding_width = 12;  // embedding_width: E (ALBERT 8) or d
  std::int64_t stored_layers = 2;
  // What the file stores, in tokdyn's orientation (Q, K, V [D, d], O [d, D]), exactly.
  std::vector<LayerWeights> layers;
  // Rows 0..vocab-1 of the model-width embedding [vocab, d] (ALBERT: W e + b summed in long double).
  std::vector<double> embedding;
  // The file's tensors as written (HuggingFace names with the prefix; biases, LayerNorm, MLP and
  // position tensors included so the reader must pick the right ones).
  std::vector<SafetensorsEntry> tensors;

  // The stored values of tensor name (without prefix); throws when absent.
  const SafetensorsEntry& tensor(const std::string& name) const;
};

const std::vector<std::string>& model_names();     // gpt2, bert, albert, gpt-neo
const std::vector<std::string>& model_dtypes();    // F64, F32, F16, BF16
std::string usual_prefix(const std::string& model);  // transformer., bert., albert., transformer.

// Pure: the same on every rank. prefix is prepended to every name ("" for none).
ModelFile make_model_file(const std::string& model, const std::string& dtype, const std::string& prefix,
                          std::uint64_t seed = 1);
void write_model_file(const std::string& path, const ModelFile& file);

}  // namespace tokdyn::test
