#include "tokdyn/train/gpt.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/fast_exp.hpp"
#include "tokdyn/core/numerics/vector_clones.hpp"
#include "tokdyn/core/numerics/blas.hpp"
#include "tokdyn/core/numerics/dot.hpp"

namespace tokdyn {

GptLayout::GptLayout(const GptConfig& c) {
  if (c.vocab < 2 || c.context < 1 || c.layers < 1 || c.heads < 1 || c.channels < 1 || c.channels % c.heads != 0)
    throw InputError("gpt: vocab >= 2, context, layers, heads >= 1 and channels a multiple of heads");
  const std::size_t V = c.vocab, P = c.context, C = c.channels, F = c.hidden();
  std::size_t at = 0;
  auto take = [&at](std::size_t n) {
    const std::size_t here = at;
    at += n;
    return here;
  };
  wte = take(V * C);
  wpe = take(P * C);
  for (int l = 0; l < c.layers; ++l) {
    Layer y{};
    y.ln1w = take(C), y.ln1b = take(C);
    y.qkvw = take(3 * C * C), y.qkvb = take(3 * C);
    y.projw = take(C * C), y.projb = take(C);
    y.ln2w = take(C), y.ln2b = take(C);
    y.fcw = take(F * C), y.fcb = take(F);
    y.slope = take(c.prelu ? F : 0);
    y.fcprojw = take(C * F), y.fcprojb = take(C);
    layer.push_back(y);
  }
  lnfw = take(C), lnfb = take(C);
  size = at;
}

std::vector<ParameterBlock> GptLayout::blocks() const {
  std::vector<ParameterBlock> out;
  auto add = [&out](const std::string& name, std::size_t begin, std::size_t end) {
    if (end > begin) out.push_back({name, begin, end - begin});
  };
  add("wte", wte, wpe);
  add("wpe", wpe, layer.empty() ? lnfw : layer[0].ln1w);
  for (std::size_t l = 0; l < layer.size(); ++l) {
    const Layer& y = layer[l];
    const std::string p = "h" + std::to_string(l) + ".";
    const std::size_t end = l + 1 < layer.size() ? layer[l + 1].ln1w : lnfw;
    add(p + "ln_1.weight", y.ln1w, y.ln1b), add(p + "ln_1.bias", y.ln1b, y.qkvw);
    add(p + "attn.c_attn.weight", y.qkvw, y.qkvb), add(p + "attn.c_attn.bias", y.qkvb, y.projw);
    add(p + "attn.c_proj.weight", y.projw, y.projb), add(p + "attn.c_proj.bias", y.projb, y.ln2w);
    add(p + "ln_2.weight", y.ln2w, y.ln2b), add(p + "ln_2.bias", y.ln2b, y.fcw);
    add(p + "mlp.c_fc.weight", y.fcw, y.fcb), add(p + "mlp.c_fc.bias", y.fcb, y.slope);
    add(p + "mlp.prelu.slope", y.slope, y.fcprojw);
    add(p + "mlp.c_proj.weight", y.fcprojw, y.fcprojb), add(p + "mlp.c_proj.bias", y.fcprojb, end);
  }
  add("ln_f.weight", lnfw, lnfb), add("ln_f.bias", lnfb, size);
  return out;
}

namespace {

constexpr double kLnEps = 1e-5;

// out [n, C] = LN(x [n, C]) w + b, keeping mean and 1/std per row (in double: the statistics of a float row
// are then exact to double round-off, and the backward reuses them).
template <class T>
TOKDYN_VECTOR_CLONES void layernorm(const T* x, const T* w, const T* b, int n, int C, T* out, double* mean, double* rstd) {
  for (int t = 0; t < n; ++t) {
    const T* xt = x + static_cast<std::size_t>(t) * C;
    const double m = lane_sum(C, [xt](std::size_t i) { return static_cast<double>(xt[i]); }) / C;
    const double v = lane_sum(C, [xt, m](std::size_t i) { return (xt[i] - m) * (xt[i] - m); });
    const double r = 1 / std::sqrt(v / C + kLnEps);
    for (int i = 0; i < C; ++i) out[static_cast<std::size_t>(t) * C + i] = static_cast<T>((xt[i] - m) * r * w[i] + b[i]);
    mean[t] = m, rstd[t] = r;
  }
}

// dx [n, C] += the LayerNorm backward of dout [n, C]; dw, db [C] += scale x their sums over the rows (in
// double, added into the T gradient once).
template <class T>
TOKDYN_VECTOR_CLONES void layernorm_backward(const T* dout, const T* x, const double* mean, const double* rstd,
                                             const T* w, int n, int C, T* dx, T* dw, T* db, double scale,
                                             std::vector<double>& sums) {
  sums.assign(2 * static_cast<std::size_t>(C), 0.0);  // [2, C]: dw, db
  for (int t = 0; t < n; ++t) {
    const T* xt = x + static_cast<std::size_t>(t) * C;
    const T* dt = dout + static_cast<std::size_t>(t) * C;
    const double mt = mean[t], rt = rstd[t];
    // the means over i of dnorm_i and dnorm_i norm_i
    const double mean_d = lane_sum(C, [dt, w](std::size_t i) { return static_cast<double>(dt[i]) * w[i]; }) / C;
    const double mean_dn =
        lane_sum(C, [dt, w, xt, mt, rt](std::size_t i) { return static_cast<double>(dt[i]) * w[i] * ((xt[i] - mt) * rt); }) / C;
    for (int i = 0; i < C; ++i) {
      const double norm = (xt[i] - mt) * rt, dnorm = static_cast<double>(dt[i]) * w[i];
      sums[i] += dt[i] * norm, sums[C + i] += dt[i];
      T& d = dx[static_cast<std::size_t>(t) * C + i];
      d = static_cast<T>(d + rt * (dnorm - mean_d - norm * mean_dn));
    }
  }
  for (int i = 0; i < C; ++i) {
    dw[i] = static_cast<T>(dw[i] + scale * sums[i]);
    db[i] = static_cast<T>(db[i] + scale * sums[C + i]);
  }
}

// Attention works on blocks of kLanes positions (or channels) whose partial sums stay in registers while the
// other index runs; every entry still adds its terms in the order of the plain loop, so the blocking changes no
// bit. The helpers are inlined into each vector clone of their callers (else they run at the default width).
constexpr int kLanes = 32, kChannelLanes = 16;  // positions; channels (a head has 16 or more in every deck)

// out [D, np] = the columns first .. first + D - 1 of m [n, width]: one head's keys or values, transposed so that
// a loop over the positions j reads them contiguously; np = n rounded up to kLanes, the padding zero (the blocked
// loops read whole blocks). A row of np entries follows, for the scores of one position.
template <class T>
int head_transpose(const T* m, int n, int width, int first, int D, std::vector<T>& out) {
  const int np = (n + kLanes - 1) / kLanes * kLanes;
  out.resize(static_cast<std::size_t>(D + 1) * np);  // and one row of np scores after the D rows
  for (int j = 0; j < n; ++j)
    for (int e = 0; e < D; ++e) out[static_cast<std::size_t>(e) * np + j] = m[static_cast<std::size_t>(j) * width + first + e];
  for (int e = 0; e < D; ++e) std::fill(&out[static_cast<std::size_t>(e) * np + n], &out[static_cast<std::size_t>(e + 1) * np], T(0));
  return np;
}

// 32 bytes of T as a GCC vector type (declared per type: the attribute is ignored on a dependent type): AVX2's
// register, and AVX-512VL's. Vectors of 64 bytes were spilled through the stack on AVX2 (attention was 47 % of a
// float step at C = 128 there, against 12 % on AVX-512).
template <class T>
struct Vector32;
template <>
struct Vector32<float> {
  typedef float type __attribute__((vector_size(32)));
};
template <>
struct Vector32<double> {
  typedef double type __attribute__((vector_size(32)));
};

// out [count] = sum_e a[e] m[e np + j] over e = 0, 1, ..., D - 1 in order (m [D, np], count <= np). Whole blocks
// are stored: out has room for count rounded up to kLanes (so that the sums stay in registers).
template <class T>
[[gnu::always_inline]] inline void combine_rows(const T* a, const T* m, int D, int np, int count, T* out) {
  // GCC vector types: the sums stay in registers (plain arrays were spilled to the stack inside the heads' loops).
  using V = typename Vector32<T>::type;
  constexpr int W = 32 / sizeof(T), B = kLanes / W;  // lanes of a vector, vectors of a block
  for (int j0 = 0; j0 < count; j0 += kLanes) {
    V acc[B] = {};
    for (int e = 0; e < D; ++e) {
      const V ae = V{} + a[e];
      const T* me = m + static_cast<std::size_t>(e) * np + j0;
      for (int b = 0; b < B; ++b) {
        V mb;
        std::memcpy(&mb, me + b * W, sizeof mb);
        acc[b] += ae * mb;
      }
    }
    std::memcpy(out + j0, acc, sizeof acc);
  }
}

// out [D] += sum_j w[j ws] m[j ld + e] over j = 0, 1, ..., count - 1 in order (m: count rows of stride ld; the
// weights of stride ws: 1 for a row of the attention, n for a column).
template <class T>
[[gnu::always_inline]] inline void add_weighted_rows(const T* w, std::size_t ws, const T* m, std::size_t ld, int count,
                                                   int D, T* out) {
  int e0 = 0;
  for (; e0 + kChannelLanes <= D; e0 += kChannelLanes) {
    T acc[kChannelLanes];
    for (int ee = 0; ee < kChannelLanes; ++ee) acc[ee] = out[e0 + ee];
    for (int j = 0; j < count; ++j) {
      const T wj = w[j * ws];
      const T* mj = m + j * ld + e0;
      for (int ee = 0; ee < kChannelLanes; ++ee) acc[ee] += wj * mj[ee];
    }
    for (int ee = 0; ee < kChannelLanes; ++ee) out[e0 + ee] = acc[ee];
  }
  for (int j = 0; j < count && e0 < D; ++j)
    for (int e = e0; e < D; ++e) out[e] += w[j * ws] * m[j * ld + e];
}

// max_j x[j] over j < count (count >= 1), in kChannelLanes running maxima (exact in any order; a single running
// maximum does not vectorise).
template <class T>
[[gnu::always_inline]] inline T row_max(const T* x, int count) {
  T m[kChannelLanes];
  for (int jj = 0; jj < kChannelLanes; ++jj) m[jj] = x[0];
  int j = 0;
  for (; j + kChannelLanes <= count; j += kChannelLanes)
    for (int jj = 0; jj < kChannelLanes; ++jj) m[jj] = std::max(m[jj], x[j + jj]);
  for (; j < count; ++j) m[0] = std::max(m[0], x[j]);
  T mx = m[0];
  for (int jj = 1; jj < kChannelLanes; ++jj) mx = std::max(mx, m[jj]);
  return mx;
}

// One head h of one sequence's causal attention: att [n, n] (row t: the weights over j <= t) and y [n, C] gains
// the head's output in its columns h D .. from qkv [n, 3C] (q, k, v). The scores q_t . k_j summed over e in order
// (K^T in kt); exp by exp_nonpositive (within 2 ulp of std::exp, vectorisable), the normaliser summed in double.
template <class T>
TOKDYN_VECTOR_CLONES void attention_head(const T* qkv, int n, int C, int h, int D, T* att, T* y, std::vector<T>& kt) {
  const T att_scale = static_cast<T>(1 / std::sqrt(static_cast<double>(D)));
  const std::size_t ld = 3 * static_cast<std::size_t>(C);
  const int np = head_transpose(qkv, n, 3 * C, C + h * D, D, kt);
  for (int t = 0; t < n; ++t) {
    T* row = &att[static_cast<std::size_t>(t) * n];
    T* scores = kt.data() + static_cast<std::size_t>(D) * np;
    combine_rows(&qkv[t * ld + h * D], kt.data(), D, np, t + 1, scores);
    for (int j = 0; j <= t; ++j) row[j] = scores[j] * att_scale;
    const T mx = row_max(row, t + 1);
    for (int j = 0; j <= t; ++j) row[j] = static_cast<T>(exp_nonpositive(row[j] - mx));
    const double z = lane_sum(t + 1, [row](std::size_t j) { return static_cast<double>(row[j]); });
    const T inv = static_cast<T>(1 / z);
    for (int j = 0; j <= t; ++j) row[j] *= inv;
    add_weighted_rows(row, 1, &qkv[2 * C + h * D], ld, t + 1, D, &y[static_cast<std::size_t>(t) * C + h * D]);
  }
}

// Its backward: dqkv [n, 3C] gains d q, d k, d v of head h from dy [n, C] and the forward's att [n, n]. Row by
// row: d att[t, j] = dy_t . v_j (summed over e in order: V^T in kt), the softmax backward into ds [n, n] (row t
// over j <= t), dq_t = sum_j ds[t, j] k_j. Then column by column: dv_j = sum_{t >= j} att[t, j] dy_t and
// dk_j = sum_{t >= j} ds[t, j] q_t, each in the order of t, with its sums in registers.
template <class T>
TOKDYN_VECTOR_CLONES void attention_head_backward(const T* qkv, int n, int C, int h, int D, const T* att, const T* dy,
                                                  T* dqkv, std::vector<T>& kt, std::vector<T>& ds) {
  const T att_scale = static_cast<T>(1 / std::sqrt(static_cast<double>(D)));
  const std::size_t ld = 3 * static_cast<std::size_t>(C), nn = static_cast<std::size_t>(n);
  const int np = head_transpose(qkv, n, 3 * C, 2 * C + h * D, D, kt);
  ds.resize(nn * n + np);  // [n, n], then one row of d att
  T* datt = ds.data() + nn * n;
  for (int t = 0; t < n; ++t) {
    const T* row = &att[t * nn];
    combine_rows(&dy[static_cast<std::size_t>(t) * C + h * D], kt.data(), D, np, t + 1, datt);
    const double mean = lane_sum(t + 1, [row, datt](std::size_t j) { return static_cast<double>(row[j]) * datt[j]; });
    T* dst = &ds[t * nn];
    for (int j = 0; j <= t; ++j) dst[j] = static_cast<T>(row[j] * (datt[j] - mean)) * att_scale;
    add_weighted_rows(dst, 1, &qkv[C + h * D], ld, t + 1, D, &dqkv[t * ld + h * D]);  // dq_t += sum_j ds_tj k_j
  }
  for (int j = 0; j < n; ++j) {
    const std::size_t first = static_cast<std::size_t>(j) * n + j;  // entry (t = j, j)
    add_weighted_rows(&att[first], nn, &dy[static_cast<std::size_t>(j) * C + h * D], static_cast<std::size_t>(C), n - j,
                      D, &dqkv[j * ld + 2 * C + h * D]);  // dv_j
    add_weighted_rows(&ds[first], nn, &qkv[j * ld + h * D], ld, n - j, D, &dqkv[j * ld + C + h * D]);  // dk_j
  }
}

// out [n, rows] = in [n, cols] W^T + b with W [rows, cols] read in place (b may be null): one gemm.
template <class T>
void linear(const T* in, const T* W, const T* b, int n, int rows, int cols, T* out) {
  if (b)
    for (int t = 0; t < n; ++t) std::copy(b, b + rows, out + static_cast<std::size_t>(t) * rows);
  gemm_nt(n, rows, cols, T(1), in, cols, W, cols, b ? T(1) : T(0), out, rows);
}

// The backward of linear: din [n, cols] = dout W (or += when add_din); dW [rows, cols] += scale dout^T in (into
// the gradient by the gemm itself); db += scale x the column sums of dout (each over t in order, in double).
template <class T>
void linear_backward(const T* dout, const T* in, const T* W, int n, int rows, int cols, bool add_din, T* din, T* dW,
                     T* db, double scale, std::vector<double>& sums) {
  gemm_nn(n, cols, rows, T(1), dout, rows, W, cols, add_din ? T(1) : T(0), din, cols);
  if (!dW) return;
  gemm_tn(rows, cols, n, static_cast<T>(scale), dout, rows, in, cols, T(1), dW, cols);
  if (!db) return;
  sums.assign(rows, 0.0);
  for (int t = 0; t < n; ++t)
    for (int r = 0; r < rows; ++r) sums[r] += dout[static_cast<std::size_t>(t) * rows + r];
  for (int r = 0; r < rows; ++r) db[r] = static_cast<T>(db[r] + scale * sums[r]);
}

// GELU, tanh form (as GPT-2): 0.5 x (1 + tanh u), u = k (x + 0.044715 x^3); its derivative from the same tanh.
// tanh_v (core/numerics/fast_exp.hpp), so that the loops over every activation vectorise: libm's tanh was 10 %
// of a training step. In double whatever T: the conversions vectorise too.
constexpr double kGeluK = 0.7978845608028654;  // sqrt(2 / pi)
template <class T>
TOKDYN_VECTOR_CLONES void gelu_forward(const T* x, std::size_t size, T* th, T* out) {
  for (std::size_t i = 0; i < size; ++i) {
    const double xi = x[i], ti = tanh_v(kGeluK * (xi + 0.044715 * xi * xi * xi));
    th[i] = static_cast<T>(ti);
    out[i] = static_cast<T>(0.5 * xi * (1 + ti));
  }
}
// dx [size] = dout * GELU'(x), from the forward's tanh.
template <class T>
TOKDYN_VECTOR_CLONES void gelu_backward(const T* x, const T* th, const T* dout, std::size_t size, T* dx) {
  for (std::size_t i = 0; i < size; ++i) {
    const double xi = x[i], ti = th[i];
    dx[i] = static_cast<T>(dout[i] * (0.5 * (1 + ti) + 0.5 * xi * (1 - ti * ti) * kGeluK * (1 + 3 * 0.044715 * xi * xi)));
  }
}

}  // namespace

template <class T>
Gpt<T>::Gpt(const GptConfig& c) : c_(c), layout_(c), acts_(c.layers) {}

template <class T>
int Gpt<T>::sequences_per_pass(int n) const {
  const double per_layer = static_cast<double>(c_.heads) * n * n + 20.0 * c_.channels * n;  // att, ~20 C per row
  const double per_sequence = c_.layers * per_layer + static_cast<double>(c_.vocab + 4 * c_.channels) * n;
  return static_cast<int>(std::clamp(8.0e6 / per_sequence, 1.0, 1.0e6));
}

template <class T>
double Gpt<T>::batch(const T* theta, const int* const* tokens, const int* const* targets, int count, int n,
                     const SymmetryBiases& sb, T* grad, double scale) {
  const int C = c_.channels, H = c_.heads, D = c_.head_dim(), F = c_.hidden(), V = c_.vocab, L = c_.layers;
  if (n < 1 || n > c_.context) throw InputError("gpt: a sequence of " + std::to_string(n) + " tokens (context " +
                                                std::to_string(c_.context) + ")");
  if (count < 1) throw InputError("gpt: a batch of " + std::to_string(count) + " sequences");
  // The rows of every activation: row r = b n + t is position t of sequence b.
  const int R = count * n;
  const std::size_t RC = static_cast<std::size_t>(R) * C, RF = static_cast<std::size_t>(R) * F;
  // Every activation is written whole before it is read, except y (summed into) and the attention rows
  // beyond t (never read): resized, not cleared.
  for (Layer& a : acts_) {
    a.x.resize(RC), a.ln1.resize(RC), a.mean1.resize(R), a.rstd1.resize(R);
    a.qkv.resize(3 * RC), a.att.resize(static_cast<std::size_t>(count) * H * n * n), a.y.assign(RC, T(0));
    a.mid.resize(RC), a.ln2.resize(RC), a.mean2.resize(R), a.rstd2.resize(R);
    a.fc.resize(RF), a.act.resize(RF), a.tanh.resize(c_.prelu ? 0 : RF);
  }
  out_.resize(RC), lnf_.resize(RC), meanf_.resize(R), rstdf_.resize(R);
  probs_.resize(static_cast<std::size_t>(R) * V);

  // x [R, C] = wte[token] + wpe[position]
  for (int b = 0; b < count; ++b)
    for (int t = 0; t < n; ++t) {
      const int token = tokens[b][t], target = targets[b][t];
      if (token < 0 || token >= V || target < 0 || target >= V)
        throw InputError("gpt: a token outside the vocabulary of " + std::to_string(V));
      T* x = &acts_[0].x[(static_cast<std::size_t>(b) * n + t) * C];
      for (int i = 0; i < C; ++i)
        x[i] = theta[layout_.wte + static_cast<std::size_t>(token) * C + i] + theta[layout_.wpe + static_cast<std::size_t>(t) * C + i];
    }
  for (int l = 0; l < L; ++l) {
    const GptLayout::Layer& w = layout_.layer[l];
    Layer& a = acts_[l];
    layernorm(a.x.data(), theta + w.ln1w, theta + w.ln1b, R, C, a.ln1.data(), a.mean1.data(), a.rstd1.data());
    linear(a.ln1.data(), theta + w.qkvw, theta + w.qkvb, R, 3 * C, C, a.qkv.data());  // [R, 3C]: q, k, v
    // The symmetry-breaking biases, the same d_h vector for every head.
    const std::vector<double>* added[3] = {&sb.query, &sb.key, &sb.value};
    for (int part = 0; part < 3; ++part)
      if (!added[part]->empty())
        for (int r = 0; r < R; ++r)
          for (int h = 0; h < H; ++h)
            for (int e = 0; e < D; ++e) {
              T& q = a.qkv[static_cast<std::size_t>(r) * 3 * C + part * C + h * D + e];
              q = static_cast<T>(q + (*added[part])[static_cast<std::size_t>(l) * D + e]);
            }
    // Causal attention per sequence and head: att [count, H, n, n] (row t over j <= t), y [R, C].
    for (int b = 0; b < count; ++b) {
      const T* qkv = &a.qkv[static_cast<std::size_t>(b) * n * 3 * C];  // [n, 3C] of sequence b
      for (int h = 0; h < H; ++h)
        attention_head(qkv, n, C, h, D, &a.att[(static_cast<std::size_t>(b) * H + h) * n * n],
                       &a.y[static_cast<std::size_t>(b) * n * C], head_);
    }
    linear(a.y.data(), theta + w.projw, theta + w.projb, R, C, C, a.mid.data());  // W_O y + b
    for (std::size_t i = 0; i < RC; ++i) a.mid[i] += a.x[i];                     // residual
    layernorm(a.mid.data(), theta + w.ln2w, theta + w.ln2b, R, C, a.ln2.data(), a.mean2.data(), a.rstd2.data());
    linear(a.ln2.data(), theta + w.fcw, theta + w.fcb, R, F, C, a.fc.data());  // [R, 4C]
    if (c_.prelu) {
      for (int r = 0; r < R; ++r)
        for (int j = 0; j < F; ++j) {
          const std::size_t i = static_cast<std::size_t>(r) * F + j;
          const T u = a.fc[i];
          a.act[i] = u > 0 ? u : theta[w.slope + j] * u;
        }
    } else {
      gelu_forward(a.fc.data(), RF, a.tanh.data(), a.act.data());
    }
    T* next = l + 1 < L ? acts_[l + 1].x.data() : out_.data();
    linear(a.act.data(), theta + w.fcprojw, theta + w.fcprojb, R, C, F, next);
    for (std::size_t i = 0; i < RC; ++i) next[i] += a.mid[i];
  }
  layernorm(out_.data(), theta + layout_.lnfw, theta + layout_.lnfb, R, C, lnf_.data(), meanf_.data(), rstdf_.data());
  // logits [R, V] = lnf wte^T (tied); the loss summed over the positions, each from its logits in double:
  // -log p_target = log z + max - logit_target.
  linear<T>(lnf_.data(), theta + layout_.wte, nullptr, R, V, C, probs_.data());
  double loss = 0;
  for (int r = 0; r < R; ++r) {
    T* p = &probs_[static_cast<std::size_t>(r) * V];
    const double mx = *std::max_element(p, p + V), target = p[targets[r / n][r % n]];
    double z = 0;
    for (int v = 0; v < V; ++v) {
      const double e = std::exp(p[v] - mx);
      z += e;
      p[v] = static_cast<T>(e);
    }
    for (int v = 0; v < V; ++v) p[v] = static_cast<T>(p[v] / z);
    loss += std::log(z) + mx - target;
  }
  if (!grad) return loss;

  // Backward. d logits = p - onehot(target); the tied embedding gets it from both ends.
  // The gradients of the activations (reused buffers): dx holds d/d(x) of the block being gone through.
  std::vector<T>&dlnf = back_.dlnf, &dx = back_.dx, &dact = back_.dact, &dfc = back_.dfc, &dln = back_.dln,
               &dy = back_.dy, &dqkv = back_.dqkv;
  dlnf.resize(RC), dx.assign(RC, T(0)), dact.resize(RF), dfc.resize(RF), dln.resize(RC), dy.resize(RC);
  dqkv.resize(3 * RC);
  for (int r = 0; r < R; ++r) probs_[static_cast<std::size_t>(r) * V + targets[r / n][r % n]] -= 1;
  linear_backward(probs_.data(), lnf_.data(), theta + layout_.wte, R, V, C, false, dlnf.data(), grad + layout_.wte,
                  static_cast<T*>(nullptr), scale, sums_);
  layernorm_backward(dlnf.data(), out_.data(), meanf_.data(), rstdf_.data(), theta + layout_.lnfw, R, C, dx.data(),
                     grad + layout_.lnfw, grad + layout_.lnfb, scale, sums_);
  for (int l = L - 1; l >= 0; --l) {
    const GptLayout::Layer& w = layout_.layer[l];
    Layer& a = acts_[l];
    // out = mid + MLP(LN_2(mid)): d/d(mid) = dx (the residual) + the MLP path, added into dx in place.
    linear_backward(dx.data(), a.act.data(), theta + w.fcprojw, R, C, F, false, dact.data(), grad + w.fcprojw,
                    grad + w.fcprojb, scale, sums_);
    if (c_.prelu) {
      sums_.assign(F, 0.0);  // d slope, summed over the rows in double
      for (int r = 0; r < R; ++r)
        for (int j = 0; j < F; ++j) {
          const std::size_t i = static_cast<std::size_t>(r) * F + j;
          const T u = a.fc[i];
          dfc[i] = dact[i] * (u > 0 ? T(1) : theta[w.slope + j]);
          if (u <= 0) sums_[j] += static_cast<double>(dact[i]) * u;
        }
      for (int j = 0; j < F; ++j) grad[w.slope + j] = static_cast<T>(grad[w.slope + j] + scale * sums_[j]);
    } else {
      gelu_backward(a.fc.data(), a.tanh.data(), dact.data(), RF, dfc.data());
    }
    linear_backward(dfc.data(), a.ln2.data(), theta + w.fcw, R, F, C, false, dln.data(), grad + w.fcw, grad + w.fcb, scale, sums_);
    layernorm_backward(dln.data(), a.mid.data(), a.mean2.data(), a.rstd2.data(), theta + w.ln2w, R, C, dx.data(),
                       grad + w.ln2w, grad + w.ln2b, scale, sums_);
    // mid = x + W_O y + b: d/d(x) = d/d(mid) (the residual) + the attention path, again into dx.
    linear_backward(dx.data(), a.y.data(), theta + w.projw, R, C, C, false, dy.data(), grad + w.projw, grad + w.projb,
                    scale, sums_);
    std::fill(dqkv.begin(), dqkv.end(), T(0));
    for (int b = 0; b < count; ++b) {
      const std::size_t first = static_cast<std::size_t>(b) * n;  // sequence b's first row
      const T* qkv = &a.qkv[first * 3 * C];
      T* dqkv_b = &dqkv[first * 3 * C];
      for (int h = 0; h < H; ++h)
        attention_head_backward(qkv, n, C, h, D, &a.att[(static_cast<std::size_t>(b) * H + h) * n * n], &dy[first * C],
                                dqkv_b, head_, datt_);
    }
    linear_backward(dqkv.data(), a.ln1.data(), theta + w.qkvw, R, 3 * C, C, false, dln.data(), grad + w.qkvw, grad + w.qkvb,
                    scale, sums_);
    layernorm_backward(dln.data(), a.x.data(), a.mean1.data(), a.rstd1.data(), theta + w.ln1w, R, C, dx.data(),
                       grad + w.ln1w, grad + w.ln1b, scale, sums_);
  }
  // The embeddings' gradients in double first: a token or a position repeats across the rows.
  embedding_sums_.assign(static_cast<std::size_t>(V + n) * C, 0.0);  // [V + n, C]: wte, then wpe's first n rows
  for (int r = 0; r < R; ++r) {
    double* e = &embedding_sums_[static_cast<std::size_t>(tokens[r / n][r % n]) * C];
    double* p = &embedding_sums_[static_cast<std::size_t>(V + r % n) * C];
    for (int i = 0; i < C; ++i) {
      const double d = dx[static_cast<std::size_t>(r) * C + i];
      e[i] += d, p[i] += d;
    }
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(V) * C; ++i)
    grad[layout_.wte + i] = static_cast<T>(grad[layout_.wte + i] + scale * embedding_sums_[i]);
  for (std::size_t i = 0; i < static_cast<std::size_t>(n) * C; ++i)
    grad[layout_.wpe + i] = static_cast<T>(grad[layout_.wpe + i] + scale * embedding_sums_[static_cast<std::size_t>(V) * C + i]);
  return loss;
}

template class Gpt<float>;
template class Gpt<double>;

}  // namespace tokdyn
