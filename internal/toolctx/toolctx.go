// Package toolctx carries one tool call in a body's context: its id and
// what publishes the body's progress. The loop makes the context ([With],
// or [Call.Init] in memory of its own); package tools reads it for the
// body (tools.CallID, tools.ReportProgress). R is the progress report's
// type, tools.Result.
package toolctx

import "context"

// key is the context key of the call a body runs for.
type key struct{}

// Reporter publishes a body's progress.
type Reporter[R any] interface {
	Report(partial R)
}

// Func is a function as a Reporter.
type Func[R any] func(partial R)

// Report calls f.
func (f Func[R]) Report(partial R) { f(partial) }

// Call is a context carrying one tool call. Its zero value is not a
// context: Init makes it one. A caller that keeps a call's state in a
// struct of its own can hold a Call there, so that the context costs no
// allocation of its own.
type Call[R any] struct {
	context.Context
	id       string
	progress Reporter[R]
}

// Init makes c ctx carrying one tool call: its id, and what publishes the
// body's progress (nil publishes nothing). It returns c.
func (c *Call[R]) Init(ctx context.Context, id string, progress Reporter[R]) context.Context {
	*c = Call[R]{Context: ctx, id: id, progress: progress}
	return c
}

// Value returns c itself for the call key, else ctx's value.
func (c *Call[R]) Value(k any) any {
	if k == (key{}) {
		return c
	}
	return c.Context.Value(k)
}

// With returns ctx carrying one tool call: its id, and the function that
// publishes the body's progress (nil publishes nothing).
func With[R any](ctx context.Context, id string, progress func(partial R)) context.Context {
	var r Reporter[R]
	if progress != nil {
		r = Func[R](progress)
	}
	return new(Call[R]).Init(ctx, id, r)
}

// ID returns the id of the call ctx carries, or "".
func ID[R any](ctx context.Context) string {
	if c, ok := ctx.Value(key{}).(*Call[R]); ok {
		return c.id
	}
	return ""
}

// Report publishes partial through the call ctx carries; without a call,
// or without a progress function, it does nothing.
func Report[R any](ctx context.Context, partial R) {
	if c, ok := ctx.Value(key{}).(*Call[R]); ok && c.progress != nil {
		c.progress.Report(partial)
	}
}
