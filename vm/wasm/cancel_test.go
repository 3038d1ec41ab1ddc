package wasm_test

import (
	"context"
	"time"
)

func ctxWithCancelAfter(d time.Duration) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(ctx)
	time.AfterFunc(d, cancel)
	return c, cancel
}
