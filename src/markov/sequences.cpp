#include "tokdyn/markov/sequences.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

#include "tokdyn/core/error.hpp"
#include "tokdyn/core/random.hpp"

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

std::vector<double> stage_four_pi(int d, double pi1, const std::vector<double>& c, double delta) {
  if (static_cast<int>(c.size()) != d - 1)
    throw InputError("markov.c needs d - 1 = " + std::to_string(d - 1) + " values, got " + std::to_string(c.size()));
  double sum = 0;
  for (double v : c) sum += v;
  if (std::abs(sum) > 1e-12) throw InputError("markov.c must sum to 0 (the family keeps sum pi = 1), sums to " + std::to_string(sum));
  std::vector<double> pi(d);
  pi[0] = pi1;
  for (int i = 1; i < d; ++i) pi[i] = (1 - pi1) / (d - 1) + c[i - 1] * delta;
  return pi;
}

void check_chain(const MarkovChain& chain) {
  if (chain.d < 2) throw InputError("markov: the vocabulary needs d >= 2 tokens");
  if (static_cast<int>(chain.pi.size()) != chain.d)
    throw InputError("markov.pi has " + std::to_string(chain.pi.size()) + " entries, d = " + std::to_string(chain.d));
  double sum = 0;
  for (int i = 0; i < chain.d; ++i) {
    if (!(chain.pi[i] > 0)) throw InputError("markov.pi: entry " + std::to_string(i) + " is not positive");
    sum += chain.pi[i];
  }
  if (std::abs(sum - 1) > 1e-12) throw InputError("markov.pi must sum to 1, sums to " + std::to_string(sum));
  if (!(chain.lam >= 0 && chain.lam < 1)) throw InputError("markov.lambda must lie in [0, 1)");
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

TokenizedText tokenize_text(const std::string& path, bool bytes, const std::string& key) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(key + " '" + path + "' cannot be opened");
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> symbols;  // per position
  for (std::size_t k = 0; k < data.size();) {
    const auto c = static_cast<unsigned char>(data[k]);
    std::size_t len = 1;
    if (!bytes) {
      len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
      bool ok = len > 0 && k + len <= data.size();
      for (std::size_t b = 1; ok && b < len; ++b) ok = (static_cast<unsigned char>(data[k + b]) >> 6) == 0x2;
      if (!ok)
        throw InputError("text file '" + path + "': invalid UTF-8 at byte " + std::to_string(k) +
                         " (use markov.tokenizer = bytes)");
    }
    symbols.push_back(data.substr(k, len));
    k += len;
  }
  TokenizedText text;
  std::map<std::string, int> ids;  // byte order of UTF-8 is code point order
  for (const std::string& sym : symbols) ids.emplace(sym, 0);
  if (ids.size() < 2) throw InputError("text file '" + path + "' has fewer than 2 distinct symbols");
  for (auto& [sym, id] : ids) {
    id = static_cast<int>(text.vocabulary.size());
    text.vocabulary.push_back(sym);
  }
  text.tokens.reserve(symbols.size());
  for (const std::string& sym : symbols) text.tokens.push_back(ids[sym]);
  return text;
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
