// Package otel traces and measures runs with OpenTelemetry, as the GenAI
// semantic conventions describe: a run is an invoke_agent span, each model
// call a "chat {model}" span and each tool call an "execute_tool {name}"
// span under it (side by side where the bodies ran in parallel).
//
//	t := otel.New(otel.Options{AgentName: "support"}) // the global providers, or set them here
//	cfg.Hooks = append(cfg.Hooks, t.Hooks())         // loop.Config (or agent.Options)
//
// To send the spans to any OTLP collector, give it a provider with an OTLP
// exporter (go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc,
// which reads OTEL_EXPORTER_OTLP_ENDPOINT):
//
//	exp, err := otlptracegrpc.New(ctx)
//	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
//	defer tp.Shutdown(ctx) // flushes the batch
//	t := otel.New(otel.Options{TracerProvider: tp})
//
// go run ./examples/otel prints a run's spans as a tree, with their
// attributes.
//
// Spans carry gen_ai.* attributes: operation, provider, request and
// response model, finish reasons, input, output and cache-read tokens, tool
// name, call id and type. Metrics: gen_ai.client.token.usage and
// gen_ai.client.operation.duration (histograms) and agentloop.tool.calls,
// counted by outcome.
//
// The bundle's StepContext hook gives a tool body's context its
// execute_tool span and a model call's context its chat span: spans the
// body or the provider's HTTP client start (otelhttp, say) nest under them.
// Its OnEvent hook ends them. The Anthropic SDK's own span is off, so a
// model call is one chat span.
//
// A refused call (cut off at the token limit, an unknown tool, invalid
// arguments, blocked by policy, aborted, timed out) is an error span whose
// error.type says which (events.Outcome: truncated, unknown_tool,
// invalid_arguments, blocked, aborted, timeout, ...). A failed model call
// is an error chat span, and its run an error invoke_agent span.
//
// By default no content is recorded: no prompt, completion, argument or
// result, only names, ids, models, counts and outcomes (Options.RecordContent
// turns content on). The API key is never recorded.
//
// With the global providers left as they are (no-ops), a run costs a
// context lookup per event: go run ./internal/harness/bench -otel measures
// the same as without, within noise.
package otel

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
)

// The GenAI attribute keys and values this package writes. They were in
// go.opentelemetry.io/otel/semconv/v1.41.0's genai package and are gone
// from the later semconv packages (the conventions moved on without them
// in Go), so they are declared here, with the names the conventions give.
const (
	keyOperation      = attribute.Key("gen_ai.operation.name")
	keyProvider       = attribute.Key("gen_ai.provider.name")
	keyAgentName      = attribute.Key("gen_ai.agent.name")
	keyRequestModel   = attribute.Key("gen_ai.request.model")
	keyResponseModel  = attribute.Key("gen_ai.response.model")
	keyFinishReasons  = attribute.Key("gen_ai.response.finish_reasons")
	keyInputTokens    = attribute.Key("gen_ai.usage.input_tokens")
	keyOutputTokens   = attribute.Key("gen_ai.usage.output_tokens")
	keyCacheRead      = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	keyCacheWrite     = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	keyToolName       = attribute.Key("gen_ai.tool.name")
	keyToolCallID     = attribute.Key("gen_ai.tool.call.id")
	keyToolType       = attribute.Key("gen_ai.tool.type")
	keyToolArguments  = attribute.Key("gen_ai.tool.call.arguments")
	keyToolResult     = attribute.Key("gen_ai.tool.call.result")
	keyInputMessages  = attribute.Key("gen_ai.input.messages")
	keyOutputMessages = attribute.Key("gen_ai.output.messages")
	keyTokenType      = attribute.Key("gen_ai.token.type")
	keyErrorType      = attribute.Key("error.type")
	keyOutcome        = attribute.Key("agentloop.tool.outcome")

	opInvokeAgent = "invoke_agent"
	opChat        = "chat"
	opExecuteTool = "execute_tool"
)

// Options configure a Tracer. The zero value uses the global providers.
type Options struct {
	// TracerProvider makes the spans; nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the instruments; nil means otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// AgentName is the gen_ai.agent.name of the runs, if any.
	AgentName string
	// RecordContent records prompts, completions, tool arguments and
	// results on the spans. Off by default: they may hold what the user
	// would not want in a trace.
	RecordContent bool
}

// Tracer turns runs into spans and metrics. It is safe for concurrent use
// by any number of runs.
type Tracer struct {
	opts     Options
	tracer   trace.Tracer
	tokens   metric.Int64Histogram
	duration metric.Float64Histogram
	calls    metric.Int64Counter
}

// New returns a Tracer.
func New(opts Options) *Tracer {
	tp, mp := opts.TracerProvider, opts.MeterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	t := &Tracer{opts: opts, tracer: tp.Tracer("github.com/agentloop/agentloop/loop/otel")}
	m := mp.Meter("github.com/agentloop/agentloop/loop/otel")
	// Instrument errors are programming errors in the names below; a
	// failed instrument is a no-op one, so they are not returned.
	t.tokens, _ = m.Int64Histogram("gen_ai.client.token.usage", metric.WithUnit("{token}"),
		metric.WithDescription("Measures number of input and output tokens used"),
		metric.WithExplicitBucketBoundaries(1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864))
	t.duration, _ = m.Float64Histogram("gen_ai.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("GenAI operation duration"),
		metric.WithExplicitBucketBoundaries(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92))
	t.calls, _ = m.Int64Counter("agentloop.tool.calls", metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls by outcome"))
	return t
}

// Hooks returns the bundle that traces a run: add it to loop.Config.Hooks
// (or agent.Options.Hooks), and every run of that configuration becomes
// spans and metrics. Bundles before it see the run's context without its
// span, bundles after it with.
func (t *Tracer) Hooks() loop.Hooks {
	return loop.Hooks{StepContext: t.step, OnEvent: t.handle}
}

// runKey finds a run's state in its context.
type runKey struct{}

// runState is what the Tracer keeps of one run.
type runState struct {
	span  trace.Span // invoke_agent
	model providers.Model

	mu        sync.Mutex
	chat      trace.Span // the model call in progress
	chatStart time.Time
	tools     map[string]trace.Span // by call id, between start and end
	failed    *providers.AssistantMessage
}

// step starts the run's span, or hands a model call or a tool body the
// span it belongs in.
func (t *Tracer) step(ctx context.Context, s loop.Step) context.Context {
	if s.Kind == loop.StepRun {
		name := opInvokeAgent
		if t.opts.AgentName != "" {
			name += " " + t.opts.AgentName
		}
		attrs := []attribute.KeyValue{keyOperation.String(opInvokeAgent), keyProvider.String(s.Model.Provider), keyRequestModel.String(s.Model.ID)}
		if t.opts.AgentName != "" {
			attrs = append(attrs, keyAgentName.String(t.opts.AgentName))
		}
		spanCtx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
		if !span.IsRecording() && !t.tokens.Enabled(ctx) && !t.duration.Enabled(ctx) && !t.calls.Enabled(ctx) {
			return ctx // nothing listens: the run costs a context lookup per event
		}
		return context.WithValue(spanCtx, runKey{}, &runState{span: span, model: s.Model, tools: map[string]trace.Span{}})
	}
	rs, _ := ctx.Value(runKey{}).(*runState)
	if rs == nil {
		return ctx
	}
	switch s.Kind {
	case loop.StepModel:
		ctx, span := t.tracer.Start(ctx, opChat+" "+s.Model.ID, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
			keyOperation.String(opChat), keyProvider.String(s.Model.Provider), keyRequestModel.String(s.Model.ID)))
		rs.mu.Lock()
		rs.chat, rs.chatStart = span, time.Now()
		rs.mu.Unlock()
		return ctx
	case loop.StepTool:
		rs.mu.Lock()
		span := rs.tools[s.Call.ID]
		rs.mu.Unlock()
		if span != nil {
			return trace.ContextWithSpan(ctx, span)
		}
	}
	return ctx
}

// handle follows a run's events (the bundle's OnEvent). Events of runs
// it does not trace are ignored.
func (t *Tracer) handle(ctx context.Context, e events.Event) {
	rs, _ := ctx.Value(runKey{}).(*runState)
	if rs == nil {
		return
	}
	switch e := e.(type) {
	case events.MessageEnd:
		switch m := e.Message.(type) {
		case providers.AssistantMessage:
			t.endChat(ctx, rs, m)
		case providers.UserMessage:
			if t.opts.RecordContent {
				if b, err := json.Marshal(m.Content); err == nil {
					rs.span.AddEvent("gen_ai.user.message", trace.WithAttributes(keyInputMessages.String(string(b))))
				}
			}
		}
	case events.ToolExecutionStart:
		t.startTool(ctx, rs, e)
	case events.ToolExecutionEnd:
		t.endTool(ctx, rs, e)
	case events.AgentEnd:
		rs.mu.Lock()
		failed := rs.failed
		open := rs.tools
		rs.tools = map[string]trace.Span{}
		rs.mu.Unlock()
		for _, span := range open { // a run that ended abruptly
			span.SetStatus(codes.Error, string(events.OutcomeAborted))
			span.End()
		}
		if failed != nil {
			rs.span.SetStatus(codes.Error, failed.ErrorMessage)
			rs.span.SetAttributes(keyErrorType.String(string(failed.StopReason)))
		}
		rs.span.End()
	}
}

// endChat closes the model call's span with the response's model, finish
// reason and usage, and records its metrics.
func (t *Tracer) endChat(ctx context.Context, rs *runState, a providers.AssistantMessage) {
	rs.mu.Lock()
	span, start := rs.chat, rs.chatStart
	rs.chat = nil
	if a.StopReason == providers.StopReasonError || a.StopReason == providers.StopReasonAborted {
		rs.failed = &a
	}
	rs.mu.Unlock()
	if span == nil {
		return // a message the run closed without a model call
	}
	u := a.Usage
	model := a.Model
	if model == "" {
		model = rs.model.ID
	}
	span.SetAttributes(keyResponseModel.String(model), keyFinishReasons.StringSlice([]string{string(a.StopReason)}),
		keyInputTokens.Int(u.Input+u.CacheRead+u.CacheWrite), keyOutputTokens.Int(u.Output),
		keyCacheRead.Int(u.CacheRead), keyCacheWrite.Int(u.CacheWrite))
	if t.opts.RecordContent {
		if b, err := json.Marshal(a.Content); err == nil {
			span.SetAttributes(keyOutputMessages.String(string(b)))
		}
	}
	common := []attribute.KeyValue{keyOperation.String(opChat), keyProvider.String(rs.model.Provider),
		keyRequestModel.String(rs.model.ID), keyResponseModel.String(model)}
	if a.StopReason == providers.StopReasonError || a.StopReason == providers.StopReasonAborted {
		span.SetStatus(codes.Error, a.ErrorMessage)
		span.SetAttributes(keyErrorType.String(string(a.StopReason)))
		common = append(common, keyErrorType.String(string(a.StopReason)))
	}
	span.End()
	t.duration.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(common...))
	input := append(common[:4:4], keyTokenType.String("input"))
	t.tokens.Record(ctx, int64(u.Input+u.CacheRead+u.CacheWrite), metric.WithAttributes(input...))
	output := append(common[:4:4], keyTokenType.String("output"))
	t.tokens.Record(ctx, int64(u.Output), metric.WithAttributes(output...))
}

func (t *Tracer) startTool(ctx context.Context, rs *runState, e events.ToolExecutionStart) {
	attrs := []attribute.KeyValue{keyOperation.String(opExecuteTool), keyToolName.String(e.ToolName),
		keyToolCallID.String(e.ToolCallID), keyToolType.String("function")}
	if t.opts.RecordContent {
		if b, err := json.Marshal(e.Args); err == nil {
			attrs = append(attrs, keyToolArguments.String(string(b)))
		}
	}
	_, span := t.tracer.Start(ctx, opExecuteTool+" "+e.ToolName, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	rs.mu.Lock()
	rs.tools[e.ToolCallID] = span
	rs.mu.Unlock()
}

func (t *Tracer) endTool(ctx context.Context, rs *runState, e events.ToolExecutionEnd) {
	rs.mu.Lock()
	span := rs.tools[e.ToolCallID]
	delete(rs.tools, e.ToolCallID)
	rs.mu.Unlock()
	outcome := e.Outcome
	if outcome == "" {
		outcome = events.OutcomeOK
		if e.IsError {
			outcome = events.OutcomeFailed
		}
	}
	t.calls.Add(ctx, 1, metric.WithAttributes(keyToolName.String(e.ToolName), keyOutcome.String(string(outcome))))
	if span == nil {
		return
	}
	span.SetAttributes(keyOutcome.String(string(outcome)))
	if t.opts.RecordContent {
		span.SetAttributes(keyToolResult.String(providers.TextOf(e.Result.Content)))
	}
	if e.IsError {
		span.SetStatus(codes.Error, string(outcome))
		span.SetAttributes(keyErrorType.String(string(outcome)))
	}
	span.End()
}
