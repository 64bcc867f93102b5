// tokdyn's own weights layout (HDF5): any WeightSource converted once (`tokdyn weights`), then read by
// every rank independently, each reading hyperslabs of only the rows it needs.
//   /weights   attributes d, heads, head_dim, layers, shared (0/1) (int64), score_scale (float64),
//              source (text: the describe() line of what was converted)
//     query, key, value  [Ls, D, d] float64   (doc/science.md section 7.5, D = heads * head_dim)
//     output             [Ls, d, D] float64
//     embedding          [vocab, d] float64   (optional: the model-width input embeddings)
//   Ls = 1 when shared (the one layer applied `layers` times), else Ls = layers.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>

#include "tokdyn/weights/layer_weights.hpp"

namespace tokdyn {

// Opens path read-only on the calling rank alone and checks the attributes and every dataset's shape
// and type (InputError naming the file and the dataset or attribute). heads: 0 or the file's own
// (another value is an InputError naming weights.heads); layers: 0 = the file's, more than a
// non-shared file has is an InputError.
std::unique_ptr<WeightSource> open_hdf5_weights(const std::string& path, int heads = 0, std::int64_t layers = 0);

// Collective on comm: writes source in the layout above to PATH.part and renames it to path. Layer t
// is read (source.layer(t)) and written by rank t mod P; embedding rows in blocks of a row partition.
void write_hdf5_weights(const std::string& path, const WeightSource& source, MPI_Comm comm);

}  // namespace tokdyn
