package curve

import "errors"

// ErrDims is returned by New for a number of dimensions outside 1..MaxDims.
var ErrDims = errors.New("curve: dims must be between 1 and 8")

// ErrKind is returned by ParseKind for a name that is neither "hilbert" nor
// "morton", and by New for a Kind value that names no curve.
var ErrKind = errors.New("curve: unknown curve kind (want hilbert or morton)")
