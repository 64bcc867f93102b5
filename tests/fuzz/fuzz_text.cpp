// The text loader of markov and train: any bytes as a text, by characters (UTF-8) or by bytes. Either an
// InputError, or tokens whose symbols spell the file again byte for byte, a sorted vocabulary of distinct
// symbols, and windows that stay inside the tokens.
#include <cstdint>
#include <cstdlib>

#include "fuzz_support.hpp"
#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/markov/sequences.hpp"

using namespace tokdyn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool bytes = data[0] & 1;
  const fuzz::TempFile file(data + 1, size - 1, ".txt");
  static const Comm self(MPI_COMM_SELF);
  try {
    const TokenizedText text = tokenize_text(self, file.path(), bytes, "markov.text_file", 64 << 20);
    std::string spelled;
    for (int t : text.tokens) {
      if (t < 0 || t >= static_cast<int>(text.vocabulary.size())) std::abort();
      spelled += text.vocabulary[t];
    }
    if (spelled != std::string(reinterpret_cast<const char*>(data + 1), size - 1)) std::abort();
    for (std::size_t i = 1; i < text.vocabulary.size(); ++i)
      if (!(text.vocabulary[i - 1] < text.vocabulary[i])) std::abort();
    const std::int64_t s = 1 + data[0] % 5, stride = 1 + (data[0] >> 4) % 3, n = text_windows(text, s, stride);
    if (n > 0) {
      const SequenceItems items = text_items(text, s, stride, Partition(n, 1), 0);
      if (items.size() != n) std::abort();
    }
  } catch (const InputError&) {
  }
  return 0;
}
