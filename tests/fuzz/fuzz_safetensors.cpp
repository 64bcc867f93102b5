// The safetensors reader: any bytes as a file. open() either refuses (InputError) or every tensor it
// lists reads inside the file, whole, by rows and by blocks.
#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "fuzz_support.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/io/safetensors.hpp"

using namespace tokdyn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::TempFile file(data, size, ".safetensors");
  try {
    const SafetensorsFile f = SafetensorsFile::open(file.path());
    for (const std::string& name : f.names()) {
      const TensorInfo& t = f.info(name);
      if (t.elements() > (1 << 16)) continue;
      try {
        const std::vector<double> all = f.read(name);
        if (static_cast<std::int64_t>(all.size()) != t.elements()) std::abort();
        if (t.shape.size() == 2 && t.shape[0] > 0 && t.shape[1] > 0) {
          const std::int64_t r = t.shape[0] / 2, c = t.shape[1] / 2;
          const std::vector<double> rows = f.read_rows(name, r, t.shape[0]);
          const std::vector<double> block = f.read_block(name, r, t.shape[0], c, t.shape[1]);
          // The pieces are the whole tensor's entries (NaN payloads compare by bits).
          for (std::int64_t i = r; i < t.shape[0]; ++i)
            for (std::int64_t j = 0; j < t.shape[1]; ++j) {
              const double x = all[i * t.shape[1] + j], y = rows[(i - r) * t.shape[1] + j];
              if (!(x == y || (x != x && y != y))) std::abort();
              if (j >= c) {
                const double z = block[(i - r) * (t.shape[1] - c) + j - c];
                if (!(x == z || (x != x && z != z))) std::abort();
              }
            }
        }
      } catch (const InputError&) {  // a dtype that cannot be read
      }
    }
  } catch (const InputError&) {
  }
  return 0;
}
