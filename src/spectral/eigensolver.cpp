#include "tokdyn/spectral/eigensolver.hpp"

#include <slepceps.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "tokdyn/core/deck/deck.hpp"
#include "tokdyn/core/errors/error.hpp"
#include "tokdyn/core/console/phases.hpp"
#include "tokdyn/core/petsc/petsc_owned.hpp"
#include "tokdyn/core/numerics/random.hpp"
#include "tokdyn/spectral/dense_eigen.hpp"

namespace tokdyn {

PetscErrorCode set_up_eps(EPS eps) {
  PetscFunctionBeginUser;
  PetscCall(EPSSetProblemType(eps, EPS_NHEP));
  PetscCall(EPSSetType(eps, EPSKRYLOVSCHUR));
  PetscFunctionReturn(0);
}

namespace {

// One eigenvalue, or a conjugate pair (im > 0 member), with where the solver keeps it.
struct Item {
  int index;  // SLEPc's index, or dense_eigen's row
  bool pair;
  double re, im, modulus;
};

void sort_items(std::vector<Item>& items, Which which) {
  std::stable_sort(items.begin(), items.end(), [which](const Item& x, const Item& y) {
    if (which == Which::largest_real) {
      if (x.re != y.re) return x.re > y.re;
      return x.modulus > y.modulus;
    }
    if (x.modulus != y.modulus) return x.modulus > y.modulus;
    return x.re > y.re;
  });
}

// The items that fill at most nev rows (a pair takes two; one cut by nev keeps its first row).
std::vector<Item> leading(std::vector<Item> items, Which which, int nev) {
  sort_items(items, which);
  std::vector<Item> kept;
  int rows = 0;
  for (const Item& it : items) {
    if (rows >= nev) break;
    kept.push_back(it);
    rows += it.pair ? 2 : 1;
  }
  return kept;
}

double global_sum(MPI_Comm comm, double local) {
  double s = 0;
  TOKDYN_MPI_CHECK(MPI_Allreduce(&local, &s, 1, MPI_DOUBLE, MPI_SUM, comm));
  return s;
}

// Unit 2-norm and a phase that does not depend on the solver or the rank count: the component of largest
// modulus (the lowest index among those within 1e-8 of it, so round-off cannot move the choice) becomes
// real and positive. re, im (null for a real vector): this rank's n entries, global index begin + i.
void fix_phase(MPI_Comm comm, std::int64_t begin, std::int64_t n, double* re, double* im) {
  double local = 0, largest = 0;
  for (std::int64_t i = 0; i < n; ++i) local = std::max(local, std::hypot(re[i], im ? im[i] : 0.0));
  TOKDYN_MPI_CHECK(MPI_Allreduce(&local, &largest, 1, MPI_DOUBLE, MPI_MAX, comm));
  std::int64_t mine = std::numeric_limits<std::int64_t>::max(), first = 0;
  for (std::int64_t i = 0; i < n; ++i)
    if (std::hypot(re[i], im ? im[i] : 0.0) >= (1 - 1e-8) * largest) {
      mine = begin + i;
      break;
    }
  TOKDYN_MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT64_T, MPI_MIN, comm));
  double c[2] = {0, 0}, cg[2] = {0, 0}, sq = 0;
  if (first >= begin && first < begin + n) c[0] = re[first - begin], c[1] = im ? im[first - begin] : 0.0;
  for (std::int64_t i = 0; i < n; ++i) sq += re[i] * re[i] + (im ? im[i] * im[i] : 0.0);
  TOKDYN_MPI_CHECK(MPI_Allreduce(c, cg, 2, MPI_DOUBLE, MPI_SUM, comm));
  const double norm = std::sqrt(global_sum(comm, sq)), m = std::hypot(cg[0], cg[1]);
  if (norm == 0 || m == 0) return;
  // v <- v conj(c) / (|c| |v|)
  const double pr = cg[0] / (m * norm), pi = -cg[1] / (m * norm);
  for (std::int64_t i = 0; i < n; ++i) {
    const double a = re[i], b = im ? im[i] : 0.0;
    re[i] = a * pr - b * pi;
    if (im) im[i] = a * pi + b * pr;
  }
}

// Orthonormal basis (q1, q2) [2, n] of span(a, b) by Gram-Schmidt with global dot products.
std::vector<double> real_plane(MPI_Comm comm, std::int64_t n, const double* a, const double* b) {
  std::vector<double> q(2 * n);
  double aa = 0;
  for (std::int64_t i = 0; i < n; ++i) aa += a[i] * a[i];
  const double na = std::sqrt(global_sum(comm, aa));
  double ab = 0;
  for (std::int64_t i = 0; i < n; ++i) q[i] = a[i] / na, ab += q[i] * b[i];
  ab = global_sum(comm, ab);
  double bb = 0;
  for (std::int64_t i = 0; i < n; ++i) q[n + i] = b[i] - ab * q[i], bb += q[n + i] * q[n + i];
  const double nb = std::sqrt(global_sum(comm, bb));
  for (std::int64_t i = 0; i < n; ++i) q[n + i] /= nb;
  return q;
}

// What every solver shares: r holds whole pairs (converged may be nev + 1 when nev cuts a pair); fixes the
// phases on whole pairs, then cuts to nev rows, then the plane of a complex leading pair and the gap.
void finish(MPI_Comm comm, const Partition& rows, int rank, const EigenSettings& s, int nev, EigenResult& r) {
  const std::int64_t begin = rows.begin(rank), n = rows.count(rank);
  auto fix_all = [&](std::vector<double>& v) {
    for (int k = 0; k < r.converged; ++k) {
      const bool pair = r.im[k] > 0;
      fix_phase(comm, begin, n, &v[k * n], pair ? &v[(k + 1) * n] : nullptr);
      if (pair) ++k;
    }
  };
  fix_all(r.right);
  if (s.left) fix_all(r.left);
  r.converged = std::min(r.converged, nev);
  r.re.resize(r.converged);
  r.im.resize(r.converged);
  r.residual.resize(r.converged);
  r.right.resize(static_cast<std::size_t>(r.converged) * n);
  if (s.left) r.left.resize(r.right.size()), r.left_residual.resize(r.converged);
  r.complex_leading = r.converged > 0 && r.im[0] != 0;
  if (r.complex_leading && r.converged > 1) r.plane = real_plane(comm, n, &r.right[0], &r.right[n]);
  r.gap = spectral_gap(r.re, r.im);
  if (!s.vectors) {
    r.right.clear();
    r.left.clear();
  }
}

// ---- SLEPc ----

// y = F x or F^T x through the layer operator in the shell's context (MATOP_MULT, MATOP_MULT_TRANSPOSE).
template <void (LayerOperator::*product)(const double*, double*) const>
PetscErrorCode shell_product(Mat a, Vec x, Vec y) {
  PetscFunctionBeginUser;
  const LayerOperator* op = nullptr;
  PetscCall(MatShellGetContext(a, &op));
  const PetscScalar* xa = nullptr;
  PetscScalar* ya = nullptr;
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArray(y, &ya));
  try {
    (op->*product)(xa, ya);
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "layer operator: %s", e.what());
  }
  PetscCall(VecRestoreArray(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

// Progress of a long solve: restarts, converged pairs and the first unconverged error estimate.
struct Monitor {
  int rank = 0;
  double interval = 0, start = 0, last = 0;
};

PetscErrorCode monitor_progress(EPS eps, PetscInt its, PetscInt nconv, PetscScalar*, PetscScalar*, PetscReal* errest,
                                PetscInt nest, void* ctx) {
  PetscFunctionBeginUser;
  Monitor* m = static_cast<Monitor*>(ctx);
  const double now = MPI_Wtime();
  if (m->rank == 0 && now - m->last >= m->interval) {
    PetscInt nev = 0;
    PetscCall(EPSGetDimensions(eps, &nev, nullptr, nullptr));
    const double next = nconv < nest ? errest[nconv] : 0.0;
    std::printf("  restart %d: %d/%d converged, next error estimate %.2e, %.1f s\n", static_cast<int>(its),
                static_cast<int>(nconv), static_cast<int>(nev), next, now - m->start);
    std::fflush(stdout);
    m->last = now;
  }
  PetscFunctionReturn(0);
}

// Copies this rank's entries of a PETSc vector into out.
void copy_local(Vec v, std::int64_t n, double* out) {
  const PetscScalar* a = nullptr;
  TOKDYN_PETSC_CHECK(VecGetArrayRead(v, &a));
  std::copy(a, a + n, out);
  TOKDYN_PETSC_CHECK(VecRestoreArrayRead(v, &a));
}

// Right eigenpairs of a (d x d, ownership rows): the deck's settings, then the options database (-eps_*),
// then the solve. Whole pairs, in the order of `which`, at most nev rows plus the partner of a cut pair.
EigenResult solve_right(MPI_Comm comm, Mat a, const Partition& rows, const EigenSettings& s) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::int64_t begin = rows.begin(rank), n = rows.count(rank);
  OwnedEps eps;
  TOKDYN_PETSC_CHECK(EPSCreate(comm, eps.out()));
  TOKDYN_PETSC_CHECK(EPSSetOperators(eps, a, nullptr));
  TOKDYN_PETSC_CHECK(set_up_eps(eps));
  TOKDYN_PETSC_CHECK(EPSSetDimensions(eps, s.nev, s.ncv > 0 ? s.ncv : PETSC_DEFAULT, s.mpd > 0 ? s.mpd : PETSC_DEFAULT));
  TOKDYN_PETSC_CHECK(EPSSetTolerances(eps, s.tol, s.max_it > 0 ? s.max_it : PETSC_DEFAULT));
  TOKDYN_PETSC_CHECK(EPSSetWhichEigenpairs(
      eps, s.which == Which::largest_real ? EPS_LARGEST_REAL : EPS_LARGEST_MAGNITUDE));
  // A start vector keyed by global row: the same Krylov space at any rank count.
  OwnedVec start, xr, xi;
  TOKDYN_PETSC_CHECK(MatCreateVecs(a, start.out(), nullptr));
  {
    const RandomStream rng(s.seed, Purpose::eigensolver_start);
    PetscScalar* v = nullptr;
    TOKDYN_PETSC_CHECK(VecGetArrayWrite(start, &v));
    for (std::int64_t i = 0; i < n; ++i) v[i] = rng.normal4(0, static_cast<std::uint64_t>(begin + i), 0)[0];
    TOKDYN_PETSC_CHECK(VecRestoreArrayWrite(start, &v));
  }
  // Finite weights can still make F overflow (entries of 1e160): SLEPc would stop on some ranks only, in its
  // orthogonalisation, and leave the others waiting. One product first, and every rank agrees it is finite.
  {
    OwnedVec product;
    TOKDYN_PETSC_CHECK(MatCreateVecs(a, nullptr, product.out()));
    TOKDYN_PETSC_CHECK(MatMult(a, start, product));
    const PetscScalar* p = nullptr;
    bool finite = true;
    TOKDYN_PETSC_CHECK(VecGetArrayRead(product, &p));
    for (std::int64_t i = 0; i < n; ++i) finite = finite && std::isfinite(p[i]);
    TOKDYN_PETSC_CHECK(VecRestoreArrayRead(product, &p));
    product.reset();
    require_all(comm, finite,
                "the layer matrix overflows double precision (NaN or Inf in its product with the start vector): "
                "weights too large?");
  }
  Vec space[1] = {start};
  TOKDYN_PETSC_CHECK(EPSSetInitialSpace(eps, 1, space));
  Monitor monitor{rank, s.progress_interval, MPI_Wtime(), MPI_Wtime()};
  if (s.progress_interval > 0) TOKDYN_PETSC_CHECK(EPSMonitorSet(eps, monitor_progress, &monitor, nullptr));
  TOKDYN_PETSC_CHECK(EPSSetFromOptions(eps));
  {
    PhaseScope timed(Phase::eigensolve);
    TOKDYN_PETSC_CHECK(EPSSolve(eps));
  }

  EigenResult r;
  PetscInt nev = 0, nconv = 0, its = 0;
  TOKDYN_PETSC_CHECK(EPSGetDimensions(eps, &nev, nullptr, nullptr));
  TOKDYN_PETSC_CHECK(EPSGetConverged(eps, &nconv));
  TOKDYN_PETSC_CHECK(EPSGetIterationNumber(eps, &its));
  EPSType type = nullptr;
  TOKDYN_PETSC_CHECK(EPSGetType(eps, &type));
  r.nev = static_cast<int>(nev);
  r.iterations = static_cast<int>(its);
  r.method = type;
  r.residual_definition = "|A v - lambda v| / |lambda v| (SLEPc EPS_ERROR_RELATIVE)";

  std::vector<Item> items;
  for (PetscInt i = 0; i < nconv; ++i) {
    PetscScalar kr = 0, ki = 0;
    TOKDYN_PETSC_CHECK(EPSGetEigenvalue(eps, i, &kr, &ki));
    items.push_back({static_cast<int>(i), ki != 0, kr, std::abs(ki), std::hypot(kr, ki)});
    if (ki != 0) ++i;  // the conjugate follows
  }
  const std::vector<Item> kept = leading(items, s.which, r.nev);

  TOKDYN_PETSC_CHECK(MatCreateVecs(a, xr.out(), nullptr));
  TOKDYN_PETSC_CHECK(MatCreateVecs(a, xi.out(), nullptr));
  for (const Item& it : kept) r.converged += it.pair ? 2 : 1;
  r.re.resize(r.converged);
  r.im.resize(r.converged);
  r.residual.resize(r.converged);
  r.right.assign(static_cast<std::size_t>(r.converged) * n, 0.0);
  int k = 0;
  for (const Item& it : kept) {
    PetscScalar kr = 0, ki = 0;
    PetscReal error = 0;
    TOKDYN_PETSC_CHECK(EPSGetEigenpair(eps, it.index, &kr, &ki, xr, xi));
    TOKDYN_PETSC_CHECK(EPSComputeError(eps, it.index, EPS_ERROR_RELATIVE, &error));
    copy_local(xr, n, &r.right[k * n]);
    if (it.pair) {
      // SLEPc gives the member with im > 0 first; were it the other, conjugating flips the sign of Im v.
      copy_local(xi, n, &r.right[(k + 1) * n]);
      if (ki < 0)
        for (std::int64_t i = 0; i < n; ++i) r.right[(k + 1) * n + i] *= -1;
    }
    for (int p = 0; p < (it.pair ? 2 : 1); ++p) {
      r.re[k + p] = it.re;
      r.im[k + p] = p == 0 ? it.im : -it.im;
      r.residual[k + p] = error;
    }
    k += it.pair ? 2 : 1;
  }
  xi.reset();  // in reverse order of creation, each destroy checked
  xr.reset();
  start.reset();
  eps.reset();
  return r;
}

// Right pairs of a, and with s.left the left ones as right eigenvectors of a^T (u^H A = lambda u^H <=>
// A^T conj(u) = lambda conj(u)): a second solve, because SLEPc 3.18's two-sided Krylov–Schur stops with
// "Invalid permutation due to a 2x2 block" on complex pairs. Each right pair takes the left pair of the
// nearest eigenvalue; the kept rows end at the first pair without one (|difference| > 1e-6 |lambda|).
EigenResult solve_eps(MPI_Comm comm, Mat a, const Partition& rows, const EigenSettings& s) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::int64_t n = rows.count(rank);
  if (s.residual) TOKDYN_PETSC_CHECK(MatShift(a, 1.0));
  EigenResult r = solve_right(comm, a, rows, s);
  if (s.left) {
    OwnedMat at;
    TOKDYN_PETSC_CHECK(MatCreateTranspose(a, at.out()));
    const EigenResult l = solve_right(comm, at, rows, s);
    at.reset();
    r.left.assign(r.right.size(), 0.0);
    r.left_residual.assign(r.converged, 0.0);
    std::vector<bool> used(l.converged, false);
    int kept = 0;
    for (int k = 0; k < r.converged; ++k) {
      const bool pair = r.im[k] > 0;
      int best = -1;
      double distance = 0;
      for (int j = 0; j < l.converged; ++j) {
        if (used[j] || (l.im[j] > 0) != pair || l.im[j] < 0) continue;
        const double dj = std::hypot(l.re[j] - r.re[k], l.im[j] - r.im[k]);
        if (best < 0 || dj < distance) best = j, distance = dj;
      }
      if (best < 0 || distance > 1e-6 * std::hypot(r.re[k], r.im[k])) break;
      used[best] = true;
      for (int p = 0; p < (pair ? 2 : 1); ++p) {
        // conj: Im u = -Im w.
        const double sign = p == 0 ? 1.0 : -1.0;
        for (std::int64_t i = 0; i < n; ++i) r.left[(k + p) * n + i] = sign * l.right[(best + p) * n + i];
        r.left_residual[k + p] = l.residual[best];
      }
      kept = k + (pair ? 2 : 1);
      if (pair) ++k;
    }
    r.converged = kept;
  }
  finish(comm, rows, rank, s, r.nev, r);
  return r;
}

}  // namespace

double spectral_gap(const std::vector<double>& re, const std::vector<double>& im) {
  const std::size_t next = !re.empty() && im[0] != 0 ? 2 : 1;
  if (re.size() <= next) return std::numeric_limits<double>::quiet_NaN();
  const double l1 = std::hypot(re[0], im[0]);
  return l1 > 0 ? 1 - std::hypot(re[next], im[next]) / l1 : std::numeric_limits<double>::quiet_NaN();
}

EigenResult eigen_dense(MPI_Comm comm, const Partition& rows, std::vector<double> f_local, const EigenSettings& s) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::int64_t n = rows.count(rank), d = rows.n_global;
  OwnedMat a;
  TOKDYN_PETSC_CHECK(MatCreateDense(comm, n, n, d, d, nullptr, a.out()));
  PetscScalar* m = nullptr;
  PetscInt lda = 0;
  TOKDYN_PETSC_CHECK(MatDenseGetLDA(a, &lda));
  TOKDYN_PETSC_CHECK(MatDenseGetArrayWrite(a, &m));
  // PETSc keeps the local rows column-major: m[j lda + i] = F[begin + i, j].
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < d; ++j) m[j * lda + i] = f_local[i * d + j];
  f_local = {};
  TOKDYN_PETSC_CHECK(MatDenseRestoreArrayWrite(a, &m));
  TOKDYN_PETSC_CHECK(MatAssemblyBegin(a, MAT_FINAL_ASSEMBLY));
  TOKDYN_PETSC_CHECK(MatAssemblyEnd(a, MAT_FINAL_ASSEMBLY));
  EigenResult r = solve_eps(comm, a, rows, s);
  a.reset();
  return r;
}

EigenResult eigen_operator(MPI_Comm comm, const LayerOperator& op, const EigenSettings& s) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::int64_t n = op.rows().count(rank), d = op.d();
  OwnedMat a;
  // The residual is the operator's own (I + F): MatShift on a shell would work too, but one place is enough.
  EigenSettings plain = s;
  plain.residual = false;
  TOKDYN_PETSC_CHECK(MatCreateShell(comm, n, n, d, d, const_cast<LayerOperator*>(&op), a.out()));
  TOKDYN_PETSC_CHECK(
      MatShellSetOperation(a, MATOP_MULT, reinterpret_cast<void (*)(void)>(shell_product<&LayerOperator::apply>)));
  TOKDYN_PETSC_CHECK(
      MatShellSetOperation(a, MATOP_MULT_TRANSPOSE,
                           reinterpret_cast<void (*)(void)>(shell_product<&LayerOperator::apply_transpose>)));
  EigenResult r = solve_eps(comm, a, op.rows(), plain);
  a.reset();
  return r;
}

EigenResult eigen_lapack(MPI_Comm comm, const Partition& rows, std::vector<double> f_local, const EigenSettings& s) {
  int rank = 0;
  TOKDYN_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::int64_t n = rows.count(rank);
  const int d = static_cast<int>(rows.n_global);
  if (static_cast<double>(d) * d > std::numeric_limits<int>::max())
    throw InputError("spectrum.solver = lapack: d = " + std::to_string(d) + " is too large to gather on one rank");
  std::vector<int> counts(rows.ranks), displs(rows.ranks);
  for (int q = 0; q < rows.ranks; ++q) {
    counts[q] = static_cast<int>(rows.count(q) * d);
    displs[q] = static_cast<int>(rows.begin(q) * d);
  }
  EigenResult r;
  r.nev = s.nev;
  r.method = "lapack";
  r.residual_definition = "|A v - lambda v| / (|A|_F |v|) (dense_residual)";
  std::vector<double> a(rank == 0 ? static_cast<std::size_t>(d) * d : 0), right, left;  // [d, d], [kept, d]
  TOKDYN_MPI_CHECK(MPI_Gatherv(f_local.data(), counts[rank], MPI_DOUBLE, a.data(), counts.data(), displs.data(),
                               MPI_DOUBLE, 0, comm));
  f_local = {};
  int kept_rows = 0;
  // Rank 0 alone solves; the others wait in the broadcasts below. A failure there (dgeev's info, a matrix
  // holding NaN or Inf) is therefore told to every rank before anyone throws: it stops every rank, not one.
  std::string failure;
  if (rank == 0) {
    try {
      if (s.residual)
        for (int i = 0; i < d; ++i) a[static_cast<std::size_t>(i) * d + i] += 1;
      const DenseEigen e = dense_eigen(d, a.data(), s.left);
      // Left residuals as right ones of A^T: A^T conj(u) = lambda conj(u) (Im rows of pairs negated).
      DenseEigen conj_left;
      std::vector<double> at;
      if (s.left) {
        conj_left.n = d;
        conj_left.re = e.re;
        conj_left.im = e.im;
        conj_left.right = e.left;
        for (int k = 0; k + 1 < d; ++k)
          if (e.im[k] > 0) {
            for (int i = 0; i < d; ++i) conj_left.right[static_cast<std::size_t>(k + 1) * d + i] *= -1;
            ++k;
          }
        at.resize(a.size());
        for (int i = 0; i < d; ++i)
          for (int j = 0; j < d; ++j) at[static_cast<std::size_t>(j) * d + i] = a[static_cast<std::size_t>(i) * d + j];
      }
      std::vector<Item> items;
      for (int k = 0; k < d; ++k) {
        items.push_back({k, e.im[k] != 0, e.re[k], std::abs(e.im[k]), std::hypot(e.re[k], e.im[k])});
        if (e.im[k] != 0) ++k;
      }
      for (const Item& it : leading(items, s.which, s.nev)) {
        const double residual = dense_residual(d, a.data(), e, it.index);
        const double left_residual = s.left ? dense_residual(d, at.data(), conj_left, it.index) : 0.0;
        for (int p = 0; p < (it.pair ? 2 : 1); ++p, ++kept_rows) {  // whole pairs until finish() cuts to nev
          r.re.push_back(e.re[it.index + p]);
          r.im.push_back(e.im[it.index + p]);
          r.residual.push_back(residual);
          if (s.left) r.left_residual.push_back(left_residual);
          right.insert(right.end(), &e.right[static_cast<std::size_t>(it.index + p) * d],
                       &e.right[static_cast<std::size_t>(it.index + p + 1) * d]);
          if (s.left)
            left.insert(left.end(), &e.left[static_cast<std::size_t>(it.index + p) * d],
                        &e.left[static_cast<std::size_t>(it.index + p + 1) * d]);
        }
      }
    } catch (const std::exception& e) {
      failure = std::string("spectrum.solver = lapack: ") + e.what();
    }
  }
  require_all(comm, failure.empty(), failure);
  a = {};
  TOKDYN_MPI_CHECK(MPI_Bcast(&kept_rows, 1, MPI_INT, 0, comm));
  r.converged = kept_rows;
  r.re.resize(kept_rows);
  r.im.resize(kept_rows);
  r.residual.resize(kept_rows);
  TOKDYN_MPI_CHECK(MPI_Bcast(r.re.data(), kept_rows, MPI_DOUBLE, 0, comm));
  TOKDYN_MPI_CHECK(MPI_Bcast(r.im.data(), kept_rows, MPI_DOUBLE, 0, comm));
  TOKDYN_MPI_CHECK(MPI_Bcast(r.residual.data(), kept_rows, MPI_DOUBLE, 0, comm));
  if (s.left) {
    r.left_residual.resize(kept_rows);
    TOKDYN_MPI_CHECK(MPI_Bcast(r.left_residual.data(), kept_rows, MPI_DOUBLE, 0, comm));
  }
  // Each rank keeps its entries of the vector rows.
  auto scatter = [&](std::vector<double>& all, std::vector<double>& out) {
    all.resize(static_cast<std::size_t>(kept_rows) * d);
    TOKDYN_MPI_CHECK(MPI_Bcast(all.data(), static_cast<int>(all.size()), MPI_DOUBLE, 0, comm));
    out.resize(static_cast<std::size_t>(kept_rows) * n);
    for (int k = 0; k < kept_rows; ++k)
      std::copy_n(&all[static_cast<std::size_t>(k) * d + rows.begin(rank)], n, &out[k * n]);
    all = {};
  };
  scatter(right, r.right);
  if (s.left) scatter(left, r.left);
  finish(comm, rows, rank, s, r.nev, r);
  return r;
}

bool use_krylov(const std::string& solver, int d, std::int64_t dense_max) {
  if (solver == "auto") return d > dense_max;
  return solver == "krylovschur";
}

void add_dense_max_key(DeckSchema& s) {
  // 2048: the dense problem (F, its eigenvectors and dgeev's work, 5 d^2 doubles) is 170 MB there, on
  // every rank that solves it; above, Krylov–Schur's matrix-free products need O(d D / P) per rank.
  s.add_int("spectrum.dense_max", 2048, "solver auto: the largest d solved by LAPACK (dgeev); Krylov-Schur above", 0);
}

}  // namespace tokdyn
