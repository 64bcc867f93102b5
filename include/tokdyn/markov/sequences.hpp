// The data of `tokdyn markov` (doc/science.md section 8): Markov chains P = lam I + (1 - lam) 1 pi^T on
// the vocabulary [d] (repeat the token with probability lam, else draw from pi; pi is stationary),
// sequences x_1..x_s with the target y = x_{s+1}, and windows of a text.
// The one-layer model sees a sequence only through its last token and its token counts (an attention
// score depends on a position only through the token there), so every data set is a list of items
// (last token, counts [d], weight, target law [d]): the exact population law, a sample of N sequences,
// or the windows of a text. Items are block-partitioned over the ranks by a fixed global order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokdyn/core/mpi/comm.hpp"
#include "tokdyn/core/mpi/partition.hpp"

namespace tokdyn {

struct MarkovChain {
  int d = 4;
  double lam = 0.5;        // probability of repeating the last token
  std::vector<double> pi;  // [d] the stationary law: positive, sums to 1
  bool start_uniform = false;  // x_1 uniform on [d]; else x_1 ~ pi
  double transition(int from, int to) const { return (1 - lam) * pi[to] + (from == to ? lam : 0.0); }
  double start(int token) const { return start_uniform ? 1.0 / d : pi[token]; }
};

// The stage-IV family pi = (pi_1, (1 - pi_1)/(d - 1) + c_i delta), i = 2..d, with sum c_i = 0
// (c: d - 1 entries). InputError when an entry is not positive or the c_i do not sum to 0.
std::vector<double> stage_four_pi(int d, double pi1, const std::vector<double>& c, double delta);
// InputError unless pi has d positive entries summing to 1 (to 1e-12) and lam lies in [0, 1).
// InputError naming the deck keys of pi and lambda (markov.pi or train.markov_pi, ...).
void check_chain(const MarkovChain& chain, const std::string& pi_key, const std::string& lambda_key);

// This rank's items: weights sum to 1 over all ranks.
struct SequenceItems {
  int d = 0;
  std::int64_t s = 0;            // positions attended (the sequence length)
  std::int64_t n_global = 0;     // items over all ranks
  std::vector<int> last;         // [n] the last token x_s
  std::vector<double> counts;    // [n, d] occurrences of each token among x_1..x_s
  std::vector<double> weight;    // [n]
  std::vector<double> target;    // [n, d] law of y given the item (one-hot for a sample)
  std::int64_t size() const { return static_cast<std::int64_t>(last.size()); }
};

// The exact law of (x_s, counts, y) for sequences of length s, by a dynamic program over (last token,
// counts): O(s d S) work for S = d C(s + d - 1, d - 1) states, never the d^s sequences. Every rank runs
// it and keeps its block of the items. InputError naming the sizes when S exceeds max_states.
SequenceItems population_items(const MarkovChain& chain, std::int64_t s, int ranks, int rank, std::int64_t max_states);
// Number of (last token, counts) states of length-s sequences over d tokens: d C(s + d - 1, d - 1)
// (saturates at INT64_MAX).
std::int64_t population_states(int d, std::int64_t s);

// n sequences drawn from the chain, sequence i from the stream (seed, markov_sequences, i) alone; equal
// weights 1/n, one-hot targets. This rank's block of the partition of n.
SequenceItems sample_items(const MarkovChain& chain, std::int64_t s, std::int64_t n, std::uint64_t seed,
                           const Partition& partition, int rank);
// Draws sequence i (x_1..x_{s+1}: s + 1 tokens) of the stream: what sample_items counts.
std::vector<int> sample_sequence(const MarkovChain& chain, std::int64_t s, std::uint64_t seed, std::int64_t i);

// A text tokenised by characters (UTF-8 code points) or bytes: the vocabulary (sorted distinct
// symbols, as UTF-8 strings) and the token ids.
struct TokenizedText {
  std::vector<std::string> vocabulary;
  std::vector<int> tokens;
};
// Collective: rank 0 reads the file (key names it in errors: "train.text_file") in pieces and every rank
// gets the result. InputError on every rank for a file that is not a regular one, one whose tokens would
// need more than memory_limit bytes per rank (0: no limit; text_memory), invalid UTF-8 (characters), or
// fewer than 2 symbols.
TokenizedText tokenize_text(const Comm& comm, const std::string& path, bool bytes, const std::string& key,
                            double memory_limit = 0);
// Words from a text tokenised by characters, in place on every rank: maximal runs of letters and digits (the
// ASCII ones and every non-ASCII character) are words, whitespace separates them, every other character
// (punctuation) is a token of its own. The vocabulary is ordered by falling count (ties in byte order); with
// vocabulary_max > 0 it keeps the vocabulary_max - 1 most frequent and maps the rest to "<unk>" (last; no
// word can be spelt so, '<' being punctuation). InputError for fewer than 2 distinct tokens.
void to_words(TokenizedText& text, std::int64_t vocabulary_max, const std::string& key);
// Bytes per rank the tokens of a text file of this size may need (4 per symbol, at most one per byte).
double text_memory(double file_bytes);
// Windows x_o..x_{o+s-1} -> y = x_{o+s} for o = 0, stride, 2 stride, ...: equal weights, one-hot targets.
SequenceItems text_items(const TokenizedText& text, std::int64_t s, std::int64_t stride, const Partition& partition,
                         int rank);
// Number of windows of text_items.
std::int64_t text_windows(const TokenizedText& text, std::int64_t s, std::int64_t stride);

}  // namespace tokdyn
