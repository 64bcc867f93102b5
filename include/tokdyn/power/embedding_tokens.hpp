// Tokens from a model's embedding (doc/science.md section 7.4): the rows of token ids, block-distributed over
// the ranks and normalised to the sphere (tokdyn power's power.tokens = embedding, tokdyn lens's vocabulary).
#pragma once

#include <cstdint>
#include <vector>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/weights/layer_weights.hpp"

namespace tokdyn {

// This rank's rows [n_local, d] of the embeddings of `ids` (partition set to ids.size() over the ranks),
// normalised. Collective: every rank agrees on a read error and on a zero or non-finite row (InputError
// naming the token id).
std::vector<double> embedding_tokens(const std::vector<std::int64_t>& ids, const Comm& comm,
                                     const WeightSource& source, int d, Partition& partition);

}  // namespace tokdyn
