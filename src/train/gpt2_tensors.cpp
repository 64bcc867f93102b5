#include "tokdyn/train/gpt2_tensors.hpp"

#include <cmath>

#include "tokdyn/core/errors/error.hpp"

namespace tokdyn {

namespace {

// One GPT-2 tensor: its name, shape, where it sits in theta and whether it is stored transposed there.
struct Gpt2Tensor {
  std::string name;
  std::vector<std::int64_t> shape;  // GPT-2's
  std::size_t offset;
  bool transposed;  // theta holds [shape[1], shape[0]]
};

std::vector<Gpt2Tensor> gpt2_table(const GptConfig& c) {
  const GptLayout layout(c);
  const std::int64_t V = c.vocab, P = c.context, C = c.channels, F = c.hidden();
  std::vector<Gpt2Tensor> t = {{"wte.weight", {V, C}, layout.wte, false}, {"wpe.weight", {P, C}, layout.wpe, false}};
  for (int l = 0; l < c.layers; ++l) {
    const GptLayout::Layer& y = layout.layer[l];
    const std::string h = "h." + std::to_string(l) + ".";
    t.push_back({h + "ln_1.weight", {C}, y.ln1w, false});
    t.push_back({h + "ln_1.bias", {C}, y.ln1b, false});
    t.push_back({h + "attn.c_attn.weight", {C, 3 * C}, y.qkvw, true});
    t.push_back({h + "attn.c_attn.bias", {3 * C}, y.qkvb, false});
    t.push_back({h + "attn.c_proj.weight", {C, C}, y.projw, true});
    t.push_back({h + "attn.c_proj.bias", {C}, y.projb, false});
    t.push_back({h + "ln_2.weight", {C}, y.ln2w, false});
    t.push_back({h + "ln_2.bias", {C}, y.ln2b, false});
    t.push_back({h + "mlp.c_fc.weight", {C, F}, y.fcw, true});
    t.push_back({h + "mlp.c_fc.bias", {F}, y.fcb, false});
    if (c.prelu) t.push_back({h + "mlp.prelu.weight", {F}, y.slope, false});
    t.push_back({h + "mlp.c_proj.weight", {F, C}, y.fcprojw, true});
    t.push_back({h + "mlp.c_proj.bias", {C}, y.fcprojb, false});
  }
  t.push_back({"ln_f.weight", {C}, layout.lnfw, false});
  t.push_back({"ln_f.bias", {C}, layout.lnfb, false});
  return t;
}

}  // namespace

template <class T>
std::vector<SafetensorsEntry> gpt2_tensors(const GptConfig& c, const T* theta) {
  std::vector<SafetensorsEntry> out;
  for (const Gpt2Tensor& t : gpt2_table(c)) {
    SafetensorsEntry e{t.name, sizeof(T) == 4 ? "F32" : "F64", t.shape, {}};
    const std::int64_t rows = t.shape[0], cols = t.shape.size() > 1 ? t.shape[1] : 1;
    e.values.resize(static_cast<std::size_t>(rows * cols));
    const T* src = theta + t.offset;
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j)  // GPT-2 [i, j] = theta [j, i] when transposed
        e.values[i * cols + j] = static_cast<double>(t.transposed ? src[j * rows + i] : src[i * cols + j]);
    out.push_back(std::move(e));
  }
  return out;
}

template <class T>
void gpt_from_gpt2_tensors(const GptConfig& c,
                           const std::function<std::vector<double>(const std::string&, const std::vector<std::int64_t>&)>& read,
                           T* theta) {
  for (const Gpt2Tensor& t : gpt2_table(c)) {
    const std::vector<double> v = read(t.name, t.shape);
    const std::int64_t rows = t.shape[0], cols = t.shape.size() > 1 ? t.shape[1] : 1;
    T* dst = theta + t.offset;
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) {
        const double x = v[i * cols + j];
        if (!std::isfinite(x))
          throw InputError("tensor '" + t.name + "' holds NaN or Inf (entry " + std::to_string(i * cols + j) + ")");
        (t.transposed ? dst[j * rows + i] : dst[i * cols + j]) = static_cast<T>(x);
      }
  }
}

template std::vector<SafetensorsEntry> gpt2_tensors<float>(const GptConfig&, const float*);
template std::vector<SafetensorsEntry> gpt2_tensors<double>(const GptConfig&, const double*);
template void gpt_from_gpt2_tensors<float>(
    const GptConfig&, const std::function<std::vector<double>(const std::string&, const std::vector<std::int64_t>&)>&,
    float*);
template void gpt_from_gpt2_tensors<double>(
    const GptConfig&, const std::function<std::vector<double>(const std::string&, const std::vector<std::int64_t>&)>&,
    double*);

}  // namespace tokdyn
