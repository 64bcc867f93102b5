// Initial tokens X_0: iid uniform on S^{d-1} from the seed, or rows of a user's HDF5 file.
#pragma once

#include <vector>

#include "tokdyn/core/comm.hpp"
#include "tokdyn/core/deck.hpp"
#include "tokdyn/core/partition.hpp"

namespace tokdyn {

void add_token_keys(DeckSchema& schema);
// x: this rank's rows [partition.count(rank), d].
void initial_tokens(const Deck& deck, const Comm& comm, const Partition& partition, int d, std::vector<double>& x);

}  // namespace tokdyn
