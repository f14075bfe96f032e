package svc

import "errors"

// Errors returned (wrapped with context) by Fit.
var (
	// ErrEmpty: no training points, or points with zero features.
	ErrEmpty = errors.New("svc: empty training set")
	// ErrShape: ragged rows, a flat slice whose length is not n·d, or a
	// label slice whose length differs from the number of points.
	ErrShape = errors.New("svc: shape mismatch")
	// ErrLabel: a label other than 0 or 1.
	ErrLabel = errors.New("svc: labels must be 0 or 1")
	// ErrOneClass: every training label is the same; a binary SVC needs both.
	ErrOneClass = errors.New("svc: training labels contain only one class")
	// ErrNonFinite: a NaN or infinite feature value.
	ErrNonFinite = errors.New("svc: non-finite feature value")
	// ErrOption: an invalid option (negative or non-finite C, Gamma, Tol, …).
	ErrOption = errors.New("svc: invalid option")
	// ErrMaxIter: the solver reached Options.MaxIter iterations before the
	// stopping tolerance was met. Fit still returns the model found so far.
	ErrMaxIter = errors.New("svc: maximum number of iterations reached")
)
