// to_words (markov/sequences): a text tokenised by characters becomes words, punctuation marks and <unk>,
// against the split written out by hand.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/markov/sequences.hpp"

namespace tokdyn {
namespace {

// The character tokenisation of `s` (ASCII, plus the two-byte "é"), vocabulary in byte order as
// tokenize_text gives it.
TokenizedText characters(const std::string& s) {
  std::vector<std::string> symbols;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = static_cast<unsigned char>(s[i]) < 0x80 ? 1 : 2;
    symbols.push_back(s.substr(i, len));
    i += len;
  }
  std::map<std::string, int> id;
  for (const std::string& v : symbols) id[v] = 0;
  TokenizedText t;
  for (auto& [v, k] : id) k = static_cast<int>(t.vocabulary.size()), t.vocabulary.push_back(v);
  for (const std::string& v : symbols) t.tokens.push_back(id[v]);
  return t;
}

std::vector<std::string> spelt(const TokenizedText& t) {
  std::vector<std::string> out;
  for (int k : t.tokens) out.push_back(t.vocabulary[k]);
  return out;
}

TEST(Words, SplitAndOrder) {
  TokenizedText t = characters("the cat, the caf\xc3\xa9!\n\tThe cat  sat.");
  to_words(t, 0, "markov.text_file");
  EXPECT_EQ(spelt(t), (std::vector<std::string>{"the", "cat", ",", "the", "caf\xc3\xa9", "!", "The", "cat", "sat", "."}));
  // Falling count (cat 2, the 2), ties in byte order (',' < 'cat' < 'the'; '!' < '.' < 'The' < 'caf\xc3\xa9' < 'sat').
  EXPECT_EQ(t.vocabulary, (std::vector<std::string>{"cat", "the", "!", ",", ".", "The", "caf\xc3\xa9", "sat"}));
}

TEST(Words, UnknownBeyondTheVocabulary) {
  TokenizedText t = characters("a a a b b c d");
  to_words(t, 3, "markov.text_file");  // a, b kept; c and d are <unk>
  EXPECT_EQ(t.vocabulary, (std::vector<std::string>{"a", "b", "<unk>"}));
  EXPECT_EQ(spelt(t), (std::vector<std::string>{"a", "a", "a", "b", "b", "<unk>", "<unk>"}));
  TokenizedText all = characters("a a a b b c d");
  to_words(all, 4, "markov.text_file");  // all four fit: no <unk>
  EXPECT_EQ(all.vocabulary, (std::vector<std::string>{"a", "b", "c", "d"}));
  TokenizedText fits = characters("a b");
  to_words(fits, 2, "markov.text_file");  // two words, vocabulary_max 2: no <unk> needed
  EXPECT_EQ(fits.vocabulary, (std::vector<std::string>{"a", "b"}));
}

TEST(Words, TooFewWords) {
  TokenizedText t = characters("word word   word");
  EXPECT_THROW(to_words(t, 0, "train.text_file"), InputError);
}

}  // namespace
}  // namespace tokdyn
