// The parameters of tokdyn train's GPT as GPT-2's named tensors, and back: the layout HuggingFace's GPT-2
// files use, so that an exported model is read by `tokdyn weights`, `spectrum` and `power` (weights.format =
// gpt2) and by PyTorch, and a GPT-2 file of the same shape can start a run.
//
//   wte.weight [V, C], wpe.weight [context, C]; per layer l: h.l.ln_1.{weight,bias} [C],
//   h.l.attn.c_attn.weight [C, 3C] (GPT-2's [in, out]: the transpose of tokdyn's [3C, C] rows Q|K|V),
//   h.l.attn.c_attn.bias [3C], h.l.attn.c_proj.weight [C, C] (W_O^T), h.l.attn.c_proj.bias [C],
//   h.l.ln_2.{weight,bias} [C], h.l.mlp.c_fc.weight [C, 4C] (transposed), h.l.mlp.c_fc.bias [4C],
//   h.l.mlp.prelu.weight [4C] (PReLU's slopes: not in GPT-2, which has GELU), h.l.mlp.c_proj.weight [4C, C]
//   (transposed), h.l.mlp.c_proj.bias [C]; ln_f.{weight,bias} [C]. The output is tied to wte (no lm_head).
// The symmetry-breaking biases b_Q, b_K, b_V are drawn afresh at every pass: they are no parameters.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tokdyn/io/safetensors.hpp"
#include "tokdyn/train/gpt.hpp"

namespace tokdyn {

// The tensors of theta [layout size], in the order above, as double; dtype F32 or F64 (the parameters').
template <class T>
std::vector<SafetensorsEntry> gpt2_tensors(const GptConfig& c, const T* theta);

// theta [layout size] from named tensors: read(name, shape) returns the tensor `name` of shape `shape` (it
// throws InputError when the source has no such tensor or another shape). InputError naming the tensor
// when a value is NaN or Inf.
template <class T>
void gpt_from_gpt2_tensors(const GptConfig& c,
                           const std::function<std::vector<double>(const std::string&, const std::vector<std::int64_t>&)>& read,
                           T* theta);

}  // namespace tokdyn
