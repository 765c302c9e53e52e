package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/internal/schema"
)

// maxListed is how many violations the error text lists, as in the
// reference (TypeBox stops at eight); Violations keeps all of them.
const maxListed = 8

// CheckLimitText is the error text, and what the model reads, when
// checking a call's arguments against the tool's schema would go past the
// check's bounds: more than [MaxCheckDepth] schemas one within another (a
// recursive schema whose every level goes through a chain of references,
// say), or more than [MaxCheckSteps] schemas applied in all (a schema
// whose references multiply at every level). The call is refused before
// anything is checked.
const CheckLimitText = "The tool call was not executed: its arguments nest too deeply, or are too large, to be checked against the tool's schema. Send smaller, less deeply nested arguments."

// checkLimit is the error whose text is CheckLimitText: a text the model
// reads, not a Go error string.
type checkLimit struct{}

func (checkLimit) Error() string { return CheckLimitText }

// errCheckLimit refuses a call past the check's bounds.
var errCheckLimit error = checkLimit{}

// A Violation is one way a value fails its schema.
type Violation struct {
	// Path locates the value: property names and array indexes joined by
	// dots ("edits.0.oldText"), "root" for the arguments as a whole. For a
	// missing required property it is the path of that property.
	Path string
	// Message says what is wrong, in the reference's wording
	// ("must be integer", "must have required properties path").
	Message string
}

// ValidationError reports arguments that do not fit a tool's schema. Its
// Error text is what the model sees.
type ValidationError struct {
	// Tool is the name of the tool the call named.
	Tool string
	// Violations lists every violation found, by path, in the order the
	// reference reports them; the text shows the first maxListed.
	Violations []Violation
	// Received is the argument value that was validated: after
	// PrepareArguments, before coercion.
	Received any
	// Cause is google/jsonschema-go's own error for the value, naming
	// the first violation by schema location.
	Cause error
}

// Error formats the error the way the reference does.
func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Validation failed for tool %q:\n", e.Tool)
	if len(e.Violations) == 0 {
		b.WriteString("  - root: ")
		if e.Cause != nil {
			b.WriteString(e.Cause.Error())
		} else {
			b.WriteString("Unknown validation error")
		}
		b.WriteByte('\n')
	}
	for i, v := range e.Violations {
		if i == maxListed {
			break
		}
		fmt.Fprintf(&b, "  - %s: %s\n", v.Path, v.Message)
	}
	b.WriteString("\nReceived arguments:\n")
	if _, ok := schema.Clone(e.Received, MaxArgumentDepth+1); !ok { // its text would have no end
		fmt.Fprintf(&b, "(nested more than %d levels deep; not shown)", MaxArgumentDepth)
	} else {
		b.WriteString(indentJSON(e.Received))
	}
	return b.String()
}

// Unwrap returns the validator's own error.
func (e *ValidationError) Unwrap() error { return e.Cause }

// refusal turns the engine's verdict on args into the error the loop
// shows the model: a [*ValidationError] naming the tool, or the error
// whose text is CheckLimitText.
func (t *Tool) refusal(args any, err error) error {
	var inv *schema.Invalid
	switch {
	case errors.Is(err, schema.ErrCheckLimit):
		return errCheckLimit
	case errors.As(err, &inv):
		vs := make([]Violation, len(inv.Violations))
		for i, v := range inv.Violations {
			vs[i] = Violation(v)
		}
		return &ValidationError{Tool: t.cfg.Name, Violations: vs, Received: args, Cause: inv.Cause}
	}
	return err
}

// validate coerces args toward the schema and decides. The result shares
// with args whatever coercion did not change.
func (t *Tool) validate(args any) (any, error) {
	v, err := t.schema.Check(args)
	if err != nil {
		return nil, t.refusal(args, err)
	}
	return v, nil
}

// prepare runs the argument pipeline for one call, up to the checked
// arguments: a deep copy of raw through PrepareArguments (when set), then
// coercion and validation. A panicking shim is reported as an error. The
// result may share maps and slices with raw (only what coercion changed is
// new): it is read-only, and bind gives the body a value of its own.
func (t *Tool) prepare(raw map[string]any) (args any, err error) {
	var in any = raw
	if t.cfg.PrepareArguments != nil {
		defer func() {
			if r := recover(); r != nil {
				args, err = nil, fmt.Errorf("panic: %v", r)
			}
		}()
		c, ok := schema.Clone(raw, MaxArgumentDepth)
		if !ok {
			return nil, t.refusal(raw, schema.TooDeep())
		}
		m, _ := c.(map[string]any)
		if m, err = t.cfg.PrepareArguments(m); err != nil {
			return nil, err
		}
		in = m
	}
	return t.validate(in)
}

// prepareBound is prepare followed by bind: the value the body receives,
// or the error that refuses the call, in one pass when the tool allows it
// (a struct body, a flat schema the compiled checker decides, no
// PrepareArguments shim).
func (t *Tool) prepareBound(raw map[string]any) (any, error) {
	if bound, ok := t.oneBind(raw); ok {
		return bound, nil
	}
	args, err := t.prepare(raw)
	if err != nil {
		return nil, err
	}
	return t.bind(args)
}

// oneBind is the one-pass path when the tool allows it.
func (t *Tool) oneBind(raw map[string]any) (any, bool) {
	if t.fast == nil || t.cfg.PrepareArguments != nil {
		return nil, false
	}
	return t.fast(raw)
}

func indentJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
