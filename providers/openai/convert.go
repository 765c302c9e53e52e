package openai

import (
	"encoding/json"
	"fmt"
	"slices"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/agentloop/agentloop/providers"
)

// cancelledResult is what the model reads for a tool call that has no
// result in the transcript, usually because its run was cancelled.
const cancelledResult = "Tool call was not completed: the run was cancelled before it returned a result."

// convertMessages turns a transcript into Chat Completions messages that a
// server accepts, whatever the transcript holds (a cancelled run, a
// hand-edited or hostile session):
//
//   - every tool call has an id of its own, not empty, and a name the
//     servers accept (letters, digits, '_' and '-', at most 64);
//   - every call is answered right after its assistant message: by its
//     result, or by a stand-in error result when it has none;
//   - a tool result that answers no call of the assistant message before
//     it is left out of the request (the transcript keeps it): it answers
//     nothing the model asked, and no server accepts it where it stands;
//   - an empty failed assistant message is left out.
//
// Every message is sent with content (wireMessages writes "" rather than
// leaving it out).
func convertMessages(system string, msgs []providers.Message) []goopenai.ChatCompletionMessage {
	var out []goopenai.ChatCompletionMessage
	if system != "" {
		out = append(out, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleSystem, Content: system})
	}
	ids := map[string]bool{} // the call ids sent so far, to keep them unique
	for i := 0; i < len(msgs); i++ {
		switch m := msgs[i].(type) {
		case providers.UserMessage:
			out = append(out, userMessage(m.Content))
		case providers.AssistantMessage:
			am, calls := assistantMessage(m, len(out), ids)
			if am == nil {
				continue
			}
			out = append(out, *am)
			if len(calls) == 0 {
				continue
			}
			// Answer each call: its results follow the assistant message;
			// results that answer none are left out.
			answered := make([]bool, len(calls))
			var images []providers.Content
			for i+1 < len(msgs) {
				tr, ok := msgs[i+1].(providers.ToolResultMessage)
				if !ok {
					break
				}
				i++
				k := slices.IndexFunc(calls, func(c sentCall) bool { return c.original == tr.ToolCallID && tr.ToolCallID != "" })
				for k >= 0 && answered[k] { // a later call with the same id
					next := slices.IndexFunc(calls[k+1:], func(c sentCall) bool { return c.original == tr.ToolCallID })
					if next < 0 {
						k = -1
						break
					}
					k += 1 + next
				}
				if k < 0 {
					continue
				}
				answered[k] = true
				msg, imgs := toolMessage(tr, calls[k].id)
				out = append(out, msg)
				images = append(images, imgs...)
			}
			for k, c := range calls {
				if !answered[k] {
					out = append(out, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleTool, ToolCallID: c.id, Content: cancelledResult})
				}
			}
			if len(images) > 0 {
				out = append(out, userMessage(append([]providers.Content{providers.Text{Text: "Images returned by the tools above:"}}, images...)))
			}
		}
	}
	return out
}

// sentCall is a call as sent: its id in the transcript and the one sent.
type sentCall struct {
	original, id string
}

func userMessage(content []providers.Content) goopenai.ChatCompletionMessage {
	onlyText := true
	for _, c := range content {
		if _, ok := c.(providers.Text); !ok {
			onlyText = false
		}
	}
	if onlyText {
		return goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser, Content: providers.TextOf(content)}
	}
	var parts []goopenai.ChatMessagePart
	for _, c := range content {
		switch c := c.(type) {
		case providers.Text:
			parts = append(parts, goopenai.ChatMessagePart{Type: goopenai.ChatMessagePartTypeText, Text: c.Text})
		case providers.Image:
			parts = append(parts, goopenai.ChatMessagePart{Type: goopenai.ChatMessagePartTypeImageURL,
				ImageURL: &goopenai.ChatMessageImageURL{URL: "data:" + c.MIMEType + ";base64," + c.Data}})
		}
	}
	return goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser, MultiContent: parts}
}

// assistantMessage converts an assistant message; it returns nil for one
// with nothing to send (a failed response with no text and no calls). at
// is the message's position in the request, for ids it has to make up;
// ids holds the ids sent so far.
func assistantMessage(m providers.AssistantMessage, at int, ids map[string]bool) (*goopenai.ChatCompletionMessage, []sentCall) {
	out := goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleAssistant, Content: m.Text()}
	var calls []sentCall
	for k, c := range m.ToolCalls() {
		args := "{}"
		if !c.Incomplete {
			if b, err := json.Marshal(c.Arguments); err == nil && c.Arguments != nil {
				args = string(b)
			}
		}
		id := c.ID
		if id == "" || ids[id] {
			id = fmt.Sprintf("call_%d_%d", at, k)
			for ids[id] {
				id += "_"
			}
		}
		ids[id] = true
		calls = append(calls, sentCall{original: c.ID, id: id})
		out.ToolCalls = append(out.ToolCalls, goopenai.ToolCall{ID: id, Type: goopenai.ToolTypeFunction,
			Function: goopenai.FunctionCall{Name: toolName(c.Name), Arguments: args}})
	}
	if out.Content == "" && len(out.ToolCalls) == 0 {
		return nil, nil
	}
	return &out, calls
}

// toolName makes a name the servers accept: letters, digits, '_' and '-',
// 1 to 64 of them.
func toolName(name string) string {
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

func toolMessage(tr providers.ToolResultMessage, id string) (goopenai.ChatCompletionMessage, []providers.Content) {
	text := tr.Text()
	var images []providers.Content
	for _, c := range tr.Content {
		if img, ok := c.(providers.Image); ok {
			images = append(images, img)
		}
	}
	if text == "" && len(images) > 0 {
		text = "(see the images below)"
	}
	return goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleTool, ToolCallID: id, Content: text}, images
}

// wireRequest is the request as sent: go-openai's, with messages that always
// carry their content (go-openai leaves an empty content out, which servers
// refuse for user and tool messages).
type wireRequest struct {
	goopenai.ChatCompletionRequest
	Messages []wireMessage `json:"messages"`
}

// wireMessage is a message whose content is always written.
type wireMessage goopenai.ChatCompletionMessage

// MarshalJSON writes content as a string ("" when empty) or as parts.
func (m wireMessage) MarshalJSON() ([]byte, error) {
	var content any = m.Content
	if len(m.MultiContent) > 0 {
		content = m.MultiContent
	}
	return json.Marshal(struct {
		Role       string              `json:"role"`
		Content    any                 `json:"content"`
		ToolCalls  []goopenai.ToolCall `json:"tool_calls,omitempty"`
		ToolCallID string              `json:"tool_call_id,omitempty"`
	}{m.Role, content, m.ToolCalls, m.ToolCallID})
}

func wireMessages(msgs []goopenai.ChatCompletionMessage) []wireMessage {
	out := make([]wireMessage, len(msgs))
	for i, m := range msgs {
		out[i] = wireMessage(m)
	}
	return out
}
