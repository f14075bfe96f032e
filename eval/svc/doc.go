// Package svc is a binary C-support-vector classifier with an RBF kernel,
// written to reproduce scikit-learn's SVC(C=3, gamma='auto', kernel='rbf')
// (which wraps LIBSVM) as used by SalUn's SVC_MIA membership-inference
// score.
//
// # Algorithm
//
// The dual problem
//
//	min_α ½ αᵀQα − eᵀα   s.t. yᵀα = 0, 0 ≤ αᵢ ≤ C,   Qᵢⱼ = yᵢyⱼK(xᵢ, xⱼ)
//
// is solved by sequential minimal optimisation as in LIBSVM: second-order
// working-set selection (WSS3 of Fan, Chen & Lin 2005) with τ = 1e-12 for
// non-positive curvature, the maximal-violating-pair stopping rule
// m(α) − M(α) < Tol (default 1e-3), shrinking with LIBSVM's one-time
// "unshrink" when the violation first drops below 10·Tol, gradient
// reconstruction from Ḡ (the gradient part contributed by bounded
// variables) when the problem is unshrunk, and an LRU cache of kernel rows
// held to a byte budget (default 200 MB, scikit-learn's cache_size). The bias
// ρ is the mean of yᵢ∇ᵢf over free support vectors, or the midpoint of the
// feasible interval when no variable is free.
//
// The kernel is K(u, v) = exp(−γ‖u − v‖²) with γ = 1/n_features when
// Options.Gamma is 0 (scikit-learn's gamma='auto'). During training the
// entries of Q are computed in float64 from precomputed squared norms,
// exp(−γ(‖u‖² + ‖v‖² − 2u·v)), and cached rounded to float32, as LIBSVM
// does (its Qfloat); the solver's own state (α, ∇f, Ḡ, ρ) is float64. With
// these choices Fit repeats scikit-learn's SMO iterations exactly, so the
// iteration count, the support vectors and the decision values agree with
// scikit-learn to rounding (≈1e-12) on the parity fixtures.
// Options.KernelFloat64 caches float64 instead: more precise, but then the
// iterations drift from scikit-learn's and decision values agree to ≈1e-3.
// At prediction the kernel is computed from the differences u − v in
// float64, as LIBSVM's k_function does.
//
// # Conventions
//
//   - Labels are 0 and 1 and both must occur. As in scikit-learn (which
//     sorts the classes before calling LIBSVM) class 0 is LIBSVM's internal
//     +1 class, and the training points are presented to the solver grouped
//     by class (all class-0 points, then all class-1 points, each in input
//     order), which is the order LIBSVM's solver sees; ties in working-set
//     selection are therefore broken the same way.
//   - DecisionFunction follows scikit-learn: positive values mean class 1,
//     f(x) = Σᵢ dᵢK(svᵢ, x) + b with d = DualCoef() and b = Intercept().
//     Predict returns 1 where f(x) ≥ 0 (LIBSVM assigns a zero decision value
//     to the second class).
//   - Support vectors are ordered like scikit-learn's support_: class 0 first,
//     then class 1, each in input order.
//   - Inputs are never modified. Fit reports bad input as errors wrapping the
//     package's Err values; Predict and DecisionFunction panic on rows whose
//     length differs from the training dimension (a programming error, as for
//     gonum's shape mismatches).
//
// # References
//
//   - C.-C. Chang and C.-J. Lin. LIBSVM: a library for support vector
//     machines. ACM Transactions on Intelligent Systems and Technology,
//     2(3):27:1–27:27, 2011. https://www.csie.ntu.edu.tw/~cjlin/libsvm
//   - R.-E. Fan, P.-H. Chen and C.-J. Lin. Working set selection using second
//     order information for training support vector machines. Journal of
//     Machine Learning Research, 6:1889–1918, 2005.
//   - T. Joachims. Making large-scale SVM learning practical. In Advances in
//     Kernel Methods, 1999 (shrinking).
package svc
