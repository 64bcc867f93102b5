// The GPT-style decoder of tokdyn train (doc/science.md section 10.3): token and position embeddings,
// L pre-LayerNorm blocks of multi-head causal attention (learned biases c_q, c_k, c_v; optional
// symmetry-breaking biases b_Q, b_K, b_V added after the linear maps, shared by the heads of a layer)
// and an MLP (GELU, or PReLU with learnable slopes), a final LayerNorm and the output tied to the token
// embedding. Forward and backward by hand in plain loops over contiguous arrays (shapes in comments),
// a batch of sequences at a time: every linear layer is one BLAS product over all its rows (sgemm or
// dgemm on the weights in place). Templated on the parameters' scalar, which the activations share (float
// stays float end to end); LayerNorm statistics, softmax normalisers, the loss and the sums over rows of the
// bias, LayerNorm and embedding gradients are taken in double.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tokdyn/train/optimizer.hpp"

namespace tokdyn {

struct GptConfig {
  int vocab = 64;     // V
  int context = 32;   // the longest sequence (rows of the position embedding)
  int layers = 2;     // L
  int heads = 2;      // H
  int channels = 32;  // C = H d_h
  bool prelu = false; // MLP activation: GELU (tanh form) or PReLU with one learnable slope per hidden unit
  int hidden() const { return 4 * channels; }
  int head_dim() const { return channels / heads; }
};

// Offsets of the tensors in the flat parameter vector, in this order.
struct GptLayout {
  struct Layer {
    std::size_t ln1w, ln1b;    // [C], [C]
    std::size_t qkvw, qkvb;    // [3C, C] rows: Q, K, V (head h: rows h d_h .. of each); [3C]: c_q, c_k, c_v
    std::size_t projw, projb;  // W_O [C, C], [C]
    std::size_t ln2w, ln2b;    // [C], [C]
    std::size_t fcw, fcb;      // [4C, C], [4C]
    std::size_t slope;         // [4C] PReLU slopes (absent for GELU: size 0)
    std::size_t fcprojw, fcprojb;  // [C, 4C], [C]
  };
  std::size_t wte = 0, wpe = 0;  // [V, C], [context, C]
  std::vector<Layer> layer;
  std::size_t lnfw = 0, lnfb = 0;  // [C], [C]
  std::size_t size = 0;
  explicit GptLayout(const GptConfig& c);
  // The tensors as the authors' GPT-2 groups them (for ECD's per-tensor projection): wte, wpe, and per
  // layer ln_1 weight, bias, c_attn weight (Q, K, V), c_attn bias, c_proj weight, bias, ln_2, c_fc, (slopes),
  // mlp c_proj; ln_f.
  std::vector<ParameterBlock> blocks() const;
};

// The initial parameters (GPT-2's): weights N(0, std^2), the two projections into the residual stream
// (W_O and the MLP's output) N(0, std^2 / (2 L)), biases 0, LayerNorm weights 1, PReLU slopes
// N(prelu_mean, prelu_std^2) (the authors' code draws N(0.2, 1)); tensor k from the stream (seed,
// train_init, k), so the start depends on the seed alone.
struct GptInit {
  double std = 0.02, prelu_mean = 0.2, prelu_std = 1.0;
};
template <class T>
std::vector<T> initial_gpt(const GptConfig& c, const GptInit& init, std::uint64_t seed);

// The symmetry-breaking biases of one forward pass: b_Q, b_K, b_V [L, d_h] each (empty: none).
struct SymmetryBiases {
  std::vector<double> query, key, value;
};

template <class T>
class Gpt {
 public:
  explicit Gpt(const GptConfig& c);
  const GptConfig& config() const { return c_; }
  const GptLayout& layout() const { return layout_; }
  // The summed cross-entropy of next-token prediction over the positions of `count` sequences of n tokens
  // (n <= context): sequence b's tokens[b] [n] with targets[b] [n]. The sequences go through as one batch of
  // count n rows, so every linear layer is one product. When grad is not null, adds scale x the gradient into
  // grad [size].
  double batch(const T* theta, const int* const* tokens, const int* const* targets, int count, int n,
               const SymmetryBiases& biases, T* grad, double scale);
  // How many sequences of n tokens one batch() should take so that its activations stay near 8e6 values (64 MB in
  // double; at least 1): the attention weights alone are H n^2 values a layer and sequence.
  int sequences_per_pass(int n) const;
  // One sequence: tokens [n], targets [n].
  double sequence(const T* theta, const int* tokens, const int* targets, int n, const SymmetryBiases& biases,
                  T* grad, double scale) {
    return batch(theta, &tokens, &targets, 1, n, biases, grad, scale);
  }
  // After batch(): what layer l's attention read, LN_1 of the block's input [count n, C] (row b n + t).
  const std::vector<T>& attention_input(int l) const { return acts_[static_cast<std::size_t>(l)].ln1; }

 private:
  GptConfig c_;
  GptLayout layout_;
  // Activations of one batch (reused): per layer the block's input, LayerNorm outputs and statistics (in
  // double), the attention and MLP intermediates.
  struct Layer {
    std::vector<T> x, ln1, qkv, att, y, mid, ln2, fc, act, tanh;  // tanh: GELU's, kept for the backward
    std::vector<double> mean1, rstd1, mean2, rstd2;
  };
  std::vector<Layer> acts_;
  std::vector<T> out_, lnf_, probs_;
  std::vector<double> meanf_, rstdf_;
  // The backward pass's gradients of the activations (reused).
  struct Backward {
    std::vector<T> dlnf, dx, dact, dfc, dln, dy, dqkv;
  };
  Backward back_;
  // Reused buffers: sums over rows (double), one head's keys or values transposed, and its ds [n, n] (T).
  std::vector<double> sums_, embedding_sums_;
  std::vector<T> head_, datt_;
};

}  // namespace tokdyn
