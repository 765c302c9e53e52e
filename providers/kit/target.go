package kit

import (
	"fmt"
	"slices"

	"github.com/agentloop/agentloop/providers"
)

// MissingResultText is the result a provider sends for a tool call that has
// none in the transcript, usually because its run was cancelled.
const MissingResultText = "Tool call was not completed: the run was cancelled before it returned a result."

// Target is the model a request goes to, as far as preparing the
// transcript for it goes: whose opaque data it may receive, and which
// tool-call ids its server accepts.
type Target struct {
	// API, Provider and Model name the model. A block's opaque data
	// (signatures, encrypted reasoning, item ids) goes back only to the
	// model that produced it: the same API, provider and model.
	API, Provider, Model string
	// ValidCallID reports whether the server accepts a tool-call id; nil
	// accepts any non-empty one. Other ids are replaced, the same way in
	// the call and in its result.
	ValidCallID func(id string) bool
}

// TargetOf returns the Target of a model, accepting any non-empty call id.
func TargetOf(m providers.Model) Target { return Target{API: m.API, Provider: m.Provider, Model: m.ID} }

// Prepare returns the transcript as a provider should send it to t, so that
// every server accepts it whatever the transcript holds (a cancelled run, a
// hand-edited or hostile session, a conversation begun with another
// provider). The transcript itself is not changed.
//
//   - An assistant message with nothing to send (a failed or empty
//     response: no text, no thinking, no calls) is left out.
//   - Every tool call has a unique id the target accepts and a name the
//     servers accept (letters, digits, '_' and '-', at most 64); arguments
//     that never became complete JSON are sent as {}.
//   - Every call is answered right after its assistant message, in call
//     order: by its result, or by an error result saying it did not
//     complete (MissingResultText). A result that answers no call of the
//     assistant message before it is left out.
//   - Blocks from another model keep what the target can read and lose what
//     it cannot: thinking becomes plain text (redacted thinking, which has
//     none, is left out), and signatures are dropped; empty text blocks are
//     left out.
//
// Messages of other types (an application's own) are passed through for the
// provider to skip.
func (t Target) Prepare(msgs []providers.Message) []providers.Message {
	out := make([]providers.Message, 0, len(msgs))
	used := map[string]bool{} // call ids sent so far
	for i := 0; i < len(msgs); i++ {
		switch m := msgs[i].(type) {
		case providers.AssistantMessage:
			a, calls := t.assistant(m, len(out), used)
			if a == nil {
				continue
			}
			out = append(out, *a)
			// The results that follow, each matched to the first call of
			// that id it can answer; the rest left out.
			results := make([]*providers.ToolResultMessage, len(calls))
			for i+1 < len(msgs) {
				tr, ok := msgs[i+1].(providers.ToolResultMessage)
				if !ok {
					break
				}
				i++
				k := slices.IndexFunc(calls, func(c sentCall) bool { return c.original == tr.ToolCallID && tr.ToolCallID != "" })
				for k >= 0 && results[k] != nil {
					next := slices.IndexFunc(calls[k+1:], func(c sentCall) bool { return c.original == tr.ToolCallID })
					if next < 0 {
						k = -1
						break
					}
					k += 1 + next
				}
				if k >= 0 {
					tr.ToolCallID, tr.ToolName = calls[k].id, calls[k].name
					results[k] = &tr
				}
			}
			for k, c := range calls {
				if results[k] == nil {
					results[k] = &providers.ToolResultMessage{ToolCallID: c.id, ToolName: c.name, IsError: true,
						Content: []providers.Content{providers.Text{Text: MissingResultText}}, Timestamp: m.Timestamp}
				}
				out = append(out, *results[k])
			}
		case providers.ToolResultMessage:
			// Answers no call: left out.
		default:
			out = append(out, m)
		}
	}
	return out
}

// sentCall is a call as sent: its id in the transcript, and the id and name
// sent.
type sentCall struct {
	original, id, name string
}

// assistant prepares one assistant message; nil when it has nothing to
// send. at is its position in the request, for ids it has to make up.
func (t Target) assistant(m providers.AssistantMessage, at int, used map[string]bool) (*providers.AssistantMessage, []sentCall) {
	own := m.API == t.API && m.Provider == t.Provider && m.Model == t.Model
	content := make([]providers.Content, 0, len(m.Content))
	var calls []sentCall
	for _, c := range m.Content {
		switch c := c.(type) {
		case providers.Text:
			if !own {
				if c.Text == "" {
					continue
				}
				c.Signature = ""
			}
			content = append(content, c)
		case providers.Thinking:
			switch {
			case own:
				content = append(content, c)
			case c.Thinking != "":
				content = append(content, providers.Text{Text: c.Thinking})
			}
		case providers.ToolCall:
			id := c.ID
			if id == "" || used[id] || (t.ValidCallID != nil && !t.ValidCallID(id)) {
				id = fmt.Sprintf("call_%d_%d", at, len(calls))
				for used[id] {
					id += "_"
				}
			}
			used[id] = true
			calls = append(calls, sentCall{original: c.ID, id: id, name: ToolName(c.Name)})
			c.ID, c.Name = id, ToolName(c.Name)
			if c.Incomplete || c.Arguments == nil {
				c.Arguments, c.RawArguments = map[string]any{}, ""
			}
			if !own {
				c.Signature = ""
			}
			content = append(content, c)
		default:
			content = append(content, c)
		}
	}
	if !slices.ContainsFunc(content, func(c providers.Content) bool {
		t, ok := c.(providers.Text)
		return !ok || t.Text != "" || t.Signature != ""
	}) {
		return nil, nil // nothing to send: a failed response, or an empty one
	}
	m.Content = content
	return &m, calls
}

// ToolName makes a tool name every server accepts: letters, digits, '_'
// and '-', 1 to 64 of them. A valid name is returned as it is.
func ToolName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	switch {
	case len(b) == 0:
		return "unnamed_tool"
	case len(b) > 64:
		b = b[:64]
	}
	return string(b)
}
