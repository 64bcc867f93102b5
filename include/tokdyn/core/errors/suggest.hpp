// "Did you mean": the known names closest to a mistyped one (a deck key, a command, a choice), for the
// one-line error a user reads.
#pragma once

#include <string>
#include <vector>

namespace tokdyn {

// The candidates close to word: within an edit distance (insert, delete, substitute, swap two neighbours)
// of max(1, |word| / 3), the closest first; failing that, for a dotted key, those with the same last
// component (model.width -> mlp.width). At most three; empty when none is close.
std::vector<std::string> closest_names(const std::string& word, const std::vector<std::string>& candidates);
// " (did you mean 'a'?)", " (did you mean 'a' or 'b'?)", or "" when no candidate is close.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace tokdyn
