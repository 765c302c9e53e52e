// Package anthropic is a [providers.Provider] for Anthropic's Messages
// API, on the official SDK (github.com/anthropics/anthropic-sdk-go/v2).
//
//	p := anthropic.New(anthropic.Options{}) // the key from ANTHROPIC_API_KEY
//	cfg := loop.Config{Provider: p, Model: p.Model("claude-sonnet-4-5")}
//
// It keeps what Chat Completions loses: thinking with its signature,
// redacted thinking, prompt caching (on by default), cache read and write
// tokens, and pause_turn continued. Only programs that import this package
// pay for the SDK: in a build it adds 12 modules (the SDK, gjson/sjson,
// logr and the OpenTelemetry API it links), and none to the go.mod of a
// program that uses another provider.
//
// It streams text, thinking with its signature, redacted thinking and tool
// calls. A call's input is assembled from its input_json_delta fragments by
// this package, not by the SDK's accumulator (which turns a cut-off input
// such as {"city": "Os into {}, making a truncated call look valid), so a
// call whose input never became complete JSON is marked Incomplete and the
// loop refuses it. Signatures and redacted thinking are kept on their
// blocks (providers.Thinking) and sent back unchanged to the model that
// produced them.
//
// Stop reasons: end_turn and stop_sequence are stop, tool_use is toolUse,
// max_tokens is length; refusal, model_context_window_exceeded and an
// error event end the message with stop reason error and the server's
// message. pause_turn (the server paused a long turn of its own tools) is
// continued: the provider sends the turn so far back, as the API asks, and
// the message goes on, up to MaxContinuations times (the paused turn
// is put together here, in time linear in its size). A stream that ends
// before message_stop is an error, never a clean stop.
//
// Prompt caching is on by default: cache breakpoints mark the system
// prompt, the tools and the latest turn, so each request reads what the
// last one wrote (Options.DisableCache turns it off). Usage reports cache
// reads and writes.
//
// The SDK sends the requests through a client with the limits of
// providers.HTTPOptions (bytes per line, per event, per response and per
// error body; connect, header and idle timeouts; the SDK's own reader
// would take a line of 32 MiB), its own retries and OpenTelemetry
// span turned off: the provider retries rate limits, overloads and server
// errors before the first token itself, honouring retry-after. The key goes
// where the SDK sends it (an Authorization header) and never into a
// message, error or log, in any form or part; the server's text in an
// error message is cut at 2 KiB.
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"regexp"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agentloop/agentloop/internal/httpx"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// API is the Model.API of models served through this package.
const API = "anthropic-messages"

// ProviderName is the Model.Provider that Provider's Model method sets.
const ProviderName = "anthropic"

// DefaultModel is the model FromEnv names when ANTHROPIC_MODEL is not set.
const DefaultModel = "claude-sonnet-4-5"

// Options configure a Provider. The zero value talks to api.anthropic.com
// with the key in ANTHROPIC_API_KEY.
type Options struct {
	// APIKey is the provider's key; empty falls back to ANTHROPIC_API_KEY.
	// A call's Request.APIKey (the loop's GetAPIKey hooks) takes
	// precedence: see providers.Request.APIKey.
	APIKey string
	// BaseURL is the API's base URL; empty falls back to
	// ANTHROPIC_BASE_URL, then Anthropic's.
	BaseURL string
	// Model overrides the model name sent; empty uses the request's
	// Model.ID.
	Model string
	// Headers are added to every request. They may not set X-Api-Key,
	// where the key goes (APIKey): every Stream would fail, saying so.
	Headers map[string]string
	// DisableCache turns prompt caching off.
	DisableCache bool
	// MaxContinuations bounds how many times a paused turn (pause_turn) is
	// continued within one message; 0 means 4, negative means never (the
	// message then ends with stop reason stop).
	MaxContinuations int
	// SDKOptions are passed to the SDK's client after the provider's own
	// (another authentication, such as a bearer token, or a middleware).
	// The API key is not one of them: it is APIKey, or a GetAPIKey hook's.
	SDKOptions []option.RequestOption

	// HTTPOptions bound what the provider reads and how long it waits, and
	// say how it retries; the zero value means the defaults.
	providers.HTTPOptions
}

// Provider streams Messages API responses. It is safe for concurrent use.
type Provider struct {
	opts   Options
	client sdk.Client
	bad    error // a malformed base URL or a key header, returned by every Stream
}

// New returns a Provider. A malformed base URL (from Options or
// ANTHROPIC_BASE_URL: one that is not an absolute http or https URL with a
// host, or has a query or fragment) is reported by every Stream, before any
// request; so are Headers that set X-Api-Key, where the key goes.
func New(opts Options) *Provider {
	if opts.APIKey == "" {
		opts.APIKey = os.Getenv("ANTHROPIC_API_KEY")
	}
	from := ""
	if opts.BaseURL == "" {
		opts.BaseURL, from = os.Getenv("ANTHROPIC_BASE_URL"), " (from ANTHROPIC_BASE_URL)"
	}
	if opts.BaseURL == "" {
		opts.BaseURL = "https://api.anthropic.com"
	}
	bad := httpx.CheckBaseURL(opts.BaseURL, opts.APIKey)
	if bad != nil {
		bad = fmt.Errorf("%w%s", bad, from)
	} else {
		bad = httpx.CheckHeaders(opts.Headers, "X-Api-Key")
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/") + "/"
	if opts.MaxContinuations == 0 {
		opts.MaxContinuations = 4
	}
	opts.HTTPOptions = kit.HTTPDefaults(opts.HTTPOptions)
	sdkOpts := []option.RequestOption{
		option.WithHTTPClient(httpx.Client(opts.HTTPOptions)),
		option.WithBaseURL(opts.BaseURL),
		option.WithMaxRetries(0), // the provider retries, before the first token only
		option.WithoutOpenTelemetry(),
		option.WithAPIKey(opts.APIKey),
	}
	for k, v := range opts.Headers {
		sdkOpts = append(sdkOpts, option.WithHeader(k, v))
	}
	return &Provider{opts: opts, client: sdk.NewClient(append(sdkOpts, opts.SDKOptions...)...), bad: bad}
}

// Model returns the model called id as this provider serves it: its API
// API, its provider ProviderName, and MaxTokens 8192 (the API requires a
// bound; RequestOptions.MaxTokens overrides it). Set the other fields
// (Reasoning, prices, context window) on the value it returns.
func (p *Provider) Model(id string) providers.Model {
	return providers.Model{ID: id, API: API, Provider: ProviderName, MaxTokens: 8192}
}

// Stream implements [providers.Provider]. It refuses, before any request,
// a malformed base URL (see New) and a Model no server could serve: one
// without an ID (unless Options.Model names the model) or made for another
// API (kit.ErrNoModel, kit.ErrWrongAPI). An empty Model.API or
// Model.Provider is taken to be this provider's.
func (p *Provider) Stream(ctx context.Context, req *providers.Request) (iter.Seq[providers.StreamEvent], error) {
	if p.bad != nil {
		return nil, fmt.Errorf("anthropic: %w", p.bad)
	}
	if req == nil {
		return nil, errors.New("anthropic: a nil request")
	}
	m := req.Model
	if m.ID == "" {
		m.ID = p.opts.Model
	}
	m, err := kit.ResolveModel(m, API, ProviderName)
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	r := *req
	r.Model = m
	req = &r
	params := p.params(req)
	key := req.APIKey
	if key == "" {
		key = p.opts.APIKey
	}
	return func(yield func(providers.StreamEvent) bool) {
		s := &streamer{p: p, model: req.Model, maxArgs: req.Options.ArgumentLimit(),
			Out: httpx.Out{Yield: yield, Builder: kit.ForRequest(req), Key: key}}
		s.run(httpx.Watch(ctx), params) // Fail names a limit the SDK hid
	}, nil
}

// callID is the form of tool-call id the API accepts.
var callID = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// target is what the provider prepares a transcript for: the model's own
// blocks keep their signatures, and call ids the API refuses are replaced.
func target(m providers.Model) kit.Target {
	t := kit.TargetOf(m)
	t.ValidCallID = callID.MatchString
	return t
}

// FromEnv returns a Provider and a Model for ANTHROPIC_API_KEY (ok is false
// without it) and ANTHROPIC_MODEL (DefaultModel when empty).
func FromEnv() (p *Provider, m providers.Model, ok bool) {
	if os.Getenv("ANTHROPIC_API_KEY") == "" {
		return nil, providers.Model{}, false
	}
	name := os.Getenv("ANTHROPIC_MODEL")
	if name == "" {
		name = DefaultModel
	}
	p = New(Options{})
	return p, p.Model(name), true
}
