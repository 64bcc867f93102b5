// Block partition of N items over P ranks by global index: rank r owns [begin(r), begin(r) + count(r)).
// The first N mod P ranks own one extra item, so counts differ by at most one.
#pragma once

#include <cstdint>

namespace tokdyn {

struct Partition {
  std::int64_t n_global = 0;
  int ranks = 1;

  Partition() = default;
  Partition(std::int64_t n, int p) : n_global(n), ranks(p) {}

  std::int64_t count(int r) const { return n_global / ranks + (r < n_global % ranks ? 1 : 0); }
  std::int64_t begin(int r) const {
    const std::int64_t base = n_global / ranks, extra = n_global % ranks;
    return r * base + (r < extra ? r : extra);
  }
  std::int64_t max_count() const { return count(0); }
};

}  // namespace tokdyn
