#include "tokdyn/core/errors/suggest.hpp"

#include <algorithm>
#include <utility>

namespace tokdyn {
namespace {

// Optimal string alignment distance: Levenshtein plus the swap of two neighbours (a common typo).
std::size_t edit_distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::size_t> d((n + 1) * (m + 1));  // d[i (m + 1) + j]: a[0, i) against b[0, j)
  auto at = [&](std::size_t i, std::size_t j) -> std::size_t& { return d[i * (m + 1) + j]; };
  for (std::size_t i = 0; i <= n; ++i) at(i, 0) = i;
  for (std::size_t j = 0; j <= m; ++j) at(0, j) = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
    }
  return at(n, m);
}

std::string last_component(const std::string& key) {
  const auto dot = key.rfind('.');
  return dot == std::string::npos ? "" : key.substr(dot + 1);
}

}  // namespace

std::vector<std::string> closest_names(const std::string& word, const std::vector<std::string>& candidates) {
  const std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
  std::vector<std::pair<std::size_t, std::string>> near;
  for (const std::string& c : candidates) {
    const std::size_t dist = edit_distance(word, c);
    if (dist <= limit && c != word) near.emplace_back(dist, c);
  }
  if (near.empty() && !last_component(word).empty())
    for (const std::string& c : candidates)
      if (last_component(c) == last_component(word)) near.emplace_back(0, c);
  std::stable_sort(near.begin(), near.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [dist, name] : near)
    if (out.size() < 3 && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  return out;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::vector<std::string> near = closest_names(word, candidates);
  if (near.empty()) return "";
  std::string s = " (did you mean ";
  for (std::size_t i = 0; i < near.size(); ++i)
    s += (i == 0 ? "" : (i + 1 == near.size() ? " or " : ", ")) + ("'" + near[i] + "'");
  return s + "?)";
}

}  // namespace tokdyn
