package eval

import "errors"

// Errors returned (wrapped with context) by the package.
var (
	// ErrShape: logits, labels or indices that do not fit together.
	ErrShape = errors.New("eval: shape mismatch")
	// ErrNonFinite: a model produced NaN or infinite logits.
	ErrNonFinite = errors.New("eval: non-finite logits")
	// ErrEmptyForget: a forget set was given but holds no example.
	ErrEmptyForget = errors.New("eval: the forget set is empty")
	// ErrNoRetain: the forget set covers the whole training split, so no
	// retain example is left to act as a shadow member of the MIA.
	ErrNoRetain = errors.New("eval: no retain examples left for the membership-inference attack")
	// ErrNoTest: the test split is empty, so there are no shadow
	// non-members (MIA) and no test accuracy.
	ErrNoTest = errors.New("eval: the test split is empty")
	// ErrClasses: two models, or a model and a dataset, disagree on the
	// number of classes.
	ErrClasses = errors.New("eval: number of classes differs")
	// ErrTooFew: too few examples for a cross-validated attack.
	ErrTooFew = errors.New("eval: too few examples")
)
