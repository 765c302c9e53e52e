// Package toolcalls assembles the argument text of a streamed tool call,
// as every provider receives it: in fragments, up to a cap, judged whole
// or not at its end.
package toolcalls

import (
	"encoding/json"

	"github.com/agentloop/agentloop/internal/partialjson"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// Args is one call's argument text.
type Args struct {
	text     partialjson.Stream
	max      int // bytes kept; -1 for no cap
	total    int // bytes received, kept or not
	overflow bool
}

// New returns the arguments of a call that keeps up to max bytes of text
// (providers.RequestOptions.ArgumentLimit: -1 for no cap).
func New(max int) *Args { return &Args{max: max} }

// Write adds a fragment. It reports false when there is nothing to publish:
// an empty fragment, or one past the cap (the text is no longer kept, and
// the call will be refused with its size). Otherwise preview is the
// best-effort parse so far (nil when unchanged).
func (a *Args) Write(fragment string) (preview map[string]any, ok bool) {
	a.total += len(fragment)
	if fragment == "" || a.overflow {
		return nil, false
	}
	if a.max >= 0 && len(a.text.Text())+len(fragment) > a.max {
		a.overflow = true // keep what fits; the call will not run
		return nil, false
	}
	return a.text.Write(fragment), true
}

// End closes the call at index of b: with its parsed arguments, marked
// Incomplete when the text never became complete JSON, or as an overflow.
// Text that is whole JSON but not an object (an array, a string) counts as
// complete: the loop refuses it with a validation error naming the root,
// not as a cut-off call.
func (a *Args) End(b *kit.Builder, index int) providers.StreamEvent {
	if a.overflow {
		return b.ToolCallOverflowAt(index, a.total)
	}
	args, complete := a.text.Final()
	return b.ToolCallEndAt(index, args, complete || json.Valid([]byte(a.text.Text())))
}

// Text is the argument text kept so far.
func (a *Args) Text() string { return a.text.Text() }
