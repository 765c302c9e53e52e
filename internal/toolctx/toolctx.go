// Package toolctx carries one tool call in a body's context: its id and
// the function that publishes the body's progress. The loop makes the
// context ([With]); package tools reads it for the body (tools.CallID,
// tools.ReportProgress). R is the progress report's type, tools.Result.
package toolctx

import "context"

// key is the context key of the call a body runs for.
type key struct{}

// call is a context carrying one tool call, in one allocation.
type call[R any] struct {
	context.Context
	id       string
	progress func(partial R)
}

func (c *call[R]) Value(k any) any {
	if k == (key{}) {
		return c
	}
	return c.Context.Value(k)
}

// With returns ctx carrying one tool call: its id, and the function that
// publishes the body's progress (nil publishes nothing).
func With[R any](ctx context.Context, id string, progress func(partial R)) context.Context {
	return &call[R]{Context: ctx, id: id, progress: progress}
}

// ID returns the id of the call ctx carries, or "".
func ID[R any](ctx context.Context) string {
	if c, ok := ctx.Value(key{}).(*call[R]); ok {
		return c.id
	}
	return ""
}

// Report publishes partial through the call ctx carries; without a call,
// or without a progress function, it does nothing.
func Report[R any](ctx context.Context, partial R) {
	if c, ok := ctx.Value(key{}).(*call[R]); ok && c.progress != nil {
		c.progress(partial)
	}
}
