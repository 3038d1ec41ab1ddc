package conformance

import "errors"

// ErrMismatch is wrapped by Case.Check when an outcome differs from the
// case's expectation.
var ErrMismatch = errors.New("conformance: outcome differs from the expected one")
