#include "tokdyn/core/numerics/random.hpp"

#include <Random123/boxmuller.hpp>
#include <Random123/philox.h>
#include <Random123/uniform.hpp>

namespace tokdyn {

std::array<std::uint64_t, 4> RandomStream::bits(std::uint64_t step, std::uint64_t index,
                                                std::uint64_t block) const {
  r123::Philox4x64 rng;
  r123::Philox4x64::key_type key = {{seed_, static_cast<std::uint64_t>(purpose_)}};
  r123::Philox4x64::ctr_type ctr = {{step, index, block, 0}};
  const auto r = rng(ctr, key);
  return {r[0], r[1], r[2], r[3]};
}

std::array<double, 4> RandomStream::normal4(std::uint64_t step, std::uint64_t index,
                                            std::uint64_t block) const {
  const auto w = bits(step, index, block);
  const r123::double2 a = r123::boxmuller(w[0], w[1]);
  const r123::double2 b = r123::boxmuller(w[2], w[3]);
  return {a.x, a.y, b.x, b.y};
}

void RandomStream::normals(std::uint64_t step, std::uint64_t index, double* out, std::size_t n) const {
  for (std::size_t k = 0; k < n; k += 4) {
    const auto z = normal4(step, index, k / 4);
    for (std::size_t j = 0; j < 4 && k + j < n; ++j) out[k + j] = z[j];
  }
}

std::array<double, 4> RandomStream::uniform4(std::uint64_t step, std::uint64_t index,
                                             std::uint64_t block) const {
  const auto w = bits(step, index, block);
  return {r123::u01<double>(w[0]), r123::u01<double>(w[1]), r123::u01<double>(w[2]),
          r123::u01<double>(w[3])};
}

}  // namespace tokdyn
