package openai

import (
	"encoding/json"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// convertMessages turns a transcript into Chat Completions messages that a
// server accepts, whatever the transcript holds: kit.Target.Prepare
// makes it sendable (unique valid ids, every call answered right after its
// message, foreign thinking as text), and images a tool returned follow its
// message's results as a user message (tool messages carry text only).
// Every message is sent with content (wireMessages writes "" rather than
// leaving it out).
func convertMessages(system string, model providers.Model, msgs []providers.Message) []goopenai.ChatCompletionMessage {
	var out []goopenai.ChatCompletionMessage
	if system != "" {
		out = append(out, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleSystem, Content: system})
	}
	var images []providers.Content // returned by the results being sent
	flush := func() {
		if len(images) > 0 {
			out = append(out, userMessage(append([]providers.Content{providers.Text{Text: "Images returned by the tools above:"}}, images...)))
			images = nil
		}
	}
	for _, m := range kit.TargetOf(model).Prepare(msgs) {
		switch m := m.(type) {
		case providers.UserMessage:
			flush()
			out = append(out, userMessage(m.Content))
		case providers.AssistantMessage:
			flush()
			if am, ok := assistantMessage(m); ok {
				out = append(out, am)
			}
		case providers.ToolResultMessage:
			msg, imgs := toolMessage(m)
			out = append(out, msg)
			images = append(images, imgs...)
		}
	}
	flush()
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

// assistantMessage converts a prepared assistant message (its text blocks
// joined by a blank line); ok is false for one with nothing Chat
// Completions carries (thinking only).
func assistantMessage(m providers.AssistantMessage) (out goopenai.ChatCompletionMessage, ok bool) {
	var texts []string
	for _, c := range m.Content {
		if t, ok := c.(providers.Text); ok && t.Text != "" {
			texts = append(texts, t.Text)
		}
	}
	out = goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleAssistant, Content: strings.Join(texts, "\n\n")}
	for _, c := range m.ToolCalls() {
		args := argumentsText(c.Arguments)
		out.ToolCalls = append(out.ToolCalls, goopenai.ToolCall{ID: c.ID, Type: goopenai.ToolTypeFunction,
			Function: goopenai.FunctionCall{Name: c.Name, Arguments: args}})
	}
	return out, out.Content != "" || len(out.ToolCalls) > 0
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
