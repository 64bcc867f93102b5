#include "tokdyn/markov/sequences.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cmath>
#include <cctype>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/errors/error_exit.hpp"
#include "tokdyn/io/input_file.hpp"
#include "tokdyn/core/numerics/random.hpp"

namespace tokdyn {
namespace {

// The index t with u <= p_0 + ... + p_t (u in (0, 1]); the last positive one when round-off leaves u above
// the total.
int inverse_cdf(double u, int d, const std::function<double(int)>& p) {
  double acc = 0;
  int last = 0;
  for (int t = 0; t < d; ++t) {
    const double pt = p(t);
    if (pt <= 0) continue;
    acc += pt;
    last = t;
    if (u <= acc) return t;
  }
  return last;
}

// An empty item list of this rank's size, its shape set.
SequenceItems empty_items(int d, std::int64_t s, std::int64_t n_global, std::int64_t count) {
  SequenceItems items;
  items.d = d;
  items.s = s;
  items.n_global = n_global;
  items.last.resize(count);
  items.counts.assign(static_cast<std::size_t>(count) * d, 0.0);
  items.weight.assign(count, 0.0);
  items.target.assign(static_cast<std::size_t>(count) * d, 0.0);
  return items;
}

}  // namespace

namespace {
// Enough digits that a sum off by 1e-12 does not print as 1.000000.
std::string exact(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}
}  // namespace

std::vector<double> stage_four_pi(int d, double pi1, const std::vector<double>& c, double delta) {
  if (static_cast<int>(c.size()) != d - 1)
    throw InputError("markov.family_c needs d - 1 = " + std::to_string(d - 1) + " values, got " + std::to_string(c.size()));
  double sum = 0;
  for (double v : c) sum += v;
  if (std::abs(sum) > 1e-12)
    throw InputError("markov.family_c must sum to 0 (within 1e-12; the family keeps sum pi = 1), sums to " + exact(sum));
  std::vector<double> pi(d);
  pi[0] = pi1;
  for (int i = 1; i < d; ++i) pi[i] = (1 - pi1) / (d - 1) + c[i - 1] * delta;
  return pi;
}

void check_chain(const MarkovChain& chain, const std::string& pi_key, const std::string& lambda_key) {
  if (chain.d < 2) throw InputError(pi_key + ": the vocabulary needs d >= 2 tokens");
  if (static_cast<int>(chain.pi.size()) != chain.d)
    throw InputError(pi_key + " has " + std::to_string(chain.pi.size()) + " entries, d = " + std::to_string(chain.d));
  double sum = 0;
  for (int i = 0; i < chain.d; ++i) {
    if (!(chain.pi[i] > 0)) throw InputError(pi_key + ": entry " + std::to_string(i) + " is not positive");
    sum += chain.pi[i];
  }
  if (std::abs(sum - 1) > 1e-12) throw InputError(pi_key + " must sum to 1 (within 1e-12), sums to " + exact(sum));
  if (!(chain.lam >= 0 && chain.lam < 1)) throw InputError(lambda_key + " must lie in [0, 1)");
}

std::int64_t population_states(int d, std::int64_t s) {
  // d C(s + d - 1, d - 1), in long double to see overflow.
  long double c = 1;
  for (int k = 1; k < d; ++k) c = c * static_cast<long double>(s + k) / k;
  c *= d;
  return c >= static_cast<long double>(std::numeric_limits<std::int64_t>::max()) ? std::numeric_limits<std::int64_t>::max()
                                                                                 : static_cast<std::int64_t>(c + 0.5L);
}

SequenceItems population_items(const MarkovChain& chain, std::int64_t s, int ranks, int rank, std::int64_t max_states) {
  const int d = chain.d;
  const std::int64_t states = population_states(d, s);
  // A state is (counts, last token) coded as sum n_i B^i times d plus the token, B = s + 1.
  const long double bits = d * std::log2(static_cast<long double>(s + 1)) + std::log2(static_cast<long double>(d));
  if (states > max_states || bits > 62)
    throw InputError("markov.loss = population: " + std::to_string(states) + " (last token, counts) states for d = " +
                     std::to_string(d) + ", s = " + std::to_string(s) + " exceed markov.max_states = " +
                     std::to_string(max_states) + " (use markov.loss = sample)");
  std::vector<std::uint64_t> power(d);
  power[0] = 1;
  for (int i = 1; i < d; ++i) power[i] = power[i - 1] * static_cast<std::uint64_t>(s + 1);
  // level[k]: P(x_k = t, counts of x_1..x_k = n), sorted by code so that every rank sums in one order.
  std::vector<std::pair<std::uint64_t, double>> level;
  for (int t = 0; t < d; ++t) level.emplace_back(power[t] * d + t, chain.start(t));
  std::sort(level.begin(), level.end());
  for (std::int64_t k = 1; k < s; ++k) {
    std::unordered_map<std::uint64_t, double> next;
    next.reserve(level.size() * 2);
    for (const auto& [code, p] : level) {
      const int t = static_cast<int>(code % d);
      const std::uint64_t counts = code / d;
      for (int u = 0; u < d; ++u) next[(counts + power[u]) * d + u] += p * chain.transition(t, u);
    }
    level.assign(next.begin(), next.end());
    std::sort(level.begin(), level.end());
  }
  const Partition mine(static_cast<std::int64_t>(level.size()), ranks);
  const std::int64_t begin = mine.begin(rank), count = mine.count(rank);
  SequenceItems items = empty_items(d, s, mine.n_global, count);
  for (std::int64_t j = 0; j < count; ++j) {
    const auto& [code, p] = level[begin + j];
    const int t = static_cast<int>(code % d);
    std::uint64_t counts = code / d;
    for (int i = 0; i < d; ++i, counts /= static_cast<std::uint64_t>(s + 1))
      items.counts[j * d + i] = static_cast<double>(counts % static_cast<std::uint64_t>(s + 1));
    items.last[j] = t;
    items.weight[j] = p;
    for (int y = 0; y < d; ++y) items.target[j * d + y] = chain.transition(t, y);
  }
  return items;
}

std::vector<int> sample_sequence(const MarkovChain& chain, std::int64_t s, std::uint64_t seed, std::int64_t i) {
  const RandomStream stream(seed, Purpose::markov_sequences);
  const int d = chain.d;
  std::vector<int> x(s + 1);
  auto uniform = [&](std::int64_t k) {
    return stream.uniform4(0, static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(k / 4))[k % 4];
  };
  x[0] = inverse_cdf(uniform(0), d, [&](int t) { return chain.start(t); });
  for (std::int64_t k = 1; k <= s; ++k)
    x[k] = inverse_cdf(uniform(k), d, [&](int t) { return chain.transition(x[k - 1], t); });
  return x;
}

SequenceItems sample_items(const MarkovChain& chain, std::int64_t s, std::int64_t n, std::uint64_t seed,
                           const Partition& partition, int rank) {
  const int d = chain.d;
  const std::int64_t begin = partition.begin(rank), count = partition.count(rank);
  SequenceItems items = empty_items(d, s, n, count);
  for (std::int64_t j = 0; j < count; ++j) {
    const std::vector<int> x = sample_sequence(chain, s, seed, begin + j);
    for (std::int64_t k = 0; k < s; ++k) items.counts[j * d + x[k]] += 1;
    items.last[j] = x[s - 1];
    items.weight[j] = 1.0 / static_cast<double>(n);
    items.target[j * d + x[s]] = 1;
  }
  return items;
}

namespace {

// The symbols of a text, read by rank 0 in 1 MiB pieces: each symbol (a UTF-8 sequence or a byte) packed
// big-endian into 32 bits, so that numeric order is byte order (code point order), then replaced in place
// by its rank among the distinct ones. 4 bytes per symbol and one piece: a text is never held as strings.
std::string read_symbols(const std::string& path, bool bytes, const std::string& key, std::vector<int>& codes,
                         std::vector<std::string>& vocabulary) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
  if (fd < 0) return key + " '" + path + "' cannot be opened: " + std::strerror(errno);
  const std::string tokenizer = key.substr(0, key.find('.')) + ".tokenizer";
  std::vector<unsigned char> buf(1 << 20);
  unsigned char carry[4];
  std::size_t carried = 0;  // bytes of a UTF-8 sequence cut by the end of a piece
  std::uint64_t offset = 0;  // of buf[0] in the file
  std::string problem;
  for (;;) {
    const ssize_t got = ::read(fd, buf.data(), buf.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      problem = key + " '" + path + "' cannot be read: " + std::strerror(errno);
      break;
    }
    const std::size_t n = static_cast<std::size_t>(got);
    std::size_t k = 0;
    // A sequence cut by the last piece: complete it from this one.
    while (carried > 0 && carried < sizeof carry && k < n) {  // carried < len <= 4: for the compiler
      carry[carried++] = buf[k++];
      const unsigned char c = carry[0];
      const std::size_t len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
      if ((carry[carried - 1] >> 6) != 0x2) {
        problem = "text file '" + path + "': invalid UTF-8 at byte " + std::to_string(offset - (carried - k)) +
                  " (use " + tokenizer + " = bytes)";
        break;
      }
      if (carried == len) {
        std::uint32_t code = 0;
        for (std::size_t b = 0; b < 4; ++b) code = code << 8 | (b < len ? carry[b] : 0u);
        codes.push_back(static_cast<int>(code));
        carried = 0;
      }
    }
    if (!problem.empty()) break;
    if (n == 0) {
      if (carried > 0)
        problem = "text file '" + path + "': invalid UTF-8 at byte " + std::to_string(offset - carried) +
                  " (the file ends inside a character; use " + tokenizer + " = bytes)";
      break;
    }
    for (; k < n;) {
      const unsigned char c = buf[k];
      std::size_t len = 1;
      if (!bytes) {
        len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        bool ok = len > 0;
        for (std::size_t b = 1; ok && b < len && k + b < n; ++b) ok = (buf[k + b] >> 6) == 0x2;
        if (!ok) {
          problem = "text file '" + path + "': invalid UTF-8 at byte " + std::to_string(offset + k) + " (use " +
                    tokenizer + " = bytes)";
          break;
        }
        if (k + len > n) {  // cut by the end of the piece
          for (carried = 0; k < n; ++k) carry[carried++] = buf[k];
          break;
        }
      }
      std::uint32_t code = 0;
      for (std::size_t b = 0; b < 4; ++b) code = code << 8 | (b < len ? buf[k + b] : 0u);
      codes.push_back(static_cast<int>(code));
      k += len;
    }
    if (!problem.empty()) break;
    offset += n;
  }
  ::close(fd);
  if (!problem.empty()) return problem;
  // The distinct codes in order, then each code replaced by its index.
  std::unordered_map<std::uint32_t, int> ids;
  for (int c : codes) ids.emplace(static_cast<std::uint32_t>(c), 0);
  if (ids.size() < 2) return "text file '" + path + "' has fewer than 2 distinct symbols";
  std::vector<std::uint32_t> distinct;
  distinct.reserve(ids.size());
  for (const auto& [code, id] : ids) distinct.push_back(code);
  std::sort(distinct.begin(), distinct.end());
  for (std::size_t i = 0; i < distinct.size(); ++i) {
    ids[distinct[i]] = static_cast<int>(i);
    std::string symbol;
    for (int b = 3; b >= 0; --b)
      if (const char ch = static_cast<char>(distinct[i] >> (8 * b)); ch != 0 || b == 3) symbol += ch;
    vocabulary.push_back(symbol);
  }
  for (int& c : codes) c = ids[static_cast<std::uint32_t>(c)];
  return "";
}

}  // namespace

double text_memory(double file_bytes) { return 4.0 * file_bytes + (1 << 20); }

TokenizedText tokenize_text(const Comm& comm, const std::string& path, bool bytes, const std::string& key,
                            double memory_limit) {
  TokenizedText text;
  std::string problem;
  if (comm.root()) {
    try {
      const double size = static_cast<double>(regular_file_size(key, path));
      if (memory_limit > 0 && text_memory(size) > memory_limit)
        problem = key + " '" + path + "' (" + format_bytes(size) + ") needs about " + format_bytes(text_memory(size)) +
                  " per rank as tokens, more than the " + format_bytes(memory_limit) +
                  " a rank may use (run.max_memory, or what the node has)";
      else
        problem = read_symbols(path, bytes, key, text.tokens, text.vocabulary);
    } catch (const InputError& e) {
      problem = e.what();
    }
    if (!problem.empty()) text = TokenizedText();
  }
  require_all(comm.get(), problem.empty(), problem);
  // The vocabulary as one text (a symbol may be any byte but NUL: each one's length first), then the tokens.
  std::string words;
  if (comm.root())
    for (const std::string& v : text.vocabulary) words += std::to_string(v.size()) + ":" + v;
  comm.broadcast(words);
  if (!comm.root())
    for (std::size_t k = 0; k < words.size();) {
      const std::size_t colon = words.find(':', k), len = std::stoul(words.substr(k, colon - k));
      text.vocabulary.push_back(words.substr(colon + 1, len));
      k = colon + 1 + len;
    }
  unsigned long long n = text.tokens.size();
  TOKDYN_MPI_CHECK(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm.get()));
  text.tokens.resize(n);
  for (unsigned long long done = 0; done < n;) {
    const int piece = static_cast<int>(std::min<unsigned long long>(n - done, 1ull << 28));
    TOKDYN_MPI_CHECK(MPI_Bcast(text.tokens.data() + done, piece, MPI_INT, 0, comm.get()));
    done += piece;
  }
  return text;
}

void to_words(TokenizedText& text, std::int64_t vocabulary_max, const std::string& key) {
  enum Kind { word, space, mark };
  std::vector<Kind> kind(text.vocabulary.size());
  for (std::size_t i = 0; i < kind.size(); ++i) {
    const std::string& v = text.vocabulary[i];
    const unsigned char c = v.empty() ? ' ' : static_cast<unsigned char>(v[0]);
    kind[i] = v.size() > 1 || std::isalnum(c) ? word : std::isspace(c) ? space : mark;
  }
  std::unordered_map<std::string, int> id;  // word -> provisional id (order of appearance)
  std::vector<std::string> words;
  std::vector<std::int64_t> count;
  std::vector<int> tokens;
  std::string current;
  auto emit = [&](const std::string& w) {
    auto [at, fresh] = id.try_emplace(w, static_cast<int>(words.size()));
    if (fresh) words.push_back(w), count.push_back(0);
    count[at->second] += 1;
    tokens.push_back(at->second);
  };
  for (int t : text.tokens) {
    if (kind[t] == word) {
      current += text.vocabulary[t];
      continue;
    }
    if (!current.empty()) emit(current), current.clear();
    if (kind[t] == mark) emit(text.vocabulary[t]);
  }
  if (!current.empty()) emit(current);
  // Falling count, ties in byte order: the same vocabulary on every rank and in every run of the file.
  std::vector<int> order(words.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return count[a] != count[b] ? count[a] > count[b] : words[a] < words[b];
  });
  const std::size_t keep = vocabulary_max > 0 && static_cast<std::size_t>(vocabulary_max) < order.size()
                               ? static_cast<std::size_t>(vocabulary_max) - 1
                               : order.size();
  std::vector<int> final_id(words.size(), static_cast<int>(keep));  // the rest: <unk>
  text.vocabulary.clear();
  for (std::size_t r = 0; r < keep; ++r) final_id[order[r]] = static_cast<int>(r), text.vocabulary.push_back(words[order[r]]);
  if (keep < order.size()) text.vocabulary.push_back("<unk>");
  for (int& t : tokens) t = final_id[t];
  text.tokens = std::move(tokens);
  if (text.vocabulary.size() < 2)
    throw InputError(key + ": the text has " + std::to_string(text.vocabulary.size()) +
                     " distinct word(s) (" + key.substr(0, key.find('.')) + ".tokenizer = words needs at least 2)");
}

std::int64_t text_windows(const TokenizedText& text, std::int64_t s, std::int64_t stride) {
  const std::int64_t n = static_cast<std::int64_t>(text.tokens.size());
  return n < s + 1 ? 0 : (n - s - 1) / stride + 1;
}

SequenceItems text_items(const TokenizedText& text, std::int64_t s, std::int64_t stride, const Partition& partition,
                         int rank) {
  const int d = static_cast<int>(text.vocabulary.size());
  const std::int64_t begin = partition.begin(rank), count = partition.count(rank);
  SequenceItems items = empty_items(d, s, partition.n_global, count);
  for (std::int64_t j = 0; j < count; ++j) {
    const std::int64_t o = (begin + j) * stride;
    for (std::int64_t k = 0; k < s; ++k) items.counts[j * d + text.tokens[o + k]] += 1;
    items.last[j] = text.tokens[o + s - 1];
    items.weight[j] = 1.0 / static_cast<double>(partition.n_global);
    items.target[j * d + text.tokens[o + s]] = 1;
  }
  return items;
}

}  // namespace tokdyn
