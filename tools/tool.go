package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentloop/agentloop/internal/schema"
	"github.com/agentloop/agentloop/providers"
)

// Mode says how a tool's calls may run relative to the other calls of the
// same assistant message.
type Mode int

const (
	// Parallel lets the call's body run together with its siblings' bodies.
	Parallel Mode = iota
	// Sequential makes the whole batch of calls run one at a time, in call
	// order, whenever a call to this tool is part of it.
	Sequential
)

// String returns "parallel" or "sequential".
func (m Mode) String() string {
	if m == Sequential {
		return "sequential"
	}
	return "parallel"
}

// Result is what a tool returns to the model.
type Result struct {
	// Content is what the model sees: text and image blocks.
	Content []providers.Content `json:"content"`
	// Details is structured data for user interfaces and logs.
	Details any `json:"details,omitempty"`
	// Terminate asks the loop to stop after this batch of calls. The loop
	// stops only when every result of the batch asks for it.
	Terminate bool `json:"terminate,omitempty"`
	// Usage is the tool's own usage, if it used a model.
	Usage *providers.Usage `json:"usage,omitempty"`
}

// Text returns what the model reads of r as text: its text blocks
// concatenated in order, without separators; images are left out. It is
// "" for a result without text.
//
//	res, err := call.Run(ctx)
//	fmt.Println(res.Text())
func (r Result) Text() string { return providers.TextOf(r.Content) }

// TextResult returns a Result holding one text block.
func TextResult(text string) Result {
	return Result{Content: []providers.Content{providers.Text{Text: text}}}
}

// Func is a tool body: it receives the run's context (cancelled when the
// run is aborted or the tool's timeout passes) and the validated, coerced
// arguments decoded into an In, and returns what the model reads.
//
// Out may be a string (sent as the result's text), a [Result] (sent as it
// is: text and images, details for user interfaces, Terminate), or any
// other value, which is encoded as JSON for the model and kept as the
// result's Details. A returned error becomes an error result carrying its
// text. The call's id and a way to report progress come with ctx: see
// [CallID] and [ReportProgress].
type Func[In, Out any] func(ctx context.Context, in In) (Out, error)

// Config names and configures a tool. Name is required; the rest is
// optional.
type Config struct {
	// Name is what the model calls the tool by: 1 to 64 letters, digits,
	// underscores and hyphens, as the providers' APIs require.
	Name string
	// Description tells the model what the tool does and when to use it.
	Description string
	// Label is a human-readable name for user interfaces; Name when empty.
	Label string
	// Mode is Parallel (the default) or Sequential.
	Mode Mode
	// Timeout bounds one run of the body. Tool timeouts have two levels:
	// a tool's own Timeout wins; 0 means none of its own, and the run's
	// loop.Limits.ToolTimeout applies (whose 0 means
	// loop.DefaultToolTimeout); negative means no limit at all. The tools
	// of an MCP server take theirs from mcp.Server.ToolTimeout.
	Timeout time.Duration
	// PrepareArguments is an optional compatibility shim applied to a copy
	// of the model's arguments before validation, for example to lift a
	// legacy argument shape into the current schema. Its result is checked
	// like any arguments.
	PrepareArguments func(args map[string]any) (map[string]any, error)
}

// Tool is a function the model can call. Build one with [New] (from a Go
// function over a struct type) or [NewJSON] (from a hand-written JSON
// Schema); the schema is compiled once, there. A Tool is immutable and safe
// for concurrent use; the zero value is not a usable tool, and every run
// refuses it.
type Tool struct {
	cfg    Config
	params json.RawMessage
	schema *schema.Schema
	// bind turns checked arguments into the value run takes; run calls the
	// body with it. fast, when not nil, checks and binds the model's
	// arguments in one pass, or declines (see schema.Decoder.Bind).
	bind func(args any) (any, error)
	fast func(raw map[string]any) (any, bool)
	run  func(ctx context.Context, bound any) (Result, error)
}

// errNotBuilt is what a zero Tool's methods report.
var errNotBuilt = errors.New("tools: the Tool was not built by tools.New or tools.NewJSON")

// New builds a tool whose arguments are an In, usually a struct. The
// schema is generated from In (see [SchemaFor]); the body receives the
// model's arguments decoded into an In after coercion and validation.
// An In the model could not fill is refused, naming the field: a struct
// whose fields are all unexported (struct{}, for a tool without
// arguments, is fine), or a field JSON cannot hold (a chan, func, complex
// number, unsafe.Pointer, interface with methods, or map whose keys are not
// strings, integers or text), which the tag `json:"-"` leaves out.
//
//	weather, err := tools.New(tools.Config{Name: "weather", Description: "Current weather for a city"},
//		func(ctx context.Context, in WeatherArgs) (string, error) { ... })
func New[In, Out any](cfg Config, fn Func[In, Out]) (*Tool, error) {
	if fn == nil {
		return nil, fmt.Errorf("tools: tool %q: nil body", cfg.Name)
	}
	s, err := SchemaFor[In]()
	if err != nil {
		return nil, fmt.Errorf("tools: tool %q: %w", cfg.Name, err)
	}
	t, err := build(cfg, s, nil)
	if err != nil {
		return nil, err
	}
	dec := schema.NewDecoder[In](t.schema)
	t.bind = func(args any) (any, error) { return dec.Decode(args) }
	t.fast = func(raw map[string]any) (any, bool) { return dec.Bind(raw) }
	t.run = func(ctx context.Context, bound any) (Result, error) {
		in, err := dec.Decode(bound)
		if err != nil {
			return Result{}, err
		}
		out, err := fn(ctx, *in)
		if err != nil {
			return Result{}, err
		}
		return toResult(out)
	}
	return t, nil
}

// NewJSON builds a tool from a hand-written JSON Schema for its arguments,
// which must describe an object. The body receives the validated, coerced
// arguments as JSON values (maps, slices, float64, string, bool, nil) of
// its own.
func NewJSON[Out any](cfg Config, js json.RawMessage, fn Func[map[string]any, Out]) (*Tool, error) {
	if fn == nil {
		return nil, fmt.Errorf("tools: tool %q: nil body", cfg.Name)
	}
	s, params, err := schema.Parse(js)
	if err != nil {
		return nil, fmt.Errorf("tools: tool %q: schema: %w", cfg.Name, err)
	}
	t, err := build(cfg, s, params)
	if err != nil {
		return nil, err
	}
	t.bind = func(args any) (any, error) {
		c, _ := schema.Clone(args, -1)
		m, ok := c.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("arguments are %s, not an object", schema.TypeName(args))
		}
		return m, nil
	}
	t.run = func(ctx context.Context, bound any) (Result, error) {
		out, err := fn(ctx, bound.(map[string]any))
		if err != nil {
			return Result{}, err
		}
		return toResult(out)
	}
	return t, nil
}

// Must returns t, and panics if err is not nil. It is for tools defined at
// program start, whose schema errors are programming errors.
func Must(t *Tool, err error) *Tool {
	if err != nil {
		panic(err)
	}
	return t
}

// validName is the form the providers' APIs accept for a tool's name.
var validName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// build builds a tool without a body from a schema; params, when not nil,
// is the schema's JSON as providers are sent it.
func build(cfg Config, s *jsonschema.Schema, params json.RawMessage) (*Tool, error) {
	if !validName.MatchString(cfg.Name) {
		return nil, fmt.Errorf("tools: tool name %q: want 1 to 64 letters, digits, '_' or '-'", cfg.Name)
	}
	if s.Type != "object" {
		return nil, fmt.Errorf("tools: tool %q: the arguments' schema must have \"type\": \"object\" at its root", cfg.Name)
	}
	s.Schema, s.ID = "", ""
	compiled, err := schema.Compile(s)
	if err == nil && params == nil {
		params, err = json.Marshal(s)
	}
	if err != nil {
		return nil, fmt.Errorf("tools: tool %q: schema: %w", cfg.Name, err)
	}
	return &Tool{cfg: cfg, params: params, schema: compiled}, nil
}

// Name returns the name the model calls the tool by.
func (t *Tool) Name() string { return t.cfg.Name }

// Label returns the tool's label for user interfaces, or its name.
func (t *Tool) Label() string {
	if t.cfg.Label != "" {
		return t.cfg.Label
	}
	return t.cfg.Name
}

// Description returns what the tool tells the model about itself.
func (t *Tool) Description() string { return t.cfg.Description }

// Mode returns Parallel or Sequential.
func (t *Tool) Mode() Mode { return t.cfg.Mode }

// Timeout returns the tool's own bound on one run of its body, or zero.
func (t *Tool) Timeout() time.Duration { return t.cfg.Timeout }

// Parameters returns the JSON Schema of the arguments, as providers send it:
// an object schema with its properties at the top level.
func (t *Tool) Parameters() json.RawMessage { return append(json.RawMessage(nil), t.params...) }

// Spec returns the description of the tool a provider sends to the model.
func (t *Tool) Spec() providers.ToolSpec {
	return providers.ToolSpec{Name: t.cfg.Name, Description: t.cfg.Description, Parameters: t.params}
}

// Err reports why t cannot be used: nil for a tool built by [New] or
// [NewJSON], an error for a nil or zero Tool.
func (t *Tool) Err() error {
	if t == nil || t.run == nil {
		return errNotBuilt
	}
	return nil
}

// Invocation is one call of a tool whose arguments passed the tool's
// checks, ready to run. The loop makes one per call before any body runs;
// tests can make one to call a tool as the loop would.
type Invocation struct {
	tool  *Tool
	bound any // what run takes

	once    sync.Once
	raw     map[string]any // the model's arguments, when args is made lazily
	checked any            // the checked arguments, as JSON values
}

// Check runs a call's arguments through the tool's checks, in the
// reference's order: a copy of args through PrepareArguments (when set),
// coercion toward the schema (numbers from numeric strings, booleans from
// "true"/"false", ...), validation, and decoding into the body's type. It
// never changes args. Arguments that do not fit give a [*ValidationError]
// whose text lists every violation, as the model will read it.
func (t *Tool) Check(args map[string]any) (*Invocation, error) {
	if err := t.Err(); err != nil {
		return nil, err
	}
	if bound, ok := t.oneBind(args); ok {
		return &Invocation{tool: t, bound: bound, raw: args}, nil
	}
	checked, err := t.prepare(args)
	if err != nil {
		return nil, err
	}
	bound, err := t.bind(checked)
	if err != nil { // the value fits the schema, not the body's type
		return nil, t.refusal(args, err)
	}
	return &Invocation{tool: t, bound: bound, checked: checked}, nil
}

// Args returns a copy of the checked arguments as JSON values: what the
// body receives, before decoding into its type. Changing the copy changes
// nothing else.
func (inv *Invocation) Args() map[string]any {
	inv.once.Do(func() {
		if inv.checked == nil {
			// The one-pass path decoded straight into the body's type; the
			// general path gives the same verdict and values
			// (FuzzPrepareBound).
			inv.checked, _ = inv.tool.prepare(inv.raw)
		}
	})
	c, _ := schema.Clone(inv.checked, -1)
	m, _ := c.(map[string]any)
	return m
}

// Run runs the tool's body once, with the checked arguments, and returns
// its result. A panic in the body is returned as a *PanicError, whose text
// is "panic: VALUE" and which keeps the stack.
// The tool's Timeout is the caller's to apply (the loop does, and gives
// ctx the call, so that [CallID] and [ReportProgress] reach it; outside
// the loop they read nothing).
func (inv *Invocation) Run(ctx context.Context) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = Result{}, &PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	return inv.tool.run(ctx, inv.bound)
}

// PanicError is the error of a body that panicked (Invocation.Run). Its
// text, which the model reads, is "panic: VALUE"; the stack is for the
// developer (the loop logs it and keeps it in the result's details).
type PanicError struct {
	Value any    // what the body panicked with
	Stack []byte // the body's goroutine's stack at the panic
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// toResult turns a body's output into a Result; see Func.
func toResult[Out any](out Out) (Result, error) {
	switch v := any(out).(type) {
	case Result:
		return v, nil
	case string:
		return TextResult(v), nil
	case nil:
		return Result{}, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return Result{}, fmt.Errorf("encoding the result as JSON: %w", err)
	}
	return Result{Content: []providers.Content{providers.Text{Text: string(b)}}, Details: out}, nil
}

// Decode converts checked arguments (a hook's view of a call, say) into a
// T by the rules a struct tool's body gets them with: encoding/json's
// field names and types. A policy hook uses it to read a struct tool's
// arguments without type assertions:
//
//	in, err := tools.Decode[NoteArgs](call.Args)
func Decode[T any](args map[string]any) (T, error) {
	in, err := schema.NewDecoder[T](nil).Decode(args)
	if err != nil {
		var zero T
		return zero, err
	}
	return *in, nil
}

// UnmarshalJSON decodes a result, choosing each content block's Go type by
// its "type" field.
func (r *Result) UnmarshalJSON(data []byte) error {
	var in struct {
		Content   []json.RawMessage `json:"content"`
		Details   any               `json:"details"`
		Terminate bool              `json:"terminate"`
		Usage     *providers.Usage  `json:"usage"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("tool result: %w", err)
	}
	out := Result{Details: in.Details, Terminate: in.Terminate, Usage: in.Usage}
	for _, raw := range in.Content {
		c, err := providers.UnmarshalContent(raw)
		if err != nil {
			return fmt.Errorf("tool result: %w", err)
		}
		out.Content = append(out.Content, c)
	}
	*r = out
	return nil
}
