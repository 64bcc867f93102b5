#include "tokdyn/train/gpt.hpp"

#include <algorithm>
#include <cmath>

#include "tokdyn/core/errors/error.hpp"
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

// dx [n, C] += the LayerNorm backward of dout [n, C]; dw, db [C] += (scaled into the T gradient).
template <class T>
void layernorm_backward(const double* dout, const double* x, const double* mean, const double* rstd, const T* w,
                        int n, int C, double* dx, T* dw, T* db, double scale) {
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
      if (dw) {
        dw[i] = static_cast<T>(dw[i] + scale * dt[i] * norm);
        db[i] = static_cast<T>(db[i] + scale * dt[i]);
      }
      dx[static_cast<std::size_t>(t) * C + i] += rstd[t] * (dnorm - mean_d - norm * mean_dn);
    }
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
  s.w.assign(W, W + size);
  matmul(dout, s.w.data(), nullptr, true, n, rows, cols, din);
  if (!dW) return;
  s.transposed.resize(static_cast<std::size_t>(rows) * n);  // dout^T [rows, n]
  transpose(dout, n, rows, s.transposed.data());
  s.product.resize(size);
  matmul(s.transposed.data(), in, nullptr, false, rows, n, cols, s.product.data());
  for (std::size_t i = 0; i < size; ++i) dW[i] = static_cast<T>(dW[i] + scale * s.product[i]);
  if (!db) return;
  for (int r = 0; r < rows; ++r) {
    double sb = 0;
    for (int t = 0; t < n; ++t) sb += s.transposed[static_cast<std::size_t>(r) * n + t];
    db[r] = static_cast<T>(db[r] + scale * sb);
  }
}

// GELU, tanh form (as GPT-2): 0.5 x (1 + tanh u), u = k (x + 0.044715 x^3); its derivative from the same tanh.
constexpr double kGeluK = 0.7978845608028654;  // sqrt(2 / pi)
double gelu_tanh(double x) { return std::tanh(kGeluK * (x + 0.044715 * x * x * x)); }
double gelu_grad(double x, double th) {
  return 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * kGeluK * (1 + 3 * 0.044715 * x * x);
}

}  // namespace

template <class T>
Gpt<T>::Gpt(const GptConfig& c) : c_(c), layout_(c), acts_(c.layers) {}

template <class T>
double Gpt<T>::sequence(const T* theta, const int* tokens, const int* targets, int n, const SymmetryBiases& sb,
                        T* grad, double scale) {
  const int C = c_.channels, H = c_.heads, D = c_.head_dim(), F = c_.hidden(), V = c_.vocab, L = c_.layers;
  if (n < 1 || n > c_.context) throw InputError("gpt: a sequence of " + std::to_string(n) + " tokens (context " +
                                                std::to_string(c_.context) + ")");
  const std::size_t nC = static_cast<std::size_t>(n) * C;
  const double att_scale = 1 / std::sqrt(static_cast<double>(D));
  for (Layer& a : acts_) {
    a.x.assign(nC, 0), a.ln1.assign(nC, 0), a.mean1.assign(n, 0), a.rstd1.assign(n, 0);
    a.qkv.assign(3 * nC, 0), a.att.assign(static_cast<std::size_t>(H) * n * n, 0), a.y.assign(nC, 0);
    a.mid.assign(nC, 0), a.ln2.assign(nC, 0), a.mean2.assign(n, 0), a.rstd2.assign(n, 0);
    a.fc.assign(static_cast<std::size_t>(n) * F, 0), a.act.assign(static_cast<std::size_t>(n) * F, 0);
    a.tanh.assign(c_.prelu ? 0 : static_cast<std::size_t>(n) * F, 0);
  }
  out_.assign(nC, 0), lnf_.assign(nC, 0), meanf_.assign(n, 0), rstdf_.assign(n, 0);
  probs_.assign(static_cast<std::size_t>(n) * V, 0);

  // x [n, C] = wte[token] + wpe[position]
  for (int t = 0; t < n; ++t) {
    if (tokens[t] < 0 || tokens[t] >= V || targets[t] < 0 || targets[t] >= V)
      throw InputError("gpt: a token outside the vocabulary of " + std::to_string(V));
    for (int i = 0; i < C; ++i)
      acts_[0].x[static_cast<std::size_t>(t) * C + i] =
          theta[layout_.wte + static_cast<std::size_t>(tokens[t]) * C + i] + theta[layout_.wpe + static_cast<std::size_t>(t) * C + i];
  }
  for (int l = 0; l < L; ++l) {
    const GptLayout::Layer& w = layout_.layer[l];
    Layer& a = acts_[l];
    layernorm(a.x.data(), theta + w.ln1w, theta + w.ln1b, n, C, a.ln1.data(), a.mean1.data(), a.rstd1.data());
    linear(a.ln1.data(), theta + w.qkvw, theta + w.qkvb, n, 3 * C, C, a.qkv.data(), scratch_);  // [n, 3C]: q, k, v
    // The symmetry-breaking biases, the same d_h vector for every head.
    const std::vector<double>* added[3] = {&sb.query, &sb.key, &sb.value};
    for (int part = 0; part < 3; ++part)
      if (!added[part]->empty())
        for (int t = 0; t < n; ++t)
          for (int h = 0; h < H; ++h)
            for (int e = 0; e < D; ++e)
              a.qkv[static_cast<std::size_t>(t) * 3 * C + part * C + h * D + e] += (*added[part])[static_cast<std::size_t>(l) * D + e];
    // Causal attention per head: att [H, n, n] (row t over j <= t), y [n, C].
    for (int h = 0; h < H; ++h)
      for (int t = 0; t < n; ++t) {
        const double* q = &a.qkv[static_cast<std::size_t>(t) * 3 * C + h * D];
        double* row = &a.att[(static_cast<std::size_t>(h) * n + t) * n];
        double mx = -INFINITY;
        for (int j = 0; j <= t; ++j) {
          const double* k = &a.qkv[static_cast<std::size_t>(j) * 3 * C + C + h * D];
          double s = 0;
          for (int e = 0; e < D; ++e) s += q[e] * k[e];
          row[j] = s * att_scale;
          mx = std::max(mx, row[j]);
        }
        double z = 0;
        for (int j = 0; j <= t; ++j) z += (row[j] = std::exp(row[j] - mx));
        for (int j = 0; j <= t; ++j) row[j] /= z;
        double* y = &a.y[static_cast<std::size_t>(t) * C + h * D];
        for (int j = 0; j <= t; ++j) {
          const double* v = &a.qkv[static_cast<std::size_t>(j) * 3 * C + 2 * C + h * D];
          for (int e = 0; e < D; ++e) y[e] += row[j] * v[e];
        }
      }
    linear(a.y.data(), theta + w.projw, theta + w.projb, n, C, C, a.mid.data(), scratch_);  // W_O y + b
    for (std::size_t i = 0; i < nC; ++i) a.mid[i] += a.x[i];                        // residual
    layernorm(a.mid.data(), theta + w.ln2w, theta + w.ln2b, n, C, a.ln2.data(), a.mean2.data(), a.rstd2.data());
    linear(a.ln2.data(), theta + w.fcw, theta + w.fcb, n, F, C, a.fc.data(), scratch_);  // [n, 4C]
    for (int t = 0; t < n; ++t)
      for (int j = 0; j < F; ++j) {
        const double u = a.fc[static_cast<std::size_t>(t) * F + j];
        const std::size_t i = static_cast<std::size_t>(t) * F + j;
        if (c_.prelu) {
          a.act[i] = u > 0 ? u : theta[w.slope + j] * u;
        } else {
          a.tanh[i] = gelu_tanh(u);
          a.act[i] = 0.5 * u * (1 + a.tanh[i]);
        }
      }
    double* next = l + 1 < L ? acts_[l + 1].x.data() : out_.data();
    linear(a.act.data(), theta + w.fcprojw, theta + w.fcprojb, n, C, F, next, scratch_);
    for (std::size_t i = 0; i < nC; ++i) next[i] += a.mid[i];
  }
  layernorm(out_.data(), theta + layout_.lnfw, theta + layout_.lnfb, n, C, lnf_.data(), meanf_.data(), rstdf_.data());
  // logits [n, V] = lnf wte^T (tied); the loss summed over the positions.
  linear<T>(lnf_.data(), theta + layout_.wte, nullptr, n, V, C, probs_.data(), scratch_);
  double loss = 0;
  for (int t = 0; t < n; ++t) {
    double* p = &probs_[static_cast<std::size_t>(t) * V];
    const double mx = *std::max_element(p, p + V);
    double z = 0;
    for (int v = 0; v < V; ++v) z += (p[v] = std::exp(p[v] - mx));
    for (int v = 0; v < V; ++v) p[v] /= z;
    loss -= std::log(p[targets[t]]);
  }
  if (!grad) return loss;

  // Backward. d logits = p - onehot(target); the tied embedding gets it from both ends.
  std::vector<double> dlnf(nC, 0.0), dx(nC, 0.0);
  for (int t = 0; t < n; ++t) probs_[static_cast<std::size_t>(t) * V + targets[t]] -= 1;
  linear_backward(probs_.data(), lnf_.data(), theta + layout_.wte, n, V, C, dlnf.data(), grad + layout_.wte,
                  static_cast<T*>(nullptr), scale, scratch_);
  layernorm_backward(dlnf.data(), out_.data(), meanf_.data(), rstdf_.data(), theta + layout_.lnfw, n, C, dx.data(),
                     grad + layout_.lnfw, grad + layout_.lnfb, scale);
  std::vector<double> dmid(nC), dact, dfc, dln(nC), dy(nC), dqkv(3 * nC);
  scratch_.datt.resize(n);
  for (int l = L - 1; l >= 0; --l) {
    const GptLayout::Layer& w = layout_.layer[l];
    Layer& a = acts_[l];
    // dx holds d/d(block output) = d/d(mid) through the residual, plus the MLP path.
    dmid = dx;
    dact.assign(static_cast<std::size_t>(n) * F, 0.0);
    linear_backward(dx.data(), a.act.data(), theta + w.fcprojw, n, C, F, dact.data(), grad + w.fcprojw,
                    grad + w.fcprojb, scale, scratch_);
    dfc.assign(static_cast<std::size_t>(n) * F, 0.0);
    for (int t = 0; t < n; ++t)
      for (int j = 0; j < F; ++j) {
        const std::size_t i = static_cast<std::size_t>(t) * F + j;
        const double u = a.fc[i];
        if (c_.prelu) {
          dfc[i] = dact[i] * (u > 0 ? 1.0 : static_cast<double>(theta[w.slope + j]));
          if (u <= 0) grad[w.slope + j] = static_cast<T>(grad[w.slope + j] + scale * dact[i] * u);
        } else {
          dfc[i] = dact[i] * gelu_grad(u, a.tanh[i]);
        }
      }
    std::fill(dln.begin(), dln.end(), 0.0);
    linear_backward(dfc.data(), a.ln2.data(), theta + w.fcw, n, F, C, dln.data(), grad + w.fcw, grad + w.fcb, scale, scratch_);
    layernorm_backward(dln.data(), a.mid.data(), a.mean2.data(), a.rstd2.data(), theta + w.ln2w, n, C, dmid.data(),
                       grad + w.ln2w, grad + w.ln2b, scale);
    // mid = x + W_O y + b: dx = dmid (residual) + the attention path.
    dx = dmid;
    std::fill(dy.begin(), dy.end(), 0.0);
    linear_backward(dmid.data(), a.y.data(), theta + w.projw, n, C, C, dy.data(), grad + w.projw, grad + w.projb,
                    scale, scratch_);
    std::fill(dqkv.begin(), dqkv.end(), 0.0);
    for (int h = 0; h < H; ++h)
      for (int t = 0; t < n; ++t) {
        const double* row = &a.att[(static_cast<std::size_t>(h) * n + t) * n];
        const double* dyt = &dy[static_cast<std::size_t>(t) * C + h * D];
        // d att[t, j] = dy_t . v_j; softmax backward; then q, k and v.
        double* datt = scratch_.datt.data();
        double mean = 0;
        for (int j = 0; j <= t; ++j) {
          const double* v = &a.qkv[static_cast<std::size_t>(j) * 3 * C + 2 * C + h * D];
          double* dv = &dqkv[static_cast<std::size_t>(j) * 3 * C + 2 * C + h * D];
          double s = 0;
          for (int e = 0; e < D; ++e) s += dyt[e] * v[e], dv[e] += row[j] * dyt[e];
          datt[j] = s;
          mean += row[j] * s;
        }
        const double* q = &a.qkv[static_cast<std::size_t>(t) * 3 * C + h * D];
        double* dq = &dqkv[static_cast<std::size_t>(t) * 3 * C + h * D];
        for (int j = 0; j <= t; ++j) {
          const double ds = row[j] * (datt[j] - mean) * att_scale;
          const double* k = &a.qkv[static_cast<std::size_t>(j) * 3 * C + C + h * D];
          double* dk = &dqkv[static_cast<std::size_t>(j) * 3 * C + C + h * D];
          for (int e = 0; e < D; ++e) dq[e] += ds * k[e], dk[e] += ds * q[e];
        }
      }
    std::fill(dln.begin(), dln.end(), 0.0);
    linear_backward(dqkv.data(), a.ln1.data(), theta + w.qkvw, n, 3 * C, C, dln.data(), grad + w.qkvw, grad + w.qkvb,
                    scale, scratch_);
    layernorm_backward(dln.data(), a.x.data(), a.mean1.data(), a.rstd1.data(), theta + w.ln1w, n, C, dx.data(),
                       grad + w.ln1w, grad + w.ln1b, scale);
  }
  for (int t = 0; t < n; ++t)
    for (int i = 0; i < C; ++i) {
      const double d = scale * dx[static_cast<std::size_t>(t) * C + i];
      T& e = grad[layout_.wte + static_cast<std::size_t>(tokens[t]) * C + i];
      T& p = grad[layout_.wpe + static_cast<std::size_t>(t) * C + i];
      e = static_cast<T>(e + d), p = static_cast<T>(p + d);
    }
  return loss;
}

template class Gpt<float>;
template class Gpt<double>;

}  // namespace tokdyn
