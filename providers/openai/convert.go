package openai

import (
	"encoding/json"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/agentloop/agentloop/providers"
)

// cancelledResult is what the model reads for a tool call that has no
// result in the transcript, usually because its run was cancelled.
const cancelledResult = "Tool call was not completed: the run was cancelled before it returned a result."

// convertMessages turns a transcript into Chat Completions messages that a
// server accepts: every assistant tool call is answered (a synthetic error
// result stands in for a missing one), results follow their call, tool
// results with no call become user text, and empty failed assistant
// messages are left out.
func convertMessages(system string, msgs []providers.Message) []goopenai.ChatCompletionMessage {
	var out []goopenai.ChatCompletionMessage
	if system != "" {
		out = append(out, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleSystem, Content: system})
	}
	for i := 0; i < len(msgs); i++ {
		switch m := msgs[i].(type) {
		case providers.UserMessage:
			out = append(out, userMessage(m.Content))
		case providers.AssistantMessage:
			am, calls := assistantMessage(m)
			if am == nil {
				continue
			}
			out = append(out, *am)
			if len(calls) == 0 {
				continue
			}
			// Answer each call: its results follow the assistant message.
			answered := map[string]bool{}
			var images []providers.Content
			for i+1 < len(msgs) {
				tr, ok := msgs[i+1].(providers.ToolResultMessage)
				if !ok {
					break
				}
				i++
				if !calls[tr.ToolCallID] || answered[tr.ToolCallID] {
					out = append(out, orphanResult(tr))
					continue
				}
				answered[tr.ToolCallID] = true
				msg, imgs := toolMessage(tr)
				out = append(out, msg)
				images = append(images, imgs...)
			}
			for _, c := range m.ToolCalls() {
				if !answered[c.ID] {
					out = append(out, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleTool, ToolCallID: c.ID, Content: cancelledResult})
				}
			}
			if len(images) > 0 {
				out = append(out, userMessage(append([]providers.Content{providers.Text{Text: "Images returned by the tools above:"}}, images...)))
			}
		case providers.ToolResultMessage:
			out = append(out, orphanResult(m))
		}
	}
	return out
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
// with nothing to send (a failed response with no text and no calls).
func assistantMessage(m providers.AssistantMessage) (*goopenai.ChatCompletionMessage, map[string]bool) {
	out := goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleAssistant, Content: m.Text()}
	calls := map[string]bool{}
	for _, c := range m.ToolCalls() {
		args := "{}"
		if !c.Incomplete {
			if b, err := json.Marshal(c.Arguments); err == nil && c.Arguments != nil {
				args = string(b)
			}
		}
		calls[c.ID] = true
		out.ToolCalls = append(out.ToolCalls, goopenai.ToolCall{ID: c.ID, Type: goopenai.ToolTypeFunction,
			Function: goopenai.FunctionCall{Name: c.Name, Arguments: args}})
	}
	if out.Content == "" && len(out.ToolCalls) == 0 {
		return nil, nil
	}
	return &out, calls
}

func toolMessage(tr providers.ToolResultMessage) (goopenai.ChatCompletionMessage, []providers.Content) {
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
	return goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleTool, ToolCallID: tr.ToolCallID, Content: text}, images
}

// orphanResult turns a tool result that answers no preceding call into user
// text, which every server accepts.
func orphanResult(tr providers.ToolResultMessage) goopenai.ChatCompletionMessage {
	return goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser,
		Content: "Result of tool " + tr.ToolName + " (call " + tr.ToolCallID + "):\n" + tr.Text()}
}
