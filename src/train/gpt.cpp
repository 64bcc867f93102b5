#include "tokdyn/train/gpt.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/numerics/fast_exp.hpp"
#include "tokdyn/core/numerics/vector_clones.hpp"
#include "tokdyn/train/matmul.hpp"

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

// out [n, C] = LN(x [n, C]) w + b, keeping mean and 1/std per row.
template <class T>
void layernorm(const double* x, const T* w, const T* b, int n, int C, double* out, double* mean, double* rstd) {
  for (int t = 0; t < n; ++t) {
    const double* xt = x + static_cast<std::size_t>(t) * C;
    double m = 0, v = 0;
    for (int i = 0; i < C; ++i) m += xt[i];
    m /= C;
    for (int i = 0; i < C; ++i) v += (xt[i] - m) * (xt[i] - m);
    const double r = 1 / std::sqrt(v / C + kLnEps);
    for (int i = 0; i < C; ++i) out[static_cast<std::size_t>(t) * C + i] = (xt[i] - m) * r * w[i] + b[i];
    mean[t] = m, rstd[t] = r;
  }
}

// dx [n, C] += the LayerNorm backward of dout [n, C]; dw, db [C] += (summed over the rows in double, then
// scaled into the T gradient once).
template <class T>
void layernorm_backward(const double* dout, const double* x, const double* mean, const double* rstd, const T* w,
                        int n, int C, double* dx, T* dw, T* db, double scale) {
  std::vector<double> sw(dw ? C : 0, 0.0), sb(dw ? C : 0, 0.0);
  for (int t = 0; t < n; ++t) {
    const double* xt = x + static_cast<std::size_t>(t) * C;
    const double* dt = dout + static_cast<std::size_t>(t) * C;
    double mean_d = 0, mean_dn = 0;  // means over i of dnorm_i and dnorm_i norm_i
    for (int i = 0; i < C; ++i) {
      const double norm = (xt[i] - mean[t]) * rstd[t], dnorm = dt[i] * w[i];
      mean_d += dnorm / C, mean_dn += dnorm * norm / C;
    }
    for (int i = 0; i < C; ++i) {
      const double norm = (xt[i] - mean[t]) * rstd[t], dnorm = dt[i] * w[i];
      if (dw) sw[i] += dt[i] * norm, sb[i] += dt[i];
      dx[static_cast<std::size_t>(t) * C + i] += rstd[t] * (dnorm - mean_d - norm * mean_dn);
    }
  }
  for (int i = 0; dw && i < C; ++i) {
    dw[i] = static_cast<T>(dw[i] + scale * sw[i]);
    db[i] = static_cast<T>(db[i] + scale * sb[i]);
  }
}

// dst [cols, rows] = src [rows, cols]^T in double, in 8 x 8 blocks (a plain strided loop misses the cache
// on every store).
template <class S>
void transpose(const S* src, int rows, int cols, double* dst) {
  constexpr int B = 8;
  for (int r0 = 0; r0 < rows; r0 += B)
    for (int c0 = 0; c0 < cols; c0 += B) {
      const int r1 = std::min(rows, r0 + B), c1 = std::min(cols, c0 + B);
      for (int r = r0; r < r1; ++r)
        for (int c = c0; c < c1; ++c)
          dst[static_cast<std::size_t>(c) * rows + r] = static_cast<double>(src[static_cast<std::size_t>(r) * cols + c]);
    }
}

// out [D, n] = the columns first .. first + D - 1 of m [n, width]: one head's keys or values, transposed so
// that a loop over the positions j reads them contiguously.
void head_transpose(const double* m, int n, int width, int first, int D, std::vector<double>& out) {
  out.resize(static_cast<std::size_t>(D) * n);
  for (int j = 0; j < n; ++j)
    for (int e = 0; e < D; ++e) out[static_cast<std::size_t>(e) * n + j] = m[static_cast<std::size_t>(j) * width + first + e];
}

// One head h of one sequence's causal attention: att [n, n] (row t: the weights over j <= t) and y [n, C] gains
// the head's output in its columns h D .. from qkv [n, 3C] (q, k, v). The scores q_t . k_j are summed over e in
// order and vectorised over j (K^T [D, n] in kt: its rows are contiguous in j); exp by exp_nonpositive (within
// 2 ulp of std::exp, vectorisable).
TOKDYN_VECTOR_CLONES
void attention_head(const double* qkv, int n, int C, int h, int D, double* att, double* y, std::vector<double>& kt) {
  const double att_scale = 1 / std::sqrt(static_cast<double>(D));
  head_transpose(qkv, n, 3 * C, C + h * D, D, kt);
  for (int t = 0; t < n; ++t) {
    const double* q = &qkv[static_cast<std::size_t>(t) * 3 * C + h * D];
    double* row = &att[static_cast<std::size_t>(t) * n];
    std::fill(row, row + t + 1, 0.0);
    for (int e = 0; e < D; ++e) {
      const double qe = q[e];
      const double* ke = &kt[static_cast<std::size_t>(e) * n];
      for (int j = 0; j <= t; ++j) row[j] += qe * ke[j];
    }
    double mx = -INFINITY;
    for (int j = 0; j <= t; ++j) {
      row[j] *= att_scale;
      mx = std::max(mx, row[j]);
    }
    for (int j = 0; j <= t; ++j) row[j] = exp_nonpositive(row[j] - mx);
    double z = 0;
    for (int j = 0; j <= t; ++j) z += row[j];
    for (int j = 0; j <= t; ++j) row[j] /= z;
    double* yt = &y[static_cast<std::size_t>(t) * C + h * D];
    for (int j = 0; j <= t; ++j) {
      const double* v = &qkv[static_cast<std::size_t>(j) * 3 * C + 2 * C + h * D];
      for (int e = 0; e < D; ++e) yt[e] += row[j] * v[e];
    }
  }
}

// Its backward: dqkv [n, 3C] gains d q, d k, d v of head h from dy [n, C] and the forward's att [n, n]. d att[t, j]
// = dy_t . v_j (summed over e in order, vectorised over j: V^T in kt); the softmax backward; then q, k and v.
TOKDYN_VECTOR_CLONES
void attention_head_backward(const double* qkv, int n, int C, int h, int D, const double* att, const double* dy,
                             double* dqkv, std::vector<double>& kt, std::vector<double>& datt) {
  const double att_scale = 1 / std::sqrt(static_cast<double>(D));
  head_transpose(qkv, n, 3 * C, 2 * C + h * D, D, kt);
  datt.resize(n);
  for (int t = 0; t < n; ++t) {
    const double* row = &att[static_cast<std::size_t>(t) * n];
    const double* dyt = &dy[static_cast<std::size_t>(t) * C + h * D];
    std::fill(datt.begin(), datt.begin() + t + 1, 0.0);
    for (int e = 0; e < D; ++e) {
      const double de = dyt[e];
      const double* ve = &kt[static_cast<std::size_t>(e) * n];
      for (int j = 0; j <= t; ++j) datt[j] += de * ve[j];
    }
    double mean = 0;
    for (int j = 0; j <= t; ++j) {
      double* dv = &dqkv[static_cast<std::size_t>(j) * 3 * C + 2 * C + h * D];
      for (int e = 0; e < D; ++e) dv[e] += row[j] * dyt[e];
      mean += row[j] * datt[j];
    }
    const double* q = &qkv[static_cast<std::size_t>(t) * 3 * C + h * D];
    double* dq = &dqkv[static_cast<std::size_t>(t) * 3 * C + h * D];
    for (int j = 0; j <= t; ++j) {
      const double ds = row[j] * (datt[j] - mean) * att_scale;
      const double* k = &qkv[static_cast<std::size_t>(j) * 3 * C + C + h * D];
      double* dk = &dqkv[static_cast<std::size_t>(j) * 3 * C + C + h * D];
      for (int e = 0; e < D; ++e) dq[e] += ds * k[e], dk[e] += ds * q[e];
    }
  }
}

// out [n, rows] = in [n, cols] W^T + b with W [rows, cols] (b may be null): W transposed into double
// scratch, then the one tiled product.
template <class T>
void linear(const double* in, const T* W, const T* b, int n, int rows, int cols, double* out, GptScratch& s) {
  s.w.resize(static_cast<std::size_t>(rows) * cols);
  transpose(W, rows, cols, s.w.data());
  if (b) s.bias.assign(b, b + rows);
  matmul(in, s.w.data(), b ? s.bias.data() : nullptr, false, n, cols, rows, out);
}

// The backward of linear: din [n, cols] += dout W; dW [rows, cols] += scale dout^T in; db += scale sum dout.
template <class T>
void linear_backward(const double* dout, const double* in, const T* W, int n, int rows, int cols, double* din, T* dW,
                     T* db, double scale, GptScratch& s) {
  const std::size_t size = static_cast<std::size_t>(rows) * cols;
  const double* w = nullptr;  // W in double: itself, or converted
  if constexpr (std::is_same_v<T, double>) {
    w = W;
  } else {
    s.w.assign(W, W + size);
    w = s.w.data();
  }
  matmul(dout, w, nullptr, true, n, rows, cols, din);
  if (!dW) return;
  s.product.resize(size);
  matmul_tn(dout, in, rows, n, cols, s.product.data());  // dout^T in [rows, cols], dout read in place
  for (std::size_t i = 0; i < size; ++i) dW[i] = static_cast<T>(dW[i] + scale * s.product[i]);
  if (!db) return;
  s.bias.assign(rows, 0.0);  // the column sums of dout, each over t in order
  for (int t = 0; t < n; ++t)
    for (int r = 0; r < rows; ++r) s.bias[r] += dout[static_cast<std::size_t>(t) * rows + r];
  for (int r = 0; r < rows; ++r) db[r] = static_cast<T>(db[r] + scale * s.bias[r]);
}

// GELU, tanh form (as GPT-2): 0.5 x (1 + tanh u), u = k (x + 0.044715 x^3); its derivative from the same tanh.
// tanh_v (core/numerics/fast_exp.hpp), so that the loops over every activation vectorise: libm's tanh was 10 %
// of a training step.
constexpr double kGeluK = 0.7978845608028654;  // sqrt(2 / pi)
TOKDYN_VECTOR_CLONES
void gelu_forward(const double* x, std::size_t size, double* th, double* out) {
  for (std::size_t i = 0; i < size; ++i) {
    th[i] = tanh_v(kGeluK * (x[i] + 0.044715 * x[i] * x[i] * x[i]));
    out[i] = 0.5 * x[i] * (1 + th[i]);
  }
}
// dx [size] = dout * GELU'(x), from the forward's tanh.
TOKDYN_VECTOR_CLONES
void gelu_backward(const double* x, const double* th, const double* dout, std::size_t size, double* dx) {
  for (std::size_t i = 0; i < size; ++i)
    dx[i] = dout[i] * (0.5 * (1 + th[i]) + 0.5 * x[i] * (1 - th[i] * th[i]) * kGeluK * (1 + 3 * 0.044715 * x[i] * x[i]));
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
  const std::size_t RC = static_cast<std::size_t>(R) * C;
  // Every activation is written whole before it is read, except y (summed into) and the attention rows
  // beyond t (never read): resized, not cleared.
  for (Layer& a : acts_) {
    a.x.resize(RC), a.ln1.resize(RC), a.mean1.resize(R), a.rstd1.resize(R);
    a.qkv.resize(3 * RC), a.att.resize(static_cast<std::size_t>(count) * H * n * n), a.y.assign(RC, 0);
    a.mid.resize(RC), a.ln2.resize(RC), a.mean2.resize(R), a.rstd2.resize(R);
    a.fc.resize(static_cast<std::size_t>(R) * F), a.act.resize(static_cast<std::size_t>(R) * F);
    a.tanh.resize(c_.prelu ? 0 : static_cast<std::size_t>(R) * F);
  }
  out_.resize(RC), lnf_.resize(RC), meanf_.resize(R), rstdf_.resize(R);
  probs_.resize(static_cast<std::size_t>(R) * V);
  std::vector<double>& kt = scratch_.head;  // K^T (backward: V^T) of one sequence and head [D, n]

  // x [R, C] = wte[token] + wpe[position]
  for (int b = 0; b < count; ++b)
    for (int t = 0; t < n; ++t) {
      const int token = tokens[b][t], target = targets[b][t];
      if (token < 0 || token >= V || target < 0 || target >= V)
        throw InputError("gpt: a token outside the vocabulary of " + std::to_string(V));
      double* x = &acts_[0].x[(static_cast<std::size_t>(b) * n + t) * C];
      for (int i = 0; i < C; ++i)
        x[i] = theta[layout_.wte + static_cast<std::size_t>(token) * C + i] + theta[layout_.wpe + static_cast<std::size_t>(t) * C + i];
    }
  for (int l = 0; l < L; ++l) {
    const GptLayout::Layer& w = layout_.layer[l];
    Layer& a = acts_[l];
    layernorm(a.x.data(), theta + w.ln1w, theta + w.ln1b, R, C, a.ln1.data(), a.mean1.data(), a.rstd1.data());
    linear(a.ln1.data(), theta + w.qkvw, theta + w.qkvb, R, 3 * C, C, a.qkv.data(), scratch_);  // [R, 3C]: q, k, v
    // The symmetry-breaking biases, the same d_h vector for every head.
    const std::vector<double>* added[3] = {&sb.query, &sb.key, &sb.value};
    for (int part = 0; part < 3; ++part)
      if (!added[part]->empty())
        for (int r = 0; r < R; ++r)
          for (int h = 0; h < H; ++h)
            for (int e = 0; e < D; ++e)
              a.qkv[static_cast<std::size_t>(r) * 3 * C + part * C + h * D + e] += (*added[part])[static_cast<std::size_t>(l) * D + e];
    // Causal attention per sequence and head: att [count, H, n, n] (row t over j <= t), y [R, C].
    for (int b = 0; b < count; ++b) {
      const double* qkv = &a.qkv[static_cast<std::size_t>(b) * n * 3 * C];  // [n, 3C] of sequence b
      for (int h = 0; h < H; ++h)
        attention_head(qkv, n, C, h, D, &a.att[(static_cast<std::size_t>(b) * H + h) * n * n],
                       &a.y[static_cast<std::size_t>(b) * n * C], kt);
    }
    linear(a.y.data(), theta + w.projw, theta + w.projb, R, C, C, a.mid.data(), scratch_);  // W_O y + b
    for (std::size_t i = 0; i < RC; ++i) a.mid[i] += a.x[i];                        // residual
    layernorm(a.mid.data(), theta + w.ln2w, theta + w.ln2b, R, C, a.ln2.data(), a.mean2.data(), a.rstd2.data());
    linear(a.ln2.data(), theta + w.fcw, theta + w.fcb, R, F, C, a.fc.data(), scratch_);  // [R, 4C]
    if (c_.prelu) {
      for (int r = 0; r < R; ++r)
        for (int j = 0; j < F; ++j) {
          const std::size_t i = static_cast<std::size_t>(r) * F + j;
          const double u = a.fc[i];
          a.act[i] = u > 0 ? u : theta[w.slope + j] * u;
        }
    } else {
      gelu_forward(a.fc.data(), static_cast<std::size_t>(R) * F, a.tanh.data(), a.act.data());
    }
    double* next = l + 1 < L ? acts_[l + 1].x.data() : out_.data();
    linear(a.act.data(), theta + w.fcprojw, theta + w.fcprojb, R, C, F, next, scratch_);
    for (std::size_t i = 0; i < RC; ++i) next[i] += a.mid[i];
  }
  layernorm(out_.data(), theta + layout_.lnfw, theta + layout_.lnfb, R, C, lnf_.data(), meanf_.data(), rstdf_.data());
  // logits [R, V] = lnf wte^T (tied); the loss summed over the positions.
  linear<T>(lnf_.data(), theta + layout_.wte, nullptr, R, V, C, probs_.data(), scratch_);
  double loss = 0;
  for (int r = 0; r < R; ++r) {
    double* p = &probs_[static_cast<std::size_t>(r) * V];
    const double mx = *std::max_element(p, p + V);
    double z = 0;
    for (int v = 0; v < V; ++v) z += (p[v] = std::exp(p[v] - mx));
    for (int v = 0; v < V; ++v) p[v] /= z;
    loss -= std::log(p[targets[r / n][r % n]]);
  }
  if (!grad) return loss;

  // Backward. d logits = p - onehot(target); the tied embedding gets it from both ends.
  std::vector<double> dlnf(RC, 0.0), dx(RC, 0.0);
  for (int r = 0; r < R; ++r) probs_[static_cast<std::size_t>(r) * V + targets[r / n][r % n]] -= 1;
  linear_backward(probs_.data(), lnf_.data(), theta + layout_.wte, R, V, C, dlnf.data(), grad + layout_.wte,
                  static_cast<T*>(nullptr), scale, scratch_);
  layernorm_backward(dlnf.data(), out_.data(), meanf_.data(), rstdf_.data(), theta + layout_.lnfw, R, C, dx.data(),
                     grad + layout_.lnfw, grad + layout_.lnfb, scale);
  std::vector<double> dmid(RC), dact, dfc, dln(RC), dy(RC), dqkv(3 * RC);
  for (int l = L - 1; l >= 0; --l) {
    const GptLayout::Layer& w = layout_.layer[l];
    Layer& a = acts_[l];
    // dx holds d/d(block output) = d/d(mid) through the residual, plus the MLP path.
    dmid = dx;
    dact.assign(static_cast<std::size_t>(R) * F, 0.0);
    linear_backward(dx.data(), a.act.data(), theta + w.fcprojw, R, C, F, dact.data(), grad + w.fcprojw,
                    grad + w.fcprojb, scale, scratch_);
    dfc.assign(static_cast<std::size_t>(R) * F, 0.0);
    std::vector<double> dslope(c_.prelu ? F : 0, 0.0);  // summed over the rows in double
    if (c_.prelu) {
      for (int r = 0; r < R; ++r)
        for (int j = 0; j < F; ++j) {
          const std::size_t i = static_cast<std::size_t>(r) * F + j;
          const double u = a.fc[i];
          dfc[i] = dact[i] * (u > 0 ? 1.0 : static_cast<double>(theta[w.slope + j]));
          if (u <= 0) dslope[j] += dact[i] * u;
        }
    } else {
      gelu_backward(a.fc.data(), a.tanh.data(), dact.data(), static_cast<std::size_t>(R) * F, dfc.data());
    }
    for (std::size_t j = 0; j < dslope.size(); ++j)
      grad[w.slope + j] = static_cast<T>(grad[w.slope + j] + scale * dslope[j]);
    std::fill(dln.begin(), dln.end(), 0.0);
    linear_backward(dfc.data(), a.ln2.data(), theta + w.fcw, R, F, C, dln.data(), grad + w.fcw, grad + w.fcb, scale, scratch_);
    layernorm_backward(dln.data(), a.mid.data(), a.mean2.data(), a.rstd2.data(), theta + w.ln2w, R, C, dmid.data(),
                       grad + w.ln2w, grad + w.ln2b, scale);
    // mid = x + W_O y + b: dx = dmid (residual) + the attention path.
    dx = dmid;
    std::fill(dy.begin(), dy.end(), 0.0);
    linear_backward(dmid.data(), a.y.data(), theta + w.projw, R, C, C, dy.data(), grad + w.projw, grad + w.projb,
                    scale, scratch_);
    std::fill(dqkv.begin(), dqkv.end(), 0.0);
    for (int b = 0; b < count; ++b) {
      const std::size_t first = static_cast<std::size_t>(b) * n;  // sequence b's first row
      const double* qkv = &a.qkv[first * 3 * C];
      double* dqkv_b = &dqkv[first * 3 * C];
      for (int h = 0; h < H; ++h)
        attention_head_backward(qkv, n, C, h, D, &a.att[(static_cast<std::size_t>(b) * H + h) * n * n], &dy[first * C],
                                dqkv_b, kt, scratch_.datt);
    }
    std::fill(dln.begin(), dln.end(), 0.0);
    linear_backward(dqkv.data(), a.ln1.data(), theta + w.qkvw, R, 3 * C, C, dln.data(), grad + w.qkvw, grad + w.qkvb,
                    scale, scratch_);
    layernorm_backward(dln.data(), a.x.data(), a.mean1.data(), a.rstd1.data(), theta + w.ln1w, R, C, dx.data(),
                       grad + w.ln1w, grad + w.ln1b, scale);
  }
  // The embeddings' gradients in double first: a token or a position repeats across the rows.
  scratch_.product.assign(static_cast<std::size_t>(V + n) * C, 0.0);  // [V + n, C]: wte, then wpe's first n rows
  for (int r = 0; r < R; ++r) {
    double* e = &scratch_.product[static_cast<std::size_t>(tokens[r / n][r % n]) * C];
    double* p = &scratch_.product[static_cast<std::size_t>(V + r % n) * C];
    for (int i = 0; i < C; ++i) {
      const double d = dx[static_cast<std::size_t>(r) * C + i];
      e[i] += d, p[i] += d;
    }
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(V) * C; ++i)
    grad[layout_.wte + i] = static_cast<T>(grad[layout_.wte + i] + scale * scratch_.product[i]);
  for (std::size_t i = 0; i < static_cast<std::size_t>(n) * C; ++i)
    grad[layout_.wpe + i] = static_cast<T>(grad[layout_.wpe + i] + scale * scratch_.product[static_cast<std::size_t>(V) * C + i]);
  return loss;
}

template class Gpt<float>;
template class Gpt<double>;

}  // namespace tokdyn
