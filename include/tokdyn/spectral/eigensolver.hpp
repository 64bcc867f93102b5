// The leading eigenpairs of a layer matrix distributed by rows: SLEPc Krylov–Schur on a dense MPI matrix
// or on the matrix-free operator, or LAPACK on the gathered matrix, with residuals, gap and real plane.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tokdyn/core/mpi/partition.hpp"
#include "tokdyn/core/petsc/petsc_owned.hpp"
#include "tokdyn/spectral/distributed_layer_matrix.hpp"

namespace tokdyn {

// The EPS set-up before EPSSetFromOptions: Krylov-Schur on a non-Hermitian problem. The one set-up: the
// solver below and the probe that checks single-dash options (studies/petsc_components.cpp) share it.
PetscErrorCode set_up_eps(EPS eps);

class DeckSchema;

enum class Which { largest_magnitude, largest_real };

struct EigenSettings {
  int nev = 10;                          // eigenpairs wanted (-eps_nev overrides it for Krylov–Schur)
  Which which = Which::largest_magnitude;
  bool residual = false;                 // solve I + F (r = 1): eigenvalues 1 + lambda
  bool left = false;                     // left eigenvectors too (Krylov–Schur on F^T; dgeev's VL)
  bool vectors = true;                   // keep the right (and left) eigenvectors
  // Krylov–Schur: 0 = SLEPc's default. tol: relative residual |F v - lambda v| / |lambda|.
  int ncv = 0, mpd = 0, max_it = 0;
  double tol = 1e-10;
  std::uint64_t seed = 1;                // the start vector (RandomStream, same at any rank count)
  double progress_interval = 0;          // > 0: a line on rank 0 this often during a Krylov–Schur solve
};

// Eigenpairs in the order of `which` (decreasing modulus, ties: larger real part; or decreasing real part,
// ties: larger modulus); a complex pair sits at k, k + 1 with im[k] > 0 and vector rows Re v, Im v (as
// dense_eigen), cut to Re v alone when nev splits it. Vectors have unit 2-norm and a fixed phase: the
// component of largest modulus (the lowest index among those within 1e-8 of it) is real and positive.
struct EigenResult {
  int nev = 0;                    // requested (after -eps_nev)
  int converged = 0;              // eigenvalues kept (a pair counts 2), <= nev: only converged ones
  std::vector<double> re, im;     // [converged]
  std::vector<double> residual;   // [converged]: relative residual norms (see residual_definition)
  std::string residual_definition;
  std::vector<double> right;      // [converged, rows]: this rank's entries of each vector row (vectors)
  std::vector<double> left;       // [converged, rows] when left (u^H F = lambda u^H)
  std::vector<double> left_residual;  // [converged] when left: the left vectors' relative residuals
  bool complex_leading = false;   // eigenvalue 0 has a nonzero imaginary part
  std::vector<double> plane;      // [2, rows]: orthonormal basis of span(Re v1, Im v1) when complex_leading
  double gap = 0;                 // spectral_gap of the kept eigenvalues (NaN when too few converged)
  std::string method;             // the SLEPc EPS type used, or "lapack"
  int iterations = 0;             // solver restarts (0 for lapack)
};

// doc/science.md section 7.4: g = 1 - |l2| / |l1|, or 1 - |l3| / |l1| when l1, l2 are a complex pair; l in the listed
// order (the eigenvalues of the operator solved, so 1 + lambda with the residual). NaN when the list
// is too short.
double spectral_gap(const std::vector<double>& re, const std::vector<double>& im);

// Krylov–Schur (or the EPS type -eps_type names; EPSSetFromOptions runs after these settings) on the
// dense row block f_local [rows.count(rank), d] of F, rows = Partition(d, P) (PETSc's ownership). f_local
// is released once PETSc holds its copy (pass it with std::move to keep one copy of F at a time).
EigenResult eigen_dense(MPI_Comm comm, const Partition& rows, std::vector<double> f_local, const EigenSettings& s);
// The same on the matrix-free operator (its transpose gives the left vectors). With left, both take a
// second solve on F^T and keep the pairs whose right and left vectors both converged.
EigenResult eigen_operator(MPI_Comm comm, const LayerOperator& op, const EigenSettings& s);
// LAPACK dgeev (dense_eigen) of the whole F gathered on rank 0, results broadcast: identical on every
// rank. Residuals: dense_residual, |F v - lambda v| / (|F|_F |v|).
EigenResult eigen_lapack(MPI_Comm comm, const Partition& rows, std::vector<double> f_local, const EigenSettings& s);

// The one choice between the dense and the Krylov solver, for every command that solves layer spectra:
// solver "lapack", "krylovschur", or "auto" (LAPACK for d <= dense_max, Krylov–Schur above). True: Krylov–Schur.
bool use_krylov(const std::string& solver, int d, std::int64_t dense_max);
// spectrum.dense_max, the d up to which "auto" means LAPACK (declared once, for spectrum and power).
void add_dense_max_key(DeckSchema& schema);

}  // namespace tokdyn
