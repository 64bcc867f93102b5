// Distances between probability measures on S^{d-1} for the propagation-of-chaos study (Prop 1.2):
// W2(mu^N_t, mu_t) between the N-token empirical measure and the mean-field solution.
//
// Inputs are whole (gathered) arrays, no MPI. Points are row-major [n, d]; angles on S^1 are in radians
// (any real value, taken mod 2 pi). A weight span [n] holds masses >= 0 summing to 1 (checked to 1e-9,
// then renormalised); an empty weight span means uniform weights 1/n. Wrong sizes, negative or
// non-finite masses and non-finite coordinates throw InputError.
// Conditioning: W2 is only Hoelder-1/2 in the masses, so masses that differ by rounding (~1e-16) can give
// W2 ~ 1e-8 between otherwise equal measures; the same measure listed in another order gives ~1e-15.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tokdyn {

// ---- Exact W2 on the circle (circular_transport.cpp) ----

// Exact 2-Wasserstein distance on the unit circle, cost = (arc length)^2, between
// mu = sum_i a_i delta_{phi_i} and nu = sum_j b_j delta_{psi_j}; angles_a [n], weights_a [n] or empty,
// angles_b [m], weights_b [m] or empty. Delon-Salomon-Sobolevski: W2^2 = min_alpha int_0^1
// |F^{-1}(t) - G~^{-1}(t + alpha)|^2 dt with G~ the periodic lift of nu's CDF; the objective is convex and
// piecewise linear in alpha and is minimised exactly: bracketing with cutting-plane (Kelley) steps,
// certified by the convexity lower bound, then C evaluated at the kink itself. O((n + m) log(n + m)) for
// the sorts plus O(n + m) per step; ~10 steps at n ~ 10, ~30 at n = m = 10^6.
double circular_w2(std::span<const double> angles_a, std::span<const double> weights_a,
                   std::span<const double> angles_b, std::span<const double> weights_b);

// Same distance with mu a piecewise-constant density on M equal cells [2 pi j/M, 2 pi (j+1)/M):
// cell_masses [M] = mass of each cell (>= 0, summing to 1; density = cell_masses[j] * M / (2 pi)), as the
// grid mean-field solver stores it. mu's quantile function is piecewise linear, the objective piecewise
// quadratic in alpha; minimised the same way with secant steps on the slope (exact on one quadratic
// piece, ~5 steps).
double circular_w2_density(std::span<const double> cell_masses, std::span<const double> angles,
                           std::span<const double> weights);

// Exact W2 on the real line, cost |x - y|^2, between weighted point sets values_a [n], values_b [m]:
// the L2 distance of the quantile functions. Used by sliced_w2.
double line_w2(std::span<const double> values_a, std::span<const double> weights_a,
               std::span<const double> values_b, std::span<const double> weights_b);

// ---- Exact W2 on S^{d-1} by assignment (assignment.cpp) ----

enum class SphereCost {
  geodesic,  // c(x, y) = arccos(<x, y>)^2 (computed as (2 atan2(|x - y|, |x + y|))^2, accurate near 0 and pi)
  chordal,   // c(x, y) = |x - y|^2
};

// Minimum-cost perfect matching of an M x M cost matrix (row-major [M, M], finite): column[i] matched to
// row i. Shortest augmenting paths with dual potentials (Jonker-Volgenant, in Crouse's 2016 form as in
// SciPy's linear_sum_assignment); O(M^3) worst case.
std::vector<std::int64_t> solve_assignment(std::span<const double> cost, std::int64_t M);

// W2 on S^{d-1} between the uniform measures on the rows of x [n, d] and y [m, d] (unit vectors, checked to
// 1e-8 in |x|^2), with m a multiple of n or n a multiple of m: the smaller set is repeated to M = max(n, m)
// points and the M x M assignment is exact (Birkhoff: uniform-to-uniform optimal plans include permutations).
// Memory M^2 doubles (32 MB at M = 2000).
double assignment_w2(std::span<const double> x, std::span<const double> y, int d, SphereCost cost);

// ---- Sliced W2 and MMD (measure_distance.cpp) ----

// The unit directions theta_p, p < count, used by sliced_w2: normalised N(0, I_d) draws of
// RandomStream(seed, Purpose::sliced_w2) at (step 0, index p). Output [count, d].
std::vector<double> sliced_directions(std::uint64_t seed, std::int64_t count, int d);

// Sliced W2 (chordal, in R^d): sqrt( (1/P) sum_p W2^2(<theta_p, .>#mu, <theta_p, .>#nu) ), the 1-D
// distances exact. x [n, d], y [m, d], any weights, P = directions. Independent of the order of the points.
// Normalisation: with uniform directions E_theta W2^2(projections) <= W2^2 / d (equality for two Diracs),
// and for the P directions used, SW^2 <= lambda_max((1/P) sum_p theta_p theta_p^T) W2^2 <= W2^2.
double sliced_w2(std::span<const double> x, std::span<const double> weights_x, std::span<const double> y,
                 std::span<const double> weights_y, int d, std::int64_t directions, std::uint64_t seed);

// MMD^2 with kernel k(x, y) = e^{beta <x, y>}, beta >= 0 (positive definite):
// E k(X, X') + E k(Y, Y') - 2 E k(X, Y) for weighted points x [n, d], y [m, d]. Direct O((n + m)^2 / 2):
// one compensated sum over the signed measure mu - nu of e^beta expm1(beta (<z, z'> - 1)), so the
// e^beta-sized constants cancel exactly rather than in rounding. May be ~ -1e-16 e^beta when mu ~ nu.
double mmd_squared(std::span<const double> x, std::span<const double> weights_x, std::span<const double> y,
                   std::span<const double> weights_y, int d, double beta);
// The same MMD^2 in O(n m) when the energies E_beta(mu) = (1/2) sum_ij a_i a_j (e^beta - e^{beta <x_i, x_j>})
// and E_beta(nu) are known (a study has them from its distributed pair pass): 2 D(mu, nu) - 2 E_beta(mu)
// - 2 E_beta(nu) with D(mu, nu) = sum_ij a_i b_j (e^beta - e^{beta <x_i, y_j>}) in the expm1 form.
double mmd_squared_from_energies(std::span<const double> x, std::span<const double> weights_x,
                                 std::span<const double> y, std::span<const double> weights_y, int d, double beta,
                                 double energy_x, double energy_y);
// sqrt(max(0, mmd_squared)).
double mmd(std::span<const double> x, std::span<const double> weights_x, std::span<const double> y,
           std::span<const double> weights_y, int d, double beta);

// MMD^2 on S^1 by Fourier series, O((n + m) p): e^{beta cos s} = sum_{k in Z} I_k(beta) e^{iks} gives
// MMD^2 = sum_k I_k(beta) |C_k(mu) - C_k(nu)|^2, C_k = sum_j w_j e^{i k phi_j}; truncated at the first p with
// p >= beta and tail bound 16 I_{p+1}(beta) <= 1e-16 e^beta. 0 <= beta <= 700 (std::cyl_bessel_i range).
double mmd_squared_circle(std::span<const double> angles_a, std::span<const double> weights_a,
                          std::span<const double> angles_b, std::span<const double> weights_b, double beta);

}  // namespace tokdyn
