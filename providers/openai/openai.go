// Package openai is a [providers.Provider] for OpenAI's Chat Completions
// API and every server that speaks it (vLLM, llama.cpp's server, Ollama,
// LM Studio, OpenRouter, DeepSeek, Groq, ...), and for OpenAI's Responses
// API ([NewResponses]).
//
//	p := openai.New(openai.Options{BaseURL: "http://localhost:11434/v1", APIKey: "ollama"})
//	cfg := loop.Config{Provider: p, Model: p.Model("qwen3:8b")}
//
// The zero Options talk to api.openai.com with the key in OPENAI_API_KEY;
// [FromEnv] reads OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_MODEL, as the
// examples do (OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_API_KEY=ollama
// OPENAI_MODEL=qwen3:8b go run ./examples/chat). Base URLs of common servers:
// Ollama http://localhost:11434/v1 (any pulled model with tool support);
// vLLM http://localhost:8000/v1 (started with --enable-auto-tool-choice
// --tool-call-parser ...); llama.cpp's llama-server http://localhost:8080/v1
// (started with --jinja for tool calls); LM Studio, OpenRouter, DeepSeek
// and Groq their /v1 URL and key.
//
// # Requests
//
// A provider makes its models (p.Model), so that their API and provider
// names agree with it. Before any request, Stream refuses a Model without
// an ID, one made for another API, and a base URL that is not an absolute
// http or https URL with a host and no query. The path is used as given (a
// server that wants /v1 needs it in the URL), and a refusal names the
// request: "HTTP 404: 404 page not found (POST
// http://localhost:8080/chat/completions)". Rate limits and 5xx answers
// before the first token are retried with exponential backoff and jitter,
// honouring Retry-After, and the error of a retried request counts its
// attempts ("...; 4 attempts)"); a refused connection, an unknown host, an
// untrusted certificate and a malformed URL are not retried.
//
// Before a request goes out, the transcript is made one the server accepts,
// whatever it holds (a cancelled run, a hand-edited session): every call
// gets a unique non-empty id and a valid name and is answered right after
// its message (a stand-in error result for a call without one), results
// that answer no call are left out of the request (the transcript keeps
// them), arguments that were never valid JSON are sent as {}, and every
// message carries its content, "" included.
//
// # Responses
//
// It streams text, reasoning (the reasoning_content, reasoning or
// reasoning_text field such servers send, as thinking blocks) and tool
// calls, assembling tool-call fragments by index (or, for servers that send
// none, by id). A tool call whose argument text never became complete JSON
// is marked Incomplete, so the loop refuses it like a call from a truncated
// response, even when the server claimed it finished normally. Usage and
// cost come from the final chunk (or Groq's x_groq). Finish reasons: length
// is length, tool_calls is toolUse, content_filter an error; a stream that
// ends in the server's error event keeps the server's message.
//
// Every read is bounded by [providers.HTTPOptions]: the bytes of one SSE
// line (MaxLineBytes), of one event (MaxEventBytes), of one response
// (MaxResponseBytes) and of an error body (MaxErrorBodyBytes), and the time
// to connect (ConnectTimeout), to the response's headers (HeaderTimeout) and
// between two reads of the stream that bring more than keep-alives
// (IdleTimeout). Compressed responses are refused (the provider asks for
// none), so a small body cannot unpack into a large one. Each limit ends
// the message with stop reason error and a message naming it.
//
// Failures never escape as Go errors or panics: HTTP errors, broken or
// malformed streams and cancellation end the message with stop reason error
// or aborted, keeping what arrived. The API key never appears in a message,
// error or log. The tests replay streams recorded from OpenAI, Azure, Groq,
// DeepSeek, Alibaba, xAI, Mistral, vLLM, Ollama, llama.cpp, OpenRouter and
// Z.ai.
//
// # The Responses API
//
// [NewResponses] keeps what Chat Completions loses: reasoning items with
// their encrypted_content (stateless: store is false; asked for from every
// reasoning model, by Model.Reasoning or by name), sent back rebuilt from
// their checked fields, with message and call item ids and a message's
// phase. A reasoning item the server could not resolve (no encrypted
// content) or a signature that is not one is left out, with the ids linked
// to it. A response.incomplete with max_output_tokens reaches the loop as
// length, and no call in it runs.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"os"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/agentloop/agentloop/internal/httpx"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// Options configure a Provider. The zero value talks to api.openai.com with
// the key in OPENAI_API_KEY.
type Options struct {
	// APIKey is the provider's key; empty falls back to OPENAI_API_KEY. A
	// call's Request.APIKey (the loop's GetAPIKey hooks) takes precedence:
	// see providers.Request.APIKey.
	APIKey string
	// BaseURL is the API's base URL, e.g. http://localhost:11434/v1 for
	// Ollama; empty falls back to OPENAI_BASE_URL, then OpenAI's.
	BaseURL string
	// Model overrides the model name sent to the server; empty uses the
	// request's Model.ID.
	Model string
	// ToolChoice is sent as tool_choice: "auto", "none", "required", or a
	// goopenai.ToolChoice naming a function.
	ToolChoice any
	// ParallelToolCalls, when not nil, is sent as parallel_tool_calls.
	ParallelToolCalls *bool
	// Headers are added to every request. They may not set Authorization,
	// where the key goes (APIKey): every Stream would fail, saying so.
	Headers map[string]string

	// HTTPOptions bound what the provider reads and how long it waits, and
	// say how it retries; the zero value means the defaults.
	providers.HTTPOptions
}

// ChatCompletionsAPI is the Model.API of models served through Chat
// Completions (Provider's Model method sets it).
const ChatCompletionsAPI = "openai-completions"

// ProviderName is the Model.Provider the Model methods of Provider and
// Responses set.
const ProviderName = "openai"

// Provider streams chat completions. It is safe for concurrent use.
type Provider struct {
	opts   Options
	client *http.Client
	bad    error // a malformed base URL or a key header, returned by every Stream
}

// New returns a Provider. A malformed base URL (from Options or
// OPENAI_BASE_URL: one that is not an absolute http or https URL with a
// host, or has a query or fragment) is reported by every Stream, before any
// request; the path is used as given (a server that wants /v1 must have it
// in the URL). So are Headers that set Authorization, where the key goes.
func New(opts Options) *Provider {
	if opts.APIKey == "" {
		opts.APIKey = os.Getenv("OPENAI_API_KEY")
	}
	from := ""
	if opts.BaseURL == "" {
		opts.BaseURL, from = os.Getenv("OPENAI_BASE_URL"), " (from OPENAI_BASE_URL)"
	}
	if opts.BaseURL == "" {
		opts.BaseURL = "https://api.openai.com/v1"
	}
	bad := httpx.CheckBaseURL(opts.BaseURL, opts.APIKey)
	if bad != nil {
		bad = fmt.Errorf("%w%s", bad, from)
	} else {
		bad = httpx.CheckHeaders(opts.Headers, "Authorization")
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	opts.HTTPOptions = kit.HTTPDefaults(opts.HTTPOptions)
	return &Provider{opts: opts, client: httpx.Client(opts.HTTPOptions), bad: bad}
}

// Model returns the model called id (as the server names it) as this
// provider serves it: its API ChatCompletionsAPI, its provider
// ProviderName, and Reasoning set for OpenAI's reasoning families (o1, o3,
// o4, gpt-5, codex), which take max_completion_tokens. Set the other
// fields (prices, context window) on the value it returns.
func (p *Provider) Model(id string) providers.Model {
	return providers.Model{ID: id, API: ChatCompletionsAPI, Provider: ProviderName, Reasoning: reasoningModel(id)}
}

// Stream implements [providers.Provider]. It refuses, before any request,
// a malformed base URL (see New) and a Model no server could serve: one
// without an ID (unless Options.Model names the model) or made for another
// API (kit.ErrNoModel, kit.ErrWrongAPI). An empty Model.API or
// Model.Provider is taken to be this provider's.
func (p *Provider) Stream(ctx context.Context, req *providers.Request) (iter.Seq[providers.StreamEvent], error) {
	req, err := resolve(p.opts, p.bad, req, ChatCompletionsAPI)
	if err != nil {
		return nil, err
	}
	key := req.APIKey
	if key == "" {
		key = p.opts.APIKey
	}
	r := p.request(req)
	body, err := json.Marshal(wireRequest{ChatCompletionRequest: r, Messages: wireMessages(r.Messages)})
	if err != nil {
		return nil, fmt.Errorf("openai: encoding the request: %w", err)
	}
	return func(yield func(providers.StreamEvent) bool) {
		s := &streamer{p: p, model: req.Model, maxArgs: req.Options.ArgumentLimit(),
			Out: httpx.Out{Yield: yield, Builder: kit.ForRequest(req), Key: key}}
		s.run(httpx.Watch(ctx), body)
	}, nil
}

// request builds the Chat Completions request.
func (p *Provider) request(req *providers.Request) goopenai.ChatCompletionRequest {
	name := p.opts.Model
	if name == "" {
		name = req.Model.ID
	}
	out := goopenai.ChatCompletionRequest{
		Model:         name,
		Stream:        true,
		Messages:      convertMessages(req.SystemPrompt, req.Model, req.Messages),
		StreamOptions: &goopenai.StreamOptions{IncludeUsage: true},
		ToolChoice:    p.opts.ToolChoice,
	}
	if n := req.Options.MaxTokens; n > 0 {
		if req.Model.Reasoning {
			out.MaxCompletionTokens = n // reasoning models refuse max_tokens
		} else {
			//lint:ignore SA1019 the servers this package serves besides OpenAI's (vLLM, llama.cpp, Ollama, ...) read max_tokens
			out.MaxTokens = n
		}
	}
	if req.Options.Temperature != nil {
		out.Temperature = float32(*req.Options.Temperature)
	}
	if p.opts.ParallelToolCalls != nil {
		out.ParallelToolCalls = *p.opts.ParallelToolCalls
	}
	if req.Options.Reasoning != "" && req.Model.Reasoning {
		out.ReasoningEffort = req.Options.Reasoning
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, goopenai.Tool{Type: goopenai.ToolTypeFunction, Function: &goopenai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters,
		}})
	}
	if o := req.Output; o != nil {
		out.ResponseFormat = &goopenai.ChatCompletionResponseFormat{Type: goopenai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &goopenai.ChatCompletionResponseFormatJSONSchema{Name: o.Name, Schema: o.Schema, Strict: o.Strict}}
	}
	return out
}

// StructuredOutput reports that the provider honours Request.Output (as
// response_format json_schema; a server that does not know it refuses).
func (p *Provider) StructuredOutput() bool { return true }

// DefaultModel is the model FromEnv names when OPENAI_MODEL is not set.
const DefaultModel = "gpt-4o-mini"

// FromEnv returns a Provider and a Model for the endpoint the environment
// names: OPENAI_API_KEY (ok is false without it), OPENAI_BASE_URL (optional;
// OpenAI's API when empty) and OPENAI_MODEL (DefaultModel when empty).
// Programs use it to run against a real model when a key is set and offline
// otherwise:
//
//	p, m, ok := openai.FromEnv()
//	if !ok {
//		// use a scripted provider (providers/faux)
//	}
func FromEnv() (p *Provider, m providers.Model, ok bool) {
	if os.Getenv("OPENAI_API_KEY") == "" {
		return nil, providers.Model{}, false
	}
	name := os.Getenv("OPENAI_MODEL")
	if name == "" {
		name = DefaultModel
	}
	p = New(Options{})
	return p, p.Model(name), true
}

// resolve returns the request as a provider speaking api sends it: its
// Model checked and completed (kit.ResolveModel), the model named by
// Options.Model when the request's has no ID. req itself is not changed.
func resolve(opts Options, bad error, req *providers.Request, api string) (*providers.Request, error) {
	if bad != nil {
		return nil, fmt.Errorf("openai: %w", bad)
	}
	if req == nil {
		return nil, errors.New("openai: a nil request")
	}
	m := req.Model
	if m.ID == "" {
		m.ID = opts.Model
	}
	m, err := kit.ResolveModel(m, api, ProviderName)
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	r := *req
	r.Model = m
	return &r, nil
}
