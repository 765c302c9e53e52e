package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

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

// TextResult returns a Result holding one text block.
func TextResult(text string) Result {
	return Result{Content: []providers.Content{providers.Text{Text: text}}}
}

// UpdateFunc publishes a partial result while a tool body runs. Calls made
// after the body returned are ignored.
type UpdateFunc func(partial Result)

// Func is a tool body over arguments of type T: it receives the run's
// context (cancelled when the run is aborted or the tool's timeout passes),
// the call's id, the validated arguments, and a function to publish
// progress. A returned error becomes an error result carrying its text.
type Func[T any] func(ctx context.Context, id string, args T, update UpdateFunc) (Result, error)

// Tool is a function the model can call. Build one with [New] (from a Go
// struct type) or [NewJSON] (from a hand-written JSON Schema); the schema is
// compiled once, there. The exported fields may be set after construction,
// before the tool is handed to a run.
type Tool struct {
	// Name is what the model calls the tool by.
	Name string
	// Label is a human-readable name for user interfaces; Name when empty.
	Label string
	// Description tells the model what the tool does.
	Description string
	// Mode is Parallel (the default) or Sequential.
	Mode Mode
	// Timeout bounds one run of the body; zero means no limit of its own.
	Timeout time.Duration
	// PrepareArguments is an optional compatibility shim applied to a copy
	// of the raw arguments before validation, for example to lift a legacy
	// argument shape into the current schema. Its result is validated like
	// any arguments.
	PrepareArguments func(args any) (any, error)

	params   json.RawMessage
	resolved *jsonschema.Resolved
	root     *node
	decides  bool // root.valid is the verdict; see Tool.valid
	body     Func[any]
	bind     func(args any) (any, error)
	flat     *flatPlan // for flat schemas and struct bodies; see PrepareBound
}

// New builds a tool whose arguments are a T, usually a struct. The schema is
// generated from T (see [SchemaFor]); the body receives the arguments
// decoded into a T after coercion and validation.
func New[T any](name, description string, fn Func[T]) (*Tool, error) {
	schema, err := SchemaFor[T]()
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", name, err)
	}
	dec := newDecoder(reflect.TypeFor[T]())
	body := func(ctx context.Context, id string, args any, update UpdateFunc) (Result, error) {
		in, err := decode[T](dec, args)
		if err != nil {
			return Result{}, err
		}
		return fn(ctx, id, *in, update)
	}
	t, err := build(name, description, schema, body)
	if err != nil {
		return nil, err
	}
	t.bind = func(args any) (any, error) {
		in, err := decode[T](dec, args)
		if err != nil {
			return nil, err
		}
		return in, nil
	}
	t.flat = flatPlanFor[T](dec, t.root)
	return t, nil
}

// NewJSON builds a tool from a hand-written JSON Schema for its arguments.
// The body receives the validated, coerced arguments as a generic JSON value
// (normally a map[string]any).
func NewJSON(name, description string, schema json.RawMessage, fn Func[any]) (*Tool, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("tool %q: schema: %w", name, err)
	}
	keepPropertyOrder(&s, schema)
	return build(name, description, &s, fn)
}

// Must returns t, and panics if err is not nil. It is for tools defined at
// program start, whose schema errors are programming errors.
func Must(t *Tool, err error) *Tool {
	if err != nil {
		panic(err)
	}
	return t
}

func build(name, description string, s *jsonschema.Schema, fn Func[any]) (*Tool, error) {
	if name == "" {
		return nil, fmt.Errorf("tool: empty name")
	}
	if fn == nil {
		return nil, fmt.Errorf("tool %q: nil body", name)
	}
	s.Schema, s.ID = "", ""
	root, err := compileSchema(s)
	if err != nil {
		return nil, fmt.Errorf("tool %q: schema: %w", name, err)
	}
	resolved, err := s.Resolve(&jsonschema.ResolveOptions{})
	if err != nil {
		return nil, fmt.Errorf("tool %q: schema: %w", name, err)
	}
	params, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("tool %q: schema: %w", name, err)
	}
	return &Tool{Name: name, Description: description, params: params, resolved: resolved, root: root, decides: decides(root), body: fn}, nil
}

// Parameters returns the JSON Schema of the arguments, as providers send it:
// an object schema with its properties at the top level.
func (t *Tool) Parameters() json.RawMessage { return append(json.RawMessage(nil), t.params...) }

// Spec returns the description of the tool a provider sends to the model.
func (t *Tool) Spec() providers.ToolSpec {
	return providers.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.params}
}

// DisplayLabel returns Label, or Name when Label is empty.
func (t *Tool) DisplayLabel() string {
	if t.Label != "" {
		return t.Label
	}
	return t.Name
}

// Bind converts validated arguments into the value the body receives: for a
// tool built with [New], a *T holding the decoded arguments; for other
// tools, a deep copy of the arguments. Either way the body's value shares
// nothing with the call in the transcript. Execute accepts either form.
// The loop binds during preflight, so a value that cannot be decoded is
// refused before any body runs.
func (t *Tool) Bind(args any) (any, error) {
	if t.bind == nil {
		return Clone(args), nil
	}
	return t.bind(args)
}

// Execute runs the tool's body with arguments that ValidateArguments (or
// Bind) returned. It does not recover panics or apply the timeout; the loop does.
func (t *Tool) Execute(ctx context.Context, id string, args any, update UpdateFunc) (Result, error) {
	if update == nil {
		update = func(Result) {}
	}
	return t.body(ctx, id, args, update)
}

// decode moves validated arguments into a new T. A *T that Bind made, or
// a T, passes through.
func decode[T any](d *decoder, args any) (*T, error) {
	switch v := args.(type) {
	case *T:
		return v, nil
	case T:
		return &v, nil
	}
	in := new(T)
	if err := d.decodeValue(reflect.ValueOf(in).Elem(), args, d.root); err != nil {
		return nil, fmt.Errorf("decoding arguments: %w", err)
	}
	return in, nil
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
