/*
 * svd3.h: the singular value decomposition of a 3x3 matrix, and the
 * eigen-decomposition of a symmetric 3x3 matrix it is built on, in double.
 *
 * A = U diag(s) V^T with U and V proper rotations (det +1): the sign of a
 * reflection is carried by the last singular value instead, so s[0] >= s[1]
 * >= |s[2]| and only s[2] may be negative (the "signed SVD" of McAdams et
 * al.). That is the form the Umeyama fit wants: its reflection fix is then
 * just "use U V^T and the signed s" (umeyama.h).
 *
 * Method, after A. McAdams, A. Selle, R. Tamstorf, J. Teran, E. Sifakis,
 * "Computing the Singular Value Decomposition of 3x3 matrices with minimal
 * branching and elementary floating point operations", UW-Madison CS TR1690,
 * 2011: (1) V from the eigenvectors of the symmetric A^T A by cyclic Jacobi
 * rotations, (2) the columns of A V sorted by decreasing norm (V's columns
 * swapped with a sign change so det V stays +1), (3) U and the singular
 * values from the QR decomposition of A V by three Givens rotations, whose
 * pivots are non-negative by construction. Unlike the paper (single
 * precision, a fixed four sweeps of approximate Givens quaternions for SIMD)
 * the Jacobi rotations here are exact (Golub & Van Loan, "Matrix
 * Computations", 4th ed., sec. 8.5.2, the symmetric Schur decomposition) and
 * sweep until the off-diagonal part is below rounding. Rank-deficient and
 * zero matrices are fine: U and V stay orthonormal rotations (step 3 never
 * divides by a pivot), the vanishing singular values come out as ~0.
 *
 * Matrices are row-major double[3][3]. Nothing here allocates.
 */
#ifndef ANIM_SVD3_H
#define ANIM_SVD3_H

/* Eigen-decomposition of the symmetric matrix a (only its upper triangle is
 * read): a = Q diag(values) Q^T, values in decreasing order, Q a proper
 * rotation (its columns the eigenvectors). 0, or ANIM_ENONFINITE when a has
 * a NaN or infinity (outputs then undefined). */
int anim_sym3_eigen(const double a[3][3], double out_values[3], double out_q[3][3]);

/* Signed SVD of a (see above): out_u, out_v proper rotations, out_s with
 * s[0] >= s[1] >= |s[2]|, s[2] < 0 when det a < 0. Reconstructs a to about
 * 1e-15 of its largest singular value. 0, or ANIM_ENONFINITE. */
int anim_svd3(const double a[3][3], double out_u[3][3], double out_s[3], double out_v[3][3]);

#endif
