#include "tokdyn/train/batches.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/core/numerics/random.hpp"

namespace tokdyn {

TextSplit split_text(const TokenizedText& text, double validation_fraction, int n) {
  if (!(validation_fraction > 0 && validation_fraction < 1))
    throw InputError("the validation fraction must lie in (0, 1)");
  const std::size_t total = text.tokens.size();
  const std::size_t cut = total - static_cast<std::size_t>(validation_fraction * static_cast<double>(total));
  TextSplit s;
  s.train.assign(text.tokens.begin(), text.tokens.begin() + static_cast<std::ptrdiff_t>(cut));
  s.validation.assign(text.tokens.begin() + static_cast<std::ptrdiff_t>(cut), text.tokens.end());
  const std::size_t need = static_cast<std::size_t>(n) + 1;
  if (s.train.size() < need || s.validation.size() < need)
    throw InputError("the text's training part (" + std::to_string(s.train.size()) + " tokens) and validation part (" +
                     std::to_string(s.validation.size()) + ") must each hold a sequence of " + std::to_string(need));
  return s;
}

std::int64_t sequence_offset(std::uint64_t seed, std::int64_t step, std::int64_t b, std::int64_t size, int n) {
  const std::int64_t range = size - n;  // offsets 0 .. size - n - 1
  const double u = RandomStream(seed, Purpose::train_batches)
                       .uniform4(static_cast<std::uint64_t>(step), static_cast<std::uint64_t>(b), 0)[0];  // (0, 1]
  return std::min(range - 1, static_cast<std::int64_t>((1 - u) * static_cast<double>(range)));
}

std::vector<std::int64_t> batch_offsets(std::uint64_t seed, std::int64_t step, std::int64_t batch, std::int64_t size,
                                        int n) {
  std::vector<std::int64_t> o(static_cast<std::size_t>(batch));
  for (std::int64_t b = 0; b < batch; ++b) o[static_cast<std::size_t>(b)] = sequence_offset(seed, step, b, size, n);
  return o;
}

std::vector<std::int64_t> validation_offsets(std::int64_t count, std::int64_t size, int n) {
  const std::int64_t last = size - n - 1;  // the largest offset with n + 1 tokens
  std::vector<std::int64_t> o(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    o[static_cast<std::size_t>(i)] = count > 1 ? (i * last + (count - 1) / 2) / (count - 1) : 0;  // rounded i last / (count - 1)
  return o;
}

template <class T>
double batch_loss(Gpt<T>& model, const T* theta, const std::vector<int>& tokens,
                  const std::vector<std::int64_t>& offsets, int n, const SymmetryBiases& biases, T* grad,
                  MPI_Comm comm) {
  const std::int64_t batch = static_cast<std::int64_t>(offsets.size());
  int rank = 0, ranks = 1;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  TOKDYN_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  const Partition part(batch, ranks);
  const std::size_t size = model.layout().size;
  // This rank's loss (double) and gradient (T, summed over the passes into grad itself).
  double loss = 0;
  if (grad) std::fill(grad, grad + size, T(0));
  const double scale = 1.0 / (static_cast<double>(batch) * n);
  // This rank's sequences as one batch of the model: inputs at the offsets, targets one token on.
  std::vector<const int*> inputs, targets;
  for (std::int64_t b = part.begin(rank); b < part.begin(rank) + part.count(rank); ++b) {
    const std::int64_t o = offsets[static_cast<std::size_t>(b)];
    inputs.push_back(&tokens[o]), targets.push_back(&tokens[o + 1]);
  }
  // In passes of a bounded size (Gpt::sequences_per_pass): the activations of a large batch would not fit.
  const std::size_t pass = static_cast<std::size_t>(model.sequences_per_pass(n));
  for (std::size_t b = 0; b < inputs.size(); b += pass) {
    const int count = static_cast<int>(std::min(pass, inputs.size() - b));
    loss += scale * model.batch(theta, inputs.data() + b, targets.data() + b, count, n, biases, grad, scale);
  }
  // The sums over the ranks: the gradient in T (float halves the bytes; at two ranks the float sum is the
  // rounded double sum exactly), the loss in double.
  const MPI_Datatype type = std::is_same_v<T, float> ? MPI_FLOAT : MPI_DOUBLE;
  if (grad) TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, grad, static_cast<int>(size), type, MPI_SUM, comm));
  TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &loss, 1, MPI_DOUBLE, MPI_SUM, comm));
  return loss;
}

template double batch_loss<float>(Gpt<float>&, const float*, const std::vector<int>&, const std::vector<std::int64_t>&,
                                  int, const SymmetryBiases&, float*, MPI_Comm);
template double batch_loss<double>(Gpt<double>&, const double*, const std::vector<int>&,
                                   const std::vector<std::int64_t>&, int, const SymmetryBiases&, double*, MPI_Comm);

template <class T>
std::vector<double> mean_attention_inputs(Gpt<T>& model, const T* theta, const std::vector<int>& tokens,
                                          const std::vector<std::int64_t>& offsets, int n, const SymmetryBiases& biases,
                                          MPI_Comm comm) {
  const GptConfig& c = model.config();
  const std::size_t L = c.layers, V = c.vocab, C = c.channels, per_layer = V * C;
  int rank = 0, ranks = 1;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  TOKDYN_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  const Partition part(static_cast<std::int64_t>(offsets.size()), ranks);
  // This rank's sums [L, V, C], then the counts [V].
  std::vector<double> sum(L * per_layer + V, 0.0);
  double* count = sum.data() + L * per_layer;
  std::vector<const int*> inputs, targets;
  for (std::int64_t b = part.begin(rank); b < part.begin(rank) + part.count(rank); ++b) {
    const int* seq = &tokens[static_cast<std::size_t>(offsets[static_cast<std::size_t>(b)])];
    inputs.push_back(seq), targets.push_back(seq + 1);
  }
  const std::size_t pass = static_cast<std::size_t>(model.sequences_per_pass(n));
  for (std::size_t first = 0; first < inputs.size(); first += pass) {
    const std::size_t size = std::min(pass, inputs.size() - first);
    model.batch(theta, inputs.data() + first, targets.data() + first, static_cast<int>(size), n, biases, nullptr, 1.0);
    for (std::size_t b = 0; b < size; ++b)
      for (int t = 0; t < n; ++t) {
        const std::size_t id = static_cast<std::size_t>(inputs[first + b][t]), row = b * n + t;
        count[id] += 1;
        for (std::size_t l = 0; l < L; ++l) {
          const T* in = model.attention_input(static_cast<int>(l)).data() + row * C;
          double* out = sum.data() + l * per_layer + id * C;
          for (std::size_t i = 0; i < C; ++i) out[i] += in[i];
        }
      }
  }
  TOKDYN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, sum.data(), static_cast<int>(sum.size()), MPI_DOUBLE, MPI_SUM, comm));
  std::vector<double> mean(L * per_layer);
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t id = 0; id < V; ++id)
      for (std::size_t i = 0; i < C; ++i)
        mean[l * per_layer + id * C + i] = count[id] > 0 ? sum[l * per_layer + id * C + i] / count[id] : NAN;
  return mean;
}

template std::vector<double> mean_attention_inputs<float>(Gpt<float>&, const float*, const std::vector<int>&,
                                                          const std::vector<std::int64_t>&, int, const SymmetryBiases&,
                                                          MPI_Comm);
template std::vector<double> mean_attention_inputs<double>(Gpt<double>&, const double*, const std::vector<int>&,
                                                           const std::vector<std::int64_t>&, int, const SymmetryBiases&,
                                                           MPI_Comm);

}  // namespace tokdyn
