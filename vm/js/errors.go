package js

import "errors"

// ErrClosed is returned by Compile, Run and Eval after the sandbox, the
// program or the session has been closed.
var ErrClosed = errors.New("js: closed")
