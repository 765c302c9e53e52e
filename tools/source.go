package tools

// A Source is a set of tools that may change while an agent runs, such as
// the tools of an MCP server (package tools/mcp). Tools returns the
// current set and a version that changes whenever the set does. The loop
// reads its sources before each model call, never in the middle of a
// batch of calls, and publishes an events.ToolsChanged when the set
// changed since the run's last call (loop.Config.ToolSources).
type Source interface {
	Tools() (set []*Tool, version uint64)
}

// ResultError is an error that carries the result the model should read:
// a body that returns one gets an error result with this content, rather
// than the error's text (an MCP server's result flagged isError, say),
// also when the error wraps it. errors.As finds it in an error:
//
//	if re := (*tools.ResultError)(nil); errors.As(err, &re) {
//		use(re.Result)
//	}
type ResultError struct {
	Result Result
}

// Error returns the result's text.
func (e *ResultError) Error() string {
	if t := e.Result.Text(); t != "" {
		return t
	}
	return "the tool failed"
}

// ErrorResult returns an error carrying r (see ResultError).
func ErrorResult(r Result) error { return &ResultError{Result: r} }
