package gemini

import (
	"encoding/base64"
	"encoding/json"

	"google.golang.org/genai"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// thinkingBudget is the thinking budget of each reasoning effort.
var thinkingBudget = map[string]int32{"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}

// request builds the contents and the config of a request.
func (p *Provider) request(req *providers.Request) ([]*genai.Content, *genai.GenerateContentConfig) {
	off := false
	cfg := &genai.GenerateContentConfig{AutomaticContinuation: &off}
	if req.SystemPrompt != "" {
		cfg.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: req.SystemPrompt}}}
	}
	if n := req.Options.MaxTokens; n > 0 {
		cfg.MaxOutputTokens = int32(n)
	}
	if t := req.Options.Temperature; t != nil {
		v := float32(*t)
		cfg.Temperature = &v
	}
	if req.Model.Reasoning {
		cfg.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: true}
		if b, ok := thinkingBudget[req.Options.Reasoning]; ok {
			cfg.ThinkingConfig.ThinkingBudget = &b
		}
	}
	if len(req.Tools) > 0 {
		tool := &genai.Tool{}
		for _, t := range req.Tools {
			tool.FunctionDeclarations = append(tool.FunctionDeclarations,
				&genai.FunctionDeclaration{Name: t.Name, Description: t.Description, ParametersJsonSchema: t.Parameters})
		}
		cfg.Tools = []*genai.Tool{tool}
	}
	if o := req.Output; o != nil {
		cfg.ResponseMIMEType, cfg.ResponseJsonSchema = "application/json", o.Schema
	}
	return convertMessages(req.Model, req.Messages), cfg
}

// convertMessages turns a prepared transcript into Gemini contents: the
// results of one model turn's calls together in the user turn that follows.
func convertMessages(m providers.Model, msgs []providers.Message) []*genai.Content {
	var out []*genai.Content
	var results []*genai.Part
	flush := func() {
		if len(results) > 0 {
			out = append(out, &genai.Content{Role: genai.RoleUser, Parts: results})
			results = nil
		}
	}
	for _, msg := range kit.TargetOf(m).Prepare(msgs) {
		switch msg := msg.(type) {
		case providers.UserMessage:
			flush()
			if parts := userParts(msg.Content); len(parts) > 0 {
				out = append(out, &genai.Content{Role: genai.RoleUser, Parts: parts})
			}
		case providers.AssistantMessage:
			flush()
			if parts := modelParts(msg); len(parts) > 0 {
				out = append(out, &genai.Content{Role: genai.RoleModel, Parts: parts})
			}
		case providers.ToolResultMessage:
			results = append(results, resultParts(msg)...)
		}
	}
	flush()
	return out
}

func userParts(content []providers.Content) []*genai.Part {
	var out []*genai.Part
	for _, c := range content {
		switch c := c.(type) {
		case providers.Text:
			if c.Text != "" {
				out = append(out, &genai.Part{Text: c.Text})
			}
		case providers.Image:
			if part := imagePart(c); part != nil {
				out = append(out, part)
			}
		}
	}
	if len(out) == 0 {
		out = append(out, &genai.Part{Text: "(empty message)"}) // the API refuses empty parts
	}
	return out
}

func imagePart(img providers.Image) *genai.Part {
	data, err := base64.StdEncoding.DecodeString(img.Data)
	if err != nil {
		return nil
	}
	return &genai.Part{InlineData: &genai.Blob{MIMEType: img.MIMEType, Data: data}}
}

// modelParts converts a prepared assistant message; each block carries its
// thought signature back (Prepare kept only the model's own).
func modelParts(m providers.AssistantMessage) []*genai.Part {
	var out []*genai.Part
	for _, c := range m.Content {
		var part *genai.Part
		switch c := c.(type) {
		case providers.Text:
			part = &genai.Part{Text: c.Text, ThoughtSignature: signature(c.Signature)}
		case providers.Thinking:
			if c.Redacted {
				continue
			}
			part = &genai.Part{Text: c.Thinking, Thought: true, ThoughtSignature: signature(c.Signature)}
		case providers.ToolCall:
			part = &genai.Part{FunctionCall: &genai.FunctionCall{ID: c.ID, Name: c.Name, Args: c.Arguments}, ThoughtSignature: signature(c.Signature)}
		default:
			continue
		}
		out = append(out, part)
	}
	return out
}

// signature decodes a kept thought signature (base64, as the API sends it).
func signature(s string) []byte {
	if s == "" {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil
	}
	return b
}

// resultParts answers a call: its text as the function's output (or error),
// images as parts after it.
func resultParts(tr providers.ToolResultMessage) []*genai.Part {
	key := "output"
	if tr.IsError {
		key = "error"
	}
	out := []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: tr.ToolCallID, Name: tr.ToolName,
		Response: map[string]any{key: providers.TextOf(tr.Content)}}}}
	for _, c := range tr.Content {
		if img, ok := c.(providers.Image); ok {
			if part := imagePart(img); part != nil {
				out = append(out, part)
			}
		}
	}
	return out
}

// argsText is the JSON text of a call's arguments, as the model's.
func argsText(args map[string]any) string {
	if args == nil {
		return "{}"
	}
	b, err := json.Marshal(args)
	if err != nil {
		return "{}"
	}
	return string(b)
}
