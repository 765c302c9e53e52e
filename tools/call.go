package tools

import "context"

// callKey is the context key of the call a body runs for.
type callKey struct{}

// callCtx is a context carrying one tool call, in one allocation.
type callCtx struct {
	context.Context
	id       string
	progress func(partial Result)
}

func (c *callCtx) Value(key any) any {
	if key == (callKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// WithCall returns ctx carrying one tool call: its id, and the function
// that publishes the body's progress. The loop gives every body such a
// context; a test of a tool's body can make one too.
func WithCall(ctx context.Context, id string, progress func(partial Result)) context.Context {
	return &callCtx{Context: ctx, id: id, progress: progress}
}

// CallID returns the id of the tool call a body runs for, or "" when ctx
// carries no call.
func CallID(ctx context.Context) string {
	if c, ok := ctx.Value(callKey{}).(*callCtx); ok {
		return c.id
	}
	return ""
}

// ReportProgress publishes a partial result of the running body: the loop
// sends it as a tool_execution_update event (the model does not see it).
// Reports made after the body returned, or with a ctx that carries no
// call, are ignored.
func ReportProgress(ctx context.Context, partial Result) {
	if c, ok := ctx.Value(callKey{}).(*callCtx); ok && c.progress != nil {
		c.progress(partial)
	}
}
