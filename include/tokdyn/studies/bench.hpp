// tokdyn bench: throughput of the hot kernels on random tokens (pairs/s, points/s), for the performance
// tables of doc/performance.md. It writes no file.
#pragma once

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/deck/deck.hpp"

namespace tokdyn {

// [bench] kernel, N, d, repeats, warmup, tile, style, beta, width, blas_threads, text_file, s, m.
DeckSchema bench_schema();
// Collective: warm-up, timed repeats, the best and mean rates and the peak memory per rank, printed.
void run_bench(const Comm& comm, const Deck& deck);

}  // namespace tokdyn
