package anthropic

import (
	"encoding/json"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentloop/agentloop/providers"
)

// defaultMaxTokens is max_tokens (which the API requires) when neither the
// request nor the model says.
const defaultMaxTokens = 4096

// thinkingBudget is the budget_tokens of each reasoning effort.
var thinkingBudget = map[string]int64{"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}

// params builds the request.
func (p *Provider) params(req *providers.Request) sdk.MessageNewParams {
	name := p.opts.Model
	if name == "" {
		name = req.Model.ID
	}
	maxTokens := int64(req.Options.MaxTokens)
	if maxTokens <= 0 {
		maxTokens = int64(req.Model.MaxTokens)
	}
	if maxTokens <= 0 {
		maxTokens = defaultMaxTokens
	}
	out := sdk.MessageNewParams{Model: sdk.Model(name), MaxTokens: maxTokens, Messages: convertMessages(req.Model, req.Messages)}
	if req.SystemPrompt != "" {
		out.System = []sdk.TextBlockParam{{Text: req.SystemPrompt}}
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, sdk.ToolUnionParam{OfTool: toolParam(t)})
	}
	if budget, ok := thinkingBudget[req.Options.Reasoning]; ok && req.Model.Reasoning && budget < maxTokens {
		out.Thinking = sdk.ThinkingConfigParamOfEnabled(budget)
	}
	if !p.opts.DisableCache {
		markCache(&out)
	}
	return out
}

// markCache puts cache breakpoints on the system prompt, the last tool and
// the last block of the latest turn that may carry one.
func markCache(params *sdk.MessageNewParams) {
	cc := sdk.NewCacheControlEphemeralParam()
	if n := len(params.System); n > 0 {
		params.System[n-1].CacheControl = cc
	}
	if n := len(params.Tools); n > 0 && params.Tools[n-1].OfTool != nil {
		params.Tools[n-1].OfTool.CacheControl = cc
	}
	if n := len(params.Messages); n > 0 {
		var blocks []sdk.ContentBlockParamUnion
		switch last := params.Messages[n-1]; {
		case last.OfUser != nil:
			blocks = last.OfUser.Content
		case last.OfAssistant != nil:
			blocks = last.OfAssistant.Content
		}
		for i := len(blocks) - 1; i >= 0; i-- {
			b := blocks[i]
			switch {
			case b.OfText != nil:
				b.OfText.CacheControl = cc
			case b.OfImage != nil:
				b.OfImage.CacheControl = cc
			case b.OfToolResult != nil:
				b.OfToolResult.CacheControl = cc
			case b.OfToolUse != nil:
				b.OfToolUse.CacheControl = cc
			default:
				continue // thinking carries none
			}
			return
		}
	}
}

// toolParam describes a tool: its schema's properties and required list
// in their fields, the rest of the schema alongside.
func toolParam(t providers.ToolSpec) *sdk.ToolParam {
	var schema map[string]any
	_ = json.Unmarshal(t.Parameters, &schema)
	in := sdk.ToolInputSchemaParam{Properties: schema["properties"], ExtraFields: map[string]any{}}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				in.Required = append(in.Required, s)
			}
		}
	}
	for k, v := range schema {
		if k != "properties" && k != "required" && k != "type" {
			in.ExtraFields[k] = v
		}
	}
	tp := &sdk.ToolParam{Name: t.Name, InputSchema: in}
	if t.Description != "" {
		tp.Description = sdk.String(t.Description)
	}
	return tp
}

// convertMessages turns a prepared transcript into Messages API messages:
// the results of one assistant message's calls together in the user
// message that follows it.
func convertMessages(m providers.Model, msgs []providers.Message) []sdk.MessageParam {
	var out []sdk.MessageParam
	var results []sdk.ContentBlockParamUnion
	flush := func() {
		if len(results) > 0 {
			out = append(out, sdk.NewUserMessage(results...))
			results = nil
		}
	}
	for _, msg := range target(m).Prepare(msgs) {
		switch msg := msg.(type) {
		case providers.UserMessage:
			flush()
			if blocks := userBlocks(msg.Content); len(blocks) > 0 {
				out = append(out, sdk.NewUserMessage(blocks...))
			}
		case providers.AssistantMessage:
			flush()
			if blocks := assistantBlocks(msg); len(blocks) > 0 {
				out = append(out, sdk.NewAssistantMessage(blocks...))
			}
		case providers.ToolResultMessage:
			results = append(results, toolResult(msg))
		}
	}
	flush()
	return out
}

func userBlocks(content []providers.Content) []sdk.ContentBlockParamUnion {
	var out []sdk.ContentBlockParamUnion
	for _, c := range content {
		switch c := c.(type) {
		case providers.Text:
			if c.Text != "" {
				out = append(out, sdk.NewTextBlock(c.Text))
			}
		case providers.Image:
			out = append(out, sdk.NewImageBlockBase64(c.MIMEType, c.Data))
		}
	}
	if len(out) == 0 {
		out = append(out, sdk.NewTextBlock("(empty message)")) // the API refuses empty content
	}
	return out
}

// assistantBlocks converts a prepared assistant message. Its own thinking
// goes back with its signature (redacted thinking as it came); thinking
// without a signature, which the API would refuse, goes as text.
func assistantBlocks(m providers.AssistantMessage) []sdk.ContentBlockParamUnion {
	var out []sdk.ContentBlockParamUnion
	for _, c := range m.Content {
		switch c := c.(type) {
		case providers.Text:
			if c.Text != "" {
				out = append(out, sdk.NewTextBlock(c.Text))
			}
		case providers.Thinking:
			switch {
			case c.Redacted && c.Signature != "":
				out = append(out, sdk.NewRedactedThinkingBlock(c.Signature))
			case c.Signature != "":
				out = append(out, sdk.NewThinkingBlock(c.Signature, c.Thinking))
			case c.Thinking != "":
				out = append(out, sdk.NewTextBlock(c.Thinking))
			}
		case providers.ToolCall:
			out = append(out, sdk.NewToolUseBlock(c.ID, c.Arguments, c.Name))
		}
	}
	return out
}

func toolResult(tr providers.ToolResultMessage) sdk.ContentBlockParamUnion {
	block := sdk.ToolResultBlockParam{ToolUseID: tr.ToolCallID}
	if tr.IsError {
		block.IsError = sdk.Bool(true)
	}
	for _, c := range tr.Content {
		switch c := c.(type) {
		case providers.Text:
			if c.Text != "" {
				block.Content = append(block.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: c.Text}})
			}
		case providers.Image:
			block.Content = append(block.Content, sdk.ToolResultBlockParamContentUnion{OfImage: sdk.NewImageBlockBase64(c.MIMEType, c.Data).OfImage})
		}
	}
	if len(block.Content) == 0 {
		block.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: "(no output)"}}}
	}
	return sdk.ContentBlockParamUnion{OfToolResult: &block}
}
