package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"os"
	"strings"

	"github.com/agentloop/agentloop/internal/httpx"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// ResponsesAPI is the Model.API of models served through the Responses
// API.
const ResponsesAPI = "openai-responses"

// Responses is a [providers.Provider] for OpenAI's Responses API
// (POST /responses), with the same Options, limits and care as Provider.
//
// It streams output text, function calls (arguments from
// response.function_call_arguments.delta, judged whole or cut at their
// end), reasoning summaries and raw reasoning text as thinking.
//
// Requests are stateless (store false), so the server keeps no reasoning
// item: for a reasoning model (Model.Reasoning; a name of OpenAI's
// reasoning families: o1, o3, o4, gpt-5 but gpt-5-chat, codex; or a
// transcript in which it reasoned before) each request asks for
// reasoning.encrypted_content, which other models refuse. A reasoning item
// is kept on its thinking block (its Signature, the item's JSON as the
// server sent it) and sent back to the same model rebuilt from its checked
// fields (type, id, summary, encrypted_content), as are the ids of message
// and function_call items and a message's phase. A reasoning item the
// server could not resolve (without encrypted content: a stateless request
// naming it is refused with 404), or a signature that is not a reasoning
// item at all (a forged session's system message), is left out, and so are
// the ids that would link the items after it to it; the rest of the turn
// goes as it was.
//
// A response that ends with response.completed is stop, or toolUse when it
// holds calls; response.incomplete for max_output_tokens is length, for
// another reason an error naming it; response.failed and an error event end
// the message with stop reason error and the server's message. A stream
// that ends without a terminal event is an error.
type Responses struct {
	opts   Options
	client *http.Client
	bad    error // a malformed base URL or a key header, returned by every Stream
}

// NewResponses returns a Responses provider. Options are read as New
// reads them (OPENAI_API_KEY, OPENAI_BASE_URL).
func NewResponses(opts Options) *Responses {
	p := New(opts)
	return &Responses{opts: p.opts, client: p.client, bad: p.bad}
}

// Model returns the model called id as this provider serves it: its API
// ResponsesAPI, its provider ProviderName, and Reasoning set for OpenAI's
// reasoning families (see the type's doc). Set the other fields on the
// value it returns.
func (p *Responses) Model(id string) providers.Model {
	return providers.Model{ID: id, API: ResponsesAPI, Provider: ProviderName, Reasoning: reasoningModel(id)}
}

// Stream implements [providers.Provider]. It refuses what
// Provider.Stream refuses, before any request.
func (p *Responses) Stream(ctx context.Context, req *providers.Request) (iter.Seq[providers.StreamEvent], error) {
	req, err := resolve(p.opts, p.bad, req, ResponsesAPI)
	if err != nil {
		return nil, err
	}
	key := req.APIKey
	if key == "" {
		key = p.opts.APIKey
	}
	body, err := json.Marshal(p.request(req))
	if err != nil {
		return nil, fmt.Errorf("openai: encoding the request: %w", err)
	}
	return func(yield func(providers.StreamEvent) bool) {
		s := &responseStreamer{p: p, model: req.Model, maxArgs: req.Options.ArgumentLimit(),
			Out: httpx.Out{Yield: yield, Builder: kit.ForRequest(req), Key: key}}
		s.run(ctx, body)
	}, nil
}

// FromEnvResponses is FromEnv for the Responses API.
func FromEnvResponses() (p *Responses, m providers.Model, ok bool) {
	if os.Getenv("OPENAI_API_KEY") == "" {
		return nil, providers.Model{}, false
	}
	name := os.Getenv("OPENAI_MODEL")
	if name == "" {
		name = DefaultModel
	}
	p = NewResponses(Options{})
	return p, p.Model(name), true
}

// reasoningModel reports whether name is one of OpenAI's reasoning models
// (the o1, o3 and o4 families, gpt-5 but for gpt-5-chat, codex), whose
// responses hold reasoning items, so that requests to it ask for their
// encrypted content. A provider prefix ("openai/") is ignored. For another
// name, set Model.Reasoning to ask for it.
func reasoningModel(name string) bool {
	name = strings.ToLower(name)
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	family := func(prefix string) bool {
		rest, ok := strings.CutPrefix(name, prefix)
		return ok && (rest == "" || rest[0] == '-' || rest[0] == '.')
	}
	switch {
	case family("o1"), family("o3"), family("o4"), family("codex"):
		return true
	case strings.HasPrefix(name, "gpt-5"):
		return !strings.Contains(name, "-chat")
	}
	return strings.Contains(name, "codex")
}

// responsesRequest is a Responses API request as sent.
type responsesRequest struct {
	Model           string            `json:"model"`
	Stream          bool              `json:"stream"`
	Store           bool              `json:"store"`
	Instructions    string            `json:"instructions,omitempty"`
	Input           []json.RawMessage `json:"input"`
	Tools           []responsesTool   `json:"tools,omitempty"`
	MaxOutputTokens int               `json:"max_output_tokens,omitempty"`
	Temperature     *float64          `json:"temperature,omitempty"`
	Reasoning       *struct {
		Effort  string `json:"effort"`
		Summary string `json:"summary"`
	} `json:"reasoning,omitempty"`
	Include []string `json:"include,omitempty"`
	Text    *struct {
		Format responsesFormat `json:"format"`
	} `json:"text,omitempty"`
	ToolChoice        any   `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool `json:"parallel_tool_calls,omitempty"`
}

type responsesFormat struct {
	Type   string          `json:"type"`
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

func (p *Responses) request(req *providers.Request) responsesRequest {
	name := p.opts.Model
	if name == "" {
		name = req.Model.ID
	}
	out := responsesRequest{Model: name, Stream: true, Instructions: req.SystemPrompt, Input: responsesInput(req.Model, req.Messages),
		MaxOutputTokens: req.Options.MaxTokens, Temperature: req.Options.Temperature,
		ToolChoice: p.opts.ToolChoice, ParallelToolCalls: p.opts.ParallelToolCalls}
	// With store false the server keeps no reasoning item: one that comes
	// back has to carry its encrypted content to be sent back.
	if req.Model.Reasoning || reasoningModel(name) || reasoningModel(req.Model.ID) || hasReasoning(req) {
		out.Include = []string{"reasoning.encrypted_content"}
	}
	if req.Model.Reasoning && req.Options.Reasoning != "" {
		out.Reasoning = &struct {
			Effort  string `json:"effort"`
			Summary string `json:"summary"`
		}{req.Options.Reasoning, "auto"}
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, responsesTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	if o := req.Output; o != nil {
		out.Text = &struct {
			Format responsesFormat `json:"format"`
		}{responsesFormat{Type: "json_schema", Name: o.Name, Schema: o.Schema, Strict: o.Strict}}
	}
	return out
}

// hasReasoning reports whether the transcript holds a reasoning item the
// model produced: a model that reasoned before will again.
func hasReasoning(req *providers.Request) bool {
	for _, m := range req.Messages {
		a, ok := m.(providers.AssistantMessage)
		if !ok || a.API != req.Model.API || a.Provider != req.Model.Provider || a.Model != req.Model.ID {
			continue
		}
		for _, c := range a.Content {
			var head struct{ Type string }
			if th, ok := c.(providers.Thinking); ok && json.Unmarshal([]byte(th.Signature), &head) == nil && head.Type == "reasoning" {
				return true
			}
		}
	}
	return false
}

// StructuredOutput reports that the provider honours Request.Output (as
// text.format).
func (p *Responses) StructuredOutput() bool { return true }

// item is one input item.
type item map[string]any

func raw(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// responsesInput turns a prepared transcript into input items. The model's
// own reasoning items go back as the server sent them.
func responsesInput(m providers.Model, msgs []providers.Message) []json.RawMessage {
	out := []json.RawMessage{}
	var images []any // returned by the results being sent
	flush := func() {
		if len(images) > 0 {
			content := append([]any{item{"type": "input_text", "text": "Images returned by the tools above:"}}, images...)
			out = append(out, raw(item{"role": "user", "content": content}))
			images = nil
		}
	}
	for _, msg := range kit.TargetOf(m).Prepare(msgs) {
		switch msg := msg.(type) {
		case providers.UserMessage:
			flush()
			var content []any
			for _, c := range msg.Content {
				switch c := c.(type) {
				case providers.Text:
					content = append(content, item{"type": "input_text", "text": c.Text})
				case providers.Image:
					content = append(content, item{"type": "input_image", "image_url": "data:" + c.MIMEType + ";base64," + c.Data})
				}
			}
			if len(content) == 0 {
				content = append(content, item{"type": "input_text", "text": ""})
			}
			out = append(out, raw(item{"role": "user", "content": content}))
		case providers.AssistantMessage:
			flush()
			out = append(out, assistantItems(msg)...)
		case providers.ToolResultMessage:
			out = append(out, raw(item{"type": "function_call_output", "call_id": msg.ToolCallID, "output": providers.TextOf(msg.Content)}))
			for _, c := range msg.Content {
				if img, ok := c.(providers.Image); ok {
					images = append(images, item{"type": "input_image", "image_url": "data:" + img.MIMEType + ";base64," + img.Data})
				}
			}
		}
	}
	flush()
	return out
}

// textSignature is what a text block keeps of its message item.
type textSignature struct {
	ID    string `json:"id,omitempty"`
	Phase string `json:"phase,omitempty"`
}

// assistantItems turns one assistant message into input items. A
// reasoning item goes back only when the server can resolve it
// (reasoningFrom); the ids that link the message and function_call items
// after a reasoning item to it go back only when it does, since the server
// refuses an item whose reasoning item is missing; and a reasoning item
// that nothing follows, which the server also refuses, is left out.
func assistantItems(m providers.AssistantMessage) []json.RawMessage {
	var out []json.RawMessage
	linked := true // the items from here may carry their ids
	trailing := 0  // reasoning items at the end of out
	for _, c := range m.Content {
		switch c := c.(type) {
		case providers.Thinking:
			it, ok := reasoningFrom(c.Signature)
			linked = ok
			if ok {
				out = append(out, raw(it))
				trailing++
			}
			continue
		case providers.Text:
			it := item{"type": "message", "role": "assistant", "content": []any{item{"type": "output_text", "text": c.Text}}}
			id, phase := messageSignature(c.Signature)
			if id != "" && linked {
				it["id"] = id
			}
			if phase != "" {
				it["phase"] = phase
			}
			out = append(out, raw(it))
		case providers.ToolCall:
			it := item{"type": "function_call", "call_id": c.ID, "name": c.Name, "arguments": argumentsText(c.Arguments)}
			if id := callItemID(c.Signature); id != "" && linked {
				it["id"] = id
			}
			out = append(out, raw(it))
		default:
			continue
		}
		trailing = 0
	}
	return out[:len(out)-trailing]
}

func argumentsText(args map[string]any) string {
	if b, err := json.Marshal(args); err == nil && len(args) > 0 {
		return string(b)
	}
	return "{}"
}
