#include "tokdyn/train/key_alignment.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/random.hpp"

namespace tokdyn {

namespace {

// mean_t cos(k_t, r) over the keys k [V, D] (rows of zero length count as cos 0; NaN rows, tokens the
// layer was not shown, are left out and get cos NaN).
double mean_cos(const std::vector<double>& k, const std::vector<double>& norms, const double* r, int V, int D,
                std::vector<double>* out) {
  double rn = 0;
  for (int e = 0; e < D; ++e) rn += r[e] * r[e];
  rn = std::sqrt(rn);
  double sum = 0;
  int seen = 0;
  for (int t = 0; t < V; ++t) {
    if (std::isnan(norms[t])) {
      if (out) (*out)[t] = NAN;
      continue;
    }
    double dot = 0;
    for (int e = 0; e < D; ++e) dot += k[static_cast<std::size_t>(t) * D + e] * r[e];
    const double c = norms[t] > 0 ? dot / (norms[t] * rn) : 0.0;
    if (out) (*out)[t] = c;
    sum += c;
    seen += 1;
  }
  return seen > 0 ? sum / seen : NAN;
}

}  // namespace

template <class T>
std::vector<HeadAlignment> key_bias_alignment(const GptConfig& c, const T* theta, const std::vector<double>& inputs,
                                              const std::vector<double>& direction, int null_directions,
                                              std::uint64_t seed, int top) {
  const GptLayout layout(c);
  const int V = c.vocab, C = c.channels, H = c.heads, D = c.head_dim();
  if (static_cast<int>(direction.size()) != D) throw InputError("key_bias_alignment: the direction must have d_h entries");
  const std::size_t per_layer = static_cast<std::size_t>(V) * C;
  if (!inputs.empty() && inputs.size() != per_layer * c.layers)
    throw InputError("key_bias_alignment: the inputs must be [layers, V, C]");
  // The null's directions [R, D], Gaussian (uniform on the sphere after normalisation).
  std::vector<double> nulls(static_cast<std::size_t>(null_directions) * D);
  for (int r = 0; r < null_directions; ++r)
    RandomStream(seed, Purpose::alignment_null).normals(static_cast<std::uint64_t>(r), 0, &nulls[static_cast<std::size_t>(r) * D], D);
  std::vector<HeadAlignment> out;
  std::vector<double> k(static_cast<std::size_t>(V) * D), norms(V);
  for (int l = 0; l < c.layers; ++l)
    for (int h = 0; h < H; ++h) {
      // k [V, D]: k_t = W_K e_t, W_K the head's D rows of the key block of c_attn, e_t the layer's input or
      // the raw embedding.
      const T* wk = theta + layout.layer[l].qkvw + static_cast<std::size_t>(C + h * D) * C;
      for (int t = 0; t < V; ++t) {
        const std::size_t row = static_cast<std::size_t>(t) * C;
        const double* seen = inputs.empty() ? nullptr : &inputs[l * per_layer + row];
        const T* raw = theta + layout.wte + row;
        if (seen && std::isnan(seen[0])) {
          norms[t] = NAN;
          continue;
        }
        double n2 = 0;
        for (int d = 0; d < D; ++d) {
          double s = 0;
          for (int i = 0; i < C; ++i)
            s += static_cast<double>(wk[static_cast<std::size_t>(d) * C + i]) * (seen ? seen[i] : static_cast<double>(raw[i]));
          k[static_cast<std::size_t>(t) * D + d] = s;
          n2 += s * s;
        }
        norms[t] = std::sqrt(n2);
      }
      HeadAlignment a;
      a.cos.assign(V, 0.0);
      a.mean_cos = mean_cos(k, norms, direction.data(), V, D, &a.cos);
      double s1 = 0, s2 = 0;
      int reach = 0;
      for (int r = 0; r < null_directions; ++r) {
        const double m = mean_cos(k, norms, &nulls[static_cast<std::size_t>(r) * D], V, D, nullptr);
        s1 += m, s2 += m * m;
        reach += std::abs(m) >= std::abs(a.mean_cos);
      }
      const double R = null_directions;
      a.null_mean = s1 / R;
      a.null_std = R > 1 ? std::sqrt(std::max(0.0, (s2 - s1 * s1 / R) / (R - 1))) : 0.0;
      a.p_value = (reach + 1.0) / (R + 1.0);  // counting the observed direction itself: never exactly 0
      std::vector<int> order(V);
      std::iota(order.begin(), order.end(), 0);
      order.erase(std::remove_if(order.begin(), order.end(), [&a](int t) { return std::isnan(a.cos[t]); }), order.end());
      std::stable_sort(order.begin(), order.end(),
                       [&a](int x, int y) { return std::abs(a.cos[x]) > std::abs(a.cos[y]); });
      order.resize(std::min<std::size_t>(static_cast<std::size_t>(top), order.size()));
      a.top = order;
      out.push_back(std::move(a));
    }
  return out;
}

template std::vector<HeadAlignment> key_bias_alignment<float>(const GptConfig&, const float*, const std::vector<double>&,
                                                              const std::vector<double>&, int, std::uint64_t, int);
template std::vector<HeadAlignment> key_bias_alignment<double>(const GptConfig&, const double*, const std::vector<double>&,
                                                               const std::vector<double>&, int, std::uint64_t, int);

}  // namespace tokdyn
