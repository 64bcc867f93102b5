// The attention weights of transformer layers in tokdyn's orientation
// (doc/science.md sections 7.1 and 7.5), and the sources they come from (model files, HDF5, synthetic).
#pragma once

#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/deck/registry.hpp"

namespace tokdyn {


// One layer: H heads of size d_h, D = H d_h. Q, K, V stacked by rows [D, d] (head h: rows
// [h d_h, (h+1) d_h)); O = [O_1 ... O_H] [d, D] (head h: columns [h d_h, (h+1) d_h)). Row-major.
// Layer matrix F = O V = sum_h O_h V_h [d, d].
struct LayerWeights {
  int d = 0, heads = 1, head_dim = 0;
  double score_scale = 1;  // logits score_scale <Q_h x, K_h y>: 1/sqrt(d_h) (GPT-2, BERT, ALBERT), 1 (GPT-Neo)
  std::vector<double> query, key, value;  // [D, d] each
  std::vector<double> output;             // [d, D]
  int width() const { return heads * head_dim; }
};

// Where a model's layers come from. Every rank opens the source; reads are independent (not
// collective), so a rank can read only the rows it owns. Every value read is checked: NaN or Inf in what
// a rank reads is an InputError on that rank naming the tensor and the first bad entry, so code with other
// ranks in a collective reads through read_collectively.
class WeightSource {
 public:
  virtual ~WeightSource() = default;
  virtual int d() const = 0;
  virtual int heads() const = 0;
  virtual int head_dim() const = 0;
  virtual std::int64_t layers() const = 0;
  // One set of weights for every layer (ALBERT, synthetic shared): layer(t) is the same for all t.
  virtual bool shared() const = 0;
  virtual double score_scale() const = 0;
  // The whole layer t in [0, layers()), on the calling rank alone.
  virtual LayerWeights layer(std::int64_t t) const = 0;
  // Rows [begin, end) of O_t [d, D] -> [end - begin, D], and of V_t [D, d] -> [end - begin, d]:
  // what a rank needs for its row block of F_t without holding the whole layer.
  virtual std::vector<double> output_rows(std::int64_t t, std::int64_t begin, std::int64_t end) const = 0;
  virtual std::vector<double> value_rows(std::int64_t t, std::int64_t begin, std::int64_t end) const = 0;
  // Input embeddings of token ids in the model width d: [ids.size(), d]. InputError naming the source
  // when it has no embedding or an id is out of range.
  virtual bool has_embedding() const = 0;
  virtual std::vector<double> embedding(const std::vector<std::int64_t>& ids) const = 0;
  // Rows of the embedding table (valid ids are [0, vocab_size())); 0 when there is no embedding.
  virtual std::int64_t vocab_size() const { return 0; }
  // One line for logs and the run file: format, file, shape.
  virtual std::string describe() const = 0;
};

// Runs read() (reads of a WeightSource by this rank, possibly none) and agrees on the outcome with every
// rank of comm: an InputError that any rank's read throws (NaN or Inf in a tensor, a token id out of range,
// a file it cannot open) is thrown on every rank with the lowest failing rank's message, so no rank is left
// waiting in a collective. Collective: every rank of comm calls it, also ranks with nothing to read.
template <class Read>
auto read_collectively(MPI_Comm comm, Read&& read) -> decltype(read()) {
  decltype(read()) out{};
  std::string problem;
  try {
    out = read();
  } catch (const InputError& e) {
    problem = e.what();
  }
  require_all(comm, problem.empty(), problem);
  return out;
}

// Index of the first NaN or Inf of values, or -1 when all are finite (the sources' check of what they read).
inline std::int64_t first_nonfinite(const std::vector<double>& values) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i])) return static_cast<std::int64_t>(i);
  return -1;
}

}  // namespace tokdyn
