// HuggingFace model weights (GPT-2, BERT, ALBERT, GPT-Neo safetensors files) as a WeightSource in
// tokdyn's orientation (doc/science.md sections 7.1 and 7.5): one class, a small table of names per model.
//
// Tensor names (l = layer; keys may carry a prefix, see ModelPrefix), stored orientation and mapping:
//   gpt2     h.{l}.attn.c_attn.weight [d, 3d] [in, out], columns Q|K|V: Q = c_attn[:, 0:d]^T,
//            K = c_attn[:, d:2d]^T, V = c_attn[:, 2d:3d]^T;  h.{l}.attn.c_proj.weight [d, d] [in, out]:
//            O = c_proj^T;  embedding wte.weight [vocab, d];  scores 1/sqrt(d_h);  prefix "transformer."
//   bert     encoder.layer.{l}.attention.self.{query,key,value}.weight [d, d] [out, in]: Q, K, V;
//            encoder.layer.{l}.attention.output.dense.weight [d, d] [out, in]: O;
//            embedding embeddings.word_embeddings.weight [vocab, d];  scores 1/sqrt(d_h);  prefix "bert."
//   albert   one shared layer encoder.albert_layer_groups.0.albert_layers.0.attention.{query,key,value}.weight
//            and ...attention.dense.weight [d, d] [out, in];  embedding embeddings.word_embeddings.weight
//            [vocab, E] mapped by encoder.embedding_hidden_mapping_in.weight [d, E] and .bias [d]
//            (x = W e + b);  scores 1/sqrt(d_h);  layers() = weights.layers or 12;  prefix "albert."
//   gpt-neo  h.{l}.attn.attention.{q_proj,k_proj,v_proj,out_proj}.weight [d, d] [out, in];
//            embedding wte.weight [vocab, d];  scores 1 (GPT-Neo has no 1/sqrt(d_h));  prefix "transformer."
// Definition we adopt: the simplified layer (doc/science.md section 7.2) has no biases, so attention biases
// (c_attn.bias, query.bias, ...) are dropped; the only bias used is ALBERT's embedding mapping. Embeddings are
// the word embeddings alone (no position or token-type embeddings, no LayerNorm).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tokdyn/io/safetensors.hpp"
#include "tokdyn/weights/layer_weights.hpp"

namespace tokdyn {

// The models with a layout table: gpt2, bert, albert, gpt-neo.
bool is_safetensors_model(const std::string& model);

struct ModelWeightsOptions {
  std::string model;            // gpt2, bert, albert, gpt-neo
  std::string path;             // the safetensors file
  std::string prefix = "auto";  // "auto": none, or the model's usual one when the bare names are absent
  int heads = 0;                // H (required: safetensors files do not store it); must divide d
  std::int64_t layers = 0;      // 0: every layer the file has (ALBERT: 12); more than the file has: InputError
};

// Opens and checks the file: tensor names (a missing one or a gap in the layer indices is an InputError
// naming the tensor), every shape against d (taken from layer 0) and D = d, heads dividing d.
// Layers are read when asked for, only the rows asked for where the stored orientation allows
// (GPT-2's transposed tensors: the needed columns, one pass over the rows).
std::unique_ptr<WeightSource> open_model_weights(const ModelWeightsOptions& options);

}  // namespace tokdyn
